#!/usr/bin/env bash
# CI: the benchmark harness still builds and runs. One small round, one run
# per contender (commands and library, the shell loop, pkill) on a flat
# cgroup, the 50-level chain and a fork bomb of 1,000, and one per command
# and the floor beside a dynamically linked bomb at 3,000 (a row users
# meet: no cpu cgroup, an ordinary parent); every run must empty
# its subtree and the targets section must be written. Speed is not judged
# here: one run on a busy CI machine says nothing about medians.
set -euo pipefail
cd "$(dirname "$0")"
B=${B:-../build}

make -s B="$B" "$B/bench/bench" "$B/bench/floor" "$B/bench/floor-static" "$B/bench/cgkb-bomb" \
	"$B/bench/cgkb-dbomb"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

contenders="floor,cgkill -b kernel,cgkill -b freeze,cgkill -b v1-freeze,cgkill -b loop"
contenders+=",lib kernel,lib freeze,lib v1-freeze,lib loop,shell loop,pkill --cgroup"
"$B/bench/bench" --only dbomb-3000,flat-100,deep,bomb --reps 1 --deadline 30 --contenders "$contenders" \
	--cgkill "$B/cgkill" --floor "$B/bench/floor" --shell-loop ./killloop.sh \
	--results "$out" >"$out/stdout"

md=$(ls "$out"/*-quick.md)
fail=0
rows=$(grep -c '^| [a-z].* | [01]/1 ' "$md" || true)
# 4 tables: 11 contenders on flat-100, 10 on deep (no pkill), 10 on the bomb
# (pkill stalls on a bomb's /proc files: full runs only), 5 on the dynamic
# bomb (the floor and the commands).
if [ "$rows" -ne 36 ]; then
	echo "bench smoke: expected 36 result rows, found $rows"
	fail=1
fi
if grep -E '^\| [a-z].* \| (0/1|1/1 ⚠) ' "$md"; then
	echo "bench smoke: the runs above did not empty their subtree or failed"
	fail=1
fi
if ! grep -q 'targets met in this run' "$md"; then
	echo "bench smoke: no targets section"
	fail=1
fi
cat "$out/stdout"

# What a user feels through a fork storm (felt.sh): two storms of the
# dynamic bomb under each of cgkilld's bomb rules (the fork-rate row is
# skipped, and says so, by a daemon without that trigger) and one short
# fork-heavy workload; every storm must be caught by the daemon.
make -s B="$B" "$B/bench/felt"
abs=$(cd "$B" && pwd)
if ! CGKILL_BUILD=$abs CGKILLD=$abs/cgkilld CGKILL=$abs/cgkill FELT=$abs/bench/felt \
	DBOMB=$abs/bench/cgkb-dbomb ROWS=pids-max,fork-rate N=2 BOMBS=dbomb-3000 WORKLOADS=xargs \
	XARGS_N=200 BASELINE=1 ./felt.sh >"$out/felt.md" 2>&1; then
	echo "bench smoke: felt.sh failed"
	fail=1
fi
cat "$out/felt.md"
# a daemon row that ran names its rule; its storms' row: 2 storms, 2
# emptied before the cut-off, by the rule's triggers (a fork-rate rule's
# pids-max half may catch one: bench/RESULTS.md, issue 29)
want=$(grep -c '^- [a-z-]*: rule: ' "$out/felt.md" || true)
rows=$(grep -cE '^\| [a-z-]+ \| dbomb-3000 \| 2 \| 2 \| [a-z-]+ [12](, [a-z-]+ 1)? \| ' "$out/felt.md" || true)
if [ "$want" -eq 0 ] || [ "$rows" -ne "$want" ]; then
	echo "bench smoke: felt.sh: $rows of $want daemon rows caught their 2 storms"
	fail=1
fi
[ $fail -eq 0 ] && echo "bench smoke: the harness works; its targets table is not judged here"
exit $fail
