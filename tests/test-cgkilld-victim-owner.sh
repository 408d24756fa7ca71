#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's victim choice ranks per owner (cgkilld.conf(5), VICTIM CHOICE,
# "Candidates"): the walk goes down only through cgroups of root or of the
# watched cgroup's owner; a cgroup delegated to anyone else is one
# candidate, whole, with its figure over its subtree, whatever shape its
# owner gives it. The rule is on the root-owned box/jobs; box/jobs/users
# (root's) holds nbr, delegated to uid $A (3 processes), and att,
# delegated to uid $B.
#  1. Splitting into leaves: att spreads 24 processes over 24 one-process
#     leaves below it. Victim=processes takes att, whole (24), not nbr
#     (3), which was "the most processes" among the leaves.
#  2. A figure hidden in another owner's cgroup: hid, uid $B's, turns its
#     pressure files off (cgroup.pressure 0). Victim=pressure takes hid
#     alone, first (fail closed); it took box/jobs/users whole, nbr with
#     it (the nearest ancestor whose figure could be read).
#  3. No candidate at all (the only child of the watched cgroup omitted,
#     fired by the machine's cpu pressure, Victim=memory-growth): "no victim", and the daemon
#     lives on. Before, it called qsort(NULL, 0), which a build with
#     -fsanitize=undefined -fno-sanitize-recover aborts on (the CI's).
# The fork bomb that fires cases 1 and 2 is in box/jobs/poke, held at a
# pids limit of 1, omitted. Sentinels in box/other and in box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
[ -x "$FORKBOMB" ] || bail_out "$FORKBOMB not built (make tests)"
command -v python3 >/dev/null || skip_all "no python3 (the JSON checks)"
kd_setup victim-owner
A=64101
B=64102

poke_cgroups
mkcg other && mkcg jobs/users/nbr && mkcg jobs/users/att || bail_out "cannot create the cgroups of $box"
kd_sentinels pids other

events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf

why() {
	diag "victim: '$victim'" "$(grep -E 'victim|ignored|cannot' "$kd_log")"
}

nbr=()
for _ in 1 2 3; do
	run_in jobs/users/nbr sleep 3600 || bail_out "no sleeper in box/jobs/users/nbr"
	nbr+=("$started")
done
chown "$A" "$v2/$box/jobs/users/nbr"

# 1. att: 24 one-process leaves, all uid $B's (made by root, then given
#    away, as delegation does)
att=()
for i in $(seq 24); do
	mkdir "$v2/$box/jobs/users/att/l$i" || bail_out "cannot create box/jobs/users/att/l$i"
	run_in "jobs/users/att/l$i" sleep 3600 || bail_out "no sleeper in box/jobs/users/att/l$i"
	att+=("$started")
done
chown -R "$B" "$v2/$box/jobs/users/att"

start_poke
victim_case split Victim=processes Omit=poke
[ "$victim" = users/att ] && wait_for 30 "box/jobs/users/att empty" empty jobs/users/att
ok $? "24 processes in 24 leaves of uid $B: their cgroup, whole, is the victim (not uid $A's 3)" || why
dead=0
for p in "${att[@]}"; do
	alive "$p" || dead=$((dead + 1))
done
[ $dead -eq 24 ]
ok $? "the 24 processes died" || diag "dead: $dead of 24"
alive_all "splitting" "${nbr[@]}"
log_has "^<5>rule split: .*/jobs: victim users/att \\(24 process\\(es\\), memory [^;]*; whole: the subtree of uid $B\\): the most processes of 2 candidates; then users/nbr \\(3 process\\(es\\), memory [^)]*\\); omitted: poke"
ok $? "the log counts uid $B's subtree as one and says why it was taken whole" || why
python3 -c 'import json, sys
k = json.loads(open(sys.argv[1]).readline())["candidates"]
got = [(x["cgroup"][len(sys.argv[2]) + 1:], x["figure"], x["whole"]) for x in k]
assert got == [("users/att", 24, "the subtree of uid " + sys.argv[3]), ("users/nbr", 3, None)], got' \
	"$events" "$v2/$box/jobs" "$B"
ok $? "the JSON event has two candidates: uid $B's subtree (24) and uid $A's cgroup (3)" ||
	diag "$(head -c 2000 "$events")"

# 2. hid, uid $B's, hides its pressure: it goes, alone
if [ -f "$v2/$box/jobs/users/nbr/memory.pressure" ] && [ -f "$v2/$box/jobs/users/nbr/cgroup.pressure" ]; then
	mkcg jobs/users/hid || bail_out "cannot create box/jobs/users/hid"
	run_in jobs/users/hid sleep 3600 || bail_out "no sleeper in box/jobs/users/hid"
	hid=$started
	echo 0 >"$v2/$box/jobs/users/hid/cgroup.pressure" || bail_out "cannot turn off the pressure of box/jobs/users/hid"
	chown "$B" "$v2/$box/jobs/users/hid" "$v2/$box/jobs/users/hid/cgroup.pressure"
	victim_case hidden Victim=pressure Omit=poke
	[ "$victim" = users/hid ] && wait_for 30 "box/jobs/users/hid empty" empty jobs/users/hid && ! alive "$hid"
	ok $? "Victim=pressure: uid $B's cgroup, whose pressure is off, is the victim, alone" || why
	alive_all "pressure hidden by uid $B" "${nbr[@]}"
	log_has "^<5>rule hidden: .*/jobs: victim users/hid \\(pressure unknown, memory [^)]*\\): its pressure cannot be read, which ranks first \\(fail closed\\), among 2 candidates"
	ok $? "the log says its pressure could not be read, and no ancestor was taken for it" || why
else
	bail_out "no memory.pressure or cgroup.pressure in $v2 (PSI off): case 2 cannot run"
fi

# 3. no candidate: box/idle holds only an omitted child (an empty cgroup
#    is not armed at all), the machine's cpu pressure (two busy loops on
#    one CPU in box/busy, not watched) fires the rule
mkcg idle/x && mkcg busy || bail_out "cannot create box/idle/x, box/busy"
run_in idle/x sleep 3600 || bail_out "no sleeper in box/idle/x"
idle_x=$started
printf '[Rule]\nName=empty\nMatch=%s/idle\nTrigger=cpu-pressure\nPressureOf=system\nOmit=x\n' "$box" >"$conf"
printf 'PressureLimit=some 10%%\nPressureWindow=2s\nPressureDuration=2s\nVictim=memory-growth\nAction=kill\n' >>"$conf"
kd_start "$conf" || bail_out "cgkilld did not start"
busy=()
for _ in 1 2; do
	if command -v taskset >/dev/null; then
		run_in busy taskset -c 0 sh -c 'while :; do :; done'
	else
		run_in busy sh -c 'while :; do :; done'
	fi || bail_out "no busy loop in box/busy"
	busy+=("$started")
done
wait_log 60 "^<4>rule empty: $v2/$box/idle: .*; no victim \\(Victim=memory-growth\\): no candidate; omitted: x \\(Omit=x\\)\$"
ok $? "a watched cgroup whose only child is omitted: no victim, no candidate" || diag "$(cat "$kd_log")"
kill -KILL "${busy[@]}" 2>/dev/null
sleep 0.5
alive "$kd_daemon"
ok $? "and the daemon lives on (it called qsort(NULL, 0): undefined)" || diag "$(tail -20 "$kd_log")"
kd_stop
alive "$idle_x"
ok $? "the omitted cgroup's process lives"
alive_all "no candidate"

done_testing
