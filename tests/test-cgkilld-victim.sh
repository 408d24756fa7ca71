#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld's victim choice (Victim=, Prefer=, Avoid=, Omit=, the
# user.cgkill_* xattrs): a rule on box/jobs whose children a, b and c hold
# 50, 100 and 150 MiB (each under a memory limit of 256 MiB, no swap: the
# v1 memory hierarchy on hybrid layouts, memory.max on pure v2) acts on one
# child, never on box/jobs as a whole. What fires it: a fork bomb in
# box/jobs/poke, held at a pids limit of 1 (the v1 pids cgroup box/jobs on
# hybrid layouts, box/jobs/poke's pids.max on pure v2), which every rule
# omits. Each case starts the daemon, waits for its one action (the
# post-action delay keeps it to one), reads the event and stops it; the
# child it killed is filled again for the next. Sentinels in a sibling
# (box/other) and in the parent (box, where the layout allows it) must
# live, and so must the children not chosen. Last, memory-growth under a
# cpu-pressure rule, and memory.oom.group where the v2 memory controller is.
# What users below the watched cgroup can arrange against the choice is in
# test-cgkilld-victim-adversary.sh.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
[ -x "$FORKBOMB" ] || bail_out "$FORKBOMB not built (make tests)"
command -v python3 >/dev/null || skip_all "no python3 (the memory holders and the JSON checks)"
kd_setup victim
LIMIT=$((256 << 20))

kd_first memory jobs/a "" $LIMIT
mkcg jobs/b "" $LIMIT && mkcg jobs/c "" $LIMIT || bail_out "cannot create the children of $box/jobs"
mkcg other "" $LIMIT || bail_out "cannot create $box/other"
if v2_has pids; then
	mkcg jobs/poke 1 || bail_out "cannot create $box/jobs/poke"
	poke_join="$(_join jobs/poke)"
elif [ -n "$v1pids" ]; then
	# the v1 counterpart of box/jobs holds the bomb alone; the children
	# have no v1 pids cgroup (and stay where this shell is)
	mkcg jobs 1 && mkcg jobs/poke || bail_out "cannot create $box/jobs/poke"
	poke_join="echo \$\$ >'$v1pids/$box/jobs/cgroup.procs' && echo \$\$ >'$v2/$box/jobs/poke/cgroup.procs'"
else
	skip_all "no pids controller: neither cgroup v2 pids nor a v1 pids hierarchy (the rule's trigger)"
fi
kd_sentinels memory other

# usage REL: the memory of box/REL in bytes (v2 memory.current, else v1)
usage() {
	cat "$v2/$box/$1/memory.current" 2>/dev/null || cat "$v1mem/$box/$1/memory.usage_in_bytes"
}

# hold NAME MiB: a process in box/jobs/NAME that holds MiB (touched), its
# pid in $hold_NAME, once the cgroup's memory shows it.
declare -A hold
fill() {
	local name=$1 mib=$2
	run_in "jobs/$name" python3 -c 'import sys, time
b = bytearray(b"x") * (int(sys.argv[1]) << 20)
time.sleep(3600)' "$mib" || bail_out "no memory holder in box/jobs/$name"
	hold[$name]=$started
	wait_for 60 "box/jobs/$name to hold $mib MiB" eval '[ "$(usage jobs/'"$name"')" -ge '"$((mib << 20))"' ]' ||
		bail_out "box/jobs/$name does not hold $mib MiB"
}
fill a 50
fill b 100
fill c 150
declare -A sizes=([a]=50 [b]=100 [c]=150)

start_poke

events=$kd_tmp/events.json
conf=$kd_tmp/cgkilld.conf

# The children still alive but the victim, the bomb, the sentinels.
survivors() {
	local n bad=
	for n in a b c; do
		[ "$n" = "$1" ] && continue
		alive "${hold[$n]}" || bad+=" $n"
	done
	alive "$poke" || bad+=" poke"
	alive "$sent_other" || bad+=" other"
	[ -z "$sent_parent" ] || alive "$sent_parent" || bad+=" parent"
	[ -z "$bad" ] || diag "dead:$bad"
	[ -z "$bad" ]
}

# killed NAME WHAT: the case's victim was box/jobs/NAME, it is empty and
# everything else lives; NAME is filled again.
killed() {
	local name=$1 what=$2
	[ "$victim" = "$name" ]
	ok $? "$what: the victim is box/jobs/$name" || diag "victim: '$victim'" "$(grep -E 'victim|ignored' "$kd_log")"
	wait_for 30 "box/jobs/$name empty" empty "jobs/$name" && ! alive "${hold[$name]}"
	ok $? "$what: box/jobs/$name is empty"
	survivors "$name"
	ok $? "$what: the other children, the bomb (omitted) and the sentinels live"
	fill "$name" "${sizes[$name]}"
}

# 1. the largest
victim_case largest Victim=memory Omit=poke
killed c "Victim=memory"
log_has '^<5>rule largest: .*/jobs: victim c \(memory 1[5-9][0-9]\.[0-9] MiB\): the largest of 3 candidates; then b \(memory 1[0-4][0-9]\.[0-9] MiB\), a \(memory [5-9][0-9]\.[0-9] MiB\); omitted: poke \(Omit=poke\)'
ok $? "the log says why: the largest of the three, then the others by size, the bomb omitted" ||
	diag "$(grep victim "$kd_log")"
python3 - "$events" "$v2/$box/jobs" <<'EOF'
import json, sys
e = json.loads(open(sys.argv[1]).readline())
j = sys.argv[2]
assert e["rule"] == "largest" and e["cgroup"] == j + "/c" and e["error"] == 0, e
assert e["watched"] == j and e["victim"] == "memory", e
k = e["candidates"]
assert [x["cgroup"] for x in k] == [j + "/c", j + "/b", j + "/a"], k
assert all(x["unit"] == "bytes" and x["group"] == "normal" and x["reason"] is None for x in k), k
assert k[0]["figure"] > k[1]["figure"] > k[2]["figure"] >= 50 << 20, k
assert all(x["memory"] == x["figure"] for x in k), k
EOF
ok $? "the JSON event lists the candidates, largest first, with their figures"

# 2. Avoid= on the largest: the second
victim_case avoid Victim=memory Omit=poke 'Avoid=c'
killed b "Avoid=c"
log_has '^<5>rule avoid: .*: victim b \(memory [^)]*\): the largest of 2 not avoided among 3 candidates; then a \([^)]*\), c \(memory [^;]*; avoided: Avoid=c\)'
ok $? "the log says c was avoided" || diag "$(grep victim "$kd_log")"
python3 - "$events" "$v2/$box/jobs" <<'EOF'
import json, sys
e = json.loads(open(sys.argv[1]).readline())
k = e["candidates"]
assert [(x["cgroup"][len(sys.argv[2]) + 1:], x["group"], x["reason"]) for x in k] == \
    [("b", "normal", None), ("a", "normal", None), ("c", "avoid", "Avoid=c")], k
EOF
ok $? "the JSON event has c last, in the avoid group"

# 3. Omit=: never, even if it is all that is left to take
victim_case omit Victim=memory 'Omit=poke b' 'Omit=c'
killed a "Omit=b c"
log_has '^<5>rule omit: .*: victim a \([^)]*\): the only candidate; omitted: b \(Omit=b\), c \(Omit=c\), poke \(Omit=poke\)'
ok $? "the log names the omitted" || diag "$(grep victim "$kd_log")"
python3 -c 'import json, sys
assert [x["cgroup"][-2:] for x in json.loads(open(sys.argv[1]).readline())["candidates"]] == ["/a"]' "$events"
ok $? "the JSON event's candidates are a alone"

# 4. xattrs set by root on root's cgroups: honoured
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.cgkill_prefer", b"1")' "$v2/$box/jobs/a"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.cgkill_omit", b"")' "$v2/$box/jobs/poke"
victim_case xattrs Victim=memory
killed a "user.cgkill_prefer on a"
log_has '^<5>rule xattrs: .*: victim a \([^)]*\): preferred \(user.cgkill_prefer\), the only one among 3 candidates; then c \([^)]*\), b \([^)]*\); omitted: poke \(user.cgkill_omit\)'
ok $? "the prefer and omit xattrs are honoured (a first, the bomb omitted)" || diag "$(grep victim "$kd_log")"
python3 -c 'import os, sys
os.removexattr(sys.argv[1], "user.cgkill_prefer")
os.setxattr(sys.argv[1], "user.cgkill_prefer", b"0")' "$v2/$box/jobs/a"
victim_case xattr-zero Victim=memory
killed c "user.cgkill_prefer=0 on a"

# 5. xattrs on a cgroup another user owns below root's box/jobs: ignored
nobody=$(id -u nobody 2>/dev/null || echo 65534)
chown "$nobody" "$v2/$box/jobs/c"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.cgkill_omit", b"1")' "$v2/$box/jobs/c"
victim_case foreign Victim=memory
killed c "user.cgkill_omit on c, owned by uid $nobody"
log_has "^<5>rule foreign: $v2/$box/jobs/c: user.cgkill_omit ignored: the cgroup belongs to uid $nobody, neither root nor the owner of the watched $v2/$box/jobs \\(uid 0\\)"
ok $? "the log says the xattr was ignored, and why" || diag "$(grep -E 'ignored|victim' "$kd_log")"
#    and honoured once box/jobs is that user's too
chown "$nobody" "$v2/$box/jobs/c" "$v2/$box/jobs"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.cgkill_avoid", b"1")' "$v2/$box/jobs/b"
chown "$nobody" "$v2/$box/jobs/b"
victim_case owner Victim=memory
killed a "user.cgkill_omit on c and user.cgkill_avoid on b, all owned by uid $nobody"
log_has '^<5>rule owner: .*: victim a \([^)]*\): the only one not avoided among 2 candidates; then b \([^;]*; avoided: user.cgkill_avoid\); omitted: c \(user.cgkill_omit\), poke \(user.cgkill_omit\)'
ok $? "xattrs on cgroups of the watched cgroup's owner are honoured" || diag "$(grep -E 'ignored|victim' "$kd_log")"
chown 0 "$v2/$box/jobs" "$v2/$box/jobs/b" "$v2/$box/jobs/c"
for n in b c; do
	python3 -c 'import os, sys
for a in os.listxattr(sys.argv[1]): os.removexattr(sys.argv[1], a)' "$v2/$box/jobs/$n"
done

# 6. Victim=processes: b has 4, c 2, a 1
for _ in 1 2 3; do
	run_in jobs/b sleep 3600 || bail_out "no sleeper in box/jobs/b"
done
run_in jobs/c sleep 3600 || bail_out "no sleeper in box/jobs/c"
victim_case processes Victim=processes
killed b "Victim=processes"
log_has '^<5>rule processes: .*: victim b \(4 process\(es\), memory [^)]*\): the most processes of 3 candidates; then c \(2 process\(es\), [^)]*\), a \(1 process\(es\), [^)]*\)'
ok $? "the log counts the processes" || diag "$(grep victim "$kd_log")"
python3 -c 'import json, sys
k = json.loads(open(sys.argv[1]).readline())["candidates"]
assert [(x["cgroup"][-1], x["figure"], x["unit"]) for x in k] == [("b", 4, "processes"), ("c", 2, "processes"), ("a", 1, "processes")], k
assert k[0]["memory"] >= 100 << 20, k' "$events"
ok $? "the JSON event has the process counts"

# 7. a preference covers the subtree below; a cgroup with processes of
#    its own beside populated child cgroups is one candidate, whole (its
#    processes would be in none): box/jobs/deep holds one itself, and
#    box/jobs/deep/x five
mkdir "$v2/$box/jobs/deep" "$v2/$box/jobs/deep/x" || bail_out "cannot create box/jobs/deep/x"
run_in jobs/deep sleep 3600 || bail_out "no sleeper in box/jobs/deep"
inner=$started
deep=()
for _ in 1 2 3 4 5; do
	run_in jobs/deep/x sleep 3600 || bail_out "no sleeper in box/jobs/deep/x"
	deep+=("$started")
done
victim_case subtree Victim=processes 'Avoid=deep'
killed c "Victim=processes, Avoid=deep"
python3 -c 'import json, sys
k = json.loads(open(sys.argv[1]).readline())["candidates"]
assert [(x["cgroup"][len(sys.argv[2]) + 1:], x["figure"], x["group"], x["reason"], x["whole"]) for x in k] == \
    [("c", 2, "normal", None, None), ("b", 1, "normal", None, None), ("a", 1, "normal", None, None),
     ("deep", 6, "avoid", "Avoid=deep", "processes of its own beside child cgroups")], k' "$events" "$v2/$box/jobs"
ok $? "Avoid=deep puts box/jobs/deep last, one candidate of 6 processes (its own and deep/x's); b before a (a tie: memory)" || diag "$(head -c 2000 "$events")"
victim_case subtree2 Victim=processes
[ "$victim" = deep ] && wait_for 30 "box/jobs/deep empty" empty jobs/deep
ok $? "without it, box/jobs/deep (6 processes) is the victim, whole" || diag "victim '$victim'" "$(grep victim "$kd_log")"
log_has '^<5>rule subtree2: .*/jobs: victim deep \(6 process\(es\), memory [^;]*; whole: processes of its own beside child cgroups\): the most processes of 4 candidates'
ok $? "the log says why it was taken whole" || diag "$(grep victim "$kd_log")"
dead=0
for p in "${deep[@]}" "$inner"; do
	alive "$p" || dead=$((dead + 1))
done
[ $dead -eq 6 ]
ok $? "its six processes died, the one beside box/jobs/deep/x too"
survivors ""
ok $? "and a, b, c, the bomb and the sentinels live"

# 8. Victim=memory-growth: growth from the pressure episode's start. Two
#    busy loops on one CPU in box/jobs/busy (omitted) make cpu pressure;
#    box/jobs/grow holds 20 MiB and takes 80 MiB more once the episode
#    began: it grew the most, c (150 MiB, steady) is still the largest.
mkcg jobs/grow "" $LIMIT && mkcg jobs/busy || bail_out "cannot create box/jobs/grow, box/jobs/busy"
run_in jobs/grow python3 -c 'import signal, time
held = [bytearray(b"x") * (20 << 20)]
signal.signal(signal.SIGUSR1, lambda *_: held.append(bytearray(b"x") * (80 << 20)))
while True:
    time.sleep(3600)' || bail_out "no grower in box/jobs/grow"
grow=$started
wait_for 60 "box/jobs/grow to hold 20 MiB" eval '[ "$(usage jobs/grow)" -ge $((20 << 20)) ]' ||
	bail_out "box/jobs/grow does not hold 20 MiB"
busy=()
for _ in 1 2; do
	if command -v taskset >/dev/null; then
		run_in jobs/busy taskset -c 0 sh -c 'while :; do :; done'
	else
		run_in jobs/busy sh -c 'while :; do :; done'
	fi || bail_out "no busy loop in box/jobs/busy"
	busy+=("$started")
done
{
	printf '[Daemon]\nEventLog=%s\n\n[Rule]\nName=growth\nMatch=%s/jobs\n' "$events" "$box"
	printf 'Trigger=cpu-pressure\nPressureLimit=some 20%%\nPressureWindow=2s\nPressureDuration=4s\n'
	printf 'Victim=memory-growth\nOmit=busy\nAction=kill\nWait=20s\n'
} >"$conf"
: >"$events"
kd_start "$conf" || bail_out "cgkilld did not start"
if wait_log 30 '^<7>rule growth: .*/jobs: a pressure episode began'; then
	kill -USR1 "$grow"
	wait_for 30 "the event of case growth" test -s "$events"
fi
kd_stop
kill -KILL "${busy[@]}" 2>/dev/null
python3 -c 'import json, sys
e = json.loads(open(sys.argv[1]).readline())
j = sys.argv[2]
assert e["cgroup"] == j + "/grow" and e["trigger"]["type"] == "cpu-pressure", e
k = e["candidates"]
assert k[0]["cgroup"] == j + "/grow" and k[0]["unit"] == "bytes/s", k
assert k[0]["figure"] >= (80 << 20) / 30 and all(x["figure"] < k[0]["figure"] / 4 for x in k[1:]), k
assert any(x["cgroup"] == j + "/c" and x["memory"] > k[0]["memory"] for x in k), k' "$events" "$v2/$box/jobs"
ok $? "Victim=memory-growth: box/jobs/grow, which grew since the episode began, not c, the largest" ||
	diag "$(grep -E 'victim|episode' "$kd_log")" "$(head -c 2000 "$events")"
wait_for 30 "box/jobs/grow empty" empty jobs/grow
ok $? "box/jobs/grow is empty"
survivors ""
ok $? "a, b, c, the bomb and the sentinels live"
log_has '^<5>rule growth: .*/jobs: victim grow \(growth \+[0-9.]+ MiB/s, memory [0-9.]+ MiB\): the fastest growing of [0-9]+ candidates'
ok $? "the log says grow grew fastest" || diag "$(grep victim "$kd_log")"

# 9. memory.oom.group: a subtree that sets it is one candidate
if [ -f "$v2/$box/jobs/a/memory.oom.group" ]; then
	mkcg jobs/g/x "" $LIMIT && mkcg jobs/g/y "" $LIMIT || bail_out "cannot create box/jobs/g"
	echo 1 >"$v2/$box/jobs/g/memory.oom.group"
	for r in g/x g/x g/y g/y g/y; do
		run_in "jobs/$r" sleep 3600 || bail_out "no sleeper in box/jobs/$r"
	done
	victim_case oomgroup Victim=processes Omit=poke
	[ "$victim" = g ] && empty jobs/g
	ok $? "memory.oom.group 1 on box/jobs/g: g is one candidate (5 processes), killed whole" ||
		diag "victim '$victim'" "$(grep victim "$kd_log")"
else
	# no v2 memory controller here: the other subtree that is one
	# candidate, a threaded one, takes the same path
	diag "no memory.oom.group in $v2 (no cgroup v2 memory controller): a threaded subtree stands in"
	mkcg jobs/t/x && mkcg jobs/t/y || bail_out "cannot create box/jobs/t"
	echo threaded >"$v2/$box/jobs/t/x/cgroup.type" && echo threaded >"$v2/$box/jobs/t/y/cgroup.type" ||
		bail_out "cannot make box/jobs/t threaded"
	# processes join the subtree's domain, box/jobs/t; their threads may
	# move below it (threaded cgroups list no processes)
	tpids=()
	for r in 1 2 3 4 5; do
		run_in jobs/t sleep 3600 || bail_out "no sleeper in box/jobs/t"
		tpids+=("$started")
	done
	echo "${tpids[0]}" >"$v2/$box/jobs/t/x/cgroup.threads" &&
		echo "${tpids[1]}" >"$v2/$box/jobs/t/y/cgroup.threads" || bail_out "cannot move threads below box/jobs/t"
	victim_case threaded Victim=processes Omit=poke
	[ "$victim" = t ] && wait_for 30 "box/jobs/t empty" empty jobs/t
	ok $? "a threaded subtree box/jobs/t is one candidate (5 processes), killed whole" ||
		diag "victim '$victim'" "$(grep victim "$kd_log")"
fi

alive "$poke"
ok $? "the bomb, omitted in every case, lives"
kd_stop
done_testing
