// SPDX-License-Identifier: GPL-2.0
/*
 * Smoke test of the measuring harness itself: KernelStack and
 * nr_kernel_stack agree, grow by one THREAD_SIZE per blocked thread, and
 * return to their baseline once the threads have exited. And the cost of
 * a thread's exit: freeing a stack flushes the TLB lazily, as vfree()
 * does, not with an IPI to every CPU per stack.
 */
#include <sys/stat.h>
#include "rk_common.h"
#include "kselftest_harness.h"

#define NR_THREADS	1000
#define STACK_KB	16	/* THREAD_SIZE on x86_64 and arm64 (4K pages) */
#define SLACK_KB	(4 * STACK_KB)

static int futex_word;
static int parked;

static void *parker(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&parked, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&futex_word, __ATOMIC_SEQ_CST))
		rk_futex(&futex_word, FUTEX_WAIT_PRIVATE, 0);
	return (void *)1L;
}

TEST(counters_agree)
{
	long meminfo = rk_kernel_stack_kb();
	long vmstat = rk_vmstat("nr_kernel_stack");

	ASSERT_GT(meminfo, 0);
	ASSERT_GT(vmstat, 0);
	/* Two reads of a live counter: allow a fork in between. */
	EXPECT_LE(labs(meminfo - vmstat), SLACK_KB);
}

TEST(futex_threads_account_their_stacks)
{
	static pthread_t tids[NR_THREADS];
	pthread_attr_t attr;
	long base, grown, after, per_thread_x10, tasks0, expect;
	int i, joined = 0;

	base = rk_kernel_stack_kb();
	tasks0 = rk_nr_tasks();
	ASSERT_GT(base, 0);
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstacksize(&attr, rk_thread_stack_size(64 << 10)));
	for (i = 0; i < NR_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&tids[i], &attr, parker, NULL));
	while (__atomic_load_n(&parked, __ATOMIC_SEQ_CST) < NR_THREADS)
		rk_sleep_ms(10);

	grown = rk_kernel_stack_kb() - base;
	/* One stack per new task: ours, and kernel threads that came or went. */
	expect = (rk_nr_tasks() - tasks0) * STACK_KB;
	per_thread_x10 = grown * 10 / NR_THREADS;
	TH_LOG("baseline %ld kB, +%ld kB for %d threads (%ld.%ld kB each)",
	       base, grown, NR_THREADS, per_thread_x10 / 10, per_thread_x10 % 10);
	EXPECT_GE(expect, (long)(NR_THREADS - 4) * STACK_KB);
	EXPECT_GE(grown, expect - SLACK_KB);
	EXPECT_LE(grown, expect + SLACK_KB);
	EXPECT_LE(labs(rk_kernel_stack_kb() - rk_vmstat("nr_kernel_stack")),
		  SLACK_KB);

	__atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
	rk_futex(&futex_word, FUTEX_WAKE_PRIVATE, INT_MAX);
	for (i = 0; i < NR_THREADS; i++) {
		void *ret = NULL;

		ASSERT_EQ(0, pthread_join(tids[i], &ret));
		joined += ret == (void *)1L;
	}
	EXPECT_EQ(NR_THREADS, joined);

	after = rk_wait_kernel_stack(base, rk_stack_slack_kb(tasks0, SLACK_KB),
				     10000);
	TH_LOG("after exit %ld kB (baseline %ld kB)", after, base);
	EXPECT_LE(labs(after - base), rk_stack_slack_kb(tasks0, SLACK_KB));
}

#define CHURN		1000	/* threads created and joined */

static void *quit(void *arg)
{
	return arg;
}

/* Hits of kprobe event "name" in kprobe_profile, or -1. */
static long kprobe_hits(const char *name)
{
	char line[256], ev[128];
	long hits = -1, h;
	FILE *f = fopen(RK_TRACING "kprobe_profile", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %ld", ev, &h) == 2 && !strcmp(ev, name))
			hits = h;
	if (f)
		fclose(f);
	return hits;
}

TEST(stack_free_flushes_lazily)
{
	long base, tasks0, before, hits;
	pthread_t tids[100];
	int i, j;

	if (rk_kprobes())
		SKIP(return, "no kprobe events (CONFIG_KPROBE_EVENTS)");
	/*
	 * vunmap_range() unmaps and flushes the TLB at once: what freeing a
	 * stack did per stack before it went through remove_vm_area(), as
	 * vfree() does. flush_tlb_kernel_range() itself is inline on arm64.
	 */
	ASSERT_EQ(0, rk_kprobe_add("rk_kflush", "vunmap_range"));
	base = rk_kernel_stack_kb();
	tasks0 = rk_nr_tasks();
	before = kprobe_hits("rk_kflush");
	ASSERT_LE(0, before);
	/*
	 * Batches of 100 live at once, far more than the per-CPU stack
	 * cache keeps (two per CPU): most of these stacks are freed.
	 */
	for (i = 0; i < CHURN; i++) {
		ASSERT_EQ(0, pthread_create(&tids[i % 100], NULL, quit, NULL));
		if (i % 100 == 99)
			for (j = 0; j < 100; j++)
				ASSERT_EQ(0, pthread_join(tids[j], NULL));
	}
	rk_wait_kernel_stack(base, rk_stack_slack_kb(tasks0, SLACK_KB), 10000);
	hits = kprobe_hits("rk_kflush") - before;
	rk_kprobe_remove("rk_kflush");
	TH_LOG("%d threads created and exited: %ld synchronous unmaps and flushes",
	       CHURN, hits);
	/* vfree()'s lazy purge flushes once per many areas, elsewhere. */
	EXPECT_LT(hits, CHURN / 10);
}

TEST_HARNESS_MAIN
