# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Helpers shared by the bash tests, sourced after tap.sh.

# The build under test (make check sets both).
build=${CGKILL_BUILD:-build}
CGKILL=${CGKILL:-$build/cgkill}

# A make or a build that a test starts runs as a user's would, not with
# what the make check-asan above us passes down: its MAKEFLAGS, and the
# variables of its command line, which make exports too (an ASan CFLAGS
# builds a test's project with the sanitizers and fails to link it; an
# empty CGKILL_LDFLAGS links the image's daemon dynamically).
unset MAKEFLAGS MFLAGS MAKELEVEL B CFLAGS LDFLAGS CGKILL_LDFLAGS

need_cgkill() {
	[ -x "$CGKILL" ] || bail_out "$CGKILL not built (run make first)"
}

# What stretches a wait by the machine's load and $CGKILL_TEST_SLOW: the C
# tests' own code (tests/support/deadline.c), as a program.
DEADLINE=${DEADLINE:-$build/tests/deadline}

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds, for SECONDS on
# an idle machine, stretched by the load now (bounded).
wait_for() {
	local base=$1 what=$2 secs end
	[ -x "$DEADLINE" ] || bail_out "$DEADLINE not built (make tests)"
	secs=$("$DEADLINE" "$base") || bail_out "$DEADLINE $base failed"
	shift 2
	end=$((${EPOCHREALTIME/./} + secs * 1000000))
	until "$@"; do
		if [ "${EPOCHREALTIME/./}" -gt "$end" ]; then
			diag "timed out after ${secs}s (${base}s on an idle machine) waiting for: $what"
			return 1
		fi
		sleep 0.02
	done
}

# One round of rm_cgroup_tree: what is left in dir killed, the tree removed
# bottom up; true once dir is gone.
_rm_cgroup_round() {
	local dir=$1 d pid
	while read -r d; do
		while read -r pid; do
			[ "$pid" -gt 0 ] 2>/dev/null && kill -KILL "$pid" 2>/dev/null
		done < <(cat "$d/cgroup.procs" 2>/dev/null)	# threaded: EOPNOTSUPP
	done < <(find "$dir" -depth -type d)
	find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
	[ ! -d "$dir" ] || { sleep 0.2; false; }
}

# Kill what is left in the cgroup subtree dir and remove it, bottom up
# (bounded: wait_for); says so if it cannot.
rm_cgroup_tree() {
	wait_for 5 "$1 removed" _rm_cgroup_round "$1"
}

# Mount point of a hierarchy from mountinfo: "cgroup2", or a v1 controller.
mount_of() {
	awk -v want="$1" '{ for (i = 7; i <= NF; i++) if ($i == "-") break
		if (want == "cgroup2" && $(i + 1) == "cgroup2") { print $5; exit }
		if ($(i + 1) == "cgroup") { n = split($(i + 3), o, ","); for (j = 1; j <= n; j++)
			if (o[j] == want) { print $5; exit } } }' /proc/self/mountinfo
}

# What make install and the packages ship only when the tree has it (the
# Makefile's guards), one path a line, below the zsh completion, fish
# completion and data directories $1, $2 and $3.
optional_files() {
	[ -f completion/_cgkill ] && echo "$1/_cgkill"
	[ -f completion/cgkill.fish ] && echo "$2/cgkill.fish"
	[ -f data/cgkill-report.schema.json ] && echo "$3/cgkill-report.schema.json"
	[ -f completion/_cgkilld ] && echo "$1/_cgkilld"
	[ -f completion/cgkilld.fish ] && echo "$2/cgkilld.fish"
	return 0
}

words() {
	printf '%s\n' "$@" | sed '/^$/d' | sort -u
}

# Both directions: "$1 has what $2 lacks" and the reverse, one point each.
same_set() {
	local what=$1 a_name=$2 a=$3 b_name=$4 b=$5 d
	d=$(comm -23 <(words "$a") <(words "$b"))
	[ -z "$d" ]
	ok $? "$what: everything in $a_name is in $b_name" || diag "missing from $b_name: $(echo $d)"
	d=$(comm -13 <(words "$a") <(words "$b"))
	[ -z "$d" ]
	ok $? "$what: everything in $b_name is in $a_name" || diag "missing from $a_name: $(echo $d)"
}

# Start "$@" in cgroup $1 (under $tmp, which the test makes); its pid in
# $spawned, and in spawned_pids for the cleanup, once the cgroup lists it:
# 0, or 1 if it did not start or show up there. A monitor subshell, which
# stays where this shell is, waits for it and writes its wait status to
# $tmp/spawn.N.status (and keeps bash from printing "Killed").
declare -A spawn_status
spawned_pids=()
nspawn=0
spawn_in() {
	local dir=$1 f
	shift
	f=$tmp/spawn.$((++nspawn))
	(
		(echo "$BASHPID" >"$dir/cgroup.procs" && exec "$@") </dev/null >/dev/null 2>&1 &
		echo $! >"$f.tmp" && mv "$f.tmp" "$f.pid"
		wait $!
		echo $? >"$f.tmp" && mv "$f.tmp" "$f.status"
	) 2>/dev/null &
	spawned=""
	wait_for 5 "$* to start" test -e "$f.pid"
	spawned=$(cat "$f.pid" 2>/dev/null)
	[ -n "$spawned" ] || { diag "could not start $*"; return 1; }
	spawned_pids+=("$spawned")
	spawn_status[$spawned]=$f.status
	wait_for 5 "pid $spawned in $dir" grep -qx "$spawned" "$dir/cgroup.procs"
}

# The EXIT trap of a test that spawns: what spawn_in started, the wait for
# their monitors, and $tmp.
kill_spawned() {
	local pid
	# only those not reaped yet (no status file): a pid reaped long ago
	# may be another program's now
	for pid in "${spawned_pids[@]}"; do
		[ -e "${spawn_status[$pid]}" ] || kill -KILL "$pid" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}

# Did process $1 (from spawn_in) end with wait status $2 (128 + signal)
# within $3 seconds (on an idle machine: wait_for)?
died_with() {
	local f=${spawn_status[$1]} got
	wait_for "$3" "pid $1 to end" test -e "$f" || return 1
	got=$(cat "$f")
	[ "$got" = "$2" ] || diag "pid $1: wait status $got, wanted $2"
	[ "$got" = "$2" ]
}

alive() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ]
}
