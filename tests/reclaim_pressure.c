// SPDX-License-Identifier: GPL-2.0
/*
 * Reclaim in proportion to the pressure: a cgroup holds NR threads blocked
 * in futex wait, 48 MiB of reclaimable stacks and nothing else that can
 * be reclaimed (no swap, no page cache of its own). Asking memory.reclaim
 * for 8 MiB must succeed (the freed stack pages count as progress) and
 * take 8 to 16 MiB of stacks, not all of them; a second, larger request
 * then takes the rest. Before the fix the first request freed every
 * stack and still failed with EAGAIN.
 *
 * And a pass that takes a few stacks lying far apart in vmalloc space
 * flushes the TLB for each stack's pages alone, not for the megabytes
 * between them (which x86 does by dropping every CPU's whole TLB).
 */
#include "rk_sites.h"
#include "rk_inspect.h"
#include "kselftest_harness.h"
#include <limits.h>
#include <sys/mount.h>
#include <sys/stat.h>

#define NR	4096		/* 3 reclaimable pages each: 48 MiB */
#define ASK	(8L << 20)
#define SYSCTL	"/proc/sys/vm/reclaimable_stacks"
#define CG	"/sys/fs/cgroup/rk_pressure"

static long cg_kernel_stack(void)
{
	return rk_read_key(CG "/memory.stat", "kernel_stack");
}

static int cg_reclaim(long bytes)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", bytes);
	return rk_write_file(CG "/memory.reclaim", buf);
}

TEST(memory_reclaim_takes_what_it_asks)
{
	static struct rk_pop pop;
	long before, after_ask, after_all, reclaimable, pages0, young0;
	char pid[32];
	int r;

	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	mkdir(CG, 0755);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	ASSERT_EQ(0, rk_write_file(CG "/cgroup.procs", pid));
	ASSERT_EQ(0, rk_pop_start(&pop, rk_site_by_name("futex"), NR, NULL));
	/* Older than the one second light reclaim wants (the "Aging" rule). */
	rk_sleep_ms(1500);
	before = cg_kernel_stack();
	pages0 = rk_vmstat("stack_reclaim_pages");
	young0 = rk_vmstat("stack_reclaim_young");
	/* The pages below each blocked thread's stack pointer: 3 of 4. */
	reclaimable = (long)NR * 3 * sysconf(_SC_PAGESIZE);
	ASSERT_GE(before, reclaimable);

	r = cg_reclaim(ASK);
	after_ask = cg_kernel_stack();
	TH_LOG("memory.reclaim %ld MiB: %d; kernel_stack %ld -> %ld MiB "
	       "(%ld MiB reclaimable); %ld pages reclaimed, %ld young skipped",
	       ASK >> 20, r, before >> 20, after_ask >> 20, reclaimable >> 20,
	       rk_vmstat("stack_reclaim_pages") - pages0,
	       rk_vmstat("stack_reclaim_young") - young0);
	/* It got what it asked for, so the write succeeds. */
	EXPECT_EQ(0, r);
	/* From the stacks: nothing else here can be reclaimed. */
	EXPECT_GE(before - after_ask, ASK - (1L << 20));
	/* And not much more: at most twice the request. */
	EXPECT_LE(before - after_ask, 2 * ASK);

	/* A larger request takes the rest (EAGAIN: less than asked was left). */
	r = cg_reclaim(4 * reclaimable);
	after_all = cg_kernel_stack();
	TH_LOG("memory.reclaim %ld MiB: %d; kernel_stack -> %ld MiB",
	       4 * reclaimable >> 20, r, after_all >> 20);
	EXPECT_TRUE(r == 0 || r == -EAGAIN);
	EXPECT_GE(before - after_all, reclaimable * 9 / 10);

	EXPECT_EQ(NR, rk_pop_finish(&pop));
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	rk_write_file("/sys/fs/cgroup/cgroup.procs", pid);
}

#define TRACING		"/sys/kernel/tracing/"
#define SCATTERED	4	/* stacks the pass takes, all of the cgroup's */
#define FILLERS		64	/* stacks forked between two of them */

static int filler_go;

static void *filler(void *arg)
{
	while (!__atomic_load_n(&filler_go, __ATOMIC_SEQ_CST))
		rk_futex(&filler_go, FUTEX_WAIT, 0);
	return NULL;
}

/* FILLERS threads asleep; their stacks sit between the ones around them. */
static int fillers_start(pthread_t *t)
{
	for (int i = 0; i < FILLERS; i++)
		if (pthread_create(&t[i], NULL, filler, NULL))
			return -1;
	return 0;
}

/*
 * The flushes traced in this thread: each one's size in @sizes, the
 * span of them all in @span. Returns how many, -1 on error.
 */
static int traced_flushes(unsigned long *sizes, int max, unsigned long *span)
{
	unsigned long start, end, lo = ~0UL, hi = 0;
	char line[512], *p;
	int n = 0;
	FILE *f = fopen(TRACING "trace", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "rk_tlbflush:");
		if (!p || !(p = strstr(p, "start=")) ||
		    sscanf(p, "start=%lx end=%lx", &start, &end) != 2)
			continue;
		if (n < max)
			sizes[n] = end - start;
		n++;
		lo = start < lo ? start : lo;
		hi = end > hi ? end : hi;
	}
	fclose(f);
	*span = n ? hi - lo : 0;
	return n;
}

TEST(scattered_stacks_flush_only_their_pages)
{
	static pthread_t fill[SCATTERED][FILLERS];
	static struct rk_pop pop[SCATTERED];
	unsigned long sizes[64], span, stack_size;
	struct info in;
	long stacks0;
	char buf[128];
	int i, j, n;

#ifndef __x86_64__
	/* Inline there; and a range flush is broadcast TLBIs, not IPIs. */
	SKIP(return, "flush_tlb_kernel_range() cannot be probed on this arch");
#endif
	if (access(TRACING "kprobe_events", W_OK))
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	if (access(TRACING "kprobe_events", W_OK))
		SKIP(return, "no kprobe events in tracefs (KPROBE_EVENTS=n?)");
	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	mkdir(CG, 0755);
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	ASSERT_EQ(0, rk_write_file(CG "/cgroup.procs", buf));
	/*
	 * FILLERS stacks forked between two blocked threads make it likely
	 * that their stacks lie apart in vmalloc space; where vmalloc puts
	 * them is its business, so the span EXPECT below checks that
	 * premise rather than assume it. The fillers exit before the pass,
	 * so the cgroup's only listed stacks are the SCATTERED.
	 */
	for (i = 0; i < SCATTERED; i++) {
		ASSERT_EQ(0, fillers_start(fill[i]));
		ASSERT_EQ(0, rk_pop_start(&pop[i], rk_site_by_name("futex"), 1, NULL));
	}
	__atomic_store_n(&filler_go, 1, __ATOMIC_SEQ_CST);
	rk_futex(&filler_go, FUTEX_WAKE, INT_MAX);
	for (i = 0; i < SCATTERED; i++)
		for (j = 0; j < FILLERS; j++)
			ASSERT_EQ(0, pthread_join(fill[i][j], NULL));
	rk_sleep_ms(1500);	/* older than light reclaim wants */
	/* One flush may cover at most a stack's dead pages: all but one. */
	ASSERT_EQ(0, inspect(pop[0].tids[0], &in));
	stack_size = strlen(in.present) * (unsigned long)getpagesize();

	/* x86-64: start and end are its first two arguments. */
	ASSERT_EQ(0, rk_write_file(TRACING "kprobe_events",
				   "p:rk_tlbflush flush_tlb_kernel_range start=%di:x64 end=%si:x64\n"));
	snprintf(buf, sizeof(buf), "common_pid == %ld", (long)syscall(SYS_gettid));
	ASSERT_EQ(0, rk_write_file(TRACING "events/kprobes/rk_tlbflush/filter", buf));
	ASSERT_EQ(0, rk_write_file(TRACING "trace", ""));
	ASSERT_EQ(0, rk_write_file(TRACING "events/kprobes/rk_tlbflush/enable", "1"));
	/* A global count: kswapd reclaiming meanwhile would show here. */
	stacks0 = rk_vmstat("stack_reclaim_stacks");
	cg_reclaim(16L << 20);	/* more than there is: -EAGAIN is fine */
	stacks0 = rk_vmstat("stack_reclaim_stacks") - stacks0;
	rk_write_file(TRACING "events/kprobes/rk_tlbflush/enable", "0");
	n = traced_flushes(sizes, 64, &span);
	rk_write_file(TRACING "kprobe_events", "-:rk_tlbflush\n");

	TH_LOG("%ld stacks reclaimed, %d flushes spanning %lu KiB",
	       stacks0, n, span >> 10);
	EXPECT_EQ(SCATTERED, stacks0);
	ASSERT_LE(1, n);
	for (i = 0; i < n && i < 64; i++)
		EXPECT_GE(stack_size - getpagesize(), sizes[i])
			TH_LOG("flush %d covers %lu KiB, more than one stack's dead pages",
			       i, sizes[i] >> 10);
	/* The premise: the stacks did lie apart, beyond one flush's reach. */
	EXPECT_LT(64 * (unsigned long)getpagesize(), span);
	for (i = 0; i < SCATTERED; i++)
		EXPECT_EQ(1, rk_pop_finish(&pop[i]));
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	rk_write_file("/sys/fs/cgroup/cgroup.procs", buf);
}

TEST_HARNESS_MAIN
