#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# A hook that cannot start (issue 26, item 15c): ExecPreKill= names a
# program that does not exist, ExecPostKill= one that is not executable.
# cgkilld.conf(5) promises a negative errno for each in the event's hooks,
# and the log says so with its priority prefix; the kill goes on, and
# nothing is written to the log without a prefix (the journal would take it
# as a line of its own at the default priority). A hook that someone other
# than root could replace is not run at all (it would run as root), and
# its kill goes on.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup hookstart
PMAX=8

kd_first pids jobs/x $PMAX
mkcg open/x $PMAX || bail_out "cannot create box/open/x"
mkcg other || bail_out "cannot create box/other"
sentinel other || bail_out "no sentinel in other"
sent_other=$started

h=$kd_tmp
printf '#!/bin/sh\nexit 0\n' >"$h/not-executable"
chmod 644 "$h/not-executable"
printf '#!/bin/sh\ntouch %s/ran\n' "$h" >"$h/replaceable"
chmod 0757 "$h/replaceable"
conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
cat >"$conf" <<EOF
[Daemon]
EventLog=$events
PollInterval=20ms

[Rule]
Name=broken
Match=$box/jobs/*
Trigger=pids-max
PidsMaxEvents=5
Action=kill
Wait=20s
ExecPreKill=$h/missing arg
ExecPostKill=$h/not-executable

[Rule]
Name=open
Match=$box/open/*
Trigger=pids-max
PidsMaxEvents=5
Wait=20s
ExecPreKill=$h/replaceable
EOF
kd_start "$conf" || bail_out "cgkilld did not start"
start_in jobs/x "$FORKBOMB"
wait_for 60 "box/jobs/x empty" empty jobs/x
ok $? "the kill goes on: box/jobs/x is emptied"
wait_for 20 "the JSON event" test -s "$events"
ok $? "an event line in EventLog"
wait_log 20 "^<4>rule broken: .*/jobs/x: ExecPreKill= $h/missing: could not run: No such file or directory; the kill goes on"
ok $? "the log says ExecPreKill= could not run (ENOENT), with a warning prefix"
wait_log 20 "^<4>rule broken: .*/jobs/x: ExecPostKill= $h/not-executable: could not run: Permission denied"
ok $? "the log says ExecPostKill= could not run (EACCES), with a warning prefix"
start_in open/x "$FORKBOMB"
wait_for 60 "box/open/x empty" empty open/x
ok $? "the kill with a replaceable hook goes on: box/open/x is emptied"
wait_log 20 "^<3>hook $h/replaceable: not run: .*"
ok $? "the log says the replaceable hook was not run, as an error"
[ ! -e "$h/ran" ]
ok $? "the hook that others could replace did not run"
alive "$sent_other"
ok $? "the sentinel in box/other lives"
kd_stop
! grep -qva '^<[0-7]>' "$kd_log"
ok $? "every log line has its priority prefix" || diag "$(grep -va '^<[0-7]>' "$kd_log" | head -3)"
python3 - "$events" <<'PY'
import errno, json, sys
ev = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    ev.setdefault(e["rule"], e)
assert ev["broken"]["hooks"] == {"pre": -errno.ENOENT, "post": -errno.EACCES}, ev["broken"]["hooks"]
assert ev["broken"]["error"] == 0, ev["broken"]
assert ev["open"]["hooks"]["pre"] == -errno.EPERM, ev["open"]["hooks"]
PY
ok $? "the events' hooks are the negative errnos: pre -ENOENT, post -EACCES; replaceable -EPERM" ||
	diag "$(head -c 600 "$events")"

done_testing
