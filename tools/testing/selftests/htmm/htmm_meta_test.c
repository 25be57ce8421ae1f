// SPDX-License-Identifier: GPL-2.0
/*
 * htmm per-page metadata: it moves with a migrated page, is handed to the
 * base pages when a huge page is split, and leaves the histograms when
 * the page is freed.  Samples come from the debugfs injector, so every
 * count is exact.  The test process itself joins the htmm cgroup.
 */
#define _GNU_SOURCE
#include <sys/prctl.h>

#include "htmm_util.h"

#define HTMM_DBG	"/sys/kernel/debug/htmm"
#define HTMM_SYSFS	"/sys/kernel/mm/htmm"
#define SPLIT_FILE	"/sys/kernel/debug/split_huge_pages"
#define PAGE_SZ		4096UL
#define HPAGE_SZ	(2UL << 20)

struct meta_info {
	long count, folio_count, nr_pages;
};

/* Ask page_info about @addr of this process; -errno if not accounted. */
static int meta_page_info(void *addr, struct meta_info *mi)
{
	char buf[256];
	int n;

	n = htmm_page_info_str(addr, buf, sizeof(buf));
	if (n)
		return n;
	if (sscanf(buf, "count %ld bin %*u folio_count %ld folio_bin %*u nr_pages %ld",
		   &mi->count, &mi->folio_count, &mi->nr_pages) != 3)
		return -EINVAL;
	return 0;
}

/* Inject @n load samples at @addr of this process. */
static int meta_inject(void *addr, int n)
{
	char line[64], *buf;
	size_t len = 0;
	int i, ret;

	buf = malloc((size_t)n * sizeof(line));
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, sizeof(line), "%d %p load-fast\n",
				(int)getpid(), addr);
	ret = htmm_write_file(HTMM_DBG "/inject", buf, len) < 0 ? -EIO : 0;
	free(buf);
	return ret;
}

/* Sum of hist_0..hist_15 in the cgroup's memory.htmm_stat. */
static long meta_hist_total(const char *cg, const char *prefix)
{
	char path[PATH_MAX], key[32];
	unsigned long long v = 0;
	long sum = 0;
	int b;

	snprintf(path, sizeof(path), "%s/memory.htmm_stat", cg);
	for (b = 0; b < 16; b++) {
		snprintf(key, sizeof(key), "%s%d", prefix, b);
		if (htmm_keyed_get(path, key, &v))
			return -1;
		sum += (long)v;
	}
	return sum;
}

/* /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h). */
#define KPF_SLAB_BIT	7
#define KPF_BUDDY_BIT	10
#define KPF_PGTABLE_BIT	26
#define KPF_MAX_EACH	2048

/*
 * Collect up to KPF_MAX_EACH page frames that carry flag @bit and none of
 * the LRU kinds, from /proc/kpageflags.  Return how many, or -errno.
 */
static long meta_kpf_collect(int bit, unsigned long *pfns)
{
	static uint64_t flags[16384];
	unsigned long pfn = 0;
	long n = 0;
	ssize_t r;
	int fd, i;

	fd = open("/proc/kpageflags", O_RDONLY);
	if (fd < 0)
		return -errno;
	while (n < KPF_MAX_EACH &&
	       (r = pread(fd, flags, sizeof(flags), pfn * 8)) > 0) {
		for (i = 0; i < r / 8 && n < KPF_MAX_EACH; i++)
			if (flags[i] & (1ULL << bit))
				pfns[n++] = pfn + i;
		pfn += r / 8;
	}
	close(fd);
	return n;
}

/*
 * Inject one load sample at each physical page frame of @pfns, formatted
 * in @buf (KPF_MAX_EACH * 40 bytes, already faulted in: a page this
 * process faulted in now could be one of the free frames).
 */
static int meta_inject_pfns(const unsigned long *pfns, long n, char *buf)
{
	size_t len = 0;
	long i;

	for (i = 0; i < n; i++)
		len += sprintf(buf + len, "%lu load-fast\n", pfns[i] * PAGE_SZ);
	return htmm_write_file(HTMM_DBG "/inject", buf, len) < 0 ? -EIO : 0;
}

FIXTURE(htmm_meta) {
	char cg[HTMM_CG_PATH_MAX];
	char sampler[32];
	char thp[32];
};

FIXTURE_SETUP(htmm_meta)
{
	char path[PATH_MAX];

	if (!htmm_path_exists(HTMM_DBG "/inject"))
		SKIP(return, "no htmm debugfs (CONFIG_HTMM_DEBUG)");
	if (htmm_cg_prepare())
		SKIP(return, "no cgroup v2 memory controller");
	ASSERT_EQ(0, htmm_cg_create(self->cg, sizeof(self->cg), "htmm_meta"));
	ASSERT_LT(0, htmm_read_file(HTMM_SYSFS "/htmm_sampler", self->sampler,
				    sizeof(self->sampler)));
	self->sampler[strcspn(self->sampler, "\n")] = '\0';
	ASSERT_EQ(0, htmm_write_str(HTMM_SYSFS "/htmm_sampler", "inject"));
	ASSERT_EQ(0, htmm_thp_get(self->thp, sizeof(self->thp)));
	htmm_cg_file(path, sizeof(path), self->cg, "memory.htmm_enabled");
	ASSERT_EQ(0, htmm_write_str(path, "enabled"));
	ASSERT_EQ(0, htmm_cg_enter(self->cg, getpid()));
}

FIXTURE_TEARDOWN(htmm_meta)
{
	if (!self->cg[0])
		return;
	htmm_cg_enter(HTMM_CGROUP_ROOT, getpid());
	htmm_cg_destroy(self->cg);
	if (self->sampler[0])
		htmm_write_str(HTMM_SYSFS "/htmm_sampler", self->sampler);
	if (self->thp[0])
		htmm_thp_set(self->thp);
}

TEST_F(htmm_meta, migration_keeps_counts)
{
	int nodes[2] = { 1, 1 }, status[2] = { -1, -1 };
	struct meta_info a, b;
	void *pages[2];
	char *p;

	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	p = mmap(NULL, 8 * PAGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	htmm_touch(p, 8 * PAGE_SZ);
	ASSERT_EQ(0, meta_inject(p, 5));
	ASSERT_EQ(0, meta_inject(p + PAGE_SZ, 3));
	ASSERT_EQ(0, meta_page_info(p, &a));
	ASSERT_EQ(0, meta_page_info(p + PAGE_SZ, &b));
	EXPECT_EQ(5, a.count);
	EXPECT_EQ(3, b.count);

	/* Migrate both pages to node 1 (or check they are there already). */
	pages[0] = p;
	pages[1] = p + PAGE_SZ;
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, 2, pages, nodes, status,
			     MPOL_MF_MOVE));
	ASSERT_EQ(0, syscall(SYS_move_pages, 0, 2, pages, NULL, status, 0));
	EXPECT_EQ(1, status[0]);
	EXPECT_EQ(1, status[1]);
	TH_LOG("after move_pages: nodes %d %d", status[0], status[1]);

	ASSERT_EQ(0, meta_page_info(p, &a));
	ASSERT_EQ(0, meta_page_info(p + PAGE_SZ, &b));
	EXPECT_EQ(5, a.count);
	EXPECT_EQ(3, b.count);
	/* The other pages were never sampled and still are not accounted. */
	EXPECT_EQ(-ENODEV, meta_page_info(p + 2 * PAGE_SZ, &a));
	munmap(p, 8 * PAGE_SZ);
}

TEST_F(htmm_meta, split_hands_counts_to_base_pages)
{
	char cmd[128], *raw, *p;
	struct meta_info mi;
	long before, after;

	ASSERT_EQ(0, htmm_thp_set("always"));
	raw = mmap(NULL, 2 * HPAGE_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	p = (char *)(((unsigned long)raw + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
	ASSERT_EQ(0, madvise(p, HPAGE_SZ, MADV_HUGEPAGE));
	htmm_touch(p, HPAGE_SZ);

	ASSERT_EQ(0, meta_inject(p + 10 * PAGE_SZ, 7));
	ASSERT_EQ(0, meta_inject(p + 300 * PAGE_SZ, 2));
	ASSERT_EQ(0, meta_page_info(p + 10 * PAGE_SZ, &mi));
	if (mi.nr_pages != 512)
		SKIP(goto out, "no THP for the region (nr_pages %ld)", mi.nr_pages);
	EXPECT_EQ(7, mi.count);
	EXPECT_EQ(9, mi.folio_count);
	before = meta_hist_total(self->cg, "hist_");
	EXPECT_EQ(512, before);

	snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", (int)getpid(),
		 (unsigned long)p, (unsigned long)p + HPAGE_SZ);
	ASSERT_EQ(0, htmm_write_str(SPLIT_FILE, cmd));

	ASSERT_EQ(0, meta_page_info(p + 10 * PAGE_SZ, &mi));
	EXPECT_EQ(1, mi.nr_pages);
	EXPECT_EQ(7, mi.count);
	EXPECT_EQ(7, mi.folio_count);
	ASSERT_EQ(0, meta_page_info(p + 300 * PAGE_SZ, &mi));
	EXPECT_EQ(1, mi.nr_pages);
	EXPECT_EQ(2, mi.count);
	ASSERT_EQ(0, meta_page_info(p, &mi));
	EXPECT_EQ(0, mi.count);
	/* Same pages, now 512 entries of one page each. */
	after = meta_hist_total(self->cg, "hist_");
	EXPECT_EQ(before, after);
	EXPECT_EQ(512, meta_hist_total(self->cg, "hist_split_"));
	TH_LOG("histogram pages before split %ld, after %ld", before, after);
out:
	munmap(raw, 2 * HPAGE_SZ);
}

/*
 * A freed page leaves the histograms when it is uncharged, at its last
 * put.  A page just faulted in waits in the faulting CPU's LRU add batch,
 * which holds a reference; munmap drains only the batches of the CPU it
 * runs on.  The test stays on one CPU, so munmap frees every page (once
 * it moved between CPUs, and the two pages outlived munmap in the other
 * CPU's batch).
 */
TEST_F(htmm_meta, free_leaves_histograms)
{
	long before, during, after;
	char *p;

	ASSERT_EQ(0, prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0));
	ASSERT_EQ(0, htmm_pin_cpu(sched_getcpu()));
	before = meta_hist_total(self->cg, "hist_");
	ASSERT_LE(0, before);
	p = mmap(NULL, 16 * PAGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	htmm_touch(p, 16 * PAGE_SZ);
	ASSERT_EQ(0, meta_inject(p, 1));
	ASSERT_EQ(0, meta_inject(p + 5 * PAGE_SZ, 4));
	during = meta_hist_total(self->cg, "hist_");
	EXPECT_EQ(before + 2, during);
	ASSERT_EQ(0, munmap(p, 16 * PAGE_SZ));
	after = meta_hist_total(self->cg, "hist_");
	EXPECT_EQ(before, after);
	EXPECT_EQ(before, meta_hist_total(self->cg, "hist_split_"));
	TH_LOG("histogram pages %ld -> %ld -> %ld", before, during, after);
}

/*
 * Samples that name kernel pages (slab, page tables) or free pages are
 * ignored: they are counted in htmm_nr_samples_ignored, never accounted,
 * and never reach folio_memcg() (which a slab folio would trip on the
 * debug kernel).  The process holds page tables and an htmm cgroup, so the
 * ingestion path is live while they arrive.
 */
TEST_F_TIMEOUT(htmm_meta, kernel_pages_ignored, 300)
{
	static const struct { int bit; const char *name; } kinds[] = {
		{ KPF_SLAB_BIT, "slab" },
		{ KPF_PGTABLE_BIT, "page-table" },
		{ KPF_BUDDY_BIT, "free" },
	};
	unsigned long long ign0, ign1, smp0, smp1;
	unsigned long *pfns;
	long n, total = 0, before;
	unsigned int k;
	char *p, *buf;

	p = mmap(NULL, 64 * PAGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	htmm_touch(p, 64 * PAGE_SZ);
	ASSERT_EQ(0, meta_inject(p, 3));
	before = meta_hist_total(self->cg, "hist_");
	ASSERT_LT(0, before);
	pfns = calloc(KPF_MAX_EACH, sizeof(*pfns));
	buf = malloc(KPF_MAX_EACH * 40);
	ASSERT_NE(NULL, pfns);
	ASSERT_NE(NULL, buf);
	memset(pfns, 1, KPF_MAX_EACH * sizeof(*pfns));
	memset(buf, 1, KPF_MAX_EACH * 40);
	ASSERT_EQ(0, htmm_vmstat_get("htmm_nr_samples_ignored", &ign0));
	ASSERT_EQ(0, htmm_vmstat_get("htmm_nr_sampled", &smp0));
	for (k = 0; k < ARRAY_SIZE(kinds); k++) {
		n = meta_kpf_collect(kinds[k].bit, pfns);
		ASSERT_LT(0, n) TH_LOG("no %s pages in /proc/kpageflags",
				       kinds[k].name);
		ASSERT_EQ(0, meta_inject_pfns(pfns, n, buf));
		TH_LOG("injected %ld samples on %s pages", n, kinds[k].name);
		total += n;
	}
	ASSERT_EQ(0, htmm_vmstat_get("htmm_nr_samples_ignored", &ign1));
	ASSERT_EQ(0, htmm_vmstat_get("htmm_nr_sampled", &smp1));
	TH_LOG("%ld injected: %llu ignored, %llu accounted", total,
	       ign1 - ign0, smp1 - smp0);
	EXPECT_EQ((unsigned long long)total, ign1 - ign0);
	EXPECT_EQ(0ULL, smp1 - smp0);
	EXPECT_EQ(before, meta_hist_total(self->cg, "hist_"));
	free(buf);
	free(pfns);
	munmap(p, 64 * PAGE_SZ);
}

TEST_HARNESS_MAIN
