#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's other actions and its manners, in sandbox cgroups with small
# fork bombs (pids.max 8):
# - Action=freeze freezes the cgroup (cgroup v2 cgroup.freeze) and leaves
#   it so, and the log says how to thaw; Action=log only reports;
# - started inside box/own with a rule on box/*, the daemon never watches
#   its own cgroup;
# - Signal=TERM with Escalate=2s KILL: processes that ignore TERM die by
#   KILL, and the watchdog is fed while the daemon waits for that;
# - the service manager's protocol (a stand-in NOTIFY_SOCKET): READY=1,
#   STATUS=, WATCHDOG=1 at half WATCHDOG_USEC, RELOADING=1 on SIGHUP
#   with MONOTONIC_USEC= (CLOCK_MONOTONIC, as Type=notify-reload needs),
#   STOPPING=1; and every log line has a syslog priority prefix.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup actions
PMAX=8

kd_first pids jobs/frozen $PMAX
mkcg logged/x $PMAX || bail_out "cannot create box/logged/x"
mkcg slow/x $PMAX || bail_out "cannot create box/slow/x"
mkcg patient/x $PMAX || bail_out "cannot create box/patient/x"
mkcg own || bail_out "cannot create box/own"
mkcg other || bail_out "cannot create box/other"
sentinel other || bail_out "no sentinel in other"
sent_other=$started

conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF
[Daemon]
PollInterval=20ms

[Rule]
Name=freezer
Match=$box/jobs/*
Trigger=pids-max
PidsMaxEvents=5
Action=freeze

[Rule]
Name=reporter
Match=$box/logged/*
Trigger=pids-max
PidsMaxEvents=5
Action=log

[Rule]
Name=graceful
Match=$box/slow/*
Trigger=pids-max
PidsMaxEvents=5
Signal=TERM
Escalate=2s KILL
Wait=10s

[Rule]
Name=patient
Match=$box/patient/*
Trigger=pids-max
PidsMaxEvents=5
Signal=TERM
Wait=2min

[Rule]
Name=siblings
Match=$box/*
Trigger=oom-kill

[Daemon]
EventLog=$kd_tmp/events.json
EOF

# the stand-in service manager: every datagram, one line each
msgs=$kd_tmp/notify.msgs
cat >"$kd_tmp/notify.py" <<'PY'
import os, socket, sys, time
path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
open(out + ".ready", "w").close()
with open(out, "a", buffering=1) as f:
    while True:
        m = s.recv(4096).decode("utf-8", "replace")
        f.write(m.replace("\n", "|") + " @%d\n" % int(time.time() * 1e6))
PY
python3 "$kd_tmp/notify.py" "$kd_tmp/notify.sock" "$msgs" &
kd_pids+=($!)
disown $!
wait_for 30 "the stand-in NOTIFY_SOCKET" test -e "$msgs.ready" || bail_out "no NOTIFY_SOCKET"

NOTIFY_SOCKET=$kd_tmp/notify.sock WATCHDOG_USEC=400000 KD_CGROUP=own kd_start "$conf" ||
	bail_out "cgkilld did not start"
grep -qx "$kd_daemon" "$v2/$box/own/cgroup.procs"
ok $? "the daemon runs in box/own"
wait_for 20 "READY=1" grep -q '^READY=1' "$msgs"
ok $? "sd_notify: READY=1"
grep -q '^STATUS=5 rule(s), [0-9]* cgroup(s) watched' "$msgs"
ok $? "sd_notify: STATUS= says the rules and cgroups" || diag "$(cat "$msgs")"
wait_for 20 "two WATCHDOG=1" eval '[ "$(grep -c "^WATCHDOG=1" "$msgs")" -ge 2 ]'
ok $? "sd_notify: WATCHDOG=1 at half WATCHDOG_USEC"

st=$(dump)
grep -q "watching $v2/$box/other (rule siblings)" <<<"$st" && ! grep -q "watching $v2/$box/own " <<<"$st"
ok $? "a glob that matches the daemon's own cgroup: that one is never watched" || diag "$st"
log_has "rule siblings: /$box/own is cgkilld's own or PID 1's cgroup: not watched"
ok $? "the log says so"

# ---- freeze ----
start_in jobs/frozen "$FORKBOMB"
bomb=$started
wait_log 30 '^<4>rule freezer: .*/jobs/frozen: pids-max.*; freeze: done'
ok $? "Action=freeze: the log has the freeze"
log_has "^<4>rule freezer: .*thaw with: echo 0 > $v2/$box/jobs/frozen/cgroup.freeze"
ok $? "and says how to thaw"
wait_for 20 "box/jobs/frozen frozen" grep -qx 'frozen 1' "$v2/$box/jobs/frozen/cgroup.events"
ok $? "the cgroup is frozen"
populated jobs/frozen && alive "$bomb"
ok $? "and its processes are still there, for inspection"
echo 0 >"$v2/$box/jobs/frozen/cgroup.freeze"
"$CGKILL" -q "$v2/$box/jobs/frozen" >/dev/null 2>&1
wait_for 30 "box/jobs/frozen empty" empty jobs/frozen
ok $? "(thawed and killed by the test)"

# ---- log ----
start_in logged/x "$FORKBOMB"
bomb=$started
wait_log 30 '^<4>rule reporter: .*/logged/x: pids-max.*; log: [1-9][0-9]* process\(es\) in 1 cgroup\(s\): [0-9]+ \(forkbomb\)'
ok $? "Action=log: the log lists the processes"
populated logged/x && alive "$bomb"
ok $? "and nothing is signalled"
"$CGKILL" -q "$v2/$box/logged/x" >/dev/null 2>&1
wait_for 30 "box/logged/x empty" empty logged/x
ok $? "(killed by the test)"

# ---- TERM, then KILL after 2 s; the watchdog fed meanwhile ----
run_in slow/x sh -c 'trap "" TERM; sleep 3600' || bail_out "no TERM-proof sleeper"
stubborn=$started
start_in slow/x "$FORKBOMB"
wait_log 30 '^<4>rule graceful: .*/slow/x: pids-max.*; kill with TERM: done'
ok $? "Signal=TERM, Escalate=2s KILL: the log has the kill"
! alive "$stubborn" && empty slow/x
ok $? "the process that ignores TERM died (by KILL)"
cat >"$kd_tmp/graceful.py" <<'PY'
import json, sys
from datetime import datetime
ev = [json.loads(l) for l in open(sys.argv[1]) if '"graceful"' in l]
assert len(ev) == 1, ev
t = ev[0]["report"]["targets"][0]
assert t["signals"] == ["TERM", "KILL"] and t["emptied"] is True, t
start = round(datetime.fromisoformat(ev[0]["acted_at"]).timestamp() * 1e6)
end = start + t["empty_ms"] * 1000
pings = [int(l.rsplit("@", 1)[1]) for l in open(sys.argv[2]) if l.startswith("WATCHDOG=1")]
during = [p for p in pings if start + 300000 < p < end]
assert t["empty_ms"] >= 1900 and len(during) >= 2, (t["empty_ms"], len(during))
PY
check "the event: TERM then KILL, and WATCHDOG=1 while the daemon waited" \
	python3 "$kd_tmp/graceful.py" "$kd_tmp/events.json" "$msgs"

# ---- reload and stop ----
mono_usec() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000)'; }
before=$(mono_usec)
kill -HUP "$kd_daemon"
wait_for 20 "RELOADING=1 then READY=1" eval 'grep -q "^RELOADING=1|MONOTONIC_USEC=[0-9][0-9]*|" "$msgs" && [ "$(grep -c "^READY=1" "$msgs")" -ge 2 ]'
ok $? "sd_notify: SIGHUP sends RELOADING=1 with MONOTONIC_USEC, then READY=1"
# Type=notify-reload (systemd 253) takes a RELOADING=1 for the reload it
# asked for only if MONOTONIC_USEC is CLOCK_MONOTONIC in us, taken after
# its signal
after=$(mono_usec)
stamp=$(sed -n 's/^RELOADING=1|MONOTONIC_USEC=\([0-9]*\)|.*/\1/p' "$msgs" | head -n1)
[ -n "$stamp" ] && [ "$stamp" -ge "$before" ] && [ "$stamp" -le "$after" ]
ok $? "MONOTONIC_USEC is CLOCK_MONOTONIC in us, between the SIGHUP and the READY=1" ||
	diag "before $before, MONOTONIC_USEC $stamp, after $after"
# a stop while the daemon waits (Wait=2min) for a process that ignores
# TERM: the wait ends at once
run_in patient/x sh -c 'trap "" TERM; sleep 3600' || bail_out "no TERM-proof sleeper"
stubborn=$started
start_in patient/x "$FORKBOMB"
bomb=$started
wait_for 30 "the bomb gone (TERM), the sleeper left" eval '! alive $bomb && [ "$(grep -c . "$v2/$box/patient/x/cgroup.procs")" -le 2 ] && alive $stubborn'
ok $? "Signal=TERM took the bomb, the process that ignores TERM is left: the daemon waits"
t0=${EPOCHREALTIME/./}
kill -TERM "$kd_daemon"
wait_for 20 "STOPPING=1" grep -q '^STOPPING=1' "$msgs"
ok $? "sd_notify: STOPPING=1 on SIGTERM"
wait "$kd_daemon"
ok $? "the daemon exits 0 on SIGTERM"
t1=${EPOCHREALTIME/./}
[ $(((t1 - t0) / 1000000)) -lt 20 ]
ok $? "and a SIGTERM during a kill's wait ends it: stopped in $(((t1 - t0) / 1000)) ms, not 2 min"
log_has '^<3>rule patient: .*/patient/x: pids-max.*kill with TERM: failed'
ok $? "the log has the cut-short kill as an error"
kd_daemon=
bad=$(grep -vE '^<[0-7]>' "$kd_log")
[ -z "$bad" ]
ok $? "every log line starts with a syslog priority <N>" || diag "$bad"
alive "$sent_other"
ok $? "the sentinel in box/other lives"
done_testing
