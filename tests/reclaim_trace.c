// SPDX-License-Identifier: GPL-2.0
/*
 * Counters and trace events account for every outcome. NR threads block
 * in futex wait for longer than light reclaim wants, drop_caches reclaims
 * their stacks with the stack_reclaim trace events on, and one wake-all
 * maps them again: the waker's CPU's pool (16 to 128 pages) serves some in
 * the wakeup, the rest wait for the worker ("pool_empty"). Then:
 * - one stack_reclaim_stack event per stack reclaimed (the counter's
 *   delta), each of ours with the age it had (>= the time we slept), all
 *   its pages reported as progress and not handed off; handed-off events
 *   as many as the stack_defer_handed_off counter says;
 * - one stack_repopulate_fast or stack_repopulate_defer event per stack
 *   of ours woken, and a stack_repopulate_deferred for each defer;
 * - the four stack_defer_* counters sum to stack_repopulate_deferred,
 *   each equal to its events' count, and stack_repopulate_wait_us is the
 *   events' wait_ns summed (each truncated to microseconds).
 * The second case fails every fast path on purpose (fail_stack_repopulate)
 * so that the "injected" cause is counted and traced too. The third
 * (pool_follows_bursts, below) sizes a pool with two bursts. Events and
 * counters are compared over the same window; each test runs in a child
 * of its own, and the teardown puts back what it changed.
 */
#include "rk_sites.h"
#include "kselftest_harness.h"
#include <sys/mount.h>
#include <sys/stat.h>

#define NR		96
#define SLEEP_MS	2000	/* older than the 1.5 s of DEF_PRIORITY */
#define SYSCTL		"/proc/sys/vm/reclaimable_stacks"
#define TRACEFS		"/sys/kernel/tracing"
#define EVENTS		TRACEFS "/events/stack_reclaim/enable"

static const char *const cause_names[] = {
	"pool_empty", "charge", "injected", "handoff",
};
static const char *const cause_counters[] = {
	"stack_defer_pool_empty", "stack_defer_charge_failed",
	"stack_defer_injected_failure", "stack_defer_handed_off",
};

struct events {
	long reclaimed, reclaimed_ours, handed_off;
	long pages_ours, progress_ours, over_ours;	/* progress > pages */
	long fast_ours;
	long fast, defer, deferred;
	long cause[4];
	long long wait_us;		/* sum of wait_ns / 1000, truncated */
	long min_age_ours;
	long woken_ours;		/* fast or defer events of our tids */
};

static int ours(struct rk_pop *pop, long pid)
{
	for (int i = 0; i < pop->nr; i++)
		if (pop->tids[i] == pid)
			return 1;
	return 0;
}

/* Value of "key=" in an event line, or -1. */
static long field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void parse(struct rk_pop *pop, struct events *ev)
{
	char line[512];
	FILE *f = fopen(TRACEFS "/trace", "r");

	memset(ev, 0, sizeof(*ev));
	ev->min_age_ours = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		long pid = field(line, " pid=");

		if (strstr(line, " stack_reclaim_stack:")) {
			long age = field(line, " age_ms=");

			ev->reclaimed++;
			if (field(line, " handed_off=") == 1)
				ev->handed_off++;
			if (!ours(pop, pid))
				continue;
			ev->reclaimed_ours++;
			ev->pages_ours += field(line, " nr_pages=");
			ev->progress_ours += field(line, " progress=");
			if (field(line, " progress=") > field(line, " nr_pages="))
				ev->over_ours++;
			if (ev->min_age_ours < 0 || age < ev->min_age_ours)
				ev->min_age_ours = age;
		} else if (strstr(line, " stack_repopulate_fast:")) {
			ev->fast++;
			ev->fast_ours += ours(pop, pid);
			ev->woken_ours += ours(pop, pid);
		} else if (strstr(line, " stack_repopulate_defer:")) {
			ev->defer++;
			ev->woken_ours += ours(pop, pid);
			for (int c = 0; c < 4; c++) {
				char want[32];

				snprintf(want, sizeof(want), " cause=%s\n",
					 cause_names[c]);
				if (strstr(line, want))
					ev->cause[c]++;
			}
		} else if (strstr(line, " stack_repopulate_deferred:")) {
			ev->deferred++;
			ev->wait_us += field(line, " wait_ns=") / 1000;
		}
	}
	fclose(f);
}

static long vm_sum(const char *const *keys, long *each)
{
	long sum = 0;

	for (int c = 0; c < 4; c++) {
		each[c] = rk_vmstat(keys[c]);
		sum += each[c];
	}
	return sum;
}

FIXTURE(trace) {
	char old_sysctl[16];
	struct rk_fail_saved fail;
};

FIXTURE_SETUP(trace)
{
	struct stat st;

	if (stat(SYSCTL, &st))
		SKIP(return, "kernel without reclaimable stacks");
	if (rk_vmstat("stack_reclaim_stacks") < 0)
		SKIP(return, "no stack_reclaim counters (VM_EVENT_COUNTERS=n)");
	if (stat(TRACEFS "/events", &st))
		mount("tracefs", TRACEFS, "tracefs", 0, NULL);
	if (stat(TRACEFS "/events/stack_reclaim", &st))
		SKIP(return, "no stack_reclaim trace events under " TRACEFS);
	ASSERT_EQ(0, rk_save_set(SYSCTL, self->old_sysctl,
				 sizeof(self->old_sysctl), "1"));
	ASSERT_EQ(0, rk_write_file(TRACEFS "/buffer_size_kb", "4096"));
}

FIXTURE_TEARDOWN(trace)
{
	rk_write_file(EVENTS, "0");
	if (self->fail.set)
		rk_fail_fast(0, &self->fail);
	if (self->old_sysctl[0])
		rk_write_file(SYSCTL, self->old_sysctl);
}

/*
 * Reclaim NR old futex waiters and wake them all, with the events on;
 * inject: fail every fast path meanwhile. Then compare.
 */
static void account(struct __test_metadata *_metadata,
		    FIXTURE_DATA(trace) *self, bool inject)
{
	static struct rk_pop pop;
	long stacks0, fast0, def0, wait0, causes0, each0[4], each1[4];
	long stacks, fast, def, wait, causes;
	struct events ev;

	ASSERT_EQ(0, rk_pop_start(&pop, rk_site_by_name("futex"), NR, NULL));
	rk_sleep_ms(SLEEP_MS);

	/* The window: events and counter deltas over the same span. */
	ASSERT_EQ(0, rk_write_file(TRACEFS "/trace", ""));
	ASSERT_EQ(0, rk_write_file(EVENTS, "1"));
	stacks0 = rk_vmstat("stack_reclaim_stacks");
	fast0 = rk_vmstat("stack_repopulate_fast");
	def0 = rk_vmstat("stack_repopulate_deferred");
	wait0 = rk_vmstat("stack_repopulate_wait_us");
	causes0 = vm_sum(cause_counters, each0);

	ASSERT_EQ(0, rk_drop_caches(1));
	if (inject)
		ASSERT_EQ(0, rk_fail_fast(1, &self->fail));
	EXPECT_EQ(NR, rk_pop_finish(&pop));
	/* Joined: nothing of ours waits for the worker any more. */
	stacks = rk_vmstat("stack_reclaim_stacks") - stacks0;
	fast = rk_vmstat("stack_repopulate_fast") - fast0;
	def = rk_vmstat("stack_repopulate_deferred") - def0;
	wait = rk_vmstat("stack_repopulate_wait_us") - wait0;
	causes = vm_sum(cause_counters, each1) - causes0;
	ASSERT_EQ(0, rk_write_file(EVENTS, "0"));
	if (inject)
		ASSERT_EQ(0, rk_fail_fast(0, &self->fail));
	parse(&pop, &ev);
	TH_LOG("counters: %ld reclaimed, %ld fast, %ld deferred (causes %ld: "
	       "pool %ld charge %ld injected %ld handoff %ld), %ld us waited",
	       stacks, fast, def, causes, each1[0] - each0[0],
	       each1[1] - each0[1], each1[2] - each0[2], each1[3] - each0[3],
	       wait);
	TH_LOG("events: %ld reclaimed (%ld handed off; %ld ours, youngest "
	       "%ld ms, progress %ld of %ld pages), %ld fast (%ld ours), "
	       "%ld defer, %ld deferred, %lld us waited",
	       ev.reclaimed, ev.handed_off, ev.reclaimed_ours, ev.min_age_ours,
	       ev.progress_ours, ev.pages_ours, ev.fast, ev.fast_ours,
	       ev.defer, ev.deferred, ev.wait_us);

	/*
	 * All of ours were reclaimed, old, and reported as progress: all
	 * pages of a stack whose pages share a node, fewer of one that a
	 * wakeup on the other node mapped in part (a cached stack reused).
	 */
	EXPECT_EQ(NR, ev.reclaimed_ours);
	EXPECT_GE(ev.min_age_ours, SLEEP_MS - 100);
	EXPECT_EQ(0, ev.over_ours);
	EXPECT_GT(ev.progress_ours, 0);
	/* The scan's side of each handoff, and the waker's. */
	EXPECT_EQ(each1[3] - each0[3], ev.handed_off);
	/* Every event for its counter, every outcome for its cause. */
	EXPECT_EQ(stacks, ev.reclaimed);
	EXPECT_EQ(fast, ev.fast);
	EXPECT_EQ(def, ev.deferred);
	EXPECT_EQ(def, causes);
	EXPECT_EQ(ev.defer, ev.deferred);
	for (int c = 0; c < 4; c++) {
		EXPECT_EQ(each1[c] - each0[c], ev.cause[c])
			TH_LOG("cause %s", cause_names[c]);
	}
	/* Each woken stack of ours went one way or the other, once. */
	EXPECT_EQ(NR, ev.woken_ours);
	/*
	 * 96 stacks of about 3 pages, woken by one thread, against pools
	 * of at most 128 pages per CPU: some waited.
	 */
	EXPECT_GT(def, 0);
	EXPECT_GT(wait, 0);
	/* The counter sums each wait in ns / 1000, the events likewise. */
	EXPECT_EQ(wait, ev.wait_us);
	if (inject) {
		/* Pool pages present: the injected failure; else pool_empty. */
		EXPECT_EQ(0, ev.fast_ours);
		EXPECT_GT(ev.cause[2], 0);
	}
}

TEST_F(trace, counters_and_events_account_for_every_stack)
{
	account(_metadata, self, false);
}

TEST_F(trace, injected_failures_counted_and_traced)
{
	if (access(RK_FAIL_DIR "/probability", W_OK))
		SKIP(return, "no fail_stack_repopulate attribute");
	account(_metadata, self, true);
}

/*
 * A CPU's pool follows the bursts it serves. With the pools just reset
 * (switched off and on), BURST futex waiters are reclaimed (drop_caches
 * reclaims at priority 0, whatever their age) and woken at once by one
 * thread on CPU 0, twice, half a second apart: the first burst finds CPU
 * 0's pool at its minimum (16 pages, five stacks) and most of it waits for
 * the worker; the refill after it grows the pool (stack_pool_grow) by what
 * it missed; the second, of the same size, finds the grown pool and at
 * most half as many wait. Then, left unused, the pool shrinks by an
 * eighth a second (stack_pool_shrink). Last, switched off, every pool is
 * back at its minimum: the two counters, counted since boot, are equal
 * (the sizes are the minimums plus one less the other).
 */
#define BURST		40

/*
 * One burst on CPU 0: the wakeups among BURST reclaimed stacks that found
 * their pool short (and so waited for the worker).
 */
static long burst(struct __test_metadata *_metadata)
{
	static struct rk_pop pop;
	long short0, fast0, def0, shortfall, fast, def;

	ASSERT_EQ(0, rk_pop_start(&pop, rk_site_by_name("futex"), BURST,
				  NULL));
	rk_sleep_ms(200);
	ASSERT_EQ(0, rk_drop_caches(1));
	short0 = rk_vmstat("stack_defer_pool_empty");
	def0 = rk_vmstat("stack_repopulate_deferred");
	fast0 = rk_vmstat("stack_repopulate_fast");
	EXPECT_EQ(BURST, rk_pop_finish(&pop));
	shortfall = rk_vmstat("stack_defer_pool_empty") - short0;
	def = rk_vmstat("stack_repopulate_deferred") - def0;
	fast = rk_vmstat("stack_repopulate_fast") - fast0;
	TH_LOG("burst of %d: %ld fast, %ld deferred (%ld for a short pool)",
	       BURST, fast, def, shortfall);
	return shortfall;
}

TEST_F(trace, pool_follows_bursts)
{
	long grow0, shrink0, grow, shrink = 0, def1, def2;

	if (rk_vmstat("stack_pool_grow") < 0)
		SKIP(return, "no stack_pool_grow counter");
	ASSERT_EQ(0, rk_pin(0));
	/* Every pool back at its minimum, as after boot. */
	ASSERT_EQ(0, rk_write_file(SYSCTL, "0"));
	ASSERT_EQ(0, rk_write_file(SYSCTL, "1"));
	grow0 = rk_vmstat("stack_pool_grow");
	def1 = burst(_metadata);
	rk_sleep_ms(300);	/* the refill, from the next tick */
	grow = rk_vmstat("stack_pool_grow") - grow0;
	def2 = burst(_metadata);
	TH_LOG("pool grew by %ld pages after the first burst", grow);
	/*
	 * 40 stacks of about 3 pages against 16: most waited, unless a
	 * refill preempted the waker in the middle of the burst.
	 */
	EXPECT_GT(def1, BURST / 4);
	/* At least what the first burst's deferred wakeups missed. */
	EXPECT_GE(grow, def1);
	EXPECT_LE(def2 * 2, def1);
	/* Unused: an eighth of it a second (at least 2 pages) goes. */
	rk_sleep_ms(300);	/* the second burst's refill */
	shrink0 = rk_vmstat("stack_pool_shrink");
	for (int i = 0; i < 25 && shrink < 4; i++) {
		rk_sleep_ms(200);
		shrink = rk_vmstat("stack_pool_shrink") - shrink0;
	}
	TH_LOG("pool shrank by %ld pages in up to 5 s unused", shrink);
	EXPECT_GE(shrink, 4);
	/* Switched off, every size is its minimum again. */
	ASSERT_EQ(0, rk_write_file(SYSCTL, "0"));
	rk_sleep_ms(100);	/* counts made just after their change */
	grow = rk_vmstat("stack_pool_grow");
	shrink = rk_vmstat("stack_pool_shrink");
	TH_LOG("since boot: %ld pages grown, %ld shrunk", grow, shrink);
	EXPECT_EQ(grow, shrink);
}

TEST_HARNESS_MAIN
