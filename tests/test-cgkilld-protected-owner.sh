#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld and the protected list against a name a delegatee chose
# (cgkilld.conf(5), ProtectedFile=; cgkill(1), FILES): a cgroup the list
# names protects only if no delegatee could have made it.
#  1. box/jobs/b, uid B's, holds five sleepers and an empty box/jobs/b/precious
#     it made (B's too), which the list's box/jobs/*/precious names;
#     box/jobs/a, uid A's, holds two: Victim=processes kills box/jobs/b (it
#     was refused as "protected", and box/jobs/a died in its place);
#  2. box/jobs/c, uid C's, holds six sleepers and box/jobs/c/precious, which
#     is root's (C could not have made it): box/jobs/c is still refused and
#     the next, box/jobs/d (root's, three sleepers), is the victim;
#  3. box/jobs/e, uid E's, holds seven sleepers and box/jobs/e/precious it
#     made, and E makes box/jobs/e read-only (chmod 0555, as E: its owner
#     may, and may undo it): box/jobs/e is still the victim (it was refused
#     as "protected", then jobs/c, and box/jobs/a, A's, died in its place).
# The rule is on box/jobs, fired by a fork bomb in box/jobs/poke held at a
# pids limit of 1 (as in test-cgkilld-victim.sh), omitted by the rule.
# Sentinels in box/other and in box must live, and so must what was not
# chosen.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
[ -x "$FORKBOMB" ] || bail_out "$FORKBOMB not built (make tests)"
command -v python3 >/dev/null || skip_all "no python3 (the JSON checks)"
kd_setup prot-owner
UA=64601
UB=64602
UC=64603
UE=64604

kd_first pids jobs/a
for rel in jobs/b jobs/b/precious jobs/c jobs/c/precious jobs/d jobs/e jobs/e/precious other; do
	mkcg "$rel" || bail_out "cannot create $box/$rel"
done
poke_cgroups
kd_sentinels pids other

# sleepers REL N: N sleepers in box/REL, their pids in the array named by $3
sleepers() {
	local i
	for ((i = 0; i < $2; i++)); do
		run_in "$1" sleep 3600 || bail_out "no sleeper in box/$1"
		eval "$3+=(\"\$started\")"
	done
}
pa=() pb=() pc=() pd=() pe=()
sleepers jobs/a 2 pa
sleepers jobs/b 5 pb
sleepers jobs/d 3 pd
# the users' subtrees: their directories and what they made in them
chown -R "$UA" "$v2/$box/jobs/a" && chown -R "$UB" "$v2/$box/jobs/b" && chown "$UC" "$v2/$box/jobs/c" ||
	bail_out "cannot give the subtrees to their users"

export CGKILL_PROTECTED=$kd_tmp/protected
printf '# the users'"'"' databases\n%s/jobs/*/precious\n' "/$box" >"$CGKILL_PROTECTED"

start_poke
events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf

# acted: the event log has an action that did not fail; its cgroup below
# box/jobs in $victim
acted() {
	victim=$(python3 -c 'import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["error"] == 0:
        print(e["cgroup"][len(sys.argv[2]) + 1:])
        break' "$events" "$v2/$box/jobs" 2>/dev/null)
	[ -n "$victim" ]
}
# prot_case NAME RULE-LINES...: as victim_case, until an action that did
# not fail (a refused candidate is an event too)
prot_case() {
	victim_start "$@"
	wait_for 30 "an action of case $1" acted
	kd_stop
}

all_dead() {
	local p
	for p in "$@"; do
		alive "$p" && return 1
	done
	return 0
}
why() {
	diag "victim: '$victim'" "$(grep -E 'victim|refus|protected' "$kd_log")"
}

# 1. B's own "precious" does not shield B's subtree
prot_case shield Victim=processes Omit=poke
[ "$victim" = b ] && wait_for 30 "box/jobs/b empty" empty jobs/b && all_dead "${pb[@]}"
ok $? "an empty jobs/b/precious that B made does not shield jobs/b: jobs/b (5 processes) is the victim" || why
! log_has "rule shield: .*/jobs/b: refusing to kill a protected cgroup"
ok $? "jobs/b was not refused as protected" || why
alive_all "shield" "${pa[@]}" "${pd[@]}"

# 2. root's "precious" in C's subtree protects it: the next one is chosen
sleepers jobs/c 6 pc
prot_case rootown Victim=processes Omit=poke
[ "$victim" = d ] && wait_for 30 "box/jobs/d empty" empty jobs/d && all_dead "${pd[@]}"
ok $? "a jobs/c/precious of root's protects jobs/c: the next candidate, jobs/d, is the victim" || why
log_has "^<3>rule rootown: $v2/$box/jobs/c: .*refusing to kill a protected cgroup or one that contains it \(/$box/jobs/\*/precious"
ok $? "the log says jobs/c was refused as protected" || why
alive_all "root's precious" "${pa[@]}" "${pc[@]}"

# 3. E's own "precious" with E's directory made read-only by E
sleepers jobs/e 7 pe
chown -R "$UE" "$v2/$box/jobs/e" || bail_out "cannot give box/jobs/e to E"
setpriv --reuid="$UE" --regid="$UE" --clear-groups chmod 0555 "$v2/$box/jobs/e"
ok $? "E could make its own box/jobs/e read-only (chmod 0555)"
prot_case chmod Victim=processes Omit=poke
[ "$victim" = e ] && wait_for 30 "box/jobs/e empty" empty jobs/e && all_dead "${pe[@]}"
ok $? "an empty jobs/e/precious that E made, in its jobs/e made 0555, does not shield jobs/e: it is the victim" || why
! log_has "rule chmod: .*/jobs/e: refusing to kill a protected cgroup"
ok $? "jobs/e was not refused as protected" || why
alive_all "chmod" "${pa[@]}" "${pc[@]}"
chmod 0755 "$v2/$box/jobs/e"

kd_stop
done_testing
