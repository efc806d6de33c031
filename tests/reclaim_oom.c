// SPDX-License-Identifier: GPL-2.0
/*
 * OOM with reclaimed stacks: a child process in a memory cgroup blocks NR
 * threads in futex wait, their stacks are reclaimed through the cgroup's
 * memory.reclaim, memory.max is then set just above what the cgroup uses
 * and the child's main thread allocates until the memcg OOM killer kills
 * it. Every victim thread needs its stack back before it can exit (the
 * repopulation worker gives OOM victims reserves and no failure); the
 * child must die of SIGKILL within the timeout, and KernelStack and the
 * cgroup's kernel_stack must return to their baselines.
 */
#include "rk_sites.h"
#include "kselftest_harness.h"
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define NR	500
#define CG	"/sys/fs/cgroup/rk_oom"

static long cg_key(const char *file, const char *key)
{
	char path[128];

	snprintf(path, sizeof(path), CG "/%s", file);
	return rk_read_key(path, key);
}

static int victim(int ready_fd, int go_fd)
{
	static struct rk_pop pop;
	char c;

	if (rk_write_file(CG "/cgroup.procs", "0") ||
	    rk_pop_start(&pop, rk_site_by_name("futex"), NR, NULL))
		return 2;
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) != 1)
		return 3;
	/* Allocate and touch until the OOM killer ends this process. */
	for (;;) {
		char *p = malloc(1 << 20);

		if (!p)
			return 4;
		for (int i = 0; i < (1 << 20); i += 4096)
			p[i] = 1;
	}
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

TEST_F_TIMEOUT(oom, kill_with_reclaimed_stacks, 300)
{
	long ks_base = rk_kernel_stack_kb(), tasks_base = rk_nr_tasks();
	long stacks0, defer0, fast0, stacks, oom_kills;
	int ready[2], go[2], status;
	char buf[32], c;
	pid_t child;

	ASSERT_EQ(0, rk_write_file("/proc/sys/vm/reclaimable_stacks", "1"));
	mkdir(CG, 0755);
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(victim(ready[1], go[0]));
	ASSERT_EQ(1, read(ready[0], &c, 1));

	stacks0 = rk_vmstat("stack_reclaim_stacks");
	fast0 = rk_vmstat("stack_repopulate_fast");
	defer0 = rk_vmstat("stack_repopulate_deferred");
	/*
	 * Memcg reclaim sees a stack once the drain work has moved it from
	 * the pending list to the list_lru, a tenth of a second after the
	 * list filled: a thread that blocked just before "ready" may still
	 * be pending (0 of 500 taken on arm64 once). Ask again, for up to
	 * two seconds.
	 */
	for (int i = 0; i < 20; i++) {
		rk_write_file(CG "/memory.reclaim", "512M");	/* EAGAIN is fine */
		stacks = rk_vmstat("stack_reclaim_stacks") - stacks0;
		if (stacks >= NR * 9 / 10)
			break;
		rk_sleep_ms(100);
	}
	EXPECT_GE(stacks, NR * 9 / 10);

	snprintf(buf, sizeof(buf), "%ld", rk_read_long(CG "/memory.current") +
		 (8 << 20));
	ASSERT_EQ(0, rk_write_file(CG "/memory.max", buf));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		TH_LOG("child status %#x", status);
	oom_kills = cg_key("memory.events", "oom_kill");
	TH_LOG("%ld stacks reclaimed; OOM kills %ld; repopulated fast %ld, deferred %ld",
	       stacks, oom_kills, rk_vmstat("stack_repopulate_fast") - fast0,
	       rk_vmstat("stack_repopulate_deferred") - defer0);
	EXPECT_GE(oom_kills, 1);

	/* The cgroup is empty: its kernel_stack must drain to zero. */
	for (int i = 0; i < 200 && cg_key("memory.stat", "kernel_stack") > 0; i++)
		rk_sleep_ms(50);
	EXPECT_EQ(0, cg_key("memory.stat", "kernel_stack"));
	EXPECT_EQ(0, rmdir(CG));
	EXPECT_LE(labs(rk_wait_kernel_stack(ks_base, 96, 10000) - ks_base),
		  rk_stack_slack_kb(tasks_base, 96));
}

TEST_HARNESS_MAIN
