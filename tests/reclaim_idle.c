// SPDX-License-Identifier: GPL-2.0
/*
 * Idle reclaim (vm.reclaimable_stacks_idle_secs): with no memory pressure
 * at all, the stacks of threads blocked longer than the setting are given
 * back within twice the setting (a pass every half of it), and no sooner
 * than the setting; a thread that sleeps often but briefly keeps its
 * stack; 0 gives nothing back; values outside [0, 86400] are refused.
 * Nothing here writes drop_caches or creates pressure: the only reclaim
 * is the idle work's. Counts are vm events over each test's window; the
 * only eligible threads in the guest are this program's, but a count of
 * "at least" never relies on that, and a count of "none" would fail if
 * some other thread were reclaimed, which is then worth knowing.
 */
#include "rk_sites.h"
#include "kselftest_harness.h"

#define NR		128
#define IDLE_S		2	/* the setting (IDLE_STR): passes every second */
#define IDLE_STR	"2"
#define SLACK_MS	2000	/* the guest's timers run late under TCG */
#define SYSCTL		"/proc/sys/vm/reclaimable_stacks"
#define IDLE		"/proc/sys/vm/reclaimable_stacks_idle_secs"

FIXTURE(idle) {
	char old_sysctl[16], old_idle[16];
};

FIXTURE_SETUP(idle)
{
	if (access(SYSCTL, F_OK))
		SKIP(return, "kernel without reclaimable stacks");
	if (rk_vmstat("stack_reclaim_idle") < 0)
		SKIP(return, "no stack_reclaim_idle counter (VM_EVENT_COUNTERS=n)");
	ASSERT_EQ(0, rk_save_set(SYSCTL, self->old_sysctl,
				 sizeof(self->old_sysctl), "1"));
	ASSERT_EQ(0, rk_save_set(IDLE, self->old_idle, sizeof(self->old_idle),
				 "0"));
}

FIXTURE_TEARDOWN(idle)
{
	if (self->old_idle[0])
		rk_write_file(IDLE, self->old_idle);
	if (self->old_sysctl[0])
		rk_write_file(SYSCTL, self->old_sysctl);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * NR futex waiters, blocked at t0: none of their stacks may go before
 * half the setting has passed (the passes then see ages below the bar),
 * all of them by twice the setting (plus the guest's lateness), and
 * what comes back is at least 73 % of their stacks' memory (P1's target:
 * a futex waiter keeps only the page holding its frames).
 */
TEST_F(idle, old_stacks_given_back_without_pressure)
{
	static struct rk_pop pop;
	long idle0, pages0, early, idle = 0, pages, page_kb;
	struct timespec t0;
	long waited;

	page_kb = sysconf(_SC_PAGESIZE) / 1024;
	ASSERT_EQ(0, rk_pop_start(&pop, rk_site_by_name("futex"), NR, NULL));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	idle0 = rk_vmstat("stack_reclaim_idle");
	pages0 = rk_vmstat("stack_reclaim_pages");
	ASSERT_EQ(0, rk_write_file(IDLE, IDLE_STR));

	rk_sleep_ms(IDLE_S * 1000 / 2);
	early = rk_vmstat("stack_reclaim_idle") - idle0;
	while ((waited = ms_since(&t0)) < 2 * IDLE_S * 1000 + SLACK_MS) {
		idle = rk_vmstat("stack_reclaim_idle") - idle0;
		if (idle >= NR)
			break;
		rk_sleep_ms(100);
	}
	pages = rk_vmstat("stack_reclaim_pages") - pages0;
	TH_LOG("%ld stacks before %d ms, %ld after %ld ms; %ld KiB given back "
	       "of %ld KiB of stacks", early, IDLE_S * 1000 / 2, idle, waited,
	       pages * page_kb, NR * 16L);
	/* The age bar holds: half the setting is not idle enough. */
	EXPECT_LT(early, NR / 4);
	EXPECT_GE(idle, NR);
	EXPECT_GE(pages * page_kb * 100, 73L * NR * 16);
	/* Then every thread runs again, on its own stack. */
	EXPECT_EQ(NR, rk_pop_finish(&pop));
}

/* A thread that sleeps 100 ms at a time is not idle at a 1 s setting. */
static void *brief_sleeper(void *arg)
{
	for (int i = 0; i < 30; i++)
		rk_sleep_ms(100);
	return arg;
}

TEST_F(idle, brief_sleeps_keep_their_stack)
{
	long idle0, repop0, idle, repop;
	pthread_t t;

	ASSERT_EQ(0, rk_write_file(IDLE, "1"));
	idle0 = rk_vmstat("stack_reclaim_idle");
	repop0 = rk_vmstat("stack_repopulate_fast") +
		 rk_vmstat("stack_repopulate_deferred");
	ASSERT_EQ(0, pthread_create(&t, NULL, brief_sleeper, NULL));
	pthread_join(t, NULL);
	idle = rk_vmstat("stack_reclaim_idle") - idle0;
	repop = rk_vmstat("stack_repopulate_fast") +
		rk_vmstat("stack_repopulate_deferred") - repop0;
	TH_LOG("3 s of 100 ms sleeps: %ld stacks given back, %ld mapped again",
	       idle, repop);
	EXPECT_EQ(0, idle);
	EXPECT_EQ(0, repop);
}

TEST_F(idle, zero_gives_nothing_back)
{
	static struct rk_pop pop;
	long stacks0, stacks;

	ASSERT_EQ(0, rk_pop_start(&pop, rk_site_by_name("futex"), NR, NULL));
	stacks0 = rk_vmstat("stack_reclaim_stacks");
	rk_sleep_ms(3 * IDLE_S * 1000);
	stacks = rk_vmstat("stack_reclaim_stacks") - stacks0;
	TH_LOG("setting 0: %ld stacks reclaimed in %d ms", stacks,
	       3 * IDLE_S * 1000);
	EXPECT_EQ(0, stacks);
	EXPECT_EQ(NR, rk_pop_finish(&pop));
}

TEST_F(idle, bad_values_refused)
{
	static const char *const bad[] = { "86401", "-1", "x", "4294967296" };

	ASSERT_EQ(0, rk_write_file(IDLE, "7"));
	for (int i = 0; i < 4; i++) {
		EXPECT_NE(0, rk_write_file(IDLE, bad[i])) TH_LOG("%s", bad[i]);
		EXPECT_EQ(7, rk_read_long(IDLE)) TH_LOG("after %s", bad[i]);
	}
	EXPECT_EQ(0, rk_write_file(IDLE, "86400"));
	EXPECT_EQ(86400, rk_read_long(IDLE));
}

TEST_HARNESS_MAIN
