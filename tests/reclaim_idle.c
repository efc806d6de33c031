// SPDX-License-Identifier: GPL-2.0
/*
 * Proactive reclaim (vm.reclaimable_stacks_idle_secs): with no memory
 * pressure at all, stacks blocked longer than the knob's N seconds are
 * given back within N + N/2 seconds plus a pass (one pass every N/2
 * seconds, at least one second apart), a thread that keeps waking is
 * left alone, and 0 (the default) reclaims nothing. No test here writes
 * drop_caches or memory.reclaim: every stack taken is the idle pass's
 * (stack_reclaim_idle).
 */
#include "rk_sites.h"
#include "rk_inspect.h"
#include "kselftest_harness.h"

#define IDLE	"/proc/sys/vm/reclaimable_stacks_idle_secs"
#define NR	200
#define SECS	2

FIXTURE(idle) {
	struct rk_switch sw;
	char idle[32];
	struct rk_pop pop;
};

FIXTURE_SETUP(idle)
{
	rk_switch_save(&self->sw);
	ASSERT_EQ(0, rk_write_file("/proc/sys/vm/reclaimable_stacks", "1"));
	ASSERT_EQ(0, rk_save_set(IDLE, self->idle, sizeof(self->idle), "0"));
}

FIXTURE_TEARDOWN(idle)
{
	rk_write_file(IDLE, self->idle);
	rk_switch_restore(&self->sw);
}

/* How many of @pop's threads show RECLAIMED now. */
static int reclaimed(struct rk_pop *pop)
{
	struct info in;
	int n = 0;

	for (int i = 0; i < pop->nr; i++)
		if (!inspect(pop->tids[i], &in) && in.state == STACK_RECLAIMED)
			n++;
	return n;
}

/*
 * A thread that sleeps 400 ms at a time at an annotated site: never old
 * enough, and a reclaim of its stack would show for up to 400 ms.
 */
static volatile int ticker_stop;
static pid_t ticker_tid;

static void *ticker(void *arg)
{
	ticker_tid = syscall(SYS_gettid);
	while (!ticker_stop)
		rk_sleep_ms(400);
	return NULL;
}

TEST_F_TIMEOUT(idle, old_stacks_go_young_stay, 120)
{
	long idle0 = rk_vmstat("stack_reclaim_idle");
	long stacks0 = rk_vmstat("stack_reclaim_stacks");
	int n = 0, ticker_seen = 0, ms;
	struct info in;
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, ticker, NULL));
	ASSERT_EQ(0, rk_pop_start(&self->pop, rk_site_by_name("futex"), NR,
				  NULL));
	ASSERT_EQ(0, rk_write_file(IDLE, "2"));
	/*
	 * Due within SECS + SECS/2 of blocking plus a pass; poll the
	 * ticker meanwhile, and for four passes at least: it must never
	 * be taken.
	 */
	for (ms = 0; ms < (SECS + SECS / 2 + 3) * 1000; ms += 50) {
		if (!inspect(ticker_tid, &in) && in.state == STACK_RECLAIMED)
			ticker_seen++;
		if (ms % 500 == 0 && ms >= 4000 &&
		    (n = reclaimed(&self->pop)) >= NR)
			break;
		rk_sleep_ms(50);
	}
	n = reclaimed(&self->pop);
	TH_LOG("%d of %d reclaimed after %d ms by the idle pass (stack_reclaim_idle +%ld, stack_reclaim_stacks +%ld); the ticker seen reclaimed %d times",
	       n, NR, ms, rk_vmstat("stack_reclaim_idle") - idle0,
	       rk_vmstat("stack_reclaim_stacks") - stacks0, ticker_seen);
	EXPECT_GE(n, NR * 95 / 100);
	EXPECT_GE(rk_vmstat("stack_reclaim_idle") - idle0, n);
	EXPECT_EQ(0, ticker_seen);
	ticker_stop = 1;
	pthread_join(t, NULL);
	EXPECT_EQ(NR, rk_pop_finish(&self->pop));
}

TEST_F_TIMEOUT(idle, zero_is_off, 60)
{
	long idle0 = rk_vmstat("stack_reclaim_idle");

	ASSERT_EQ(0, rk_pop_start(&self->pop, rk_site_by_name("futex"), NR,
				  NULL));
	/* Switched on and off again: a pass already queued finds 0. */
	ASSERT_EQ(0, rk_write_file(IDLE, "1"));
	ASSERT_EQ(0, rk_write_file(IDLE, "0"));
	rk_sleep_ms(4000);
	EXPECT_EQ(0, reclaimed(&self->pop));
	EXPECT_EQ(0, rk_vmstat("stack_reclaim_idle") - idle0);
	EXPECT_EQ(NR, rk_pop_finish(&self->pop));
}

TEST_F(idle, bad_values_refused)
{
	char buf[32];

	EXPECT_NE(0, rk_write_file(IDLE, "86401"));
	EXPECT_NE(0, rk_write_file(IDLE, "-1"));
	EXPECT_NE(0, rk_write_file(IDLE, "ten"));
	ASSERT_EQ(0, rk_read_line(IDLE, buf, sizeof(buf)));
	EXPECT_STREQ("0\n", buf);
	EXPECT_EQ(0, rk_write_file(IDLE, "86400"));
}

TEST_HARNESS_MAIN
