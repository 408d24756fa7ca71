#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The tests' deadlines (tests/support/deadline.c, run here as
# tests/helper/deadline.c): an idle machine's time, never shortened,
# stretched by $CGKILL_TEST_SLOW and by the tasks runnable per CPU, within
# the cap on the load's share. The load is made here: spinning children of
# this test, four per usable CPU, killed at the end.

. tests/tap.sh
. tests/lib.sh

[ -x "$DEADLINE" ] || bail_out "$DEADLINE not built (make tests)"
cap=30	# SB_SLOW_LOAD_MAX of tests/support/deadline.h

spinners=()
trap 'kill -KILL "${spinners[@]}" 2>/dev/null; wait 2>/dev/null' EXIT

is_num() { [[ $1 =~ ^[0-9]+$ ]]; }

d=$(CGKILL_TEST_SLOW='' "$DEADLINE" 1000)
is_num "$d" && [ "$d" -ge 1000 ] && [ "$d" -le $((1000 * cap)) ]
ok $? "1000 ms idle: at least 1000, at most $cap times that ($d)"
d=$("$DEADLINE" 0)
[ "$d" = 0 ]
ok $? "0 stays 0 ($d)"
d=$(CGKILL_TEST_SLOW=4 "$DEADLINE" 1000)
is_num "$d" && [ "$d" -ge 4000 ] && [ "$d" -le $((4000 * cap)) ]
ok $? "CGKILL_TEST_SLOW=4: at least 4 times longer ($d)"
d=$(CGKILL_TEST_SLOW=0.5 "$DEADLINE" 1000)
is_num "$d" && [ "$d" -ge 1000 ]
ok $? "CGKILL_TEST_SLOW=0.5: never shorter than the idle time ($d)"
for bad in abc -3 0 1e9; do
	d=$(CGKILL_TEST_SLOW=$bad "$DEADLINE" 1000)
	is_num "$d" && [ "$d" -ge 1000 ] && [ "$d" -le $((1000 * cap)) ]
	ok $? "CGKILL_TEST_SLOW=$bad is ignored ($d)"
done
"$DEADLINE" 2>/dev/null
[ $? = 2 ]
ok $? "no argument: usage, exit 2"
"$DEADLINE" 12x 2>/dev/null
[ $? = 2 ]
ok $? "not a number: usage, exit 2"

# The load: 4 spinners per CPU this test may use make at least 4 runnable
# tasks per CPU, whatever else runs.
cpus=$(nproc)
for ((i = 0; i < 4 * cpus; i++)); do
	bash -c 'while :; do :; done' &
	spinners+=($!)
done
d=0
for ((i = 0; i < 100; i++)); do	# until the scheduler has them all running
	d=$(CGKILL_TEST_SLOW='' "$DEADLINE" 1000)
	[ "$d" -ge 3000 ] && break
	sleep 0.05
done
[ "$d" -ge 3000 ] && [ "$d" -le $((1000 * cap)) ]
ok $? "beside $((4 * cpus)) spinners on $cpus CPUs: at least 3 times longer ($d)"
d=$(CGKILL_TEST_SLOW=100 "$DEADLINE" 1000)
[ "$d" -ge 300000 ]
ok $? "the same with CGKILL_TEST_SLOW=100: the factors multiply ($d)"

done_testing
