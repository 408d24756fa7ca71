#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's victim choice ranks per owner one level up too (cgkilld.conf(5),
# VICTIM CHOICE, "Owners"): the candidates below the watched cgroup that
# belong to one user are ranked as one, their figures summed, and the
# victim is all of them. The rule is on the root-owned box/jobs (a job
# launcher's: one cgroup per job, delegated to the job's user, or root's
# per-session scopes holding a user's processes).
#  1. Splitting over siblings: uid $A's 8 cgroups box/jobs/a1..a8 (each
#     chowned to $A) hold one process each; uid $B's box/jobs/b holds 3.
#     Victim=processes takes all 8 of $A's (8 > 3), not b, which was "the
#     most processes" cgroup by cgroup.
#  2. Root's scopes: s1..s4 are root's, each with one process of uid $A
#     (which made itself not dumpable: /proc/PID/* are root's then, its real
#     uid still $A) and d1 is $A's with one: $A's 5. $B has b (3) and
#     root's scope sb with one process of $B's: 4. Root's scope r holds 2
#     processes of root's, ranked alone. $A's five cgroups go, $B's two and
#     r stay (before: b, the largest cgroup).
# The fork bomb that fires the rule is in box/jobs/poke, held at a pids
# limit of 1, omitted. Sentinels in box/other and in box must live.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
[ -x "$FORKBOMB" ] || bail_out "$FORKBOMB not built (make tests)"
command -v python3 >/dev/null || skip_all "no python3 (the JSON checks)"
command -v setpriv >/dev/null || skip_all "no setpriv (processes of other uids)"
kd_setup victim-siblings
A=64751
B=64752

poke_cgroups
mkcg other && mkcg jobs/b || bail_out "cannot create the cgroups of $box"
kd_sentinels pids other

events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf

why() {
	diag "victims: '${victims[*]}'" "$(grep -E 'victim|ignored|cannot|refused' "$kd_log")"
}

# "${asA[@]}" COMMAND...: COMMAND as uid $A (real, effective, saved), no groups
asA=(setpriv --reuid="$A" --regid="$A" --clear-groups)
asB=(setpriv --reuid="$B" --regid="$B" --clear-groups)

# group_case NAME COUNT RULE-LINES...: the daemon with a rule on box/jobs
# until COUNT events (one for each cgroup acted on), then stopped; the
# cgroups acted on, below box/jobs, in $victims (sorted), the first
# event's candidates in $events.
group_case() {
	local name=$1 count=$2
	shift 2
	{
		printf '[Daemon]\nEventLog=%s\n\n[Rule]\nName=%s\nMatch=%s/jobs\n' "$events" "$name" "$box"
		printf 'Trigger=pids-max\nPidsMaxEvents=5\nAction=kill\nWait=20s\nPostActionDelay=5min\n'
		printf '%s\n' "$@"
	} >"$conf"
	: >"$events"
	kd_start "$conf" || bail_out "cgkilld did not start"
	wait_for 60 "$count events of case $name" eval '[ "$(wc -l <"$events")" -ge '"$count"' ]'
	kd_stop
	mapfile -t victims < <(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    print(e["cgroup"][len(sys.argv[2]) + 1:] if e["error"] == 0 else "error: " + e["message"])' \
		"$events" "$v2/$box/jobs" 2>/dev/null | sort)
}

# dead_all WHAT PID...: each is dead
dead_all() {
	local what=$1 p bad=
	shift
	for p in "$@"; do
		alive "$p" && bad+=" $p"
	done
	ok "$([ -z "$bad" ]; echo $?)" "$what" || diag "alive:$bad"
}

# candidates: the first event's candidates, one line each:
# "NAME FIGURE OWNER COUNT"
candidates() {
	python3 -c 'import json, sys
for x in json.loads(open(sys.argv[1]).readline())["candidates"]:
    print(x["cgroup"][len(sys.argv[2]) + 1:], x["figure"], x.get("owner"), x.get("count"))' \
		"$events" "$v2/$box/jobs" 2>/dev/null
}

nb=()
for _ in 1 2 3; do
	run_in jobs/b "${asB[@]}" sleep 3600 || bail_out "no sleeper in box/jobs/b"
	nb+=("$started")
done
chown "$B" "$v2/$box/jobs/b"

# 1. uid $A's 8 one-process cgroups beside uid $B's of 3
na=()
for i in $(seq 8); do
	mkcg "jobs/a$i" || bail_out "cannot create box/jobs/a$i"
	run_in "jobs/a$i" "${asA[@]}" sleep 3600 || bail_out "no sleeper in box/jobs/a$i"
	na+=("$started")
	chown "$A" "$v2/$box/jobs/a$i"
done

start_poke
group_case siblings 8 Victim=processes Omit=poke
[ "${victims[*]}" = "a1 a2 a3 a4 a5 a6 a7 a8" ]
ok $? "uid $A's 8 one-process cgroups are ranked as one (8 > 3) and all 8 are the victim, not b" || why
for i in $(seq 8); do
	wait_for 30 "box/jobs/a$i empty" empty "jobs/a$i" || break
done
dead_all "uid $A's 8 processes died" "${na[@]}"
alive_all "siblings of uid $A" "${nb[@]}"
log_has "^<5>rule siblings: .*/jobs: victim uid $A \\(8 process\\(es\\), memory [^;]*; the 8 cgroups of uid $A, summed: a[1-8], a[1-8], a[1-8], a[1-8], a[1-8] and 3 more\\): the most processes of 2 candidates; then b \\(3 process\\(es\\), memory [^)]*\\); omitted: poke"
ok $? "the log ranks uid $A's 8 cgroups as one, summed, and names them" || why
[ "$(candidates | sed 's/^a[1-8] /a /')" = "a 8 $A 8
b 3 $B 1" ]
ok $? "the JSON event: uid $A's entry (figure 8, 8 cgroups), then b (3, uid $B)" ||
	diag "$(candidates)" "$(head -c 2000 "$events")"

# 2. root's scopes, ranked by the uid of their processes
# a python uid $A can run (a pyenv shim below /root is not one)
nodump="import ctypes, time; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0); time.sleep(3600)"
py=
for p in "$(python3 -c 'import sys; print(sys.executable)')" /usr/bin/python3 /usr/local/bin/python3; do
	if (cd / && "${asA[@]}" "$p" -c 'import ctypes') 2>/dev/null; then
		py=$p
		break
	fi
done
ns=()
for i in 1 2 3 4; do
	mkcg "jobs/s$i" || bail_out "cannot create box/jobs/s$i"
	if [ -n "$py" ]; then
		run_in "jobs/s$i" "${asA[@]}" "$py" -c "$nodump"
	else
		run_in "jobs/s$i" "${asA[@]}" sleep 3600
	fi || bail_out "no sleeper in box/jobs/s$i"
	ns+=("$started")
done
if [ -n "$py" ]; then
	wait_for 20 "the scopes' processes not dumpable (/proc/PID/status root's)" \
		eval '[ "$(stat -c %u "/proc/${ns[3]}/status")" = 0 ]' || bail_out "PR_SET_DUMPABLE did not take"
else
	diag "no python uid $A can run: the scopes' processes are dumpable"
fi
mkcg jobs/d1 && mkcg jobs/sb && mkcg jobs/r || bail_out "cannot create box/jobs/d1, sb, r"
run_in jobs/d1 "${asA[@]}" sleep 3600 || bail_out "no sleeper in box/jobs/d1"
ns+=("$started")
chown "$A" "$v2/$box/jobs/d1"
run_in jobs/sb "${asB[@]}" sleep 3600 || bail_out "no sleeper in box/jobs/sb"
nb+=("$started")
nr=()
for _ in 1 2; do
	run_in jobs/r sleep 3600 || bail_out "no sleeper in box/jobs/r"
	nr+=("$started")
done
group_case scopes 5 Victim=processes Omit=poke
[ "${victims[*]}" = "d1 s1 s2 s3 s4" ]
ok $? "root's scopes holding uid $A's processes count with uid $A's cgroup: all 5 are the victim" || why
for c in s1 s2 s3 s4 d1; do
	wait_for 30 "box/jobs/$c empty" empty "jobs/$c" || break
done
dead_all "uid $A's 5 processes died" "${ns[@]}"
alive_all "scopes of uid $A" "${nb[@]}" "${nr[@]}"
[ "$(candidates | sed 's/^[sd][1-4] /a /; s/^sb /b /')" = "a 5 $A 5
b 4 $B 2
r 2 None 1" ]
ok $? "the JSON event: uid $A's 5 cgroups (5), uid $B's 2 (4: b and root's scope sb), root's r alone (2)" ||
	diag "$(candidates)" "$(head -c 2000 "$events")"

done_testing
