#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shared library exports the cgk_ API and nothing else, under the
# soname libcgkill.so.1, and every function of cgkill.h is exported.
cd "${0%/*}/.." || exit 1
. tests/tap.sh

build=${CGKILL_BUILD:-build}
so=$build/libcgkill.so
[ -f "$so" ] || bail_out "$so not built (run make first)"
command -v nm >/dev/null || skip_all "nm (binutils) not installed"

# "ADDR TYPE NAME[@@VERSION]"; the version node itself (type A) is no symbol.
defined=$(nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u)
ok $? "nm -D --defined-only $so"
[ -n "$defined" ]
ok $? "the library exports something"

stray=$(printf '%s\n' "$defined" | grep -v '^cgk_')
[ -z "$stray" ]
ok $? "only cgk_* symbols are exported" || diag "also exported: $(echo $stray)"

# Every symbol carries the version node of the map file.
unversioned=$(nm -D --defined-only "$so" | awk '$2 != "A" && $3 !~ /@@LIBCGKILL_[0-9]/ { print $3 }')
[ -z "$unversioned" ]
ok $? "every exported symbol has a LIBCGKILL_ version" || diag "unversioned: $(echo $unversioned)"

soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libcgkill.so.1 ]
ok $? "soname is libcgkill.so.1 (got '$soname')"

# Functions declared in the public header, one name per declaration.
declared=$(sed -n 's/^[a-z].*[ *]\(cgk_[a-z0-9_]*\)(.*/\1/p' include/cgkill.h | sort -u)
[ -n "$declared" ]
ok $? "cgkill.h declares functions"
missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$defined"))
[ -z "$missing" ]
ok $? "every function of cgkill.h is exported" || diag "not exported: $(echo $missing)"
extra=$(comm -13 <(printf '%s\n' "$declared") <(printf '%s\n' "$defined"))
[ -z "$extra" ]
ok $? "every exported symbol is declared in cgkill.h" || diag "not declared: $(echo $extra)"

# The static library: its global definitions are cgk_ (the API) or the
# hidden cgk-internal names; nothing that could clash with a program.
if [ -f "$build/libcgkill.a" ]; then
	clash=$(nm -g --defined-only "$build/libcgkill.a" 2>/dev/null |
		awk 'NF == 3 { print $3 }' | grep -v '^cgk_' | grep -v '^__' | sort -u)
	[ -z "$clash" ]
	ok $? "libcgkill.a defines only cgk_* globals" || diag "also defined: $(echo $clash)"
fi

done_testing
