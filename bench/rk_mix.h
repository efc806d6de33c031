/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A population spread over the annotated wait sites in given proportions
 * ("site:weight/site:weight"), started and woken as one: used by the demo
 * and the idle benchmark.
 */
#ifndef RK_MIX_H
#define RK_MIX_H

#include "rk_sites.h"
#include "rk_bench.h"

#define RK_MAX_MIX	16
#define RK_DEFAULT_MIX	"futex:40/epoll:20/poll:12/nanosleep:10/pipe:10/binder:8"

struct rk_mix {
	int n;
	struct {
		const struct rk_site *site;
		int weight;
		struct rk_pop *pop;
	} e[RK_MAX_MIX];
};

/* Parse arg into *m; annotated sites only, weights 0..1000. */
static inline void rk_mix_parse(struct rk_mix *m, const char *arg)
{
	char buf[512], *tok, *save;
	int sum = 0;

	memset(m, 0, sizeof(*m));
	if (strlen(arg) >= sizeof(buf))
		rk_usage("mix= too long");
	strcpy(buf, arg);
	for (tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		char *colon = strchr(tok, ':'), *end;
		long w;

		if (!colon || m->n == RK_MAX_MIX)
			rk_usage("mix=%s: want site:weight/site:weight...", arg);
		*colon = '\0';
		m->e[m->n].site = rk_site_by_name(tok);
		if (!m->e[m->n].site || !strcmp(tok, "eventfd"))
			rk_usage("mix: '%s' is not an annotated wait site (futex, futex_waitv, epoll, poll, select, nanosleep, pipe, sigtimedwait, binder)",
				 tok);
		w = strtol(colon + 1, &end, 10);
		if (end == colon + 1 || *end || w < 0 || w > 1000)
			rk_usage("mix: weight of %s must be an integer in [0, 1000]", tok);
		m->e[m->n++].weight = w;
		sum += w;
	}
	if (!sum)
		rk_usage("mix=%s: weights add up to 0", arg);
}

/* Threads of entry i out of total: its share, the remainder to entry 0. */
static inline int rk_mix_share(const struct rk_mix *m, int total, int i)
{
	int sum = 0, given = 0;

	for (int j = 0; j < m->n; j++)
		sum += m->e[j].weight;
	for (int j = 0; j < m->n; j++)
		given += total * m->e[j].weight / sum;
	return total * m->e[i].weight / sum + (i == 0 ? total - given : 0);
}

/* Block total threads of this process over the mix; 0 on success. */
static inline int rk_mix_start(struct rk_mix *m, int total)
{
	for (int i = 0; i < m->n; i++) {
		int nr = rk_mix_share(m, total, i);

		if (!nr)
			continue;
		m->e[i].pop = m->e[i].pop ?: calloc(1, sizeof(struct rk_pop));
		if (!m->e[i].pop || rk_pop_start(m->e[i].pop, m->e[i].site, nr, NULL)) {
			fprintf(stderr, "could not block %d threads at %s\n", nr,
				m->e[i].site->name);
			return -1;
		}
	}
	return 0;
}

/* Wake and join everyone; *bad gets the failures. Returns threads done. */
static inline int rk_mix_finish(struct rk_mix *m, int total, int *bad)
{
	int done = 0;

	*bad = 0;
	for (int i = 0; i < m->n; i++) {
		int r;

		if (!rk_mix_share(m, total, i))
			continue;
		r = rk_pop_finish(m->e[i].pop);
		if (r < 0)
			*bad += -r;
		else
			done += r;
	}
	return done;
}

static inline void rk_mix_print(const struct rk_mix *m, int total)
{
	for (int i = 0; i < m->n; i++)
		printf(" %s:%d", m->e[i].site->name, rk_mix_share(m, total, i));
}

#endif /* RK_MIX_H */
