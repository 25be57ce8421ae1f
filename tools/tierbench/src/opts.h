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

/* Long options shared by groups of subcommands (see COMMON_LONG_OPTS). */
#define TB_NODE_LONG_OPTS						\
	{ "cpu-node", required_argument, NULL, OPT_CPU_NODE },		\
	{ "mem-node", required_argument, NULL, OPT_MEM_NODE },		\
	{ "cpu", required_argument, NULL, OPT_CPU }

#define TB_REGION_LONG_OPTS						\
	{ "page", required_argument, NULL, OPT_PAGE },			\
	{ "size", required_argument, NULL, OPT_SIZE },			\
	{ "duration", required_argument, NULL, OPT_DURATION },		\
	{ "warmup", required_argument, NULL, OPT_WARMUP }

#define TB_OUTPUT_LONG_OPTS						\
	{ "json", no_argument, NULL, OPT_JSON },			\
	{ "verbose", no_argument, NULL, OPT_VERBOSE },			\
	{ "help", no_argument, NULL, OPT_HELP }

#define COMMON_LONG_OPTS						\
	TB_NODE_LONG_OPTS, TB_REGION_LONG_OPTS, TB_OUTPUT_LONG_OPTS

#define COMMON_SHORT_OPTS ":c:m:s:d:p:jvh"

void tb_common_defaults(struct tb_common_opts *o, uint64_t size);

/* What a command's own option handler returns for an option it lacks. */
#define TB_OPT_UNKNOWN 1

/*
 * The getopt_long loop of a subcommand: the options every command shares
 * (COMMON_LONG_OPTS, as far as longopts and shortopts offer them) are
 * stored in co, --help prints usage; the rest go to own(c, optarg, ctx),
 * which returns 0 when taken, -1 on a bad value (message printed) or
 * TB_OPT_UNKNOWN.
 * Positional arguments are rejected, unless shortopts starts with '+'
 * (stop at the first one): they are then left to the caller at optind.
 * Returns 0 once the options are parsed, 1 after printing usage for
 * --help, -1 on a bad option or argument (message printed).
 */
int tb_getopt(int argc, char **argv, const char *shortopts,
	      const struct option *longopts, struct tb_common_opts *co,
	      void (*usage)(FILE *f),
	      int (*own)(int c, const char *arg, void *ctx), void *ctx);

/*
 * Value parsers for options that several commands share. Each returns 0,
 * or -1 after printing "invalid --opt 'x': why".
 */
int tb_opt_long(const char *opt, const char *arg, long min, long max,
		long *out, const char *why);
int tb_opt_size(const char *opt, const char *arg, uint64_t min,
		uint64_t *out, const char *why);
int tb_opt_string(const char *opt, const char *arg, const char **out,
		  const char *why);			/* not empty */
int tb_opt_threads(const char *arg, long *threads);	/* --threads */
int tb_opt_stride(const char *arg, uint64_t *stride);	/* --stride */
int tb_opt_seed(const char *arg, uint64_t *seed);	/* --seed */
int tb_opt_delays(const char *arg, uint64_t *delays, int *n); /* --delays */

/*
 * Split a comma list and pass every item to fn (empty items are skipped).
 * Stops at the first item fn rejects (returns non-zero). Returns the number
 * of items taken, or -1 if an item was rejected, the list ends with a comma
 * or memory ran out. Prints nothing.
 */
int tb_for_each_item(const char *arg, int (*fn)(const char *item, void *ctx),
		     void *ctx);

/* Resolve cpu/mem node defaults and validate them against the machine. */
int tb_resolve_nodes(const struct tb_topo *t, struct tb_common_opts *o);

/* Bad value for an option: prints "invalid --opt 'x': why". */
int tb_bad_value(const char *opt, const char *val, const char *why);

#endif
