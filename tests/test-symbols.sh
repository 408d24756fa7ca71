#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shared library exports the cgk_ API and nothing else, under the
# soname libcgkill.so.1, and every function of cgkill.h is exported, each
# under the version node lib/libcgkill.map gives it; debian's symbols file
# lists the same symbols with the same nodes.
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

# The nodes are those of the map file, and each symbol is under the node
# the map file puts it in ("LIBCGKILL_1.0 { global: cgk_kill; ... };").
map=lib/libcgkill.map
map_syms=$(perl -0777 -ne 's{/\*.*?\*/}{}gs;
	while (/^(LIBCGKILL_[\w.]+)\s*\{(.*?)\}/gms) {
		my ($node, $b) = ($1, $2);
		$b =~ s/local:.*//s;
		print "$1\@$node\n" while $b =~ /\b(cgk_\w+)\s*;/g;
	}' "$map" | sort -u)
map_nodes=$(sed 's/.*@//' <<<"$map_syms" | sort -u)
[ -n "$map_syms" ]
ok $? "$map names symbols under LIBCGKILL_ nodes ($(paste -sd ' ' <<<"$map_nodes"))"
exported=$(nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@@?/, "@", $3); print $3 }' | sort -u)
[ "$exported" = "$map_syms" ]
ok $? "each symbol is exported under the node of $map" ||
	diag "only in $so: $(comm -13 <(echo "$map_syms") <(echo "$exported") | tr '\n' ' ')" \
		"only in $map: $(comm -23 <(echo "$map_syms") <(echo "$exported") | tr '\n' ' ')"
nodes=$(nm -D --defined-only "$so" | awk '$2 == "A" { sub(/@.*/, "", $3); print $3 }' | sort -u)
[ "$nodes" = "$map_nodes" ]
ok $? "the version nodes of $so are those of $map ($(echo $nodes))"

# debian/libcgkill1.symbols (dpkg-gensymbols checks it in make check-deb;
# here at once): " NAME@NODE VERSION" for each symbol and node.
symbols=debian/libcgkill1.symbols
if [ -f "$symbols" ]; then
	version=$(sed -n 's/^#define CGK_VERSION "\(.*\)"/\1/p' include/cgkill.h)
	deb_syms=$(sed -n 's/^ \(cgk_[a-z0-9_]*@LIBCGKILL_[0-9.]*\) [0-9].*/\1/p' "$symbols" | sort -u)
	[ "$deb_syms" = "$map_syms" ]
	ok $? "$symbols lists every exported symbol with its node, and no other" ||
		diag "missing: $(comm -13 <(echo "$deb_syms") <(echo "$map_syms") | tr '\n' ' ')" \
			"extra: $(comm -23 <(echo "$deb_syms") <(echo "$map_syms") | tr '\n' ' ')"
	deb_nodes=$(sed -n 's/^ \(LIBCGKILL_[0-9.]*\)@\1 [0-9].*/\1/p' "$symbols" | sort -u)
	[ "$deb_nodes" = "$nodes" ]
	ok $? "$symbols lists the version nodes ($(echo $deb_nodes))"
	# No symbol is said to come from a version later than this one.
	later=$(awk -v v="$version" 'NR > 1 && /^ / { print $2 }' "$symbols" | sort -uV |
		awk -v v="$version" '$0 != v' | while read -r sv; do
			[ "$(printf '%s\n%s\n' "$sv" "$version" | sort -V | tail -n1)" = "$version" ] || echo "$sv"
		done)
	[ -z "$later" ]
	ok $? "$symbols names no version after $version" || diag "$later"
else
	skip "no debian/ here"
fi

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
