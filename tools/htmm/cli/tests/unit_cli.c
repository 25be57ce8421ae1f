// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8) host unit tests, part 2: the binary, against fake trees under
 * HTMM_SYSFS_ROOT.  Included by unit.c.
 */

#define ARGV(...)	((char *const[]){ "htmm", __VA_ARGS__, NULL })

static void test_help(void)
{
	static const char *const cmds[] = { "run", "attach", "status", "record",
					    "report", "tune" };
	char want[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		snprintf(want, sizeof(want), "usage: htmm %s", cmds[i]);
		expect(NULL, ARGV((char *)cmds[i], "--help"), 0, want, want);
	}
	expect(NULL, ARGV("--help"), 0, "usage: htmm COMMAND", "htmm --help");
	expect(NULL, ((char *const[]){ "htmm", NULL }), 2, "usage", "htmm alone: 2");
	expect(NULL, ARGV("bogus"), 2, "htmm: unknown command bogus",
	       "unknown command: 2");
	expect(NULL, ARGV("status", "--bogus"), 2, "htmm: status: bad",
	       "status bad option: 2");
	expect(NULL, ARGV("run", "--bogus", "--", "true"), 125, "htmm: run: bad",
	       "run bad option: 125");
	expect(NULL, ARGV("run"), 125, "no command given", "run without CMD: 125");
	expect(NULL, ARGV("record"), 2, "either --cgroup", "record without target: 2");
	expect(NULL, ARGV("report"), 2, "one record FILE", "report without FILE: 2");
	expect(NULL, ARGV("tune"), 2, "give --show", "tune without action: 2");
	expect(NULL, ARGV("attach", "1"), 2, "--cgroup PATH is required",
	       "attach without --cgroup: 2");
}

/* Nothing left: no new cgroup, no claim, tunables at their defaults. */
static bool left_clean(const char *root)
{
	char path[HM_PATH], *v;
	bool clean = true;
	int i;

	snprintf(path, sizeof(path), "%s/sys/fs/cgroup", root);
	for (i = 0; i < 2; i++) {
		char cmd[HM_PATH + 64];

		snprintf(cmd, sizeof(cmd), i ?
			 "ls %s/run/htmm 2>/dev/null | grep -q claim" :
			 "ls %s/sys/fs/cgroup | grep -q 'htmm-'", root);
		if (!system(cmd)) {
			printf("# left behind: %s\n", i ? "a claim" : "a cgroup");
			clean = false;
		}
	}
	for (i = 0; i < hm_nr_tunables; i++) {
		snprintf(path, sizeof(path), "sys/kernel/mm/htmm/%s",
			 hm_tunables[i].name);
		v = get(root, path);
		if (strcmp(v, hm_tunables[i].def)) {
			printf("# %s is %s\n", hm_tunables[i].name, v);
			clean = false;
		}
		free(v);
	}
	v = get(root, "sys/fs/cgroup/cgroup.subtree_control");
	if (strcmp(v, "") && strcmp(v, "-memory")) {
		printf("# subtree_control: %s\n", v);
		clean = false;
	}
	free(v);
	return clean;
}

static void run_as_nobody(const char *root)
{
	pid_t pid;
	int st;

	if (geteuid()) {
		skip("not root: run refused", "tests not run as root");
		return;
	}
	pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		char out[HM_PATH];

		snprintf(out, sizeof(out), "%s/nobody.txt", tmp);
		dup2(open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666), 2);
		dup2(fd, 1);
		/*
		 * Opened while still root: the build directory may be one that
		 * nobody cannot reach (/root/... in make fresh-check).
		 */
		int exe = open(bin, O_RDONLY | O_CLOEXEC);

		(void)root;	/* a fake tree needs no root: the real one */
		unsetenv("HTMM_SYSFS_ROOT");
		if (exe < 0 || setgid(65534) || setuid(65534))
			_exit(98);
		fexecve(exe, ARGV("run", "--", "true"), environ);
		_exit(99);
	}
	st = finish(pid);
	{
		char *e = get(tmp, "nobody.txt");

		check(st == 125 && strstr(e, "run needs root"),
		      "not root: run refused with 125 (%d: %s)", st, e);
		free(e);
	}
}

static void test_errors(void)
{
	char root[HM_PATH], rel[2 * HM_PATH], rec[HM_PATH];

	snprintf(root, sizeof(root), "%s/empty", tmp);
	mkdir(root, 0755);
	expect(root, ARGV("status"), 1, "this kernel has no htmm", "no htmm: status 1");
	expect(root, ARGV("run", "--", "true"), 125, "this kernel has no htmm",
	       "no htmm: run 125");
	expect(root, ARGV("tune", "--show"), 1, "this kernel has no htmm",
	       "no htmm: tune 1");
	fake_dir(root, sizeof(root), "off");
	put(root, "sys/kernel/mm/htmm/state", "off (boot with htmm=on)\n");
	expect(root, ARGV("status"), 1, "htmm is off", "htmm off: status 1");
	snprintf(rec, sizeof(rec), "%s/never.csv", tmp);
	expect(root, ARGV("record", "-o", rec, "--", "true"), 125, "htmm is off",
	       "htmm off: record -- CMD 125");
	check(!exists(tmp, "never.csv"), "htmm off: no record file left");
	expect(root, ARGV("tune", "--set", "htmm_gamma=5"), 0, "htmm is off",
	       "htmm off: tune still writes, with a warning");
	check(get_is(root, "sys/kernel/mm/htmm/htmm_gamma", "5"), "tune wrote it");
	fake_dir(root, sizeof(root), "nov2");
	snprintf(rel, sizeof(rel), "%s/sys/fs/cgroup/cgroup.controllers", root);
	unlink(rel);
	expect(root, ARGV("run", "--", "true"), 125, "no cgroup v2", "no cgroup v2: 125");
	expect(root, ARGV("status"), 1, "no cgroup v2", "no cgroup v2: status 1");
	fake_dir(root, sizeof(root), "nomem");
	put(root, "sys/fs/cgroup/cgroup.controllers", "cpu io pids\n");
	expect(root, ARGV("run", "--", "true"), 125, "memory controller is not available",
	       "no memory controller: 125");
	fake_dir(root, sizeof(root), "bad");
	run_as_nobody(root);
	expect(root, ARGV("run", "--budget", "0=1Q", "--", "true"), 125,
	       "bad --budget 0=1Q", "bad size: 125");
	expect(root, ARGV("run", "--budget", "5=1G", "--", "true"), 125,
	       "unknown node 5: the nodes with memory are 0-1", "unknown node: 125");
	expect(root, ARGV("run", "--budget", "0=1G", "--budget", "node0=2G", "--",
			  "true"), 125, "given twice", "budget twice: 125");
	expect(root, ARGV("run", "--cgroup", "app", "--", "true"), 125,
	       "cgroup /app already exists", "cgroup exists: 125");
	expect(root, ARGV("run", "--set", "htmm_bogus=1", "--", "true"), 125,
	       "unknown tunable htmm_bogus", "unknown tunable: 125");
	expect(root, ARGV("run", "--mode", "7", "--", "true"), 125,
	       "bad value 7 for htmm_mode: 0..2", "bad tunable value: 125");
	expect(root, ARGV("run", "--set", "htmm_fast_latency_ns=300", "--", "true"),
	       125, "must stay below", "latency pair rule: 125");
	expect(root, ARGV("attach", "--cgroup", "app", "12abc"), 2, "bad pid",
	       "attach bad pid: 2");
	expect(root, ARGV("attach", "--cgroup", "nope", "1"), 1,
	       "cgroup /nope does not exist", "attach missing cgroup: 1");
	check(left_clean(root), "errors left nothing behind");
}

static void test_tune(void)
{
	static const char gamma_row[] =
		"htmm_gamma                   4         0..10                  7         *";
	char root[HM_PATH], tb[2 * HM_PATH];
	struct result r;

	fake_dir(root, sizeof(root), "tune");
	put(root, "sys/kernel/mm/htmm/htmm_gamma", "7\n");
	put(root, "sys/kernel/mm/htmm/htmm_fast_latency_ns", "120\n");
	put(root, "sys/kernel/mm/htmm/htmm_newknob", "1\n");
	snprintf(tb, sizeof(tb), "%s/sys/kernel/mm/htmm/htmm_split_cooldown_ms", root);
	unlink(tb);
	r = run(root, ARGV("tune", "--show"));
	check(r.status == 0 && strstr(r.out, "htmm_sample_period") &&
	      strstr(r.out, "ksampled_soft_cpu_quota") &&
	      strstr(r.out, "1..2^31-1") && strstr(r.out, "auto,pebs,abit,inject") &&
	      strstr(r.out, "state: on"), "tune --show lists the table");
	check(r.out && strstr(r.out, gamma_row),
	      "tune --show marks a changed value");
	check(r.err && strstr(r.err, "htmm_newknob (1) is not in htmm's table") &&
	      strstr(r.err, "htmm_split_cooldown_ms is in the table but not"),
	      "tune --show warns about unknown and missing files");
	result_free(&r);
	put(root, "sys/kernel/mm/htmm/htmm_split_cooldown_ms", "300000\n");
	expect(root, ARGV("tune", "--preset", "memtis", "--dry-run"), 0,
	       "would set htmm_gamma: 7 -> 4", "tune --preset memtis --dry-run");
	check(get_is(root, "sys/kernel/mm/htmm/htmm_gamma", "7"), "dry run wrote nothing");
	expect(root, ARGV("tune", "--preset", "memtis"), 0, "htmm_gamma: 7 -> 4",
	       "tune --preset memtis");
	check(get_is(root, "sys/kernel/mm/htmm/htmm_gamma", "4") &&
	      get_is(root, "sys/kernel/mm/htmm/htmm_fast_latency_ns", "120"),
	      "preset wrote the defaults, kept the latency");
	expect(root, ARGV("tune", "--preset", "memtis"), 0, "nothing to change",
	       "preset twice: nothing to change");
	expect(root, ARGV("tune", "--preset", "fast"), 2, "unknown preset",
	       "unknown preset: 2");
	put(tmp, "tb.json", tb_json);
	snprintf(tb, sizeof(tb), "%s/tb.json", tmp);
	expect(root, ARGV("tune", "--from-tierbench", tb), 0,
	       "htmm_slow_latency_ns: 250 -> 192", "tune --from-tierbench json");
	check(get_is(root, "sys/kernel/mm/htmm/htmm_fast_latency_ns", "115") &&
	      get_is(root, "sys/kernel/mm/htmm/htmm_slow_latency_ns", "192"),
	      "tierbench latencies written");
	put(tmp, "tb1.txt", "Idle latency node0 90.0 ns\n");
	snprintf(tb, sizeof(tb), "%s/tb1.txt", tmp);
	expect(root, ARGV("tune", "--from-tierbench", tb), 1, "one memory node",
	       "tierbench with one node: refused");
	expect(root, ARGV("tune", "--set", "htmm_mode=9"), 1, "bad value 9",
	       "tune bad value: 1");
	expect(root, ARGV("tune", "--set", "htmm_thres_hot=03"), 0,
	       "htmm_thres_hot: 1 -> 3", "tune normalises 03 to 3");
}

static void test_status(void)
{
	char root[HM_PATH];
	struct result r;

	fake_dir(root, sizeof(root), "status");
	put(root, "sys/fs/cgroup/other/memory.htmm_enabled", "disabled\n");
	put(root, "sys/fs/cgroup/other/memory.htmm_stat", "enabled 0\n");
	r = run(root, ARGV("status"));
	check(r.status == 0 && strstr(r.out, "memory_tier4") &&
	      strstr(r.out, "memory_tier22") && strstr(r.out, "2.00 GiB") &&
	      strstr(r.out, "slow") && strstr(r.out, "kmigraterd1") &&
	      strstr(r.out, "in use: abit (auto: no PEBS events on this CPU)") &&
	      strstr(r.out, "cgroup /app  htmm enabled") &&
	      strstr(r.out, "thresholds: hot 5  warm 4  fill none") &&
	      !strstr(r.out, "cgroup /other"),
	      "status: nodes, tiers, source, threads, enabled cgroups only");
	check(r.out &&
	      strstr(r.out, "    5 |########################################     4000 hot") &&
	      strstr(r.out, "    4 |####################                         2000 warm"),
	      "status: histogram bars, hot and warm bins");
	check(r.out && strstr(r.out, "  0     fast      1.00 GiB     1.00 GiB     1.00 GiB   100%"),
	      "status: budget, max_at_node, residency per node");
	if (r.status)
		printf("# %s%s", r.out, r.err);
	result_free(&r);
	r = run(root, ARGV("status", "--cgroup", "/sys/fs/cgroup/other"));
	check(r.status == 0 && strstr(r.out, "cgroup /other  htmm disabled"),
	      "status --cgroup shows a disabled cgroup");
	result_free(&r);
	put(root, "dev/kmsg", "");
	r = run(root, ARGV("status"));
	check(r.status == 0 && strstr(r.out, "abit (inferred from the cgroups' samples_abit)"),
	      "status: source inferred without the kernel log line");
	result_free(&r);
	expect(root, ARGV("status", "--cgroup", "nope"), 1, "does not exist",
	       "status --cgroup missing: 1");
}

static void test_record_cmd(void)
{
	char root[HM_PATH], csv[HM_PATH], js[HM_PATH], png[HM_PATH];
	struct hm_table t;
	struct result r;
	int ncols;
	bool ok;

	fake_dir(root, sizeof(root), "record");
	snprintf(csv, sizeof(csv), "%s/r.csv", tmp);
	snprintf(js, sizeof(js), "%s/r.jsonl", tmp);
	expect(root, ARGV("record", "--cgroup", "app", "-n", "3", "-i", "20",
			  "-o", csv), 0, NULL, "record --cgroup -n 3 (csv)");
	ok = !hm_table_load(csv, &t) && t.nrows == 3 && t.ncols > 60 &&
	     hm_table_col(&t, "unix_time") == 1 &&
	     hm_table_get(&t, 2, hm_table_col(&t, "resident_fast")) == 1073741824 &&
	     hm_table_get(&t, 2, hm_table_col(&t, "resident_slow")) == 536870912 &&
	     hm_table_get(&t, 0, hm_table_col(&t, "max_at_node1")) == -1 &&
	     isnan(hm_table_get(&t, 0, hm_table_col(&t, "fill_threshold"))) &&
	     hm_table_get(&t, 0, hm_table_col(&t, "hot_threshold")) == 5 &&
	     hm_table_get(&t, 0, hm_table_col(&t, "htmm_nr_promoted")) == 300 &&
	     hm_table_col(&t, "nr_free_pages") < 0 &&
	     hm_table_col(&t, "pgpromote_success") < 0;
	check(ok, "record: columns and values of the schema");
	check(ok && hm_table_get(&t, 0, hm_table_col(&t, "ksamplingd_cpu_ms")) ==
	      (40 + 20) * 1000.0 / sysconf(_SC_CLK_TCK) &&
	      hm_table_col(&t, "kmigraterd1_cpu_ms") > 0,
	      "record: CPU ms of the kernel threads (not of a user process)");
	ncols = t.ncols;
	hm_table_free(&t);
	check(!hm_table_load(csv, &t) && hm_table_col(&t, "kdamond.0_cpu_ms") < 0,
	      "record: other kernel threads only when asked for");
	hm_table_free(&t);
	expect(root, ARGV("record", "--cgroup", "app", "-n", "2", "-i", "20",
			  "-k", "kdamond.0", "-k", "kswapd9", "-o", csv), 0, NULL,
	       "record --kthread kdamond.0 --kthread kswapd9");
	ok = !hm_table_load(csv, &t) && t.ncols == ncols + 2 &&
	     hm_table_get(&t, 1, hm_table_col(&t, "kdamond.0_cpu_ms")) ==
	     (30 + 15) * 1000.0 / sysconf(_SC_CLK_TCK) &&
	     isnan(hm_table_get(&t, 1, hm_table_col(&t, "kswapd9_cpu_ms")));
	check(ok, "record --kthread: its CPU ms; a missing thread's is empty");
	hm_table_free(&t);
	expect(root, ARGV("record", "--cgroup", "app", "-n", "1",
			  "-k", "a_name_of_16_chr"), 2, "bad --kthread",
	       "record: a thread name over 15 characters: 2");
	expect(root, ARGV("record", "--cgroup", "app", "-n", "2", "-i", "20",
			  "-o", js), 0, NULL, "record --cgroup (jsonl)");
	ok = !hm_table_load(js, &t) && t.nrows == 2 && t.ncols == ncols;
	check(ok, "record jsonl reads back, same %d columns", t.ncols);
	hm_table_free(&t);
	expect(root, ARGV("record", "--cgroup", "app", "-n", "1", "-f", "jsonl"),
	       0, "{\"time\":0.", "record to stdout, --format jsonl");
	expect(root, ARGV("report", csv), 0,
	       "fast-tier residency (hot and cold): first 1.00 GiB",
	       "report of a record: residency");
	expect(root, ARGV("report", csv), 0,
	       "hot set in the fast tier (estimate): t50 0.0 s, t90 0.0 s, t95 0.0 s\n"
	       "  at or above it from then on: t50 0.0 s, t90 0.0 s, t95 0.0 s\n"
	       "  first hot set at 0.0 s; last 99.9% of a 15.7 MiB hot set",
	       "report of a record: hot set (4010 pages, 2 queued)");
	snprintf(png, sizeof(png), "%s/r.png", tmp);
	r = run(NULL, ARGV("report", csv, "--plot", png));
	if (strstr(r.err, "needs gnuplot")) {
		skip("report --plot draws a PNG", "no gnuplot");
	} else {
		char *img = get(tmp, "r.png");

		check(r.status == 0 && !strncmp(img, "\x89PNG", 4),
		      "report --plot draws a PNG");
		free(img);
	}
	result_free(&r);
	setenv("PATH", "/nonexistent", 1);
	expect(NULL, ARGV("report", csv, "--plot", png), 1,
	       "needs gnuplot, which is not in PATH", "report --plot without gnuplot: 1");
	setenv("PATH", "/usr/local/bin:/usr/bin:/bin", 1);
}

/* Wait until the record @rel has its header and a row (at most 5 s). */
static bool rec_has_row(const char *root, const char *rel)
{
	bool ok = false;
	char *s;
	int i;

	for (i = 0; i < 500 && !ok; i++) {
		s = get(root, rel);
		ok = !!strchr(s, '\n');
		free(s);
		if (!ok)
			usleep(10000);
	}
	return ok;
}

/* @fake_stat with @from replaced by @to ("" deletes). */
static void put_stat(const char *root, const char *from, const char *to)
{
	char buf[sizeof(fake_stat) + 64], *p;

	snprintf(buf, sizeof(buf), "%s", fake_stat);
	p = strstr(buf, from);
	memmove(p + strlen(to), p + strlen(from), strlen(p + strlen(from)) + 1);
	memcpy(p, to, strlen(to));
	put(root, "sys/fs/cgroup/app/memory.htmm_stat", buf);
}

/*
 * The thresholds are columns even when the first row has none, an odd
 * value or no such key; the schema stays that of the first row.
 */
static void test_record_none(void)
{
	char root[HM_PATH], rel[] = "none.csv", csv[HM_PATH];
	int hot, warm, fill, out, n0;
	struct hm_table t;
	pid_t pid;
	bool ok;

	fake_dir(root, sizeof(root), "recnone");
	put_stat(root, "hot_threshold 5\nwarm_threshold 4",
		 "hot_threshold none\nwarm_threshold ?");
	snprintf(csv, sizeof(csv), "%s/%s", tmp, rel);
	out = open("/dev/null", O_WRONLY);
	pid = start(root, ARGV("record", "--cgroup", "app", "-n", "3", "-i", "300",
			       "-o", csv), out, out);
	ok = rec_has_row(tmp, rel);
	put_stat(root, "fill_threshold none\n", "");	/* hot 5, warm 4 */
	ok = finish(pid) == 0 && ok;
	close(out);
	ok = ok && !hm_table_load(csv, &t) && t.nrows == 3;
	hot = hm_table_col(&t, "hot_threshold");
	warm = hm_table_col(&t, "warm_threshold");
	fill = hm_table_col(&t, "fill_threshold");
	n0 = t.ncols;
	check(ok && hot > 0 && warm > 0 && fill > 0 &&
	      isnan(hm_table_get(&t, 0, hot)) &&
	      isnan(hm_table_get(&t, 0, warm)) &&
	      hm_table_get(&t, 2, hot) == 5 && hm_table_get(&t, 2, warm) == 4 &&
	      isnan(hm_table_get(&t, 2, fill)),
	      "record: thresholds none/odd in the first row kept as missing");
	check(ok && isnan(hm_hot_fast_pct(&t, 0, NULL)) &&
	      hm_hot_fast_pct(&t, 2, NULL) > 99.9,
	      "record: hot_fast_pct undefined while hot_threshold is none");
	hm_table_free(&t);
	put_stat(root, "hot_threshold 5\nwarm_threshold 4\n", "");
	expect(root, ARGV("record", "--cgroup", "app", "-n", "1", "-o", csv), 0,
	       NULL, "record: hot and warm threshold keys absent");
	ok = !hm_table_load(csv, &t) && t.ncols == n0 &&
	     hm_table_col(&t, "hot_threshold") > 0 &&
	     hm_table_col(&t, "fill_threshold") > 0 &&
	     isnan(hm_table_get(&t, 0, hm_table_col(&t, "hot_threshold")));
	check(ok, "record: absent thresholds are missing columns (%d of %d)",
	      t.ncols, n0);
	hm_table_free(&t);
	/* A signal ends it with one more row, long before the next interval. */
	snprintf(csv, sizeof(csv), "%s/int.csv", tmp);
	out = open("/dev/null", O_WRONLY);
	pid = start(root, ARGV("record", "--cgroup", "app", "-i", "600000",
			       "-o", csv), out, out);
	ok = rec_has_row(tmp, "int.csv");
	kill(pid, SIGINT);
	ok = finish(pid) == 0 && ok;
	close(out);
	ok = ok && !hm_table_load(csv, &t) && t.nrows == 2;
	check(ok, "record: SIGINT writes a last row and exits 0 (%d rows)",
	      t.nrows);
	hm_table_free(&t);
}

/* Wait until @rel exists in @root (at most 5 s). */
static bool appears(const char *root, const char *rel)
{
	int i;

	for (i = 0; i < 500 && !exists(root, rel); i++)
		usleep(10000);
	return exists(root, rel);
}

/* Wait until @rel has text (@want, or any) (at most 5 s). */
static bool filled(const char *root, const char *rel, const char *want)
{
	bool ok = false;
	char *s;
	int i;

	for (i = 0; i < 500 && !ok; i++) {
		s = get(root, rel);
		ok = want ? !strcmp(s, want) : s[0] && strcmp(s, "<missing>");
		free(s);
		if (!ok)
			usleep(10000);
	}
	return ok;
}

static pid_t background(const char *root, char *const argv[])
{
	char o[HM_PATH];
	int fd;
	pid_t pid;

	snprintf(o, sizeof(o), "%s/bg.txt", tmp);
	fd = open(o, O_WRONLY | O_CREAT | O_APPEND, 0644);
	pid = start(root, argv, fd, fd);
	close(fd);
	return pid;
}

static void test_run(void)
{
	char root[HM_PATH], rel[HM_PATH], rec[HM_PATH];
	const char *sh = "cd \"$HTMM_SYSFS_ROOT\" && d=sys/fs/cgroup/htmm-run.$PPID &&\n"
		"for f in sys/kernel/mm/htmm/htmm_mode $d/memory.max_at_node0 \\\n"
		"\t$d/memory.max_at_node1 $d/memory.htmm_enabled;\n"
		"do echo $(cat $f); done > seen &&\n"
		"grep -qx $$ $d/cgroup.procs && exit 3\n";
	struct hm_table t;
	pid_t pid;

	fake_dir(root, sizeof(root), "run");
	expect(root, ARGV("run", "--budget", "0=1G", "--budget", "node1=max",
			  "--mode", "migrate", "--", "sh", "-c", (char *)sh), 3, NULL,
	       "run: exits with the command's status (3)");
	check(get_is(root, "seen", "1\n1073741824\nmax\nenabled"),
	      "run: budgets, tunable, htmm_enabled set, command in cgroup.procs");
	check(left_clean(root) &&
	      get_is(root, "sys/fs/cgroup/cgroup.subtree_control", "-memory"),
	      "run: tunable restored, cgroup removed, +memory undone");
	snprintf(rec, sizeof(rec), "%s/run.csv", tmp);
	expect(root, ARGV("run", "--record", rec, "-i", "20", "--", "sleep", "0.2"),
	       0, NULL, "run --record");
	check(!hm_table_load(rec, &t) && t.nrows >= 4, "run --record: %d rows", t.nrows);
	hm_table_free(&t);
	expect(root, ARGV("run", "--", "sh", "-c", "kill -KILL $$"), 137, NULL,
	       "run: killed command gives 128+9");
	expect(root, ARGV("run", "--", "/nonexistent/cmd"), 127, "cannot run",
	       "run: command not found gives 127");
	put(tmp, "noexec", "true\n");
	snprintf(rec, sizeof(rec), "%s/noexec", tmp);
	chmod(rec, 0644);
	expect(root, ARGV("run", "--", rec), 126, "cannot run",
	       "run: not executable gives 126");
	pid = background(root, ARGV("run", "--set", "htmm_nowarm=1", "--", "sleep", "5"));
	snprintf(rel, sizeof(rel), "sys/fs/cgroup/htmm-run.%d/cgroup.procs", (int)pid);
	check(filled(root, rel, NULL), "run: the command is in its cgroup");
	kill(pid, SIGTERM);
	check(finish(pid) == 128 + SIGTERM, "run: SIGTERM goes to the command, 143");
	check(left_clean(root), "run: SIGTERM cleaned up");
	snprintf(rec, sizeof(rec), "%s/rc.jsonl", tmp);
	expect(root, ARGV("record", "-o", rec, "-i", "20", "--", "sleep", "0.2"), 0,
	       NULL, "record -- CMD");
	check(!hm_table_load(rec, &t) && t.nrows >= 4 && left_clean(root),
	      "record -- CMD: rows, cleaned up");
	hm_table_free(&t);
}

static void test_concurrency(void)
{
	char root[HM_PATH], claim[64];
	pid_t a, dead;

	fake_dir(root, sizeof(root), "conc");
	a = background(root, ARGV("run", "--set", "htmm_gamma=5", "--", "sleep", "1.5"));
	check(appears(root, "run/htmm/claim.htmm_gamma"), "run claims htmm_gamma");
	expect(root, ARGV("run", "--set", "htmm_gamma=6", "--", "true"), 125,
	       "htmm_gamma is held by htmm pid", "second run may not change it");
	expect(root, ARGV("tune", "--set", "htmm_gamma=7"), 1, "is held by htmm pid",
	       "tune may not change it either");
	expect(root, ARGV("run", "--set", "htmm_nowarm=1", "--", "true"), 0, NULL,
	       "a run changing another tunable goes ahead");
	expect(root, ARGV("run", "--", "true"), 0, NULL, "a run changing nothing too");
	check(get_is(root, "sys/kernel/mm/htmm/htmm_gamma", "5"), "first run's value holds");
	check(finish(a) == 0 && left_clean(root), "first run restored htmm_gamma");
	dead = fork();
	if (!dead)
		_exit(0);
	finish(dead);
	snprintf(claim, sizeof(claim), "%d 12345 1 7\n", (int)dead);
	put(root, "run/htmm/claim.htmm_thres_hot", claim);
	put(root, "sys/kernel/mm/htmm/htmm_thres_hot", "7\n");
	expect(root, ARGV("run", "--", "true"), 0, "restored htmm_thres_hot to 1",
	       "a dead run's claim is reaped");
	check(left_clean(root), "reaped: value back, claim gone");
}

static void test_attach(void)
{
	char root[HM_PATH], pid[16], *procs;
	pid_t sleeper, a;

	fake_dir(root, sizeof(root), "attach");
	put(root, "sys/fs/cgroup/cgroup.procs", "");
	put(root, "sys/fs/cgroup/off/memory.htmm_enabled", "disabled\n");
	put(root, "sys/fs/cgroup/off/memory.htmm_stat", fake_stat);
	put(root, "sys/fs/cgroup/off/memory.max_at_node1", "max\n");
	sleeper = fork();
	if (!sleeper) {
		execlp("sleep", "sleep", "1", (char *)NULL);
		_exit(99);
	}
	snprintf(pid, sizeof(pid), "%d", (int)sleeper);
	a = background(root, ARGV("attach", "--cgroup", "off", "--budget", "1=512M",
				  "--set", "htmm_mode=0", pid));
	check(filled(root, "sys/fs/cgroup/off/cgroup.procs", pid),
	      "attach moves the pid");
	procs = get(root, "sys/fs/cgroup/off/cgroup.procs");
	check(!strcmp(procs, pid) &&
	      get_is(root, "sys/fs/cgroup/off/memory.max_at_node1", "536870912") &&
	      get_is(root, "sys/fs/cgroup/off/memory.htmm_enabled", "enabled"),
	      "attach: pid moved, budget and htmm set");
	free(procs);
	finish(sleeper);	/* reap it, or it stays a zombie child of ours */
	check(finish(a) == 0, "attach returns once the process exited");
	check(get_is(root, "sys/fs/cgroup/off/memory.max_at_node1", "max") &&
	      get_is(root, "sys/fs/cgroup/off/memory.htmm_enabled", "disabled") &&
	      left_clean(root) && exists(root, "sys/fs/cgroup/off"),
	      "attach: budget, htmm and tunable restored, cgroup kept");
	sleeper = fork();
	if (!sleeper) {
		execlp("sleep", "sleep", "5", (char *)NULL);
		_exit(99);
	}
	snprintf(pid, sizeof(pid), "%d", (int)sleeper);
	a = background(root, ARGV("attach", "--cgroup", "app", pid));
	check(filled(root, "sys/fs/cgroup/app/cgroup.procs", pid),
	      "attach to an enabled cgroup");
	kill(a, SIGINT);
	check(finish(a) == 0 && kill(sleeper, 0) == 0,
	      "attach: Ctrl-C ends attach, not the process");
	check(get_is(root, "sys/fs/cgroup/app/memory.htmm_enabled", "enabled") &&
	      get_is(root, "sys/fs/cgroup/cgroup.procs", pid),
	      "attach: htmm left on (it was), process moved back");
	kill(sleeper, SIGKILL);
	finish(sleeper);
	expect(root, ARGV("attach", "--cgroup", "app", pid), 1, "no process",
	       "attach a process that is gone: 1");
}

static void test_cli(void)
{
	test_help();
	test_errors();
	test_tune();
	test_status();
	test_record_cmd();
	test_record_none();
	test_run();
	test_concurrency();
	test_attach();
}
