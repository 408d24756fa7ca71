#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's pressure triggers against the real kernel (PSI triggers, the v1
# memory.pressure_level, swap), in sandbox cgroups, one workload at a time:
#  - box/jobs/thrash (64 MiB: the v1 memory hierarchy on hybrid layouts,
#    memory.max on pure v2) runs the thrash workload (bench/thrash.c: a
#    96 MiB file re-read through shared mappings), which stalls on memory:
#    the rule (memory-pressure, some 10% of 2s windows for 4s) kills the
#    cgroup; box/jobs/quiet (a sleeper, same rule) is left alone;
#  - PressureOf=system arms on /proc/pressure/memory (Action=log);
#  - box/cpu/busy: three busy loops on one CPU: cpu-pressure kills it;
#  - box/cpunr/busy: the same under a rule with PressureNeedsReclaim=yes:
#    no reclaim, so it says so once and does not act;
#  - box/mc/x under a rule with memory-pressure and cpu-pressure (log
#    only): busy loops alone make it act as cpu-pressure; a thrash beside
#    them makes it act as memory-pressure on an episode of its own, which
#    neither the cpu events nor the cpu actions begin, continue or cut;
#  - box/lvl/x thrashes under memory-pressure-level (v1 counterpart, low
#    for 4s);
#  - box/nopsi/x has cgroup.pressure 0 (no memory.pressure): the daemon
#    turns it on and arms its PSI trigger (a matched cgroup does not opt
#    out; test-cgkilld-pressure-optout.sh has more), and its thrash is
#    killed;
#  - box/rearm/x: cgroup.pressure set to 0 drops the PSI trigger, which is
#    armed again at once (the file turned on again);
#  - the state dump (SIGUSR1) shows each armed pressure source;
#  - swap: with no swap, nothing is read and the log says so once;
#  - sentinels in the sibling box/other and the parent box (where the
#    layout allows a process there) live through all of it.
# And --check refuses windows the kernel refuses: under 500ms, over 10s,
# and not a multiple of 2s without CAP_SYS_RESOURCE.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

THRASH=${THRASH:-$build/tests/thrash}
need_cgkilld
[ -x "$THRASH" ] || bail_out "$THRASH not built (make tests)"
kd_setup pressure
LIMIT=$((64 << 20))

kd_first memory jobs/thrash "" $LIMIT
for rel in jobs/quiet other lvl/x nopsi/x cpunr/busy mc/x rearm/x; do
	mkcg "$rel" "" $LIMIT || bail_out "cannot create $box/$rel"
done
for rel in cpu/busy sys/x swap/a swap/b; do
	mkcg "$rel" || bail_out "cannot create $box/$rel"
done
[ -f "$v2/$box/jobs/thrash/memory.pressure" ] || skip_all "no memory.pressure in $v2 (PSI is off: psi=0 or CONFIG_PSI=n)"

# The thrash file: on a disk, never tmpfs, whose pages cannot be reclaimed
# without swap (the OOM killer would act instead of a stall).
thrash_dir=
for d in "$kd_tmp" /var/tmp "$PWD/$build"; do
	case $(stat -f -c %T "$d" 2>/dev/null) in
	tmpfs | ramfs | "") ;;
	*) thrash_dir=$d && break ;;
	esac
done
[ -n "$thrash_dir" ] || bail_out "no directory on a disk for the thrash file ($kd_tmp, /var/tmp, $build)"

# ---- --check: the kernel's windows ----
c=$kd_tmp/check.conf
rule_with() {
	printf '[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=memory-pressure\nPressureLimit=some 10%%\n%s\n' "$box" "$1" >"$c"
}
expect_error() {
	local out rc
	out=$("${@:3}" "$CGKILLD" --check "$c" 2>&1)
	rc=$?
	[ $rc -ne 0 ] && grep -qE -- "$2" <<<"$out"
	ok $? "--check refuses $1" || diag "exit $rc, output:" "$out"
}
rule_with "PressureWindow=400ms"
expect_error "PressureWindow=400ms (the parser: under the kernel's 500ms)" "^<3>$c:6: PressureWindow=400ms: the kernel takes windows from 500ms to 10s"
rule_with "PressureWindow=11s"
expect_error "PressureWindow=11s (the parser: over the kernel's 10s)" "^<3>$c:6: PressureWindow=11s: the kernel takes windows from 500ms to 10s"
rule_with $'PressureWindow=2s\nPressureDuration=1s'
expect_error "PressureDuration= shorter than PressureWindow=" "PressureDuration= is shorter than PressureWindow="
# CAP_SYS_RESOURCE is bit 24 of CapEff
caps=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
privileged=$(((0x$caps >> 24) & 1))
rule_with "PressureWindow=3s"
if [ "$privileged" = 0 ]; then
	expect_error "PressureWindow=3s without CAP_SYS_RESOURCE (the kernel's rule for unprivileged triggers)" \
		"^<3>$c:[0-9]+: rule x: PressureWindow=3s: without CAP_SYS_RESOURCE the kernel takes only PSI trigger windows that are multiples of 2s"
elif command -v setpriv >/dev/null; then
	check "--check accepts PressureWindow=3s with CAP_SYS_RESOURCE" "$CGKILLD" --check "$c"
	expect_error "PressureWindow=3s without CAP_SYS_RESOURCE (setpriv drops it)" \
		"PressureWindow=3s: without CAP_SYS_RESOURCE the kernel takes only PSI trigger windows that are multiples of 2s" \
		setpriv --inh-caps=-sys_resource --bounding-set=-sys_resource --
else
	skip "we have CAP_SYS_RESOURCE and no setpriv to drop it: the unprivileged window check is untested"
fi
rule_with $'PressureWindow=10s\nPressureDuration=10s'
check "--check accepts PressureWindow=10s" "$CGKILLD" --check "$c"

# ---- the daemon ----
kd_sentinels memory other

nopsi=0
if [ -f "$v2/$box/nopsi/x/cgroup.pressure" ]; then
	echo 0 >"$v2/$box/nopsi/x/cgroup.pressure" && [ ! -e "$v2/$box/nopsi/x/memory.pressure" ] && nopsi=1
fi

conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
cat >"$conf" <<EOF
[Daemon]
EventLog=$events

[Rule]
Name=mem
Match=$box/jobs/*
Trigger=memory-pressure
PressureLimit=some 10%
PressureWindow=2s
PressureDuration=4s
Wait=20s

[Rule]
Name=system
Match=$box/sys/x
Trigger=memory-pressure
PressureOf=system
PressureLimit=some 5%
PressureWindow=2s
PressureDuration=2s
Action=log

[Rule]
Name=cpu
Match=$box/cpu/*
Trigger=cpu-pressure
PressureLimit=some 20%
PressureWindow=2s
PressureDuration=2s
Wait=20s

[Rule]
Name=cpunr
Match=$box/cpunr/*
Trigger=cpu-pressure
PressureLimit=some 20%
PressureWindow=2s
PressureDuration=2s
PressureNeedsReclaim=yes
Wait=20s

[Rule]
Name=level
Match=$box/lvl/*
Trigger=memory-pressure-level
PressureLevel=low
PressureWindow=2s
PressureDuration=4s
Wait=20s

[Rule]
Name=nopsi
Match=$box/nopsi/*
Trigger=memory-pressure
PressureLimit=some 10%
PressureLevel=low
PressureWindow=2s
PressureDuration=2s
Wait=20s

[Rule]
Name=mc
Match=$box/mc/*
Trigger=memory-pressure cpu-pressure
PressureLimit=some 10%
PressureWindow=2s
PressureDuration=8s
Action=log
PostActionDelay=0
MaxActionsPerMinute=infinity

[Rule]
Name=rearm
Match=$box/rearm/*
Trigger=memory-pressure
PressureLimit=some 10%
PressureLevel=low
PressureWindow=2s
PressureDuration=2s
Action=log

[Rule]
Name=swap
Match=$box/swap/a
Trigger=swap
SwapUsedAbove=50%
PressureDuration=2s
Action=log

[Rule]
Name=swap-b
Match=$box/swap/b
Trigger=swap
SwapUsedAbove=50%
PressureDuration=2s
Action=log
EOF
# A watched cgroup's triggers are armed while it is populated (an empty
# one holds no file: cgkilld.conf(5), MaxWatchesPerOwner=): a sleeper in
# each cgroup whose arming is checked below, in its v2 cgroup only.
hold() {
	sh -c "echo \$\$ >'$v2/$box/$1/cgroup.procs' && exec sleep 3600" </dev/null >/dev/null 2>&1 &
	started=$!
	disown "$started"
	kd_pids+=("$started")
	holders+=("$started")
	wait_for 20 "a sleeper in box/$1" grep -qx "$started" "$v2/$box/$1/cgroup.procs"
}
holders=()
for rel in jobs/thrash jobs/quiet sys/x cpu/busy mc/x swap/a swap/b nopsi/x lvl/x rearm/x; do
	hold "$rel" || bail_out "no sleeper in box/$rel"
done
rearm_holder=$started
kd_start "$conf" || bail_out "cgkilld did not start"
for rel in jobs/thrash jobs/quiet; do
	log_has "^<7>rule mem: $v2/$box/$rel: memory-pressure: PSI trigger \"some 200000 2000000\" on $v2/$box/$rel/memory.pressure\$"
	ok $? "the rule arms a PSI trigger \"some 200000 2000000\" on box/$rel/memory.pressure"
done
log_has "^<7>rule system: $v2/$box/sys/x: memory-pressure: PSI trigger \"some 100000 2000000\" on /proc/pressure/memory\$"
ok $? "PressureOf=system arms its trigger on /proc/pressure/memory"
log_has "^<7>rule cpu: $v2/$box/cpu/busy: cpu-pressure: PSI trigger \"some 400000 2000000\" on $v2/$box/cpu/busy/cpu.pressure\$"
ok $? "cpu-pressure arms on box/cpu/busy/cpu.pressure"

# the state dump: one line for each armed pressure source
st=$(dump)
grep -qF "pressure $v2/$box/mc/x (rule mc): memory-pressure: PSI trigger \"some 200000 2000000\" on $v2/$box/mc/x/memory.pressure; no episode" <<<"$st" &&
	grep -qF "pressure $v2/$box/mc/x (rule mc): cpu-pressure: PSI trigger \"some 200000 2000000\" on $v2/$box/mc/x/cpu.pressure; no episode" <<<"$st" &&
	! grep -qF "pressure $v2/$box/mc/x (rule mc): io-pressure" <<<"$st" &&
	grep -qF "pressure $v2/$box/swap/a (rule swap): swap: used at or above 50% of SwapTotal" <<<"$st"
ok $? "the state dump (SIGUSR1) shows the armed pressure sources of each cgroup, and their episodes" ||
	diag "$(grep -F "pressure $v2/$box/" <<<"$st")"
if [ "$nopsi" = 1 ]; then
	grep -qF "pressure $v2/$box/nopsi/x (rule nopsi): memory-pressure: PSI trigger \"some 200000 2000000\" on $v2/$box/nopsi/x/memory.pressure; no episode" <<<"$st"
	ok $? "the state dump shows the PSI trigger of box/nopsi/x, whose cgroup.pressure was 0" ||
		diag "$(grep -F "pressure $v2/$box/nopsi/" <<<"$st")"
fi

# The thrash workload in box/REL, once it thrashes (its "ready" line in
# $kd_tmp/thrash.REL) or is dead already; $thrash_t0: when it started (us
# since the epoch), the start of its stall: writing its file at the limit
# reclaims already.
thrash_in() {
	local out=$kd_tmp/thrash.${1//\//-}
	thrash_t0=${EPOCHREALTIME/./}
	start_in "$1" sh -c "exec '$THRASH' -d '$thrash_dir' -s 96M -t 120 >'$out'"
	wait_for 30 "the thrash in box/$1 ready" eval "grep -qs '^thrash: ready' '$out' || ! alive $started"
}

# the event of rule $1 on box/$2 (the first), as one JSON line
event_of() {
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["rule"] == sys.argv[2] and e["cgroup"] == sys.argv[3]:
        print(l.strip()); break' "$events" "$1" "$v2/$box/$2" 2>/dev/null
}

# latency NAME STARTED_US: the first event of rule NAME on box/REL after
# STARTED_US (the workload's start), in ms
latency() {
	python3 -c '
import json, sys
from datetime import datetime
e = json.loads(sys.argv[1])
print(round(datetime.fromisoformat(e["detected_at"]).timestamp() * 1000 - int(sys.argv[2]) / 1000))' "$(event_of "$1" "$2")" "$3"
}

# ---- memory-pressure on the cgroup ----
victims=()
for i in 1 2; do
	run_in jobs/thrash sleep 3600 || bail_out "no sleeper in box/jobs/thrash"
	victims+=("$started")
done
run_in jobs/quiet sleep 3600 || bail_out "no sleeper in box/jobs/quiet"
quiet=$started
run_in sys/x sleep 3600 || bail_out "no sleeper in box/sys/x"
sysx=$started

thrash_in jobs/thrash || bail_out "the thrash workload did not start"
thrasher=$started
wait_log 60 "^<4>rule mem: $v2/$box/jobs/thrash: memory-pressure: some stall at or above 10% of each 2000ms window for [0-9]+ms"
ok $? "the memory-pressure rule acts on box/jobs/thrash" || diag "$(tail -n 20 "$kd_log")" "$(cat "$v2/$box/jobs/thrash/memory.pressure")"
wait_for 30 "box/jobs/thrash empty" empty jobs/thrash
ok $? "box/jobs/thrash is empty"
dead=0
for v in "${victims[@]}" "$thrasher"; do
	alive "$v" || dead=$((dead + 1))
done
[ $dead -eq 3 ]
ok $? "the thrash and the two sleepers beside it are dead ($dead of 3)"
# the stall was real: the cgroup's own memory.pressure counted it
total=$(awk '/^some/ { sub("total=", "", $5); print $5 }' "$v2/$box/jobs/thrash/memory.pressure")
[ "${total:-0}" -ge 200000 ]
ok $? "the thrash stalled on memory: box/jobs/thrash/memory.pressure some total=${total}us (>= the 200ms threshold)"
# the episode's first event (not due yet) says the stall it attests, a
# window, against the rule's PressureDuration= as written
log_has "^<7>rule mem: $v2/$box/jobs/thrash/memory.pressure: some stall above 10% of a 2000ms window \(avg10 [0-9.]+%\): 2000ms of PressureDuration=4000ms \(1 event\(s\) over 0ms\)\$"
ok $? "the episode's first event: 2000ms of PressureDuration=4000ms" ||
	diag "$(grep -F "rule mem: $v2/$box/jobs/thrash/memory.pressure" "$kd_log" | head -3)"
ev=$(event_of mem jobs/thrash)
python3 - "$ev" <<'EOF'
import json, sys
t = json.loads(sys.argv[1])["trigger"]
assert t["type"] == "memory-pressure" and t["of"] == "cgroup" and t["kind"] == "some", t
assert t["threshold_us"] == 200000 and t["window_us"] == 2000000 and t["duration_ms"] == 4000, t
assert t["total_us"] >= 200000 and 0 <= t["avg10"] <= 100 and 0 <= t["avg60"] <= 100, t
# the first event counts for a window; up to 250ms of wakeup jitter
assert t["episode_ms"] >= 4000 - 250 and t["events"] >= 2, t
EOF
ok $? "the JSON event carries the PSI figures: kind, avg10, avg60, total, threshold, window, episode" || diag "$ev"
lat=$(latency mem jobs/thrash "$thrash_t0")
diag "memory-pressure (some 10%, window 2s, duration 4s): acted ${lat}ms after the thrash began"
[ "${lat:-0}" -ge 1750 ]
ok $? "not before the episode lasted the duration less a window (${lat}ms >= 1750ms after the stall began)"
alive "$quiet" && [ -z "$(event_of mem jobs/quiet)" ]
ok $? "box/jobs/quiet, quiet under the same rule, is left alone"
wait_log 20 "^<4>rule system: $v2/$box/sys/x: memory-pressure \(the machine's\): some stall at or above 5%"
ok $? "the PressureOf=system rule fires on the machine's memory pressure (Action=log)"
alive "$sysx"
ok $? "and the log action leaves box/sys/x alone"

# ---- cpu-pressure ----
busy_in() {
	local i
	for i in 1 2 3; do
		if command -v taskset >/dev/null; then
			start_in "$1" taskset -c 0 sh -c 'while :; do :; done'
		else
			start_in "$1" sh -c 'while :; do :; done'
		fi
		busy+=("$started")
	done
}
busy=()
t0=${EPOCHREALTIME/./}
busy_in cpu/busy
wait_log 30 "^<4>rule cpu: $v2/$box/cpu/busy: cpu-pressure: some stall at or above 20%"
ok $? "three busy loops on one CPU: the cpu-pressure rule acts on box/cpu/busy"
wait_for 30 "box/cpu/busy empty" empty cpu/busy
ok $? "box/cpu/busy is empty"
lat=$(latency cpu cpu/busy "$t0")
diag "cpu-pressure (some 20%, window 2s, duration 2s): acted ${lat}ms after the loops began"

# ---- PressureNeedsReclaim=yes without reclaim ----
busy=()
pg0=$(awk '/^pgscan_(kswapd|direct|khugepaged) / { s += $2 } END { print s + 0 }' /proc/vmstat)
busy_in cpunr/busy
wait_log 30 "^<5>rule cpunr: $v2/$box/cpunr/busy/cpu.pressure: some stall above 20% of each 2000ms window for [0-9]+ms .*but no reclaim: .* did not rise since the episode began; not acted on"
ok $? "PressureNeedsReclaim=yes: a cpu stall without reclaim is reported and not acted on" || diag "$(tail -n 20 "$kd_log")"
if [ -n "$v1mem" ] && ! v2_has memory; then
	log_has "reclaim read from $v1mem/$box/cpunr/busy/memory.failcnt \(limit reclaim\) and the machine's pgscan"
	ok $? "the reclaim is read from the v1 counterpart's memory.failcnt and the machine's pgscan (the log says which)"
fi
sleep 4.5	# two more windows
pg1=$(awk '/^pgscan_(kswapd|direct|khugepaged) / { s += $2 } END { print s + 0 }' /proc/vmstat)
n=0
for b in "${busy[@]}"; do
	alive "$b" && n=$((n + 1))
done
[ $n -eq 3 ] && ! log_has "^<4>rule cpunr: "
ok $? "box/cpunr/busy lives ($n of 3 loops) after two more windows of stall" ||
	diag "the machine's pgscan went from $pg0 to $pg1"
[ "$(grep -c '^<5>rule cpunr: .*but no reclaim' "$kd_log")" -eq 1 ]
ok $? "said once in the episode"
# through the cgroup, never by a pid that may be another's by now
echo 1 >"$v2/$box/cpunr/busy/cgroup.kill" 2>/dev/null || for b in "${busy[@]}"; do
	alive "$b" && kill -KILL "$b"
done
wait_for 20 "box/cpunr/busy empty" empty cpunr/busy

# ---- one episode per trigger: memory-pressure and cpu-pressure in one rule ----
# Only cpu stalls: the rule acts as cpu-pressure, on cpu's own events.
busy=()
t0=${EPOCHREALTIME/./}
busy_in mc/x
wait_log 40 "^<4>rule mc: $v2/$box/mc/x: cpu-pressure: some stall at or above 10% of each 2000ms window"
ok $? "Trigger=memory-pressure cpu-pressure, cpu stalls alone: the rule acts as cpu-pressure" ||
	diag "$(grep 'rule mc:' "$kd_log" | tail -n 10)"
ev=$(event_of mc mc/x)
python3 - "$ev" <<'EOF'
import json, sys
t = json.loads(sys.argv[1])["trigger"]
assert t["type"] == "cpu-pressure" and t["duration_ms"] == 8000 and t["episode_ms"] >= 8000 - 250, t
EOF
ok $? "its event names cpu-pressure, with an episode of the duration" || diag "$ev"
lat=$(latency mc mc/x "$t0")
[ "${lat:-0}" -ge 5750 ]
ok $? "not before the cpu episode lasted the duration less a window (${lat}ms >= 5750ms after the loops began)"
# Then memory stalls too, while cpu episodes go on: memory-pressure acts
# on an episode of its own events, neither begun nor continued by the cpu
# events, nor ended by the cpu actions (the rule only logs: they go on).
sleep 5
thrash_in mc/x || bail_out "the thrash workload did not start in box/mc/x"
thrasher=$started
wait_log 40 "^<4>rule mc: $v2/$box/mc/x: memory-pressure: some stall at or above 10% of each 2000ms window"
ok $? "a thrash beside the loops: the same rule acts as memory-pressure" ||
	diag "$(grep 'rule mc:' "$kd_log" | tail -n 20)" "$(cat "$v2/$box/mc/x/memory.pressure")"
python3 - "$events" "$v2/$box/mc/x" "$thrash_t0" <<'EOF'
import json, sys
from datetime import datetime
mem = []
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["rule"] != "mc" or e["cgroup"] != sys.argv[2]:
        continue
    t = e["trigger"]
    # a trigger fires at most once a window: an episode of its own events
    # has at most one a window (and 500ms for the daemon's wakeups)
    assert t["events"] <= (t["episode_ms"] + 500) // 2000, ("events of another trigger in the episode", t)
    if t["type"] == "memory-pressure":
        mem.append(e)
assert mem, "no memory-pressure event"
# the memory episode began with the memory stall, not with the cpu one
ms = datetime.fromisoformat(mem[0]["detected_at"]).timestamp() * 1000 - int(sys.argv[3]) / 1000
assert ms >= 6000 - 250, ("memory-pressure %dms after the thrash began" % ms, mem[0]["trigger"])
print("# memory-pressure %dms after the thrash began: %s" % (ms, json.dumps(mem[0]["trigger"])))
EOF
ok $? "each event counts its own trigger's events, and memory-pressure acted not before its own episode lasted the duration less a window" ||
	diag "$(grep -F '"rule": "mc"' "$events" | cut -c1-400)"
echo 1 >"$v2/$box/mc/x/cgroup.kill" 2>/dev/null || for b in "${busy[@]}" "$thrasher" "${holders[@]}"; do
	alive "$b" && kill -KILL "$b"
done
wait_for 20 "box/mc/x empty" empty mc/x

# ---- memory-pressure-level (v1) ----
if [ -z "$v1mem" ] || v2_has memory; then
	skip "no v1 memory hierarchy: memory-pressure-level is untested"
else
	log_has "^<7>rule level: $v2/$box/lvl/x: memory-pressure-level: low on $v1mem/$box/lvl/x/memory.pressure_level\$"
	ok $? "memory-pressure-level registers on the v1 counterpart's memory.pressure_level"
	run_in lvl/x sleep 3600 || bail_out "no sleeper in box/lvl/x"
	sleeper=$started
	thrash_in lvl/x || bail_out "the thrash workload did not start in box/lvl/x"
	wait_log 60 "^<4>rule level: $v2/$box/lvl/x: memory-pressure-level: the v1 memory pressure level reached low"
	ok $? "the memory-pressure-level rule acts on box/lvl/x under the thrash"
	wait_for 30 "box/lvl/x empty" empty lvl/x
	! alive "$sleeper"
	ok $? "box/lvl/x is empty, its sleeper dead"
	lat=$(latency level lvl/x "$thrash_t0")
	diag "memory-pressure-level (low, window 2s, duration 4s): acted ${lat}ms after the thrash began"
	[ "${lat:-0}" -ge 4000 ]
	ok $? "not before the notifications lasted the duration (${lat}ms >= 4000ms after the thrash began)"
	ev=$(event_of level lvl/x)
	python3 - "$ev" <<'EOF'
import json, sys
t = json.loads(sys.argv[1])["trigger"]
assert t["type"] == "memory-pressure-level" and t["level"] == "low" and t["for"] == "memory-pressure-level", t
# notifications at most a window apart for the duration
assert t["episode_ms"] >= 4000 and t["notifications"] >= t["events"] >= 2, t
EOF
	ok $? "its JSON event names the level and an episode of the duration" || diag "$ev"
fi

# ---- memory-pressure where cgroup.pressure was 0: turned on ----
if [ "$nopsi" = 0 ]; then
	skip "no cgroup.pressure (Linux 6.1+): turning the pressure files on is untested"
else
	log_has "^<5>rule nopsi: $v2/$box/nopsi/x: cgroup.pressure was 0 \(its pressure files off\): turned on"
	ok $? "memory-pressure on box/nopsi/x, whose cgroup.pressure was 0: turned on, and the log says so"
	thrash_in nopsi/x || bail_out "the thrash workload did not start in box/nopsi/x"
	wait_log 60 "^<4>rule nopsi: $v2/$box/nopsi/x: memory-pressure: some stall"
	ok $? "its PSI trigger acts on box/nopsi/x under the thrash"
	wait_for 30 "box/nopsi/x empty" empty nopsi/x
	ok $? "box/nopsi/x is empty"
fi

# ---- dropped triggers come back ----
# log_count REGEX N: the daemon's log has N lines matching REGEX
log_count() {
	[ "$(grep -cE -- "$1" "$kd_log")" -eq "$2" ]
}
if [ ! -f "$v2/$box/rearm/x/cgroup.pressure" ]; then
	skip "no cgroup.pressure (Linux 6.1+): dropping and re-arming PSI triggers is untested"
else
	log_has "^<7>rule rearm: $v2/$box/rearm/x: memory-pressure: PSI trigger"
	ok $? "box/rearm/x: memory-pressure armed on its PSI trigger"
	echo 0 >"$v2/$box/rearm/x/cgroup.pressure"
	wait_log 20 "^<6>rule rearm: $v2/$box/rearm/x/memory.pressure: its pressure files were turned off: memory-pressure armed again"
	ok $? "cgroup.pressure 0 drops the PSI trigger: the file is turned on and the trigger armed again at once"
	log_count "^<7>rule rearm: $v2/$box/rearm/x: memory-pressure: PSI trigger" 2 &&
		[ "$(cat "$v2/$box/rearm/x/cgroup.pressure")" = 1 ]
	ok $? "the PSI trigger is armed again, cgroup.pressure is 1" || diag "$(grep 'rule rearm:' "$kd_log")"
	st=$(dump)
	grep -qF "pressure $v2/$box/rearm/x (rule rearm): memory-pressure: PSI trigger \"some 200000 2000000\" on $v2/$box/rearm/x/memory.pressure;" <<<"$st" &&
		! grep -qF "pressure $v2/$box/rearm/x (rule rearm): memory-pressure-level" <<<"$st"
	ok $? "the state dump shows it, and no v1 level standing in any more" || diag "$(grep -F "$box/rearm/" <<<"$st")"
fi

# ---- swap ----
if [ "$(awk '/^SwapTotal:/ { print $2 }' /proc/meminfo)" = 0 ]; then
	[ "$(grep -c '^<5>swap: no swap (SwapTotal 0)' "$kd_log")" -eq 1 ] && ! log_has "read every second"
	ok $? "no swap: the swap trigger reads nothing, and the log says so once for its two cgroups"
else
	[ "$(grep -c '^<6>swap: .* kB (SwapTotal): /proc/meminfo read every second' "$kd_log")" -eq 1 ]
	ok $? "swap: /proc/meminfo read every second, said once for two cgroups"
fi

# shellcheck disable=SC2154 # set by kd_sentinels (printf -v)
alive "$sent_other"
ok $? "the sentinel in the sibling box/other lives"
if [ -n "$sent_parent" ]; then
	alive "$sent_parent"
	ok $? "the sentinel in the parent box lives"
fi
alive "$kd_daemon"
ok $? "the daemon lives"
kd_stop
done_testing
