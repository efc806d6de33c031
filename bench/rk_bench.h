/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the in-guest demo and benchmarks: key=value arguments with
 * range checks, the feature switch for A/B rounds, clocks, percentiles,
 * and the one output format the host's scripts/bench-report.py reads:
 *
 *   @@RK-BENCH bench=<b> mode=<m> round=<r> metric=<name> value=<number>
 *
 * One line per measured value. The host takes the median over rounds of
 * each (bench, metric, mode) and the ratios between modes. A distribution
 * (rk_report_hist) is one line per non-empty bucket:
 *
 *   @@RK-HIST bench=<b> mode=<m> lo_us=<edge> hi_us=<edge> count=<n>
 *
 * on fixed edges, the same in every boot, so the host adds the counts.
 */
#ifndef RK_BENCH_H
#define RK_BENCH_H

#include <math.h>
#include <stdarg.h>
#include "rk_common.h"

#define RK_SYSCTL	"/proc/sys/vm/reclaimable_stacks"

/* Fail with a usage message: exit status 2 means bad arguments. */
static inline void __attribute__((noreturn, format(printf, 1, 2)))
rk_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "error: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

/* The value of argument key=... or NULL; any unknown key is an error. */
static inline const char *rk_arg(int argc, char **argv, const char *key)
{
	size_t n = strlen(key);

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], key, n) && argv[i][n] == '=')
			return argv[i] + n + 1;
	return NULL;
}

/* key=N within [min, max], or def if absent. */
static inline long rk_arg_long(int argc, char **argv, const char *key,
			       long def, long min, long max)
{
	const char *s = rk_arg(argc, argv, key);
	char *end;
	long v;

	if (!s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		rk_usage("%s=%s: want an integer in [%ld, %ld]", key, s, min,
			 max);
	return v;
}

/* Every argument must be one of the NULL-terminated keys. */
static inline void rk_args_check(int argc, char **argv, const char *const *keys)
{
	for (int i = 1; i < argc; i++) {
		int ok = 0;

		for (const char *const *k = keys; *k && !ok; k++) {
			size_t n = strlen(*k);

			ok = !strncmp(argv[i], *k, n) && argv[i][n] == '=';
		}
		if (!ok)
			rk_usage("unknown argument '%s'", argv[i]);
	}
}

static inline double rk_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline double rk_thread_cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* 1 if the kernel has the feature (the sysctl exists), else 0. */
static inline int rk_have_feature(void)
{
	return access(RK_SYSCTL, F_OK) == 0;
}

/*
 * A/A run (argument aa=1 of the programs that take it): the two modes are
 * "off_a" and "off_b", both with the feature switched off, so that they
 * differ only in their name and the host measures the instrument itself:
 * off_a/off_b is 1 but for noise (bench-report.py's A/A spread).
 */
static int rk_aa;

/* Read aa=; only a feature kernel has two modes to compare. */
static inline void rk_aa_arg(int argc, char **argv)
{
	rk_aa = rk_arg_long(argc, argv, "aa", 0, 0, 1);
	if (rk_aa && !rk_have_feature())
		rk_usage("aa=1 compares two switched-off modes: boot the feature build");
}

/* Mode 0 ("on", or "off_a") and mode 1 ("off", or "off_b") of an A/B run. */
static inline const char *rk_mode_name(int mi)
{
	if (rk_aa)
		return mi ? "off_b" : "off_a";
	return mi ? "off" : "on";
}

static inline int rk_mode_index(const char *m)
{
	return !strcmp(m, rk_mode_name(1));
}

/*
 * A/B modes of round r: modes 0 and 1 in alternating order, so that
 * neither always runs first; "vanilla" alone on a kernel without the
 * feature. Returns the number of modes written to m[].
 */
static inline int rk_modes(int round, const char *m[2])
{
	if (!rk_have_feature()) {
		m[0] = "vanilla";
		return 1;
	}
	m[round & 1] = rk_mode_name(0);
	m[!(round & 1)] = rk_mode_name(1);
	return 2;
}

/* Switch the feature for mode m: on for "on", off for the others. */
static inline int rk_mode_set(const char *m)
{
	if (!strcmp(m, "vanilla"))
		return 0;
	return rk_write_file(RK_SYSCTL, strcmp(m, "on") ? "0\n" : "1\n");
}

/*
 * Knobs a run sets (sysctls, debugfs files), each put back at exit as
 * it was, the last set first; rk_usage() and a plain return from main()
 * both exit through it.
 */
#define RK_KNOBS	4
static struct {
	const char *path;
	char old[32];	/* with its newline */
} rk_knobs[RK_KNOBS];
static int rk_nknobs;

static inline void rk_knobs_restore(void)
{
	while (rk_nknobs > 0) {
		rk_nknobs--;
		rk_write_file(rk_knobs[rk_nknobs].path, rk_knobs[rk_nknobs].old);
	}
}

/* Write @val to @path until exit; 0 on success. */
static inline int rk_knob_set(const char *path, const char *val)
{
	if (rk_nknobs == RK_KNOBS)
		return -1;
	if (!rk_nknobs)
		atexit(rk_knobs_restore);
	if (rk_save_set(path, rk_knobs[rk_nknobs].old,
			sizeof(rk_knobs[rk_nknobs].old), val))
		return -1;
	rk_knobs[rk_nknobs++].path = path;
	return 0;
}

static inline void rk_report(const char *bench, const char *mode, int round,
			     const char *metric, double value)
{
	printf("@@RK-BENCH bench=%s mode=%s round=%d metric=%s value=%.3f\n",
	       bench, mode, round, metric, value);
	fflush(stdout);
}

/*
 * Histogram edges: RK_HIST_PER_DECADE buckets a decade, bucket k holding
 * [10^(k/D), 10^((k+1)/D)) us, k from RK_HIST_K_MIN (0.01 us) to
 * RK_HIST_K_MAX (10 s); a value outside counts in the first or last.
 */
#define RK_HIST_PER_DECADE	20
#define RK_HIST_K_MIN		(-2 * RK_HIST_PER_DECADE)
#define RK_HIST_K_MAX		(7 * RK_HIST_PER_DECADE - 1)

static inline double rk_hist_edge(int k)
{
	return pow(10, (double)k / RK_HIST_PER_DECADE);
}

/* The distribution of v[0..n) (us) as @@RK-HIST lines. */
static inline void rk_report_hist(const char *bench, const char *mode,
				  const double *v, int n)
{
	int count[RK_HIST_K_MAX - RK_HIST_K_MIN + 1] = { 0 };

	for (int i = 0; i < n; i++) {
		int k = v[i] > 0 ? (int)floor(log10(v[i]) * RK_HIST_PER_DECADE) :
			RK_HIST_K_MIN;

		k = k < RK_HIST_K_MIN ? RK_HIST_K_MIN :
		    k > RK_HIST_K_MAX ? RK_HIST_K_MAX : k;
		count[k - RK_HIST_K_MIN]++;
	}
	for (int k = RK_HIST_K_MIN; k <= RK_HIST_K_MAX; k++)
		if (count[k - RK_HIST_K_MIN])
			printf("@@RK-HIST bench=%s mode=%s lo_us=%.4g hi_us=%.4g count=%d\n",
			       bench, mode, rk_hist_edge(k), rk_hist_edge(k + 1),
			       count[k - RK_HIST_K_MIN]);
	fflush(stdout);
}

static inline int rk_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile (0..100) of v[0..n), nearest rank; sorts v. */
static inline double rk_percentile(double *v, int n, double p)
{
	int k;

	if (n <= 0)
		return NAN;
	qsort(v, n, sizeof(*v), rk_cmp_double);
	k = (int)ceil(p / 100.0 * n) - 1;
	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

#endif /* RK_BENCH_H */
