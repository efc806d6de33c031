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
	/* Older than the 1.5 s light reclaim wants (the "Aging" rule). */
	rk_sleep_ms(2000);
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

#define SCATTERED	4	/* stacks the pass takes; the kernel's cap */
#define FILLERS		64	/* stacks forked between two of them */
#define MAX_FLUSHES	64

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

struct range {
	unsigned long start, end;
};

/* The flushes traced in this thread, at most @max. How many; -1 on error. */
static int traced_flushes(struct range *r, int max)
{
	char line[512], *p;
	int n = 0;
	FILE *f = fopen(RK_TRACING "trace", "r");

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		p = strstr(line, "rk_tlbflush:");
		if (p && (p = strstr(p, "start=")) &&
		    sscanf(p, "start=%lx end=%lx", &r[n].start, &r[n].end) == 2)
			n++;
	}
	fclose(f);
	return n;
}

/*
 * SCATTERED threads blocked in futex, their stacks far apart: one pass
 * (memory.reclaim of their cgroup) takes them all. Before it, each
 * stack's dead pages (below its SP's page) are read from debugfs; after,
 * each must lie inside a traced flush of this thread, and no flush may
 * be longer than one stack's dead pages. SCATTERED is the kernel's cap
 * (STACK_FLUSH_RANGES): one more and a span flush is right.
 */
TEST(scattered_stacks_flush_only_their_pages)
{
	static pthread_t fill[SCATTERED][FILLERS];
	static struct rk_pop pop[SCATTERED];
	unsigned long page = getpagesize(), lo = ~0UL, hi = 0, size;
	struct range dead[SCATTERED], fl[MAX_FLUSHES];
	struct info in;
	long stacks0;
	char buf[128];
	int i, j, n;

#ifndef __x86_64__
	/* Inline there; and a range flush is broadcast TLBIs, not IPIs. */
	SKIP(return, "flush_tlb_kernel_range() cannot be probed on this arch");
#endif
	if (rk_kprobes())
		SKIP(return, "no kprobe events in tracefs (KPROBE_EVENTS=n?)");
	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	mkdir(CG, 0755);
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	ASSERT_EQ(0, rk_write_file(CG "/cgroup.procs", buf));
	/*
	 * FILLERS stacks forked between two blocked threads make it likely
	 * that their stacks lie apart in vmalloc space; where vmalloc puts
	 * them is its business, so the premise is checked, not assumed. The
	 * fillers exit before the pass, so the cgroup's only listed stacks
	 * are the SCATTERED.
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
	rk_sleep_ms(2000);	/* older than light reclaim wants */
	for (i = 0; i < SCATTERED; i++) {
		ASSERT_EQ(0, inspect(pop[i].tids[0], &in));
		ASSERT_LT(0, in.sp_page);
		dead[i].start = in.base;
		dead[i].end = in.base + in.sp_page * page;
		lo = dead[i].start < lo ? dead[i].start : lo;
		hi = dead[i].end > hi ? dead[i].end : hi;
	}
	size = strlen(in.present) * page;
	if (hi - lo <= 32 * page)
		SKIP(goto out, "stacks placed within 32 pages: one flush is right");

	/*
	 * x86-64: start and end are its first two arguments. Enabled before
	 * the filter is set, but nothing flushes kernel ranges in this
	 * thread until the pass, and the trace is cleared after the filter.
	 */
	ASSERT_EQ(0, rk_kprobe_add("rk_tlbflush",
				   "flush_tlb_kernel_range start=%di:x64 end=%si:x64"));
	snprintf(buf, sizeof(buf), "common_pid == %ld", (long)syscall(SYS_gettid));
	ASSERT_EQ(0, rk_write_file(RK_TRACING "events/kprobes/rk_tlbflush/filter", buf));
	ASSERT_EQ(0, rk_write_file(RK_TRACING "trace", ""));
	/* A global count: kswapd reclaiming meanwhile would show here. */
	stacks0 = rk_vmstat("stack_reclaim_stacks");
	cg_reclaim(16L << 20);	/* more than there is: -EAGAIN is fine */
	stacks0 = rk_vmstat("stack_reclaim_stacks") - stacks0;
	rk_write_file(RK_TRACING "events/kprobes/rk_tlbflush/enable", "0");
	n = traced_flushes(fl, MAX_FLUSHES);
	rk_kprobe_remove("rk_tlbflush");

	TH_LOG("%ld stacks reclaimed, spanning %lu KiB; %d flushes",
	       stacks0, (hi - lo) >> 10, n);
	EXPECT_EQ(SCATTERED, stacks0);
	for (j = 0; j < n; j++) {
		/* Braces: the harness's TH_LOG follows its EXPECT's do-while. */
		EXPECT_GE(size - page, fl[j].end - fl[j].start)
			TH_LOG("flush %d covers %lu KiB, more than a stack's dead pages",
			       j, (fl[j].end - fl[j].start) >> 10);
	}
	for (i = 0; i < SCATTERED; i++) {
		for (j = 0; j < n; j++)
			if (fl[j].start <= dead[i].start && dead[i].end <= fl[j].end)
				break;
		EXPECT_LT(j, n)
			TH_LOG("stack at %lx..%lx unmapped but never flushed",
			       dead[i].start, dead[i].end);
	}
out:
	for (i = 0; i < SCATTERED; i++)
		EXPECT_EQ(1, rk_pop_finish(&pop[i]));
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	rk_write_file("/sys/fs/cgroup/cgroup.procs", buf);
}

TEST_HARNESS_MAIN
