// SPDX-License-Identifier: GPL-2.0
/*
 * Lockdep's checks of marked waits (CONFIG_LOCKDEP with
 * CONFIG_RECLAIMABLE_STACK_DEBUG): a marked wait may hold no lock, and
 * nothing in its scope may block but its own schedule(). The debugfs file
 * reclaimable_stacks/misuse makes a kernel thread
 *   - wait in a marked scope holding nothing: no warning at all;
 *   - enter a marked scope holding a mutex: one WARNING, from the check in
 *     reclaimable_stack_enter() (include/linux/sched/task_stack.h);
 *   - take a mutex inside a marked scope and sleep: one WARNING, from the
 *     check in schedule() (include/linux/stack_reclaim.h);
 * each misuse twice: each check is a WARN_ON_ONCE(), re-armed before
 * through /sys/kernel/debug/clear_warn_once, so one WARNING each.
 *
 * The provoked warnings must neither panic (panic_on_warn) nor reach the
 * console, where the host counts every splat as a failure: both are
 * switched off around each write (and guest/init sets them again after
 * every program, should this one be killed meanwhile), and this program
 * judges everything the kernel logged meanwhile, read back from
 * /dev/kmsg: any splat but the one expected fails the case.
 */
#include "rk_common.h"
#include "kselftest_harness.h"

#define MISUSE		"/sys/kernel/debug/reclaimable_stacks/misuse"
#define CLEAR_ONCE	"/sys/kernel/debug/clear_warn_once"
#define ENTER_CHECK	"include/linux/sched/task_stack.h"
#define BLOCK_CHECK	"include/linux/stack_reclaim.h"

static const char *const quiet_files[] = {
	"/proc/sys/kernel/panic_on_warn",
	"/proc/sys/kernel/printk",	/* console level 1: KERN_EMERG only */
};
static const char *const quiet_vals[] = { "0", "1 4 1 7" };
#define NR_QUIET	(sizeof(quiet_files) / sizeof(quiet_files[0]))

/* What the kernel logged while one misuse ran (twice). */
static char klog[1 << 17];

/* Lines of klog containing s. */
static int klog_count(const char *s)
{
	const char *p = klog;
	int n = 0;

	while ((p = strstr(p, s))) {
		n++;
		p = strchr(p, '\n');
		if (!p)
			break;
	}
	return n;
}

/* The first line of klog containing s, or "". */
static const char *klog_line(const char *s, char *line, size_t len)
{
	const char *p = strstr(klog, s), *nl;
	size_t n;

	line[0] = '\0';
	if (!p)
		return line;
	while (p > klog && p[-1] != '\n')
		p--;
	nl = strchr(p, '\n');
	n = nl ? (size_t)(nl - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(line, p, n);
	line[n] = '\0';
	return line;
}

/*
 * A WARNING line as this program may print it: without "WARNING:", which
 * on the console would be a splat to the host.
 */
static const char *warning_text(const char *line)
{
	const char *p = strstr(line, "WARNING:");

	return p ? p + strlen("WARNING:") : line;
}

/* lockdep's own on/off state: it turns itself off after a report. */
static long lockdep_debug_locks(void)
{
	char buf[4096], *p;
	FILE *f = fopen("/proc/lockdep_stats", "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, "debug_locks:");
	return p ? strtol(p + strlen("debug_locks:"), NULL, 10) : -1;
}

FIXTURE(lockdep) {
	char old[NR_QUIET][64];
};

FIXTURE_SETUP(lockdep)
{
	if (access("/proc/lockdep", R_OK))
		SKIP(return, "kernel without lockdep (no /proc/lockdep)");
	if (access(MISUSE, W_OK))
		SKIP(return, "no debugfs %s", MISUSE);
	ASSERT_EQ(0, access(CLEAR_ONCE, W_OK));
	/* Off, lockdep checks nothing and every case would pass. */
	ASSERT_EQ(1, lockdep_debug_locks())
		TH_LOG("lockdep is off: an earlier lockdep report turned it off");
}

FIXTURE_TEARDOWN(lockdep)
{
}

/*
 * Re-arm the WARN_ON_ONCE()s, then write how to the misuse file twice,
 * the console quiet and warnings not fatal meanwhile; klog gets what the
 * kernel logged. 0 or -errno.
 */
static int provoke(char old[][64], const char *how)
{
	int fd, i, n, ret;

	ret = rk_write_file(CLEAR_ONCE, "1");
	if (ret)
		return ret;
	fd = open("/dev/kmsg", O_RDWR | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	lseek(fd, 0, SEEK_END);
	for (n = 0; n < (int)NR_QUIET; n++)
		if (rk_save_set(quiet_files[n], old[n], sizeof(old[n]),
				quiet_vals[n])) {
			ret = -EIO;
			break;
		}
	for (i = 0; i < 2 && !ret; i++)
		ret = rk_write_file(MISUSE, how);
	/*
	 * Whether a record reaches the console is decided as it is printed:
	 * a console_lock holder elsewhere may print the warning after it was
	 * logged. One more record, then time for the serial console (a
	 * splat is ~3 KB, 0.3 s at 115200 baud), before the level goes back.
	 */
	if (write(fd, "<7>reclaim_lockdep: provoked\n", 29) < 0)
		ret = ret ? ret : -errno;
	rk_sleep_ms(1000);
	while (n-- > 0)
		rk_write_file(quiet_files[n], old[n]);
	i = rk_kmsg_read(fd, klog, sizeof(klog));
	close(fd);
	return ret ? ret : i < 0 ? i : 0;
}

/* Splats other than WARNING (lockdep's own reports are WARNINGs). */
static int other_splats(void)
{
	static const char *const kinds[] = {
		"BUG:", "Oops", "Kernel panic", "INFO:", "general protection",
		"UBSAN:", "kernel BUG at",
	};
	int i, n = 0;

	for (i = 0; i < (int)(sizeof(kinds) / sizeof(kinds[0])); i++)
		n += klog_count(kinds[i]);
	return n;
}

/* Checks armed, a clean marked wait: nothing at all. */
TEST_F(lockdep, clean_wait_is_silent)
{
	char line[512];

	ASSERT_EQ(0, provoke(self->old, "clean"));
	/* Our own marker: the log was read to the end. */
	ASSERT_NE(0, klog_count("reclaim_lockdep: provoked"));
	EXPECT_EQ(0, klog_count("WARNING:"))
		TH_LOG("warned:%s", warning_text(klog_line("WARNING:", line,
							    sizeof(line))));
	EXPECT_EQ(0, other_splats());
	EXPECT_EQ(1, lockdep_debug_locks());
}

/*
 * Provoke how: exactly one WARNING, from the check in file, with the
 * misusing thread in the report (in the WARNING line, or in the trace
 * if the guard was not inlined), and no other splat.
 */
static void warns_once(struct __test_metadata *_metadata, char old[][64],
		       const char *how, const char *file)
{
	char line[512];

	ASSERT_EQ(0, provoke(old, how));
	klog_line("WARNING:", line, sizeof(line));
	TH_LOG("warned:%s", warning_text(line));
	EXPECT_EQ(1, klog_count("WARNING:"));
	EXPECT_NE(NULL, strstr(line, file));
	EXPECT_NE(0, klog_count("stack_misuse_thread"));
	EXPECT_EQ(0, other_splats());
}

/* From the entry check, reclaimable_stack_enter(). */
TEST_F(lockdep, enter_with_lock_held_warns_once)
{
	warns_once(_metadata, self->old, "enter-locked", ENTER_CHECK);
}

/* From schedule(), stack_reclaim_check_block(). */
TEST_F(lockdep, block_with_lock_held_warns_once)
{
	warns_once(_metadata, self->old, "block-locked", BLOCK_CHECK);
}

TEST_F(lockdep, bad_input_rejected)
{
	EXPECT_EQ(-EINVAL, rk_write_file(MISUSE, "foo\n"));
	EXPECT_EQ(-EINVAL, rk_write_file(MISUSE, "\n"));
}

TEST_HARNESS_MAIN
