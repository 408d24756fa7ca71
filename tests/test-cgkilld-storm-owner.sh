#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's storm limit is counted per owner (cgkilld.conf(5),
# MaxActionsPerMinute=): one user's storm does not spend the budget of
# others. A rule on box/jobs/* with Trigger=pids-max and the default limit
# (6 actions a minute); every bomb runs under a pids limit.
#  1. uid B's six small bombs, one after the other in box/jobs/b1..b6 (B's
#     cgroups), are killed; B's seventh, in box/jobs/b7, is not (B's budget
#     is spent), and the log says whose budget it was;
#  2. then uid A's bomb in box/jobs/a is killed at once (it was ignored for
#     a minute: the rule's one budget was spent);
#  3. and so is a bomb in box/jobs/r, root's (root's budget).
# Sentinels in box/jobs/calm (B's, watched), box/other and box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup storm-owner
UA=64611
UB=64612
PMAX=24

kd_first pids jobs/a 100
for rel in jobs/b1 jobs/b2 jobs/b3 jobs/b4 jobs/b5 jobs/b6 jobs/b7 jobs/r; do
	mkcg "$rel" $PMAX || bail_out "cannot create $box/$rel"
done
mkcg jobs/calm 10 && mkcg other || bail_out "cannot create $box/jobs/calm, $box/other"
kd_sentinels pids jobs/calm other
chown "$UA" "$v2/$box/jobs/a" &&
	chown "$UB" "$v2/$box/jobs/b"[1-7] "$v2/$box/jobs/calm" || bail_out "cannot give the cgroups to their users"

conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF
[Daemon]
PollInterval=20ms

[Rule]
Name=storm
Match=$box/jobs/*
Trigger=pids-max
PidsMaxEvents=5
PidsWindow=1s
Action=kill
Wait=20s
EOF
kd_start "$conf" || bail_out "cgkilld did not start"
wait_for 20 "the jobs watched" eval 'dump | grep -q "jobs/b7 (rule storm) pids:"' ||
	bail_out "box/jobs/b7 is not watched"

# bomb REL: a fork bomb in box/REL (under its pids limit)
bomb() {
	start_in "$1" "$FORKBOMB"
}
# killed REL: the rule's kill of box/REL is logged, and box/REL is empty
killed() {
	wait_log 30 "^<4>rule storm: $v2/$box/$1: pids-max.*; kill with KILL: done" &&
		wait_for 30 "box/$1 empty" empty "$1"
}

# 1. B's storm
for i in 1 2 3 4 5 6; do
	bomb "jobs/b$i"
	killed "jobs/b$i" || break
done
ok $? "uid B's six bombs in box/jobs/b1..b6 are killed, one after the other"
bomb jobs/b7
wait_log 30 "^<4>rule storm: $v2/$box/jobs/b7: pids-max.*not acted on: the storm limit of 6 action\\(s\\) a minute for the cgroups of uid $UB is reached"
ok $? "B's seventh bomb, in box/jobs/b7, is not acted on: B's budget is spent, and the log says so" ||
	diag "$(grep 'rule storm' "$kd_log" | tail -n 5)"

# 2. A's bomb: its own budget
t0=${EPOCHREALTIME/./}
bomb jobs/a
killed jobs/a
ok $? "then uid A's bomb in box/jobs/a is killed" || diag "$(grep 'rule storm' "$kd_log" | tail -n 5)"
diag "A's bomb emptied $(((${EPOCHREALTIME/./} - t0) / 1000))ms after it started"
! log_has "rule storm: $v2/$box/jobs/a: .*not acted on"
ok $? "and never held by the storm limit"

# 3. root's cgroup: root's budget, which B did not spend
bomb jobs/r
killed jobs/r
ok $? "a bomb in box/jobs/r, root's, is killed too (root's budget)" || diag "$(grep 'rule storm' "$kd_log" | tail -n 5)"

# the seventh bomb, through its cgroup
echo 1 >"$v2/$box/jobs/b7/cgroup.kill"
wait_for 30 "box/jobs/b7 empty" empty jobs/b7 || bail_out "box/jobs/b7 cannot be emptied"

# shellcheck disable=SC2154 # set by kd_sentinels (printf -v)
alive "$sent_calm" && alive "$sent_other"
ok $? "the sentinels in box/jobs/calm (B's, watched) and box/other live"
parent_daemon_live
kd_stop
done_testing
