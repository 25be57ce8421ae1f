// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench hugepages: reserve hugetlb pages for a run and put the
 * previous nr_hugepages back afterwards - at exit, on failure, and on
 * SIGINT/SIGTERM/SIGHUP/SIGQUIT (the restore path uses only open, write
 * and close, so it is safe inside a signal handler).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opts.h"

#define MAX_SAVED 16

struct saved {
	char path[192];
	char value[32];
	size_t vlen;
	volatile sig_atomic_t active;
};

static struct saved g_saved[MAX_SAVED];
static int g_handlers;
static volatile pid_t g_child;
static volatile sig_atomic_t g_child_sig;

int tb_hp_path(char *buf, size_t len, uint64_t page_kb, int node,
	       const char *file)
{
	int n;

	if (node < 0)
		n = snprintf(buf, len, "/sys/kernel/mm/hugepages/hugepages-%llukB/%s",
			     (unsigned long long)page_kb, file);
	else
		n = snprintf(buf, len,
			     "/sys/devices/system/node/node%d/hugepages/hugepages-%llukB/%s",
			     node, (unsigned long long)page_kb, file);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

long tb_hp_read(uint64_t page_kb, int node, const char *file)
{
	char path[192], buf[64];
	ssize_t n;
	int fd;

	if (tb_hp_path(path, sizeof(path), page_kb, node, file))
		return -1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

static int write_str(const char *path, const char *s, size_t len)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, len) == (ssize_t)len;
	close(fd);
	return ok ? 0 : -1;
}

/* Async-signal-safe. */
void tb_hp_restore_all(void)
{
	int i;

	for (i = MAX_SAVED - 1; i >= 0; i--) {
		if (!g_saved[i].active)
			continue;
		g_saved[i].active = 0;
		write_str(g_saved[i].path, g_saved[i].value, g_saved[i].vlen);
	}
}

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (g_child > 0) {
		/*
		 * A child runs: it got the terminal's signal itself; pass on
		 * only what was sent to us alone, and restore after it ends.
		 */
		if (si && (si->si_code == SI_USER || si->si_code == SI_QUEUE))
			kill(g_child, sig);
		g_child_sig = sig;
		return;
	}
	tb_hp_restore_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_handlers(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;
	size_t i;

	if (g_handlers)
		return;
	g_handlers = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	atexit(tb_hp_restore_all);
}

int tb_hp_reserve(uint64_t page_kb, long count, int node)
{
	char path[192], where[32];
	long nr, nfree, target, got;
	struct saved *s = NULL;
	int i;

	if (node >= 0)
		snprintf(where, sizeof(where), "node %d", node);
	else
		snprintf(where, sizeof(where), "the system pool");
	nr = tb_hp_read(page_kb, node, "nr_hugepages");
	nfree = tb_hp_read(page_kb, node, "free_hugepages");
	if (nr < 0 || nfree < 0) {
		tb_err("no %s hugetlb pages on this kernel (%s)",
		       page_kb == 2048 ? "2 MiB" : "1 GiB", where);
		return -1;
	}
	if (nfree >= count) {
		tb_info("%ld free %llu kB pages on %s already", nfree,
			(unsigned long long)page_kb, where);
		return 0;
	}
	for (i = 0; i < MAX_SAVED; i++)
		if (!g_saved[i].active) {
			s = &g_saved[i];
			break;
		}
	if (!s) {
		tb_err("too many reservations");
		return -1;
	}
	install_handlers();
	tb_hp_path(s->path, sizeof(s->path), page_kb, node, "nr_hugepages");
	s->vlen = snprintf(s->value, sizeof(s->value), "%ld\n", nr);
	target = nr + (count - nfree);
	snprintf(path, sizeof(path), "%ld\n", target);
	/* Mark before writing: a signal between the two must restore. */
	s->active = 1;
	if (write_str(s->path, path, strlen(path))) {
		int e = errno;

		tb_hp_restore_all();
		tb_err("cannot write %s: %s%s", s->path, strerror(e),
		       e == EACCES || e == EPERM ? " (needs root)" : "");
		return -1;
	}
	got = tb_hp_read(page_kb, node, "free_hugepages");
	if (got < count) {
		tb_hp_restore_all();
		tb_err("asked for %ld free %s pages on %s, the kernel found only %ld (memory too fragmented or too small); previous setting restored",
		       count, page_kb == 2048 ? "2 MiB" : "1 GiB", where,
		       got < 0 ? 0 : got);
		return -1;
	}
	tb_info("reserved %ld %llu kB pages on %s (nr_hugepages %ld -> %ld)",
		count, (unsigned long long)page_kb, where, nr, target);
	return 0;
}

/* ------------------------------------------------------------- command */

static void usage(FILE *f)
{
	fprintf(f,
"usage: tierbench hugepages [options] -- COMMAND [ARGS...]\n"
"       tierbench hugepages --status [--json]\n"
"\n"
"Reserve hugetlb pages for one run of COMMAND, then restore the previous\n"
"nr_hugepages - also when COMMAND fails or the run is interrupted (Ctrl-C,\n"
"SIGTERM, SIGHUP). Exits with COMMAND's status. Needs root.\n"
"\n"
"options:\n"
"      --size 2M|1G       hugetlb page size (default 2M)\n"
"      --count N          free pages wanted (the pool grows by what is\n"
"                         missing)\n"
"      --node N           reserve on this NUMA node (default: system pool)\n"
"      --status           print the pools of every node and exit\n"
"  -j, --json             JSON output for --status\n"
"  -v, --verbose          report what is reserved and restored\n"
"  -h, --help             this help\n"
"\n"
"example:\n"
"  tierbench hugepages --size 2M --count 600 --node 1 -- \\\n"
"      tierbench latency --page 2m --mem-node 1\n"
"\n"
"--status output: one line per pool,\n"
"  hugepages node=N size=S nr=N free=N surplus=N\n");
}

enum {
	OPT_HP_SIZE = OPT_CMD_BASE,
	OPT_COUNT,
	OPT_NODE,
	OPT_STATUS,
};

static int hp_opt(int c, const char *arg, void *ctx)
{
	struct tb_hugepages_opts *o = ctx;

	switch (c) {
	case OPT_HP_SIZE:
		if (!strcmp(arg, "2M") || !strcmp(arg, "2m"))
			o->page_kb = 2048;
		else if (!strcmp(arg, "1G") || !strcmp(arg, "1g"))
			o->page_kb = 1048576;
		else
			return tb_bad_value("--size", arg, "expected 2M or 1G");
		return 0;
	case OPT_COUNT:
		return tb_opt_long("--count", arg, 1, 1L << 30, &o->count,
				   "expected a page count of at least 1");
	case OPT_NODE:
		return tb_opt_long("--node", arg, 0, TB_MAX_NODES - 1, &o->node,
				   "expected a node number");
	case OPT_STATUS:
		o->status = 1;
		return 0;
	}
	return TB_OPT_UNKNOWN;
}

int hugepages_parse(int argc, char **argv, struct tb_hugepages_opts *o)
{
	static const struct option lo[] = {
		{ "size", required_argument, NULL, OPT_HP_SIZE },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "node", required_argument, NULL, OPT_NODE },
		{ "status", no_argument, NULL, OPT_STATUS },
		TB_OUTPUT_LONG_OPTS,
		{ NULL, 0, NULL, 0 },
	};
	struct tb_common_opts co;
	int r;

	memset(o, 0, sizeof(*o));
	o->page_kb = 2048;
	o->node = -1;
	tb_common_defaults(&co, 0);
	/* '+': stop at the command so its own options are left alone. */
	r = tb_getopt(argc, argv, "+:jvh", lo, &co, usage, hp_opt, o);
	if (r)
		return r;
	o->json = co.json;
	if (optind < argc)
		o->cmd_index = optind;
	if (o->status) {
		if (o->cmd_index || o->count) {
			tb_err("--status takes no command and no --count");
			return -1;
		}
		return 0;
	}
	if (o->json) {
		tb_err("--json only applies to --status");
		return -1;
	}
	if (!o->count) {
		tb_err("--count is required (or use --status)");
		return -1;
	}
	if (!o->cmd_index) {
		tb_err("no command given: the reservation lasts for one command, as in 'tierbench hugepages --count 8 -- tierbench latency --page 2m'");
		return -1;
	}
	return 0;
}

static int status(const struct tb_topo *t, int json)
{
	static const uint64_t sizes[] = { 2048, 1048576 };
	struct tb_json j;
	int node, k;

	if (json) {
		tb_json_tool(&j, stdout, "hugepages");
		tb_json_arr(&j, "pools");
	}
	for (node = -1; node < t->nr_nodes; node++) {
		if (node >= 0 && !t->online[node])
			continue;
		for (k = 0; k < 2; k++) {
			long nr = tb_hp_read(sizes[k], node, "nr_hugepages");
			long fr = tb_hp_read(sizes[k], node, "free_hugepages");
			long su = tb_hp_read(sizes[k], node, "surplus_hugepages");
			const char *sz = k ? "1G" : "2M";

			if (nr < 0)
				continue;
			if (json) {
				tb_json_obj(&j, NULL);
				if (node < 0)
					tb_json_str(&j, "node", "all");
				else
					tb_json_int(&j, "node", node);
				tb_json_str(&j, "size", sz);
				tb_json_int(&j, "nr", nr);
				tb_json_int(&j, "free", fr);
				tb_json_int(&j, "surplus", su);
				tb_json_obj_end(&j);
			} else if (node < 0) {
				printf("hugepages node=all size=%s nr=%ld free=%ld surplus=%ld\n",
				       sz, nr, fr, su);
			} else {
				printf("hugepages node=%d size=%s nr=%ld free=%ld surplus=%ld\n",
				       node, sz, nr, fr, su);
			}
		}
	}
	if (json) {
		tb_json_arr_end(&j);
		tb_json_end(&j);
	}
	if (tb_hp_read(2048, -1, "nr_hugepages") < 0 &&
	    tb_hp_read(1048576, -1, "nr_hugepages") < 0)
		fprintf(stderr, "%s: this kernel has no hugetlb pages (CONFIG_HUGETLBFS is not set)\n",
			tb_prog);
	return TB_EXIT_OK;
}

int cmd_hugepages(int argc, char **argv)
{
	struct tb_hugepages_opts o;
	struct tb_topo t;
	int r, st;
	pid_t pid;

	r = hugepages_parse(argc, argv, &o);
	if (r)
		return r > 0 ? TB_EXIT_OK : TB_EXIT_USAGE;
	if (tb_topo_load(&t))
		return TB_EXIT_FAIL;
	if (o.status) {
		r = status(&t, o.json);
		tb_topo_free(&t);
		return r;
	}
	if (o.node >= 0 && tb_check_mem_node(&t, o.node, "--node")) {
		tb_topo_free(&t);
		return TB_EXIT_USAGE;
	}
	tb_topo_free(&t);
	if (tb_hp_reserve(o.page_kb, o.count, (int)o.node))
		return TB_EXIT_FAIL;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		tb_err("fork: %s", strerror(errno));
		tb_hp_restore_all();
		return TB_EXIT_FAIL;
	}
	if (!pid) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(argv[o.cmd_index], argv + o.cmd_index);
		tb_err("cannot run '%s': %s", argv[o.cmd_index],
		       strerror(errno));
		_exit(127);
	}
	g_child = pid;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			st = W_EXITCODE(TB_EXIT_FAIL, 0);
			break;
		}
	}
	g_child = 0;
	tb_hp_restore_all();
	tb_info("hugetlb setting restored");
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);

		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	return WEXITSTATUS(st);
}
