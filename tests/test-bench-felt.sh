#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The programs of `make -C bench felt` (bench/felt.c, felt-report.py) keep
# their promises, without a fork bomb (plain sleepers and short commands in
# sandbox cgroups, pids.max 5):
#  - felt storm starts nothing where the cgroup that should hold the limit
#    has none (pids.max "max"), and says so;
#  - felt storm under a limit: a command that outlives the cut-off is
#    killed through cgroup.kill and counted as not caught, one that ends
#    alone as caught, with pids.peak and the refused forks;
#  - felt run reports an exit status and a death by signal, and writes the
#    command's output to -o FILE;
#  - felt probe starts /bin/true every 100 ms and stops on SIGTERM;
#  - felt-report.py takes a storm's detection from the event log, and
#    calls a workload with an event killed.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

[ "$(id -u)" -eq 0 ] || skip_all "needs root (cgroup sandboxes)"
kd_setup felt
felt=$build/bench/felt
check "felt builds" make -s -C bench B="$(realpath "$build")" "$(realpath "$build")/bench/felt" ||
	bail_out "no $felt"
PMAX=5

kd_first pids jobs/limited $PMAX
mkdir -p "$v2/$box/jobs/open" || bail_out "cannot create $box/jobs/open"
if v2_has pids; then
	pdir=
	open_limit=$v2/$box/jobs/open
else
	pdir=$v1pids/$box/jobs/limited
	mkdir -p "$v1pids/$box/jobs/open" || bail_out "cannot create the v1 pids cgroup of $box/jobs/open"
	open_limit=$v1pids/$box/jobs/open
fi
[ "$(cat "$open_limit/pids.max")" = max ] || bail_out "$open_limit/pids.max is not max"

# ---- no limit, no start ----
marker=$kd_tmp/started
out=$("$felt" storm ${pdir:+-p "$open_limit"} -c 500 "$v2/$box/jobs/open" touch "$marker" 2>&1)
rc=$?
[ $rc -eq 1 ] && [[ $out == *"pids.max is not a limit: no bomb started"* ]]
ok $? "storm: no limit (pids.max max): refused, said" || diag "exit $rc: $out"
[ ! -e "$marker" ]
ok $? "storm: no limit: the command never ran"

# ---- a storm past its cut-off, and one that ends alone ----
t0=${EPOCHREALTIME/./}
read -r start empty caught peak refused < <("$felt" storm ${pdir:+-p "$pdir"} -c 300 "$v2/$box/jobs/limited" \
	sh -c 'sleep 100 & sleep 100 & wait')
t1=${EPOCHREALTIME/./}
[ "$caught" = 0 ]
ok $? "storm past the cut-off: not caught"
grep -qx 'populated 0' "$v2/$box/jobs/limited/cgroup.events"
ok $? "storm past the cut-off: its cgroup emptied through cgroup.kill"
[ "$start" -ge "$t0" ] && [ $((empty - start)) -ge 300000 ] && [ "$empty" -le "$t1" ]
ok $? "storm past the cut-off: start and empty on the wall clock, 300 ms apart or more" ||
	diag "t0 $t0 start $start empty $empty t1 $t1"
[ "$peak" = 3 ] && [ "$refused" = 0 ]
ok $? "storm: pids.peak of the limiting cgroup (3: sh and two sleeps), no fork refused" || diag "peak $peak refused $refused"

read -r _ _ caught _ refused < <("$felt" storm ${pdir:+-p "$pdir"} -c 30000 "$v2/$box/jobs/limited" \
	sh -c 'for i in 1 2 3 4 5 6; do sleep 1 & done; wait')
[ "$caught" = 1 ]
ok $? "storm that ends alone: caught (emptied before the cut-off)"
[ "$refused" -ge 1 ] 2>/dev/null
ok $? "storm: the forks pids.max refused are counted ($refused)"

# ---- run ----
r=$("$felt" run ${pdir:+-p "$pdir"} -o "$kd_tmp/out" "$v2/$box/jobs/limited" sh -c 'echo said; exit 3')
[[ $r == "exit 3 "* ]] && [ "$(cat "$kd_tmp/out")" = said ]
ok $? "run: exit status and output (-o)" || diag "$r"
r=$("$felt" run ${pdir:+-p "$pdir"} "$v2/$box/jobs/limited" sh -c 'kill -KILL $$')
[[ $r == "signal 9 "* ]]
ok $? "run: death by SIGKILL" || diag "$r"

# ---- probe ----
mkcg probe || bail_out "cannot create $box/probe"
run_in probe "$felt" probe "$kd_tmp/probe" || bail_out "the probe did not start"
p=$started
wait_for 10 "three starts" eval '[ "$(wc -l <"$kd_tmp/probe")" -ge 3 ]'
ok $? "probe: starts recorded"
kill -TERM "$p"
wait_for 10 "the probe to end" eval '! alive '"$p"
ok $? "probe: ends on SIGTERM"
awk 'NF != 2 || $1 !~ /^[0-9]+$/ || $2 !~ /^[0-9]+$/ { bad = 1 } END { exit bad }' "$kd_tmp/probe"
ok $? "probe: each line START_US DURATION_US"
n=$(wc -l <"$kd_tmp/probe")
first=$(head -n 1 "$kd_tmp/probe" | cut -d' ' -f1)
last=$(tail -n 1 "$kd_tmp/probe" | cut -d' ' -f1)
# every 100 ms: n starts over n-1 periods, each at least 100 ms apart
[ $((last - first)) -ge $(((n - 1) * 100000 - 1000)) ]
ok $? "probe: a start every 100 ms, not faster ($n starts in $(((last - first) / 1000)) ms)"

# ---- the report ----
w=$kd_tmp/report
mkdir -p "$w"
printf '1000000000 2000\n1100000000 300000\n' >"$w/probe"
printf 'fork-rate\tdbomb-3000\t999000000\t1200000000\t500\n' >"$w/blocks"
printf 'fork-rate\tdbomb-3000\t/cg/s1\t1000000000 1000250000 1 412 0\n' >"$w/storms"
printf 'fork-rate\tmake\t/cg/make\texit 0 20000\t40\t9000\t100\t1000000000\n' >"$w/workloads"
printf 'fork-rate\tloop\t/cg/loop\texit 0 10000\t2\t10000\t10\t1000000000\n' >>"$w/workloads"
: >"$w/notes"
{
	echo '{"schema": 2, "detected_at": "1970-01-01T00:16:40.040000+00:00", "trigger": {"type": "fork-rate"}, "cgroup": "/cg/s1", "watched": "/cg/s1", "error": 0, "report": {"targets": [{"backend": "kernel", "signal_ms": 2.5, "empty_ms": 180.0}]}}'
	echo '{"time": 1000.5, "trigger": {"type": "fork-rate"}, "cgroup": "/cg/make", "watched": "/cg/make"}'
} >"$w/events"
rep=$(python3 bench/felt-report.py --work "$w" --events "$w/events" --dat "$w/dat")
ok $? "felt-report.py runs" || diag "$rep"
grep -qF '| fork-rate | dbomb-3000 | 1 | 1 | fork-rate 1 | 40.0 / 40.0 / 40.0 | 250.0 / 250.0 / 250.0 | 412 / 412 | 0 | 0.50 |' <<<"$rep"
ok $? "report: detection from the event's time, time to empty, size, daemon CPU" || diag "$rep"
grep -qF '| fork-rate | dbomb-3000 | 1 | 2 | 2.0 | 300.0 | 300.0 | 1 |' <<<"$rep"
ok $? "report: the probe's starts in the block, the one over 100 ms counted" || diag "$rep"
grep -qF '| fork-rate | make | **killed** |' <<<"$rep" && grep -qF '| fork-rate | loop | not killed |' <<<"$rep"
ok $? "report: a workload with an event is killed, one without is not" || diag "$rep"
grep -qF -- '- fork-rate: 1 of 2 fork-heavy workloads killed (make) (goal: none): **missed**' <<<"$rep"
ok $? "report: the false kill against the goal" || diag "$rep"
grep -qP '^storm\tfork-rate\tdbomb-3000\t1000000000\t1000250000\t1\t412\t0\t40.0\tfork-rate\t0 kernel 2.5 180.0 \{"type":"fork-rate"\}$' "$w/dat"
ok $? "report: --dat has the storm, with what its action did" || diag "$(cat "$w/dat")"

done_testing
