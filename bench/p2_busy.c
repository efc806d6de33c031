// SPDX-License-Identifier: GPL-2.0
/*
 * P2 non-idle: threads= threads (4000), each waiting in FUTEX_WAIT on a
 * word of its own, in a memory cgroup. The driver wakes threads/100 + 1
 * random ones every 100 ms (about 10% a second), one at a time on a fixed
 * schedule, evenly spaced over each 100 ms, on absolute
 * deadlines so that the schedule does not drift (a burst of them at once
 * measured the queue behind the burst, not the wakeup). The driver runs
 * SCHED_FIFO (set after the waiters were created, so they stay
 * SCHED_OTHER and eligible), so that it keeps its schedule in both
 * modes; a slot it still misses by more than a gap is skipped, not sent
 * late, and so is a wakeup of a thread still busy with its last one:
 * both are counted (metrics skipped_slots, busy_slots). It stays in the
 * population's cgroup (another process would have to wake them through
 * shared futexes, not the private ones measured here), so it must charge
 * nothing while the cgroup is above memory.high, where a task that
 * charges is throttled on its way back to user space whatever its
 * policy. Hence it samples KernelStack through a /proc/meminfo file
 * opened once (each open allocates an accounted struct file, and the
 * first read the seq_file buffer, which later reads reuse), and the hog
 * is not forked from this process: a fork of 4,000 threads copies their
 * page tables, charged here, and leaves every page copy-on-write, so
 * that the next write to each charges again. A hog server forked at the
 * start, before any thread, forks each run's hog. (The first version of
 * this driver did both; with the feature off it missed 834 of 8,200
 * slots, 10%.) The driver stamps the time just before each FUTEX_WAKE;
 * each woken thread notes how long it took to run, touches a few KiB of
 * its user stack and waits again.
 * Meanwhile a memory hog in a sibling cgroup maps, touches and unmaps
 * hog_mb= MiB (64) every 200 ms, with the parent's memory.high 8 MiB
 * above where it started, so memcg reclaim keeps calling the shrinker.
 * With hold_mb=N it first maps and touches N MiB that it keeps for the
 * whole run, so that hog_mb= can be a small churn on top: pressure
 * that stays, not a 64 MiB sawtooth every 200 ms (with the feature off
 * the hog is throttled while it touches its held share, so its CPU use
 * still depends on the mode). The hog's CPU time is reported per run,
 * user and system apart (metrics hog_user_ms, hog_sys_ms; on the icount
 * clock millions of guest instructions): with the feature off nothing
 * in the cgroup is reclaimable and the hog sleeps throttled above
 * memory.high, with it on it gets its memory and runs, and on two vCPUs
 * its running is felt by every wakeup. Its system time holds its page
 * faults and also the feature's own reclaim work (memory.high reclaim
 * runs in the task that went over, the stack shrinker and its TLB
 * flushes included) and the teardown of its memory when it is killed:
 * not the hog's work alone. A run with hold_mb= reports as bench
 * p2_hold<hold_mb>_<hog_mb> (p2_busy's targets are not judged on it);
 * it cannot be combined with min_age_ms=, whose sweep has a name of its
 * own.
 * Reclaim takes about what the pressure asks for, so the default asks
 * for more than the population's reclaimable stack memory (4,000 x 12
 * KiB, 47 MiB): the steady state P2's target is about, every idle stack
 * wanted. A smaller hog asks for less, and less is given back. Reported
 * per mode (on/off, alternating):
 * the share of the population's stack memory given back in the steady
 * state (median of 1 s samples after the first third of the run), and
 * the wake-to-run latency distribution over all rounds (percentiles, and
 * every sample as @@RK-HIST lines for the report's plot).
 *
 * Only the futex site is used here, unlike P1, because the driver must
 * wake one chosen thread at a time and time it.
 *
 * min_age_ms=N (0..60000; CONFIG_RECLAIMABLE_STACK_DEBUG kernels) sets
 * the age a blocked thread's stack must reach before a reclaim pass at
 * the default priority may take it (debugfs reclaimable_stacks/
 * min_age_us, N * 1000) for every run, and puts back what it found at
 * exit, early exits included. The results are then reported as bench
 * p2_age<N>, not p2_busy, so that a sweep over thresholds (bench-report.py's
 * trade-off table) never mixes into the P2 target row; what is measured
 * is the same.
 *
 * aa=1 runs the two modes both switched off (off_a, off_b; rk_aa_arg()):
 * how far the latency ratio moves between two runs of one boot that
 * differ in nothing, the A/A noise against which bench-report.py judges
 * the on/off ratios.
 */
#include "rk_bench.h"
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define CG		"/sys/fs/cgroup/p2"
#define MAX_THREADS	8000
#define MAX_SAMPLES	200000
#define DEBUGFS		"/sys/kernel/debug"
#define MIN_AGE		DEBUGFS "/reclaimable_stacks/min_age_us"

struct waiter {
	int word;		/* 0: wait; 1: woken */
	int waiting;		/* about to wait or waiting */
	double t_wake;		/* stamped by the driver */
	pthread_t th;
};

static struct waiter w[MAX_THREADS];
static int nthreads, stop, hog_mb, hold_mb;
static double lat[MAX_SAMPLES];
static int nlat;
static char bench[32] = "p2_busy";

static void stack_work(void)
{
	volatile char buf[4096];

	for (size_t i = 0; i < sizeof(buf); i += 64)
		buf[i] = (char)i;
}

static void *waiter(void *arg)
{
	struct waiter *me = arg;

	for (;;) {
		__atomic_store_n(&me->waiting, 1, __ATOMIC_RELEASE);
		/* stop is checked too: a late "word = 0" may eat the last wake */
		while (!__atomic_load_n(&me->word, __ATOMIC_ACQUIRE) &&
		       !__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			rk_futex(&me->word, FUTEX_WAIT_PRIVATE, 0);
		if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			return NULL;
		{
			double d = rk_now_us() - me->t_wake;
			int k = __atomic_fetch_add(&nlat, 1, __ATOMIC_RELAXED);

			if (k < MAX_SAMPLES)
				lat[k] = d;
		}
		stack_work();
		__atomic_store_n(&me->word, 0, __ATOMIC_RELAXED);
	}
}

static int hog(void)
{
	if (rk_write_file(CG "/hog/cgroup.procs", "0"))
		return 10;
	if (hold_mb) {
		size_t sz = (size_t)hold_mb << 20;
		char *p = mmap(NULL, sz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 12;
		for (size_t j = 0; j < sz; j += 4096)
			p[j] = 1;
	}
	/*
	 * mmap, not malloc: glibc raises its mmap threshold to the size of
	 * a freed mapping up to 32 MiB, after which a malloc of that size
	 * comes from the heap, is never given back, and charges nothing
	 * more: pressure once, not over and over.
	 */
	for (;;) {
		size_t sz = (size_t)hog_mb << 20;
		char *p = mmap(NULL, sz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 11;
		for (size_t j = 0; j < sz; j += 4096)
			p[j] = 1;
		munmap(p, sz);
		rk_sleep_ms(200);
	}
}

/*
 * KernelStack from @fd, /proc/meminfo opened once: reading it again
 * reuses the seq_file buffer, so it charges nothing to the cgroup.
 */
static long kernel_stack_kb(int fd)
{
	static char buf[8192];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	char *p;

	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "KernelStack:");
	return p ? strtol(p + strlen("KernelStack:"), NULL, 10) : -1;
}

/*
 * The hog server: forked before any thread exists, it starts a hog on
 * 'g' and kills it on 's', answering each with the byte it got once
 * done, or with 'x' to 's' if the hog had ended by itself (it could not
 * join its cgroup or map its memory, or was killed: the run did not
 * have its pressure all along). Every answer is followed by two longs:
 * the user and the system CPU time in microseconds of the hog it
 * stopped, 0 for the others.
 */
static int hog_cmd[2], hog_ack[2];

static void hog_serve(void)
{
	pid_t h = 0;
	char c;
	long cpu_us[2];

	close(hog_cmd[1]);
	close(hog_ack[0]);
	while (read(hog_cmd[0], &c, 1) == 1) {
		cpu_us[0] = cpu_us[1] = 0;
		if (c == 'g' && !h) {
			h = fork();
			if (!h) {
				close(hog_cmd[0]);
				close(hog_ack[1]);
				_exit(hog());
			}
			if (h < 0)
				h = 0;
		} else if (c == 's' && h > 0) {
			struct rusage ru = { 0 };
			int st = 0;

			/* Ended already (an exit, or killed: OOM): no pressure. */
			if (wait4(h, &st, WNOHANG, &ru) == h) {
				fprintf(stderr, "%s: the hog ended with status %#x\n",
					bench, st);
				c = 'x';
			} else {
				kill(h, SIGKILL);
				if (wait4(h, &st, 0, &ru) != h ||
				    !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
					c = 'x';
			}
			cpu_us[0] = ru.ru_utime.tv_sec * 1000000L + ru.ru_utime.tv_usec;
			cpu_us[1] = ru.ru_stime.tv_sec * 1000000L + ru.ru_stime.tv_usec;
			h = 0;
		} else {
			c = 'x';
		}
		if (write(hog_ack[1], &c, 1) != 1 ||
		    write(hog_ack[1], cpu_us, sizeof(cpu_us)) != sizeof(cpu_us))
			break;
	}
	if (h > 0) {
		kill(h, SIGKILL);
		waitpid(h, NULL, 0);
	}
	_exit(0);
}

/*
 * Command @c to the hog server: false if it failed. The user and system
 * CPU time of the hog it stopped go to @cpu_us[0] and [1].
 */
static bool hog_tell(char c, long cpu_us[2])
{
	char ack;

	if (write(hog_cmd[1], &c, 1) != 1 || read(hog_ack[0], &ack, 1) != 1 ||
	    read(hog_ack[0], cpu_us, 2 * sizeof(long)) != 2 * sizeof(long)) {
		fprintf(stderr, "%s: the hog server is gone\n", bench);
		exit(1);
	}
	return ack == c;
}

/* False if the thread is still busy with its last wakeup. */
static bool wake_one(struct waiter *t)
{
	if (!__atomic_load_n(&t->waiting, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&t->word, __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&t->waiting, 0, __ATOMIC_RELAXED);
	t->t_wake = rk_now_us();
	__atomic_store_n(&t->word, 1, __ATOMIC_RELEASE);
	rk_futex(&t->word, FUTEX_WAKE_PRIVATE, 1);
	return true;
}

/*
 * One run in mode m: returns the median steady-state % given back of
 * the stack memory the population had fully blocked (full - base). It
 * starts by waking everyone once, untimed, so that no stack reclaimed
 * in the previous run's mode is repopulated during this one.
 */
/* The counters that explain the latency: how each wakeup got its stack. */
static const char *const outcome_keys[] = {
	"stack_reclaim_stacks", "stack_reclaim_young", "stack_repopulate_fast",
	"stack_repopulate_deferred", "stack_defer_pool_empty",
	"stack_defer_charge_failed", "stack_defer_handed_off",
	"stack_repopulate_retry", "stack_repopulate_wait_us",
	"stack_pool_grow", "stack_pool_shrink",
};
#define NR_OUTCOMES	(sizeof(outcome_keys) / sizeof(outcome_keys[0]))

static void outcomes_read(long *v)
{
	for (size_t i = 0; i < NR_OUTCOMES; i++)
		v[i] = rk_vmstat(outcome_keys[i]);
}

/* One line per mode: the counters' deltas over the run. */
static void outcomes_print(const char *m, const long *before)
{
	long after[NR_OUTCOMES];

	outcomes_read(after);
	printf("%s: %s: counters:", bench, m);
	for (size_t i = 0; i < NR_OUTCOMES; i++)
		printf(" %s +%ld", outcome_keys[i], after[i] - before[i]);
	printf("\n");
}

static double run(const char *m, int r, int seconds, long base, long full,
		  int fd)
{
	long before[NR_OUTCOMES];
	static double samples[600];
	int ns = 0, ticks = seconds * 10, per_tick = nthreads / 100 + 1;
	long skipped = 0, busy = 0;
	long gap_ns = 100000000L / per_tick;
	struct timespec next;
	long high, kb, hog_us[2];
	char buf[32];

	for (int i = 0; i < nthreads; i++)
		wake_one(&w[i]);
	rk_sleep_ms(2000);
	__atomic_store_n(&nlat, 0, __ATOMIC_RELAXED);
	high = rk_read_long(CG "/memory.current") + (8 << 20);
	snprintf(buf, sizeof(buf), "%ld", high);
	if (rk_write_file(CG "/memory.high", buf))
		return NAN;
	outcomes_read(before);
	memset(samples, 0, sizeof(samples));
	random();	/* its state touched now, not under pressure */
	if (!hog_tell('g', hog_us))
		return NAN;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (int t = 0; t < ticks; t++) {
		for (int k = 0; k < per_tick; k++) {
			struct timespec now;

			/*
			 * A driver stalled past its next deadline would send
			 * the wakeups it missed back to back, a burst again:
			 * it skips a slot missed by more than a gap instead,
			 * and counts it, so that the report can tell.
			 */
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - next.tv_sec) * 1000000000L +
			    now.tv_nsec - next.tv_nsec > gap_ns)
				skipped++;
			else if (!wake_one(&w[random() % nthreads]))
				busy++;
			next.tv_nsec += gap_ns;
			if (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
					       &next, NULL) == EINTR)
				;
		}
		if (t % 10 == 9 && t >= ticks / 3 && ns < 600 &&
		    (kb = kernel_stack_kb(fd)) >= 0)
			samples[ns++] = 100.0 * (full - kb) / (full - base);
	}
	if (!hog_tell('s', hog_us)) {
		printf("%s: %s: the hog ended by itself: no pressure\n", bench, m);
		rk_write_file(CG "/memory.high", "max");
		return NAN;
	}
	printf("%s: %s: the hog's CPU time in the %d s run: user %.0f ms, system %.0f ms (its faults, the reclaim it ran, its teardown)\n",
	       bench, m, seconds, hog_us[0] / 1000.0, hog_us[1] / 1000.0);
	rk_report(bench, m, r, "hog_user_ms", hog_us[0] / 1000.0);
	rk_report(bench, m, r, "hog_sys_ms", hog_us[1] / 1000.0);
	outcomes_print(m, before);
	printf("%s: %s: of %d wakeup slots, %ld skipped (missed by more than one gap, %ld ns), %ld found their thread still busy\n",
	       bench, m, ticks * per_tick, skipped, gap_ns, busy);
	rk_report(bench, m, r, "skipped_slots", skipped);
	rk_report(bench, m, r, "busy_slots", busy);
	rk_write_file(CG "/memory.high", "max");
	printf("%s: %s: KernelStack %ld kB with every stack present, %ld kB now, median given back %.1f%%\n",
	       bench, m, full, rk_kernel_stack_kb(), rk_percentile(samples, ns, 50));
	return rk_percentile(samples, ns, 50);
}

/* MIN_AGE set to ms milliseconds, put back at exit; bench p2_age<ms>. */
static void min_age_set(long ms)
{
	char val[32];

	if (access(MIN_AGE, W_OK))
		mount("debugfs", DEBUGFS, "debugfs", 0, NULL);
	snprintf(val, sizeof(val), "%ld\n", ms * 1000);
	if (rk_knob_set(MIN_AGE, val))
		rk_usage("min_age_ms=%ld: cannot set " MIN_AGE
			 " (CONFIG_RECLAIMABLE_STACK_DEBUG?)", ms);
	snprintf(bench, sizeof(bench), "p2_age%ld", ms);
}

int main(int argc, char **argv)
{
	static const char *const keys[] = { "rounds", "threads", "seconds",
					    "min_age_ms", "aa", "hog_mb", "hold_mb",
					    NULL };
	static double all[2][MAX_SAMPLES];
	int rounds, seconds, nall[2] = { 0, 0 };
	long min_age_ms;
	const char *modes[2];
	long base, full;
	int meminfo;

	rk_args_check(argc, argv, keys);
	rounds = rk_arg_long(argc, argv, "rounds", 2, 1, 100);
	nthreads = rk_arg_long(argc, argv, "threads", 4000, 100, MAX_THREADS);
	seconds = rk_arg_long(argc, argv, "seconds", 20, 3, 600);
	hog_mb = rk_arg_long(argc, argv, "hog_mb", 64, 1, 1024);
	hold_mb = rk_arg_long(argc, argv, "hold_mb", 0, 0, 1024);
	min_age_ms = rk_arg_long(argc, argv, "min_age_ms", -1, 0, 60000);
	rk_aa_arg(argc, argv);
	if (!rk_have_feature())
		rk_usage("P2 compares the feature on and off: boot the feature build");
	if (min_age_ms >= 0)
		min_age_set(min_age_ms);
	if (hold_mb && min_age_ms >= 0)
		rk_usage("hold_mb= and min_age_ms= together: run the sweep with the default hog");
	if (hold_mb)
		snprintf(bench, sizeof(bench), "p2_hold%d_%d", hold_mb, hog_mb);

	/* Before any thread or array is touched: see the hog server. */
	/* A write to a gone peer fails with EPIPE, and is handled. */
	signal(SIGPIPE, SIG_IGN);
	if (pipe(hog_cmd) || pipe(hog_ack)) {
		perror("pipe");
		return 1;
	}
	switch (fork()) {
	case -1:
		perror("fork");
		return 1;
	case 0:
		hog_serve();
	}
	close(hog_cmd[0]);
	close(hog_ack[1]);

	mkdir(CG, 0755);
	mkdir(CG "/pop", 0755);
	mkdir(CG "/hog", 0755);
	if (rk_write_file(CG "/cgroup.subtree_control", "+memory") ||
	    rk_write_file(CG "/pop/cgroup.procs", "0"))
		rk_usage("cannot set up the memory cgroups under " CG);
	meminfo = open("/proc/meminfo", O_RDONLY);
	if (meminfo < 0 || kernel_stack_kb(meminfo) < 0)
		rk_usage("cannot read KernelStack from /proc/meminfo");
	/* Its pages faulted in now, not by woken threads during a run. */
	memset(lat, 0, sizeof(lat));
	base = rk_kernel_stack_kb();
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&w[i].th, NULL, waiter, &w[i]))
			return 1;
	rk_sleep_ms(1000);
	full = rk_kernel_stack_kb();
	/* This thread only: the waiters stay SCHED_OTHER, so eligible. */
	if (sched_setscheduler(0, SCHED_FIFO,
			       &(struct sched_param){ .sched_priority = 1 }))
		rk_usage("cannot make the driver SCHED_FIFO: %s", strerror(errno));

	for (int r = 0; r < rounds; r++) {
		int n = rk_modes(r, modes);

		for (int i = 0; i < n; i++) {
			int mi = rk_mode_index(modes[i]);
			double pct;

			if (rk_mode_set(modes[i]))
				return 1;
			pct = run(modes[i], r, seconds, base, full, meminfo);
			rk_report(bench, modes[i], r, "given_back_pct", pct);
			for (int k = 0; k < nlat && k < MAX_SAMPLES; k++)
				if (nall[mi] < MAX_SAMPLES)
					all[mi][nall[mi]++] = lat[k];
		}
	}
	if (!rk_aa)
		rk_mode_set("on");
	for (int mi = 0; mi < 2; mi++) {
		const char *m = rk_mode_name(mi);

		rk_report(bench, m, 0, "wakeups", nall[mi]);
		rk_report(bench, m, 0, "p50_us", rk_percentile(all[mi], nall[mi], 50));
		rk_report(bench, m, 0, "p90_us", rk_percentile(all[mi], nall[mi], 90));
		rk_report(bench, m, 0, "p99_us", rk_percentile(all[mi], nall[mi], 99));
		rk_report_hist(bench, m, all[mi], nall[mi]);
	}

	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nthreads; i++) {
		__atomic_store_n(&w[i].word, 1, __ATOMIC_RELEASE);
		rk_futex(&w[i].word, FUTEX_WAKE_PRIVATE, 1);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(w[i].th, NULL);
	return 0;
}
