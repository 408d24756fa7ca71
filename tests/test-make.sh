#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What the Makefile's own targets say before they act, with stand-ins for
# what they would run:
# - make test-deps (the first step of make check) names the packages it
#   installs before it installs them (APT_GET: a stand-in that records
#   what it is asked for and whether it was said already);
# - make check-deb without its tools (DEB_TOOLS naming one that does not
#   exist, and the real list where debhelper is not installed) fails, and
#   says what to install, instead of passing having tested nothing.
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

tmp=$(mktemp -d /tmp/cgkill-test-make.XXXXXX) || bail_out "mktemp"
trap 'rm -rf "$tmp"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

# --- make test-deps ---------------------------------------------------------
# The stand-in apt-get: its arguments, and whether make's output named the
# package when it was called.
cat >"$tmp/apt-get" <<EOF
#!/bin/sh
echo "\$*" >>"$tmp/apt.args"
grep -q cgkill-fake-package "$tmp/make.out" && echo said >>"$tmp/apt.said"
exit 0
EOF
chmod +x "$tmp/apt-get"
make -s test-deps TEST_DEPS="cgkill-no-such-command:cgkill-fake-package" APT_GET="$tmp/apt-get" \
	>"$tmp/make.out" 2>&1
ok $? "make test-deps with a missing command: done"
grep -q '^install .*cgkill-fake-package' "$tmp/apt.args" 2>/dev/null
ok $? "it installs the missing command's package" || diag "$(cat "$tmp/apt.args" 2>/dev/null)"
grep -q 'installing them.*cgkill-fake-package' "$tmp/make.out" && [ -s "$tmp/apt.said" ]
ok $? "and said so before it did" || diag "$(cat "$tmp/make.out")"
# (both as words, one blank apart)
asked=$(sed -n 's/^install -y -qq //p' "$tmp/apt.args" | head -n1 | xargs)
said=$(sed -n 's/.*installing them with [^:]*://p' "$tmp/make.out" | xargs)
[ -n "$asked" ] && [ "$said" = "$asked" ]
ok $? "what it says is what it installs ($asked)" || diag "said: $said" "asked: $asked"

# --- make check-deb without its tools ------------------------------------------
out=$(make check-deb DEB_TOOLS="dpkg-deb cgkill-no-such-tool" 2>&1)
rc=$?
[ $rc -ne 0 ]
ok $? "make check-deb without a tool it needs fails (status $rc)"
grep -q 'not installed:.*cgkill-no-such-tool.*apt-get install debhelper dpkg-dev' <<<"$out"
ok $? "and names the tool and the packages to install" || diag "$out"
if ! command -v dh >/dev/null; then
	out=$(make check-deb 2>&1)
	rc=$?
	[ $rc -ne 0 ] && grep -q 'not installed: dh.*apt-get install debhelper' <<<"$out"
	ok $? "here, without debhelper, make check-deb fails and says so (status $rc)" || diag "$out"
else
	note "debhelper is installed: make check-deb itself not run here (slow)"
fi

done_testing
