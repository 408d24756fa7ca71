#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Names that others choose reach cgkilld's log and event log through the
# library's one filter (issue 26, item 13). A delegatee may name a cgroup
# with any bytes but '/' and NUL (and newline): here ESC [ (a terminal
# colour), CR (which rewrites a line on a terminal), a lone 0x9b (CSI to an
# 8-bit terminal), U+009B (CSI as UTF-8) and invalid UTF-8. A rule on
# box/jobs/* acts on a fork bomb in box/jobs/<that name>:
# - the cgroup is acted on (emptied), the sentinel beside it lives;
# - no line of the log carries a control byte (ESC, CR, C1, 0x9b), and
#   each log line starts with its priority;
# - each event line is valid UTF-8 and parses with Python's strict json;
#   its cgroup decodes to the name with U+FFFD for each invalid byte.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup names
PMAX=8

odd=$'n\e[31m\rA\x9bB\xc2\x9bC\xe2\x82D'
kd_first pids "jobs/$odd" $PMAX
mkcg other || bail_out "cannot create box/other"
sentinel other || bail_out "no sentinel in other"
sent_other=$started

conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
cat >"$conf" <<EOF
[Daemon]
EventLog=$events
PollInterval=20ms

[Rule]
Name=odd
Match=$box/jobs/*
Trigger=pids-max
PidsMaxEvents=5
Action=kill
Wait=20s
EOF
kd_start "$conf" || bail_out "cgkilld did not start"
start_in "jobs/$odd" "$FORKBOMB"
wait_for 60 "the odd cgroup empty" empty "jobs/$odd"
ok $? "the cgroup with the odd name is acted on (emptied)"
wait_for 20 "the JSON event" test -s "$events"
ok $? "an event line in EventLog"
wait_log 20 '^<4>rule odd: .*pids-max.*: done'
ok $? "the log has the action"
alive "$sent_other"
ok $? "the sentinel in box/other lives"
kd_stop

# no_controls FILE: no raw control byte of any kind but the newline
no_controls() {
	python3 - "$1" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
bad = [b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f or b == 0x9b]
bad += [i for i in range(len(data) - 1) if data[i] == 0xc2 and 0x80 <= data[i + 1] <= 0x9f]
sys.exit(1 if bad else 0)
PY
}
no_controls "$kd_log"
ok $? "the log has no ESC, CR, C1 or 0x9b byte" || diag "$(grep -a 'rule odd' "$kd_log" | head -3 | cat -v)"
! grep -qva '^<[0-7]>' "$kd_log"
ok $? "every log line has its priority prefix" || diag "$(grep -va '^<[0-7]>' "$kd_log" | head -3 | cat -v)"
grep -qa '^<4>rule odd: .*/jobs/n?\[31m?A?B?C??D: pids-max' "$kd_log"
ok $? "the name is shown with '?' for each control character and invalid byte"

# --check's report names the matched cgroups (red team round 3, #6)
"$CGKILLD" --check "$conf" >"$kd_tmp/check.out" 2>&1
grep -qa "odd: .*/jobs/n?\[31m?A?B?C??D: pids triggers" "$kd_tmp/check.out"
ok $? "cgkilld --check names the cgroup, with '?' for each control character and invalid byte" ||
	diag "$(cat -v "$kd_tmp/check.out")"
no_controls "$kd_tmp/check.out"
ok $? "and its report has no ESC, CR, C1 or 0x9b byte" || diag "$(cat -v "$kd_tmp/check.out")"

# events: strict UTF-8, strict JSON, the name decoded
python3 - "$events" "$v2/$box/jobs/" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
lines = raw.splitlines()
assert lines, "no event"
want = sys.argv[2] + "n\x1b[31m\rA\ufffdB\x9bC\ufffd\ufffdD"
for line in lines:
    e = json.loads(line.decode("utf-8", "strict"))
    assert e["cgroup"] == want, (e["cgroup"], want)
    assert e["error"] == 0, e
    assert e["report"]["targets"][0]["path"] == want, e["report"]
PY
ok $? "each event line is valid UTF-8 and strict JSON, the cgroup's name decoded with U+FFFD"

done_testing
