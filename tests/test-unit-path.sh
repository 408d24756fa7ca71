#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkill --unit and --user-unit run systemctl from /usr/bin (or /bin), never
# the first one on the caller's PATH (issue 26, item 14): cgkill runs as
# root, from scripts and through sudo, and a PATH someone else may write
# would make root run their program. A stand-in "systemctl" first on PATH
# would leave a mark and name a sandbox cgroup with a sleeper in it; it must
# not run, and the sleeper must live.
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

need_cgkill
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a cgroup sandbox)"
v2=$(mount_of cgroup2)
[ -n "$v2" ] || skip_all "no cgroup v2 mount"

tmp=$(mktemp -d /tmp/cgkill-test-unit-path.XXXXXX) || bail_out "mktemp"
box=$v2/cgkill-test.$$.unitpath
sleeper=
cleanup() {
	[ -n "$sleeper" ] && kill -KILL "$sleeper" 2>/dev/null
	wait 2>/dev/null
	[ -d "$box" ] && rm_cgroup_tree "$box"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 129' HUP INT TERM

mkdir -p "$box/T" || bail_out "cannot create $box/T"
sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 300' sh "$box/T" &
sleeper=$!
for _ in $(seq 100); do
	grep -qx "$sleeper" "$box/T/cgroup.procs" 2>/dev/null && break
	sleep 0.05
done
grep -qx "$sleeper" "$box/T/cgroup.procs"
ok $? "a sleeper in $box/T" || bail_out "no sleeper"

mkdir "$tmp/bin"
printf '#!/bin/sh\n: >"%s/ran"\necho "%s"\n' "$tmp" "${box#"$v2"}/T" >"$tmp/bin/systemctl"
chmod +x "$tmp/bin/systemctl"

for opt in --user-unit --unit; do
	rm -f "$tmp/ran"
	out=$(env PATH="$tmp/bin:$PATH" XDG_RUNTIME_DIR="$tmp" "$CGKILL" $opt app 2>&1)
	rc=$?
	[ ! -e "$tmp/ran" ]
	ok $? "$opt app: the systemctl first on PATH is not run" || diag "rc $rc: $out"
	kill -0 "$sleeper" 2>/dev/null
	ok $? "$opt app: the cgroup it names is not killed (rc $rc)" || diag "$out"
done

# Where neither exists, cgkill says so rather than search PATH.
if command -v unshare >/dev/null; then
	: >"$tmp/noexec"
	rm -f "$tmp/ran"
	out=$(unshare -m --propagation private sh -c 'f=$1; shift
		for p in /usr/bin/systemctl /bin/systemctl; do
			[ ! -e "$p" ] || mount --bind "$f" "$p" || exit 99
		done
		exec "$@"' sh "$tmp/noexec" \
		env PATH="$tmp/bin:$PATH" XDG_RUNTIME_DIR="$tmp" "$CGKILL" --user-unit app 2>&1)
	rc=$?
	[ $rc -eq 1 ] && [ ! -e "$tmp/ran" ] &&
		[ "$out" = "cgkill: --user-unit app: no systemd user service manager here (no systemctl in /usr/bin or /bin)" ]
	ok $? "no systemctl in /usr/bin or /bin: exit 1, says so, PATH's is not run" || diag "rc $rc: $out"
else
	skip "unshare (util-linux) not installed"
fi
kill -0 "$sleeper" 2>/dev/null
ok $? "the sleeper lives"

done_testing
