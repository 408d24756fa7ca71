#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld never waits on one action (issue 27): the actions are state
# machines of its loop, several at once, one per watched cgroup. In
# sandbox cgroups with small fork bombs (pids.max 8):
# - slow/x holds a process that ignores TERM, under Signal=TERM,
#   Escalate=30s KILL; while the daemon waits for that escalation, a bomb
#   in fast/x (default KILL) is emptied, before the escalation (the
#   TERM-proof process still lives);
# - an ExecPreKill= that hangs (ExecTimeout=1min) on hang/x does not hold
#   the kill of another bomb;
# - a Wait=10min kill on long/x does not hold another bomb's kill;
# - events on long/x while its action waits are not acted on again (the
#   log says why, at debug);
# - MaxActions=: past it, an action waits in a queue (logged) and begins
#   when one ends;
# - SIGTERM ends the actions in flight (the hook killed, the wait ended)
#   and says what it ended.
# On the old daemon, which waited for each action, the bombs lived until
# the slow action ended.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup loop
PMAX=8

kd_first pids slow/x $PMAX
for d in fast/x fast/y fast/z hang/x long/x; do
	mkcg $d $PMAX || bail_out "cannot create box/$d"
done
mkcg other || bail_out "cannot create box/other"
sentinel other || bail_out "no sentinel in other"
sent_other=$started

h=$kd_tmp
cat >"$h/hang" <<EOF
#!/bin/sh
echo \$\$ >"$h/hang.pid"
exec sleep 3600
EOF
chmod +x "$h/hang"

conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF
[Daemon]
PollInterval=20ms
EventLog=$kd_tmp/events.json

[Rule]
Name=slow
Match=$box/slow/*
Trigger=pids-max
PidsMaxEvents=5
Signal=TERM
Escalate=30s KILL
Wait=1min

[Rule]
Name=fast
Match=$box/fast/*
Trigger=pids-max
PidsMaxEvents=5

[Rule]
Name=hanging
Match=$box/hang/*
Trigger=pids-max
PidsMaxEvents=5
ExecPreKill=$h/hang
ExecTimeout=1min

[Rule]
Name=long
Match=$box/long/*
Trigger=pids-max
PidsMaxEvents=5
Signal=TERM
Wait=10min
EOF
"$CGKILLD" --check "$conf" >/dev/null 2>&1
ok $? "--check accepts the rules"
kd_start "$conf" || bail_out "cgkilld did not start"

# killed_within SECONDS REL: the fast rule's kill of the bomb in box/REL
# logged, and REL empty, within SECONDS (the bomb may be gone before the
# test looks: the log says it was there)
killed_within() {
	wait_log "$1" "^<4>rule fast: .*/$2: pids-max.*; kill with KILL: done" && empty "$2"
}

# ---- TERM, Escalate=30s KILL on slow/x: the daemon waits 30 s ----
run_in slow/x sh -c 'trap "" TERM; sleep 3600' || bail_out "no TERM-proof sleeper"
stubborn=$started
t_slow=${EPOCHREALTIME/./}
start_in slow/x "$FORKBOMB"
slow_bomb=$started
wait_for 60 "the slow bomb gone by TERM, the sleeper left" \
	eval '! alive $slow_bomb && [ "$(grep -c . "$v2/$box/slow/x/cgroup.procs")" -le 2 ] && alive $stubborn'
ok $? "slow/x: TERM took the bomb; the process that ignores TERM is left, the escalation 30 s away"
! log_has '^<[0-9]>rule slow: .*/slow/x: pids-max.*kill with TERM'
ok $? "slow/x: its kill is under way (not logged as done)"

# ---- meanwhile a bomb in fast/x: emptied before slow/x's escalation ----
# bound: the escalation, 30 s after slow/x's signal (less what passed)
left=$((30 - (${EPOCHREALTIME/./} - t_slow) / 1000000 - 2))
[ "$left" -gt 5 ] || bail_out "the machine is too slow for this test: ${left}s left of 30"
start_in fast/x "$FORKBOMB"
killed_within "$left" fast/x
ok $? "fast/x: a bomb beside slow/x's wait is killed and emptied (within ${left}s, before the escalation)"
alive "$stubborn"
ok $? "and slow/x's escalation has not come yet (its TERM-proof process lives)"

# ---- a hook that hangs on hang/x does not hold fast/y ----
start_in hang/x "$FORKBOMB"
hang_bomb=$started
wait_for 60 "hang/x's ExecPreKill= running" test -s "$h/hang.pid"
ok $? "hang/x: its ExecPreKill= hangs"
start_in fast/y "$FORKBOMB"
killed_within 25 fast/y
ok $? "fast/y: killed and emptied while hang/x's hook hangs (ExecTimeout=1min)"
alive "$(cat "$h/hang.pid")" && alive "$hang_bomb"
ok $? "hang/x's hook and bomb still there"

# ---- Wait=10min on long/x does not hold fast/z ----
run_in long/x sh -c 'trap "" TERM; sleep 3600' || bail_out "no TERM-proof sleeper"
long_sleeper=$started
start_in long/x "$FORKBOMB"
long_bomb=$started
wait_for 60 "long/x's bomb gone by TERM" eval '! alive $long_bomb'
ok $? "long/x: TERM took the bomb, the daemon waits (Wait=10min) for the rest"
start_in fast/z "$FORKBOMB"
killed_within 25 fast/z
ok $? "fast/z: killed and emptied while long/x's kill waits"

# ---- an event on long/x while its action is under way ----
start_in long/x "$FORKBOMB"
second=$started
wait_log 60 '^<7>rule long: .*/long/x: pids-max.*; an action on it is under way, ignored'
ok $? "a second bomb on long/x during its action: the event is ignored (debug)"
[ "$(grep -cE '^<[0-9]>rule long: .*/long/x: pids-max.*; kill with' "$kd_log")" -eq 0 ] && alive "$second"
ok $? "and not acted on twice: no second kill began"

# ---- SIGTERM with actions in flight ----
alive "$stubborn" || diag "slow/x's escalation came early"
kill -TERM "$kd_daemon"
t0=${EPOCHREALTIME/./}
wait "$kd_daemon"
ok $? "the daemon exits 0 on SIGTERM"
t1=${EPOCHREALTIME/./}
kd_daemon=
[ $(((t1 - t0) / 1000000)) -lt 20 ]
ok $? "stopped in $(((t1 - t0) / 1000)) ms with three actions in flight"
log_has '^<5>stopping: rule hanging: .*/hang/x: the action under way ends \(in its ExecPreKill= hook\)'
ok $? "the log says it ended hang/x's action in its hook"
log_has '^<5>stopping: rule long: .*/long/x: the action under way ends \(waiting for its kill\)'
ok $? "the log says it ended long/x's wait"
log_has '^<3>rule long: .*/long/x: pids-max.*kill with TERM: failed'
ok $? "long/x's kill is logged as cut short"
log_has '^<5>stopping: [0-9]+ action\(s\) under way ended, 0 queued not begun'
ok $? "and how many"
wait_for 10 "the hook killed" eval '! alive $(cat "$h/hang.pid")'
ok $? "the hanging hook was killed"
bad=$(grep -vE '^<[0-7]>' "$kd_log")
[ -z "$bad" ]
ok $? "every log line starts with a syslog priority <N>" || diag "$bad"
for d in slow/x hang/x long/x; do "$CGKILL" -q "$v2/$box/$d" >/dev/null 2>&1; done

# ---- MaxActions=1: the second action waits in the queue ----
rm -f "$h/hang.pid"
sed -i 's/^PollInterval=20ms$/PollInterval=20ms\nMaxActions=1/; s/^ExecTimeout=1min$/ExecTimeout=3s/' "$conf"
wait_for 30 "the sandbox emptied" eval 'empty hang/x && empty fast/x'
kd_start "$conf" || bail_out "cgkilld did not start again"
start_in hang/x "$FORKBOMB"
wait_for 60 "hang/x's ExecPreKill= running" test -s "$h/hang.pid"
start_in fast/x "$FORKBOMB"
wait_log 30 '^<4>rule fast: .*/fast/x: pids-max.*; 1 action\(s\) under way \(MaxActions=1\): queued, 1 waiting'
ok $? "MaxActions=1: fast/x's action is queued behind hang/x's"
populated fast/x
ok $? "and waits (fast/x not emptied yet)"
killed_within 60 fast/x
ok $? "it begins when hang/x's action ends (its hook killed at ExecTimeout=3s)"
log_has '^<4>rule hanging: .*ExecPreKill= .*/hang: killed at its timeout; the kill goes on'
ok $? "the log has hang/x's hook killed at its timeout"
kd_stop

alive "$sent_other"
ok $? "the sentinel in box/other lives"
done_testing
