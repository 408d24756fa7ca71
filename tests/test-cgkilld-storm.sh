#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# cgkilld after a mkdir/rmdir storm (issue 26, item 9: watches are found
# through hashes, and a removal no longer walks every watched cgroup):
# the watches must still be right afterwards. A rule on box/storm/*/*
# (pids-max): the daemon watches each box/storm/<dir> (a directory whose
# children match) and each box/storm/<dir>/<cgroup>. Two storms:
#  1. while the daemon reads: rounds of mkdir and rmdir of cgroups and of
#     whole directories, a known set left at the end;
#  2. with the daemon stopped (SIGSTOP), more events than the inotify
#     queue holds: the kernel drops them (IN_Q_OVERFLOW) and the daemon
#     must rescan: directories removed meanwhile forgotten too.
# After each, the daemon's state (SIGUSR1) must list exactly the cgroups
# and directories that exist, its watches must match, and a fork bomb
# (under pids.max) in a cgroup made during the storm, and one in a cgroup
# made after it, must be killed. Sentinels in box/other and the sandbox
# live. No timing is asserted.
cd "${0%/*}/.." || exit 1
. tests/cgkilld-lib.sh

need_cgkilld
need_forkbomb
kd_setup storm
PMAX=300

kd_first pids storm/keep/k0 $PMAX
mkcg other || bail_out "cannot create $box/other"
kd_sentinels pids other

conf=$kd_tmp/cgkilld.conf
events=$kd_tmp/events.json
cat >"$conf" <<EOF
[Daemon]
EventLog=$events
PollInterval=20ms

[Rule]
Name=storm
Match=$box/storm/*/*
Trigger=pids-max
PidsMaxEvents=20
PidsWindow=1s
Action=kill
Wait=20s
PostActionDelay=0
MaxActionsPerMinute=infinity
EOF
kd_start "$conf" || bail_out "cgkilld did not start"
wait_for 20 "box/storm/keep/k0 watched" eval 'dump | grep -q "storm/keep/k0 (rule storm)"'
ok $? "the daemon watches box/storm/keep/k0"

s=$v2/$box/storm

# bomb REL: a fork bomb in box/REL; true once the daemon's event for it
# is in the event log and the cgroup is empty
bomb() {
	start_in "$1" "$FORKBOMB"
	wait_for 30 "the event of box/$1" python3 -c 'import json, sys
sys.exit(not any(e["cgroup"] == sys.argv[2] and e["action"] == "kill" and e["error"] == 0
                 for e in map(json.loads, open(sys.argv[1]))))' "$events" "$v2/$box/$1" &&
		wait_for 30 "box/$1 empty" empty "$1"
}

# state_is: the daemon's dump lists exactly the cgroups below box/storm
# that exist (as dump lines "watching ..."), and its counts of cgroups and
# directories (the mount, box, box/storm and each box/storm/<dir>) match.
state_is() {
	local st want got ndirs ncgs
	st=$(dump) || return 1
	want=$(cd "$s" && find . -mindepth 2 -maxdepth 2 -type d | sed 's|^\./||' | sort)
	got=$(sed -n "s|^<6>watching $s/\([^ ]*\) (rule storm).*|\1|p" <<<"$st" | sort)
	ncgs=$(grep -c . <<<"$want")
	ndirs=$(($(find "$s" -mindepth 1 -maxdepth 1 -type d | wc -l) + 3))
	if [ "$want" != "$got" ]; then
		diag "watched but gone: $(comm -13 <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ')"
		diag "there but not watched: $(comm -23 <(echo "$want") <(echo "$got") | head -5 | tr '\n' ' ')"
		return 1
	fi
	grep -q "^<6>state: 1 rule(s), $ncgs watched cgroup(s), $ndirs watched directories" <<<"$st" || {
		diag "$(grep '^<6>state: [0-9]' <<<"$st") (want $ncgs cgroups, $ndirs directories)"
		return 1
	}
}

# watches_are: and its inotify watches are one per cgroup and directory
watches_are() {
	local st n
	st=$(dump) || return 1
	n=$(($(cd "$s" && find . -mindepth 2 -maxdepth 2 -type d | wc -l) + $(find "$s" -mindepth 1 -maxdepth 1 -type d | wc -l) + 3))
	grep -q "^<6>files: .* $n inotify watches" <<<"$st" || {
		diag "$(grep '^<6>files:' <<<"$st") (want $n watches)"
		return 1
	}
}

# storm ROUNDS N: each round makes directories d1..d4, each with cgroups
# c1..cN, and cgroups c1..cN in box/storm/keep, then removes all but some;
# what is left at the end: box/storm/keep/c1..c10 and box/storm/d1/c1..c5.
storm() {
	local rounds=$1 n=$2 r d
	for ((r = 1; r <= rounds; r++)); do
		for d in d1 d2 d3 d4; do
			mkdir -p "$s/$d"
			(cd "$s/$d" && eval "mkdir c{1..$n}" 2>/dev/null)
		done
		(cd "$s/keep" && eval "mkdir c{1..$n}" 2>/dev/null)
		for d in d1 d2 d3 d4; do
			(cd "$s/$d" && eval "rmdir c{1..$n}" 2>/dev/null)
			[ "$d" = d1 ] || rmdir "$s/$d"
		done
		(cd "$s/keep" && eval "rmdir c{1..$n}" 2>/dev/null)
	done
	(cd "$s/keep" && mkdir c{1..10} 2>/dev/null)
	(cd "$s/d1" && mkdir c{1..5} 2>/dev/null)
}

storm 20 200
wait_for 60 "the daemon's state to match box/storm" state_is
ok $? "after a storm of $((20 * 5 * 200 * 2)) mkdir and rmdir: exactly the cgroups and directories left are watched"
watches_are
ok $? "its inotify watches: one for each (the state dump's count)"

# bombs: in one made during the storm, in one made after
mkcg storm/keep/c3 $PMAX || bail_out "no v1 counterpart for box/storm/keep/c3"
mkcg storm/d1/late $PMAX || bail_out "cannot create $box/storm/d1/late"
for rel in storm/keep/c3 storm/d1/late; do
	bomb "$rel"
	ok $? "the bomb in box/$rel is killed"
done

# the second storm, the daemon stopped: the kernel's queue (16384 events)
# overflows
kill -STOP "$kd_daemon"
storm 3 1500
rm_cgroup_tree "$s/d1"
mkdir -p "$s/fresh/f1" "$s/fresh/f2"
kill -CONT "$kd_daemon"
wait_log 30 "inotify queue overflow: rescanning"
ok $? "a storm of $((3 * 5 * 1500 * 2)) events while the daemon was stopped: the queue overflowed and the log says so"
wait_for 60 "the daemon's state to match box/storm" state_is
ok $? "after the rescan: exactly the cgroups and directories left are watched (removed directories forgotten)"
watches_are
ok $? "its inotify watches: one for each"
mkcg storm/fresh/bomb $PMAX || bail_out "cannot create $box/storm/fresh/bomb"
bomb storm/fresh/bomb
ok $? "the bomb in a cgroup made after it is killed"
alive "$sent_other"
ok $? "the sentinel in box/other lives"
if [ -n "$sent_parent" ]; then
	alive "$sent_parent"
	ok $? "the sentinel in the sandbox lives"
fi
alive "$kd_daemon"
ok $? "the daemon lives"
kd_stop
done_testing
