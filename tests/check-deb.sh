#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make check-deb`: build the Debian packages with dpkg-buildpackage in a
# copy of the tree under /tmp (the build writes its .deb files into the
# parent directory, which must not be /work), unpack them with dpkg -x into
# a scratch root, and run the packaged cgkill and the example against the
# packaged library. Slow (a full build); not part of `make check`.
cd "${0%/*}/.." || exit 1
src=$PWD
. tests/tap.sh

for tool in dpkg-buildpackage dh dpkg-deb; do
	command -v "$tool" >/dev/null ||
		skip_all "$tool not installed (apt-get install debhelper dpkg-dev)"
done

tmp=$(mktemp -d /tmp/cgkill-check-deb.XXXXXX) || bail_out "mktemp"
trap 'rm -rf "$tmp"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

version=$(sed -n 's/^#define CGK_VERSION "\(.*\)"/\1/p' include/cgkill.h)
debversion=$(dpkg-parsechangelog -l debian/changelog -S Version)
arch=$(dpkg-architecture -q DEB_HOST_ARCH)
multiarch=$(dpkg-architecture -q DEB_HOST_MULTIARCH)
[ "${debversion%-*}" = "$version" ]
ok $? "debian/changelog ($debversion) agrees with CGK_VERSION ($version)"

# The tree as the sources are, without build products or VCS data.
mkdir "$tmp/cgkill-$version"
tar -C "$src" --exclude=./build --exclude=./build-asan --exclude=./.git -cf - . |
	tar -C "$tmp/cgkill-$version" -xf -
ok $? "copied the tree to $tmp"

log=$tmp/build.log
(cd "$tmp/cgkill-$version" && timeout 1200 dpkg-buildpackage -us -uc -b) >"$log" 2>&1
rc=$?
ok $rc "dpkg-buildpackage -us -uc -b" || diag "$(tail -n 40 "$log")"
if grep -q 'dpkg-gensymbols: warning' "$log"; then
	diag "$(grep -A20 'dpkg-gensymbols: warning' "$log")"
	ok 1 "dpkg-gensymbols: the exported symbols match debian/libcgkill1.symbols"
else
	ok 0 "dpkg-gensymbols: the exported symbols match debian/libcgkill1.symbols"
fi

root=$tmp/root
mkdir "$root"
for pkg in cgkill libcgkill1 libcgkill-dev; do
	deb=$tmp/${pkg}_${debversion}_${arch}.deb
	[ -f "$deb" ]
	ok $? "built ${deb##*/}" || continue
	check "dpkg -x ${deb##*/}" dpkg -x "$deb" "$root"
done

lib=$root/usr/lib/$multiarch
for f in usr/bin/cgkill "usr/lib/$multiarch/libcgkill.so.1" usr/include/cgkill.h \
	"usr/lib/$multiarch/libcgkill.so" "usr/lib/$multiarch/libcgkill.a" \
	"usr/lib/$multiarch/pkgconfig/libcgkill.pc" usr/share/man/man1/cgkill.1.gz \
	usr/share/man/man3/libcgkill.3.gz usr/share/bash-completion/completions/cgkill \
	usr/share/doc/cgkill/examples/graceful-stop.sh \
	usr/share/doc/libcgkill-dev/examples/kill-service.c; do
	[ -e "$root/$f" ]
	ok $? "packaged /$f"
done
[ "$(dpkg-deb -f "$tmp/libcgkill-dev_${debversion}_${arch}.deb" Depends)" = "libcgkill1 (= $debversion)" ]
ok $? "libcgkill-dev depends on libcgkill1 (= $debversion)"
dpkg-deb -c "$tmp/libcgkill1_${debversion}_${arch}.deb" | grep -q "libcgkill.so.1 -> libcgkill.so.$version"
ok $? "libcgkill1 ships libcgkill.so.1 -> libcgkill.so.$version"

out=$(LD_LIBRARY_PATH=$lib "$root/usr/bin/cgkill" --version)
rc=$?
[ $rc -eq 0 ] && [ "$out" = "cgkill $version" ]
ok $? "<root>/usr/bin/cgkill --version: $out"
out=$(LD_LIBRARY_PATH=$lib "$root/usr/bin/cgkill" --help | tail -n1)
[ "$out" = "For more details see cgkill(1)." ]
ok $? "<root>/usr/bin/cgkill --help works"

if command -v pkg-config >/dev/null; then
	flags=$(PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root \
		pkg-config --cflags --libs libcgkill)
	ok $? "pkg-config finds the packaged libcgkill: $flags"
	# shellcheck disable=SC2086
	check "the packaged example builds against the packaged library" \
		${CC:-cc} -Wall -Wextra -Werror -o "$tmp/kill-service" \
		"$root/usr/share/doc/libcgkill-dev/examples/kill-service.c" $flags
	out=$(LD_LIBRARY_PATH=$lib "$tmp/kill-service" 2>&1)
	[ $? -eq 2 ] && grep -q usage <<<"$out"
	ok $? "the example runs with the packaged libcgkill.so.1"
	LD_LIBRARY_PATH=$lib ldd "$tmp/kill-service" | grep -q "libcgkill.so.1 => $lib/libcgkill.so.1"
	ok $? "... loaded from the scratch root"
else
	skip "pkg-config not installed"
fi

done_testing
