// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench loaded-latency: one pointer-chasing latency thread plus load
 * threads streaming the bandwidth tool's 2:1 read/write mix (MLC -W2: one
 * line loaded, one line stored into) with an injected delay after every
 * block of 512 bytes of each array. The delay sweeps from heavy load (0) to
 * light load; every point gives the load bandwidth and the chase latency.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "kernels.h"
#include "opts.h"

#define BLOCK 512

struct loader {
	pthread_t th;
	int cpu;
	size_t len;
	struct tb_mem mem;
	uint64_t bytes;		/* moved so far, read by the main thread */
	int err;
	int ready;
} __attribute__((aligned(64)));

static uint64_t g_delay;
static int g_stop;

/* Stream the 2:1 mix over the region, a delay after every block. */
static void load_loop(struct loader *l, const struct tb_mix_layout *lay)
{
	const uint64_t n = BLOCK / TB_LINE;	/* steps per block */
	uint64_t s, moved = 0, sink = 0;

	while (!__atomic_load_n(&g_stop, __ATOMIC_RELAXED)) {
		for (s = 0; s + n <= lay->steps; s += n) {
			uint64_t delay = __atomic_load_n(&g_delay,
							 __ATOMIC_RELAXED);

			sink ^= tb_mix_run(l->mem.base, lay, TB_MIX_2_1, s, n);
			moved += n * lay->step_bytes;
			__atomic_store_n(&l->bytes, moved, __ATOMIC_RELAXED);
			if (delay)
				tb_spin(delay);
			if ((s & 0x3ff) == 0 &&
			    __atomic_load_n(&g_stop, __ATOMIC_RELAXED))
				break;
		}
	}
	tb_sink += sink;
}

static void *loader_main(void *arg)
{
	struct loader *l = arg;
	struct tb_mix_layout lay;

	if (tb_pin_cpu(l->cpu) ||
	    tb_mem_alloc(&l->mem, l->len, l->mem.node, l->mem.page)) {
		__atomic_store_n(&l->err, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&l->ready, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	tb_mix_layout(l->len, TB_MIX_2_1, &lay);
	__atomic_store_n(&l->ready, 1, __ATOMIC_RELEASE);
	load_loop(l, &lay);
	tb_mem_free(&l->mem);
	return NULL;
}

static uint64_t total_bytes(struct loader *l, int n)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += __atomic_load_n(&l[i].bytes, __ATOMIC_RELAXED);
	return s;
}

void tb_loaded_lat_cfg(const struct tb_loaded_cfg *c, struct tb_lat_cfg *lc)
{
	memset(lc, 0, sizeof(*lc));
	lc->cpu = c->lat_cpu;
	lc->mem_node = c->mem_node;
	lc->page = c->page;
	lc->size = c->lat_size;
	lc->stride = c->stride;
	lc->pattern = c->pattern;
	lc->order = TB_ORDER_SEQ;
	lc->duration = c->duration;
	lc->warmup = c->warmup;
	lc->seed = c->seed;
}

int tb_loaded_measure(const struct tb_loaded_cfg *c, struct tb_loaded_row *rows)
{
	struct tb_lat_cfg lc;
	struct tb_lat_res lr;
	struct loader *ld;
	struct tb_mem m;
	int i, started = 0, ret = -1;

	if (c->nload < 1) {
		tb_err("loaded latency needs at least one load thread (a second CPU on the CPU node)");
		return -1;
	}
	tb_loaded_lat_cfg(c, &lc);
	if (tb_lat_validate(&lc) || tb_pin_cpu(c->lat_cpu))
		return -1;
	if (c->load_size / c->nload < 3 * BLOCK * 4) {
		tb_err("--load-size too small for %d load threads", c->nload);
		return -1;
	}
	if (tb_mem_alloc(&m, c->lat_size, c->mem_node, c->page))
		return -1;

	ld = aligned_alloc(64, sizeof(*ld) * c->nload);
	if (!ld) {
		tb_mem_free(&m);
		return -1;
	}
	memset(ld, 0, sizeof(*ld) * c->nload);
	g_stop = 0;
	g_delay = c->delays[0];
	for (i = 0; i < c->nload; i++) {
		ld[i].cpu = c->load_cpus[i];
		ld[i].len = c->load_size / c->nload / 4096 * 4096;
		ld[i].mem.node = c->mem_node;
		ld[i].mem.page = c->page;
		if (pthread_create(&ld[i].th, NULL, loader_main, &ld[i])) {
			tb_err("cannot create load thread %d", i);
			goto out;
		}
		started++;
	}
	for (i = 0; i < started; i++) {
		while (!__atomic_load_n(&ld[i].ready, __ATOMIC_ACQUIRE))
			tb_spin(10000);
		if (ld[i].err)
			goto out;
	}
	for (i = 0; i < c->ndelays; i++) {
		uint64_t b0, b1;
		double t0, t1;

		__atomic_store_n(&g_delay, c->delays[i], __ATOMIC_RELAXED);
		tb_info("loaded latency: delay %llu",
			(unsigned long long)c->delays[i]);
		b0 = total_bytes(ld, started);
		t0 = tb_now();
		if (tb_lat_measure_mem(&lc, &m, &lr))
			goto out;
		b1 = total_bytes(ld, started);
		t1 = tb_now();
		rows[i].delay = c->delays[i];
		rows[i].lat_ns = lr.ns;
		rows[i].bw_mbs = (b1 - b0) / (t1 - t0) / 1e6;
	}
	ret = 0;
out:
	__atomic_store_n(&g_stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < started; i++)
		pthread_join(ld[i].th, NULL);
	free(ld);
	tb_mem_free(&m);
	return ret;
}

int tb_plot_loaded(const char *png, long cpu_node, long mem_node,
		   const struct tb_loaded_row *rows, int n)
{
	void (*old_pipe)(int);
	char title[128];
	FILE *g;
	int i, st;

	snprintf(title, sizeof(title),
		 "tierbench loaded latency: CPU node %ld, memory node %ld",
		 cpu_node, mem_node);
	if (strchr(png, '\'') || strchr(title, '\'')) {
		tb_err("plot file name must not contain a quote");
		return -1;
	}
	fflush(NULL);
	/* A missing gnuplot closes the pipe: fail with a message, not SIGPIPE. */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	g = popen("gnuplot", "w");
	if (!g) {
		signal(SIGPIPE, old_pipe);
		tb_err("cannot start gnuplot");
		return -1;
	}
	fprintf(g,
		"set terminal png size 900,600\n"
		"set output '%s'\n"
		"set title '%s'\n"
		"set xlabel 'Bandwidth (GB/s)'\n"
		"set ylabel 'Latency (ns)'\n"
		"set grid\n"
		"set key top left\n"
		"plot '-' using 1:2 with linespoints lw 2 pt 7 title 'loaded latency'\n",
		png, title);
	for (i = 0; i < n; i++)
		fprintf(g, "%.3f %.2f\n", rows[i].bw_mbs / 1e3, rows[i].lat_ns);
	fprintf(g, "e\n");
	st = pclose(g);
	signal(SIGPIPE, old_pipe);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		tb_err("gnuplot failed (is it installed? status %d)", st);
		return -1;
	}
	fprintf(stderr, "%s: plot written to %s\n", tb_prog, png);
	return 0;
}

void tb_json_loaded_row(struct tb_json *j, const struct tb_loaded_row *row)
{
	tb_json_obj(j, NULL);
	tb_json_int(j, "delay", (long long)row->delay);
	tb_json_num(j, "bw_mbs", row->bw_mbs, 1);
	tb_json_num(j, "bw_gbs", row->bw_mbs / 1e3, 2);
	tb_json_num(j, "lat_ns", row->lat_ns, 1);
	tb_json_obj_end(j);
}

/* ------------------------------------------------------------- command */

static void usage(FILE *f)
{
	fprintf(f,
"usage: tierbench loaded-latency [options]\n"
"\n"
"Loaded latency: the first CPU of the CPU node chases a random pointer\n"
"chain while load threads on the other CPUs stream the 2:1 read/write mix\n"
"of 'tierbench bandwidth' (MLC -W2: per line one line loaded and one\n"
"stored into, bytes = reads incl. the read for ownership + writes) with an\n"
"injected delay (spin-loop iterations, about one cycle each) after every\n"
"512-byte block. The delay sweeps from heavy load to light load.\n"
"Everything is bound to the memory node.\n"
"\n"
"options:\n"
"  -s, --size SIZE        latency chain region (default 1G)\n"
"      --load-size SIZE   total load region over all load threads\n"
"                         (default 1G)\n"
"  -t, --threads N        load threads (default: CPUs of the node - 1)\n"
"      --delays LIST      comma list of delays, heavy to light (default\n"
"                         0,20,50,100,200,400,800,1600,3200,6400,12800)\n"
"      --pattern P        random (default) or chunk: latency chain pattern\n"
"      --stride BYTES     chain stride (default 64)\n"
"  -m, --mem-node N       node all regions are bound to (default: CPU node)\n"
"  -c, --cpu-node N       node whose CPUs run the threads\n"
"      --cpu N            CPU of the latency thread (default: first of node)\n"
"  -p, --page KIND        4k (default), thp, 2m or 1g\n"
"  -d, --duration SEC     latency measuring time per delay (default 0.5)\n"
"      --warmup SEC       warm-up per delay (default 0.1)\n"
"      --plot FILE.png    draw latency against bandwidth with gnuplot\n"
"  -j, --json             JSON output\n"
"  -v, --verbose          progress on stderr\n"
"  -h, --help             this help\n"
"\n"
"output: one line per delay,\n"
"  loaded-latency cpu_node=N mem_node=N lat_cpu=N load_threads=N page=P\n"
"                 delay=N bw_mbs=X bw_gbs=X lat_ns=X\n");
}

enum {
	OPT_LOAD_SIZE = OPT_CMD_BASE,
	OPT_THREADS,
	OPT_DELAYS,
	OPT_PATTERN,
	OPT_STRIDE,
	OPT_PLOT,
	OPT_SEED,
};

int tb_parse_delays(const char *arg, uint64_t *delays, int max)
{
	const char *s = arg;
	int n = 0;

	while (*s) {
		long v;
		char num[32];
		size_t l = strcspn(s, ",");

		if (!l || l >= sizeof(num) || n >= max)
			return -1;
		memcpy(num, s, l);
		num[l] = 0;
		if (tb_parse_long(num, 0, 100000000L, &v))
			return -1;
		delays[n++] = (uint64_t)v;
		s += l;
		if (*s == ',') {
			s++;
			if (!*s)
				return -1;
		}
	}
	return n ? n : -1;
}

static int loaded_opt(int c, const char *arg, void *ctx)
{
	struct tb_loaded_opts *o = ctx;

	switch (c) {
	case OPT_LOAD_SIZE:
		return tb_opt_size("--load-size", arg, 64 << 10, &o->load_size,
				   "expected a size of at least 64K");
	case 't':
	case OPT_THREADS:
		return tb_opt_threads(arg, &o->threads);
	case OPT_DELAYS:
		return tb_opt_delays(arg, o->delays, &o->ndelays);
	case OPT_PATTERN:
		if (tb_parse_pattern(arg, &o->pattern) ||
		    o->pattern == TB_PAT_LMBENCH)
			return tb_bad_value("--pattern", arg,
					    "expected random or chunk");
		return 0;
	case OPT_STRIDE:
		return tb_opt_stride(arg, &o->stride);
	case OPT_PLOT:
		return tb_opt_string("--plot", arg, &o->plot,
				     "expected a PNG file name");
	case OPT_SEED:
		return tb_opt_seed(arg, &o->seed);
	}
	return TB_OPT_UNKNOWN;
}

int loaded_parse(int argc, char **argv, struct tb_loaded_opts *o)
{
	static const struct option lo[] = {
		COMMON_LONG_OPTS,
		{ "load-size", required_argument, NULL, OPT_LOAD_SIZE },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "delays", required_argument, NULL, OPT_DELAYS },
		{ "pattern", required_argument, NULL, OPT_PATTERN },
		{ "stride", required_argument, NULL, OPT_STRIDE },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ NULL, 0, NULL, 0 },
	};
	static const uint64_t def[] = { 0, 20, 50, 100, 200, 400, 800, 1600,
					3200, 6400, 12800 };

	memset(o, 0, sizeof(*o));
	tb_common_defaults(&o->c, 1ULL << 30);
	o->c.duration = 0.5;
	o->c.warmup = 0.1;
	o->load_size = 1ULL << 30;
	o->stride = 64;
	o->pattern = TB_PAT_RANDOM;
	o->seed = 1;
	memcpy(o->delays, def, sizeof(def));
	o->ndelays = sizeof(def) / sizeof(def[0]);
	return tb_getopt(argc, argv, COMMON_SHORT_OPTS "t:", lo, &o->c, usage,
			 loaded_opt, o);
}

int cmd_loaded(int argc, char **argv)
{
	struct tb_loaded_opts o;
	struct tb_loaded_row rows[64];
	struct tb_loaded_cfg cfg;
	int loads[TB_MAX_CPUS], nload = 0, i, r, ncpu;
	struct tb_topo t;

	r = loaded_parse(argc, argv, &o);
	if (r)
		return r > 0 ? TB_EXIT_OK : TB_EXIT_USAGE;
	if (tb_topo_load(&t))
		return TB_EXIT_FAIL;
	if (tb_resolve_nodes(&t, &o.c))
		goto usage;
	ncpu = t.ncpus[o.c.cpu_node];
	for (i = 0; i < ncpu; i++)
		if (t.cpus[o.c.cpu_node][i] != o.c.cpu)
			loads[nload++] = t.cpus[o.c.cpu_node][i];
	if (!nload) {
		tb_err("node %ld has one usable CPU: loaded latency needs a second one for the load",
		       o.c.cpu_node);
		goto usage;
	}
	if (o.threads > nload) {
		tb_err("--threads %ld: node %ld has only %d CPUs besides the latency CPU",
		       o.threads, o.c.cpu_node, nload);
		goto usage;
	}
	if (o.threads > 0)
		nload = (int)o.threads;

	memset(&cfg, 0, sizeof(cfg));
	cfg.lat_cpu = (int)o.c.cpu;
	cfg.load_cpus = loads;
	cfg.nload = nload;
	cfg.mem_node = (int)o.c.mem_node;
	cfg.page = o.c.page;
	cfg.lat_size = o.c.size;
	cfg.load_size = o.load_size;
	cfg.stride = o.stride;
	cfg.pattern = o.pattern;
	cfg.delays = o.delays;
	cfg.ndelays = o.ndelays;
	cfg.duration = o.c.duration;
	cfg.warmup = o.c.warmup;
	cfg.seed = o.seed;
	if (tb_loaded_measure(&cfg, rows)) {
		tb_topo_free(&t);
		return TB_EXIT_FAIL;
	}
	if (o.c.json) {
		struct tb_json j;

		tb_json_tool(&j, stdout, "loaded-latency");
		tb_json_obj(&j, "params");
		tb_json_int(&j, "cpu_node", o.c.cpu_node);
		tb_json_int(&j, "mem_node", o.c.mem_node);
		tb_json_int(&j, "lat_cpu", o.c.cpu);
		tb_json_int(&j, "load_threads", nload);
		tb_json_str(&j, "page", tb_page_name(o.c.page));
		tb_json_int(&j, "size_bytes", (long long)o.c.size);
		tb_json_int(&j, "load_size_bytes", (long long)o.load_size);
		tb_json_num(&j, "duration_s", o.c.duration, 3);
		tb_json_obj_end(&j);
		tb_json_arr(&j, "results");
		for (i = 0; i < o.ndelays; i++)
			tb_json_loaded_row(&j, &rows[i]);
		tb_json_arr_end(&j);
		tb_json_end(&j);
	} else {
		for (i = 0; i < o.ndelays; i++)
			printf("loaded-latency cpu_node=%ld mem_node=%ld lat_cpu=%ld load_threads=%d page=%s delay=%llu bw_mbs=%.1f bw_gbs=%.2f lat_ns=%.1f\n",
			       o.c.cpu_node, o.c.mem_node, o.c.cpu, nload,
			       tb_page_name(o.c.page),
			       (unsigned long long)rows[i].delay,
			       rows[i].bw_mbs, rows[i].bw_mbs / 1e3,
			       rows[i].lat_ns);
	}
	if (o.plot && tb_plot_loaded(o.plot, o.c.cpu_node, o.c.mem_node, rows,
				     o.ndelays)) {
		tb_topo_free(&t);
		return TB_EXIT_FAIL;
	}
	tb_topo_free(&t);
	return TB_EXIT_OK;
usage:
	tb_topo_free(&t);
	return TB_EXIT_USAGE;
}
