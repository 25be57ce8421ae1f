// SPDX-License-Identifier: GPL-2.0
/*
 * pagerank: PageRank of a power-law directed graph with igraph's PRPACK
 * solver (Debian's libigraph, 0.10), the way a graph-analytics job ranks
 * the pages of a web crawl.
 *
 * Setup: igraph_static_power_law_game() makes a directed graph of N
 * vertices and AVG_DEG * N edges (no self-loops, multi-edges allowed, no
 * finite-size correction) whose out- and in-degrees follow power laws of
 * exponents EXP_OUT = 2.7 and EXP_IN = 2.1, those Broder et al. measured
 * on the web: a giant strongly connected core, hubs with in-degrees in the
 * 100 000s, dangling pages; igraph's RNG is seeded with --seed.  (A
 * directed Barabasi-Albert graph would be a DAG, which PRPACK solves in
 * one sweep.)  N is chosen from --mb so that the graph plus PRPACK's
 * working memory is about --mb MiB.  One PageRank runs before the measured
 * phase so that its working memory is resident; wl_heap_keep() then keeps
 * freed memory in the heap, so each later run reuses the same pages, as a
 * long-running analytics process does.  PRPACK's loops use OpenMP in
 * Debian's build: --threads (default 1) sets the number of threads.
 *
 * Measured phase: igraph_pagerank() (PRPACK, damping 0.85, directed)
 * repeated --iters times.  Each run copies the graph into PRPACK's CSR
 * arrays, orders it by strongly connected components and runs Gauss-Seidel
 * sweeps over each component: streaming over the edge arrays, random reads
 * of the rank vector skewed towards the vertices of high out-degree.
 *
 * Check: the ranks are non-negative and sum to 1 (within 1e-6); an
 * independent plain C power iteration over an in-edge CSR built from the
 * graph's edge list converges (L1 step < 1e-12) to the same vector (max
 * difference below 1e-6 of the largest rank); the best vertex and at least
 * three of the top five are among the top 1% by in-degree (a page can rank
 * high with a small in-degree when a hub links to it, so not all five).
 *
 * Options: --mb N (300), --seed S (1), --work X (1.0), --iters K (default
 * ITERS * X rounded, at least 1), --threads T (1).
 * Output: "wl begin/end" lines (wl.h), then
 *   wl result vertices V edges E iters K seconds S runs_per_s R setup_s X
 *   wl result top5 vertex:rank:indegree ...
 *   wl check ok|FAIL ...
 */
#include <igraph/igraph.h>
#include <dlfcn.h>
#include "wl.h"

#define DAMPING		0.85
#define AVG_DEG		10
#define EXP_OUT		2.7
#define EXP_IN		2.1
#define ITERS		3
/*
 * Resident bytes per vertex (igraph graph + PRPACK working memory) and
 * fixed KiB (libraries, heap), measured on Debian's libigraph 0.10.2; a
 * constant, so that the graph depends on --mb and --seed only.
 */
#define BYTES_PER_V	509.0
#define FIXED_KB	9500
#define MIN_V		1000
#define PI_MAX_ITERS	400
#define EPS		0.000001	/* tolerance of the checks */
#define PI_TOL		(EPS * EPS)
#define TOP		5

static const char *const opts[] = {
	"--mb", "--seed", "--work", "--iters", "--threads", NULL
};

static void ig_ok(igraph_error_t e, const char *what)
{
	if (e == IGRAPH_SUCCESS)
		return;
	fprintf(stderr, "pagerank: %s: %s\n", what, igraph_strerror(e));
	exit(1);
}

static void *xzalloc(size_t n)
{
	void *p = calloc(n ? n : 1, 1);

	if (!p) {
		fprintf(stderr, "pagerank: out of memory\n");
		exit(1);
	}
	return p;
}

/* In-edge CSR of the graph, for the independent power iteration. */
struct csr {
	int32_t n;
	int64_t m;
	int64_t *off;		/* n + 1 starts into src */
	int32_t *src;		/* sources of the in-edges of each vertex */
	int32_t *outdeg;
};

static void csr_build(const igraph_t *g, struct csr *c)
{
	igraph_integer_t e, i;

	c->n = igraph_vcount(g);
	c->m = igraph_ecount(g);
	c->off = xzalloc((c->n + 1) * sizeof(*c->off));
	c->outdeg = xzalloc(c->n * sizeof(*c->outdeg));
	c->src = xzalloc(c->m * sizeof(*c->src));
	for (e = 0; e < c->m; e++) {
		c->off[IGRAPH_TO(g, e) + 1]++;
		c->outdeg[IGRAPH_FROM(g, e)]++;
	}
	for (i = 0; i < c->n; i++)
		c->off[i + 1] += c->off[i];
	for (e = 0; e < c->m; e++)
		c->src[c->off[IGRAPH_TO(g, e)]++] = IGRAPH_FROM(g, e);
	for (i = c->n; i > 0; i--)
		c->off[i] = c->off[i - 1];
	c->off[0] = 0;
}

static void csr_free(struct csr *c)
{
	free(c->off);
	free(c->src);
	free(c->outdeg);
}

/*
 * One step x -> y of the PageRank equation: a dangling vertex links to
 * all vertices, the damping restart is uniform.  Returns |y - x|_1.
 */
static double pi_step(const struct csr *c, const double *x, double *y,
		      double *share)
{
	double dang = 0, base, s, diff = 0;
	int64_t k;
	int32_t i;

	for (i = 0; i < c->n; i++) {
		if (c->outdeg[i]) {
			share[i] = x[i] / c->outdeg[i];
		} else {
			share[i] = 0;
			dang += x[i];
		}
	}
	base = (1 - DAMPING) / c->n + DAMPING * dang / c->n;
	for (i = 0; i < c->n; i++) {
		s = 0;
		for (k = c->off[i]; k < c->off[i + 1]; k++)
			s += share[c->src[k]];
		y[i] = base + DAMPING * s;
		diff += fabs(y[i] - x[i]);
	}
	return diff;
}

/* Power iteration from the uniform vector into x; returns the steps. */
static int power_iteration(const struct csr *c, double *x, double *diff)
{
	double *y = xzalloc(c->n * sizeof(*y)), *sh, *cur = x, *next = y, *t;
	int32_t i;
	int k;

	sh = xzalloc(c->n * sizeof(*sh));
	for (i = 0; i < c->n; i++)
		x[i] = 1.0 / c->n;
	for (k = 1; k <= PI_MAX_ITERS; k++) {
		*diff = pi_step(c, cur, next, sh);
		t = cur;
		cur = next;
		next = t;
		if (*diff < PI_TOL)
			break;
	}
	if (cur != x)
		memcpy(x, cur, c->n * sizeof(*x));
	free(y);
	free(sh);
	return k;
}

/* Top TOP vertices by rank, best first. */
static void top_ranks(const igraph_vector_t *pr, igraph_integer_t *top)
{
	igraph_integer_t i, n = igraph_vector_size(pr);
	int k, j;

	for (k = 0; k < TOP; k++)
		top[k] = -1;
	for (i = 0; i < n; i++) {
		for (k = TOP; k > 0; k--)
			if (top[k - 1] >= 0 &&
			    VECTOR(*pr)[top[k - 1]] >= VECTOR(*pr)[i])
				break;
		if (k == TOP)
			continue;
		for (j = TOP - 1; j > k; j--)
			top[j] = top[j - 1];
		top[k] = i;
	}
}

/*
 * Prints the top vertices with their in-degrees; returns a mask of those
 * (bit k: k-th best) not among the top 1% (at least TOP) by in-degree.
 */
static int top_vs_indegree(const struct csr *c, const igraph_vector_t *pr)
{
	igraph_integer_t top[TOP];
	int64_t d, above, limit = c->n / 100 > TOP ? c->n / 100 : TOP;
	int k, bad = 0;
	int32_t i;

	top_ranks(pr, top);
	printf("wl result top%d", TOP);
	for (k = 0; k < TOP && top[k] >= 0; k++) {
		d = c->off[top[k] + 1] - c->off[top[k]];
		for (above = 0, i = 0; i < c->n; i++)
			above += c->off[i + 1] - c->off[i] > d;
		bad |= (above >= limit) << k;
		printf(" %ld:%.3g:%ld", (long)top[k], VECTOR(*pr)[top[k]],
		       (long)d);
	}
	printf("\n");
	fflush(stdout);
	return bad;
}

static int verify(const igraph_t *g, const igraph_vector_t *pr)
{
	igraph_integer_t i, n = igraph_vector_size(pr);
	double sum = 0, min = 1, max = 0, dmax = 0, diff, *x;
	struct csr c;
	int steps, bad, ok;

	for (i = 0; i < n; i++) {
		sum += VECTOR(*pr)[i];
		min = fmin(min, VECTOR(*pr)[i]);
		max = fmax(max, VECTOR(*pr)[i]);
	}
	csr_build(g, &c);
	x = xzalloc(n * sizeof(*x));
	steps = power_iteration(&c, x, &diff);
	for (i = 0; i < n; i++)
		dmax = fmax(dmax, fabs(x[i] - VECTOR(*pr)[i]));
	free(x);
	bad = top_vs_indegree(&c, pr);
	csr_free(&c);
	/* the best one and most of the top TOP must be hubs */
	ok = fabs(sum - 1) < EPS && min >= 0 && steps <= PI_MAX_ITERS &&
	     dmax < EPS * max && !(bad & 1) &&
	     __builtin_popcount(bad) <= TOP / 2;
	printf("wl check %s sum %.9f min %.3g max %.3g power_iter_steps %d max_diff %.3g top%d_not_high_indeg %d\n",
	       ok ? "ok" : "FAIL", sum, min, max, steps, dmax, TOP,
	       __builtin_popcount(bad));
	fflush(stdout);
	return ok;
}

/*
 * Debian's libigraph runs PRPACK's sweeps with OpenMP; its libgomp comes
 * with libigraph, so omp_set_num_threads() is looked up rather than linked.
 */
typedef void (*omp_set_fn)(int n);

static void set_threads(int n)
{
	omp_set_fn set = (omp_set_fn)dlsym(RTLD_DEFAULT, "omp_set_num_threads");

	if (set)
		set(n);
}

static void pagerank(const igraph_t *g, igraph_vector_t *pr)
{
	ig_ok(igraph_pagerank(g, IGRAPH_PAGERANK_ALGO_PRPACK, pr, NULL,
			      igraph_vss_all(), true, DAMPING, NULL, NULL),
	      "igraph_pagerank");
}

static void make_graph(igraph_t *g, double mb, uint64_t seed)
{
	igraph_integer_t n;

	n = (igraph_integer_t)((mb * 1024 - FIXED_KB) * 1024 / BYTES_PER_V);
	if (n < MIN_V)
		n = MIN_V;
	ig_ok(igraph_rng_seed(igraph_rng_default(), seed), "igraph_rng_seed");
	ig_ok(igraph_static_power_law_game(g, n, n * AVG_DEG, EXP_OUT, EXP_IN,
					   false, true, false),
	      "igraph_static_power_law_game");
	/* from now on freed memory stays in the heap, to be reused */
	wl_heap_keep();
}

int main(int argc, char **argv)
{
	double mb, work, t0, setup, secs;
	igraph_vector_t pr;
	uint64_t seed;
	igraph_t g;
	long iters, i;
	int threads;

	wl_check_opts(argc, argv, opts);
	mb = wl_arg(argc, argv, "--mb", 300);
	seed = (uint64_t)wl_arg(argc, argv, "--seed", 1);
	work = wl_arg(argc, argv, "--work", 1.0);
	iters = (long)wl_arg(argc, argv, "--iters", fmax(1, round(ITERS * work)));
	threads = (int)wl_arg(argc, argv, "--threads", 1);
	if (mb < 1 || work <= 0 || iters < 1 || threads < 1) {
		fprintf(stderr, "%s: bad --mb, --work, --iters or --threads\n",
			argv[0]);
		return 2;
	}
	set_threads(threads);
	wl_heap_setup();
	t0 = wl_now();
	make_graph(&g, mb, seed);
	ig_ok(igraph_vector_init(&pr, igraph_vcount(&g)), "igraph_vector_init");
	pagerank(&g, &pr);
	setup = wl_now() - t0;

	wl_phase_begin();
	for (i = 0; i < iters; i++)
		pagerank(&g, &pr);
	secs = wl_phase_end();

	printf("wl result vertices %ld edges %ld iters %ld seconds %.3f runs_per_s %.3f setup_s %.3f\n",
	       (long)igraph_vcount(&g), (long)igraph_ecount(&g), iters, secs,
	       iters / secs, setup);
	fflush(stdout);
	i = verify(&g, &pr);
	igraph_vector_destroy(&pr);
	igraph_destroy(&g);
	return i ? 0 : 1;
}
