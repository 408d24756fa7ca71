#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The shipped unit (data/cgkilld.service, its path filled in as make
# install does) and each drop-in example of data/cgkilld.service.d/ pass
# "systemd-analyze verify" without a word (its Documentation= pages found
# in man/), and the drop-ins do what they say: network-hooks.conf opens
# the network (PrivateNetwork=no, AF_INET and AF_INET6), which the unit
# alone does not ("systemd-analyze security --offline"); the unit's
# Description, and the cgkilld package's in debian/control, name
# pressure, victim choice and hooks. notify-reload.conf
# needs systemd 253: an older systemd-analyze may only say that it does
# not know the type. Skips only without systemd-analyze (Debian: systemd).
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

command -v systemd-analyze >/dev/null || skip_all "systemd-analyze not installed (Debian: systemd)"
[ -x "$build/cgkilld" ] || bail_out "$build/cgkilld not built (run make first)"
tmp=$(mktemp -d /tmp/cgkill-test-unit.XXXXXX) || bail_out "mktemp"
trap 'rm -rf "$tmp"' EXIT

sdversion=$(systemd-analyze --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')
mkdir -p "$tmp/man/man5" "$tmp/man/man8" "$tmp/unit/cgkilld.service.d"
if ! ln -s "$PWD/man/cgkilld.8" "$tmp/man/man8/" || ! ln -s "$PWD/man/cgkilld.conf.5" "$tmp/man/man5/"; then
	bail_out "cannot link the man pages"
fi
sed "s|@SBINDIR@|$(cd "$build" && pwd)|g" data/cgkilld.service >"$tmp/unit/cgkilld.service"
unit=$tmp/unit/cgkilld.service

# verify [DROPIN]: what systemd-analyze verify says of the unit (with
# DROPIN as its only drop-in) in $out, its status in $verify_rc.
verify() {
	rm -f "$tmp/unit/cgkilld.service.d/"*
	[ -n "${1:-}" ] && cp "$1" "$tmp/unit/cgkilld.service.d/x.conf"
	out=$(MANPATH=$tmp/man systemd-analyze verify "$unit" 2>&1)
	verify_rc=$?
}

# The lines of "systemd-analyze security" about the network, with DROPIN.
network() {
	rm -f "$tmp/unit/cgkilld.service.d/"*
	[ -n "${1:-}" ] && cp "$1" "$tmp/unit/cgkilld.service.d/x.conf"
	MANPATH=$tmp/man systemd-analyze security --offline=yes "$unit" 2>&1 |
		grep -E '(PrivateNetwork=|AF_\(INET\|INET6\))'
}

verify
[ "$verify_rc" -eq 0 ] && [ -z "$out" ]
ok $? "systemd-analyze verify: the unit, without a word (systemd $sdversion)" || diag "$out"

grep -q '^Description=.*pressure.*victim.*hooks' data/cgkilld.service
ok $? "the unit's Description names pressure, victim choice and hooks"
# the cgkilld package's description, from its Package: line to the next
desc=$(awk '/^Package: / { p = ($2 == "cgkilld") } p' debian/control)
grep -q '^Description: .*pressure' <<<"$desc" && grep -qi 'victim' <<<"$desc" && grep -qi 'hooks' <<<"$desc"
ok $? "so does debian/control's cgkilld (pressure in its summary)"

n=0
for f in data/cgkilld.service.d/*.conf.example; do
	n=$((n + 1))
	verify "$f"
	if [ "${f##*/}" = notify-reload.conf.example ] && [ "${sdversion:-0}" -lt 253 ]; then
		[ "$verify_rc" -eq 0 ] && [ "$(grep -vc 'Failed to parse service type, ignoring: notify-reload' <<<"$out")" -eq 0 ]
		ok $? "systemd-analyze verify with ${f##*/}: only its Type= is unknown to systemd $sdversion" ||
			diag "$out"
	else
		[ "$verify_rc" -eq 0 ] && [ -z "$out" ]
		ok $? "systemd-analyze verify with ${f##*/}: not a word" || diag "$out"
	fi
done
[ "$n" -ge 3 ]
ok $? "the drop-in examples were verified ($n)"

printf '[Service]\nNoSuchKey=1\n' >"$tmp/bad.conf"
verify "$tmp/bad.conf"
grep -q "Unknown key 'NoSuchKey'" <<<"$out"
ok $? "(a drop-in beside the unit is read: a bad key in one is reported)" || diag "$out"

out=$(network)
grep -q '✓ PrivateNetwork=' <<<"$out" && grep -q '✓ RestrictAddressFamilies=~AF_(INET|INET6)' <<<"$out"
ok $? "the unit alone: no network, no Internet sockets (systemd-analyze security)" || diag "$out"
out=$(network data/cgkilld.service.d/network-hooks.conf.example)
grep -q '✗ PrivateNetwork=' <<<"$out" && grep -q '✗ RestrictAddressFamilies=~AF_(INET|INET6)' <<<"$out"
ok $? "with network-hooks.conf: the host's network and Internet sockets" || diag "$out"

grep -q '^ReadWritePaths=/' data/cgkilld.service.d/event-log-path.conf.example
ok $? "event-log-path.conf adds a writable path"

done_testing
