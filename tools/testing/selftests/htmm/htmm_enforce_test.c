// SPDX-License-Identifier: GPL-2.0
/*
 * Enforcement of memory.max_at_node<N> at page allocation.
 *
 * For a cgroup with memory.htmm_enabled=enabled, an anonymous allocation
 * with the default (local) mempolicy is not placed on node N once the
 * cgroup's resident pages on N reached memory.max_at_node<N>; it goes to
 * the next node instead. Explicit mempolicies win over the limit, and an
 * allocation never fails because of it.
 *
 * Expected layout: node 0 has the CPUs and the fast memory, node 1 is a
 * CPU-less slow memory node. Each workload runs in a forked child inside
 * the test cgroup, touches every 4 KiB page of an anonymous mapping and
 * reports per-node page counts (move_pages) back over a pipe.
 */
#define _GNU_SOURCE
#include "htmm_util.h"	/* includes kselftest_harness.h */

#define SLACK		(2 * MiB)	/* one THP worth of overshoot */
#define WORKLOAD_TIMEOUT 600		/* seconds; TCG is slow */

/* Write a cgroup file of the test cgroup; the write must succeed. */
static void cg_write(struct __test_metadata *_metadata,
		     const struct htmm_cg_ctx *c, const char *file,
		     const char *val)
{
	char path[PATH_MAX];
	int err;

	htmm_cg_ctx_file(path, sizeof(path), c, file);
	err = htmm_write_str(path, val);
	ASSERT_EQ(0, err) TH_LOG("write %s to %s: %s", val, path,
				 strerror(-err));
}

static void set_limit(struct __test_metadata *_metadata,
		      const struct htmm_cg_ctx *c, int node, const char *val)
{
	char file[64];

	snprintf(file, sizeof(file), "memory.max_at_node%d", node);
	cg_write(_metadata, c, file, val);
}

static void set_enabled(struct __test_metadata *_metadata,
			const struct htmm_cg_ctx *c, bool on)
{
	cg_write(_metadata, c, "memory.htmm_enabled",
		 on ? "enabled" : "disabled");
}

static unsigned long long stat_value(struct __test_metadata *_metadata,
				     const struct htmm_cg_ctx *c,
				     const char *key)
{
	unsigned long long val = 0;
	char path[PATH_MAX];
	int err;

	htmm_cg_ctx_file(path, sizeof(path), c, "memory.htmm_stat");
	err = htmm_keyed_get(path, key, &val);
	EXPECT_EQ(0, err) TH_LOG("memory.htmm_stat %s: %s", key,
				 strerror(-err));
	return val;
}

static unsigned long long vmstat_value(struct __test_metadata *_metadata,
				       const char *key)
{
	unsigned long long val = 0;
	int err;

	err = htmm_vmstat_get(key, &val);
	EXPECT_EQ(0, err) TH_LOG("/proc/vmstat %s: %s", key, strerror(-err));
	return val;
}

static unsigned long long node_bytes(const struct htmm_result *r, int node)
{
	return r->per_node[node] * 4096ULL;
}

/* Log a result and check that every page was touched and located. */
static void check_result(struct __test_metadata *_metadata,
			 const struct htmm_result *r, const char *what)
{
	char placed[160];

	ASSERT_EQ(0, r->err) TH_LOG("%s: child failed at %s: %s", what,
				    r->step, strerror(r->err));
	snprintf(placed, sizeof(placed),
		 "node%d %llu KiB, node%d %llu KiB, other %llu KiB",
		 HTMM_FAST_NODE, node_bytes(r, HTMM_FAST_NODE) / 1024,
		 HTMM_SLOW_NODE, node_bytes(r, HTMM_SLOW_NODE) / 1024,
		 (htmm_total_pages(r) - r->per_node[HTMM_FAST_NODE] -
		  r->per_node[HTMM_SLOW_NODE]) * 4ULL);
	TH_LOG("%s: %s, unplaced %lu pages, of %lu KiB; AnonHugePages %ld kB",
	       what, placed, r->bad, r->pages * 4, r->anon_huge_kb);
	EXPECT_EQ(0UL, r->bad) TH_LOG("pages not present after touching");
	EXPECT_EQ(r->pages, htmm_total_pages(r));
}

/* THP "always" for the test; the context's teardown restores the mode. */
static void thp_always(struct __test_metadata *_metadata,
		       struct htmm_cg_ctx *c)
{
	int err = htmm_thp_get(c->thp_saved, sizeof(c->thp_saved));

	ASSERT_EQ(0, err) TH_LOG("parse %s: %s", HTMM_THP_ENABLED,
				 strerror(-err));
	err = htmm_thp_set("always");
	ASSERT_EQ(0, err) TH_LOG("set THP always: %s", strerror(-err));
}

/* Start the workload and wait for its first report. */
static void run_workload(struct __test_metadata *_metadata,
			 struct htmm_cg_ctx *c, const struct htmm_workload *w,
			 struct htmm_result *r, const char *what)
{
	int err;

	err = htmm_workload_start(c->cg, w, &c->child);
	ASSERT_EQ(0, err) TH_LOG("fork: %s", strerror(-err));
	err = htmm_workload_result(&c->child, r);
	ASSERT_EQ(0, err) TH_LOG("%s: child died before reporting", what);
	check_result(_metadata, r, what);
}

/* Let the child exit; it must exit with status 0. */
static void finish_workload(struct __test_metadata *_metadata,
			    struct htmm_cg_ctx *c)
{
	int status = htmm_workload_stop(&c->child, false);

	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("workload child wait status 0x%x", status);
}

FIXTURE(htmm_enforce) {
	struct htmm_cg_ctx c;
};

/*
 * These tests check where the allocator puts pages, so kmigraterd must
 * not move them meanwhile: htmm_mode 0 (classify only) while they run.
 */
static char saved_mode[16];

static void migration_off(struct __test_metadata *_metadata)
{
	ASSERT_LT(0, htmm_read_file(HTMM_SYSFS_DIR "/htmm_mode", saved_mode,
				    sizeof(saved_mode)));
	saved_mode[strcspn(saved_mode, "\n")] = '\0';
	ASSERT_EQ(0, htmm_tunable_set("htmm_mode", "0"));
}

static void migration_restore(void)
{
	if (saved_mode[0])
		htmm_tunable_set("htmm_mode", saved_mode);
}

FIXTURE_SETUP(htmm_enforce)
{
	migration_off(_metadata);
	htmm_cg_ctx_setup(_metadata, &self->c, true);
}

static void hugetlb_restore(void);

FIXTURE_TEARDOWN(htmm_enforce)
{
	htmm_cg_ctx_teardown(_metadata, &self->c);
	migration_restore();
	hugetlb_restore();
}

/*
 * 64 MiB of base pages with a 32 MiB limit on node 0: node 0 fills up to
 * about the limit, the other half goes to node 1, and the redirections
 * are counted in memory.htmm_stat and /proc/vmstat.  (Each base page is a
 * fault, about 0.15 s a MiB under TCG and KASAN: twice the limit is
 * enough.)
 */
TEST_F_TIMEOUT(htmm_enforce, base_pages, WORKLOAD_TIMEOUT)
{
	const struct htmm_workload w = {
		.size = 64 * MiB, .no_thp = true, .policy = -1, .hold = true,
	};
	unsigned long long cg_before, cg_after, vm_before, vm_after, res;
	struct htmm_result r;

	set_limit(_metadata, &self->c, HTMM_FAST_NODE, "32M");
	set_enabled(_metadata, &self->c, true);
	cg_before = stat_value(_metadata, &self->c, "alloc_redirected");
	vm_before = vmstat_value(_metadata, "htmm_alloc_redirected");

	run_workload(_metadata, &self->c, &w, &r, "64M base pages, limit 32M");
	EXPECT_GE(32 * MiB + SLACK, node_bytes(&r, HTMM_FAST_NODE));
	EXPECT_LE(16 * MiB, node_bytes(&r, HTMM_FAST_NODE))
		TH_LOG("node %d should fill up to about the limit", HTMM_FAST_NODE);
	EXPECT_EQ(r.pages - r.per_node[HTMM_FAST_NODE], r.per_node[HTMM_SLOW_NODE]);

	/* counters, while the child still holds its memory */
	cg_after = stat_value(_metadata, &self->c, "alloc_redirected");
	vm_after = vmstat_value(_metadata, "htmm_alloc_redirected");
	res = stat_value(_metadata, &self->c, "resident_node0");
	TH_LOG("alloc_redirected: cgroup %llu -> %llu, vmstat %llu -> %llu; "
	       "resident_node0 %llu KiB",
	       cg_before, cg_after, vm_before, vm_after, res / 1024);
	EXPECT_LT(cg_before, cg_after);
	EXPECT_LT(vm_before, vm_after);
	EXPECT_GE(32 * MiB + SLACK, res);

	finish_workload(_metadata, &self->c);
}

/* Same with THP: 2 MiB aligned, MADV_HUGEPAGE, THP mode "always". */
TEST_F_TIMEOUT(htmm_enforce, thp, WORKLOAD_TIMEOUT)
{
	const struct htmm_workload w = {
		.size = 256 * MiB, .thp = true, .policy = -1,
	};
	struct htmm_result r;

	if (!htmm_path_exists(HTMM_THP_ENABLED))
		SKIP(return, "THP not configured (%s missing)",
		     HTMM_THP_ENABLED);
	thp_always(_metadata, &self->c);

	set_limit(_metadata, &self->c, HTMM_FAST_NODE, "64M");
	set_enabled(_metadata, &self->c, true);

	run_workload(_metadata, &self->c, &w, &r, "256M THP, limit 64M");
	EXPECT_LT(0, r.anon_huge_kb) TH_LOG("no THP was allocated");
	EXPECT_GE(64 * MiB + SLACK, node_bytes(&r, HTMM_FAST_NODE));
	EXPECT_LE(32 * MiB, node_bytes(&r, HTMM_FAST_NODE))
		TH_LOG("node %d should fill up to about the limit", HTMM_FAST_NODE);
	EXPECT_EQ(r.pages - r.per_node[HTMM_FAST_NODE], r.per_node[HTMM_SLOW_NODE]);
	TH_LOG("alloc_redirected %llu",
	       stat_value(_metadata, &self->c, "alloc_redirected"));

	finish_workload(_metadata, &self->c);
}

#define FILL_CHUNKS	4096

/* The test's own hold on node 0's free memory. */
struct node_fill {
	void *chunk[FILL_CHUNKS];
	size_t len[FILL_CHUNKS];
	unsigned int nr;
};

static long long node0_free_kb(void)
{
	char path[] = "/sys/devices/system/node/node0/meminfo", line[256];
	long long kb = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node 0 MemFree: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Map and mlock @len bytes of base pages; false if that failed. */
static bool fill_chunk(struct node_fill *f, size_t len)
{
	void *p;

	if (f->nr == FILL_CHUNKS)
		return false;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	if (madvise(p, len, MADV_NOHUGEPAGE) || mlock(p, len)) {
		munmap(p, len);
		return false;
	}
	f->chunk[f->nr] = p;
	f->len[f->nr++] = len;
	return true;
}

#define NODE0_HUGETLB \
	"/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages"

/* Node 0's 2 MiB hugetlb pool before the test grew it, or -1. */
static long long hugetlb_saved = -1;

static void hugetlb_restore(void)
{
	char buf[32];

	if (hugetlb_saved < 0)
		return;
	snprintf(buf, sizeof(buf), "%lld", hugetlb_saved);
	htmm_write_str(NODE0_HUGETLB, buf);
	hugetlb_saved = -1;
}

/*
 * Most of node 0's free memory into its hugetlb pool at once, all but
 * 32 MiB: no page faults, where mlocking it all took 40 s in the debug
 * guest.  Restored by unfill() or the fixture's teardown.
 */
static void fill_hugetlb(struct __test_metadata *_metadata)
{
	char buf[32];
	long long want;

	if (htmm_read_file(NODE0_HUGETLB, buf, sizeof(buf)) <= 0)
		return;		/* no hugetlb: the chunks do it all */
	hugetlb_saved = atoll(buf);
	want = hugetlb_saved + (node0_free_kb() - 32 * 1024) / 2048;
	if (want <= hugetlb_saved)
		return;
	snprintf(buf, sizeof(buf), "%lld", want);
	ASSERT_EQ(0, htmm_write_str(NODE0_HUGETLB, buf));
}

/*
 * Take node 0's free memory down to its low watermark: its hugetlb pool
 * first, then mlocked chunks of base pages, preferring node 0, until
 * three in a row of each size (4 MiB, then 64 KiB) no longer lower it by
 * half their size; beyond that mark the page allocator gives them node
 * 1's pages.
 */
static void fill_node0(struct __test_metadata *_metadata, struct node_fill *f)
{
	static const size_t sizes[] = { 4 * MiB, 64 * KiB };
	unsigned long node0 = 1UL << HTMM_FAST_NODE;
	long long before, after;
	unsigned int i, miss;

	fill_hugetlb(_metadata);

	ASSERT_EQ(0, syscall(SYS_set_mempolicy, 1 /* MPOL_PREFERRED */,
			     &node0, sizeof(node0) * 8));
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		for (miss = 0; miss < 3;) {
			before = node0_free_kb();
			ASSERT_TRUE(fill_chunk(f, sizes[i]))
				TH_LOG("mlock of chunk %u: %s", f->nr,
				       strerror(errno));
			after = node0_free_kb();
			miss = before - after < (long long)sizes[i] / 2048 ?
			       miss + 1 : 0;
		}
	}
	ASSERT_EQ(0, syscall(SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, NULL, 0));
}

static void unfill(struct node_fill *f)
{
	while (f->nr) {
		f->nr--;
		munmap(f->chunk[f->nr], f->len[f->nr]);
	}
	hugetlb_restore();
}

/*
 * A huge page goes to node 1 when node 0 itself is full, within the
 * cgroup's budget.  The test takes node 0 down to its low watermark; the
 * child's 32 MiB are 2 MiB aligned, without MADV_HUGEPAGE (THP "always",
 * so no direct reclaim).  On node 0 such a huge page fails, and the fault
 * falls back to base pages on node 1: htmm sends it to node 1 instead, as
 * a huge page.
 */
TEST_F_TIMEOUT(htmm_enforce, thp_full_node, WORKLOAD_TIMEOUT)
{
	const struct htmm_workload w = {
		.size = 32 * MiB, .thp = true, .thp_system = true,
		.policy = -1, .hold = true,
	};
	unsigned long long redirected;
	struct node_fill *f;
	struct htmm_result r;
	long long free_kb, free_after;

	if (!htmm_path_exists(HTMM_THP_ENABLED))
		SKIP(return, "THP not configured (%s missing)",
		     HTMM_THP_ENABLED);
	thp_always(_metadata, &self->c);
	set_enabled(_metadata, &self->c, true);
	f = calloc(1, sizeof(*f));
	ASSERT_NE(NULL, f);

	fill_node0(_metadata, f);
	free_kb = node0_free_kb();
	run_workload(_metadata, &self->c, &w, &r, "32M THP, node 0 full");
	free_after = node0_free_kb();
	redirected = stat_value(_metadata, &self->c, "alloc_redirected");
	TH_LOG("filled with %u chunks, node 0 free %lld kB, %lld kB after; alloc_redirected %llu",
	       f->nr, free_kb, free_after, redirected);
	finish_workload(_metadata, &self->c);
	unfill(f);
	free(f);
	/*
	 * kswapd, woken by the fill, may give node 0 back a few MiB (slab,
	 * KASAN's quarantine), and huge pages that fit there stay there.
	 */
	EXPECT_LE(16 * MiB, node_bytes(&r, HTMM_SLOW_NODE));
	EXPECT_LE(8ULL, redirected);
	EXPECT_LE(28 * 1024, r.anon_huge_kb)
		TH_LOG("the huge pages became base pages");
}

/*
 * Negative control: base_pages's limit without htmm enabled is not
 * enforced.
 */
TEST_F_TIMEOUT(htmm_enforce, disabled_control, WORKLOAD_TIMEOUT)
{
	const struct htmm_workload w = {
		.size = 64 * MiB, .no_thp = true, .policy = -1,
	};
	char path[PATH_MAX], buf[64];
	struct htmm_result r;

	set_limit(_metadata, &self->c, HTMM_FAST_NODE, "32M");
	htmm_cg_ctx_file(path, sizeof(path), &self->c, "memory.htmm_enabled");
	ASSERT_LE(0, htmm_read_file(path, buf, sizeof(buf)));
	ASSERT_EQ(0, strcmp(buf, "disabled\n")) TH_LOG("htmm_enabled: %s", buf);

	run_workload(_metadata, &self->c, &w, &r,
		     "64M base pages, limit 32M, htmm disabled");
	EXPECT_LT(32 * MiB + SLACK, node_bytes(&r, HTMM_FAST_NODE))
		TH_LOG("without htmm the limit must not move pages");

	finish_workload(_metadata, &self->c);
}

/* A zero limit keeps everything off node 0. */
TEST_F_TIMEOUT(htmm_enforce, limit_zero, WORKLOAD_TIMEOUT)
{
	const struct htmm_workload w = {
		.size = 32 * MiB, .no_thp = true, .policy = -1,
	};
	struct htmm_result r;

	set_limit(_metadata, &self->c, HTMM_FAST_NODE, "0");
	set_enabled(_metadata, &self->c, true);

	run_workload(_metadata, &self->c, &w, &r, "32M, limit 0");
	EXPECT_GE(1 * MiB, node_bytes(&r, HTMM_FAST_NODE));
	EXPECT_LE(31 * MiB, node_bytes(&r, HTMM_SLOW_NODE));

	finish_workload(_metadata, &self->c);
}

/* With every node at its limit the allocation still succeeds. */
TEST_F_TIMEOUT(htmm_enforce, never_fail, WORKLOAD_TIMEOUT)
{
	const struct htmm_workload w = {
		.size = 32 * MiB, .no_thp = true, .policy = -1,
	};
	unsigned long long before, after;
	struct htmm_result r;

	set_limit(_metadata, &self->c, HTMM_FAST_NODE, "0");
	set_limit(_metadata, &self->c, HTMM_SLOW_NODE, "0");
	set_enabled(_metadata, &self->c, true);
	before = vmstat_value(_metadata, "htmm_alloc_over_limit");

	run_workload(_metadata, &self->c, &w, &r, "32M, all limits 0");
	EXPECT_EQ(32 * MiB / 4096, r.pages);
	finish_workload(_metadata, &self->c);

	after = vmstat_value(_metadata, "htmm_alloc_over_limit");
	TH_LOG("htmm_alloc_over_limit %llu -> %llu", before, after);
}

/*
 * Lowering the limit below the current use is accepted, and from then on
 * new pages go to the next node.
 */
TEST_F_TIMEOUT(htmm_enforce, lower_limit_below_use, WORKLOAD_TIMEOUT)
{
	const struct htmm_workload w = {
		.size = 32 * MiB, .no_thp = true, .policy = -1, .hold = true,
	};
	unsigned long long val = 0;
	char path[PATH_MAX];
	struct htmm_result r;

	set_enabled(_metadata, &self->c, true);
	run_workload(_metadata, &self->c, &w, &r, "32M, limit max");
	/* well above the 16M set next, by more than SLACK */
	ASSERT_LE(24 * MiB, node_bytes(&r, HTMM_FAST_NODE))
		TH_LOG("premise: the first 32M should be mostly on node %d",
		       HTMM_FAST_NODE);

	set_limit(_metadata, &self->c, HTMM_FAST_NODE, "16M");
	htmm_cg_ctx_file(path, sizeof(path), &self->c, "memory.max_at_node0");
	ASSERT_EQ(0, htmm_read_value(path, &val));
	EXPECT_EQ(16ULL * MiB, val);
	EXPECT_EQ(16ULL * MiB,
		  stat_value(_metadata, &self->c, "max_at_node0"));

	/* the child is still alive; its next 32M must avoid node 0 */
	ASSERT_EQ(0, htmm_workload_cmd(&self->c.child, HTMM_CMD_ALLOC));
	ASSERT_EQ(0, htmm_workload_result(&self->c.child, &r));
	check_result(_metadata, &r, "next 32M, limit lowered to 16M");
	EXPECT_GE(1 * MiB, node_bytes(&r, HTMM_FAST_NODE));

	finish_workload(_metadata, &self->c);
}

/* Explicit mempolicies win over the limit (max_at_node0 = 0). */
FIXTURE(htmm_policy) {
	struct htmm_cg_ctx c;
};

FIXTURE_VARIANT(htmm_policy) {
	int mode;
	bool use_mbind;
	unsigned long nodemask;
	bool all_on_fast;	/* else: interleaved over both nodes */
};

FIXTURE_VARIANT_ADD(htmm_policy, set_mempolicy_bind) {
	.mode = MPOL_BIND, .nodemask = 1UL << HTMM_FAST_NODE, .all_on_fast = true,
};

FIXTURE_VARIANT_ADD(htmm_policy, set_mempolicy_preferred) {
	.mode = MPOL_PREFERRED, .nodemask = 1UL << HTMM_FAST_NODE,
	.all_on_fast = true,
};

FIXTURE_VARIANT_ADD(htmm_policy, mbind_bind) {
	.mode = MPOL_BIND, .use_mbind = true, .nodemask = 1UL << HTMM_FAST_NODE,
	.all_on_fast = true,
};

FIXTURE_VARIANT_ADD(htmm_policy, set_mempolicy_interleave) {
	.mode = MPOL_INTERLEAVE,
	.nodemask = (1UL << HTMM_FAST_NODE) | (1UL << HTMM_SLOW_NODE),
};

FIXTURE_SETUP(htmm_policy)
{
	migration_off(_metadata);
	htmm_cg_ctx_setup(_metadata, &self->c, true);
}

FIXTURE_TEARDOWN(htmm_policy)
{
	htmm_cg_ctx_teardown(_metadata, &self->c);
	migration_restore();
}

TEST_F_TIMEOUT(htmm_policy, wins_over_limit, WORKLOAD_TIMEOUT)
{
	const struct htmm_workload w = {
		.size = 16 * MiB, .no_thp = true, .policy = variant->mode,
		.policy_mbind = variant->use_mbind,
		.nodemask = variant->nodemask,
	};
	struct htmm_result r;

	set_limit(_metadata, &self->c, HTMM_FAST_NODE, "0");
	set_enabled(_metadata, &self->c, true);

	run_workload(_metadata, &self->c, &w, &r, "16M with policy, limit 0");
	if (variant->all_on_fast) {
		EXPECT_EQ(r.pages, r.per_node[HTMM_FAST_NODE]);
	} else {
		EXPECT_LE(r.pages / 4, r.per_node[HTMM_FAST_NODE]);
		EXPECT_LE(r.pages / 4, r.per_node[HTMM_SLOW_NODE]);
	}

	finish_workload(_metadata, &self->c);
}

TEST_HARNESS_MAIN
