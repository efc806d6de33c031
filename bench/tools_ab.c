// SPDX-License-Identifier: GPL-2.0
/*
 * Real tools, not ours: Debian's perf bench and rt-tests, run as they are
 * (scripts/copy-dynamic.sh puts them and their libraries in the x86_64
 * initramfs) with reclaim forced in the background, feature on and off in
 * A/B order in one boot (rk_modes), alone on the unpatched kernel. Each
 * tool's own figure is reported, read from its output:
 *
 *   perf_pipe   perf bench sched pipe -l pipe_loops: two processes
 *               ping-pong over two pipes. us_per_op: perf's usecs/op.
 *   perf_msg    perf bench sched messaging -p -g msg_groups -l msg_loops:
 *               per group 20 sender and 20 receiver processes over pipes
 *               (-p: a socket read is not a reclaimable wait, a pipe read
 *               is). total_ms: perf's "Total time".
 *   hackbench   rt-tests hackbench -p -g hb_groups -l hb_loops: the same
 *               shape, process mode, pipes. total_ms: its "Time".
 *   cyclictest  rt-tests cyclictest --policy=other -t cyc_threads
 *               -l cyc_loops -i cyc_interval -d 0 -N -q: SCHED_OTHER
 *               threads (eligible; an RT thread keeps its stack) in
 *               clock_nanosleep. avg_us: mean of the threads' Avg; max_us:
 *               the largest Max (-N: read in ns, reported in us).
 *
 * The pressure, in every mode and on the unpatched kernel alike, from a
 * thread of this program outside the tool's cgroup, every period= ms
 * (0: none) for as long as the tool runs:
 *
 *   pressure=memcg (default): every tool is born in the memory cgroup
 *     rk_tools (clone3 CLONE_INTO_CGROUP, so its stack and its children's
 *     are that memcg's from the start) and the thread asks that cgroup's
 *     memory.reclaim for 64 MiB. It reaches only the tool, as in
 *     tests/reclaim_pressure.c, and the cgroup has little else to give,
 *     so the request falls through the priorities. But the shrinker is
 *     proportional: vmscan asks for (stacks >> priority) of them, so 80
 *     blocked processes (perf_msg, hackbench) are scanned, and taken when
 *     older than the priority's age bar, while perf_pipe's two and
 *     cyclictest's four threads were not even walked in our runs (no
 *     stack_* counter moved: so few stacks are scanned only at the lowest
 *     priorities); there the feature's switch-out and wakeup hooks are
 *     all that differs between on and off.
 *   pressure=drop: the thread writes 2 to /proc/sys/vm/drop_caches (4,
 *     written once first, silences its console message, which split
 *     @@RK-BENCH lines; the file takes 1 to 4 only), which shrinks every
 *     slab cache of the system at priority 0, where every
 *     eligible stack goes whatever its age: reclaim forced even on a
 *     ping-pong pair and on a 1 ms sleeper, the worst case for the
 *     wakeups that follow. It also empties the dentry and inode caches of
 *     the whole guest each time (little here: the root is an initramfs,
 *     the tools open nothing in their loops). Bench names get "_drop".
 *
 * Besides each figure, on a feature kernel: reclaimed (stacks taken) and
 * repopulated (fast + deferred) during the run, from /proc/vmstat, and a
 * "# " line with every stack_* counter that moved: whether the pressure
 * reached the tool at all.
 *
 * pin=1 (default): the tool on CPU 0, the pressure thread on CPU 1. Under
 * the icount clock both vCPUs advance the one guest clock, so the
 * pressure thread's instructions count inside the tool's figures, the
 * same requests in every mode (with the feature on they also unmap
 * stacks: part of its cost).
 *
 * Arguments: tools= (names joined by '+'; default perf_pipe+perf_msg+
 * hackbench), rounds=, pipe_loops=, msg_groups=, msg_loops=, hb_groups=,
 * hb_loops=, cyc_threads=, cyc_loops=, cyc_interval= (us), period=,
 * pressure=memcg|drop, pin=, aa=1 (A/A, rk_aa_arg()), clock=wall|icount
 * (what bench.sh booted with: "wall" appends _wall to the bench names, so
 * that the report never puts the two clocks in one row).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/sched.h>	/* struct clone_args, CLONE_INTO_CGROUP */
#include "rk_bench.h"
#include "rk_pin.h"

#define CG		"/sys/fs/cgroup/rk_tools"
#define RECLAIM_ASK	"64M"
#define OUT_MAX		65536

static const char *const keys[] = {
	"tools", "rounds", "pipe_loops", "msg_groups", "msg_loops",
	"hb_groups", "hb_loops", "cyc_threads", "cyc_loops", "cyc_interval",
	"period", "pressure", "pin", "aa", "clock", NULL
};

static long pipe_loops, msg_groups, msg_loops, hb_groups, hb_loops;
static long cyc_threads, cyc_loops, cyc_interval, period, pin, drop;
static char suffix[16];		/* _drop, _wall: see the header */

/* ---- the tools: command line and the figures read from the output ---- */

struct tool {
	const char *name;
	void (*argv)(char **a, char (*buf)[32]);
	/* Parse out[]; write up to 2 values to v[], return how many or -1. */
	int (*parse)(const char *out, double *v);
	const char *metric[2];
};

static char *num(char *buf, long v)
{
	snprintf(buf, 32, "%ld", v);
	return buf;
}

static void perf_pipe_argv(char **a, char (*b)[32])
{
	char *v[] = { "/usr/bin/perf", "bench", "sched", "pipe", "-l",
		      num(b[0], pipe_loops), NULL };

	memcpy(a, v, sizeof(v));
}

static void perf_msg_argv(char **a, char (*b)[32])
{
	char *v[] = { "/usr/bin/perf", "bench", "sched", "messaging", "-p",
		      "-g", num(b[0], msg_groups), "-l", num(b[1], msg_loops),
		      NULL };

	memcpy(a, v, sizeof(v));
}

static void hackbench_argv(char **a, char (*b)[32])
{
	char *v[] = { "/usr/bin/hackbench", "-p", "-g", num(b[0], hb_groups),
		      "-l", num(b[1], hb_loops), NULL };

	memcpy(a, v, sizeof(v));
}

static void cyclictest_argv(char **a, char (*b)[32])
{
	char *v[] = { "/usr/bin/cyclictest", "--policy=other", "-p", "0",
		      "-t", num(b[0], cyc_threads), "-l", num(b[1], cyc_loops),
		      "-i", num(b[2], cyc_interval), "-d", "0", "-N", "-q",
		      "--default-system", NULL };

	memcpy(a, v, sizeof(v));
}

/* The first line of out matching fmt (one %lf), times scale; -1 if none. */
static int scan_line(const char *out, const char *fmt, double scale, double *v)
{
	for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l)
		if (sscanf(l, fmt, v) == 1) {
			*v *= scale;
			return 1;
		}
	return -1;
}

static int perf_pipe_parse(const char *out, double *v)
{
	return scan_line(out, " %lf usecs/op", 1, v);
}

static int perf_msg_parse(const char *out, double *v)
{
	return scan_line(out, " Total time: %lf [sec]", 1e3, v);
}

static int hackbench_parse(const char *out, double *v)
{
	return scan_line(out, "Time: %lf", 1e3, v);
}

/* "T: 0 ( 123) P: 0 I:1000 C:   100 Min:  5 Act:  6 Avg:  7 Max:  9" */
static int cyclictest_parse(const char *out, double *v)
{
	double sum = 0, max = 0;
	long threads = 0;

	for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : l) {
		const char *eol = strchr(l, '\n');
		const char *avg = strstr(l, "Avg:"), *mx = strstr(l, "Max:");

		if (strncmp(l, "T:", 2))
			continue;
		if (!avg || !mx || (eol && (avg > eol || mx > eol)))
			return -1;
		sum += strtod(avg + 4, NULL);
		if (strtod(mx + 4, NULL) > max)
			max = strtod(mx + 4, NULL);
		threads++;
	}
	if (threads != cyc_threads)
		return -1;
	v[0] = sum / threads / 1e3;
	v[1] = max / 1e3;
	return 2;
}

static const struct tool tools[] = {
	{ "perf_pipe", perf_pipe_argv, perf_pipe_parse, { "us_per_op" } },
	{ "perf_msg", perf_msg_argv, perf_msg_parse, { "total_ms" } },
	{ "hackbench", hackbench_argv, hackbench_parse, { "total_ms" } },
	{ "cyclictest", cyclictest_argv, cyclictest_parse,
	  { "avg_us", "max_us" } },
};
#define NTOOLS (int)(sizeof(tools) / sizeof(tools[0]))

/* ---- the background reclaimer ---- */

static volatile int stop_reclaim;

static void on_cpu(int cpu)
{
	if (pin)
		rk_pin_cpu(cpu);
}

static void *reclaimer(void *arg)
{
	long *requests = arg;

	on_cpu(1);
	while (!stop_reclaim) {
		/* EAGAIN when less than asked was reclaimable: the usual case. */
		if (drop)
			rk_write_file("/proc/sys/vm/drop_caches", "2\n");
		else
			rk_write_file(CG "/memory.reclaim", RECLAIM_ASK);
		(*requests)++;
		rk_sleep_ms(period);
	}
	return NULL;
}

/* ---- one run of one tool ---- */

/*
 * A child born in the cgroup (clone3 CLONE_INTO_CGROUP), not moved there
 * after fork: its stack is then charged and listed in that memcg from
 * the start, where memory.reclaim of the cgroup finds it and its
 * children's. Only this thread runs when it is called.
 */
static int cgfd = -1;

static pid_t fork_in_cgroup(void)
{
	struct clone_args ca = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = cgfd,
	};

	return syscall(SYS_clone3, &ca, sizeof(ca));
}

/* Run tool t in the cgroup, under pressure; its output in out[]. */
static int run_tool(const struct tool *t, char *out)
{
	char *argv[20], buf[4][32];
	int fd[2], status;
	long requests = 0;
	size_t len = 0;
	pthread_t rt;
	ssize_t n;
	pid_t child;

	t->argv(argv, buf);
	if (pipe(fd))
		return -1;
	child = fork_in_cgroup();
	if (child < 0) {
		fprintf(stderr, "clone3 into %s: %s\n", CG, strerror(errno));
		return -1;
	}
	if (!child) {
		on_cpu(0);
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	stop_reclaim = 0;
	if (period && pthread_create(&rt, NULL, reclaimer, &requests))
		period = 0;	/* reported below: no pressure */
	while (len < OUT_MAX - 1 &&
	       (n = read(fd[0], out + len, OUT_MAX - 1 - len)) > 0)
		len += n;
	out[len] = 0;
	close(fd[0]);
	waitpid(child, &status, 0);
	stop_reclaim = 1;
	if (period)
		pthread_join(rt, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s: exit status %#x; its output:\n%s\n",
			t->name, status, out);
		return -1;
	}
	if (!period)
		fprintf(stderr, "%s: ran without background reclaim\n", t->name);
	return 0;
}

static long vm_sum(const char *a, const char *b)
{
	return rk_vmstat(a) + (b ? rk_vmstat(b) : 0);
}

/* The stack_* lines of /proc/vmstat, in order; how many (at most max). */
#define VM_MAX	32
static int vm_stack(char names[VM_MAX][48], long *vals)
{
	FILE *f = fopen("/proc/vmstat", "r");
	int n = 0;

	while (f && n < VM_MAX && fscanf(f, "%47s %ld", names[n], &vals[n]) == 2)
		n += !strncmp(names[n], "stack_", 6);
	if (f)
		fclose(f);
	return n;
}

/* One line (not parsed) of what the feature did during a run. */
static void vm_stack_delta(const char *bench, const char *mode, int round,
			   char names[VM_MAX][48], long *before, int n)
{
	char now[VM_MAX][48];
	long vals[VM_MAX];
	int m = vm_stack(now, vals);

	printf("# %s %s round %d:", bench, mode, round);
	for (int i = 0; i < n && i < m; i++)
		if (vals[i] != before[i])
			printf(" %s +%ld", now[i] + 6, vals[i] - before[i]);
	printf("\n");
	fflush(stdout);
}

/* Run, parse and report tool t in mode (NULL: warm-up). 0 or -1. */
static int measure(const struct tool *t, const char *mode, int round)
{
	static char out[OUT_MAX];
	long rec0 = 0, rep0 = 0, vm0[VM_MAX];
	char bench[64], vm_names[VM_MAX][48];
	int nvm = 0;
	double v[2];
	int nv;

	if (rk_have_feature()) {
		rec0 = vm_sum("stack_reclaim_stacks", NULL);
		rep0 = vm_sum("stack_repopulate_fast", "stack_repopulate_deferred");
		nvm = vm_stack(vm_names, vm0);
	}
	if (run_tool(t, out))
		return -1;
	nv = t->parse(out, v);
	if (nv < 0) {
		fprintf(stderr, "%s: no figure in its output:\n%s\n", t->name, out);
		return -1;
	}
	if (!mode)
		return 0;
	snprintf(bench, sizeof(bench), "%s%s", t->name, suffix);
	for (int i = 0; i < nv; i++)
		rk_report(bench, mode, round, t->metric[i], v[i]);
	if (rk_have_feature()) {
		rk_report(bench, mode, round, "reclaimed",
			  vm_sum("stack_reclaim_stacks", NULL) - rec0);
		rk_report(bench, mode, round, "repopulated",
			  vm_sum("stack_repopulate_fast",
				 "stack_repopulate_deferred") - rep0);
		vm_stack_delta(bench, mode, round, vm_names, vm0, nvm);
	}
	return 0;
}

/* tools=a+b+c: a bit per tool in tools[]. */
static unsigned int tools_arg(int argc, char **argv)
{
	const char *s = rk_arg(argc, argv, "tools");
	unsigned int mask = 0;

	if (!s)
		s = "perf_pipe+perf_msg+hackbench";
	for (const char *p = s; *p; p += *p == '+') {
		size_t n = strcspn(p, "+");
		int i;

		for (i = 0; i < NTOOLS; i++)
			if (strlen(tools[i].name) == n &&
			    !strncmp(p, tools[i].name, n))
				break;
		if (i == NTOOLS)
			rk_usage("tools=%s: know perf_pipe, perf_msg, hackbench, cyclictest (joined by +)", s);
		mask |= 1u << i;
		p += n;
	}
	return mask;
}

int main(int argc, char **argv)
{
	long rounds, saved = rk_have_feature() ? rk_read_long(RK_SYSCTL) : -1;
	const char *clock, *pressure;
	unsigned int mask;
	int failed = 0;

	rk_args_check(argc, argv, keys);
	mask = tools_arg(argc, argv);
	rounds = rk_arg_long(argc, argv, "rounds", 10, 1, 1000);
	pipe_loops = rk_arg_long(argc, argv, "pipe_loops", 20000, 1, 100000000);
	msg_groups = rk_arg_long(argc, argv, "msg_groups", 2, 1, 100);
	msg_loops = rk_arg_long(argc, argv, "msg_loops", 300, 1, 1000000);
	hb_groups = rk_arg_long(argc, argv, "hb_groups", 2, 1, 100);
	hb_loops = rk_arg_long(argc, argv, "hb_loops", 300, 1, 1000000);
	cyc_threads = rk_arg_long(argc, argv, "cyc_threads", 4, 1, 64);
	cyc_loops = rk_arg_long(argc, argv, "cyc_loops", 2000, 1, 10000000);
	cyc_interval = rk_arg_long(argc, argv, "cyc_interval", 1000, 100, 1000000);
	period = rk_arg_long(argc, argv, "period", 20, 0, 10000);
	pin = rk_arg_long(argc, argv, "pin", 1, 0, 1);
	pressure = rk_arg(argc, argv, "pressure");
	if (pressure && strcmp(pressure, "memcg") && strcmp(pressure, "drop"))
		rk_usage("pressure=%s: want memcg or drop", pressure);
	drop = pressure && !strcmp(pressure, "drop");
	rk_aa_arg(argc, argv);
	clock = rk_arg(argc, argv, "clock");
	if (clock && strcmp(clock, "wall") && strcmp(clock, "icount"))
		rk_usage("clock=%s: want wall or icount", clock);
	snprintf(suffix, sizeof(suffix), "%s%s", drop ? "_drop" : "",
		 clock && !strcmp(clock, "wall") ? "_wall" : "");
	printf("tools_ab: mask=%#x rounds=%ld pipe_loops=%ld msg=%ldx%ld hb=%ldx%ld cyc=%ldx%ld/%ldus period=%ldms pressure=%s pin=%ld aa=%d clock=%s\n",
	       mask, rounds, pipe_loops, msg_groups, msg_loops, hb_groups,
	       hb_loops, cyc_threads, cyc_loops, cyc_interval, period,
	       drop ? "drop" : "memcg", pin,
	       rk_aa, clock ? clock : "unknown");
	fflush(stdout);

	if (mkdir(CG, 0755) && errno != EEXIST) {
		fprintf(stderr, "mkdir %s: %s\n", CG, strerror(errno));
		return 1;
	}
	/* drop_caches: no "drop_caches: 2" line on the console each time. */
	if (drop && rk_write_file("/proc/sys/vm/drop_caches", "4\n")) {
		fprintf(stderr, "cannot write 4 to drop_caches\n");
		return 1;
	}
	cgfd = open(CG, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cgfd < 0) {
		fprintf(stderr, "open %s: %s\n", CG, strerror(errno));
		return 1;
	}
	/* One untimed run of each first: TCG translates, the loader maps. */
	for (int i = 0; i < NTOOLS; i++)
		if (mask & (1u << i) && measure(&tools[i], NULL, 0)) {
			fprintf(stderr, "%s: warm-up run failed\n", tools[i].name);
			return 1;
		}
	for (int r = 0; r < rounds && !failed; r++) {
		const char *m[2];
		int nmodes = rk_modes(r, m);

		for (int k = 0; k < nmodes && !failed; k++) {
			if (rk_mode_set(m[k])) {
				fprintf(stderr, "cannot set mode %s\n", m[k]);
				failed = 1;
				break;
			}
			for (int i = 0; i < NTOOLS && !failed; i++)
				if (mask & (1u << i) && measure(&tools[i], m[k], r)) {
					fprintf(stderr, "%s mode %s round %d failed\n",
						tools[i].name, m[k], r);
					failed = 1;
				}
		}
	}
	if (saved >= 0)
		rk_write_file(RK_SYSCTL, saved ? "1\n" : "0\n");
	close(cgfd);
	rmdir(CG);
	return failed;
}
