// SPDX-License-Identifier: GPL-2.0
/*
 * Reclaim in proportion to the pressure: a cgroup holds NR threads blocked
 * in futex wait, 48 MiB of reclaimable stacks and nothing else that can
 * be reclaimed (no swap, no page cache of its own). Asking memory.reclaim
 * for 8 MiB must succeed (the freed stack pages count as progress) and
 * take 8 to 16 MiB of stacks, not all of them; a second, larger request
 * then takes the rest. Before the fix the first request freed every
 * stack and still failed with EAGAIN.
 */
#include "rk_sites.h"
#include "kselftest_harness.h"
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

TEST_HARNESS_MAIN
