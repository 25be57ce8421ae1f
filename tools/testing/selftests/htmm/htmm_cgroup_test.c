// SPDX-License-Identifier: GPL-2.0
/*
 * htmm cgroup v2 interface: memory.htmm_enabled, memory.max_at_node<N>,
 * memory.htmm_stat and the htmm lines in /proc/vmstat.
 */
#define _GNU_SOURCE
#include "htmm_util.h"	/* includes kselftest_harness.h */

#define ENABLED_FILE	"memory.htmm_enabled"
#define STAT_FILE	"memory.htmm_stat"

static const char *const enabled_bad_inputs[] = {
	"", "1", "0", "on", "enable", "enabled disabled", "ENABLED",
};

static const char *const max_bad_inputs[] = {
	"", "abc", "-1", "12X", "64M junk", "K", "g", "1.5G", "0x", "08",
};

/*
 * Numbers that do not fit: in 64 bits, after the suffix's shift, or in
 * the page counter (more than PAGE_COUNTER_MAX pages, that is 2^63 bytes
 * or more on 64-bit).  EINVAL or ERANGE.
 */
static const char *const max_range_inputs[] = {
	"18446744073709551616", "99999999999999999999", "16E", "16384P",
	"17179869184G", "18014398509481984K", "9223372036854775808", "8E",
	"0x8000000000000000", "0xfffffffffffff000",
};

static void node_file(char *buf, size_t size, const char *cg, int node)
{
	snprintf(buf, size, "%s/memory.max_at_node%d", cg, node);
}

/* ------------------------------------------------------------------ */
/* /proc/vmstat                                                        */
/* ------------------------------------------------------------------ */

TEST(vmstat_counters)
{
	static const char *const keys[] = {
		"htmm_alloc_redirected", "htmm_alloc_over_limit",
	};
	unsigned long long val;
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		val = 0;
		err = htmm_vmstat_get(keys[i], &val);
		EXPECT_EQ(0, err) TH_LOG("/proc/vmstat %s: %s", keys[i],
					 err == -ENOENT ? "missing" :
					 strerror(-err));
		EXPECT_NE(HTMM_VALUE_MAX, val);
		if (!err)
			TH_LOG("%s %llu", keys[i], val);
	}
}

/* ------------------------------------------------------------------ */
/* memory.htmm_enabled                                                 */
/* ------------------------------------------------------------------ */

FIXTURE(htmm_cg) {
	struct htmm_cg_ctx c;
};

FIXTURE_SETUP(htmm_cg)
{
	htmm_cg_ctx_setup(_metadata, &self->c, false);
}

FIXTURE_TEARDOWN(htmm_cg)
{
	htmm_cg_ctx_teardown(_metadata, &self->c);
}

TEST_F(htmm_cg, enabled_presence)
{
	char path[PATH_MAX];

	EXPECT_FALSE(htmm_path_exists(HTMM_CGROUP_ROOT "/" ENABLED_FILE))
		TH_LOG("root cgroup must not have " ENABLED_FILE);
	htmm_cg_ctx_file(path, sizeof(path), &self->c, ENABLED_FILE);
	EXPECT_TRUE(htmm_path_exists(path)) TH_LOG("%s missing", path);
}

TEST_F(htmm_cg, enabled_default)
{
	char path[PATH_MAX], buf[64];
	ssize_t n;

	htmm_cg_ctx_file(path, sizeof(path), &self->c, ENABLED_FILE);
	n = htmm_read_file(path, buf, sizeof(buf));
	ASSERT_LE(0, n) TH_LOG("read %s: %s", path, strerror(-n));
	EXPECT_CONTENT("disabled\n", buf, "default");
}

TEST_F(htmm_cg, enabled_round_trip)
{
	char path[PATH_MAX];

	htmm_cg_ctx_file(path, sizeof(path), &self->c, ENABLED_FILE);
	htmm_expect_write_reads(_metadata, path, "enabled", "enabled\n");
	htmm_expect_write_reads(_metadata, path, "disabled", "disabled\n");
	/* as written by echo */
	htmm_expect_write_reads(_metadata, path, "enabled\n", "enabled\n");
	/* writing the current state again is fine */
	htmm_expect_write_reads(_metadata, path, "enabled\n", "enabled\n");
	htmm_expect_write_reads(_metadata, path, "disabled\n", "disabled\n");
}

TEST_F(htmm_cg, enabled_bad_input)
{
	static const char *const states[] = { "disabled", "enabled" };
	char path[PATH_MAX], old[64];
	unsigned int s, i;

	htmm_cg_ctx_file(path, sizeof(path), &self->c, ENABLED_FILE);
	/* from both states, so a reset to the default would be noticed */
	for (s = 0; s < ARRAY_SIZE(states); s++) {
		ASSERT_EQ(0, htmm_write_str(path, states[s]));
		snprintf(old, sizeof(old), "%s\n", states[s]);
		for (i = 0; i < ARRAY_SIZE(enabled_bad_inputs); i++)
			htmm_expect_bad_input(_metadata, path,
					      enabled_bad_inputs[i], old, false);
	}
}

TEST_F(htmm_cg, enabled_permissions)
{
	char path[PATH_MAX];

	htmm_cg_ctx_file(path, sizeof(path), &self->c, ENABLED_FILE);
	htmm_expect_root_rw_file(_metadata, path);
}

/* ------------------------------------------------------------------ */
/* memory.max_at_node<N>                                               */
/* ------------------------------------------------------------------ */

TEST_F(htmm_cg, max_at_node_presence)
{
	int possible[1024], nr_possible, highest, i;
	char path[PATH_MAX];

	for (i = 0; i < self->c.nr_nodes; i++) {
		int nid = self->c.nodes[i];

		node_file(path, sizeof(path), HTMM_CGROUP_ROOT, nid);
		EXPECT_FALSE(htmm_path_exists(path))
			TH_LOG("root cgroup must not have %s", path);
		node_file(path, sizeof(path), self->c.cg, nid);
		EXPECT_TRUE(htmm_path_exists(path)) TH_LOG("%s missing", path);
	}

	/* one past the highest possible node id does not exist at all */
	nr_possible = htmm_read_list(HTMM_NODE_DIR "/possible", possible,
				     ARRAY_SIZE(possible));
	ASSERT_LT(0, nr_possible);
	highest = possible[nr_possible - 1];
	node_file(path, sizeof(path), self->c.cg, highest + 1);
	EXPECT_FALSE(htmm_path_exists(path)) TH_LOG("%s should not exist", path);
	node_file(path, sizeof(path), self->c.cg, 4096);
	EXPECT_FALSE(htmm_path_exists(path)) TH_LOG("%s should not exist", path);
}

TEST_F(htmm_cg, max_at_node_default)
{
	char path[PATH_MAX], buf[64];
	int i;

	for (i = 0; i < self->c.nr_nodes; i++) {
		ssize_t n;

		node_file(path, sizeof(path), self->c.cg, self->c.nodes[i]);
		n = htmm_read_file(path, buf, sizeof(buf));
		ASSERT_LE(0, n) TH_LOG("read %s: %s", path, strerror(-n));
		EXPECT_CONTENT("max\n", buf, path);
	}
}

TEST_F(htmm_cg, max_at_node_bad_input)
{
	char path[PATH_MAX];
	unsigned int j;
	int i;

	for (i = 0; i < self->c.nr_nodes; i++) {
		node_file(path, sizeof(path), self->c.cg, self->c.nodes[i]);
		/* a non-default value so a reset to "max" is noticed */
		ASSERT_EQ(0, htmm_write_str(path, "1G"));
		for (j = 0; j < ARRAY_SIZE(max_bad_inputs); j++)
			htmm_expect_bad_input(_metadata, path,
					      max_bad_inputs[j],
					      "1073741824\n", false);
		/* and from the default */
		ASSERT_EQ(0, htmm_write_str(path, "max"));
		for (j = 0; j < ARRAY_SIZE(max_bad_inputs); j++)
			htmm_expect_bad_input(_metadata, path,
					      max_bad_inputs[j], "max\n", false);
	}
}

TEST_F(htmm_cg, max_at_node_out_of_range)
{
	char path[PATH_MAX];
	unsigned int j;
	int i;

	for (i = 0; i < self->c.nr_nodes; i++) {
		node_file(path, sizeof(path), self->c.cg, self->c.nodes[i]);
		ASSERT_EQ(0, htmm_write_str(path, "1G"));
		for (j = 0; j < ARRAY_SIZE(max_range_inputs); j++)
			htmm_expect_bad_input(_metadata, path,
					      max_range_inputs[j],
					      "1073741824\n", true);
		ASSERT_EQ(0, htmm_write_str(path, "max"));
		for (j = 0; j < ARRAY_SIZE(max_range_inputs); j++)
			htmm_expect_bad_input(_metadata, path,
					      max_range_inputs[j], "max\n",
					      true);
	}
}

TEST_F(htmm_cg, max_at_node_permissions)
{
	char path[PATH_MAX];
	int i;

	for (i = 0; i < self->c.nr_nodes; i++) {
		node_file(path, sizeof(path), self->c.cg, self->c.nodes[i]);
		htmm_expect_root_rw_file(_metadata, path);
	}
}

/* Parsing, one variant per input, checked on every memory node. */
FIXTURE(htmm_max_parse) {
	struct htmm_cg_ctx c;
};

FIXTURE_VARIANT(htmm_max_parse) {
	const char *input;
	bool is_max;
	unsigned long long bytes;	/* before rounding down to pages */
};

FIXTURE_VARIANT_ADD(htmm_max_parse, bytes) {
	.input = "67108864", .bytes = 67108864,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, suffix_k) {
	.input = "4K", .bytes = 4096,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, suffix_m) {
	.input = "64M", .bytes = 64 * MiB,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, suffix_g) {
	.input = "1G", .bytes = GiB,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, newline) {
	.input = "64M\n", .bytes = 64 * MiB,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, unaligned) {
	.input = "4097", .bytes = 4097,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, zero) {
	.input = "0", .bytes = 0,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, suffix_t) {
	.input = "1T", .bytes = 1024 * GiB,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, suffix_p) {
	.input = "2P", .bytes = 2048ULL * 1024 * GiB,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, suffix_e) {
	.input = "7E", .bytes = 7ULL << 60,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, suffix_lower_case) {
	.input = "64m", .bytes = 64 * MiB,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, hex) {
	.input = "0x10000", .bytes = 65536,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, hex_with_suffix) {
	.input = "0x10M", .bytes = 16 * MiB,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, octal) {
	.input = "040000", .bytes = 16384,
};

/* The largest value in bytes: PAGE_COUNTER_MAX pages, which is "max". */
FIXTURE_VARIANT_ADD(htmm_max_parse, largest) {
	.input = "9223372036854775807", .is_max = true,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, max) {
	.input = "max", .is_max = true,
};

FIXTURE_VARIANT_ADD(htmm_max_parse, max_newline) {
	.input = "max\n", .is_max = true,
};

FIXTURE_SETUP(htmm_max_parse)
{
	htmm_cg_ctx_setup(_metadata, &self->c, false);
}

FIXTURE_TEARDOWN(htmm_max_parse)
{
	htmm_cg_ctx_teardown(_metadata, &self->c);
}

TEST_F(htmm_max_parse, max_at_node)
{
	unsigned long long page = getpagesize();
	char path[PATH_MAX], want[64];
	int i;

	if (variant->is_max)
		snprintf(want, sizeof(want), "max\n");
	else
		snprintf(want, sizeof(want), "%llu\n",
			 variant->bytes / page * page);

	for (i = 0; i < self->c.nr_nodes; i++) {
		node_file(path, sizeof(path), self->c.cg, self->c.nodes[i]);
		/* start from a value different from the expected one */
		htmm_expect_write_reads(_metadata, path, "8192", "8192\n");
		htmm_expect_write_reads(_metadata, path, variant->input, want);
	}
}

/* ------------------------------------------------------------------ */
/* memory.htmm_stat                                                    */
/* ------------------------------------------------------------------ */

static int stat_get(const struct htmm_cg_ctx *c, const char *key,
		    unsigned long long *val)
{
	char path[PATH_MAX];

	htmm_cg_ctx_file(path, sizeof(path), c, STAT_FILE);
	return htmm_keyed_get(path, key, val);
}

TEST_F(htmm_cg, stat_presence)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	EXPECT_FALSE(htmm_path_exists(HTMM_CGROUP_ROOT "/" STAT_FILE))
		TH_LOG("root cgroup must not have " STAT_FILE);
	htmm_cg_ctx_file(path, sizeof(path), &self->c, STAT_FILE);
	ASSERT_EQ(0, stat(path, &st)) TH_LOG("stat %s: %s", path,
					     strerror(errno));
	EXPECT_EQ(0444U, st.st_mode & 07777U)
		TH_LOG("mode is %04o", st.st_mode & 07777);
	EXPECT_EQ(0U, st.st_uid);

	/* root may be able to open it for writing, but no write works */
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		n = write(fd, "0", 1);
		EXPECT_GT(0, n) TH_LOG("write to %s succeeded", path);
		close(fd);
	}
}

TEST_F(htmm_cg, stat_format)
{
	static char buf[16384];
	char path[PATH_MAX], key[64], *line, *save = NULL;
	unsigned long long val = 0;
	int lines = 0, i, err;
	ssize_t n;

	htmm_cg_ctx_file(path, sizeof(path), &self->c, STAT_FILE);
	n = htmm_read_file(path, buf, sizeof(buf));
	ASSERT_LT(0, n) TH_LOG("read %s: %s", path, n ? strerror(-n) : "empty");
	ASSERT_EQ('\n', buf[n - 1]) TH_LOG("last line not terminated");

	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		bool key_ok = sp && sp != line;
		char *p;

		lines++;
		for (p = line; key_ok && p < sp; p++)
			if (!islower((unsigned char)*p) &&
			    !isdigit((unsigned char)*p) && *p != '_')
				key_ok = false;
		EXPECT_TRUE(key_ok) TH_LOG("bad line \"%s\"", line);
		if (!key_ok)
			continue;
		/* Thresholds may be "none": no bin is hot. */
		if (!strcmp(sp + 1, "none") &&
		    (!strncmp(line, "hot_threshold ", 14) ||
		     !strncmp(line, "warm_threshold ", 15) ||
		     !strncmp(line, "fill_threshold ", 15)))
			continue;
		EXPECT_EQ(0, htmm_parse_value(sp + 1, &val))
			TH_LOG("bad value in \"%s\"", line);
	}
	EXPECT_LT(0, lines);

	err = stat_get(&self->c, "enabled", &val);
	EXPECT_EQ(0, err) TH_LOG("key enabled: %s", strerror(-err));
	EXPECT_TRUE(val == 0 || val == 1) TH_LOG("enabled %llu", val);
	err = stat_get(&self->c, "alloc_redirected", &val);
	EXPECT_EQ(0, err) TH_LOG("key alloc_redirected: %s", strerror(-err));
	EXPECT_NE(HTMM_VALUE_MAX, val);

	for (i = 0; i < self->c.nr_nodes; i++) {
		snprintf(key, sizeof(key), "resident_node%d", self->c.nodes[i]);
		err = stat_get(&self->c, key, &val);
		EXPECT_EQ(0, err) TH_LOG("key %s: %s", key, strerror(-err));
		EXPECT_NE(HTMM_VALUE_MAX, val) TH_LOG("%s is max", key);
		snprintf(key, sizeof(key), "max_at_node%d", self->c.nodes[i]);
		err = stat_get(&self->c, key, &val);
		EXPECT_EQ(0, err) TH_LOG("key %s: %s", key, strerror(-err));
	}
}

TEST_F(htmm_cg, stat_enabled_follows)
{
	unsigned long long val = HTMM_VALUE_MAX;
	char path[PATH_MAX];

	htmm_cg_ctx_file(path, sizeof(path), &self->c, ENABLED_FILE);
	ASSERT_EQ(0, stat_get(&self->c, "enabled", &val));
	EXPECT_EQ(0ULL, val);
	ASSERT_EQ(0, htmm_write_str(path, "enabled"));
	ASSERT_EQ(0, stat_get(&self->c, "enabled", &val));
	EXPECT_EQ(1ULL, val);
	ASSERT_EQ(0, htmm_write_str(path, "disabled"));
	ASSERT_EQ(0, stat_get(&self->c, "enabled", &val));
	EXPECT_EQ(0ULL, val);
}

TEST_F(htmm_cg, stat_max_at_node_follows)
{
	static const char *const inputs[] = { "64M", "0", "4097", "max" };
	unsigned long long in_file = 0, in_stat = 0;
	char path[PATH_MAX], key[64];
	unsigned int j;
	int i;

	for (i = 0; i < self->c.nr_nodes; i++) {
		int nid = self->c.nodes[i];

		node_file(path, sizeof(path), self->c.cg, nid);
		snprintf(key, sizeof(key), "max_at_node%d", nid);

		ASSERT_EQ(0, stat_get(&self->c, key, &in_stat));
		EXPECT_EQ(HTMM_VALUE_MAX, in_stat) TH_LOG("%s default", key);
		for (j = 0; j < ARRAY_SIZE(inputs); j++) {
			ASSERT_EQ(0, htmm_write_str(path, inputs[j]));
			ASSERT_EQ(0, htmm_read_value(path, &in_file));
			ASSERT_EQ(0, stat_get(&self->c, key, &in_stat));
			EXPECT_EQ(in_file, in_stat)
				TH_LOG("%s after writing %s", key, inputs[j]);
		}
	}
}

/*
 * resident_node<N> accounts the cgroup's own pages: with a child holding
 * 16 MiB in the cgroup, each node's figure is at least what the child has
 * there (less 1 MiB for per-cpu stat batching) and their sum is no more
 * than memory.current.
 */
TEST_F_TIMEOUT(htmm_cg, stat_resident, 300)
{
	const struct htmm_workload w = {
		.size = 16 * MiB, .no_thp = true, .policy = -1, .hold = true,
	};
	unsigned long long res = 0, sum = 0, current = 0;
	struct htmm_result r;
	char path[PATH_MAX], key[64];
	int i, err;

	htmm_cg_ctx_file(path, sizeof(path), &self->c, ENABLED_FILE);
	ASSERT_EQ(0, htmm_write_str(path, "enabled"));

	ASSERT_EQ(0, htmm_workload_start(self->c.cg, &w, &self->c.child));
	ASSERT_EQ(0, htmm_workload_result(&self->c.child, &r));
	ASSERT_EQ(0, r.err) TH_LOG("child failed at %s: %s", r.step,
				   strerror(r.err));
	EXPECT_EQ(0UL, r.bad);

	for (i = 0; i < self->c.nr_nodes; i++) {
		int nid = self->c.nodes[i];

		snprintf(key, sizeof(key), "resident_node%d", nid);
		err = stat_get(&self->c, key, &res);
		ASSERT_EQ(0, err) TH_LOG("%s: %s", key, strerror(-err));
		TH_LOG("node%d: child has %lu KiB, %s %llu KiB", nid,
		       r.per_node[nid] * 4, key, res / 1024);
		EXPECT_LE(r.per_node[nid] * 4096ULL, res + MiB);
		sum += res;
	}
	htmm_cg_ctx_file(path, sizeof(path), &self->c, "memory.current");
	ASSERT_EQ(0, htmm_read_value(path, &current));
	TH_LOG("resident total %llu KiB, memory.current %llu KiB",
	       sum / 1024, current / 1024);
	EXPECT_LE(sum, current);
	EXPECT_LE(15ULL * MiB, sum);

	EXPECT_EQ(0, htmm_workload_stop(&self->c.child, false));
}

/* ------------------------------------------------------------------ */
/* debugfs inject and page_info: the numbers they take                 */
/* ------------------------------------------------------------------ */

#define INJECT_FILE	HTMM_DEBUGFS_DIR "/inject"
#define PAGE_INFO_FILE	HTMM_DEBUGFS_DIR "/page_info"

/*
 * A pid is decimal ("010" and "0x8" name no process, they are refused
 * rather than read as octal or hex) and a vaddr is never 0.  Each bad
 * record fails its write with EINVAL and injects nothing.
 */
TEST_F(htmm_cg, inject_numbers)
{
	static const char *const bad[] = {
		"0%o %p load-fast\n", "0x%x %p load-fast\n", "+%d %p store\n",
		"%d 0 load-fast\n", "%d 0x0 load-slow\n", "%d 00 store\n",
	};
	unsigned long long before, after;
	char line[128], go, *inject_page;
	unsigned int i;
	int pipefd[2];
	pid_t pid;
	int err;

	if (!htmm_path_exists(INJECT_FILE))
		SKIP(return, INJECT_FILE " not present (no CONFIG_HTMM_DEBUG?)");
	htmm_cg_ctx_write(_metadata, &self->c, ENABLED_FILE, "enabled");
	/* the child touches it first, after entering the cgroup */
	inject_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, inject_page);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		if (htmm_cg_enter(self->c.cg, getpid()))
			_exit(1);
		memset(inject_page, 1, 4096);
		/* drain this CPU's LRU add batch: samples need an LRU folio */
		if (madvise(inject_page, 4096, MADV_COLD))
			_exit(1);
		if (write(pipefd[1], "g", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	/* the fixture's teardown kills and reaps it */
	self->c.child.pid = pid;
	self->c.child.res_fd = -1;
	self->c.child.cmd_fd = -1;
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &go, 1)) TH_LOG("child did not start");
	close(pipefd[0]);

	/* a decimal record counts: the page is accounted in the cgroup */
	before = htmm_cg_ctx_stat(&self->c, "samples_inject");
	snprintf(line, sizeof(line), "%d %p load-fast\n", (int)pid,
		 (void *)inject_page);
	ASSERT_EQ(0, htmm_write_str(INJECT_FILE, line)) TH_LOG("%s", line);
	after = htmm_cg_ctx_stat(&self->c, "samples_inject");
	ASSERT_EQ(before + 1, after);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(line, sizeof(line), bad[i], (int)pid,
			 (void *)inject_page);
		err = htmm_write_str(INJECT_FILE, line);
		EXPECT_EQ(-EINVAL, err) TH_LOG("record \"%.*s\": %s",
					       (int)strlen(line) - 1, line,
					       err ? strerror(-err) : "taken");
	}
	EXPECT_EQ(after, htmm_cg_ctx_stat(&self->c, "samples_inject"))
		TH_LOG("a refused record was counted");

	/* page_info takes the same numbers */
	snprintf(line, sizeof(line), "%d %p", (int)pid, (void *)inject_page);
	EXPECT_EQ(0, htmm_write_str(PAGE_INFO_FILE, line)) TH_LOG("%s", line);
	snprintf(line, sizeof(line), "0x%x %p", (int)pid, (void *)inject_page);
	EXPECT_EQ(-EINVAL, htmm_write_str(PAGE_INFO_FILE, line))
		TH_LOG("%s", line);
	snprintf(line, sizeof(line), "%d 0", (int)pid);
	EXPECT_EQ(-EINVAL, htmm_write_str(PAGE_INFO_FILE, line))
		TH_LOG("%s", line);
}

TEST_HARNESS_MAIN
