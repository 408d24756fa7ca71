#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The image's cgkilld at work: make image builds the image, and the
# daemon in it (the statically linked one, run by chroot into the mounted
# image, with the host's /proc and /sys bound in as a DaemonSet's pod gets
# them, in a mount namespace of its own) kills a bounded fork bomb in a
# sandbox cgroup, and only it: the sentinel in the sibling cgroup lives.
# Skips only without buildah (Debian: buildah; make image installs it).
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

command -v buildah >/dev/null || skip_all "buildah not installed: make image not tested"
[ -x "$build/cgkilld" ] || bail_out "$build/cgkilld not built (run make first)"
need_forkbomb
[ "$(id -u)" -eq 0 ] || skip_all "needs root (cgroup sandboxes, chroot)"
kd_setup image
PMAX=64
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES

image=localhost/cgkill-test-image:$$
ctr=""
# kd_cleanup (the EXIT trap) stops the daemon and removes the sandbox;
# then the container and the image go.
image_cleanup() {
	kd_cleanup
	[ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1
	buildah rmi "$image" >/dev/null 2>&1
}
trap image_cleanup EXIT

# in a build directory of its own, with plain flags: not the one under
# test, whose flags (a sanitizer's, -Werror) the image's build would
# change and so rebuild it
out=$(make -s -j2 image B="$kd_tmp/build" CFLAGS="-O2 -g" LDFLAGS= IMAGE="$image" 2>&1)
ok $? "make image builds $image" || { diag "$out"; bail_out "no image"; }
ctr=$(buildah from --pull-never "$image" 2>&1) || bail_out "buildah from: $ctr"
root=$(buildah mount "$ctr" 2>&1) || bail_out "buildah mount: $root"

# kd_start runs $CGKILLD: here the image's daemon, by chroot, with the
# host's /proc and /sys and the test's scratch directory (its
# configuration) bound in, in a mount namespace that ends with it. Each
# step execs the next: the daemon keeps the PID kd_start saw.
mkdir -p "$root$kd_tmp" || bail_out "mkdir in the image's root"
cat >"$kd_tmp/cgkilld-in-image" <<EOF
#!/bin/sh
exec unshare --mount --propagation private sh -c '
	mount --rbind /proc "$root/proc" && mount --rbind /sys "$root/sys" &&
	mount --bind "$kd_tmp" "$root$kd_tmp" && exec chroot "$root" /usr/sbin/cgkilld "\$@"' sh "\$@"
EOF
chmod 755 "$kd_tmp/cgkilld-in-image"
CGKILLD=$kd_tmp/cgkilld-in-image

kd_first pids jobs/bomb $PMAX
mkcg jobs/calm $PMAX || bail_out "cannot create $box/jobs/calm"
kd_sentinels pids jobs/calm

conf=$kd_tmp/cgkilld.conf
cat >"$conf" <<EOF
[Rule]
Name=bombs
Match=$box/jobs/*
Trigger=pids-max
PidsMaxEvents=5
PidsWindow=1s
Action=kill
EOF
kd_start "$conf" || bail_out "the image's cgkilld did not start"
exe=$(readlink "/proc/$kd_daemon/exe")
[ "$exe" = "$root/usr/sbin/cgkilld" ] && [ "$(readlink "/proc/$kd_daemon/root")" = "$root" ]
ok $? "the daemon is the image's /usr/sbin/cgkilld, in the image's root" ||
	diag "exe $exe, root $(readlink "/proc/$kd_daemon/root"), image $root"
wait_for 20 "both jobs watched" eval 'dump | grep -q "jobs/bomb (rule bombs) pids:" && dump | grep -q "jobs/calm (rule bombs) pids:"'
ok $? "it watches box/jobs/bomb and box/jobs/calm"

start_in jobs/bomb "$FORKBOMB"
wait_log 60 "^<4>rule bombs: .*/$box/jobs/bomb: pids-max.*kill.*done"
ok $? "a fork bomb in box/jobs/bomb: killed" || diag "$(tail -n 20 "$kd_log")"
wait_for 30 "box/jobs/bomb empty" empty jobs/bomb
ok $? "box/jobs/bomb is empty"
# shellcheck disable=SC2154 # set by kd_sentinels (printf -v)
alive "$sent_calm"
ok $? "the sentinel in box/jobs/calm lives"
parent_daemon_live

done_testing
