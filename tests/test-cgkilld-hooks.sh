#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's hooks and kill records, in sandbox cgroups with small fork
# bombs (pids.max 8):
# - ExecPreKill= that exits 100 vetoes the kill: the bomb lives, the log
#   and the event say so;
# - a hook that hangs is killed at ExecTimeout=, with what it started,
#   and the kill goes on; a hook that fails is logged and the kill goes on;
# - the hooks' environment names the cgroup, the rule and the trigger;
#   ExecPostKill= is told the outcome;
# - Reap=yes releases the victims' memory (Reap=auto does not for a pids
#   rule);
# - a kill is recorded on the cgroup: user.cgkill_kills, and systemd's
#   user.oomd_ooms and user.oomd_kill;
# - --check refuses a hook that is not an absolute path, an unterminated
#   quote and a zero timeout.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup hooks
PMAX=8

kd_first pids vetoed/x $PMAX
for d in hang/x fail/x told/x kernel/x swap/x; do
	mkcg $d $PMAX || bail_out "cannot create box/$d"
done
mkcg other || bail_out "cannot create box/other"
sentinel other || bail_out "no sentinel in other"
sent_other=$started

h=$kd_tmp
cat >"$h/veto" <<'EOF'
#!/bin/sh
exit 100
EOF
cat >"$h/hang" <<EOF
#!/bin/sh
sleep 3600 &
echo \$! >"$h/hang.child"
echo \$\$ >"$h/hang.pid"
wait
EOF
cat >"$h/fail" <<'EOF'
#!/bin/sh
exit 3
EOF
cat >"$h/tell" <<EOF
#!/bin/sh
env | grep '^CGKILLD_' | sort >"$h/\$1.env"
echo "nofile \$(ulimit -Sn) oom_score_adj \$(cat /proc/self/oom_score_adj) nice \$(nice)" >"$h/\$1.limits"
EOF
# ExecPreKill= that empties its cgroup and makes a new one of the same
# name, with a newcomer in it: the action must not reach the newcomer
cat >"$h/swap" <<EOF
#!/bin/sh
d=\$CGKILLD_CGROUP
"$CGKILL" -q "\$d" && rmdir "\$d" && mkdir "\$d" || exit 1
setsid sh -c 'echo \$\$ >"\$0/cgroup.procs" && echo \$\$ >"\$1" && exec sleep 3600' "\$d" "$h/newcomer" </dev/null >/dev/null 2>&1 &
while [ ! -s "$h/newcomer" ]; do sleep 0.02; done
EOF
chmod +x "$h/veto" "$h/hang" "$h/fail" "$h/tell" "$h/swap"

conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF
[Daemon]
PollInterval=20ms
EventLog=$kd_tmp/events.json

[Rule]
Name=vetoed
Match=$box/vetoed/*
Trigger=pids-max
PidsMaxEvents=5
PostActionDelay=1h
ExecPreKill=$h/veto

[Rule]
Name=hanging
Match=$box/hang/*
Trigger=pids-max
PidsMaxEvents=5
ExecPreKill=$h/hang
ExecTimeout=1s

[Rule]
Name=failing
Match=$box/fail/*
Trigger=pids-max
PidsMaxEvents=5
ExecPreKill=$h/fail

[Rule]
Name=told
Match=$box/told/*
Trigger=pids-max
PidsMaxEvents=5
ExecPreKill=$h/tell "pre"
ExecPostKill=$h/tell post
# counted (the kernel's cgroup.kill is not)
Backend=freeze
Reap=yes

[Rule]
Name=swapped
Match=$box/swap/*
Trigger=pids-max
PidsMaxEvents=5
ExecPreKill=$h/swap

[Rule]
Name=uncounted
Match=$box/kernel/*
Trigger=pids-max
PidsMaxEvents=5
Backend=kernel
EOF
"$CGKILLD" --check "$conf" >/dev/null 2>&1
ok $? "--check accepts the rules with hooks"

# the daemon raises its open file limit to the hard one: hooks get this back
ulimit -Sn 1024
kd_start "$conf" || bail_out "cgkilld did not start"

# ---- veto ----
start_in vetoed/x "$FORKBOMB"
bomb=$started
wait_log 30 "^<4>rule vetoed: .*/vetoed/x: pids-max.*; ExecPreKill= $h/veto vetoed the kill"
ok $? "ExecPreKill= exit 100: the log has the veto"
sleep 0.5
populated vetoed/x && alive "$bomb"
ok $? "and the bomb was not killed"
"$CGKILL" -q "$v2/$box/vetoed/x" >/dev/null 2>&1
wait_for 30 "box/vetoed/x empty" empty vetoed/x
ok $? "(killed by the test)"

# ---- a hook that hangs ----
t0=${EPOCHREALTIME/./}
start_in hang/x "$FORKBOMB"
wait_log 30 "^<4>rule hanging: .*/hang/x: ExecPreKill= $h/hang: killed at its timeout; the kill goes on"
ok $? "a hook that hangs is killed at ExecTimeout=1s, the log says so"
wait_log 30 '^<4>rule hanging: .*/hang/x: pids-max.*; kill with KILL: done'
ok $? "and the kill goes on"
wait_for 30 "box/hang/x empty" empty hang/x
ok $? "the cgroup is emptied"
t1=${EPOCHREALTIME/./}
[ $(((t1 - t0) / 1000)) -lt 10000 ]
ok $? "within the timeout and the kill: $(((t1 - t0) / 1000)) ms"
child=$(cat "$h/hang.child" 2>/dev/null)
[ -n "$child" ] && wait_for 10 "the hook's child gone" eval '! alive '"$child"
ok $? "what the hook started was killed with it"

# ---- a hook that fails ----
start_in fail/x "$FORKBOMB"
wait_log 30 "^<4>rule failing: .*/fail/x: ExecPreKill= $h/fail: exit status 3; the kill goes on"
ok $? "a hook that fails (exit 3) is logged"
wait_for 30 "box/fail/x empty" empty fail/x
ok $? "and the kill goes on"

# ---- a cgroup made again under the same name while the hook runs ----
start_in swap/x "$FORKBOMB"
wait_for 30 "the newcomer" test -s "$h/newcomer"
ok $? "ExecPreKill= made box/swap/x again, with a newcomer in it"
newcomer=$(cat "$h/newcomer" 2>/dev/null)
wait_log 30 '^<[34]>rule swapped: .*/swap/x: pids-max'
sleep 0.5
[ -n "$newcomer" ] && alive "$newcomer" && grep -qx "$newcomer" "$v2/$box/swap/x/cgroup.procs"
ok $? "the action went to the cgroup the rule saw, not to the new one of the same name: the newcomer lives" ||
	diag "$(grep swapped "$kd_log")"
[ -z "$(xattr_of "$v2/$box/swap/x" user.cgkill_kills)" ]
ok $? "and no kill is recorded on the new cgroup"

# ---- the hooks' environment, the post hook, the records ----
start_in told/x "$FORKBOMB"
wait_for 30 "the post hook's file" test -s "$h/post.env"
ok $? "ExecPostKill= ran"
pre=$(cat "$h/pre.env" 2>/dev/null)
post=$(cat "$h/post.env" 2>/dev/null)
grep -qx "CGKILLD_CGROUP=$v2/$box/told/x" <<<"$pre" &&
	grep -qx "CGKILLD_RULE=told" <<<"$pre" &&
	grep -qx "CGKILLD_TRIGGER=pids-max" <<<"$pre" &&
	grep -q '^CGKILLD_TRIGGER_JSON={"type": "pids-max"' <<<"$pre" &&
	grep -qx "CGKILLD_DRY_RUN=0" <<<"$pre" &&
	! grep -q '^CGKILLD_ERROR=' <<<"$pre"
ok $? "ExecPreKill= is told the cgroup, the rule and the trigger (quoted argument passed)" || diag "$pre"
grep -qx "CGKILLD_ERROR=0" <<<"$post" && grep -qE '^CGKILLD_SIGNALLED=[1-9]' <<<"$post" &&
	grep -qx "CGKILLD_BACKEND=freeze" <<<"$post"
ok $? "ExecPostKill= is told the outcome" || diag "$post"
lim=$(cat "$h/pre.limits" 2>/dev/null)
[ "$lim" = "nofile 1024 oom_score_adj 0 nice 0" ]
ok $? "a hook runs without the daemon's protections: $lim"
grep -qE '^CGKILLD_REAPED=[1-9]' <<<"$post"
ok $? "Reap=yes: the victims' memory was released (CGKILLD_REAPED)" || diag "$post"
wait_for 30 "box/told/x empty" empty told/x
ok $? "the cgroup is emptied"
kills=$(xattr_of "$v2/$box/told/x" user.cgkill_kills)
cause=$(xattr_of "$v2/$box/told/x" user.cgkill_cause)
ooms=$(xattr_of "$v2/$box/told/x" user.oomd_ooms)$(xattr_of "$v2/$box/told/x" user.oomd_kill)
[ "$kills" = 1 ] && [ "$cause" = pids-max ] && [ -z "$ooms" ]
ok $? "the kill is recorded: user.cgkill_kills=$kills user.cgkill_cause=$cause; a fork bomb's is no OOM kill in systemd's user.oomd_* ($ooms)"
[ -z "$(xattr_of "$v2/$box/vetoed/x" user.cgkill_kills)" ]
ok $? "a vetoed kill is not recorded"
start_in kernel/x "$FORKBOMB"
wait_for 30 "box/kernel/x killed and recorded" eval '[ "$(xattr_of "$v2/$box/kernel/x" user.cgkill_kills)" = 1 ]'
ok $? "a kill by the kernel's cgroup.kill is recorded"
[ "$(xattr_of "$v2/$box/kernel/x" user.cgkill_cause)" = pids-max ] && [ -z "$(xattr_of "$v2/$box/kernel/x" user.oomd_ooms)" ]
ok $? "with its cause, and not as an OOM kill"

cat >"$kd_tmp/events.py" <<'PY'
import json, sys
ev = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    ev.setdefault(e["rule"], []).append(e)
v = ev["vetoed"][0]
assert v["error"] == -125 and v["hooks"]["pre"] == 100 and v["report"] is None, v
assert ev["hanging"][0]["hooks"]["pre"] == -110 and ev["hanging"][0]["error"] == 0, ev["hanging"]
assert ev["failing"][0]["hooks"]["pre"] == 3 and ev["failing"][0]["error"] == 0
t = ev["told"][0]
assert t["hooks"] == {"pre": 0, "post": 0} and t["error"] == 0, t
assert t["reap"] == {"requested": True, "done": True} and t["report"]["targets"][0]["reap"]["released"] >= 1, t
u = ev["uncounted"][0]
assert u["reap"] == {"requested": False, "done": False}, u
PY
check "the events carry the hooks' statuses" python3 "$kd_tmp/events.py" "$kd_tmp/events.json"

kd_stop
alive "$sent_other"
ok $? "the sentinel in box/other lives"

# ---- --check ----
bad() {
	printf '[Rule]\nName=x\nMatch=%s/x\nTrigger=pids-max\n%s\n' "$box" "$1" >"$kd_tmp/bad.conf"
	out=$("$CGKILLD" --check "$kd_tmp/bad.conf" 2>&1)
	[ $? -ne 0 ] && grep -q -- "$2" <<<"$out"
	ok $? "--check refuses $1" || diag "$out"
}
bad "ExecPreKill=veto" "the command must be an absolute path"
bad "ExecPostKill=/bin/true 'open" "an unterminated quote"
bad "ExecTimeout=0" "ExecTimeout=0: must be more than 0"
done_testing
