#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's v1 counterparts (hybrid layouts; issue 26, items 1 and 15b): a
# v1 cgroup stands for a watched v2 cgroup only where it belongs to it
# alone (cgkilld.conf(5), "V1 COUNTERPARTS").
#  A. box/p1 (watched) shares the v1 pids cgroup box/shared1 with an
#     outsider in box/s1 (not watched): not armed; --check, the log (once)
#     and the state dump say why; the outsider's bomb at that pids.max
#     does not make the daemon kill box/p1 (it did).
#  B. box/p2 has box/shared2 to itself when armed; an outsider's bomb
#     joins it later: the daemon does not act (it checks again first), says
#     why, and disarms.
#  C. box/p3's processes are in box/own3, its own (not of the same path):
#     a bomb in box/p3 is killed, and the log gives the real "pids N of 30"
#     of box/own3 (it said "pids 0 of 0").
#  D. box/m4 (watched, oom-kill) shares the v1 memory cgroup box/mshared4
#     with an outsider in box/s4, whose hog the OOM killer takes: box/m4
#     lives (it was killed as "the rest of the group").
# Bombs run under a v1 pids.max, the hog under a v1 memory limit of 64 MiB
# (no swap). Sentinels in box/other and box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup counterpart
[ -n "$v1pids" ] && [ -n "$v1mem" ] || skip_all "needs v1 pids and memory hierarchies (hybrid layouts): v1 counterparts"
LIMIT=$((64 << 20))

for d in p1 s1 p2 s2 p3 m4 s4 other; do
	mkcg "$d" || bail_out "cannot create $box/$d"
done
# the v1 cgroups, of other paths than the v2 ones
for d in shared1 shared2; do
	mkdir -p "$v1pids/$box/$d" && echo 40 >"$v1pids/$box/$d/pids.max" || bail_out "no v1 $box/$d"
done
mkdir -p "$v1pids/$box/own3" && echo 30 >"$v1pids/$box/own3/pids.max" || bail_out "no v1 $box/own3"
mkdir -p "$v1mem/$box/mshared4" && echo $LIMIT >"$v1mem/$box/mshared4/memory.limit_in_bytes" ||
	bail_out "no v1 $box/mshared4"
[ -f "$v1mem/$box/mshared4/memory.memsw.limit_in_bytes" ] &&
	echo $LIMIT >"$v1mem/$box/mshared4/memory.memsw.limit_in_bytes"

# at V2REL PIDS MEM COMMAND...: COMMAND in box/V2REL, in the v1 pids
# cgroup box/PIDS and the v1 memory cgroup box/MEM ("-": where it is); its
# pid in $started, once it is in box/V2REL (at once with nowait=1).
at() {
	local rel=$1 p=$2 m=$3 s=
	shift 3
	[ "$p" = - ] || s+="echo \$\$ >'$v1pids/$box/$p/cgroup.procs' && "
	[ "$m" = - ] || s+="echo \$\$ >'$v1mem/$box/$m/cgroup.procs' && "
	sh -c "$s echo \$\$ >'$v2/$box/$rel/cgroup.procs' && exec \"\$@\"" sh "$@" </dev/null >/dev/null 2>&1 &
	started=$!
	disown "$started"
	kd_pids+=("$started")
	[ -n "${nowait:-}" ] && return
	wait_for 20 "$started in box/$rel" grep -qx "$started" "$v2/$box/$rel/cgroup.procs"
}

at p1 shared1 - sleep 3600 || bail_out "no innocent in p1"
inn1=$started
at s1 shared1 - sleep 3600 || bail_out "no outsider in s1"
at p2 shared2 - sleep 3600 || bail_out "no innocent in p2"
inn2=$started
at p3 own3 - sleep 3600 || bail_out "no sleeper in p3"
at m4 - mshared4 sleep 3600 || bail_out "no innocent in m4"
inn4=$started
at s4 - mshared4 sleep 3600 || bail_out "no outsider in s4"
kd_sentinels pids other

conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
cat >"$conf" <<EOF
[Daemon]
EventLog=$events
PollInterval=20ms

[Rule]
Name=bombs
Match=$box/p*
Trigger=pids-max
PidsMaxEvents=5
PidsWindow=1s
Action=kill
Wait=20s

[Rule]
Name=oom
Match=$box/m*
Trigger=oom-kill
Action=kill
Wait=20s
EOF

# --check names the refused counterparts of the cgroups that match now
out=$("$CGKILLD" --check "$conf" 2>&1)
grep -qE "bombs: $v2/$box/p1: pids triggers not armed: the v1 pids cgroup $v1pids/$box/shared1 does not belong to it alone: task [0-9]+ is in /$box/s1 \(v2\), outside /$box/p1" <<<"$out"
ok $? "--check: box/p1's v1 pids cgroup is shared with box/s1: not armed" || diag "$out"
grep -qE "oom: $v2/$box/m4: oom-kill not armed: the v1 memory cgroup $v1mem/$box/mshared4 does not belong to it alone" <<<"$out"
ok $? "--check: box/m4's v1 memory cgroup is shared: not armed" || diag "$out"
grep -qE "bombs: $v2/$box/p2: pids triggers on the v1 cgroup $v1pids/$box/shared2\$" <<<"$out" &&
	grep -qE "bombs: $v2/$box/p3: pids triggers on the v1 cgroup $v1pids/$box/own3\$" <<<"$out"
ok $? "--check: box/p2 and box/p3 have theirs" || diag "$out"

kd_start "$conf" || bail_out "cgkilld did not start"
wait_log 20 "^<5>rule bombs: $v2/$box/p1: pids triggers not armed: the v1 pids cgroup $v1pids/$box/shared1 does not belong to it alone: task [0-9]+ is in /$box/s1 \(v2\)"
ok $? "the log says why box/p1 is not armed" || diag "$(grep "/p1" "$kd_log")"
wait_log 20 "^<5>rule oom: $v2/$box/m4: oom-kill not armed: the v1 memory cgroup $v1mem/$box/mshared4 does not belong to it alone"
ok $? "the log says why box/m4 is not armed"
state=$(dump)
grep -qE "v1 pids counterpart of $v2/$box/p1 \(rule bombs\) refused: the v1 pids cgroup .*shared1 does not belong" <<<"$state" &&
	grep -qE "v1 memory counterpart of $v2/$box/m4 \(rule oom\) refused: " <<<"$state"
ok $? "the state dump says why" || diag "$state"
grep -qE "$box/p2 \(rule bombs\) pids:v1-polled" <<<"$state" && grep -qE "$box/p3 \(rule bombs\) pids:v1-polled" <<<"$state"
ok $? "box/p2 and box/p3 are armed on their v1 counterparts" || diag "$state"

# A. the outsider's bomb at shared1's pids.max
at s1 shared1 - "$FORKBOMB" || bail_out "no bomb in s1"
wait_for 30 "shared1 at its pids.max" eval '[ "$(cat "$v1pids/$box/shared1/pids.current")" -ge 40 ]'
ok $? "A. the outsider's bomb holds box/shared1 at its pids.max"
sleep 3	# the old daemon had acted within this (PollInterval 20ms)
alive "$inn1" && populated p1
ok $? "A. the innocent box/p1 lives"
! log_has "rule bombs: $v2/$box/p1: pids-max"
ok $? "A. no pids-max event for box/p1"
"$CGKILL" -q "$v2/$box/s1" >/dev/null 2>&1
wait_for 30 "box/s1 empty" empty s1 || bail_out "the bomb in box/s1 lives on"

# B. an outsider's bomb joins shared2 after box/p2 was armed on it
at s2 shared2 - "$FORKBOMB" || bail_out "no bomb in s2"
wait_log 30 "^<5>rule bombs: $v2/$box/p2: pids-max: not acted on, and disarmed .*: the v1 pids cgroup $v1pids/$box/shared2 does not belong to it alone any more: task [0-9]+ is in /$box/s2 \(v2\)"
ok $? "B. checked again before acting: not acted on, and the log says why"
alive "$inn2" && populated p2
ok $? "B. the innocent box/p2 lives"
state=$(dump)
grep -qE "v1 pids counterpart of $v2/$box/p2 \(rule bombs\) refused" <<<"$state" &&
	! grep -qE "$box/p2 \(rule bombs\) pids:" <<<"$state"
ok $? "B. disarmed, and the state dump says why" || diag "$state"
"$CGKILL" -q "$v2/$box/s2" >/dev/null 2>&1
wait_for 30 "box/s2 empty" empty s2 || bail_out "the bomb in box/s2 lives on"

# C. a bomb in box/p3, whose v1 pids cgroup own3 is its own
nowait=1 at p3 own3 - "$FORKBOMB"	# may be killed before we look
wait_for 60 "box/p3 empty" empty p3
ok $? "C. a bomb in box/p3, on its own v1 counterpart box/own3, is killed"
wait_log 20 "^<4>rule bombs: $v2/$box/p3: pids-max \(v1\): .*, pids [0-9]+ of 30"
ok $? "C. the log gives box/own3's pids.current and pids.max" ||
	diag "$(grep "p3: pids-max" "$kd_log")"

# D. the outsider's hog in mshared4 is OOM-killed
at s4 - mshared4 tail /dev/zero || bail_out "no hog in s4"
hog=$started
wait_for 60 "the hog OOM-killed" eval '! alive '"$hog"
ok $? "D. the outsider's hog in box/mshared4 is taken by the OOM killer"
sleep 2	# the old daemon had acted within this
alive "$inn4" && populated m4
ok $? "D. the innocent box/m4 lives"
! log_has "rule oom: $v2/$box/m4: oom-kill \(v"
ok $? "D. no oom-kill event for box/m4"

n=$(grep -c "rule bombs: $v2/$box/p1: pids triggers not armed" "$kd_log")
[ "$n" -eq 1 ]
ok $? "box/p1's refusal was said once ($n)"
alive "$sent_other" && { [ -z "$sent_parent" ] || alive "$sent_parent"; }
ok $? "the sentinels live"
alive "$kd_daemon"
ok $? "the daemon lives"
kd_stop
done_testing
