// SPDX-License-Identifier: GPL-2.0
/*
 * The Accessed-bit sampler must not hide references from reclaim.
 *
 * A process in a cgroup holds hot data (written first, then read page by
 * page, 64 pages at a time, each page every 0.2 s) and cold data (written
 * once, after).  After a few seconds RECLAIM_SZ is reclaimed from the
 * cgroup to swap on zram through memory.reclaim.  (Not by lowering
 * memory.high: that throttles the reader as soon as it faults one page
 * back in, its hot pages then go cold, and reclaim takes them in a
 * cascade that says nothing about the Accessed bits.)  Reclaim must take
 * the cold pages first, with htmm enabled (abit clearing Accessed bits every 50 ms) as with htmm
 * disabled.  Each variant runs with the multi-gen LRU on and off.
 */
#define _GNU_SOURCE
#include "htmm_util.h"

#define HTMM_SYSFS	"/sys/kernel/mm/htmm"
#define LRU_GEN		"/sys/kernel/mm/lru_gen/enabled"
#define ZRAM		"/sys/block/zram0"
#define PAGE_SZ		4096UL
#define HOT_SZ		(16 * MiB)
#define COLD_SZ		(32 * MiB)
#define RECLAIM_SZ	(24 * MiB)
#define WARM_S		6	/* seconds of hot reads before reclaim */

struct reclaim_share {
	unsigned long hot, cold;	/* addresses, from the child */
};

/* What one run saw. */
struct reclaim_res {
	double hot, cold;		/* resident after reclaim, % */
	double reclaim_s;		/* time the memory.reclaim write took */
	unsigned long rounds_warm;	/* hot rounds the child read before */
	unsigned long rounds_reclaim;	/* and while reclaim ran */
	unsigned long majflt;		/* its major faults meanwhile */
};

/* Hot rounds the child completed, in a page shared with the parent. */
static unsigned long *reclaim_rounds;

static unsigned long reclaim_rounds_now(void)
{
	return __atomic_load_n(reclaim_rounds, __ATOMIC_RELAXED);
}

/* The child: write everything once, then read the hot pages slowly. */
static void reclaim_child(int fd)
{
	struct reclaim_share sh;
	unsigned long i, n = HOT_SZ / PAGE_SZ;
	char *hot, *cold, v;

	cold = mmap(NULL, COLD_SZ, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	hot = mmap(NULL, HOT_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (cold == MAP_FAILED || hot == MAP_FAILED)
		_exit(1);
	madvise(cold, COLD_SZ, MADV_NOHUGEPAGE);
	madvise(hot, HOT_SZ, MADV_NOHUGEPAGE);
	/*
	 * Hot data first: it is then the oldest on the LRU lists (and in the
	 * oldest MGLRU generation), so only its references keep it.
	 */
	memset(hot, 0xa5, HOT_SZ);
	memset(cold, 0x5a, COLD_SZ);
	sh.hot = (unsigned long)hot;
	sh.cold = (unsigned long)cold;
	if (!htmm_full_write(fd, &sh, sizeof(sh)))
		_exit(1);
	for (;;) {
		/*
		 * 64 pages every 3.125 ms: each hot page every 0.2 s, in
		 * small steps.  Classic reclaim deactivates the hot pages and
		 * takes those not read again before it reaches them on the
		 * inactive list; at one read every 0.8 s that was up to
		 * 2375 of them, from 0 in the next run, so the test compared
		 * noise.  htmm's scans still leave a page's Accessed bit
		 * clear for 150 ms of each 200: without folio_set_young()
		 * most hot pages would look unused.
		 */
		for (i = 0; i < n; i++) {
			v = hot[i * PAGE_SZ];
			asm volatile("" : : "r" (v));
			if (i % 64 == 63)
				usleep(3125);
		}
		__atomic_fetch_add(reclaim_rounds, 1, __ATOMIC_RELAXED);
	}
}

/* Pages of [@addr, @addr + @len) of @pid that are in memory, in percent. */
static double reclaim_resident(pid_t pid, unsigned long addr, size_t len)
{
	unsigned long n = len / PAGE_SZ, i, present = 0;
	char path[64];
	uint64_t e;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (pread(fd, &e, sizeof(e), (addr / PAGE_SZ + i) * 8) != 8) {
			close(fd);
			return -1;
		}
		present += !!(e & (1ULL << 63));
	}
	close(fd);
	return 100.0 * present / n;
}

FIXTURE(htmm_reclaim) {
	char cg[HTMM_CG_PATH_MAX];
	char sampler[32];
	char lru_gen[32];
	unsigned long long interval, quota, rate;
	bool swap_on;		/* this test turned swap on */
};

FIXTURE_VARIANT(htmm_reclaim) {
	bool mglru;
};

FIXTURE_VARIANT_ADD(htmm_reclaim, mglru) { .mglru = true };
FIXTURE_VARIANT_ADD(htmm_reclaim, classic_lru) { .mglru = false };

FIXTURE_SETUP(htmm_reclaim)
{
	if (htmm_cg_prepare())
		SKIP(return, "no cgroup v2 memory controller");
	ASSERT_TRUE(htmm_path_exists(LRU_GEN)) TH_LOG("no CONFIG_LRU_GEN");
	ASSERT_TRUE(htmm_path_exists(ZRAM)) TH_LOG("no zram (CONFIG_ZRAM)");
	ASSERT_LT(0, htmm_read_file(LRU_GEN, self->lru_gen,
				    sizeof(self->lru_gen)));
	self->lru_gen[strcspn(self->lru_gen, "\n")] = '\0';
	ASSERT_EQ(0, htmm_write_str(LRU_GEN, variant->mglru ? "y" : "n"));
	ASSERT_LT(0, htmm_read_file(HTMM_SYSFS "/htmm_sampler", self->sampler,
				    sizeof(self->sampler)));
	self->sampler[strcspn(self->sampler, "\n")] = '\0';
	ASSERT_EQ(0, htmm_read_value(HTMM_SYSFS "/htmm_abit_interval_ms",
				     &self->interval));
	ASSERT_EQ(0, htmm_read_value(HTMM_SYSFS "/ksampled_soft_cpu_quota",
				     &self->quota));
	ASSERT_EQ(0, htmm_read_value(HTMM_SYSFS "/htmm_abit_rate_mb",
				     &self->rate));
	/* Scan the whole set every interval: no CPU quota, no rate limit. */
	ASSERT_EQ(0, htmm_write_str(HTMM_SYSFS "/ksampled_soft_cpu_quota", "0"));
	ASSERT_EQ(0, htmm_write_str(HTMM_SYSFS "/htmm_abit_rate_mb", "1048576"));
	ASSERT_EQ(0, htmm_write_str(HTMM_SYSFS "/htmm_sampler", "abit"));
	ASSERT_EQ(0, htmm_write_str(HTMM_SYSFS "/htmm_abit_interval_ms", "50"));
	if (!htmm_word_in_file("/proc/swaps", "/dev/zram0")) {
		ASSERT_EQ(0, htmm_write_str(ZRAM "/disksize", "256M"));
		ASSERT_EQ(0, system("mkswap /dev/zram0 >/dev/null && swapon /dev/zram0"));
		self->swap_on = true;
	}
	ASSERT_EQ(0, htmm_cg_create(self->cg, sizeof(self->cg), "htmm_reclaim"));
	/* Faulted in here, so it is charged outside the test cgroup. */
	reclaim_rounds = mmap(NULL, PAGE_SZ, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, reclaim_rounds);
	*reclaim_rounds = 0;
}

FIXTURE_TEARDOWN(htmm_reclaim)
{
	char buf[32];

	htmm_cg_destroy(self->cg);
	/* Later suites must not find swap: they count resident pages. */
	if (self->swap_on && !system("swapoff /dev/zram0"))
		htmm_write_str(ZRAM "/reset", "1");
	if (self->sampler[0])
		htmm_write_str(HTMM_SYSFS "/htmm_sampler", self->sampler);
	if (self->interval) {
		snprintf(buf, sizeof(buf), "%llu", self->interval);
		htmm_write_str(HTMM_SYSFS "/htmm_abit_interval_ms", buf);
		snprintf(buf, sizeof(buf), "%llu", self->quota);
		htmm_write_str(HTMM_SYSFS "/ksampled_soft_cpu_quota", buf);
		snprintf(buf, sizeof(buf), "%llu", self->rate);
		htmm_write_str(HTMM_SYSFS "/htmm_abit_rate_mb", buf);
	}
	if (self->lru_gen[0])
		htmm_write_str(LRU_GEN, self->lru_gen);
}

/* Major faults of @pid (field 12 of /proc/PID/stat), 0 if unknown. */
static unsigned long reclaim_majflt(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long v = 0;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (htmm_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');	/* the command may hold spaces */
	for (i = 2; p && i < 12; i++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoul(p + 1, NULL, 10);
	return v;
}

/*
 * Run the workload in @cg, reclaim RECLAIM_SZ from it after WARM_S
 * seconds and return the resident share of the hot and the cold data.
 */
static int reclaim_run(const char *cg, struct reclaim_res *r)
{
	double t0;
	unsigned long long cur = 0;
	struct reclaim_share sh;
	char path[PATH_MAX], buf[32];
	int fds[2], ret = -1;
	pid_t pid;

	if (pipe(fds))
		return -1;
	*reclaim_rounds = 0;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (htmm_cg_enter(cg, getpid()))
			_exit(1);
		reclaim_child(fds[1]);
	}
	close(fds[1]);
	if (!htmm_full_read(fds[0], &sh, sizeof(sh)))
		goto out;
	sleep(WARM_S);
	htmm_cg_file(path, sizeof(path), cg, "memory.current");
	if (htmm_read_value(path, &cur) || cur < RECLAIM_SZ + HOT_SZ)
		goto out;
	htmm_cg_file(path, sizeof(path), cg, "memory.reclaim");
	snprintf(buf, sizeof(buf), "%lu", RECLAIM_SZ);
	r->rounds_warm = reclaim_rounds_now();
	r->majflt = reclaim_majflt(pid);
	t0 = htmm_now_s();
	if (htmm_write_str(path, buf))	/* reclaims before it returns */
		goto out;
	r->reclaim_s = htmm_now_s() - t0;
	r->rounds_reclaim = reclaim_rounds_now() - r->rounds_warm;
	r->majflt = reclaim_majflt(pid) - r->majflt;
	r->hot = reclaim_resident(pid, sh.hot, HOT_SZ);
	r->cold = reclaim_resident(pid, sh.cold, COLD_SZ);
	ret = r->hot < 0 || r->cold < 0 ? -1 : 0;
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	return ret;
}

/* Hot pages reclaim took: still out, or read back in meanwhile. */
static unsigned long reclaim_hot_taken(const struct reclaim_res *r)
{
	return r->majflt + (unsigned long)((100.0 - r->hot) *
					   (HOT_SZ / PAGE_SZ) / 100 + 0.5);
}

static void reclaim_log(struct __test_metadata *_metadata, bool mglru,
			const char *what, const struct reclaim_res *r)
{
	TH_LOG("%s, htmm %s: hot %.1f%% resident, cold %.1f%%",
	       mglru ? "MGLRU" : "classic LRU", what, r->hot, r->cold);
	TH_LOG("reclaim: %.1f s; the reader: %lu rounds before, %lu during it, %lu major faults",
	       r->reclaim_s, r->rounds_warm, r->rounds_reclaim, r->majflt);
}

TEST_F_TIMEOUT(htmm_reclaim, cold_pages_go_first, 300)
{
	struct reclaim_res off = {}, on = {};
	unsigned long long samples = 0, promoted = 0, demoted = 0;
	char path[PATH_MAX];

	ASSERT_EQ(0, reclaim_run(self->cg, &off));
	reclaim_log(_metadata, variant->mglru, "disabled", &off);

	htmm_cg_file(path, sizeof(path), self->cg, "memory.htmm_enabled");
	ASSERT_EQ(0, htmm_write_str(path, "enabled"));
	ASSERT_EQ(0, reclaim_run(self->cg, &on));
	reclaim_log(_metadata, variant->mglru, "enabled", &on);
	htmm_cg_file(path, sizeof(path), self->cg, "memory.htmm_stat");
	ASSERT_EQ(0, htmm_keyed_get(path, "samples_abit", &samples));
	ASSERT_EQ(0, htmm_keyed_get(path, "promoted", &promoted));
	ASSERT_EQ(0, htmm_keyed_get(path, "demoted", &demoted));
	TH_LOG("%llu abit samples, %llu pages promoted, %llu demoted",
	       samples, promoted, demoted);
	/* The scanner ran and cleared Accessed bits all along. */
	EXPECT_LT(1000ULL, samples);
	/*
	 * Reclaim took the cold data first, as without htmm.  Without
	 * folio_set_young(), a hot page's Accessed bit is clear for most of
	 * the 0.2 s between two reads, and reclaim takes hot and cold alike.
	 * A hot page reclaimed early is read back in (a major fault) before
	 * the end, so both count.  Allowed: 5% of the hot pages more than
	 * without htmm.
	 */
	TH_LOG("hot pages reclaimed: %lu with htmm, %lu without",
	       reclaim_hot_taken(&on), reclaim_hot_taken(&off));
	EXPECT_GE(reclaim_hot_taken(&off) + HOT_SZ / PAGE_SZ / 20,
		  reclaim_hot_taken(&on));
	EXPECT_LT(on.cold + 20.0, on.hot);
}

TEST_HARNESS_MAIN
