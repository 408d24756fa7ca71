# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Helpers shared by the bash tests, sourced after tap.sh.

# The build under test (make check sets both).
build=${CGKILL_BUILD:-build}
CGKILL=${CGKILL:-$build/cgkill}

need_cgkill() {
	[ -x "$CGKILL" ] || bail_out "$CGKILL not built (run make first)"
}

# Kill what is left in the cgroup subtree dir and remove it, bottom up
# (bounded); says so if it cannot.
rm_cgroup_tree() {
	local dir=$1 d pid i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		while read -r d; do
			while read -r pid; do
				[ "$pid" -gt 0 ] 2>/dev/null && kill -KILL "$pid" 2>/dev/null
			done <"$d/cgroup.procs"
		done < <(find "$dir" -depth -type d)
		find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
		[ -d "$dir" ] || return 0
		sleep 0.2
	done
	diag "could not remove $dir"
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
