#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's storm limit charges an action to the owner responsible for it
# (cgkilld.conf(5), MaxActionsPerMinute=), also where the cgroups the rule
# watches are root's and hold users' delegated subtrees (systemd's
# user-UID.slice is root's, user@UID.service the user's): one user's bombs
# in its own delegated subtrees do not spend root's budget, shared by every
# other root-owned cgroup. A rule on box/jobs/* with Trigger=pids-max and
# the default limit (6 actions a minute) and PostActionDelay=5s;
# box/jobs/a1, a2, b, r are root's, box/jobs/a1/u and a2/u uid A's,
# box/jobs/b/u uid B's; every bomb runs under a pids limit (its box/jobs/X).
#  1. six times, a process of A's in box/jobs/aN/u (root puts it there, as
#     logind would) runs a fork bomb, a1 and a2 in turn (the post-action
#     delay holds each cgroup): all six are killed;
#  2. B's bomb in box/jobs/b/u is killed at once (it was held: root's
#     budget, spent by A);
#  3. a bomb of root's in box/jobs/r (root's, no delegated cgroup) is
#     killed at once: root's own budget, which A did not spend;
#  4. A's seventh bomb, in box/jobs/a1/u, is held: the log names uid A's
#     budget (it named uid 0's).
# Sentinels in box/jobs/calm (root's, watched), box/other and box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup storm-deleg
UA=64621
UB=64622
PMAX=24

kd_first pids jobs/a1 $PMAX
for rel in jobs/a2 jobs/b jobs/r; do
	mkcg "$rel" $PMAX || bail_out "cannot create $box/$rel"
done
for rel in jobs/a1/u jobs/a2/u jobs/b/u other; do
	mkcg "$rel" || bail_out "cannot create $box/$rel"
done
mkcg jobs/calm 10 || bail_out "cannot create $box/jobs/calm"
kd_sentinels pids jobs/calm other
chown -R "$UA" "$v2/$box/jobs/a1/u" "$v2/$box/jobs/a2/u" && chown -R "$UB" "$v2/$box/jobs/b/u" ||
	bail_out "cannot give the delegated cgroups to their users"

conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOC
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
PostActionDelay=5s
EOC
kd_start "$conf" || bail_out "cgkilld did not start"
wait_for 20 "the jobs watched" eval 'dump | grep -q "jobs/r (rule storm) pids:"' ||
	bail_out "box/jobs/r is not watched"

# bomb_as UID REL: root starts a process in box/REL (its v1 pids cgroup,
# where v2 has no pids controller: that of REL's parent, box/jobs/X),
# which becomes UID's and runs a fork bomb
bomb_as() {
	local u=$1 rel=$2 v1=
	[ -n "$v1pids" ] && ! v2_has pids && v1="echo \$\$ >'$v1pids/$box/${rel%/u}/cgroup.procs' && "
	sh -c "$v1$(_join "$rel") && exec setpriv --reuid=$u --regid=$u --clear-groups '$FORKBOMB'" \
		</dev/null >/dev/null 2>&1 &
	disown $!
}
# killed REL N: the N-th kill of box/REL (a cgroup below box/jobs) is
# logged, and box/REL's box/jobs/X is empty
killed() {
	local w=${1%/u} k=$2
	wait_for 40 "kill $k of box/$w" eval \
		'[ "$(grep -c "^<4>rule storm: $v2/$box/$w: pids-max.*; kill with KILL: done" "$kd_log")" -ge $k ]' &&
		wait_for 30 "box/$w empty" empty "$w"
}
why() {
	diag "$(grep 'rule storm' "$kd_log" | tail -n 6)"
}

# 1. A's storm, in its own delegated cgroups below root's a1 and a2
n=0 t00=${EPOCHREALTIME/./}
for i in 1 2 3 4 5 6; do
	a=a$(((i - 1) % 2 + 1))
	bomb_as $UA "jobs/$a/u"
	killed "jobs/$a/u" $(((i + 1) / 2)) || break
	n=$i
	diag "A's bomb $i killed $(((${EPOCHREALTIME/./} - t00) / 1000))ms after the first started"
done
ok "$([ $n = 6 ]; echo $?)" "uid A's six bombs in box/jobs/a1/u, a2/u (A's, below root's) are killed ($n)" || why

# acted_at_once W: the rule logged an action on box/W or its hold, at once
# (within 10 s: a budget spent by another owner would hold it for up to
# a minute); ok if it was not held and box/W is empty
acted_at_once() {
	wait_log 10 "rule storm: $v2/$box/$1: pids-max" &&
		! log_has "rule storm: $v2/$box/$1: .*not acted on" &&
		wait_for 30 "box/$1 empty" empty "$1"
}

# 2. B's bomb, within the minute: B's budget
t0=${EPOCHREALTIME/./}
bomb_as $UB jobs/b/u
acted_at_once jobs/b
ok $? "uid B's bomb in box/jobs/b/u (B's, below root's box/jobs/b) is killed at once, not held" || why
diag "B's bomb emptied $(((${EPOCHREALTIME/./} - t0) / 1000))ms after it started"

# 3. root's own bomb in root's box/jobs/r: root's budget
start_in jobs/r "$FORKBOMB"
acted_at_once jobs/r
ok $? "root's bomb in box/jobs/r (root's, no delegated cgroup) is killed at once: root's budget, which A did not spend" || why

# 4. A's seventh, within the minute: A's budget is spent, and the log says
# it is A's
bomb_as $UA jobs/a1/u
wait_log 40 "^<4>rule storm: $v2/$box/jobs/a1: pids-max.*not acted on: the storm limit of 6 action\\(s\\) a minute for the cgroups of uid $UA is reached"
ok $? "A's seventh bomb is not acted on: the log names uid A's budget (not root's)" || why

# A's seventh bomb, through its cgroup
echo 1 >"$v2/$box/jobs/a1/cgroup.kill"
wait_for 30 "box/jobs/a1 empty" empty jobs/a1 || bail_out "box/jobs/a1 cannot be emptied"

# shellcheck disable=SC2154 # set by kd_sentinels (printf -v)
alive "$sent_calm" && alive "$sent_other"
ok $? "the sentinels in box/jobs/calm (root's, watched) and box/other live"
parent_daemon_live
kd_stop
done_testing
