#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# deploy/: the Kubernetes manifests and the image (make image), offline:
# - kubectl reads each manifest (kubectl label --local: no API server);
# - each object passes the API's schemas (the npm package
#   kubernetes-models, run by tests/helper/k8s-validate.mjs), which do
#   refuse a wrong one;
# - the DaemonSet asks for what cgkilld needs and no more: the unit's
#   capabilities exactly, not privileged, a read-only root, seccomp, the
#   host's PIDs and cgroup file system, the rules from the ConfigMap as
#   one file, Guaranteed resources, system-node-critical, every taint
#   tolerated, the image make image builds;
# - the ConfigMap's rules pass cgkilld --check;
# - make image builds the image, FROM scratch, of static binaries only,
#   and cgkilld --check runs inside it (buildah run --isolation=chroot,
#   the ConfigMap's rules as its /etc/cgkill).
# Each part skips only when its tool is missing: kubectl; node with
# kubernetes-models (npm install -g kubernetes-models; or
# CGKILL_K8S_MODELS=its directory); buildah.
cd "${0%/*}/.." || exit 1
. tests/tap.sh
. tests/lib.sh

[ -x "$build/cgkilld" ] || bail_out "$build/cgkilld not built (run make first)"
tmp=$(mktemp -d /tmp/cgkill-test-deploy.XXXXXX) || bail_out "mktemp"
image=""
cleanup() {
	[ -n "$image" ] && buildah rmi "$image" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
k8s=deploy/kubernetes
version=$(sed -n 's/^#define CGK_VERSION "\(.*\)"/\1/p' include/cgkill.h)

# --- kubectl, offline ----------------------------------------------------------
if ! command -v kubectl >/dev/null; then
	skip_all "kubectl not installed"
fi
for f in "$k8s"/*.yaml; do
	kubectl label --local -f "$f" cgkill-test=1 -o json >"$tmp/$(basename "$f" .yaml).json" 2>"$tmp/err"
	ok $? "kubectl reads $f" || diag "$(cat "$tmp/err")"
done

# --- the API's schemas -----------------------------------------------------------
models=${CGKILL_K8S_MODELS:-}
if [ -z "$models" ] && command -v npm >/dev/null; then
	models=$(npm root -g 2>/dev/null)/kubernetes-models
fi
if ! command -v node >/dev/null || [ ! -f "$models/package.json" ]; then
	skip "no node with kubernetes-models (npm install -g kubernetes-models): the schemas not checked"
else
	out=$(node --no-warnings tests/helper/k8s-validate.mjs "$models" "$tmp"/*.json 2>&1)
	ok $? "every object passes the API's schemas (kubernetes-models $(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$models/package.json"))" ||
		diag "$out"
	note "$out"
	sed 's/"hostPID": true/"hostPID": "yes"/' "$tmp/daemonset.json" >"$tmp/wrong.json.in"
	! out=$(node --no-warnings tests/helper/k8s-validate.mjs "$models" "$tmp/wrong.json.in" 2>&1) &&
		grep -q 'hostPID must be boolean' <<<"$out"
	ok $? "(and refuse a DaemonSet with hostPID: \"yes\")" || diag "$out"
fi

# --- what the DaemonSet asks for ---------------------------------------------------
caps=$(sed -n 's/^CapabilityBoundingSet=//p' data/cgkilld.service | tr ' ' '\n' | sed 's/^CAP_//' | sort | tr '\n' ' ')
make_image=$(make -s -p -n image-rootfs 2>/dev/null | sed -n 's/^IMAGE = //p' | head -n1)
python3 - "$tmp/daemonset.json" "$tmp/configmap.json" "$caps" "${make_image/\$(VERSION)/$version}" >"$tmp/checks" <<'PY'
import json, sys
ds, cm = (json.load(open(f)) for f in sys.argv[1:3])
caps, image = sys.argv[3].split(), sys.argv[4]
pod = ds["spec"]["template"]["spec"]
c = pod["containers"][0]
sc = c["securityContext"]
mounts = {m["mountPath"]: m for m in c["volumeMounts"]}
vols = {v["name"]: v for v in pod["volumes"]}
res = c["resources"]
def say(cond, what):
    print(("ok" if cond else "not ok") + "\t" + what)
say(sorted(sc["capabilities"]["add"]) == caps and sc["capabilities"]["drop"] == ["ALL"],
    "the unit's capabilities and no other (%s)" % " ".join(caps))
say(not sc.get("privileged") and sc.get("allowPrivilegeEscalation") is False,
    "not privileged, no privilege escalation")
say(sc.get("readOnlyRootFilesystem") is True, "a read-only root file system")
say(sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", "the runtime's seccomp profile")
say(pod.get("hostPID") is True and not pod.get("hostNetwork") and not pod.get("hostIPC"),
    "the host's PIDs; not its network nor its IPC")
cg = mounts.get("/sys/fs/cgroup")
say(cg is not None and not cg.get("readOnly") and vols[cg["name"]].get("hostPath", {}).get("path") == "/sys/fs/cgroup",
    "the host's /sys/fs/cgroup at /sys/fs/cgroup, writable")
conf = mounts.get("/etc/cgkill/cgkilld.conf")
say(conf is not None and conf.get("subPath") == "cgkilld.conf" and conf.get("readOnly")
    and vols[conf["name"]].get("configMap", {}).get("name") == cm["metadata"]["name"]
    and "cgkilld.conf" in cm["data"],
    "the rules: the ConfigMap's cgkilld.conf, one file, read-only")
probe = c.get("livenessProbe", {}).get("exec", {}).get("command", [])
say(probe[1:] == ["ping"] and probe[0].endswith("/cgkillctl"), "alive: cgkillctl ping")
print("probe\t" + (probe[0] if probe else ""))
say(res.get("requests") == res.get("limits") and set(res.get("limits", {})) == {"cpu", "memory"},
    "Guaranteed: requests equal limits, cpu and memory")
say(pod.get("priorityClassName") == "system-node-critical", "priority system-node-critical")
say({"operator": "Exists"} in pod.get("tolerations", []), "every taint tolerated")
say(c["image"] == image, "the image make image builds (%s)" % image)
PY
while IFS=$'\t' read -r verdict what; do
	case $verdict in
	ok) ok 0 "DaemonSet: $what" ;;
	"not ok") ok 1 "DaemonSet: $what" ;;
	probe) probe=$what ;;
	esac
done <"$tmp/checks"
grep -q . "$tmp/checks"
ok $? "(the DaemonSet was read)"

# --- the ConfigMap's rules -----------------------------------------------------------
mkdir -m 755 "$tmp/etc"
python3 -c 'import json, sys; sys.stdout.write(json.load(open(sys.argv[1]))["data"]["cgkilld.conf"])' \
	"$tmp/configmap.json" >"$tmp/etc/cgkilld.conf"
chmod 644 "$tmp/etc/cgkilld.conf"
out=$("$build/cgkilld" --check "$tmp/etc/cgkilld.conf" 2>&1)
ok $? "cgkilld --check passes the ConfigMap's rules" || diag "$out"
note "$out"

# --- the image -------------------------------------------------------------------------
if ! command -v buildah >/dev/null; then
	skip_all "buildah not installed: make image not tested"
fi
image=localhost/cgkill-test-deploy:$$
# in a build directory of its own, with plain flags: not the one under
# test, whose flags (a sanitizer's, -Werror) the image's build would
# change and so rebuild it
out=$(make -s -j2 image B="$tmp/build" CFLAGS="-O2 -g" LDFLAGS= IMAGE="$image" 2>&1)
ok $? "make image builds $image" || { diag "$out"; image=""; }
[ -n "$image" ] || bail_out "no image"
ctr=$(buildah from --pull-never "$image" 2>&1) || bail_out "buildah from: $ctr"
root=$(buildah mount "$ctr" 2>&1) || bail_out "buildah mount: $root"
files=$(cd "$root" && find . ! -type d | sort | tr '\n' ' ')
expected=$(make -s -p -n image-rootfs 2>/dev/null | sed -n 's/^IMAGE_BINS := //p' | head -n1 | tr ' ' '\n' |
	sed 's|^\([^:]*\):\(.*\)|./\2/\1|' | sort | tr '\n' ' ')
[ -n "$expected" ] && [ "$files" = "$expected" ]
ok $? "the image holds the binaries of IMAGE_BINS and no other file ($files)" ||
	diag "expected: $expected"
static=1
for f in $files; do
	readelf -lW "$root/$f" | grep -q 'Requesting program interpreter' && static=0 && diag "$f: dynamic"
done
[ $static = 1 ]
ok $? "every binary in it is static"
[ "$(buildah inspect --type image "$image" | python3 -c 'import json, sys; print(*json.load(sys.stdin)["OCIv1"]["config"]["Volumes"])')" = /etc/cgkill ]
ok $? "its configuration directory /etc/cgkill is a volume"
if [ -e "$build/cgkillctl" ]; then
	[ -x "$root/${probe#/}" ]
	ok $? "the liveness probe's program is in the image (${probe})"
else
	note "no $build/cgkillctl yet: the liveness probe's program is not in the image"
fi
buildah umount "$ctr" >/dev/null
out=$(buildah run --isolation=chroot -v "$tmp/etc:/etc/cgkill:ro" "$ctr" -- \
	/usr/sbin/cgkilld --foreground --check 2>&1)
ok $? "cgkilld --check in the image, on the ConfigMap's rules" || diag "$out"
grep -q '/etc/cgkill/cgkilld.conf: 4 rule(s)' <<<"$out"
ok $? "(it read them: 4 rules)" || diag "$out"
buildah rm "$ctr" >/dev/null

done_testing
