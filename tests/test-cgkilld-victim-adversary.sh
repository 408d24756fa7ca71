#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's victim choice against what a user below the watched cgroup can
# arrange there (cgkilld.conf(5), VICTIM CHOICE): no way to hide a hog so
# that a neighbour dies instead, nor to stop the rule from choosing.
#  1. a hog beside a child cgroup that holds one sleep: the hog's cgroup is
#     one candidate, whole (its processes were in no candidate, the child's
#     figure was all that counted);
#  2. a cgroup whose pressure files are turned off (cgroup.pressure 0):
#     its figure is unknown, which ranks first (it counted as 0);
#  3. 17 nested cgroups of 240-character names, a sleep at the bottom (the
#     path passes PATH_MAX): the rule still chooses (it said "File name
#     too long" and did nothing), the nearest ancestor whose path fits
#     stands for the deep subtree and is killed whole when it is the
#     largest;
#  4. Avoid= and Omit= globs that match a cgroup another user owns below
#     the root-owned watched cgroup: ignored (a user chooses those names);
#  5. a glob with ".." inside a name is a name (only a ".." component is
#     refused).
# The rule is on box/jobs, fired by a fork bomb in box/jobs/poke held at a
# pids limit of 1 (as in test-cgkilld-victim.sh), omitted by every rule.
# Sentinels in box/other and in box must live, and so must what was not
# chosen.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
[ -x "$FORKBOMB" ] || bail_out "$FORKBOMB not built (make tests)"
command -v python3 >/dev/null || skip_all "no python3 (the memory holders and the JSON checks)"
kd_setup victim-adv
LIMIT=$((256 << 20))
nobody=$(id -u nobody 2>/dev/null || echo 65534)

# The deep subtree box/jobs/nest/N/N/... (17 levels of a 240-character
# N) is reached by cd, one level at a time, and removed before the rest.
long=$(printf 'n%.0s' $(seq 240))
LEVELS=17
nest_pids=()
# in_nest COMMAND...: COMMAND in the deepest cgroup of the nest (cwd).
in_nest() {
	(
		cd "$v2/$box/jobs/nest" || exit 1
		for ((i = 0; i < LEVELS; i++)); do
			cd "$long" || exit 1
		done
		"$@"
	)
}
nest_rm() {
	local p
	for p in "${nest_pids[@]}"; do
		grep -qs "$long" "/proc/$p/cgroup" 2>/dev/null || [ "$(_ppid "$p")" = $$ ] || continue
		kill -KILL "$p" 2>/dev/null
	done
	[ -d "$v2/$box/jobs/nest" ] || return 0
	wait_for 20 "the nest empty" empty jobs/nest
	(
		cd "$v2/$box/jobs/nest" || exit 1
		n=0
		while [ -d "$long" ] && cd "$long"; do
			n=$((n + 1))
		done
		while [ $n -gt 0 ]; do
			cd .. && rmdir "$long"
			n=$((n - 1))
		done
	)
}
trap 'nest_rm; kd_cleanup' EXIT

kd_first memory jobs/a "" $LIMIT
mkcg jobs/b "" $LIMIT && mkcg other "" $LIMIT || bail_out "cannot create the cgroups of $box"
if v2_has pids; then
	mkcg jobs/poke 1 || bail_out "cannot create $box/jobs/poke"
	poke_join="$(_join jobs/poke)"
elif [ -n "$v1pids" ]; then
	mkcg jobs 1 && mkcg jobs/poke || bail_out "cannot create $box/jobs/poke"
	poke_join="echo \$\$ >'$v1pids/$box/jobs/cgroup.procs' && echo \$\$ >'$v2/$box/jobs/poke/cgroup.procs'"
else
	skip_all "no pids controller: neither cgroup v2 pids nor a v1 pids hierarchy (the rule's trigger)"
fi
kd_sentinels memory other

usage() {
	cat "$v2/$box/$1/memory.current" 2>/dev/null || cat "$v1mem/$box/$1/memory.usage_in_bytes"
}

# hold REL MiB: a process in box/jobs/REL that holds MiB, its pid in
# $started, once the cgroup's memory shows it.
hold() {
	run_in "jobs/$1" python3 -c 'import sys, time
b = bytearray(b"x") * (int(sys.argv[1]) << 20)
time.sleep(3600)' "$2" || bail_out "no memory holder in box/jobs/$1"
	wait_for 60 "box/jobs/$1 to hold $2 MiB" eval '[ "$(usage jobs/'"$1"')" -ge '"$(($2 << 20))"' ]' ||
		bail_out "box/jobs/$1 does not hold $2 MiB"
}
hold a 20
hold_a=$started
hold b 40
hold_b=$started

start_poke

events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf

# every case omits the bomb
case_run() { victim_case "$@" Omit=poke; }

why() {
	diag "victim: '$victim'" "$(grep -E 'victim|ignored|cannot' "$kd_log")"
}

# 1. a hog (80 MiB) in box/jobs/hide beside box/jobs/hide/y, which holds
#    one sleep: box/jobs/hide is one candidate with y, the largest
mkcg jobs/hide "" $LIMIT && mkcg jobs/hide/y "" $LIMIT || bail_out "cannot create box/jobs/hide/y"
run_in jobs/hide/y sleep 3600 || bail_out "no sleeper in box/jobs/hide/y"
hide_y=$started
hold hide 80
hide_hog=$started
case_run beside Victim=memory
[ "$victim" = hide ] && wait_for 30 "box/jobs/hide empty" empty jobs/hide
ok $? "a hog beside a child cgroup holding one sleep: box/jobs/hide, whole, is the victim" || why
! alive "$hide_hog" && ! alive "$hide_y"
ok $? "the hog and the sleep beside it died"
alive_all "hog beside a child" "$hold_a" "$hold_b"
log_has '^<5>rule beside: .*/jobs: victim hide \(memory [0-9.]+ MiB; whole: processes of its own beside child cgroups\): the largest of 3 candidates'
ok $? "the log says it was taken whole, and why" || why

# 2. box/jobs/quiet turns its pressure files off: its figure is unknown,
#    which ranks first (as 0 it ranked last)
if [ -f "$v2/$box/jobs/a/memory.pressure" ] && [ -f "$v2/$box/jobs/a/cgroup.pressure" ]; then
	mkcg jobs/quiet "" $LIMIT || bail_out "cannot create box/jobs/quiet"
	run_in jobs/quiet sleep 3600 || bail_out "no sleeper in box/jobs/quiet"
	quiet=$started
	echo 0 >"$v2/$box/jobs/quiet/cgroup.pressure" || bail_out "cannot turn off the pressure of box/jobs/quiet"
	case_run quiet Victim=pressure
	[ "$victim" = quiet ] && wait_for 30 "box/jobs/quiet empty" empty jobs/quiet && ! alive "$quiet"
	ok $? "Victim=pressure: box/jobs/quiet, whose memory.pressure is off, is the victim" || why
	alive_all "pressure off" "$hold_a" "$hold_b"
	log_has '^<5>rule quiet: .*/jobs: victim quiet \(pressure unknown, memory [^)]*\): its pressure cannot be read, which ranks first \(fail closed\), among 3 candidates'
	ok $? "the log says its pressure could not be read" || why
	python3 -c 'import json, sys
k = json.loads(open(sys.argv[1]).readline())["candidates"]
assert k[0]["cgroup"].endswith("/quiet") and k[0]["figure"] is None, k
assert all(x["figure"] is not None for x in k[1:]), k' "$events"
	ok $? "the JSON event has its figure null" || diag "$(head -c 2000 "$events")"
else
	bail_out "no memory.pressure or cgroup.pressure in $v2 (PSI off): case 2 cannot run"
fi

# 3. 17 levels of 240-character names below box/jobs/nest, one sleep at
#    the bottom: box/jobs/b (3 processes) is still chosen; then five at
#    the bottom make the nest the victim, killed whole
mkdir "$v2/$box/jobs/nest" || bail_out "cannot create box/jobs/nest"
(
	cd "$v2/$box/jobs/nest" || exit 1
	for ((i = 0; i < LEVELS; i++)); do
		mkdir "$long" && cd "$long" || exit 1
	done
) || bail_out "cannot create the nest"
# nest_run: one sleep at the bottom of the nest
nest_run() {
	(
		cd "$v2/$box/jobs/nest" || exit 1
		for ((i = 0; i < LEVELS; i++)); do
			cd "$long" || exit 1
		done
		exec sh -c 'echo $$ >cgroup.procs && exec sleep 3600'
	) </dev/null >/dev/null 2>&1 &
	started=$!
	disown "$started"
	nest_pids+=("$started")
	kd_pids+=("$started")
	wait_for 20 "$started at the bottom of the nest" in_nest grep -qx "$started" cgroup.procs
}
nest_run || bail_out "no sleeper at the bottom of the nest"
for _ in 1 2; do
	run_in jobs/b sleep 3600 || bail_out "no sleeper in box/jobs/b"
done
case_run deep Victim=processes
[ "$victim" = b ] && wait_for 30 "box/jobs/b empty" empty jobs/b
ok $? "a subtree deeper than PATH_MAX does not stop the rule: box/jobs/b (3 processes) is the victim" || why
python3 -c 'import json, sys
k = json.loads(open(sys.argv[1]).readline())["candidates"]
n = [x for x in k if "/jobs/nest/" in x["cgroup"]]
assert len(n) == 1 and n[0]["figure"] == 1 and len(n[0]["cgroup"]) < 4096, k
assert n[0]["whole"] == "a cgroup below it has a path too long to name", n' "$events"
ok $? "the nearest ancestor of the deep cgroup whose path fits is a candidate (1 process, whole)" ||
	diag "$(head -c 3000 "$events" | cut -c1-3000)"
alive_all "deep nest" "$hold_a" "${nest_pids[@]}"
for _ in 1 2 3 4; do
	nest_run || bail_out "no sleeper at the bottom of the nest"
done
case_run deep2 Victim=processes
[[ $victim == nest/* ]] && wait_for 30 "the nest empty" empty jobs/nest
ok $? "with five processes at its bottom, the nest's ancestor is the victim and the nest is emptied" || why
dead=0
for p in "${nest_pids[@]}"; do
	alive "$p" || dead=$((dead + 1))
done
[ $dead -eq 5 ]
ok $? "the five sleeps deeper than PATH_MAX died" || diag "dead: $dead of 5"
alive_all "deep nest killed" "$hold_a"
nest_rm
nest_pids=()
rmdir "$v2/$box/jobs/nest"

# 4. globs on names another user chose: box/jobs/x-term (5 processes),
#    owned by uid $nobody, and box/jobs/y-term (4), owned by uid $other
#    (not $nobody's: one user's cgroups are ranked as one), below root's
#    box/jobs
other=64761
mkcg jobs/x-term && mkcg jobs/y-term || bail_out "cannot create box/jobs/x-term, y-term"
xt=()
yt=()
for _ in 1 2 3 4 5; do
	run_in jobs/x-term sleep 3600 || bail_out "no sleeper in box/jobs/x-term"
	xt+=("$started")
done
for _ in 1 2 3 4; do
	run_in jobs/y-term sleep 3600 || bail_out "no sleeper in box/jobs/y-term"
	yt+=("$started")
done
chown "$nobody" "$v2/$box/jobs/x-term"
chown "$other" "$v2/$box/jobs/y-term"
case_run avoid Victim=processes 'Avoid=x-term*'
[ "$victim" = x-term ] && wait_for 30 "box/jobs/x-term empty" empty jobs/x-term
ok $? "Avoid=x-term* on a cgroup of uid $nobody is ignored: x-term (5 processes) is the victim" || why
log_has "^<5>rule avoid: .*/jobs: 1 Avoid=/Omit= match\\(es\\) ignored where a directory on the way belongs to neither root nor the owner of the watched cgroup \\(uid 0\\): Avoid=x-term\\* on x-term \\(x-term: uid $nobody\\)\$"
ok $? "the log says the glob was ignored, once, and why" || why
alive_all "Avoid= ignored" "$hold_a" "${yt[@]}"
case_run omit Victim=processes 'Omit=y-term*'
[ "$victim" = y-term ] && wait_for 30 "box/jobs/y-term empty" empty jobs/y-term
ok $? "Omit=y-term* on a cgroup of uid $other is ignored: y-term (4 processes) is the victim" || why
alive_all "Omit= ignored" "$hold_a"
#    and honoured where the directories are root's
chown 0 "$v2/$box/jobs/y-term"
for _ in 1 2 3 4; do
	run_in jobs/y-term sleep 3600 || bail_out "no sleeper in box/jobs/y-term"
done
case_run omit-root Victim=processes 'Omit=y-term*'
[ "$victim" = a ]
ok $? "Omit=y-term* on root's cgroup is honoured: a is the victim" || why
! log_has 'Avoid=/Omit= match'
ok $? "and no glob is said to be ignored" || why

# 5. ".." inside a name is a name; a ".." component is refused
printf '[Rule]\nName=dots\nMatch=%s/jobs\nTrigger=pids-max\nVictim=memory\nAvoid=foo..bar ..x x.. a/..b\n' "$box" >"$conf"
out=$("$CGKILLD" --check "$conf" 2>&1)
ok $? "Avoid=foo..bar ..x x.. a/..b: names, accepted" || diag "$out"
for g in .. ../x a/.. a/../b /..; do
	printf '[Rule]\nName=dots\nMatch=%s/jobs\nTrigger=pids-max\nVictim=memory\nAvoid=%s\n' "$box" "$g" >"$conf"
	out=$("$CGKILLD" --check "$conf" 2>&1)
	[ $? -ne 0 ] && grep -q 'no "\.\."' <<<"$out"
	ok $? "Avoid=$g: refused" || diag "$out"
done

alive "$poke"
ok $? "the bomb, omitted in every case, lives"
kd_stop
done_testing
