// SPDX-License-Identifier: GPL-2.0
/*
 * census: where every thread of the system waits, and whether its stack
 * could be given back there.
 *
 * Each thread of /proc/PID/task/TID is put in one class:
 *   running       state R (not blocked: nothing to classify)
 *   kthread       a kernel thread (PF_KTHREAD)
 *   rt            SCHED_FIFO, SCHED_RR or SCHED_DEADLINE
 *   flags         a flag that keeps a stack (PF_EXITING, PF_KSWAPD,
 *                 PF_MEMALLOC*, PF_LOCAL_THROTTLE: stack_reclaim_eligible())
 *   eligible      blocked inside a reclaimable_stack guard: the kernel sets
 *                 PF_RECLAIMABLE_STACK (0x01000000, /proc/.../stat field 9)
 *                 for the length of an annotated wait while the feature is
 *                 on (always with lockdep); switched off, every such wait
 *                 counts as not-annotated
 *   not-annotated blocked anywhere else
 * The wait function is /proc/.../wchan. With CONFIG_RECLAIMABLE_STACK_DEBUG
 * the debugfs inspect file gives the kernel's own view of each stack: its
 * state (RECLAIMABLE, RECLAIMED, ...) and the pages present, so "resident
 * KiB" is measured; without it, only the nominal 16 KiB a stack is shown.
 *
 * Usage: census [top=N]   (N wait functions per list, default 12)
 * Prints a table; exits 1 if /proc shows no thread at all.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rk_inspect.h"

#define STACK_KIB 16
#define PF_EXITING 0x00000004u
#define PF_MEMALLOC 0x00000800u
#define PF_KSWAPD 0x00020000u
#define PF_MEMALLOC_NOFS 0x00040000u
#define PF_MEMALLOC_NOIO 0x00080000u
#define PF_LOCAL_THROTTLE 0x00100000u
#define PF_KTHREAD 0x00200000u
#define PF_RECLAIMABLE_STACK 0x01000000u
#define INELIGIBLE (PF_EXITING | PF_KSWAPD | PF_MEMALLOC | PF_MEMALLOC_NOFS | \
		    PF_MEMALLOC_NOIO | PF_LOCAL_THROTTLE)
/* enum stack_state: IN_USE 0 ... RECLAIMABLE 2 ... RECLAIMED 5 */
#define NSTATES 7

enum cls { C_ELIGIBLE, C_NOT_ANNOTATED, C_KTHREAD, C_RT, C_FLAGS, C_RUNNING, NCLS };
static const char *const cls_name[NCLS] = {
	"eligible", "not-annotated", "excluded:kthread", "excluded:rt",
	"excluded:flags", "running",
};

struct tally {
	long threads, resident_kib;
};

/* One wait function of one list: how many threads, an example comm. */
struct wfn {
	char name[64], comm[17];
	long threads, resident_kib;
};

#define MAXFN 512
struct fnlist {
	struct wfn fn[MAXFN];
	int n;
	long dropped;	/* threads whose function did not fit */
};

static struct tally cls[NCLS];
static long states[NSTATES];	/* eligible threads by kernel stack state */
static struct fnlist user_fns, kthread_fns, eligible_fns;
static int have_inspect;

static void fn_add(struct fnlist *l, const char *name, const char *comm, long kib)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->fn[i].name, name))
			break;
	if (i == l->n) {
		if (l->n == MAXFN) {
			l->dropped++;
			return;
		}
		l->n++;
		snprintf(l->fn[i].name, sizeof(l->fn[i].name), "%s", name);
		snprintf(l->fn[i].comm, sizeof(l->fn[i].comm), "%s", comm);
	}
	l->fn[i].threads++;
	l->fn[i].resident_kib += kib;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct wfn *x = a, *y = b;

	if (x->threads != y->threads)
		return x->threads < y->threads ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Read a small file into buf (NUL-terminated, newline stripped); 0 or -1. */
static int read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return n ? 0 : -1;
}

/* The kernel's view of @tid's stack: state and pages present; 0 or -1. */
static int stack_view(int tid, int *state, int *pages)
{
	struct info in;

	if (inspect(tid, &in) || in.tid != tid)
		return -1;
	*state = in.state;
	*pages = 0;
	for (char *p = in.present; *p; p++)
		*pages += *p == '1';
	return 0;
}

/*
 * Fields of /proc/PID/task/TID/stat after the comm: state (3), flags (9),
 * policy (41). The comm is between the first '(' and the last ')'.
 */
static int parse_stat(const char *buf, char *comm, size_t clen, char *state,
		      unsigned long *flags, unsigned int *policy)
{
	const char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	const char *p;
	int field;

	if (!l || !r || r < l)
		return -1;
	snprintf(comm, clen, "%.*s", (int)(r - l - 1), l + 1);
	p = r + 2;
	*state = *p;
	for (field = 3; *p && field < 41; p++) {
		if (*p != ' ')
			continue;
		field++;
		if (field == 9)
			*flags = strtoul(p + 1, NULL, 10);
		if (field == 41)
			*policy = strtoul(p + 1, NULL, 10);
	}
	return field == 41 ? 0 : -1;
}

static void one_thread(const char *pid, const char *tid)
{
	char path[600], buf[1024], comm[17], wchan[64], st;
	unsigned long flags = 0;
	unsigned int policy = 0;
	int kstate = -1, pages = -1;
	long kib;
	enum cls c;

	snprintf(path, sizeof(path), "/proc/%s/task/%s/stat", pid, tid);
	if (read_small(path, buf, sizeof(buf)) ||
	    parse_stat(buf, comm, sizeof(comm), &st, &flags, &policy))
		return;	/* exited meanwhile */
	snprintf(path, sizeof(path), "/proc/%s/task/%s/wchan", pid, tid);
	if (read_small(path, wchan, sizeof(wchan)) || !strcmp(wchan, "0"))
		snprintf(wchan, sizeof(wchan), "?");
	if (have_inspect && stack_view(atoi(tid), &kstate, &pages))
		kstate = pages = -1;
	kib = pages >= 0 ? pages * (sysconf(_SC_PAGESIZE) / 1024) : STACK_KIB;

	if (st == 'R')
		c = C_RUNNING;
	else if (flags & PF_KTHREAD)
		c = C_KTHREAD;
	else if (policy == 1 || policy == 2 || policy == 6)
		c = C_RT;
	else if (flags & INELIGIBLE)
		c = C_FLAGS;
	else if (flags & PF_RECLAIMABLE_STACK)
		c = C_ELIGIBLE;
	else
		c = C_NOT_ANNOTATED;
	cls[c].threads++;
	cls[c].resident_kib += kib;
	if (c == C_ELIGIBLE) {
		fn_add(&eligible_fns, wchan, comm, kib);
		if (kstate >= 0 && kstate < NSTATES)
			states[kstate]++;
	} else if (c == C_NOT_ANNOTATED) {
		fn_add(&user_fns, wchan, comm, kib);
	} else if (c == C_KTHREAD) {
		fn_add(&kthread_fns, wchan, comm, kib);
	}
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static void print_fns(const char *title, struct fnlist *l, int top)
{
	long rest = 0;

	qsort(l->fn, l->n, sizeof(l->fn[0]), fn_cmp);
	printf("\n%s\n", title);
	printf("%8s %12s  %-34s %s\n", "threads", "resident KiB", "wait function (wchan)", "e.g.");
	for (int i = 0; i < l->n; i++) {
		if (i < top)
			printf("%8ld %12ld  %-34s %s\n", l->fn[i].threads,
			       l->fn[i].resident_kib, l->fn[i].name, l->fn[i].comm);
		else
			rest += l->fn[i].threads;
	}
	if (rest || l->dropped)
		printf("%8ld %12s  (%d other functions)\n", rest + l->dropped, "",
		       l->n > top ? l->n - top : 0);
}

static double pct(long a, long b)
{
	return b ? 100.0 * a / b : 0.0;
}

int main(int argc, char **argv)
{
	static const char *const sname[NSTATES] = {
		"in_use", "prepare", "reclaimable", "reclaiming",
		"reclaiming_in_use", "reclaimed", "repopulating",
	};
	long total = 0, sleeping, user_sleeping;
	struct dirent *p, *t;
	DIR *proc, *task;
	int top = 12;

	for (int i = 1; i < argc; i++) {
		char *end;

		if (strncmp(argv[i], "top=", 4) ||
		    (top = strtol(argv[i] + 4, &end, 10)) < 1 || top > 100 || *end) {
			fprintf(stderr, "census: bad argument '%s' (usage: census [top=1..100])\n",
				argv[i]);
			return 2;
		}
	}
	have_inspect = access(INSPECT, R_OK | W_OK) == 0;
	proc = opendir("/proc");
	if (!proc) {
		perror("census: /proc");
		return 1;
	}
	while ((p = readdir(proc))) {
		char path[300];

		if (!is_number(p->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		task = opendir(path);
		if (!task)
			continue;
		while ((t = readdir(task)))
			if (is_number(t->d_name))
				one_thread(p->d_name, t->d_name);
		closedir(task);
	}
	closedir(proc);

	for (int c = 0; c < NCLS; c++)
		total += cls[c].threads;
	if (!total) {
		fprintf(stderr, "census: no thread found under /proc\n");
		return 1;
	}
	sleeping = total - cls[C_RUNNING].threads;
	user_sleeping = cls[C_ELIGIBLE].threads + cls[C_NOT_ANNOTATED].threads +
			cls[C_RT].threads + cls[C_FLAGS].threads;
	printf("census: %ld threads, %ld blocked (%ld of them user threads); stack KiB %s\n",
	       total, sleeping, user_sleeping,
	       have_inspect ? "resident, from debugfs inspect" :
			      "nominal (16 each): no debugfs inspect file");
	printf("%-18s %8s %9s %12s %9s\n", "class", "threads", "% blocked", "resident KiB",
	       "nominal KiB");
	for (int c = 0; c < NCLS; c++)
		printf("%-18s %8ld %8.1f%% %12ld %9ld\n", cls_name[c], cls[c].threads,
		       c == C_RUNNING ? 0.0 : pct(cls[c].threads, sleeping),
		       cls[c].resident_kib, cls[c].threads * STACK_KIB);
	printf("eligible: %.1f%% of blocked user threads, %.1f%% of all blocked threads\n",
	       pct(cls[C_ELIGIBLE].threads, user_sleeping),
	       pct(cls[C_ELIGIBLE].threads, sleeping));
	if (have_inspect) {
		printf("eligible threads by kernel stack state:");
		for (int s = 0; s < NSTATES; s++)
			if (states[s])
				printf(" %s %ld", sname[s], states[s]);
		printf("\n");
	}
	print_fns("not annotated, user threads: top wait functions", &user_fns, top);
	print_fns("eligible: wait functions", &eligible_fns, top);
	print_fns("kernel threads: top wait functions", &kthread_fns, top);
	return 0;
}
