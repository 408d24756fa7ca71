#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkill.h is clean for its users: a program that includes it and starts
# from CGK_OPTIONS_INIT compiles without a warning as C99, C11 and C++11 to
# C++20 (-Wall -Wextra -Werror -pedantic), links against libcgkill.a, gets
# the documented defaults, and cgk_version() tells the version of the
# library it runs with, libcgkill.so.1 included.
cd "${0%/*}/.." || exit 1
. tests/tap.sh

build=${CGKILL_BUILD:-build}
[ -f "$build/libcgkill.a" ] && [ -f "$build/libcgkill.so" ] ||
	bail_out "$build/libcgkill.a or .so not built (run make first)"
# A sanitizer build (make check-asan) needs the runtime to link against.
san=""
nm "$build/libcgkill.a" 2>/dev/null | grep -q ' U __asan_init' && san="-fsanitize=address,undefined"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
tmp=$(mktemp -d /tmp/cgkill-test-header.XXXXXX) || bail_out "mktemp"
trap 'rm -rf "$tmp"' EXIT
version=$(sed -n 's/^#define CGK_VERSION "\(.*\)"/\1/p' include/cgkill.h)

# Valid C and C++ alike; the exit status says what was wrong.
cat >"$tmp/use.c" <<'END'
#include <string.h>
#include <cgkill.h>

static struct cgk_options at_file_scope = CGK_OPTIONS_INIT;

int main(void)
{
	struct cgk_options opts = CGK_OPTIONS_INIT;
	const struct cgk_options *o[] = { &opts, &at_file_scope };
	uint64_t ms = 0;

	for (unsigned i = 0; i < 2; i++) {
		if (o[i]->signal != SIGKILL || o[i]->backend != CGK_BACKEND_AUTO ||
		    o[i]->wait_ms != 10000)
			return 10;
		if (o[i]->flags || o[i]->n_escalations ||
		    o[i]->escalations[CGK_MAX_ESCALATIONS - 1].after_ms ||
		    o[i]->escalations[CGK_MAX_ESCALATIONS - 1].signal)
			return 11;
		if (o[i]->protected_file || o[i]->confirm || o[i]->progress ||
		    o[i]->userdata || o[i]->cancel)
			return 12;
	}
	if (strcmp(cgk_version(), CGK_VERSION) != 0)
		return 13;
	if (cgk_parse_duration("1min 30s", &ms) != 0 || ms != 90000)
		return 14;
	return 0;
}
END
cp "$tmp/use.c" "$tmp/use.cc"

try() {
	local what=$1 out=$2
	shift 2
	check "$what: compiles and links without a warning" "$@" $san -Iinclude -o "$out" &&
		check "$what: the defaults of CGK_OPTIONS_INIT, cgk_version()" "$out"
}

for std in c99 c11; do
	try "C ($std)" "$tmp/use-$std" ${CC:-cc} -std=$std -Wall -Wextra -Werror -pedantic \
		"$tmp/use.c" "$build/libcgkill.a"
done
if command -v "${CXX:-g++}" >/dev/null; then
	for std in c++11 c++14 c++17 c++20; do
		try "C++ ($std)" "$tmp/use-$std" "${CXX:-g++}" -std=$std -Wall -Wextra -Werror \
			-pedantic "$tmp/use.cc" "$build/libcgkill.a"
	done
else
	skip "no C++ compiler (${CXX:-g++}; apt-get install g++)"
fi

# cgk_version() answers from the shared library, not from the header the
# program was built with.
cat >"$tmp/version.c" <<'END'
#include <stdio.h>
#include <cgkill.h>

int main(void)
{
	return puts(cgk_version()) < 0;
}
END
mkdir -p "$tmp/lib"
cp "$build/libcgkill.so" "$tmp/lib/libcgkill.so.1"
ln -s libcgkill.so.1 "$tmp/lib/libcgkill.so"
check "a program linked against libcgkill.so.1" ${CC:-cc} -Wall -Werror $san -Iinclude \
	-o "$tmp/version" "$tmp/version.c" -L"$tmp/lib" -lcgkill
got=$(LD_LIBRARY_PATH=$tmp/lib "$tmp/version")
[ "$got" = "$version" ]
ok $? "cgk_version() of libcgkill.so.1 is $version (got '$got')"
LD_LIBRARY_PATH=$tmp/lib ldd "$tmp/version" | grep -q "$tmp/lib/libcgkill.so.1"
ok $? "it ran with that copy of the library"
nm -D --defined-only "$tmp/lib/libcgkill.so.1" | grep -q ' T cgk_version@@LIBCGKILL_1$'
ok $? "cgk_version is exported as cgk_version@@LIBCGKILL_1"

done_testing
