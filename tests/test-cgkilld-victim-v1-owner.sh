#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's Victim=memory on hybrid layouts (issue 26, RT1 #2): a
# delegatee cannot shrink its own figure by making its own v1 memory cgroup
# "not its alone". User A's box/jobs/att holds 160 MiB in a memfd (charged
# to its v1 memory cgroup box/jobs/att, A's, but not mapped: its VmRSS is
# small); user B's box/jobs/nbr holds 60 MiB. The rule on box/jobs is fired
# by a bomb in box/jobs/poke (omitted).
#  1. A moves one of its own processes from outside (v2 box/home) into its
#     v1 memory cgroup box/jobs/att: the counterpart was refused and the
#     figure fell back to A's VmRSS sum, and B's nbr died. Now a task of
#     the owner's counts against it: att (its v1 usage) is the victim.
#  2. A moves the memfd holder of att, in v1, to another v1 memory cgroup
#     of its own (box/home): its v1 cgroup no longer holds all of att, by
#     A's doing. The figure is hidden (ranks first), not A's VmRSS sum: att
#     is the victim again, nbr lives.
# Sentinels in box/other and box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
[ -x "$FORKBOMB" ] || bail_out "$FORKBOMB not built (make tests)"
command -v python3 >/dev/null || skip_all "no python3 (the memory holders and the JSON checks)"
kd_setup victim-v1-owner
[ -n "$v1pids" ] && [ -n "$v1mem" ] && ! v2_has memory ||
	skip_all "needs v1 pids and memory hierarchies, and no v2 memory (hybrid layouts)"
UA=64711 UB=64712
asA=(setpriv --reuid=$UA --regid=$UA --clear-groups)
asB=(setpriv --reuid=$UB --regid=$UB --clear-groups)
# a python3 the users can run (not one below /root)
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "no /usr/bin/python3"

mkcg jobs/att "" $((300 << 20)) && mkcg jobs/nbr "" $((200 << 20)) && mkcg home "" $((64 << 20)) &&
	mkcg other || bail_out "cannot create the cgroups of $box"
poke_v1
kd_sentinels memory other
chown -R $UA "$v2/$box/jobs/att" "$v1mem/$box/jobs/att" "$v2/$box/home" "$v1mem/$box/home" &&
	chown -R $UB "$v2/$box/jobs/nbr" "$v1mem/$box/jobs/nbr" || bail_out chown

# a memfd holder of A's in box/jobs/att: $started
stash() {
	run_in jobs/att "${asA[@]}" "$PY" -c 'import os, time
fd = os.memfd_create("stash")
blk = b"x" * (1 << 20)
for i in range(160):
    os.write(fd, blk)
del blk
time.sleep(3600)' || bail_out "no memfd holder in box/jobs/att"
	wait_for 60 "att charged 160 MiB" \
		eval '[ "$(cat "$v1mem/$box/jobs/att/memory.usage_in_bytes")" -ge $((160 << 20)) ]' ||
		bail_out "box/jobs/att is not charged 160 MiB"
}

# B's 60 MiB in box/jobs/nbr: $nbr
neighbour() {
	run_in jobs/nbr "${asB[@]}" "$PY" -c 'import time
b = bytearray(b"x") * (60 << 20)
time.sleep(3600)' || bail_out "no neighbour in box/jobs/nbr"
	nbr=$started
	wait_for 60 "nbr 60 MiB" eval '[ "$(cat "$v1mem/$box/jobs/nbr/memory.usage_in_bytes")" -ge $((60 << 20)) ]' ||
		bail_out "box/jobs/nbr does not hold 60 MiB"
}

run_in home "${asA[@]}" sleep 3600 || bail_out "no sleep of A's in box/home"
outside=$started
stash
att=$started
neighbour
start_poke
events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf

# 1. A's own outside process in A's v1 memory cgroup
"${asA[@]}" sh -c "echo $outside >'$v1mem/$box/jobs/att/cgroup.procs'"
ok $? "1. A moved its own outside process into v1 memory box/jobs/att"
victim_case stray Victim=memory Omit=poke
[ "$victim" = att ] && wait_for 30 "box/jobs/att empty" empty jobs/att
ok $? "1. A's att (160 MiB charged) is the victim ($victim)" || diag "$(grep -E 'victim' "$kd_log")"
alive "$nbr"
ok $? "1. B's innocent nbr (60 MiB) lives"
log_has "victim att \\(memory 1[6-9][0-9]\\.[0-9] MiB\\)"
ok $? "1. the log gives att's v1 memory" || diag "$(grep victim "$kd_log")"

# 2. A's memfd holder of att moved, in v1, to A's box/home
alive "$nbr" || neighbour
stash
att=$started
"${asA[@]}" sh -c "echo $att >'$v1mem/$box/home/cgroup.procs'"
ok $? "2. A moved att's memfd holder to its v1 memory cgroup box/home"
victim_case split Victim=memory Omit=poke
[ "$victim" = att ] && wait_for 30 "box/jobs/att empty" empty jobs/att
ok $? "2. A's att is the victim ($victim)" || diag "$(grep -E 'victim' "$kd_log")"
alive "$nbr"
ok $? "2. B's innocent nbr lives"
log_has "jobs/att: its figure is hidden: .*by the doing of its owner" && log_has "victim att \\(memory unknown\\): .*ranks first"
ok $? "2. the log says att's figure is hidden, by its owner's doing" || diag "$(grep -E 'att|hidden' "$kd_log" | grep -v '<7>')"
alive "$poke" && alive "$sent_other" && { [ -z "$sent_parent" ] || alive "$sent_parent"; }
ok $? "the bomb (omitted) and the sentinels live"
done_testing
