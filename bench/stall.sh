#!/usr/bin/env bash
# The stall beside a fork bomb that shares libc (issue 15), before and after,
# in the same runs: `make -C bench stall` (as root; `make` first).
#
#   cgkill2  the command as it was: linked dynamically, and run without
#            CAP_SYS_NICE, so it cannot raise its priority
#   cgkill   the command as shipped: static, real-time while it signals
#   floor    cgroup.kill and a poll, static; "floor (dynamic)" the same
#            program linked dynamically
#
# Each is started by an ordinary parent (SCHED_OTHER, nice 0) beside a
# dynamically linked `for (;;) fork();` at pids.max 3,000 with no cpu cgroup
# of its own (BOMBS=dbomb-3000,shbomb-3000 adds bash's :(){ :|:& };:).
# A run over 2 s is a stall: its kernel stack, its pc and the bomb's tasks
# are logged (results/*-stalls.txt). N trials each (default 10), every one a
# fresh bomb, killed in the end by the harness whatever happened, each run
# cut at 20 s. Expect about a minute of bomb per 10 trials and contender.
set -euo pipefail
cd "$(dirname "$0")"
B=${B:-../build}
N=${N:-10}
BOMBS=${BOMBS:-dbomb-3000}
BACKENDS=${BACKENDS:-freeze}

make -s B="$B" "$B/bench/bench" "$B/bench/floor" "$B/bench/floor-static" "$B/bench/cgkb-bomb" \
	"$B/bench/cgkb-dbomb" "$B/bench/cgkill-dynamic"
file -L "$B/cgkill" | grep -q 'static' ||
	echo "stall: $B/cgkill is not linked statically: the 'after' rows measure a dynamic build"
cp "$B/cgkill" "$B/bench/cgkill-under-test"
contenders="floor,floor (dynamic)"
for b in ${BACKENDS//,/ }; do contenders+=",cgkill2 -b $b,cgkill -b $b"; done
mkdir -p results
"$B/bench/bench" --only "$BOMBS" --bomb-reps "$N" --deadline 20 --unboosted=2 \
	--contenders "$contenders" --cgkill "$B/bench/cgkill-under-test" \
	--cgkill2 "$B/bench/cgkill-dynamic" --floor "$B/bench/floor" \
	--shell-loop ./killloop.sh --results results 2>results/stall-last.log |
	tee results/stall-last.md | sed -n '/^### users meet/,/^$/p;/^| contender | runs/,/^$/p'
echo
echo "before = cgkill2 (dynamic, no priority), after = cgkill (as shipped); runs over 2 s:"
awk -F' \\| ' '/^\| (floor|cgkill)/ && NF > 10 { sub(/^\| /, "", $1); printf "  %-26s %s of %s\n", $1, $7, $2 }' \
	results/stall-last.md
echo "stacks of every stall: $(ls -t results/*-stalls.txt | head -1); harness log: results/stall-last.log"
