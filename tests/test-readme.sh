#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# README.md stays true. Its first program (the first ```c block under
# "## The library", wrapped in a main() if it has none) compiles against
# include/ and libcgkill.a with -Wall -Wextra -Werror, and runs: on a
# sandbox cgroup made here under the cgroup v2 mount of
# /proc/self/mountinfo it kills the sleeping process there (and not the
# sentinel in the sibling cgroup), and on a cgroup that does not exist it
# prints a message that names it. Every cgk_ or CGK_ name of the README is
# in cgkill.h, and the Layout block names every lib/*.c, and nothing that
# is not there, and every man page of man/ (as name(section)), and no
# other; the packages make check installs (the Makefile's TEST_DEPS) are
# the ones the README names. Everything killed lives in <v2 mount>/cgkill-test.<pid>.readme.
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

[ -f "$build/libcgkill.a" ] || bail_out "$build/libcgkill.a not built (run make first)"
# A sanitizer build (make check-asan) needs the runtime to link against.
san=""
nm "$build/libcgkill.a" 2>/dev/null | grep -q ' U __asan_init' && san="-fsanitize=address,undefined"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
tmp=$(mktemp -d /tmp/cgkill-test-readme.XXXXXX) || bail_out "mktemp"
sandbox=""

cleanup() {
	[ -n "$sandbox" ] && [ -d "$sandbox" ] && rm_cgroup_tree "$sandbox"
	kill_spawned
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The lines of the README's section "## $1", up to the next "## ".
readme_section() {
	awk -v h="## $1" '/^## / { in_s = ($0 == h); next } in_s' README.md
}

# --- the first program ------------------------------------------------------
library=$(readme_section "The library")
[ -n "$library" ]
ok $? "README.md has a section '## The library'"
awk 'c && /^```/ { exit } c { print } /^```c$/ { c = 1 }' <<<"$library" >"$tmp/first.c"
grep -q 'cgk_kill(' "$tmp/first.c"
ok $? "its first \`\`\`c block calls cgk_kill() ($(wc -l <"$tmp/first.c") lines)" ||
	bail_out "no C snippet to test in README.md"
# A snippet without main() is given one, with the cgroup in path and
# argv[1]; it fails if the snippet's r is negative.
if ! grep -q 'main(' "$tmp/first.c"; then
	ret=0
	grep -qE '\bint r\b' "$tmp/first.c" && ret="r < 0"
	{
		printf '#include <stdio.h>\n#include <cgkill.h>\n\n'
		printf 'int main(int argc, char *argv[])\n{\n'
		printf '\tconst char *path = argc > 1 ? argv[1] : "";\n\n\t(void)path;\n'
		cat "$tmp/first.c"
		printf '\treturn %s;\n}\n' "$ret"
	} >"$tmp/main.c" && mv "$tmp/main.c" "$tmp/first.c"
	note "the snippet has no main(): wrapped in one"
fi
check "the README's first program compiles without a warning" \
	${CC:-cc} -Wall -Wextra -Werror $san -Iinclude -o "$tmp/first" "$tmp/first.c" \
	"$build/libcgkill.a"
# It is run on the sandbox only if that is the cgroup it kills: one taken
# from its command line, never a path of its own ("/sys/fs/cgroup/...").
runnable=""
if grep -qE 'argv\[1\]|[(,] *path *[,)]' "$tmp/first.c" && ! grep -qE '"/' "$tmp/first.c"; then
	runnable=1
fi
[ -n "$runnable" ]
ok $? "the first program takes its cgroup from the command line, and names none itself" ||
	diag "not run: it could kill a cgroup outside the sandbox"

mnt=$(mount_of cgroup2)

if [ ! -x "$tmp/first" ] || [ -z "$runnable" ]; then
	skip "the README's first program was not built, or is not safe to run"
elif [ "$(id -u)" -ne 0 ]; then
	skip "running the README's first program on a sandbox cgroup needs root"
elif [ -z "$mnt" ]; then
	skip "no cgroup v2 mount in /proc/self/mountinfo"
elif ! mkdir "$mnt/cgkill-test.$$.readme" 2>/dev/null; then
	skip "cannot create a cgroup under $mnt"
else
	sandbox=$mnt/cgkill-test.$$.readme
	note "sandbox $sandbox"
	mkdir "$sandbox/target" "$sandbox/sibling"
	spawn_in "$sandbox/sibling" sleep 300
	sentinel=$spawned
	spawn_in "$sandbox/target" sleep 300
	victim=$spawned
	[ -n "$sentinel" ] && [ -n "$victim" ] && [ "$victim" != "$sentinel" ]
	ok $? "a sleeping process in the target ($victim) and a sentinel beside it ($sentinel)" ||
		bail_out "could not start the sleepers"

	err=$(timeout 60 "$tmp/first" "$sandbox/target" 2>&1 >/dev/null)
	rc=$?
	[ $rc -eq 0 ] && [ -z "$err" ]
	ok $? "the first program on the target: exit 0, nothing on stderr" || diag "exit $rc: $err"
	died_with "$victim" 137 5
	ok $? "the sleeping process died of SIGKILL"
	[ -z "$(cat "$sandbox/target/cgroup.procs")" ] &&
		grep -qx 'populated 0' "$sandbox/target/cgroup.events"
	ok $? "the target is empty"
	alive "$sentinel" && grep -qx "$sentinel" "$sandbox/sibling/cgroup.procs"
	ok $? "the sentinel in the sibling cgroup is alive"

	# The failure path: a cgroup that does not exist (nothing to kill).
	err=$(timeout 60 "$tmp/first" "$sandbox/no-such-cgroup" 2>&1 >/dev/null)
	rc=$?
	[ $rc -ne 0 ] && [ $rc -lt 128 ] && grep -qF "$sandbox/no-such-cgroup" <<<"$err" &&
		grep -q '(ENOENT)' <<<"$err"
	ok $? "on a cgroup that does not exist: it fails, and the message names it" ||
		diag "exit $rc: $err"
	alive "$sentinel"
	ok $? "the sentinel is still alive"
fi

# --- names ------------------------------------------------------------------
header_names=$(grep -oE '\b(cgk|CGK)_[A-Za-z0-9_]+' include/cgkill.h | sort -u)
readme_names=$(grep -oE '\b(cgk|CGK)_[A-Za-z0-9_]+' README.md | sort -u)
stale=$(comm -23 <(printf '%s\n' "$readme_names") <(printf '%s\n' "$header_names"))
[ -n "$readme_names" ] && [ -z "$stale" ]
ok $? "every cgk_/CGK_ name of README.md is in cgkill.h" || diag "not in cgkill.h: $(echo $stale)"

# --- the layout -------------------------------------------------------------
layout=$(readme_section Layout | awk 'c && /^```/ { exit } c { print } /^```/ { c = 1 }')
[ -n "$layout" ]
ok $? "README.md has a Layout block"
# Its first column: paths that exist.
missing=""
for p in $(grep -oE '^[^ ]+' <<<"$layout"); do
	[ -e "$p" ] || missing="$missing $p"
done
[ -z "$missing" ]
ok $? "every path of the Layout block exists" || diag "missing:$missing"
# The lib/ entry: from its line to the next entry's.
libentry=$(awk '/^[^ ]/ { in_e = ($1 == "lib/") } in_e' <<<"$layout")
named=$(grep -oE '[A-Za-z0-9_*-]+\.(c|h|map)\b' <<<"$libentry" | sort -u)
unnamed=""
for f in lib/*.c; do
	f=${f#lib/}
	hit=""
	for n in $named; do
		# shellcheck disable=SC2053
		[[ $f == $n ]] && hit=1 && break
	done
	[ -n "$hit" ] || unnamed="$unnamed $f"
done
[ -z "$unnamed" ]
ok $? "the Layout block names every lib/*.c ($(ls lib/*.c | wc -l))" || diag "not named:$unnamed"
gone=""
for n in $named; do
	# shellcheck disable=SC2086
	compgen -G "lib/$n" >/dev/null || gone="$gone $n"
done
[ -z "$gone" ]
ok $? "every file the Layout block names in lib/ exists" || diag "not in lib/:$gone"
# The man/ entry: every page there as name(section), and no other.
manentry=$(awk '/^[^ ]/ { in_e = ($1 == "man/") } in_e' <<<"$layout")
pages=$(for f in man/*.[1-8]; do f=${f#man/}; echo "${f%.*}(${f##*.})"; done | sort)
listed=$(grep -oE '[a-z][a-z.]*\([1-8]\)' <<<"$manentry" | sort -u)
[ -n "$pages" ] && [ "$pages" = "$listed" ]
ok $? "the Layout block's man/ lists every man page, and no other ($(echo $pages))" ||
	diag "man/: $(echo $pages)" "listed: $(echo $listed)"

# --- what make check installs -------------------------------------------------
# The Makefile's TEST_DEPS (command:package), the packages test-deps
# adds itself and the npm package K8S_MODELS, against the README's list (the Development section's
# "installs ..." sentence, the packages in backquotes).
wanted=$(make -s -p -n test-deps 2>/dev/null | sed -n 's/^TEST_DEPS := //p' | head -n1 | tr ' ' '\n' |
	sed -n 's/^[^:]*://p'; sed -n 's/.*need="$$need \([a-z0-9.-]*\)".*/\1/p' Makefile
	sed -n 's/^K8S_MODELS := \([a-z0-9.-]*\)@.*/\1/p' Makefile)
wanted=$(sort -u <<<"$wanted")
named=$(readme_section Development | awk '/installs/ { c = 1 } c { print } c && /\.$/ { exit }' |
	grep -oE '`[a-z0-9.+-]+`' | tr -d '`' | sort -u)
[ -n "$wanted" ] && [ "$wanted" = "$named" ]
ok $? "the README names the packages make check installs ($(echo $wanted))" ||
	diag "Makefile: $(echo $wanted)" "README: $(echo $named)"

done_testing
