// SPDX-License-Identifier: GPL-2.0
/*
 * P3: the cost of the feature on the hot path, with nothing reclaimed.
 * Every block at an annotated site with the feature on goes through the
 * dequeue and switch-out hooks (IN_USE -> PREPARE_RECLAIM -> RECLAIMABLE,
 * the pending list on first block) and every wakeup through the ttwu hook
 * (back to IN_USE). Three workloads that block and wake as fast as they
 * can, each a fixed amount of work per round, in A/B order (rk_modes):
 *
 *   p3_pipe   round trips between two threads through two pipes; both
 *             block in anonymous pipe read. us_per_op: per round trip.
 *   p3_futex  FUTEX_WAIT/FUTEX_WAKE ping-pong on one word between two
 *             threads. us_per_op: per round trip.
 *   p3_msg    hackbench-style: groups of fds senders and fds receivers,
 *             each sender writes loops 100-byte messages to every
 *             receiver of its group over a pipe per receiver; receivers
 *             block in pipe read. us_per_op: elapsed per message.
 *
 * A round is slices= A/B slices (ABBA order), each running every workload
 * with 1/slices of the work in each mode, so that a change in the speed of
 * the host (other guests, builds) weighs on both modes alike; the value
 * reported for a round is the mean over its slices.
 *
 * With pin=1 (default) every thread of a workload shares CPU 0, so every
 * hand-off is a block, a wakeup and a context switch on one CPU (no IPIs,
 * whose cost under TCG is large and noisy, and no load balancing, whose
 * choices differ from boot to boot: unpinned, p3_msg's per-message count
 * of guest instructions moved 23 % between boots of one kernel); pin=0
 * lets the scheduler place them.
 *
 * Arguments: rounds= iters= (round trips per ping-pong per round and
 * mode) groups= fds= loops= pin= slices=, and aa=1 for an A/A run (modes
 * off_a and off_b, rk_aa_arg()). Any other key is an error (make bench
 * boots each program with its own arguments).
 */
#define _GNU_SOURCE
#include <sched.h>
#include "rk_sites.h"
#include "rk_bench.h"
#include "rk_pin.h"

#define WARMUP		100	/* untimed round trips before each run */
#define MSG_SIZE	100	/* hackbench's default datasize */
#define MAX_FDS		20	/* hackbench's default senders per group */
#define MAX_GROUPS	10

static const char *const keys[] = {
	"rounds", "iters", "groups", "fds", "loops", "pin", "slices", "aa",
	NULL
};

static long iters, groups, fds, loops, pin, slices;
static long n_rt, n_loops;	/* per run: iters / slices, loops / slices */

static void pin_self(void)
{
	if (pin)
		rk_pin_cpu(0);
}

/* ---- p3_pipe ---- */

struct pingpong {
	int a[2], b[2];		/* ping -> pong, pong -> ping */
	int turn;		/* futex: 0 ping's turn, 1 pong's, 2 abort */
	int err;
	double us;		/* ping: time of n_rt timed round trips */
};

static void *pipe_ping(void *arg)
{
	struct pingpong *pp = arg;
	double t0 = 0;
	char c = 'p';

	pin_self();
	for (long i = 0; i < WARMUP + n_rt; i++) {
		if (i == WARMUP)
			t0 = rk_now_us();
		if (write(pp->a[1], &c, 1) != 1 || read(pp->b[0], &c, 1) != 1) {
			pp->err = 1;
			break;
		}
	}
	pp->us = rk_now_us() - t0;
	close(pp->a[1]);	/* pong sees EOF if we stopped early */
	pp->a[1] = -1;
	return NULL;
}

static void *pipe_pong(void *arg)
{
	struct pingpong *pp = arg;
	char c;

	pin_self();
	for (long i = 0; i < WARMUP + n_rt; i++)
		if (read(pp->a[0], &c, 1) != 1 || write(pp->b[1], &c, 1) != 1) {
			pp->err = 1;
			break;
		}
	close(pp->b[1]);
	pp->b[1] = -1;
	return NULL;
}

/* ---- p3_futex ---- */

static int futex_handoff(struct pingpong *pp, int mine, int theirs)
{
	int v;

	while ((v = __atomic_load_n(&pp->turn, __ATOMIC_ACQUIRE)) != mine) {
		if (v == 2)
			return -1;
		if (rk_futex(&pp->turn, FUTEX_WAIT_PRIVATE, v) &&
		    errno != EAGAIN && errno != EINTR)
			goto abort;
	}
	__atomic_store_n(&pp->turn, theirs, __ATOMIC_RELEASE);
	if (rk_futex(&pp->turn, FUTEX_WAKE_PRIVATE, 1) < 0)
		goto abort;
	return 0;
abort:
	pp->err = 1;
	__atomic_store_n(&pp->turn, 2, __ATOMIC_RELEASE);
	rk_futex(&pp->turn, FUTEX_WAKE_PRIVATE, 1);
	return -1;
}

static void *futex_ping(void *arg)
{
	struct pingpong *pp = arg;
	double t0 = 0;

	pin_self();
	for (long i = 0; i < WARMUP + n_rt; i++) {
		if (i == WARMUP)
			t0 = rk_now_us();
		if (futex_handoff(pp, 0, 1))
			break;
	}
	/* The last round trip ends when the turn comes back. */
	while (!pp->err && __atomic_load_n(&pp->turn, __ATOMIC_ACQUIRE) == 1)
		rk_futex(&pp->turn, FUTEX_WAIT_PRIVATE, 1);
	pp->us = rk_now_us() - t0;
	return NULL;
}

static void *futex_pong(void *arg)
{
	struct pingpong *pp = arg;

	pin_self();
	for (long i = 0; i < WARMUP + n_rt; i++)
		if (futex_handoff(pp, 1, 0))
			break;
	return NULL;
}

/* One ping-pong run: microseconds per round trip, or -1. */
static double pingpong(void *(*ping)(void *), void *(*pong)(void *))
{
	struct pingpong pp = { .turn = 0 };
	pthread_t t[2];
	int ok;

	if (pipe(pp.a) || pipe(pp.b))
		return -1;
	ok = !pthread_create(&t[1], NULL, pong, &pp);
	if (ok && pthread_create(&t[0], NULL, ping, &pp)) {
		ok = 0;
		if (ping == futex_ping) {
			__atomic_store_n(&pp.turn, 2, __ATOMIC_RELEASE);
			rk_futex(&pp.turn, FUTEX_WAKE_PRIVATE, 1);
		}
		close(pp.a[1]);	/* pipe_pong sees EOF */
		pp.a[1] = -1;
		pthread_join(t[1], NULL);
	} else if (ok) {
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
	}
	/* The pipe threads closed their write ends and set them to -1. */
	for (int i = 0; i < 2; i++) {
		if (pp.a[i] >= 0)
			close(pp.a[i]);
		if (pp.b[i] >= 0)
			close(pp.b[i]);
	}
	if (!ok || pp.err)
		return -1;
	return pp.us / n_rt;
}

/* ---- p3_msg ---- */

struct msg_group {
	int pipes[MAX_FDS][2];		/* one per receiver */
	pthread_t tids[2 * MAX_FDS];
};

static struct msg_group grp[MAX_GROUPS];
static pthread_barrier_t start;
static int msg_err;

static void *msg_sender(void *arg)
{
	struct msg_group *g = arg;
	char buf[MSG_SIZE] = { 0 };

	pin_self();
	pthread_barrier_wait(&start);
	for (long l = 0; l < n_loops; l++)
		for (long r = 0; r < fds; r++)
			if (write(g->pipes[r][1], buf, MSG_SIZE) != MSG_SIZE) {
				__atomic_store_n(&msg_err, 1, __ATOMIC_RELAXED);
				return NULL;
			}
	return NULL;
}

static void *msg_receiver(void *arg)
{
	int fd = (int)(intptr_t)arg;
	long left = fds * n_loops * MSG_SIZE;
	char buf[MSG_SIZE];

	pin_self();
	pthread_barrier_wait(&start);
	while (left > 0) {
		/* Writes of MSG_SIZE are atomic, so are these reads. */
		ssize_t n = read(fd, buf, MSG_SIZE);

		if (n <= 0) {	/* EOF: a sender died early */
			__atomic_store_n(&msg_err, 1, __ATOMIC_RELAXED);
			return NULL;
		}
		left -= n;
	}
	return NULL;
}

/* One hackbench run: microseconds per message, or -1. */
static double messaging(void)
{
	long nthreads = 0, created = 0;
	double t0, us;

	msg_err = 0;
	for (long g = 0; g < groups; g++)
		for (long r = 0; r < fds; r++)
			if (pipe(grp[g].pipes[r]))
				return -1;
	if (pthread_barrier_init(&start, NULL, 2 * groups * fds + 1))
		return -1;
	for (long g = 0; g < groups; g++)
		for (long i = 0; i < fds; i++) {
			if (!pthread_create(&grp[g].tids[i], NULL, msg_receiver,
					    (void *)(intptr_t)grp[g].pipes[i][0]))
				created++;
			if (!pthread_create(&grp[g].tids[fds + i], NULL,
					    msg_sender, &grp[g]))
				created++;
			nthreads += 2;
		}
	if (created != nthreads) {
		fprintf(stderr, "p3_msg: created %ld of %ld threads\n", created,
			nthreads);
		exit(1);	/* the barrier would never open */
	}
	pthread_barrier_wait(&start);
	t0 = rk_now_us();
	for (long g = 0; g < groups; g++)
		for (long i = 0; i < 2 * fds; i++)
			pthread_join(grp[g].tids[i], NULL);
	us = rk_now_us() - t0;
	pthread_barrier_destroy(&start);
	for (long g = 0; g < groups; g++)
		for (long r = 0; r < fds; r++) {
			close(grp[g].pipes[r][0]);
			close(grp[g].pipes[r][1]);
		}
	return msg_err ? -1 : us / (groups * fds * fds * n_loops);
}

/* ---- rounds ---- */

static const char *const bench_names[] = { "p3_pipe", "p3_futex", "p3_msg" };

static double run_one(int b)
{
	switch (b) {
	case 0:
		return pingpong(pipe_ping, pipe_pong);
	case 1:
		return pingpong(futex_ping, futex_pong);
	default:
		return messaging();
	}
}

int main(int argc, char **argv)
{
	long rounds, saved = rk_have_feature() ? rk_read_long(RK_SYSCTL) : -1;
	static double v[3][2][1000];	/* bench, rk_mode_index(), round */
	int failed = 0, nmodes = 1;

	rk_args_check(argc, argv, keys);
	rounds = rk_arg_long(argc, argv, "rounds", 10, 1, 1000);
	iters = rk_arg_long(argc, argv, "iters", 30000, 1, 100000000);
	groups = rk_arg_long(argc, argv, "groups", 2, 1, MAX_GROUPS);
	fds = rk_arg_long(argc, argv, "fds", 5, 1, MAX_FDS);
	loops = rk_arg_long(argc, argv, "loops", 2000, 1, 100000000);
	pin = rk_arg_long(argc, argv, "pin", 1, 0, 1);
	slices = rk_arg_long(argc, argv, "slices", 5, 1, 1000);
	rk_aa_arg(argc, argv);
	n_rt = iters / slices > 0 ? iters / slices : 1;
	n_loops = loops / slices > 0 ? loops / slices : 1;
	printf("p3_hotpath: rounds=%ld iters=%ld groups=%ld fds=%ld loops=%ld pin=%ld slices=%ld aa=%d\n",
	       rounds, iters, groups, fds, loops, pin, slices, rk_aa);

	/* One untimed run of each first: TCG translates the code once. */
	for (int b = 0; b < 3; b++)
		if (run_one(b) < 0) {
			fprintf(stderr, "%s: warm-up run failed\n", bench_names[b]);
			return 1;
		}
	for (int r = 0; r < rounds && !failed; r++) {
		const char *m[2];
		double sum[3][2] = { { 0 } };

		nmodes = rk_modes(r, m);
		for (int s = 0; s < slices && !failed; s++) {
			for (int k = 0; k < nmodes && !failed; k++) {
				const char *mode = m[s & 1 ? nmodes - 1 - k : k];
				int mi = rk_mode_index(mode);

				if (rk_mode_set(mode)) {
					fprintf(stderr, "cannot set mode %s\n", mode);
					return 1;
				}
				for (int b = 0; b < 3; b++) {
					double us = run_one(b);

					if (us < 0) {
						fprintf(stderr, "%s mode %s round %d: a thread failed\n",
							bench_names[b], mode, r);
						failed = 1;
						break;
					}
					sum[b][mi] += us;
				}
			}
		}
		for (int k = 0; k < nmodes && !failed; k++) {
			int mi = rk_mode_index(m[k]);

			for (int b = 0; b < 3; b++) {
				v[b][mi][r] = sum[b][mi] / slices;
				rk_report(bench_names[b], m[k], r, "us_per_op",
					  v[b][mi][r]);
			}
		}
	}
	if (saved >= 0)
		rk_write_file(RK_SYSCTL, saved ? "1\n" : "0\n");

	/* Human-readable summary: medians over rounds, mode 0 / mode 1. */
	for (int b = 0; b < 3 && !failed; b++) {
		double med[2];

		for (int mi = 0; mi < nmodes; mi++)
			med[mi] = rk_percentile(v[b][mi], rounds, 50);
		if (nmodes == 2)
			printf("%s: median us/op %s %.3f %s %.3f ratio %.3f\n",
			       bench_names[b], rk_mode_name(0), med[0],
			       rk_mode_name(1), med[1], med[0] / med[1]);
		else
			printf("%s: median us/op vanilla %.3f\n", bench_names[b],
			       med[0]);
	}
	return failed;
}
