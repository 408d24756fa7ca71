#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's messages say what happened (issue 28 §3), with small fork
# bombs in sandbox cgroups:
# - a kill by the kernel's cgroup.kill says so, not "0 processes";
# - a dry run says what it would have done and to whom (the processes),
#   with no timings; Action=log lists the processes (ten, and how many
#   more), each a real member of the cgroup;
# - a rule whose TERM sufficed reports no reap: its event says the reap
#   was requested and not done;
# - the event's times are named (detected_at, acted_at, ended_at, RFC
#   3339) and in order, its "schema" is 2, the trigger's hierarchy is
#   "v1" or "v2", and pids.events' counter is max_events_total and
#   max_events_rise;
# - at a reload and at the stop, the cgroups that still exist are "no
#   longer watched", not "gone";
# - stderr that is not the journal ($JOURNAL_STREAM) gets the time on
#   each line; the journal's stream and --check do not;
# - detached without a reader at /dev/log (hidden in a mount namespace
#   of the daemon's own), the log goes to the stderr it was given if that
#   is a file, else to /var/log/cgkilld.log (a tmpfs of that namespace),
#   and says where.
# A sentinel in box/other (and in the parent where the layout allows it)
# must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup messages
PMAX=8
t_start=$(date +%s)

kd_first pids kern/x $PMAX
for d in dry/x term/x; do
	mkcg "$d" $PMAX || bail_out "cannot create box/$d"
done
mkcg logged/x 20 || bail_out "cannot create box/logged/x"
mkcg other || bail_out "cannot create box/other"
mkcg daemon || bail_out "cannot create box/daemon"
kd_sentinels pids other
if v2_has pids; then hier=v2; else hier=v1; fi

events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF
[Daemon]
EventLog=$events
PollInterval=20ms

[Rule]
Name=kernel
Match=$box/kern/*
Trigger=pids-max
PidsMaxEvents=5
Backend=kernel
Wait=20s

[Rule]
Name=dry
Match=$box/dry/*
Trigger=pids-max
PidsMaxEvents=5
DryRun=yes

[Rule]
Name=term
Match=$box/term/*
Trigger=pids-max
PidsMaxEvents=5
Signal=TERM
Escalate=20s KILL
Wait=20s
Reap=yes

[Rule]
Name=logged
Match=$box/logged/*
Trigger=pids-max
PidsMaxEvents=5
Action=log
EOF
kd_start "$conf" || bail_out "cgkilld did not start"
! grep -qE '^<[0-7]>[0-9]{4}-' "$kd_log"
ok $? "on the journal's stream (\$JOURNAL_STREAM names it) the lines carry no time of their own"

# ---- the action lines ----
start_in kern/x "$FORKBOMB"
wait_log 30 '^<4>rule kernel: .*/kern/x: pids-max.*; kill with KILL: '
line=$(grep -E '^<4>rule kernel: .*/kern/x: pids-max' "$kd_log" | head -1)
grep -qE '; kill with KILL: done \(cgroup\.kill written: every process of 1 cgroup\(s\), by the kernel \(not counted\); empty after [0-9]+ms\)$' <<<"$line" &&
	! grep -q '0 process' <<<"$line"
ok $? "a kill by cgroup.kill says the kernel killed every process, uncounted, and when the cgroup was empty" ||
	diag "$line"

start_in dry/x "$FORKBOMB"
wait_log 30 '^<4>rule dry: .*/dry/x: pids-max'
line=$(grep -E '^<4>rule dry: .*/dry/x: pids-max' "$kd_log" | head -1)
grep -qE '; dry run, would kill with KILL: [1-9][0-9]* process\(es\) in 1 cgroup\(s\): [0-9]+ \(forkbomb\)' <<<"$line" &&
	! grep -qE 'done|backend|[0-9]ms\)' <<<"$line"
ok $? "a dry run says what it would have done and to which processes, with no timings" || diag "$line"
populated dry/x
ok $? "and box/dry/x still runs"
"$CGKILL" -q "$v2/$box/dry/x" >/dev/null 2>&1

# twelve sleepers beside the bomb (pids.max 20): at least two of any ten
# listed are theirs, which stay to be checked
sleepers=()
for i in $(seq 12); do
	run_in logged/x sleep 3600 || bail_out "no sleeper in box/logged/x"
	sleepers+=("$started")
done
start_in logged/x "$FORKBOMB"
wait_log 30 '^<4>rule logged: .*/logged/x: pids-max'
line=$(grep -E '^<4>rule logged: .*/logged/x: pids-max' "$kd_log" | head -1)
n=$(sed -nE 's/.*; log: ([0-9]+) process\(es\) in 1 cgroup\(s\): .*/\1/p' <<<"$line")
shown=$(grep -oE '[0-9]+ \((forkbomb|sleep)\)' <<<"$line" | wc -l)
more=$(sed -nE 's/.*, and ([0-9]+) more$/\1/p' <<<"$line")
[ "${n:-0}" -gt 12 ] && [ "$shown" -eq 10 ] && [ "$more" -eq $((n - 10)) ]
ok $? "Action=log lists ten of the $n processes with their names, and how many more ($more)" || diag "$line"
mine=0
for p in $(grep -oE '[0-9]+ \(sleep\)' <<<"$line" | cut -d' ' -f1); do
	printf '%s\n' "${sleepers[@]}" | grep -qx "$p" && grep -qx "$p" "$v2/$box/logged/x/cgroup.procs" && mine=$((mine + 1))
done
[ $mine -ge 2 ]
ok $? "the listed are the cgroup's: $mine of its sleepers among them"
"$CGKILL" -q "$v2/$box/logged/x" >/dev/null 2>&1

start_in term/x "$FORKBOMB"
wait_log 30 '^<4>rule term: .*/term/x: pids-max.*; kill with TERM: done'
ok $? "Signal=TERM kills box/term/x (the bomb dies of TERM)"
wait_for 30 "the events of the four rules" eval '[ "$(wc -l <"$events")" -ge 4 ]'
! log_has '^<6>rule term: .*memory of'
ok $? "a rule whose TERM sufficed reports no memory released (Reap=yes needs a SIGKILL)"

# ---- the events ----
python3 - "$events" "$hier" "$t_start" >"$kd_tmp/events.out" 2>&1 <<'EOF'
import json, sys
from datetime import datetime, timezone
ev = {}
for l in open(sys.argv[1]):
    e = json.loads(l)
    ev.setdefault(e["rule"], e)
hier, t0 = sys.argv[2], int(sys.argv[3])
now = datetime.now(timezone.utc).timestamp()
def at(e, k):
    return datetime.fromisoformat(e[k]).timestamp()
for name, e in ev.items():
    assert e["schema"] == 2 and "time" not in e, e
    d, a, n = at(e, "detected_at"), at(e, "acted_at"), at(e, "ended_at")
    assert t0 - 1 <= d <= a <= n <= now + 1, (name, e["detected_at"], e["acted_at"], e["ended_at"])
    t = e["trigger"]
    assert t["hierarchy"] == hier, t
    assert 5 <= t["max_events_rise"] <= t["max_events_total"] and "max_events" not in t and "rise" not in t, t
    print("ok", name)
t = ev["term"]
assert t["reap"] == {"requested": True, "done": False}, t
assert t["report"]["targets"][0]["signals"] == ["TERM"], t
print("ok reap")
d = ev["dry"]
assert d["dry_run"] is True and d["reap"] == {"requested": False, "done": False}, d
print("ok dry")
EOF
rc=$?
grep -qx "ok kernel" "$kd_tmp/events.out" && grep -qx "ok logged" "$kd_tmp/events.out"
ok $? "each event: schema 2, detected_at <= acted_at <= ended_at (RFC 3339), hierarchy \"$hier\", max_events_total and max_events_rise" ||
	diag "$(cat "$kd_tmp/events.out")"
grep -qx "ok reap" "$kd_tmp/events.out"
ok $? "the TERM rule's event: reap requested, not done, and TERM its only signal" || diag "$(cat "$kd_tmp/events.out")"
[ $rc -eq 0 ]
ok $? "the dry run's event says so, and asks for no reap" || diag "$(cat "$kd_tmp/events.out")"

# ---- reload and stop: the cgroups are still there ----
kill -HUP "$kd_daemon"
wait_log 20 'reloaded: '
log_has "^<7>rule logged: $v2/$box/logged/x is no longer watched: the rules are reloaded\$"
ok $? "at a reload, a cgroup that exists is no longer watched (not gone)"
kd_stop
[ -d "$v2/$box/logged/x" ] && log_has "^<7>rule logged: $v2/$box/logged/x is no longer watched: cgkilld stops\$" &&
	! log_has "logged/x is gone"
ok $? "at the stop, -v says the cgroups that exist are no longer watched, not gone"

# ---- the time on each line, off the journal ----
stamp='^<[0-7]>[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{2}:[0-9]{2} '
# started: the last line of a start (the daemon is stopped right after)
start_plain() {
	kd_log=$kd_tmp/plain.$1
	env -u JOURNAL_STREAM ${2:+JOURNAL_STREAM=$2} "$CGKILLD" --foreground --config "$conf" 2>"$kd_log" &
	kd_daemon=$!
	wait_for 30 "cgkilld to start" grep -qs 'started:' "$kd_log"
	kd_stop
}
start_plain file
lines=$(wc -l <"$kd_log")
[ "$lines" -ge 2 ] && [ "$(grep -cE "$stamp" "$kd_log")" -eq "$lines" ]
ok $? "on a file (no \$JOURNAL_STREAM) every line carries its time after the priority" || diag "$(head -3 "$kd_log")"
t=$(grep 'started:' "$kd_log" | sed -E 's/^<[0-7]>([^ ]+) .*/\1/')
python3 -c 'import sys, time; from datetime import datetime
d = time.time() - datetime.fromisoformat(sys.argv[1]).timestamp()
sys.exit(not 0 <= d < 60)' "$t"
ok $? "and it is the time of the line ($t)"
start_plain other "$(stat -c %d:%i "$events")"
grep -qE "${stamp}cgkilld .* started:" "$kd_log"
ok $? "\$JOURNAL_STREAM of another file (stderr redirected since) does not count"
printf '[Rule]\nName=x\n' >"$kd_tmp/bad.conf"
out=$("$CGKILLD" --check "$kd_tmp/bad.conf" 2>&1)
grep -qE '^<3>[^0-9].*bad.conf' <<<"$out" && ! grep -qE "$stamp" <<<"$out"
ok $? "--check's messages carry no time" || diag "$out"

# ---- detached, with no reader at /dev/log ----
# in a mount namespace of its own: /dev/log hidden (a socket there, if
# any, is replaced by /dev/null), /var/log a tmpfs of its own
nslog=$kd_tmp/ns.sh
cat >"$nslog" <<EOF
#!/bin/sh
if [ -e /dev/log ]; then mount --bind /dev/null /dev/log || exit 1; fi
mount -t tmpfs -o mode=0755 tmpfs /var/log || exit 1
exec "$CGKILLD" --config "$conf"
EOF
chmod +x "$nslog"
# detached: box/daemon holds one process, not a session leader (the
# daemon's second fork); its pid in $dpid
detached() {
	local p
	[ "$(wc -l <"$v2/$box/daemon/cgroup.procs")" -eq 1 ] || return 1
	p=$(cat "$v2/$box/daemon/cgroup.procs")
	[ "$(awk '{ print $6 }' "/proc/$p/stat" 2>/dev/null)" != "$p" ] || return 1
	dpid=$p
}
# start_detached STDERR: in box/daemon, its pid in $dpid
start_detached() {
	dpid=
	env -u NOTIFY_SOCKET -u INVOCATION_ID -u JOURNAL_STREAM \
		sh -c "echo \$\$ >'$v2/$box/daemon/cgroup.procs' && exec unshare -m --propagation private '$nslog'" \
		</dev/null >/dev/null 2>"$1"
	wait_for 30 "the detached cgkilld" detached
	[ -n "$dpid" ] && kd_pids+=("$dpid")
}
stop_detached() {
	[ -n "$dpid" ] && kill -TERM "$dpid"
	wait_for 20 "the detached cgkilld to stop" empty daemon
}
start_detached "$kd_tmp/detached.log"
wait_for 30 "its start in the file it was given" grep -qs 'started:' "$kd_tmp/detached.log"
grep -qE "${stamp}no syslog reader at /dev/log: the log goes to $kd_tmp/detached.log\$" "$kd_tmp/detached.log" &&
	grep -qE "${stamp}cgkilld .* started:" "$kd_tmp/detached.log"
ok $? "detached without a syslog reader, it logs to the file it was given as stderr, and says so" ||
	diag "$(cat "$kd_tmp/detached.log")"
stop_detached

start_detached /dev/null
flog=/proc/$dpid/root/var/log/cgkilld.log
wait_for 30 "its start in /var/log/cgkilld.log" grep -qs 'started:' "$flog"
grep -qE "${stamp}no syslog reader at /dev/log: the log goes to /var/log/cgkilld.log\$" "$flog" &&
	grep -qE "${stamp}cgkilld .* started:" "$flog"
ok $? "with stderr on /dev/null, it logs to /var/log/cgkilld.log, and says so" || diag "$(cat "$flog" 2>&1)"
stop_detached

alive "$sent_other"
ok $? "the sentinel in box/other lives"
if [ -n "$sent_parent" ]; then
	alive "$sent_parent"
	ok $? "the sentinel in the parent box lives"
fi
done_testing
