#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# make install / make uninstall into scratch DESTDIRs: every file in its
# place, the library's soname and symlinks, the version from its one place;
# then examples/kill-service.c built against the INSTALLED copy through
# pkg-config and run on a sandbox cgroup, and examples/graceful-stop.sh
# run with the installed cgkill. The daemon's files (cgkilld, its man
# pages, the unit with its path filled in, the example configuration, the
# completions) are installed with the rest, and nothing is enabled.
# Everything that is killed lives in
# <cgroup mount>/cgkill-test.<pid>.install, created and removed here.
cd "${0%/*}/.." || exit 1
src=$PWD
. tests/tap.sh
. tests/lib.sh

tmp=$(mktemp -d /tmp/cgkill-test-install.XXXXXX) || bail_out "mktemp"
sandbox=""

# Kill what is left in the sandbox (only the pids its own cgroup.procs
# files list), thaw it, remove it bottom-up with retries.
cleanup() {
	if [ -n "$sandbox" ] && [ -d "$sandbox" ]; then
		[ -w "$sandbox/cgroup.freeze" ] && echo 0 >"$sandbox/cgroup.freeze" 2>/dev/null
		[ -w "$sandbox/freezer.state" ] && echo THAWED >"$sandbox/freezer.state" 2>/dev/null
		rm_cgroup_tree "$sandbox"
	fi
	kill_spawned
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A sub-make must not inherit the flags of the make running the tests
# (check-asan's CFLAGS, B=build-asan, the jobserver).
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
mk() {
	make -s -C "$src" B="$tmp/build" CFLAGS="-O2 -g" LDFLAGS= "$@"
}

version=$(sed -n 's/^#define CGK_VERSION "\(.*\)"/\1/p' include/cgkill.h)
# The real file of libcgkill.so.1: libcgkill.so.1.MINOR.PATCH (see Makefile).
libfile=libcgkill.so.1.${version#*.}
mapfile -t optional < <(optional_files usr/share/zsh/vendor-completions usr/share/fish/vendor_completions.d usr/share/cgkill)
# The daemon's (daemon/daemon.mk, install-daemon).
daemon_files=(usr/share/man/man8/cgkilld.8 usr/share/man/man5/cgkilld.conf.5
	usr/share/man/man8/cgkillctl.8 usr/share/cgkill/cgkilld-status.schema.json
	usr/share/bash-completion/completions/cgkillctl
	usr/lib/systemd/system/cgkilld.service usr/share/doc/cgkill/cgkilld.conf.example
	usr/share/bash-completion/completions/cgkilld
	$(for f in data/cgkilld.service.d/*.conf.example; do echo "usr/share/doc/cgkill/${f#data/}"; done))

# --- the version lives in one place ---------------------------------------
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]
ok $? "CGK_VERSION in include/cgkill.h is a version ($version)"
[ "$(make -s -C "$src" B="$tmp/p" -p -n 2>/dev/null | sed -n 's/^VERSION := //p' | head -n1)" = "$version" ]
ok $? "the Makefile takes VERSION from cgkill.h"
! grep -qF "$version" Makefile
ok $? "the Makefile does not spell the version itself"
# (release tarballs leave debian/ out: see .gitattributes)
if [ -f debian/changelog ]; then
	deb=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' debian/changelog)
	deb=${deb#*:}
	[ "${deb%-*}" = "$version" ]
	ok $? "debian/changelog agrees ($deb)"
else
	skip "no debian/ here"
fi
grep -q "^## \[$version\]" CHANGELOG.md
ok $? "CHANGELOG.md has a section for $version"

# --- warnings are errors in development builds only -------------------------
# Does the first compilation that make $@ would run have -Werror? (make -n
# only writes the build directory's record of its flags.)
werror() {
	make -n -C "$src" B="$tmp/werror" CFLAGS="-O2 -g" "$@" 2>/dev/null |
		grep -m1 -- ' -c -o ' | grep -q -- '-Werror\( \|$\)'
}
! werror all && ! werror install
ok $? "make and make install build without -Werror"
werror check && werror demo
ok $? "make check and make demo build with -Werror"
# (make -n would run the sub-make, and write build-asan/flags)
make -n -s -C "$src" MAKE=echo check-asan 2>/dev/null | grep -q '^check B=build-asan '
ok $? "make check-asan is make check in build-asan, -Werror included"
werror WERROR=1 all && ! werror WERROR=0 check
ok $? "WERROR=1 and WERROR=0 on the command line decide"
# shellcheck disable=SC2016
grep -q 'make -j"$(nproc)" WERROR=1' .ci/run
ok $? ".ci/run builds with WERROR=1"

# --- make install, default layout ------------------------------------------
root=$tmp/root
check "make install DESTDIR=... PREFIX=/usr" mk -j2 install DESTDIR="$root" PREFIX=/usr
lib=$root/usr/lib
for f in usr/bin/cgkill "usr/lib/$libfile" usr/lib/libcgkill.a \
	usr/include/cgkill.h usr/lib/pkgconfig/libcgkill.pc usr/share/man/man1/cgkill.1 \
	usr/share/man/man3/libcgkill.3 usr/share/man/man3/cgk_kill.3 \
	usr/share/bash-completion/completions/cgkill usr/share/doc/cgkill/README.md \
	usr/share/doc/cgkill/SECURITY.md usr/sbin/cgkilld usr/sbin/cgkillctl "${daemon_files[@]}" "${optional[@]}"; do
	[ -f "$root/$f" ] && [ ! -L "$root/$f" ]
	ok $? "installed /$f"
done
[ -x "$root/usr/bin/cgkill" ]
ok $? "/usr/bin/cgkill is executable"
[ "$(stat -c %a "$root/usr/sbin/cgkilld")" = 755 ] && [ "$(stat -c %a "$root/usr/sbin/cgkillctl")" = 755 ]
ok $? "/usr/sbin/cgkilld and /usr/sbin/cgkillctl are mode 755"
[ "$(readlink "$lib/libcgkill.so.1")" = "$libfile" ]
ok $? "libcgkill.so.1 -> $libfile"
[ "$(readlink "$lib/libcgkill.so")" = libcgkill.so.1 ]
ok $? "libcgkill.so -> libcgkill.so.1"
soname=$(readelf -d "$lib/$libfile" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libcgkill.so.1 ]
ok $? "the installed library has soname libcgkill.so.1 ($soname)"
for f in usr/include/cgkill.h usr/lib/libcgkill.a usr/lib/pkgconfig/libcgkill.pc \
	usr/share/man/man1/cgkill.1 usr/share/bash-completion/completions/cgkill \
	usr/share/doc/cgkill/README.md "${daemon_files[@]}" "${optional[@]}"; do
	[ "$(stat -c %a "$root/$f")" = 644 ]
	ok $? "/$f is mode 644"
done
cmp -s include/cgkill.h "$root/usr/include/cgkill.h"
ok $? "the installed cgkill.h is include/cgkill.h"
cmp -s README.md "$root/usr/share/doc/cgkill/README.md" &&
	cmp -s SECURITY.md "$root/usr/share/doc/cgkill/SECURITY.md"
ok $? "README.md and SECURITY.md are installed as they are"
[ "$(cat "$root/usr/share/man/man3/cgk_kill.3")" = ".so man3/libcgkill.3" ]
ok $? "cgk_kill(3) is a link to libcgkill(3)"
# Every function of cgkill.h has its page, and no other cgk_ page is there.
declared=$(sed -n 's/^[a-z].*[ *]\(cgk_[a-z0-9_]*\)(.*/\1/p' include/cgkill.h | sort -u)
linked=$(grep -lx '.so man3/libcgkill.3' "$root"/usr/share/man/man3/cgk_*.3 2>/dev/null |
	sed 's|.*/\(cgk_[a-z0-9_]*\)\.3$|\1|' | sort -u)
pages=$(find "$root/usr/share/man/man3" -name 'cgk_*' -printf '%f\n' | sed 's/\.3$//' | sort -u)
nfun=$(wc -l <<<"$declared")
[ "$nfun" -ge 50 ] && [ "$declared" = "$linked" ] && [ "$pages" = "$linked" ]
ok $? "every function of cgkill.h ($nfun) has a man3 page that links to libcgkill(3), and only those" ||
	diag "missing: $(comm -23 <(echo "$declared") <(echo "$linked") | tr '\n' ' ')" \
		"extra: $(comm -13 <(echo "$declared") <(echo "$pages") | tr '\n' ' ')"
outside=$(find "$root" -mindepth 1 -maxdepth 1 ! -name usr)
[ -z "$outside" ]
ok $? "nothing installed outside /usr" || diag "$outside"
[ "$("$root/usr/bin/cgkill" --version)" = "cgkill $version" ]
ok $? "installed cgkill --version says $version"
"$root/usr/sbin/cgkilld" --version | grep -qE "^cgkilld $version( |\$)"
ok $? "installed cgkilld --version says $version"
unit=$root/usr/lib/systemd/system/cgkilld.service
sed 's|@SBINDIR@|/usr/sbin|g' data/cgkilld.service | cmp -s - "$unit" &&
	! grep -q @SBINDIR@ "$unit" && grep -qx 'ExecStart=/usr/sbin/cgkilld' "$unit"
ok $? "the installed unit is data/cgkilld.service with @SBINDIR@ = /usr/sbin" ||
	diag "$(grep -n 'Exec\|@' "$unit")"
cmp -s data/cgkilld.conf.example "$root/usr/share/doc/cgkill/cgkilld.conf.example" &&
	cmp -s man/cgkilld.8 "$root/usr/share/man/man8/cgkilld.8" &&
	cmp -s man/cgkilld.conf.5 "$root/usr/share/man/man5/cgkilld.conf.5" &&
	cmp -s completion/cgkilld "$root/usr/share/bash-completion/completions/cgkilld"
ok $? "cgkilld's example configuration, man pages and bash completion are installed as they are"
enabled=$(find "$root" -name '*.wants' -o -name '*.requires' -o -path '*/etc/*')
[ -z "$enabled" ]
ok $? "nothing enables cgkilld (no .wants, no /etc)" || diag "$enabled"
if command -v man >/dev/null; then
	MANPATH=$root/usr/share/man man -w cgkilld.conf >/dev/null 2>&1 &&
		MANPATH=$root/usr/share/man man -w 8 cgkilld >/dev/null 2>&1
	ok $? "man finds cgkilld(8) and cgkilld.conf(5) in the installed tree"
fi
if command -v man >/dev/null; then
	MANPATH=$root/usr/share/man man -w cgk_kill >/dev/null 2>&1
	ok $? "man finds cgk_kill(3) in the installed tree"
fi

# The build directory is up to date, until the flags change: then it is
# rebuilt, so that nothing built without -Werror escapes make check.
make -q -C "$src" B="$tmp/build" CFLAGS="-O2 -g" LDFLAGS= all
ok $? "make -q: the build is up to date"
! make -q -C "$src" B="$tmp/build" CFLAGS="-O2 -g" LDFLAGS= WERROR=1 all
ok $? "make -q WERROR=1: the same build is out of date"

# --- pkg-config, and the example built against the installed copy ---------
if ! command -v pkg-config >/dev/null; then
	skip "pkg-config not installed (apt-get install pkgconf)"
else
	export PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
	[ "$(pkg-config --modversion libcgkill)" = "$version" ]
	ok $? "pkg-config --modversion libcgkill: $version"
	grep -qx 'prefix=/usr' "$lib/pkgconfig/libcgkill.pc" &&
		grep -qx 'libdir=${prefix}/lib' "$lib/pkgconfig/libcgkill.pc" &&
		grep -qx 'includedir=${prefix}/include' "$lib/pkgconfig/libcgkill.pc"
	ok $? "libcgkill.pc has prefix=/usr, libdir and includedir below \${prefix}"
	flags=$(pkg-config --cflags --libs libcgkill)
	ok $? "pkg-config --cflags --libs libcgkill: $flags"
	grep -q -- "-L$lib" <<<"$flags" && grep -q -- "-lcgkill" <<<"$flags"
	ok $? "the flags point into the scratch root"
	# shellcheck disable=SC2086
	check "examples/kill-service.c builds against the installed libcgkill" \
		${CC:-cc} -Wall -Wextra -Werror -o "$tmp/kill-service" examples/kill-service.c $flags
	unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR
	readelf -d "$tmp/kill-service" 2>/dev/null | grep -q 'NEEDED.*\[libcgkill.so.1\]'
	ok $? "kill-service is linked to libcgkill.so.1"
	LD_LIBRARY_PATH=$lib ldd "$tmp/kill-service" 2>/dev/null | grep -q "libcgkill.so.1 => $lib/libcgkill.so.1"
	ok $? "with LD_LIBRARY_PATH it loads the installed copy"
fi

# --- uninstall ---------------------------------------------------------------
# (after the runs below, which need the installed tree; see the end)

# --- make install / uninstall with every directory set ---------------------
root2=$tmp/root2
dirs=(PREFIX=/opt/cgk BINDIR=/opt/cgk/sbin LIBDIR=/opt/cgk/lib64 INCLUDEDIR=/opt/cgk/inc
	MANDIR=/opt/cgk/man PKGCONFIGDIR=/opt/cgk/pc BASHCOMPDIR=/opt/cgk/bashcomp
	ZSHCOMPDIR=/opt/cgk/zshcomp FISHCOMPDIR=/opt/cgk/fishcomp DOCDIR=/opt/cgk/doc
	PKGDATADIR=/opt/cgk/data SBINDIR=/opt/cgk/daemon SYSTEMDUNITDIR=/opt/cgk/units)
mapfile -t optional2 < <(optional_files zshcomp fishcomp data)
check "make install with every directory set (${dirs[*]%%=*})" \
	mk install DESTDIR="$root2" "${dirs[@]}"
for f in sbin/cgkill "lib64/$libfile" lib64/libcgkill.so.1 lib64/libcgkill.so \
	lib64/libcgkill.a inc/cgkill.h pc/libcgkill.pc man/man1/cgkill.1 man/man3/libcgkill.3 \
	bashcomp/cgkill doc/README.md doc/SECURITY.md daemon/cgkilld daemon/cgkillctl man/man8/cgkilld.8 \
	man/man8/cgkillctl.8 \
	man/man5/cgkilld.conf.5 units/cgkilld.service doc/cgkilld.conf.example bashcomp/cgkilld \
	"${optional2[@]}"; do
	[ -e "$root2/opt/cgk/$f" ]
	ok $? "installed /opt/cgk/$f"
done
grep -qx 'ExecStart=/opt/cgk/daemon/cgkilld' "$root2/opt/cgk/units/cgkilld.service" &&
	grep -qx 'ExecStartPre=/opt/cgk/daemon/cgkilld --check' "$root2/opt/cgk/units/cgkilld.service" &&
	grep -qx 'ExecReload=/opt/cgk/daemon/cgkillctl reload' "$root2/opt/cgk/units/cgkilld.service"
ok $? "the unit runs cgkilld and cgkillctl from SBINDIR" ||
	diag "$(grep -n Exec "$root2/opt/cgk/units/cgkilld.service")"
grep -qx 'libdir=${prefix}/lib64' "$root2/opt/cgk/pc/libcgkill.pc" &&
	grep -qx 'includedir=${prefix}/inc' "$root2/opt/cgk/pc/libcgkill.pc"
ok $? "libcgkill.pc follows LIBDIR and INCLUDEDIR"
check "make uninstall with the same directories" mk uninstall DESTDIR="$root2" "${dirs[@]}"
left=$(find "$root2" ! -type d)
[ -z "$left" ]
ok $? "uninstall removes every file it installed" || diag "left: $left"

# --- run the examples on a sandbox cgroup -----------------------------------
# The cgroup v2 mount, else a v1 hierarchy with the freezer.
mnt=$(mount_of cgroup2)
[ -n "$mnt" ] || mnt=$(mount_of freezer)
if [ "$(id -u)" -ne 0 ]; then
	skip "the runs on a sandbox cgroup need root"
elif [ -z "$mnt" ]; then
	skip "no cgroup v2 mount and no v1 freezer hierarchy"
elif [ ! -x "$tmp/kill-service" ]; then
	skip "kill-service was not built"
elif ! mkdir "$mnt/cgkill-test.$$.install" 2>/dev/null; then
	skip "cannot create a cgroup under $mnt"
else
	sandbox=$mnt/cgkill-test.$$.install
	note "sandbox $sandbox"
	mkdir -p "$sandbox/target/a" "$sandbox/target/b/c" "$sandbox/sibling"
	spawn_in "$sandbox" sleep 300
	s_parent=$spawned
	spawn_in "$sandbox/sibling" sleep 300
	s_sibling=$spawned

	# kill-service: TERM, KILL after 1 s to the one that ignores TERM.
	spawn_in "$sandbox/target/a" sleep 300
	plain=$spawned
	spawn_in "$sandbox/target/b/c" sleep 300
	deep=$spawned
	spawn_in "$sandbox/target/b" bash -c 'trap "" TERM; exec sleep 300'
	stubborn=$spawned
	n=$(cat "$sandbox"/target/{a,b,b/c}/cgroup.procs | wc -l)
	[ "$n" -eq 3 ]
	ok $? "three processes in the target ($n)"
	out=$(LD_LIBRARY_PATH=$lib timeout 60 "$tmp/kill-service" -s TERM -k 1s -w 10s "$sandbox/target")
	rc=$?
	ok $rc "kill-service -s TERM -k 1s <target>: exit 0" || diag "$out"
	note "$out"
	grep -qE '^signals: +TERM KILL$' <<<"$out"
	ok $? "kill-service reports TERM then KILL"
	grep -qE '^emptied: +yes after [0-9]+ ms$' <<<"$out"
	ok $? "kill-service reports the cgroup emptied"
	grep -qE '^cgroups: +4$' <<<"$out"
	ok $? "kill-service reports 4 cgroups visited"
	grep -qE '^signalled: +3( |$)' <<<"$out"
	ok $? "kill-service reports 3 processes signalled (by SIGTERM)"
	died_with "$plain" 143 5 && died_with "$deep" 143 5
	ok $? "the plain sleepers died of SIGTERM"
	died_with "$stubborn" 137 5
	ok $? "the one ignoring SIGTERM died of SIGKILL"
	alive "$s_parent" && alive "$s_sibling"
	ok $? "sentinels in the parent and sibling cgroups are alive"

	# The JSON report through cgk_report_json().
	spawn_in "$sandbox/target/a" sleep 300
	plain=$spawned
	json=$(LD_LIBRARY_PATH=$lib timeout 60 "$tmp/kill-service" -j "$sandbox/target")
	ok $? "kill-service -j <target>: exit 0"
	if command -v python3 >/dev/null; then
		python3 -c 'import json, sys
d = json.load(sys.stdin)
t = d["targets"][0]
assert d["version"] == sys.argv[1], d["version"]
assert t["emptied"] is True and t["signals"] == ["KILL"], t
assert t["path"] == sys.argv[2], t["path"]' "$version" "$sandbox/target" <<<"$json"
		ok $? "the JSON report is valid and says KILL, emptied" || diag "$json"
	fi
	died_with "$plain" 137 5
	ok $? "the sleeper died of SIGKILL"

	# graceful-stop.sh with the installed cgkill.
	spawn_in "$sandbox/target/a" sleep 300
	plain=$spawned
	spawn_in "$sandbox/target/b/c" bash -c 'trap "" TERM; exec sleep 300'
	stubborn=$spawned
	out=$(CGKILL=$root/usr/bin/cgkill timeout 60 examples/graceful-stop.sh -n "$sandbox/target")
	rc=$?
	# (one line a process, its pid first, whatever the layout of the columns)
	[ $rc -eq 0 ] && grep -qE "^ *${plain}[[:space:]]" <<<"$out" &&
		grep -qE "^ *${stubborn}[[:space:]]" <<<"$out"
	ok $? "graceful-stop.sh -n lists both processes" || diag "rc $rc: $out"
	alive "$plain" && alive "$stubborn"
	ok $? "... and signals nothing"
	start=$(date +%s%N)
	out=$(CGKILL=$root/usr/bin/cgkill timeout 60 examples/graceful-stop.sh -v -t 1s -k 10s "$sandbox/target" 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	ok $rc "graceful-stop.sh -t 1s <target>: exit 0 ($ms ms)" || diag "$out"
	note "$out"
	died_with "$plain" 143 5
	ok $? "graceful-stop.sh: the plain sleeper died of SIGTERM"
	died_with "$stubborn" 137 5
	ok $? "graceful-stop.sh: the one ignoring SIGTERM died of SIGKILL"
	[ "$ms" -ge 900 ]
	ok $? "graceful-stop.sh waited the grace period before SIGKILL"
	alive "$s_parent" && alive "$s_sibling"
	ok $? "sentinels in the parent and sibling cgroups are still alive"
fi

# --- uninstall the default layout ---------------------------------------------
check "make uninstall DESTDIR=... PREFIX=/usr" mk uninstall DESTDIR="$root" PREFIX=/usr
left=$(find "$root" ! -type d)
[ -z "$left" ]
ok $? "uninstall leaves no file behind" || diag "left: $left"

done_testing
