// SPDX-License-Identifier: GPL-2.0
/*
 * Forward progress of repopulation under memcg limits.
 *
 * kill_with_reclaimed_stacks: a child process in a memory cgroup blocks
 * NR threads in futex wait, their stacks are reclaimed through the
 * cgroup's memory.reclaim, memory.max is then set just above what the
 * cgroup uses and the child's main thread allocates until the memcg OOM
 * killer kills it. Every victim thread needs its stack back before it can
 * exit (the repopulation worker serves OOM victims and killed tasks first,
 * from the reserves); the child must die of SIGKILL within the timeout,
 * after exactly one OOM kill, and KernelStack and the cgroup's
 * kernel_stack must return to their baselines.
 *
 * sibling_not_held_up: a cgroup at its memory.max, whose tasks cannot be
 * OOM-killed (oom_score_adj -1000), wakes NR_FULL reclaimed threads just
 * before a sibling cgroup wakes NR_SIB: the full cgroup's wakeups find it
 * at its limit (stack_defer_charge_failed), the worker charges their pages
 * by force, and the sibling's threads all run within SIB_BOUND_MS.
 */
#include "rk_sites.h"
#include "kselftest_harness.h"
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define NR		2000
#define NR_FULL		500
#define NR_SIB		100
#define SIB_BOUND_MS	2000
#define CG		"/sys/fs/cgroup/rk_oom"
#define CG_FULL		"/sys/fs/cgroup/rk_full"
#define CG_SIB		"/sys/fs/cgroup/rk_sib"

static long cg_key(const char *cg, const char *file, const char *key)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return rk_read_key(path, key);
}

static int cg_write(const char *cg, const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	return rk_write_file(path, val);
}

/* A child's pipes: it says "r" once its threads block, waits for a byte. */
struct child {
	pid_t pid;
	int ready[2], go[2], out[2];
};

/*
 * In the child: join @cg with oom_score_adj @adj, block @nr futex
 * waiters, say ready, wait for go; then either allocate until killed
 * (@hog) or wake them all and write back how long until every one had
 * run and been joined (ms), or -1 if one failed.
 */
static int child_main(struct child *c, const char *cg, int nr, int adj,
		      bool hog)
{
	static struct rk_pop pop;
	char adjs[16];
	long t0, ms;
	char ch;

	snprintf(adjs, sizeof(adjs), "%d", adj);
	if (cg_write(cg, "cgroup.procs", "0") ||
	    rk_write_file("/proc/self/oom_score_adj", adjs) ||
	    rk_pop_start(&pop, rk_site_by_name("futex"), nr, NULL))
		return 2;
	if (write(c->ready[1], "r", 1) != 1 || read(c->go[0], &ch, 1) != 1)
		return 3;
	while (hog) {	/* until the OOM killer ends this process */
		char *p = malloc(1 << 20);

		if (!p)
			return 4;
		for (int i = 0; i < (1 << 20); i += 4096)
			p[i] = 1;
	}
	t0 = rk_now_ms();
	ms = rk_pop_finish(&pop) == nr ? rk_now_ms() - t0 : -1;
	return write(c->out[1], &ms, sizeof(ms)) == sizeof(ms) ? 0 : 5;
}

static int child_start(struct child *c, const char *cg, int nr, int adj,
		       bool hog)
{
	char ch;

	mkdir(cg, 0755);
	if (pipe(c->ready) || pipe(c->go) || pipe(c->out))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (!c->pid)
		_exit(child_main(c, cg, nr, adj, hog));
	return read(c->ready[0], &ch, 1) == 1 ? 0 : -1;
}

/*
 * Memcg reclaim sees a stack once the drain work has moved it from its
 * CPU's pending list to the list_lru, a tenth of a second after the list
 * filled: a thread that blocked just before "ready" may still be pending
 * (0 of 500 taken on arm64 once). Ask again, for up to two seconds, until
 * @want stacks were taken since @stacks0; returns how many were.
 */
static long reclaim_cgroups(const char * const *cgs, int n, long stacks0,
			    long want)
{
	long stacks = 0;

	for (int i = 0; i < 20; i++) {
		for (int j = 0; j < n; j++)	/* EAGAIN is fine */
			cg_write(cgs[j], "memory.reclaim", "512M");
		stacks = rk_vmstat("stack_reclaim_stacks") - stacks0;
		if (stacks >= want)
			break;
		rk_sleep_ms(100);
	}
	return stacks;
}

/* The cgroup is empty: its kernel_stack must drain to zero. */
static long cg_drained_stack(const char *cg)
{
	for (int i = 0; i < 200 && cg_key(cg, "memory.stat", "kernel_stack") > 0; i++)
		rk_sleep_ms(50);
	return cg_key(cg, "memory.stat", "kernel_stack");
}

FIXTURE(oom) {
	struct rk_switch sw;
};

FIXTURE_SETUP(oom)
{
	rk_switch_save(&self->sw);
}

FIXTURE_TEARDOWN(oom)
{
	rk_switch_restore(&self->sw);
}

TEST_F_TIMEOUT(oom, kill_with_reclaimed_stacks, 600)
{
	static const char * const cgs[] = { CG };
	long ks_base = rk_kernel_stack_kb(), tasks_base = rk_nr_tasks();
	long stacks0, defer0, fast0, urgent0, stacks, oom_kills;
	struct child c;
	char buf[32];
	int status;

	ASSERT_EQ(0, rk_write_file("/proc/sys/vm/reclaimable_stacks", "1"));
	ASSERT_EQ(0, child_start(&c, CG, NR, 0, true));
	stacks0 = rk_vmstat("stack_reclaim_stacks");
	fast0 = rk_vmstat("stack_repopulate_fast");
	defer0 = rk_vmstat("stack_repopulate_deferred");
	urgent0 = rk_vmstat("stack_repopulate_urgent");
	stacks = reclaim_cgroups(cgs, 1, stacks0, NR * 9 / 10);
	EXPECT_GE(stacks, NR * 9 / 10);

	snprintf(buf, sizeof(buf), "%ld", rk_read_long(CG "/memory.current") +
		 (8 << 20));
	ASSERT_EQ(0, cg_write(CG, "memory.max", buf));
	ASSERT_EQ(1, write(c.go[1], "g", 1));
	ASSERT_EQ(c.pid, waitpid(c.pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("child status %#x", status);
	oom_kills = cg_key(CG, "memory.events", "oom_kill");
	TH_LOG("%ld stacks reclaimed; OOM kills %ld; repopulated fast %ld, deferred %ld (urgent %ld)",
	       stacks, oom_kills, rk_vmstat("stack_repopulate_fast") - fast0,
	       rk_vmstat("stack_repopulate_deferred") - defer0,
	       rk_vmstat("stack_repopulate_urgent") - urgent0);
	EXPECT_EQ(1, oom_kills);
	/* Woken by the kill itself: each had SIGKILL pending when parked. */
	EXPECT_GE(rk_vmstat("stack_repopulate_urgent") - urgent0, stacks * 9 / 10);

	EXPECT_EQ(0, cg_drained_stack(CG));
	EXPECT_EQ(0, rmdir(CG));
	EXPECT_LE(labs(rk_wait_kernel_stack(ks_base, 96, 10000) - ks_base),
		  rk_stack_slack_kb(tasks_base, 96));
}

TEST_F_TIMEOUT(oom, sibling_not_held_up, 300)
{
	static const char * const cgs[] = { CG_FULL, CG_SIB };
	long stacks0, stacks, max0, ms_full = -1, ms_sib = -1;
	long cur0, ks0, fast0, charge0;
	struct child full, sib;
	char buf[32];
	int status;

	ASSERT_EQ(0, rk_write_file("/proc/sys/vm/reclaimable_stacks", "1"));
	ASSERT_EQ(0, child_start(&full, CG_FULL, NR_FULL, -1000, false));
	ASSERT_EQ(0, child_start(&sib, CG_SIB, NR_SIB, 0, false));
	stacks0 = rk_vmstat("stack_reclaim_stacks");
	stacks = reclaim_cgroups(cgs, 2, stacks0, (NR_FULL + NR_SIB) * 9 / 10);
	EXPECT_GE(stacks, (NR_FULL + NR_SIB) * 9 / 10);

	/* No room left: every page the full cgroup's wakeups need is over. */
	snprintf(buf, sizeof(buf), "%ld", rk_read_long(CG_FULL "/memory.current"));
	ASSERT_EQ(0, cg_write(CG_FULL, "memory.max", buf));
	max0 = cg_key(CG_FULL, "memory.events", "max");
	cur0 = rk_read_long(CG_FULL "/memory.current");
	ks0 = cg_key(CG_FULL, "memory.stat", "kernel_stack");
	fast0 = rk_vmstat("stack_repopulate_fast");
	charge0 = rk_vmstat("stack_defer_charge_failed");
	ASSERT_EQ(1, write(full.go[1], "g", 1));
	ASSERT_EQ(1, write(sib.go[1], "g", 1));
	EXPECT_EQ((ssize_t)sizeof(long), read(sib.out[0], &ms_sib, sizeof(long)));
	EXPECT_EQ((ssize_t)sizeof(long), read(full.out[0], &ms_full, sizeof(long)));
	TH_LOG("%ld stacks reclaimed; all %d of the sibling ran in %ld ms, all %d of the full cgroup in %ld ms; its memory.events max +%ld",
	       stacks, NR_SIB, ms_sib, NR_FULL, ms_full,
	       cg_key(CG_FULL, "memory.events", "max") - max0);
	TH_LOG("full cgroup: memory.current %ld -> %ld (max %ld), kernel_stack %ld -> %ld KiB; fast +%ld, charge deferrals +%ld",
	       cur0, rk_read_long(CG_FULL "/memory.current"),
	       rk_read_long(CG_FULL "/memory.max"), ks0,
	       cg_key(CG_FULL, "memory.stat", "kernel_stack"),
	       rk_vmstat("stack_repopulate_fast") - fast0,
	       rk_vmstat("stack_defer_charge_failed") - charge0);
	EXPECT_GE(ms_sib, 0);
	EXPECT_LE(ms_sib, SIB_BOUND_MS);
	EXPECT_GE(ms_full, 0);
	/*
	 * The full cgroup's wakeups found it at its limit (the fast path's
	 * charge refused). How many of the worker's forced charges then
	 * went over memory.max (memory.events max) depends on how fast its
	 * first threads exit and free their stacks: logged, not asserted
	 * (0 of 500 once on arm64).
	 */
	EXPECT_GT(rk_vmstat("stack_defer_charge_failed") - charge0, 0);
	EXPECT_EQ(0, cg_key(CG_FULL, "memory.events", "oom_kill"));
	ASSERT_EQ(full.pid, waitpid(full.pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(sib.pid, waitpid(sib.pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(0, cg_drained_stack(CG_FULL));
	EXPECT_EQ(0, cg_drained_stack(CG_SIB));
	EXPECT_EQ(0, rmdir(CG_FULL));
	EXPECT_EQ(0, rmdir(CG_SIB));
}

TEST_HARNESS_MAIN
