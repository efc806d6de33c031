/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The debugfs file of CONFIG_RECLAIMABLE_STACK_DEBUG: write a thread id,
 * read one line about its stack (mm/stack_reclaim.c, stack_debug_show()).
 */
#ifndef RK_INSPECT_H
#define RK_INSPECT_H

#include "rk_common.h"

#define INSPECT		"/sys/kernel/debug/reclaimable_stacks/inspect"
/*
 * Stack and LRU states as the file names them (stack_state_names[] and
 * stack_lru_names[] in mm/stack_reclaim.c); the tests compare indexes.
 */
enum { STACK_IN_USE, STACK_PREPARE_RECLAIM, STACK_RECLAIMABLE,
       STACK_RECLAIMING, STACK_RECLAIMING_IN_USE, STACK_RECLAIMED,
       STACK_REPOPULATING };
static const char * const rk_state_names[] = {
	"in_use", "prepare_reclaim", "reclaimable", "reclaiming",
	"reclaiming_in_use", "reclaimed", "repopulating",
};
static const char * const rk_lru_names[] = {
	"not_present", "pending", "new", "old",
};

/* The index of @name in @names (@n of them), or -1: a state we do not know. */
static inline int rk_name_index(const char *name, const char * const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

/* "state NAME lru NAME" at the start of an inspect line, as indexes. */
static inline int rk_parse_states(const char *state, const char *lru,
				  int *st, int *lr)
{
	*st = rk_name_index(state, rk_state_names, 7);
	*lr = rk_name_index(lru, rk_lru_names, 4);
	return *st < 0 || *lr < 0 ? -1 : 0;
}

struct info {
	int tid, state, lru, sp_page, zero;
	/* One character per page: present, mapped, node ('-' if absent). */
	char present[16], mapped[16], magic[16], nodes[16];
	unsigned long base;	/* the stack's lowest address */
};

static inline int inspect(pid_t tid, struct info *in)
{
	char buf[32], state[24], lru[24];
	FILE *f;
	int n;

	snprintf(buf, sizeof(buf), "%d\n", tid);
	if (rk_write_file(INSPECT, buf))
		return -1;
	f = fopen(INSPECT, "r");
	if (!f)
		return -1;
	n = fscanf(f, "tid %d state %23s lru %23s present %15s mapped %15s "
		   "sp_page %d zero_below_sp %d magic %15s base %lx nodes %15s",
		   &in->tid, state, lru, in->present, in->mapped,
		   &in->sp_page, &in->zero, in->magic, &in->base, in->nodes);
	fclose(f);
	if (n != 10)
		return -1;
	return rk_parse_states(state, lru, &in->state, &in->lru);
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
