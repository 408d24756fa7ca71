#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# `make check-deb`: build the Debian source and binary packages with
# dpkg-buildpackage in a copy of the tree under /tmp, or $TMPDIR (the build
# writes its files into the parent directory, which must not be the
# source tree's), from an
# upstream tarball without debian/ (as git archive makes it, see
# .gitattributes); lintian them when lintian is installed; unpack them with
# dpkg -x into a scratch root, and run the packaged cgkill and the example
# against the packaged library; the cgkilld package ships the daemon, its
# unit neither enabled nor started. Slow (a full build); not part of
# `make check`. Without debhelper or dpkg-dev it fails, and says what to
# install ($DEB_TOOLS: the programs it needs, from the Makefile).
cd "${0%/*}/.." || exit 1
src=$PWD
. tests/tap.sh
. tests/lib.sh

[ -d debian ] || skip_all "no debian/ here (release tarballs leave it out)"
# Without its tools it fails: a pass that tested nothing would read as one
# that tested the packages.
missing=""
for tool in ${DEB_TOOLS:-dpkg-buildpackage dh dpkg-deb dpkg-parsechangelog dpkg-architecture}; do
	command -v "$tool" >/dev/null || missing="$missing $tool"
done
[ -z "$missing" ] ||
	bail_out "not installed:$missing; make check-deb needs them: apt-get install debhelper dpkg-dev"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/cgkill-check-deb.XXXXXX") || bail_out "mktemp"
trap 'rm -rf "$tmp"' EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

version=$(sed -n 's/^#define CGK_VERSION "\(.*\)"/\1/p' include/cgkill.h)
debversion=$(dpkg-parsechangelog -l debian/changelog -S Version)
arch=$(dpkg-architecture -q DEB_HOST_ARCH)
multiarch=$(dpkg-architecture -q DEB_HOST_MULTIARCH)
[ "${debversion%-*}" = "$version" ]
ok $? "debian/changelog ($debversion) agrees with CGK_VERSION ($version)"

# The tree as the sources are, without build products or VCS data; the
# upstream tarball is the same without debian/.
mkdir "$tmp/cgkill-$version"
tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . |
	tar -C "$tmp/cgkill-$version" -xf -
ok $? "copied the tree to $tmp"
tar -C "$tmp" --exclude="cgkill-$version/debian" -cJf "$tmp/cgkill_$version.orig.tar.xz" \
	"cgkill-$version"
ok $? "cgkill_$version.orig.tar.xz"

log=$tmp/build.log
(cd "$tmp/cgkill-$version" && timeout 1200 dpkg-buildpackage -us -uc) >"$log" 2>&1
rc=$?
ok $rc "dpkg-buildpackage -us -uc (source and binaries)" || diag "$(tail -n 40 "$log")"
# A distribution build: the hardening flags' -Werror=format-security, but
# no -Werror of the Makefile's (WERROR is for development and CI).
grep -qE -- '-Werror( |$)' "$log"
[ $? -eq 1 ] && grep -q -- ' -Wall -Wextra ' "$log"
ok $? "the package is built with the warnings on but without -Werror"
if grep -q 'dpkg-gensymbols: warning' "$log"; then
	diag "$(grep -A20 'dpkg-gensymbols: warning' "$log")"
	ok 1 "dpkg-gensymbols: the exported symbols match debian/libcgkill1.symbols"
else
	ok 0 "dpkg-gensymbols: the exported symbols match debian/libcgkill1.symbols"
fi

root=$tmp/root
mkdir "$root"
dsc=$tmp/cgkill_${debversion}.dsc
grep -qx 'Testsuite: autopkgtest' "$dsc" 2>/dev/null
ok $? "the source package declares its autopkgtest (debian/tests/control)"
# Tags a Debian packaging kept upstream cannot avoid: no ITP bug to close
# (initial-upload-closes-no-bugs) and no upstream signing key for the
# watch file to check tags with (debian-watch-does-not-check-openpgp-signature).
lintian_expected='initial-upload-closes-no-bugs|debian-watch-does-not-check-openpgp-signature'
if command -v lintian >/dev/null; then
	changes=$tmp/cgkill_${debversion}_${arch}.changes
	out=$(lintian --pedantic -I -E "$changes" 2>&1 | grep -v '^running with root privileges')
	note "lintian --pedantic -I -E:" "$out"
	tags=$(grep -E '^[EWIPXO]: ' <<<"$out" | grep -vE ": ($lintian_expected)( |$)")
	[ -z "$tags" ]
	ok $? "lintian --pedantic -I -E: no tag but $lintian_expected" || diag "$tags"
else
	skip "lintian not installed"
fi

for pkg in cgkill libcgkill1 libcgkill-dev cgkilld; do
	deb=$tmp/${pkg}_${debversion}_${arch}.deb
	[ -f "$deb" ]
	ok $? "built ${deb##*/}" || continue
	check "dpkg -x ${deb##*/}" dpkg -x "$deb" "$root"
done

lib=$root/usr/lib/$multiarch
# The real file of libcgkill.so.1: libcgkill.so.1.MINOR.PATCH (see Makefile).
libfile=libcgkill.so.1.${version#*.}
mapfile -t optional < <(optional_files usr/share/zsh/vendor-completions usr/share/fish/vendor_completions.d usr/share/cgkill)
# cgkilld's unit, where debian/rules puts it (SYSTEMDUNITDIR).
unit=lib/systemd/system/cgkilld.service
for f in usr/bin/cgkill "usr/lib/$multiarch/libcgkill.so.1" "usr/lib/$multiarch/$libfile" \
	usr/include/cgkill.h "usr/lib/$multiarch/libcgkill.so" "usr/lib/$multiarch/libcgkill.a" \
	"usr/lib/$multiarch/pkgconfig/libcgkill.pc" usr/share/man/man1/cgkill.1.gz \
	usr/share/man/man3/libcgkill.3.gz usr/share/bash-completion/completions/cgkill \
	usr/share/doc/cgkill/examples/graceful-stop.sh \
	usr/share/doc/libcgkill-dev/examples/kill-service.c \
	usr/share/doc/cgkill/copyright usr/share/doc/libcgkill1/copyright \
	usr/share/doc/libcgkill-dev/copyright usr/sbin/cgkilld usr/share/man/man8/cgkilld.8.gz \
	usr/share/man/man5/cgkilld.conf.5.gz "$unit" usr/share/doc/cgkilld/cgkilld.conf.example \
	usr/share/bash-completion/completions/cgkilld usr/share/doc/cgkilld/copyright \
	"${optional[@]}"; do
	[ -e "$root/$f" ]
	ok $? "packaged /$f"
done
for doc in README.md SECURITY.md; do
	[ -e "$root/usr/share/doc/cgkill/$doc" ] || [ -e "$root/usr/share/doc/cgkill/$doc.gz" ]
	ok $? "packaged /usr/share/doc/cgkill/$doc(.gz)"
done
cmp -s debian/copyright "$root/usr/share/doc/cgkill/copyright"
ok $? "the packages' copyright file is debian/copyright"
[ "$(dpkg-deb -f "$tmp/libcgkill-dev_${debversion}_${arch}.deb" Depends)" = "libcgkill1 (= $debversion)" ]
ok $? "libcgkill-dev depends on libcgkill1 (= $debversion)"
dpkg-deb -c "$tmp/libcgkill1_${debversion}_${arch}.deb" | grep -q "libcgkill.so.1 -> $libfile\$"
ok $? "libcgkill1 ships libcgkill.so.1 -> $libfile"
[ "$(dpkg-deb -f "$tmp/cgkill_${debversion}_${arch}.deb" Homepage)" = https://github.com/cgkill/cgkill ]
ok $? "the packages name their Homepage"
# A cgkill linked statically (the Makefile's CGKILL_LDFLAGS) holds glibc.
built_using=$(dpkg-deb -f "$tmp/cgkill_${debversion}_${arch}.deb" Built-Using)
if readelf -d "$root/usr/bin/cgkill" 2>/dev/null | grep -q NEEDED; then
	[ -z "$built_using" ]
	ok $? "cgkill is linked dynamically, and no Built-Using"
else
	[[ $built_using == "glibc (= "*")" ]]
	ok $? "cgkill is linked statically, and Built-Using names glibc: $built_using"
fi
dpkg-deb --ctrl-tarfile "$tmp/libcgkill1_${debversion}_${arch}.deb" | tar -xOf - ./symbols |
	grep -qx '\* Build-Depends-Package: libcgkill-dev'
ok $? "libcgkill1's symbols file names its -dev package (Build-Depends-Package)"

# cgkilld: its files in its package only, the unit with its path filled
# in, installed but neither enabled nor started.
kdeb=$tmp/cgkilld_${debversion}_${arch}.deb
[ "$(dpkg-deb -f "$kdeb" Section)" = admin ] && dpkg-deb -f "$kdeb" Depends | grep -q 'libc6'
ok $? "cgkilld: Section admin, depends on libc6 (\${shlibs:Depends})"
others=$(for pkg in cgkill libcgkill1 libcgkill-dev; do
	dpkg-deb -c "$tmp/${pkg}_${debversion}_${arch}.deb"; done | grep cgkilld)
[ -z "$others" ]
ok $? "no other package ships cgkilld's files" || diag "$others"
grep -qx 'ExecStart=/usr/sbin/cgkilld' "$root/$unit" && ! grep -q @SBINDIR@ "$root/$unit"
ok $? "the packaged unit runs /usr/sbin/cgkilld" || diag "$(grep -n Exec "$root/$unit")"
cmp -s data/cgkilld.conf.example "$root/usr/share/doc/cgkilld/cgkilld.conf.example"
ok $? "the example configuration is data/cgkilld.conf.example"
for f in data/cgkilld.service.d/*.conf.example; do
	cmp -s "$f" "$root/usr/share/doc/cgkilld/${f#data/}"
	ok $? "the unit's drop-in example /usr/share/doc/cgkilld/${f#data/}"
done
wants=$(dpkg-deb -c "$kdeb" | grep -E '\.wants/|/etc/')
[ -z "$wants" ]
ok $? "cgkilld ships no .wants link and nothing in /etc" || diag "$wants"
postinst=$(dpkg-deb --ctrl-tarfile "$kdeb" | tar -xOf - ./postinst 2>/dev/null)
# dh_installsystemd --no-enable: the unit is enabled again only where it
# was installed and enabled before (debian-installed, then was-enabled),
# never on a first install (its plain form enables whatever was-enabled,
# which defaults to true); --no-start: no deb-systemd-invoke start.
grep -q 'deb-systemd-helper debian-installed .*cgkilld.service' <<<"$postinst" &&
	! grep -q 'deb-systemd-invoke' <<<"$postinst"
ok $? "cgkilld's postinst neither enables nor starts the unit" || diag "$postinst"
out=$("$root/usr/sbin/cgkilld" --version)
[[ $out == "cgkilld $version"* ]]
ok $? "<root>/usr/sbin/cgkilld --version: $out"
"$root/usr/sbin/cgkilld" --check "$root/usr/share/doc/cgkilld/cgkilld.conf.example" >/dev/null 2>&1
ok $? "<root>/usr/sbin/cgkilld --check accepts the packaged example"

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
