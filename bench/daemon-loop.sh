#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld never waits on one action (issue 27, item 2): `make -C bench
# loop`, or by hand, as root, from anywhere:
#
#	bench/daemon-loop.sh [beside|many]...	(default: both)
#
#	CGKILL_BUILD=DIR (default build), CGKILLD= the daemon (an older one
#	for "before"); TRIALS (default 10 bombs beside, 5 rounds of many),
#	NBOMBS (20), PMAX (1000).
#
# In a sandbox <v2>/cgkill-test.<pid>.loop, the daemon as shipped (no -v):
#  beside: one action in a 10-minute Wait= (Signal=TERM on a process that
#          ignores it) and two ExecPreKill= hooks that hang (ExecTimeout=
#          1min, the most), then TRIALS fork bombs, one after another, in
#          another cgroup (pids.max PMAX, default KILL): for each, its
#          detection (the "detected_at" of its event: when its trigger
#          fired) -> empty, seen by an observer at SCHED_FIFO 10 polling
#          its cgroup.events (POLLPRI). Target: 50 ms.
#  many:   NBOMBS bombs started at once in NBOMBS cgroups (pids.max PMAX
#          each): the start -> the last one empty, and each one's
#          detection -> empty. Target: all empty within 1 s.
# Output: markdown, medians and worst cases.
set -u
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh
build=${CGKILL_BUILD:-build}
. tests/cgkilld-lib.sh

TRIALS=${TRIALS:-}
NBOMBS=${NBOMBS:-20}
PMAX=${PMAX:-1000}
parts=${*:-beside many}
need_cgkilld
need_forkbomb
kd_setup loop
work=$kd_tmp

# observer.py OUT DIR...: the wall time (us) at which each cgroup DIR,
# once populated, is empty again: "DIR T" lines in OUT, at most 60 s.
cat >"$work/observer.py" <<'EOF'
import os, select, sys, time
out, dirs = sys.argv[1], sys.argv[2:]
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
fds = {os.open(d + "/cgroup.events", os.O_RDONLY): d for d in dirs}
seen, done = set(), {}
p = select.poll()
for fd in fds:
    p.register(fd, select.POLLPRI | select.POLLERR)
open(out + ".ready", "w").close()
end = time.monotonic() + 60
while len(done) < len(fds) and time.monotonic() < end:
    for fd, d in fds.items():
        if d in done:
            continue
        try:
            pop = os.pread(fd, 256, 0).split(b"populated ")[1][:1] == b"1"
        except (OSError, IndexError):
            continue
        if pop:
            seen.add(d)
        elif d in seen:
            done[d] = int(time.time() * 1e6)
    p.poll(5)
with open(out, "w") as f:
    for d, t in done.items():
        f.write("%s %d\n" % (d, t))
EOF

# The daemon as shipped: no -v, its log in $kd_log.
start_daemon() {
	kd_log=$work/cgkilld.log.$((++kd_runs))
	: >"$kd_log"
	# as the journal gets it: "<N>" and the message, no time of its own
	JOURNAL_STREAM=$(stat -c %d:%i "$kd_log") "$CGKILLD" --foreground --config "$1" --runtime-dir "$work/run.$kd_runs" 2>>"$kd_log" &
	kd_daemon=$!
	wait_for 60 "cgkilld to start" grep -qs 'started:' "$kd_log" || bail_out "cgkilld did not start: $(cat "$kd_log")"
}

cat >"$work/hang" <<EOF
#!/bin/sh
echo \$\$ >>"$work/hangs"
exec sleep 3600
EOF
chmod +x "$work/hang"

conf=$work/cgkilld.conf
cat >"$conf" <<EOF
[Daemon]
EventLog=$work/events.json

[Rule]
Name=waiting
Match=$box/wait/*
Trigger=pids-max
PidsMaxEvents=5
Signal=TERM
Wait=10min

[Rule]
Name=hooked
Match=$box/hang/*
Trigger=pids-max
PidsMaxEvents=5
ExecPreKill=$work/hang
ExecTimeout=1min

[Rule]
Name=bombs
Match=$box/bombs/*
Trigger=pids-max
PidsMaxEvents=5
PostActionDelay=0
MaxActionsPerMinute=infinity
EOF

# detect_us REL: the "detected_at" of rule bombs' last event on box/REL,
# in us
detect_us() {
	python3 - "$work/events.json" "$v2/$box/$1" <<'EOF'
import json, sys
from datetime import datetime
t = [json.loads(l)["detected_at"] for l in open(sys.argv[1]) if '"bombs"' in l and json.loads(l)["cgroup"] == sys.argv[2]]
print(round(datetime.fromisoformat(t[-1]).timestamp() * 1e6) if t else "")
EOF
}

# stats MS...: "median M ms, worst W ms (N)"
stats() {
	printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { if (!NR) { print "none"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "median %.1f ms, worst %.1f ms (%d)", m, v[NR], NR }'
}

# observe OUT REL...: the observer on box/REL..., ready
observe() {
	local out=$1 d=()
	shift
	for r in "$@"; do d+=("$v2/$box/$r"); done
	rm -f "$out" "$out.ready"
	python3 "$work/observer.py" "$out" "${d[@]}" &
	obs=$!
	wait_for 30 "the observer" test -e "$out.ready" || bail_out "no observer"
}

echo "# cgkilld: a bomb beside slow actions, and many bombs at once"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg);"
echo "daemon $CGKILLD ($("$CGKILLD" --version)), pids.max $PMAX, bombs: $FORKBOMB."
echo

mkcg wait/x 8 && mkcg hang/a 8 && mkcg hang/b 8 || bail_out "cannot create the slow cgroups"
start_daemon "$conf"

if [[ " $parts " == *" beside "* ]]; then
	n=${TRIALS:-10}
	run_in wait/x sh -c 'trap "" TERM; sleep 3600' || bail_out "no TERM-proof sleeper"
	stubborn=$started
	start_in wait/x "$FORKBOMB"
	start_in hang/a "$FORKBOMB"
	start_in hang/b "$FORKBOMB"
	wait_for 60 "two hooks hanging" eval '[ "$(grep -c . "$work/hangs" 2>/dev/null)" -ge 2 ]' || bail_out "the hooks did not start"
	wait_for 60 "wait/x's bomb gone (TERM)" eval '[ "$(grep -c . "$v2/$box/wait/x/cgroup.procs")" -le 2 ]' ||
		bail_out "the waiting action did not begin"
	t_slow=${EPOCHREALTIME/./}
	res=()
	for i in $(seq "$n"); do
		mkcg "bombs/b$i" "$PMAX" || bail_out "cannot create bombs/b$i"
		observe "$work/beside.$i" "bombs/b$i"
		start_in "bombs/b$i" "$FORKBOMB"
		wait "$obs"
		te=$(awk '{ print $2 }' "$work/beside.$i")
		td=$(detect_us "bombs/b$i")
		if [ -n "$te" ] && [ -n "$td" ]; then
			res+=("$(awk -v a="$te" -v b="$td" 'BEGIN { printf "%.1f", (a - b) / 1000 }')")
		else
			diag "bomb $i: not seen emptied (empty '$te', detected '$td')"
		fi
	done
	held=$(((${EPOCHREALTIME/./} - t_slow) / 1000))
	slow_ok=no
	alive "$stubborn" && [ "$(grep -c . "$work/hangs")" -eq 2 ] && alive "$(head -1 "$work/hangs")" &&
		alive "$(tail -1 "$work/hangs")" && slow_ok=yes
	echo "## Beside one 10-minute Wait= and two hanging hooks"
	echo
	echo "| bombs | detection -> empty | slow actions still under way at the end ($((held / 1000)) s) |"
	echo "|---|---|---|"
	echo "| $n, one after another | $(stats "${res[@]}") | $slow_ok |"
	echo
	echo "Each: $(printf '%s ' "${res[@]}")ms."
	echo
fi

if [[ " $parts " == *" many "* ]]; then
	rounds=${TRIALS:-5}
	all=() each=()
	for k in $(seq "$rounds"); do
		rels=()
		for i in $(seq "$NBOMBS"); do
			mkcg "bombs/r$k-$i" "$PMAX" || bail_out "cannot create bombs/r$k-$i"
			rels+=("bombs/r$k-$i")
		done
		observe "$work/many.$k" "${rels[@]}"
		t0=${EPOCHREALTIME/./}
		for r in "${rels[@]}"; do start_in "$r" "$FORKBOMB"; done
		wait "$obs"
		seen=$(grep -c . "$work/many.$k")
		killed=$(grep -cE "^<4>rule bombs: .*/bombs/r$k-[0-9]+: pids-max.*kill with KILL: done" "$kd_log")
		echo "Round $k: $seen of $NBOMBS seen emptied by the observer; the daemon's log has $killed kill(s) done."
		[ "$seen" -eq "$NBOMBS" ] || diag "round $k: $seen of $NBOMBS seen emptied"
		last=$(sort -k2 -n "$work/many.$k" | tail -1 | awk '{ print $2 }')
		all+=("$(awk -v a="$last" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1000 }')")
		while read -r d te; do
			td=$(detect_us "${d#"$v2/$box/"}")
			[ -n "$td" ] && each+=("$(awk -v a="$te" -v b="$td" 'BEGIN { printf "%.1f", (a - b) / 1000 }')")
		done <"$work/many.$k"
		for r in "${rels[@]}"; do rmdir "$v2/$box/$r" 2>/dev/null; done
	done
	echo "## $NBOMBS bombs started at once, $NBOMBS cgroups, pids.max $PMAX"
	echo
	echo "| rounds | start -> all $NBOMBS empty | each: detection -> empty |"
	echo "|---|---|---|"
	echo "| $rounds | $(stats "${all[@]}") | $(stats "${each[@]}") |"
	echo
	echo "Start -> all empty, each round: $(printf '%s ' "${all[@]}")ms."
	echo
fi
kd_stop
echo "The daemon's stop: $(grep -c '^<5>stopping: rule' "$kd_log") action(s) ended by SIGTERM."
