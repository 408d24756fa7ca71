#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Calls go one way. lib/internal.h lists the library's files from top to
# bottom, daemon/cgkilld.h the daemon's (and a header of cli/ the
# command's, once it has more than one file): a file may call only files
# on lines below its own. Checked on the objects: every symbol an object
# needs from another object of its directory must be defined on a lower
# line. The daemon and the command use only the library's public
# interface: they compile without -Ilib, and every library symbol their
# objects need is one lib/libcgkill.map exports.
cd "${0%/*}/.." || exit 1
. tests/tap.sh

build=${CGKILL_BUILD:-build}
# A check of the source tree's objects: an installed library (autopkgtest)
# has none to look at.
ls "$build"/lib/*.o >/dev/null 2>&1 || skip_all "no objects in $build/lib (make builds them)"
command -v nm >/dev/null || skip_all "nm (binutils) not installed"

# "FILE RANK" for every file named in the list of header $1 (after "Calls
# go one way"); rank 0 is the top line.
list_ranks() {
	sed -n '/Calls go one way/,/\*\//p' "$1" |
		awk '/^ \*\t[a-z]/ { for (i = 2; i <= NF && $i ~ /\.c$/; i++) print $i, line + 0; line++ }'
}

# rank_of FILE RANKS
rank_of() {
	local f=$1 pat r
	while read -r pat r; do
		# shellcheck disable=SC2053
		[[ $f == $pat ]] && { echo "$r"; return; }
	done <<<"$2"
}

# The header of directory $1 that holds its list ("" if none).
list_header() {
	grep -l 'Calls go one way' "$1"/*.h 2>/dev/null | head -n 1
}

declare -A owner	# symbol -> defining file, per directory (dir/file.c)
# read_owners DIR OBJECTS...
read_owners() {
	local dir=$1 o sym
	shift
	for o in "$@"; do
		while read -r sym; do owner[$dir:$sym]=$(basename "$o" .o).c; done \
			< <(nm --defined-only -g "$o" | awk '{ print $3 }')
	done
}

# The calls of OBJECTS that go up or sideways in DIR's order RANKS:
# "from->to(symbol)" words, none if all go down.
upward() {
	local dir=$1 ranks=$2 o f mine sym def theirs
	shift 2
	for o in "$@"; do
		f=$(basename "$o" .o).c
		mine=$(rank_of "$f" "$ranks")
		for sym in $(nm -u "$o" | awk '{ print $2 }'); do
			def=${owner[$dir:$sym]:-}
			[ -n "$def" ] && [ "$def" != "$f" ] || continue
			theirs=$(rank_of "$def" "$ranks")
			[ -n "$mine" ] && [ -n "$theirs" ] && [ "$theirs" -gt "$mine" ] || printf ' %s->%s(%s)' "$f" "$def" "$sym"
		done
	done
}

# check_dir DIR: its list covers its files, and its objects call down only.
check_dir() {
	local dir=$1 header ranks src objs bad
	header=$(list_header "$dir")
	[ "$dir" = lib ] && header=lib/internal.h
	mapfile -t objs < <(ls "$build/$dir"/*.o 2>/dev/null)
	read_owners "$dir" "${objs[@]}"
	if [ -z "$header" ]; then
		[ "$(ls "$dir"/*.c | wc -l)" -le 1 ]
		ok $? "$dir/ is one file, or lists its files in a header ('Calls go one way')"
		return
	fi
	ranks=$(list_ranks "$header")
	[ -n "$ranks" ]
	ok $? "$header lists the files of $dir/ in layers"
	for src in "$dir"/*.c; do
		[ -n "$(rank_of "${src#"$dir"/}" "$ranks")" ]
		ok $? "${src#"$dir"/} has a line in the list of $header"
	done
	bad=$(upward "$dir" "$ranks" "${objs[@]}")
	[ -z "$bad" ]
	ok $? "$dir/: no file calls a file on its own line or above" || diag "upward or sideways:$bad"
}

for dir in lib daemon cli; do
	check_dir "$dir"
done
ok 0 "read the symbols of ${#owner[@]} definitions"

# ---- the public interface only (daemon/, cli/) ----

exported=$(sed -n 's/^[[:space:]]*\(cgk_[A-Za-z0-9_]*\);$/\1/p' lib/libcgkill.map | sort -u)
[ -n "$exported" ]
ok $? "lib/libcgkill.map exports $(wc -w <<<"$exported") symbols"

# The library symbols OBJECTS need that the map does not export.
private() {
	local o sym
	for o in "$@"; do
		for sym in $(nm -u "$o" | awk '{ print $2 }'); do
			if [ -n "${owner[lib:$sym]:-}" ] || [[ $sym == cgk_* ]]; then
				grep -qx "$sym" <<<"$exported" || printf ' %s(%s)' "$(basename "$o")" "$sym"
			fi
		done
	done
}

for dir in daemon cli; do
	mapfile -t objs < <(ls "$build/$dir"/*.o 2>/dev/null)
	[ "${#objs[@]}" -gt 0 ]
	ok $? "$dir/ has objects in $build/$dir"
	bad=$(private "${objs[@]}")
	[ -z "$bad" ]
	ok $? "$dir/ uses only symbols lib/libcgkill.map exports" || diag "not exported:$bad"
	bad=
	for src in "$dir"/*.c; do
		cc -fsyntax-only -std=gnu11 -D_GNU_SOURCE -Iinclude "$src" 2>/dev/null || bad="$bad $src"
	done
	[ -z "$bad" ]
	ok $? "$dir/ compiles with -Iinclude alone (no -Ilib)" || diag "needs more:$bad"
done

# ---- the checks themselves: each plants a violation ----

fake=$(mktemp -d "${TMPDIR:-/tmp}/cgk-layers.XXXXXX")
trap 'rm -rf "$fake"' EXIT

# an upward call in lib: tree.c calling the entry point cgk_kill()
printf 'int cgk_kill(void); int f(void); int f(void) { return cgk_kill(); }\n' >"$fake/tree.c"
cc -c -o "$fake/tree.o" "$fake/tree.c"
up=$(upward lib "$(list_ranks lib/internal.h)" "$fake/tree.o")
[ "$up" = " tree.c->${owner[lib:cgk_kill]}(cgk_kill)" ]
ok $? "a call from lib's tree.c up to ${owner[lib:cgk_kill]} would be caught" || diag "seen:$up"

# an upward call in daemon: sys.c calling act.c's act()
printf 'void act(void); void f(void); void f(void) { act(); }\n' >"$fake/sys.c"
cc -c -o "$fake/sys.o" "$fake/sys.c"
up=$(upward daemon "$(list_ranks daemon/cgkilld.h)" "$fake/sys.o")
[ "$up" = " sys.c->act.c(act)" ]
ok $? "a call from daemon's sys.c up to act.c would be caught" || diag "seen:$up"

# a sideways call between two triggers of one line
printf 'extern int trigger_pids; int f(void); int f(void) { return trigger_pids; }\n' >"$fake/trigger-swap.c"
cc -c -o "$fake/trigger-swap.o" "$fake/trigger-swap.c"
up=$(upward daemon "$(list_ranks daemon/cgkilld.h)" "$fake/trigger-swap.o")
[ "$up" = " trigger-swap.c->trigger-pids.c(trigger_pids)" ]
ok $? "a call between two files of one line (trigger-swap.c, trigger-pids.c) would be caught" || diag "seen:$up"

# a library function the map does not export (util.c's cgk_now_ms)
[ -n "${owner[lib:cgk_now_ms]:-}" ] && ! grep -qx cgk_now_ms <<<"$exported"
ok $? "cgk_now_ms is the library's own, not exported"
printf 'unsigned long cgk_now_ms(void); unsigned long f(void); unsigned long f(void) { return cgk_now_ms(); }\n' >"$fake/act.c"
cc -c -o "$fake/act.o" "$fake/act.c"
bad=$(private "$fake/act.o")
[ "$bad" = " act.o(cgk_now_ms)" ]
ok $? "the daemon calling an unexported library function would be caught" || diag "seen:$bad"

# a source that needs -Ilib
printf '#include "internal.h"\n' >"$fake/main.c"
! cc -fsyntax-only -std=gnu11 -D_GNU_SOURCE -Iinclude "$fake/main.c" 2>/dev/null
ok $? "a daemon or command source that includes lib/internal.h would not compile"

done_testing
