// SPDX-License-Identifier: GPL-2.0
/*
 * Booted with rk.expect_enabled=N and reclaimable_stacks= values on the
 * command line: the sysctl must read N, and a value kstrtobool() does not
 * read as a boolean ("maybe": its first letter is none of 0/1/y/n/t/f/o)
 * must have been refused with a message in the kernel log, leaving the
 * setting as an earlier valid value made it.
 */
#include "rk_common.h"
#include "kselftest_harness.h"
#include <sys/klog.h>

TEST(boot_parameter)
{
	static char log[1 << 20];
	/* The harness boots every feature kernel with reclaimable_stacks=1. */
	long want = rk_cmdline_long("rk.expect_enabled=", 1);
	FILE *f = fopen("/proc/sys/vm/reclaimable_stacks", "r");
	char cmdline[4096] = "";
	long got = -1;
	int n;

	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%ld", &got));
	fclose(f);
	EXPECT_EQ(want, got);

	f = fopen("/proc/cmdline", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(cmdline, sizeof(cmdline), f));
	fclose(f);
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, sizeof(log) - 1);
	ASSERT_LT(0, n);
	log[n] = 0;
	if (strstr(cmdline, "reclaimable_stacks=maybe")) {
		EXPECT_NE(NULL, strstr(log, "reclaimable_stacks=maybe: not a boolean"));
	} else {
		EXPECT_EQ(NULL, strstr(log, ": not a boolean (1/0, y/n, on/off)"));
	}
}

TEST_HARNESS_MAIN
