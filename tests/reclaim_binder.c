// SPDX-License-Identifier: GPL-2.0
/*
 * Binder's wait for work: NR looper threads of a context manager block in
 * BINDER_WRITE_READ on a fresh binderfs device; reclaim is forced; a child
 * process then sends NR one-way transactions, each carrying its index in
 * the code field. Every index must reach exactly one thread.
 */
#include "rk_sites.h"
#include "kselftest_harness.h"
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/android/binder.h>
#include <linux/android/binderfs.h>

#define NR		500
#define PAGE_KB		4
#define BFS		"/dev/binderfs"
#define MAP_SIZE	(1 << 20)

static int bfd;
static int seen[NR];
static int parked, bad;

static int open_binder(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), BFS "/%s", name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || mmap(NULL, MAP_SIZE, PROT_READ, MAP_PRIVATE, fd, 0) ==
	    MAP_FAILED)
		return -1;
	return fd;
}

static long write_read(int fd, void *wbuf, size_t wlen, void *rbuf, size_t rlen)
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

/* A looper: block for work, take one transaction, free its buffer. */
static void *looper(void *arg)
{
	uint32_t enter = BC_ENTER_LOOPER;
	uint32_t rbuf[64];
	int got = 0;

	if (write_read(bfd, &enter, sizeof(enter), NULL, 0) < 0)
		goto fail;
	__atomic_add_fetch(&parked, 1, __ATOMIC_SEQ_CST);
	while (!got) {
		long n = write_read(bfd, NULL, 0, rbuf, sizeof(rbuf));
		char *p = (char *)rbuf, *end = p + (n > 0 ? n : 0);

		if (n < 0)
			goto fail;
		while (p < end) {
			uint32_t cmd = *(uint32_t *)p;

			p += sizeof(cmd);
			if (cmd == BR_TRANSACTION) {
				struct binder_transaction_data *tr = (void *)p;
				struct {
					uint32_t cmd;
					binder_uintptr_t buf;
				} __attribute__((packed)) fb = {
					BC_FREE_BUFFER, tr->data.ptr.buffer
				};

				if (tr->code >= NR ||
				    __atomic_fetch_add(&seen[tr->code], 1,
						       __ATOMIC_SEQ_CST))
					goto fail;
				p += sizeof(*tr);
				if (write_read(bfd, &fb, sizeof(fb), NULL, 0) < 0)
					goto fail;
				got = 1;
			} else if (cmd != BR_NOOP && cmd != BR_SPAWN_LOOPER) {
				goto fail;	/* nothing else is expected here */
			}
		}
	}
	return NULL;
fail:
	__atomic_add_fetch(&bad, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* The child: send NR one-way transactions to the context manager. */
static int sender(const char *name)
{
	struct {
		uint32_t cmd;
		struct binder_transaction_data tr;
	} __attribute__((packed)) w = { .cmd = BC_TRANSACTION };
	uint32_t rbuf[32];
	int fd = open_binder(name);

	if (fd < 0)
		return 2;
	for (int i = 0; i < NR; i++) {
		memset(&w.tr, 0, sizeof(w.tr));
		w.tr.target.handle = 0;
		w.tr.code = i;
		w.tr.flags = TF_ONE_WAY;
		/* The read returns BR_TRANSACTION_COMPLETE. */
		if (write_read(fd, &w, sizeof(w), rbuf, sizeof(rbuf)) < 0)
			return 1;
	}
	return 0;
}

FIXTURE(binder) {
	int unused;
};

FIXTURE_SETUP(binder)
{
}

FIXTURE_TEARDOWN(binder)
{
}

TEST_F_TIMEOUT(binder, wait_for_work, 300)
{
	struct binderfs_device dev = { .name = "rk-binder" };
	static pthread_t threads[NR];
	long ks_base = rk_kernel_stack_kb(), tasks_base = rk_nr_tasks();
	long ks_blocked, ks_reclaimed, pages0, pages;
	int ctl, i, status, got = 0;
	pid_t child;

	ASSERT_EQ(0, rk_write_file("/proc/sys/vm/reclaimable_stacks", "1"));
	mkdir(BFS, 0755);
	ASSERT_EQ(0, mount("binder", BFS, "binder", 0, NULL));
	ctl = open(BFS "/binder-control", O_RDWR);
	ASSERT_LE(0, ctl);
	ASSERT_EQ(0, ioctl(ctl, BINDER_CTL_ADD, &dev));
	bfd = open_binder(dev.name);
	ASSERT_LE(0, bfd);
	ASSERT_EQ(0, ioctl(bfd, BINDER_SET_MAX_THREADS, &(uint32_t){ NR }));
	ASSERT_EQ(0, ioctl(bfd, BINDER_SET_CONTEXT_MGR, 0));

	for (i = 0; i < NR; i++)
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, looper, NULL));
	while (__atomic_load_n(&parked, __ATOMIC_SEQ_CST) < NR && !bad)
		rk_sleep_ms(10);
	rk_sleep_ms(500);	/* every looper reaches binder_wait_for_work() */
	ASSERT_EQ(0, bad);

	ks_blocked = rk_kernel_stack_kb();
	pages0 = rk_vmstat("stack_reclaim_pages");
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, rk_write_file("/proc/sys/vm/drop_caches", "2"));
	ks_reclaimed = rk_kernel_stack_kb();
	pages = rk_vmstat("stack_reclaim_pages") - pages0;
	TH_LOG("binder       KernelStack %ld -> %ld kB blocked -> %ld kB reclaimed; %ld pages",
	       ks_base, ks_blocked, ks_reclaimed, pages);
	EXPECT_GE(pages, 2L * NR);
	EXPECT_GE(ks_blocked - ks_reclaimed, 2L * NR * PAGE_KB);

	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(sender(dev.name));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (i = 0; i < NR; i++)
		ASSERT_EQ(0, pthread_join(threads[i], NULL));
	for (i = 0; i < NR; i++)
		got += seen[i] == 1;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(NR, got);
	close(bfd);
	close(ctl);
	umount(BFS);
	EXPECT_LE(labs(rk_wait_kernel_stack(ks_base, 96, 10000) - ks_base),
		  rk_stack_slack_kb(tasks_base, 96));
}

TEST_HARNESS_MAIN
