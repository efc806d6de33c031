/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The wait sites under test: how a thread blocks at each, how the test
 * wakes it with the site's natural event, and how the thread checks that
 * it got the right result. Shared by the reclaim tests and the demo.
 */
#ifndef RK_SITES_H
#define RK_SITES_H

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <linux/futex.h>
#include "rk_common.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

#define RK_MAX_THREADS	8192

struct rk_pop;

struct rk_site {
	const char *name;
	/* Per-thread setup, in the main thread; 0 on success. */
	int (*setup)(struct rk_pop *pop, int i);
	/* In thread i: block once, return 0 if woken with the right result. */
	int (*block)(struct rk_pop *pop, int i);
	/* Wake every thread with the site's natural event. */
	void (*wake)(struct rk_pop *pop);
};

struct rk_pop {
	const struct rk_site *site;
	int nr;
	int futex_word;
	int shared_fd;			/* select: one eventfd for all */
	int fds[RK_MAX_THREADS][2];	/* pipe, or epoll + eventfd */
	pid_t tids[RK_MAX_THREADS];
	pthread_t threads[RK_MAX_THREADS];
	struct timespec deadline;	/* nanosleep: absolute wake time */
	int wake_all;			/* nanosleep: woken before deadline */
	int binder_fd;			/* binder: the context manager */
	char binder_dev[32];		/* binder: its binderfs device */
	int seen[RK_MAX_THREADS];	/* binder: transactions per index */
	int parked, done, bad;
};

/* How long nanosleep threads sleep unless woken by a signal first. */
static int rk_nanosleep_s = 10;

/* futex */
static int rk_futex_block(struct rk_pop *pop, int i)
{
	while (!__atomic_load_n(&pop->futex_word, __ATOMIC_ACQUIRE)) {
		long r = rk_futex(&pop->futex_word, FUTEX_WAIT_PRIVATE, 0);

		if (r && errno != EAGAIN && errno != EINTR)
			return -1;
	}
	return 0;
}

static void rk_futex_wake(struct rk_pop *pop)
{
	__atomic_store_n(&pop->futex_word, 1, __ATOMIC_RELEASE);
	rk_futex(&pop->futex_word, FUTEX_WAKE_PRIVATE, INT_MAX);
}

/* futex_waitv: one waiter per thread, woken by a plain FUTEX_WAKE */
struct rk_waitv {
	uint64_t val, uaddr;
	uint32_t flags, reserved;
};

static int rk_waitv_block(struct rk_pop *pop, int i)
{
	struct rk_waitv w = {
		.uaddr = (uintptr_t)&pop->futex_word,
		.flags = 2 /* FUTEX2_SIZE_U32 */ | 128 /* FUTEX2_PRIVATE */,
	};

	while (!__atomic_load_n(&pop->futex_word, __ATOMIC_ACQUIRE)) {
		long r = syscall(SYS_futex_waitv, &w, 1, 0, NULL, 0);

		if (r != 0 && errno != EAGAIN && errno != EINTR)
			return -1;
	}
	return 0;
}

/* epoll: each thread waits on its own epoll set holding its own eventfd */
static int rk_epoll_setup(struct rk_pop *pop, int i)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

	pop->fds[i][0] = epoll_create1(0);
	pop->fds[i][1] = eventfd(0, 0);
	if (pop->fds[i][0] < 0 || pop->fds[i][1] < 0)
		return -1;
	return epoll_ctl(pop->fds[i][0], EPOLL_CTL_ADD, pop->fds[i][1], &ev);
}

static int rk_epoll_block(struct rk_pop *pop, int i)
{
	struct epoll_event ev;
	uint64_t v;
	int n;

	do
		n = epoll_wait(pop->fds[i][0], &ev, 1, -1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || ev.data.u32 != (uint32_t)i)
		return -1;
	if (read(pop->fds[i][1], &v, sizeof(v)) != sizeof(v))
		return -1;
	return v == (uint64_t)i + 1 ? 0 : -1;
}

static void rk_eventfd_wake_each(struct rk_pop *pop)
{
	for (int i = 0; i < pop->nr; i++) {
		uint64_t v = i + 1;

		if (write(pop->fds[i][1], &v, sizeof(v)) != sizeof(v))
			__atomic_add_fetch(&pop->bad, 1, __ATOMIC_RELAXED);
	}
}

/* pipe read, and poll on a pipe: each thread has its own pipe */
static int rk_pipe_setup(struct rk_pop *pop, int i)
{
	return pipe(pop->fds[i]);
}

static int rk_pipe_read_check(struct rk_pop *pop, int i)
{
	int v = -1;

	if (read(pop->fds[i][0], &v, sizeof(v)) != sizeof(v))
		return -1;
	return v == i ? 0 : -1;
}

static int rk_poll_block(struct rk_pop *pop, int i)
{
	struct pollfd p = { .fd = pop->fds[i][0], .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, -1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || !(p.revents & POLLIN))
		return -1;
	return rk_pipe_read_check(pop, i);
}

static void rk_pipe_wake_each(struct rk_pop *pop)
{
	for (int i = 0; i < pop->nr; i++)
		if (write(pop->fds[i][1], &i, sizeof(i)) != sizeof(i))
			__atomic_add_fetch(&pop->bad, 1, __ATOMIC_RELAXED);
}

/* select: every thread selects on one shared eventfd (FD_SETSIZE) */
static int rk_select_block(struct rk_pop *pop, int i)
{
	fd_set set;
	int n;

	do {
		FD_ZERO(&set);
		FD_SET(pop->shared_fd, &set);
		n = select(pop->shared_fd + 1, &set, NULL, NULL, NULL);
	} while (n < 0 && errno == EINTR);
	return n == 1 && FD_ISSET(pop->shared_fd, &set) ? 0 : -1;
}

static void rk_shared_eventfd_wake(struct rk_pop *pop)
{
	uint64_t v = 1;

	if (write(pop->shared_fd, &v, sizeof(v)) != sizeof(v))
		pop->bad++;
}

/*
 * nanosleep: absolute deadline, checked on wakeup. The timer is the
 * event; a population woken before its deadline (the demo's long sleeps)
 * is interrupted by SIGUSR2 instead, which ends a sleep with EINTR.
 */
static int rk_nanosleep_block(struct rk_pop *pop, int i)
{
	struct timespec now;
	int r;

	do
		r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
				    &pop->deadline, NULL);
	while (r == EINTR && !__atomic_load_n(&pop->wake_all, __ATOMIC_ACQUIRE));
	if (r == EINTR)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (r)
		return -1;
	return now.tv_sec > pop->deadline.tv_sec ||
	       (now.tv_sec == pop->deadline.tv_sec &&
		now.tv_nsec >= pop->deadline.tv_nsec) ? 0 : -1;
}

static void rk_nanosleep_wake(struct rk_pop *pop)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec + 1 >= pop->deadline.tv_sec)
		return;		/* the timer is the event: wait for it */
	__atomic_store_n(&pop->wake_all, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < pop->nr; i++)
		if (syscall(SYS_tgkill, getpid(), pop->tids[i], SIGUSR2))
			__atomic_add_fetch(&pop->bad, 1, __ATOMIC_RELAXED);
}

/* sigtimedwait: SIGUSR1 blocked in every thread, sent to each */
static int rk_sigwait_block(struct rk_pop *pop, int i)
{
	struct timespec ts = { 600, 0 };
	sigset_t set;
	int r;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	do
		r = sigtimedwait(&set, NULL, &ts);
	while (r < 0 && errno == EINTR);
	return r == SIGUSR1 ? 0 : -1;
}

static void rk_sigwait_wake(struct rk_pop *pop)
{
	for (int i = 0; i < pop->nr; i++)
		if (syscall(SYS_tgkill, getpid(), pop->tids[i], SIGUSR1))
			__atomic_add_fetch(&pop->bad, 1, __ATOMIC_RELAXED);
}

/* eventfd read: a wait that is NOT annotated, for the negative test */
static int rk_eventfd_block(struct rk_pop *pop, int i)
{
	uint64_t v;

	return read(pop->shared_fd, &v, sizeof(v)) == sizeof(v) ? 0 : -1;
}

static void rk_eventfd_sem_wake(struct rk_pop *pop)
{
	uint64_t v = pop->nr;

	if (write(pop->shared_fd, &v, sizeof(v)) != sizeof(v))
		pop->bad++;
}

#include "rk_binder.h"

static const struct rk_site rk_sites[] = {
	{ "futex", NULL, rk_futex_block, rk_futex_wake },
	{ "futex_waitv", NULL, rk_waitv_block, rk_futex_wake },
	{ "epoll", rk_epoll_setup, rk_epoll_block, rk_eventfd_wake_each },
	{ "poll", rk_pipe_setup, rk_poll_block, rk_pipe_wake_each },
	{ "select", NULL, rk_select_block, rk_shared_eventfd_wake },
	{ "nanosleep", NULL, rk_nanosleep_block, rk_nanosleep_wake },
	{ "pipe", rk_pipe_setup, rk_pipe_read_check, rk_pipe_wake_each },
	{ "sigtimedwait", NULL, rk_sigwait_block, rk_sigwait_wake },
	{ "binder", rk_binder_setup, rk_binder_block, rk_binder_wake },
	{ "eventfd", NULL, rk_eventfd_block, rk_eventfd_sem_wake },
};

static inline const struct rk_site *rk_site_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(rk_sites) / sizeof(rk_sites[0]); i++)
		if (!strcmp(rk_sites[i].name, name))
			return &rk_sites[i];
	return NULL;
}

static void rk_nop_handler(int sig)
{
}

static void *rk_thread(void *arg)
{
	struct rk_pop *pop = ((void **)arg)[0];
	int i = (int)(intptr_t)((void **)arg)[1];

	pop->tids[i] = syscall(SYS_gettid);
	__atomic_add_fetch(&pop->parked, 1, __ATOMIC_SEQ_CST);
	if (pop->site->block(pop, i))
		__atomic_add_fetch(&pop->bad, 1, __ATOMIC_SEQ_CST);
	else
		__atomic_add_fetch(&pop->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * Threads of process pid in state S or T, i.e. blocked. With report set,
 * each thread that is not, and the number of threads listed, go to
 * stderr as "#" lines (for a test's failure message).
 */
static inline int rk_blocked_in(pid_t pid, bool report)
{
	char path[320], buf[512], wchan[64];
	int n = 0, listed = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		FILE *f;
		char *p;

		if (de->d_name[0] == '.')
			continue;
		listed++;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", pid,
			 de->d_name);
		f = fopen(path, "r");
		if (!f) {
			if (report)
				fprintf(stderr, "# tid %s: stat: %s\n", de->d_name,
					strerror(errno));
			continue;
		}
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (p && (p[2] == 'S' || p[2] == 'T' || p[2] == 't')) {
			n++;
			continue;
		}
		if (!report)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/wchan", pid,
			 de->d_name);
		f = fopen(path, "r");
		if (!f || !fgets(wchan, sizeof(wchan), f))
			strcpy(wchan, "?");
		if (f)
			fclose(f);
		fprintf(stderr, "# tid %s: state %c, wchan %s\n", de->d_name,
			p ? p[2] : '?', wchan);
	}
	closedir(d);
	if (report)
		fprintf(stderr, "# %d threads listed, %d blocked\n", listed, n);
	return n;
}

static inline int rk_count_blocked_in(pid_t pid)
{
	return rk_blocked_in(pid, false);
}

static inline int rk_count_blocked(void)
{
	return rk_count_blocked_in(getpid());
}

/*
 * Start nr threads blocked at site (the caller's thread is not one). The
 * attr lets a test pick the scheduling policy; shared_fd, if not -1, is
 * the eventfd the select and eventfd sites wait on. 0 on success.
 */
static inline int rk_pop_start_fd(struct rk_pop *pop, const struct rk_site *site,
				  int nr, pthread_attr_t *attr, int shared_fd)
{
	static void *args[RK_MAX_THREADS][2];
	struct rlimit rl = { 4 * RK_MAX_THREADS + 64, 4 * RK_MAX_THREADS + 64 };
	sigset_t set;

	memset(pop, 0, sizeof(*pop));
	pop->site = site;
	pop->nr = nr;
	if (nr > RK_MAX_THREADS || setrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	pop->shared_fd = shared_fd >= 0 ? shared_fd : eventfd(0, EFD_SEMAPHORE);
	clock_gettime(CLOCK_MONOTONIC, &pop->deadline);
	pop->deadline.tv_sec += rk_nanosleep_s;	/* after the reclaim, under TCG too */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	/* No SA_RESTART: SIGUSR2 ends a nanosleep with EINTR. */
	sigaction(SIGUSR2, &(struct sigaction){ .sa_handler = rk_nop_handler }, NULL);
	for (int i = 0; i < nr; i++) {
		if (site->setup && site->setup(pop, i))
			return -1;
		args[i][0] = pop;
		args[i][1] = (void *)(intptr_t)i;
		if (pthread_create(&pop->threads[i], attr, rk_thread, args[i]))
			return -1;
	}
	while (__atomic_load_n(&pop->parked, __ATOMIC_SEQ_CST) < nr)
		rk_sleep_ms(10);
	/* Parked means about to block: wait until the kernel says so. */
	for (int tries = 0; rk_count_blocked() < nr && tries < 500; tries++)
		rk_sleep_ms(20);
	return rk_count_blocked() >= nr ? 0 : -1;
}

static inline int rk_pop_start(struct rk_pop *pop, const struct rk_site *site,
			       int nr, pthread_attr_t *attr)
{
	return rk_pop_start_fd(pop, site, nr, attr, -1);
}

/* Wake everyone, join, close; returns the number that did their work. */
static inline int rk_pop_finish(struct rk_pop *pop)
{
	pop->site->wake(pop);
	for (int i = 0; i < pop->nr; i++)
		pthread_join(pop->threads[i], NULL);
	for (int i = 0; i < pop->nr; i++) {
		if (pop->fds[i][0] > 0)
			close(pop->fds[i][0]);
		if (pop->fds[i][1] > 0)
			close(pop->fds[i][1]);
	}
	close(pop->shared_fd);
	if (pop->site->wake == rk_binder_wake)
		rk_binder_close(pop);
	return pop->bad ? -pop->bad : pop->done;
}

/* Reclaim: drop_caches=2 @rounds times (each a pass at priority 0). */
static inline int rk_drop_caches(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		FILE *f = fopen("/proc/sys/vm/drop_caches", "w");

		if (!f || fputs("2\n", f) < 0 || fclose(f))
			return -1;
	}
	return 0;
}

#endif /* RK_SITES_H */
