// SPDX-License-Identifier: GPL-2.0
/*
 * make demo, in the guest. An Android-like population: procs processes,
 * each in a memory cgroup of its own under /sys/fs/cgroup/demo, each with
 * threads threads blocked at the annotated wait sites in the proportions
 * of mix. Reclaim is driven first by a memory hog in a sibling cgroup
 * pushing demo over its memory.high, then by proactive memory.reclaim.
 * Everything is then woken by its site's own event; every thread must
 * come back with the right result, and KernelStack must return to its
 * baseline once the processes exit.
 *
 * Output: "@@RK-DATA t,phase,KernelStack kB,stacks reclaimed,pages
 * reclaimed,fast,deferred" samples for the host's plot, and a markdown
 * table on "@@RK-TABLE " lines. Once every thread is blocked, before any
 * reclaim, the census of every thread of the system (bench/census) on
 * "@@RK-CENSUS blocked " lines. Exit status 0 only if every thread did
 * its work, the census ran, something was reclaimed and KernelStack came
 * back.
 */
#include "rk_mix.h"
#include <sys/wait.h>

#define CG		"/sys/fs/cgroup/demo"
#define CENSUS		"/bench/census"
#define MAX_PROCS	64

static struct rk_mix mix;
static int procs, threads, hog_mb, sample_ms;

static const char *volatile phase = "baseline";
static volatile int sampling = 1;
static double t0;

struct counters {
	long ks, stacks, pages, fast, deferred, retry;
};

static void counters_read(struct counters *c)
{
	c->ks = rk_kernel_stack_kb();
	c->stacks = rk_vmstat("stack_reclaim_stacks");
	c->pages = rk_vmstat("stack_reclaim_pages");
	c->fast = rk_vmstat("stack_repopulate_fast");
	c->deferred = rk_vmstat("stack_repopulate_deferred");
	c->retry = rk_vmstat("stack_repopulate_retry");
}

static struct counters base;

static void *sampler(void *arg)
{
	struct counters c;

	while (sampling) {
		counters_read(&c);
		printf("@@RK-DATA %.2f,%s,%ld,%ld,%ld,%ld,%ld\n",
		       (rk_now_us() - t0) / 1e6, phase, c.ks,
		       c.stacks - base.stacks, c.pages - base.pages,
		       c.fast - base.fast, c.deferred - base.deferred);
		fflush(stdout);
		rk_sleep_ms(sample_ms);
	}
	return NULL;
}

/*
 * One app: join its cgroup, start its threads, report ready, block in a
 * pipe read (annotated too) until told to wake them; then report
 * "done bad" and exit.
 */
static int app(int k, int ready_fd, int cmd_fd, int res_fd)
{
	char path[128], c;
	int res[2];

	snprintf(path, sizeof(path), CG "/app%d/cgroup.procs", k);
	if (rk_write_file(path, "0"))
		return 10;
	rk_nanosleep_s = 24 * 3600;	/* woken by signal at the end */
	if (rk_mix_start(&mix, threads))
		return 11;
	if (write(ready_fd, "r", 1) != 1 || read(cmd_fd, &c, 1) != 1)
		return 12;
	res[0] = rk_mix_finish(&mix, threads, &res[1]);
	return write(res_fd, res, sizeof(res)) == sizeof(res) ? 0 : 13;
}

/* Touch hog_mb MiB in the demo/hog cgroup, hold it a moment, exit. */
static int hog(void)
{
	char *p;

	if (rk_write_file(CG "/hog/cgroup.procs", "0"))
		return 10;
	for (int i = 0; i < hog_mb; i++) {
		p = malloc(1 << 20);
		if (!p)
			return 11;
		for (int j = 0; j < (1 << 20); j += 4096)
			p[j] = 1;
	}
	rk_sleep_ms(2000);
	return 0;
}

static long cg_long(const char *file)
{
	char path[128];

	snprintf(path, sizeof(path), CG "/%s", file);
	return rk_read_long(path);
}

static int cg_write(const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), CG "/%s", file);
	return rk_write_file(path, val);
}

/* Run the census, each line of it prefixed; its exit status (-1: none). */
static int census(const char *where)
{
	char line[512];
	FILE *f = popen(CENSUS, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		printf("@@RK-CENSUS %s %s", where, line);
	fflush(stdout);
	return pclose(f);
}

struct row {
	const char *name;
	long tasks;
	struct counters c;
};

static void row_print(const struct row *r, long pop_kb)
{
	long kb = r->c.ks - base.ks;
	double back = pop_kb > 0 ? 100.0 * (pop_kb - kb) / pop_kb : 0;

	if (!r->tasks) {
		printf("@@RK-TABLE | %-24s | %6ld | %8ld | %6s | %6s | %6s |\n",
		       r->name, r->tasks, r->c.ks, "-", "-", "-");
		return;
	}
	printf("@@RK-TABLE | %-24s | %6ld | %8ld | %6.1f | %5.1f%% | %5.1f%% |\n",
	       r->name, r->tasks, r->c.ks, (double)kb / r->tasks, back,
	       back / 0.75);
}

int main(int argc, char **argv)
{
	static const char *const keys[] = { "procs", "threads", "mix", "hog_mb",
					    "sample_ms", NULL };
	int ready[2], res[2], cmd[MAX_PROCS][2], done = 0, bad = 0, ok, cst;
	pid_t pids[MAX_PROCS];
	struct row rows[6];
	int nrows = 0;
	long tasks, tasks_base, pop_kb, slack, back;
	pthread_t sth;
	char buf[64];

	rk_args_check(argc, argv, keys);
	procs = rk_arg_long(argc, argv, "procs", 16, 1, MAX_PROCS);
	threads = rk_arg_long(argc, argv, "threads", 250, 1, 2000);
	hog_mb = rk_arg_long(argc, argv, "hog_mb", 64, 0, 1024);
	sample_ms = rk_arg_long(argc, argv, "sample_ms", 500, 50, 10000);
	rk_mix_parse(&mix, rk_arg(argc, argv, "mix") ?: RK_DEFAULT_MIX);
	if (!rk_have_feature() || rk_write_file(RK_SYSCTL, "1"))
		rk_usage("this kernel has no vm.reclaimable_stacks: boot the feature build");
	tasks = (long)procs * (threads + 1);	/* each app's main thread too */

	mkdir(CG, 0755);
	if (cg_write("cgroup.subtree_control", "+memory"))
		rk_usage("cannot enable the memory controller in " CG);
	for (int k = 0; k < procs; k++) {
		snprintf(buf, sizeof(buf), CG "/app%d", k);
		mkdir(buf, 0755);
	}
	mkdir(CG "/hog", 0755);
	rk_binder_mount();

	printf("demo: %d processes x %d threads, per process:", procs, threads);
	rk_mix_print(&mix, threads);
	printf("; hog %d MiB\n", hog_mb);
	counters_read(&base);
	tasks_base = rk_nr_tasks();
	t0 = rk_now_us();
	pthread_create(&sth, NULL, sampler, NULL);
	rows[nrows++] = (struct row){ "baseline", 0, base };
	rk_sleep_ms(1000);

	phase = "start";
	if (pipe(ready) || pipe(res))
		return 1;
	for (int k = 0; k < procs; k++) {
		if (pipe(cmd[k]))
			return 1;
		pids[k] = fork();
		if (!pids[k])
			_exit(app(k, ready[1], cmd[k][0], res[1]));
	}
	for (int k = 0; k < procs; k++) {
		if (read(ready[0], buf, 1) != 1) {
			fprintf(stderr, "an app failed to start its threads\n");
			return 1;
		}
	}
	phase = "blocked";
	rk_sleep_ms(2000);
	rows[nrows].name = "all blocked";
	rows[nrows].tasks = tasks;
	counters_read(&rows[nrows++].c);
	pop_kb = rows[nrows - 1].c.ks - base.ks;
	phase = "census";
	cst = census("blocked");

	if (hog_mb) {
		pid_t h;
		int st;

		phase = "hog";
		snprintf(buf, sizeof(buf), "%ld", cg_long("memory.current") +
			 (long)hog_mb / 2 * (1 << 20));
		if (cg_write("memory.high", buf))
			return 1;
		h = fork();
		if (!h)
			_exit(hog());
		waitpid(h, &st, 0);
		cg_write("memory.high", "max");
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fprintf(stderr, "hog: exit status %d\n", st);
		rk_sleep_ms(1000);
		rows[nrows].name = "after hog (memory.high)";
		rows[nrows].tasks = tasks;
		counters_read(&rows[nrows++].c);
	}

	phase = "memory.reclaim";
	for (int i = 0; i < 4; i++)
		cg_write("memory.reclaim", "1G");	/* EAGAIN: took what it could */
	rk_sleep_ms(1000);
	rows[nrows].name = "after memory.reclaim";
	rows[nrows].tasks = tasks;
	counters_read(&rows[nrows++].c);

	phase = "wake";
	for (int k = 0; k < procs; k++)
		if (write(cmd[k][1], "w", 1) != 1)
			return 1;
	for (int k = 0; k < procs; k++) {
		int r[2];

		if (read(res[0], r, sizeof(r)) != sizeof(r)) {
			bad++;
			continue;
		}
		done += r[0];
		bad += r[1];
	}
	for (int k = 0; k < procs; k++) {
		int st;

		if (waitpid(pids[k], &st, 0) == pids[k] &&
		    (!WIFEXITED(st) || WEXITSTATUS(st)))
			bad++;
	}

	phase = "exit";
	slack = rk_stack_slack_kb(tasks_base, 96);
	rk_wait_kernel_stack(base.ks, slack, 20000);
	rows[nrows].name = "after exit";
	rows[nrows].tasks = 0;
	counters_read(&rows[nrows++].c);
	rk_sleep_ms(sample_ms);
	sampling = 0;
	pthread_join(sth, NULL);

	printf("@@RK-TABLE | phase                    | tasks  | KernelStack kB | KiB/task | given back | of the 75%% limit |\n");
	printf("@@RK-TABLE |--------------------------|--------|----------|--------|--------|--------|\n");
	for (int i = 0; i < nrows; i++)
		row_print(&rows[i], pop_kb);
	back = rows[nrows - 2].c.ks;
	printf("@@RK-TABLE\n@@RK-TABLE stacks reclaimed %ld, pages %ld; repopulated: fast %ld, deferred %ld (retries %ld)\n",
	       rows[nrows - 1].c.stacks - base.stacks,
	       rows[nrows - 1].c.pages - base.pages,
	       rows[nrows - 1].c.fast - base.fast,
	       rows[nrows - 1].c.deferred - base.deferred,
	       rows[nrows - 1].c.retry - base.retry);
	printf("@@RK-TABLE threads that did their work: %d of %d (%d failed)\n",
	       done, procs * threads, bad);
	ok = done == procs * threads && !bad;
	if (cst) {
		printf("demo: FAIL: " CENSUS " exit status %d\n", cst);
		ok = 0;
	}
	if (rows[1].c.ks - back < pop_kb / 2) {
		printf("demo: FAIL: less than half of the population's stack memory was given back\n");
		ok = 0;
	}
	if (labs(rows[nrows - 1].c.ks - base.ks) > slack) {
		printf("demo: FAIL: KernelStack %ld kB after exit, baseline %ld kB\n",
		       rows[nrows - 1].c.ks, base.ks);
		ok = 0;
	}
	printf("demo: %s\n", ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
