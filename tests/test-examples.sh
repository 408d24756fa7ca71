#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The examples are valid as they stand: examples/kill-service.c compiles
# against include/cgkill.h and the built libcgkill (C99 and C11, -Wall
# -Wextra -Werror -pedantic), prints its usage and reports a failure;
# examples/kill-two.c compiles the same way and drives its two kills from
# one loop on sandbox cgroups (a TERM-ignorer that waits for its
# escalation, a sleeper killed at once and reported first); every
# examples/*.service passes "systemd-analyze verify" of the systemd
# installed here (Debian 12: 252) without a warning about it, and every
# examples/*.sh parses. (They are run for real on a sandbox cgroup by
# test-install.sh, kill-service against the installed library, and by
# test-units.sh.)
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

tmp=$(mktemp -d /tmp/cgkill-test-examples.XXXXXX) || bail_out "mktemp"
sandbox=""
cleanup() {
	[ -n "$sandbox" ] && [ -d "$sandbox" ] && rm_cgroup_tree "$sandbox"
	kill_spawned
}
trap cleanup EXIT

# --- examples/kill-service.c ---------------------------------------------
[ -f "$build/libcgkill.a" ] || bail_out "$build/libcgkill.a not built (run make first)"
# A sanitizer build (make check-asan) needs the runtime to link against.
san=""
nm "$build/libcgkill.a" 2>/dev/null | grep -q ' U __asan_init' && san="-fsanitize=address,undefined"
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
ks=""
for std in c99 c11; do
	check "examples/kill-service.c compiles as $std without a warning" \
		${CC:-cc} -std=$std -Wall -Wextra -Werror -pedantic -Wshadow -Wstrict-prototypes \
		$san -Iinclude -o "$tmp/kill-service-$std" examples/kill-service.c \
		"$build/libcgkill.a" && ks=$tmp/kill-service-$std
done
if [ -n "$ks" ]; then
	for args in "" "-s NOSUCHSIGNAL x" "-k 5 x" "-w 1s a b"; do
		# shellcheck disable=SC2086
		out=$("$ks" $args 2>&1)
		rc=$?
		[ $rc -eq 2 ] && grep -q '^usage: kill-service ' <<<"$out"
		ok $? "kill-service ${args:-(no arguments)}: usage, exit 2" || diag "exit $rc: $out"
	done
	# A failure: a directory that is no cgroup (nothing there to kill).
	mkdir "$tmp/not-a-cgroup"
	out=$("$ks" "$tmp/not-a-cgroup" 2>&1)
	rc=$?
	[ $rc -eq 1 ] && grep -qE "^cgroup: +$tmp/not-a-cgroup " <<<"$out" &&
		grep -qE "^error: +.*not-a-cgroup.*\(E[A-Z]+\)\$" <<<"$out" &&
		grep -qE '^signals: *$' <<<"$out"
	ok $? "kill-service on a directory that is no cgroup: exit 1, the error named" ||
		diag "exit $rc: $out"
	out=$("$ks" -j "$tmp/not-a-cgroup" 2>&1)
	rc=$?
	if command -v python3 >/dev/null; then
		python3 -c 'import json, sys
t = json.load(sys.stdin)["targets"][0]
assert t["error"]["errno"].startswith("E") and t["signals"] == [], t' <<<"$out"
		[ $? -eq 0 ] && [ $rc -eq 1 ]
		ok $? "kill-service -j on it: exit 1, a JSON report with the error" ||
			diag "exit $rc: $out"
	fi
fi

# --- examples/kill-two.c -------------------------------------------------
k2=""
for std in c99 c11; do
	check "examples/kill-two.c compiles as $std without a warning" \
		${CC:-cc} -std=$std -Wall -Wextra -Werror -pedantic -Wshadow -Wstrict-prototypes \
		$san -Iinclude -o "$tmp/kill-two-$std" examples/kill-two.c \
		"$build/libcgkill.a" && k2=$tmp/kill-two-$std
done
if [ -n "$k2" ]; then
	out=$("$k2" 2>&1)
	rc=$?
	[ $rc -eq 2 ] && grep -q '^usage: kill-two ' <<<"$out"
	ok $? "kill-two without arguments: usage, exit 2" || diag "exit $rc: $out"
fi
v2=$(mount_of cgroup2)
if [ -z "$k2" ]; then
	skip "kill-two was not built"
elif [ "$(id -u)" -ne 0 ] || [ -z "$v2" ]; then
	skip "kill-two's run needs root and a cgroup v2 mount"
elif ! mkdir "$v2/cgkill-test.$$.examples" 2>/dev/null; then
	skip "cannot create a cgroup under $v2"
else
	sandbox=$v2/cgkill-test.$$.examples
	mkdir "$sandbox/slow" "$sandbox/fast"
	spawn_in "$sandbox/slow" bash -c 'trap "" TERM; exec sleep 600'
	ok $? "kill-two: a TERM-ignorer in slow"
	slow_pid=$spawned
	spawn_in "$sandbox/fast" sleep 600
	ok $? "kill-two: a sleeper in fast"
	fast_pid=$spawned
	out=$("$k2" -k 2s "$sandbox/slow" "$sandbox/fast" 2>&1)
	rc=$?
	[ $rc -eq 0 ]
	ok $? "kill-two: exit 0" || diag "exit $rc: $out"
	first=$(sed -n 1p <<<"$out") second=$(sed -n 2p <<<"$out")
	grep -qE "^$sandbox/fast: emptied after [0-9]+ ms \(KILL\)\$" <<<"$first"
	ok $? "kill-two: fast reported first, emptied by KILL" || diag "$out"
	ms=$(sed -n 's/.* after \([0-9]*\) ms .*/\1/p' <<<"$second")
	grep -qE "^$sandbox/slow: emptied after [0-9]+ ms \(TERM KILL\)\$" <<<"$second" &&
		[ "${ms:-0}" -ge 2000 ]
	ok $? "kill-two: slow emptied by KILL after its 2 s escalation" || diag "$out"
	died_with "$fast_pid" 137 10
	ok $? "kill-two: the sleeper died of SIGKILL"
	died_with "$slow_pid" 137 10
	ok $? "kill-two: the TERM-ignorer died of SIGKILL"
fi

for f in examples/*.sh; do
	check "$f parses (sh -n)" sh -n "$f"
done

services=(examples/*.service)
[ -e "${services[0]}" ] || bail_out "no examples/*.service"
if ! command -v systemd-analyze >/dev/null; then
	skip "systemd-analyze is not installed: ${services[*]} not verified"
	done_testing
	exit
fi
# verify also checks that the commands exist: where cgkill is not
# installed, the one just built stands in for /usr/bin/cgkill.
cgkill=/usr/bin/cgkill
[ -x "$cgkill" ] || cgkill=$(realpath "$CGKILL")
for f in "${services[@]}"; do
	name=${f##*/}
	sed "s|/usr/bin/cgkill|$cgkill|g" "$f" >"$tmp/$name"
	out=$(systemd-analyze verify --man=no "$tmp/$name" 2>&1)
	rc=$?
	ok $rc "systemd-analyze verify $f: exit 0" || diag "$out"
	# Unknown keys and sections are only warnings, with exit 0.
	warnings=$(grep -F -e "$name" -e "$tmp/" <<<"$out")
	[ -z "$warnings" ]
	ok $? "systemd-analyze verify $f: no warning about it" || diag "$warnings"
done

done_testing
