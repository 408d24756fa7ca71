#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld against a real fork bomb: a rule on the sandbox pattern
# box/jobs/* with Trigger=pids-max; the bomb runs under pids.max (v2 pids,
# or the v1 pids hierarchy on hybrid layouts) in box/jobs/bomb. The daemon
# must kill that cgroup, and only it: sentinels in a sibling the rule also
# watches (box/jobs/calm), in a sibling it does not (box/other) and in the
# parent (box, where the layout allows a process there) must live. Measured
# and shown: the time from saturation (pids.current at pids.max, as seen
# here) to the daemon's event, and to an empty cgroup. Then a second bomb
# in the same cgroup within the post-action delay is left alone.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup bomb
PMAX=300

kd_first pids jobs/bomb $PMAX
mkcg jobs/calm 100 || bail_out "cannot create $box/jobs/calm"
mkcg other || bail_out "cannot create $box/other"
if v2_has pids; then
	pcur=$v2/$box/jobs/bomb/pids.current
	hier=2
else
	pcur=$v1pids/$box/jobs/bomb/pids.current
	hier=1
fi

kd_sentinels pids jobs/calm other

conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
# The post-action delay must outlast the checks after the kill, to the one
# that a second bomb is left alone, however busy the machine: an idle
# machine's minute, stretched (15 s, the default, ended before them once,
# beside a load average of 500).
delay=$("$DEADLINE" 60) || bail_out "$DEADLINE not built (make tests)"
cat >"$conf" <<EOF
[Daemon]
EventLog=$events
PollInterval=20ms

[Rule]
Name=bombs
Match=$box/jobs/*
Trigger=pids-max
PidsMaxEvents=20
PidsWindow=1s
Action=kill
Wait=20s
PostActionDelay=${delay}s
EOF
check "cgkilld --check accepts the rule" "$CGKILLD" --check "$conf"
kd_start "$conf" || bail_out "cgkilld did not start"
wait_for 20 "both jobs watched" eval 'dump | grep -q "jobs/bomb (rule bombs) pids:" && dump | grep -q "jobs/calm (rule bombs) pids:"'
ok $? "the daemon watches box/jobs/bomb and box/jobs/calm with a pids trigger (v$hier)"

# The observer, at real-time priority so that the bomb cannot delay what
# it sees: the moments pids.current reaches pids.max (saturation) and the
# cgroup is empty, as CLOCK_REALTIME microseconds (bounded: 60 s).
observed=$kd_tmp/observed
cat >"$kd_tmp/observer.py" <<'EOF'
import os, sys, time
pcur, pmax, events, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
except OSError:
    pass
def now():
    return int(time.time() * 1e6)
t_sat = t_empty = None
started = False
open(out + ".ready", "w").close()
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        cur = int(open(pcur).read())
        pop = open(events).read().split("populated ")[1][0] == "1"
    except (OSError, ValueError, IndexError):
        break
    if pop:
        started = True
    if t_sat is None and cur >= pmax:
        t_sat = now()
    if started and not pop:
        t_empty = now()
        break
    time.sleep(0.0005)
open(out, "w").write("%s %s\n" % (t_sat or "", t_empty or ""))
EOF
python3 "$kd_tmp/observer.py" "$pcur" $PMAX "$v2/$box/jobs/bomb/cgroup.events" "$observed" &
observer=$!
kd_pids+=("$observer")
wait_for 30 "the observer" test -e "$observed.ready" || bail_out "the observer did not start"
start_in jobs/bomb "$FORKBOMB"
wait_for 60 "box/jobs/bomb empty" empty jobs/bomb
ok $? "the daemon emptied box/jobs/bomb"
wait "$observer"
read -r t_sat t_empty <"$observed"
ok $([ -n "$t_sat" ] && [ -n "$t_empty" ]; echo $?) "the bomb saturated pids.max ($PMAX) before the cgroup emptied"
wait_log 20 '^<4>rule bombs: .*/jobs/bomb: pids-max'
ok $? "the log has the event, with a warning priority prefix"
wait_for 20 "the JSON event" test -s "$events"
ok $? "an event line in EventLog"
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

# the event: rule, trigger values, cgroup and the library's report
cat >"$kd_tmp/event.py" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
e = json.loads(lines[0])
assert e["rule"] == "bombs", e
assert e["trigger"]["type"] == "pids-max" and e["trigger"]["max_events_rise"] >= 20, e
assert e["cgroup"] == sys.argv[2], e
assert e["action"] == "kill" and e["dry_run"] is False and e["error"] == 0, e
t = e["report"]["targets"][0]
assert t["path"] == sys.argv[2] and t["emptied"] is True and t["signals"] == ["KILL"], t
EOF
check "the JSON event names the rule, the trigger, the cgroup and the library's report" \
	python3 "$kd_tmp/event.py" "$events" "$v2/$box/jobs/bomb"
t_event=$(python3 -c 'import json, sys; from datetime import datetime
print(round(datetime.fromisoformat(json.loads(open(sys.argv[1]).readline())["detected_at"]).timestamp() * 1e6))' "$events" 2>/dev/null)
if [ -n "$t_sat" ] && [ -n "$t_event" ] && [ -n "$t_empty" ]; then
	diag "cgkilld, v$hier pids, pids.max $PMAX: saturation -> detection $(((t_event - t_sat) / 1000)) ms, saturation -> empty $(((t_empty - t_sat) / 1000)) ms"
fi

# within the post-action delay ($delay s here) a new bomb in the same
# cgroup is not acted on: the log (-v) says it was ignored
start_in jobs/bomb "$FORKBOMB"
bomb=$started
wait_log 30 'rule bombs: .*/jobs/bomb: pids-max.*in its post-action delay, ignored'
ok $? "a new bomb within the post-action delay is ignored, and the log says so"
populated jobs/bomb && alive "$bomb"
ok $? "and left alone"
n=$(grep -c . "$events")
[ "$n" -eq 1 ]
ok $? "still one event ($n)"
kd_stop
"$CGKILL" -q "$v2/$box/jobs/bomb" >/dev/null 2>&1
wait_for 30 "box/jobs/bomb empty" empty jobs/bomb
ok $? "(killed by the test)"
alive "$sent_calm" && alive "$sent_other" && { [ -z "$sent_parent" ] || alive "$sent_parent"; }
ok $? "the sentinels live"
done_testing
