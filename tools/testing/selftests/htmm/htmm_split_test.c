// SPDX-License-Identifier: GPL-2.0
/*
 * Huge pages with skewed accesses: htmm splits them and moves only their
 * hot subpages to the fast tier; uniformly accessed huge pages stay whole
 * and move whole; htmm_thres_split=0 turns splitting off; khugepaged does
 * not collapse what htmm split during the cooldown.  Samples come from the
 * injector, so the access pattern is exact.  Every wait is for a condition
 * with a generous deadline.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/uio.h>
#include <time.h>

#include "htmm_util.h"

#define KHUGEPAGED	"/sys/kernel/mm/transparent_hugepage/khugepaged"
#define PAGE_SZ		4096UL
#define HPAGE_SZ	(2UL << 20)
#define MAX_REGION	(64 * MiB)
#define MAX_HPAGES	(MAX_REGION / HPAGE_SZ)
/*
 * 64 MiB; the tests that fault the region in on node 0 use 16 MiB, since
 * the debug kernel leaves node 0 about 150 MiB.  Each test runs in a child
 * of its own, so a test that changes it changes it for itself only.
 */
static size_t region_sz = MAX_REGION;
#define REGION		region_sz
#define NR_HPAGES	(REGION / HPAGE_SZ)
#define HOT_SUB		7		/* the hot subpage of each huge page */

static const char * const tunables[] = {
	"htmm_sampler", "htmm_mode", "htmm_thres_split", "htmm_split_period",
	"htmm_cooling_period", "htmm_adaptation_period",
	"htmm_promotion_period_in_ms", "htmm_demotion_period_in_ms",
	"htmm_split_cooldown_ms", "htmm_promotion_watermark",
	"htmm_demotion_watermark",
};

#define NR_TUNABLES	ARRAY_SIZE(tunables)

static const char * const khp_files[] = {
	"scan_sleep_millisecs", "alloc_sleep_millisecs", "pages_to_scan",
};

#define NR_KHP		ARRAY_SIZE(khp_files)

FIXTURE(htmm_split) {
	struct htmm_cg_ctx c;
	char saved[NR_TUNABLES][32];
	char khp[NR_KHP][32];
	char *region;
};

static int set_tunable(const char *name, const char *val)
{
	return htmm_tunable_set(name, val);
}

FIXTURE_SETUP(htmm_split)
{
	if (!htmm_path_exists(HTMM_DEBUGFS_DIR "/inject"))
		SKIP(return, "no htmm debugfs (CONFIG_HTMM_DEBUG)");
	if (!htmm_path_exists(HTMM_THP_ENABLED))
		SKIP(return, "no transparent huge pages");
	htmm_cg_ctx_setup(_metadata, &self->c, true);
	htmm_save_files(HTMM_SYSFS_DIR, tunables, NR_TUNABLES, self->saved);
	htmm_save_files(KHUGEPAGED, khp_files, NR_KHP, self->khp);
	ASSERT_EQ(0, htmm_thp_get(self->c.thp_saved,
				  sizeof(self->c.thp_saved)));
	ASSERT_EQ(0, htmm_thp_set("always"));
	ASSERT_EQ(0, set_tunable("htmm_sampler", "inject"));
	ASSERT_EQ(0, set_tunable("htmm_mode", "2"));
	ASSERT_EQ(0, set_tunable("htmm_thres_split", "2"));
	ASSERT_EQ(0, set_tunable("htmm_split_period", "1"));
	ASSERT_EQ(0, set_tunable("htmm_cooling_period", "1024"));
	ASSERT_EQ(0, set_tunable("htmm_adaptation_period", "256"));
	ASSERT_EQ(0, set_tunable("htmm_promotion_period_in_ms", "100"));
	ASSERT_EQ(0, set_tunable("htmm_demotion_period_in_ms", "100"));
}

FIXTURE_TEARDOWN(htmm_split)
{
	if (self->region)
		munmap(self->region, REGION);
	htmm_cg_enter(HTMM_CGROUP_ROOT, getpid());
	htmm_cg_ctx_teardown(_metadata, &self->c);
	htmm_restore_files(HTMM_SYSFS_DIR, tunables, NR_TUNABLES, self->saved);
	htmm_restore_files(KHUGEPAGED, khp_files, NR_KHP, self->khp);
}

/*
 * Enter the cgroup with budget @max0 on node 0 and fault a huge-page
 * region in on node @nid.  Skips if the region did not get huge pages.
 * Return: false if the test is to end (a SKIP here returns from here
 * only).
 */
static bool setup_region_on(struct __test_metadata *_metadata,
			    const struct htmm_cg_ctx *c, char **region,
			    const char *max0, int nid)
{
	unsigned long mask = 1UL << nid;
	long before, after;
	char *p;

	htmm_cg_ctx_write(_metadata, c, "memory.max_at_node0", max0);
	htmm_cg_ctx_write(_metadata, c, "memory.htmm_enabled", "enabled");
	ASSERT_EQ(0, htmm_cg_enter(c->cg, getpid()));
	p = mmap(NULL, REGION + HPAGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	p = (char *)(((unsigned long)p + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
	*region = p;
	ASSERT_EQ(0, madvise(p, REGION, MADV_HUGEPAGE));
	ASSERT_EQ(0, syscall(SYS_mbind, p, REGION, HTMM_MPOL_BIND, &mask, 64, 0));
	before = htmm_anon_huge_kb();
	memset(p, 0x3c, REGION);
	after = htmm_anon_huge_kb();
	ASSERT_EQ(0, syscall(SYS_mbind, p, REGION, HTMM_MPOL_DEFAULT, NULL, 0, 0));
	if (after - before < (long)(REGION / KiB) * 9 / 10)
		SKIP(return false, "the region got %ld kB of huge pages",
		     after - before);
	return true;
}

/* The same, on the slow node. */
static bool setup_region(struct __test_metadata *_metadata,
			 const struct htmm_cg_ctx *c, char **region,
			 const char *max0)
{
	return setup_region_on(_metadata, c, region, max0, HTMM_SLOW_NODE);
}

/* Huge pages of the last round in the skew classes @lo to @hi - 1. */
static unsigned long long skew_classes(const struct htmm_cg_ctx *c, int lo,
				       int hi)
{
	unsigned long long n = 0;
	char name[16];
	int k;

	for (k = lo; k < hi; k++) {
		snprintf(name, sizeof(name), "skew_%d", k);
		n += htmm_cg_ctx_stat(c, name);
	}
	return n;
}

/* Huge pages of the last round in the skew classes 8 and up. */
static unsigned long long very_skewed(const struct htmm_cg_ctx *c)
{
	return skew_classes(c, 8, 16);
}

/* Inject @per samples on subpage @sub of every huge page (all if -1). */
static int add_samples(char *region, int sub, int per)
{
	enum { LINE = 48 };
	size_t n = sub < 0 ? REGION / PAGE_SZ : NR_HPAGES, i, off = 0;
	size_t cap = 4096 * LINE;
	char *buf = malloc(cap);
	int k, ret = 0;

	if (!buf)
		return -ENOMEM;
	for (k = 0; k < per; k++) {
		for (i = 0; i < n; i++) {
			char *a = sub < 0 ? region + i * PAGE_SZ :
				  region + i * HPAGE_SZ + sub * PAGE_SZ;

			off += snprintf(buf + off, LINE, "%d %p load-slow\n",
					(int)getpid(), a);
			if (off > cap - LINE) {
				if (htmm_write_file(HTMM_DEBUGFS_DIR "/inject", buf, off) < 0)
					ret = -EIO;
				off = 0;
			}
		}
	}
	if (off && htmm_write_file(HTMM_DEBUGFS_DIR "/inject", buf, off) < 0)
		ret = -EIO;
	free(buf);
	return ret;
}

/* Hot subpages (HOT_SUB of each huge page) on node 0. */
static int hot_on_fast(char *region)
{
	void *pages[MAX_HPAGES];
	int status[MAX_HPAGES], n = 0;
	unsigned long i;

	for (i = 0; i < NR_HPAGES; i++)
		pages[i] = region + i * HPAGE_SZ + HOT_SUB * PAGE_SZ;
	if (syscall(SYS_move_pages, 0, NR_HPAGES, pages, NULL, status, 0))
		return -errno;
	for (i = 0; i < NR_HPAGES; i++)
		n += status[i] == HTMM_FAST_NODE;
	return n;
}

/*
 * Wait up to 400 s, adding samples on the hot subpages, for every huge
 * page of the region to be split and its hot subpage to be on node 0.
 * The hot subpages there land in *@hot.  Return: the huge pages split.
 */
static unsigned long long wait_hot_split(struct __test_metadata *_metadata,
					 const struct htmm_cg_ctx *c,
					 char *region, int *hot)
{
	double t0 = htmm_now_s();
	unsigned long long done = 0;

	while (htmm_now_s() - t0 < 400) {
		ASSERT_EQ(0, add_samples(region, HOT_SUB, 8));
		done = htmm_cg_ctx_stat(c, "split_done");
		*hot = hot_on_fast(region);
		if (done >= NR_HPAGES && *hot == (int)NR_HPAGES)
			break;
		usleep(100000);
	}
	return done;
}

/* The cgroup's split and move counters, for the log. */
static void log_split(struct __test_metadata *_metadata,
		      const struct htmm_cg_ctx *c)
{
	TH_LOG("split: %llu rounds, %llu requested, %llu done, %llu failed, %llu for room",
	       htmm_cg_ctx_stat(c, "split_rounds"),
	       htmm_cg_ctx_stat(c, "split_requested"),
	       htmm_cg_ctx_stat(c, "split_done"),
	       htmm_cg_ctx_stat(c, "split_failed"),
	       htmm_cg_ctx_stat(c, "split_for_room"));
	TH_LOG("split: last round %llu skewed, %llu wanted",
	       htmm_cg_ctx_stat(c, "split_last_skewed"),
	       htmm_cg_ctx_stat(c, "split_last_wanted"));
	TH_LOG("moves: %llu promoted, %llu demoted, %llu failed; AnonHugePages %ld kB",
	       htmm_cg_ctx_stat(c, "promoted"),
	       htmm_cg_ctx_stat(c, "demoted"),
	       htmm_cg_ctx_stat(c, "migrate_failed"), htmm_anon_huge_kb());
}

/* Skewed huge pages are split; their hot subpages alone go to node 0. */
TEST_F_TIMEOUT(htmm_split, skewed_split, 600)
{
	unsigned long per_node[HTMM_MAX_NODES], bad;
	unsigned long long done = 0;
	double t0 = htmm_now_s();
	int hot = 0;

	if (!setup_region(_metadata, &self->c, &self->region, "1M"))
		return;
	done = wait_hot_split(_metadata, &self->c, self->region, &hot);
	TH_LOG("after %.1f s: %llu huge pages split, %d of %lu hot subpages on node 0",
	       htmm_now_s() - t0, done, hot, NR_HPAGES);
	TH_LOG("split rounds %llu, requested %llu, failed %llu, stopped %llu",
	       htmm_cg_ctx_stat(&self->c, "split_rounds"),
	       htmm_cg_ctx_stat(&self->c, "split_requested"),
	       htmm_cg_ctx_stat(&self->c, "split_failed"),
	       htmm_cg_ctx_stat(&self->c, "split_stopped"));
	TH_LOG("hit share %llu/1000, as if split %llu/1000; last round: %llu skewed, %llu chosen",
	       htmm_cg_ctx_stat(&self->c, "split_hit_permille"),
	       htmm_cg_ctx_stat(&self->c, "split_hit_permille_if_split"),
	       htmm_cg_ctx_stat(&self->c, "split_last_skewed"),
	       htmm_cg_ctx_stat(&self->c, "split_last_wanted"));
	EXPECT_LE(NR_HPAGES, done);
	EXPECT_EQ((int)NR_HPAGES, hot);
	ASSERT_EQ(0, htmm_count_nodes(self->region, REGION, per_node, &bad));
	TH_LOG("region: %lu KiB on node 0, %lu KiB on node 1",
	       per_node[HTMM_FAST_NODE] * 4, per_node[HTMM_SLOW_NODE] * 4);
	/* At most 4x the hot bytes in the fast tier (512x without split). */
	EXPECT_GE(4 * NR_HPAGES, per_node[HTMM_FAST_NODE]);
	EXPECT_LE(REGION / PAGE_SZ - 4 * NR_HPAGES, per_node[HTMM_SLOW_NODE]);
}

/*
 * Fill node 0 up to the cgroup's promotion limit with a 16 MiB region of
 * skewed huge pages, their samples in, then start split rounds (one per
 * cooling).  Budget 20 MiB: promotion stops at 15 MiB (watermark 25%), so
 * the region leaves no room, while nothing is over the budget to demote
 * (watermark 0).  Splitting only for the hit-share gap would stop after a
 * few huge pages: the rest fit in the capacity.  Before the rounds start,
 * @busy (if not NULL) gets a pipe holding a reference to a cold subpage
 * of the first huge page, as vmsplice() leaves it.  Return: false if the
 * test is to end.
 */
static bool fill_fast_then_split(struct __test_metadata *_metadata,
				 const struct htmm_cg_ctx *c, char **region,
				 int *busy)
{
	double t0 = htmm_now_s();
	struct iovec iov;

	region_sz = 16 * MiB;
	ASSERT_EQ(0, set_tunable("htmm_promotion_watermark", "250"));
	ASSERT_EQ(0, set_tunable("htmm_demotion_watermark", "0"));
	/*
	 * A round decides once whether the node is full: one that saw only
	 * some huge pages would split those, the room would be back and the
	 * others would stay whole (as documented).  So no round until every
	 * huge page has its samples in (htmm_split_period 1000).
	 */
	ASSERT_EQ(0, set_tunable("htmm_split_period", "1000"));
	if (!setup_region_on(_metadata, c, region, "20M",
			     HTMM_FAST_NODE))
		return false;
	if (busy) {
		ASSERT_EQ(0, pipe(busy));
		iov.iov_base = *region + PAGE_SZ;
		iov.iov_len = PAGE_SZ;
		ASSERT_EQ((ssize_t)PAGE_SZ, vmsplice(busy[1], &iov, 1, 0));
	}
	ASSERT_EQ(0, add_samples(*region, HOT_SUB, 8));
	while (htmm_cg_ctx_stat(c, "samples_inject") < 8 * NR_HPAGES &&
	       htmm_now_s() - t0 < 30)
		usleep(10000);
	ASSERT_LE(8 * NR_HPAGES, htmm_cg_ctx_stat(c, "samples_inject"));
	ASSERT_EQ(0, set_tunable("htmm_split_period", "1"));
	return true;
}

/*
 * Wait up to @secs, adding samples, until @stat reaches @want.  Return:
 * the value it had last.
 */
static unsigned long long wait_stat(struct __test_metadata *_metadata,
				    const struct htmm_cg_ctx *c,
				    char *region, const char *stat,
				    unsigned long long want, double secs)
{
	double t0 = htmm_now_s();
	unsigned long long v = 0;

	while (htmm_now_s() - t0 < secs) {
		ASSERT_EQ(0, add_samples(region, HOT_SUB, 8));
		v = htmm_cg_ctx_stat(c, stat);
		if (v >= want)
			break;
		usleep(100000);
	}
	return v;
}

/* Log and check where the region of fill_fast_then_split() ended. */
static void check_room_given(struct __test_metadata *_metadata,
			     const struct htmm_cg_ctx *c, char *region,
			     double t0)
{
	unsigned long per_node[HTMM_MAX_NODES], bad;
	unsigned long long done, room;
	int hot;

	ASSERT_EQ(0, htmm_count_nodes(region, REGION, per_node, &bad));
	done = htmm_cg_ctx_stat(c, "split_done");
	room = htmm_cg_ctx_stat(c, "split_for_room");
	hot = hot_on_fast(region);
	TH_LOG("after %.1f s: %llu huge pages split, %llu of them for room",
	       htmm_now_s() - t0, done, room);
	TH_LOG("%d of %lu hot subpages on node 0", hot, NR_HPAGES);
	TH_LOG("region: %lu KiB on node 0, %lu KiB on node 1",
	       per_node[HTMM_FAST_NODE] * 4, per_node[HTMM_SLOW_NODE] * 4);
	log_split(_metadata, c);
	EXPECT_LE(NR_HPAGES, done);
	EXPECT_LT(0ULL, room);
	/* Every cold subpage moves, the first part of each split too. */
	EXPECT_EQ(0ULL, htmm_cg_ctx_stat(c, "migrate_failed"));
	EXPECT_EQ((int)NR_HPAGES, hot);
	/* At most 4x the hot bytes in the fast tier. */
	EXPECT_GE(4 * NR_HPAGES, per_node[HTMM_FAST_NODE]);
}

/*
 * Skewed huge pages already in a full fast tier are split too, whatever
 * the hit-share gap, and their cold subpages give the budget back.
 */
TEST_F_TIMEOUT(htmm_split, skewed_on_fast_gives_room, 600)
{
	double t0 = htmm_now_s();

	if (!fill_fast_then_split(_metadata, &self->c, &self->region, NULL))
		return;
	wait_stat(_metadata, &self->c, self->region, "split_done", NR_HPAGES,
		  400);
	check_room_given(_metadata, &self->c, self->region, t0);
}

/*
 * A huge page chosen to split for room that cannot be split for now (a
 * pipe holds a reference to one of its subpages) stays chosen: the rounds
 * after try it again although the other splits made room, and once the
 * reference is dropped it is split.  Without that, it stayed whole on
 * node 0 for good (skewed_on_fast_gives_room failed so when a sample held
 * a reference at the moment of the split).
 */
TEST_F_TIMEOUT(htmm_split, busy_split_for_room_kept, 600)
{
	unsigned long long done, failed, again;
	double t0 = htmm_now_s();
	char buf[PAGE_SZ];
	int busy[2];

	if (!fill_fast_then_split(_metadata, &self->c, &self->region, busy))
		return;
	done = wait_stat(_metadata, &self->c, self->region, "split_done",
			 NR_HPAGES - 1, 400);
	failed = htmm_cg_ctx_stat(&self->c, "split_failed");
	TH_LOG("after %.1f s: %llu huge pages split, %llu splits failed",
	       htmm_now_s() - t0, done, failed);
	ASSERT_EQ(NR_HPAGES - 1, done);
	ASSERT_LE(1ULL, failed);
	/* The busy one is tried again in the rounds that follow. */
	again = wait_stat(_metadata, &self->c, self->region, "split_failed",
			  failed + 2, 120);
	TH_LOG("%llu more failed splits, %llu rounds so far", again - failed,
	       htmm_cg_ctx_stat(&self->c, "split_rounds"));
	EXPECT_LE(failed + 2, again);
	ASSERT_EQ((ssize_t)PAGE_SZ, read(busy[0], buf, PAGE_SZ));
	close(busy[0]);
	close(busy[1]);
	t0 = htmm_now_s();
	wait_stat(_metadata, &self->c, self->region, "split_done", NR_HPAGES,
		  120);
	check_room_given(_metadata, &self->c, self->region, t0);
}

/*
 * Wait up to 400 s, adding samples, for every huge page of the region to
 * be split and at most 4x the hot bytes to stay on node 0 (and, if
 * @hot_back, all the hot subpages to be there).  The region's pages per
 * node land in @per_node.  Return: the huge pages split.
 */
static unsigned long long wait_split(struct __test_metadata *_metadata,
				     const struct htmm_cg_ctx *c, char *region,
				     unsigned long *per_node, bool hot_back)
{
	double t0 = htmm_now_s();
	unsigned long long done = 0;
	unsigned long bad;

	while (htmm_now_s() - t0 < 400) {
		ASSERT_EQ(0, add_samples(region, HOT_SUB, 8));
		ASSERT_EQ(0, htmm_count_nodes(region, REGION, per_node, &bad));
		done = htmm_cg_ctx_stat(c, "split_done");
		if (done >= NR_HPAGES &&
		    per_node[HTMM_FAST_NODE] <= 4 * NR_HPAGES &&
		    (!hot_back || hot_on_fast(region) == (int)NR_HPAGES))
			break;
		usleep(100000);
	}
	return done;
}

/*
 * Demotion under a lowered budget splits skewed huge pages instead of
 * sending their hot subpages down with them.  No split rounds here
 * (htmm_split_period 1000): the demotion path alone splits.
 */
TEST_F_TIMEOUT(htmm_split, demote_splits_skewed, 600)
{
	unsigned long per_node[HTMM_MAX_NODES];
	unsigned long long done = 0, rounds;
	double t0;
	int hot = 0;

	region_sz = 16 * MiB;
	ASSERT_EQ(0, set_tunable("htmm_split_period", "1000"));
	if (!setup_region_on(_metadata, &self->c, &self->region, "max",
			     HTMM_FAST_NODE))
		return;
	/* Samples first, so that every huge page has its hot subpage. */
	ASSERT_EQ(0, add_samples(self->region, HOT_SUB, 8));
	/* Less than one huge page: none may stay whole, the hot bytes fit. */
	htmm_cg_ctx_write(_metadata, &self->c, "memory.max_at_node0", "1M");
	t0 = htmm_now_s();
	done = wait_split(_metadata, &self->c, self->region, per_node, false);
	rounds = htmm_cg_ctx_stat(&self->c, "split_rounds");
	hot = hot_on_fast(self->region);
	TH_LOG("after %.1f s: %llu huge pages split (%llu for room) in %llu split rounds",
	       htmm_now_s() - t0, done,
	       htmm_cg_ctx_stat(&self->c, "split_for_room"), rounds);
	TH_LOG("%d of %lu hot subpages on node 0; region: %lu KiB on node 0",
	       hot, NR_HPAGES, per_node[HTMM_FAST_NODE] * 4);
	log_split(_metadata, &self->c);
	EXPECT_EQ(0ULL, rounds);
	EXPECT_LE(NR_HPAGES, done);
	EXPECT_EQ((int)NR_HPAGES, hot);
	EXPECT_GE(4 * NR_HPAGES, per_node[HTMM_FAST_NODE]);
}

/*
 * Wait up to @secs for node 0 to hold @want of the hot subpages (or fewer,
 * if @fewer), adding samples all along.  Return: the seconds waited.
 */
static double wait_hot(struct __test_metadata *_metadata, char *region,
		       int want, bool fewer, double secs)
{
	double t0 = htmm_now_s();
	int hot;

	while (htmm_now_s() - t0 < secs) {
		ASSERT_EQ(0, add_samples(region, HOT_SUB, 8));
		hot = hot_on_fast(region);
		if (fewer ? hot < want : hot == want)
			break;
		usleep(100000);
	}
	return htmm_now_s() - t0;
}

/*
 * A skewed huge page that cannot be split for now (a pipe holds a
 * reference to one of its cold subpages, as vmsplice() leaves it) keeps
 * the demotion walk at its strictness: the hot subpages of the huge pages
 * it did split stay on node 0.  For a while only: a reference can be held
 * for good, and the budget does not hold that huge page, so the walk gets
 * less strict and hot subpages go.  Once the reference is dropped, the
 * huge page is split and the hot subpages come back.
 */
TEST_F_TIMEOUT(htmm_split, demote_waits_for_busy_split, 600)
{
	unsigned long per_node[HTMM_MAX_NODES];
	unsigned long long done = 0, failed = 0;
	char buf[PAGE_SZ];
	struct iovec iov;
	int pipefd[2];
	double t0, t;

	region_sz = 16 * MiB;
	ASSERT_EQ(0, set_tunable("htmm_split_period", "1000"));
	if (!setup_region_on(_metadata, &self->c, &self->region, "max",
			     HTMM_FAST_NODE))
		return;
	ASSERT_EQ(0, pipe(pipefd));
	iov.iov_base = self->region + PAGE_SZ;
	iov.iov_len = PAGE_SZ;
	ASSERT_EQ((ssize_t)PAGE_SZ, vmsplice(pipefd[1], &iov, 1, 0));
	ASSERT_EQ(0, add_samples(self->region, HOT_SUB, 8));
	htmm_cg_ctx_write(_metadata, &self->c, "memory.max_at_node0", "1M");
	t0 = htmm_now_s();
	while (htmm_now_s() - t0 < 400) {
		ASSERT_EQ(0, add_samples(self->region, HOT_SUB, 8));
		done = htmm_cg_ctx_stat(&self->c, "split_done");
		failed = htmm_cg_ctx_stat(&self->c, "split_failed");
		if (done >= NR_HPAGES - 1 && failed)
			break;
		usleep(100000);
	}
	TH_LOG("after %.1f s: %llu huge pages split, %llu splits failed",
	       htmm_now_s() - t0, done, failed);
	ASSERT_EQ(NR_HPAGES - 1, done);
	ASSERT_LE(1ULL, failed);
	/* Ten demotion periods later, none has gone. */
	t = wait_hot(_metadata, self->region, NR_HPAGES, true, 1.0);
	TH_LOG("%d of %lu hot subpages on node 0 %.1f s later",
	       hot_on_fast(self->region), NR_HPAGES, t);
	EXPECT_EQ((int)NR_HPAGES, hot_on_fast(self->region));
	/* The walk's wait (HTMM_SPLIT_WAIT, 10 s) ends. */
	t += wait_hot(_metadata, self->region, NR_HPAGES, true, 120);
	TH_LOG("%d hot subpages on node 0 %.1f s after the splits",
	       hot_on_fast(self->region), t);
	EXPECT_GT((int)NR_HPAGES, hot_on_fast(self->region));
	/* Freed, the huge page is split; its hot subpages come back. */
	ASSERT_EQ((ssize_t)PAGE_SZ, read(pipefd[0], buf, PAGE_SZ));
	close(pipefd[0]);
	close(pipefd[1]);
	t0 = htmm_now_s();
	done = wait_split(_metadata, &self->c, self->region, per_node, true);
	TH_LOG("freed: after %.1f s, %llu huge pages split", htmm_now_s() - t0,
	       done);
	TH_LOG("%d of %lu hot subpages on node 0; region: %lu KiB on node 0",
	       hot_on_fast(self->region), NR_HPAGES,
	       per_node[HTMM_FAST_NODE] * 4);
	log_split(_metadata, &self->c);
	EXPECT_LE(NR_HPAGES, done);
	EXPECT_EQ((int)NR_HPAGES, hot_on_fast(self->region));
	EXPECT_GE(4 * NR_HPAGES, per_node[HTMM_FAST_NODE]);
}

/* Uniformly accessed huge pages stay whole and are promoted whole. */
/* Direct reclaim and direct compaction stalls so far (/proc/vmstat). */
static unsigned long long direct_stalls(void)
{
	static const char * const keys[] = {
		"compact_stall", "allocstall_dma", "allocstall_dma32",
		"allocstall_normal", "allocstall_movable",
	};
	unsigned long long sum = 0, v;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (!htmm_vmstat_get(keys[i], &v))
			sum += v;
	return sum;
}

TEST_F_TIMEOUT(htmm_split, uniform_stays_whole, 600)
{
	unsigned long long stalls0, stalls1;
	unsigned long per_node[HTMM_MAX_NODES], bad;
	unsigned long long rounds = 0;
	double t0 = htmm_now_s();
	long huge_kb;

	/* One cooling per pass over the region, not sixteen. */
	ASSERT_EQ(0, set_tunable("htmm_cooling_period", "16384"));
	if (!setup_region(_metadata, &self->c, &self->region, "128M"))
		return;
	stalls0 = direct_stalls();
	while (htmm_now_s() - t0 < 400) {
		ASSERT_EQ(0, add_samples(self->region, -1, 1));
		rounds = htmm_cg_ctx_stat(&self->c, "split_rounds");
		ASSERT_EQ(0, htmm_count_nodes(self->region, REGION, per_node,
					      &bad));
		if (rounds >= 3 && per_node[HTMM_FAST_NODE] == REGION / PAGE_SZ)
			break;
	}
	huge_kb = htmm_anon_huge_kb();
	TH_LOG("after %.1f s: %llu split rounds, %lu of %lu pages on node 0, AnonHugePages %ld kB",
	       htmm_now_s() - t0, rounds, per_node[HTMM_FAST_NODE],
	       REGION / PAGE_SZ, huge_kb);
	TH_LOG("promoted %llu, demoted %llu, failed %llu, queued %llu, skipped (isolated) %llu",
	       htmm_cg_ctx_stat(&self->c, "promoted"),
	       htmm_cg_ctx_stat(&self->c, "demoted"),
	       htmm_cg_ctx_stat(&self->c, "migrate_failed"),
	       htmm_cg_ctx_stat(&self->c, "promotion_queue"),
	       htmm_cg_ctx_stat(&self->c, "skipped_isolated"));
	EXPECT_LE(3ULL, rounds);
	/*
	 * Whole: at least half the region (a fragmented node 0 may refuse
	 * some 2 MiB allocations) and still all huge pages.
	 */
	EXPECT_LE(REGION / PAGE_SZ / 2, per_node[HTMM_FAST_NODE]);
	EXPECT_EQ(0ULL, htmm_cg_ctx_stat(&self->c, "split_done"));
	EXPECT_LE((long)(REGION / KiB), huge_kb);
	/* Promotion neither reclaims nor compacts on the fast node. */
	stalls1 = direct_stalls();
	TH_LOG("direct reclaim and compaction stalls meanwhile: %llu",
	       stalls1 - stalls0);
	EXPECT_EQ(stalls0, stalls1);
}

/* htmm_thres_split=0: skewed huge pages are left whole. */
TEST_F_TIMEOUT(htmm_split, thres_split_zero, 600)
{
	unsigned long long rounds = 0;
	double t0 = htmm_now_s();

	ASSERT_EQ(0, set_tunable("htmm_thres_split", "0"));
	if (!setup_region(_metadata, &self->c, &self->region, "1M"))
		return;
	while (htmm_now_s() - t0 < 400) {
		ASSERT_EQ(0, add_samples(self->region, HOT_SUB, 8));
		rounds = htmm_cg_ctx_stat(&self->c, "split_rounds");
		if (rounds >= 3)
			break;
	}
	TH_LOG("%llu split rounds after %.1f s", rounds, htmm_now_s() - t0);
	EXPECT_LE(3ULL, rounds);
	EXPECT_EQ(0ULL, htmm_cg_ctx_stat(&self->c, "split_requested"));
	EXPECT_EQ(0ULL, htmm_cg_ctx_stat(&self->c, "split_done"));
	/* They were seen, and found very skewed. */
	EXPECT_LT(0ULL, very_skewed(&self->c));
	EXPECT_LE((long)(REGION / KiB), htmm_anon_huge_kb());
}

/*
 * A huge page's skew class is kept until it has a quarter more samples
 * (htmm_folio_skew()).  Huge pages seen uniform first, with their class
 * kept, are judged again once one subpage gets hot, and split.
 */
TEST_F_TIMEOUT(htmm_split, skew_grows_later, 600)
{
	unsigned long long rounds = 0, seen = 0, skewed, done;
	double t0 = htmm_now_s();
	int hot = 0;

	/* 16 MiB, and one cooling per pass over it. */
	region_sz = 16 * MiB;
	ASSERT_EQ(0, set_tunable("htmm_cooling_period", "4096"));
	if (!setup_region(_metadata, &self->c, &self->region, "1M"))
		return;
	while (htmm_now_s() - t0 < 400) {
		ASSERT_EQ(0, add_samples(self->region, -1, 1));
		rounds = htmm_cg_ctx_stat(&self->c, "split_rounds");
		seen = skew_classes(&self->c, 0, 8);
		if (rounds >= 2 && seen >= NR_HPAGES)
			break;
	}
	TH_LOG("uniform: after %.1f s, %llu split rounds, %llu of %lu huge pages in classes 0-7",
	       htmm_now_s() - t0, rounds, seen, NR_HPAGES);
	skewed = very_skewed(&self->c);
	done = htmm_cg_ctx_stat(&self->c, "split_done");
	EXPECT_LE(2ULL, rounds);
	EXPECT_LE(NR_HPAGES, seen);
	EXPECT_EQ(0ULL, skewed);
	EXPECT_EQ(0ULL, done);
	/* No ASSERT: the harness skips the teardown after one. */
	if (rounds < 2 || seen < NR_HPAGES || skewed || done)
		return;

	/* A cooling, and so a split round, every eight passes. */
	ASSERT_EQ(0, set_tunable("htmm_cooling_period", "512"));
	t0 = htmm_now_s();
	done = wait_hot_split(_metadata, &self->c, self->region, &hot);
	TH_LOG("skewed: after %.1f s, %llu huge pages split, %d of %lu hot subpages on node 0",
	       htmm_now_s() - t0, done, hot, NR_HPAGES);
	log_split(_metadata, &self->c);
	EXPECT_LE(NR_HPAGES, done);
	EXPECT_EQ((int)NR_HPAGES, hot);
}

/* Read every page, so that khugepaged sees the range referenced. */
static void read_all(char *p)
{
	size_t i;

	for (i = 0; i < REGION; i += PAGE_SZ)
		asm volatile("" : : "r" (p[i]));
}

/*
 * Let khugepaged make @n full scans of everything, reading the region
 * meanwhile; return the AnonHugePages it leaves (kB), or -1 if it made
 * fewer scans in 300 s.
 */
static long khugepaged_scans(struct __test_metadata *_metadata, char *p,
			     unsigned long long n)
{
	unsigned long long scans0 = 0, scans = 0;
	double t0 = htmm_now_s();
	long huge_kb;

	if (htmm_read_value(KHUGEPAGED "/full_scans", &scans0))
		return -1;
	while (htmm_now_s() - t0 < 300) {
		read_all(p);
		if (htmm_read_value(KHUGEPAGED "/full_scans", &scans))
			return -1;
		if (scans >= scans0 + n)
			break;
		usleep(100000);
	}
	huge_kb = htmm_anon_huge_kb();
	TH_LOG("%llu full khugepaged scans in %.1f s; AnonHugePages %ld kB",
	       scans - scans0, htmm_now_s() - t0, huge_kb);
	return scans >= scans0 + n ? huge_kb : -1;
}

/*
 * khugepaged scanning as fast as it can leaves the split ranges alone
 * during the cooldown, and after it while their samples still show them
 * skewed.  Once coolings aged their samples away, it collapses them.
 * After the cooldown, a range still skewed was collapsed on the node
 * that held most of its pages, the slow one once its cold subpages were
 * down, and took its hot subpages with it (skewed_on_fast_gives_room
 * once found 2 of 8 of them on node 1, 308 s after it began).
 */
TEST_F_TIMEOUT(htmm_split, no_recollapse, 900)
{
	double t0 = htmm_now_s();
	long huge_kb = 0;

	ASSERT_EQ(0, set_tunable("htmm_split_cooldown_ms", "3600000"));
	if (!setup_region(_metadata, &self->c, &self->region, "1M"))
		return;
	while (htmm_now_s() - t0 < 400) {
		ASSERT_EQ(0, add_samples(self->region, HOT_SUB, 8));
		if (htmm_cg_ctx_stat(&self->c, "split_done") >= NR_HPAGES)
			break;
		usleep(100000);
	}
	if (htmm_cg_ctx_stat(&self->c, "split_done") < NR_HPAGES) {
		/* No ASSERT: the harness skips the teardown after one. */
		EXPECT_LE(NR_HPAGES, htmm_cg_ctx_stat(&self->c, "split_done"));
		return;
	}
	/* Splitting is done: no more samples, so no more split rounds. */
	ASSERT_EQ(0, htmm_write_str(KHUGEPAGED "/scan_sleep_millisecs", "10"));
	ASSERT_EQ(0, htmm_write_str(KHUGEPAGED "/alloc_sleep_millisecs", "10"));
	ASSERT_EQ(0, htmm_write_str(KHUGEPAGED "/pages_to_scan", "65536"));
	huge_kb = khugepaged_scans(_metadata, self->region, 3);
	ASSERT_LE(0, huge_kb);
	EXPECT_GT((long)(REGION / KiB) / 8, huge_kb)
		TH_LOG("khugepaged collapsed ranges htmm split");

	/* The cooldown is over; the samples still show the skew. */
	ASSERT_EQ(0, set_tunable("htmm_split_cooldown_ms", "0"));
	huge_kb = khugepaged_scans(_metadata, self->region, 3);
	ASSERT_LE(0, huge_kb);
	EXPECT_GT((long)(REGION / KiB) / 8, huge_kb)
		TH_LOG("khugepaged collapsed skewed ranges after the cooldown");

	/* One sample a page: 16 coolings age the hot subpages' away. */
	ASSERT_EQ(0, add_samples(self->region, -1, 1));
	t0 = htmm_now_s();
	while (htmm_now_s() - t0 < 300) {
		read_all(self->region);
		huge_kb = htmm_anon_huge_kb();
		if (huge_kb >= (long)(REGION / KiB) / 2)
			break;
		usleep(100000);
	}
	TH_LOG("samples aged: AnonHugePages %ld kB after %.1f s",
	       huge_kb, htmm_now_s() - t0);
	EXPECT_LE((long)(REGION / KiB) / 2, huge_kb);
}

/* The firmware's (HMAT) latencies become the tier latencies. */
TEST_F(htmm_split, latency_from_hmat)
{
	char path[PATH_MAX];
	unsigned long long hmat_fast = 0, hmat_slow = 0, fast = 0, slow = 0;

	snprintf(path, sizeof(path), HTMM_NODE_DIR "/node%d/access1/initiators/read_latency",
		 HTMM_FAST_NODE);
	if (htmm_read_value(path, &hmat_fast))
		SKIP(return, "no HMAT latencies for node %d", HTMM_FAST_NODE);
	snprintf(path, sizeof(path), HTMM_NODE_DIR "/node%d/access1/initiators/read_latency",
		 HTMM_SLOW_NODE);
	ASSERT_EQ(0, htmm_read_value(path, &hmat_slow));
	/* Read at boot and at enable, unless an administrator wrote them. */
	htmm_cg_ctx_write(_metadata, &self->c, "memory.htmm_enabled", "enabled");
	ASSERT_EQ(0, htmm_read_value(HTMM_SYSFS_DIR "/htmm_fast_latency_ns",
				     &fast));
	ASSERT_EQ(0, htmm_read_value(HTMM_SYSFS_DIR "/htmm_slow_latency_ns",
				     &slow));
	TH_LOG("HMAT %llu/%llu ns, tunables %llu/%llu ns", hmat_fast,
	       hmat_slow, fast, slow);
	EXPECT_EQ(hmat_fast, fast);
	EXPECT_EQ(hmat_slow, slow);
}

TEST_HARNESS_MAIN
