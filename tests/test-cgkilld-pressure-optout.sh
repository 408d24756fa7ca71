#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A matched cgroup does not opt out of a pressure rule (cgkilld.conf(5),
# PRESSURE): its owner may write 0 to its cgroup.pressure, which hides its
# pressure files and drops the daemon's PSI triggers on them. A rule on
# box/cpu/* (cpu-pressure, some 20% of 2s windows for 2s); the cgroups are
# uid U's, as a delegatee's:
#  1. box/cpu/off has cgroup.pressure 0 before the daemon starts: the daemon
#     turns it on (and gives the file to root, 0644, so that U cannot turn
#     it off again), arms its trigger, and says so once;
#  2. two busy loops on one CPU in box/cpu/on and two in box/cpu/off: both
#     cgroups are killed (box/cpu/off was never armed, its loops ran on);
#  3. box/cpu/late is watched with its pressure on; U turns it off: the
#     trigger dropped, the daemon turns it on and arms again at once, and
#     busy loops there are killed (they ran on).
# Sentinels in box/cpu/quiet (watched, U's), box/other and box must live.
# The loops are killed through their cgroup.kill at the end, whatever
# happened.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
kd_setup psi-optout
U=64621

kd_first cpu cpu/on
for rel in cpu/off cpu/late cpu/quiet other; do
	mkcg "$rel" || bail_out "cannot create $box/$rel"
done
[ -f "$v2/$box/cpu/off/cgroup.pressure" ] || skip_all "no cgroup.pressure in $v2 (PSI off, or Linux before 6.1)"
kd_sentinels cpu cpu/quiet other
chown -R "$U" "$v2/$box/cpu/on" "$v2/$box/cpu/off" "$v2/$box/cpu/late" "$v2/$box/cpu/quiet" ||
	bail_out "cannot give the cgroups to uid $U"
# as U would (the file is U's)
setpriv --reuid "$U" --regid "$U" --clear-groups sh -c "echo 0 >'$v2/$box/cpu/off/cgroup.pressure'" &&
	[ ! -e "$v2/$box/cpu/off/cpu.pressure" ] || bail_out "uid $U cannot turn off the pressure of box/cpu/off"

# the loops: killed through their cgroups at exit
# a sleeper in each: an empty cgroup holds no file, its triggers are armed
# (and its pressure turned on) once it is populated
for rel in cpu/off cpu/late; do
	start_in "$rel" sleep 3600 || bail_out "no sleeper in box/$rel"
done

kill_loops() {
	local rel
	for rel in cpu/on cpu/off cpu/late; do
		[ -e "$v2/$box/$rel/cgroup.kill" ] && echo 1 >"$v2/$box/$rel/cgroup.kill"
	done
	kd_cleanup
}
trap kill_loops EXIT

conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF
[Rule]
Name=cpu
Match=$box/cpu/*
Trigger=cpu-pressure
PressureLimit=some 20%
PressureWindow=2s
PressureDuration=2s
Wait=20s
EOF
kd_start "$conf" || bail_out "cgkilld did not start"

# 1. turned on at arming
log_has "^<5>rule cpu: $v2/$box/cpu/off: cgroup.pressure was 0 \\(its pressure files off\\): turned on, and given to root"
ok $? "box/cpu/off: cgroup.pressure 0 is turned on, and the log says so" || diag "$(grep 'rule cpu' "$kd_log")"
[ "$(cat "$v2/$box/cpu/off/cgroup.pressure")" = 1 ] &&
	[ "$(stat -c %u:%a "$v2/$box/cpu/off/cgroup.pressure")" = 0:644 ]
ok $? "its cgroup.pressure is 1 and root's, 0644"
! setpriv --reuid "$U" --regid "$U" --clear-groups sh -c "echo 0 >'$v2/$box/cpu/off/cgroup.pressure'" 2>/dev/null &&
	[ "$(cat "$v2/$box/cpu/off/cgroup.pressure")" = 1 ]
ok $? "uid $U can no longer turn it off"
log_has "^<7>rule cpu: $v2/$box/cpu/off: cpu-pressure: PSI trigger \"some 400000 2000000\" on $v2/$box/cpu/off/cpu.pressure\$"
ok $? "its cpu-pressure trigger is armed"

# busy_in REL: two busy loops on CPU 0 in box/REL
busy_in() {
	local i
	for i in 1 2; do
		start_in "$1" taskset -c 0 sh -c 'while :; do :; done'
	done
}
# acted REL: the rule's kill of box/REL is logged and box/REL is empty
acted() {
	wait_log 40 "^<4>rule cpu: $v2/$box/$1: cpu-pressure: some stall at or above 20%.*kill with KILL: done" &&
		wait_for 30 "box/$1 empty" empty "$1"
}

# 2. identical loops in both
busy_in cpu/on
busy_in cpu/off
acted cpu/on
ok $? "busy loops in box/cpu/on are killed"
acted cpu/off
ok $? "and so are those in box/cpu/off, whose pressure was off" || diag "$(grep 'rule cpu' "$kd_log")"

# 3. turned off while watched
log_has "^<7>rule cpu: $v2/$box/cpu/late: cpu-pressure: PSI trigger"
ok $? "box/cpu/late is armed"
setpriv --reuid "$U" --regid "$U" --clear-groups sh -c "echo 0 >'$v2/$box/cpu/late/cgroup.pressure'"
ok $? "uid $U turns the pressure of box/cpu/late off"
wait_log 20 "^<6>rule cpu: $v2/$box/cpu/late/cpu.pressure: its pressure files were turned off: cpu-pressure armed again"
ok $? "the daemon arms it again at once" || diag "$(grep 'rule cpu' "$kd_log")"
[ "$(cat "$v2/$box/cpu/late/cgroup.pressure")" = 1 ] &&
	[ "$(stat -c %u "$v2/$box/cpu/late/cgroup.pressure")" = 0 ]
ok $? "its cgroup.pressure is 1 again, and root's"
busy_in cpu/late
acted cpu/late
ok $? "busy loops in box/cpu/late are killed" || diag "$(grep 'rule cpu' "$kd_log")"
[ "$(grep -c "^<5>rule cpu: .*cgroup.pressure was 0" "$kd_log")" -eq 2 ]
ok $? "said once for each cgroup"

# shellcheck disable=SC2154 # set by kd_sentinels (printf -v)
alive "$sent_quiet" && alive "$sent_other"
ok $? "the sentinels in box/cpu/quiet (watched) and box/other live"
parent_daemon_live
kd_stop
done_testing
