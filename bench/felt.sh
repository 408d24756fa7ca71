#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What a user feels through a fork storm (issue 29): `make -C bench felt`,
# which writes results/felt-<date>.md (and each storm in .dat), or by hand,
# as root, from anywhere, after `make`:
#
#	FELT=build/bench/felt DBOMB=build/bench/cgkb-dbomb bench/felt.sh
#
# The probe: in a sibling cgroup that no rule matches, /bin/true (linked
# dynamically) started every 100 ms for the whole run as a user's shell
# starts a command (felt probe: fork, exec, wait; nice 0, no cpu cgroup of
# its own), each start timed. First BASELINE seconds (5) with nothing else.
# The storms: each in a fresh matched cgroup below the sandbox
# <v2>/cgkill-bench.<pid>.felt/jobs/, capped by pids.max (the v1 pids
# hierarchy on hybrid layouts, else v2 pids), running one bomb kind at
# nice 0 and SCHED_OTHER beside the probe, in the same cpu cgroup:
#	dbomb-3000	the libc-sharing C bomb (cgkb-dbomb) at pids.max 3,000
#	dbomb-10000	the same at 10,000
#	shbomb-3000	bash's :(){ :|:& };: at 3,000
# A storm ends when its cgroup is empty, or at the cut-off (CUTOFF, 10 s;
# NONE_CUTOFF, 2 s, without a daemon), where felt writes cgroup.kill and
# the storm counts as not caught. Its start (the harness's fork), the
# daemon's detection (the "detected_at" of its event in EventLog=, when the
# action began) and the empty time are recorded, with pids.peak and the
# forks pids.max refused. The next storm starts GAP seconds (0.5) later,
# once the probe has started a program after the storm's end.
# The rows (ROWS, in this order):
#	none		no daemon: NONE_N storms a bomb kind (5); the machine
#			stalls for tens of seconds, so few
#	pids-max	cgkilld as shipped with the README's rule (PIDS_RULE):
#			Trigger=pids-max, PidsMaxEvents=50, PidsWindow=1s
#	fork-rate	the same daemon with the README's rule of issue 29
#			(FORK_RULE): Trigger=fork-rate, ForkRate=2000,
#			ForkWindow=250ms, and the pids-max keys above for
#			where it stands in; skipped, and said, where the
#			daemon (CGKILLD) does not know the trigger
# N storms a bomb kind in each daemon row (200; PIDS_N and FORK_N for one
# row). Both rules add only
# MaxActionsPerMinute=infinity (the storm limit, 6 a minute by default,
# would hold back most of 200 storms) and the event log.
# The false kills: in each daemon row, before its storms, each workload
# (WORKLOADS) in a matched cgroup at pids.max WL_PIDS_MAX (3,000) under the
# same rule; killed or not (an event for its cgroup, or its death by
# SIGKILL), its run time and pids.peak, the forks of the whole machine
# meanwhile (/proc/stat), and the daemon's CPU (utime+stime of
# /proc/PID/stat) over its run:
#	make	make -j16 of a fresh clone of this tree's HEAD (CLONE_FROM)
#	loop	a shell loop starting LOOP_N (10,000) /bin/true, at once
#	xargs	xargs -P 32 over XARGS_N (3,000) jobs of sh -c 'echo | cksum'
#	tests	the tests of this tree that make no cgroup of their own (C unit
#		tests of the parsers, text and JSON, and the man page, layer,
#		licence and symbol checks), prove -j4: make check's other tests
#		move their processes into sandboxes of their own, out of the
#		matched cgroup, so a rule would not see their forks
# NOTE= a line for the report's header; DAT=FILE each storm, workload and
# start over 100 ms, one a line (felt-report.py --dat). The report: the probe's median,
# 99th percentile (nearest rank), worst and starts over 100 ms for each
# row and bomb kind; detection and time to empty (median, p90, worst); the
# workloads; made by felt-report.py.
set -u
DAT=${DAT:+$(realpath -m -- "$DAT")}	# named from where we were started
cd "${0%/*}/.." || exit 1
build=${CGKILL_BUILD:-build}
. tests/cgkilld-lib.sh

N=${N:-200}
NONE_N=${NONE_N:-5}
PIDS_N=${PIDS_N:-$N}
FORK_N=${FORK_N:-$N}
ROWS=${ROWS:-none,pids-max,fork-rate}
BOMBS=${BOMBS:-dbomb-3000,dbomb-10000,shbomb-3000}
WORKLOADS=${WORKLOADS:-make,loop,xargs,tests}
CUTOFF=${CUTOFF:-10}
NONE_CUTOFF=${NONE_CUTOFF:-2}
GAP=${GAP:-0.5}
BASELINE=${BASELINE:-5}
WL_PIDS_MAX=${WL_PIDS_MAX:-3000}
LOOP_N=${LOOP_N:-10000}
XARGS_N=${XARGS_N:-3000}
CLONE_FROM=${CLONE_FROM:-$PWD}
FELT=${FELT:-$build/bench/felt}
DBOMB=${DBOMB:-$build/bench/cgkb-dbomb}
PIDS_RULE=${PIDS_RULE:-$'Trigger=pids-max\nPidsMaxEvents=50\nPidsWindow=1s'}
FORK_RULE=${FORK_RULE:-$'Trigger=fork-rate\nForkRate=2000\nForkWindow=250ms\nPidsMaxEvents=50\nPidsWindow=1s'}
CLK_TCK=$(getconf CLK_TCK)

probe=

felt_cleanup() {
	local d
	# the bombs first, at once (kd_cleanup's kill by pid is slow on them)
	for d in "$v2/$box"/jobs/*/; do
		[ -e "$d/cgroup.kill" ] && echo 1 >"$d/cgroup.kill" 2>/dev/null
	done
	[ -n "$probe" ] && kill -TERM "$probe" 2>/dev/null
	kd_cleanup
}

# With a v1 pids hierarchy, its cgroup first: the daemon finds the limit
# when it starts to watch the v2 one.
pids_dir=
mkjob() {
	local rel=$1 pmax=$2
	pids_dir=
	if [ -n "$v1pids" ] && ! v2_has pids; then
		pids_dir=$v1pids/$box/$rel
		mkdir -p "$pids_dir" && echo "$pmax" >"$pids_dir/pids.max" || return 1
	fi
	mkcg "$rel" "$pmax" || return 1
	# its debug line (-v) says the daemon has seen the new cgroup
	if [ -n "$kd_daemon" ] && ! wait_for 20 "the daemon to watch box/$rel" \
		grep -qsF "rule felt: watching $v2/$box/$rel" "$kd_log"; then
		bail_out "cgkilld does not watch box/$rel: $(tail -n 3 "$kd_log")"
	fi
}

rmjob() {
	rm_cgroup_tree "$v2/$box/$1"
	[ -z "$pids_dir" ] || rm_cgroup_tree "$pids_dir"
}

# The daemon's CPU so far, ms (utime + stime of all its threads).
daemon_cpu_ms() {
	local f
	[ -n "$kd_daemon" ] || { echo -; return; }
	read -ra f <"/proc/$kd_daemon/stat" || return 1
	# fields 14 and 15; its name (field 2) has no space
	echo $(((f[13] + f[14]) * 1000 / CLK_TCK))
}

forks_so_far() {
	awk '/^processes/ { print $2 }' /proc/stat
}

now_us() {
	echo "${EPOCHREALTIME/./}"
}

# Until the probe has finished a start that began after $1 (us): the
# user's shell answers again.
probe_after() {
	local last
	last=$(tail -n 1 "$probe_out" 2>/dev/null)
	[ -n "$last" ] && [ "${last%% *}" -gt "$1" ]
}

# ---- the storms ----
nstorm=0
# storm ROW KIND PMAX CUTOFF COMMAND...
storm() {
	local row=$1 kind=$2 pmax=$3 cutoff=$4 rel line empty
	shift 4
	rel=jobs/storm-$((++nstorm))
	mkjob "$rel" "$pmax" || bail_out "cannot create box/$rel"
	line=$("$FELT" storm ${pids_dir:+-p "$pids_dir"} -c $((cutoff * 1000)) "$v2/$box/$rel" "$@") ||
		bail_out "storm $nstorm ($kind) failed"
	printf '%s\t%s\t%s\t%s\n' "$row" "$kind" "$v2/$box/$rel" "$line" >>"$work/storms"
	rmjob "$rel"
	sleep "$GAP"
	read -r _ empty _ <<<"$line"
	wait_for 600 "the probe to answer again" probe_after "$empty"
}

# storms ROW COUNT CUTOFF: COUNT storms of each bomb kind, a block each.
storms() {
	local row=$1 count=$2 cutoff=$3 kind pmax i t0 c0 c1
	local -a cmd
	for kind in ${BOMBS//,/ }; do
		pmax=${kind##*-}
		case $kind in
		dbomb-*) cmd=("$DBOMB") ;;
		shbomb-*) cmd=(/bin/bash -c ':(){ :|:& };:') ;;
		*) bail_out "BOMBS: $kind is not dbomb-N or shbomb-N" ;;
		esac
		t0=$(now_us)
		c0=$(daemon_cpu_ms)
		for ((i = 0; i < count; i++)); do
			storm "$row" "$kind" "$pmax" "$cutoff" "${cmd[@]}"
		done
		c1=$(daemon_cpu_ms)
		printf '%s\t%s\t%s\t%s\t%s\n' "$row" "$kind" "$t0" "$(now_us)" \
			"$([ "$c0" = - ] && echo - || echo $((c1 - c0)))" >>"$work/blocks"
	done
}

# ---- the work a rule must not kill ----
clone_tree() {
	local dst=$work/clone.$1 head
	head=$(git -C "$CLONE_FROM" rev-parse --verify -q HEAD) || bail_out "$CLONE_FROM: not a git tree"
	git clone -q --no-checkout "$CLONE_FROM" "$dst" && git -C "$dst" checkout -q --detach "$head" ||
		bail_out "cannot clone $CLONE_FROM"
	echo "$dst"
}

# workload ROW NAME COMMAND...: its output in $work/NAME-ROW.out
workload() {
	local row=$1 name=$2 rel=jobs/$2-$1 c0 f0 r t0
	shift 2
	mkjob "$rel" "$WL_PIDS_MAX" || bail_out "cannot create box/$rel"
	c0=$(daemon_cpu_ms)
	f0=$(forks_so_far)
	t0=$(now_us)
	r=$("$FELT" run ${pids_dir:+-p "$pids_dir"} -o "$work/$name-$row.out" "$v2/$box/$rel" "$@") ||
		bail_out "workload $name did not start"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$row" "$name" "$v2/$box/$rel" "$r" \
		"$(cat "${pids_dir:-$v2/$box/$rel}/pids.peak" 2>/dev/null || echo -)" \
		$(($(forks_so_far) - f0)) "$([ "$c0" = - ] && echo - || echo $(($(daemon_cpu_ms) - c0)))" \
		"$t0" >>"$work/workloads"
	rmjob "$rel"
}

workloads() {
	local row=$1 name src
	for name in ${WORKLOADS//,/ }; do
		case $name in
		none) ;;
		make)
			src=$(clone_tree "$row")
			# a plain make, not one under bench's make
			workload "$row" make env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$src" -j16
			rm -rf "$src"
			;;
		loop)
			workload "$row" loop bash -c 'for ((i = 0; i < $1; i++)); do /bin/true; done' loop "$LOOP_N"
			;;
		xargs)
			workload "$row" xargs bash -c 'seq "$1" | xargs -P 32 -n 1 sh -c '\''echo "$0" | cksum'\'' >/dev/null' \
				xargs "$XARGS_N"
			;;
		tests)
			# as make check runs them: the build relative to the top
			src=$(realpath --relative-to=. "$build")
			workload "$row" tests env CGKILL_BUILD="$src" CGKILL="$src/cgkill" prove -j4 --exec '' \
				"$src"/tests/test-{parse,json,text,signame,conf-keys,protected-list,proc-cgroup,daemon-files} \
				tests/test-{man,layers,licence,symbols}.sh
			;;
		*) bail_out "WORKLOADS: unknown workload $name (make, loop, xargs, tests, none)" ;;
		esac
	done
}

# ---- the rows ----
# rule_conf LINES: the daemon's configuration, the rule's trigger LINES
rule_conf() {
	printf '[Daemon]\nEventLog=%s\n\n[Rule]\nName=felt\nMatch=%s/jobs/*\n%s\nMaxActionsPerMinute=infinity\n' \
		"$events" "$box" "$1" >"$conf"
}

run_row() {
	local row=$1 rule n
	case $row in
	none)
		storms none "$NONE_N" "$NONE_CUTOFF"
		return
		;;
	pids-max) rule=$PIDS_RULE n=$PIDS_N ;;
	fork-rate) rule=$FORK_RULE n=$FORK_N ;;
	*) bail_out "ROWS: unknown row $row (none, pids-max, fork-rate)" ;;
	esac
	rule_conf "$rule"
	if ! "$CGKILLD" --config "$conf" --check >"$work/check.$row" 2>&1; then
		printf '%s\t%s\n' "$row" "skipped: $CGKILLD --check refused the rule: $(head -n 1 "$work/check.$row" |
			sed 's/^<[0-7]>//')" >>"$work/notes"
		return
	fi
	printf '%s\t%s\n' "$row" "rule: $(echo "$rule" | paste -sd' ')" >>"$work/notes"
	kd_start "$conf" || bail_out "cgkilld did not start"
	workloads "$row"
	storms "$row" "$n" "$CUTOFF"
	kd_stop
	# a trigger the daemon could not arm, and what stood in (fork-rate:
	# "... pids-max alone"), once
	grep -E '^<[0-5]>' "$kd_log" | grep -iE 'cannot be loaded|pids-max alone|falls? back' | head -n 3 |
		sed "s/^<[0-7]>/$row	daemon: /" >>"$work/notes"
}

# The storms of each row asked for, for the header.
counts() {
	local r out=
	for r in ${ROWS//,/ }; do
		case $r in
		none) out+=", $NONE_N without a daemon" ;;
		pids-max) out+=", $PIDS_N under pids-max" ;;
		fork-rate) out+=", $FORK_N under fork-rate" ;;
		esac
	done
	echo "${out#, }"
}

# The whole run in a function: bash has read all of this file before it
# starts, so an edit of the file meanwhile cannot change a run under way.
main() {
	local p r t0 load_start

	need_cgkilld
	for p in "$FELT" "$DBOMB"; do
		[ -x "$p" ] || bail_out "$p not built (make -C bench B=../$build ../$p)"
	done
	kd_setup felt
	trap felt_cleanup EXIT
	# the benchmarks' name, which CI's leftover check looks for
	box=cgkill-bench.$$.felt
	work=$kd_tmp
	events=$work/events.json
	probe_out=$work/probe
	conf=$work/cgkilld.conf
	: >"$work/storms"
	: >"$work/blocks"
	: >"$work/workloads"
	: >"$work/notes"
	: >"$events"
	load_start=$(cut -d' ' -f1-3 /proc/loadavg)
	mkcg probe || bail_out "cannot create box/probe"
	run_in probe "$FELT" probe "$probe_out" || bail_out "the probe did not start"
	probe=$started
	t0=$(now_us)
	sleep "$BASELINE"
	printf 'baseline\tno storm\t%s\t%s\t-\n' "$t0" "$(now_us)" >>"$work/blocks"
	for r in ${ROWS//,/ }; do
		run_row "$r"
	done
	kill -TERM "$probe"
	wait_for 600 "the probe to stop" eval '! alive '"$probe"
	probe=

	python3 bench/felt-report.py --work "$work" --events "$events" ${DAT:+--dat "$DAT"} \
		--header "date: $(date -u '+%Y-%m-%d %H:%M UTC')" \
		--header "$("$CGKILLD" --version | head -n 1), Linux $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo), pids.max in the v$(v2_has pids && echo 2 || echo 1) pids hierarchy" \
		--header "storms a bomb kind ($BOMBS): $(counts); cut-off ${CUTOFF} s (${NONE_CUTOFF} s without a daemon); gap ${GAP} s; workloads at pids.max $WL_PIDS_MAX" \
		--header "load average at start: $load_start; at the end: $(cut -d' ' -f1-3 /proc/loadavg)" \
		${NOTE:+--header "note: $NOTE"}
}

main "$@"; exit
