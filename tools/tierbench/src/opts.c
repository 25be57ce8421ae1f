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

int tb_common_opt(int c, const char *arg, struct tb_common_opts *o,
		  char *const *argv)
{
	(void)argv;
	switch (c) {
	case 'c':
	case OPT_CPU_NODE:
		if (tb_parse_long(arg, 0, TB_MAX_NODES - 1, &o->cpu_node))
			return tb_bad_value("--cpu-node", arg,
					    "expected a node number");
		return 1;
	case 'm':
	case OPT_MEM_NODE:
		if (tb_parse_long(arg, 0, TB_MAX_NODES - 1, &o->mem_node))
			return tb_bad_value("--mem-node", arg,
					    "expected a node number");
		return 1;
	case OPT_CPU:
		if (tb_parse_long(arg, 0, TB_MAX_CPUS - 1, &o->cpu))
			return tb_bad_value("--cpu", arg,
					    "expected a CPU number");
		return 1;
	case 'p':
	case OPT_PAGE:
		if (tb_parse_page(arg, &o->page))
			return tb_bad_value("--page", arg,
					    "expected 4k, thp, 2m or 1g");
		return 1;
	case 's':
	case OPT_SIZE:
		if (tb_parse_size(arg, &o->size) || o->size < 4096)
			return tb_bad_value("--size", arg,
					    "expected a size of at least 4K such as 64M or 1G");
		return 1;
	case 'd':
	case OPT_DURATION:
		if (tb_parse_duration(arg, &o->duration))
			return tb_bad_value("--duration", arg,
					    "expected seconds > 0 such as 0.5, 50ms or 2s");
		return 1;
	case OPT_WARMUP:
		if (tb_parse_duration(arg, &o->warmup))
			return tb_bad_value("--warmup", arg,
					    "expected seconds > 0 such as 0.2 or 100ms");
		return 1;
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

int tb_bad_option(int c, char *const *argv)
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

int tb_no_positional(int argc, char *const *argv)
{
	if (optind < argc) {
		tb_err("unexpected argument '%s' (see --help)", argv[optind]);
		return -1;
	}
	return 0;
}

void tb_getopt_reset(void)
{
	optind = 0;	/* glibc: full re-initialisation */
	opterr = 0;
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
