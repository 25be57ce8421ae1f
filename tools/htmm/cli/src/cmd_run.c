// SPDX-License-Identifier: GPL-2.0
/* htmm(8): the run, attach and record commands' command lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "htmm.h"

static const char run_usage[] =
"usage: htmm run [OPTIONS] [--] CMD [ARGS...]\n"
"\n"
"Run CMD in a new memory cgroup with htmm enabled, then restore every\n"
"global tunable changed and remove the cgroup (also on Ctrl-C or failure).\n"
"Exits with CMD's status (128+N if killed by signal N; 125 if htmm failed,\n"
"126 if CMD cannot be executed, 127 if it is not found).\n"
"\n"
"  -b, --budget NODE=SIZE   memory.max_at_node<NODE>; SIZE in bytes with an\n"
"                           optional K, M, G, T, P or E, or max (repeatable)\n"
"  -S, --sampler S          htmm_sampler: auto, pebs, abit or inject\n"
"  -m, --mode M             htmm_mode: 0|classify, 1|migrate, 2|split\n"
"  -s, --set TUNABLE=VALUE  a /sys/kernel/mm/htmm tunable (repeatable)\n"
"  -r, --record FILE        record while CMD runs (see htmm record)\n"
"  -i, --interval MS        record interval (default 1000)\n"
"  -f, --format csv|jsonl   record format (default: by FILE's suffix)\n"
"  -k, --kthread COMM       also record this kernel thread's CPU, e.g.\n"
"                           kdamond.0 or kswapd1 (repeatable, up to 8)\n"
"  -c, --cgroup PATH        create this cgroup (default htmm-run.<pid>)\n"
"  -v, --verbose            say what is done\n"
"  -h, --help               this help\n";

static const char attach_usage[] =
"usage: htmm attach --cgroup PATH [OPTIONS] PID...\n"
"\n"
"Enable htmm in an existing cgroup, move the processes PID... into it and\n"
"apply budgets and tunables; wait until the processes exit (or Ctrl-C:\n"
"then they go back to their cgroups), then restore the tunables and\n"
"budgets and disable htmm if attach enabled it.  The cgroup stays.\n"
"\n"
"  -c, --cgroup PATH        the cgroup (below /sys/fs/cgroup)\n"
"  -b, --budget NODE=SIZE   as for run (restored at the end)\n"
"  -S, --sampler S, -m, --mode M, -s, --set TUNABLE=VALUE\n"
"  -r, --record FILE, -i, --interval MS, -f, --format csv|jsonl,\n"
"  -k, --kthread COMM\n"
"  -v, --verbose, -h, --help\n";

static const char record_usage[] =
"usage: htmm record [-o FILE] [-i MS] [-f csv|jsonl] [-n COUNT]\n"
"                   [-k COMM]... (--cgroup PATH | -- CMD [ARGS...])\n"
"\n"
"Write a time series of a cgroup's htmm state: one row every interval\n"
"(schema in htmm(8)).  With --cgroup, until Ctrl-C, COUNT rows, or the\n"
"cgroup is removed; with -- CMD, runs CMD as htmm run does (without\n"
"budgets) and records until it exits.\n"
"\n"
"  -o, --output FILE        the file (default: stdout; needed with CMD)\n"
"  -i, --interval MS        milliseconds between rows (default 1000)\n"
"  -f, --format csv|jsonl   default: jsonl for .jsonl/.json, else csv\n"
"  -n, --count N            stop after N rows (--cgroup only)\n"
"  -k, --kthread COMM       also record this kernel thread's CPU, e.g.\n"
"                           kdamond.0 or kswapd1 (repeatable, up to 8)\n"
"  -c, --cgroup PATH        the cgroup to record\n"
"  -h, --help               this help\n";

static const struct option session_opts[] = {
	{ "budget", required_argument, NULL, 'b' },
	{ "sampler", required_argument, NULL, 'S' },
	{ "mode", required_argument, NULL, 'm' },
	{ "set", required_argument, NULL, 's' },
	{ "record", required_argument, NULL, 'r' },
	{ "interval", required_argument, NULL, 'i' },
	{ "format", required_argument, NULL, 'f' },
	{ "kthread", required_argument, NULL, 'k' },
	{ "cgroup", required_argument, NULL, 'c' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static const char *opt_name(int c)
{
	const struct option *o;

	for (o = session_opts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "";
}

/* The shared options; 1 for --help, 0, or -1 (said why). */
static int parse_session(struct hm_session *s, int argc, char **argv,
			 const char *usage)
{
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+b:S:m:s:r:i:f:k:c:vh",
				session_opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 1;
		}
		if (c == 'v') {
			hm_verbose = 1;
			continue;
		}
		if (c == '?' || c == ':') {
			hm_err("%s: bad option %s (see htmm %s --help)", s->verb,
			       argv[optind - 1], s->verb);
			return -1;
		}
		if (hm_session_option(s, opt_name(c), optarg))
			return -1;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct hm_session s;
	int r;

	hm_session_init(&s, "run");
	s.create = true;
	r = parse_session(&s, argc, argv, run_usage);
	if (r)
		return r > 0 ? HM_EXIT_OK : HM_EXIT_TOOL;
	if (optind >= argc) {
		hm_err("run: no command given (htmm run [OPTIONS] -- CMD [ARGS...])");
		return HM_EXIT_TOOL;
	}
	s.cmd = argv + optind;
	return hm_session_run(&s);
}

static int parse_pids(struct hm_session *s, int argc, char **argv)
{
	unsigned long long v;
	int i;

	for (i = optind; i < argc; i++) {
		if (s->npids == HM_MAX_PIDS) {
			hm_err("attach: at most %d processes", HM_MAX_PIDS);
			return -1;
		}
		if (hm_parse_ull(argv[i], 0x7fffffff, &v) || !v) {
			hm_err("attach: bad pid %s", argv[i]);
			return -1;
		}
		s->pids[s->npids++] = (pid_t)v;
	}
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct hm_session s;
	int r;

	hm_session_init(&s, "attach");
	r = parse_session(&s, argc, argv, attach_usage);
	if (r)
		return r > 0 ? HM_EXIT_OK : HM_EXIT_USAGE;
	if (!s.cg_given) {
		hm_err("attach: --cgroup PATH is required");
		return HM_EXIT_USAGE;
	}
	if (optind >= argc) {
		hm_err("attach: no pid given");
		return HM_EXIT_USAGE;
	}
	if (parse_pids(&s, argc, argv))
		return HM_EXIT_USAGE;
	return hm_session_attach(&s);
}

/*
 * record --cgroup: until a signal, @count rows, or the cgroup is gone.  A
 * signal ends it with one more row, so that the record reaches the stop.
 */
static int record_cgroup(struct hm_session *s, unsigned long long count)
{
	double next;
	int err;

	if (hm_check_htmm() || hm_check_cgroup2())
		return HM_EXIT_FAIL;
	if (!hm_cg_exists(s->cg)) {
		hm_err("cgroup /%s does not exist", s->cg);
		return HM_EXIT_FAIL;
	}
	hm_signals_catch();
	if (hm_rec_open(&s->rec, s->record, s->fmt_given ? s->fmt :
			hm_format_guess(s->record)))
		return HM_EXIT_FAIL;
	err = hm_rec_start(&s->rec, s->cg, s->xkt, s->nxkt);
	for (next = hm_mono(); !err && !hm_signal;) {
		err = hm_rec_row(&s->rec);
		if (err || (count && (unsigned long long)s->rec.rows >= count))
			break;
		next += s->interval_ms / 1000.0;
		while (!hm_signal && hm_mono() < next)
			hm_sleep(next - hm_mono());
	}
	if (!err && hm_signal)
		err = hm_rec_row(&s->rec);
	if (err == -ENOENT && s->rec.rows)
		err = 0;		/* the cgroup went away: the end */
	hm_rec_close(&s->rec, err && !s->rec.rows);
	return err ? HM_EXIT_FAIL : HM_EXIT_OK;
}

static const struct option record_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "interval", required_argument, NULL, 'i' },
	{ "format", required_argument, NULL, 'f' },
	{ "count", required_argument, NULL, 'n' },
	{ "kthread", required_argument, NULL, 'k' },
	{ "cgroup", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

static int parse_record(struct hm_session *s, int argc, char **argv,
			unsigned long long *count)
{
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:i:f:n:k:c:h", record_opts,
				NULL)) != -1) {
		if (c == 'h') {
			fputs(record_usage, stdout);
			return 1;
		} else if (c == 'o') {
			s->record = optarg;
		} else if (c == 'n') {
			if (hm_parse_ull(optarg, 1ULL << 40, count) || !*count) {
				hm_err("record: bad --count %s", optarg);
				return -1;
			}
		} else if (c == '?' || c == ':') {
			hm_err("record: bad option %s (see htmm record --help)",
			       argv[optind - 1]);
			return -1;
		} else if (hm_session_option(s, c == 'i' ? "interval" :
					     c == 'f' ? "format" :
					     c == 'k' ? "kthread" : "cgroup",
					     optarg)) {
			return -1;
		}
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	unsigned long long count = 0;
	struct hm_session s;
	bool has_cmd;
	int r;

	hm_session_init(&s, "record");
	r = parse_record(&s, argc, argv, &count);
	if (r)
		return r > 0 ? HM_EXIT_OK : HM_EXIT_USAGE;
	has_cmd = optind < argc;
	if (s.cg_given == has_cmd) {
		hm_err("record: give either --cgroup PATH or -- CMD [ARGS...]");
		return HM_EXIT_USAGE;
	}
	if (s.cg_given)
		return record_cgroup(&s, count);
	if (!s.record || !strcmp(s.record, "-") || count) {
		hm_err("record -- CMD needs -o FILE (CMD has stdout) and takes no --count");
		return HM_EXIT_USAGE;
	}
	s.create = true;
	s.cmd = argv + optind;
	return hm_session_run(&s);
}
