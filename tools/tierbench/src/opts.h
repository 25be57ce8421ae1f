/* SPDX-License-Identifier: GPL-2.0 */
/* tierbench: option handling shared by the subcommands. */
#ifndef TIERBENCH_OPTS_H
#define TIERBENCH_OPTS_H

#include <getopt.h>

#include "tierbench.h"

/* Long-only option codes shared by every subcommand. */
enum {
	OPT_CPU_NODE = 1000,
	OPT_MEM_NODE,
	OPT_CPU,
	OPT_PAGE,
	OPT_SIZE,
	OPT_DURATION,
	OPT_WARMUP,
	OPT_JSON,
	OPT_VERBOSE,
	OPT_HELP,
	/* per-command codes start here */
	OPT_CMD_BASE = 1100,
};

#define COMMON_LONG_OPTS						\
	{ "cpu-node", required_argument, NULL, OPT_CPU_NODE },		\
	{ "mem-node", required_argument, NULL, OPT_MEM_NODE },		\
	{ "cpu", required_argument, NULL, OPT_CPU },			\
	{ "page", required_argument, NULL, OPT_PAGE },			\
	{ "size", required_argument, NULL, OPT_SIZE },			\
	{ "duration", required_argument, NULL, OPT_DURATION },		\
	{ "warmup", required_argument, NULL, OPT_WARMUP },		\
	{ "json", no_argument, NULL, OPT_JSON },			\
	{ "verbose", no_argument, NULL, OPT_VERBOSE },			\
	{ "help", no_argument, NULL, OPT_HELP }

#define COMMON_SHORT_OPTS ":c:m:s:d:p:jvh"

void tb_common_defaults(struct tb_common_opts *o, uint64_t size);
/*
 * Handle one getopt_long result shared by all commands. Returns 1 if it
 * was handled, 0 if the caller must handle it, -1 on a bad value, 2 for
 * --help (the caller prints its usage).
 */
int tb_common_opt(int c, const char *arg, struct tb_common_opts *o,
		  char *const *argv);
/* Report an unknown option or missing argument; always returns -1. */
int tb_bad_option(int c, char *const *argv);
/* Reject left-over positional arguments. */
int tb_no_positional(int argc, char *const *argv);
/* Prepare getopt for a fresh parse (the tests parse many times). */
void tb_getopt_reset(void);

/* Resolve cpu/mem node defaults and validate them against the machine. */
int tb_resolve_nodes(const struct tb_topo *t, struct tb_common_opts *o);

/* Bad value for an option: prints "invalid --opt 'x': why". */
int tb_bad_value(const char *opt, const char *val, const char *why);

#endif
