# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Helpers of the cgkilld tests (tests/test-cgkilld-*.sh), which source
# this file alone (it brings tap.sh and lib.sh) from the tree's top.
#
# Every test works in sandbox cgroups of its own: cgkill-test.<pid>.<name>
# below the cgroup v2 mount and, on hybrid layouts, the same path below the
# v1 pids and memory hierarchies; the daemon under test gets a configuration
# whose rules match only below that unique path. Everything is removed at
# exit (kd_cleanup, from the EXIT trap), the daemon stopped first.

. tests/tap.sh
. tests/lib.sh

CGKILLD=${CGKILLD:-$build/cgkilld}
CGKILLCTL=${CGKILLCTL:-$build/cgkillctl}
FORKBOMB=${FORKBOMB:-$build/tests/forkbomb}

need_cgkilld() {
	[ -x "$CGKILLD" ] || bail_out "$CGKILLD not built (run make first)"
	[ "$(id -u)" -eq 0 ] || skip_all "needs root (cgroup sandboxes)"
}

# The bomb tests: the fork bomb program and the command.
need_forkbomb() {
	[ -x "$FORKBOMB" ] || bail_out "$FORKBOMB not built (make tests)"
	need_cgkill
}

v2=$(mount_of cgroup2)
v1pids=$(mount_of pids)
v1mem=$(mount_of memory)

# Does the v2 hierarchy give controller $1 to the root's children (pure v2
# layouts)? The tests never change the root's cgroup.subtree_control.
v2_has() {
	[ -n "$v2" ] && grep -qw "$1" "$v2/cgroup.subtree_control" 2>/dev/null
}

kd_dirs=()
kd_pids=()
kd_daemon=
kd_runs=0
kd_tmp=

# kd_setup NAME: the sandbox $box (relative path) and scratch dir $kd_tmp.
kd_setup() {
	[ -n "$v2" ] || skip_all "no cgroup v2 mount (cgkilld's rules are paths below it)"
	box=cgkill-test.$$.$1
	kd_tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgkill-test-cgkilld.XXXXXX") || bail_out "mktemp"
	trap kd_cleanup EXIT
	trap 'exit 129' HUP INT TERM
}

kd_cleanup() {
	local d pid
	kd_stop
	# only those still ours (our children, or in the sandbox): a pid that
	# died long ago may be another program's now (pid_max can be 32768,
	# and fork bombs churn pids)
	for pid in "${kd_pids[@]}"; do
		if [ "$(_ppid "$pid")" = $$ ] || grep -qs "/$box\(/.*\)\?\$" "/proc/$pid/cgroup"; then
			kill -KILL "$pid" 2>/dev/null
		fi
	done
	# deepest first: v2, then the v1 counterparts
	for d in "$v2/$box" ${v1pids:+"$v1pids/$box"} ${v1mem:+"$v1mem/$box"}; do
		[ -d "$d" ] && rm_cgroup_tree "$d"
	done
	wait 2>/dev/null
	[ -n "$kd_tmp" ] && rm -rf "$kd_tmp"
}

# The parent of process $1 (after the name in /proc/PID/stat, which may
# hold spaces and parentheses), or nothing.
_ppid() {
	local st state ppid
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	read -r state ppid _ <<<"${st##*) }"
	printf '%s' "$ppid"
}

# mkcg REL [pids.max] [memory-limit]: the cgroup box/REL in v2 and, where
# the trigger needs it, in the v1 pids / memory hierarchies (pure v2: the
# controllers are enabled on the way down from box instead).
mkcg() {
	local rel=$1 pmax=${2:-} mem=${3:-} d
	mkdir -p "$v2/$box/$rel" || return 1
	if [ -n "$pmax" ]; then
		if v2_has pids; then
			d=$v2/$box
			for c in ${rel//\// }; do
				echo +pids >"$d/cgroup.subtree_control" 2>/dev/null
				d=$d/$c
			done
			echo "$pmax" >"$v2/$box/$rel/pids.max" || return 1
		elif [ -n "$v1pids" ]; then
			mkdir -p "$v1pids/$box/$rel" && echo "$pmax" >"$v1pids/$box/$rel/pids.max" || return 1
		else
			return 2
		fi
	fi
	if [ -n "$mem" ]; then
		if v2_has memory; then
			d=$v2/$box
			for c in ${rel//\// }; do
				echo +memory >"$d/cgroup.subtree_control" 2>/dev/null
				d=$d/$c
			done
			echo "$mem" >"$v2/$box/$rel/memory.max" || return 1
			echo 0 >"$v2/$box/$rel/memory.swap.max" 2>/dev/null
		elif [ -n "$v1mem" ]; then
			mkdir -p "$v1mem/$box/$rel" && echo "$mem" >"$v1mem/$box/$rel/memory.limit_in_bytes" || return 1
			# no swap: the OOM killer must act at the limit
			[ -f "$v1mem/$box/$rel/memory.memsw.limit_in_bytes" ] &&
				echo "$mem" >"$v1mem/$box/$rel/memory.memsw.limit_in_bytes"
		else
			return 2
		fi
	fi
	return 0
}

# The shell snippet that moves itself into box/REL in every hierarchy
# where that cgroup exists (v1 first: the v2 move is the one tests wait on).
_join() {
	local rel=$1 s=
	[ -n "$v1pids" ] && [ -d "$v1pids/$box/$rel" ] && s+="echo \$\$ >'$v1pids/$box/$rel/cgroup.procs' && "
	[ -n "$v1mem" ] && [ -d "$v1mem/$box/$rel" ] && s+="echo \$\$ >'$v1mem/$box/$rel/cgroup.procs' && "
	s+="echo \$\$ >'$v2/$box/$rel/cgroup.procs'"
	printf '%s' "$s"
}

# run_in REL COMMAND...: start COMMAND in box/REL; its pid in $started,
# once it is there.
started=
run_in() {
	start_in "$@" || return 1
	wait_for 20 "$started in box/$1" grep -qx "$started" "$v2/$box/$1/cgroup.procs"
}

# start_in REL COMMAND...: the same without waiting (a bomb may be gone
# before we look).
start_in() {
	local rel=$1
	shift
	sh -c "$(_join "$rel") && exec \"\$@\"" sh "$@" </dev/null >/dev/null 2>&1 &
	started=$!
	disown "$started"	# no "Killed" message from bash
	kd_pids+=("$started")
}

# kd_first CONTROLLER MKCG-ARGS...: the test's first cgroup (mkcg); the
# test is skipped where the layout has no such controller at all.
kd_first() {
	local controller=$1
	shift
	mkcg "$@"
	case $? in
	0) ;;
	2) skip_all "no $controller controller: neither cgroup v2 $controller nor a v1 $controller hierarchy" ;;
	*) bail_out "cannot create the sandbox below $v2/$box" ;;
	esac
}

# kd_sentinels CONTROLLER REL...: a sentinel in each box/REL, in
# $sent_<last component of REL>, and one in the sandbox itself, in
# $sent_parent, where CONTROLLER is not enabled below the v2 root (a process
# may stand beside child cgroups only there; else $sent_parent is empty).
kd_sentinels() {
	local controller=$1 rel
	shift
	for rel in "$@"; do
		sentinel "$rel" || bail_out "no sentinel in $rel"
		printf -v "sent_${rel##*/}" '%s' "$started"
	done
	sent_parent=
	v2_has "$controller" && return
	sentinel . || bail_out "no sentinel in the sandbox"
	sent_parent=$started
}

# A sentinel: a sleeper in box/REL that must survive; its pid in $started.
sentinel() {
	run_in "$1" sleep 3600
}

populated() {
	grep -qx 'populated 1' "$v2/$box/$1/cgroup.events" 2>/dev/null
}

empty() {
	grep -qx 'populated 0' "$v2/$box/$1/cgroup.events" 2>/dev/null
}

# kd_start CONF [OPTION...]: the daemon in the foreground, its log in
# $kd_log, its runtime directory (control socket, pidfile) $kd_run, of
# its own (never /run/cgkilld: tests run side by side); waiting (bounded)
# until it says it started; in box/$KD_CGROUP if that is set.
kd_start() {
	local conf=$1
	shift
	kd_log=$kd_tmp/cgkilld.log.$((++kd_runs))
	kd_run=$kd_tmp/run.$kd_runs
	: >"$kd_log"
	# the log file stands for the journal's stream: its lines as the
	# journal gets them, "<N>" and the message, which the tests match
	# (without, they carry their time: test-cgkilld-messages.sh)
	if [ -n "${KD_CGROUP:-}" ]; then
		# started inside box/$KD_CGROUP
		JOURNAL_STREAM=$(stat -c %d:%i "$kd_log") sh -c "$(_join "$KD_CGROUP") && exec \"\$@\"" sh \
			"$CGKILLD" --foreground -v --config "$conf" --runtime-dir "$kd_run" "$@" 2>>"$kd_log" &
	else
		JOURNAL_STREAM=$(stat -c %d:%i "$kd_log") "$CGKILLD" --foreground -v --config "$conf" --runtime-dir "$kd_run" "$@" 2>>"$kd_log" &
	fi
	kd_daemon=$!
	wait_for 30 "cgkilld to start" grep -qs 'started:' "$kd_log" || {
		diag "$(cat "$kd_log")"
		return 1
	}
}

kd_stop() {
	[ -n "$kd_daemon" ] || return 0
	kill -TERM "$kd_daemon" 2>/dev/null
	wait_for 20 "cgkilld to stop" eval '! alive '"$kd_daemon" || kill -KILL "$kd_daemon" 2>/dev/null
	wait "$kd_daemon" 2>/dev/null
	kd_daemon=
}

# parent_daemon_live: the sentinel in the sandbox itself, where
# kd_sentinels put one ($sent_parent), and the daemon live (a TAP point
# each).
parent_daemon_live() {
	if [ -n "$sent_parent" ]; then
		alive "$sent_parent"
		ok $? "the sentinel in the parent box lives"
	fi
	alive "$kd_daemon"
	ok $? "the daemon lives"
}

# log_has REGEX: the daemon's log has a line matching REGEX (grep -E).
log_has() {
	grep -qsE -- "$1" "$kd_log"
}

# wait_log SECONDS REGEX
wait_log() {
	wait_for "$1" "the log line /$2/" log_has "$2"
}

# The daemon's state dump (SIGUSR1) into the log, waited for; the lines
# written by this dump on stdout.
dump() {
	local before
	before=$(grep -c '^<6>state: end' "$kd_log")
	kill -USR1 "$kd_daemon"
	wait_for 20 "the state dump" eval '[ "$(grep -c "^<6>state: end" "$kd_log")" -gt '"$before"' ]' || return 1
	# the lines from this dump's "state:" line to its end
	awk -v n=$((before + 1)) '/^<6>state: [0-9]/ { k++ } k == n { print } k == n && /^<6>state: end/ { exit }' "$kd_log"
}

# xattr_of PATH NAME: the value of an extended attribute, "" if none.
xattr_of() {
	python3 -c 'import os, sys
try:
    print(os.getxattr(sys.argv[1], sys.argv[2]).decode())
except OSError:
    pass' "$1" "$2"
}

# poke_v1: box/jobs/poke for start_poke on v1 pids: the v1 pids cgroup
# box/jobs, at a pids limit of 1, holds the bomb alone (the children of
# box/jobs have no v1 pids cgroup, and stay where this shell is).
poke_v1() {
	mkcg jobs 1 && mkcg jobs/poke || bail_out "cannot create $box/jobs/poke"
	poke_join="echo \$\$ >'$v1pids/$box/jobs/cgroup.procs' && echo \$\$ >'$v2/$box/jobs/poke/cgroup.procs'"
}

# poke_cgroups: box/jobs/poke for start_poke, at a pids limit of 1: in v2
# where the root gives pids to its children, else poke_v1; the test is
# skipped where there is no pids controller at all.
poke_cgroups() {
	if v2_has pids; then
		mkcg jobs/poke 1 || bail_out "cannot create $box/jobs/poke"
		poke_join="$(_join jobs/poke)"
	elif [ -n "$v1pids" ]; then
		poke_v1
	else
		skip_all "no pids controller: neither cgroup v2 pids nor a v1 pids hierarchy (the rule's trigger)"
	fi
}

# The victim tests' rule on box/jobs, fired by a fork bomb in box/jobs/poke.
# start_poke: the bomb ($poke_join moves it there), its pid in $poke.
start_poke() {
	sh -c "$poke_join && exec \"\$@\"" sh "$FORKBOMB" </dev/null >/dev/null 2>&1 &
	poke=$!
	disown "$poke"
	kd_pids+=("$poke")
	wait_for 20 "the bomb in box/jobs/poke" grep -qx "$poke" "$v2/$box/jobs/poke/cgroup.procs" ||
		bail_out "no bomb in box/jobs/poke"
}

# alive_all WHAT PID...: each lives, and the bomb ($poke) and the
# sentinels ($sent_other, $sent_parent), else the dead are named (one
# TAP point).
alive_all() {
	local what=$1 p bad=
	shift
	# shellcheck disable=SC2154 # set by kd_sentinels (printf -v)
	for p in "$@" "$poke" "$sent_other" ${sent_parent:+"$sent_parent"}; do
		alive "$p" || bad+=" $p"
	done
	ok "$([ -z "$bad" ]; echo $?)" "$what: the others, the bomb and the sentinels live" || diag "dead:$bad"
}

# victim_start NAME RULE-LINES...: the daemon started with the victim
# tests' rule on box/jobs (the lines added to it), $events emptied and
# $victim cleared.
victim_start() {
	local name=$1
	shift
	{
		printf '[Daemon]\nEventLog=%s\n\n[Rule]\nName=%s\nMatch=%s/jobs\n' "$events" "$name" "$box"
		printf 'Trigger=pids-max\nPidsMaxEvents=5\nAction=kill\nWait=20s\n'
		printf '%s\n' "$@"
	} >"$conf"
	: >"$events"
	victim=
	kd_start "$conf" || bail_out "cgkilld did not start"
}

# victim_case NAME RULE-LINES...: victim_start until its one event, then
# stopped; the victim's name below box/jobs in $victim ("error: MESSAGE"
# if the action failed), the event in $events.
victim_case() {
	victim_start "$@"
	wait_for 30 "the event of case $1" test -s "$events"
	kd_stop
	victim=$(python3 -c 'import json, sys
e = json.loads(open(sys.argv[1]).readline())
print(e["cgroup"][len(sys.argv[2]) + 1:] if e["error"] == 0 else "error: " + e["message"])' "$events" "$v2/$box/jobs" 2>/dev/null)
}
