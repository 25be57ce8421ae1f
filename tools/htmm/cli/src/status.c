// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): "htmm status": nodes and tiers, the sample source, htmm's
 * kernel threads, and per enabled cgroup its budgets, residency,
 * thresholds, migration rates and access histogram.  Rates and CPU shares
 * are the differences of two snapshots (1 s apart, or between refreshes).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "htmm.h"

#define BAR_WIDTH	40
#define NR_BINS		16

struct cg_snap {
	char rel[HM_PATH];
	struct hm_kvset st;
};

struct snap {
	double t;
	struct hm_kvset vm;
	unsigned long long ticks[HM_MAX_NODES + 1];
	bool valid[HM_MAX_NODES + 1];
	bool enabled_only;		/* the walk keeps enabled cgroups */
	int ncg, capcg;
	struct cg_snap *cg;
};

struct status {
	struct hm_topo topo;
	struct hm_kthreads kt;
	const char *only;		/* --cgroup, relative */
	struct hm_kvset tun;
	char source[256];
	bool source_logged;
};

static void snap_free(struct snap *s)
{
	int i;

	for (i = 0; i < s->ncg; i++)
		hm_kv_free(&s->cg[i].st);
	free(s->cg);
	hm_kv_free(&s->vm);
	memset(s, 0, sizeof(*s));
}

static void snap_cgroup(const char *rel, void *arg)
{
	struct snap *s = arg;
	char buf[65536];
	struct cg_snap *c;

	if (s->enabled_only && !hm_cg_htmm_enabled(rel))
		return;
	if (hm_cg_read(rel, "memory.htmm_stat", buf, sizeof(buf)) < 0)
		return;
	if (s->ncg == s->capcg) {
		int cap = s->capcg ? s->capcg * 2 : 8;
		struct cg_snap *n = realloc(s->cg, cap * sizeof(*n));

		if (!n)
			return;
		s->cg = n;
		s->capcg = cap;
	}
	c = &s->cg[s->ncg++];
	memset(c, 0, sizeof(*c));
	snprintf(c->rel, sizeof(c->rel), "%s", rel);
	hm_kv_parse(&c->st, buf, NULL);
}

static void take_snap(struct status *st, struct snap *s)
{
	char path[HM_PATH], buf[65536];
	int i;

	memset(s, 0, sizeof(*s));
	s->t = hm_mono();
	if (!hm_path(path, sizeof(path), "/proc/vmstat") &&
	    hm_read(path, buf, sizeof(buf)) >= 0)
		hm_kv_parse(&s->vm, buf, "htmm_");
	hm_kthreads_read(&st->kt);
	for (i = 0; i < st->kt.n; i++) {
		s->ticks[i] = st->kt.t[i].ticks;
		s->valid[i] = st->kt.t[i].valid;
	}
	s->enabled_only = !st->only;
	if (st->only)
		snap_cgroup(st->only, s);
	else
		hm_cg_walk(snap_cgroup, s);
}

static const struct cg_snap *find_cg(const struct snap *s, const char *rel)
{
	int i;

	for (i = 0; s && i < s->ncg; i++)
		if (!strcmp(s->cg[i].rel, rel))
			return &s->cg[i];
	return NULL;
}

/* Per second growth of @key between two stat sets; NAN if unknown. */
static double rate(const struct hm_kvset *a, const struct hm_kvset *b,
		   const char *key, double dt)
{
	long long va, vb;

	if (!a || !b || dt <= 0 || hm_kv_num(a, key, &va) ||
	    hm_kv_num(b, key, &vb))
		return NAN;
	return (vb - va) / dt;
}

static void put_rate(const char *label, double v)
{
	if (isnan(v))
		printf("  %s -", label);
	else
		printf("  %s %.*f", label, v < 10 ? 1 : 0, v);
}

static const char *tun(const struct status *st, const char *name)
{
	const char *v = hm_kv_get(&st->tun, name);

	return v ? v : "?";
}

/* The source in use: the kernel log says which and why; else infer. */
static void find_source(struct status *st, const struct snap *s)
{
	static const char *const src[] = { "pebs", "abit", "inject" };
	long long v, best = 0;
	char key[32];
	int i, j;

	st->source_logged = !hm_kmsg_source(st->source, sizeof(st->source));
	if (st->source_logged)
		return;
	snprintf(st->source, sizeof(st->source),
		 "unknown (no kernel log line; no samples yet)");
	for (i = 0; i < (int)ARRAY_SIZE(src); i++) {
		long long sum = 0;

		snprintf(key, sizeof(key), "samples_%s", src[i]);
		for (j = 0; j < s->ncg; j++)
			if (!hm_kv_num(&s->cg[j].st, key, &v))
				sum += v;
		if (sum > best) {
			best = sum;
			snprintf(st->source, sizeof(st->source),
				 "%s (inferred from the cgroups' samples_%s)",
				 src[i], src[i]);
		}
	}
}

static void print_header(struct status *st, const struct snap *s)
{
	char when[64];
	time_t now = time(NULL);

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&now));
	find_source(st, s);
	printf("htmm status  %s  state %s  htmm_mode %s  htmm_cxl_mode %s\n",
	       when, tun(st, "state"), tun(st, "htmm_mode"),
	       tun(st, "htmm_cxl_mode"));
	printf("sampler: htmm_sampler %s, htmm_perf_event %s; in use: %s\n",
	       tun(st, "htmm_sampler"), tun(st, "htmm_perf_event"), st->source);
}

static void print_nodes(const struct status *st)
{
	char size[32], tier[32];
	int i;

	printf("\n%-6s %-16s %-6s %12s  %s\n", "node", "tier", "class", "memory",
	       "cpus");
	for (i = 0; i < st->topo.nr; i++) {
		const struct hm_node *n = &st->topo.node[i];

		if (!n->online)
			continue;
		hm_fmt_size(n->total, size, sizeof(size));
		if (n->tier >= 0)
			snprintf(tier, sizeof(tier), "memory_tier%d", n->tier);
		else
			snprintf(tier, sizeof(tier), "-");
		printf("%-6d %-16s %-6s %12s  %s\n", i, tier,
		       !n->mem ? "-" : n->fast ? "fast" : "slow",
		       n->mem ? size : "-", n->cpus);
	}
}

static void print_threads(const struct status *st, const struct snap *a,
			  const struct snap *b)
{
	double dt = b->t - a->t, hz = sysconf(_SC_CLK_TCK);
	int i;

	printf("\nkernel threads, CPU %% of one CPU over %.1f s:", dt);
	for (i = 0; i < st->kt.n; i++) {
		if (!b->valid[i]) {
			printf("  %s -", st->kt.t[i].comm);
			continue;
		}
		/* A thread that started since: the whole of its time. */
		printf("  %s %.1f%%", st->kt.t[i].comm, dt <= 0 ? 0.0 :
		       (b->ticks[i] - (a->valid[i] && a->ticks[i] <= b->ticks[i] ?
				       a->ticks[i] : 0)) / hz / dt * 100);
	}
	printf("\nsystem, per s (vmstat):");
	put_rate("promoted", rate(&a->vm, &b->vm, "htmm_nr_promoted", dt));
	put_rate("demoted", rate(&a->vm, &b->vm, "htmm_nr_demoted", dt));
	put_rate("split", rate(&a->vm, &b->vm, "htmm_nr_split_done", dt));
	put_rate("sampled", rate(&a->vm, &b->vm, "htmm_nr_sampled", dt));
	put_rate("dropped", rate(&a->vm, &b->vm, "htmm_nr_samples_dropped", dt));
	printf("\n");
}

static void size_cell(const struct hm_kvset *kv, const char *key, char *buf,
		      size_t len)
{
	const char *v = hm_kv_get(kv, key);
	long long n;

	if (!v)
		snprintf(buf, len, "-");
	else if (hm_value_num(v, &n) || n < 0)
		snprintf(buf, len, "%s", v);
	else
		hm_fmt_size((uint64_t)n, buf, len);
}

static void print_budgets(const struct status *st, const struct hm_kvset *kv)
{
	char key[48], b[32], m[32], r[32], use[16];
	long long res, bud;
	int i;

	printf("  %-5s %-5s %12s %12s %12s %6s\n", "node", "class", "budget",
	       "max_at_node", "resident", "use");
	for (i = 0; i < st->topo.nr; i++) {
		snprintf(key, sizeof(key), "resident_node%d", i);
		if (!hm_kv_get(kv, key))
			continue;
		size_cell(kv, key, r, sizeof(r));
		hm_kv_num(kv, key, &res);
		snprintf(key, sizeof(key), "budget_node%d", i);
		size_cell(kv, key, b, sizeof(b));
		use[0] = '\0';
		if (!hm_kv_num(kv, key, &bud) && bud > 0)
			snprintf(use, sizeof(use), "%.0f%%", 100.0 * res / bud);
		snprintf(key, sizeof(key), "max_at_node%d", i);
		size_cell(kv, key, m, sizeof(m));
		printf("  %-5d %-5s %12s %12s %12s %6s\n", i,
		       st->topo.node[i].fast ? "fast" : "slow", b, m, r, use);
	}
}

static void fmt_count(long long v, char *buf, size_t len)
{
	if (v >= 10000000)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else if (v >= 10000)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else
		snprintf(buf, len, "%lld", v);
}

static void print_histogram(const struct hm_kvset *kv)
{
	long long hist[NR_BINS], max = 0, hot = 99, warm = 99, fill = 99;
	char key[32], bar[BAR_WIDTH + 1], num[24];
	int b, w;

	hm_kv_num(kv, "hot_threshold", &hot);
	hm_kv_num(kv, "warm_threshold", &warm);
	hm_kv_num(kv, "fill_threshold", &fill);
	for (b = 0; b < NR_BINS; b++) {
		snprintf(key, sizeof(key), "hist_%d", b);
		if (hm_kv_num(kv, key, &hist[b]))
			hist[b] = 0;
		if (hist[b] > max)
			max = hist[b];
	}
	printf("  access histogram (4 KiB pages per bin; bin = log2 of the access density):\n");
	for (b = NR_BINS - 1; b >= 0; b--) {
		w = max ? (int)((hist[b] * BAR_WIDTH + max - 1) / max) : 0;
		memset(bar, '#', w);
		bar[w] = '\0';
		fmt_count(hist[b], num, sizeof(num));
		printf("  %3d |%-*s %8s %s\n", b, BAR_WIDTH, bar, num,
		       !hist[b] ? "" : b >= hot ? "hot" : b >= warm ? "warm" :
		       b == fill ? "fill" : "");
	}
}

static void print_cgroup(const struct status *st, const struct cg_snap *c,
			 const struct cg_snap *prev, double dt)
{
	const struct hm_kvset *kv = &c->st, *pk = prev ? &prev->st : NULL;
	const char *en = hm_kv_get(kv, "enabled");
	char cap[32];

	printf("\ncgroup /%s  htmm %s\n", c->rel,
	       en && !strcmp(en, "1") ? "enabled" : "disabled");
	print_budgets(st, kv);
	size_cell(kv, "fast_capacity", cap, sizeof(cap));
	printf("  thresholds: hot %s  warm %s  fill %s  (fast_capacity %s, cooling_epoch %s)\n",
	       hm_kv_get(kv, "hot_threshold") ?: "-",
	       hm_kv_get(kv, "warm_threshold") ?: "-",
	       hm_kv_get(kv, "fill_threshold") ?: "-", cap,
	       hm_kv_get(kv, "cooling_epoch") ?: "-");
	printf("  per s (base pages):");
	put_rate("promoted", rate(pk, kv, "promoted", dt));
	put_rate("demoted", rate(pk, kv, "demoted", dt));
	put_rate("failed", rate(pk, kv, "migrate_failed", dt));
	put_rate("splits", rate(pk, kv, "split_done", dt));
	put_rate("samples", rate(pk, kv, "samples_access", dt) +
		 rate(pk, kv, "samples_load_fast", dt) +
		 rate(pk, kv, "samples_load_slow", dt) +
		 rate(pk, kv, "samples_store", dt));
	printf("\n  promotion_queue %s  sample_period %s  sampler_level %s  ksamplingd_cpu_permille %s\n",
	       hm_kv_get(kv, "promotion_queue") ?: "-",
	       hm_kv_get(kv, "sample_period") ?: "-",
	       hm_kv_get(kv, "sampler_level") ?: "-",
	       hm_kv_get(kv, "ksamplingd_cpu_permille") ?: "-");
	print_histogram(kv);
}

static void render(struct status *st, const struct snap *a,
		   const struct snap *b)
{
	int i;

	hm_kv_free(&st->tun);
	hm_tunables_read(&st->tun);
	print_header(st, b);
	print_nodes(st);
	print_threads(st, a, b);
	for (i = 0; i < b->ncg; i++)
		print_cgroup(st, &b->cg[i], find_cg(a, b->cg[i].rel), b->t - a->t);
	if (!b->ncg)
		printf("\nno cgroup has htmm enabled\n");
	fflush(stdout);
}

static const char status_usage[] =
"usage: htmm status [--cgroup PATH] [--watch SECS]\n"
"\n"
"One screen of htmm's state: nodes and memory tiers, the sample source and\n"
"why, CPU of ksamplingd and kmigraterd<N>, and per cgroup with htmm\n"
"enabled (or PATH) budgets, residency, thresholds, migrations per second\n"
"and the access histogram.  Rates are over 1 s, or between refreshes.\n"
"\n"
"  -c, --cgroup PATH   only this cgroup (shown even if htmm is disabled)\n"
"  -w, --watch SECS    refresh every SECS seconds until Ctrl-C\n"
"  -h, --help          this help\n";

static int parse_status(int argc, char **argv, char *cg, double *watch)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "watch", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:w:h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(status_usage, stdout);
			return 1;
		} else if (c == 'c' && !hm_cgroup_rel(optarg, cg, HM_PATH)) {
			continue;
		} else if (c == 'w') {
			*watch = strtod(optarg, &end);
			if (!*end && *watch >= 0.1 && *watch <= 86400)
				continue;
		}
		hm_err("status: bad %s (see htmm status --help)", argv[optind - 1]);
		return -1;
	}
	if (optind < argc) {
		hm_err("status: unexpected argument %s", argv[optind]);
		return -1;
	}
	return 0;
}

int cmd_status(int argc, char **argv)
{
	struct status st = { 0 };
	struct snap a, b;
	char cg[HM_PATH] = "";
	double watch = 0;
	int r = parse_status(argc, argv, cg, &watch);

	if (r)
		return r > 0 ? HM_EXIT_OK : HM_EXIT_USAGE;
	if (hm_check_htmm() || hm_check_cgroup2())
		return HM_EXIT_FAIL;
	if (cg[0] && !hm_cg_exists(cg)) {
		hm_err("cgroup /%s does not exist", cg);
		return HM_EXIT_FAIL;
	}
	st.only = cg[0] ? cg : NULL;
	hm_topo_load(&st.topo);
	hm_kthreads_init(&st.kt, &st.topo);
	hm_signals_catch();
	take_snap(&st, &a);
	hm_sleep(watch && watch < 1 ? watch : 1);
	for (;;) {
		take_snap(&st, &b);
		if (watch)
			printf("\033[H\033[2J");
		render(&st, &a, &b);
		snap_free(&a);
		a = b;
		if (!watch || hm_signal)
			break;
		for (double end = hm_mono() + watch; !hm_signal && hm_mono() < end;)
			hm_sleep(end - hm_mono());
		if (hm_signal)
			break;
	}
	snap_free(&a);
	hm_kthreads_close(&st.kt);
	hm_kv_free(&st.tun);
	return HM_EXIT_OK;
}
