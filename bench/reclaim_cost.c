// SPDX-License-Identifier: GPL-2.0
/*
 * Reclaim cost: CPU time the shrinker spends per stack (and per page) it
 * reclaims. threads= threads block in futex wait; this thread then drives
 * the shrinker through its SHRINKER_DEBUG scan file, which calls
 * scan_objects in the writer's context, writing "<memcg ino> <nid> 4096"
 * for every node in turn until vmstat stack_reclaim_stacks rose by
 * threads. Each call walks one batch (32 tasks) of one node's list, and
 * a stack needs two visits (aged NEW -> OLD, then reclaimed), so about
 * 2 * threads / 32 calls do the job.
 *
 * What the number includes: this thread's CLOCK_THREAD_CPUTIME_ID over
 * the scan writes only, i.e. for every call the write syscall and the
 * debugfs handler (parsing, memcg lookup by inode), stack_scan() itself:
 * draining the pending list (normally empty: the background drain work
 * moved the tasks 100 ms after they blocked, and we wait for it), walking
 * the list_lru (aging rotations included), unmapping the dead pages, one
 * kernel TLB flush per batch (including the wait for the other CPU's
 * IPI, but not that CPU's handler time), freeing and uncharging pages,
 * and the calls that only aged or found nothing. Not included: reading
 * vmstat between calls, the wakeups and repopulation afterwards, work
 * done on other CPUs. us_per_stack = that time / stacks reclaimed,
 * us_per_page = that time / pages reclaimed (vmstat deltas). For scale,
 * us_per_empty_call is the same CPU time per scan write once the threads
 * are gone (syscall, debugfs and an empty walk): calls * that / stacks
 * is the part of us_per_stack that is not reclaim work.
 *
 * After each round the threads are woken, joined and must all have seen
 * their wakeup. Arguments: rounds= threads=. Any other key is an
 * error (make bench boots each program with its own arguments).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "rk_sites.h"
#include "rk_bench.h"

static const char *const keys[] = {
	"rounds", "threads",
	NULL
};

static struct rk_pop pop;

/* The shrinker's debugfs scan file, opened for writing; -1 if none. */
static int open_scan(void)
{
	const char *dir = "/sys/kernel/debug/shrinker";
	char path[300];
	struct dirent *de;
	DIR *d = opendir(dir);
	int fd = -1;

	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "kernel-stacks-", 14)) {
			snprintf(path, sizeof(path), "%s/%s/scan", dir, de->d_name);
			fd = open(path, O_WRONLY);
			break;
		}
	if (d)
		closedir(d);
	return fd;
}

/* Inode of our memcg's cgroup directory: the scan file's memcg id. */
static unsigned long memcg_ino(void)
{
	char line[512], path[600];
	struct stat st;
	FILE *f = fopen("/proc/self/cgroup", "r");
	unsigned long ino = 1;	/* the root cgroup */

	if (f && fgets(line, sizeof(line), f) && !strncmp(line, "0::", 3)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s", line + 3);
		if (!stat(path, &st))
			ino = st.st_ino;
	}
	if (f)
		fclose(f);
	return ino;
}

/* Nodes the scan file accepts: 1 + the last id in node/possible ("0-1"). */
static int nr_nodes(void)
{
	FILE *f = fopen("/sys/devices/system/node/possible", "r");
	char buf[256], *p;
	int n = 1;

	if (f && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		p = buf + strlen(buf);
		while (p > buf && p[-1] >= '0' && p[-1] <= '9')
			p--;
		n = atoi(p) + 1;
	}
	if (f)
		fclose(f);
	return n;
}

/*
 * Scan until want stacks are reclaimed. Returns the CPU microseconds
 * spent in the scan writes, or -1.
 */
static double scan_until(int fd, unsigned long ino, int nodes, long want,
			 long *calls)
{
	long before = rk_vmstat("stack_reclaim_stacks");
	long max = 8 * (want / 32 + 2);
	double cpu = 0;
	char cmd[64];

	for (*calls = 0; *calls < max * nodes;) {
		for (int nid = 0; nid < nodes; nid++) {
			int len = snprintf(cmd, sizeof(cmd), "%lu %d 4096\n", ino, nid);
			double c0 = rk_thread_cpu_us();
			ssize_t r = write(fd, cmd, len);

			cpu += rk_thread_cpu_us() - c0;
			++*calls;
			if (r != len) {
				perror("write scan");
				return -1;
			}
		}
		if (rk_vmstat("stack_reclaim_stacks") - before >= want)
			return cpu;
	}
	fprintf(stderr, "%ld scan calls reclaimed %ld of %ld stacks\n", *calls,
		rk_vmstat("stack_reclaim_stacks") - before, want);
	return -1;
}

/* CPU microseconds per scan write with (almost) nothing listed, or -1. */
static double empty_calls(int fd, unsigned long ino, int nodes)
{
	double cpu = 0;
	char cmd[64];

	for (int i = 0; i < 16; i++) {
		int len = snprintf(cmd, sizeof(cmd), "%lu %d 4096\n", ino, i % nodes);
		double c0 = rk_thread_cpu_us();
		ssize_t r = write(fd, cmd, len);

		cpu += rk_thread_cpu_us() - c0;
		if (r != len) {
			perror("write scan");
			return -1;
		}
	}
	return cpu / 16;
}

int main(int argc, char **argv)
{
	long rounds, nthreads, saved;
	unsigned long ino = memcg_ino();
	int fd, nodes = nr_nodes(), failed = 0;
	static double per_stack[100];

	rk_args_check(argc, argv, keys);
	rounds = rk_arg_long(argc, argv, "rounds", 5, 1, 100);
	nthreads = rk_arg_long(argc, argv, "threads", 1000, 1, RK_MAX_THREADS);
	printf("reclaim_cost: rounds=%ld threads=%ld (memcg ino %lu, %d nodes)\n",
	       rounds, nthreads, ino, nodes);
	if (!rk_have_feature()) {
		printf("no reclaimable stacks in this kernel: nothing to measure\n");
		return 0;
	}
	fd = open_scan();
	if (fd < 0) {
		fprintf(stderr, "no /sys/kernel/debug/shrinker/kernel-stacks-*/scan (CONFIG_SHRINKER_DEBUG?)\n");
		return 1;
	}
	saved = rk_read_long(RK_SYSCTL);
	if (rk_write_file(RK_SYSCTL, "1\n")) {
		fprintf(stderr, "cannot switch the feature on\n");
		return 1;
	}

	for (int r = 0; r < rounds && !failed; r++) {
		long s0, p0, ds, dp, calls = 0;
		double cpu;
		int done;

		if (rk_pop_start(&pop, rk_site_by_name("futex"), nthreads, NULL)) {
			fprintf(stderr, "round %d: %ld threads did not all block\n",
				r, nthreads);
			return 1;
		}
		rk_sleep_ms(300);	/* the pending list's drain work has run */
		s0 = rk_vmstat("stack_reclaim_stacks");
		p0 = rk_vmstat("stack_reclaim_pages");
		cpu = scan_until(fd, ino, nodes, nthreads, &calls);
		ds = rk_vmstat("stack_reclaim_stacks") - s0;
		dp = rk_vmstat("stack_reclaim_pages") - p0;
		if (cpu < 0 || ds <= 0 || dp <= 0) {
			failed = 1;
		} else {
			per_stack[r] = cpu / ds;
			rk_report("reclaim_cost", "on", r, "us_per_stack", cpu / ds);
			rk_report("reclaim_cost", "on", r, "us_per_page", cpu / dp);
			printf("round %d: %ld stacks, %ld pages in %ld scan calls, %.0f us CPU\n",
			       r, ds, dp, calls, cpu);
		}
		done = rk_pop_finish(&pop);
		if (done != nthreads) {
			fprintf(stderr, "round %d: %d of %ld threads completed\n",
				r, done, nthreads);
			failed = 1;
		}
		if (!failed) {
			cpu = empty_calls(fd, ino, nodes);
			if (cpu < 0)
				failed = 1;
			else
				rk_report("reclaim_cost", "on", r, "us_per_empty_call", cpu);
		}
	}
	close(fd);
	if (saved >= 0)
		rk_write_file(RK_SYSCTL, saved ? "1\n" : "0\n");
	if (!failed)
		printf("median us per stack: %.2f\n",
		       rk_percentile(per_stack, rounds, 50));
	return failed;
}
