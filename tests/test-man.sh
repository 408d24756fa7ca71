#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The manual pages render without warnings (groff -ww, mandoc -Tlint), and
# cgkill --help, cgkill(1), the option table of cli/cgkill.c and the bash
# completion all list the same options; libcgkill(3) lists and describes
# every function and constant of cgkill.h and no name that is not there, and
# its examples compile and run; --help and usage errors follow the
# util-linux conventions.
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

need_cgkill
# Leaks of the command are test-cli's business; here only its texts count.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
# A sanitizer build (make check-asan) needs the runtime to link against.
san=""
nm "$build/libcgkill.a" 2>/dev/null | grep -q ' U __asan_init' && san="-fsanitize=address,undefined"
tmp=$(mktemp -d /tmp/cgkill-test-man.XXXXXX) || bail_out "mktemp"
trap 'rm -rf "$tmp"' EXIT

pages="man/cgkill.1 man/libcgkill.3 man/cgkillctl.8"

# --- rendering ------------------------------------------------------------
for page in $pages; do
	out=$(groff -man -ww -z "$page" 2>&1)
	rc=$?
	[ $rc -eq 0 ] && [ -z "$out" ]
	ok $? "groff -man -ww -z $page: no warning" || diag "$out"
	if command -v mandoc >/dev/null; then
		out=$(mandoc -Tlint "$page" 2>&1)
		rc=$?
		[ $rc -eq 0 ] && [ -z "$out" ]
		ok $? "mandoc -Tlint $page: clean" || diag "$out"
	else
		skip "mandoc not installed (apt-get install mandoc)"
	fi
done

# Plain text of a page: no hyphenation, long lines, no overstriking.
render() {
	groff -man -Tascii -rHY=0 -rLL=300n -P-cbou "$1" 2>/dev/null
}

# Lines of one section of a rendered page.
section() {
	awk -v name="$2" '/^[A-Z]/ { in_s = ($0 == name); next } in_s' <<<"$1"
}

# --- cgkill --help --------------------------------------------------------
help=$("$CGKILL" --help)
ok $? "cgkill --help exits 0"
[ "$(head -n1 <<<"$help")" = "Usage:" ]
ok $? "--help starts with 'Usage:'"
grep -q '^ cgkill \[options\] ' <<<"$help"
ok $? "--help has a usage line ' cgkill [options] ...'"
[ "$(tail -n1 <<<"$help")" = "For more details see cgkill(1)." ]
ok $? "--help ends with 'For more details see cgkill(1).'"
grep -q '^Options:$' <<<"$help"
ok $? "--help has an 'Options:' section"
grep -qE '^ -h, --help +display this help$' <<<"$help" &&
	grep -qE '^ -V, --version +display version$' <<<"$help"
ok $? "--help lists -h and -V as util-linux does"
# Option lines: " -x, --long ..." or "     --long ...".
optlines=$(grep -E '^( -[[:alnum:]], --|     --)[a-z]' <<<"$help")
help_long=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$(cut -c1-30 <<<"$optlines")" | sed 's/^--//')
help_short=$(sed -n 's/^ -\([[:alnum:]]\), --.*/\1/p' <<<"$optlines")
[ "$(wc -l <<<"$help_long")" -ge 10 ]
ok $? "--help lists options ($(wc -l <<<"$help_long") long ones)"
# One option per line: no line holds two option names in the name column.
doubled=$(grep -E '^ -[[:alnum:]], --[a-z-]+.* -[[:alnum:]], --' <<<"$optlines")
[ -z "$doubled" ]
ok $? "--help: one option a line" || diag "$doubled"

# --- the option table of the command -------------------------------------
cli_long=$(grep -oE '\{ "[a-z][a-z0-9-]*", (no|required|optional)_argument' cli/cgkill.c |
	sed 's/^{ "\([^"]*\)".*/\1/')
same_set "long options" "cgkill --help" "$help_long" "cli/cgkill.c longopts" "$cli_long"

# --- cgkill(1) ------------------------------------------------------------
page=$(render man/cgkill.1)
[ -n "$page" ]
ok $? "cgkill.1 renders"
for s in NAME SYNOPSIS DESCRIPTION OPTIONS BACKENDS "GUARD RAILS" "EXIT STATUS" \
	ENVIRONMENT FILES NOTES EXAMPLES "SEE ALSO"; do
	grep -qx "$s" <<<"$page"
	ok $? "cgkill.1 has a $s section"
done
opts=$(section "$page" OPTIONS)
# Option tags sit at the first indentation level; descriptions are deeper.
tags=$(grep -E '^ {7}-' <<<"$opts")
man_long=$(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$tags" | sed 's/^--//')
man_short=$(sed -n 's/^ \{7\}-\([[:alnum:]]\), --.*/\1/p' <<<"$tags")
same_set "long options" "cgkill --help" "$help_long" "cgkill(1) OPTIONS" "$man_long"
same_set "short options" "cgkill --help" "$help_short" "cgkill(1) OPTIONS" "$man_short"

# What the brief of the page promises, spelled as the code spells it.
for backend in kernel freeze v1-freeze loop auto; do
	grep -qE "^ {7}$backend\$|\b$backend\b" <<<"$(section "$page" BACKENDS)"
	ok $? "cgkill.1 BACKENDS covers $backend"
done
for code in 0 1 2 3 4; do
	grep -qE "^ {7}$code( |\$)" <<<"$(section "$page" "EXIT STATUS")"
	ok $? "cgkill.1 EXIT STATUS lists $code"
done
exit_help=$(sed -n '/^Exit status:/,/^$/p' <<<"$help" | tr '\n' ' ')
for code in 0 1 2 3 4; do
	grep -q "$code " <<<"$exit_help"
	ok $? "--help exit status lists $code too"
done
# The columns of -o: those of --help are those of OUTPUT COLUMNS.
help_cols=$(sed -n '/^Available output columns/,/^$/s/^ \{1,11\}\([A-Z]\{3,\}\)  .*/\1/p' <<<"$help")
man_cols=$(grep -oE '^ {7}[A-Z]{3,}( |$)' <<<"$(section "$page" "OUTPUT COLUMNS")" | tr -d ' ')
[ "$(wc -w <<<"$help_cols")" -ge 9 ]
ok $? "--help lists output columns ($(wc -w <<<"$help_cols"))"
same_set "output columns" "cgkill --help" "$help_cols" "cgkill(1) OUTPUT COLUMNS" "$man_cols"
files=$(section "$page" FILES)
for p in /etc/cgkill/protected /init.scope /system.slice /user.slice /machine.slice; do
	grep -q -- "$p" <<<"$files"
	ok $? "cgkill.1 FILES names $p"
done
grep -q CGKILL_PROTECTED <<<"$(section "$page" ENVIRONMENT)"
ok $? "cgkill.1 ENVIRONMENT names CGKILL_PROTECTED"
grep -q CGKILL_PROTECTED lib/*.c
ok $? "CGKILL_PROTECTED is what the library reads"
see=$(section "$page" "SEE ALSO")
for ref in 'kill(1)' 'systemctl(1)' 'cgroups(7)' 'libcgkill(3)'; do
	grep -qF "$ref" <<<"$see"
	ok $? "cgkill.1 SEE ALSO has $ref"
done
# Each example command line uses only options that exist.
bad=""
while read -r line; do
	for o in $(grep -oE -- ' --[a-z][a-z0-9-]*' <<<"$line"); do
		grep -qx -- "${o#--}" <<<"$help_long" || bad="$bad $o"
	done
done < <(grep -E '^ +cgkill ' <<<"$(section "$page" EXAMPLES)")
[ -z "$bad" ]
ok $? "cgkill.1 EXAMPLES use existing options" || diag "unknown:$bad"
# The version lives in cgkill.h only: the pages do not spell one.
! grep -qE '^\.TH .*[0-9]+\.[0-9]+\.[0-9]+' man/cgkill.1 man/libcgkill.3
ok $? "the man pages do not spell a version of their own"

# --- usage errors, util-linux style ---------------------------------------
err=$("$CGKILL" --no-such-option 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] && [ "$(tail -n1 <<<"$err")" = "Try 'cgkill --help' for more information." ]
ok $? "unknown option: exit 2 and \"Try 'cgkill --help' for more information.\"" || diag "rc $rc: $err"
err=$("$CGKILL" 2>&1 >/dev/null)
rc=$?
[ $rc -eq 2 ] && grep -q '^cgkill: ' <<<"$err" && grep -qF "Try 'cgkill --help'" <<<"$err"
ok $? "no cgroup: exit 2, 'cgkill: ' message and the --help hint" || diag "rc $rc: $err"
ver=$("$CGKILL" --version)
[ "$ver" = "cgkill $(sed -n 's/^#define CGK_VERSION "\(.*\)"/\1/p' include/cgkill.h)" ]
ok $? "--version prints 'cgkill CGK_VERSION' (got '$ver')"

# --- libcgkill(3) ---------------------------------------------------------
declared=$(sed -n 's/^[a-z].*[ *]\(cgk_[a-z0-9_]*\)(.*/\1/p' include/cgkill.h | sort -u)
lib3=$(render man/libcgkill.3)
name3=$(section "$lib3" NAME | grep -oE 'cgk_[a-z0-9_]+')
syn3=$(section "$lib3" SYNOPSIS | grep -oE 'cgk_[a-z0-9_]+\(' | tr -d '(')
same_set "functions" "cgkill.h" "$declared" "libcgkill(3) NAME" "$name3"
same_set "functions" "cgkill.h" "$declared" "libcgkill(3) SYNOPSIS" "$syn3"
# Every function is described, not only listed: named in a heading or a font
# request of DESCRIPTION (".BR cgk_kill ()", a .TP tag).
desc3=$(sed -n '/^\.SH DESCRIPTION/,/^\.SH /p' man/libcgkill.3 | grep -E '^\.(SS|B|I|BR|IR|RB|RI|BI|IB) ')
described=$(grep -oE 'cgk_[a-z0-9_]+' <<<"$desc3" | sort -u)
undescribed=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$described"))
[ -z "$undescribed" ]
ok $? "libcgkill.3 DESCRIPTION describes every function of cgkill.h" ||
	diag "not described: $(echo $undescribed)"
# Every constant of cgkill.h (macros and enum values) is in the page, and
# every cgk_ or CGK_ name the page spells is in cgkill.h: a name of an
# interface that is gone (CGK_OPTIONS_INIT, cgk_list_hierarchies) fails.
constants=$(perl -0777 -ne 's{/\*.*?\*/}{}gs;
	print "$1\n" while /^#define (CGK_\w+)/gm;
	while (/^enum cgk_\w+ \{(.*?)\};/gms) { my $b = $1; print "$1\n" while $b =~ /\b(CGK_\w+)/g }' \
	include/cgkill.h | sort -u)
[ "$(wc -l <<<"$constants")" -ge 15 ]
ok $? "cgkill.h: its constants found ($(wc -l <<<"$constants"))"
page_names=$(grep -oE '\b(cgk|CGK)_[A-Za-z0-9_]+' man/libcgkill.3 | sort -u)
missing=$(comm -23 <(printf '%s\n' "$constants") <(printf '%s\n' "$page_names"))
[ -z "$missing" ]
ok $? "libcgkill.3 names every constant of cgkill.h" || diag "not named: $(echo $missing)"
header_names=$(grep -oE '\b(cgk|CGK)_[A-Za-z0-9_]+' include/cgkill.h | sort -u)
stale=$(comm -23 <(printf '%s\n' "$page_names") <(printf '%s\n' "$header_names"))
[ -z "$stale" ]
ok $? "every cgk_/CGK_ name in libcgkill.3 is in cgkill.h" || diag "not in cgkill.h: $(echo $stale)"
# The objects are opaque: the page names a struct only to typedef it.
structs=$(grep -E 'struct cgk_' man/libcgkill.3 | grep -vE '^\.B typedef struct (cgk_[a-z_]+) \1;$')
[ -z "$structs" ]
ok $? "libcgkill.3 names no struct but in its typedefs" || diag "$structs"
# VERSIONS names the version node of the map file, and the soname.
node=$(sed -n 's/^\(LIBCGKILL_[0-9.]*\) {.*/\1/p' lib/libcgkill.map | head -n1)
vers=$(section "$lib3" VERSIONS)
[ -n "$node" ] && grep -qw "$node" <<<"$vers" && grep -qF libcgkill.so.1 <<<"$vers"
ok $? "libcgkill.3 VERSIONS names the version node $node and libcgkill.so.1"

# The examples: every block that includes cgkill.h compiles and links (-Wall
# -Wextra -Werror -pedantic); a fragment is compiled inside a main() that
# gives it a path. The first program runs (usage without arguments); a
# program that reads the hierarchies runs, and lists the mounts of
# /proc/self/mountinfo.
awk -v dir="$tmp" '
	/^\.EX/ { n++; ex = 1; f = dir "/ex" n ".c"; printf "" >f; next }
	/^\.EE/ { ex = 0; close(f); next }
	ex { print >f }' man/libcgkill.3
programs=0
for f in "$tmp"/ex*.c; do
	sed -i -e 's/\\e/\\/g' -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" "$f"
	grep -q 'cgk_' "$f" || continue
	name=${f##*/}
	if ! grep -q 'main(' "$f"; then
		{
			printf '#include <stdio.h>\n#include <cgkill.h>\n\n'
			printf 'int main(int argc, char *argv[])\n{\n'
			printf '\tconst char *path = argc > 1 ? argv[1] : "";\n\n\t{\n'
			cat "$f"
			printf '\t}\n\treturn 0;\n}\n'
		} >"$f.main" && mv "$f.main" "$f"
		check "libcgkill.3: the fragment $name compiles" \
			${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic $san -Iinclude -o "${f%.c}" \
			"$f" "$build/libcgkill.a"
		continue
	fi
	programs=$((programs + 1))
	check "libcgkill.3: example program $programs compiles and links" \
		${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic $san -Iinclude -o "${f%.c}" \
		"$f" "$build/libcgkill.a" || continue
	if [ $programs -eq 1 ]; then
		grep -q 'cgk_kill(' "$f"
		ok $? "libcgkill.3: the first example calls cgk_kill()"
		out=$("${f%.c}" 2>&1)
		[ $? -eq 2 ] && grep -q usage <<<"$out"
		ok $? "libcgkill.3: the first example runs (usage without arguments)" || diag "$out"
	fi
	if grep -q 'cgk_hierarchies_read(' "$f"; then
		out=$("${f%.c}" 2>&1)
		ok $? "libcgkill.3: example program $programs (hierarchies) runs" || diag "$out"
		mounts=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) ~ /^cgroup2?$/) print $5 }' \
			/proc/self/mountinfo)
		same_set "cgroup mounts" "/proc/self/mountinfo" "$mounts" "the example's list" \
			"$(awk '{ print $1 }' <<<"$out")"
	fi
done
[ $programs -ge 1 ]
ok $? "libcgkill.3 has example programs ($programs)"

# --- bash completion ------------------------------------------------------
check "completion/cgkill parses (bash -n)" bash -n completion/cgkill
# The options it offers for a word that starts with "-": its compgen -W list
# (the file also holds options of systemctl). The zsh and fish completions
# are checked by test-completion.sh.
comp_long=$(sed -n "/compgen -W '--/,/' -- \"\$cur\"))/p" completion/cgkill |
	grep -oE -- '--[a-z][a-z0-9-]*' | sed 's/^--//' | sort -u)
same_set "long options" "cgkill --help" "$help_long" "completion/cgkill" "$comp_long"
if [ -r /usr/share/bash-completion/bash_completion ]; then
	comp() {
		bash -c '
			. /usr/share/bash-completion/bash_completion
			. completion/cgkill
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			_cgkill cgkill "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}" 2>/dev/null
			printf "%s\n" "${COMPREPLY[@]}"' comp "$@"
	}
	[ "$(PATH=$(dirname "$CGKILL"):$PATH comp cgkill --back)" = --backend ]
	ok $? "completion: --back -> --backend"
	[ "$(comp cgkill -b v1)" = v1-freeze ]
	ok $? "completion: -b v1 -> v1-freeze"
	[ "$(PATH=$(dirname "$CGKILL"):$PATH comp cgkill -s TER)" = TERM ]
	ok $? "completion: -s TER -> TERM"
	[ "$(PATH=$(dirname "$CGKILL"):$PATH comp cgkill --timeout 5s KI)" = KILL ]
	ok $? "completion: --timeout 5s KI -> KILL"
else
	skip "bash-completion not installed (apt-get install bash-completion)"
fi

done_testing
