// SPDX-License-Identifier: GPL-2.0
/*
 * P1 idle: threads= threads (4000) of one process blocked over the mix=
 * of annotated sites, reclaim forced with drop_caches (two passes age,
 * so four), then the share of the population's kernel stack memory that
 * was given back: (blocked - reclaimed) / (blocked - baseline). 75% is
 * the limit for 16 KiB stacks with one live page. Every thread must then
 * wake with the right result. rounds= rounds (3), feature on only: with
 * it off nothing can be given back.
 *
 * idle_secs=N: no drop_caches, no memory pressure at all: the proactive
 * pass (vm.reclaimable_stacks_idle_secs=N, put back at exit) alone, and
 * the share is read N + 2 pass periods (N/2 s each, one at least) after
 * the population blocked; reported as bench p1_proactive.
 */
#include "rk_mix.h"

#define RK_IDLE_SECS	"/proc/sys/vm/reclaimable_stacks_idle_secs"

int main(int argc, char **argv)
{
	static const char *const keys[] = { "rounds", "threads", "mix",
					    "idle_secs", NULL };
	static struct rk_mix mix;
	int rounds, threads, idle_secs, failed = 0;
	const char *bench = "p1_idle";

	rk_args_check(argc, argv, keys);
	rounds = rk_arg_long(argc, argv, "rounds", 3, 1, 100);
	threads = rk_arg_long(argc, argv, "threads", 4000, 1, 8000);
	idle_secs = rk_arg_long(argc, argv, "idle_secs", 0, 0, 600);
	rk_mix_parse(&mix, rk_arg(argc, argv, "mix") ?: RK_DEFAULT_MIX);
	if (!rk_have_feature() || rk_mode_set("on"))
		rk_usage("P1 needs the feature: boot the feature build");
	if (idle_secs) {
		char val[16];

		bench = "p1_proactive";
		snprintf(val, sizeof(val), "%d\n", idle_secs);
		if (rk_knob_set(RK_IDLE_SECS, val))
			rk_usage("cannot set " RK_IDLE_SECS);
	}
	rk_nanosleep_s = 3600;	/* woken by signal */
	printf("p1_idle: %d threads:", threads);
	rk_mix_print(&mix, threads);
	printf("\n");

	for (int r = 0; r < rounds; r++) {
		long base = rk_kernel_stack_kb(), tasks = rk_nr_tasks();
		long blocked, reclaimed, pages = rk_vmstat("stack_reclaim_pages");
		int done, bad;

		if (rk_mix_start(&mix, threads))
			return 1;
		rk_sleep_ms(500);
		blocked = rk_kernel_stack_kb();
		if (idle_secs)
			rk_sleep_ms(1000 * (idle_secs + 2 * (idle_secs / 2 ?: 1)));
		else if (rk_drop_caches(4))
			return 1;
		reclaimed = rk_kernel_stack_kb();
		pages = rk_vmstat("stack_reclaim_pages") - pages;
		done = rk_mix_finish(&mix, threads, &bad);
		printf("%s: round %d: KernelStack %ld -> %ld -> %ld kB, %ld pages, %d/%d threads did their work\n",
		       bench, r, base, blocked, reclaimed, pages, done, threads);
		if (done != threads || bad)
			failed = 1;
		rk_report(bench, "on", r, "given_back_pct",
			  100.0 * (blocked - reclaimed) / (blocked - base));
		rk_report(bench, "on", r, "kib_per_thread_blocked",
			  (double)(blocked - base) / threads);
		rk_report(bench, "on", r, "kib_per_thread_reclaimed",
			  (double)(reclaimed - base) / threads);
		rk_wait_kernel_stack(base, rk_stack_slack_kb(tasks, 96), 20000);
	}
	return failed;
}
