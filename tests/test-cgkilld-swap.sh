#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's swap trigger against real swap: the test turns on a 256 MiB
# swap file of its own (and off again at its end), so it needs swapon(2)
# and a file system that takes swap files (not tmpfs, not overlayfs).
#  - the daemon starts without swap (reads nothing) and sees swapon through
#    /proc/swaps;
#  - box/sw/big (64 MiB of memory, unlimited memory+swap) touches 200 MiB:
#    the kernel swaps out the rest; box/sw/small (1 GiB) holds a sleeper;
#  - a rule on box/sw (Trigger=swap, Victim=swap) kills big, the cgroup
#    that swaps, not small; the event names the trigger and the figures;
#  - after swapoff the daemon says so and stops reading;
#  - the sentinel in box/other lives.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
kd_setup swap
command -v swapon >/dev/null && command -v mkswap >/dev/null || bail_out "no swapon/mkswap (util-linux)"
[ -n "$v1mem" ] || v2_has memory || skip_all "no memory controller: neither cgroup v2 memory nor a v1 memory hierarchy"

swapfile=
for d in /var/tmp "$PWD/$build"; do
	case $(stat -f -c %T "$d" 2>/dev/null) in
	tmpfs | ramfs | overlayfs | "") ;;
	*) swapfile=$d/cgkill-test-swap.$$ && break ;;
	esac
done
[ -n "$swapfile" ] || skip_all "no file system here takes a swap file"
swap_off() {
	[ -f "$swapfile" ] || return 0
	swapoff "$swapfile" 2>/dev/null
	rm -f "$swapfile"
}
trap 'swap_off; kd_cleanup' EXIT

kd_first memory sw/big "" 64M
mkcg sw/small "" 1G || bail_out "cannot create box/sw/small"
mkcg other || bail_out "cannot create box/other"
if [ -n "$v1mem" ] && ! v2_has memory; then
	# swap allowed: memory+swap unlimited
	echo -1 >"$v1mem/$box/sw/big/memory.memsw.limit_in_bytes" 2>/dev/null
	echo 60 >"$v1mem/$box/sw/big/memory.swappiness"
else
	echo max >"$v2/$box/sw/big/memory.swap.max"
fi
sentinel other || bail_out "no sentinel in other"
sent_other=$started
run_in sw/small sleep 3600 || bail_out "no sleeper in box/sw/small"
small=$started

before=$(awk '/^SwapTotal:/ { print $2 }' /proc/meminfo)
conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
# 60 MiB of the swap in use, whatever else the machine has
pct=$(((60 * 1024 * 100) / (before + 256 * 1024)))
[ "$pct" -ge 1 ] || skip_all "the machine has $before kB of swap already: 60 MiB is under 1% of it"
cat >"$conf" <<EOF
[Daemon]
EventLog=$events

[Rule]
Name=swapping
Match=$box/sw
Trigger=swap
SwapUsedAbove=$pct%
PressureDuration=2s
Victim=swap
EOF
kd_start "$conf" || bail_out "cgkilld did not start"
if [ "$before" -eq 0 ]; then
	wait_log 10 'swap: no swap \(SwapTotal 0\)'
	ok $? "without swap the daemon reads nothing and says so"
fi

fallocate -l 256M "$swapfile" 2>/dev/null || dd if=/dev/zero of="$swapfile" bs=1M count=256 status=none
chmod 600 "$swapfile"
mkswap "$swapfile" >/dev/null && swapon "$swapfile" 2>"$kd_tmp/swapon.err" ||
	skip_all "swapon $swapfile: $(cat "$kd_tmp/swapon.err")"
wait_log 10 'swap: [0-9]+ kB \(SwapTotal\): /proc/meminfo read every second'
ok $? "swapon is seen at once (/proc/swaps), and /proc/meminfo is read every second from then on"

run_in sw/big python3 -c 'import time
b = bytearray(200 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
open("/dev/null", "w").write("touched")
time.sleep(3600)' || bail_out "no hog in box/sw/big"
big=$started
wait_for 60 "the event" test -s "$events"
ok $? "the swap rule acted"
wait_for 30 "box/sw/big empty" empty sw/big && ! alive "$big"
ok $? "box/sw/big, which swapped, is empty"
alive "$small" && alive "$sent_other"
ok $? "box/sw/small and the sentinel in box/other live"
python3 - "$events" "$v2/$box/sw" <<'PY'
import json, sys
e = json.loads(open(sys.argv[1]).readline())
sw = sys.argv[2]
assert e["rule"] == "swapping" and e["cgroup"] == sw + "/big" and e["error"] == 0, e
assert e["trigger"]["type"] == "swap", e["trigger"]
k = e["candidates"]
assert k[0]["cgroup"] == sw + "/big" and k[0]["figure"] > (60 << 20), k
assert all(x["figure"] < k[0]["figure"] / 4 for x in k[1:]), k
PY
ok $? "the event: trigger swap, big's swap use over 60 MiB, far over the other's" ||
	diag "$(head -c 3000 "$events")"

swap_off
if [ "$before" -eq 0 ]; then
	wait_for 10 "the daemon to see swapoff" eval '[ "$(grep -c "swap: no swap (SwapTotal 0)" "$kd_log")" -ge 2 ]'
	ok $? "swapoff is seen too: the daemon stops reading"
fi
kd_stop
done_testing
