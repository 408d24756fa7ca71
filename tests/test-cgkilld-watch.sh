#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's watched set and its action limits, with small fork bombs
# (pids.max 8) in sandbox cgroups:
# - a cgroup created after the start is picked up (inotify) and acted on;
# - a cgroup removed while watched, empty or just emptied, is forgotten
#   without an error, and one of the same name made again is watched again;
#   the same for a directory between the mount and the cgroups (and its
#   watch goes with it);
# - a dry run (--dry-run) kills nothing and logs what it would have done;
# - the storm limit (MaxActionsPerMinute=2) holds: the third bomb in a
#   minute is left alone and the log says why.
# Sentinels in a sibling (box/other) and in the parent (box, where the
# layout allows it) must live throughout.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup watch
PMAX=8

kd_first pids jobs/first $PMAX
mkcg other || bail_out "cannot create $box/other"
kd_sentinels pids other

sentinels_live() {
	alive "$sent_other" && { [ -z "$sent_parent" ] || alive "$sent_parent"; }
}

watched() {
	dump | grep -q "watching $v2/$box/$1 (rule"
}

# kill what a test left in box/REL (the command, not the daemon)
cleanup_cg() {
	"$CGKILL" -q "$v2/$box/$1" >/dev/null 2>&1 || "$CGKILL" "$v2/$box/$1" >/dev/null 2>&1
	wait_for 30 "box/$1 empty" empty "$1"
}

events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF
[Daemon]
EventLog=$events
PollInterval=20ms

[Rule]
Name=jobs
Match=$box/jobs/*
Trigger=pids-max
PidsMaxEvents=5
PostActionDelay=0
MaxActionsPerMinute=2

[Rule]
Name=deep
Match=$box/deep/*/leaf
Trigger=oom-kill
EOF

# ---- dry run ----
kd_start "$conf" --dry-run || bail_out "cgkilld did not start"
log_has '^<6>cgkilld .* started: .*dry run'
ok $? "the start-up line says dry run"
start_in jobs/first "$FORKBOMB"
bomb=$started
wait_log 30 '^<4>rule jobs: .*/jobs/first: pids-max.*dry run, would kill'
ok $? "dry run: the log says what it would have done"
wait_for 20 "the dry-run event" test -s "$events"
python3 - "$events" <<'EOF'
import json, sys
e = json.loads(open(sys.argv[1]).readline())
assert e["dry_run"] is True and e["action"] == "kill", e
t = e["report"]["targets"][0]
assert t["signals"] == [] and len(t["listed"]) > 0, t
EOF
ok $? "dry run: the JSON event says dry_run, no signal, and lists the processes"
populated jobs/first && alive "$bomb"
ok $? "dry run: the bomb is still there"
kd_stop
cleanup_cg jobs/first
ok $? "(the test's own cleanup of the dry-run bomb)"
: >"$events"

# ---- a cgroup made after the start ----
kd_start "$conf" || bail_out "cgkilld did not start"
mkcg jobs/late $PMAX || bail_out "cannot create box/jobs/late"
wait_for 20 "box/jobs/late watched" watched jobs/late
ok $? "a cgroup created after the start is watched"
start_in jobs/late "$FORKBOMB"
wait_log 30 '^<4>rule jobs: .*/jobs/late: pids-max.*kill with KILL: done'
ok $? "its bomb is killed: the log has the kill"
wait_for 30 "box/jobs/late empty" empty jobs/late
ok $? "box/jobs/late is empty"

# ---- removed while watched ----
mkcg jobs/gone $PMAX || bail_out "cannot create box/jobs/gone"
wait_for 20 "box/jobs/gone watched" watched jobs/gone
rmdir "$v2/$box/jobs/gone" && { [ -z "$v1pids" ] || [ ! -d "$v1pids/$box/jobs/gone" ] || rmdir "$v1pids/$box/jobs/gone"; }
ok $? "(box/jobs/gone removed)"
wait_for 20 "box/jobs/gone forgotten" eval '! watched jobs/gone'
ok $? "an empty cgroup removed while watched is forgotten"
# populated (v1: polled), then emptied and removed at once
mkcg jobs/busy $PMAX || bail_out "cannot create box/jobs/busy"
wait_for 20 "box/jobs/busy watched" watched jobs/busy
run_in jobs/busy sleep 3600 || bail_out "no sleeper in box/jobs/busy"
kill -KILL "$started"
wait_for 20 "box/jobs/busy empty" empty jobs/busy
rm_cgroup_tree "$v2/$box/jobs/busy"
[ -n "$v1pids" ] && [ -d "$v1pids/$box/jobs/busy" ] && rm_cgroup_tree "$v1pids/$box/jobs/busy"
wait_for 20 "box/jobs/busy forgotten" eval '! watched jobs/busy'
ok $? "a cgroup emptied and removed at once is forgotten"
! log_has '^<[0-3]>'
ok $? "no error in the log" || diag "$(grep -E '^<[0-3]>' "$kd_log")"
alive "$kd_daemon"
ok $? "the daemon lives"
mkcg jobs/gone $PMAX || bail_out "cannot create box/jobs/gone again"
wait_for 20 "box/jobs/gone watched again" watched jobs/gone
ok $? "made again, it is watched again"

# ---- a directory between the mount and the cgroups, removed and made again ----
wdirs() {
	dump | sed -n 's/^<6>state: .* \([0-9]*\) watched directories.*/\1/p'
}
mkdir "$v2/$box/deep" || bail_out "cannot create box/deep"
wait_for 20 "box/deep watched" eval 'dump | grep -q "^<6>state: .* 4 watched directories"'
n0=$(wdirs)
mkdir -p "$v2/$box/deep/a/leaf" || bail_out "cannot create box/deep/a/leaf"
wait_for 20 "box/deep/a/leaf watched" watched deep/a/leaf
ok $? "a cgroup two levels below a new directory is watched (deep/*/leaf)"
n1=$(wdirs)
rmdir "$v2/$box/deep/a/leaf" "$v2/$box/deep/a"
wait_for 20 "box/deep/a/leaf forgotten" eval '! watched deep/a/leaf && [ "$(wdirs)" = "$n0" ]'
ok $? "removed with its parent, it is forgotten, and so is the watch on the parent ($(wdirs) directories watched, $n0 before)"
mkdir -p "$v2/$box/deep/a/leaf"
wait_for 20 "box/deep/a/leaf watched again" eval 'watched deep/a/leaf && [ "$(wdirs)" = "$n1" ]'
ok $? "made again, it is watched again"
rmdir "$v2/$box/deep/a/leaf" "$v2/$box/deep/a"

# ---- storm limit: 2 actions a minute ----
# jobs/late was the first action of this minute; one more is allowed
mkcg jobs/s2 $PMAX && mkcg jobs/s3 $PMAX || bail_out "cannot create the storm cgroups"
wait_for 20 "the storm cgroups watched" eval 'watched jobs/s2 && watched jobs/s3'
start_in jobs/s2 "$FORKBOMB"
wait_log 30 '^<4>rule jobs: .*/jobs/s2: pids-max.*kill with KILL: done'
ok $? "the second action of the minute is taken"
wait_for 30 "box/jobs/s2 empty" empty jobs/s2
ok $? "box/jobs/s2 is empty"
start_in jobs/s3 "$FORKBOMB"
bomb=$started
wait_log 30 '^<4>rule jobs: .*/jobs/s3: pids-max.*storm limit of 2 action'
ok $? "the third is not: the log names the storm limit"
populated jobs/s3 && alive "$bomb"
ok $? "the bomb in box/jobs/s3 is left alone"
st=$(dump)
grep -q "rule jobs: .* 2 action(s), [1-9][0-9]* suppressed by the storm limit" <<<"$st"
ok $? "the state dump counts the suppressed events" || diag "$st"
n=$(grep -c . "$events")
[ "$n" -eq 2 ]
ok $? "two JSON events, one per action ($n)"
kd_stop
cleanup_cg jobs/s3
ok $? "(the test's own cleanup of the storm's last bomb)"

sentinels_live
ok $? "the sentinels in box/other and box live"
done_testing
