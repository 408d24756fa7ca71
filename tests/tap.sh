# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=sh
# A tiny TAP producer for the shell tests, sourced by tests/test-*.sh; the
# same conventions as tap.c (no plan: done_testing prints it at the end).
#
#	. "${0%/*}/tap.sh"
#	ok $? "what was checked"          after a command
#	check "what" cmd args...           run cmd, output shown on failure
#	skip "why"; skip_all "why"; diag "text"
#	done_testing
#
# With CGKILL_TEST_NO_SKIP=1 (CI) a skip is a failure, as in tap.c.

tap_run=0
tap_fails=0

# Every line prefixed, so that no line of a message is read as TAP.
diag() {
	printf '%s\n' "$@" | sed 's/^/# /' >&2
}

note() {
	printf '%s\n' "$@" | sed 's/^/# /'
}

ok() {
	_tap_rc=$1
	shift
	tap_run=$((tap_run + 1))
	if [ "$_tap_rc" -eq 0 ]; then
		printf 'ok %d - %s\n' "$tap_run" "$*"
	else
		tap_fails=$((tap_fails + 1))
		printf 'not ok %d - %s\n' "$tap_run" "$*"
	fi
	return "$_tap_rc"
}

# check "description" command...: one test point, the command's output
# shown as diagnostics if it fails.
check() {
	_tap_what=$1
	shift
	if _tap_out=$("$@" 2>&1); then
		ok 0 "$_tap_what"
	else
		_tap_rc=$?
		ok 1 "$_tap_what"
		diag "command: $* (exit $_tap_rc)"
		[ -z "$_tap_out" ] || diag "$(printf '%s\n' "$_tap_out" | tail -n 40)"
		return 1
	fi
}

tap_no_skip() {
	[ "${CGKILL_TEST_NO_SKIP:-}" = 1 ]
}

skip() {
	tap_run=$((tap_run + 1))
	if tap_no_skip; then
		tap_fails=$((tap_fails + 1))
		printf 'not ok %d - skipped, but CGKILL_TEST_NO_SKIP=1: %s\n' "$tap_run" "$*"
	else
		printf 'ok %d # skip %s\n' "$tap_run" "$*"
	fi
}

skip_all() {
	if tap_no_skip; then
		printf '1..%d\n' $((tap_run + 1))
		printf 'not ok %d - skipped, but CGKILL_TEST_NO_SKIP=1: %s\n' $((tap_run + 1)) "$*"
		exit 1
	fi
	if [ "$tap_run" -eq 0 ]; then
		printf '1..0 # SKIP %s\n' "$*"
	else
		printf '# skipping the rest: %s\n' "$*"
		printf '1..%d\n' "$tap_run"
	fi
	exit $((tap_fails ? 1 : 0))
}

bail_out() {
	printf 'Bail out! %s\n' "$*"
	exit 255
}

done_testing() {
	printf '1..%d\n' "$tap_run"
	[ "$tap_fails" -eq 0 ]
}
