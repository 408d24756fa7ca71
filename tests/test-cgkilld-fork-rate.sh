#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's fork-rate trigger against the real kernel, with the rule's
# defaults (ForkRate=, ForkWindow=) on box/jobs/*:
#  - a fork bomb in box/jobs/bomb at pids.max 3000 is killed before
#    pids.max is reached (pids.events "max" stays 0);
#  - a bomb that makes a sub-cgroup of its own and forks there is caught
#    for the watched cgroup, which is killed whole;
#  - a bomb in the unwatched sibling box/other does not fire the rule;
#  - fork-heavy work at the same limit is not killed: a shell loop of
#    2,000 /bin/true, xargs -P 32 over 1,000 jobs, make -j16 of a small
#    generated project;
#  - an empty cgroup is counted from its watch, before its first
#    process (a bomb's first forks count), and still once emptied;
#  - idle, the armed trigger costs no wakeup;
#  - with bpf(2) denied (no CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN), the log
#    says so once and a bomb is still killed, by pids-max.
# Sentinels in a watched sibling (box/jobs/calm), an unwatched one
# (box/other/quiet) and the parent must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup forkrate
PMAX=3000

kd_first pids jobs/bomb $PMAX
for d in jobs/calm jobs/deep jobs/loop jobs/xargs jobs/make other/bomb; do
	mkcg $d $PMAX || bail_out "cannot create $box/$d"
done
mkcg other/quiet || bail_out "cannot create $box/other/quiet"
mkcg jobs/idle || bail_out "cannot create $box/jobs/idle"	# no pids.max: fork-rate alone
# pids.events of a cgroup, in the hierarchy its limit is in
pev() {
	if v2_has pids; then cat "$v2/$box/$1/pids.events"; else cat "$v1pids/$box/$1/pids.events"; fi
}

# Does the state dump say box/$1 is counted in the kernel?
counted() {
	dump | grep -A3 "$1 (rule bombs)" | grep -q "fork-rate: counted in the kernel"
}

conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
cat >"$conf" <<EOF
[Daemon]
EventLog=$events

[Rule]
Name=bombs
Match=$box/jobs/*
Trigger=fork-rate
Action=kill
Wait=20s
EOF
"$CGKILLD" --check "$conf" >"$kd_tmp/check" 2>&1
grep -q 'fork counter cannot be loaded' "$kd_tmp/check" &&
	skip_all "no fork counter here: $(grep 'fork counter' "$kd_tmp/check")"
grep -q 'fork-rate: the kernel.s fork counter loads here' "$kd_tmp/check"
ok $? "cgkilld --check accepts the rule and says the fork counter loads" || diag "$(cat "$kd_tmp/check")"

kd_sentinels pids jobs/calm other/quiet
kd_start "$conf" || bail_out "cgkilld did not start"
wait_for 20 "box/jobs/calm counted" counted jobs/calm
ok $? "the state dump says box/jobs/calm is counted in the kernel"
"$CGKILLCTL" --runtime-dir "$kd_run" status --json | /usr/bin/python3 -c 'import json, sys
from jsonschema import Draft202012Validator as V
doc = json.load(sys.stdin)
errors = list(V(json.load(open(sys.argv[1], encoding="utf-8"))).iter_errors(doc))
assert not errors, [e.message[:200] for e in errors[:3]]
trig = [t for cg in doc["cgroups"] if cg["cgroup"].endswith("/jobs/calm") for t in cg["triggers"]]
assert {"trigger": "fork-rate", "counted": True, "acts_at": 500, "window_ms": 250, "why": None} in trig, trig
' data/cgkilld-status.schema.json
ok $? "cgkillctl status --json: box/jobs/calm's fork-rate counted, valid against the schema"
mkcg jobs/early $PMAX || bail_out "cannot create $box/jobs/early"
wait_for 20 "box/jobs/early counted" counted jobs/early
ok $? "the empty box/jobs/early is counted in the kernel before its first process"

# the event of cgroup $1 (below box), if any
event_of() {
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["cgroup"] == sys.argv[2]:
        print(e["trigger"]["type"], e["trigger"].get("count", "-"), e["error"])' "$events" "$v2/$box/$1" 2>/dev/null
}

# ---- a bomb, caught while it grows ----
start_in jobs/bomb "$FORKBOMB"
wait_for 60 "box/jobs/bomb emptied" eval '[ -n "$(event_of jobs/bomb)" ] && empty jobs/bomb'
ok $? "the bomb in box/jobs/bomb is killed"
read -r type count err <<<"$(event_of jobs/bomb)"
[ "$type" = fork-rate ] && [ "$err" = 0 ]
ok $? "by the fork-rate trigger (event: $type, count $count, error $err)"
max=$(pev jobs/bomb | awk '$1 == "max" { print $2 }')
[ "$max" = 0 ]
ok $? "before pids.max ($PMAX) refused a fork (pids.events max $max)"

# ---- a bomb that forks in a sub-cgroup of its own ----
j=$(_join jobs/deep)
sh -c "${j% && echo*} && mkdir '$v2/$box/jobs/deep/inner' && echo \$\$ >'$v2/$box/jobs/deep/inner/cgroup.procs' && exec '$FORKBOMB'" \
	</dev/null >/dev/null 2>&1 &
kd_pids+=($!)
disown $!
wait_for 60 "box/jobs/deep emptied" eval '[ -n "$(event_of jobs/deep)" ] && empty jobs/deep'
ok $? "a bomb in box/jobs/deep/inner, a cgroup it made, is caught for box/jobs/deep, emptied whole"
read -r type count err <<<"$(event_of jobs/deep)"
[ "$type" = fork-rate ] && [ "$(pev jobs/deep | awk '$1 == "max" { print $2 }')" = 0 ]
ok $? "by the fork-rate trigger, before pids.max (event: $type, count $count)"

# ---- a bomb in an unwatched sibling ----
start_in other/bomb "$FORKBOMB"
other_bomb=$started
wait_for 60 "the bomb in box/other/bomb at its pids.max" \
	eval '[ "$(pev other/bomb | awk '"'"'$1 == "max" { print $2 }'"'"')" -gt 0 ]'
ok $? "a bomb in the unwatched box/other/bomb reaches its pids.max"
# killed at once, then looked at: a bomb left spinning at its pids.max
# starves every command of this test for minutes on 2 CPUs
populated other/bomb
reached=$?
"$CGKILL" -q "$v2/$box/other/bomb" >/dev/null 2>&1
wait_for 30 "box/other/bomb emptied" empty other/bomb || bail_out "the bomb in box/other/bomb lives on"
[ "$reached" = 0 ] && [ -z "$(event_of other/bomb)" ] && [ "$(grep -c . "$events")" -eq 2 ]
ok $? "and is not acted on: its forks count for no watched cgroup"
: "$other_bomb"

# ---- fork-heavy work, not killed ----
mkdir -p "$kd_tmp/proj"
for i in $(seq 48); do printf 'int f%d(void) { return %d; }\n' "$i" "$i" >"$kd_tmp/proj/f$i.c"; done
printf 'int main(void) { return 0; }\n' >"$kd_tmp/proj/main.c"
printf 'OBJS := $(patsubst %%.c,%%.o,$(wildcard *.c))\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n' >"$kd_tmp/proj/Makefile"
cpu0=$(awk '{ print $14 + $15 }' "/proc/$kd_daemon/stat")
# each writes $w.done when it succeeded, its output to $w.log
declare -A wpid
start_in jobs/loop sh -c "i=0; while [ \$i -lt 2000 ]; do /bin/true; i=\$((i + 1)); done && touch '$kd_tmp/loop.done'"
wpid[loop]=$started
start_in jobs/xargs sh -c "seq 1000 | xargs -P 32 -n 1 /bin/true && touch '$kd_tmp/xargs.done'"
wpid[xargs]=$started
start_in jobs/make sh -c "make -s -j16 -C '$kd_tmp/proj' >'$kd_tmp/make.log' 2>&1 && touch '$kd_tmp/make.done'"
wpid[make]=$started
for w in loop xargs make; do
	# ended: succeeded, failed or killed
	wait_for 120 "the $w workload to end" eval "! kill -0 ${wpid[$w]} 2>/dev/null"
	[ -e "$kd_tmp/$w.done" ] && [ -z "$(event_of jobs/$w)" ]
	ok $? "the $w workload ran to its end, not acted on" ||
		diag "event: $(event_of jobs/$w); output: $(tail -n 5 "$kd_tmp/$w.log" 2>/dev/null)"
done
cpu1=$(awk '{ print $14 + $15 }' "/proc/$kd_daemon/stat")
diag "the daemon's CPU during the three workloads: $((cpu1 - cpu0)) ticks of $(getconf CLK_TCK)/s"

# ---- idle: no wakeup ----
run_in jobs/idle sleep 3600 || bail_out "no sleeper in box/jobs/idle"
wait_for 20 "box/jobs/idle counted" counted jobs/idle
ok $? "box/jobs/idle (no pids.max) is counted in the kernel"
sw() { awk '/^voluntary_ctxt_switches|^nonvoluntary_ctxt_switches/ { n += $2 } END { print n }' "/proc/$kd_daemon/status"; }
# box/jobs/calm, populated, is read for pids-max every PollInterval on v1
# (no notification there): emptied, and every other cgroup's files
# closed (5 s after it emptied), box/jobs/idle is the one armed
kill -KILL "$sent_calm"
wait_for 30 "box/jobs/idle armed alone" eval 'dump | grep -q "files: 1 cgroup(s) armed"'
counted jobs/calm
ok $? "box/jobs/calm, emptied and its files closed, is still counted in the kernel"
# and the daemon back in its wait after that dump (on a busy machine it
# may still be writing it)
wait_for 10 "the daemon at rest" eval 'a=$(sw); sleep 0.2; [ "$a" = "$(sw)" ]'
s0=$(sw)
sleep 2
s1=$(sw)
[ "$s1" = "$s0" ]
ok $? "idle with the fork-rate trigger armed: no wakeup in 2 s ($s0 -> $s1 context switches)"
alive "$sent_quiet"
ok $? "the sentinel in the unwatched box/other/quiet lives"
parent_daemon_live
kd_stop

# ---- bpf(2) denied: pids-max stands in ----
command -v setpriv >/dev/null || skip "setpriv not installed: the fallback not tested"
if command -v setpriv >/dev/null; then
	printf '#!/bin/sh\nexec setpriv --bounding-set -bpf,-perfmon,-sys_admin %s "$@"\n' "$CGKILLD" >"$kd_tmp/nobpf"
	chmod +x "$kd_tmp/nobpf"
	mkcg jobs/fallback 300 || bail_out "cannot create $box/jobs/fallback"
	sentinel jobs/calm
	sent_calm=$started
	: >"$events"
	CGKILLD=$kd_tmp/nobpf kd_start "$conf" || bail_out "cgkilld (bpf denied) did not start"
	start_in jobs/fallback "$FORKBOMB"
	wait_for 60 "box/jobs/fallback emptied" eval '[ -n "$(event_of jobs/fallback)" ] && empty jobs/fallback'
	read -r type count err <<<"$(event_of jobs/fallback)"
	[ "$type" = pids-max ] && [ "$err" = 0 ]
	ok $? "bpf denied: the bomb is killed all the same, by pids-max (event: $type)"
	n=$(grep -c 'fork counter cannot be loaded' "$kd_log")
	[ "$n" = 1 ]
	ok $? "and the log says once that the fork counter cannot be loaded ($n)" || diag "$(grep fork "$kd_log")"
	dump | grep -A3 "jobs/calm (rule bombs)" | grep -q "fork-rate: not counted.*pids-max alone"
	ok $? "the state dump says box/jobs/calm is watched by pids-max alone"
	alive "$sent_calm"
	ok $? "the sentinel in box/jobs/calm lives"
	parent_daemon_live
	kd_stop
fi
done_testing
