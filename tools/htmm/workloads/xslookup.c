// SPDX-License-Identifier: GPL-2.0
/*
 * xslookup: an XSBench-style kernel, our implementation of the published
 * algorithm, not XSBench.  It follows the description of the unionised
 * energy grid method in Tramm et al., "XSBench - The Development and
 * Verification of a Performance Abstraction for Monte Carlo Reactor
 * Analysis" (PHYSOR 2014): the macroscopic cross-section lookups that
 * dominate a Monte Carlo neutron transport run.
 *
 * Data ("small" problem): NUCS nuclides, each with G grid points (sorted
 * random energies in [0, 1)) carrying 5 cross sections (total, elastic,
 * absorption, fission, nu-fission); the unionised grid, the sorted union
 * of all nuclides' energies, and for each of its points an index row of
 * NUCS ints: per nuclide, its grid point at or below that energy.  12
 * materials with the published nuclide counts (fuel 34, then 5, 4, 4,
 * 27, 21, 21, 21, 21, 21, 9, 9) and probabilities, random nuclides and
 * concentrations.  G comes from --mb: the index grid is most of it.
 *
 * A lookup: a random energy and a material drawn by the probabilities, a
 * binary search of the unionised grid, then for each nuclide of the
 * material its index, its two bracketing grid points, the 5 cross
 * sections interpolated and added, times the concentration, to the
 * macroscopic vector.  Every lookup lands at random in the unionised
 * grid, the index grid and the nuclides' grids (the fuel's 34 the most).
 *
 * Measured phase: --lookups (default 4000000, times --work) lookups, each
 * from its own random state (so any can be replayed), summed into a
 * checksum and a hash of which cross section is the largest.
 *
 * Options: --mb N (default 300), --seed S (1), --work X (1.0),
 * --lookups N.
 *
 * Output: "wl result gridpoints G union U lookups L seconds S
 * lookups_per_s X checksum C hash H"; the check: 1000 lookups spread
 * over the measured phase, recomputed after it by a plain linear search
 * of each nuclide's own grid (no unionised grid), all agree to 1e-9.
 */
#include "wl.h"

#define NUCS		68
#define MATS		12
#define NXS		5
#define MAX_MAT_NUCS	34
#define SAMPLE		1000
#define MIN_GRID	16
#define DEFAULT_LOOKUPS	4000000
#define BASE_KB		1900
#define LOOKUP_STEP	0xd1b54a32d192ed03ULL

struct point {
	double energy;
	double xs[NXS];
};

struct xs {
	long g;				/* grid points per nuclide */
	long u;				/* unionised grid points: NUCS * g */
	struct point *nuc;		/* [NUCS][g] */
	double *uenergy;		/* [u] */
	int *uindex;			/* [u][NUCS] */
	int mat_nucs[MATS][MAX_MAT_NUCS];
	double conc[MATS][MAX_MAT_NUCS];
	double cdf[MATS];
	uint64_t lbase;
};

static const int mat_count[MATS] = {
	34, 5, 4, 4, 27, 21, 21, 21, 21, 21, 9, 9,
};

static const double mat_prob[MATS] = {
	0.140, 0.052, 0.275, 0.134, 0.154, 0.064,
	0.066, 0.055, 0.008, 0.015, 0.025, 0.013,
};

static const char * const opts[] = {
	"--mb", "--seed", "--work", "--lookups", NULL,
};

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int point_cmp(const void *a, const void *b)
{
	return dbl_cmp(&((const struct point *)a)->energy,
		       &((const struct point *)b)->energy);
}

/* Nuclide grids: sorted random energies, random cross sections. */
static void gen_nuclides(struct xs *x, uint64_t *s)
{
	long n, i;
	int k;

	x->nuc = wl_malloc(NUCS * x->g * sizeof(*x->nuc));
	for (n = 0; n < NUCS; n++) {
		struct point *p = x->nuc + n * x->g;

		for (i = 0; i < x->g; i++) {
			p[i].energy = wl_rand01(s);
			for (k = 0; k < NXS; k++)
				p[i].xs[k] = wl_rand01(s);
		}
		qsort(p, x->g, sizeof(*p), point_cmp);
	}
}

/* Materials: distinct random nuclides, concentrations, the cdf. */
static void gen_materials(struct xs *x, uint64_t *s)
{
	double sum = 0;
	int m, i, j;

	for (m = 0; m < MATS; m++) {
		for (i = 0; i < mat_count[m]; i++) {
			int nuc;

			do {
				nuc = (int)wl_randn(s, NUCS);
				for (j = 0; j < i; j++)
					if (x->mat_nucs[m][j] == nuc)
						break;
			} while (j < i);
			x->mat_nucs[m][i] = nuc;
			x->conc[m][i] = wl_rand01(s);
		}
		sum += mat_prob[m];
		x->cdf[m] = sum;
	}
	for (m = 0; m < MATS; m++)
		x->cdf[m] /= sum;
}

/* The unionised grid and, per point, each nuclide's point at or below. */
static void unionise(struct xs *x)
{
	long cur[NUCS] = { 0 }, i;
	int n;

	x->uenergy = wl_malloc(x->u * sizeof(*x->uenergy));
	for (i = 0; i < x->u; i++)
		x->uenergy[i] = x->nuc[i].energy;
	qsort(x->uenergy, x->u, sizeof(*x->uenergy), dbl_cmp);
	x->uindex = wl_malloc(x->u * NUCS * sizeof(*x->uindex));
	for (i = 0; i < x->u; i++) {
		for (n = 0; n < NUCS; n++) {
			const struct point *p = x->nuc + n * x->g;

			while (cur[n] + 1 < x->g &&
			       p[cur[n] + 1].energy <= x->uenergy[i])
				cur[n]++;
			/* The last point has none above: use the one below. */
			x->uindex[i * NUCS + n] = (int)(cur[n] < x->g - 1 ?
						       cur[n] : x->g - 2);
		}
	}
}

static int pick_mat(const struct xs *x, double r)
{
	int m;

	for (m = 0; m < MATS - 1; m++)
		if (r < x->cdf[m])
			break;
	return m;
}

/* Add @conc times the cross sections at @e between @lo and lo[1]. */
static void interpolate(const struct point *lo, double e, double conc,
			double *macro)
{
	const struct point *hi = lo + 1;
	double f = (hi->energy - e) / (hi->energy - lo->energy);
	int k;

	for (k = 0; k < NXS; k++)
		macro[k] += conc * (hi->xs[k] - f * (hi->xs[k] - lo->xs[k]));
}

/* Lookup number @i: its energy and material from its own random state. */
static int lookup_args(const struct xs *x, uint64_t i, double *e)
{
	uint64_t s = x->lbase + i * LOOKUP_STEP;

	*e = wl_rand01(&s);
	return pick_mat(x, wl_rand01(&s));
}

/* The unionised grid's point at or below @e (0 if none). */
static long usearch(const struct xs *x, double e)
{
	long lo = 0, hi = x->u - 1;

	while (lo < hi) {
		long mid = lo + (hi - lo + 1) / 2;

		if (x->uenergy[mid] <= e)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int lookup(const struct xs *x, uint64_t i, double *macro)
{
	double e;
	int m = lookup_args(x, i, &e), j, k;
	const int *idx = x->uindex + usearch(x, e) * NUCS;

	for (k = 0; k < NXS; k++)
		macro[k] = 0;
	for (j = 0; j < mat_count[m]; j++) {
		int n = x->mat_nucs[m][j];

		interpolate(x->nuc + n * x->g + idx[n], e, x->conc[m][j],
			    macro);
	}
	return m;
}

/* The same lookup by a linear search of each nuclide's own grid. */
static void lookup_plain(const struct xs *x, uint64_t i, double *macro)
{
	double e;
	int m = lookup_args(x, i, &e), j, k;

	for (k = 0; k < NXS; k++)
		macro[k] = 0;
	for (j = 0; j < mat_count[m]; j++) {
		const struct point *p = x->nuc + x->mat_nucs[m][j] * x->g;
		long g = 0;

		while (g + 1 < x->g && p[g + 1].energy <= e)
			g++;
		interpolate(p + (g < x->g - 1 ? g : x->g - 2), e,
			    x->conc[m][j], macro);
	}
}

struct run {
	long n, stride, taken;
	double sum;
	uint64_t hash;
	double sample[SAMPLE][NXS];
};

static void run(const struct xs *x, struct run *r)
{
	double macro[NXS];
	long i;
	int k, m, top;

	for (i = 0; i < r->n; i++) {
		m = lookup(x, i, macro);
		for (k = 0, top = 0; k < NXS; k++) {
			r->sum += macro[k];
			if (macro[k] > macro[top])
				top = k;
		}
		r->hash = (r->hash * 31 + (uint64_t)(top + 1) * (m + 1)) %
			  999983;
		if (i % r->stride == 0 && r->taken < SAMPLE)
			memcpy(r->sample[r->taken++], macro, sizeof(macro));
	}
}

/* Sampled lookups recomputed without the unionised grid: mismatches. */
static long verify(const struct xs *x, const struct run *r)
{
	double macro[NXS];
	long j, bad = 0;
	int k;

	for (j = 0; j < r->taken; j++) {
		lookup_plain(x, j * r->stride, macro);
		for (k = 0; k < NXS; k++) {
			double a = macro[k], b = r->sample[j][k];
			double d = fabs(a - b), big = fmax(fabs(a), fabs(b));

			if (d * 1e9 > big) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

int main(int argc, char **argv)
{
	double mb = wl_arg(argc, argv, "--mb", 300);
	uint64_t s = wl_fnv64((uint64_t)wl_arg(argc, argv, "--seed", 1));
	double work = wl_arg(argc, argv, "--work", 1.0);
	double bytes = mb * 1048576 - BASE_KB * 1024.0;
	static struct run r;
	struct xs x;
	double secs;
	long bad;

	wl_check_opts(argc, argv, opts);
	r.n = (long)(wl_arg(argc, argv, "--lookups", DEFAULT_LOOKUPS) * work +
		     0.5);
	if (mb < 4 || mb > 65536 || work <= 0 || r.n < 1) {
		fprintf(stderr, "%s: bad --mb, --work or --lookups\n", argv[0]);
		return 2;
	}
	x.g = (long)(bytes / (NUCS * (sizeof(struct point) + sizeof(double) +
				      NUCS * sizeof(int))));
	x.g = x.g < MIN_GRID ? MIN_GRID : x.g;
	x.u = NUCS * x.g;
	gen_nuclides(&x, &s);
	gen_materials(&x, &s);
	unionise(&x);
	x.lbase = wl_rand(&s);
	r.stride = r.n > SAMPLE ? r.n / SAMPLE : 1;
	wl_phase_begin();
	run(&x, &r);
	secs = wl_phase_end();
	bad = verify(&x, &r);
	printf("wl result gridpoints %ld union %ld lookups %ld seconds %.3f lookups_per_s %.0f checksum %.6f hash %llu\n",
	       x.g, x.u, r.n, secs, r.n / secs, r.sum,
	       (unsigned long long)r.hash);
	printf("wl check %s %ld of %ld sampled lookups differ from a plain search of the nuclide grids\n",
	       bad ? "FAIL" : "ok", bad, r.taken);
	fflush(stdout);
	return bad ? 1 : 0;
}
