// SPDX-License-Identifier: GPL-2.0
/*
 * For every annotated wait site: N threads block there, reclaim is forced,
 * KernelStack must fall by at least two pages per thread with the vmstat
 * counters agreeing, then every thread is woken by the site's own event
 * and must get the right result. A wait that is not annotated, and
 * SCHED_FIFO threads at an annotated one, must keep their stacks.
 */
#include "rk_sites.h"
#include "kselftest_harness.h"
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define NR	1000
#define PAGE_KB	(sysconf(_SC_PAGESIZE) / 1024)	/* 4 on x86_64 and arm64 */
#define SLACK_KB 96

#define SYSCTL	"/proc/sys/vm/reclaimable_stacks"

struct measure {
	long tasks_base;
	long ks_base, ks_blocked, ks_reclaimed, pages, stacks;
	long vm_blocked, vm_reclaimed;		/* VmallocUsed, kB */
	long memcg_blocked, memcg_reclaimed;	/* memory.stat kernel_stack, bytes */
};

static const char *rk_cgroup = "/sys/fs/cgroup/rk_reclaim";

static long memcg_kernel_stack(void)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/memory.stat", rk_cgroup);
	return rk_read_key(path, "kernel_stack");
}

/* Block NR threads at site, force reclaim, wake; fill *m. */
static int run_site(struct __test_metadata *_metadata, const char *name,
		    pthread_attr_t *attr, struct measure *m,
		    int (*reclaim)(void))
{
	static struct rk_pop pop;
	const struct rk_site *site = rk_site_by_name(name);
	long pages0, stacks0;
	int done;

	if (!site)
		return -1;
	m->ks_base = rk_kernel_stack_kb();
	m->tasks_base = rk_nr_tasks();
	if (rk_pop_start(&pop, site, NR, attr)) {
		TH_LOG("%s: could not block %d threads", name, NR);
		return -1;
	}
	m->ks_blocked = rk_kernel_stack_kb();
	m->vm_blocked = rk_read_key("/proc/meminfo", "VmallocUsed");
	m->memcg_blocked = memcg_kernel_stack();
	pages0 = rk_vmstat("stack_reclaim_pages");
	stacks0 = rk_vmstat("stack_reclaim_stacks");
	if (reclaim())
		TH_LOG("%s: forcing reclaim failed", name);
	m->ks_reclaimed = rk_kernel_stack_kb();
	m->vm_reclaimed = rk_read_key("/proc/meminfo", "VmallocUsed");
	m->memcg_reclaimed = memcg_kernel_stack();
	m->pages = rk_vmstat("stack_reclaim_pages") - pages0;
	m->stacks = rk_vmstat("stack_reclaim_stacks") - stacks0;
	done = rk_pop_finish(&pop);
	TH_LOG("%-12s KernelStack %ld -> %ld kB blocked -> %ld kB reclaimed; "
	       "%ld stacks, %ld pages; %d/%d threads did their work",
	       name, m->ks_base, m->ks_blocked, m->ks_reclaimed, m->stacks,
	       m->pages, done, NR);
	return done;
}

static int reclaim_drop_caches(void)
{
	return rk_drop_caches(4);
}

static void expect_reclaimed(struct __test_metadata *_metadata,
			     struct measure *m)
{
	long fell = m->ks_blocked - m->ks_reclaimed;

	EXPECT_GE(m->pages, 2L * NR);
	EXPECT_GE(m->stacks, (long)NR);
	EXPECT_GE(fell, 2L * NR * PAGE_KB);
	/* KernelStack and the counter describe the same pages. */
	EXPECT_LE(labs(fell - m->pages * PAGE_KB), SLACK_KB);
	/* The pages left the vmalloc count too. */
	EXPECT_GE(m->vm_blocked - m->vm_reclaimed, 2L * NR * PAGE_KB - SLACK_KB);
}

/*
 * After the threads exit KernelStack is back at its baseline, give or
 * take the stacks of kernel threads that came or went meanwhile
 * (workqueue workers) and a little noise.
 */
static void expect_back_to_base(struct __test_metadata *_metadata,
				struct measure *m)
{
	long after = rk_wait_kernel_stack(m->ks_base, SLACK_KB, 10000);
	long slack = rk_stack_slack_kb(m->tasks_base, SLACK_KB);

	EXPECT_LE(labs(after - m->ks_base), slack)
		TH_LOG("KernelStack %ld kB after exit, baseline %ld kB, slack %ld kB",
		       after, m->ks_base, slack);
}

FIXTURE(site) {
	struct measure m;
	struct rk_switch sw;
};

FIXTURE_VARIANT(site) {
	const char *name;
	bool reclaimable;
};

#define SITE(n, r) \
	FIXTURE_VARIANT_ADD(site, n) { .name = #n, .reclaimable = r }
SITE(futex, true);
SITE(futex_waitv, true);
SITE(epoll, true);
SITE(poll, true);
SITE(select, true);
SITE(nanosleep, true);
SITE(pipe, true);
SITE(sigtimedwait, true);
SITE(binder, true);
SITE(eventfd, false);	/* not annotated: must keep its stack */

FIXTURE_SETUP(site)
{
	rk_switch_save(&self->sw);
	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
}

FIXTURE_TEARDOWN(site)
{
	rk_switch_restore(&self->sw);
}

TEST_F_TIMEOUT(site, reclaim_then_wake, 300)
{
	ASSERT_EQ(NR, run_site(_metadata, variant->name, NULL, &self->m,
			       reclaim_drop_caches));
	if (variant->reclaimable)
		expect_reclaimed(_metadata, &self->m);
	else
		EXPECT_LT(self->m.pages, NR / 10);
	expect_back_to_base(_metadata, &self->m);
}

/* Tests that switch the feature: the switch comes back in the teardown. */
FIXTURE(pop) {
	struct rk_switch sw;
};

FIXTURE_SETUP(pop)
{
	rk_switch_save(&self->sw);
}

FIXTURE_TEARDOWN(pop)
{
	rk_switch_restore(&self->sw);
}

TEST_F_TIMEOUT(pop, sched_fifo_keeps_stack, 300)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct measure m;
	pthread_attr_t attr;

	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED));
	ASSERT_EQ(0, pthread_attr_setschedpolicy(&attr, SCHED_FIFO));
	ASSERT_EQ(0, pthread_attr_setschedparam(&attr, &sp));
	ASSERT_EQ(NR, run_site(_metadata, "futex", &attr, &m,
			       reclaim_drop_caches));
	EXPECT_LT(m.pages, NR / 10);
	expect_back_to_base(_metadata, &m);
}

static int reclaim_memcg(void)
{
	char path[128];
	int err = 0;

	snprintf(path, sizeof(path), "%s/memory.reclaim", rk_cgroup);
	/* -EAGAIN when less than asked was reclaimed: expected here. */
	for (int i = 0; i < 4; i++) {
		int r = rk_write_file(path, "64M");

		if (r && r != -EAGAIN)
			err = r;
	}
	return err;
}

TEST_F_TIMEOUT(pop, memcg_memory_reclaim, 300)
{
	char procs[128], pid[32];
	struct measure m;

	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	mkdir(rk_cgroup, 0755);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", rk_cgroup);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	ASSERT_EQ(0, rk_write_file(procs, pid));
	/* Threads forked from here are charged to the cgroup. */
	ASSERT_EQ(NR, run_site(_metadata, "futex", NULL, &m, reclaim_memcg));
	expect_reclaimed(_metadata, &m);
	TH_LOG("memcg kernel_stack %ld -> %ld bytes", m.memcg_blocked,
	       m.memcg_reclaimed);
	/* The cgroup's kernel_stack stat follows its threads' pages. */
	EXPECT_GE(m.memcg_blocked, (long)NR * 4 * PAGE_KB * 1024);
	EXPECT_GE(m.memcg_blocked - m.memcg_reclaimed,
		  2L * NR * PAGE_KB * 1024);
	ASSERT_EQ(0, rk_write_file("/sys/fs/cgroup/cgroup.procs", pid));
	expect_back_to_base(_metadata, &m);
	rmdir(rk_cgroup);
}

/* The shrinker's SHRINKER_DEBUG scan file, root memcg, both nodes. */
static int reclaim_shrinker_debug(void)
{
	const char *dir = "/sys/kernel/debug/shrinker";
	char path[300];
	struct dirent *de;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "kernel-stacks-", 14)) {
			snprintf(path, sizeof(path), "%s/%s/scan", dir, de->d_name);
			found = 1;
			break;
		}
	closedir(d);
	if (!found)
		return -1;
	/* Each call walks one small batch: enough calls for two passes. */
	for (int i = 0; i < 2 * NR / 16; i++)
		for (int nid = 0; nid < 2; nid++) {
			char cmd[32];

			snprintf(cmd, sizeof(cmd), "1 %d 4096\n", nid);
			if (rk_write_file(path, cmd) && nid == 0)
				return -1;
		}
	return 0;
}

/* Feature on, NR threads in futex, reclaimed by @reclaim, all wake fine. */
static void futex_reclaimed_by(struct __test_metadata *_metadata,
			       struct measure *m, int (*reclaim)(void))
{
	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	ASSERT_EQ(NR, run_site(_metadata, "futex", NULL, m, reclaim));
	expect_reclaimed(_metadata, m);
}

TEST_F_TIMEOUT(pop, shrinker_debug_scan, 300)
{
	struct measure m;

	futex_reclaimed_by(_metadata, &m, reclaim_shrinker_debug);
	expect_back_to_base(_metadata, &m);
}

static int switch_off_after_reclaim(void)
{
	int err = reclaim_drop_caches();

	return err ? err : rk_write_file(SYSCTL, "0");
}

TEST_F_TIMEOUT(pop, switch_off_with_stacks_reclaimed, 300)
{
	struct measure m;

	futex_reclaimed_by(_metadata, &m, switch_off_after_reclaim);
	EXPECT_EQ(0, rk_read_long(SYSCTL));
	expect_back_to_base(_metadata, &m);
}

TEST_F_TIMEOUT(pop, switched_off_reclaims_nothing, 300)
{
	struct measure m;

	ASSERT_EQ(0, rk_write_file(SYSCTL, "0"));
	ASSERT_EQ(NR, run_site(_metadata, "futex", NULL, &m,
			       reclaim_drop_caches));
	EXPECT_EQ(0, m.pages);
	expect_back_to_base(_metadata, &m);
}

TEST_F(pop, sysctl_rejects_bad_values)
{
	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	EXPECT_EQ(-EINVAL, rk_write_file(SYSCTL, "2"));
	EXPECT_EQ(-EINVAL, rk_write_file(SYSCTL, "foo"));
	EXPECT_EQ(1, rk_read_long(SYSCTL));
	ASSERT_EQ(0, rk_write_file(SYSCTL, "0"));
	EXPECT_EQ(-EINVAL, rk_write_file(SYSCTL, "-1"));
	EXPECT_EQ(0, rk_read_long(SYSCTL));
}

/*
 * Job-control stop: a child's threads block in eventfd read (not
 * annotated), SIGSTOP moves every one of them into do_signal_stop(),
 * which is; SIGCONT sends them back to the read, which the parent then
 * satisfies. Each thread exits 0 only if its read returned its token.
 */
/*
 * The child of job_control_stop: NR threads blocked in eventfd read (not
 * annotated), then one byte on ready, then the main thread joins them.
 * Until the byte, the main thread polls its own threads' states, so the
 * parent's count of blocked threads means nothing before it.
 */
static int stopped_child(int efd, int ready)
{
	static struct rk_pop pop;

	if (rk_pop_start_fd(&pop, rk_site_by_name("eventfd"), NR, NULL, efd))
		return 2;
	if (write(ready, "r", 1) != 1)
		return 3;
	for (int i = 0; i < NR; i++)
		pthread_join(pop.threads[i], NULL);
	return pop.done == NR && !pop.bad ? 0 : 1;
}

TEST_F_TIMEOUT(pop, job_control_stop, 300)
{
	long ks_base = rk_kernel_stack_kb(), ks_stopped, ks_reclaimed;
	long tasks_base = rk_nr_tasks();
	long pages0, pages;
	int efd, status, i, n = 0, ready[2];
	uint64_t v = NR;
	char c;
	pid_t child;

	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	efd = eventfd(0, EFD_SEMAPHORE);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, pipe(ready));
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(stopped_child(efd, ready[1]));
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	close(ready[0]);
	/* All NR threads plus the main one blocked in the child. */
	for (i = 0; i < 1000; i++) {
		n = rk_count_blocked_in(child);
		if (n >= NR + 1)
			break;
		rk_sleep_ms(20);
	}
	if (n < NR + 1)
		rk_blocked_in(child, true);
	ASSERT_LE(NR + 1, n);
	pages0 = rk_vmstat("stack_reclaim_pages");
	ASSERT_EQ(0, reclaim_drop_caches());
	/* Not annotated yet: nothing may be reclaimed from the child. */
	EXPECT_LT(rk_vmstat("stack_reclaim_pages") - pages0, NR / 10);

	ASSERT_EQ(0, kill(child, SIGSTOP));
	ASSERT_EQ(child, waitpid(child, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));
	rk_sleep_ms(200);	/* every thread reaches do_signal_stop() */
	ks_stopped = rk_kernel_stack_kb();
	pages0 = rk_vmstat("stack_reclaim_pages");
	ASSERT_EQ(0, reclaim_drop_caches());
	ks_reclaimed = rk_kernel_stack_kb();
	pages = rk_vmstat("stack_reclaim_pages") - pages0;
	TH_LOG("stopped child: KernelStack %ld -> %ld kB, %ld pages",
	       ks_stopped, ks_reclaimed, pages);
	EXPECT_GE(pages, 2L * NR);
	EXPECT_GE(ks_stopped - ks_reclaimed, 2L * NR * PAGE_KB);

	ASSERT_EQ(0, kill(child, SIGCONT));
	ASSERT_EQ((ssize_t)sizeof(v), write(efd, &v, sizeof(v)));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(efd);
	EXPECT_LE(labs(rk_wait_kernel_stack(ks_base, SLACK_KB, 10000) - ks_base),
		  rk_stack_slack_kb(tasks_base, SLACK_KB));
}

TEST_HARNESS_MAIN
