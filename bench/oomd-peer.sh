#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld beside Meta's oomd under memory pressure (issue 18): the same
# thrashing workload (thrash.c) in a memory-limited sandbox cgroup, watched
# by (a) cgkilld's memory-pressure rule and (b) oomd (Debian's oomd 0.5.0),
# each watching only the sandbox. `make -C bench peer` (N=10), which writes
# results/<date>-peer.md, or by hand, as root, from anywhere:
#
#	bench/oomd-peer.sh [TRIALS]		(default 10)
#
#	CGKILL_BUILD=DIR (default build): DIR/cgkilld and DIR/bench/thrash (or
#	THRASH=, CGKILLD=); OOMD= the oomd binary (default: oomd in PATH);
#	ONLY=oomd|cgkilld one row; LIMIT= the sandbox's memory limit (default
#	512M), THRASH_ARGS= the workload's (default "-s 768M -m mmap -x 2");
#	OOMD_INTERVAL= oomd's loop interval in seconds (default 1; oomd's own
#	default is 5); OOMD_ACTION= its kill plugin (default kill_by_pressure;
#	or kill_by_memory_size_or_growth); DEADLINE= seconds a trial may take (default 60); NOTE=
#	a line for the header; TMPDIR the scratch directory, which holds the
#	workload's file and must not be a tmpfs (default /var/tmp); KEEP=1
#	keeps it (the daemons' stamped logs, the observer's samples).
#
# Each trial makes a fresh sandbox (fresh PSI averages, a daemon with no
# history): <v2>/cgkill-peer.<pid>/t<N>/ with two children, victim (the
# workload, under the memory limit: v1 memory.limit_in_bytes of the same
# path on hybrid layouts, else v2 memory.max) and sentinel (a sleep, no
# limit); one more sentinel sleeps in <v2>/cgkill-peer.<pid>.outside, which
# no rule names. The daemon under test is started for the trial with rules
# naming only t<N> (the detector) and its children (the kill), and is
# stopped after it:
#   cgkilld  [Rule] Match=<sandbox>/t<N>/* Trigger=memory-pressure
#            PressureLimit=full 20% PressureWindow=2s PressureDuration=2s
#   oomd     pressure_above (full avg10 of t<N> > 20 for 2 s) then
#            kill_by_pressure on t<N>/* (memory), -i OOMD_INTERVAL
# An observer (oomd-peer.py, SCHED_FIFO 10) samples the victim's
# cgroup.events and t<N>'s memory.pressure (not the victim's: reading it
# would delay cgkilld's trigger, see oomd-peer.py) every 10 ms: the workload's first stall
# (the first rise of its "full" total), the moment the kernel trigger's
# condition held (full stall >= 20% of the trailing 2 s, from the samples),
# the moment full avg10 reached 20 (oomd's view) and empty. The kill's time
# is cgkilld's event (its "acted_at") or the stamp of oomd's "Trying to kill"
# line (its log read through a pipe that stamps each line as it arrives).
set -u
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

TRIALS=${1:-10}
build=${CGKILL_BUILD:-build}
CGKILLD=${CGKILLD:-$build/cgkilld}
THRASH=${THRASH:-$build/bench/thrash}
OOMD=${OOMD:-$(command -v oomd)}
ONLY=${ONLY:-}
LIMIT=${LIMIT:-512M}
THRASH_ARGS=${THRASH_ARGS:--s 768M -m mmap -x 2}
OOMD_INTERVAL=${OOMD_INTERVAL:-1}
OOMD_ACTION=${OOMD_ACTION:-kill_by_pressure}
DEADLINE=${DEADLINE:-60}
NOTE=${NOTE:-}
OBSERVER=$PWD/bench/oomd-peer.py

[ "$(id -u)" -eq 0 ] || bail_out "needs root (sandbox cgroups)"
[ -x "$THRASH" ] || bail_out "$THRASH not built (make -C bench $THRASH)"
v2=$(mount_of cgroup2)
v1mem=$(mount_of memory)
[ -n "$v2" ] || bail_out "no cgroup v2 mount: neither daemon can watch PSI of a cgroup"
[ -f "$v2/memory.pressure" ] || bail_out "no $v2/memory.pressure (PSI off?)"
v2mem=
grep -qw memory "$v2/cgroup.subtree_control" 2>/dev/null && v2mem=1
[ -n "$v2mem" ] || [ -n "$v1mem" ] || bail_out "no memory controller, v1 or v2: no limit can be set"

box=cgkill-peer.$$
outside=$box.outside
work=$(mktemp -d "${TMPDIR:-/var/tmp}/cgkill-peer.XXXXXX") || bail_out "mktemp"
[ "$(stat -f -c %T "$work")" != tmpfs ] ||
	bail_out "$work is on a tmpfs: the workload's file would be unevictable there (set TMPDIR)"
daemon=
pids=()

cleanup() {
	local d p
	stop_daemon
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
	done
	for d in "$v2/$box" "$v2/$outside" ${v1mem:+"$v1mem/$box"}; do
		[ -d "$d" ] && rm_cgroup_tree "$d"
	done
	wait 2>/dev/null
	if [ -n "${KEEP:-}" ]; then echo "logs kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 129' HUP INT TERM

stop_daemon() {
	local i
	[ -n "$daemon" ] || return 0
	kill -TERM "$daemon" 2>/dev/null
	for i in $(seq 100); do
		alive "$daemon" || break
		sleep 0.05
	done
	kill -KILL "$daemon" 2>/dev/null
	wait "$daemon" 2>/dev/null
	daemon=
}

# stamp: each line of stdin prefixed with CLOCK_REALTIME in microseconds.
stamp() {
	python3 -u -c 'import sys, time
for l in sys.stdin:
    sys.stdout.write("%d %s" % (time.time_ns() // 1000, l)); sys.stdout.flush()'
}

# start REL COMMAND...: COMMAND in <v2>/<box>/REL (and its v1 memory
# counterpart where there is one); its pid in $started.
started=
start() {
	local rel=$1 s=
	shift
	[ -n "$v1mem" ] && [ -d "$v1mem/$rel" ] && s+="echo \$\$ >'$v1mem/$rel/cgroup.procs' && "
	s+="echo \$\$ >'$v2/$rel/cgroup.procs'"
	sh -c "$s && exec \"\$@\"" sh "$@" </dev/null &
	started=$!
	pids+=("$started")
}

# wait_for SECONDS COMMAND...
wait_for() {
	local end=$((${EPOCHREALTIME/./} + $1 * 1000000))
	shift
	until "$@"; do
		[ "${EPOCHREALTIME/./}" -gt "$end" ] && return 1
		sleep 0.02
	done
}

# The sandbox of trial $1: t$1/victim under the limit, t$1/sentinel.
mksandbox() {
	local t=$box/t$1 c
	mkdir -p "$v2/$t/victim" "$v2/$t/sentinel" || return 1
	if [ -n "$v2mem" ]; then
		for c in "$v2/$box" "$v2/$box/t$1"; do
			echo +memory >"$c/cgroup.subtree_control" || return 1
		done
		echo "$LIMIT" >"$v2/$t/victim/memory.max" || return 1
		echo 0 >"$v2/$t/victim/memory.swap.max" 2>/dev/null
	else
		mkdir -p "$v1mem/$t/victim" || return 1
		echo "$LIMIT" >"$v1mem/$t/victim/memory.limit_in_bytes" || return 1
		[ -f "$v1mem/$t/victim/memory.memsw.limit_in_bytes" ] &&
			echo "$LIMIT" >"$v1mem/$t/victim/memory.memsw.limit_in_bytes"
	fi
	return 0
}

oomd_conf() {
	cat <<EOF
{
  "rulesets": [
    {
      "name": "cgkill-peer sandbox $1",
      "detectors": [
        [
          "sandbox memory pressure",
          { "name": "pressure_above",
            "args": { "cgroup": "$box/t$1", "resource": "memory",
                      "threshold": "20", "duration": "2" } }
        ]
      ],
      "actions": [
        { "name": "$OOMD_ACTION",
          "args": { "cgroup": "$box/t$1/*",$([ "$OOMD_ACTION" = kill_by_pressure ] && echo ' "resource": "memory",')
                    "post_action_delay": "5" } }
      ]
    }
  ]
}
EOF
}

cgkilld_conf() {
	printf '[Daemon]\nEventLog=%s\n[Rule]\nName=thrash\nMatch=%s/t%s/*\nTrigger=memory-pressure\nPressureLimit=full 20%%\nPressureWindow=2s\nPressureDuration=2s\n' \
		"$work/events.$1.json" "$box" "$1"
}

# start_daemon ROW TRIAL: the daemon with the trial's rules, its stderr
# stamped into $work/ROW.TRIAL.log; waits (bounded) until it runs.
start_daemon() {
	local row=$1 i=$2 log=$work/$1.$2.log
	: >"$log"
	case $row in
	oomd)
		oomd_conf "$i" >"$work/oomd.$i.json"
		"$OOMD" -C "$work/oomd.$i.json" -f "$v2" -i "$OOMD_INTERVAL" -D "$work/oomd-run" \
			--kmsg-override "$work/oomd-kmsg.$i" 2> >(stamp >"$log") &
		daemon=$!
		wait_for 30 grep -q 'Running oomd' "$log" || { diag "$(cat "$log")"; return 1; }
		;;
	cgkilld)
		cgkilld_conf "$i" >"$work/cgkilld.$i.conf"
		"$CGKILLD" --foreground -v --config "$work/cgkilld.$i.conf" --runtime-dir "$work/run.$i" 2> >(stamp >"$log") &
		daemon=$!
		wait_for 30 grep -q 'started:' "$log" || { diag "$(cat "$log")"; return 1; }
		;;
	esac
}

ms() { echo $((($1 - $2) / 1000)); }

# trial ROW N: one line, "-" for what did not happen:
# stall->empty ready->empty stall->kill cond->kill avg10->kill kill->empty
# stall->kevent cond->kevent (ms) kevent->kill (us), the victim's wait status, the sentinels ("ok" or what died), then
# what the daemon killed.
trial() {
	local row=$1 i=$2 t=$box/t$2 obs=$work/obs.$2 v st killed ready_us k=- sent=ok
	local stall cond avg10 empty kevent
	mksandbox "$i" || { diag "cannot make the sandbox t$i"; return 1; }
	start "$t/sentinel" sleep 3600
	local s_in=$started
	disown "$s_in"
	wait_for 10 grep -qx "$s_in" "$v2/$t/sentinel/cgroup.procs" || return 1
	start_daemon "$row" "$i" || return 1
	rm -f "$obs" "$obs.ready"
	python3 "$OBSERVER" "$v2/$t/victim" "$v2/$t" "$obs" "$obs.ready" "$DEADLINE" 20 2 &
	local o=$!
	wait_for 10 test -e "$obs.ready" || return 1
	# shellcheck disable=SC2086 # THRASH_ARGS are words
	start "$t/victim" "$THRASH" -d "$work" -t "$((DEADLINE + 30))" $THRASH_ARGS >"$work/thrash.$i.out"
	v=$started
	wait "$o"
	if ! grep -qx 'populated 0' "$v2/$t/victim/cgroup.events"; then
		diag "t$i: $row did not empty the victim within ${DEADLINE}s"
		rm_cgroup_tree "$v2/$t/victim"
	fi
	wait "$v" 2>/dev/null
	st=$?
	sleep 0.3	# the daemon's last lines
	stop_daemon
	alive "$s_in" || sent="SENTINEL-IN-SANDBOX-DIED"
	alive "$s_out" || sent="SENTINEL-OUTSIDE-DIED"
	kill -KILL "$s_in" 2>/dev/null
	read -r _ stall cond avg10 empty kevent <<<"$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(*[r[k] or "-" for k in ("populated", "stall", "cond", "avg10", "empty", "kevent")])' "$obs")"
	ready_us=$(awk '/^thrash: ready/ { print $4 }' "$work/thrash.$i.out")
	case $row in
	oomd)
		k=$(awk '/Trying to kill/ { print $1; exit }' "$work/$row.$i.log")
		killed=$(grep -E 'Trying to kill|Killed [0-9]+:' "$work/$row.$i.log" | cut -d' ' -f2- | tr '\n' ' ')
		;;
	cgkilld)
		if [ -s "$work/events.$i.json" ]; then
			read -r k killed <<<"$(python3 -c 'import json, sys
from datetime import datetime
e = json.loads(open(sys.argv[1]).readline()); r = e.get("report") or {}
t = (r.get("targets") or [{}])[0]
print(round(datetime.fromisoformat(e["acted_at"]).timestamp() * 1e6), e.get("cgroup"), "signalled", t.get("signalled"), "backend", t.get("backend"))' "$work/events.$i.json")"
		fi
		;;
	esac
	[ -n "$k" ] || k=-
	d() { [ "$1" != - ] && [ "$2" != - ] && ms "$1" "$2" || echo -; }
	du() { [ "$1" != - ] && [ "$2" != - ] && echo $(($1 - $2)) || echo -; }
	echo "$(d "$empty" "$stall") $(d "$empty" "${ready_us:--}") $(d "$k" "$stall") $(d "$k" "$cond") $(d "$k" "$avg10") $(d "$empty" "$k") $(d "$kevent" "$stall") $(d "$kevent" "$cond") $(du "$k" "$kevent") $st $sent ${killed:-nothing}"
	rm_cgroup_tree "$v2/$t"
	[ -n "$v1mem" ] && [ -d "$v1mem/$t" ] && rm_cgroup_tree "$v1mem/$t"
	[ "$sent" = ok ]
}

# stats LABEL: numbers on stdin ("-" skipped): median, 90th percentile
# (nearest rank), worst, count.
stats() {
	grep -v '^-$' | sort -n | awk -v l="$1" '
	function rank(q,  i) { i = int(NR * q); if (i < NR * q) i++; return v[i < 1 ? 1 : i] }
	{ v[NR] = $1 }
	END {
		if (!NR) { printf "| %s | | | | | 0 |\n", l; exit }
		printf "| %s | %d | %d | %d | %d | %d |\n", l, rank(0.5), rank(0.9), v[1], v[NR], NR
	}'
}

mkdir -p "$v2/$box" "$v2/$outside" || bail_out "cannot make the sandbox below $v2"
start "$outside" sleep 3600
s_out=$started
disown "$s_out"	# no "Killed" message at the end

echo "# cgkilld vs oomd under memory pressure, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "- $(nproc) CPUs, $(free -g | awk '/^Mem/ { print $2 }') GiB, Linux $(uname -r); cgroup v2 at $v2$([ -n "$v2mem" ] && echo ' (memory controller)' || echo ", limit through v1 memory at $v1mem")"
echo "- workload: thrash $THRASH_ARGS (file in $work), limit $LIMIT, $TRIALS trials a row; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- cgkilld: $CGKILLD ($(git log -1 --format=%h 2>/dev/null)); oomd: $OOMD ($("$OOMD" --version 2>&1 | head -1)), -i $OOMD_INTERVAL"
[ -n "$NOTE" ] && echo "- $NOTE"
echo

rows=
case $ONLY in
'') rows="oomd cgkilld" ;;
oomd | cgkilld) rows=$ONLY ;;
*) bail_out "ONLY=oomd or cgkilld" ;;
esac
for row in $rows; do
	case $row in
	oomd)
		"$OOMD" --version >/dev/null 2>&1 || { echo "oomd: ${OOMD:-not found} does not run (Debian: the oomd package): row skipped"; continue; }
		oomd_conf 0 >"$work/check.json"
		"$OOMD" --check-config "$work/check.json" -f "$v2" >"$work/check.log" 2>&1 ||
			{ echo "oomd: its configuration does not compile:"; sed 's/^/    /' "$work/check.log"; continue; }
		;;
	cgkilld)
		[ -x "$CGKILLD" ] || { echo "cgkilld: $CGKILLD not built: row skipped"; continue; }
		mkdir -p "$v2/$box/t0/victim"
		cgkilld_conf 0 >"$work/check.conf"
		if ! "$CGKILLD" --check "$work/check.conf" >"$work/check.log" 2>&1; then
			echo "cgkilld: the memory-pressure rule is refused (not in this build?): row skipped"
			sed 's/^/    /' "$work/check.log"
			rmdir "$v2/$box/t0/victim" "$v2/$box/t0"
			continue
		fi
		rmdir "$v2/$box/t0/victim" "$v2/$box/t0"
		;;
	esac
	echo "## $row"
	echo
	echo '```'
	[ "$row" = oomd ] && oomd_conf N
	[ "$row" = cgkilld ] && cgkilld_conf N
	echo '```'
	echo
	echo "raw: stall->empty ready->empty stall->kill cond->kill avg10->kill kill->empty stall->kevent cond->kevent (ms) kevent->kill (us), victim status, sentinels, killed"
	echo
	: >"$work/rows.$row"
	for i in $(seq "$TRIALS"); do
		r=$(trial "$row" "$i")
		rc=$?
		echo "    t$i $r"
		echo "$r" >>"$work/rows.$row"
		[ "$rc" -eq 0 ] || { [ -n "$r" ] && case $r in *SENTINEL*) bail_out "a sentinel died: stopped";; esac; }
		alive "$s_out" || bail_out "the sentinel outside the sandbox died: stopped"
	done
	echo
	echo "| $row (ms) | median | p90 | best | worst | n |"
	echo "|---|--:|--:|--:|--:|--:|"
	awk '{ print $1 }' "$work/rows.$row" | stats "first stall → empty"
	awk '{ print $2 }' "$work/rows.$row" | stats "workload ready → empty"
	awk '{ print $3 }' "$work/rows.$row" | stats "first stall → kill"
	awk '{ print $4 }' "$work/rows.$row" | stats "trigger condition (full ≥ 20% of 2 s) → kill"
	awk '{ print $5 }' "$work/rows.$row" | stats "full avg10 ≥ 20 → kill"
	awk '{ print $6 }' "$work/rows.$row" | stats "kill → empty"
	awk '{ print $7 }' "$work/rows.$row" | stats "first stall → kernel trigger event"
	awk '{ print $8 }' "$work/rows.$row" | stats "trigger condition → kernel trigger event"
	awk '{ print $9 }' "$work/rows.$row" | stats "kernel trigger event → kill (µs)"
	echo
	echo "killed by $row: $(awk '$10 == 137' "$work/rows.$row" | wc -l) of $(wc -l <"$work/rows.$row") victims (SIGKILL); sentinels: $(grep -c ' ok ' "$work/rows.$row") of $(wc -l <"$work/rows.$row") trials all alive"
	echo
done
alive "$s_out" && echo "sentinel outside the sandbox: alive at the end"
