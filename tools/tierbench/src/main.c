// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench: one static multi-call binary. The subcommand comes from the
 * first argument ("tierbench latency ...") or from the program name when
 * called through a link named "tierbench-latency" and so on.
 */
#define _GNU_SOURCE
#include <string.h>

#include "tierbench.h"

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *what;
} cmds[] = {
	{ "latency", cmd_latency, "idle latency per CPU node x memory node (pointer chase)" },
	{ "bandwidth", cmd_bandwidth, "peak bandwidth for read/write mixes" },
	{ "memcpy", cmd_memcpy, "memcpy bandwidth, large and medium copies" },
	{ "loaded-latency", cmd_loaded, "latency under a swept streaming load" },
	{ "hugepages", cmd_hugepages, "reserve hugetlb pages for one command, then restore" },
	{ "run", cmd_run, "the whole suite per memory node, with a summary" },
	{ "json-check", cmd_json_check, "validate JSON (used by the guest smoke test)" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: tierbench COMMAND [options]   (tierbench COMMAND --help)\n\n"
		   "Memory-tier characterisation per NUMA node.\n\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-15s %s\n", cmds[i].name, cmds[i].what);
	fprintf(f, "\nExit status: 0 ok, 1 the measurement or the system failed, 2 bad command line.\n");
}

int main(int argc, char **argv)
{
	static char prog[64];
	const char *base = strrchr(argv[0], '/');
	size_t i;

	base = base ? base + 1 : argv[0];
	if (!strncmp(base, "tierbench-", 10)) {
		for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (!strcmp(base + 10, cmds[i].name)) {
				snprintf(prog, sizeof(prog), "tierbench %s",
					 cmds[i].name);
				tb_prog = prog;
				return cmds[i].fn(argc, argv);
			}
	}
	if (argc < 2) {
		usage(stderr);
		return TB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return TB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("tierbench %s\n", TB_VERSION);
		return TB_EXIT_OK;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (!strcmp(argv[1], cmds[i].name)) {
			snprintf(prog, sizeof(prog), "tierbench %s",
				 cmds[i].name);
			tb_prog = prog;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	}
	tb_err("unknown command '%s' (see tierbench --help)", argv[1]);
	return TB_EXIT_USAGE;
}
