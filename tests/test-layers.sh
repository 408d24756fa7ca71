#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The library's calls go one way: lib/internal.h lists its files from top
# to bottom, and a file may call only files on lines below its own. Checked
# on the objects: every symbol an object needs from another object must be
# defined on a lower line.
cd "${0%/*}/.." || exit 1
. tests/tap.sh

build=${CGKILL_BUILD:-build}
# A check of the source tree's objects: an installed library (autopkgtest)
# has none to look at.
ls "$build"/lib/*.o >/dev/null 2>&1 || skip_all "no objects in $build/lib (make builds them)"
command -v nm >/dev/null || skip_all "nm (binutils) not installed"

# "FILE RANK" for every file named in the list at the top of internal.h;
# rank 0 is the top line.
ranks=$(sed -n '/Calls go one way/,/\*\//p' lib/internal.h |
	awk '/^ \*\t[a-z]/ { for (i = 2; i <= NF && $i ~ /\.c$/; i++) print $i, line + 0; line++ }')
[ -n "$ranks" ]
ok $? "internal.h lists the files in layers"

rank_of() {
	local f=$1 pat r
	while read -r pat r; do
		# shellcheck disable=SC2053
		[[ $f == $pat ]] && { echo "$r"; return; }
	done <<<"$ranks"
}

for src in lib/*.c; do
	f=${src#lib/}
	[ -n "$(rank_of "$f")" ]
	ok $? "$f has a line in the list of internal.h"
done

# symbol -> defining file, from every object
declare -A owner
for o in "$build"/lib/*.o; do
	f=$(basename "$o" .o).c
	while read -r sym; do owner[$sym]=$f; done < <(nm --defined-only -g "$o" | awk '{ print $3 }')
done
ok 0 "read the symbols of ${#owner[@]} definitions"

bad=
for o in "$build"/lib/*.o; do
	f=$(basename "$o" .o).c
	mine=$(rank_of "$f")
	for sym in $(nm -u "$o" | awk '{ print $2 }'); do
		def=${owner[$sym]:-}
		[ -n "$def" ] && [ "$def" != "$f" ] || continue
		theirs=$(rank_of "$def")
		[ "$theirs" -gt "$mine" ] || bad="$bad $f->$def($sym)"
	done
done
[ -z "$bad" ]
ok $? "no file calls a file on its own line or above" || diag "upward or sideways:$bad"

# The check itself: an upward call is seen (tree.c calling op.c).
fake=$(mktemp -d "${TMPDIR:-/tmp}/cgk-layers.XXXXXX")
trap 'rm -rf "$fake"' EXIT
printf 'int cgk_kill(void); int f(void); int f(void) { return cgk_kill(); }\n' >"$fake/tree.c"
cc -c -o "$fake/tree.o" "$fake/tree.c"
up=$(nm -u "$fake/tree.o" | awk '{ print $2 }' | while read -r s; do
	[ "${owner[$s]:-}" = op.c ] && echo "$s"; done)
[ "$up" = cgk_kill ] && [ "$(rank_of op.c)" -lt "$(rank_of tree.c)" ]
ok $? "a call from tree.c up to op.c would be caught"

done_testing
