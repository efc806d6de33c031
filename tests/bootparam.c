// SPDX-License-Identifier: GPL-2.0
/*
 * Booted with rk.expect_enabled=N and reclaimable_stacks= values on the
 * command line: the sysctl must read N, and a value other than 0, 1, off
 * or on must have been refused with a message in the kernel log, leaving
 * the setting as an earlier valid value made it.
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
	if (strstr(cmdline, "reclaimable_stacks=foo")) {
		EXPECT_NE(NULL, strstr(log, "reclaimable_stacks=foo: expected"));
	} else {
		EXPECT_EQ(NULL, strstr(log, ": expected 0, 1, off or on"));
	}
}

TEST_HARNESS_MAIN
