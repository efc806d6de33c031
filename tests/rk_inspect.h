/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The debugfs file of CONFIG_RECLAIMABLE_STACK_DEBUG: write a thread id,
 * read one line about its stack (mm/stack_reclaim.c, stack_debug_show()).
 */
#ifndef RK_INSPECT_H
#define RK_INSPECT_H

#include "rk_common.h"

#define INSPECT		"/sys/kernel/debug/reclaimable_stacks/inspect"
/* Stack states as the kernel numbers them (enum stack_state). */
#define STACK_IN_USE		0
#define STACK_PREPARE_RECLAIM	1
#define STACK_RECLAIMABLE	2
#define STACK_RECLAIMED		5

struct info {
	int tid, state, lru, sp_page, zero;
	/* One character per page: present, mapped, node ('-' if absent). */
	char present[16], mapped[16], magic[16], nodes[16];
	unsigned long base;	/* the stack's lowest address */
};

static inline int inspect(pid_t tid, struct info *in)
{
	char buf[32];
	FILE *f;
	int n;

	snprintf(buf, sizeof(buf), "%d\n", tid);
	if (rk_write_file(INSPECT, buf))
		return -1;
	f = fopen(INSPECT, "r");
	if (!f)
		return -1;
	n = fscanf(f, "tid %d state %d lru %d present %15s mapped %15s "
		   "sp_page %d zero_below_sp %d magic %15s base %lx nodes %15s",
		   &in->tid, &in->state, &in->lru, in->present, in->mapped,
		   &in->sp_page, &in->zero, in->magic, &in->base, in->nodes);
	fclose(f);
	return n == 10 ? 0 : -1;
}

/*
 * drop_caches until each of the @n threads shows RECLAIMED, for up to 2 s.
 * A thread seen blocked from here may not have switched out yet (its vCPU
 * descheduled by a busy host), and reclaim takes only listed stacks.
 */
static inline int rk_reclaim_tids(const pid_t *tids, int n)
{
	struct info in;

	for (int t = 0; t < 100; t++) {
		int i;

		if (rk_write_file("/proc/sys/vm/drop_caches", "2"))
			return -1;
		for (i = 0; i < n; i++)
			if (inspect(tids[i], &in) || in.state != STACK_RECLAIMED)
				break;
		if (i == n)
			return 0;
		rk_sleep_ms(20);
	}
	return -1;
}

#endif /* RK_INSPECT_H */
