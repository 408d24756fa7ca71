#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's pids-max on v1 counterparts (issue 26, RT1 #3): v1 pids.events
# counts the forks refused to the cgroup's own tasks by ANY ancestor's
# pids.max. v1 box/jobs (root's) caps all jobs at 30; user B's watched
# box/jobs/inn has its own exclusive v1 cgroup (max 1000) and a worker that
# forks now and then; user A (its v2 box/home, not watched) fills the cap
# from v1 box/jobs/att, which A owns. inn's pids.events "max" rose and
# cgkilld killed it. Now a rise is acted on only where the limit that
# refused the forks is the cgroup's own, or an ancestor's that belongs to it
# alone: inn lives, and the log names the ancestor at its limit, once.
# Then (control) v1 box/solo (max 12, root's) holds only the watched
# box/solo/w's v1 cgroup (max 1000): a bomb in w fills box/solo's limit,
# which is w's alone: it is killed.
# Sentinels in box/other and box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
command -v python3 >/dev/null || skip_all "no python3"
kd_setup pids-ancestor
[ -n "$v1pids" ] && ! v2_has pids || skip_all "needs a v1 pids hierarchy and no v2 pids (hybrid layouts)"
UA=64721 UB=64722
asA=(setpriv --reuid=$UA --regid=$UA --clear-groups)
asB=(setpriv --reuid=$UB --regid=$UB --clear-groups)
# a python3 the users can run (not one below /root)
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "no /usr/bin/python3"

kd_first pids jobs 30
mkcg jobs/inn 1000 && mkcg jobs/att 1000 && mkcg home && mkcg other && mkcg solo 12 && mkcg solo/w 1000 ||
	bail_out "cannot create the cgroups of $box"
kd_sentinels pids other
chown -R $UB "$v2/$box/jobs/inn" && chown -R $UA "$v2/$box/home" "$v1pids/$box/jobs/att" || bail_out chown
run_in jobs/inn "${asB[@]}" "$PY" -c 'import os, time
while True:
    try:
        p = os.fork()
        if p == 0:
            os._exit(0)
        os.waitpid(p, 0)
    except OSError:
        pass
    time.sleep(0.05)' || bail_out "no worker in box/jobs/inn"
worker=$started
run_in jobs/inn "${asB[@]}" sleep 3600 || bail_out "no sleep in box/jobs/inn"
innsleep=$started

conf=$kd_tmp/c.conf
printf '[Rule]\nName=anc\nMatch=%s/jobs/*\nTrigger=pids-max\nPidsMaxEvents=5\nAction=kill\nWait=20s\n\n' "$box" >"$conf"
printf '[Rule]\nName=solo\nMatch=%s/solo/w\nTrigger=pids-max\nPidsMaxEvents=5\nAction=kill\nWait=20s\n' "$box" >>"$conf"
kd_start "$conf" || bail_out "cgkilld did not start"
wait_log 20 "jobs/inn: pids triggers on " || bail_out "box/jobs/inn not armed"
# A, in its own v2 box/home, joins v1 box/jobs/att (its own) and fills the cap
run_in home "${asA[@]}" "$PY" -c 'import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
n = 0
for i in range(3000):
    if n >= 40:
        break
    try:
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
        n += 1
    except OSError:
        time.sleep(0.01)	# a slot freed by inn'"'"'s short-lived children is taken
time.sleep(3600)' "$v1pids/$box/jobs/att/cgroup.procs" || bail_out "no attacker"
att=$started
wait_for 20 "box/jobs at its pids.max" eval '[ "$(cat "$v1pids/$box/jobs/pids.current")" -ge 30 ]'
ok $? "A's processes hold v1 box/jobs at its pids.max"
wait_for 20 "inn's forks refused" eval '[ "$(awk "/^max/ {print \$2}" "$v1pids/$box/jobs/inn/pids.events")" -ge 10 ]'
ok $? "the forks of box/jobs/inn are refused (its v1 pids.events max rose)"
wait_log 20 "jobs/inn: pids-max: not acted on: the forks were refused by the pids.max of its ancestor $v1pids/$box/jobs \\(pids [0-9]+ of 30\\), not by its own"
ok $? "the log says why box/jobs/inn is not acted on, naming the ancestor" ||
	diag "$(grep jobs/inn "$kd_log" | grep -v '<7>' | cut -c1-300)"
sleep 2	# several more polls in the same episode
! log_has "jobs/inn: pids-max \\(v1\\)"
ok $? "no pids-max event for box/jobs/inn"
alive "$worker" && alive "$innsleep"
ok $? "the innocent box/jobs/inn lives"
n=$(grep -c "jobs/inn: pids-max: not acted on" "$kd_log")
[ "$n" -eq 1 ]
ok $? "said once in the episode ($n)"

# control: the ancestor's limit is the watched cgroup's alone
start_in solo/w "$FORKBOMB"
wait_log 30 "solo/w: pids-max \\(v1\\): .*kill" && wait_for 30 "the bomb killed" empty solo/w
ok $? "a bomb in box/solo/w at box/solo's pids.max (w's alone) is killed" ||
	diag "$(grep solo "$kd_log" | grep -v '<7>' | cut -c1-300)"
kd_stop
alive "$att"
ok $? "(A's processes, unwatched, live)"
alive "$sent_other" && { [ -z "$sent_parent" ] || alive "$sent_parent"; }
ok $? "sentinels live"
done_testing
