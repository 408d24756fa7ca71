#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's detection latency and time to empty beside a fork bomb, and its
# idle cost; standalone (bench/ has the library's benchmarks).
#
#	daemon/bench-latency.sh [TRIALS] [PIDS_MAX]	(root; defaults 10, 3000)
#
# The bomb is the one users meet: a dynamically linked `for (;;) fork();`
# of equal weight (nice 0, SCHED_OTHER), under pids.max (cgroup v2 pids, or
# the v1 pids hierarchy of hybrid layouts), in a sandbox cgroup
# <v2>/cgkill-test.<pid>.bench/jobs/bomb. An observer at SCHED_FIFO 10
# records when the first fork is refused at pids.max (saturation: the
# "max" count of pids.events leaves 0) and when the cgroup is empty; the daemon's event carries the time it decided to act.
# Rows:
#   floor      the observer itself writes 1 to cgroup.kill at saturation
#   cgkilld    the daemon, PollInterval=20ms (the default), with
#              RealTime=no at nice 0 and at nice -10, and with RealTime=yes
#              (the default: SCHED_RR 1)
# Then what a user feels beside the bomb with cgkilld running: the worst
# time of /bin/true started every 100 ms from a sibling cgroup; and the
# idle cost: 1000 watched cgroups, 30 s, the daemon's context switches
# (wakeups) and RSS.
set -u
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh
build=${CGKILL_BUILD:-build}
. tests/cgkilld-lib.sh

TRIALS=${1:-10}
PMAX=${2:-3000}
need_cgkilld
kd_setup bench
work=$kd_tmp

cat >"$work/bomb.c" <<'EOF'
#include <unistd.h>
int main(void) { for (;;) fork(); }
EOF
${CC:-cc} -O2 -o "$work/bomb" "$work/bomb.c" || bail_out "cannot build the bomb"

cat >"$work/observer.py" <<'EOF'
import os, sys, time
pev, pmax, events, out, kill = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
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
    # saturation: the first fork refused at pids.max
    if t_sat is None and refused > 0:
        t_sat = now()
        if kill != "-":
            with open(kill, "w") as f:
                f.write("1")
    if started and not pop:
        t_empty = now()
        break
    time.sleep(0.0002)
open(out, "w").write("%s %s\n" % (t_sat or "", t_empty or ""))
EOF

mkcg jobs/bomb "$PMAX"
case $? in
0) ;;
*) bail_out "no pids limit can be set below $v2/$box" ;;
esac
if v2_has pids; then pev=$v2/$box/jobs/bomb/pids.events; else pev=$v1pids/$box/jobs/bomb/pids.events; fi

# one trial: "sat_to_event_ms sat_to_empty_ms" (event "-" for the floor)
trial() {
	local mode=${1%% *} obs=$work/obs events=$work/events.json t_sat t_empty t_ev
	rm -f "$obs" "$obs.ready"
	: >"$events"
	# pids.events counts for the cgroup's life: a new one for each trial
	rm_cgroup_tree "$v2/$box/jobs/bomb"
	[ -n "$v1pids" ] && [ -d "$v1pids/$box/jobs/bomb" ] && rm_cgroup_tree "$v1pids/$box/jobs/bomb"
	# the v1 counterpart first, so that the daemon arms it at once
	if [ -n "$v1pids" ] && ! v2_has pids; then
		mkdir -p "$v1pids/$box/jobs/bomb" && echo "$PMAX" >"$v1pids/$box/jobs/bomb/pids.max" || return 1
	fi
	mkcg jobs/bomb "$PMAX" || return 1
	if [ "$mode" != floor ]; then
		wait_for 20 "the daemon watches the new cgroup" \
			eval 'dump | grep -q "watching $v2/$box/jobs/bomb (rule bench) pids:"' || return 1
	fi
	python3 "$work/observer.py" "$pev" "$PMAX" "$v2/$box/jobs/bomb/cgroup.events" "$obs" \
		"$([ "$mode" = floor ] && echo "$v2/$box/jobs/bomb/cgroup.kill" || echo -)" &
	local o=$!
	wait_for 30 "observer" test -e "$obs.ready" || return 1
	start_in jobs/bomb "$work/bomb"
	wait_for 60 "empty" empty jobs/bomb || { "$CGKILL" -q "$v2/$box/jobs/bomb"; wait "$o"; return 1; }
	wait "$o"
	read -r t_sat t_empty <"$obs"
	[ -n "$t_sat" ] && [ -n "$t_empty" ] || return 1
	if [ "$mode" = floor ]; then
		echo "- $(((t_empty - t_sat) / 1000))"
	else
		wait_for 20 "event" test -s "$events" || return 1
		read -r t_ev lib <<<"$(python3 -c 'import json,sys; e = json.loads(open(sys.argv[1]).readline()); t = e["report"]["targets"][0]
print(int(e["time"] * 1e6), "(library: signal %s ms, empty %s ms, %s)" % (t["signal_ms"], t["empty_ms"], t["backend"]))' "$events")"
		echo "$(((t_ev - t_sat) / 1000)) $(((t_empty - t_sat) / 1000)) $lib"
	fi
}

stats() {	# label, then numbers on stdin: median p90 max
	sort -n | awk -v l="$1" '{ v[NR] = $1 } END { if (!NR) { printf "%-44s (none)\n", l; exit }
		m = v[int((NR + 1) / 2)]; p = v[int(NR * 0.9 + 0.999)]; printf "%-28s median %5d  p90 %5d  max %5d  (n=%d)\n", l, m, p, v[NR], NR }'
}

conf=$work/cgkilld.conf
run_rows() {
	local row=$1 mode=${1%% *} poll=$2 nice=$3 i r
	printf '[Daemon]\nRealTime=%s\nEventLog=%s\nPollInterval=%s\n[Rule]\nName=bench\nMatch=%s/jobs/*\nTrigger=pids-max\nPidsMaxEvents=20\nPostActionDelay=0\nMaxActionsPerMinute=infinity\n' \
		"$([ "$nice" = rr ] && echo yes || echo no)" "$work/events.json" "$poll" "$box" >"$conf"
	if [ "$mode" != floor ]; then
		kd_start "$conf" || bail_out "cgkilld did not start"
		# RealTime=yes (its default) sets SCHED_RR 1 itself
		[ "$nice" = rr ] || renice -n "$nice" -p "$kd_daemon" >/dev/null
	fi
	: >"$work/rows"
	for i in $(seq "$TRIALS"); do
		r=$(trial "$mode") && echo "$r" >>"$work/rows"
	done
	[ "$mode" != floor ] && kd_stop
	sed "s/^/# $row: /" "$work/rows"
	if [ "$mode" != floor ]; then
		awk '{ print $1 }' "$work/rows" | stats "$row: saturation -> event ms"
	fi
	awk '{ print $2 }' "$work/rows" | stats "$row: saturation -> empty ms"
}

echo "# cgkilld $("$CGKILLD" --version | head -1), $(uname -r), $(nproc) CPUs, pids.max $PMAX, $TRIALS trials, v$(v2_has pids && echo 2 || echo 1) pids"
ONLY=${ONLY:-}
[ -z "$ONLY" ] || [ "$ONLY" = latency ] || SKIP_LATENCY=1
if [ -z "${SKIP_LATENCY:-}" ]; then
run_rows floor - 0
run_rows "cgkilld nice 0" 20ms 0
run_rows "cgkilld nice -10" 20ms -10
run_rows "cgkilld SCHED_RR (RealTime=yes)" 20ms rr
fi

# ---- what a user feels: /bin/true every 100 ms from a sibling cgroup ----
# (DESIGN.md: beside a libc-sharing bomb at 3,000 with no guard, up to
# 0.3-7.8 s; with cgkilld running the worst case should stay under 100 ms)
mkcg ticker || bail_out "cannot create box/ticker"
cat >"$work/ticker.sh" <<'EOF'
end=$((${EPOCHREALTIME/./} + $1 * 1000000)); worst=0; n=0
while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do
	t0=${EPOCHREALTIME/./}; /bin/true; t1=${EPOCHREALTIME/./}
	[ $((t1 - t0)) -gt "$worst" ] && worst=$((t1 - t0)); n=$((n + 1))
	sleep 0.1
done
echo "$worst $n" >"$2"
EOF
printf '[Daemon]\nEventLog=%s\n[Rule]\nName=bench\nMatch=%s/jobs/*\nTrigger=pids-max\nPidsMaxEvents=20\nPostActionDelay=0\nMaxActionsPerMinute=infinity\n' \
	"$work/events.json" "$box" >"$conf"
kd_start "$conf" || bail_out "cgkilld did not start"
: >"$work/rows"
for i in $(seq "$TRIALS"); do
	rm_cgroup_tree "$v2/$box/jobs/bomb"
	[ -n "$v1pids" ] && [ -d "$v1pids/$box/jobs/bomb" ] && rm_cgroup_tree "$v1pids/$box/jobs/bomb"
	if [ -n "$v1pids" ] && ! v2_has pids; then
		mkdir -p "$v1pids/$box/jobs/bomb" && echo "$PMAX" >"$v1pids/$box/jobs/bomb/pids.max"
	fi
	mkcg jobs/bomb "$PMAX" || break
	wait_for 20 "watched" eval 'dump | grep -q "watching $v2/$box/jobs/bomb (rule bench) pids:"' || break
	rm -f "$work/tick"
	run_in ticker bash "$work/ticker.sh" 4 "$work/tick" || break
	ticker=$started
	sleep 1
	start_in jobs/bomb "$work/bomb"
	wait_for 60 "empty" empty jobs/bomb || "$CGKILL" -q "$v2/$box/jobs/bomb"
	wait_for 30 "the ticker" test -s "$work/tick"
	read -r worst n <"$work/tick"
	echo "$((worst / 1000)) $n" >>"$work/rows"
done
kd_stop
sed "s/^/# beside the bomb, with cgkilld: worst \/bin\/true ms, runs: /" "$work/rows"
awk '{ print $1 }' "$work/rows" | stats "/bin/true every 100 ms in a sibling, worst ms"

# ---- idle: 1000 watched cgroups ----
for i in $(seq 0 999); do mkdir -p "$v2/$box/idle/c$i"; done
[ -n "$v1pids" ] && ! v2_has pids && for i in $(seq 0 999); do mkdir -p "$v1pids/$box/idle/c$i"; done
printf '[Rule]\nName=idle\nMatch=%s/idle/*\nTrigger=pids-max oom-kill\n' "$box" >"$conf"
kd_start "$conf" || bail_out "cgkilld did not start"
wait_for 60 "1000 watched" grep -q 'started: 1 rule(s), 1000 cgroup' "$kd_log"
sw() { awk '/ctxt_switches/ { s += $2 } END { print s }' "/proc/$kd_daemon/status"; }
a=$(sw)
sleep 30
b=$(sw)
rss=$(awk '/VmRSS/ { print $2 }' "/proc/$kd_daemon/status")
echo "idle, 1000 watched cgroups, 30 s: $((b - a)) context switches (wakeups; inotify on the v2 root wakes it for every cgroup made or removed there by anyone), RSS $((rss / 1024)) MiB (memory locked)"
kd_stop
