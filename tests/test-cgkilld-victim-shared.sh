#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's Victim=memory on hybrid layouts (issue 26, item 2): a figure
# comes only from a v1 cgroup that belongs to the candidate alone (and
# holds all of it), else from the candidate's own processes.
# box/jobs/inn holds one sleep, whose v1 memory cgroup is box/mshared; the
# hog (120 MiB) of box/jobs/hogjob sits in box/mshared/hog, below it. The
# v1 box/mshared counts the hog too: inn "was" the largest and died, while
# the hog lived. Now inn's figure is its own process's and the hog's
# candidate is the victim. The rule on box/jobs is fired by a fork bomb in
# box/jobs/poke (omitted). Sentinels in box/other and box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
[ -x "$FORKBOMB" ] || bail_out "$FORKBOMB not built (make tests)"
command -v python3 >/dev/null || skip_all "no python3 (the memory holder and the JSON checks)"
kd_setup victim-shared
[ -n "$v1pids" ] && [ -n "$v1mem" ] && ! v2_has memory ||
	skip_all "needs v1 pids and memory hierarchies, and no v2 memory (hybrid layouts)"
LIMIT=$((256 << 20))

mkcg jobs/inn && mkcg jobs/hogjob && mkcg other || bail_out "cannot create the cgroups of $box"
poke_v1
mkdir -p "$v1mem/$box/mshared/hog" && echo $LIMIT >"$v1mem/$box/mshared/memory.limit_in_bytes" ||
	bail_out "no v1 $box/mshared"
kd_sentinels memory other

# at V2REL MEM COMMAND...: COMMAND in box/V2REL and the v1 memory cgroup
# box/MEM; its pid in $started, once it is in box/V2REL.
at() {
	local rel=$1 m=$2
	shift 2
	sh -c "echo \$\$ >'$v1mem/$box/$m/cgroup.procs' && echo \$\$ >'$v2/$box/$rel/cgroup.procs' && exec \"\$@\"" \
		sh "$@" </dev/null >/dev/null 2>&1 &
	started=$!
	disown "$started"
	kd_pids+=("$started")
	wait_for 20 "$started in box/$rel" grep -qx "$started" "$v2/$box/$rel/cgroup.procs"
}

at jobs/inn mshared sleep 3600 || bail_out "no sleep in box/jobs/inn"
inn=$started
at jobs/hogjob mshared/hog python3 -c 'import time
b = bytearray(b"x") * (120 << 20)
time.sleep(3600)' || bail_out "no hog in box/jobs/hogjob"
hog=$started
wait_for 60 "the hog to hold 120 MiB" \
	eval '[ "$(cat "$v1mem/$box/mshared/hog/memory.usage_in_bytes")" -ge $((120 << 20)) ]' ||
	bail_out "the hog does not hold 120 MiB"
start_poke

events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf
victim_case shared Victim=memory Omit=poke
[ "$victim" = hogjob ] && wait_for 30 "box/jobs/hogjob empty" empty jobs/hogjob
ok $? "the hog's candidate box/jobs/hogjob is the victim ($victim)" ||
	diag "$(grep -E 'victim|cannot' "$kd_log")"
! alive "$hog"
ok $? "the hog died"
alive "$inn" && populated jobs/inn
ok $? "the innocent one-process box/jobs/inn lives"
log_has "victim hogjob \\(memory 1[2-9][0-9]\\.[0-9] MiB\\): the largest of 2 candidates; then inn \\(memory [0-9.]+ (KiB|MiB)\\)"
ok $? "the log gives the hog's v1 memory and inn's own" || diag "$(grep victim "$kd_log")"
alive "$poke" && alive "$sent_other" && { [ -z "$sent_parent" ] || alive "$sent_parent"; }
ok $? "the bomb (omitted) and the sentinels live"
done_testing
