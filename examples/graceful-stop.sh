#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# graceful-stop.sh: stop a service or a cgroup gracefully with cgkill(1).
#
#   graceful-stop.sh [-s SIGNAL] [-t GRACE] [-k WAIT] [-n] [-v] UNIT|CGROUP
#
# Sends SIGNAL (default TERM) to every process in the cgroup and its
# descendants, gives them GRACE (default 10s) to exit, sends SIGKILL to
# whatever is left, and waits up to WAIT (default 5s) until the cgroup is
# empty. GRACE and WAIT are durations with a unit, as cgkill(1) and
# systemd.time(7) write them: 500ms, 30s, "1min 30s", infinity.
# A UNIT (foo.service, bar.scope, ...) is passed to cgkill --unit, which
# asks systemd for its cgroup; anything else is passed as a cgroup path.
# -n shows what would be signalled and changes nothing; -v tells what
# happens.
#
# Exit status: that of cgkill (0 stopped, 1 error, 2 usage, 3 processes left
# after the wait, listed on stderr, 4 refused by a guard rail).
# $CGKILL names the cgkill to run (default: cgkill from $PATH).
set -eu

CGKILL=${CGKILL:-cgkill}
signal=TERM
grace=10s
wait=5s
dry_run=
verbose=

usage() {
	echo "usage: ${0##*/} [-s SIGNAL] [-t GRACE] [-k WAIT] [-n] [-v] UNIT|CGROUP" >&2
	exit 2
}

while getopts s:t:k:nvh opt; do
	case $opt in
	s) signal=$OPTARG ;;
	t) grace=$OPTARG ;;
	k) wait=$OPTARG ;;
	n) dry_run=1 ;;
	v) verbose=--verbose ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
target=$1

# A unit name: cgkill --unit asks systemd where its processes are (and says
# so if the unit is not running); anything else is a cgroup.
how=--
case $target in
*/*) ;;
*.service | *.scope | *.slice | *.socket | *.mount | *.swap) how=--unit ;;
esac

if [ -n "$dry_run" ]; then
	exec "$CGKILL" --print "$how" "$target"
fi

[ -z "$verbose" ] || echo "${0##*/}: $target: $signal, then KILL after $grace" >&2

# One call does the whole escalation; its report goes to stderr with -v.
status=0
"$CGKILL" $verbose --signal "$signal" --timeout "$grace" KILL --wait="$wait" "$how" "$target" ||
	status=$?

case $status in
0) [ -z "$verbose" ] || echo "${0##*/}: $target: stopped" >&2 ;;
3) echo "${0##*/}: $target: processes left after SIGKILL (stuck in D state?)" >&2 ;;
4) echo "${0##*/}: $target: refused by a guard rail; see cgkill(1)" >&2 ;;
esac
exit $status
