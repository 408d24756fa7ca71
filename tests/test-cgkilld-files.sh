#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld against a user who makes many empty matched cgroups (issue 26,
# item 8: with ~1,000 of them the daemon ran out of files; cgroups made
# later went unwatched and a neighbour's bomb was "not acted on: Too many
# open files").
#
# The daemon runs under an open file limit of 1024 (soft and hard), with a
# rule on box/users/*/* (pids-max). Two owners: alice owns box/users/alice,
# bob box/users/bob. Bob's cgroup "before" is watched; then alice, as her
# own uid, makes $N empty cgroups in her subtree; then bob's "after" is
# made. Expected: empty cgroups hold no file (the daemon's open files stay
# few), alice's cgroups beyond MaxWatchesPerOwner (default 1000) are not
# watched and the log names the cap, "after" is watched, and fork bombs
# (under pids.max) in "before" and "after" are killed. Sentinels in bob's
# watched box/users/bob/calm, in box/other and in the sandbox live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
command -v setpriv >/dev/null || skip_all "no setpriv (util-linux): cannot act as another user"
kd_setup files
PMAX=300
N=${KD_FLOOD:-1500}
# two uids of no one on this machine (numbers only: no account needed)
alice=$((61000 + $$ % 500))
bob=$((alice + 500))

kd_first pids users/bob/before $PMAX
mkcg users/bob/calm 100 || bail_out "cannot create $box/users/bob/calm"
mkcg users/alice || bail_out "cannot create $box/users/alice"
mkcg other || bail_out "cannot create $box/other"
chown "$bob" "$v2/$box/users/bob" && chown "$alice" "$v2/$box/users/alice" ||
	bail_out "cannot chown the users' subtrees"
kd_sentinels pids users/bob/calm other

conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
cat >"$conf" <<EOF
[Daemon]
EventLog=$events
PollInterval=20ms

[Rule]
Name=users
Match=$box/users/*/*
Trigger=pids-max
PidsMaxEvents=20
PidsWindow=1s
Action=kill
Wait=20s
EOF
# the daemon under an open file limit of 1024, soft and hard
real=$CGKILLD
CGKILLD=$kd_tmp/cgkilld-1024
printf '#!/bin/sh\nulimit -Sn 1024 && ulimit -Hn 1024 && exec "%s" "$@"\n' "$real" >"$CGKILLD"
chmod +x "$CGKILLD"
kd_start "$conf" || bail_out "cgkilld did not start"
CGKILLD=$real
[ "$(awk '/^Max open files/ { print $5 }' "/proc/$kd_daemon/limits")" = 1024 ]
ok $? "the daemon runs with an open file limit of 1024"
wait_for 20 "bob's cgroups watched" eval 'st=$(dump) && grep -q "users/bob/before (rule users)" <<<"$st" &&
	grep -q "users/bob/calm (rule users)" <<<"$st"'
ok $? "the daemon watches box/users/bob/before and box/users/bob/calm"

# alice's flood, as alice, in her own subtree
setpriv --reuid="$alice" --regid="$alice" --clear-groups \
	bash -c 'cd "$1" && mkdir c{1..'"$N"'}' sh "$v2/$box/users/alice" 2>"$kd_tmp/mkdir.err"
n=$(find "$v2/$box/users/alice" -mindepth 1 -maxdepth 1 -type d | wc -l)
[ "$n" -eq "$N" ] && [ "$(stat -c %u "$v2/$box/users/alice/c1")" = "$alice" ]
ok $? "alice made $N empty cgroups of her own ($n)" || diag "$(head -3 "$kd_tmp/mkdir.err")"

# bob's cgroup made after the flood: seen once the daemon has read
# everything before it (inotify keeps the order)
mkcg users/bob/after $PMAX || bail_out "cannot create $box/users/bob/after"
wait_for 30 "box/users/bob/after watched" eval 'dump | grep -q "users/bob/after (rule users)"'
ok $? "bob's cgroup made after the flood is watched"

log_has "^<3>rule users: .*/users/alice/c[0-9]*: not watched: uid $alice owns [0-9]* watched cgroups and directories, the cap \(MaxWatchesPerOwner=1000\)"
ok $? "the log names alice's uid and the cap, at error priority" || diag "$(grep -m3 -i 'alice\|MaxWatches\|open files' "$kd_log")"
[ "$(grep -c 'MaxWatchesPerOwner=1000)' "$kd_log")" -eq 1 ]
ok $? "said once"
st=$(dump)
watched=$(grep -c "^<6>watching $v2/$box/users/alice/" <<<"$st")
[ "$watched" -gt 900 ] && [ "$watched" -lt 1000 ]
ok $? "alice's cgroups are watched up to the cap ($watched watched, her directory counted too)"
grep -q "^<6>owner uid $alice: 1000 watched cgroups and directories of 1000 (MaxWatchesPerOwner=), [1-9][0-9]* refused" <<<"$st"
ok $? "the state dump says how many of hers were refused" || diag "$(grep "owner uid" <<<"$st")"
fds=$(find "/proc/$kd_daemon/fd" -mindepth 1 | wc -l)
[ "$fds" -lt 64 ]
ok $? "the daemon holds few files with $watched empty cgroups watched ($fds open)"

# bombs in bob's cgroups, the one watched before and the one made after
for rel in users/bob/before users/bob/after; do
	start_in "$rel" "$FORKBOMB"
	wait_for 30 "the event of box/$rel" python3 -c 'import json, sys
sys.exit(not any(e["cgroup"] == sys.argv[2] and e["action"] == "kill" and e["error"] == 0
                 for e in map(json.loads, open(sys.argv[1]))))' "$events" "$v2/$box/$rel"
	ok $? "the event log has the kill of box/$rel, without error" || diag "$(tail -c 600 "$events")"
	wait_for 30 "box/$rel empty" empty "$rel"
	ok $? "the bomb in box/$rel is killed"
done
! log_has 'Too many open files'
ok $? "no \"Too many open files\" in the log" || diag "$(grep -m3 'Too many open files' "$kd_log")"
fds=$(find "/proc/$kd_daemon/fd" -mindepth 1 | wc -l)
[ "$fds" -lt 64 ]
ok $? "and still few files after the kills ($fds open)"
alive "$sent_calm"
ok $? "the sentinel in bob's watched box/users/bob/calm lives"
alive "$sent_other"
ok $? "the sentinel in box/other lives"
if [ -n "$sent_parent" ]; then
	alive "$sent_parent"
	ok $? "the sentinel in the sandbox lives"
fi
alive "$kd_daemon"
ok $? "the daemon lives"

# alice removes hers: her count falls, and new ones are watched again
setpriv --reuid="$alice" --regid="$alice" --clear-groups \
	bash -c 'cd "$1" && rmdir c[0-9]*' sh "$v2/$box/users/alice"
mkcg users/alice/late || bail_out "cannot create $box/users/alice/late"
wait_for 30 "box/users/alice/late watched" eval 'dump | grep -q "users/alice/late (rule users)"'
ok $? "once alice removed hers, a new cgroup of hers is watched"
st=$(dump)
grep -q "^<6>state: 1 rule(s), 4 watched cgroup(s)" <<<"$st"
ok $? "the removed ones are forgotten (4 watched: bob's 3 and alice's new one)" ||
	diag "$(grep '^<6>state:' <<<"$st")"
kd_stop
done_testing
