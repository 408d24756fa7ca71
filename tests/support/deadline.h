/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Deadlines that come from the situation. A test's wait is written as the
 * time it needs on an idle machine; it is stretched by how busy the machine
 * is now (runnable tasks per CPU the test may use: the larger of the load
 * average of the last minute and the tasks runnable at this moment, from
 * /proc/loadavg) and by $CGKILL_TEST_SLOW, a factor for machines that are
 * slow in a way the load does not show (sanitizers, emulation). A deadline
 * only bounds a failure: a test that passes ends as soon as it can.
 *
 * The one place that turns a base time into a deadline: the waits of the
 * test support code take idle-machine times and call it; the tests call
 * it for the waits they hand to the library (KILL_WAIT_MS); the shell
 * tests run tests/helper/deadline.c, which prints it.
 */
#ifndef CGK_TEST_DEADLINE_H
#define CGK_TEST_DEADLINE_H

#include <stdint.h>

/* The load's share of the factor is capped here: past it a test that
 * still has not finished is more likely stuck than slow. */
#define SB_SLOW_LOAD_MAX 30.0

/* How many times longer than on an idle machine a wait may take now: at
 * least 1; $CGKILL_TEST_SLOW (default 1) times the load per CPU (at least
 * 1, at most SB_SLOW_LOAD_MAX). */
double sb_slowness(void);
/* base_ms (its idle-machine time) times sb_slowness(), rounded up, at most
 * UINT32_MAX; 0 stays 0. */
unsigned sb_deadline_ms(unsigned base_ms);

#endif
