// SPDX-License-Identifier: GPL-2.0
/*
 * graph500: the breadth-first search kernel of the Graph500 benchmark on
 * igraph (Debian's libigraph, 0.10).
 *
 * Setup: a Kronecker graph as the Graph500 specification describes it:
 * 2^SCALE vertices, EDGEFACTOR * 2^SCALE edges, each edge placed by
 * choosing, for each of the SCALE bits of its two endpoints, one quadrant
 * of the adjacency matrix with the initiator probabilities A = 0.57,
 * B = C = 0.19, D = 0.05; then the vertex labels are randomly permuted and
 * the edge list shuffled (wl_rand() seeded with --seed).  The edge list
 * becomes an undirected igraph graph (igraph_create(), self-loops and
 * duplicate edges kept, as in the specification) and is freed.  SCALE is
 * picked from --mb; as one SCALE step doubles the footprint, the number of
 * edges is trimmed to F * EDGEFACTOR * 2^SCALE (--edges-scale F) so that
 * the graph plus the BFS arrays is about --mb MiB.  By default F is chosen
 * for that: the smallest SCALE (the most edges per vertex) that reaches
 * 90% of --mb with F <= 1 and with the setup's peak (igraph_create() needs
 * the edge list, the graph and its sorting buffers at once, 56 bytes per
 * edge) at most PEAK_MAX times --mb; with --edges-scale F given, SCALE is
 * the largest that fits.  --roots search keys are drawn among the vertices
 * of non-zero degree (self-loops not counted), all distinct; one BFS runs
 * before the measured phase so that its working memory is resident, and
 * wl_heap_keep() keeps freed memory in the heap so that each BFS reuses
 * the same pages.
 *
 * Measured phase: igraph_bfs_simple() (it gives the parent array) from each
 * search key in turn, into preallocated vectors; only BFS calls and their
 * clock readings are in it.  A BFS scans the adjacency arrays of the whole
 * component of its key and scatters reads and writes over the visited
 * flags and the parent array, skewed towards the high-degree vertices.
 *
 * Check: the parent arrays of the first three keys and of the last one are
 * kept and validated after the phase, with the Graph500 rules, against the
 * levels of a BFS of our own from the same key (a plain queue over
 * igraph_neighbors()): the root is its own tree's root, the reached
 * vertices are exactly those of the key's connected component
 * (igraph_connected_components(), computed in the setup), each tree edge
 * joins vertices whose levels differ by exactly one (so the tree has no
 * cycle) and is an edge of the graph, and every edge of the graph joins
 * vertices whose levels differ by at most one or that are both unreached.
 * For every key, the number of vertices reached must be the size of its
 * component.
 *
 * Options: --mb N (300), --seed S (1), --work X (1.0), --roots K (default
 * ROOTS * X rounded, at least 1; Graph500 uses 64, ROOTS = 10 makes the
 * phase last about 4 s at --mb 300), --edges-scale F (0 < F <= 1, default:
 * automatic).
 * Output: "wl begin/end" lines (wl.h), then
 *   wl result scale S edgefactor EF vertices V edges M roots K seconds S
 *     bfs_seconds B teps_hmean T teps_min T teps_max T teps_total T
 *     setup_s X
 *   wl check ok|FAIL ...
 * TEPS as in Graph500: the edges (input tuples, self-loops and duplicates
 * included) of the searched component over the time of one BFS, harmonic
 * mean over the keys; teps_total is all those edges over all BFS time.
 */
#include <igraph/igraph.h>
#include "wl.h"

#define EDGEFACTOR	16
#define KRON_A		0.57
#define KRON_B		0.19
#define KRON_C		0.19
#define ROOTS		10
#define NPAR		4	/* parent arrays kept for validation */
#define MIN_SCALE	10
#define MAX_SCALE	26
#define MIN_ESCALE	0.25	/* at least 4 edges per vertex */
/*
 * Resident bytes of the measured phase: igraph graph per edge; graph and
 * BFS arrays per vertex; fixed KiB (libraries, heap).  Measured on
 * Debian's libigraph 0.10.2; constants, so that the graph depends on --mb
 * and --seed only.
 */
#define BYTES_PER_E	32.0
#define BYTES_PER_V	78.0
#define FIXED_KB	6800
/* Setup peak (igraph_create()), likewise, and its bound relative to --mb. */
#define PEAK_PER_E	56.0
#define PEAK_PER_V	24.0
#define PEAK_FIXED_KB	6300
#define PEAK_MAX	1.45

static const char *const opts[] = {
	"--mb", "--seed", "--work", "--roots", "--edges-scale", NULL
};

struct g500 {
	int scale;
	double escale;
	igraph_t g;
	igraph_integer_t nv;
	int nroots;
	igraph_integer_t *root;
	igraph_integer_t *csize;	/* size of each key's component */
	igraph_integer_t *cedges;	/* edges of each key's component */
	igraph_integer_t *reached;	/* vertices each BFS reached */
	double *secs;			/* time of each BFS */
	double phase_s;			/* the measured phase's */
	igraph_vector_int_t order, par[NPAR];
};

static void ig_ok(igraph_error_t e, const char *what)
{
	if (e == IGRAPH_SUCCESS)
		return;
	fprintf(stderr, "graph500: %s: %s\n", what, igraph_strerror(e));
	exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		fprintf(stderr, "graph500: out of memory\n");
		exit(1);
	}
	return p;
}

/* Resident KiB of the measured phase at SCALE @s, edges scale @f. */
static double rss_kb(int s, double f)
{
	double v = (double)(1 << s);

	return (BYTES_PER_V * v + BYTES_PER_E * f * EDGEFACTOR * v) / 1024 +
	       FIXED_KB;
}

/* Peak resident KiB of the setup (igraph_create()) at @s, @f. */
static double peak_kb(int s, double f)
{
	double v = (double)(1 << s);

	return (PEAK_PER_V * v + PEAK_PER_E * f * EDGEFACTOR * v) / 1024 +
	       PEAK_FIXED_KB;
}

/* Edges scale that fits @kb at SCALE @s, setup peak included. */
static double fit_escale(int s, double kb)
{
	double v = (double)(1 << s), f, cap;

	f = (kb - rss_kb(s, 0)) * 1024 / (BYTES_PER_E * EDGEFACTOR * v);
	cap = (PEAK_MAX * kb - peak_kb(s, 0)) * 1024 /
	      (PEAK_PER_E * EDGEFACTOR * v);
	return fmin(1, fmin(f, cap));
}

/*
 * SCALE and edges scale for @mb MiB.  With @f > 0 given, the largest SCALE
 * that fits; otherwise the smallest SCALE (the most edges per vertex)
 * whose trimmed graph reaches 90% of @mb.
 */
static void choose_size(struct g500 *w, double mb, double f)
{
	double kb = mb * 1024, g, best = 0;
	int s;

	w->scale = MIN_SCALE;
	w->escale = f > 0 ? f : MIN_ESCALE;
	for (s = MIN_SCALE; s <= MAX_SCALE; s++) {
		if (f > 0) {
			if (s > MIN_SCALE && rss_kb(s, f) > kb)
				break;
			w->scale = s;
			continue;
		}
		g = fit_escale(s, kb);
		if (g < MIN_ESCALE)
			break;
		if (rss_kb(s, g) > best) {
			best = rss_kb(s, g);
			w->scale = s;
			w->escale = g;
		}
		if (best >= 0.9 * kb)
			break;
	}
}

/*
 * One Kronecker edge: for each bit, the row bit is 1 with probability
 * C + D, the column bit then 1 with probability B / (A + B) or
 * D / (C + D), i.e. quadrants A, B, C, D of the adjacency matrix.
 */
static void kron_edge(uint64_t *s, int scale, igraph_integer_t *e)
{
	const double ab = KRON_A + KRON_B, c_norm = KRON_C / (1 - ab);
	const double a_norm = KRON_A / ab;
	igraph_integer_t i = 0, j = 0;
	int b, ib, jb;

	for (b = 0; b < scale; b++) {
		ib = wl_rand01(s) > ab;
		jb = wl_rand01(s) > (ib ? c_norm : a_norm);
		i |= (igraph_integer_t)ib << b;
		j |= (igraph_integer_t)jb << b;
	}
	e[0] = i;
	e[1] = j;
}

/* Random vertex labels, then a random order of the edges. */
static void permute_shuffle(igraph_vector_int_t *edges, igraph_integer_t nv,
			    uint64_t *s)
{
	igraph_integer_t i, j, t, m = igraph_vector_int_size(edges) / 2;
	igraph_integer_t *perm = xcalloc(nv, sizeof(*perm)), *e;

	for (i = 0; i < nv; i++)
		perm[i] = i;
	for (i = nv - 1; i > 0; i--) {
		j = wl_randn(s, i + 1);
		t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	e = VECTOR(*edges);
	for (i = 0; i < 2 * m; i++)
		e[i] = perm[e[i]];
	free(perm);
	for (i = m - 1; i > 0; i--) {
		j = wl_randn(s, i + 1);
		t = e[2 * i];
		e[2 * i] = e[2 * j];
		e[2 * j] = t;
		t = e[2 * i + 1];
		e[2 * i + 1] = e[2 * j + 1];
		e[2 * j + 1] = t;
	}
}

static void build_graph(struct g500 *w, uint64_t seed)
{
	igraph_integer_t i, m;
	igraph_vector_int_t edges;
	uint64_t s = seed;

	w->nv = (igraph_integer_t)1 << w->scale;
	m = (igraph_integer_t)llround(w->escale * EDGEFACTOR * w->nv);
	ig_ok(igraph_vector_int_init(&edges, 2 * m), "igraph_vector_int_init");
	for (i = 0; i < m; i++)
		kron_edge(&s, w->scale, &VECTOR(edges)[2 * i]);
	permute_shuffle(&edges, w->nv, &s);
	ig_ok(igraph_create(&w->g, &edges, w->nv, IGRAPH_UNDIRECTED),
	      "igraph_create");
	igraph_vector_int_destroy(&edges);
}

/* Distinct search keys of non-zero degree, self-loops not counted. */
static void pick_roots(struct g500 *w, uint64_t seed)
{
	uint64_t s = seed ^ 0x5eed5eed5eedULL;
	igraph_integer_t v, deg, tries = 0;
	int i = 0, j;

	w->root = xcalloc(w->nroots, sizeof(*w->root));
	while (i < w->nroots) {
		if (++tries > 64 * w->nv) {
			fprintf(stderr, "graph500: too few vertices with edges\n");
			exit(1);
		}
		v = wl_randn(&s, w->nv);
		ig_ok(igraph_degree_1(&w->g, &deg, v, IGRAPH_ALL, IGRAPH_NO_LOOPS),
		      "igraph_degree_1");
		for (j = 0; j < i && w->root[j] != v; j++)
			;
		if (deg > 0 && j == i)
			w->root[i++] = v;
	}
}

/* Size and number of edges of each key's connected component. */
static void component_info(struct g500 *w)
{
	igraph_vector_int_t memb, csize;
	igraph_integer_t e, nc, *cedges;
	int i;

	ig_ok(igraph_vector_int_init(&memb, 0), "igraph_vector_int_init");
	ig_ok(igraph_vector_int_init(&csize, 0), "igraph_vector_int_init");
	ig_ok(igraph_connected_components(&w->g, &memb, &csize, &nc,
					  IGRAPH_WEAK),
	      "igraph_connected_components");
	cedges = xcalloc(nc, sizeof(*cedges));
	for (e = 0; e < igraph_ecount(&w->g); e++)
		cedges[VECTOR(memb)[IGRAPH_FROM(&w->g, e)]]++;
	w->csize = xcalloc(w->nroots, sizeof(*w->csize));
	w->cedges = xcalloc(w->nroots, sizeof(*w->cedges));
	for (i = 0; i < w->nroots; i++) {
		e = VECTOR(memb)[w->root[i]];
		w->csize[i] = VECTOR(csize)[e];
		w->cedges[i] = cedges[e];
	}
	free(cedges);
	igraph_vector_int_destroy(&memb);
	igraph_vector_int_destroy(&csize);
}

/* Root @i writes its parents into slot min(i, NPAR - 1). */
static igraph_vector_int_t *par_of(struct g500 *w, int i)
{
	return &w->par[i < NPAR - 1 ? i : NPAR - 1];
}

static void bfs_setup(struct g500 *w)
{
	int k;

	w->reached = xcalloc(w->nroots, sizeof(*w->reached));
	w->secs = xcalloc(w->nroots, sizeof(*w->secs));
	/* from now on freed memory stays in the heap, to be reused */
	wl_heap_keep();
	ig_ok(igraph_vector_int_init(&w->order, w->nv), "igraph_vector_int_init");
	for (k = 0; k < NPAR; k++)
		ig_ok(igraph_vector_int_init(&w->par[k], w->nv),
		      "igraph_vector_int_init");
	/* a first search makes the BFS's own arrays resident */
	ig_ok(igraph_bfs_simple(&w->g, w->root[0], IGRAPH_ALL, &w->order, NULL,
				&w->par[0]), "igraph_bfs_simple");
	for (k = 1; k < NPAR; k++)
		igraph_vector_int_fill(&w->par[k], -2);
}

static double run_bfs(struct g500 *w)
{
	double t, t0, sum = 0;
	igraph_error_t e = IGRAPH_SUCCESS;
	int i;

	wl_phase_begin();
	for (i = 0; i < w->nroots && e == IGRAPH_SUCCESS; i++) {
		t0 = wl_now();
		e = igraph_bfs_simple(&w->g, w->root[i], IGRAPH_ALL, &w->order,
				      NULL, par_of(w, i));
		t = wl_now();
		w->secs[i] = t - t0;
		w->reached[i] = igraph_vector_int_size(&w->order);
		sum += t - t0;
	}
	w->phase_s = wl_phase_end();
	ig_ok(e, "igraph_bfs_simple");
	return sum;
}

static void report(const struct g500 *w, double bfs_s, double setup)
{
	double teps, inv = 0, min = INFINITY, max = 0, edges = 0;
	int i;

	for (i = 0; i < w->nroots; i++) {
		edges += w->cedges[i];
		teps = w->cedges[i] / w->secs[i];
		inv += 1 / teps;
		min = fmin(min, teps);
		max = fmax(max, teps);
	}
	printf("wl result scale %d edgefactor %.2f vertices %ld edges %ld roots %d seconds %.3f bfs_seconds %.3f teps_hmean %.4g teps_min %.4g teps_max %.4g teps_total %.4g setup_s %.3f\n",
	       w->scale, w->escale * EDGEFACTOR, (long)w->nv,
	       (long)igraph_ecount(&w->g), w->nroots, w->phase_s, bfs_s,
	       w->nroots / inv, min, max, edges / bfs_s, setup);
	fflush(stdout);
}

/* Plain BFS levels from @root into @dist (-1: unreached); returns reached. */
static igraph_integer_t own_bfs(const igraph_t *g, igraph_integer_t root,
				int32_t *dist, int32_t *queue)
{
	igraph_integer_t head = 0, tail = 0, k, u, v, n = igraph_vcount(g);
	igraph_vector_int_t neis;

	for (v = 0; v < n; v++)
		dist[v] = -1;
	ig_ok(igraph_vector_int_init(&neis, 0), "igraph_vector_int_init");
	dist[root] = 0;
	queue[tail++] = root;
	while (head < tail) {
		u = queue[head++];
		ig_ok(igraph_neighbors(g, &neis, u, IGRAPH_ALL),
		      "igraph_neighbors");
		for (k = 0; k < igraph_vector_int_size(&neis); k++) {
			v = VECTOR(neis)[k];
			if (dist[v] < 0) {
				dist[v] = dist[u] + 1;
				queue[tail++] = v;
			}
		}
	}
	igraph_vector_int_destroy(&neis);
	return tail;
}

/*
 * Graph500 validation of the parent array @par of a BFS from @root that
 * reached @reached vertices, with the levels @dist of an own BFS; returns
 * the number of violations.
 */
static igraph_integer_t validate_tree(const igraph_t *g, igraph_integer_t root,
				      const igraph_vector_int_t *par,
				      const int32_t *dist,
				      igraph_integer_t reached)
{
	igraph_integer_t v, p, e, n = igraph_vcount(g), bad = 0, cnt = 0;
	int32_t a, b;

	bad += VECTOR(*par)[root] != -1;
	for (v = 0; v < n; v++) {
		p = VECTOR(*par)[v];
		cnt += p != -2;
		if (p == -2 || v == root) {
			bad += (p == -2) != (dist[v] < 0);
			continue;
		}
		/* tree edges: levels differ by exactly one, edge of g */
		if (p < 0 || p >= n || dist[v] < 0 || dist[p] != dist[v] - 1) {
			bad++;
			continue;
		}
		ig_ok(igraph_get_eid(g, &e, p, v, IGRAPH_UNDIRECTED, false),
		      "igraph_get_eid");
		bad += e < 0;
	}
	bad += cnt != reached;
	for (e = 0; e < igraph_ecount(g); e++) {
		a = dist[IGRAPH_FROM(g, e)];
		b = dist[IGRAPH_TO(g, e)];
		if (a < 0 || b < 0)
			bad += (a < 0) != (b < 0);
		else
			bad += abs(a - b) > 1;
	}
	return bad;
}

/* Validates the kept parent arrays and every key's reached count. */
static int validate(const struct g500 *w)
{
	int32_t *dist = xcalloc(w->nv, sizeof(*dist));
	int32_t *queue = xcalloc(w->nv, sizeof(*queue));
	igraph_integer_t bad = 0, own, reach_bad = 0;
	int i, k, done = 0;

	for (k = 0; k < NPAR; k++) {
		/* the root whose parents slot k holds */
		i = k < NPAR - 1 ? k : w->nroots - 1;
		if (i >= w->nroots || (k == NPAR - 1 && i < NPAR - 1))
			continue;
		own = own_bfs(&w->g, w->root[i], dist, queue);
		bad += own != w->csize[i];
		bad += validate_tree(&w->g, w->root[i], &w->par[k], dist,
				     w->reached[i]);
		done++;
	}
	for (i = 0; i < w->nroots; i++)
		reach_bad += w->reached[i] != w->csize[i];
	free(dist);
	free(queue);
	printf("wl check %s validated_trees %d violations %ld keys_with_wrong_reach %ld component0 %ld\n",
	       bad || reach_bad ? "FAIL" : "ok", done, (long)bad,
	       (long)reach_bad, (long)w->csize[0]);
	fflush(stdout);
	return !bad && !reach_bad;
}

int main(int argc, char **argv)
{
	double mb, work, f, t0, setup, bfs_s;
	struct g500 w = { 0 };
	uint64_t seed;
	int ok;

	wl_check_opts(argc, argv, opts);
	mb = wl_arg(argc, argv, "--mb", 300);
	seed = (uint64_t)wl_arg(argc, argv, "--seed", 1);
	work = wl_arg(argc, argv, "--work", 1.0);
	w.nroots = (int)wl_arg(argc, argv, "--roots",
			       fmax(1, round(ROOTS * work)));
	f = wl_arg(argc, argv, "--edges-scale", 0);
	if (mb < 1 || work <= 0 || w.nroots < 1 || f < 0 || f > 1) {
		fprintf(stderr, "%s: bad --mb, --work, --roots or --edges-scale\n",
			argv[0]);
		return 2;
	}
	wl_heap_setup();
	t0 = wl_now();
	choose_size(&w, mb, f);
	build_graph(&w, seed);
	pick_roots(&w, seed);
	component_info(&w);
	bfs_setup(&w);
	setup = wl_now() - t0;

	bfs_s = run_bfs(&w);
	report(&w, bfs_s, setup);
	ok = validate(&w);
	igraph_destroy(&w.g);
	return ok ? 0 : 1;
}
