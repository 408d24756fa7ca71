#!/bin/bash
# MaxWatchesPerOwner= must not let a delegatee opt its own cgroups out of
# a rule (issue 26 item 10, red team rt2 B2). Rule box/users/*/*
# pids-current 90% for 1s, kill, with MaxWatchesPerOwner=20. Alice (her
# uid) makes 60 EMPTY cgroups of her own (no process: the cap is reached),
# then a hog (19 sleepers at pids.max 20) in users/alice/hog, past the cap.
# Bob's identical users/bob/hog is killed; alice's must be too: past the
# cap her cgroups have no watch of their own but are polled and watched
# once populated. Emptied again, it goes back to being polled (her
# watches stay near the cap). Sentinels in box/other and users/bob/calm.
. "${CGKILL_TEST_LIB:-$(dirname "$0")/cgkilld-lib.sh}"
need_cgkilld
command -v setpriv >/dev/null || skip_all "no setpriv"
kd_setup capoptout
alice=$((63000 + $$ % 500))
bob=$((alice + 500))

kd_first pids users/bob/calm 20
mkcg users/alice || bail_out mkcg
mkcg other || bail_out mkcg
chown "$alice" "$v2/$box/users/alice"
chown "$bob" "$v2/$box/users/bob"
kd_sentinels pids users/bob/calm other

conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF2
[Daemon]
PollInterval=50ms
MaxWatchesPerOwner=20

[Rule]
Name=users
Match=$box/users/*/*
Trigger=pids-current
PidsCurrentAbove=90%
PidsCurrentFor=1s
Action=kill
Wait=20s
EOF2
kd_start "$conf" || bail_out "cgkilld did not start"
setpriv --reuid="$alice" --regid="$alice" --clear-groups \
	bash -c 'cd "$1" && mkdir e{1..60}' sh "$v2/$box/users/alice"
ok $? "alice made 60 empty cgroups of her own"
wait_log 30 "uid $alice owns .* the cap"
ok $? "the daemon reached her cap"
wait_for 30 "her cgroups past the cap polled" eval \
	'dump | grep -q "^<6>owner uid $alice: 20 watched .* 4[0-9] cgroup(s) polled past it"'
ok $? "past the cap, her cgroups are polled, not watched one by one" || diag "$(dump | grep 'owner uid')"
# her hog (root makes it here for the v1 pids counterpart; she could as well)
mkcg users/alice/hog 20 && chown "$alice" "$v2/$box/users/alice/hog" || bail_out "mkcg alice/hog"
mkcg users/bob/hog 20 && chown "$bob" "$v2/$box/users/bob/hog" || bail_out "mkcg bob/hog"
for i in $(seq 19); do start_in users/alice/hog sleep 3600; start_in users/bob/hog sleep 3600; done
# all 19 in each (start_in does not wait): "emptied" below means acted on
wait_for 20 "19 in each hog" eval '[ "$(wc -l <"$v2/$box/users/alice/hog/cgroup.procs")" -ge 19 ] &&
	[ "$(wc -l <"$v2/$box/users/bob/hog/cgroup.procs")" -ge 19 ]' || bail_out "the hogs did not start"
wait_for 30 "bob/hog emptied" empty users/bob/hog
ok $? "bob's hog is acted on"
wait_for 30 "alice/hog emptied" empty users/alice/hog
ok $? "alice's identical hog, past her cap, is acted on too" || diag "$(grep -m2 "users/alice/hog" "$kd_log")"
log_has "users/alice/hog: populated: watched past MaxWatchesPerOwner="
ok $? "the log says it was watched past the cap"
wait_for 30 "alice/hog polled again" eval \
	'! dump | grep -q "^<6>watching $v2/$box/users/alice/hog "'
ok $? "emptied, it goes back to being polled" || diag "$(dump | grep 'owner uid')"
n=$(dump | sed -n "s/^<6>owner uid $alice: \([0-9]*\) watched.*/\1/p")
[ "${n:-99}" -le 20 ]
ok $? "her watches are back within the cap ($n)"
alive "$sent_calm" && alive "$sent_other"
ok $? "sentinels live"
alive "$kd_daemon"
ok $? "the daemon lives"
kd_stop
done_testing
