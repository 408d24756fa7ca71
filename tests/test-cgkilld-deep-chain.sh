#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's v1 counterparts against a delegatee's deep chain (issue 26,
# red team round 3, #1). Root's watched box/jobs has an exclusive v1 pids
# cgroup (max 40); user A owns box/jobs/a and makes 260 empty cgroups, one
# inside the other, below it. Whether the v1 cgroup is the watched cgroup's
# alone was decided by walking the whole v2 subtree, which gave up past 256
# levels and refused it: the pids trigger was never armed, and user B's
# bomb in box/jobs/b ran on. Now the walk stops there and each task it did
# not collect is looked up in /proc: the trigger is armed and B's bomb is
# killed. Sentinels in box/other and box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup deep-chain
[ -n "$v1pids" ] && ! v2_has pids || skip_all "needs a v1 pids hierarchy and no v2 pids (hybrid layouts)"
UA=64723 UB=64724

kd_first pids jobs 40
mkcg jobs/a && mkcg jobs/b && mkcg other || bail_out "cannot create the cgroups of $box"
kd_sentinels pids other
chown "$UA" "$v2/$box/jobs/a" && chown "$UB" "$v2/$box/jobs/b" || bail_out chown
setpriv --reuid=$UA --regid=$UA --clear-groups sh -c \
	"cd '$v2/$box/jobs/a' && for i in \$(seq 1 260); do mkdir d && cd d || exit 1; done" ||
	bail_out "user A cannot make the chain"
[ -d "$v2/$box/jobs/a$(printf '/d%.0s' $(seq 1 260))" ]
ok $? "user A made 260 levels below box/jobs/a"

conf=$kd_tmp/c.conf
printf '[Rule]\nName=jobs\nMatch=%s/jobs\nTrigger=pids-max\nPidsMaxEvents=5\nAction=kill\nWait=20s\n' \
	"$box" >"$conf"
kd_start "$conf" || bail_out "cgkilld did not start"
# the cgroup is empty until B's bomb: armed once it is populated
# v1: box/jobs itself (its limit caps the bomb), v2: box/jobs/b
sh -c "echo \$\$ >'$v1pids/$box/jobs/cgroup.procs' && echo \$\$ >'$v2/$box/jobs/b/cgroup.procs' &&
	exec setpriv --reuid=$UB --regid=$UB --clear-groups '$FORKBOMB'" </dev/null >/dev/null 2>&1 &
kd_pids+=($!)
wait_log 60 "rule jobs: $v2/$box/jobs: pids triggers on "
ok $? "the pids trigger of box/jobs is armed, the chain notwithstanding" || diag "$(grep -E '^<[0-6]>' "$kd_log")"
! log_has "not armed.*levels below"
ok $? "no counterpart is refused for the depth of the chain"
wait_log 60 "rule jobs: $v2/$box/jobs: pids-max.*done"
ok $? "B's bomb is acted on" || diag "$(grep -E '^<[0-5]>' "$kd_log")"
wait_for 60 "box/jobs empty" empty jobs
ok $? "and box/jobs is empty"
alive "$sent_other"
ok $? "the sentinel in box/other lives"
parent_daemon_live
done_testing
