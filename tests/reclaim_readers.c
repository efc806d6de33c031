// SPDX-License-Identifier: GPL-2.0
/*
 * Every reader, with stacks reclaimed.
 *
 * ../shared/DESIGN.md, "Readers of another task's stack": whatever reads a
 * blocked task's stack must stay above its saved SP, and whatever walks a
 * stack's vm area or its pages[] must cope with holes. Here a modest
 * population (rk.readers_threads=N per site, default 32) blocks at six
 * annotated sites, reclaim is forced, and then, with those stacks
 * reclaimed:
 *
 *   - every readable regular file is read, up to 64 KiB each, O_NONBLOCK,
 *     with a per-file alarm: /proc (the entries that are not a PID,
 *     recursively, /proc/sys included; and stack, wchan, syscall, stat,
 *     status, sched and maps of every task), /sys, and /sys/kernel/debug;
 *     only the files of skip_table[] are left out, each with its reason.
 *     Symlinks are not followed. Read errors (EINVAL, EPERM, EIO, ...) are
 *     counted, not failed; a file that blocks past the alarm fails the
 *     test (add it to the table, with a reason, if that is what it does);
 *   - /proc/vmallocinfo is read whole and must list the sparse stacks;
 *   - sysrq t, w, l and m;
 *   - /proc/kcore: a reclaimed stack's holes read as zeros, its top page as
 *     what it holds (the user SP and PC saved in pt_regs);
 *   - perf samples callchains CPU-wide while reclaimed threads are woken;
 *   - every thread is woken by its site's own event and must get the
 *     right result; KernelStack comes back to its baseline.
 *
 * A read that crashes the kernel fails the run on the host (the guest
 * boots with panic_on_oops and panic_on_warn; the console is scanned for
 * splats). None of these readers may wake or repopulate a reclaimed
 * thread: the repopulation counters must not move while they run.
 *
 * Not covered: BPF's bpf_get_task_stack() needs a BPF program loaded (a
 * loader with BTF, or hand-assembled instructions attached to a task
 * iterator); this static test carries no loader, so BPF is left out.
 *
 * The harness forks a process per test case, so each case starts its own
 * population in FIXTURE_SETUP and wakes it in FIXTURE_TEARDOWN.
 */
#define _GNU_SOURCE
#include "rk_inspect.h"
#include "rk_sites.h"
#include "kselftest_harness.h"
#include <elf.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/vfs.h>

#define SYSCTL		"/proc/sys/vm/reclaimable_stacks"
#define KPTR_RESTRICT	"/proc/sys/kernel/kptr_restrict"
#define SYSRQ		"/proc/sys/kernel/sysrq"
#define SYSRQ_TRIGGER	"/proc/sysrq-trigger"
#define DEBUGFS		"/sys/kernel/debug"
#define SCHED_SWITCH_ID	DEBUGFS "/tracing/events/sched/sched_switch/id"

#define NR_SITES	6
#define STACK_PAGES	4	/* THREAD_SIZE / PAGE_SIZE: x86_64, arm64 with 4K pages */
#define READ_CAP	(64 * 1024)
#define FILE_TIMEOUT_S	5
#define MAX_DEPTH	32
#define MAX_LOGGED	16
#define SLACK_KB	96
#define PAGE_SZ		((unsigned long)sysconf(_SC_PAGESIZE))
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const site_names[NR_SITES] = {
	"futex", "epoll", "poll", "nanosleep", "pipe", "sigtimedwait",
};

/*
 * Files the walks do not read, matched with fnmatch() (no FNM_PATHNAME:
 * '*' crosses '/') against the full path. Only files that block or whose
 * reading changes state, or that another case reads on its own. Files
 * without any read permission bit are not opened either (counted as
 * write-only): they have nothing to read, and root could open them anyway.
 * Nothing is skipped for its size: every read stops at 64 KiB.
 */
static const struct skip {
	const char *pattern;
	const char *why;
} skip_table[] = {
	{ "/proc/kmsg",
	  "blocks until the next printk, and consumes what it returns (syslog reader state)" },
	{ "/proc/kcore",
	  "the kernel's address space as ELF: read page by page by kcore_reads_reclaimed_stacks" },
	{ "/proc/sysrq-trigger",
	  "write-only; writing it is sysrq_twlm's job" },
	{ DEBUGFS,
	  "debugfs: walked by its own case, debugfs_files" },
	{ INSPECT,
	  "reports on the tid last written to it: the kcore and vmallocinfo cases write one first" },
	{ "*/tracing/*trace_pipe*",
	  "trace_pipe, per_cpu/cpu*/trace_pipe{,_raw}: block until trace data arrives and consume it" },
	{ "*/tracing/*snapshot_raw",
	  "consuming reader of the snapshot buffer, blocks like trace_pipe_raw" },
	{ "*/tracing/*free_buffer",
	  "write-only; its release shrinks the ring buffer to nothing (and stops tracing with stop-on-free)" },
	{ "*/hid/*/events",
	  "HID debug: blocks until the next input report (no HID device in our guests)" },
	{ "/sys/devices/*/resource[0-9]*",
	  "PCI BARs: reading an I/O BAR reads device registers (read-to-clear status); memory BARs are mmap-only" },
	{ "/sys/devices/*/legacy_io",
	  "raw port I/O of a PCI bus (HAVE_PCI_LEGACY arches): reads every device's registers" },
	{ "/sys/devices/*/legacy_mem",
	  "raw legacy ISA memory of a PCI bus, as above" },
};

static struct rk_pop pops[NR_SITES];
static bool pop_live[NR_SITES];
static pid_t our_tids[NR_SITES * RK_MAX_THREADS];
static int nr_ours;
static char rbuf[READ_CAP + 1];
static volatile sig_atomic_t alarm_fired;

FIXTURE(readers) {
	int nr;				/* threads per site */
	long ks_base, tasks_base, ks_blocked, ks_reclaimed;
	long stacks_reclaimed, pages_reclaimed;
	long repop0;			/* repopulations after the reclaim */
	bool finished;
	bool sysctl_saved, kptr_saved, sysrq_saved;
	char sysctl_prev[32], kptr_prev[32], sysrq_prev[32];
};

/* Helpers */

static void on_alarm(int sig)
{
	(void)sig;
	alarm_fired = 1;
}

static void arm_alarm(int seconds)
{
	struct itimerval it = { .it_value = { seconds, 0 } };

	alarm_fired = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm_alarm(void)
{
	struct itimerval it = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &it, NULL);
}

static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	char *p;

	if (!f)
		return -errno;
	p = fgets(buf, size, f);
	fclose(f);
	if (!p)
		return -EIO;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static bool tid_in(const pid_t *sorted, int n, pid_t tid)
{
	return n > 0 && bsearch(&tid, sorted, n, sizeof(tid), cmp_pid);
}

static bool is_ours(pid_t tid)
{
	return tid_in(our_tids, nr_ours, tid);
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static long repopulations(void)
{
	return rk_vmstat("stack_repopulate_fast") +
	       rk_vmstat("stack_repopulate_deferred");
}

/*
 * Read up to cap bytes of path into buf (NUL-terminated), O_NONBLOCK,
 * under a FILE_TIMEOUT_S alarm: bytes read or -errno; *timed_out if the
 * alarm went off (the read was interrupted, or was that slow).
 */
static long read_capped(const char *path, char *buf, size_t cap,
			bool *timed_out)
{
	size_t total = 0;
	long err = 0;
	int fd;

	arm_alarm(FILE_TIMEOUT_S);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else {
		while (total < cap) {
			ssize_t r = read(fd, buf + total, cap - total);

			if (r < 0 && errno == EINTR && !alarm_fired)
				continue;
			if (r < 0) {
				err = -errno;
				break;
			}
			if (r == 0)
				break;
			total += r;
		}
		close(fd);
	}
	disarm_alarm();
	*timed_out = alarm_fired;
	buf[total] = '\0';
	return err ? err : (long)total;
}

/* The whole file in a malloc()ed, NUL-terminated buffer: length or -errno. */
static long read_whole(const char *path, char **out, int timeout_s,
		       bool *timed_out)
{
	size_t size = 1 << 20, len = 0;
	char *buf = malloc(size + 1);
	long err = 0;
	int fd;

	*out = buf;
	if (!buf)
		return -ENOMEM;
	arm_alarm(timeout_s);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else {
		for (;;) {
			ssize_t r;

			if (len == size) {
				char *nb = size < (64u << 20) ?
					   realloc(buf, 2 * size + 1) : NULL;

				if (!nb) {
					err = -ENOMEM;
					break;
				}
				buf = *out = nb;
				size *= 2;
			}
			r = read(fd, buf + len, size - len);
			if (r < 0 && errno == EINTR && !alarm_fired)
				continue;
			if (r < 0) {
				err = -errno;
				break;
			}
			if (r == 0)
				break;
			len += r;
		}
		close(fd);
	}
	disarm_alarm();
	*timed_out = alarm_fired;
	buf[len] = '\0';
	return err ? err : (long)len;
}

/* debugfs reclaimable_stacks/inspect: write the tid, read one line. */
struct inspect {
	int tid, state, lru;
	unsigned int sp_page;
	int zero;
	char present[16], mapped[16], magic[16];
	bool has_base;
	unsigned long base;
	char line[256];
};

static int inspect_tid(pid_t tid, struct inspect *in)
{
	char cmd[32], state[24], lru[24], *p;
	int n = 0;

	memset(in, 0, sizeof(*in));
	snprintf(cmd, sizeof(cmd), "%d\n", tid);
	if (rk_write_file(INSPECT, cmd) || read_line(INSPECT, in->line, sizeof(in->line)))
		return -1;
	if (sscanf(in->line, "tid %d state %23s lru %23s present %15s mapped %15s "
		   "sp_page %u zero_below_sp %d magic %15s%n", &in->tid,
		   state, lru, in->present, in->mapped, &in->sp_page,
		   &in->zero, in->magic, &n) != 8 || !n ||
	    rk_parse_states(state, lru, &in->state, &in->lru))
		return -1;
	/* " base 0x%lx": the stack's lowest address, newer kernels only. */
	p = strstr(in->line + n, " base ");
	in->has_base = p && sscanf(p, " base %lx", &in->base) == 1;
	return 0;
}

/* The threads the kcore and vmallocinfo cases look at: 2 per site. */
static int sample_tids(FIXTURE_DATA(readers) *self, pid_t *out)
{
	int n = 0;

	for (int s = 0; s < NR_SITES; s++) {
		out[n++] = pops[s].tids[0];
		if (self->nr > 1)
			out[n++] = pops[s].tids[self->nr - 1];
	}
	return n;
}

/* Write back a setting saved by a case, once. */
static void restore_one(bool *saved, const char *path, const char *prev)
{
	if (*saved && !rk_write_file(path, prev))
		*saved = false;
}

static void restore_settings(FIXTURE_DATA(readers) *self)
{
	restore_one(&self->kptr_saved, KPTR_RESTRICT, self->kptr_prev);
	restore_one(&self->sysrq_saved, SYSRQ, self->sysrq_prev);
	restore_one(&self->sysctl_saved, SYSCTL, self->sysctl_prev);
}

static void require_reclaimed(struct __test_metadata *_metadata,
			      FIXTURE_DATA(readers) *self)
{
	long want = (long)NR_SITES * self->nr * 9 / 10;

	ASSERT_GE(self->stacks_reclaimed, want)
		TH_LOG("only %ld stacks reclaimed for %d threads: the readers would meet no reclaimed stack",
		       self->stacks_reclaimed, NR_SITES * self->nr);
}

static void expect_no_repopulation(struct __test_metadata *_metadata,
				   FIXTURE_DATA(readers) *self, const char *what)
{
	long n = repopulations() - self->repop0;

	EXPECT_EQ(0, n)
		TH_LOG("%ld stacks repopulated while %s ran: a reader woke or repopulated a blocked thread",
		       n, what);
}

/* Wake every site still blocked, check each thread's result and KernelStack. */
static void finish_all(struct __test_metadata *_metadata,
		       FIXTURE_DATA(readers) *self)
{
	long after, slack;

	if (self->finished)
		return;
	self->finished = true;
	for (int s = 0; s < NR_SITES; s++) {
		int done;

		if (!pop_live[s])
			continue;
		done = rk_pop_finish(&pops[s]);
		pop_live[s] = false;
		EXPECT_EQ(self->nr, done)
			TH_LOG("%s: %d of %d threads woken by their event got the right result",
			       site_names[s], done, self->nr);
	}
	after = rk_wait_kernel_stack(self->ks_base, SLACK_KB, 10000);
	slack = rk_stack_slack_kb(self->tasks_base, SLACK_KB);
	EXPECT_LE(labs(after - self->ks_base), slack)
		TH_LOG("KernelStack %ld kB after every thread exited, baseline %ld kB, slack %ld kB",
		       after, self->ks_base, slack);
}

FIXTURE_SETUP(readers)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	long stacks0, pages0;
	int total, err = 0, s;
	sigset_t alrm;

	if (access(SYSCTL, F_OK))
		SKIP(return, "%s absent: kernel without CONFIG_RECLAIMABLE_STACK", SYSCTL);
	self->nr = rk_cmdline_long("rk.readers_threads=", 32);
	if (self->nr < 1 || self->nr > RK_MAX_THREADS)
		self->nr = 32;
	total = NR_SITES * self->nr;
	/* The harness's SIGALRM handler is inherited: replace it. */
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, read_line(SYSCTL, self->sysctl_prev, sizeof(self->sysctl_prev)));
	self->sysctl_saved = true;
	/* Setup failures skip the teardown: restore before asserting. */
	err = rk_write_file(SYSCTL, "1");
	if (err) {
		restore_settings(self);
		ASSERT_EQ(0, err) TH_LOG("switching %s on", SYSCTL);
	}
	self->ks_base = rk_kernel_stack_kb();
	self->tasks_base = rk_nr_tasks();

	/* Long enough not to end during the case; woken by SIGUSR2. */
	rk_nanosleep_s = 3600;
	/* Only the main thread takes the per-file alarm. */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	for (s = 0; s < NR_SITES && !err; s++) {
		err = rk_pop_start(&pops[s], rk_site_by_name(site_names[s]),
				   self->nr, NULL);
		pop_live[s] = !err;
	}
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	if (err) {
		restore_settings(self);
		ASSERT_EQ(0, err) TH_LOG("could not block %d threads at %s",
					 self->nr, site_names[s - 1]);
	}
	/* rk_pop_start() counts the process's blocked threads: all of them. */
	for (int i = 0; i < 500 && rk_count_blocked() < total; i++)
		rk_sleep_ms(20);
	if (rk_count_blocked() < total) {
		restore_settings(self);
		ASSERT_TRUE(false) TH_LOG("%d threads started, not all blocked", total);
	}
	nr_ours = 0;
	for (s = 0; s < NR_SITES; s++)
		for (int i = 0; i < self->nr; i++)
			our_tids[nr_ours++] = pops[s].tids[i];
	qsort(our_tids, nr_ours, sizeof(our_tids[0]), cmp_pid);

	stacks0 = rk_vmstat("stack_reclaim_stacks");
	pages0 = rk_vmstat("stack_reclaim_pages");
	if (stacks0 < 0 || pages0 < 0 || repopulations() < 0) {
		restore_settings(self);
		ASSERT_TRUE(false) TH_LOG("no stack_reclaim_*/stack_repopulate_* in /proc/vmstat");
	}
	self->ks_blocked = rk_kernel_stack_kb();
	/* drop_caches reclaims at priority 0, whatever the age: one pass per round would do. */
	for (int round = 0; round < 8; round++) {
		err = rk_drop_caches(2);
		if (err)
			break;
		self->stacks_reclaimed = rk_vmstat("stack_reclaim_stacks") - stacks0;
		if (self->stacks_reclaimed >= total)
			break;
	}
	if (err) {
		restore_settings(self);
		ASSERT_EQ(0, err) TH_LOG("echo 2 > /proc/sys/vm/drop_caches");
	}
	self->pages_reclaimed = rk_vmstat("stack_reclaim_pages") - pages0;
	self->ks_reclaimed = rk_kernel_stack_kb();
	self->repop0 = repopulations();
}

FIXTURE_TEARDOWN(readers)
{
	finish_all(_metadata, self);
	restore_settings(self);
}

/* 1. The population is blocked and its stacks reclaimed. */
TEST_F_TIMEOUT(readers, populations_reclaimed, 120)
{
	int total = NR_SITES * self->nr;
	long want = (long)total * 9 / 10;
	long page_kb = PAGE_SZ / 1024;

	TH_LOG("%d threads, %d at each of futex epoll poll nanosleep pipe sigtimedwait",
	       total, self->nr);
	TH_LOG("KernelStack %ld kB baseline, %ld blocked, %ld reclaimed; %ld stacks, %ld pages reclaimed",
	       self->ks_base, self->ks_blocked, self->ks_reclaimed,
	       self->stacks_reclaimed, self->pages_reclaimed);
	EXPECT_GE(self->stacks_reclaimed, want);
	EXPECT_GE(self->pages_reclaimed, 2 * want);
	EXPECT_GE(self->ks_blocked - self->ks_reclaimed, 2 * want * page_kb);
	if (!access(INSPECT, F_OK)) {
		struct inspect in;
		int reclaimed = 0, failed = 0;

		for (int i = 0; i < nr_ours; i++) {
			if (inspect_tid(our_tids[i], &in))
				failed++;
			else if (in.state == STACK_RECLAIMED)
				reclaimed++;
		}
		TH_LOG("debugfs inspect: %d of our %d threads RECLAIMED", reclaimed, total);
		EXPECT_EQ(0, failed);
		EXPECT_GE(reclaimed, want);
	}
}

/* 2. /proc/vmallocinfo walks every vm area and its pages[]. */
TEST_F_TIMEOUT(readers, vmallocinfo_shows_sparse_stacks, 120)
{
	long want = (long)NR_SITES * self->nr * 9 / 10;
	int lines = 0, sparse = 0, partial = 0, matched = 0, based = 0;
	pid_t tids[2 * NR_SITES];
	int nt = sample_tids(self, tids);
	bool have_inspect = !access(INSPECT, F_OK);
	static bool timed_out;
	char *buf, *line;
	long len;

	require_reclaimed(_metadata, self);
	/* %pK prints real addresses for CAP_SYSLOG readers at 1, hashes at 0. */
	if (!read_line(KPTR_RESTRICT, self->kptr_prev, sizeof(self->kptr_prev))) {
		self->kptr_saved = true;
		rk_write_file(KPTR_RESTRICT, "1");
	}
	len = read_whole("/proc/vmallocinfo", &buf, 60, &timed_out);
	restore_one(&self->kptr_saved, KPTR_RESTRICT, self->kptr_prev);
	ASSERT_FALSE(timed_out);
	ASSERT_LT(0, len) TH_LOG("reading /proc/vmallocinfo: %s",
				 len < 0 ? strerror(-len) : "empty");
	for (line = buf; *line; ) {
		char *end = strchrnul(line, '\n'), *p;

		lines++;
		if (memmem(line, end - line, " sparse", 7)) {
			sparse++;
			p = memmem(line, end - line, " pages=", 7);
			if (p && strtol(p + 7, NULL, 10) < STACK_PAGES)
				partial++;
		}
		line = *end ? end + 1 : end;
	}
	TH_LOG("/proc/vmallocinfo: %ld bytes, %d areas, %d sparse, %d sparse with pages missing",
	       len, lines, sparse, partial);
	EXPECT_GE(partial, want);
	for (int i = 0; have_inspect && i < nt; i++) {
		struct inspect in;
		char key[32], one[512], *at, *end;

		ASSERT_EQ(0, inspect_tid(tids[i], &in));
		if (!in.has_base)
			continue;
		based++;
		snprintf(key, sizeof(key), "0x%016lx-", in.base);
		at = strstr(buf, key);
		EXPECT_NE(NULL, at) TH_LOG("tid %d: no line for its stack at 0x%lx", tids[i], in.base);
		if (!at)
			continue;
		/* Copy the line out: buf is searched again for the next tid. */
		end = strchrnul(at, '\n');
		snprintf(one, sizeof(one), "%.*s", (int)(end - at), at);
		if (!matched++)
			TH_LOG("tid %d (present %s): %s", tids[i], in.present, one);
		EXPECT_NE(NULL, strstr(one, " sparse")) TH_LOG("%s", one);
	}
	if (have_inspect && !based)
		TH_LOG("inspect gives no stack base: lines not matched to threads");
	free(buf);
	expect_no_repopulation(_metadata, self, "reading /proc/vmallocinfo");
}

/* 3. /proc/kcore: holes read as zeros, the rest as what it holds. */
struct kcore {
	int fd, nph;
	Elf64_Phdr *ph;
};

static int kcore_open(struct kcore *kc)
{
	Elf64_Ehdr eh;
	size_t sz;

	kc->ph = NULL;
	kc->fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (kc->fd < 0)
		return -errno;
	if (pread(kc->fd, &eh, sizeof(eh), 0) != sizeof(eh))
		return -EIO;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	kc->nph = eh.e_phnum;
	if (kc->nph == PN_XNUM) {	/* the real count is in section 0 */
		Elf64_Shdr sh;

		if (pread(kc->fd, &sh, sizeof(sh), eh.e_shoff) != sizeof(sh))
			return -EIO;
		kc->nph = sh.sh_info;
	}
	sz = (size_t)kc->nph * sizeof(Elf64_Phdr);
	kc->ph = malloc(sz);
	if (!kc->ph || pread(kc->fd, kc->ph, sz, eh.e_phoff) != (ssize_t)sz)
		return -EIO;
	return 0;
}

/* Read len bytes at kernel address addr: 0, -errno, or -ERANGE if unmapped. */
static int kcore_read(struct kcore *kc, unsigned long addr, void *buf, size_t len)
{
	for (int i = 0; i < kc->nph; i++) {
		Elf64_Phdr *ph = &kc->ph[i];
		ssize_t r;

		if (ph->p_type != PT_LOAD || addr < ph->p_vaddr ||
		    addr - ph->p_vaddr + len > ph->p_filesz)
			continue;
		r = pread(kc->fd, buf, len, ph->p_offset + (addr - ph->p_vaddr));
		return r == (ssize_t)len ? 0 : r < 0 ? -errno : -EIO;
	}
	return -ERANGE;
}

static bool all_zero(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

static bool has_word(const unsigned char *p, size_t len, unsigned long v)
{
	for (size_t i = 0; i + sizeof(v) <= len; i += sizeof(v)) {
		unsigned long w;

		memcpy(&w, p + i, sizeof(w));
		if (w == v)
			return true;
	}
	return false;
}

/* User SP and PC of a blocked thread, from /proc/PID/task/TID/syscall. */
static int user_sp_pc(pid_t tid, unsigned long *sp, unsigned long *pc)
{
	unsigned long a[6];
	char path[64], line[256];
	long nr;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", getpid(), tid);
	if (read_line(path, line, sizeof(line)))
		return -1;
	/* "nr arg1..arg6 sp pc": nr in decimal, the rest 0x-prefixed hex */
	return sscanf(line, "%ld %lx %lx %lx %lx %lx %lx %lx %lx", &nr, &a[0],
		      &a[1], &a[2], &a[3], &a[4], &a[5], sp, pc) == 9 ? 0 : -1;
}

TEST_F_TIMEOUT(readers, kcore_reads_reclaimed_stacks, 120)
{
	unsigned long psz = PAGE_SZ;
	unsigned char *page = malloc(psz);
	pid_t tids[2 * NR_SITES];
	int nt = sample_tids(self, tids), checked = 0, holes = 0, r;
	struct kcore kc;

	ASSERT_NE(NULL, page);
	require_reclaimed(_metadata, self);
	if (access("/proc/kcore", F_OK))
		SKIP(return, "no /proc/kcore (CONFIG_PROC_KCORE off)");
	if (access(INSPECT, F_OK))
		SKIP(return, "no %s (CONFIG_RECLAIMABLE_STACK_DEBUG off): no stack address to read",
		     INSPECT);
	r = kcore_open(&kc);
	ASSERT_EQ(0, r) TH_LOG("/proc/kcore as ELF64: %s", strerror(-r));
	for (int i = 0; i < nt; i++) {
		struct inspect in, again;
		unsigned long usp, upc, top;
		int np;

		ASSERT_EQ(0, inspect_tid(tids[i], &in)) TH_LOG("inspect tid %d", tids[i]);
		ASSERT_TRUE(in.has_base)
			TH_LOG("%s has no \"base 0x...\" field: this kernel lacks the change that reports a stack's lowest address (line: %s)",
			       INSPECT, in.line);
		if (in.state != STACK_RECLAIMED) {
			TH_LOG("tid %d not reclaimed (%s): not checked", tids[i], in.line);
			continue;
		}
		np = strlen(in.present);
		ASSERT_LT(0, np);
		ASSERT_EQ('1', in.present[np - 1]);
		ASSERT_EQ(0, user_sp_pc(tids[i], &usp, &upc))
			TH_LOG("/proc/%d/task/%d/syscall", getpid(), tids[i]);
		top = in.base + (np - 1) * psz;
		r = kcore_read(&kc, top, page, psz);
		EXPECT_EQ(0, r) TH_LOG("tid %d: reading its top stack page 0x%lx through /proc/kcore: %s",
				       tids[i], top, strerror(-r));
		if (!r) {
			EXPECT_FALSE(all_zero(page, psz))
				TH_LOG("tid %d: top stack page 0x%lx (present %s) reads as zeros through /proc/kcore: the VM_SPARSE stack was read as a hole",
				       tids[i], top, in.present);
			EXPECT_TRUE(has_word(page, psz, usp))
				TH_LOG("tid %d: user SP 0x%lx (pt_regs) not in its top stack page",
				       tids[i], usp);
			EXPECT_TRUE(has_word(page, psz, upc))
				TH_LOG("tid %d: user PC 0x%lx (pt_regs) not in its top stack page",
				       tids[i], upc);
		}
		for (int p = 0; p < np; p++) {
			unsigned long addr = in.base + p * psz;

			if (in.present[p] != '0')
				continue;
			holes++;
			r = kcore_read(&kc, addr, page, psz);
			EXPECT_EQ(0, r) TH_LOG("tid %d: reading reclaimed page %d (0x%lx) through /proc/kcore: %s",
					       tids[i], p, addr, strerror(-r));
			if (!r)
				EXPECT_TRUE(all_zero(page, psz))
					TH_LOG("tid %d: reclaimed page %d (0x%lx) does not read as zeros",
					       tids[i], p, addr);
		}
		ASSERT_EQ(0, inspect_tid(tids[i], &again));
		EXPECT_EQ(STACK_RECLAIMED, again.state)
			TH_LOG("tid %d left RECLAIMED while /proc/kcore read its stack", tids[i]);
		EXPECT_STREQ(in.present, again.present);
		checked++;
	}
	ASSERT_LT(0, checked) TH_LOG("none of the sampled threads was reclaimed");
	TH_LOG("%d reclaimed stacks read through /proc/kcore: top pages and %d holes",
	       checked, holes);
	free(kc.ph);
	close(kc.fd);
	free(page);
	expect_no_repopulation(_metadata, self, "reading /proc/kcore");
}

/* 4. The stack dumpers: sysrq t (every task), w (blocked), l (CPUs), m. */
static int ours_in_klog(void)
{
	int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), n, found = 0;
	char *buf, key[32];

	if (size <= 0 || !(buf = malloc(size + 1)))
		return -1;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, size);
	if (n < 0) {
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	/* sched_show_task(): "task:%-15.15s state:%c stack:%-5lu pid:%-5d ..." */
	for (int i = 0; i < nr_ours; i++) {
		snprintf(key, sizeof(key), " pid:%d ", our_tids[i]);
		found += strstr(buf, key) != NULL;
	}
	free(buf);
	return found;
}

TEST_F_TIMEOUT(readers, sysrq_twlm, 300)
{
	static const char keys[] = "twlm";

	require_reclaimed(_metadata, self);
	if (access(SYSRQ_TRIGGER, F_OK))
		SKIP(return, "no %s (CONFIG_MAGIC_SYSRQ off)", SYSRQ_TRIGGER);
	ASSERT_EQ(0, read_line(SYSRQ, self->sysrq_prev, sizeof(self->sysrq_prev)));
	self->sysrq_saved = true;
	ASSERT_EQ(0, rk_write_file(SYSRQ, "1"));
	for (const char *k = keys; *k; k++) {
		char cmd[2] = { *k, '\0' };

		EXPECT_EQ(0, rk_write_file(SYSRQ_TRIGGER, cmd)) TH_LOG("sysrq %c", *k);
		if (*k == 't') {
			int found = ours_in_klog();

			TH_LOG("sysrq t: %d of our %d reclaimed threads in the kernel log",
			       found, nr_ours);
			EXPECT_LT(0, found);
		}
	}
	restore_one(&self->sysrq_saved, SYSRQ, self->sysrq_prev);
	expect_no_repopulation(_metadata, self, "sysrq t, w, l, m");
}

/* 5-7. Every readable file under /proc, /sys and /sys/kernel/debug. */
struct walk {
	long files, bytes, truncated, failed, timeouts, write_only, links;
	long dirs, dir_failed, stat_failed, other, too_long, too_deep;
	long err[256];				/* read/open failures by errno */
	long skip_hits[NELEM(skip_table)];
	int nr_logged;
	char timed_out[MAX_LOGGED][256];
	/* per-task files */
	long tasks, ours_tasks, ours_failed, ours_stack_empty, ours_wchan_named;
};

static long read_one(struct walk *w, const char *path)
{
	bool to;
	long r = read_capped(path, rbuf, READ_CAP, &to);

	if (to) {
		w->timeouts++;
		if (w->nr_logged < MAX_LOGGED)
			snprintf(w->timed_out[w->nr_logged++], sizeof(w->timed_out[0]),
				 "%s", path);
	}
	if (r < 0) {
		w->failed++;
		w->err[-r < (long)NELEM(w->err) ? -r : 0]++;
	} else {
		w->files++;
		w->bytes += r;
		w->truncated += r >= READ_CAP;
	}
	return r;
}

static bool skipped_by_table(struct walk *w, const char *path)
{
	for (size_t i = 0; i < NELEM(skip_table); i++)
		if (!fnmatch(skip_table[i].pattern, path, 0)) {
			w->skip_hits[i]++;
			return true;
		}
	return false;
}

/* Everything under path (a directory, len its length), depth-first. */
static void walk_tree(struct walk *w, char *path, size_t len, int depth,
		      bool skip_pids)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		w->dir_failed++;
		return;
	}
	w->dirs++;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		unsigned char type = de->d_type;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (skip_pids && all_digits(de->d_name))
			continue;		/* /proc/PID: walk_tasks() */
		if (len + 1 + n >= PATH_MAX) {
			w->too_long++;
			continue;
		}
		path[len] = '/';
		memcpy(path + len + 1, de->d_name, n + 1);
		if (skipped_by_table(w, path))
			goto next;
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
				w->stat_failed++;
				goto next;
			}
			type = IFTODT(st.st_mode);
		}
		if (type == DT_DIR) {
			if (depth < MAX_DEPTH)
				walk_tree(w, path, len + 1 + n, depth + 1, false);
			else
				w->too_deep++;
		} else if (type == DT_LNK) {
			w->links++;		/* not followed: no loops */
		} else if (type == DT_REG) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
				w->stat_failed++;
			else if (!(st.st_mode & 0444))
				w->write_only++;
			else
				read_one(w, path);
		} else {
			w->other++;
		}
next:
		path[len] = '\0';
	}
	closedir(d);
}

static const char *const task_files[] = {
	"stack", "wchan", "syscall", "stat", "status", "sched", "maps",
};

/* /proc/PID/task/TID/{stack,wchan,syscall,stat,status,sched,maps}, every task. */
static void walk_tasks(struct __test_metadata *_metadata, struct walk *w)
{
	DIR *pd = opendir("/proc"), *td;
	struct dirent *pe, *te;
	char path[640];
	int logged = 0;

	if (!pd) {
		w->dir_failed++;
		return;
	}
	while ((pe = readdir(pd))) {
		if (!all_digits(pe->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", pe->d_name);
		td = opendir(path);
		if (!td) {			/* exited meanwhile */
			w->dir_failed++;
			continue;
		}
		while ((te = readdir(td))) {
			pid_t tid;
			bool ours;

			if (!all_digits(te->d_name))
				continue;
			tid = atoi(te->d_name);
			ours = is_ours(tid);
			w->tasks++;
			w->ours_tasks += ours;
			for (size_t f = 0; f < NELEM(task_files); f++) {
				long r;

				snprintf(path, sizeof(path), "/proc/%s/task/%s/%s",
					 pe->d_name, te->d_name, task_files[f]);
				r = read_one(w, path);
				if (!ours)
					continue;
				if (r < 0) {
					w->ours_failed++;
					if (logged++ < MAX_LOGGED)
						TH_LOG("%s: %s", path, strerror(-r));
				}
				if (f == 0 && (r <= 0 || !strstr(rbuf, "[<")))
					w->ours_stack_empty++;
				if (f == 1 && r > 0 && strcmp(rbuf, "0"))
					w->ours_wchan_named++;
			}
		}
		closedir(td);
	}
	closedir(pd);
}

static void report(struct __test_metadata *_metadata, const char *what,
		   struct walk *w, double secs)
{
	char errs[512];
	size_t at = 0;
	long skipped = 0;

	TH_LOG("%s: %ld files read (%ld bytes, %ld cut at 64 KiB) in %.1f s; %ld read errors; %ld timed out",
	       what, w->files, w->bytes, w->truncated, secs, w->failed, w->timeouts);
	for (size_t i = 0; i < NELEM(skip_table); i++)
		skipped += w->skip_hits[i];
	TH_LOG("%s: not opened: %ld write-only, %ld by the skip table, %ld not stat-able; %ld symlinks not followed; %ld dirs (%ld unreadable); %ld other",
	       what, w->write_only, skipped, w->stat_failed, w->links, w->dirs,
	       w->dir_failed, w->other + w->too_long + w->too_deep);
	for (size_t e = 0; e < NELEM(w->err); e++) {
		const char *name = e ? strerrorname_np(e) : NULL;

		if (w->err[e] && at < sizeof(errs) - 32)
			at += snprintf(errs + at, sizeof(errs) - at, " %s %ld",
				       name ? name : "errno>255", w->err[e]);
	}
	if (at)
		TH_LOG("%s: read errors by errno:%s", what, errs);
	for (size_t i = 0; i < NELEM(skip_table); i++)
		if (w->skip_hits[i])
			TH_LOG("%s: skipped %ld x %s: %s", what, w->skip_hits[i],
			       skip_table[i].pattern, skip_table[i].why);
	for (int i = 0; i < w->nr_logged; i++)
		TH_LOG("%s: blocked past %d s, not in the skip table: %s", what,
		       FILE_TIMEOUT_S, w->timed_out[i]);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void walk_and_check(struct __test_metadata *_metadata,
			   FIXTURE_DATA(readers) *self, const char *root,
			   bool proc)
{
	struct walk *w = calloc(1, sizeof(*w));
	char path[PATH_MAX];
	double t0 = now_s();

	ASSERT_NE(NULL, w);
	require_reclaimed(_metadata, self);
	snprintf(path, sizeof(path), "%s", root);
	walk_tree(w, path, strlen(path), 0, proc);
	if (proc)
		walk_tasks(_metadata, w);
	report(_metadata, root, w, now_s() - t0);
	if (proc) {
		TH_LOG("/proc/PID/task/TID: %ld tasks, %ld of them ours; of ours %ld with an empty stack file, %ld with wchan named",
		       w->tasks, w->ours_tasks, w->ours_stack_empty, w->ours_wchan_named);
		EXPECT_EQ(nr_ours, w->ours_tasks);
		EXPECT_EQ(0, w->ours_failed);
		EXPECT_EQ(0, w->ours_stack_empty);
	}
	EXPECT_LT(100, w->files);
	EXPECT_EQ(0, w->timeouts);
	free(w);
	expect_no_repopulation(_metadata, self, root);
}

TEST_F_TIMEOUT(readers, proc_files, 600)
{
	walk_and_check(_metadata, self, "/proc", true);
}

TEST_F_TIMEOUT(readers, sys_files, 600)
{
	walk_and_check(_metadata, self, "/sys", false);
}

TEST_F_TIMEOUT(readers, debugfs_files, 600)
{
	struct statfs sf;

	if (statfs(DEBUGFS, &sf) || sf.f_type != DEBUGFS_MAGIC)
		SKIP(return, "debugfs not mounted on %s", DEBUGFS);
	walk_and_check(_metadata, self, DEBUGFS, false);
}

/* 8. perf callchains, CPU-wide, while reclaimed threads are woken. */
struct perf_tally {
	long samples, kernel_chains, user_chains, frames, woken, lost;
};

static void ring_copy(const char *data, size_t size, uint64_t off, void *dst,
		      size_t len)
{
	size_t at = off % size, first = len < size - at ? len : size - at;

	memcpy(dst, data + at, first);
	memcpy((char *)dst + first, data, len - first);
}

/*
 * A thread woken here runs, returns and exits: its last switch-out is in
 * do_task_dead(), after release_task() detached its pid, so the sample's
 * TID is 0 there. The tracepoint's own prev_pid (task->pid) still names
 * it: find that field's offset in the raw record, -1 if unknown.
 */
static int sched_switch_prev_pid_offset(void)
{
	FILE *f = fopen(DEBUGFS "/tracing/events/sched/sched_switch/format", "r");
	char line[256], *p;
	int off = -1, size = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "field:pid_t prev_pid;") || !(p = strstr(line, "offset:")))
			continue;
		if (sscanf(p, "offset:%d; size:%d;", &off, &size) != 2 || size != 4)
			off = -1;
		break;
	}
	if (f)
		fclose(f);
	return off;
}

/* raw_prev: offset of prev_pid in PERF_SAMPLE_RAW data, or -1: no raw data. */
static void perf_drain(void *ring, size_t psz, size_t size, int raw_prev,
		       const pid_t *woken, int nwoken, struct perf_tally *t)
{
	static uint64_t rec[65536 / 8];
	struct perf_event_mmap_page *mp = ring;
	const char *data = (const char *)ring + psz;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;

	while (tail < head) {
		struct perf_event_header h;

		ring_copy(data, size, tail, &h, sizeof(h));
		if (h.size < sizeof(h))
			break;
		ring_copy(data, size, tail, rec, h.size);
		if (h.type == PERF_RECORD_SAMPLE && h.size >= 32) {
			/* ip; pid, tid; nr; ips[nr] */
			const uint64_t *p = rec + 1;
			uint64_t nr = p[2], words = (h.size - 8) / 8 - 3;
			struct { uint32_t pid, tid; } pt;
			long kf = 0, uf = 0;
			bool kernel = false;

			memcpy(&pt, &p[1], sizeof(pt));
			if (raw_prev >= 0 && nr < words) {
				/* after ips[nr]: u32 size, then the raw record */
				const char *raw = (const char *)&p[3 + nr] + 4;
				uint32_t raw_size;
				int32_t prev;

				memcpy(&raw_size, &p[3 + nr], 4);
				if ((uint64_t)raw_prev + 4 <= raw_size &&
				    raw + raw_size <= (const char *)rec + h.size) {
					memcpy(&prev, raw + raw_prev, 4);
					pt.tid = prev;
				}
			}
			if (nr > words)
				nr = words;
			for (uint64_t i = 0; i < nr; i++) {
				uint64_t ip = p[3 + i];

				if (ip >= (uint64_t)PERF_CONTEXT_MAX)
					kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
				else if (kernel)
					kf++;
				else
					uf++;
			}
			t->samples++;
			t->kernel_chains += kf > 0;
			t->user_chains += uf > 0;
			t->frames += kf;
			t->woken += tid_in(woken, nwoken, pt.tid);
		} else if (h.type == PERF_RECORD_LOST && h.size >= 24) {
			t->lost += rec[2];		/* header, id, lost */
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

TEST_F_TIMEOUT(readers, perf_callchains_across_wakeups, 180)
{
	static const int wake_sites[] = { 0, 1, 4 };	/* futex, epoll, pipe */
	size_t psz = PAGE_SZ, ring_pages = 64, ring_len = (ring_pages + 1) * psz;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF), tp = rk_read_long(SCHED_SWITCH_ID);
	int fds[64], nfd = 0, err = 0, nwoken = 0;
	static pid_t woken[NR_SITES * RK_MAX_THREADS];
	struct perf_tally t = { 0 };
	struct perf_event_attr a;
	const char *what = "";
	void *rings[64];
	int raw_prev = -1;

	require_reclaimed(_metadata, self);
	if (ncpu > 64)
		ncpu = 64;
	/* sched:sched_switch if tracing is there, else context-switches. */
	for (int attempt = 0; attempt < 2 && !nfd; attempt++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		if (attempt == 0) {
			if (tp <= 0)
				continue;
			a.type = PERF_TYPE_TRACEPOINT;
			a.config = tp;
			raw_prev = sched_switch_prev_pid_offset();
			what = "tracepoint sched:sched_switch";
		} else {
			a.type = PERF_TYPE_SOFTWARE;
			a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
			raw_prev = -1;
			what = "software event context-switches";
		}
		a.sample_period = 1;
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
		if (raw_prev >= 0)
			a.sample_type |= PERF_SAMPLE_RAW;
		a.disabled = 1;
		for (int cpu = 0; cpu < ncpu; cpu++) {
			int fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1,
					 PERF_FLAG_FD_CLOEXEC);
			void *ring;

			if (fd < 0) {
				err = errno;
				continue;
			}
			ring = mmap(NULL, ring_len, PROT_READ | PROT_WRITE,
				    MAP_SHARED, fd, 0);
			if (ring == MAP_FAILED) {
				err = errno;
				close(fd);
				continue;
			}
			fds[nfd] = fd;
			rings[nfd++] = ring;
		}
	}
	if (!nfd)
		SKIP(return, "perf_event_open/mmap CPU-wide: %s (CONFIG_PERF_EVENTS off?)",
		     strerror(err));
	TH_LOG("perf: %s, callchains, %d CPUs", what, nfd);
	for (int i = 0; i < nfd; i++)
		ASSERT_EQ(0, ioctl(fds[i], PERF_EVENT_IOC_ENABLE, 0));
	for (size_t k = 0; k < NELEM(wake_sites); k++) {
		int s = wake_sites[k], done;

		for (int i = 0; i < self->nr; i++)
			woken[nwoken++] = pops[s].tids[i];
		done = rk_pop_finish(&pops[s]);
		pop_live[s] = false;
		EXPECT_EQ(self->nr, done)
			TH_LOG("%s: %d of %d threads woken by their event got the right result",
			       site_names[s], done, self->nr);
	}
	rk_sleep_ms(100);
	for (int i = 0; i < nfd; i++)
		ioctl(fds[i], PERF_EVENT_IOC_DISABLE, 0);
	qsort(woken, nwoken, sizeof(woken[0]), cmp_pid);
	for (int i = 0; i < nfd; i++) {
		perf_drain(rings[i], psz, ring_pages * psz, raw_prev, woken, nwoken, &t);
		munmap(rings[i], ring_len);
		close(fds[i]);
	}
	TH_LOG("perf: %ld samples, %ld with kernel callchains (%ld frames), %ld with user callchains, %ld switching out one of the %d woken threads (%s), %ld lost",
	       t.samples, t.kernel_chains, t.frames, t.user_chains, t.woken, nwoken,
	       raw_prev >= 0 ? "by prev_pid" : "by sample TID", t.lost);
	EXPECT_LT(0, t.samples);
	EXPECT_LT(0, t.kernel_chains);
	/* Without prev_pid an exiting thread's samples carry TID 0. */
	if (raw_prev >= 0 && !t.lost)
		EXPECT_LT(0, t.woken);
}

/* 9. Every thread woken by its site's event gets the right result. */
TEST_F_TIMEOUT(readers, wake_every_site, 120)
{
	require_reclaimed(_metadata, self);
	finish_all(_metadata, self);
}

TEST_HARNESS_MAIN
