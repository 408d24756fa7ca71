#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's OOM group kill: in a memory-limited sandbox cgroup (64 MiB, no
# swap; the v1 memory hierarchy on hybrid layouts, memory.max on pure v2)
# a process that eats memory is taken by the kernel's OOM killer, and the
# rule (Trigger=oom-kill) kills the rest of the group: three sleepers that
# use nothing. Sentinels in a sibling (box/other, memory-limited too) and
# in the parent (box, where the layout allows it) must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
kd_setup oom
LIMIT=$((64 << 20))

kd_first memory jobs/hog "" $LIMIT
mkcg other "" $LIMIT || bail_out "cannot create $box/other"
if v2_has memory; then hier=2; else hier=1; fi

kd_sentinels memory other

events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF
[Daemon]
EventLog=$events

[Rule]
Name=oom-group
Match=$box/jobs/*
Trigger=oom-kill
Action=kill
Wait=20s
EOF
kd_start "$conf" || bail_out "cgkilld did not start"
wait_for 20 "box/jobs/hog watched" eval 'dump | grep -q "jobs/hog (rule oom-group) memory:v$hier"'
ok $? "the daemon watches box/jobs/hog for OOM kills (v$hier)"

victims=()
for i in 1 2 3; do
	run_in jobs/hog sleep 3600 || bail_out "no sleeper in box/jobs/hog"
	victims+=("$started")
done
# reads forever without a newline: its buffer grows to the limit
start_in jobs/hog tail /dev/zero
hog=$started
wait_log 60 '^<4>rule oom-group: .*/jobs/hog: oom-kill'
ok $? "the log has the OOM kill and the group kill"
wait_for 30 "box/jobs/hog empty" empty jobs/hog
ok $? "box/jobs/hog is empty: the rest of the group died"
dead=0
for v in "${victims[@]}"; do
	alive "$v" || dead=$((dead + 1))
done
[ $dead -eq 3 ]
ok $? "the three sleepers the OOM killer did not take are dead ($dead)"
! alive "$hog"
ok $? "the memory eater is dead"
alive "$sent_other"
ok $? "the sentinel in the sibling box/other lives"
if [ -n "$sent_parent" ]; then
	alive "$sent_parent"
	ok $? "the sentinel in the parent box lives"
fi
wait_for 20 "the JSON event" test -s "$events"
python3 - "$events" "$v2/$box/jobs/hog" $hier <<'EOF'
import json, sys
e = json.loads(open(sys.argv[1]).readline())
assert e["rule"] == "oom-group" and e["cgroup"] == sys.argv[2], e
t = e["trigger"]
assert t["type"] == "oom-kill" and t["hierarchy"] == "v%s" % sys.argv[3], e
assert 1 <= t["oom_kill_rise"] <= t["oom_kill_total"] and "oom_kill" not in t and "rise" not in t, e
assert e["error"] == 0 and e["report"]["targets"][0]["emptied"] is True, e
EOF
ok $? "the JSON event names the rule, the OOM counter's total and rise, and the emptied cgroup"
# a kill for memory is an OOM kill in systemd's terms too (the unit's
# result oom-kill), with its cause in cgkilld's own attributes
cause=$(xattr_of "$v2/$box/jobs/hog" user.cgkill_cause)
ooms=$(xattr_of "$v2/$box/jobs/hog" user.oomd_ooms)
[ "$(xattr_of "$v2/$box/jobs/hog" user.cgkill_kills)" = 1 ] && [ "$cause" = oom-kill ] && [ "$ooms" = 1 ]
ok $? "the kill is recorded as oom-kill (user.cgkill_cause=$cause) and in systemd's user.oomd_ooms ($ooms)"
alive "$kd_daemon"
ok $? "the daemon lives"
kd_stop
done_testing
