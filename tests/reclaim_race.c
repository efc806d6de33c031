// SPDX-License-Identifier: GPL-2.0
/*
 * Wakeups racing with reclaim: pairs of threads ping-pong through futexes,
 * pipes and epoll, pausing in nanosleep between rounds, while another
 * thread forces reclaim in a loop. A lost wakeup leaves a pair stuck and
 * the test fails on its deadline; a thread run on a missing stack page
 * oopses the guest. Duration: rk.race_seconds=N on the kernel command
 * line (default 60).
 */
#include "rk_sites.h"
#include "kselftest_harness.h"

#define PAIRS_PER_KIND	16

enum kind { K_FUTEX, K_PIPE, K_EPOLL, NR_KINDS };

struct pair {
	enum kind kind;
	int word;			/* futex: whose turn (0 ping, 1 pong) */
	int ab[2], ba[2];		/* pipes a->b and b->a */
	int ep[2];			/* epoll sets of a and b */
	long rounds[2];
	pthread_t t[2];
};

static struct pair pairs[NR_KINDS * PAIRS_PER_KIND];
static int stop;

static void pause_a_little(unsigned int *seed)
{
	struct timespec ts = { 0, (rand_r(seed) % 4000) * 1000L };

	nanosleep(&ts, NULL);
}

/* Wait until it is side's turn; false once the test is over. */
static int futex_turn(struct pair *p, int side)
{
	while (__atomic_load_n(&p->word, __ATOMIC_ACQUIRE) != side) {
		if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			return 0;
		struct timespec ts = { 1, 0 };

		syscall(SYS_futex, &p->word, FUTEX_WAIT_PRIVATE, !side, &ts,
			NULL, 0);
	}
	return 1;
}

static void futex_pass(struct pair *p, int side)
{
	__atomic_store_n(&p->word, !side, __ATOMIC_RELEASE);
	rk_futex(&p->word, FUTEX_WAKE_PRIVATE, 1);
}

/* Returns the token read, or -1 at the end. */
static long fd_turn(struct pair *p, int side)
{
	int in = side ? p->ab[0] : p->ba[0];
	long token;

	if (p->kind == K_EPOLL) {
		struct epoll_event ev;
		int n;

		do
			n = epoll_wait(p->ep[side], &ev, 1, 1000);
		while ((n == 0 || (n < 0 && errno == EINTR)) &&
		       !__atomic_load_n(&stop, __ATOMIC_ACQUIRE));
		if (n != 1)
			return -1;
	}
	if (read(in, &token, sizeof(token)) != sizeof(token))
		return -1;
	return token;
}

static void *player(void *arg)
{
	struct pair *p = (struct pair *)((uintptr_t)arg & ~1UL);
	int side = (uintptr_t)arg & 1;
	unsigned int seed = (uintptr_t)p;
	long expect = side;		/* tokens alternate 0,1,2,... */

	for (;;) {
		if (p->kind == K_FUTEX) {
			if (!futex_turn(p, side))
				break;
		} else {
			/* Side 0 serves first: it writes before reading. */
			if (!(side == 0 && expect == 0)) {
				long t = fd_turn(p, side);

				if (t < 0)
					break;
				if (t != expect - 1)
					return (void *)1L;	/* wrong data */
			}
		}
		p->rounds[side]++;
		pause_a_little(&seed);
		/* At the end the partner leaves on EOF or on the flag. */
		if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
			break;
		if (p->kind == K_FUTEX) {
			futex_pass(p, side);
		} else {
			int out = side ? p->ba[1] : p->ab[1];

			if (write(out, &expect, sizeof(expect)) != sizeof(expect))
				return (void *)1L;
		}
		expect += 2;
	}
	return NULL;
}

static void *reclaimer(void *arg)
{
	long *passes = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		if (rk_drop_caches(1))
			return (void *)1L;
		(*passes)++;
		rk_sleep_ms(5);
	}
	return NULL;
}

FIXTURE(race) {
	struct rk_switch sw;
};

FIXTURE_SETUP(race)
{
	rk_switch_save(&self->sw);
	signal(SIGPIPE, SIG_IGN);
}

FIXTURE_TEARDOWN(race)
{
	rk_switch_restore(&self->sw);
}

TEST_F_TIMEOUT(race, pingpong_under_reclaim, 600)
{
	int seconds = rk_cmdline_long("rk.race_seconds=", 60);
	long passes = 0, total = 0;
	long fast0 = rk_vmstat("stack_repopulate_fast");
	long def0 = rk_vmstat("stack_repopulate_deferred");
	long stacks0 = rk_vmstat("stack_reclaim_stacks");
	long base = rk_kernel_stack_kb(), tasks_base = rk_nr_tasks();
	pthread_t rt;
	void *ret;
	int i;

	ASSERT_EQ(0, rk_write_file("/proc/sys/vm/reclaimable_stacks", "1"));
	for (i = 0; i < NR_KINDS * PAIRS_PER_KIND; i++) {
		struct pair *p = &pairs[i];
		struct epoll_event ev = { .events = EPOLLIN };

		p->kind = i % NR_KINDS;
		ASSERT_EQ(0, pipe(p->ab));
		ASSERT_EQ(0, pipe(p->ba));
		if (p->kind == K_EPOLL) {
			p->ep[0] = epoll_create1(0);
			p->ep[1] = epoll_create1(0);
			ASSERT_EQ(0, epoll_ctl(p->ep[0], EPOLL_CTL_ADD,
					       p->ba[0], &ev));
			ASSERT_EQ(0, epoll_ctl(p->ep[1], EPOLL_CTL_ADD,
					       p->ab[0], &ev));
		}
		for (int s = 0; s < 2; s++)
			ASSERT_EQ(0, pthread_create(&p->t[s], NULL, player,
				  (void *)((uintptr_t)p | s)));
	}
	ASSERT_EQ(0, pthread_create(&rt, NULL, reclaimer, &passes));
	sleep(seconds);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	ASSERT_EQ(0, pthread_join(rt, &ret));
	EXPECT_EQ(NULL, ret);
	for (i = 0; i < NR_KINDS * PAIRS_PER_KIND; i++) {
		struct pair *p = &pairs[i];

		/* Unblock fd players still waiting for a last token. */
		close(p->ab[1]);
		close(p->ba[1]);
		for (int s = 0; s < 2; s++) {
			ASSERT_EQ(0, pthread_join(p->t[s], &ret));
			EXPECT_EQ(NULL, ret) TH_LOG("pair %d side %d: wrong data", i, s);
		}
		EXPECT_GT(p->rounds[0], 0);
		EXPECT_LE(labs(p->rounds[0] - p->rounds[1]), 1);
		total += p->rounds[0] + p->rounds[1];
	}
	TH_LOG("%ds: %ld rounds, %ld reclaim passes, %ld stacks reclaimed, "
	       "%ld fast + %ld deferred repopulations", seconds, total, passes,
	       rk_vmstat("stack_reclaim_stacks") - stacks0,
	       rk_vmstat("stack_repopulate_fast") - fast0,
	       rk_vmstat("stack_repopulate_deferred") - def0);
	/* The point is racing wakeups with reclaim: it must have happened. */
	EXPECT_GT(rk_vmstat("stack_reclaim_stacks") - stacks0, 0);
	EXPECT_GT(rk_vmstat("stack_repopulate_fast") - fast0 +
		  rk_vmstat("stack_repopulate_deferred") - def0, 0);
	EXPECT_LE(labs(rk_wait_kernel_stack(base, 96, 10000) - base),
		  rk_stack_slack_kb(tasks_base, 96));
}

TEST_HARNESS_MAIN
