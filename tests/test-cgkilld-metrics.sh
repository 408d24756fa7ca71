#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's metrics through MetricsFile=, with a real fork bomb: a rule on
# box/jobs/* with Trigger=pids-max, the bomb under pids.max in
# box/jobs/bomb, a sentinel in box/jobs/calm. The file, read by a strict
# reader of the Prometheus text format (tests/helper/prom-check.py,
# itself shown to refuse broken text), must count the event, the action
# and its latency for that rule and trigger, the watched cgroups as they
# are, and a second bomb within the post-action delay as suppressed. A
# MetricsFile= in a directory others may write is refused, by --check
# and by the daemon (said once; the file is written once it is fixed).
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
command -v python3 >/dev/null || skip_all "python3 not installed (the format's reader)"
kd_setup metrics
PMAX=300
PROMCHECK=tests/helper/prom-check.py

kd_first pids jobs/bomb $PMAX
mkcg jobs/calm 100 || bail_out "cannot create $box/jobs/calm"
kd_sentinels pids jobs/calm

# ---- the reader refuses what a scrape would ----

bad=$kd_tmp/bad.prom
# refused TEXT WHAT: the reader rejects TEXT (one TAP point)
refused() {
	printf '%b' "$1" >"$bad"
	! python3 "$PROMCHECK" "$bad" >/dev/null 2>&1
	ok $? "the reader refuses $2"
}
refused '# TYPE a_total counter\na_total{rule="x"y"} 1\n' "an unescaped quote in a label value"
refused '# TYPE a_total counter\na_total{rule="x\ny"} 1\n' "a newline in a label value"
refused 'a_total 1\n# TYPE a_total counter\n' "a sample before its TYPE"
refused '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n' \
	"a histogram whose buckets are not cumulative"
refused '# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n' \
	"a histogram whose _count is not its +Inf bucket"
refused '# TYPE g gauge\ng 1 1700000000000\n' "a timestamp (the textfile collector's rule)"
refused '# TYPE g gauge\ng 1\n# TYPE f gauge\nf 1\ng{x="1"} 2\n' "a family's samples apart"

# ---- a bomb ----

conf=$kd_tmp/cgkilld.conf
prom=$kd_tmp/prom/cgkilld.prom
mkdir -m 0755 "$kd_tmp/prom" || bail_out "mkdir $kd_tmp/prom"
# the post-action delay must outlast the second bomb's check, however
# busy the machine (as in test-cgkilld-bomb.sh)
delay=$("$DEADLINE" 60) || bail_out "$DEADLINE not built (make tests)"
cat >"$conf" <<EOF
[Daemon]
MetricsFile=$prom
MetricsInterval=1s
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

# The samples of the file as the reader prints them, in $kd_tmp/samples
# (false if it does not parse, the reader's complaint in diag).
read_prom() {
	python3 "$PROMCHECK" "$prom" >"$kd_tmp/samples" 2>"$kd_tmp/prom.err"
}
# metric 'NAME{LABELS}': its value in $kd_tmp/samples (labels sorted, as
# the reader prints them), nothing if absent.
metric() {
	awk -v k="$1" 'index($0, k " ") == 1 { print $NF }' "$kd_tmp/samples"
}
# is_metric 'NAME{LABELS}' VALUE: read now, and it has that value
is_metric() {
	read_prom && [ "$(metric "$1")" = "$2" ]
}
R='rule="bombs",trigger="pids-max"'

check "cgkilld --check accepts MetricsFile= in a trusted directory" "$CGKILLD" --check "$conf"
sed "s|^MetricsFile=.*|MetricsFile=$kd_tmp/none/cgkilld.prom|" "$conf" >"$kd_tmp/none.conf"
"$CGKILLD" --check "$kd_tmp/none.conf" >"$kd_tmp/check.out" 2>&1 &&
	grep -q "MetricsFile $kd_tmp/none/cgkilld.prom: not written until its directory exists" "$kd_tmp/check.out"
ok $? "--check accepts a directory that does not exist yet, with a warning" || diag "$(cat "$kd_tmp/check.out")"
kd_start "$conf" || bail_out "cgkilld did not start"
wait_for 20 "the metrics file" test -s "$prom"
read_prom
ok $? "the metrics file parses as Prometheus text" || diag "$(cat "$kd_tmp/prom.err")"
[ "$(metric "cgkilld_events_total{$R}")" = 0 ] && [ "$(metric "cgkilld_actions_total{result=\"ok\",$R}")" = 0 ]
ok $? "the rule's series are there from the start, at 0"
wait_for 20 "box/jobs/calm armed, box/jobs/bomb empty in the file" \
	eval 'is_metric "cgkilld_watched_cgroups{state=\"armed\"}" 1 && is_metric "cgkilld_watched_cgroups{state=\"empty\"}" 1'
ok $? "watched cgroups: 1 armed (the sentinel's), 1 empty (the bomb's, not started)" ||
	diag "$(grep watched "$kd_tmp/samples")"
[ "$(metric 'cgkilld_rules')" = 1 ] && [ "$(metric 'cgkilld_dry_run')" = 0 ] &&
	[ "$(metric "cgkilld_build_info{library=\"$("$CGKILLD" --version | sed 's/.*libcgkill \(.*\))/\1/')\",version=\"$("$CGKILLD" --version | awk '{ print $2 }')\"}")" = 1 ]
ok $? "one rule, no dry run, the build's versions"
fds=$(metric cgkilld_open_fds)
[ -n "$fds" ] && [ "$fds" -gt 3 ] && [ "$fds" -lt "$(metric cgkilld_max_fds)" ]
ok $? "open files counted ($fds), below the limit"
start=$(metric cgkilld_start_time_seconds)
t0=$(date +%s)

start_in jobs/bomb "$FORKBOMB"
wait_for 60 "box/jobs/bomb empty" empty jobs/bomb
ok $? "the daemon emptied box/jobs/bomb"
wait_for 20 "the action in the file" is_metric "cgkilld_actions_total{result=\"ok\",$R}" 1
ok $? "cgkilld_actions_total{result=\"ok\"} rose to 1 for the rule and trigger" ||
	diag "$(grep -E 'actions_total|suppressed' "$kd_tmp/samples" | grep -v ' 0$')"
read_prom
ok $? "the file still parses" || diag "$(cat "$kd_tmp/prom.err")"
events=$(metric "cgkilld_events_total{$R}")
[ "${events:-0}" -ge 1 ]
ok $? "cgkilld_events_total rose ($events)"
[ "$(metric "cgkilld_action_latency_seconds_count{$R}")" = 1 ]
ok $? "the latency histogram counts the action"
[ "$(metric "cgkilld_empty_latency_seconds_count{$R}")" = 1 ]
ok $? "the histogram to empty counts it too"
diag "bomb at pids.max $PMAX: wakeup -> first signal $(metric "cgkilld_action_latency_seconds_sum{$R}") s, -> empty $(metric "cgkilld_empty_latency_seconds_sum{$R}") s"
last=$(metric 'cgkilld_last_action_timestamp_seconds{rule="bombs"}')
python3 -c 'import sys; t0, last, now = map(float, sys.argv[1:]); sys.exit(not t0 - 1 <= last <= now + 1)' \
	"$t0" "${last:-0}" "$(date +%s)"
ok $? "the rule's last action is the bomb's ($last)"
# every event is counted once: an action, or suppressed (nothing under way)
sum=$(awk -v r="$R" 'index($0, "cgkilld_actions_total{") == 1 || index($0, "cgkilld_suppressed_total{") == 1 { if (index($0, r)) n += $NF } END { print n + 0 }' "$kd_tmp/samples")
[ "$(metric cgkilld_actions_in_flight)" = 0 ] && [ "$sum" = "$events" ]
ok $? "each event is one action or one suppressed ($events events, $sum outcomes)"
alive "$sent_calm"
ok $? "the sentinel in box/jobs/calm lives"

# within the post-action delay: suppressed, by that reason
sup="cgkilld_suppressed_total{reason=\"post_action_delay\",$R}"
before=$(metric "$sup")
start_in jobs/bomb "$FORKBOMB"
wait_for 30 "a suppressed event in the file" eval 'read_prom && [ "$(metric "$sup")" -gt '"${before:-0}"' ]'
ok $? "a bomb within the post-action delay is counted as suppressed (post_action_delay)"
[ "$(metric "cgkilld_actions_total{result=\"ok\",$R}")" = 1 ]
ok $? "and not as an action"
kd_stop
"$CGKILL" -q "$v2/$box/jobs/bomb" >/dev/null 2>&1
wait_for 30 "box/jobs/bomb empty" empty jobs/bomb
ok $? "(killed by the test)"
read_prom && [ "$(metric cgkilld_start_time_seconds)" = "$start" ] && [ "$(metric "cgkilld_events_total{$R}")" -gt "$events" ]
ok $? "at the stop, the file is written a last time"

# ---- a directory others may write ----

mkdir -m 0777 "$kd_tmp/open" && chmod 0777 "$kd_tmp/open" || bail_out "mkdir $kd_tmp/open"
sed "s|^MetricsFile=.*|MetricsFile=$kd_tmp/open/cgkilld.prom|" "$conf" >"$kd_tmp/open.conf"
"$CGKILLD" --check "$kd_tmp/open.conf" >"$kd_tmp/check.out" 2>&1
[ $? -eq 1 ] && grep -q "MetricsFile $kd_tmp/open/cgkilld.prom: refused: $kd_tmp/open is writable by others" "$kd_tmp/check.out"
ok $? "--check refuses MetricsFile= in a directory writable by others, and says why" ||
	diag "$(cat "$kd_tmp/check.out")"
kd_start "$kd_tmp/open.conf" || bail_out "cgkilld did not start"
wait_log 20 "MetricsFile $kd_tmp/open/cgkilld.prom: refused: $kd_tmp/open is writable by others"
ok $? "the daemon refuses it, and the log says why"
# three intervals of 1 s: three writes refused, one line
sleep 3
[ ! -e "$kd_tmp/open/cgkilld.prom" ] && [ "$(grep -c 'MetricsFile.*refused' "$kd_log")" = 1 ]
ok $? "nothing written there, and said once"
alive "$kd_daemon"
ok $? "the daemon goes on"
chmod 0755 "$kd_tmp/open"
wait_log 20 "MetricsFile $kd_tmp/open/cgkilld.prom: written again"
ok $? "once the directory is fixed, the file is written (and the log says so)"
prom=$kd_tmp/open/cgkilld.prom
read_prom
ok $? "and it parses"
kd_stop
alive "$sent_calm"
ok $? "the sentinel lives"
done_testing
