// SPDX-License-Identifier: GPL-2.0
/*
 * linear: liblinear training (Debian's liblinear 2.3.0) on a synthetic
 * sparse binary classification data set shaped like text data.
 *
 * It models a large-scale linear classifier run ("train -s 0"): the data
 * set is built in memory as liblinear's struct problem, then train()
 * fits an L2-regularised logistic regression (solver L2R_LR, C = 1).
 * That solver is a truncated Newton method (trust region, preconditioned
 * conjugate gradient): every function, gradient and Hessian-vector
 * product streams the whole instance array once and gathers/scatters the
 * weight-sized vectors at the instances' feature indices, so the data is
 * read uniformly and repeatedly while the weight vectors are hit with
 * the features' zipfian skew.  It uses the same logistic loss as the
 * "-s 6" (L1R_LR) runs of MEMTIS but works on the rows as given, where
 * -s 6 first makes a column-major copy of the data (twice the footprint)
 * and the dual solvers' shrinking and random order make the work depend
 * on convergence.
 *
 * Data: 2^b features, the largest with 2^b <= 2048 * --mb (2^19 at
 * --mb 300), so the solver's eight or so weight-sized vectors are a
 * seventh of the footprint, as with real text data sets.  An instance
 * has 20..80 draws of a zipfian feature rank (theta 0.99), the rank
 * FNV-hashed to a feature index (popular features scattered); repeated
 * draws add up; the value is tf * idf (idf growing with the rank), the
 * instance scaled to unit length.  Its label is the sign of a hidden
 * sparse linear model (half of the top 1/256 of the ranks weighted,
 * uniform in [-1, 1]), flipped for 5% of the instances.  The instance
 * count comes from --mb: data plus liblinear's working memory during
 * train() about --mb MiB.
 *
 * Measured phase: --rounds (default 1) times --work, rounded, at least
 * one, calls of train() from scratch with eps 0.01 (liblinear's default
 * for -s 0).  liblinear 2.3.0 has no iteration limit to set, so the work
 * is made fixed instead: the data is a function of the seed and --mb and
 * each round the same deterministic computation (4 Newton, 16 CG
 * iterations at --mb 300, about 33 passes over the data), counted
 * through liblinear's print hook, which otherwise stays silent.  A round
 * is the unit: --work below 1 still trains once.
 *
 * Options: --mb N (default 300), --seed S (1), --work X (1.0),
 * --rounds R (1), --eps E (0.01).
 *
 * Output: "wl result instances L features N nnz Z rounds R newton_iters I
 * cg_iters C seconds S train_acc A test_acc B"; the check:
 * check_parameter() accepts the problem, the model's accuracy on 10000
 * training instances is at least 85% and on 10000 freshly generated
 * held-out instances at least 80% (5% of the labels are flipped, so 95%
 * is about the best; a model that learnt nothing gets 50%).
 */
#include <linear.h>
#include "wl.h"

#define KMIN		20
#define KMAX		80
#define THETA		0.99
#define FLIP		0.05
#define MODEL_FRAC	2		/* 1 / MODEL_FRAC of the top weighted */
#define MODEL_TOP_DIV	256		/* the top: features / MODEL_TOP_DIV */
#define SAMPLE		10000
#define TRAIN_MIN_ACC	0.85
#define TEST_MIN_ACC	0.80
#define MAX_FEAT_LOG2	20
#define MIN_FEAT_LOG2	12
/*
 * Memory model (measured): bytes per instance of data (about 45 nodes of
 * 16 bytes, the row pointer, the label) plus liblinear's per-instance
 * working arrays; bytes per feature of the solver's vectors; a base.
 */
#define INST_BYTES	785
#define FEAT_BYTES	80
#define BASE_KB		2600

struct gen {
	struct wl_zipf zipf;
	unsigned int feat_log2;
	uint64_t model_top, model_seed;
};

static long newton_iters, cg_iters;

/* liblinear's output: count Newton and CG iterations, print nothing. */
static void quiet(const char *s)
{
	const char *cg = strstr(s, " CG ");

	if (strncmp(s, "iter", 4))
		return;
	newton_iters++;
	if (cg)
		cg_iters += atol(cg + 4);
}

static const char * const opts[] = {
	"--mb", "--seed", "--work", "--rounds", "--eps", NULL,
};

/* The hidden model's weight of the feature of rank @r: zero for most. */
static double model_weight(const struct gen *g, uint64_t r)
{
	uint64_t h = wl_fnv64(r ^ g->model_seed);

	if (r >= g->model_top || h % MODEL_FRAC)
		return 0;
	return ((h >> 11) * (1.0 / 9007199254740992.0)) * 2.0 - 1.0;
}

static int node_cmp(const void *a, const void *b)
{
	const struct feature_node *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

/* Sort by index, merge repeats, scale to unit length; returns the count. */
static int tidy(struct feature_node *x, int k)
{
	double norm = 0;
	int i, m = 0;

	qsort(x, k, sizeof(*x), node_cmp);
	for (i = 0; i < k; i++) {
		if (m && x[m - 1].index == x[i].index) {
			x[m - 1].value += x[i].value;
			continue;
		}
		x[m++] = x[i];
	}
	for (i = 0; i < m; i++)
		norm += x[i].value * x[i].value;
	norm = 1.0 / sqrt(norm);
	for (i = 0; i < m; i++)
		x[i].value *= norm;
	x[m].index = -1;
	x[m].value = 0;
	return m;
}

/* One instance into @x (room for KMAX + 1 nodes); returns its nonzeros. */
static int gen_instance(const struct gen *g, uint64_t *s,
			struct feature_node *x, double *y)
{
	int i, m, k = KMIN + (int)wl_randn(s, KMAX - KMIN + 1);
	double score = 0;

	for (i = 0; i < k; i++) {
		uint64_t r = wl_zipf_next(&g->zipf, s);
		double tf = 1.0 + wl_rand01(s);

		x[i].index = (int)(wl_fnv64(r) >> (64 - g->feat_log2)) + 1;
		x[i].value = tf * (1.0 + THETA * log(1.0 + r));
		score += x[i].value * model_weight(g, r);
	}
	m = tidy(x, k);
	*y = score > 0 ? 1 : -1;
	if (wl_rand01(s) < FLIP)
		*y = -*y;
	return m;
}

/* @l instances into @prob, all nodes in one pool; returns the nonzeros. */
static long build(struct problem *prob, const struct gen *g, int l,
		  uint64_t seed)
{
	struct feature_node *pool, *p;
	uint64_t s = seed;
	long nnz = 0, used = 0;
	int i;

	prob->l = l;
	prob->n = 1 << g->feat_log2;
	prob->bias = -1;
	prob->y = wl_malloc(l * sizeof(*prob->y));
	prob->x = wl_malloc(l * sizeof(*prob->x));
	/* Room for the longest rows; the untouched tail never gets resident. */
	pool = wl_malloc((size_t)l * (KMAX + 1) * sizeof(*pool));
	for (i = 0; i < l; i++) {
		int m = gen_instance(g, &s, pool + used, &prob->y[i]);

		nnz += m;
		used += m + 1;
	}
	pool = realloc(pool, used * sizeof(*pool));
	if (!pool) {
		printf("wl check FAIL out of memory\n");
		exit(1);
	}
	/* Rows follow one another, each ended by index -1. */
	for (i = 0, p = pool; i < l; i++) {
		prob->x[i] = p;
		while (p->index != -1)
			p++;
		p++;
	}
	return nnz;
}

/* Share of SAMPLE training instances that @model labels right. */
static double accuracy_train(const struct model *model,
			     const struct problem *prob)
{
	int i, n = 0, ok = 0, step = prob->l > SAMPLE ? prob->l / SAMPLE : 1;

	for (i = 0; i < prob->l && n < SAMPLE; i += step, n++)
		ok += predict(model, prob->x[i]) == prob->y[i];
	return (double)ok / n;
}

static double accuracy_test(const struct model *model, const struct gen *g,
			    uint64_t seed)
{
	struct feature_node x[KMAX + 1];
	uint64_t s = seed;
	int i, ok = 0;
	double y;

	for (i = 0; i < SAMPLE; i++) {
		gen_instance(g, &s, x, &y);
		ok += predict(model, x) == y;
	}
	return (double)ok / SAMPLE;
}

static struct model *run(const struct problem *prob,
			 const struct parameter *param, int rounds)
{
	struct model *model = NULL;
	int r;

	for (r = 0; r < rounds; r++) {
		if (model)
			free_and_destroy_model(&model);
		model = train(prob, param);
	}
	return model;
}

static int report(const struct problem *prob, const struct model *model,
		  const struct gen *g, uint64_t seed, long nnz, int rounds,
		  double secs)
{
	double tr = accuracy_train(model, prob);
	double te = accuracy_test(model, g, wl_fnv64(seed ^ 0x7e57));
	int ok = tr >= TRAIN_MIN_ACC && te >= TEST_MIN_ACC;

	printf("wl result instances %d features %d nnz %ld rounds %d newton_iters %ld cg_iters %ld seconds %.3f train_acc %.4f test_acc %.4f\n",
	       prob->l, prob->n, nnz, rounds, newton_iters, cg_iters, secs,
	       tr, te);
	printf("wl check %s train_acc %.4f (min %.2f) test_acc %.4f (min %.2f) on %d instances each\n",
	       ok ? "ok" : "FAIL", tr, TRAIN_MIN_ACC, te, TEST_MIN_ACC,
	       SAMPLE);
	fflush(stdout);
	return ok ? 0 : 1;
}

static unsigned int feat_log2(double mb)
{
	unsigned int b = MIN_FEAT_LOG2;

	while (b < MAX_FEAT_LOG2 && (double)(2UL << b) <= mb * 2048)
		b++;
	return b;
}

int main(int argc, char **argv)
{
	double mb = wl_arg(argc, argv, "--mb", 300);
	uint64_t seed = (uint64_t)wl_arg(argc, argv, "--seed", 1);
	double work = wl_arg(argc, argv, "--work", 1.0);
	int rounds = (int)(wl_arg(argc, argv, "--rounds", 1) * work + 0.5);
	struct parameter param = { .solver_type = L2R_LR, .C = 1, .p = 0.1 };
	struct problem prob;
	struct model *model;
	const char *err;
	struct gen g;
	double bytes, secs;
	long nnz;

	wl_check_opts(argc, argv, opts);
	param.eps = wl_arg(argc, argv, "--eps", 0.01);
	if (mb < 4 || mb > 65536 || work <= 0 || param.eps <= 0) {
		fprintf(stderr, "%s: bad --mb, --work or --eps\n", argv[0]);
		return 2;
	}
	rounds = rounds < 1 ? 1 : rounds;
	set_print_string_function(quiet);
	g.feat_log2 = feat_log2(mb);
	g.model_seed = wl_fnv64(seed ^ 0x3a0de1);
	g.model_top = (1UL << g.feat_log2) / MODEL_TOP_DIV;
	wl_zipf_init(&g.zipf, 1UL << g.feat_log2, THETA);
	bytes = mb * 1048576 - BASE_KB * 1024.0 -
		(double)FEAT_BYTES * (1 << g.feat_log2);
	nnz = build(&prob, &g, bytes > INST_BYTES * 1000.0 ?
		    (int)(bytes / INST_BYTES) : 1000, wl_fnv64(seed));
	err = check_parameter(&prob, &param);
	if (err) {
		printf("wl check FAIL check_parameter: %s\n", err);
		return 1;
	}
	wl_phase_begin();
	model = run(&prob, &param, rounds);
	secs = wl_phase_end();
	return report(&prob, model, &g, seed, nnz, rounds, secs);
}
