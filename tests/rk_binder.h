/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The binder wait site for rk_sites.h: the population's threads are the
 * loopers of a context manager on a binderfs device of its own, blocked
 * in BINDER_WRITE_READ waiting for work. The wake is a child process
 * that sends one one-way transaction per thread, carrying an index in
 * the code field; every index must reach exactly one thread.
 */
#ifndef RK_BINDER_H
#define RK_BINDER_H

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <linux/android/binder.h>
#include <linux/android/binderfs.h>
#include <linux/magic.h>

#define RK_BFS		"/dev/binderfs"
#define RK_BINDER_MAP	(1 << 20)

static int rk_binder_open(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), RK_BFS "/%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || mmap(NULL, RK_BINDER_MAP, PROT_READ, MAP_PRIVATE, fd, 0) ==
	    MAP_FAILED)
		return -1;
	return fd;
}

static long rk_binder_io(int fd, void *wbuf, size_t wlen, void *rbuf,
			 size_t rlen)
{
	struct binder_write_read bwr = {
		.write_size = wlen, .write_buffer = (uintptr_t)wbuf,
		.read_size = rlen, .read_buffer = (uintptr_t)rbuf,
	};
	long r;

	do
		r = ioctl(fd, BINDER_WRITE_READ, &bwr);
	while (r < 0 && errno == EINTR);
	return r < 0 ? r : (long)bwr.read_consumed;
}

/* binderfs, mounted once per mount namespace; 0 when it is there. */
static int rk_binder_mount(void)
{
	struct statfs st;

	if (!statfs(RK_BFS, &st) && st.f_type == BINDERFS_SUPER_MAGIC)
		return 0;
	mkdir(RK_BFS, 0755);
	return mount("binder", RK_BFS, "binder", 0, NULL);
}

/*
 * Create a binderfs device named prefix-pid-seq (into name), open it and
 * become its context manager allowing max looper threads. The fd, or -1.
 */
static int rk_binder_create(char *name, size_t len, const char *prefix,
			    uint32_t max)
{
	static int seq;
	struct binderfs_device dev = { 0 };
	int ctl, err, fd;

	if (rk_binder_mount())
		return -1;
	snprintf(name, len, "%s-%d-%d", prefix, getpid(), seq++);
	snprintf(dev.name, sizeof(dev.name), "%.*s", (int)len, name);
	ctl = open(RK_BFS "/binder-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -1;
	err = ioctl(ctl, BINDER_CTL_ADD, &dev);
	close(ctl);
	if (err)
		return -1;
	fd = rk_binder_open(dev.name);
	if (fd < 0 || ioctl(fd, BINDER_SET_MAX_THREADS, &max) ||
	    ioctl(fd, BINDER_SET_CONTEXT_MGR, 0))
		return -1;
	return fd;
}

/* Thread 0's setup creates the device and becomes its context manager. */
static int rk_binder_setup(struct rk_pop *pop, int i)
{
	if (i)
		return 0;
	pop->binder_fd = rk_binder_create(pop->binder_dev,
					  sizeof(pop->binder_dev), "rk", pop->nr);
	return pop->binder_fd < 0 ? -1 : 0;
}

/* Take one transaction: its code must be an index nobody else got. */
static int rk_binder_take(struct rk_pop *pop, struct binder_transaction_data *tr)
{
	struct {
		uint32_t cmd;
		binder_uintptr_t buf;
	} __attribute__((packed)) fb = { BC_FREE_BUFFER, tr->data.ptr.buffer };

	if (tr->code >= (uint32_t)pop->nr ||
	    __atomic_fetch_add(&pop->seen[tr->code], 1, __ATOMIC_SEQ_CST))
		return -1;
	return rk_binder_io(pop->binder_fd, &fb, sizeof(fb), NULL, 0) < 0 ? -1 : 0;
}

/* A looper: block for work until one transaction arrives. */
static int rk_binder_block(struct rk_pop *pop, int i)
{
	uint32_t enter = BC_ENTER_LOOPER;
	uint32_t rbuf[64];

	if (rk_binder_io(pop->binder_fd, &enter, sizeof(enter), NULL, 0) < 0)
		return -1;
	for (;;) {
		long n = rk_binder_io(pop->binder_fd, NULL, 0, rbuf, sizeof(rbuf));
		char *p = (char *)rbuf, *end = p + (n > 0 ? n : 0);

		if (n < 0)
			return -1;
		while (p < end) {
			uint32_t cmd = *(uint32_t *)p;

			p += sizeof(cmd);
			if (cmd == BR_TRANSACTION)
				return rk_binder_take(pop, (void *)p);
			if (cmd != BR_NOOP && cmd != BR_SPAWN_LOOPER)
				return -1;	/* nothing else is expected */
		}
	}
}

/* The wake: a child process sends one one-way transaction per thread. */
static int rk_binder_send(const char *name, int nr)
{
	struct {
		uint32_t cmd;
		struct binder_transaction_data tr;
	} __attribute__((packed)) w = { .cmd = BC_TRANSACTION };
	uint32_t rbuf[32];
	int fd = rk_binder_open(name);

	if (fd < 0)
		return 2;
	for (int i = 0; i < nr; i++) {
		memset(&w.tr, 0, sizeof(w.tr));
		w.tr.target.handle = 0;
		w.tr.code = i;
		w.tr.flags = TF_ONE_WAY;
		/* The read returns BR_TRANSACTION_COMPLETE. */
		if (rk_binder_io(fd, &w, sizeof(w), rbuf, sizeof(rbuf)) < 0)
			return 1;
	}
	return 0;
}

static void rk_binder_wake(struct rk_pop *pop)
{
	pid_t child = fork();
	int status;

	if (!child)
		_exit(rk_binder_send(pop->binder_dev, pop->nr));
	if (child < 0 || waitpid(child, &status, 0) != child ||
	    !WIFEXITED(status) || WEXITSTATUS(status))
		__atomic_add_fetch(&pop->bad, 1, __ATOMIC_RELAXED);
}

/* After the join: close the context manager and remove its device. */
static void rk_binder_close(struct rk_pop *pop)
{
	char path[128];

	if (!pop->binder_dev[0])
		return;
	close(pop->binder_fd);
	snprintf(path, sizeof(path), RK_BFS "/%s", pop->binder_dev);
	unlink(path);
}

#endif /* RK_BINDER_H */
