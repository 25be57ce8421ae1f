// SPDX-License-Identifier: GPL-2.0
/*
 * The Accessed-bit sampler must not hide references from reclaim.
 *
 * A process in a cgroup holds hot data (written first, then read page by
 * page, each page every 0.8 s) and cold data (written once, after).
 * After a few seconds the cgroup's memory.high is lowered below its
 * usage, so that the write
 * reclaims to swap on zram.  Reclaim must take the cold pages first, with
 * htmm enabled (abit clearing Accessed bits every 50 ms) as with htmm
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
		/* 256 pages every 50 ms: each hot page every 0.8 s. */
		for (i = 0; i < n; i++) {
			v = hot[i * PAGE_SZ];
			asm volatile("" : : "r" (v));
			if (i % 256 == 255)
				usleep(50 * 1000);
		}
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

/*
 * Run the workload in @cg, lower memory.high by RECLAIM_SZ after WARM_S
 * seconds and return the resident share of the hot and the cold data.
 */
static int reclaim_run(const char *cg, double *hot, double *cold)
{
	unsigned long long cur = 0;
	struct reclaim_share sh;
	char path[PATH_MAX], buf[32];
	int fds[2], ret = -1;
	pid_t pid;

	if (pipe(fds))
		return -1;
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
	htmm_cg_file(path, sizeof(path), cg, "memory.high");
	snprintf(buf, sizeof(buf), "%llu", cur - RECLAIM_SZ);
	if (htmm_write_str(path, buf))	/* reclaims before it returns */
		goto out;
	*hot = reclaim_resident(pid, sh.hot, HOT_SZ);
	*cold = reclaim_resident(pid, sh.cold, COLD_SZ);
	htmm_write_str(path, "max");
	ret = *hot < 0 || *cold < 0 ? -1 : 0;
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	return ret;
}

TEST_F_TIMEOUT(htmm_reclaim, cold_pages_go_first, 300)
{
	double hot_off, cold_off, hot_on, cold_on;
	unsigned long long samples = 0;
	char path[PATH_MAX];

	ASSERT_EQ(0, reclaim_run(self->cg, &hot_off, &cold_off));
	TH_LOG("%s, htmm disabled: hot %.1f%% resident, cold %.1f%%",
	       variant->mglru ? "MGLRU" : "classic LRU", hot_off, cold_off);

	htmm_cg_file(path, sizeof(path), self->cg, "memory.htmm_enabled");
	ASSERT_EQ(0, htmm_write_str(path, "enabled"));
	ASSERT_EQ(0, reclaim_run(self->cg, &hot_on, &cold_on));
	htmm_cg_file(path, sizeof(path), self->cg, "memory.htmm_stat");
	ASSERT_EQ(0, htmm_keyed_get(path, "samples_abit", &samples));
	TH_LOG("%s, htmm enabled:  hot %.1f%% resident, cold %.1f%% (%llu abit samples)",
	       variant->mglru ? "MGLRU" : "classic LRU", hot_on, cold_on,
	       samples);
	/* The scanner ran and cleared Accessed bits all along. */
	EXPECT_LT(1000ULL, samples);
	/*
	 * Reclaim took the cold data first, as without htmm.  Without
	 * folio_set_young(), a hot page's Accessed bit is clear for most of
	 * the 0.8 s between two reads, and reclaim takes hot and cold alike.
	 */
	EXPECT_LE(hot_off - 10.0, hot_on);
	EXPECT_LT(cold_on + 20.0, hot_on);
}

TEST_HARNESS_MAIN
