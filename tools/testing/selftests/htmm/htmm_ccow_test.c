// SPDX-License-Identifier: GPL-2.0
/*
 * CCoW, coverage-based copy-on-write (CONFIG_HTMM_CCOW): after fork(), a
 * copy-on-write fault in a region the process has written enough of
 * copies the region's other shared pages at once.
 *
 * A page that CCoW pre-copied is mapped by the child alone, which
 * /proc/self/pagemap shows (bit 56, exclusively mapped), while a page
 * still shared with the parent is not: the tests check, page by page,
 * which pages a fault pre-copied.  The counters of memory.htmm_stat are
 * checked as lower bounds: the test programs' own stacks take
 * copy-on-write faults too.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

#include "htmm_util.h"	/* includes kselftest_harness.h */

#define CCOW_DIR	HTMM_SYSFS_DIR "/"
#define PM_EXCLUSIVE	((uint64_t)1 << 56)
#define PM_SOFT_DIRTY	((uint64_t)1 << 55)
#define PM_PRESENT	((uint64_t)1 << 63)
#define REGION_KB	64
#define REGION_PAGES	((int)(REGION_KB * KiB / 4096))

static const char * const ccow_tunables[] = {
	"htmm_ccow_enabled", "htmm_ccow_region_kb", "htmm_ccow_threshold",
	"htmm_ccow_max_sync_kb", "htmm_ccow_huge",
};

#define NR_TUNABLES	ARRAY_SIZE(ccow_tunables)

/* What delegated_subtree_within_delegator_max makes below the cgroup. */
static const char * const deleg_children[] = { "c1", "stage" };

static int ccow_set(const char *name, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), CCOW_DIR "%s", name);
	return htmm_write_str(path, val);
}

static int ccow_get(const char *name, char *buf, size_t size)
{
	char path[256];

	snprintf(path, sizeof(path), CCOW_DIR "%s", name);
	return htmm_read_file(path, buf, size) < 0 ? -1 : 0;
}

/* The pagemap entry of @addr in the calling process. */
static uint64_t pm_entry(void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (uintptr_t)addr / 4096 * sizeof(e)) !=
	    sizeof(e))
		e = 0;
	close(fd);
	return e;
}

/* A bitmap of the pages of [p, p + n pages) that this process maps alone. */
static uint64_t exclusive_mask(char *p, int n)
{
	uint64_t mask = 0;
	int i;

	for (i = 0; i < n && i < 64; i++)
		if (pm_entry(p + i * 4096UL) & PM_EXCLUSIVE)
			mask |= (uint64_t)1 << i;
	return mask;
}

/* An address aligned to a region, @pages pages into a 2 MiB-aligned area. */
static char *region_area(size_t pages)
{
	size_t len = pages * 4096 + 2 * MiB;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a;
	size_t i;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + 2 * MiB - 1) & ~(2 * MiB - 1));
	madvise(a, pages * 4096, MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++)
		memset(a + i * 4096, (int)(i & 0xff), 4096);
	return a;
}

/* Run @fn in a child; its exit status (0 passes), or -1. */
static int in_child(int (*fn)(char *p, void *arg), char *p, void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn(p, arg));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* One of the cgroup's CCoW counters (memory.htmm_stat), or -1. */
static long long ccow_stat(const char *cg, const char *key)
{
	unsigned long long v;
	char path[PATH_MAX];

	htmm_cg_file(path, sizeof(path), cg, "memory.htmm_stat");
	return htmm_keyed_get(path, key, &v) ? -1 : (long long)v;
}

FIXTURE(ccow) {
	char saved[NR_TUNABLES][32];
	char thp_saved[32];	/* THP mode to restore, if changed (32: huge_area) */
	char cg[HTMM_CG_PATH_MAX];
};

FIXTURE_SETUP(ccow)
{
	unsigned int i;

	if (!htmm_path_exists(CCOW_DIR "htmm_ccow_enabled"))
		SKIP(return, "kernel without CONFIG_HTMM_CCOW");
	for (i = 0; i < NR_TUNABLES; i++)
		ASSERT_EQ(0, ccow_get(ccow_tunables[i], self->saved[i],
				      sizeof(self->saved[i])));
	if (ccow_set("htmm_ccow_enabled", "always") == -ENODEV)
		SKIP(return, "htmm is off (boot with htmm=on)");
	ASSERT_EQ(0, ccow_set("htmm_ccow_region_kb", "64"));
	ASSERT_EQ(0, ccow_set("htmm_ccow_threshold", "0"));
	ASSERT_EQ(0, ccow_set("htmm_ccow_max_sync_kb", "2048"));
	ASSERT_EQ(0, ccow_set("htmm_ccow_huge", "1"));
	ASSERT_EQ(0, htmm_cg_prepare());
	ASSERT_EQ(0, htmm_cg_create(self->cg, sizeof(self->cg), "ccow"));
	ASSERT_EQ(0, htmm_cg_enter(self->cg, getpid()));
}

FIXTURE_TEARDOWN(ccow)
{
	unsigned int i;

	if (self->thp_saved[0])
		htmm_thp_set(self->thp_saved);

	htmm_write_str(HTMM_CGROUP_ROOT "/cgroup.procs", "0");
	for (i = 0; i < ARRAY_SIZE(deleg_children); i++) {
		char sub[HTMM_CG_PATH_MAX + 8];

		htmm_cg_file(sub, sizeof(sub), self->cg, deleg_children[i]);
		htmm_cg_destroy(sub);
	}
	htmm_cg_destroy(self->cg);
	for (i = 0; i < NR_TUNABLES && self->saved[i][0]; i++)
		ccow_set(ccow_tunables[i], self->saved[i]);
}

/* Bad values fail with EINVAL and leave every tunable as it was. */
TEST_F(ccow, bad_input_changes_nothing)
{
	static const char * const bad[][2] = {
		{ "htmm_ccow_enabled", "sometimes" },
		{ "htmm_ccow_enabled", "\n" },
		{ "htmm_ccow_region_kb", "96" },	/* not a power of two */
		{ "htmm_ccow_region_kb", "32" },
		{ "htmm_ccow_region_kb", "4096" },
		{ "htmm_ccow_region_kb", "-64" },
		{ "htmm_ccow_threshold", "101" },
		{ "htmm_ccow_threshold", "50%" },
		{ "htmm_ccow_max_sync_kb", "4096" },
		{ "htmm_ccow_max_sync_kb", "99999999999" },
		{ "htmm_ccow_huge", "2" },
		{ "htmm_ccow_huge", "yes" },
	};
	char before[NR_TUNABLES][32], after[32];
	unsigned int i, j;
	int err;

	for (j = 0; j < NR_TUNABLES; j++)
		ASSERT_EQ(0, ccow_get(ccow_tunables[j], before[j],
				      sizeof(before[j])));
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err = ccow_set(bad[i][0], bad[i][1]);
		EXPECT_TRUE(err == -EINVAL || err == -ERANGE)
			TH_LOG("%s <- '%s': %d", bad[i][0], bad[i][1], err);
		for (j = 0; j < NR_TUNABLES; j++) {
			ASSERT_EQ(0, ccow_get(ccow_tunables[j], after,
					      sizeof(after)));
			EXPECT_STREQ(before[j], after);
		}
	}
}

/* Threshold 0: the first write of a region copies all of it. */
static int first_write_copies_region(char *p, void *arg)
{
	uint64_t mask;
	int i;

	p[0] = 'w';
	mask = exclusive_mask(p, 2 * REGION_PAGES);
	if (mask != ((uint64_t)1 << REGION_PAGES) - 1) {
		printf("# exclusive pages %#llx, want the first region only\n",
		       (unsigned long long)mask);
		return 1;
	}
	for (i = 1; i < 2 * REGION_PAGES; i++)
		if (p[i * 4096UL] != (char)i)
			return 2;
	return p[0] == 'w' ? 0 : 3;
}

TEST_F(ccow, threshold_0_copies_the_region)
{
	char *p = region_area(4 * REGION_PAGES);
	long long pre0, pre1;

	ASSERT_NE(NULL, p);
	pre0 = ccow_stat(self->cg, "ccow_precopied");
	ASSERT_EQ(0, in_child(first_write_copies_region, p, NULL));
	pre1 = ccow_stat(self->cg, "ccow_precopied");
	EXPECT_GE(pre1 - pre0, REGION_PAGES - 1);
	/* The parent's pages are its own again, and unchanged. */
	EXPECT_EQ(0, p[0]);
	EXPECT_EQ(1, p[4096]);
}

/* Threshold 50: 7 of 16 written copy nothing more; the 8th copies the rest. */
static int half_written_copies_rest(char *p, void *arg)
{
	uint64_t mask, want;
	int i;

	for (i = 0; i < REGION_PAGES / 2 - 1; i++)
		p[i * 4096UL] = 'w';
	want = ((uint64_t)1 << (REGION_PAGES / 2 - 1)) - 1;
	mask = exclusive_mask(p, REGION_PAGES);
	if (mask != want) {
		printf("# after %d writes: exclusive %#llx, want %#llx\n", i,
		       (unsigned long long)mask, (unsigned long long)want);
		return 1;
	}
	p[i * 4096UL] = 'w';
	mask = exclusive_mask(p, REGION_PAGES);
	if (mask != ((uint64_t)1 << REGION_PAGES) - 1) {
		printf("# after %d writes: exclusive %#llx, want all\n", i + 1,
		       (unsigned long long)mask);
		return 2;
	}
	return 0;
}

TEST_F(ccow, threshold_counts_written_pages)
{
	char *p = region_area(2 * REGION_PAGES);
	long long unused0, unused1;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, ccow_set("htmm_ccow_threshold", "50"));
	unused0 = ccow_stat(self->cg, "ccow_precopy_unused");
	ASSERT_EQ(0, in_child(half_written_copies_rest, p, NULL));
	/* The child exited without writing its 8 pre-copies. */
	unused1 = ccow_stat(self->cg, "ccow_precopy_unused");
	EXPECT_GE(unused1 - unused0, REGION_PAGES / 2);
}

/* A pre-copy keeps soft-dirty clear until the page is written. */
static int soft_dirty_kept(char *p, void *arg)
{
	if (htmm_write_str("/proc/self/clear_refs", "4"))
		return 10;	/* no soft-dirty tracking */
	p[0] = 'w';
	if (!(pm_entry(p) & PM_SOFT_DIRTY))
		return 10;	/* a written page is not soft-dirty: no tracking */
	if (!(pm_entry(p + 4096) & PM_EXCLUSIVE))
		return 2;	/* not pre-copied */
	if (pm_entry(p + 4096) & PM_SOFT_DIRTY)
		return 3;	/* pre-copied looks written */
	p[4096] = 'w';
	if (!(pm_entry(p + 4096) & PM_SOFT_DIRTY))
		return 4;	/* a write to a pre-copy went unseen */
	return 0;
}

TEST_F(ccow, soft_dirty_stays_right)
{
	char *p = region_area(REGION_PAGES);
	int r;

	ASSERT_NE(NULL, p);
	r = in_child(soft_dirty_kept, p, NULL);
	if (r == 10)
		SKIP(return, "no soft-dirty tracking (CONFIG_MEM_SOFT_DIRTY)");
	EXPECT_EQ(0, r);
}

/*
 * A pre-copy is mapped writable: writing it takes no fault.  And a
 * pre-copy that was written is not counted as unnecessary: the child
 * writes every page of 4 regions, 60 of them pre-copies, and exits.
 */
static long child_minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int write_all_pages(char *p, void *arg)
{
	long f0, f1;
	int r, i;

	for (r = 0; r < 4; r++) {
		char *q = p + r * REGION_KB * KiB;

		q[0] = 'w';
		f0 = child_minflt();
		for (i = 1; i < REGION_PAGES; i++)
			q[i * 4096UL] = 'w';
		f1 = child_minflt();
		if (f1 - f0 > 1) {
			printf("# region %d: %ld faults writing its pre-copies\n",
			       r, f1 - f0);
			return 1;
		}
	}
	return 0;
}

TEST_F(ccow, written_precopies_fault_not_and_count_used)
{
	char *p = region_area(4 * REGION_PAGES);
	long long unused0, pre0, pre, unused;

	ASSERT_NE(NULL, p);
	pre0 = ccow_stat(self->cg, "ccow_precopied");
	unused0 = ccow_stat(self->cg, "ccow_precopy_unused");
	ASSERT_EQ(0, in_child(write_all_pages, p, NULL));
	pre = ccow_stat(self->cg, "ccow_precopied") - pre0;
	unused = ccow_stat(self->cg, "ccow_precopy_unused") - unused0;
	TH_LOG("pre-copied %lld, unnecessary %lld", pre, unused);
	EXPECT_GE(pre, 4 * (REGION_PAGES - 1));
	/* The child's stack may leave a region's worth unwritten. */
	EXPECT_LT(unused, 2 * REGION_PAGES);
}

/* The mappings CCoW leaves alone: the first write copies one page only. */
static int one_page_copied(char *p, void *arg)
{
	uint64_t mask;

	p[0] = 'w';
	mask = exclusive_mask(p, REGION_PAGES);
	if (mask & ~1ULL) {
		printf("# exclusive %#llx: CCoW pre-copied\n",
		       (unsigned long long)mask);
		return 1;
	}
	return 0;
}

static int mlocked_child(char *p, void *arg)
{
	/* Locked on fault: the range stays shared until written. */
	if (syscall(SYS_mlock2, p, REGION_PAGES * 4096UL, 1 /* ONFAULT */))
		return 10;
	return one_page_copied(p, arg);
}

TEST_F(ccow, mlocked_range_left_alone)
{
	char *p = region_area(REGION_PAGES);
	int r;

	ASSERT_NE(NULL, p);
	r = in_child(mlocked_child, p, NULL);
	if (r == 10)
		SKIP(return, "mlock2(MLOCK_ONFAULT) failed");
	EXPECT_EQ(0, r);
}

static int uffd_wp_child(char *p, void *arg)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_PAGEFAULT_FLAG_WP };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)p, .len = REGION_PAGES * 4096UL },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC);

	if (fd < 0 || ioctl(fd, UFFDIO_API, &api) ||
	    ioctl(fd, UFFDIO_REGISTER, &reg))
		return 10;
	return one_page_copied(p, arg);
}

TEST_F(ccow, uffd_wp_range_left_alone)
{
	char *p = region_area(REGION_PAGES);
	int r;

	ASSERT_NE(NULL, p);
	r = in_child(uffd_wp_child, p, NULL);
	if (r == 10)
		SKIP(return, "no userfaultfd write protection");
	EXPECT_EQ(0, r);
}

static int shared_child(char *p, void *arg)
{
	p[0] = 'w';
	return exclusive_mask(p, REGION_PAGES) & ~1ULL ? 1 : 0;
}

TEST_F(ccow, shared_mapping_left_alone)
{
	char *p = mmap(NULL, REGION_PAGES * 4096UL, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, p);
	memset(p, 1, REGION_PAGES * 4096UL);
	EXPECT_EQ(0, in_child(shared_child, p, NULL));
	EXPECT_EQ('w', p[0]);	/* shared: the parent sees the write */
	EXPECT_EQ(1, p[4096]);
}

/*
 * GUP-pinned pages: fork() gives the child its own copy of a pinned page
 * at once, so the parent's pinned pages are never shared, and CCoW's
 * region copy in the child must leave them where they are in the parent.
 * Pinned through CONFIG_GUP_TEST's debugfs file, as the mm selftests do;
 * its ioctl ABI (mm/gup_test.h) is restated here.
 */
struct ccow_pin_longterm {
	uint64_t addr;
	uint64_t size;
	uint32_t flags;
};

#define CCOW_PIN_START	_IOW('g', 7, struct ccow_pin_longterm)
#define CCOW_PIN_STOP	_IO('g', 8)
#define CCOW_PIN_WRITE	1	/* PIN_LONGTERM_TEST_FLAG_USE_WRITE */
#define PM_PFN(e)	((e) & (((uint64_t)1 << 55) - 1))
#define PINNED_PAGES	4

static int write_last_page(char *p, void *arg)
{
	int i;

	p[(REGION_PAGES - 1) * 4096UL] = 'c';
	for (i = 0; i < REGION_PAGES - 1; i++)
		if (p[i * 4096UL] != (char)i)
			return 1;
	/* The unpinned pages were pre-copied, the pinned copied at fork. */
	return exclusive_mask(p, REGION_PAGES) ==
	       ((uint64_t)1 << REGION_PAGES) - 1 ? 0 : 2;
}

TEST_F(ccow, gup_pinned_pages_left_alone)
{
	struct ccow_pin_longterm pin = { .flags = CCOW_PIN_WRITE };
	unsigned long long pfn[PINNED_PAGES];
	char *p = region_area(REGION_PAGES);
	long long pre0;
	int fd, i;

	ASSERT_NE(NULL, p);
	fd = open("/sys/kernel/debug/gup_test", O_RDWR);
	if (fd < 0)
		SKIP(return, "no /sys/kernel/debug/gup_test (CONFIG_GUP_TEST)");
	pin.addr = (uintptr_t)p;
	pin.size = PINNED_PAGES * 4096UL;
	ASSERT_EQ(0, ioctl(fd, CCOW_PIN_START, &pin));
	for (i = 0; i < PINNED_PAGES; i++) {
		pfn[i] = PM_PFN(pm_entry(p + i * 4096UL));
		ASSERT_NE(0ULL, pfn[i]) TH_LOG("no PFN: pagemap needs root");
	}
	pre0 = ccow_stat(self->cg, "ccow_precopied");
	EXPECT_EQ(0, in_child(write_last_page, p, NULL));
	EXPECT_GE(ccow_stat(self->cg, "ccow_precopied") - pre0,
		  REGION_PAGES - 1 - PINNED_PAGES);
	/* The parent still maps the very pages it pinned, and their data. */
	for (i = 0; i < PINNED_PAGES; i++) {
		EXPECT_EQ(pfn[i], PM_PFN(pm_entry(p + i * 4096UL)));
		EXPECT_EQ((char)i, p[i * 4096UL]);
	}
	EXPECT_EQ(0, ioctl(fd, CCOW_PIN_STOP));
	close(fd);
}

/* A 2 MiB-aligned area of 2 MiB backed by one huge page, or NULL. */
static char *huge_area(char *thp_saved, size_t size)
{
	char *p = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long kb0 = htmm_anon_huge_kb();
	char *a;
	size_t i;

	if (p == MAP_FAILED || htmm_thp_get(thp_saved, size) ||
	    htmm_thp_set("madvise"))
		return NULL;
	a = (char *)(((uintptr_t)p + 2 * MiB - 1) & ~(2 * MiB - 1));
	munmap(p, a - p);
	munmap(a + 2 * MiB, p + 4 * MiB - (a + 2 * MiB));
	if (madvise(a, 2 * MiB, MADV_HUGEPAGE))
		return NULL;
	for (i = 0; i < 512; i++)
		memset(a + i * 4096, (int)(i & 0xff), 4096);
	return htmm_anon_huge_kb() - kb0 >= 2048 ? a : NULL;
}

/* The child's copy of the area is one huge page, by @deadline_s. */
static int child_huge_after_write(char *p, void *arg)
{
	double deadline = htmm_now_s() + *(double *)arg, t0 = htmm_now_s();
	long kb;
	int i;

	p[5 * 4096] = 'w';
	while ((kb = htmm_anon_huge_kb()) < 2048 && htmm_now_s() < deadline)
		usleep(10000);
	printf("# child: AnonHugePages %ld kB after %.2f s\n", kb,
	       htmm_now_s() - t0);
	if (kb < 2048)
		return 1;
	for (i = 0; i < 512; i++)
		if (p[i * 4096UL] != (i == 5 ? 'w' : (char)i))
			return 2;
	return exclusive_mask(p, 64) == ~0ULL ? 0 : 3;
}

static void huge_copy_case(struct __test_metadata *_metadata, const char *cg,
			   char *thp_saved, const char *sync_kb,
			   double deadline_s)
{
	unsigned long long split0 = 0, split1 = 0, coll0 = 0, coll1 = 0;
	long long rc0;
	char *p;
	int i;

	ASSERT_EQ(0, ccow_set("htmm_ccow_region_kb", "2048"));
	ASSERT_EQ(0, ccow_set("htmm_ccow_max_sync_kb", sync_kb));
	p = huge_area(thp_saved, 32);
	if (!p)
		SKIP(return, "no huge page for the test area");
	rc0 = ccow_stat(cg, "ccow_region_copies");
	htmm_vmstat_get("thp_split_pmd", &split0);
	htmm_vmstat_get("thp_collapse_alloc", &coll0);
	EXPECT_EQ(0, in_child(child_huge_after_write, p, &deadline_s));
	htmm_vmstat_get("thp_split_pmd", &split1);
	htmm_vmstat_get("thp_collapse_alloc", &coll1);
	EXPECT_GE(ccow_stat(cg, "ccow_region_copies") - rc0, 1);
	/* The parent keeps its huge page and its data. */
	EXPECT_GE(htmm_anon_huge_kb(), 2048);
	for (i = 0; i < 512; i++)
		ASSERT_EQ((char)i, p[i * 4096UL]);
	/*
	 * A copy in the fault neither splits nor collapses; a bounded fault
	 * splits the child's PMD, and the worker collapses the region.
	 */
	if (!strcmp(sync_kb, "2048")) {
		EXPECT_EQ(split0, split1);
		EXPECT_EQ(coll0, coll1);
	} else {
		EXPECT_LT(split0, split1);
		EXPECT_LT(coll0, coll1);
	}
	munmap(p, 2 * MiB);
}

/* Threshold 0, unbounded: the fault copies the huge page whole. */
TEST_F(ccow, huge_page_copied_whole_in_fault)
{
	huge_copy_case(_metadata, self->cg, self->thp_saved, "2048", 0);
}

/* Bounded fault: the PMD splits, and the worker makes a huge page again. */
TEST_F(ccow, huge_region_collapsed_by_worker)
{
	huge_copy_case(_metadata, self->cg, self->thp_saved, "64", 10);
}

/*
 * Parent and children write random pages after each fork; each checks
 * that it sees exactly its own writes (a checksum per page).
 */
#define ISO_PAGES	1024
#define ISO_FORKS	24
#define ISO_WRITES	300

static uint32_t page_sum(const char *p)
{
	const uint32_t *w = (const uint32_t *)p;
	uint32_t s = 0;
	int i;

	for (i = 0; i < 1024; i++)
		s = s * 31 + w[i];
	return s;
}

static void random_writes(char *p, uint32_t *sums, unsigned int *seed)
{
	int i, pg;

	for (i = 0; i < ISO_WRITES; i++) {
		pg = rand_r(seed) % ISO_PAGES;
		((uint32_t *)(p + pg * 4096UL))[rand_r(seed) % 1024] =
			rand_r(seed);
		sums[pg] = page_sum(p + pg * 4096UL);
	}
}

static int check_sums(const char *p, const uint32_t *sums)
{
	int pg, bad = 0;

	for (pg = 0; pg < ISO_PAGES; pg++)
		bad += page_sum(p + pg * 4096UL) != sums[pg];
	return bad;
}

static int iso_child(char *p, void *arg)
{
	uint32_t *sums = arg;
	unsigned int seed = getpid();

	random_writes(p, sums, &seed);
	return check_sums(p, sums) ? 1 : 0;
}

TEST_F(ccow, isolation_across_forks)
{
	static const char * const thresholds[] = { "0", "50", "90" };
	char *p = region_area(ISO_PAGES);
	uint32_t *sums = calloc(ISO_PAGES, sizeof(*sums));
	unsigned int seed = 1, f;
	int pg, bad;

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, sums);
	for (pg = 0; pg < ISO_PAGES; pg++)
		sums[pg] = page_sum(p + pg * 4096UL);
	for (f = 0; f < ISO_FORKS; f++) {
		pid_t pid;
		int st;

		ASSERT_EQ(0, ccow_set("htmm_ccow_threshold", thresholds[f % 3]));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid)
			_exit(iso_child(p, sums));
		/* The parent writes while the child does. */
		random_writes(p, sums, &seed);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
			TH_LOG("fork %u: the child saw others' writes", f);
		bad = check_sums(p, sums);
		EXPECT_EQ(0, bad) TH_LOG("fork %u: %d pages wrong", f, bad);
	}
	free(sums);
}

/*
 * Every page a region copy replaced is freed once nothing maps it: after
 * the child's copies and the parent's munmap, the cgroup's memory is back
 * where it was before the area (1 MiB of slack for page tables and slab).
 */
static int write_every_region(char *p, void *arg)
{
	size_t pages = *(size_t *)arg, i;

	for (i = 0; i < pages; i += REGION_PAGES)
		p[i * 4096] = 'w';
	return exclusive_mask(p, REGION_PAGES) ==
	       ((uint64_t)1 << REGION_PAGES) - 1 ? 0 : 1;
}

TEST_F(ccow, replaced_pages_freed)
{
	unsigned long long cur0 = 0, cur1 = 0;
	size_t pages = 4096;	/* 16 MiB */
	char path[PATH_MAX];
	long long pre0;
	char *p;

	htmm_cg_file(path, sizeof(path), self->cg, "memory.current");
	ASSERT_EQ(0, htmm_read_value(path, &cur0));
	p = region_area(pages);
	ASSERT_NE(NULL, p);
	pre0 = ccow_stat(self->cg, "ccow_precopied");
	ASSERT_EQ(0, in_child(write_every_region, p, &pages));
	EXPECT_GE(ccow_stat(self->cg, "ccow_precopied") - pre0,
		  (long long)(pages - pages / REGION_PAGES));
	munmap(p, pages * 4096);
	ASSERT_EQ(0, htmm_read_value(path, &cur1));
	TH_LOG("memory.current %llu kB before the area, %llu kB after",
	       cur0 >> 10, cur1 >> 10);
	EXPECT_LE(cur1, cur0 + MiB);
}

/*
 * Close to memory.max: pre-copies stop short of the limit, the writes that
 * must copy still do, and nothing is OOM-killed.
 */
static int near_limit_child(char *p, void *arg)
{
	size_t pages = *(size_t *)arg, i;

	for (i = 0; i < pages; i += REGION_PAGES)
		p[i * 4096] = 'w';
	for (i = 0; i < pages; i++)
		if (p[i * 4096] != (i % REGION_PAGES ? (char)i : 'w'))
			return 1;
	return 0;
}

TEST_F(ccow, near_memory_max_no_oom)
{
	size_t pages = 4096;	/* 16 MiB */
	char path[PATH_MAX], buf[64];
	unsigned long long cur = 0, oom0 = 0, oom1 = 0;
	long long failed0;
	char *p = region_area(pages);

	ASSERT_NE(NULL, p);
	htmm_cg_file(path, sizeof(path), self->cg, "memory.current");
	ASSERT_EQ(0, htmm_read_value(path, &cur));
	/* Room for the copies the writes need (1 MiB), and 3 MiB more. */
	snprintf(buf, sizeof(buf), "%llu", cur + 4 * MiB);
	htmm_cg_file(path, sizeof(path), self->cg, "memory.max");
	ASSERT_EQ(0, htmm_write_str(path, buf));
	htmm_cg_file(path, sizeof(path), self->cg, "memory.events");
	htmm_keyed_get(path, "oom_kill", &oom0);
	failed0 = ccow_stat(self->cg, "ccow_precopy_failed");
	EXPECT_EQ(0, in_child(near_limit_child, p, &pages));
	htmm_keyed_get(path, "oom_kill", &oom1);
	EXPECT_EQ(oom0, oom1);
	EXPECT_GT(ccow_stat(self->cg, "ccow_precopy_failed"), failed0);
	htmm_cg_file(path, sizeof(path), self->cg, "memory.max");
	htmm_write_str(path, "max");
}

/*
 * A delegated subtree (Documentation/admin-guide/cgroup-v2.rst,
 * "Delegation"): the delegator hands D = self->cg to uid 65534, keeps D's
 * own interface files, enables htmm in D and sets htmm_ccow_enabled to
 * "htmm".  The delegatee makes a child of its own, enables htmm there,
 * lifts the child's memory.max, and forks over 16 MiB; its child writes
 * one page of every region.  CCoW pre-copies for the delegatee, the
 * pre-copies are charged, D's memory.max (which the delegatee cannot
 * change) stops them short, and nothing is OOM-killed.
 */
#define DELEG_PAGES	4096	/* 16 MiB */

struct deleg_ctl {
	const char *d;
	int ready, go;		/* pipe ends: worker -> test, test -> worker */
};

/* The delegatee's side, as uid 65534 in D/stage; 0, or the failed step. */
static int deleg_worker(const struct deleg_ctl *c)
{
	size_t pages = DELEG_PAGES;
	char cg[HTMM_CG_PATH_MAX + 8], path[PATH_MAX], b = 0;
	char *p;

	if (setgroups(0, NULL) || setgid(HTMM_UNPRIV_ID) ||
	    setuid(HTMM_UNPRIV_ID))
		return 10;
	htmm_cg_file(cg, sizeof(cg), c->d, "c1");
	if (mkdir(cg, 0755))
		return 11;
	htmm_cg_file(path, sizeof(path), cg, "memory.htmm_enabled");
	if (htmm_write_str(path, "enabled"))
		return 12;
	htmm_cg_file(path, sizeof(path), cg, "memory.max");
	if (htmm_write_str(path, "max"))
		return 13;
	if (htmm_cg_enter(cg, 0))
		return 14;
	/* The delegator's switches stay the delegator's. */
	if (!access(CCOW_DIR "htmm_ccow_enabled", W_OK))
		return 15;
	p = region_area(pages);
	if (!p)
		return 16;
	if (write(c->ready, &b, 1) != 1 || read(c->go, &b, 1) != 1)
		return 17;
	return in_child(near_limit_child, p, &pages) ? 18 : 0;
}

/* Start the delegatee in D/stage; its pid, or -1. */
static pid_t deleg_start(const char *d, int ready[2], int go[2])
{
	const struct deleg_ctl c = { d, ready[1], go[0] };
	char stage[HTMM_CG_PATH_MAX + 8];
	pid_t pid;

	htmm_cg_file(stage, sizeof(stage), d, "stage");
	fflush(stdout);
	pid = fork();
	if (pid)
		return pid;
	close(ready[0]);
	close(go[1]);
	_exit(htmm_cg_enter(stage, 0) ? 9 : deleg_worker(&c));
}

/* The delegator's part: D's children may use memory, D is 65534's. */
static int deleg_setup(const char *d)
{
	static const char * const owned[] = {
		"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control",
	};
	char path[PATH_MAX];
	unsigned int i;

	htmm_write_str(HTMM_CGROUP_ROOT "/cgroup.procs", "0");
	htmm_cg_file(path, sizeof(path), d, "stage");
	if (mkdir(path, 0755))
		return -errno;
	htmm_cg_file(path, sizeof(path), d, "cgroup.subtree_control");
	if (htmm_write_str(path, "+memory"))
		return -EIO;
	for (i = 0; i < ARRAY_SIZE(owned); i++) {
		htmm_cg_file(path, sizeof(path), d, owned[i]);
		if (chown(path, HTMM_UNPRIV_ID, HTMM_UNPRIV_ID))
			return -errno;
	}
	htmm_cg_file(path, sizeof(path), d, "memory.htmm_enabled");
	return htmm_write_str(path, "enabled");
}

TEST_F(ccow, delegated_subtree_within_delegator_max)
{
	unsigned long long cur = 0, oom0 = 0, oom1 = 0;
	char path[PATH_MAX], c1[HTMM_CG_PATH_MAX + 8], buf[64], b = 0;
	long long pre0, failed0;
	int ready[2], go[2], st = 0;
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(0, ccow_set("htmm_ccow_enabled", "htmm"));
	ASSERT_EQ(0, deleg_setup(self->cg));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = deleg_start(self->cg, ready, go);
	ASSERT_LT(0, pid);
	close(ready[1]);
	close(go[0]);
	/* The worker is set up and has its 16 MiB, or it quit. */
	n = read(ready[0], &b, 1);
	if (n != 1 && waitpid(pid, &st, 0) == pid)
		TH_LOG("delegatee: exit %d in set-up (see deleg_worker)",
		       WEXITSTATUS(st));
	ASSERT_EQ(1, n);
	htmm_cg_file(c1, sizeof(c1), self->cg, "c1");
	htmm_cg_file(path, sizeof(path), self->cg, "memory.current");
	EXPECT_EQ(0, htmm_read_value(path, &cur));
	/* Room for the copies the writes need (1 MiB), and 3 MiB more. */
	snprintf(buf, sizeof(buf), "%llu", cur + 4 * MiB);
	htmm_cg_file(path, sizeof(path), self->cg, "memory.max");
	EXPECT_EQ(0, htmm_write_str(path, buf));
	htmm_cg_file(path, sizeof(path), self->cg, "memory.events");
	htmm_keyed_get(path, "oom_kill", &oom0);
	pre0 = ccow_stat(c1, "ccow_precopied");
	failed0 = ccow_stat(c1, "ccow_precopy_failed");
	EXPECT_EQ(1, write(go[1], &b, 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("delegatee: status %#x (exit 18: the child's writes)",
		       st);
	htmm_keyed_get(path, "oom_kill", &oom1);
	EXPECT_EQ(oom0, oom1);
	TH_LOG("pre-copied %lld pages, %lld pre-copies refused by D's limit",
	       ccow_stat(c1, "ccow_precopied") - pre0,
	       ccow_stat(c1, "ccow_precopy_failed") - failed0);
	EXPECT_GT(ccow_stat(c1, "ccow_precopied"), pre0);
	EXPECT_GT(ccow_stat(c1, "ccow_precopy_failed"), failed0);
	close(ready[0]);
	close(go[1]);
}

TEST_HARNESS_MAIN
