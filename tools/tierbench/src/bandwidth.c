// SPDX-License-Identifier: GPL-2.0
/* tierbench bandwidth and memcpy: the command-line side. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "opts.h"

enum {
	OPT_THREADS = OPT_CMD_BASE,
	OPT_MIX,
	OPT_BLOCK,
};

/* Shared checks once the options are parsed: nodes and thread count. */
static int resolve_threads(struct tb_topo *t, struct tb_common_opts *c,
			   long *threads)
{
	if (c->cpu >= 0) {
		tb_err("--cpu does not apply here: threads run on the CPUs of --cpu-node (see --threads)");
		return -1;
	}
	if (tb_resolve_nodes(t, c))
		return -1;
	if (*threads > t->ncpus[c->cpu_node]) {
		tb_err("--threads %ld: node %ld has only %d usable CPUs",
		       *threads, c->cpu_node, t->ncpus[c->cpu_node]);
		return -1;
	}
	if (*threads <= 0)
		*threads = t->ncpus[c->cpu_node];
	return 0;
}

/*
 * After the options were parsed (parsed: what *_parse returned), load the
 * topology, check the nodes and the thread count and fill the measurement
 * config. Returns -1 to go on, else the exit status (the topology is then
 * not loaded or already freed).
 */
static int bw_prepare(int parsed, struct tb_topo *t, struct tb_common_opts *c,
		      long *threads, struct tb_bw_cfg *cfg)
{
	if (parsed)
		return parsed > 0 ? TB_EXIT_OK : TB_EXIT_USAGE;
	if (tb_topo_load(t))
		return TB_EXIT_FAIL;
	if (resolve_threads(t, c, threads)) {
		tb_topo_free(t);
		return TB_EXIT_USAGE;
	}
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpus = t->cpus[c->cpu_node];
	cfg->nthreads = (int)*threads;
	cfg->mem_node = (int)c->mem_node;
	cfg->page = c->page;
	cfg->size = c->size;
	cfg->duration = c->duration;
	cfg->warmup = c->warmup;
	return -1;
}

/* JSON up to the opened "results" array: the tool and its parameters. */
static void bw_json_head(struct tb_json *j, const char *tool,
			 const struct tb_common_opts *c, long threads)
{
	tb_json_tool(j, stdout, tool);
	tb_json_obj(j, "params");
	tb_json_int(j, "cpu_node", c->cpu_node);
	tb_json_int(j, "mem_node", c->mem_node);
	tb_json_int(j, "threads", threads);
	tb_json_str(j, "page", tb_page_name(c->page));
	tb_json_int(j, "size_bytes", (long long)c->size);
	tb_json_num(j, "duration_s", c->duration, 3);
	tb_json_obj_end(j);
	tb_json_arr(j, "results");
}

static void bw_json_mbs(struct tb_json *j, double mbs, double mbs_min,
			double mbs_max, int repeats)
{
	tb_json_num(j, "mbs", mbs, 1);
	tb_json_num(j, "gbs", mbs / 1e3, 2);
	tb_json_num(j, "min_mbs", mbs_min, 1);
	tb_json_num(j, "max_mbs", mbs_max, 1);
	tb_json_int(j, "repeats", repeats);
}

static void bw_json_tail(struct tb_json *j)
{
	tb_json_arr_end(j);
	tb_json_end(j);
}

/* ------------------------------------------------------------ bandwidth */

static void bw_usage(FILE *f)
{
	fprintf(f,
"usage: tierbench bandwidth [options]\n"
"\n"
"Peak memory bandwidth: N pinned threads each stream their own region\n"
"bound to the memory node, for each read/write mix. Ratios are Intel MLC's:\n"
"lines read from memory (a stored line's read for ownership included) to\n"
"lines written back; stores write part of a line, so that read happens.\n"
"  all-reads  every line loaded                            (MLC -R)\n"
"  3:1        two lines loaded, one stored into, per step  (MLC -W3)\n"
"  2:1        one line loaded, another stored into         (MLC -W2)\n"
"  1:1        lines stored into only                       (MLC -W5)\n"
"and, only when asked for:\n"
"  rmw        each line loaded, then stored into (in place; 1 : 1)\n"
"  copy       whole lines loaded and stored to another array, counted\n"
"             as STREAM does (read for ownership not counted; 1 : 1);\n"
"             this was the 1:1 mix of tierbench 1.0\n"
"Bytes counted = lines read + lines written, times 64, as MLC counts them;\n"
"MB/s = 10^6 bytes/s, GB/s = 10^9 bytes/s.\n"
"\n"
"options:\n"
"  -s, --size SIZE        total size over all threads (default 1G)\n"
"  -t, --threads N        threads (default: all usable CPUs of the CPU node)\n"
"      --mix LIST         comma list of all-reads, 3:1, 2:1, 1:1, rmw, copy,\n"
"                         MLC's names R, W3, W2, W5, or 'all' (the first\n"
"                         four; default all)\n"
"  -m, --mem-node N       node the regions are bound to (default: CPU node)\n"
"  -c, --cpu-node N       node whose CPUs run the threads (default: first\n"
"                         node with CPUs)\n"
"  -p, --page KIND        4k (default), thp, 2m or 1g\n"
"  -d, --duration SEC     measuring time per mix (default 1)\n"
"      --warmup SEC       warm-up time per mix (default 0.2)\n"
"  -j, --json             JSON output\n"
"  -v, --verbose          progress on stderr\n"
"  -h, --help             this help\n"
"\n"
"output: one line per mix,\n"
"  bandwidth cpu_node=N mem_node=N threads=N page=P size=S mix=M repeats=N\n"
"            mbs=X gbs=X min_mbs=X max_mbs=X placed_pct=X\n");
}

static int mix_item(const char *item, void *ctx)
{
	unsigned char *mixes = ctx;
	enum tb_mix m;

	if (!strcmp(item, "all")) {
		memset(mixes, 1, TB_MIX_NR_DEFAULT);
		return 0;
	}
	if (tb_parse_mix(item, &m))
		return -1;
	mixes[m] = 1;
	return 0;
}

static int parse_mixes(const char *arg, unsigned char *mixes)
{
	memset(mixes, 0, TB_MIX_COUNT);
	if (tb_for_each_item(arg, mix_item, mixes) < 0 ||
	    !memchr(mixes, 1, TB_MIX_COUNT))
		return tb_bad_value("--mix", arg,
				    "expected a comma list of all-reads, 3:1, 2:1, 1:1, rmw, copy (or R, W3, W2, W5), or 'all'");
	return 0;
}

static int bw_opt(int c, const char *arg, void *ctx)
{
	struct tb_bandwidth_opts *o = ctx;

	switch (c) {
	case 't':
	case OPT_THREADS:
		return tb_opt_threads(arg, &o->threads);
	case OPT_MIX:
		return parse_mixes(arg, o->mixes);
	}
	return TB_OPT_UNKNOWN;
}

int bandwidth_parse(int argc, char **argv, struct tb_bandwidth_opts *o)
{
	static const struct option lo[] = {
		COMMON_LONG_OPTS,
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "mix", required_argument, NULL, OPT_MIX },
		{ NULL, 0, NULL, 0 },
	};

	memset(o, 0, sizeof(*o));
	tb_common_defaults(&o->c, 1ULL << 30);
	memset(o->mixes, 1, TB_MIX_NR_DEFAULT);
	return tb_getopt(argc, argv, COMMON_SHORT_OPTS "t:", lo, &o->c,
			 bw_usage, bw_opt, o);
}

int cmd_bandwidth(int argc, char **argv)
{
	struct tb_bandwidth_opts o;
	struct tb_bw_res res[TB_MIX_COUNT];
	struct tb_bw_cfg cfg;
	struct tb_topo t;
	char sz[32];
	int r, m;

	r = bw_prepare(bandwidth_parse(argc, argv, &o), &t, &o.c, &o.threads,
		       &cfg);
	if (r >= 0)
		return r;
	memset(res, 0, sizeof(res));
	if (tb_bw_measure(&cfg, o.mixes, res)) {
		tb_topo_free(&t);
		return TB_EXIT_FAIL;
	}
	tb_fmt_size(o.c.size, sz, sizeof(sz));
	if (o.c.json) {
		struct tb_json j;

		bw_json_head(&j, "bandwidth", &o.c, o.threads);
		for (m = 0; m < TB_MIX_COUNT; m++) {
			if (!o.mixes[m])
				continue;
			tb_json_obj(&j, NULL);
			tb_json_str(&j, "mix", tb_mix_name(m));
			bw_json_mbs(&j, res[m].mbs, res[m].mbs_min,
				    res[m].mbs_max, res[m].repeats);
			tb_json_num(&j, "placed_pct", res[m].placed_pct, 1);
			tb_json_obj_end(&j);
		}
		bw_json_tail(&j);
	} else {
		for (m = 0; m < TB_MIX_COUNT; m++) {
			if (!o.mixes[m])
				continue;
			printf("bandwidth cpu_node=%ld mem_node=%ld threads=%ld page=%s size=%s mix=%s repeats=%d mbs=%.1f gbs=%.2f min_mbs=%.1f max_mbs=%.1f placed_pct=%.1f\n",
			       o.c.cpu_node, o.c.mem_node, o.threads,
			       tb_page_name(o.c.page), sz, tb_mix_name(m),
			       res[m].repeats, res[m].mbs, res[m].mbs / 1e3,
			       res[m].mbs_min, res[m].mbs_max,
			       res[m].placed_pct);
		}
	}
	tb_topo_free(&t);
	return TB_EXIT_OK;
}

/* --------------------------------------------------------------- memcpy */

static void cpy_usage(FILE *f)
{
	fprintf(f,
"usage: tierbench memcpy [options]\n"
"\n"
"memcpy() bandwidth: N pinned threads each copy the first half of their own\n"
"region (bound to the memory node) to the second half, either with one\n"
"large memcpy per pass or in medium blocks. Bandwidth counts the bytes\n"
"copied (not read + written); MB/s = 10^6 bytes/s.\n"
"\n"
"options:\n"
"  -s, --size SIZE        total size over all threads, source + target\n"
"                         (default 1G)\n"
"  -t, --threads N        threads (default: all usable CPUs of the CPU node)\n"
"      --block LIST       comma list of block sizes; 'large' = the whole\n"
"                         half-region in one call (default large,16K)\n"
"  -m, --mem-node N       node the regions are bound to (default: CPU node)\n"
"  -c, --cpu-node N       node whose CPUs run the threads\n"
"  -p, --page KIND        4k (default), thp, 2m or 1g\n"
"  -d, --duration SEC     measuring time per block size (default 1)\n"
"      --warmup SEC       warm-up time per block size (default 0.2)\n"
"  -j, --json             JSON output\n"
"  -v, --verbose          progress on stderr\n"
"  -h, --help             this help\n"
"\n"
"output: one line per block size,\n"
"  memcpy cpu_node=N mem_node=N threads=N page=P size=S block=B\n"
"         block_bytes=N repeats=N mbs=X gbs=X min_mbs=X max_mbs=X\n");
}

static int block_item(const char *item, void *ctx)
{
	struct tb_memcpy_opts *o = ctx;
	uint64_t v;

	if (o->nblocks >= 16)
		return -1;
	if (!strcmp(item, "large"))
		v = TB_MEMCPY_LARGE;
	else if (tb_parse_size(item, &v) || v < 64 || v % 64)
		return -1;
	o->blocks[o->nblocks++] = v;
	return 0;
}

static int parse_blocks(const char *arg, struct tb_memcpy_opts *o)
{
	o->nblocks = 0;
	if (tb_for_each_item(arg, block_item, o) <= 0)
		return tb_bad_value("--block", arg,
				    "expected a comma list of 'large' and sizes that are multiples of 64, such as large,16K");
	return 0;
}

static int cpy_opt(int c, const char *arg, void *ctx)
{
	struct tb_memcpy_opts *o = ctx;

	switch (c) {
	case 't':
	case OPT_THREADS:
		return tb_opt_threads(arg, &o->threads);
	case OPT_BLOCK:
		return parse_blocks(arg, o);
	}
	return TB_OPT_UNKNOWN;
}

int memcpy_parse(int argc, char **argv, struct tb_memcpy_opts *o)
{
	static const struct option lo[] = {
		COMMON_LONG_OPTS,
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "block", required_argument, NULL, OPT_BLOCK },
		{ NULL, 0, NULL, 0 },
	};

	memset(o, 0, sizeof(*o));
	tb_common_defaults(&o->c, 1ULL << 30);
	o->blocks[0] = TB_MEMCPY_LARGE;
	o->blocks[1] = 16384;
	o->nblocks = 2;
	return tb_getopt(argc, argv, COMMON_SHORT_OPTS "t:", lo, &o->c,
			 cpy_usage, cpy_opt, o);
}

int cmd_memcpy(int argc, char **argv)
{
	struct tb_memcpy_opts o;
	struct tb_cpy_res res[16];
	struct tb_bw_cfg cfg;
	struct tb_topo t;
	char sz[32], bl[32];
	int r, b;

	r = bw_prepare(memcpy_parse(argc, argv, &o), &t, &o.c, &o.threads,
		       &cfg);
	if (r >= 0)
		return r;
	if (tb_memcpy_measure(&cfg, o.blocks, o.nblocks, res)) {
		tb_topo_free(&t);
		return TB_EXIT_FAIL;
	}
	tb_fmt_size(o.c.size, sz, sizeof(sz));
	if (o.c.json) {
		struct tb_json j;

		bw_json_head(&j, "memcpy", &o.c, o.threads);
		for (b = 0; b < o.nblocks; b++) {
			tb_json_obj(&j, NULL);
			tb_json_str(&j, "block", o.blocks[b] ?
				    tb_fmt_size(o.blocks[b], bl, sizeof(bl)) :
				    "large");
			tb_json_int(&j, "block_bytes", (long long)res[b].block);
			bw_json_mbs(&j, res[b].mbs, res[b].mbs_min,
				    res[b].mbs_max, res[b].repeats);
			tb_json_obj_end(&j);
		}
		bw_json_tail(&j);
	} else {
		for (b = 0; b < o.nblocks; b++)
			printf("memcpy cpu_node=%ld mem_node=%ld threads=%ld page=%s size=%s block=%s block_bytes=%llu repeats=%d mbs=%.1f gbs=%.2f min_mbs=%.1f max_mbs=%.1f\n",
			       o.c.cpu_node, o.c.mem_node, o.threads,
			       tb_page_name(o.c.page), sz,
			       o.blocks[b] ? tb_fmt_size(o.blocks[b], bl,
							 sizeof(bl)) : "large",
			       (unsigned long long)res[b].block,
			       res[b].repeats, res[b].mbs, res[b].mbs / 1e3,
			       res[b].mbs_min, res[b].mbs_max);
	}
	tb_topo_free(&t);
	return TB_EXIT_OK;
}
