// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): command-line front end of htmm, the hugepage-aware tiered
 * memory manager (Documentation/admin-guide/mm/htmm.rst).
 *
 *   htmm run [--budget NODE=SIZE]... [--set TUNABLE=VALUE]... -- CMD ...
 *   htmm attach --cgroup PATH PID...
 *   htmm status [--cgroup PATH] [--watch SECS]
 *   htmm record [-o FILE] [--interval MS] (--cgroup PATH | -- CMD ...)
 *   htmm report FILE [--plot OUT.png]
 *   htmm tune --show | --preset memtis | --from-tierbench FILE
 *
 * It drives /sys/kernel/mm/htmm/ and the cgroup v2 files
 * memory.htmm_enabled, memory.max_at_node<N> and memory.htmm_stat.
 *
 * Why no libnuma: the node facts needed (online nodes, nodes with memory
 * and CPUs, node sizes) are the sysfs files libnuma itself reads, and the
 * memory tiers (/sys/devices/virtual/memory_tiering), which decide the
 * fast nodes, are beyond libnuma altogether.  Reading sysfs directly also
 * lets every kernel file go through $HTMM_SYSFS_ROOT, so that the host
 * tests run status, tune and record against a fake tree, and keeps the
 * static guest binary free of a library that prints warnings on kernels
 * without NUMA.
 */
#define _GNU_SOURCE
#include <string.h>

#include "htmm.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
};

static const struct command commands[] = {
	{ "run", cmd_run, "run a command in a new cgroup with htmm enabled" },
	{ "attach", cmd_attach, "put running processes under htmm in a cgroup" },
	{ "status", cmd_status, "nodes, tiers, sampler, threads, cgroups" },
	{ "record", cmd_record, "time series of a cgroup's htmm state" },
	{ "report", cmd_report, "summary (and plot) of a record" },
	{ "tune", cmd_tune, "show or set /sys/kernel/mm/htmm tunables" },
};

static void print_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: htmm COMMAND [OPTIONS] (htmm COMMAND --help)\n\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].what);
	fprintf(f, "\nEnvironment: HTMM_SYSFS_ROOT=DIR reads and writes the kernel's\n"
		"files under DIR (a fake tree, for tests).  See htmm(8).\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		print_usage(stderr);
		return HM_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return HM_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("htmm %s\n", HM_VERSION);
		return HM_EXIT_OK;
	}
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	hm_err("unknown command %s (see htmm --help)", argv[1]);
	return HM_EXIT_USAGE;
}
