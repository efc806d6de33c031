// SPDX-License-Identifier: GPL-2.0
/*
 * Look inside reclaimed and repopulated stacks through the debugfs file
 * of CONFIG_RECLAIMABLE_STACK_DEBUG: a reclaimed page has no mapping, a
 * repopulated one is mapped and reads as zero, the end-of-stack magic is
 * restored, and the thread still does its work afterwards.
 */
#include "rk_sites.h"
#include "rk_inspect.h"
#include "kselftest_harness.h"

#define NR	8

TEST(reclaimed_unmapped_repopulated_zero)
{
	static struct rk_pop pop;
	char cmd[48];
	struct info in;
	int i;

	ASSERT_EQ(0, rk_write_file("/proc/sys/vm/reclaimable_stacks", "1"));
	ASSERT_EQ(0, rk_pop_start(&pop, rk_site_by_name("futex"), NR, NULL));
	ASSERT_EQ(0, rk_reclaim_tids(pop.tids, NR));
	for (i = 0; i < NR; i++) {
		ASSERT_EQ(0, inspect(pop.tids[i], &in));
		TH_LOG("reclaimed: tid %d state %s present %s mapped %s sp_page %d magic %s",
		       in.tid, rk_state_names[in.state], in.present, in.mapped, in.sp_page,
		       in.magic);
		EXPECT_EQ(STACK_RECLAIMED, in.state);
		/* What vm->pages[] says is what the page tables say. */
		EXPECT_STREQ(in.present, in.mapped);
		EXPECT_EQ('0', in.mapped[0]);
		EXPECT_EQ('1', in.mapped[in.sp_page]);
		EXPECT_STREQ("absent", in.magic);

		/* Through the wakeup fast path: retry while the pool refills. */
		snprintf(cmd, sizeof(cmd), "repopulate %d\n", pop.tids[i]);
		for (int t = 0; t < 200 && rk_write_file(INSPECT, cmd) == -EAGAIN; t++)
			rk_sleep_ms(10);
		ASSERT_EQ(0, inspect(pop.tids[i], &in));
		TH_LOG("repopulated: state %s present %s mapped %s zero %d magic %s",
		       rk_state_names[in.state], in.present, in.mapped, in.zero, in.magic);
		EXPECT_EQ(STACK_IN_USE, in.state);
		EXPECT_STREQ("1111", in.mapped);
		EXPECT_STREQ(in.present, in.mapped);
		EXPECT_EQ(1, in.zero);
		EXPECT_STREQ("ok", in.magic);
	}
	EXPECT_EQ(NR, rk_pop_finish(&pop));
}

TEST(bad_input_rejected)
{
	EXPECT_EQ(-EINVAL, rk_write_file(INSPECT, "foo\n"));
	EXPECT_EQ(-EINVAL, rk_write_file(INSPECT, "-3\n"));
	EXPECT_EQ(-ESRCH, rk_write_file(INSPECT, "repopulate 999999\n"));
}

/*
 * Unwinding a thread whose stack was reclaimed (/proc/PID/stack, wchan)
 * reads only above its saved SP: it must name the futex wait, and must
 * not need the missing pages (no repopulation, no fault).
 */
TEST(unwind_reclaimed_stack)
{
	static struct rk_pop pop;
	long fast, deferred, named = 0;
	char path[64], buf[4096];

	ASSERT_EQ(0, rk_pop_start(&pop, rk_site_by_name("futex"), NR, NULL));
	ASSERT_EQ(0, rk_reclaim_tids(pop.tids, NR));
	fast = rk_vmstat("stack_repopulate_fast");
	deferred = rk_vmstat("stack_repopulate_deferred");
	for (int i = 0; i < NR; i++) {
		struct info in;
		FILE *f;
		size_t n;

		ASSERT_EQ(0, inspect(pop.tids[i], &in));
		EXPECT_EQ(STACK_RECLAIMED, in.state);
		snprintf(path, sizeof(path), "/proc/self/task/%d/stack", pop.tids[i]);
		f = fopen(path, "r");
		ASSERT_NE(NULL, f);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		named += strstr(buf, "futex") != NULL;
		snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", pop.tids[i]);
		f = fopen(path, "r");
		ASSERT_NE(NULL, f);
		fclose(f);
	}
	EXPECT_EQ(NR, named);
	EXPECT_EQ(fast, rk_vmstat("stack_repopulate_fast"));
	EXPECT_EQ(deferred, rk_vmstat("stack_repopulate_deferred"));
	EXPECT_EQ(NR, rk_pop_finish(&pop));
}

TEST_HARNESS_MAIN
