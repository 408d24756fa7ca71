#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's pids-current trigger against the real kernel: pids.current at
# or above PidsCurrentAbove% of pids.max for PidsCurrentFor. No fork bomb:
# plain sleepers, started one by one, in sandbox cgroups under pids.max 20
# (v2 pids, or the v1 pids hierarchy on hybrid layouts, where the daemon
# reads pids.current every PollInterval while the cgroup is populated).
#  - box/jobs/hot, 19 sleepers (95%) held: the rule (90%, 3s) kills it, and
#    not before the duration;
#  - box/jobs/warm, 17 sleepers (85%) held for longer: left alone;
#  - box/slow/blip, 18 sleepers (90%) for less than its rule's 10s, then 9
#    of them gone: left alone, also after the duration has passed;
#  - sentinels in box/jobs/calm (watched), box/other and the parent box
#    (where the layout allows a process there) live.
# And --check refuses bad values, naming file:line.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
kd_setup pidscur
PMAX=20

kd_first pids jobs/hot $PMAX
mkcg jobs/warm $PMAX || bail_out "cannot create $box/jobs/warm"
mkcg jobs/calm $PMAX || bail_out "cannot create $box/jobs/calm"
mkcg slow/blip $PMAX || bail_out "cannot create $box/slow/blip"
mkcg other || bail_out "cannot create $box/other"
if v2_has pids; then
	pbase=$v2/$box
	hier=2
else
	pbase=$v1pids/$box
	hier=1
fi

# --check: the values, with file:line
c=$kd_tmp/check.conf
expect_error() {
	local out rc
	out=$("$CGKILLD" --check "$c" 2>&1)
	rc=$?
	[ $rc -ne 0 ] && grep -qE -- "$2" <<<"$out"
	ok $? "--check refuses $1" || diag "exit $rc, output:" "$out"
}
for bad in 0% 101% 0 -5% 90%% abc "%" ""; do
	printf '[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=pids-current\nPidsCurrentAbove=%s\n' "$box" "$bad" >"$c"
	expect_error "PidsCurrentAbove=$bad" "^<3>$c:5: PidsCurrentAbove=.*percentage of pids.max from 1% to 100%"
done
for bad in 0 0s soon infinity 2h; do
	printf '[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=pids-current\nPidsCurrentFor=%s\n' "$box" "$bad" >"$c"
	expect_error "PidsCurrentFor=$bad" "^<3>$c:5: PidsCurrentFor=$bad"
done
printf '[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=pids-current pids-max\nPidsCurrentAbove=100%%\nPidsCurrentFor=500ms\n' "$box" >"$c"
check "--check accepts PidsCurrentAbove=100% with PidsCurrentFor=500ms and pids-max beside" "$CGKILLD" --check "$c"
printf '[Rule]\nName=x\nMatch=%s/jobs/*\nTrigger=pids-current\nPidsCurrentAbove=1\n' "$box" >"$c"
check "--check accepts PidsCurrentAbove=1 (the % sign left out)" "$CGKILLD" --check "$c"

kd_sentinels pids jobs/calm other

conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
cat >"$conf" <<EOF
[Daemon]
EventLog=$events
PollInterval=50ms

[Rule]
Name=hot
Match=$box/jobs/*
Trigger=pids-current
PidsCurrentAbove=90%
PidsCurrentFor=3s
Wait=20s

[Rule]
Name=slow
Match=$box/slow/*
Trigger=pids-current
PidsCurrentAbove=90%
PidsCurrentFor=10s
Wait=20s
EOF
check "cgkilld --check accepts the rules" "$CGKILLD" --check "$conf"
kd_start "$conf" || bail_out "cgkilld did not start"
wait_for 20 "the cgroups watched" eval 'st=$(dump) && grep -q "jobs/hot (rule hot) pids:" <<<"$st" &&
	grep -q "jobs/warm (rule hot) pids:" <<<"$st" && grep -q "slow/blip (rule slow) pids:" <<<"$st"'
ok $? "the daemon watches box/jobs/hot, box/jobs/warm and box/slow/blip with a pids trigger (v$hier)"

count() {
	cat "$pbase/$1/pids.current" 2>/dev/null || echo -1
}

# fill REL N: more sleepers in box/REL until pids.current is N; their
# pids in the array named by REL's last component
fill() {
	local rel=$1 n=$2 i have
	local -n arr=${rel##*/}
	have=$(count "$rel")
	for ((i = have; i < n; i++)); do
		start_in "$rel" sleep 3600
		arr+=("$started")
	done
	wait_for 60 "$n processes in box/$rel" eval '[ "$(count '"$rel"')" -eq '"$n"' ]'
}
# shellcheck disable=SC2034 # filled through fill's nameref
warm=() hot=() blip=()

# below the percentage: 17 of 20 (85%), held through all of what follows
fill jobs/warm 17
ok $? "17 sleepers in box/jobs/warm (pids.max $PMAX)"
t_warm=${EPOCHREALTIME/./}

# at or above: 19 of 20 (95%); the condition cannot hold before the 18th
fill jobs/hot 17
ok $? "17 sleepers in box/jobs/hot"
t_hot=${EPOCHREALTIME/./}
fill jobs/hot 19
ok $? "19 sleepers in box/jobs/hot"
wait_for 60 "box/jobs/hot empty" empty jobs/hot
ok $? "the daemon emptied box/jobs/hot"
t_empty=${EPOCHREALTIME/./}
diag "v$hier pids: 18th sleeper started -> empty in $(((t_empty - t_hot) / 1000)) ms (PidsCurrentFor=3s)"
[ $(((t_empty - t_hot) / 1000)) -ge 3000 ]
ok $? "not before the duration (3s: $(((t_empty - t_hot) / 1000)) ms from the start of the 18th sleeper)"
wait_log 20 '^<4>rule hot: .*/jobs/hot: pids-current \(v[12]\): pids.current 19 of pids.max 20, at or above 90% for [0-9]+ms; kill with KILL: done'
ok $? "the log has the event, with a warning priority prefix"
log_has 'pids.current gives no notification'
ok $? "the log says pids.current is read every PollInterval"
wait_for 20 "the JSON event" test -s "$events"
cat >"$kd_tmp/event.py" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
e = json.loads(lines[0])
assert e["rule"] == "hot", e
t = e["trigger"]
assert t["type"] == "pids-current" and t["pids_current"] == 19 and t["pids_max"] == 20, t
assert t["percent"] == 90 and t["for_ms"] == 3000 and t["held_ms"] >= 3000, t
assert e["cgroup"] == sys.argv[2], e
assert e["action"] == "kill" and e["dry_run"] is False and e["error"] == 0, e
r = e["report"]["targets"][0]
assert r["path"] == sys.argv[2] and r["emptied"] is True, r
EOF
check "the JSON event: pids-current, 19 of 20, 90%, held at least 3000 ms, the library's report" \
	python3 "$kd_tmp/event.py" "$events" "$v2/$box/jobs/hot"

# box/jobs/warm at 85% for more than the duration (and longer still)
while [ $(((${EPOCHREALTIME/./} - t_warm) / 1000)) -lt 7000 ]; do sleep 0.2; done
n=0
for p in "${warm[@]}"; do alive "$p" && n=$((n + 1)); done
[ "$n" -eq 17 ] && populated jobs/warm
ok $? "box/jobs/warm at 85% for $(((${EPOCHREALTIME/./} - t_warm) / 1000)) ms is left alone ($n of 17 alive)"
! log_has 'jobs/warm: pids-current'
ok $? "and the log has no event for it"

# box/slow/blip: at 90% for less than its rule's 10s, then below
fill slow/blip 18
ok $? "18 sleepers in box/slow/blip"
wait_log 30 'rule slow: .*/slow/blip: pids-current: pids.current 18 of 20, at or above 90%'
ok $? "the daemon saw box/slow/blip at 90% (-v log)"
for p in "${blip[@]:0:9}"; do
	kill -KILL "$p" 2>/dev/null
done
wait_for 30 "9 processes in box/slow/blip" eval '[ "$(count slow/blip)" -eq 9 ]'
ok $? "9 of them killed by the test"
wait_log 30 'rule slow: .*/slow/blip: pids-current: below 90% of pids.max again'
ok $? "the daemon saw it drop below (-v log)"
# longer than the rule's duration since the drop
sleep 11
n=0
for p in "${blip[@]:9}"; do alive "$p" && n=$((n + 1)); done
[ "$n" -eq 9 ] && populated slow/blip
ok $? "box/slow/blip, back below before 10s, is left alone after 11s more ($n of 9 alive)"
! log_has 'slow/blip: pids-current \(v'
ok $? "and the log has no event for it"
n=$(grep -c . "$events")
[ "$n" -eq 1 ]
ok $? "one event in all ($n)"

alive "$sent_calm"
ok $? "the sentinel in the watched sibling box/jobs/calm lives"
alive "$sent_other"
ok $? "the sentinel in the sibling box/other lives"
if [ -n "$sent_parent" ]; then
	alive "$sent_parent"
	ok $? "the sentinel in the parent box lives"
fi
alive "$kd_daemon"
ok $? "the daemon lives"
kd_stop
done_testing
