#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The ABI of libcgkill.so against the baseline committed in abi/ (abidw of
# the 1.0 release): nothing removed or changed incompatibly, and anything
# added comes under a version node of its own, never into a released one.
# After a release, refresh the baseline: make abi-baseline.
cd "${0%/*}/.." || exit 1
. tests/tap.sh

build=${CGKILL_BUILD:-build}
so=$build/libcgkill.so
base=abi/libcgkill.abi
[ -f "$so" ] || bail_out "$so not built (run make first)"
command -v abidiff >/dev/null || skip_all "abidiff (abigail-tools) not installed"

out=$(abidiff --headers-dir2 include "$base" "$so" 2>&1)
rc=$?
# abidiff's status bits: 1 error, 2 usage, 4 some change, 8 incompatible.
[ $((rc & 11)) -eq 0 ]
ok $? "abidiff $base $so: no incompatible change (status $rc)" || diag "$out"

# Every symbol of a released node is in the baseline.
released=$(sed -n "s/.*elf-symbol name='\([^']*\)' version='\([^']*\)'.*/\2/p" "$base" | sort -u)
new=$(nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sed 's/@@*/ /' |
	while read -r sym node; do
		grep -qxF "$node" <<<"$released" &&
			! grep -qF "elf-symbol name='$sym' version='$node'" "$base" && echo "$sym@$node"
	done)
[ -z "$new" ]
ok $? "nothing added to a released version node" || diag "added to a released node: $new"

# The check itself: a removed function is an incompatible change.
fake=$(mktemp "${TMPDIR:-/tmp}/cgk-abi.XXXXXX")
trap 'rm -f "$fake"' EXIT
grep -v "elf-symbol name='cgk_guard_name'" "$base" >"$fake"
abidiff "$base" "$fake" >/dev/null 2>&1
[ $(($? & 8)) -ne 0 ]
ok $? "abidiff calls a removed function incompatible"

done_testing
