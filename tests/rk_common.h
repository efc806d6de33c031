/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the in-guest tests: reading /proc counters and
 * parking threads in a futex wait.
 */
#ifndef RK_COMMON_H
#define RK_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Pin the calling thread (threads it creates inherit it); 0 or -1. */
static inline int rk_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Value of "key" in a "key value" or "key: value kB" file, or -1. */
static inline long rk_read_key(const char *path, const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, n) || (line[n] != ' ' && line[n] != ':'))
			continue;
		val = strtol(line + n + 1 + (line[n] == ':'), NULL, 10);
		break;
	}
	fclose(f);
	return val;
}

static inline long rk_kernel_stack_kb(void)
{
	return rk_read_key("/proc/meminfo", "KernelStack");
}

static inline long rk_vmstat(const char *key)
{
	return rk_read_key("/proc/vmstat", key);
}

static inline long rk_futex(int *uaddr, int op, int val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* CLOCK_MONOTONIC in milliseconds. */
static inline long rk_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static inline void rk_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Tasks in the system (the total of /proc/loadavg's "running/total"). */
static inline long rk_nr_tasks(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	long running = 0, total = -1;

	if (f) {
		if (fscanf(f, "%*s %*s %*s %ld/%ld", &running, &total) != 2)
			total = -1;
		fclose(f);
	}
	return total;
}

/*
 * Tolerance for "KernelStack is back at its baseline": slack_kb plus one
 * 16 KiB stack per task created since the baseline (kernel threads such
 * as workqueue workers come and go on their own).
 */
static inline long rk_stack_slack_kb(long tasks_base, long slack_kb)
{
	long more = rk_nr_tasks() - tasks_base;

	return slack_kb + (more > 0 ? more * 16 : 0);
}

/*
 * Poll until KernelStack is within slack_kb of want_kb; stacks of exited
 * threads are freed after an RCU grace period, so give it a few seconds.
 */
static inline long rk_wait_kernel_stack(long want_kb, long slack_kb, int ms)
{
	long cur = rk_kernel_stack_kb();

	for (; ms > 0 && labs(cur - want_kb) > slack_kb; ms -= 50) {
		rk_sleep_ms(50);
		cur = rk_kernel_stack_kb();
	}
	return cur;
}

/*
 * A thread stack of @want bytes, or the C library's minimum if that is
 * larger: glibc's is 16 KiB on x86_64 but 128 KiB on arm64, where a
 * smaller size makes pthread_attr_setstacksize() fail with EINVAL.
 */
static inline size_t rk_thread_stack_size(size_t want)
{
	long min = sysconf(_SC_THREAD_STACK_MIN);

	return min > 0 && (size_t)min > want ? (size_t)min : want;
}

/* Value of "key=N" on the kernel command line, or def. */
static inline long rk_cmdline_long(const char *key, long def)
{
	char buf[4096];
	FILE *f = fopen("/proc/cmdline", "r");
	char *p;

	if (!f)
		return def;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p)
		return def;
	p = strstr(buf, key);
	return p ? strtol(p + strlen(key), NULL, 10) : def;
}

static inline int rk_write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -errno;
	ok = fputs(val, f) >= 0;
	if (fclose(f) || !ok)
		return -errno;
	return 0;
}

static inline long rk_read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The first line of @path, newline included, into @buf; -1 if unread. */
static inline int rk_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, len, f);

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* Keep what @path holds (with its newline) in @old, then write @val. */
static inline int rk_save_set(const char *path, char *old, size_t len,
			      const char *val)
{
	if (rk_read_line(path, old, len))
		return -1;
	return rk_write_file(path, val);
}

/*
 * The feature switch as a test found it. A fixture that changes the switch
 * saves it in its setup and puts it back in its teardown, which the
 * kselftest harness runs after a failed ASSERT too: one failure must not
 * leave the switch off (or on) for the tests after it.
 */
#define RK_SWITCH	"/proc/sys/vm/reclaimable_stacks"

struct rk_switch {
	char old[16];	/* what it held, newline included; "" if unread */
};

static inline void rk_switch_save(struct rk_switch *s)
{
	if (rk_read_line(RK_SWITCH, s->old, sizeof(s->old)))
		s->old[0] = '\0';
}

static inline void rk_switch_restore(const struct rk_switch *s)
{
	if (s->old[0])
		rk_write_file(RK_SWITCH, s->old);
}

/*
 * The text of each kernel log record from fd's position (/dev/kmsg opened
 * O_NONBLOCK) up to now, one line each, into buf (NUL-terminated, cut at
 * len). Records lost to a wrapped buffer (EPIPE) are skipped. Returns the
 * number of records read, or -errno if reading failed before the end.
 */
static inline int rk_kmsg_read(int fd, char *buf, size_t len)
{
	char rec[8192], *text, *nl;	/* CONSOLE_EXT_LOG_MAX: any record */
	size_t used = 0, n;
	int records = 0;
	ssize_t got;

	buf[0] = '\0';
	for (;;) {
		got = read(fd, rec, sizeof(rec) - 1);
		if (got < 0 && errno == EPIPE)
			continue;
		if (got < 0 && errno == EAGAIN)
			break;
		if (got <= 0)
			return got < 0 ? -errno : records;
		rec[got] = '\0';
		records++;
		/* "level,seq,usec,flags;text\n" then " KEY=value" lines */
		text = strchr(rec, ';');
		text = text ? text + 1 : rec;
		nl = strchr(text, '\n');
		n = nl ? (size_t)(nl - text) : strlen(text);
		if (used + n + 2 > len)
			continue;
		memcpy(buf + used, text, n);
		used += n;
		buf[used++] = '\n';
		buf[used] = '\0';
	}
	return records;
}

/*
 * Kprobe events for tests that count or trace a kernel function. tracefs
 * is mounted if it is not; rk_kprobes() is 0 when kprobe_events can be
 * written (KPROBE_EVENTS=y). Probes are added and removed by appending:
 * a truncating write to kprobe_events would remove every probe there.
 * rk_kprobe_add() first removes a same-named probe a killed run left.
 */
#define RK_TRACING	"/sys/kernel/tracing/"

static inline int rk_kprobes(void)
{
	if (access(RK_TRACING "kprobe_events", W_OK))
		mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL);
	return access(RK_TRACING "kprobe_events", W_OK);
}

static inline int rk_kprobe_append(const char *val)
{
	int fd = open(RK_TRACING "kprobe_events", O_WRONLY | O_APPEND);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* Disable and remove kprobe event @name (in group kprobes). */
static inline void rk_kprobe_remove(const char *name)
{
	char buf[160];

	snprintf(buf, sizeof(buf), RK_TRACING "events/kprobes/%s/enable", name);
	rk_write_file(buf, "0");
	snprintf(buf, sizeof(buf), "-:%s\n", name);
	rk_kprobe_append(buf);
}

/* Add "p:@name @probe" and enable it. */
static inline int rk_kprobe_add(const char *name, const char *probe)
{
	char buf[256];

	rk_kprobe_remove(name);
	snprintf(buf, sizeof(buf), "p:%s %s\n", name, probe);
	if (rk_kprobe_append(buf))
		return -1;
	snprintf(buf, sizeof(buf), RK_TRACING "events/kprobes/%s/enable", name);
	return rk_write_file(buf, "1");
}

/*
 * fail_stack_repopulate set so that every wakeup of a reclaimed thread
 * fails its fast path and waits for the worker, whose retries still
 * succeed (ignore-deferred), or with @all fail too, 20,000 times (a
 * minute of retries every 20 ms for 16 threads): a test killed before it
 * puts the values back leaves threads parked for a minute, not forever.
 * on=1 keeps
 * the values it finds (the first time) and sets these, probability last;
 * on=0 puts them back, probability first and to 0 whatever it was: never
 * left failing. 0, or -1 if a file could not be read or written.
 */
#define RK_FAIL_DIR	"/sys/kernel/debug/fail_stack_repopulate"

struct rk_fail_saved {
	char v[5][32];
	int set;	/* rk_fail_fast(1) succeeded, not yet undone */
};

static inline int rk_fail_repopulate(int on, int all, struct rk_fail_saved *s)
{
	static const char *const files[] = {
		"ignore-deferred", "interval", "times", "verbose", "probability",
	};
	static const char *const vals[] = { "Y", "1", "-1", "0", "100" };
	char path[128];
	int err = 0;

	for (int i = 0; i < 5; i++) {
		int k = on ? i : 4 - i;
		const char *v = on ? vals[k] : s->v[k];

		if (on && all && k == 0)
			v = "N";
		if (on && all && k == 2)
			v = "20000";	/* the worker's retries, then heal */

		snprintf(path, sizeof(path), RK_FAIL_DIR "/%s", files[k]);
		if (on && !s->v[k][0]) {
			FILE *f = fopen(path, "r");

			if (!f || !fgets(s->v[k], sizeof(s->v[k]), f))
				err = -1;
			if (f)
				fclose(f);
			s->v[k][strcspn(s->v[k], "\n")] = 0;
		}
		if (!on && k == 4)
			v = "0";
		if (!err && rk_write_file(path, v))
			err = -1;
	}
	s->set = on && !err;
	return err;
}

static inline int rk_fail_fast(int on, struct rk_fail_saved *s)
{
	return rk_fail_repopulate(on, 0, s);
}

#endif /* RK_COMMON_H */
