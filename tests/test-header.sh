#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkill.h is clean for its users: a program that includes it compiles
# without a warning as C99, C11 and C++11 to C++20 (-Wall -Wextra -Werror
# -pedantic), links against libcgkill.a and against libcgkill.so.1, and
# gets what the header documents: options made with the defaults, setters
# that refuse what the library does not know, any number of escalations,
# readers that take NULL, a report even from a call that fails, and
# cgk_version() of the library it runs with, exported under the version
# node of lib/libcgkill.map. Nothing is killed: the one cgk_kill() here is
# a dry run on a path that is no cgroup.
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
node=$(sed -n 's/^\(LIBCGKILL_[0-9.]*\) {.*/\1/p' lib/libcgkill.map | head -n1)

# The shared library as an installed one: libcgkill.so.1, and the link.
mkdir -p "$tmp/lib"
cp "$build/libcgkill.so" "$tmp/lib/libcgkill.so.1"
ln -s libcgkill.so.1 "$tmp/lib/libcgkill.so"

# Valid C and C++ alike, cgkill.h first so that it must stand on its own;
# the exit status says which check failed. The path given to the dry run
# is this test's scratch directory, which is no cgroup.
cat >"$tmp/use.c" <<'END'
#include <cgkill.h>

#include <errno.h>
#include <string.h>

static int fail(int line)
{
	fprintf(stderr, "check at line %d failed\n", line);
	return 1;
}
#define CHECK(x) do { if (!(x)) return fail(__LINE__); } while (0)

static bool declined(const char *path, unsigned processes, unsigned cgroups, void *userdata)
{
	(void)path, (void)processes, (void)cgroups, (void)userdata;
	return false;
}

static void progress(const char *path, unsigned left, uint64_t waited_ms, void *userdata)
{
	(void)path, (void)left, (void)waited_ms, (void)userdata;
}

static volatile sig_atomic_t cancel;

int main(int argc, char **argv)
{
	cgk_options *o = NULL;
	cgk_report *rep = NULL;
	cgk_hierarchies *h = NULL;
	const cgk_report *reps[1];
	char buf[16];
	uint64_t ms = 0;
	enum cgk_backend b = CGK_BACKEND_AUTO;
	int sig = 0;

	CHECK(argc == 2);
	CHECK(strcmp(cgk_version(), CGK_VERSION) == 0);

	/* options: made with the defaults, changed by setters that refuse
	 * what this library does not know */
	CHECK(cgk_options_new(NULL) == -EINVAL);
	CHECK(cgk_options_new(&o) == 0 && o);
	CHECK(cgk_options_set_signal(o, 0) == -EINVAL);
	CHECK(cgk_options_set_signal(o, -1) == -EINVAL);
	CHECK(cgk_options_set_signal(o, SIGTERM) == 0);
	CHECK(cgk_options_set_backend(o, (enum cgk_backend)7) == -EINVAL);
#ifndef __cplusplus	/* (out of the enum's range: C++ forbids the cast) */
	CHECK(cgk_options_set_backend(o, (enum cgk_backend)99) == -EINVAL);
#endif
	CHECK(cgk_options_set_backend(o, CGK_BACKEND_LOOP) == 0);
	CHECK(cgk_options_set_backend(o, CGK_BACKEND_AUTO) == 0);
	CHECK(cgk_options_set_flags(o, 1u << 31) == -EINVAL);
	CHECK(cgk_options_set_flags(o, CGK_DRY_RUN | CGK_FORCE | CGK_BOOST) == 0);
	CHECK(cgk_options_set_flags(o, CGK_DRY_RUN) == 0);
	CHECK(cgk_options_set_wait(o, UINT64_MAX) == 0);
	CHECK(cgk_options_set_wait(o, 0) == 0);
	for (int i = 0; i < 20; i++)	/* more than 0.1's 8 */
		CHECK(cgk_options_add_escalation(o, 1000, i % 2 ? SIGKILL : SIGTERM) == 0);
	CHECK(cgk_options_add_escalation(o, 1000, 0) == -EINVAL);
	CHECK(cgk_options_set_protected_file(o, "/nonexistent/protected") == 0);
	CHECK(cgk_options_set_protected_file(o, NULL) == 0);
	CHECK(cgk_options_set_confirm(o, declined, NULL) == 0);
	CHECK(cgk_options_set_progress(o, progress, NULL) == 0);
	CHECK(cgk_options_set_cancel(o, &cancel) == 0);
	CHECK(cgk_options_set_confirm(o, NULL, NULL) == 0);

	/* a NULL object: setters refuse it, readers read it as empty */
	CHECK(cgk_options_set_signal(NULL, SIGKILL) == -EINVAL);
	CHECK(cgk_options_set_wait(NULL, 0) == -EINVAL);
	CHECK(cgk_options_add_escalation(NULL, 0, SIGKILL) == -EINVAL);
	CHECK(cgk_options_free(NULL) == NULL);
	CHECK(cgk_report_free(NULL) == NULL);
	CHECK(cgk_hierarchies_free(NULL) == NULL);
	CHECK(cgk_report_error(NULL) == 0 && strcmp(cgk_report_message(NULL), "") == 0);
	CHECK(strcmp(cgk_report_path(NULL), "") == 0 && cgk_report_hierarchy(NULL) == 0);
	CHECK(cgk_report_backend(NULL) == CGK_BACKEND_AUTO &&
	      cgk_report_fell_back_from(NULL) == CGK_BACKEND_AUTO &&
	      cgk_report_fallback_errno(NULL) == 0 && cgk_report_refused(NULL) == CGK_GUARD_NONE);
	CHECK(cgk_report_n_signals(NULL) == 0 && cgk_report_signal(NULL, 0, &b) < 0);
	CHECK(cgk_report_cgroups(NULL) == 0 && cgk_report_signalled(NULL) == 0 &&
	      cgk_report_unreachable(NULL) == 0 && cgk_report_not_permitted(NULL) == 0);
	CHECK(!cgk_report_waited(NULL) && !cgk_report_emptied(NULL));
	CHECK(cgk_report_signal_ms(NULL) == 0 && cgk_report_empty_ms(NULL) == 0);
	CHECK(cgk_report_n_processes(NULL, CGK_LIST_LISTED) == 0 &&
	      cgk_report_n_processes(NULL, CGK_LIST_SURVIVORS) == 0 &&
	      cgk_report_process(NULL, CGK_LIST_SURVIVORS, 0) == NULL);
	CHECK(cgk_process_pid(NULL) == 0 && strcmp(cgk_process_comm(NULL), "") == 0 &&
	      strcmp(cgk_process_cgroup(NULL), "") == 0);
	CHECK(cgk_hierarchies_count(NULL) == 0 && cgk_hierarchies_path(NULL, 0) == NULL &&
	      cgk_hierarchies_version(NULL, 0) == 0 && cgk_hierarchies_backends(NULL, 0) == 0);

	/* a call that fails still makes a report, whose message says why:
	 * a dry run on a directory that is no cgroup */
	CHECK(cgk_kill(argv[1], o, &rep) < 0 && rep);
	CHECK(cgk_report_error(rep) < 0 && strstr(cgk_report_message(rep), argv[1]));
	CHECK(strcmp(cgk_report_path(rep), argv[1]) == 0 && cgk_report_n_signals(rep) == 0);
	reps[0] = rep;
	CHECK(cgk_report_json(reps, 1, stdout) == 0);
	rep = cgk_report_free(rep);
	CHECK(cgk_kill(argv[1], o, NULL) < 0);
	o = cgk_options_free(o);

	/* names, signals, durations */
	CHECK(strcmp(cgk_backend_name(CGK_BACKEND_V1_FREEZE), "v1-freeze") == 0);
	CHECK(cgk_backend_from_name("loop", &b) == 0 && b == CGK_BACKEND_LOOP);
	CHECK(strcmp(cgk_guard_name(CGK_GUARD_PROTECTED), "protected") == 0);
	CHECK(cgk_signal_from_name("sigterm", &sig) == 0 && sig == SIGTERM);
	CHECK(strcmp(cgk_signal_name(SIGKILL, buf, sizeof(buf)), "KILL") == 0);
	CHECK(cgk_signal_name(0, buf, sizeof(buf)) == NULL);
	CHECK(cgk_parse_duration("1min 30s", &ms) == 0 && ms == 90000);
	CHECK(cgk_parse_duration("1000", &ms) == -EINVAL);

	/* the hierarchies: read, and past the end */
	CHECK(cgk_hierarchies_read(&h) == 0 && h);
	CHECK(cgk_hierarchies_path(h, cgk_hierarchies_count(h)) == NULL);
	h = cgk_hierarchies_free(h);
	return 0;
}
END
cp "$tmp/use.c" "$tmp/use.cc"

# try WHAT OUT COMPILER ARGS...: compile and link, then run the program.
try() {
	local what=$1 out=$2
	shift 2
	check "$what: compiles and links without a warning" "$@" $san -Iinclude -o "$out" &&
		check "$what: runs, and the library does what cgkill.h says" \
			env LD_LIBRARY_PATH="$tmp/lib" "$out" "$tmp"
}

for std in c99 c11; do
	try "C ($std, libcgkill.a)" "$tmp/use-$std" ${CC:-cc} -std=$std -Wall -Wextra -Werror \
		-pedantic -Wstrict-prototypes -Wshadow "$tmp/use.c" "$build/libcgkill.a"
done
if command -v "${CXX:-g++}" >/dev/null; then
	for std in c++11 c++14 c++17 c++20; do
		try "C++ ($std, libcgkill.a)" "$tmp/use-$std" "${CXX:-g++}" -std=$std -Wall -Wextra \
			-Werror -pedantic -Wshadow "$tmp/use.cc" "$build/libcgkill.a"
	done
else
	skip "no C++ compiler (${CXX:-g++}; apt-get install g++)"
fi
try "C (c11, libcgkill.so.1)" "$tmp/use-so" ${CC:-cc} -std=c11 -Wall -Wextra -Werror \
	-pedantic "$tmp/use.c" -L"$tmp/lib" -lcgkill
readelf -d "$tmp/use-so" 2>/dev/null | grep -q 'NEEDED.*\[libcgkill.so.1\]'
ok $? "that program needs libcgkill.so.1"
if command -v "${CXX:-g++}" >/dev/null; then
	try "C++ (c++17, libcgkill.so.1)" "$tmp/use-so-cc" "${CXX:-g++}" -std=c++17 -Wall \
		-Wextra -Werror -pedantic "$tmp/use.cc" -L"$tmp/lib" -lcgkill
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
check "a program linked against libcgkill.so.1" ${CC:-cc} -Wall -Werror $san -Iinclude \
	-o "$tmp/version" "$tmp/version.c" -L"$tmp/lib" -lcgkill
got=$(LD_LIBRARY_PATH=$tmp/lib "$tmp/version")
[ "$got" = "$version" ]
ok $? "cgk_version() of libcgkill.so.1 is $version (got '$got')"
LD_LIBRARY_PATH=$tmp/lib ldd "$tmp/version" | grep -q "$tmp/lib/libcgkill.so.1"
ok $? "it ran with that copy of the library"
[ -n "$node" ] && nm -D --defined-only "$tmp/lib/libcgkill.so.1" | grep -q " T cgk_version@@$node\$"
ok $? "cgk_version is exported as cgk_version@@$node (the node of lib/libcgkill.map)"
nm -D "$tmp/version" | grep -q " U cgk_version@$node\$"
ok $? "the program asks for cgk_version@$node"

done_testing
