#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's v1 counterparts (hybrid layouts, cgkilld.conf(5) V1
# COUNTERPARTS): a delegatee cannot opt its own matched cgroup out of a
# pids rule (issue 26, RT1 #5). User A owns the watched box/jobs/a (v2) and
# its v1 pids cgroup box/jobs/a (max 24); A moves one of its own processes
# from outside (its v2 box/home) into that v1 cgroup, which made the
# counterpart "not its alone": the trigger was never armed and A's bomb
# churned at its pids.max for good. Now a task of the owner's (or in a v1
# cgroup of the owner's) counts against the cgroup: the trigger is armed
# and the bomb killed. A neighbour's cgroup (uid B, box/jobs/b, its v1
# cgroup root's) with a stray of A's that root put there is still refused
# (neither B's task nor B's cgroup: not B's doing), and its sleep lives.
# Sentinels in box/other and box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup cp-owner
[ -n "$v1pids" ] && ! v2_has pids || skip_all "needs a v1 pids hierarchy and no v2 pids (hybrid layouts)"
UA=64751 UB=64752
# A's and B's: as prefixes for run_in (exec'ed)
asA=(setpriv --reuid=$UA --regid=$UA --clear-groups)
asB=(setpriv --reuid=$UB --regid=$UB --clear-groups)

kd_first pids jobs/a 24
mkcg jobs/b 24 && mkcg home 8 && mkcg other || bail_out "cannot create the cgroups of $box"
kd_sentinels pids other
chown -R $UA "$v2/$box/jobs/a" "$v1pids/$box/jobs/a" "$v2/$box/home" "$v1pids/$box/home" &&
	chown -R $UB "$v2/$box/jobs/b" || bail_out chown
run_in home "${asA[@]}" sleep 3600 || bail_out "no sleep of A's in box/home"
outside=$started
run_in home "${asA[@]}" sleep 3600 || bail_out "no second sleep of A's in box/home"
outside2=$started
run_in jobs/b "${asB[@]}" sleep 3600 || bail_out "no sleep of B's in box/jobs/b"
bsleep=$started
# the trick, as A: its own outside process into the v1 pids cgroup of its
# watched cgroup (allowed by the kernel: A owns both)
"${asA[@]}" sh -c "echo $outside >'$v1pids/$box/jobs/a/cgroup.procs'"
ok $? "A moved its own outside process into v1 pids box/jobs/a"
# B's cgroup (its v1 pids cgroup root's, as systemd leaves them) gets a
# stray of A's, put there by root: not B's doing
echo "$outside2" >"$v1pids/$box/jobs/b/cgroup.procs"
ok $? "root put a process of A's into v1 pids box/jobs/b"

conf=$kd_tmp/c.conf
printf '[Rule]\nName=optout\nMatch=%s/jobs/*\nTrigger=pids-max\nPidsMaxEvents=5\nAction=kill\nWait=20s\n' "$box" >"$conf"
kd_start "$conf" || bail_out "cgkilld did not start"
out=$("$CGKILLD" --check --config "$conf" 2>&1)
grep -q "jobs/a: pids triggers on the v1 cgroup $v1pids/$box/jobs/a" <<<"$out"
ok $? "--check: box/jobs/a is armed on its v1 pids cgroup" || diag "$out"
grep -q "jobs/b: pids triggers not armed: .*outside" <<<"$out"
ok $? "--check: box/jobs/b, with A's stray, is not" || diag "$out"
start_in jobs/a "${asA[@]}" "$FORKBOMB" || bail_out "no bomb in box/jobs/a"
# (the event first: a bomb killed at once is gone before any look)
wait_log 30 "jobs/a: pids-max \\(v1\\): pids.events max rose"
ok $? "the log gives the pids-max event on box/jobs/a" || diag "$(grep jobs/a "$kd_log" | cut -c1-300)"
wait_for 30 "the bomb killed" empty jobs/a
ok $? "A's bomb in its matched box/jobs/a is killed" ||
	diag "$(grep jobs/a "$kd_log" | grep -v '<7>' | cut -c1-300)"
alive "$outside"
ok $? "(A's own process outside it, in its v1 cgroup, is not killed: the kill is on the v2 cgroup)"
kd_stop
echo 1 >"$v2/$box/jobs/a/cgroup.kill"
alive "$bsleep" && alive "$outside2"
ok $? "B's box/jobs/b and A's stray there live"
alive "$sent_other" && { [ -z "$sent_parent" ] || alive "$sent_parent"; }
ok $? "sentinels live"
done_testing
