/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tests' fork bomb: forks as fast as it can, every child too; when the
 * pids limit refuses a fork, a child sometimes exits so pids get recycled.
 *
 * A program of its own (the sandbox execs it), so that each fork copies this
 * small process and not the test that started it: under ASan a fork of the
 * test binary costs milliseconds of kernel time, and the bomb would then
 * measure the sanitizer instead of the kill.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	unsigned seed = (unsigned)getpid();
	bool root = true;

	signal(SIGCHLD, SIG_IGN);	/* children are reaped for us */
	for (;;) {
		pid_t c = fork();

		if (c == 0) {
			root = false;
			seed = (unsigned)getpid();
			continue;
		}
		if (c < 0) {
			if (!root && rand_r(&seed) % 64 == 0)
				_exit(0);
			usleep(2000 + (unsigned)rand_r(&seed) % 8000);
		}
	}
}
