// SPDX-License-Identifier: GPL-2.0
/*
 * Stress: a population of threads spread over every annotated wait site
 * blocks and is woken again and again, each waiter checking that it got
 * its own event, while everything that can reclaim a stack, take a CPU
 * away or make an allocation fail runs at the same time:
 *
 *   sites     futex (half of them with a timeout), futex_waitv, epoll,
 *             poll/ppoll, select/pselect, nanosleep/clock_nanosleep,
 *             anonymous pipe read, sigtimedwait, binder (loopers of one
 *             context manager, fed one-way transactions by a sender
 *             process) and job-control stop (a child process whose
 *             threads are stopped and continued over and over);
 *   reclaim   drop_caches=2 in a loop, memory.reclaim on the population's
 *             cgroup, a memory hog in a sibling cgroup under a parent
 *             memory.high;
 *   churn     threads created, blocked briefly in a timed futex wait
 *             (the timeout is their event), exiting;
 *   hotplug   cpu1 offline/online every rk.stress_hotplug_ms;
 *   faults    fail_stack_repopulate for the whole run, and
 *             fail_page_alloc (if the kernel has it) for a bounded window.
 *
 * A waiter blocks, is woken by its site's driver with its site's natural
 * event carrying a token (the number of its next cycle), checks the token
 * and counts a cycle, until its quota is done; drivers keep waking
 * unfinished waiters. A lost wakeup stalls a site: after
 * rk.stress_stall_seconds without progress the test fails and prints the
 * stuck threads' state and kernel stack.
 *
 * Parameters (kernel command line): rk.stress_threads= (1000),
 * rk.stress_cycles= (100000), rk.stress_hog_mb= (64),
 * rk.stress_fail_prob= (20, fail_stack_repopulate probability in %),
 * rk.stress_fpa_seconds= (10, fail_page_alloc window; 0: none),
 * rk.stress_fpa_prob= (1, in %), rk.stress_hotplug_ms= (2000; 0: none),
 * rk.stress_stall_seconds= (300), rk.stress_churn= (16 churn threads
 * alive at a time; 0: none, to tell problems apart). The defaults are
 * the short form run by "make check"; "make stress" boots the full form
 * (4,000 threads, 1,000,000 cycles) on the debug kernel.
 *
 * fail_page_alloc is restricted on purpose: min-order=0 and
 * ignore-gfp-wait=N so that the order-0 GFP_KERNEL allocations of the
 * feature (pool refill, deferred repopulation, page-by-page stacks at
 * fork) can fail, but ignore-gfp-highmem=Y so that user memory (page
 * faults, pipe buffers) is left alone, and only for a bounded window
 * during which CPU hotplug pauses (bringing a CPU up or down under
 * random allocation failures tests hotplug's error paths, not this
 * feature). What can fail legitimately inside the window is retried:
 * pthread_create (EAGAIN), binder transactions (BR_FAILED_REPLY,
 * ENOMEM), the test's own /proc reads; a queued signal may lose its
 * siginfo (the kernel then delivers it as SI_USER), which sigtimedwait
 * waiters accept only once the window has opened.
 */
#define _GNU_SOURCE
#include "rk_sites.h"
#include "kselftest_harness.h"
#include <sys/stat.h>
#include <sys/wait.h>

#define PAGE_KB		4
#define SLACK_KB	96
#define SYSCTL		"/proc/sys/vm/reclaimable_stacks"
#define CG		"/sys/fs/cgroup/rk_stress"
#define CG_POP		CG "/pop"
#define CG_HOG		CG "/hog"
#define CPU1		"/sys/devices/system/cpu/cpu1/online"
#define FSR		"/sys/kernel/debug/fail_stack_repopulate"
#define FPA		"/sys/kernel/debug/fail_page_alloc"
/* Failures left before a fault attribute stops failing: hits = cap - left. */
#define FSR_CAP		1000000000L
#define FPA_CAP		20000L
#define WAIT_TIMEOUT_S	600	/* timed waits: far beyond any hold */

enum site {
	S_FUTEX, S_WAITV, S_EPOLL, S_POLL, S_SELECT, S_NANOSLEEP, S_PIPE,
	S_SIGWAIT, NR_GENERIC,
	S_BINDER = NR_GENERIC, S_JOBSTOP, NR_SITES
};

static const char *const site_name[NR_SITES] = {
	"futex", "futex_waitv", "epoll", "poll", "select", "nanosleep",
	"pipe", "sigtimedwait", "binder", "jobstop",
};

struct waiter {
	int site, idx;			/* idx: into waiters[] */
	int word;			/* futex, futex_waitv: the token */
	int fd[2];			/* pipe; epoll: epfd, eventfd; select: eventfd */
	pid_t tid;
	long done;			/* cycles completed */
	int armed;			/* waiting for its next event */
	long ready_at;			/* ms: the driver holds the event until then */
	int finished;
	char err[128];			/* first wrong result */
	pthread_t th;
};

/* Shared with the child processes (hog, binder sender, job-control child). */
struct shm {
	int stop;			/* hog, sender: give up */
	int hog_go;
	long hog_rounds, hog_over;	/* rounds, of which over memory.high */
	long binder_recv;		/* transactions taken by loopers */
	long binder_failed;		/* sends that failed (fail_page_alloc) */
	int sender_go;
	int job_gen;			/* jobstop: futex word, < 0 means quit */
	int job_ready;
	int job_ack[];			/* per job thread: last generation seen */
};

static struct {
	long threads, cycles, hog_mb, fail_prob, fpa_s, fpa_prob, hotplug_ms, stall_s;
	long churn;			/* churn threads alive at a time */
	long quota;			/* cycles per waiter */
	int per_site[NR_SITES];
	int nr_waiters;			/* generic sites */
	struct waiter *w;
	int first[NR_GENERIC + 1];	/* waiters[first[s] .. first[s+1]) */
	int site_finished[NR_SITES];
	struct shm *shm;
	size_t shm_size;
	int abort;			/* stop everything: a failure */
	int stop_bg;			/* stop the background load */
	int fpa_on, fpa_ever;		/* fail_page_alloc window open / was */
	int hp_paused;			/* hotplug idle for that window */
	int dummy_word;			/* futex_waitv: never woken */
	/* binder */
	int binder_fd;
	char binder_dev[32];
	unsigned char *seen;		/* per transaction code */
	long binder_total;
	int binder_err;
	char binder_errmsg[128];
	pid_t sender;
	long loopers_done[RK_MAX_THREADS];
	pid_t looper_tid[RK_MAX_THREADS];
	pthread_t loopers[RK_MAX_THREADS];
	/* jobstop */
	pid_t job_child;
	long job_stops;
	char job_errmsg[128];
	/* background counters */
	long drops, drop_err, memreclaims, memreclaim_err, hotplug_cycles,
	     hotplug_err, churn_created, churn_eagain, churn_bad, churn_live,
	     futex_spurious, sig_info_lost, nanosleep_eintr;
	pid_t hog;
} g;

static int aborted(void)
{
	return __atomic_load_n(&g.abort, __ATOMIC_ACQUIRE);
}

/* A counter from /proc/vmstat; allocation failures make reads fail: retry. */
static long vmstat(const char *key)
{
	long v = -1;

	for (int i = 0; i < 100 && v < 0; i++) {
		v = rk_vmstat(key);
		if (v < 0)
			rk_sleep_ms(10);
	}
	return v;
}

static long read_long_retry(const char *path)
{
	long v = -1;

	for (int i = 0; i < 100 && v < 0; i++) {
		v = rk_read_long(path);
		if (v < 0)
			rk_sleep_ms(10);
	}
	return v;
}

static void fail_waiter(struct waiter *w, const char *fmt, long a, long b)
{
	if (!w->err[0])
		snprintf(w->err, sizeof(w->err), fmt, a, b);
}

/* How long the driver holds a waiter's next event: mostly not at all. */
static long pick_hold(unsigned int *seed, int nanosleep_site)
{
	unsigned int r = rand_r(seed) % 64;

	if (r == 0)
		return 500 + rand_r(seed) % 1000;	/* long enough to be reclaimed */
	if (r < 8)
		return 20 + rand_r(seed) % 80;
	return nanosleep_site ? 1 + rand_r(seed) % 10 : 0;
}

/* ---------------------------------------------------------------------
 * Generic sites: block once; 0 if the event carried @token.
 */

static int block_futex(struct waiter *w, int token)
{
	struct timespec ts = { WAIT_TIMEOUT_S, 0 };
	int v;

	while ((v = __atomic_load_n(&w->word, __ATOMIC_ACQUIRE)) != token) {
		long r;

		if (v != token - 1) {
			fail_waiter(w, "futex word %ld, want %ld", v, token);
			return -1;
		}
		/* Odd waiters use FUTEX_WAIT with a timeout. */
		r = syscall(SYS_futex, &w->word, FUTEX_WAIT_PRIVATE, token - 1,
			    (w->idx & 1) ? &ts : NULL, NULL, 0);
		if (r && errno == ETIMEDOUT) {
			fail_waiter(w, "futex wait timed out after %lds (cycle %ld)",
				    WAIT_TIMEOUT_S, token);
			return -1;
		}
		if (r && errno != EAGAIN && errno != EINTR) {
			fail_waiter(w, "futex wait: errno %ld (cycle %ld)", errno, token);
			return -1;
		}
		if (!r && __atomic_load_n(&w->word, __ATOMIC_ACQUIRE) != token)
			__atomic_add_fetch(&g.futex_spurious, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

static int block_waitv(struct waiter *w, int token)
{
	struct rk_waitv wv[2] = {
		{ .uaddr = (uintptr_t)&g.dummy_word, .val = 0,
		  .flags = 2 /* FUTEX2_SIZE_U32 */ | 128 /* FUTEX2_PRIVATE */ },
		{ .uaddr = (uintptr_t)&w->word, .val = token - 1,
		  .flags = 2 | 128 },
	};
	int v;

	while ((v = __atomic_load_n(&w->word, __ATOMIC_ACQUIRE)) != token) {
		long r;

		if (v != token - 1) {
			fail_waiter(w, "futex_waitv word %ld, want %ld", v, token);
			return -1;
		}
		r = syscall(SYS_futex_waitv, wv, 2, 0, NULL, CLOCK_MONOTONIC);
		if (r == 0) {
			fail_waiter(w, "futex_waitv woken on the wrong futex (%ld, %ld)",
				    r, token);
			return -1;
		}
		if (r < 0 && errno != EAGAIN && errno != EINTR) {
			fail_waiter(w, "futex_waitv: errno %ld (cycle %ld)", errno, token);
			return -1;
		}
	}
	return 0;
}

static int read_eventfd_token(struct waiter *w, int fd, int token)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != sizeof(v)) {
		fail_waiter(w, "eventfd read: errno %ld (cycle %ld)", errno, token);
		return -1;
	}
	if (v != (uint64_t)token) {
		fail_waiter(w, "eventfd value %ld, want %ld", (long)v, token);
		return -1;
	}
	return 0;
}

static int block_epoll(struct waiter *w, int token)
{
	struct epoll_event ev = { 0 };
	int n;

	do
		n = (w->idx & 1) ? epoll_pwait(w->fd[0], &ev, 1, -1, NULL)
				 : epoll_wait(w->fd[0], &ev, 1, -1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || ev.data.u32 != (uint32_t)w->idx || !(ev.events & EPOLLIN)) {
		fail_waiter(w, "epoll_wait %ld, data %ld", n, ev.data.u32);
		return -1;
	}
	return read_eventfd_token(w, w->fd[1], token);
}

struct pipe_msg {
	uint32_t idx, token;
};

static int read_pipe_token(struct waiter *w, int token)
{
	struct pipe_msg m = { 0, 0 };
	ssize_t n;

	do
		n = read(w->fd[0], &m, sizeof(m));
	while (n < 0 && errno == EINTR);
	if (n != sizeof(m)) {
		fail_waiter(w, "pipe read %ld, errno %ld", n, errno);
		return -1;
	}
	if (m.idx != (uint32_t)w->idx || m.token != (uint32_t)token) {
		fail_waiter(w, "pipe message token %ld, want %ld", m.token, token);
		return -1;
	}
	return 0;
}

static int block_poll(struct waiter *w, int token)
{
	struct pollfd p = { .fd = w->fd[0], .events = POLLIN };
	int n;

	do
		n = (w->idx & 1) ? ppoll(&p, 1, NULL, NULL) : poll(&p, 1, -1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || !(p.revents & POLLIN)) {
		fail_waiter(w, "poll returned %ld, revents %ld", n, p.revents);
		return -1;
	}
	return read_pipe_token(w, token);
}

static int block_select(struct waiter *w, int token)
{
	fd_set set;
	int n;

	do {
		FD_ZERO(&set);
		FD_SET(w->fd[0], &set);
		n = (w->idx & 1) ? pselect(w->fd[0] + 1, &set, NULL, NULL, NULL, NULL)
				 : select(w->fd[0] + 1, &set, NULL, NULL, NULL);
	} while (n < 0 && errno == EINTR);
	if (n != 1 || !FD_ISSET(w->fd[0], &set)) {
		fail_waiter(w, "select returned %ld (cycle %ld)", n, token);
		return -1;
	}
	return read_eventfd_token(w, w->fd[0], token);
}

/* The timer is the event: it must not fire early. */
static int block_nanosleep(struct waiter *w, long hold_ms)
{
	struct timespec t0, t1, d;
	long ns = hold_ms * 1000000L;
	int r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (w->idx & 1) {
		struct timespec rel = { ns / 1000000000L, ns % 1000000000L }, rem;

		while ((r = nanosleep(&rel, &rem)) && errno == EINTR) {
			__atomic_add_fetch(&g.nanosleep_eintr, 1, __ATOMIC_RELAXED);
			rel = rem;
		}
		r = r ? errno : 0;
	} else {
		d.tv_sec = t0.tv_sec + (t0.tv_nsec + ns) / 1000000000L;
		d.tv_nsec = (t0.tv_nsec + ns) % 1000000000L;
		while ((r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &d,
					    NULL)) == EINTR)
			__atomic_add_fetch(&g.nanosleep_eintr, 1, __ATOMIC_RELAXED);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r) {
		fail_waiter(w, "nanosleep: error %ld (%ld ms)", r, hold_ms);
		return -1;
	}
	if ((t1.tv_sec - t0.tv_sec) * 1000000000L + t1.tv_nsec - t0.tv_nsec < ns) {
		fail_waiter(w, "nanosleep of %ld ms returned early (%ld)", hold_ms, 0);
		return -1;
	}
	return 0;
}

static int block_sigwait(struct waiter *w, int token)
{
	struct timespec ts = { WAIT_TIMEOUT_S, 0 };
	siginfo_t si;
	sigset_t set;
	int r;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	do
		r = sigtimedwait(&set, &si, &ts);
	while (r < 0 && errno == EINTR);
	if (r != SIGUSR1) {
		fail_waiter(w, "sigtimedwait returned %ld, errno %ld", r, errno);
		return -1;
	}
	if (si.si_code == SI_QUEUE && si.si_pid == getpid() &&
	    si.si_value.sival_int == token)
		return 0;
	/* Out of sigqueue memory the kernel still delivers, as SI_USER. */
	if (si.si_code == SI_USER && si.si_pid == 0 &&
	    __atomic_load_n(&g.fpa_ever, __ATOMIC_ACQUIRE)) {
		__atomic_add_fetch(&g.sig_info_lost, 1, __ATOMIC_RELAXED);
		return 0;
	}
	fail_waiter(w, "signal with code %ld, value %ld", si.si_code,
		    si.si_value.sival_int);
	return -1;
}

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	unsigned int seed = w->idx * 2654435761u;

	w->tid = syscall(SYS_gettid);
	while (w->done < g.quota && !aborted()) {
		int token = w->done + 1, r;
		long hold = pick_hold(&seed, w->site == S_NANOSLEEP);

		if (w->site == S_NANOSLEEP) {
			r = block_nanosleep(w, hold);
		} else {
			__atomic_store_n(&w->ready_at, rk_now_ms() + hold, __ATOMIC_RELAXED);
			__atomic_store_n(&w->armed, 1, __ATOMIC_RELEASE);
			switch (w->site) {
			case S_FUTEX: r = block_futex(w, token); break;
			case S_WAITV: r = block_waitv(w, token); break;
			case S_EPOLL: r = block_epoll(w, token); break;
			case S_POLL: case S_PIPE:
				r = w->site == S_POLL ? block_poll(w, token)
						      : read_pipe_token(w, token);
				break;
			case S_SELECT: r = block_select(w, token); break;
			default: r = block_sigwait(w, token); break;
			}
		}
		if (r)
			break;
		__atomic_store_n(&w->done, w->done + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&w->finished, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&g.site_finished[w->site], 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* Send w its next event: 0 sent, 1 try again later, -1 broken. */
static int send_event(struct waiter *w)
{
	int token = __atomic_load_n(&w->done, __ATOMIC_ACQUIRE) + 1;
	struct pipe_msg m = { w->idx, token };
	uint64_t v = token;
	siginfo_t si;

	switch (w->site) {
	case S_FUTEX:
	case S_WAITV:
		__atomic_store_n(&w->word, token, __ATOMIC_RELEASE);
		return rk_futex(&w->word, FUTEX_WAKE_PRIVATE, 1) < 0 ? -1 : 0;
	case S_EPOLL:
	case S_SELECT:
		if (write(w->fd[w->site == S_EPOLL], &v, sizeof(v)) == sizeof(v))
			return 0;
		break;
	case S_POLL:
	case S_PIPE:
		if (write(w->fd[1], &m, sizeof(m)) == sizeof(m))
			return 0;
		break;
	case S_SIGWAIT:
		memset(&si, 0, sizeof(si));
		si.si_signo = SIGUSR1;
		si.si_code = SI_QUEUE;
		si.si_pid = getpid();
		si.si_uid = getuid();
		si.si_value.sival_int = token;
		if (!syscall(SYS_rt_tgsigqueueinfo, getpid(), w->tid, SIGUSR1, &si))
			return 0;
		break;
	}
	return errno == ENOMEM || errno == EAGAIN || errno == EINTR ? 1 : -1;
}

/* One driver per generic site: wake every armed waiter once its hold ends. */
static void *driver_main(void *arg)
{
	int s = (intptr_t)arg, n = g.first[s + 1] - g.first[s];

	while (__atomic_load_n(&g.site_finished[s], __ATOMIC_ACQUIRE) < n) {
		long now = rk_now_ms();
		int sent = 0;

		for (int i = g.first[s]; i < g.first[s + 1]; i++) {
			struct waiter *w = &g.w[i];
			int r;

			if (!__atomic_load_n(&w->armed, __ATOMIC_ACQUIRE) ||
			    (now < __atomic_load_n(&w->ready_at, __ATOMIC_RELAXED) &&
			     !aborted()))
				continue;
			/* Disarm first: the waiter re-arms for its next cycle. */
			__atomic_store_n(&w->armed, 0, __ATOMIC_RELEASE);
			r = send_event(w);
			if (r > 0)
				__atomic_store_n(&w->armed, 1, __ATOMIC_RELEASE);
			else if (r < 0)
				fail_waiter(w, "driver could not send: errno %ld (%ld)",
					    errno, 0);
			else
				sent++;
		}
		if (!sent)
			rk_sleep_ms(1);
	}
	return NULL;
}

/* ---------------------------------------------------------------------
 * Binder: loopers of one context manager, a sender process.
 */

static void binder_fail(const char *fmt, long a, long b)
{
	if (!__atomic_exchange_n(&g.binder_err, 1, __ATOMIC_SEQ_CST))
		snprintf(g.binder_errmsg, sizeof(g.binder_errmsg), fmt, a, b);
}

static long binder_io_retry(int fd, void *wbuf, size_t wlen, void *rbuf,
			    size_t rlen)
{
	long r;

	while ((r = rk_binder_io(fd, wbuf, wlen, rbuf, rlen)) < 0 &&
	       (errno == ENOMEM || errno == EAGAIN) && !aborted())
		rk_sleep_ms(1);
	return r;
}

static void *looper_main(void *arg)
{
	long i = (intptr_t)arg;
	uint32_t cmd = BC_ENTER_LOOPER;
	uint32_t rbuf[64];

	g.looper_tid[i] = syscall(SYS_gettid);
	if (binder_io_retry(g.binder_fd, &cmd, sizeof(cmd), NULL, 0) < 0) {
		binder_fail("looper %ld: BC_ENTER_LOOPER errno %ld", i, errno);
		return NULL;
	}
	while (g.loopers_done[i] < g.quota && !aborted()) {
		long n = binder_io_retry(g.binder_fd, NULL, 0, rbuf, sizeof(rbuf));
		char *p = (char *)rbuf, *end = p + (n > 0 ? n : 0);

		if (n < 0) {
			binder_fail("looper %ld: read errno %ld", i, errno);
			break;
		}
		while (p < end) {
			struct binder_transaction_data *tr;
			struct {
				uint32_t cmd;
				binder_uintptr_t buf;
			} __attribute__((packed)) fb = { BC_FREE_BUFFER, 0 };

			cmd = *(uint32_t *)p;
			p += sizeof(cmd);
			if (cmd == BR_NOOP || cmd == BR_SPAWN_LOOPER)
				continue;
			if (cmd != BR_TRANSACTION) {
				binder_fail("looper %ld: unexpected command %#lx", i, cmd);
				return NULL;
			}
			tr = (void *)p;
			p += sizeof(*tr);
			if (tr->code >= (uint64_t)g.binder_total ||
			    __atomic_fetch_add(&g.seen[tr->code], 1, __ATOMIC_SEQ_CST) ||
			    !(tr->flags & TF_ONE_WAY)) {
				binder_fail("transaction %ld: duplicate, out of range or "
					    "not one-way (flags %#lx)", tr->code, tr->flags);
				return NULL;
			}
			fb.buf = tr->data.ptr.buffer;
			if (binder_io_retry(g.binder_fd, &fb, sizeof(fb), NULL, 0) < 0) {
				binder_fail("looper %ld: BC_FREE_BUFFER errno %ld", i, errno);
				return NULL;
			}
			__atomic_add_fetch(&g.shm->binder_recv, 1, __ATOMIC_SEQ_CST);
			__atomic_store_n(&g.loopers_done[i], g.loopers_done[i] + 1,
					 __ATOMIC_RELEASE);
		}
	}
	/* Off the waiting list, so that the rest get the remaining work. */
	cmd = BC_EXIT_LOOPER;
	binder_io_retry(g.binder_fd, &cmd, sizeof(cmd), NULL, 0);
	ioctl(g.binder_fd, BINDER_THREAD_EXIT, 0);
	__atomic_add_fetch(&g.site_finished[S_BINDER], 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* In the sender process: codes 0..total-1, a few in flight at a time. */
static int binder_sender(long total)
{
	struct {
		uint32_t cmd;
		struct binder_transaction_data tr;
	} __attribute__((packed)) w = { .cmd = BC_TRANSACTION };
	int fd = -1;

	while (!__atomic_load_n(&g.shm->sender_go, __ATOMIC_ACQUIRE))
		rk_sleep_ms(5);
	for (int tries = 0; fd < 0 && tries < 1000; tries++) {
		fd = rk_binder_open(g.binder_dev);
		if (fd < 0)
			rk_sleep_ms(10);
	}
	if (fd < 0)
		return 2;
	for (long sent = 0; sent < total;) {
		uint32_t rbuf[32];
		long n;
		int ok = 0;

		if (__atomic_load_n(&g.shm->stop, __ATOMIC_ACQUIRE))
			return 3;
		if (sent - __atomic_load_n(&g.shm->binder_recv, __ATOMIC_ACQUIRE) >= 4) {
			rk_sleep_ms(1);
			continue;
		}
		memset(&w.tr, 0, sizeof(w.tr));
		w.tr.target.handle = 0;
		w.tr.code = sent;
		w.tr.flags = TF_ONE_WAY;
		n = rk_binder_io(fd, &w, sizeof(w), rbuf, sizeof(rbuf));
		if (n < 0 && errno != ENOMEM && errno != EAGAIN)
			return 1;
		/* BR_NOOP, then BR_TRANSACTION_COMPLETE or BR_FAILED_REPLY. */
		for (long k = 0; k < n / 4; k++)
			if (rbuf[k] == BR_TRANSACTION_COMPLETE)
				ok = 1;
		if (ok) {
			sent++;
		} else {
			__atomic_add_fetch(&g.shm->binder_failed, 1, __ATOMIC_RELAXED);
			rk_sleep_ms(1);
		}
	}
	return 0;
}

static int binder_start(int nr)
{
	g.binder_fd = rk_binder_create(g.binder_dev, sizeof(g.binder_dev),
				       "rks", 0);
	if (g.binder_fd < 0)
		return -1;
	g.binder_total = (long)nr * g.quota;
	g.seen = calloc(g.binder_total ? g.binder_total : 1, 1);
	return g.seen ? 0 : -1;
}

/* ---------------------------------------------------------------------
 * Job-control stop: a child process, stopped and continued.
 */

static void *job_thread(void *arg)
{
	int i = (intptr_t)arg;
	struct shm *s = g.shm;

	__atomic_add_fetch(&s->job_ready, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		int gen = __atomic_load_n(&s->job_gen, __ATOMIC_ACQUIRE);

		if (gen < 0)
			break;
		__atomic_store_n(&s->job_ack[i], gen, __ATOMIC_RELEASE);
		/* Shared futex: the parent bumps job_gen and wakes everyone. */
		syscall(SYS_futex, &s->job_gen, FUTEX_WAIT, gen, NULL, NULL, 0);
	}
	return NULL;
}

static int job_child_main(int nr, long stops)
{
	pthread_attr_t attr;
	pthread_t *th = calloc(nr, sizeof(*th));
	int bad = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, rk_thread_stack_size(64 << 10));
	for (int i = 0; i < nr; i++)
		if (pthread_create(&th[i], &attr, job_thread, (void *)(intptr_t)i))
			return 2;
	for (int i = 0; i < nr; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < nr; i++)
		bad += g.shm->job_ack[i] != stops;
	return bad ? 1 : 0;
}

static void job_fail(const char *fmt, long a, long b)
{
	if (!g.job_errmsg[0])
		snprintf(g.job_errmsg, sizeof(g.job_errmsg), fmt, a, b);
	__atomic_store_n(&g.abort, 1, __ATOMIC_RELEASE);
}

static void *job_driver(void *arg)
{
	int nr = g.per_site[S_JOBSTOP], status;
	unsigned int seed = 12345;
	struct shm *s = g.shm;

	while (__atomic_load_n(&s->job_ready, __ATOMIC_ACQUIRE) < nr && !aborted())
		rk_sleep_ms(5);
	for (long stop = 1; stop <= g.quota && !aborted(); stop++) {
		long hold = pick_hold(&seed, 0), t;
		int all;

		if (kill(g.job_child, SIGSTOP))
			return job_fail("SIGSTOP: errno %ld (%ld)", errno, stop), NULL;
		/* Reported only once every thread is in do_signal_stop(). */
		if (waitpid(g.job_child, &status, WUNTRACED) != g.job_child ||
		    !WIFSTOPPED(status) || WSTOPSIG(status) != SIGSTOP)
			return job_fail("stop %ld: wait status %#lx", stop, status), NULL;
		rk_sleep_ms(hold + 5);
		if (kill(g.job_child, SIGCONT))
			return job_fail("SIGCONT: errno %ld (%ld)", errno, stop), NULL;
		if (waitpid(g.job_child, &status, WCONTINUED) != g.job_child ||
		    !WIFCONTINUED(status))
			return job_fail("continue %ld: wait status %#lx", stop, status), NULL;
		/* Every thread must run again: each acknowledges a new generation. */
		__atomic_store_n(&s->job_gen, stop, __ATOMIC_RELEASE);
		syscall(SYS_futex, &s->job_gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		for (t = rk_now_ms(); !aborted(); rk_sleep_ms(1)) {
			all = 1;
			for (int i = 0; i < nr && all; i++)
				all = __atomic_load_n(&s->job_ack[i], __ATOMIC_ACQUIRE) == stop;
			if (all)
				break;
			if (rk_now_ms() - t > g.stall_s * 1000)
				return job_fail("stop %ld: threads not running again "
						"after %ld s", stop, g.stall_s), NULL;
		}
		__atomic_store_n(&g.job_stops, stop, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&s->job_gen, -1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &s->job_gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	if (waitpid(g.job_child, &status, 0) != g.job_child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		job_fail("job-control child: exit status %#lx (%ld)", status, 0);
	g.job_child = 0;
	__atomic_store_n(&g.site_finished[S_JOBSTOP], nr, __ATOMIC_RELEASE);
	return NULL;
}

/* ---------------------------------------------------------------------
 * Background load.
 */

static int bg_stopped(void)
{
	return __atomic_load_n(&g.stop_bg, __ATOMIC_ACQUIRE);
}

static void *drop_caches_loop(void *arg)
{
	while (!bg_stopped()) {
		if (rk_write_file("/proc/sys/vm/drop_caches", "2"))
			g.drop_err++;
		else
			g.drops++;
		rk_sleep_ms(10);
	}
	return NULL;
}

static void *memreclaim_loop(void *arg)
{
	while (!bg_stopped()) {
		int r = rk_write_file(CG_POP "/memory.reclaim", "8M");

		/* -EAGAIN: less than asked could be reclaimed. */
		if (r && r != -EAGAIN)
			g.memreclaim_err++;
		else
			g.memreclaims++;
		rk_sleep_ms(20);
	}
	return NULL;
}

static void *hotplug_loop(void *arg)
{
	while (!bg_stopped()) {
		if (__atomic_load_n(&g.fpa_on, __ATOMIC_ACQUIRE)) {
			__atomic_store_n(&g.hp_paused, 1, __ATOMIC_RELEASE);
			rk_sleep_ms(100);
			continue;
		}
		__atomic_store_n(&g.hp_paused, 0, __ATOMIC_RELEASE);
		if (rk_write_file(CPU1, "0")) {
			g.hotplug_err++;
		} else {
			rk_sleep_ms(g.hotplug_ms / 2);
			while (rk_write_file(CPU1, "1")) {
				g.hotplug_err++;
				rk_sleep_ms(100);
			}
			g.hotplug_cycles++;
		}
		rk_sleep_ms(g.hotplug_ms / 2);
	}
	return NULL;
}

static void *churn_thread(void *arg)
{
	uintptr_t ms = (uintptr_t)arg;
	struct timespec ts = { 0, ms * 1000000L };
	int word = 0;
	long r;

	/* The timeout is the event. */
	do
		r = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
	while (r && errno == EINTR);
	if (!(r && errno == ETIMEDOUT))
		__atomic_add_fetch(&g.churn_bad, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&g.churn_live, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *churn_loop(void *arg)
{
	unsigned int seed = 777;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, rk_thread_stack_size(64 << 10));
	while (!bg_stopped()) {
		pthread_t t;
		int r;

		if (__atomic_load_n(&g.churn_live, __ATOMIC_ACQUIRE) >= g.churn) {
			rk_sleep_ms(1);
			continue;
		}
		__atomic_add_fetch(&g.churn_live, 1, __ATOMIC_SEQ_CST);
		r = pthread_create(&t, &attr, churn_thread,
				   (void *)(uintptr_t)(1 + rand_r(&seed) % 20));
		if (r) {
			__atomic_sub_fetch(&g.churn_live, 1, __ATOMIC_SEQ_CST);
			if (r == EAGAIN || r == ENOMEM)
				g.churn_eagain++;
			else
				g.churn_bad++;
			rk_sleep_ms(5);
			continue;
		}
		g.churn_created++;
	}
	while (__atomic_load_n(&g.churn_live, __ATOMIC_ACQUIRE) > 0)
		rk_sleep_ms(5);
	return NULL;
}

/*
 * The hog fills memory a MiB at a time until the parent is just over its
 * memory.high, which makes the charging tasks reclaim the parent's whole
 * subtree (the population's stacks included), then frees it all. Staying
 * only a little over keeps memory.high's penalty sleeps short: anonymous
 * memory without swap cannot be reclaimed, so a hog far over the limit
 * would be throttled on every page fault.
 */
static int hog_child(long mb)
{
	/* Over the limit even with every population stack reclaimed. */
	long nr = mb + 16 + g.threads / 64, high;
	char **p = calloc(nr, sizeof(*p));

	while (!__atomic_load_n(&g.shm->hog_go, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&g.shm->stop, __ATOMIC_ACQUIRE))
		rk_sleep_ms(10);
	high = read_long_retry(CG "/memory.high");
	while (!__atomic_load_n(&g.shm->stop, __ATOMIC_ACQUIRE)) {
		long n = 0;

		while (n < nr && !__atomic_load_n(&g.shm->stop, __ATOMIC_ACQUIRE)) {
			p[n] = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p[n] == MAP_FAILED)
				break;
			for (long off = 0; off < 1 << 20; off += 4096)
				p[n][off] = 1;
			if (read_long_retry(CG "/memory.current") > high + (1 << 20)) {
				__atomic_add_fetch(&g.shm->hog_over, 1, __ATOMIC_RELAXED);
				n++;
				break;
			}
			n++;
		}
		while (n > 0)
			munmap(p[--n], 1 << 20);
		__atomic_add_fetch(&g.shm->hog_rounds, 1, __ATOMIC_RELAXED);
		rk_sleep_ms(50);
	}
	return 0;
}

/* ---------------------------------------------------------------------
 * Fault injection.
 */

struct fattr {
	const char *dir;
	char saved[10][32];
};

/* Restored in reverse order, probability last (it is zeroed first). */
static const char *const fattr_files[] = {
	"probability", "interval", "times", "verbose", "space", "task-filter",
	"ignore-deferred", "min-order", "ignore-gfp-wait", "ignore-gfp-highmem",
};
#define NR_FATTR_FILES (int)(sizeof(fattr_files) / sizeof(fattr_files[0]))

/* Retried: inside the fail_page_alloc window opening the file may fail. */
static int fattr_write(const char *dir, const char *file, const char *val)
{
	char path[128];
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	for (int i = 0; (r = rk_write_file(path, val)) && i < 200; i++)
		rk_sleep_ms(10);
	return r;
}

static long fattr_read(const char *dir, const char *file)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return read_long_retry(path);
}

static void fattr_save(struct fattr *f, const char *dir)
{
	f->dir = dir;
	for (int i = 0; i < NR_FATTR_FILES; i++) {
		char path[128];
		FILE *fp;

		snprintf(path, sizeof(path), "%s/%s", dir, fattr_files[i]);
		f->saved[i][0] = 0;
		fp = fopen(path, "r");
		if (fp) {
			if (!fgets(f->saved[i], sizeof(f->saved[i]), fp))
				f->saved[i][0] = 0;
			fclose(fp);
		}
	}
}

/* Probability first, so that nothing fails while the rest is restored. */
static void fattr_restore(struct fattr *f)
{
	if (!f->dir)
		return;
	fattr_write(f->dir, "probability", "0");
	for (int i = NR_FATTR_FILES - 1; i >= 0; i--)
		if (f->saved[i][0])
			fattr_write(f->dir, fattr_files[i], f->saved[i]);
}

/* ---------------------------------------------------------------------
 * The test.
 */

static struct fattr fsr, fpa;

static long memcg_kernel_stack(const char *cg)
{
	char path[128];
	long v = -1;

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	for (int i = 0; i < 100 && v < 0; i++) {
		v = rk_read_key(path, "kernel_stack");
		if (v < 0)
			rk_sleep_ms(10);
	}
	return v;
}

static long total_cycles(void)
{
	long t = 0;

	for (int i = 0; i < g.nr_waiters; i++)
		t += __atomic_load_n(&g.w[i].done, __ATOMIC_ACQUIRE);
	t += __atomic_load_n(&g.shm->binder_recv, __ATOMIC_ACQUIRE);
	t += __atomic_load_n(&g.job_stops, __ATOMIC_ACQUIRE) * g.per_site[S_JOBSTOP];
	return t;
}

static long site_progress(int s)
{
	long t = 0;

	if (s == S_BINDER)
		return __atomic_load_n(&g.shm->binder_recv, __ATOMIC_ACQUIRE);
	if (s == S_JOBSTOP)
		return __atomic_load_n(&g.job_stops, __ATOMIC_ACQUIRE);
	for (int i = g.first[s]; i < g.first[s + 1]; i++)
		t += __atomic_load_n(&g.w[i].done, __ATOMIC_ACQUIRE);
	return t;
}

/* What a stuck thread is doing: its state and kernel stack. */
static void dump_task(struct __test_metadata *_metadata, pid_t pid, pid_t tid,
		      const char *what)
{
	char path[96], buf[512], stack[1024] = "";
	const char *state = "?";
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f) && strrchr(buf, ')'))
			state = strrchr(buf, ')') + 2;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stack", pid, tid);
	f = fopen(path, "r");
	if (f) {
		char line[160];

		while (fgets(line, sizeof(line), f) && len + strlen(line) < sizeof(stack)) {
			line[strcspn(line, "\n")] = ' ';
			strcpy(stack + len, line);
			len += strlen(line);
		}
		fclose(f);
	}
	TH_LOG("  %s tid %d state %.1s stack: %s", what, tid, state, stack);
}

static void report_stall(struct __test_metadata *_metadata, int s)
{
	int shown = 0;

	TH_LOG("site %s made no progress for %ld s: a lost wakeup?",
	       site_name[s], g.stall_s);
	if (s < NR_GENERIC) {
		for (int i = g.first[s]; i < g.first[s + 1] && shown < 8; i++) {
			struct waiter *w = &g.w[i];
			char what[96];

			if (w->finished)
				continue;
			snprintf(what, sizeof(what), "waiter %d done %ld armed %d", i,
				 w->done, w->armed);
			dump_task(_metadata, getpid(), w->tid, what);
			shown++;
		}
	} else if (s == S_BINDER) {
		for (int i = 0; i < g.per_site[S_BINDER] && shown < 8; i++) {
			char what[96];

			if (g.loopers_done[i] >= g.quota)
				continue;
			snprintf(what, sizeof(what), "looper %d done %ld", i,
				 g.loopers_done[i]);
			dump_task(_metadata, getpid(), g.looper_tid[i], what);
			shown++;
		}
	} else if (s == S_JOBSTOP && g.job_child) {
		char path[64];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", g.job_child);
		d = opendir(path);
		while (d && (de = readdir(d)) && shown < 8)
			if (de->d_name[0] != '.') {
				dump_task(_metadata, g.job_child, atoi(de->d_name),
					  "job-control child");
				shown++;
			}
		if (d)
			closedir(d);
	}
}

FIXTURE(stress) {
	struct rk_switch sw;
};

FIXTURE_SETUP(stress)
{
	rk_switch_save(&self->sw);
	signal(SIGPIPE, SIG_IGN);
}

FIXTURE_TEARDOWN(stress)
{
	char pid[32];

	/* Whatever happened: no fault injection, cpu1 online, cgroups gone. */
	fattr_restore(&fsr);
	fattr_restore(&fpa);
	/* Children an early failure left behind. */
	if (g.shm)
		g.shm->stop = 1;
	for (int i = 0; i < 3; i++) {
		pid_t *c = i == 0 ? &g.hog : i == 1 ? &g.sender : &g.job_child;

		if (*c > 0) {
			kill(*c, SIGKILL);
			waitpid(*c, NULL, 0);
			*c = 0;
		}
	}
	if (!access(CPU1, F_OK) && rk_read_long(CPU1) == 0)
		rk_write_file(CPU1, "1");
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	rk_write_file("/sys/fs/cgroup/cgroup.procs", pid);
	rk_write_file(CG "/memory.high", "max");
	rmdir(CG_POP);
	rmdir(CG_HOG);
	rmdir(CG);
	rk_switch_restore(&self->sw);
}

static pid_t fork_child(int (*fn)(long), long arg)
{
	pid_t pid = fork();

	if (!pid)
		_exit(fn(arg));
	return pid;
}

static int sender_fn(long total)
{
	return binder_sender(total);
}

static int hog_fn(long mb)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (rk_write_file(CG_HOG "/cgroup.procs", pid))
		return 4;
	return hog_child(mb);
}

static int job_fn(long stops)
{
	return job_child_main(g.per_site[S_JOBSTOP], stops);
}

TEST_F_TIMEOUT(stress, all_sites, 6 * 3600)
{
	long ks_base = rk_kernel_stack_kb(), tasks_base = rk_nr_tasks();
	long fast0, def0, retry0, stacks0, pages0;
	long fast, def, retry, stacks, pages, fsr_hits = 0, fpa_hits = 0;
	long t0, t_end, last_log, fpa_start = 0, fpa_end = 0;
	long last_prog[NR_SITES], last_change[NR_SITES];
	struct rlimit rl = { 65536, 65536 };
	pthread_t drivers[NR_GENERIC], job_drv, bg[4];
	int nbg = 0, have_fsr, have_fpa, have_cpu1, status;
	pthread_attr_t attr;
	char buf[64];
	sigset_t set;
	long cycles, ks_after, slack, memcg_ks, missing = 0, bad_waiters = 0;
	int stalled = -1;

	if (access(SYSCTL, F_OK))
		SKIP(return, "kernel without reclaimable stacks");
	g.threads = rk_cmdline_long("rk.stress_threads=", 1000);
	g.cycles = rk_cmdline_long("rk.stress_cycles=", 100000);
	g.hog_mb = rk_cmdline_long("rk.stress_hog_mb=", 64);
	g.fail_prob = rk_cmdline_long("rk.stress_fail_prob=", 20);
	g.fpa_s = rk_cmdline_long("rk.stress_fpa_seconds=", 10);
	g.fpa_prob = rk_cmdline_long("rk.stress_fpa_prob=", 1);
	g.hotplug_ms = rk_cmdline_long("rk.stress_hotplug_ms=", 2000);
	g.stall_s = rk_cmdline_long("rk.stress_stall_seconds=", 300);
	g.churn = rk_cmdline_long("rk.stress_churn=", 16);
	ASSERT_GE(g.threads, NR_SITES);
	ASSERT_LE(g.threads, 10 * 900L);	/* select's eventfds below FD_SETSIZE */
	g.quota = (g.cycles + g.threads - 1) / g.threads;
	ASSERT_GE(g.quota, 1);
	for (int s = 0; s < NR_SITES; s++)
		g.per_site[s] = g.threads / NR_SITES;
	g.per_site[S_FUTEX] += g.threads % NR_SITES;
	ASSERT_LE(g.per_site[S_FUTEX], RK_MAX_THREADS);
	have_fsr = !access(FSR, F_OK) && g.fail_prob > 0;
	have_fpa = !access(FPA, F_OK) && g.fpa_s > 0 && g.fpa_prob > 0;
	have_cpu1 = !access(CPU1, F_OK) && g.hotplug_ms > 0;
	/* Silence "drop_caches: 2" on the console (bit 4 drops nothing). */
	rk_write_file("/proc/sys/vm/drop_caches", "4");
	TH_LOG("%ld threads (%d per site), %ld cycles each, %ld in all; hog %ld MB; "
	       "churn %ld; fail_stack_repopulate %s; fail_page_alloc %s; cpu1 hotplug %s",
	       g.threads, g.per_site[S_EPOLL], g.quota, g.quota * g.threads,
	       g.hog_mb, g.churn, have_fsr ? "on" : "unavailable",
	       have_fpa ? "windowed" : "unavailable",
	       have_cpu1 ? "on" : "unavailable");

	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));

	/* Cgroups: population and hog side by side under a memory.high. */
	mkdir(CG, 0755);
	ASSERT_EQ(0, rk_write_file(CG "/cgroup.subtree_control", "+memory"));
	mkdir(CG_POP, 0755);
	mkdir(CG_HOG, 0755);
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	ASSERT_EQ(0, rk_write_file(CG_POP "/cgroup.procs", buf));

	g.shm_size = sizeof(struct shm) + g.per_site[S_JOBSTOP] * sizeof(int);
	g.shm = mmap(NULL, g.shm_size, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, g.shm);

	/* Signals: SIGUSR1 only through sigtimedwait, everywhere. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	ASSERT_EQ(0, pthread_sigmask(SIG_BLOCK, &set, NULL));

	/* Processes first, while this one is single-threaded. */
	ASSERT_EQ(0, binder_start(g.per_site[S_BINDER]));
	g.sender = fork_child(sender_fn, g.binder_total);
	ASSERT_LT(0, g.sender);
	g.job_child = fork_child(job_fn, g.quota);
	ASSERT_LT(0, g.job_child);
	g.hog = fork_child(hog_fn, g.hog_mb);
	ASSERT_LT(0, g.hog);

	/* Waiters of the generic sites; select's eventfds first (FD_SETSIZE). */
	g.nr_waiters = 0;
	for (int s = 0; s < NR_GENERIC; s++)
		g.nr_waiters += g.per_site[s];
	g.w = calloc(g.nr_waiters, sizeof(*g.w));
	ASSERT_NE(NULL, g.w);
	for (int s = 0, i = 0; s <= NR_GENERIC; s++) {
		g.first[s] = i;
		if (s < NR_GENERIC)
			i += g.per_site[s];
	}
	for (int s = 0; s < NR_GENERIC; s++)
		for (int i = g.first[s]; i < g.first[s + 1]; i++) {
			g.w[i].site = s;
			g.w[i].idx = i;
			g.w[i].fd[0] = g.w[i].fd[1] = -1;
		}
	for (int i = g.first[S_SELECT]; i < g.first[S_SELECT + 1]; i++) {
		g.w[i].fd[0] = eventfd(0, 0);
		ASSERT_LE(0, g.w[i].fd[0]);
		ASSERT_GT(FD_SETSIZE, g.w[i].fd[0]);
	}
	for (int i = 0; i < g.nr_waiters; i++) {
		struct waiter *w = &g.w[i];

		if (w->site == S_POLL || w->site == S_PIPE) {
			ASSERT_EQ(0, pipe(w->fd));
		} else if (w->site == S_EPOLL) {
			struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

			w->fd[0] = epoll_create1(0);
			w->fd[1] = eventfd(0, 0);
			ASSERT_LE(0, w->fd[0]);
			ASSERT_LE(0, w->fd[1]);
			ASSERT_EQ(0, epoll_ctl(w->fd[0], EPOLL_CTL_ADD, w->fd[1], &ev));
		}
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, rk_thread_stack_size(64 << 10));
	for (int i = 0; i < g.nr_waiters; i++)
		ASSERT_EQ(0, pthread_create(&g.w[i].th, &attr, waiter_main, &g.w[i]));
	for (long i = 0; i < g.per_site[S_BINDER]; i++)
		ASSERT_EQ(0, pthread_create(&g.loopers[i], &attr, looper_main,
					    (void *)(intptr_t)i));
	/* Every waiter has a tid before the sigtimedwait driver needs it. */
	for (int i = 0; i < g.nr_waiters; i++)
		while (!__atomic_load_n(&g.w[i].tid, __ATOMIC_ACQUIRE))
			rk_sleep_ms(1);

	/* The hog, and the parent's memory.high it runs into. */
	snprintf(buf, sizeof(buf), "%ld\n",
		 rk_read_long(CG "/memory.current") + (g.hog_mb << 20));
	ASSERT_EQ(0, rk_write_file(CG "/memory.high", buf));
	__atomic_store_n(&g.shm->hog_go, 1, __ATOMIC_RELEASE);

	fast0 = vmstat("stack_repopulate_fast");
	def0 = vmstat("stack_repopulate_deferred");
	retry0 = vmstat("stack_repopulate_retry");
	stacks0 = vmstat("stack_reclaim_stacks");
	pages0 = vmstat("stack_reclaim_pages");
	if (have_fsr) {
		fattr_save(&fsr, FSR);
		ASSERT_EQ(0, fattr_write(FSR, "verbose", "0"));
		ASSERT_EQ(0, fattr_write(FSR, "interval", "1"));
		ASSERT_EQ(0, fattr_write(FSR, "space", "0"));
		ASSERT_EQ(0, fattr_write(FSR, "task-filter", "N"));
		ASSERT_EQ(0, fattr_write(FSR, "ignore-deferred", "N"));
		snprintf(buf, sizeof(buf), "%ld", FSR_CAP);
		ASSERT_EQ(0, fattr_write(FSR, "times", buf));
		snprintf(buf, sizeof(buf), "%ld", g.fail_prob);
		ASSERT_EQ(0, fattr_write(FSR, "probability", buf));
	}
	if (have_fpa)
		fattr_save(&fpa, FPA);

	t0 = rk_now_ms();
	__atomic_store_n(&g.shm->sender_go, 1, __ATOMIC_RELEASE);
	for (int s = 0; s < NR_GENERIC; s++)
		if (s != S_NANOSLEEP)
			ASSERT_EQ(0, pthread_create(&drivers[s], NULL, driver_main,
						    (void *)(intptr_t)s));
	ASSERT_EQ(0, pthread_create(&job_drv, NULL, job_driver, NULL));
	ASSERT_EQ(0, pthread_create(&bg[nbg++], NULL, drop_caches_loop, NULL));
	ASSERT_EQ(0, pthread_create(&bg[nbg++], NULL, memreclaim_loop, NULL));
	if (g.churn > 0)
		ASSERT_EQ(0, pthread_create(&bg[nbg++], NULL, churn_loop, NULL));
	if (have_cpu1)
		ASSERT_EQ(0, pthread_create(&bg[nbg++], NULL, hotplug_loop, NULL));

	/* Monitor: progress, the fail_page_alloc window, stalls, the end. */
	last_log = t0;
	for (int s = 0; s < NR_SITES; s++) {
		last_prog[s] = -1;
		last_change[s] = t0;
	}
	for (;;) {
		long now = rk_now_ms();
		int finished = 1;

		for (int s = 0; s < NR_SITES; s++) {
			long p = site_progress(s);

			if (__atomic_load_n(&g.site_finished[s], __ATOMIC_ACQUIRE) >=
			    g.per_site[s])
				continue;
			finished = 0;
			if (p != last_prog[s]) {
				last_prog[s] = p;
				last_change[s] = now;
			} else if (now - last_change[s] > g.stall_s * 1000 && stalled < 0) {
				stalled = s;
			}
		}
		if (g.binder_err || g.job_errmsg[0] || stalled >= 0)
			break;
		if (finished)
			break;
		/* fail_page_alloc: 10 s in, for fpa_s seconds. */
		if (have_fpa && !fpa_start && now - t0 > 10000) {
			__atomic_store_n(&g.fpa_on, 1, __ATOMIC_RELEASE);
			/* Let a hotplug step in progress finish first. */
			for (int i = 0; have_cpu1 && i < 1200 &&
			     !__atomic_load_n(&g.hp_paused, __ATOMIC_ACQUIRE); i++)
				rk_sleep_ms(50);
			fattr_write(FPA, "verbose", "0");
			fattr_write(FPA, "interval", "1");
			fattr_write(FPA, "space", "0");
			fattr_write(FPA, "task-filter", "N");
			fattr_write(FPA, "min-order", "0");
			fattr_write(FPA, "ignore-gfp-wait", "N");
			fattr_write(FPA, "ignore-gfp-highmem", "Y");
			snprintf(buf, sizeof(buf), "%ld", FPA_CAP);
			fattr_write(FPA, "times", buf);
			__atomic_store_n(&g.fpa_ever, 1, __ATOMIC_RELEASE);
			snprintf(buf, sizeof(buf), "%ld", g.fpa_prob);
			fattr_write(FPA, "probability", buf);
			fpa_start = rk_now_ms();
		}
		if (fpa_start && !fpa_end && now - fpa_start > g.fpa_s * 1000) {
			fattr_write(FPA, "probability", "0");
			fpa_hits = FPA_CAP - fattr_read(FPA, "times");
			fattr_restore(&fpa);
			fpa_end = rk_now_ms();
			__atomic_store_n(&g.fpa_on, 0, __ATOMIC_RELEASE);
		}
		if (now - last_log >= 10000) {
			cycles = total_cycles();
			TH_LOG("%3lds: %ld cycles (%ld/s); reclaimed %ld stacks; "
			       "repopulated %ld fast, %ld deferred, %ld retries; "
			       "hotplug %ld", (now - t0) / 1000, cycles,
			       cycles * 1000 / (now - t0),
			       vmstat("stack_reclaim_stacks") - stacks0,
			       vmstat("stack_repopulate_fast") - fast0,
			       vmstat("stack_repopulate_deferred") - def0,
			       vmstat("stack_repopulate_retry") - retry0,
			       g.hotplug_cycles);
			last_log = now;
		}
		rk_sleep_ms(250);
	}
	t_end = rk_now_ms();
	cycles = total_cycles();
	if (fpa_start && !fpa_end) {
		fattr_write(FPA, "probability", "0");
		fpa_hits = FPA_CAP - fattr_read(FPA, "times");
		fattr_restore(&fpa);
		__atomic_store_n(&g.fpa_on, 0, __ATOMIC_RELEASE);
	}
	if (have_fsr) {
		fattr_write(FSR, "probability", "0");
		fsr_hits = FSR_CAP - fattr_read(FSR, "times");
		fattr_restore(&fsr);
	}
	if (stalled >= 0)
		report_stall(_metadata, stalled);
	if (stalled >= 0 || g.binder_err || g.job_errmsg[0]) {
		/* Let whatever can still move finish, then fail. */
		__atomic_store_n(&g.abort, 1, __ATOMIC_RELEASE);
		g.shm->stop = 1;
		/* A close runs binder_flush(): waiting loopers return. */
		close(dup(g.binder_fd));
		if (g.job_child)
			kill(g.job_child, SIGKILL);
	}

	/* Background off, children reaped. */
	__atomic_store_n(&g.stop_bg, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < nbg; i++)
		pthread_join(bg[i], NULL);
	g.shm->stop = 1;
	EXPECT_EQ(g.hog, waitpid(g.hog, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	g.hog = 0;
	rk_write_file(CG "/memory.high", "max");
	EXPECT_EQ(g.sender, waitpid(g.sender, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("binder sender: status %#x", status);
	g.sender = 0;
	if (stalled >= 0) {
		/* Threads stuck in the kernel cannot be joined: fail now. */
		ASSERT_LT(stalled, 0) TH_LOG("stall at site %s", site_name[stalled]);
	}
	for (int s = 0; s < NR_GENERIC; s++)
		if (s != S_NANOSLEEP)
			pthread_join(drivers[s], NULL);
	pthread_join(job_drv, NULL);
	for (int i = 0; i < g.nr_waiters; i++)
		pthread_join(g.w[i].th, NULL);
	for (long i = 0; i < g.per_site[S_BINDER]; i++)
		pthread_join(g.loopers[i], NULL);

	fast = vmstat("stack_repopulate_fast") - fast0;
	def = vmstat("stack_repopulate_deferred") - def0;
	retry = vmstat("stack_repopulate_retry") - retry0;
	stacks = vmstat("stack_reclaim_stacks") - stacks0;
	pages = vmstat("stack_reclaim_pages") - pages0;
	TH_LOG("done in %ld s: %ld cycles, %ld cycles/s", (t_end - t0) / 1000,
	       cycles, cycles * 1000 / (t_end - t0 > 0 ? t_end - t0 : 1));
	TH_LOG("reclaimed %ld stacks (%ld pages); repopulated %ld fast, %ld deferred, "
	       "%ld retries", stacks, pages, fast, def, retry);
	TH_LOG("fail_stack_repopulate: %ld hits at %ld%%; fail_page_alloc: %ld hits "
	       "at %ld%% over %ld s", fsr_hits, have_fsr ? g.fail_prob : 0,
	       fpa_hits, have_fpa ? g.fpa_prob : 0,
	       fpa_start ? ((fpa_end ? fpa_end : t_end) - fpa_start) / 1000 : 0);
	TH_LOG("hotplug %ld cycles (%ld errors); drop_caches %ld (%ld errors); "
	       "memory.reclaim %ld (%ld errors); hog %ld rounds (%ld over memory.high); churn %ld threads "
	       "(%ld EAGAIN); binder %ld/%ld (%ld failed sends); job-control "
	       "%ld stops; siginfo lost %ld; spurious futex wakeups %ld",
	       g.hotplug_cycles, g.hotplug_err, g.drops, g.drop_err, g.memreclaims,
	       g.memreclaim_err, g.shm->hog_rounds, g.shm->hog_over, g.churn_created,
	       g.churn_eagain, g.shm->binder_recv, g.binder_total,
	       g.shm->binder_failed, g.job_stops, g.sig_info_lost,
	       g.futex_spurious);

	/* Every waiter did its quota with the right events. */
	for (int i = 0; i < g.nr_waiters; i++) {
		struct waiter *w = &g.w[i];

		if (w->done == g.quota && !w->err[0])
			continue;
		if (bad_waiters++ < 10)
			TH_LOG("%s waiter %d: %ld/%ld cycles: %s", site_name[w->site],
			       i, w->done, g.quota, w->err[0] ? w->err : "-");
	}
	EXPECT_EQ(0, bad_waiters);
	EXPECT_EQ(0, g.binder_err) TH_LOG("binder: %s", g.binder_errmsg);
	EXPECT_EQ(g.binder_total, g.shm->binder_recv);
	for (long c = 0; c < g.binder_total; c++)
		missing += g.seen[c] != 1;
	EXPECT_EQ(0, missing) TH_LOG("binder: %ld codes not seen exactly once", missing);
	for (long i = 0; i < g.per_site[S_BINDER]; i++)
		EXPECT_EQ(g.quota, g.loopers_done[i]);
	EXPECT_EQ(0, g.job_errmsg[0]) TH_LOG("job control: %s", g.job_errmsg);
	EXPECT_EQ(g.quota, g.job_stops);
	EXPECT_EQ(0, g.churn_bad);
	EXPECT_GT(g.shm->hog_over, 0);
	if (g.churn > 0)
		EXPECT_GT(g.churn_created, 0);
	EXPECT_GE(cycles, g.cycles);

	/* Both repopulation paths ran, and the worker retried after its faults. */
	EXPECT_GT(stacks, 0);
	EXPECT_GT(fast, 0);
	EXPECT_GT(def, 0);
	if (have_fsr && def >= 50)
		EXPECT_GT(retry, 0);
	if (have_cpu1) {
		EXPECT_GT(g.hotplug_cycles, 0);
		EXPECT_EQ(1, rk_read_long(CPU1));
	}

	/* Everything gone: the cgroup's stacks drain, KernelStack is back. */
	for (int i = 0; i < g.nr_waiters; i++) {
		if (g.w[i].fd[0] >= 0)
			close(g.w[i].fd[0]);
		if (g.w[i].fd[1] >= 0)
			close(g.w[i].fd[1]);
	}
	close(g.binder_fd);
	snprintf(buf, sizeof(buf), RK_BFS "/%s", g.binder_dev);
	unlink(buf);
	snprintf(buf, sizeof(buf), "%d\n", getpid());
	EXPECT_EQ(0, rk_write_file("/sys/fs/cgroup/cgroup.procs", buf));
	for (int i = 0; i < 400 && (memcg_ks = memcg_kernel_stack(CG_POP)) != 0; i++)
		rk_sleep_ms(50);
	EXPECT_EQ(0, memcg_ks) TH_LOG("population cgroup kernel_stack %ld bytes", memcg_ks);
	/* Kernel threads (workqueue workers) came meanwhile: allow for them. */
	ks_after = rk_wait_kernel_stack(ks_base, rk_stack_slack_kb(tasks_base, SLACK_KB),
					20000);
	slack = rk_stack_slack_kb(tasks_base, SLACK_KB);
	TH_LOG("KernelStack %ld kB at start, %ld kB after (slack %ld kB); took %ld s "
	       "in all", ks_base, ks_after, slack, (rk_now_ms() - t0) / 1000);
	EXPECT_LE(labs(ks_after - ks_base), slack);
}

TEST_HARNESS_MAIN
