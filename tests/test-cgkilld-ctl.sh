#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's control socket and cgkillctl, against a running daemon:
#  - ping, status (text and JSON: the rules, the watched cgroups with
#    their triggers' figures, the last actions), explain (the victim the
#    real action then takes), reload (taken: 0; refused: 1 and the errors);
#  - clients that misbehave never stall the loop: one that sends nothing
#    (closed at its deadline), a 1 MiB request (refused), 100 connections
#    at once (16 served), one that asks for a large status and never reads
#    it, one that goes away in the middle of its reply; meanwhile bombs are
#    still killed in time;
#  - root only (SO_PEERCRED), and one daemon per runtime directory.
# The bombs run under a pids limit of 1 (they cannot grow): their refused
# forks are the trigger.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
[ -x "$FORKBOMB" ] || bail_out "$FORKBOMB not built (make tests)"
[ -x "$CGKILLCTL" ] || bail_out "$CGKILLCTL not built (make)"
command -v python3 >/dev/null || skip_all "no python3 (the misbehaving clients and the JSON checks)"
kd_setup ctl

kd_first pids jobs/a
mkcg jobs/b && mkcg other || bail_out "cannot create the sandbox's cgroups"
poke_cgroups
kd_sentinels pids other
run_in jobs/a sleep 3600 || bail_out "no sleeper in box/jobs/a"
sleep_a=$started
for _ in 1 2 3; do
	run_in jobs/b sleep 3600 || bail_out "no sleeper in box/jobs/b"
done
# many empty watched cgroups: a status larger than a socket's buffer
MANY=1500
mkdir "$v2/$box/many" && (cd "$v2/$box/many" && mkdir $(seq 1 $MANY)) || bail_out "cannot create $box/many/*"

conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
write_conf() {
	cat >"$conf" <<EOF
[Daemon]
EventLog=$events
MaxWatchesPerOwner=infinity

[Rule]
Name=victims
Match=$box/jobs
Trigger=pids-max
PidsMaxEvents=5
Victim=processes
Omit=poke
Wait=20s
PostActionDelay=1h

[Rule]
Name=bombs
Match=$box/bombs/*
Trigger=pids-max
PidsMaxEvents=5
Wait=20s

[Rule]
Name=many
Match=$box/many/*
Trigger=pids-max
$1
EOF
}
write_conf ""
: >"$events"
kd_start "$conf" || bail_out "cgkilld did not start"
ctl() { "$CGKILLCTL" --runtime-dir "$kd_run" "$@"; }

# ---- the runtime directory, ping ----
[ "$(stat -c '%a %U %F' "$kd_run/cgkilld.sock" 2>&1)" = "600 root socket" ] &&
	[ "$(cat "$kd_run/cgkilld.pid")" = "$kd_daemon" ]
ok $? "the runtime directory holds the socket (0600, root's) and the pidfile (the daemon's pid)" ||
	diag "$(ls -la "$kd_run" 2>&1; cat "$kd_run/cgkilld.pid")"
out=$(ctl ping 2>&1)
ok $? "cgkillctl ping: exit 0" || diag "$out"
grep -q "^pong: cgkilld .*, pid $kd_daemon\$" <<<"$out"
ok $? "ping names the daemon's pid" || diag "$out"

# ---- status ----
wait_for 20 "box/jobs watched" eval 'ctl status | grep -q "^watching $v2/$box/jobs (rule victims) pids:"'
ok $? "status (text) lists box/jobs, watched by rule victims, with its pids trigger"
st=$(ctl status)
grep -q "^rule victims: match $box/jobs, 1 cgroup(s), action kill" <<<"$st" &&
	grep -q "^rule victims: .*Trigger=pids-max, Signal=KILL, Victim=processes, PostActionDelay=3600000ms" <<<"$st"
ok $? "status (text) shows the rule and its effective settings" || diag "$(grep '^rule victims' <<<"$st")"
grep -q "^pids-max $v2/$box/jobs (rule victims): pids.events max [0-9]*, risen 0 within 1000ms (acts at 5)" <<<"$st"
ok $? "status (text) shows box/jobs's live pids-max figures" || diag "$(grep "$box/jobs" <<<"$st")"
[ "$(grep -c "^watching $v2/$box/many/" <<<"$st")" -eq $MANY ] && tail -n 1 <<<"$st" | grep -qx "state: end"
ok $? "status (text) lists the $MANY cgroups of rule many, and ends" || diag "$(tail -n 3 <<<"$st")"

json=$(ctl status --json)
ok $? "cgkillctl status --json: exit 0"
python3 -c 'import json, sys
s = json.loads(sys.stdin.read())
v2, box = sys.argv[1], sys.argv[2]
r = {x["name"]: x for x in s["rules"]}["victims"]
assert r["match"] == box + "/jobs" and r["triggers"] == ["pids-max"] and r["victim"] == "processes", r
assert r["post_action_delay_ms"] == 3600000 and r["cgroups"] == 1, r
c = [x for x in s["cgroups"] if x["cgroup"] == v2 + "/" + box + "/jobs"]
assert len(c) == 1 and c[0]["rule"] == "victims" and c[0]["state"] == "armed", c
t = c[0]["triggers"]
assert t[0]["trigger"] == "pids-max" and isinstance(t[0]["max_events"], int) and t[0]["acts_at"] == 5, t
many = [x for x in s["cgroups"] if x["rule"] == "many"]
assert len(many) == int(sys.argv[3])
assert all(x["state"] == "empty: no file open, armed when populated" for x in many), many[0]
assert s["pid"] == int(sys.argv[4]) and s["actions"]["last"] == [], s["actions"]' \
	"$v2" "$box" "$MANY" "$kd_daemon" <<<"$json"
ok $? "status --json: the rule, box/jobs armed with its pids-max figures, the $MANY others unarmed (empty), no action yet" ||
	diag "$(head -c 2000 <<<"$json")"

# ---- explain, then the real action ----
out=$(ctl explain "$v2/$box/jobs")
ok $? "cgkillctl explain: exit 0" || diag "$out"
grep -q "^rule victims: $v2/$box/jobs: Victim=processes: would act on $v2/$box/jobs/b\$" <<<"$out" &&
	grep -q "victim b (3 process(es)" <<<"$out"
ok $? "explain (text): box/jobs/b (3 processes) and why" || diag "$out"
xjson=$(ctl explain --json "$box/jobs")
explained=$(python3 -c 'import json, sys
e = json.loads(sys.stdin.read())
assert len(e) == 1 and e[0]["rule"] == "victims" and e[0]["victim_rule"] == "processes", e
assert [c["figure"] for c in e[0]["candidates"]] == [3, 1], e
print(" ".join(e[0]["victims"]))' <<<"$xjson")
ok $? "explain --json (a path relative to the v2 mount): the candidates and the victim" || diag "$xjson"
alive "$sleep_a"
ok $? "explain acts on nothing"

start_poke
wait_for 30 "the action on box/jobs" test -s "$events"
victim=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["cgroup"])' "$events")
[ -n "$explained" ] && [ "$victim" = "$explained" ]
ok $? "the real action's victim is the one explain named ($explained)" || diag "victim: $victim"
json=$(ctl status --json)
python3 -c 'import json, sys
last = json.loads(sys.stdin.read())["actions"]["last"]
assert len(last) == 1, last
l = last[0]
assert l["rule"] == "victims" and l["cgroup"] == sys.argv[1] and l["error"] == 0 and l["trigger"] == "pids-max", l
assert l["action"] == "kill" and not l["dry_run"] and l["time"].endswith("Z"), l' "$victim" <<<"$json"
ok $? "status --json: the action is in the last actions, with its result" || diag "$(tail -c 1500 <<<"$json")"
ctl status | grep -q "^last action: .* rule victims on $victim (watched $v2/$box/jobs): kill, done"
ok $? "status (text): the last action"
ctl metrics >"$kd_tmp/ctl.prom"
rc=$?
[ $rc -eq 0 ] && grep -q '^cgkilld_events_total{rule="victims",trigger="pids-max"} [1-9]' "$kd_tmp/ctl.prom" &&
	python3 tests/helper/prom-check.py "$kd_tmp/ctl.prom" >/dev/null
ok $? "cgkillctl metrics: exit 0, valid Prometheus text, the rule's event counted" ||
	diag "rc $rc: $(head -c 600 "$kd_tmp/ctl.prom")"
st=$(dump)
grep -q "^<6>last action: .* rule victims on $victim (watched $v2/$box/jobs): kill, done" <<<"$st" &&
	grep -q "^<6>rule victims: .*Trigger=pids-max, Signal=KILL, Victim=processes" <<<"$st"
ok $? "SIGUSR1 logs the same state: the rule's settings, the last action" || diag "$(head -n 8 <<<"$st")"

# ---- the JSON documents follow data/cgkilld-status.schema.json ----
schema=${CGKILLD_STATUS_SCHEMA:-data/cgkilld-status.schema.json}
if /usr/bin/python3 -c 'import jsonschema' 2>/dev/null; then
	for doc in "status --json" "explain --json $box/jobs"; do
		# shellcheck disable=SC2086 # the words of the request
		out=$(ctl $doc | /usr/bin/python3 -c 'import json, sys
from jsonschema import Draft202012Validator as V
schema = json.load(open(sys.argv[1], encoding="utf-8"))
V.check_schema(schema)
doc = json.load(sys.stdin)
errors = list(V(schema).iter_errors(doc))
for e in errors[:5]:
    print(list(e.absolute_path), e.message[:300])
sys.exit(1 if errors else 0)' "$schema" 2>&1)
		ok $? "cgkillctl ${doc%% $box*}: valid against $schema" || diag "$out"
	done
else
	skip "no /usr/bin/python3 with jsonschema (apt-get install python3-jsonschema): status --json not checked against $schema"
	skip "no /usr/bin/python3 with jsonschema: explain --json not checked against $schema"
fi

# ---- explain refuses what it cannot explain ----
out=$(ctl explain /tmp 2>&1)
[ $? -eq 1 ] && grep -q "/tmp is not below the cgroup v2 mount $v2" <<<"$out"
ok $? "explain of a path outside the v2 mount: exit 1, said" || diag "$out"
out=$(ctl explain "$box/other" 2>&1)
[ $? -eq 1 ] && grep -q "$v2/$box/other is not watched by any rule" <<<"$out"
ok $? "explain of a cgroup no rule watches: exit 1, said" || diag "$out"
out=$(ctl explain "$box/../x" 2>&1)
[ $? -eq 1 ] && grep -q '"\.\." are not taken' <<<"$out"
ok $? "explain of a path with ..: exit 1, said" || diag "$out"

# ---- misbehaving clients; a bomb killed meanwhile each time ----
nbomb=0
# bomb_killed WHAT: a bomb in a new box/bombs/N is killed (its event, its
# cgroup empty) in time; a TAP point.
bomb_killed() {
	local n=$((++nbomb)) pid
	mkcg "bombs/$n" 1 || bail_out "cannot create $box/bombs/$n"
	sh -c "$(_join "bombs/$n") && exec \"\$@\"" sh "$FORKBOMB" </dev/null >/dev/null 2>&1 &
	pid=$!
	disown "$pid"
	kd_pids+=("$pid")
	wait_for 30 "the bomb in box/bombs/$n killed" eval \
		'grep -q "\"cgroup\": \"$v2/$box/bombs/$n\".*\"error\": 0" "$events" && ! alive '"$pid"
	ok $? "$1: a bomb is killed meanwhile"
}

# The clients, in python: each holds its connections while the shell goes
# on, and reports on a file.
client() {
	python3 - "$kd_run/cgkilld.sock" "$@" <<'EOF' &
import os, select, socket, sys, time
path, what, report = sys.argv[1], sys.argv[2], sys.argv[3]
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s
def read_all(s, limit=30):
    s.settimeout(limit)
    data = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                return data, "eof"
            data += b
    except socket.timeout:
        return data, "timeout"
    except ConnectionResetError:
        return data, "reset"
out = open(report + ".part", "w")
if what == "silent":
    # connects, sends nothing: closed at the deadline
    s = conn()
    t = time.monotonic()
    data, how = read_all(s)
    print(how, round(time.monotonic() - t, 1), data.decode(errors="replace").replace("\n", " "), file=out)
elif what == "huge":
    s = conn()
    try:
        s.sendall(b"x" * (1 << 20))
        sent = "sent"
    except (BrokenPipeError, ConnectionResetError):
        sent = "cut"
    data, how = read_all(s)
    print(sent, how, data.decode(errors="replace").replace("\n", " "), file=out)
elif what == "many":
    # the refused are told so at once, the served closed at their
    # request's deadline without a word: each is one or the other
    conns = [conn() for _ in range(100)]
    pending, refused, served = set(conns), 0, 0
    end = time.monotonic() + 30
    while pending and time.monotonic() < end:
        ready, _, _ = select.select(list(pending), [], [], 1)
        for s in ready:
            try:
                b = s.recv(4096)
            except ConnectionResetError:
                b = b""
            refused += b.startswith(b"error\ntoo many clients")
            served += b == b""
            pending.discard(s)
    print(refused, served, file=out)
elif what == "unread":
    # asks for the status, reads none of it
    s = conn()
    s.sendall(b"status --json\n")
    print("asked", file=out)
    out.flush()
    os.rename(report + ".part", report)
    time.sleep(float(sys.argv[4]))
    sys.exit(0)
elif what == "cut":
    # goes away in the middle of its reply
    s = conn()
    s.sendall(b"status --json\n")
    s.recv(1000)
    s.close()
    print("closed", file=out)
out.close()
os.rename(report + ".part", report)
EOF
	kd_pids+=($!)
}

# 1. a client that sends nothing
client silent "$kd_tmp/silent"
bomb_killed "a client that sends nothing"
wait_for 20 "the silent client's end" test -s "$kd_tmp/silent"
read -r how secs _ <"$kd_tmp/silent"
[ "$how" = eof ] && python3 -c 'import sys; assert 0.8 <= float(sys.argv[1]) <= 5' "$secs"
ok $? "a client that sends nothing is closed at its deadline (after ${secs}s)" || diag "$(cat "$kd_tmp/silent")"

# 2. a request of 1 MiB
client huge "$kd_tmp/huge"
wait_for 30 "the huge client's end" test -s "$kd_tmp/huge"
grep -Eq "^(sent|cut) (eof|reset) (error the request is too long.*)?$" "$kd_tmp/huge" &&
	! grep -q "^sent eof \$" "$kd_tmp/huge"
ok $? "a request of 1 MiB is refused and closed" || diag "$(cat "$kd_tmp/huge")"
out=$(ctl ping 2>&1)
ok $? "the daemon answers after the 1 MiB request" || diag "$out"

# 3. 100 connections at once: 16 served, the rest told so and closed
client many "$kd_tmp/many"
wait_for 40 "the 100 connections" test -s "$kd_tmp/many"
read -r refused served <"$kd_tmp/many"
[ "$refused" -eq 84 ] && [ "$served" -eq 16 ]
ok $? "100 connections at once: 16 served (closed at their deadline), 84 refused at once (too many clients)" ||
	diag "refused $refused, served $served"
bomb_killed "after 100 connections at once"
out=$(ctl ping 2>&1)
ok $? "the daemon serves again once they are gone" || diag "$out"

# 4. a client that asks for a large status and never reads it
client unread "$kd_tmp/unread" "$("$DEADLINE" 60)"
unread_pid=$!
wait_for 20 "the unread status asked" test -s "$kd_tmp/unread"
wait_log 20 "^<7>control: a reply of [0-9]+ bytes waits for its client"
ok $? "the status is larger than the socket takes at once: the rest waits for the client" ||
	diag "$(grep control "$kd_log" | tail -n 5)"
bomb_killed "a client that never reads its status"
wait_log 30 "^<7>control: a client did not read its reply in time: closed"
ok $? "the client that never reads is closed at its deadline"
kill "$unread_pid" 2>/dev/null

# 5. a client that goes away in the middle of its reply
client cut "$kd_tmp/cut"
wait_for 20 "the cut client's end" test -s "$kd_tmp/cut"
out=$(ctl ping 2>&1)
ok $? "the daemon answers after a client went away mid-reply" || diag "$out"
bomb_killed "after a client went away mid-reply"

# ---- reload ----
write_conf "PidsMaxEvents=7"
out=$(ctl reload 2>&1)
ok $? "reload of a good configuration: exit 0" || diag "$out"
grep -q "^reloaded: 3 rule(s), " <<<"$out" && ctl status --json | python3 -c 'import json, sys
c = [x for x in json.load(sys.stdin)["cgroups"] if x["rule"] == "many"]
assert c and all(x["triggers"][0]["acts_at"] == 7 for x in c), c[:1]'
ok $? "the reply says the rules were taken, and status shows the new setting (PidsMaxEvents=7)" || diag "$out"
printf '[Rule]\nName=broken\nTrigger=pids-max\nSignal=NOPE\n' >>"$conf"
out=$(ctl reload 2>&1)
[ $? -eq 1 ]
ok $? "reload of a bad configuration: exit 1" || diag "$out"
grep -q "^$conf:[0-9]*: .*NOPE" <<<"$out" && grep -q "reload refused: the configuration has errors; the old rules stay in force" <<<"$out"
ok $? "the reply names the errors and says the old rules stay" || diag "$out"
ctl status | grep -q "^rule victims: match"
ok $? "the old rules are still in force"
kill -HUP "$kd_daemon"
wait_log 20 "^<3>reload refused" && alive "$kd_daemon"
ok $? "SIGHUP still reloads (refused as well)"
write_conf ""

# ---- root only ----
if command -v setpriv >/dev/null; then
	# uid 65534 that may still reach the socket (CAP_DAC_OVERRIDE): the
	# daemon's own check (SO_PEERCRED) refuses it
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_override \
		--ambient-caps=+dac_override "$CGKILLCTL" --runtime-dir "$kd_run" status 2>&1)
	[ $? -eq 1 ] && grep -q "permission denied: the control socket serves root only" <<<"$out"
	ok $? "a client of another uid is refused by the daemon (SO_PEERCRED)" || diag "$out"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CGKILLCTL" --runtime-dir "$kd_run" ping 2>&1)
	[ $? -eq 2 ] && grep -q "Permission denied" <<<"$out"
	ok $? "an ordinary user cannot reach the socket at all (exit 2)" || diag "$out"
else
	skip 2 "no setpriv (util-linux)"
fi
out=$(ctl ping 2>&1)
ok $? "the daemon serves root after refusing others" || diag "$out"

# ---- one daemon per runtime directory ----
"$CGKILLD" --foreground --config "$conf" --runtime-dir "$kd_run" >"$kd_tmp/second.log" 2>&1 &
second=$!
kd_pids+=("$second")
if wait_for 20 "the second daemon to end" eval '! alive '"$second"; then
	wait "$second"
	rc=$?
else
	kill -TERM "$second"
	wait "$second"
	rc="still running"
fi
[ "$rc" -eq 1 ] && grep -q "another cgkilld (pid $kd_daemon) runs with the runtime directory $kd_run; not starting" "$kd_tmp/second.log"
ok $? "a second daemon on the same runtime directory refuses to start, naming the first" ||
	diag "exit $rc" "$(cat "$kd_tmp/second.log")"
ctl ping >/dev/null
ok $? "the first still serves"

# a runtime directory others may write is refused
mkdir -m 0777 "$kd_tmp/open"
timeout "$("$DEADLINE" 20)" "$CGKILLD" --foreground --config "$conf" --runtime-dir "$kd_tmp/open" >"$kd_tmp/open.log" 2>&1
rc=$?
[ "$rc" -eq 1 ] && grep -q "runtime directory $kd_tmp/open: refused: .*writable by others" "$kd_tmp/open.log"
ok $? "a runtime directory writable by others is refused" || diag "exit $rc" "$(cat "$kd_tmp/open.log")"

run=$kd_run
kd_stop
[ -z "$(ls -A "$run")" ]
ok $? "at exit the socket and the pidfile are removed" || diag "$(ls -la "$run")"
out=$("$CGKILLCTL" --runtime-dir "$run" ping 2>&1)
[ $? -eq 2 ] && grep -q "cannot reach cgkilld at $run/cgkilld.sock: .*(is it running?)" <<<"$out"
ok $? "cgkillctl without a daemon: exit 2, said" || diag "$out"

alive "$sent_other"
ok $? "the sentinel in box/other lives"
[ -z "$sent_parent" ] || { alive "$sent_parent"; ok $? "the sentinel in the parent box lives"; }
done_testing
