#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/run-test, the wrapper make check runs each test file in: a file
# that passes is passed through (its output, its status); a file that
# hangs is stopped at CGKILL_TEST_TIMEOUT, fails with a line naming it,
# and leaves no process behind, not even a child holding prove's pipe.
cd "${0%/*}/.." || exit 1
. tests/tap.sh

tmp=$(mktemp -d) || bail_out "mktemp failed"
trap 'rm -rf "$tmp"' EXIT

printf '#!/bin/sh\necho "1..1"\necho "ok 1 - fine"\n' >"$tmp/pass.sh"
# the hanging file and a child of its that would hold the pipe open
printf '#!/bin/sh\necho "1..1"\nsleep 300 &\necho $! >"%s/child"\nsleep 300\n' "$tmp" >"$tmp/hang.sh"
chmod +x "$tmp/pass.sh" "$tmp/hang.sh"

out=$(tests/run-test "$tmp/pass.sh" 2>&1)
[ $? = 0 ] && [ "$out" = "$(printf '1..1\nok 1 - fine')" ]
ok $? "a passing file: its output and status passed through"

start=$SECONDS
out=$(CGKILL_TEST_TIMEOUT=1 tests/run-test "$tmp/hang.sh" 2>&1)
rc=$?
took=$((SECONDS - start))
[ "$rc" = 124 ]
ok $? "a hanging file fails with timeout's status 124 ($rc)"
[ "$took" -lt 30 ]
ok $? "and is stopped at its limit, its pipe closed: ${took}s for a 1 s limit"
grep -q "hang.sh: timed out after 1s (CGKILL_TEST_TIMEOUT)" <<<"$out"
ok $? "a line names the file and the limit" || diag "$out"
child=$(cat "$tmp/child" 2>/dev/null)
# killed, it may stay a zombie a moment, until its new parent reaps it
for _ in $(seq 50); do kill -0 "${child:-0}" 2>/dev/null || break; sleep 0.1; done
[ -n "$child" ] && ! kill -0 "$child" 2>/dev/null
ok $? "the file's child is gone too (pid ${child:-none})"
done_testing
