// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8) host unit tests, part 1: parsers, the tunables table, the record
 * writer and reader, the report figures, tierbench files.  Included by
 * unit.c.
 */

static void size_ok(const char *s, uint64_t want)
{
	uint64_t v = 0;
	int err = hm_parse_size(s, &v);

	check(!err && v == want, "size \"%s\" = %llu (got %d, %llu)", s,
	      (unsigned long long)want, err, (unsigned long long)v);
}

static void size_bad(const char *s, int want)
{
	uint64_t v = 0;
	int err = hm_parse_size(s, &v);

	check(err == want, "size \"%s\" rejected with %s (got %d)", s,
	      want == -ERANGE ? "ERANGE" : "EINVAL", err);
}

static void test_sizes(void)
{
	char buf[32];

	size_ok("0", 0);
	size_ok("4096", 4096);
	size_ok("1K", 1024);
	size_ok("1k", 1024);
	size_ok("2M", 2 << 20);
	size_ok("3g", 3ULL << 30);
	size_ok("1T", 1ULL << 40);
	size_ok("1p", 1ULL << 50);
	size_ok("7E", 7ULL << 60);
	size_ok("0x10", 16);
	size_ok("0x10K", 16384);
	size_ok("0X1e", 30);		/* hex digit, not the E suffix */
	size_ok("010", 8);		/* octal, like the kernel */
	size_ok("9223372036854775807", 9223372036854775807ULL);
	size_ok("max", HM_SIZE_MAX);
	size_bad("", -EINVAL);
	size_bad("K", -EINVAL);
	size_bad("-1", -EINVAL);
	size_bad("+1", -EINVAL);
	size_bad(" 1", -EINVAL);
	size_bad("1 ", -EINVAL);
	size_bad("1KB", -EINVAL);
	size_bad("1KiB", -EINVAL);
	size_bad("1.5G", -EINVAL);
	size_bad("08", -EINVAL);
	size_bad("0x", -EINVAL);
	size_bad("1X", -EINVAL);
	size_bad("MAX", -EINVAL);
	size_bad("max ", -EINVAL);
	size_bad("8E", -ERANGE);
	size_bad("16E", -ERANGE);
	size_bad("9223372036854775808", -ERANGE);
	size_bad("18446744073709551616", -ERANGE);
	size_bad("99999999999999999999K", -ERANGE);
	hm_fmt_size(3ULL << 29, buf, sizeof(buf));
	check(!strcmp(buf, "1.50 GiB"), "1.5 GiB formats as \"%s\"", buf);
	hm_fmt_size(HM_SIZE_MAX, buf, sizeof(buf));
	check(!strcmp(buf, "max"), "max formats as max");
}

static void budget_ok(const char *s, int node, uint64_t bytes)
{
	struct hm_budget b = { -1, 0 };
	int err = hm_parse_budget(s, &b);

	check(!err && b.node == node && b.bytes == bytes,
	      "budget \"%s\" = node %d, %llu bytes", s, node,
	      (unsigned long long)bytes);
}

static void budget_bad(const char *s)
{
	struct hm_budget b;

	check(hm_parse_budget(s, &b) != 0, "budget \"%s\" rejected", s);
}

static void set_ok(const char *s, const char *name, const char *value)
{
	struct hm_set set;
	int err = hm_parse_set(s, &set);

	check(!err && !strcmp(set.name, name) && !strcmp(set.value, value),
	      "set \"%s\" = %s, %s", s, name, value);
}

static void set_bad(const char *s)
{
	struct hm_set set;

	check(hm_parse_set(s, &set) != 0, "set \"%s\" rejected", s);
}

static void test_budgets_sets(void)
{
	char rel[HM_PATH], val[32];
	struct hm_budget b = { 1, HM_SIZE_MAX };

	budget_ok("0=1G", 0, 1ULL << 30);
	budget_ok("node1=max", 1, HM_SIZE_MAX);
	budget_ok("3=0x1000", 3, 4096);
	budget_ok("63=0", 63, 0);
	budget_bad("=1G");
	budget_bad("0=");
	budget_bad("x=1G");
	budget_bad("0:1G");
	budget_bad("64=1G");
	budget_bad("-1=1G");
	budget_bad("node=1G");
	budget_bad("0=1G=2");
	budget_bad("0=1GB");
	budget_bad("0 =1G");
	hm_budget_value(&b, val, sizeof(val));
	check(!strcmp(val, "max"), "budget max writes \"max\"");
	b.bytes = 1536;
	hm_budget_value(&b, val, sizeof(val));
	check(!strcmp(val, "1536"), "budget writes bytes");

	set_ok("htmm_mode=1", "htmm_mode", "1");
	set_ok("htmm_sampler=abit", "htmm_sampler", "abit");
	set_ok("htmm_perf_event=sw-page-faults", "htmm_perf_event",
	       "sw-page-faults");
	set_bad("=1");
	set_bad("htmm_mode=");
	set_bad("htmm mode=1");
	set_bad("htmm_mode=1 2");
	set_bad("htmm_mode");
	set_bad("../x=1");
	set_bad("htmm_mode=../1");

	check(!hm_cgroup_rel("/sys/fs/cgroup/a/b/", rel, sizeof(rel)) &&
	      !strcmp(rel, "a/b"), "cgroup /sys/fs/cgroup/a/b/ is a/b");
	check(!hm_cgroup_rel("//a//b", rel, sizeof(rel)) && !strcmp(rel, "a/b"),
	      "cgroup //a//b is a/b");
	check(hm_cgroup_rel("/", rel, sizeof(rel)) &&
	      hm_cgroup_rel("/sys/fs/cgroup", rel, sizeof(rel)),
	      "the root cgroup is refused");
	check(hm_cgroup_rel("a/../b", rel, sizeof(rel)) != 0, "cgroup with .. refused");
}

static void tunable_value(const char *name, const char *value, bool ok)
{
	const struct hm_tunable *t = hm_tunable_find(name);

	check(t && (hm_tunable_check(t, value) == 0) == ok, "%s=%s %s", name,
	      value, ok ? "accepted" : "refused");
}

/* The table against the admin guide's: names, defaults, ranges. */
static void test_rst_table(void)
{
	char *text = rst ? hm_slurp(rst, NULL) : NULL;
	char *p, *end, name[64], def[32], range[32];
	int seen = 0, bad = 0;

	if (!text) {
		skip("tunables table matches htmm.rst", "no htmm.rst given");
		return;
	}
	p = strstr(text, "\nTunables\n========");
	end = p ? strstr(p, "\nCounters\n") : NULL;
	for (; p && p < end; p = strchr(p + 1, '\n')) {
		const struct hm_tunable *t;
		char lo[32], hi[32], extra[32];
		int n = sscanf(p + 1, "%63s %31s %31s %31s", name, def, range, extra);

		/* A row starts in column 0; "100 [#]_" has a footnote. */
		if (n < 3 || (strncmp(p + 1, "htmm_", 5) &&
			      strncmp(p + 1, "ksampled_", 9)))
			continue;
		if (range[0] == '[' && n == 4)
			hm_strscpy(range, extra, sizeof(range));
		seen++;
		t = hm_tunable_find(name);
		if (!t || strcmp(t->def, def)) {
			printf("# %s: default %s in htmm.rst, %s here\n", name, def,
			       t ? t->def : "missing");
			bad++;
			continue;
		}
		if (!t->words && sscanf(range, "%31[^.]..%31s", lo, hi) == 2 &&
		    (strtoull(lo, NULL, 10) != t->min ||
		     (strcmp(hi, "2^31-1") ? strtoull(hi, NULL, 10) :
		      2147483647ULL) != t->max)) {
			printf("# %s: range %s in htmm.rst\n", name, range);
			bad++;
		}
	}
	free(text);
	check(seen == hm_nr_tunables && !bad,
	      "tunables table matches htmm.rst (%d rows there, %d here)", seen,
	      hm_nr_tunables);
}

static void test_preset(void)
{
	int i, j, npreset = 0, nccow = 0, bad = 0;

	for (i = 0; i < hm_nr_tunables; i++) {
		const struct hm_tunable *t = &hm_tunables[i];

		if (hm_tunable_check(t, t->def))
			bad++;
		for (j = 0; j < i; j++)
			if (!strcmp(t->name, hm_tunables[j].name))
				bad++;
		npreset += t->preset;
	}
	check(!bad, "every default passes its own check, names unique");
	for (i = 0; i < hm_nr_tunables; i++)
		if (!strncmp(hm_tunables[i].name, "htmm_ccow_", 10))
			nccow++;
	check(nccow == 5 && npreset == hm_nr_tunables - 2 - nccow &&
	      !hm_tunable_find("htmm_fast_latency_ns")->preset &&
	      !hm_tunable_find("htmm_slow_latency_ns")->preset &&
	      !hm_tunable_find("htmm_ccow_enabled")->preset,
	      "memtis preset: every tunable but the two latencies and CCoW's five");
	check(!strcmp(hm_tunable_find("htmm_sample_period")->def, "199") &&
	      !strcmp(hm_tunable_find("htmm_cooling_period")->def, "2000000") &&
	      !strcmp(hm_tunable_find("htmm_mode")->def, "2") &&
	      !strcmp(hm_tunable_find("ksampled_soft_cpu_quota")->def, "30"),
	      "memtis preset values: periods 199/2000000, mode 2, quota 30");
}

static void pair_rule(const char *a, const char *av, const char *b,
		      const char *bv, bool ok, const char *name)
{
	struct hm_kvset cur = { 0 };
	struct hm_tval tv[2] = { 0 };
	int err;

	hm_kv_parse(&cur, "htmm_fast_latency_ns 100\nhtmm_slow_latency_ns 250\n"
		    "htmm_promotion_watermark 20\nhtmm_demotion_watermark 10\n"
		    "htmm_sample_period 199\nhtmm_inst_sample_period 100007\n"
		    "htmm_perf_event pebs\n", NULL);
	hm_strscpy(tv[0].name, a, sizeof(tv[0].name));
	hm_strscpy(tv[0].want, av, sizeof(tv[0].want));
	hm_strscpy(tv[1].name, b ? b : a, sizeof(tv[1].name));
	hm_strscpy(tv[1].want, bv ? bv : av, sizeof(tv[1].want));
	quiet();
	err = hm_tvals_check(tv, 2, &cur);
	loud();
	check((err == 0) == ok, "pair rule: %s", name);
	hm_kv_free(&cur);
}

static void test_tunables(void)
{
	struct hm_set set;

	tunable_value("htmm_mode", "2", true);
	tunable_value("htmm_mode", "3", false);
	tunable_value("htmm_mode", "-1", false);
	tunable_value("htmm_sampler", "abit", true);
	tunable_value("htmm_sampler", "perf", false);
	tunable_value("htmm_cxl_mode", "enabled", true);
	tunable_value("htmm_cooling_period", "63", false);
	tunable_value("htmm_cooling_period", "64", true);
	tunable_value("htmm_sample_period", "2147483647", true);
	tunable_value("htmm_sample_period", "2147483648", false);
	tunable_value("htmm_gamma", "1x", false);
	check(!hm_tunable_find("state"), "state is not a tunable");
	check(!hm_alias_set("mode", "classify", &set) &&
	      !strcmp(set.name, "htmm_mode") && !strcmp(set.value, "0"),
	      "--mode classify is htmm_mode=0");
	check(!hm_alias_set("sampler", "abit", &set) &&
	      !strcmp(set.name, "htmm_sampler"), "--sampler is htmm_sampler");
	pair_rule("htmm_fast_latency_ns", "90", "htmm_slow_latency_ns", "300",
		  true, "fast 90 < slow 300");
	pair_rule("htmm_fast_latency_ns", "300", NULL, NULL, false,
		  "fast 300 >= slow 250");
	pair_rule("htmm_fast_latency_ns", "300", "htmm_slow_latency_ns", "400",
		  true, "both above the old slow");
	pair_rule("htmm_demotion_watermark", "30", NULL, NULL, false,
		  "demotion above promotion watermark");
	pair_rule("htmm_sample_period", "100", NULL, NULL, false,
		  "period 100 with pebs");
	pair_rule("htmm_sample_period", "100", "htmm_perf_event",
		  "sw-page-faults", true, "period 100 with sw-page-faults");
	test_preset();
	test_rst_table();
}

static void test_kv(void)
{
	struct hm_kvset s = { 0 };
	long long v = 0;

	hm_kv_parse(&s, fake_stat, NULL);
	check(hm_kv_num(&s, "resident_node1", &v) == 0 && v == 536870912,
	      "htmm_stat resident_node1");
	check(hm_kv_num(&s, "max_at_node1", &v) == 0 && v == -1,
	      "htmm_stat max reads as -1");
	check(hm_kv_num(&s, "fill_threshold", &v) != 0 &&
	      !strcmp(hm_kv_get(&s, "fill_threshold"), "none"),
	      "htmm_stat none is not a number");
	hm_kv_parse(&s, "nr_free_pages 5\nhtmm_nr_promoted 7\nhtmm_numa_left 1\n",
		    "htmm_");
	check(s.n == 2 && hm_kv_num(&s, "htmm_nr_promoted", &v) == 0 && v == 7,
	      "vmstat: only the htmm_ counters");
	hm_kv_free(&s);
}

/* Write rows with the writer, read them back. */
static void round_trip(enum hm_format fmt, const char *name)
{
	static const char *const cols[] = {
		"time", "unix_time", "resident_node0", "hot_threshold", "ksamplingd_cpu_ms"
	};
	static const char *const r1[] = { "0.000", "1700000000.125", "4096", NULL, "10" };
	static const char *const r2[] = { "1.001", "1700000001.126", "8192", "5", NULL };
	struct hm_writer w = { .fmt = fmt };
	struct hm_table t;
	char *buf = NULL;
	size_t len = 0;
	bool ok;

	w.f = open_memstream(&buf, &len);
	ok = !hm_writer_header(&w, cols, 5) && !hm_writer_row(&w, r1) &&
	     !hm_writer_row(&w, r2);
	fclose(w.f);
	hm_writer_free(&w);
	ok = ok && !hm_table_parse(buf, &t);
	ok = ok && t.ncols == 5 && t.nrows == 2 &&
	     hm_table_get(&t, 0, 0) == 0 && hm_table_get(&t, 1, 0) == 1.001 &&
	     hm_table_get(&t, 0, 1) == 1700000000.125 &&
	     hm_table_get(&t, 1, 2) == 8192 && isnan(hm_table_get(&t, 0, 3)) &&
	     hm_table_get(&t, 1, 3) == 5 && isnan(hm_table_get(&t, 1, 4)) &&
	     hm_table_col(&t, "ksamplingd_cpu_ms") == 4;
	if (!ok)
		printf("# record:\n%s", buf);
	check(ok, "%s writer/reader round trip", name);
	if (fmt == HM_FMT_JSONL)
		check(buf && !strncmp(buf, "{\"time\":0.000,", 14) &&
		      strstr(buf, "\"hot_threshold\":null"),
		      "jsonl rows are objects, missing is null");
	else
		check(buf && !strncmp(buf, "time,unix_time,resident_node0,", 30) &&
		      strstr(buf, "\n0.000,1700000000.125,4096,,10\n"),
		      "csv header line, missing is empty");
	hm_table_free(&t);
	free(buf);
}

static void test_record_files(void)
{
	struct hm_table t;
	enum hm_format f;

	round_trip(HM_FMT_CSV, "csv");
	round_trip(HM_FMT_JSONL, "jsonl");
	check(hm_format_guess("a.csv") == HM_FMT_CSV &&
	      hm_format_guess("a.jsonl") == HM_FMT_JSONL &&
	      hm_format_guess(NULL) == HM_FMT_CSV &&
	      !hm_format_parse("jsonl", &f) && f == HM_FMT_JSONL &&
	      hm_format_parse("xml", &f), "format names and suffixes");
	check(!hm_table_parse("{\"time\":0,\"a\":1}\n{\"a\":2,\"time\":1,\"b\":3}\n",
			      &t) && t.ncols == 2 && hm_table_get(&t, 1, 1) == 2,
	      "jsonl: columns fixed by the first row, any key order");
	hm_table_free(&t);
	quiet();
	check(hm_table_parse("{\"time\":0,\"a\":}\n", &t) != 0,
	      "jsonl: a malformed row is an error");
	loud();
	hm_table_free(&t);
}

/*
 * A synthetic run: resident_fast climbs 10% of 1 GiB a second to its peak
 * at 10 s, then the command exits and frees it; promotions climb 100 a
 * second for 5 s; ksamplingd uses 10 ms a second, kmigraterd0 has one
 * 50 ms spike and restarts (its counter drops) near the end.
 */
static const char synthetic[] =
	"time,resident_fast,promoted,demoted,htmm_nr_promoted,htmm_nr_demoted,ksamplingd_cpu_ms,kmigraterd0_cpu_ms\n"
	"0,0,0,0,1000,0,100,0\n"
	"1,107374182,100,10,1100,10,110,0\n"
	"2,214748364,200,20,1200,20,120,50\n"
	"3,322122547,300,30,1300,30,130,50\n"
	"4,429496729,400,40,1400,40,140,50\n"
	"5,536870912,500,50,1500,50,150,50\n"
	"6,644245094,500,50,1500,50,160,50\n"
	"7,751619276,500,50,1500,50,170,50\n"
	"8,858993459,500,50,1500,50,180,50\n"
	"9,966367642,500,50,1500,50,190,2\n"
	"10,1073741824,500,50,1500,50,200,4\n"
	"11,0,500,50,1500,50,210,\n";

/* @a is @b, up to a billionth (rounding). */
static bool approx_eq(double a, double b)
{
	return fabs(a - b) * 1e9 < 1;
}

static void test_report(void)
{
	struct hm_report r;
	struct hm_table t;
	bool ok;

	ok = !hm_table_parse(synthetic, &t) && !hm_report_compute(&t, &r);
	check(ok && r.rows == 12 && r.duration == 11, "report: rows, duration");
	check(ok && r.fast_peak == 1073741824 && r.fast_peak_t == 10 &&
	      r.fast_final == 0, "report: fast-tier peak at 10 s, last 0");
	check(ok && !r.have_hot && r.t_hot[0] < 0 && r.hot_first_t < 0,
	      "report: no hot set columns, no hot set times");
	check(ok && r.t_prom[0] == 3 && r.t_prom[1] == 5 && r.t_prom[2] == 5,
	      "report: promotions t50 3 s, t90 5 s, t95 5 s");
	check(ok && r.have_cg_mig && r.promoted == 500 && r.demoted == 50 &&
	      r.have_vm_mig && r.vm_promoted == 500,
	      "report: migrations from the counters' growth");
	check(ok && r.nthreads == 2 && !strcmp(r.thr[0].name, "ksamplingd") &&
	      approx_eq(r.thr[0].mean, 110.0 / 11) && r.thr[0].peak == 10,
	      "report: ksamplingd mean 10 ms/s, peak 10 ms/s");
	check(ok && r.thr[1].peak == 50 &&
	      approx_eq(r.thr[1].mean, (50 + 2 + 2) / 11.0),
	      "report: kmigraterd0 peak 50 ms/s; restart and gap handled");
	check(ok && r.all.peak == 60, "report: all threads peak 60 ms/s (got %g)",
	      r.all.peak);
	hm_table_free(&t);
	/* A --kthread column is reported, but not in "all". */
	ok = !hm_table_parse("time,ksamplingd_cpu_ms,kdamond.0_cpu_ms\n"
			     "0,0,0\n1,5,100\n2,10,300\n", &t) &&
	     !hm_report_compute(&t, &r);
	check(ok && r.nthreads == 2 && !strcmp(r.thr[1].name, "kdamond.0") &&
	      r.thr[1].peak == 200 && r.all.peak == 5 && approx_eq(r.all.mean, 5),
	      "report: a --kthread thread on its own line, not in all");
	hm_table_free(&t);
	hm_table_parse("time,resident_fast\n0,0\n1,0\n", &t);
	hm_report_compute(&t, &r);
	check(r.t_prom[0] < 0 && !r.have_cg_mig && !r.have_hot,
	      "report: nothing reached, no migration columns");
	hm_table_free(&t);
}

/*
 * One row of a record with the hot set columns: @thr < 0 is
 * hot_threshold none; cold pages in hist_0, hot ones in hist_6 and hist_15.
 */
struct hot_row {
	double time, fast;
	int thr;
	long hot6, hot15, queue;
};

static char *hot_csv(const struct hot_row *r, int n)
{
	char *buf = NULL, thr[8];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i, b;

	fputs("time,resident_fast,hot_threshold,promotion_queue_hot_pages", f);
	for (b = 0; b < 16; b++)
		fprintf(f, ",hist_%d", b);
	for (i = 0; i < n; i++) {
		snprintf(thr, sizeof(thr), "%d", r[i].thr);
		fprintf(f, "\n%g,%.0f,%s,%ld", r[i].time, r[i].fast,
			r[i].thr < 0 ? "" : thr, r[i].queue);
		for (b = 0; b < 16; b++)
			fprintf(f, ",%ld", b == 0 ? 250000 : b == 6 ? r[i].hot6 :
				b == 15 ? r[i].hot15 : 0);
	}
	fputc('\n', f);
	fclose(f);
	return buf;
}

/*
 * Cold data starts in the fast tier and is demoted (resident_fast falls
 * from 1 GiB) while the hot set grows and is promoted: no hot set before
 * 3 s (none, then empty), 50% at 5 s, 90% at 7 s, 95% at 9 s, an
 * undefined row at 10 s, a queue larger than the hot set at 11 s (0%),
 * 97.5% of 4000 pages at 12 s; at 13 s the command exited (empty hist).
 */
static const struct hot_row hot_rows[] = {
	{ 0, 1073741824, -1, 0, 0, 0 },
	{ 1, 1006632960, -1, 0, 0, 0 },
	{ 2, 939524096, 5, 0, 0, 0 },
	{ 3, 872415232, 5, 900, 100, 800 },	/* 20% */
	{ 4, 805306368, 5, 1800, 200, 1200 },	/* 40% */
	{ 5, 738197504, 5, 1800, 200, 1000 },	/* 50% */
	{ 6, 671088640, 5, 3600, 400, 1000 },	/* 75% */
	{ 7, 603979776, 5, 3600, 400, 400 },	/* 90% */
	{ 8, 570425344, 5, 3600, 400, 300 },	/* 92.5% */
	{ 9, 536870912, 5, 3600, 400, 200 },	/* 95% */
	{ 10, 536870912, -1, 3600, 400, 200 },
	{ 11, 536870912, 5, 3600, 400, 5000 },	/* 0% */
	{ 12, 536870912, 5, 3600, 400, 100 },	/* 97.5% */
	{ 13, 0, 5, 0, 0, 0 },
};

static void test_report_hot(void)
{
	char *csv = hot_csv(hot_rows, ARRAY_SIZE(hot_rows));
	struct hm_report r;
	struct hm_table t;
	double pages = -1;
	bool ok;

	ok = !hm_table_parse(csv, &t) && !hm_report_compute(&t, &r);
	check(ok && r.have_fast && r.fast_peak_t == 0 && r.have_hot,
	      "report hot: residency peaks at the start, hot set columns found");
	check(ok && r.t_hot[0] == 5 && r.t_hot[1] == 7 && r.t_hot[2] == 9,
	      "report hot: t50 5 s, t90 7 s, t95 9 s of the hot set (got %g %g %g)",
	      r.t_hot[0], r.t_hot[1], r.t_hot[2]);
	check(ok && r.t_hot_stay[0] == 12 && r.t_hot_stay[1] == 12 &&
	      r.t_hot_stay[2] == 12,
	      "report hot: lost at 11 s, so it stays from 12 s (got %g %g %g)",
	      r.t_hot_stay[0], r.t_hot_stay[1], r.t_hot_stay[2]);
	check(ok && r.hot_first_t == 3 && r.hot_rows == 9,
	      "report hot: none and empty hot set rows skipped (first %g, %d rows)",
	      r.hot_first_t, r.hot_rows);
	check(ok && r.hot_last_t == 12 && r.hot_last_pct == 97.5 &&
	      r.hot_last_pages == 4000,
	      "report hot: last 97.5%% of 4000 pages at 12 s (got %g%% %g at %g)",
	      r.hot_last_pct, r.hot_last_pages, r.hot_last_t);
	check(ok && hm_hot_fast_pct(&t, 11, &pages) == 0 && pages == 4000 &&
	      isnan(hm_hot_fast_pct(&t, 0, &pages)) && pages == 0 &&
	      isnan(hm_hot_fast_pct(&t, 10, NULL)) &&
	      isnan(hm_hot_fast_pct(&t, 2, NULL)),
	      "report hot: queue above the hot set is 0%%; none, empty undefined");
	hm_table_free(&t);
	free(csv);
	csv = hot_csv(hot_rows, 6);		/* up to 50% at 5 s */
	ok = !hm_table_parse(csv, &t) && !hm_report_compute(&t, &r);
	check(ok && r.t_hot[0] == 5 && r.t_hot[1] < 0 && r.t_hot[2] < 0 &&
	      r.t_hot_stay[0] == 5 && r.t_hot_stay[2] < 0 &&
	      r.hot_last_pct == 50,
	      "report hot: 90%% and 95%% never reached");
	hm_table_free(&t);
	free(csv);
	csv = hot_csv(hot_rows, 2);	/* hot_threshold none throughout */
	ok = !hm_table_parse(csv, &t) && !hm_report_compute(&t, &r);
	check(ok && r.have_hot && !r.hot_rows && r.hot_first_t < 0 &&
	      r.t_hot[0] < 0, "report hot: no hot set yet, never");
	hm_table_free(&t);
	free(csv);
}

static const char tb_json[] =
	"{\"tool\": \"run\", \"version\": \"1.0\", \"params\": {\"cpu_node\": 0},\n"
	" \"nodes\": [{\"mem_node\": 0, \"idle_latency_ns\": 115.20,\n"
	"  \"latency_random\": {\"ns_per_load\": 115.20}},\n"
	" {\"mem_node\": 1, \"idle_latency_ns\": 191.60,\n"
	"  \"latency_random\": {\"ns_per_load\": 191.60}}],\n"
	" \"htmm\": {\"applied\": false, \"fast_node\": 0}}\n";

static const char tb_text[] =
	"# tierbench run: CPU node 0\n"
	"Idle latency node0 115.2 ns | node1 192.0 ns | node2 300.4 ns\n"
	"Idle latency (chunk 256K) node0 62.5 ns | node1 158.9 ns\n";

static const char tb_lat[] =
	"latency cpu_node=0 cpu=0 mem_node=0 page=4k pattern=random size=1G stride=64 chunk=1G repeats=2 disturbed=0 ns_per_load=98.6 min_ns=1 max_ns=2 placed_pct=100.0\n"
	"latency cpu_node=0 cpu=0 mem_node=1 page=4k pattern=chunk size=1G stride=64 chunk=256K repeats=2 disturbed=0 ns_per_load=20.0 min_ns=1 max_ns=2 placed_pct=100.0\n"
	"latency cpu_node=0 cpu=0 mem_node=1 page=4k pattern=random size=1G stride=64 chunk=1G repeats=2 disturbed=0 ns_per_load=240.4 min_ns=1 max_ns=2 placed_pct=100.0\n"
	;

static void tierbench_case(const char *text, const char *name, long want_fast,
			   long want_slow, int want_sn)
{
	struct hm_nodelat lat[8];
	long fast = 0, slow = 0;
	int n = hm_tierbench_parse(text, lat, 8), fn = -1, sn = -1;

	check(!hm_tierbench_pick(lat, n, &fast, &fn, &slow, &sn) &&
	      fast == want_fast && slow == want_slow && fn == 0 && sn == want_sn,
	      "tierbench %s: fast %ld node0, slow %ld node%d (got %ld %ld, %d nodes)",
	      name, want_fast, want_slow, want_sn, fast, slow, n);
}

static void test_tierbench(void)
{
	struct hm_nodelat lat[8];
	long f, s;
	int fn, sn;

	tierbench_case(tb_json, "run --json", 115, 192, 1);
	tierbench_case(tb_text, "run text", 115, 300, 2);
	tierbench_case(tb_lat, "latency records (random only)", 99, 240, 1);
	quiet();
	check(hm_tierbench_pick(lat, hm_tierbench_parse("Idle latency node0 100.0 ns\n",
							lat, 8), &f, &fn, &s, &sn) != 0,
	      "tierbench: one node is refused");
	check(hm_tierbench_pick(lat, hm_tierbench_parse("hello\n", lat, 8),
				&f, &fn, &s, &sn) != 0,
	      "tierbench: no latency is refused");
	loud();
}
