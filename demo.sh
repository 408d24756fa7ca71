#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# make demo: start a fork bomb (bounded by a pids limit) in a scratch cgroup,
# with a sentinel process in a sibling cgroup, then kill the bomb's cgroup
# with each cgkill backend in turn, restarting the bomb between them. Shows
# how long each took to empty the cgroup and that the sentinel survived.
# Needs root. Everything it creates is removed on exit.
set -euo pipefail
cd "$(dirname "$0")"

CGKILL=${CGKILL:-build/cgkill}
BOMB_MAX=${BOMB_MAX:-500}
NAME=cgkill-demo.$$

say() { printf '%s\n' "$*"; }
hr() { printf -- '---- %s %s\n' "$1" "$(printf -- '-%.0s' $(seq 1 $((60 - ${#1}))))"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

if [ "$(id -u)" -ne 0 ]; then
	say "demo: needs root (it creates cgroups and starts a fork bomb in one)." >&2
	exit 1
fi
[ -x "$CGKILL" ] || { say "demo: $CGKILL is missing; run make first." >&2; exit 1; }

# ---- find the hierarchies (never assume where they are mounted) ----
V2= PIDS1= FREEZER1=
while read -r mnt type opts; do
	case $type in
	cgroup2) [ -z "$V2" ] && V2=$mnt ;;
	cgroup)
		case ",$opts," in *,pids,*) [ -z "$PIDS1" ] && PIDS1=$mnt ;; esac
		case ",$opts," in *,freezer,*) [ -z "$FREEZER1" ] && FREEZER1=$mnt ;; esac
		;;
	esac
done < <(awk '{ for (i = 7; $i != "-"; i++); print $5, $(i + 1), $(i + 3) }' /proc/self/mountinfo)

if [ -z "$V2" ]; then
	say "demo: no cgroup v2 mount found; this demo needs one." >&2
	exit 1
fi

# ---- scratch cgroups, and their removal on every exit ----
SCRATCH=$V2/$NAME
CREATED=()	# every cgroup directory we made, parents first
SENTINEL=

mk() { mkdir "$1" && CREATED+=("$1"); }

# Kill what is left in one of our cgroups, without cgkill (it may be broken).
drain() {
	local dir=$1 i pids
	[ -d "$dir" ] || return 0
	[ -f "$dir/freezer.state" ] && echo THAWED > "$dir/freezer.state" 2>/dev/null || true
	[ -f "$dir/cgroup.freeze" ] && echo 0 > "$dir/cgroup.freeze" 2>/dev/null || true
	[ -f "$dir/pids.max" ] && echo 0 > "$dir/pids.max" 2>/dev/null || true
	[ -f "$dir/cgroup.kill" ] && echo 1 > "$dir/cgroup.kill" 2>/dev/null || true
	for i in $(seq 1 50); do
		pids=$(cat "$dir/cgroup.procs" 2>/dev/null || true)
		[ -z "$pids" ] && return 0
		# shellcheck disable=SC2086
		kill -9 $pids 2>/dev/null || true
		sleep 0.1
	done
}

cleanup() {
	local i d
	trap - EXIT INT TERM
	[ -n "$SENTINEL" ] && kill "$SENTINEL" 2>/dev/null || true
	for ((i = ${#CREATED[@]} - 1; i >= 0; i--)); do
		drain "${CREATED[i]}"
	done
	wait 2>/dev/null || true
	for ((i = ${#CREATED[@]} - 1; i >= 0; i--)); do
		d=${CREATED[i]}
		for _ in $(seq 1 50); do
			rmdir "$d" 2>/dev/null && break
			[ -d "$d" ] || break
			sleep 0.1
		done
		[ -d "$d" ] && say "demo: could not remove $d" >&2
	done
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mk "$SCRATCH"

# Where the pids limit comes from: v2's pids controller if this mount has it
# enabled for our scratch cgroup, else the v1 pids hierarchy.
LIMIT_V2=
if grep -qw pids "$SCRATCH/cgroup.controllers" 2>/dev/null &&
	echo +pids > "$SCRATCH/cgroup.subtree_control" 2>/dev/null; then
	LIMIT_V2=1
elif [ -n "$PIDS1" ]; then
	mk "$PIDS1/$NAME"
else
	say "demo: no pids controller (v2 or v1): a fork bomb cannot be bounded here, stopping." >&2
	exit 1
fi
[ -n "$FREEZER1" ] && mk "$FREEZER1/$NAME"

count() { cat "$1/cgroup.procs" 2>/dev/null | wc -l; }

# One fork bomb: joins its cgroups first (limit first), then every process
# forks forever, retrying when the limit makes fork fail; a few give up and
# exit there, so pids keep being recycled (churn). Children are reaped by
# the kernel (SIGCHLD ignored). Perl because it keeps going where fork fails.
start_bomb() {
	local v2dir=$1 limdir=$2 frzdir=$3
	(
		[ -n "$limdir" ] && echo "$BASHPID" > "$limdir/cgroup.procs"
		[ -n "$frzdir" ] && echo "$BASHPID" > "$frzdir/cgroup.procs"
		echo "$BASHPID" > "$v2dir/cgroup.procs"
		exec perl -e '$SIG{CHLD} = "IGNORE";
			while (1) {
				next if defined fork;
				exit if rand() < 0.01;
				select(undef, undef, undef, 0.002 + rand(0.01));
			}' 2>/dev/null
	) &
	BOMB=$!
	disown "$BOMB"	# no job-status chatter when it is killed
}

say "cgkill demo"
say "==========="
say "cgroup v2 mount : $V2"
say "pids limit      : $([ -n "$LIMIT_V2" ] && echo "v2 pids controller" || echo "v1 hierarchy $PIDS1")"
say "v1 freezer      : ${FREEZER1:-none}"
say "scratch cgroup  : $SCRATCH"
say

mk "$SCRATCH/sentinel"
( echo "$BASHPID" > "$SCRATCH/sentinel/cgroup.procs"; exec sleep 100000 ) &
SENTINEL=$!
sleep 0.1
say "Sentinel: pid $SENTINEL (sleep) in $SCRATCH/sentinel, right beside the bomb."
say "It must survive every kill below."
say
say "Each round starts a fork bomb in a fresh cgroup, lets it fill its pids"
say "limit, then kills the whole cgroup with one cgkill backend and checks"
say "that nothing is left."
say

backends=(kernel freeze loop)
[ -n "$FREEZER1" ] && backends+=(v1-freeze)
declare -A RESULT TIME

for b in "${backends[@]}"; do
	hr "backend: $b"
	bdir=$SCRATCH/bomb-$b
	mk "$bdir"
	limdir= frzdir=
	if [ -n "$LIMIT_V2" ]; then
		echo "$BOMB_MAX" > "$bdir/pids.max"
	else
		limdir=$PIDS1/$NAME/bomb-$b
		mk "$limdir"
		echo "$BOMB_MAX" > "$limdir/pids.max"	# the limit is set BEFORE the bomb starts
	fi
	target=$bdir
	if [ "$b" = v1-freeze ]; then
		frzdir=$FREEZER1/$NAME/bomb-$b
		mk "$frzdir"
		target=$frzdir
	fi

	start_bomb "$bdir" "$limdir" "$frzdir"
	t0=$(now_ms)
	while [ "$(count "$bdir")" -lt $((BOMB_MAX * 9 / 10)) ] &&
		[ $(($(now_ms) - t0)) -lt 10000 ]; do
		sleep 0.05
	done
	say "Fork bomb started (first pid $BOMB), limited to pids.max=$BOMB_MAX:"
	say "  $(count "$bdir") processes after $(($(now_ms) - t0)) ms, still forking."
	say "\$ $CGKILL -v -b $b $target"
	t0=$(now_ms)
	set +e
	"$CGKILL" -v -b "$b" "$target" 2>&1 | sed 's/^/  /'
	status=${PIPESTATUS[0]}
	set -e
	t1=$(now_ms)
	left=$(count "$bdir")
	if [ "$status" -eq 0 ] && [ "$left" -eq 0 ]; then
		RESULT[$b]="emptied"
	elif [ "$status" -eq 1 ] && [ "$left" -gt 0 ]; then
		RESULT[$b]="not available here (exit $status)"
	else
		RESULT[$b]="FAILED: exit $status, $left left"
	fi
	TIME[$b]=$((t1 - t0))
	say "  exit status $status; $left processes left; $((t1 - t0)) ms from start to exit (measured outside)"
	drain "$bdir"	# in case this backend was not available
	if kill -0 "$SENTINEL" 2>/dev/null; then
		say "  sentinel $SENTINEL: alive"
	else
		say "  sentinel $SENTINEL: DEAD (collateral damage!)"
		RESULT[$b]="FAILED: the sentinel died"
	fi
	say
done

hr "summary"
printf '  %-10s %-12s %s\n' backend "wall time" result
for b in "${backends[@]}"; do
	printf '  %-10s %-12s %s\n' "$b" "${TIME[$b]} ms" "${RESULT[$b]}"
done
say
ps -o pid=,stat=,comm= -p "$SENTINEL" | sed 's/^/  sentinel still running: /'
say "Cleaning up the scratch cgroups."
fail=0
for b in "${backends[@]}"; do
	case ${RESULT[$b]} in FAILED*) fail=1 ;; esac
done
exit $fail
