#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld against one user's many cgroups (issue 26, items 8 and 9):
# `make -C bench watch`, or by hand, as root, from anywhere:
#
#	bench/watch-storm.sh [flood|storm]...	(default: both)
#
#	CGKILL_BUILD=DIR (default build), CGKILLD= the daemon (e.g. an older
#	one, for "before"); NFLOOD (default 100000), NDIRS (20000),
#	STORM_SECS (10), STORM_NICE (-19), TRIALS (5 bombs in flood, 3
#	storms), PMAX (1000).
#
# Two users of no one (numbers only): alice owns box/users/alice, bob
# box/users/bob, in a sandbox <v2>/cgkill-test.<pid>.watch. The daemon runs
# as shipped (no -v), MaxWatchesPerOwner=infinity where it knows the key.
#  flood: alice makes NFLOOD empty cgroups that a rule matches
#         (box/users/*/*); fs.inotify.max_user_watches is raised for the
#         run when it is too low, and put back. Reported: how long the
#         daemon took to watch them all, its open files, RSS and CPU, its
#         CPU and wakeups over 10 idle seconds after; then TRIALS fork bombs
#         of bob's (pids.max PMAX) in a watched cgroup: saturation (the
#         first fork refused, seen by an observer at SCHED_FIFO 10) ->
#         the daemon's event, and -> empty.
#  storm: alice makes NDIRS directories the daemon watches (a rule on
#         box/users/*/*/job: each box/users/alice/dN is watched for a "job"
#         below), then makes and removes directories there as fast as one
#         process can for STORM_SECS (at nice STORM_NICE: a rate the daemon
#         must bear even on a busy machine); reported: the daemon's CPU seconds
#         over the storm, the storm's operations, and a bomb of bob's
#         started in the middle of it: saturation -> event, -> empty.
set -u
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh
build=${CGKILL_BUILD:-build}
. tests/cgkilld-lib.sh

NFLOOD=${NFLOOD:-100000}
NDIRS=${NDIRS:-20000}
STORM_SECS=${STORM_SECS:-10}
STORM_NICE=${STORM_NICE:--19}
TRIALS=${TRIALS:-}
PMAX=${PMAX:-1000}
CLK_TCK=$(getconf CLK_TCK)
parts=${*:-flood storm}
need_cgkilld
command -v setpriv >/dev/null || bail_out "no setpriv (util-linux)"
kd_setup watch
work=$kd_tmp
alice=$((61000 + $$ % 500))
bob=$((alice + 500))
watches_file=/proc/sys/fs/inotify/max_user_watches
watches_was=$(cat "$watches_file")
trap 'echo "$watches_was" >"$watches_file"; kd_cleanup' EXIT

cat >"$work/bomb.c" <<'EOF'
#include <unistd.h>
int main(void) { for (;;) fork(); }
EOF
${CC:-cc} -O2 -o "$work/bomb" "$work/bomb.c" || bail_out "cannot build the bomb"
cat >"$work/observer.py" <<'EOF'
import os, sys, time
pev, events, out = sys.argv[1], sys.argv[2], sys.argv[3]
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
now = lambda: int(time.time() * 1e6)
t_sat = t_empty = None
started = False
open(out + ".ready", "w").close()
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        refused = int(open(pev).read().split("max ")[1].split()[0])
        pop = open(events).read().split("populated ")[1][0] == "1"
    except (OSError, ValueError, IndexError):
        break
    started |= pop
    if t_sat is None and refused > 0:
        t_sat = now()
    if started and not pop:
        t_empty = now()
        break
    time.sleep(0.0002)
open(out, "w").write("%s %s\n" % (t_sat or "", t_empty or ""))
EOF

mkcg users/alice && mkcg users/bob || bail_out "cannot create the users' cgroups"
chown "$alice" "$v2/$box/users/alice" && chown "$bob" "$v2/$box/users/bob" || bail_out "chown"

# as alice, in her directory: python code with os imported (at the
# niceness NICE=, default 0)
as_alice() {
	nice -n "${NICE:-0}" setpriv --reuid="$alice" --regid="$alice" --clear-groups \
		/usr/bin/python3 -c "import os, sys, time; os.chdir(sys.argv[1]); $1" "$v2/$box/users/alice"
}

# The daemon as shipped: no -v, its log in $kd_log.
start_daemon() {
	kd_log=$work/cgkilld.log.$((++kd_runs))
	: >"$kd_log"
	# as the journal gets it: "<N>" and the message, no time of its own
	JOURNAL_STREAM=$(stat -c %d:%i "$kd_log") "$CGKILLD" --foreground --config "$1" --runtime-dir "$work/run.$kd_runs" 2>>"$kd_log" &
	kd_daemon=$!
	wait_for 60 "cgkilld to start" grep -qs 'started:' "$kd_log" || bail_out "cgkilld did not start: $(cat "$kd_log")"
}

# the daemon's "state:" header line (SIGUSR1)
state_line() {
	local n
	n=$(grep -c '^<6>state: end' "$kd_log")
	kill -USR1 "$kd_daemon"
	wait_for 120 "the state dump" eval '[ "$(grep -c "^<6>state: end" "$kd_log")" -gt '"$n"' ]' || return 1
	grep '^<6>state: [0-9]' "$kd_log" | tail -1
}

# the daemon's inotify watches (its fdinfo lists them: no dump needed)
inotify_watches() {
	local f
	for f in /proc/"$kd_daemon"/fd/*; do
		[ "$(readlink "$f")" = "anon_inode:inotify" ] && grep -c '^inotify wd' "/proc/$kd_daemon/fdinfo/${f##*/}" && return
	done
	echo 0
}

# CPU ms (utime+stime), voluntary context switches, VmRSS and VmHWM KiB
cpu_ms() {
	local f
	read -ra f <"/proc/$kd_daemon/stat"
	echo $(((f[13] + f[14]) * 1000 / CLK_TCK))
}
ctxt() { awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$kd_daemon/status"; }
mem() { awk '/^VmRSS/ { r = $2 } /^VmHWM/ { h = $2 } END { print r " " h }' "/proc/$kd_daemon/status"; }
fds() { find "/proc/$kd_daemon/fd" -mindepth 1 | wc -l; }

# conf MATCH: the rule (and MaxWatchesPerOwner=infinity where known)
conf() {
	local c=$work/cgkilld.conf
	printf '[Daemon]\nEventLog=%s\nMaxWatchesPerOwner=infinity\n' "$work/events.json" >"$c"
	"$CGKILLD" --check "$c" >/dev/null 2>&1 || printf '[Daemon]\nEventLog=%s\n' "$work/events.json" >"$c"
	printf '[Rule]\nName=bench\nMatch=%s\nTrigger=pids-max\nPidsMaxEvents=20\nPostActionDelay=0\nMaxActionsPerMinute=infinity\nWait=20s\n' \
		"$1" >>"$c"
	echo "$c"
}

# bomb REL: a fresh bob's cgroup box/REL (pids.max PMAX), a bomb in it;
# "saturation->event_ms saturation->empty_ms" once it is empty
bomb() {
	local rel=$1 obs=$work/obs pev t_sat t_empty t_ev o
	rm -f "$obs" "$obs.ready"
	: >"$work/events.json"
	[ -d "$v2/$box/$rel" ] && rm_cgroup_tree "$v2/$box/$rel"
	[ -n "$v1pids" ] && [ -d "$v1pids/$box/$rel" ] && rm_cgroup_tree "$v1pids/$box/$rel"
	if [ -n "$v1pids" ] && ! v2_has pids; then
		mkdir -p "$v1pids/$box/$rel" && echo "$PMAX" >"$v1pids/$box/$rel/pids.max" || return 1
		pev=$v1pids/$box/$rel/pids.events
	else
		pev=$v2/$box/$rel/pids.events
	fi
	mkcg "$rel" "$PMAX" || return 1
	sleep 0.5	# seen by the daemon (not timed: it may be under a storm)
	python3 "$work/observer.py" "$pev" "$v2/$box/$rel/cgroup.events" "$obs" &
	o=$!
	wait_for 30 "observer" test -e "$obs.ready" || return 1
	start_in "$rel" "$work/bomb"
	wait_for 60 "empty" empty "$rel" || { "$CGKILL" -q "$v2/$box/$rel"; wait "$o"; return 1; }
	wait "$o"
	read -r t_sat t_empty <"$obs"
	wait_for 20 "event" test -s "$work/events.json" || return 1
	t_ev=$(python3 -c 'import json, sys; from datetime import datetime
print(round(datetime.fromisoformat(json.loads(open(sys.argv[1]).readline())["detected_at"]).timestamp() * 1e6))' "$work/events.json")
	[ -n "$t_sat" ] && [ -n "$t_empty" ] || return 1
	echo "$(((t_ev - t_sat) / 1000)) $(((t_empty - t_sat) / 1000))"
}

# median and worst of a column of numbers on stdin
mw() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "median %d, worst %d (n=%d)", v[int((NR + 1) / 2)], v[NR], NR; else printf "no runs" }'; }

echo "## cgkilld: one user's many cgroups (bench/watch-storm.sh)"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), $("$CGKILLD" --version | head -1) ($CGKILLD)"
echo "- Linux $(uname -r), $(nproc) CPUs, load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- fs.inotify.max_user_watches $watches_was; open file limit $(ulimit -Hn) (hard)"
echo '```text'

for part in $parts; do
	case $part in
	flood)
		need=$((NFLOOD + 1000))
		[ "$watches_was" -lt $((need * 2)) ] && echo $((watches_was + need)) >"$watches_file"
		start_daemon "$(conf "$box/users/*/*")"
		c0=$(cpu_ms)
		t0=${EPOCHREALTIME/./}
		as_alice "[os.mkdir('c%d' % i) for i in range($NFLOOD)]" || bail_out "alice's flood failed"
		t1=${EPOCHREALTIME/./}
		wait_for 600 "the flood watched" eval '[ "$(inotify_watches)" -ge '"$NFLOOD"' ]' ||
			echo "flood: the daemon has $(inotify_watches) inotify watches"
		t2=${EPOCHREALTIME/./}
		c1=$(cpu_ms)
		read -r rss hwm <<<"$(mem)"
		echo "flood: alice made $NFLOOD empty matched cgroups in $(((t1 - t0) / 1000)) ms; all watched $(((t2 - t0) / 1000)) ms after the first"
		echo "flood: daemon CPU $((c1 - c0)) ms for it; $(inotify_watches) inotify watches, $(fds) open files; VmRSS $rss KiB, VmHWM $hwm KiB"
		x0=$(ctxt)
		c0=$(cpu_ms)
		sleep 10
		echo "flood: idle 10 s after: daemon CPU $(($(cpu_ms) - c0)) ms, $(($(ctxt) - x0)) wakeups"
		: >"$work/rows"
		for i in $(seq "${TRIALS:-5}"); do
			bomb users/bob/bomb >>"$work/rows"
		done
		echo "flood: bob's bomb (pids.max $PMAX) beside them: saturation -> event ms: $(awk '{ print $1 }' "$work/rows" | mw)"
		echo "flood: bob's bomb: saturation -> empty ms: $(awk '{ print $2 }' "$work/rows" | mw)"
		read -r rss hwm <<<"$(mem)"
		echo "flood: after the bombs: $(fds) open files, VmRSS $rss KiB, VmHWM $hwm KiB, daemon CPU $(cpu_ms) ms in all"
		kd_stop
		as_alice "[os.rmdir('c%d' % i) for i in range($NFLOOD)]"
		echo "$watches_was" >"$watches_file"
		;;
	storm)
		as_alice "[os.mkdir('d%d' % i) for i in range($NDIRS)]" || bail_out "alice's directories"
		start_daemon "$(conf "$box/users/*/*/job")"
		wait_for 300 "alice's directories watched" eval '[ "$(inotify_watches)" -ge '"$NDIRS"' ]' ||
			echo "storm: the daemon has $(inotify_watches) inotify watches"
		echo "storm: $(state_line | sed 's/^<6>state: //')"
		mkcg users/bob/b || bail_out "box/users/bob/b"
		: >"$work/rows"
		for i in $(seq "${TRIALS:-3}"); do
			c0=$(cpu_ms)
			t0=${EPOCHREALTIME/./}
			NICE=$STORM_NICE as_alice "
end = time.monotonic() + $STORM_SECS; n = 0
while time.monotonic() < end:
    os.mkdir('s'); os.rmdir('s'); n += 2
print(n)" >"$work/ops" &
			storm=$!
			sleep $((STORM_SECS / 2))
			b=$(bomb users/bob/b/job)
			wait "$storm"
			t1=${EPOCHREALTIME/./}
			c1=$(cpu_ms)
			ops=$(cat "$work/ops")
			echo "storm $i: $ops mkdir+rmdir in $(((t1 - t0) / 1000)) ms; daemon CPU $((c1 - c0)) ms ($(((c1 - c0) * 1000 / (ops ? ops : 1))) us an operation); bob's bomb: saturation -> event, -> empty ms: ${b:-failed}"
			echo "$((c1 - c0)) $(((t1 - t0) / 1000)) $b" >>"$work/rows"
		done
		echo "storm: daemon CPU ms per storm: $(awk '{ print $1 }' "$work/rows" | mw)"
		echo "storm: bob's bomb in the storm: saturation -> event ms: $(awk 'NF >= 4 { print $3 }' "$work/rows" | mw)"
		echo "storm: saturation -> empty ms: $(awk 'NF >= 4 { print $4 }' "$work/rows" | mw)"
		read -r rss hwm <<<"$(mem)"
		echo "storm: VmRSS $rss KiB, VmHWM $hwm KiB"
		kd_stop
		as_alice "[os.rmdir('d%d' % i) for i in range($NDIRS)]"
		;;
	*) bail_out "unknown part $part (flood, storm)" ;;
	esac
done
echo '```'
