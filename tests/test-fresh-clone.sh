#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The newcomer's path: a fresh clone of this tree's HEAD, built with a plain
# `make` (no goal, no variables, nothing from the make that runs the tests),
# has the library (static and shared), the command and the daemon, and they
# run. Then bench/RESULTS.md of that clone: today's rows in under 400 lines,
# with the place for a session's new rows, and every relative link there and
# in the history files of bench/results/ leads to a file. Uncommitted
# changes are not in the clone: this tests what a clone would get.

. tests/tap.sh

command -v git >/dev/null || skip_all "no git"
head=$(git rev-parse --verify -q HEAD 2>/dev/null) || skip_all "not a git checkout (a source package)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgkill-test-clone.XXXXXX") || bail_out "mktemp"
trap 'rm -rf "$tmp"' EXIT
clone=$tmp/clone

check "git clone of this tree" git clone -q --no-checkout "$PWD" "$clone" || bail_out "no clone"
check "check out HEAD ($head)" git -C "$clone" checkout -q --detach "$head" || bail_out "no checkout"

# A plain make: only what a newcomer's shell has, two jobs.
env -i PATH="$PATH" HOME="${HOME:-/}" TMPDIR="${TMPDIR:-/tmp}" make -C "$clone" -j2 >"$tmp/make.log" 2>&1
ok $? "plain make in the fresh clone" || diag "$(tail -n 30 "$tmp/make.log")"

for f in libcgkill.a libcgkill.so cgkill cgkilld; do
	[ -s "$clone/build/$f" ]
	ok $? "plain make built build/$f" || diag "build/: $(cd "$clone/build" 2>&1 && printf '%s ' *)"
done
check "build/cgkill --version runs" "$clone/build/cgkill" --version
check "build/cgkilld --version runs" "$clone/build/cgkilld" --version

# --- bench/RESULTS.md ------------------------------------------------------
results=$clone/bench/RESULTS.md
n=$(wc -l <"$results")
[ "$n" -lt 400 ]
ok $? "bench/RESULTS.md is under 400 lines ($n)"
grep -q '^## Issue 29 ' "$results"
ok $? "bench/RESULTS.md opens with the newest rows (issue 29)"
[ "$(grep -c -- '-history\.md' "$results")" -gt 0 ]
ok $? "bench/RESULTS.md links the history files"

# Relative markdown links, "](path)" or "](path#anchor)", of a file: each
# one that does not lead to a file, on stdout.
broken_links() {
	local f=$1 link
	grep -o '](\([^)]*\))' "$f" | sed 's/^](//; s/)$//; s/#.*//' | while read -r link; do
		case $link in '' | http://* | https://* | mailto:*) continue ;; esac
		[ -e "$(dirname "$f")/$link" ] || echo "$f: $link"
	done
}
bad=$(for f in "$results" "$clone"/bench/results/*-history.md; do broken_links "$f"; done)
[ -z "$bad" ]
ok $? "every relative link of bench/RESULTS.md and bench/results/*-history.md leads to a file" ||
	diag "$bad"

done_testing
