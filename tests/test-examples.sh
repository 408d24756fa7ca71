#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The examples are valid as they stand: every examples/*.service passes
# "systemd-analyze verify" of the systemd installed here (Debian 12: 252)
# without a warning about it, and every examples/*.sh parses. (They are
# run for real by test-install.sh and test-units.sh.)
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

tmp=$(mktemp -d /tmp/cgkill-test-examples.XXXXXX) || bail_out "mktemp"
trap 'rm -rf "$tmp"' EXIT

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
