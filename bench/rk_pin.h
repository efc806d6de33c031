/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pinning for the benchmarks that place their threads (pin=1): figures
 * read as those of pinned threads must not come from unpinned ones, so a
 * refused pin ends the program. Needs _GNU_SOURCE before the first
 * #include of the including file (cpu_set_t).
 */
#ifndef RK_PIN_H
#define RK_PIN_H

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void rk_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "pin to CPU %d: %s (pin=0 runs unpinned)\n", cpu,
			strerror(errno));
		exit(1);
	}
}

#endif /* RK_PIN_H */
