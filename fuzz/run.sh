#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build every libFuzzer target (make fuzz) and run each for SECONDS seconds
# (default 10). Exit status: 0 if no target crashed, 1 otherwise. Crash
# inputs are kept in $B/fuzz/artifacts/ (B defaults to build).
#
#	fuzz/run.sh [SECONDS] [TARGET...]	e.g. fuzz/run.sh 60 fuzz-json
set -u
cd "$(dirname "$0")/.." || exit 2
secs=${1:-10}
[ $# -gt 0 ] && shift
B=${B:-build}

case $secs in
''|*[!0-9]*) echo "usage: $0 [SECONDS] [TARGET...]" >&2; exit 2 ;;
esac

make -s fuzz B="$B" || exit 1

if [ $# -gt 0 ]; then
	targets="$*"
else
	targets=$(cd fuzz && ls fuzz-*.c | sed 's/\.c$//')
fi

# Seeds from this machine's own files give the parsers a head start.
corpus=$(mktemp -d "${TMPDIR:-/tmp}/cgkill-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$corpus"' EXIT INT TERM
for t in $targets; do mkdir -p "$corpus/$t"; done
[ -d "$corpus/fuzz-mountinfo" ] && cat /proc/self/mountinfo > "$corpus/fuzz-mountinfo/self"
[ -d "$corpus/fuzz-proc-cgroup" ] && { printf '\000'; cat /proc/self/cgroup; } > "$corpus/fuzz-proc-cgroup/self"
[ -d "$corpus/fuzz-pids" ] && printf '1\n22\n0\n333' > "$corpus/fuzz-pids/seed"
[ -d "$corpus/fuzz-signal" ] && { printf 'SIGRTMIN+3' > "$corpus/fuzz-signal/rt"; printf '1.5s' > "$corpus/fuzz-signal/dur";
	printf '1y 0.5M2w3d 4h5min6.7s8ms9us' > "$corpus/fuzz-signal/span"; }
[ -d "$corpus/fuzz-conf" ] && cp data/cgkilld.conf.example "$corpus/fuzz-conf/example"

mkdir -p "$B/fuzz/artifacts"
# UBSan reports must fail the run, not just print.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

failed=
for t in $targets; do
	log="$B/fuzz/$t.log"
	printf '%-20s %ss ... ' "$t" "$secs"
	if "$B/fuzz/$t" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$B/fuzz/artifacts/$t-" "$corpus/$t" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "ok (${runs:-?} runs)"
	else
		echo "FAILED, see $log"
		tail -n 30 "$log" | sed 's/^/    /'
		failed="$failed $t"
	fi
done

if [ -n "$failed" ]; then
	echo "crashed:$failed" >&2
	exit 1
fi
exit 0
