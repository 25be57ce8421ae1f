// SPDX-License-Identifier: GPL-2.0
/* tierbench latency: idle load-to-use latency by dependent pointer chase. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

#define MAX_REPEATS 65536

uint64_t tb_default_chunk(enum tb_page p)
{
	/* Roughly what a current L1 DTLB covers: 64 x 4K, 32 x 2M, 4 x 1G. */
	static const unsigned int dtlb[] = {
		[TB_PAGE_4K] = 64, [TB_PAGE_THP] = 32,
		[TB_PAGE_2M] = 32, [TB_PAGE_1G] = 4,
	};

	return dtlb[p] * tb_page_bytes(p);
}

static uint64_t effective_chunk(const struct tb_lat_cfg *c)
{
	uint64_t ch = c->chunk ? c->chunk : tb_default_chunk(c->page);

	if (c->pattern == TB_PAT_LMBENCH)
		return 4096;
	if (c->pattern == TB_PAT_RANDOM)
		return c->size;

	if (ch > c->size)
		ch = c->size;
	return ch;
}

int tb_lat_validate(const struct tb_lat_cfg *c)
{
	char a[32], b[32];

	if (c->stride < 8 || c->stride % 8) {
		tb_err("--stride %llu: must be a multiple of 8 bytes (a pointer)",
		       (unsigned long long)c->stride);
		return -1;
	}
	if (c->size < 2 * c->stride) {
		tb_err("--size %s is too small for --stride %llu (at least two slots)",
		       tb_fmt_size(c->size, a, sizeof(a)),
		       (unsigned long long)c->stride);
		return -1;
	}
	if (c->size % c->stride) {
		tb_err("--size %s is not a multiple of --stride %llu",
		       tb_fmt_size(c->size, a, sizeof(a)),
		       (unsigned long long)c->stride);
		return -1;
	}
	if (c->size / c->stride > UINT32_MAX) {
		tb_err("--size %s / --stride %llu gives more than 2^32 slots",
		       tb_fmt_size(c->size, a, sizeof(a)),
		       (unsigned long long)c->stride);
		return -1;
	}
	if (c->pattern == TB_PAT_LMBENCH) {
		if (c->stride > 4096 || (c->stride & (c->stride - 1))) {
			tb_err("--pattern lmbench: --stride must be a power of two up to 4096");
			return -1;
		}
		if (c->size % 4096) {
			tb_err("--pattern lmbench: --size must be a multiple of 4K");
			return -1;
		}
	}
	if (c->pattern == TB_PAT_CHUNK) {
		uint64_t ch = effective_chunk(c);

		if (c->chunk && c->chunk > c->size) {
			tb_err("--chunk %s is larger than --size %s",
			       tb_fmt_size(c->chunk, a, sizeof(a)),
			       tb_fmt_size(c->size, b, sizeof(b)));
			return -1;
		}
		if (ch < c->stride || ch % c->stride) {
			tb_err("--chunk %s is not a multiple of --stride %llu",
			       tb_fmt_size(ch, a, sizeof(a)),
			       (unsigned long long)c->stride);
			return -1;
		}
	}
	return 0;
}

static uint64_t chain_sig(const struct tb_lat_cfg *c, uint64_t chunk)
{
	uint64_t h = 1469598103934665603ULL;
	uint64_t v[] = { c->size, c->stride, c->pattern, chunk, c->order,
			 c->seed };
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h = (h ^ v[i]) * 1099511628211ULL;
	return h;
}

int tb_lat_measure_mem(const struct tb_lat_cfg *c, struct tb_mem *m,
		       struct tb_lat_res *r)
{
	static double ns[MAX_REPEATS], clean[MAX_REPEATS];
	int nclean = 0;
	uint64_t chunk = effective_chunk(c), sig = chain_sig(c, chunk);
	uint64_t loads = 0, step = 1024, rep_loads;
	double t0, t, rate, t_rep, start;
	int reps = 0;
	void *p;

	memset(r, 0, sizeof(*r));
	if (tb_pin_cpu(c->cpu))
		return -1;
	if (!m->chain || m->chain_sig != sig) {
		m->chain = tb_chain_build(m->base, c->size, c->stride,
					  c->pattern, chunk, c->order, c->seed);
		if (!m->chain) {
			tb_err("out of memory building the pointer chain");
			return -1;
		}
		m->chain_sig = sig;
		if (m->placed_pct < 0)
			tb_mem_check(m);	/* the chain faulted it in */
	}
	p = m->chain;

	/*
	 * Warm-up: chase for the warm-up time. This ramps the core up from
	 * an idle frequency, warms caches and TLB, and measures the rate
	 * used to size one repeat.
	 */
	t0 = tb_now();
	do {
		p = tb_chase(p, step);
		loads += step;
		if (step < (1u << 20))
			step *= 2;
		t = tb_now();
	} while (t - t0 < c->warmup);
	rate = loads / (t - t0);

	/*
	 * Short repeats (at most 2 ms, shorter than a scheduler time slice)
	 * so that on a shared machine most of them run undisturbed; a repeat
	 * during which the thread was switched out is set aside, and the
	 * median is taken over the clean ones when there are at least three.
	 */
	t_rep = c->duration / 10;
	if (t_rep > 0.002)
		t_rep = 0.002;
	if (t_rep < 0.0001)
		t_rep = 0.0001;
	rep_loads = (uint64_t)(rate * t_rep);
	if (rep_loads < 256)
		rep_loads = 256;

	loads = 0;
	start = tb_now();
	while (reps < MAX_REPEATS) {
		uint64_t s0 = tb_ctxsw(), s1;
		double a = tb_now(), b;

		p = tb_chase(p, rep_loads);
		b = tb_now();
		s1 = tb_ctxsw();
		ns[reps] = (b - a) * 1e9 / rep_loads;
		if (s0 == s1)
			clean[nclean++] = ns[reps];
		reps++;
		loads += rep_loads;
		if (reps >= 3 && b - start >= c->duration)
			break;
	}
	tb_sink += (uintptr_t)p;
	m->chain = p;	/* carry on from here next time */

	if (nclean >= 3) {
		r->ns = tb_median(clean, nclean);
		r->ns_min = tb_min(clean, nclean);
		r->ns_max = tb_max(clean, nclean);
		r->repeats = nclean;
	} else {
		r->ns = tb_median(ns, reps);
		r->ns_min = tb_min(ns, reps);
		r->ns_max = tb_max(ns, reps);
		r->repeats = reps;
	}
	r->disturbed = reps - nclean;
	r->loads = loads;
	r->chunk = chunk;
	/*
	 * Check again after the run: a tiering kernel (htmm, NUMA
	 * balancing) could have moved pages while we measured.
	 */
	r->placed_pct = tb_mem_placement(m);
	if (r->placed_pct >= 0 && r->placed_pct < 99.9)
		tb_warn("after measuring, only %.1f%% of the sampled pages are on node %d",
			r->placed_pct, m->node);
	r->huge_pct = m->huge_pct;
	return 0;
}

int tb_lat_measure(const struct tb_lat_cfg *c, struct tb_lat_res *r)
{
	struct tb_mem m;
	int ret;

	if (tb_lat_validate(c))
		return -1;
	if (tb_pin_cpu(c->cpu))
		return -1;
	if (tb_mem_alloc_ex(&m, c->size, c->mem_node, c->page,
			    c->pattern != TB_PAT_LMBENCH))
		return -1;
	ret = tb_lat_measure_mem(c, &m, r);
	tb_mem_free(&m);
	return ret;
}

/* ------------------------------------------------------------- command */

static void usage(FILE *f)
{
	fprintf(f,
"usage: tierbench latency [options]\n"
"\n"
"Idle memory latency: one thread follows a randomised chain of dependent\n"
"loads (one per --stride bytes) through a region bound to a NUMA node and\n"
"reports the median ns per load over the repeats.\n"
"\n"
"options:\n"
"  -s, --size SIZE        region size (default 1G; suffixes K, M, G)\n"
"  -p, --page KIND        4k (default), thp (madvise), 2m or 1g (hugetlb,\n"
"                         must be reserved: see 'tierbench hugepages')\n"
"      --pattern P        random (default): random over the whole region;\n"
"                         chunk: random inside a chunk, then the next chunk\n"
"                         lmbench: the chain of lmbench's lat_mem_rd -t\n"
"                         (page after page in random order, pages faulted\n"
"                         in chase order), to compare with that tool\n"
"      --chunk SIZE       chunk for --pattern chunk (default: what the L1\n"
"                         DTLB covers: 256K for 4k, 64M for 2m/thp, 4G for 1g)\n"
"      --chunk-order O    seq (default) or random: order of the chunks\n"
"      --stride BYTES     distance between chained slots (default 64)\n"
"  -m, --mem-node N       node the region is bound to (default: CPU node)\n"
"  -c, --cpu-node N       node whose first CPU runs the chase (default: first\n"
"                         node with CPUs)\n"
"      --cpu N            run on this CPU instead\n"
"      --matrix           measure every CPU node x memory node pair\n"
"  -d, --duration SEC     measuring time per figure (default 1; 50ms, 2s ok)\n"
"      --warmup SEC       warm-up chase before measuring (default 0.2)\n"
"      --seed N           chain shuffle seed (default 1)\n"
"  -j, --json             JSON output\n"
"  -v, --verbose          progress on stderr\n"
"  -h, --help             this help\n"
"\n"
"output: one line per figure,\n"
"  latency cpu_node=N cpu=N mem_node=N page=P pattern=P size=S stride=B\n"
"          chunk=S repeats=N disturbed=N ns_per_load=X min_ns=X max_ns=X\n"
"          placed_pct=X\n"
"(repeats: undisturbed repeats the median is taken over; disturbed: repeats\n"
"set aside because the thread was switched out during them)\n"
"and with --matrix a table as '#' comment lines. Exit status: 0 ok,\n"
"1 measurement failed, 2 bad command line.\n");
}

enum {
	OPT_STRIDE = OPT_CMD_BASE,
	OPT_CHUNK,
	OPT_PATTERN,
	OPT_ORDER,
	OPT_MATRIX,
	OPT_SEED,
};

static int lat_opt(int c, const char *arg, void *ctx)
{
	struct tb_latency_opts *o = ctx;

	switch (c) {
	case OPT_STRIDE:
		return tb_opt_stride(arg, &o->stride);
	case OPT_CHUNK:
		return tb_opt_size("--chunk", arg, 1, &o->chunk,
				   "expected a size such as 256K");
	case OPT_PATTERN:
		if (tb_parse_pattern(arg, &o->pattern))
			return tb_bad_value("--pattern", arg,
					    "expected random, chunk or lmbench");
		return 0;
	case OPT_ORDER:
		if (!strcmp(arg, "seq"))
			o->order = TB_ORDER_SEQ;
		else if (!strcmp(arg, "random"))
			o->order = TB_ORDER_RANDOM;
		else
			return tb_bad_value("--chunk-order", arg,
					    "expected seq or random");
		return 0;
	case OPT_MATRIX:
		o->matrix = 1;
		return 0;
	case OPT_SEED:
		return tb_opt_seed(arg, &o->seed);
	}
	return TB_OPT_UNKNOWN;
}

int latency_parse(int argc, char **argv, struct tb_latency_opts *o)
{
	static const struct option lo[] = {
		COMMON_LONG_OPTS,
		{ "stride", required_argument, NULL, OPT_STRIDE },
		{ "chunk", required_argument, NULL, OPT_CHUNK },
		{ "pattern", required_argument, NULL, OPT_PATTERN },
		{ "chunk-order", required_argument, NULL, OPT_ORDER },
		{ "matrix", no_argument, NULL, OPT_MATRIX },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ NULL, 0, NULL, 0 },
	};
	int r;

	memset(o, 0, sizeof(*o));
	tb_common_defaults(&o->c, 1ULL << 30);
	o->stride = 64;
	o->pattern = TB_PAT_RANDOM;
	o->order = TB_ORDER_SEQ;
	o->seed = 1;
	r = tb_getopt(argc, argv, COMMON_SHORT_OPTS, lo, &o->c, usage, lat_opt,
		      o);
	if (r)
		return r;
	if (o->chunk && o->pattern != TB_PAT_CHUNK) {
		tb_err("--chunk only applies to --pattern chunk");
		return -1;
	}
	if (o->matrix && (o->c.cpu_node >= 0 || o->c.mem_node >= 0 ||
			  o->c.cpu >= 0)) {
		tb_err("--matrix measures every node pair: drop --cpu-node, --mem-node and --cpu");
		return -1;
	}
	return 0;
}

static void print_text(const struct tb_latency_opts *o, int cpu_node,
		       int cpu, int mem_node, const struct tb_lat_res *r)
{
	char a[32], b[32];

	printf("latency cpu_node=%d cpu=%d mem_node=%d page=%s pattern=%s size=%s stride=%llu chunk=%s repeats=%d disturbed=%d ns_per_load=%.1f min_ns=%.1f max_ns=%.1f placed_pct=%.1f\n",
	       cpu_node, cpu, mem_node, tb_page_name(o->c.page),
	       tb_pattern_name(o->pattern), tb_fmt_size(o->c.size, a, sizeof(a)),
	       (unsigned long long)o->stride,
	       tb_fmt_size(r->chunk, b, sizeof(b)),
	       r->repeats, r->disturbed, r->ns, r->ns_min, r->ns_max,
	       r->placed_pct);
	fflush(stdout);
}

static void json_result(struct tb_json *j, int cpu_node, int cpu,
			int mem_node, const struct tb_lat_res *r)
{
	tb_json_obj(j, NULL);
	tb_json_int(j, "cpu_node", cpu_node);
	tb_json_int(j, "cpu", cpu);
	tb_json_int(j, "mem_node", mem_node);
	tb_json_num(j, "ns_per_load", r->ns, 2);
	tb_json_num(j, "min_ns", r->ns_min, 2);
	tb_json_num(j, "max_ns", r->ns_max, 2);
	tb_json_int(j, "repeats", r->repeats);
	tb_json_int(j, "disturbed", r->disturbed);
	tb_json_int(j, "loads", (long long)r->loads);
	tb_json_num(j, "placed_pct", r->placed_pct, 1);
	tb_json_num(j, "huge_pct", r->huge_pct, 1);
	tb_json_obj_end(j);
}

int cmd_latency(int argc, char **argv)
{
	struct tb_latency_opts o;
	struct tb_lat_res res[64][64];
	int cpu_nodes[64], mem_nodes[64], ncn = 0, nmn = 0, i, k, r;
	int cpu_of[64];
	struct tb_lat_cfg cfg;
	struct tb_topo t;
	struct tb_json j;

	r = latency_parse(argc, argv, &o);
	if (r)
		return r > 0 ? TB_EXIT_OK : TB_EXIT_USAGE;
	if (tb_topo_load(&t))
		return TB_EXIT_FAIL;

	memset(&cfg, 0, sizeof(cfg));
	cfg.page = o.c.page;
	cfg.size = o.c.size;
	cfg.stride = o.stride;
	cfg.chunk = o.chunk;
	cfg.pattern = o.pattern;
	cfg.order = o.order;
	cfg.duration = o.c.duration;
	cfg.warmup = o.c.warmup;
	cfg.seed = o.seed;
	if (tb_lat_validate(&cfg)) {
		tb_topo_free(&t);
		return TB_EXIT_USAGE;
	}

	if (o.matrix) {
		for (i = 0; i < t.nr_nodes; i++) {
			if (t.online[i] && t.ncpus[i] && ncn < 64) {
				cpu_of[ncn] = t.cpus[i][0];
				cpu_nodes[ncn++] = i;
			}
			if (t.online[i] && t.has_mem[i] && nmn < 64)
				mem_nodes[nmn++] = i;
		}
	} else {
		if (tb_resolve_nodes(&t, &o.c)) {
			tb_topo_free(&t);
			return TB_EXIT_USAGE;
		}
		cpu_nodes[0] = (int)o.c.cpu_node;
		cpu_of[0] = (int)o.c.cpu;
		mem_nodes[0] = (int)o.c.mem_node;
		ncn = nmn = 1;
	}
	if (!ncn || !nmn) {
		tb_err("no node with CPUs or no node with memory");
		tb_topo_free(&t);
		return TB_EXIT_FAIL;
	}

	for (k = 0; k < nmn; k++) {
		struct tb_mem m;

		cfg.mem_node = mem_nodes[k];
		if (tb_pin_cpu(cpu_of[0]) ||
		    tb_mem_alloc_ex(&m, cfg.size, cfg.mem_node, cfg.page,
				    cfg.pattern != TB_PAT_LMBENCH)) {
			tb_topo_free(&t);
			return TB_EXIT_FAIL;
		}
		for (i = 0; i < ncn; i++) {
			cfg.cpu = cpu_of[i];
			tb_info("measuring CPU %d (node %d) -> memory node %d",
				cfg.cpu, cpu_nodes[i], cfg.mem_node);
			if (tb_lat_measure_mem(&cfg, &m, &res[i][k])) {
				tb_mem_free(&m);
				tb_topo_free(&t);
				return TB_EXIT_FAIL;
			}
			if (!o.c.json)
				print_text(&o, cpu_nodes[i], cpu_of[i],
					   mem_nodes[k], &res[i][k]);
		}
		tb_mem_free(&m);
	}

	if (o.c.json) {
		char a[32];

		tb_json_tool(&j, stdout, "latency");
		tb_json_str(&j, "mode", o.matrix ? "matrix" : "single");
		tb_json_obj(&j, "params");
		tb_json_str(&j, "page", tb_page_name(o.c.page));
		tb_json_str(&j, "pattern", tb_pattern_name(o.pattern));
		tb_json_str(&j, "chunk_order",
			    o.order == TB_ORDER_SEQ ? "seq" : "random");
		tb_json_int(&j, "size_bytes", (long long)o.c.size);
		tb_json_str(&j, "size", tb_fmt_size(o.c.size, a, sizeof(a)));
		tb_json_int(&j, "stride_bytes", (long long)o.stride);
		tb_json_int(&j, "chunk_bytes", (long long)res[0][0].chunk);
		tb_json_num(&j, "duration_s", o.c.duration, 3);
		tb_json_num(&j, "warmup_s", o.c.warmup, 3);
		tb_json_int(&j, "seed", (long long)o.seed);
		tb_json_obj_end(&j);
		tb_json_arr(&j, "results");
		for (i = 0; i < ncn; i++)
			for (k = 0; k < nmn; k++)
				json_result(&j, cpu_nodes[i], cpu_of[i],
					    mem_nodes[k], &res[i][k]);
		tb_json_arr_end(&j);
		tb_json_end(&j);
	} else if (o.matrix) {
		printf("# latency matrix, ns per load (rows: CPU node, columns: memory node)\n");
		printf("# %-12s", "");
		for (k = 0; k < nmn; k++) {
			char h[16];

			snprintf(h, sizeof(h), "node%d", mem_nodes[k]);
			printf(" %10s", h);
		}
		printf("\n");
		for (i = 0; i < ncn; i++) {
			char h[24];

			snprintf(h, sizeof(h), "cpu-node%d", cpu_nodes[i]);
			printf("# %-12s", h);
			for (k = 0; k < nmn; k++)
				printf(" %10.1f", res[i][k].ns);
			printf("\n");
		}
	}
	tb_topo_free(&t);
	return TB_EXIT_OK;
}
