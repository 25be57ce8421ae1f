// SPDX-License-Identifier: GPL-2.0
/* tierbench: option handling shared by the subcommands. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "opts.h"

void tb_common_defaults(struct tb_common_opts *o, uint64_t size)
{
	memset(o, 0, sizeof(*o));
	o->cpu_node = -1;
	o->mem_node = -1;
	o->cpu = -1;
	o->page = TB_PAGE_4K;
	o->size = size;
	o->duration = 1.0;
	o->warmup = 0.2;
}

int tb_bad_value(const char *opt, const char *val, const char *why)
{
	tb_err("invalid %s '%s': %s", opt, val, why);
	return -1;
}

int tb_opt_long(const char *opt, const char *arg, long min, long max,
		long *out, const char *why)
{
	if (tb_parse_long(arg, min, max, out))
		return tb_bad_value(opt, arg, why);
	return 0;
}

int tb_opt_size(const char *opt, const char *arg, uint64_t min,
		uint64_t *out, const char *why)
{
	if (tb_parse_size(arg, out) || *out < min)
		return tb_bad_value(opt, arg, why);
	return 0;
}

static int opt_duration(const char *opt, const char *arg, double *out,
			const char *why)
{
	if (tb_parse_duration(arg, out))
		return tb_bad_value(opt, arg, why);
	return 0;
}

int tb_opt_string(const char *opt, const char *arg, const char **out,
		  const char *why)
{
	if (!*arg)
		return tb_bad_value(opt, arg, why);
	*out = arg;
	return 0;
}

int tb_opt_threads(const char *arg, long *threads)
{
	return tb_opt_long("--threads", arg, 1, TB_MAX_CPUS, threads,
			   "expected a thread count of at least 1");
}

int tb_opt_stride(const char *arg, uint64_t *stride)
{
	if (tb_parse_size(arg, stride) || *stride < 8 || *stride % 8 ||
	    *stride > (1ULL << 30))
		return tb_bad_value("--stride", arg,
				    "expected a multiple of 8 bytes, at most 1G");
	return 0;
}

int tb_opt_seed(const char *arg, uint64_t *seed)
{
	long v;

	if (tb_opt_long("--seed", arg, 0, 0x7fffffffL, &v,
			"expected a non-negative integer"))
		return -1;
	*seed = (uint64_t)v;
	return 0;
}

int tb_opt_delays(const char *arg, uint64_t *delays, int *n)
{
	*n = tb_parse_delays(arg, delays, 64);
	if (*n < 0)
		return tb_bad_value("--delays", arg,
				    "expected a comma list of at most 64 integers in 0..100000000");
	return 0;
}

int tb_for_each_item(const char *arg, int (*fn)(const char *item, void *ctx),
		     void *ctx)
{
	size_t len = strlen(arg);
	char *copy, *save = NULL, *tok;
	int n = 0;

	if (len && arg[len - 1] == ',')
		return -1;
	copy = strdup(arg);
	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok && n >= 0;
	     tok = strtok_r(NULL, ",", &save))
		n = fn(tok, ctx) ? -1 : n + 1;
	free(copy);
	return n;
}

/* tb_opt_*() result -> common_opt() result: 1 taken, -1 bad value. */
static int taken(int r)
{
	return r ? -1 : 1;
}

/*
 * Handle one getopt_long result shared by all commands. Returns 1 if it
 * was handled, 0 if the caller must handle it, -1 on a bad value, 2 for
 * --help (the caller prints its usage).
 */
static int common_opt(int c, const char *arg, struct tb_common_opts *o)
{
	switch (c) {
	case 'c':
	case OPT_CPU_NODE:
		return taken(tb_opt_long("--cpu-node", arg, 0, TB_MAX_NODES - 1,
					 &o->cpu_node, "expected a node number"));
	case 'm':
	case OPT_MEM_NODE:
		return taken(tb_opt_long("--mem-node", arg, 0, TB_MAX_NODES - 1,
					 &o->mem_node, "expected a node number"));
	case OPT_CPU:
		return taken(tb_opt_long("--cpu", arg, 0, TB_MAX_CPUS - 1,
					 &o->cpu, "expected a CPU number"));
	case 'p':
	case OPT_PAGE:
		if (tb_parse_page(arg, &o->page))
			return tb_bad_value("--page", arg,
					    "expected 4k, thp, 2m or 1g");
		return 1;
	case 's':
	case OPT_SIZE:
		return taken(tb_opt_size("--size", arg, 4096, &o->size,
					 "expected a size of at least 4K such as 64M or 1G"));
	case 'd':
	case OPT_DURATION:
		return taken(opt_duration("--duration", arg, &o->duration,
					  "expected seconds > 0 such as 0.5, 50ms or 2s"));
	case OPT_WARMUP:
		return taken(opt_duration("--warmup", arg, &o->warmup,
					  "expected seconds > 0 such as 0.2 or 100ms"));
	case 'j':
	case OPT_JSON:
		o->json = 1;
		return 1;
	case 'v':
	case OPT_VERBOSE:
		tb_verbose = 1;
		return 1;
	case 'h':
	case OPT_HELP:
		return 2;
	}
	return 0;
}

/* Report an unknown option or missing argument; always returns -1. */
static int bad_option(int c, char *const *argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		tb_err("option '%s' needs a value (see --help)", arg);
	else if (optopt && optopt < 256)
		tb_err("unknown option '-%c' (see --help)", optopt);
	else
		tb_err("unknown option '%s' (see --help)", arg);
	return -1;
}

/* Reject left-over positional arguments. */
static int no_positional(int argc, char *const *argv)
{
	if (optind < argc) {
		tb_err("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	return 0;
}

int tb_getopt(int argc, char **argv, const char *shortopts,
	      const struct option *longopts, struct tb_common_opts *co,
	      void (*usage)(FILE *f),
	      int (*own)(int c, const char *arg, void *ctx), void *ctx)
{
	int c, r;

	/* Fresh parse each time (the tests parse many times). */
	optind = 0;	/* glibc: full re-initialisation */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		r = common_opt(c, optarg, co);
		if (r == 2) {
			usage(stdout);
			return 1;
		}
		if (r < 0)
			return -1;
		if (r == 1)
			continue;
		r = own(c, optarg, ctx);
		if (r == TB_OPT_UNKNOWN)
			return bad_option(c, argv);
		if (r)
			return -1;
	}
	return shortopts[0] == '+' ? 0 : no_positional(argc, argv);
}

int tb_resolve_nodes(const struct tb_topo *t, struct tb_common_opts *o)
{
	if (o->cpu >= 0) {
		int n = tb_node_of_cpu(t, (int)o->cpu);

		if (n < 0) {
			tb_err("--cpu %ld: CPU is offline or not allowed for this process",
			       o->cpu);
			return -1;
		}
		if (o->cpu_node >= 0 && o->cpu_node != n) {
			tb_err("--cpu %ld belongs to node %d, not to --cpu-node %ld",
			       o->cpu, n, o->cpu_node);
			return -1;
		}
		o->cpu_node = n;
	}
	if (o->cpu_node < 0) {
		o->cpu_node = tb_topo_first_cpu_node(t);
		if (o->cpu_node < 0) {
			tb_err("no NUMA node has a CPU this process may use");
			return -1;
		}
	}
	if (tb_check_cpu_node(t, o->cpu_node, "--cpu-node"))
		return -1;
	if (o->cpu < 0)
		o->cpu = t->cpus[o->cpu_node][0];
	if (o->mem_node < 0) {
		o->mem_node = t->has_mem[o->cpu_node] ? o->cpu_node :
			      tb_topo_first_mem_node(t);
		if (o->mem_node < 0) {
			tb_err("no NUMA node has memory");
			return -1;
		}
	}
	return tb_check_mem_node(t, o->mem_node, "--mem-node");
}
