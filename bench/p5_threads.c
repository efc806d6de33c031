// SPDX-License-Identifier: GPL-2.0
/*
 * P5: what the feature costs at thread creation and exit. With
 * CONFIG_RECLAIMABLE_STACK every stack is a VM_SPARSE area populated page
 * by page and freed from RCU-delayed work; the switch changes only whether
 * blocked threads enter the state machine, so on/off of one kernel mostly
 * shows noise and the comparison that matters is against the vanilla
 * kernel (mode "vanilla", the same program there).
 *
 *   p5_threads  iters= pthread_create (the thread returns at once) +
 *               pthread_join, one after the other. threads_per_s.
 *   p5_fork     forks= fork + waitpid of a child that _exits at once.
 *               forks_per_s. forks=0 skips it.
 *
 * A round is slices= A/B slices (ABBA order) of 1/slices of the work
 * each, so that a change in the speed of the host weighs on both modes
 * alike; a round's rate is its total work over its total time.
 *
 * The joiner waits in futex (an annotated site), so with the feature on
 * each join also passes the block and wakeup hooks.
 *
 * With pin=1 (default) everything runs on CPU 0 (new threads and children
 * inherit the affinity): under TCG a new task placed on the other, idle,
 * vCPU waits for the host to schedule that vCPU's thread, which makes the
 * rate depend on the host's load more than on the kernel. pin=0 leaves
 * placement to the scheduler.
 *
 * Arguments: rounds= iters= forks= slices= pin=, and aa=1 for an A/A run
 * (modes off_a and off_b, rk_aa_arg()). Any other key is an error (make
 * bench boots each program with its own arguments).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/wait.h>
#include "rk_sites.h"
#include "rk_bench.h"
#include "rk_pin.h"

static const char *const keys[] = {
	"rounds", "iters", "forks", "slices", "pin", "aa",
	NULL
};

static void *nothing(void *arg)
{
	return arg;
}

/* Threads created and joined per second, or -1. */
static double thread_rate(long n)
{
	double t0 = rk_now_us();

	for (long i = 0; i < n; i++) {
		pthread_t t;
		void *ret = NULL;

		if (pthread_create(&t, NULL, nothing, (void *)(intptr_t)(i + 1)) ||
		    pthread_join(t, &ret) || ret != (void *)(intptr_t)(i + 1)) {
			fprintf(stderr, "thread %ld did not complete\n", i);
			return -1;
		}
	}
	return n / ((rk_now_us() - t0) / 1e6);
}

/* Children forked and reaped per second, or -1. */
static double fork_rate(long n)
{
	double t0 = rk_now_us();

	for (long i = 0; i < n; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st)) {
			fprintf(stderr, "child %ld did not complete\n", i);
			return -1;
		}
	}
	return n / ((rk_now_us() - t0) / 1e6);
}

int main(int argc, char **argv)
{
	long saved = rk_have_feature() ? rk_read_long(RK_SYSCTL) : -1;
	long rounds, iters, forks, slices, pin, n_thr, n_fork;
	static double v[2][2][1000];	/* bench, mode (on/vanilla, off), round */
	static const char *const names[2] = { "p5_threads", "p5_fork" };
	static const char *const metrics[2] = { "threads_per_s", "forks_per_s" };
	int failed = 0, nmodes = 1;

	rk_args_check(argc, argv, keys);
	rounds = rk_arg_long(argc, argv, "rounds", 10, 1, 1000);
	iters = rk_arg_long(argc, argv, "iters", 5000, 1, 100000000);
	forks = rk_arg_long(argc, argv, "forks", 400, 0, 100000000);
	slices = rk_arg_long(argc, argv, "slices", 5, 1, 1000);
	pin = rk_arg_long(argc, argv, "pin", 1, 0, 1);
	rk_aa_arg(argc, argv);
	n_thr = iters / slices > 0 ? iters / slices : 1;
	n_fork = forks / slices > 0 || !forks ? forks / slices : 1;
	printf("p5_threads: rounds=%ld iters=%ld forks=%ld slices=%ld pin=%ld aa=%d\n",
	       rounds, iters, forks, slices, pin, rk_aa);
	if (pin)
		rk_pin_cpu(0);

	/* One untimed run of each first: TCG translates the code once. */
	if (thread_rate(n_thr) < 0 || (forks && fork_rate(n_fork) < 0))
		return 1;
	for (int r = 0; r < rounds && !failed; r++) {
		double secs[2][2] = { { 0 } };	/* bench, mode */
		const char *m[2];

		nmodes = rk_modes(r, m);
		for (int s = 0; s < slices && !failed; s++) {
			for (int k = 0; k < nmodes && !failed; k++) {
				const char *mode = m[s & 1 ? nmodes - 1 - k : k];
				int mi = rk_mode_index(mode);
				double t, f = 0;

				if (rk_mode_set(mode)) {
					fprintf(stderr, "cannot set mode %s\n", mode);
					failed = 1;
					break;
				}
				t = thread_rate(n_thr);
				if (forks)
					f = fork_rate(n_fork);
				if (t < 0 || f < 0) {
					failed = 1;
					break;
				}
				secs[0][mi] += n_thr / t;
				if (forks)
					secs[1][mi] += n_fork / f;
			}
		}
		for (int k = 0; k < nmodes && !failed; k++) {
			int mi = rk_mode_index(m[k]);

			v[0][mi][r] = n_thr * slices / secs[0][mi];
			rk_report(names[0], m[k], r, metrics[0], v[0][mi][r]);
			if (forks) {
				v[1][mi][r] = n_fork * slices / secs[1][mi];
				rk_report(names[1], m[k], r, metrics[1], v[1][mi][r]);
			}
		}
	}
	if (saved >= 0)
		rk_write_file(RK_SYSCTL, saved ? "1\n" : "0\n");
	if (failed)
		return 1;

	for (int b = 0; b < (forks ? 2 : 1); b++) {
		double med[2];

		for (int mi = 0; mi < nmodes; mi++)
			med[mi] = rk_percentile(v[b][mi], rounds, 50);
		if (nmodes == 2)
			printf("%s: median %s %s %.0f %s %.0f ratio %.3f\n",
			       names[b], metrics[b], rk_mode_name(0), med[0],
			       rk_mode_name(1), med[1], med[0] / med[1]);
		else
			printf("%s: median %s vanilla %.0f\n", names[b],
			       metrics[b], med[0]);
	}
	return 0;
}
