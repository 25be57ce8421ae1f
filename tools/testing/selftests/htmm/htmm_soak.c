// SPDX-License-Identifier: GPL-2.0
/*
 * htmm soak test: everything at once, at random, from one seed.
 *
 *   htmm_soak --seed N --seconds S
 *
 * Worker processes run side by side, each with a seed of its own derived
 * from N and its index (logged, so that a run can be replayed):
 *
 *   data      checksummed pages, verified all the time while its threads
 *             rewrite them, mbind() and move_pages() them, inject samples,
 *             collapse and split their huge pages, punch holes in them and
 *             fork children that verify their copy
 *   tunables  good and bad writes to /sys/kernel/mm/htmm; a good write
 *             must read back, a bad one fail and leave the value alone
 *   knobs     enable and disable htmm in the soak cgroups, set their
 *             memory.max_at_node<N>; bad writes as for the tunables
 *   cgroups   mkdir and rmdir of the soak cgroups, task moves between them
 *   forks     fork and exit: children allocate (huge pages too), check
 *             their data, exit or are killed
 *   hotplug   vCPU 1 offline and online
 *
 * At the end htmm is disabled in every soak cgroup, the cgroups are
 * removed, and no kmigraterd, ksamplingd or perf counter may be left.  The
 * last line is "soak: seed N, S s, X checksum mismatches, Y errors"; the
 * exit status is 0 only if X and Y are 0 (4: htmm is not on, skipped).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/klog.h>

/* htmm_util.h brings the kselftest harness, whose runner is not used. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "htmm_util.h"
#pragma GCC diagnostic pop

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif

#define PAGE_SZ			4096UL
#define HPAGE_SZ		(2UL << 20)
#define WORDS			(PAGE_SZ / sizeof(unsigned long))
#define NR_CHUNKS		32UL	/* data region: 32 huge pages */
#define CHUNK_PAGES		(HPAGE_SZ / PAGE_SZ)
#define NR_PAGES		(NR_CHUNKS * CHUNK_PAGES)
#define DATA_LEN		(NR_CHUNKS * HPAGE_SZ)
#define MAX_KIDS		4	/* live children of the forks worker */
#define MAX_LOGGED		40	/* detailed lines per process */
#define STOP_TIMEOUT_S		300	/* for the workers to finish */
#define IDLE_TIMEOUT_S		30	/* for the threads to go */
#define PROGRESS_S		30
#define CPU1_ONLINE		"/sys/devices/system/cpu/cpu1/online"
#define THP_DIR			"/sys/kernel/mm/transparent_hugepage"
#define PERF_COUNTERS		HTMM_DEBUGFS_DIR "/perf_counters"
#define CG_PATH_MAX		(HTMM_CG_PATH_MAX + 16)	/* a soak cgroup */

/* Errno sets of the results that are refused as expected. */
#define EBIT(e)			(1ULL << (e))

enum counter {
	C_TUN_GOOD, C_TUN_BAD, C_ENABLE, C_DISABLE, C_BUDGET, C_KNOB_BAD,
	C_MKDIR, C_RMDIR, C_MOVE, C_FORK, C_KILL, C_CPU_OFF, C_CPU_ON,
	C_VERIFIED, C_REWRITTEN, C_MBIND, C_MOVE_PAGES, C_INJECT,
	C_COLLAPSE, C_SPLIT, C_HOLE, C_REMAP, C_SNAPSHOT, C_REFUSED,
	NR_COUNTERS
};

static const char * const counter_names[NR_COUNTERS] = {
	"tunable_good", "tunable_bad", "enable", "disable", "budget",
	"knob_bad", "mkdir", "rmdir", "task_move", "fork", "kill",
	"cpu_offline", "cpu_online", "pages_verified", "pages_rewritten",
	"mbind", "move_pages", "inject", "collapse", "split", "hole",
	"remap", "snapshot", "refused_as_expected",
};

enum worker_id {
	W_DATA, W_TUNABLES, W_KNOBS, W_CGROUPS, W_FORKS, W_HOTPLUG,
	NR_WORKERS
};

/* Shared by every process of the soak (MAP_SHARED). */
struct soak_shared {
	int stop;
	int data_ready;		/* 1: the data is in place, -1: it failed */
	pid_t pid[NR_WORKERS];
	unsigned long mismatches;
	unsigned long errors;
	unsigned long count[NR_COUNTERS];
};

static struct soak_shared *sh;
static __thread const char *who = "control";
static unsigned int nr_logged;
static unsigned long long master_seed;
static char top_cg[HTMM_CG_PATH_MAX];
static int mem_nodes[HTMM_MAX_NODES];
static int nr_mem_nodes;
static bool have_inject;

/* ------------------------------------------------------------------ */
/* Logging, counting, random numbers                                   */
/* ------------------------------------------------------------------ */

/* One line, one write(2): no stdio, so children of threads may log. */
static __printf(2, 0) void vlog(const char *tag, const char *fmt, va_list ap)
{
	char line[768];
	int n, m;

	n = snprintf(line, sizeof(line), "# soak: %s%s: ", who, tag);
	m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	if (m > 0)
		n += m;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDOUT_FILENO, line, n) < 0)
		return;
}

static __printf(1, 2) void msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

/* An error: counted always, logged up to MAX_LOGGED times a process. */
static __printf(1, 2) void fail(const char *fmt, ...)
{
	va_list ap;

	__atomic_fetch_add(&sh->errors, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&nr_logged, 1, __ATOMIC_RELAXED) >= MAX_LOGGED)
		return;
	va_start(ap, fmt);
	vlog(" ERROR", fmt, ap);
	va_end(ap);
}

static void count(enum counter c, unsigned long n)
{
	__atomic_fetch_add(&sh->count[c], n, __ATOMIC_RELAXED);
}

static void add_mismatches(unsigned long n)
{
	if (n)
		__atomic_fetch_add(&sh->mismatches, n, __ATOMIC_RELAXED);
}

static bool stopping(void)
{
	return __atomic_load_n(&sh->stop, __ATOMIC_RELAXED);
}

static bool err_in(int err, unsigned long long set)
{
	err = err < 0 ? -err : err;
	return err > 0 && err < 64 && ((set >> err) & 1);
}

/*
 * The result of one operation (0 or -errno): done, refused with an errno
 * of @expected, or an error.  Returns true if it was done.
 */
static bool outcome(int err, unsigned long long expected, enum counter done,
		    const char *what)
{
	if (!err) {
		count(done, 1);
		return true;
	}
	if (err_in(err, expected)) {
		count(C_REFUSED, 1);
		return false;
	}
	fail("%s: unexpected error %d (%s)", what, err, strerror(-err));
	return false;
}

static unsigned long long mix64(unsigned long long x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

struct rng {
	unsigned long long s;
};

/* The seed of stream @idx derived from @seed. */
static unsigned long long derive_seed(unsigned long long seed,
				      unsigned int idx)
{
	return mix64(seed ^ mix64(0x5eed0000ULL + idx));
}

static unsigned long long rnd(struct rng *r)
{
	r->s += 0x9e3779b97f4a7c15ULL;
	return mix64(r->s);
}

static unsigned long below(struct rng *r, unsigned long n)
{
	return n ? rnd(r) % n : 0;
}

static bool chance(struct rng *r, unsigned int percent)
{
	return below(r, 100) < percent;
}

/* Sleep between @min_ms and @max_ms, in slices, until the soak stops. */
static void nap(struct rng *r, unsigned int min_ms, unsigned int max_ms)
{
	unsigned long ms = min_ms + below(r, max_ms - min_ms + 1);

	while (ms && !stopping()) {
		unsigned long slice = ms < 100 ? ms : 100;

		usleep(slice * 1000);
		ms -= slice;
	}
}

static int pick_node(struct rng *r)
{
	return mem_nodes[below(r, nr_mem_nodes)];
}

/* ------------------------------------------------------------------ */
/* The soak cgroups: top, and slots below it                           */
/* ------------------------------------------------------------------ */

static const char * const slot_names[] = {
	"c0", "c1", "c2", "n", "n/c0", "n/c1",
};

#define NR_SLOTS	((int)ARRAY_SIZE(slot_names))
#define SLOT_TOP	(-1)
#define SLOT_DATA	0	/* where the data worker starts */
#define SLOT_N		3	/* the one with children: never holds tasks */
#define SLOT_N_C0	4

static void slot_path(char *buf, size_t size, int slot)
{
	if (slot == SLOT_TOP)
		snprintf(buf, size, "%s", top_cg);
	else
		snprintf(buf, size, "%s/%s", top_cg, slot_names[slot]);
}

static void slot_file(char *buf, size_t size, int slot, const char *file)
{
	char dir[CG_PATH_MAX];

	slot_path(dir, sizeof(dir), slot);
	snprintf(buf, size, "%s/%s", dir, file);
}

/* A slot that may hold tasks. */
static int pick_leaf(struct rng *r)
{
	int slot;

	do {
		slot = below(r, NR_SLOTS);
	} while (slot == SLOT_N);
	return slot;
}

/* ------------------------------------------------------------------ */
/* Checksummed pages                                                   */
/* ------------------------------------------------------------------ */

static unsigned long page_csum(const unsigned long *w)
{
	unsigned long h = 0x243f6a8885a308d3UL;
	size_t i;

	for (i = 0; i < WORDS - 1; i++) {
		h = (h ^ w[i]) * 0xff51afd7ed558ccdUL;
		h ^= h >> 32;
	}
	return h;
}

/* Page @idx of generation @gen: index, generation, payload, checksum. */
static void page_write(void *p, unsigned long idx, unsigned long gen)
{
	unsigned long x = mix64(master_seed ^ (idx << 20) ^ gen);
	unsigned long *w = p;
	size_t i;

	w[0] = idx;
	w[1] = gen;
	for (i = 2; i < WORDS - 1; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		w[i] = x ^ (x >> 29);
	}
	w[WORDS - 1] = page_csum(w);
}

static bool page_ok(const void *p, unsigned long idx, unsigned long gen)
{
	const unsigned long *w = p;

	return w[0] == idx && w[1] == gen && w[WORDS - 1] == page_csum(w);
}

/* ------------------------------------------------------------------ */
/* The data worker                                                     */
/* ------------------------------------------------------------------ */

static struct {
	char *base;				/* 2 MiB aligned */
	unsigned long gen[NR_PAGES];		/* generation of each page */
	pthread_mutex_t lock[NR_CHUNKS];	/* content, gen[], mapping */
	int broken;				/* a hole could not be refilled */
} dr;

static char *page_at(unsigned long idx)
{
	return dr.base + idx * PAGE_SZ;
}

static char *chunk_at(unsigned long c)
{
	return dr.base + c * HPAGE_SZ;
}

static bool data_stop(void)
{
	return stopping() || __atomic_load_n(&dr.broken, __ATOMIC_RELAXED);
}

static void lock_chunk(unsigned long c)
{
	pthread_mutex_lock(&dr.lock[c]);
}

static void unlock_chunk(unsigned long c)
{
	pthread_mutex_unlock(&dr.lock[c]);
}

static void log_mismatch(unsigned long idx, unsigned long gen)
{
	const unsigned long *w = (const unsigned long *)page_at(idx);
	void *p = page_at(idx);
	int node = -1;

	if (__atomic_fetch_add(&nr_logged, 1, __ATOMIC_RELAXED) >= MAX_LOGGED)
		return;
	syscall(SYS_move_pages, 0, 1UL, &p, NULL, &node, 0);
	msg("checksum mismatch: page %lu (huge page %lu) on node %d",
	    idx, idx / CHUNK_PAGES, node);
	msg("  want index %lu gen %lu, found index %lu gen %lu, checksum %s",
	    idx, gen, w[0], w[1],
	    w[WORDS - 1] == page_csum(w) ? "right" : "wrong");
}

/* Bad pages of [first, first + n); with @repair rewritten, to count once. */
static unsigned long verify_range(unsigned long first, unsigned long n,
				  bool repair)
{
	unsigned long idx, bad = 0;

	for (idx = first; idx < first + n; idx++) {
		if (page_ok(page_at(idx), idx, dr.gen[idx]))
			continue;
		bad++;
		log_mismatch(idx, dr.gen[idx]);
		if (repair)
			page_write(page_at(idx), idx, ++dr.gen[idx]);
	}
	count(C_VERIFIED, n);
	return bad;
}

static void step_verify(struct rng *r)
{
	static unsigned long next;
	unsigned long c = next++ % NR_CHUNKS;

	lock_chunk(c);
	if (!dr.broken)
		add_mismatches(verify_range(c * CHUNK_PAGES, CHUNK_PAGES, true));
	unlock_chunk(c);
	nap(r, 1, 2);
}

static void step_write(struct rng *r)
{
	unsigned long c = below(r, NR_CHUNKS), n = 1 + below(r, 64), k;

	lock_chunk(c);
	for (k = 0; k < n && !dr.broken; k++) {
		unsigned long idx = c * CHUNK_PAGES + below(r, CHUNK_PAGES);

		page_write(page_at(idx), idx, ++dr.gen[idx]);
	}
	unlock_chunk(c);
	count(C_REWRITTEN, n);
	nap(r, 1, 20);
}

static int sys_mbind(void *p, size_t len, int mode, unsigned long *mask,
		     unsigned int flags)
{
	if (syscall(SYS_mbind, p, len, mode, mask, mask ? 64UL : 0UL, flags))
		return -errno;
	return 0;
}

/* A policy with MPOL_MF_MOVE on 1-4 huge pages, then maybe none again. */
static void do_mbind(struct rng *r)
{
	const unsigned long long ok = EBIT(EFAULT) | EBIT(ENOMEM) |
				      EBIT(EIO) | EBIT(EAGAIN) | EBIT(EBUSY);
	unsigned long c = below(r, NR_CHUNKS), n = 1 + below(r, 4);
	unsigned long mask = 1UL << pick_node(r);
	int mode = MPOL_BIND, i;

	if (c + n > NR_CHUNKS)
		n = NR_CHUNKS - c;
	if (chance(r, 30)) {
		mode = MPOL_PREFERRED;
	} else if (chance(r, 40)) {
		mode = MPOL_INTERLEAVE;
		for (i = 0; i < nr_mem_nodes; i++)
			mask |= 1UL << mem_nodes[i];
	}
	outcome(sys_mbind(chunk_at(c), n * HPAGE_SZ, mode, &mask, MPOL_MF_MOVE),
		ok, C_MBIND, "mbind");
	if (chance(r, 50))
		outcome(sys_mbind(chunk_at(c), n * HPAGE_SZ, MPOL_DEFAULT,
				  NULL, 0), ok, C_MBIND, "mbind default");
}

/* move_pages() of up to 256 pages, a run or scattered, to random nodes. */
static void do_move_pages(struct rng *r)
{
	enum { MAX_MOVE = 256 };
	unsigned long i, n = 1 + below(r, MAX_MOVE), first = below(r, NR_PAGES);
	bool run = chance(r, 50);
	int nodes[MAX_MOVE], status[MAX_MOVE];
	void *pages[MAX_MOVE];
	long ret;

	for (i = 0; i < n; i++) {
		unsigned long idx = run ? (first + i) % NR_PAGES :
				    below(r, NR_PAGES);

		pages[i] = page_at(idx);
		nodes[i] = pick_node(r);
	}
	ret = syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE);
	outcome(ret < 0 ? -errno : 0,
		EBIT(ENOMEM) | EBIT(EBUSY) | EBIT(EAGAIN) | EBIT(ENOENT),
		C_MOVE_PAGES, "move_pages");
}

/* Samples: on one subpage of up to 8 huge pages (skewed), or uniform. */
static void do_inject(struct rng *r)
{
	unsigned long c = below(r, NR_CHUNKS), n = 1 + below(r, 8);
	int err;

	if (c + n > NR_CHUNKS)
		n = NR_CHUNKS - c;
	if (chance(r, 50))
		err = htmm_inject(getpid(),
				  chunk_at(c) + below(r, CHUNK_PAGES) * PAGE_SZ,
				  n * HPAGE_SZ, HPAGE_SZ, 1 + below(r, 16));
	else
		err = htmm_inject(getpid(), chunk_at(c), HPAGE_SZ, PAGE_SZ,
				  1 + below(r, 4));
	outcome(err, 0, C_INJECT, "inject");
}

static void step_numa(struct rng *r)
{
	unsigned long op = below(r, 10);

	if (op < 4)
		do_mbind(r);
	else if (op < 8)
		do_move_pages(r);
	else if (have_inject)
		do_inject(r);
	nap(r, 5, 100);
}

static void do_collapse(unsigned long c)
{
	int err = madvise(chunk_at(c), HPAGE_SZ, MADV_COLLAPSE) ? -errno : 0;

	outcome(err, EBIT(EAGAIN) | EBIT(ENOMEM) | EBIT(EINVAL) | EBIT(EBUSY),
		C_COLLAPSE, "MADV_COLLAPSE");
}

/* Split the PMD mapping: a VMA boundary inside the huge page, and back. */
static void split_madvise(unsigned long c, unsigned long off, unsigned long n)
{
	char *p = chunk_at(c) + off * PAGE_SZ;
	int err;

	err = madvise(p, n * PAGE_SZ, MADV_NOHUGEPAGE) ? -errno : 0;
	if (!outcome(err, EBIT(EAGAIN) | EBIT(ENOMEM), C_SPLIT,
		     "MADV_NOHUGEPAGE"))
		return;
	err = madvise(p, n * PAGE_SZ, MADV_HUGEPAGE) ? -errno : 0;
	if (err)
		fail("MADV_HUGEPAGE back: %s", strerror(-err));
}

/* The same with a read-only piece; under the lock, as writers would fault. */
static void split_mprotect(unsigned long c, unsigned long off, unsigned long n)
{
	char *p = chunk_at(c) + off * PAGE_SZ;

	lock_chunk(c);
	if (mprotect(p, n * PAGE_SZ, PROT_READ)) {
		outcome(-errno, EBIT(ENOMEM) | EBIT(EAGAIN), C_SPLIT, "mprotect");
	} else if (mprotect(p, n * PAGE_SZ, PROT_READ | PROT_WRITE)) {
		fail("mprotect back to read-write: %s", strerror(errno));
		__atomic_store_n(&dr.broken, 1, __ATOMIC_RELAXED);
	} else {
		count(C_SPLIT, 1);
	}
	unlock_chunk(c);
}

/*
 * Unmap @n pages at @off of huge page @c, map them again (new pages, huge
 * if the whole huge page) and fill them with a new generation.
 */
static void punch_hole(unsigned long c, unsigned long off, unsigned long n)
{
	unsigned long idx, first = c * CHUNK_PAGES + off;
	char *p = page_at(first);

	lock_chunk(c);
	if (munmap(p, n * PAGE_SZ)) {
		fail("munmap: %s", strerror(errno));
		goto out;
	}
	if (mmap(p, n * PAGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p) {
		fail("mmap over the hole: %s", strerror(errno));
		__atomic_store_n(&dr.broken, 1, __ATOMIC_RELAXED);
		goto out;
	}
	if (madvise(p, n * PAGE_SZ, MADV_HUGEPAGE))
		fail("MADV_HUGEPAGE on the hole: %s", strerror(errno));
	for (idx = first; idx < first + n; idx++)
		page_write(page_at(idx), idx, ++dr.gen[idx]);
	count(n == CHUNK_PAGES ? C_REMAP : C_HOLE, 1);
out:
	unlock_chunk(c);
}

static void step_thp(struct rng *r)
{
	unsigned long c = below(r, NR_CHUNKS), op = below(r, 10);
	unsigned long off = 1 + below(r, CHUNK_PAGES - 1), n = 1 + below(r, 8);

	if (off + n > CHUNK_PAGES)
		n = CHUNK_PAGES - off;
	if (op < 3)
		do_collapse(c);
	else if (op < 5)
		split_madvise(c, off, n);
	else if (op < 7)
		split_mprotect(c, off, n);
	else if (op < 9)
		punch_hole(c, off, n);
	else
		punch_hole(c, 0, CHUNK_PAGES);
	nap(r, 20, 300);
}

/* Child of a snapshot: verify the copy while the parent's pages move. */
static void snapshot_child(unsigned long wait_ms)
{
	who = "data-snapshot-child";
	usleep(wait_ms * 1000);
	add_mismatches(verify_range(0, NR_PAGES, false));
	_exit(0);
}

/* waitpid() again after EINTR; returns its result. */
static pid_t wait_child(pid_t pid, int *status, int flags)
{
	pid_t ret;

	do {
		ret = waitpid(pid, status, flags);
	} while (ret < 0 && errno == EINTR);
	return ret;
}

/* Fork with every chunk locked, so that the child's copy is consistent. */
static void step_snapshot(struct rng *r)
{
	unsigned long wait_ms = below(r, 500), c;
	int status;
	pid_t pid;

	nap(r, 1000, 4000);
	if (data_stop())
		return;
	for (c = 0; c < NR_CHUNKS; c++)
		lock_chunk(c);
	pid = fork();
	if (pid == 0)
		snapshot_child(wait_ms);
	for (c = 0; c < NR_CHUNKS; c++)
		unlock_chunk(c);
	if (pid < 0) {
		outcome(-errno, EBIT(EAGAIN) | EBIT(ENOMEM), C_SNAPSHOT, "fork");
		return;
	}
	if (wait_child(pid, &status, 0) != pid)
		fail("waiting for snapshot child %d: %s", (int)pid,
		     strerror(errno));
	else if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail("snapshot child %d: wait status 0x%x", (int)pid, status);
	else
		count(C_SNAPSHOT, 1);
}

struct data_thread {
	const char *name;
	void (*step)(struct rng *r);
	struct rng r;
	pthread_t tid;
};

static struct data_thread data_threads[] = {
	{ .name = "data-verify", .step = step_verify },
	{ .name = "data-write", .step = step_write },
	{ .name = "data-numa", .step = step_numa },
	{ .name = "data-thp", .step = step_thp },
	{ .name = "data-snapshot", .step = step_snapshot },
};

static void *data_thread_fn(void *arg)
{
	struct data_thread *t = arg;

	who = t->name;
	msg("seed 0x%llx", t->r.s);
	while (!data_stop())
		t->step(&t->r);
	return NULL;
}

/* Map and fill the region in slot SLOT_DATA, half of it on the slow node. */
static int data_setup(void)
{
	char cg[CG_PATH_MAX], *map;
	unsigned long idx, mask = 1UL << HTMM_SLOW_NODE;
	bool slow = htmm_list_has(mem_nodes, nr_mem_nodes, HTMM_SLOW_NODE);
	int err;

	slot_path(cg, sizeof(cg), SLOT_DATA);
	err = htmm_cg_enter(cg, getpid());
	if (err) {
		fail("entering %s: %s", cg, strerror(-err));
		return err;
	}
	map = mmap(NULL, DATA_LEN + HPAGE_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		fail("mmap: %s", strerror(errno));
		return -ENOMEM;
	}
	dr.base = (char *)(((unsigned long)map + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
	if (madvise(dr.base, DATA_LEN, MADV_HUGEPAGE))
		fail("MADV_HUGEPAGE: %s", strerror(errno));
	if (slow && sys_mbind(dr.base, DATA_LEN / 2, MPOL_BIND, &mask, 0))
		fail("mbind to the slow node: %s", strerror(errno));
	for (idx = 0; idx < NR_PAGES; idx++) {
		dr.gen[idx] = 1;
		page_write(page_at(idx), idx, 1);
	}
	if (slow && sys_mbind(dr.base, DATA_LEN / 2, MPOL_DEFAULT, NULL, 0))
		fail("mbind default: %s", strerror(errno));
	for (idx = 0; idx < NR_CHUNKS; idx++)
		pthread_mutex_init(&dr.lock[idx], NULL);
	return 0;
}

static void data_worker(struct rng *r)
{
	unsigned int i, nr = ARRAY_SIZE(data_threads), started = 0;
	unsigned long bad;

	if (data_setup()) {
		__atomic_store_n(&sh->data_ready, -1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&sh->data_ready, 1, __ATOMIC_RELAXED);
	msg("%lu MiB of checksummed pages at %p", DATA_LEN / MiB, dr.base);
	for (i = 0; i < nr; i++) {
		data_threads[i].r.s = derive_seed(r->s, i);
		if (pthread_create(&data_threads[i].tid, NULL, data_thread_fn,
				   &data_threads[i])) {
			fail("starting %s", data_threads[i].name);
			__atomic_store_n(&dr.broken, 1, __ATOMIC_RELAXED);
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(data_threads[i].tid, NULL);
	if (dr.broken)
		return;
	bad = verify_range(0, NR_PAGES, false);
	add_mismatches(bad);
	msg("final check of %lu pages: %lu bad", NR_PAGES, bad);
}

/* ------------------------------------------------------------------ */
/* The tunables worker                                                 */
/* ------------------------------------------------------------------ */

/*
 * Good values keep the invariants between tunables whatever the others
 * are (demotion watermark <= promotion watermark, fast latency < slow
 * latency); some bad ones are in range but break them.  htmm_perf_event
 * stays sw-page-faults, so that htmm_sampler=pebs runs without a PMU.
 */
struct tunable {
	const char *name;
	bool numeric;
	const char *good[4];
	const char *bad[3];
};

static const struct tunable tunables[] = {
	{ "htmm_sample_period", true, { "17", "199", "1009" },
	  { "0", "2147483648" } },
	{ "htmm_inst_sample_period", true, { "1009", "100007" },
	  { "0", "2147483648" } },
	{ "htmm_thres_hot", true, { "0", "1", "3", "15" }, { "16" } },
	{ "htmm_split_period", true, { "1", "2", "1000" }, { "0", "1001" } },
	{ "htmm_adaptation_period", true, { "1", "1000", "100000" },
	  { "0", "2147483648" } },
	{ "htmm_cooling_period", true, { "64", "2048", "2000000" },
	  { "0", "63" } },
	{ "htmm_mode", true, { "0", "1", "2" }, { "3" } },
	{ "htmm_demotion_period_in_ms", true, { "10", "100", "500" },
	  { "9", "60001" } },
	{ "htmm_promotion_period_in_ms", true, { "10", "100", "500" },
	  { "9", "60001" } },
	{ "htmm_gamma", true, { "0", "4", "10" }, { "11" } },
	{ "ksampled_soft_cpu_quota", true, { "0", "30", "100" }, { "1001" } },
	{ "htmm_thres_split", true, { "0", "1", "2", "15" }, { "16" } },
	{ "htmm_nowarm", true, { "0", "1" }, { "2" } },
	{ "htmm_abit_interval_ms", true, { "50", "200", "1000" },
	  { "9", "60001" } },
	{ "htmm_abit_rate_mb", true, { "1", "64", "4096" },
	  { "0", "1048577" } },
	{ "htmm_abit_window_us", true, { "0", "2000", "20000" },
	  { "100001" } },
	{ "htmm_migrate_rate_mb", true, { "1", "64", "1024" },
	  { "0", "1048577" } },
	{ "htmm_promotion_watermark", true, { "20", "50", "400" }, { "501" } },
	{ "htmm_demotion_watermark", true, { "0", "5", "10", "20" },
	  { "450", "501" } },
	{ "htmm_settle_ms", true, { "0", "100", "10000" }, { "600001" } },
	{ "htmm_fast_latency_ns", true, { "50", "100", "200" },
	  { "0", "999999", "1000000" } },
	{ "htmm_slow_latency_ns", true, { "250", "300", "1000" },
	  { "1", "2", "1000001" } },
	{ "htmm_split_cooldown_ms", true, { "0", "1000", "300000" },
	  { "3600001" } },
	{ "htmm_cxl_mode", false, { "disabled", "enabled" }, { "on", "1" } },
	{ "htmm_sampler", false, { "abit", "inject", "pebs", "auto" },
	  { "bogus", "ABIT", "abit inject" } },
	{ "htmm_perf_event", false, { "sw-page-faults" },
	  { "sw", "page-faults" } },
	{ "state", false, { NULL }, { "on", "off" } },
};

#define NR_TUNABLES	ARRAY_SIZE(tunables)

static const char * const bad_numbers[] = {
	"", "-1", "x1", "1x", "4294967296", "99999999999999999999", "1 2",
	"0x10", "7\n\n",
};

static const char * const bad_words[] = {
	"", "x", "auto abit", "auto\n\n", "enabled disabled",
};

static unsigned int list_len(const char * const *list, unsigned int max)
{
	unsigned int n = 0;

	while (n < max && list[n])
		n++;
	return n;
}

static void tunable_path(char *buf, size_t size, const struct tunable *t)
{
	snprintf(buf, size, HTMM_SYSFS_DIR "/%s", t->name);
}

static void tunable_good(struct rng *r, const struct tunable *t)
{
	const char *val = t->good[below(r, list_len(t->good, 4))];
	char path[PATH_MAX], in[64], want[64], got[64];
	int err;

	tunable_path(path, sizeof(path), t);
	snprintf(in, sizeof(in), "%s%s", val, chance(r, 50) ? "\n" : "");
	snprintf(want, sizeof(want), "%s\n", val);
	err = htmm_write_str(path, in);
	if (err) {
		fail("%s: good value %s refused: %s", t->name, val,
		     strerror(-err));
		return;
	}
	if (htmm_read_file(path, got, sizeof(got)) < 0)
		got[0] = '\0';
	if (strcmp(got, want))
		fail("%s: wrote %s, read back \"%s\"", t->name, val,
		     htmm_esc(got, in, sizeof(in)));
	count(C_TUN_GOOD, 1);
}

static const char *pick_bad(struct rng *r, const struct tunable *t)
{
	unsigned int n = list_len(t->bad, 3);

	if (!t->good[0] || chance(r, 50))
		return t->bad[below(r, n)];
	if (t->numeric)
		return bad_numbers[below(r, ARRAY_SIZE(bad_numbers))];
	return bad_words[below(r, ARRAY_SIZE(bad_words))];
}

/* A bad write must fail with EINVAL or ERANGE and change nothing. */
static void tunable_bad(struct rng *r, const struct tunable *t)
{
	unsigned long long ok = t->good[0] ? EBIT(EINVAL) | EBIT(ERANGE) :
					     EBIT(EACCES) | EBIT(EPERM);
	char path[PATH_MAX], in[64], before[64], after[64], e[128];
	const char *val = pick_bad(r, t);
	size_t len = strlen(val);
	int err;

	tunable_path(path, sizeof(path), t);
	snprintf(in, sizeof(in), "%s%s", val,
		 !len || (val[len - 1] != '\n' && chance(r, 50)) ? "\n" : "");
	if (htmm_read_file(path, before, sizeof(before)) < 0) {
		fail("%s: cannot read it", t->name);
		return;
	}
	err = htmm_write_str(path, in);
	if (!err)
		fail("%s: bad value \"%s\" accepted", t->name,
		     htmm_esc(in, e, sizeof(e)));
	else if (!err_in(err, ok))
		fail("%s: bad value \"%s\" refused with %d (%s)", t->name,
		     htmm_esc(in, e, sizeof(e)), err, strerror(-err));
	if (htmm_read_file(path, after, sizeof(after)) < 0 ||
	    strcmp(before, after))
		fail("%s: bad value \"%s\" changed it from %.20s", t->name,
		     htmm_esc(in, e, sizeof(e)), before);
	count(C_TUN_BAD, 1);
}

static void tunables_worker(struct rng *r)
{
	while (!stopping()) {
		const struct tunable *t = &tunables[below(r, NR_TUNABLES)];

		if (t->good[0] && chance(r, 50))
			tunable_good(r, t);
		else
			tunable_bad(r, t);
		nap(r, 5, 100);
	}
}

/* ------------------------------------------------------------------ */
/* The knobs worker: the soak cgroups' htmm files                      */
/* ------------------------------------------------------------------ */

/* Files vanish with their cgroup: ENOENT to open, ENODEV once open. */
#define GONE	(EBIT(ENOENT) | EBIT(ENODEV))

static int fd_put(int fd, const char *val)
{
	ssize_t n = write(fd, val, strlen(val));

	if (n < 0)
		return -errno;
	return (size_t)n == strlen(val) ? 0 : -EIO;
}

/* Read the open file again from its start; 0 or -errno. */
static int fd_reread(int fd, char *buf, size_t size)
{
	ssize_t n;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* Open a file of a slot for writing; -1 if it is gone (counted). */
static int knob_open(int slot, const char *file)
{
	char path[PATH_MAX];
	int fd;

	slot_file(path, sizeof(path), slot, file);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		outcome(-errno, GONE, C_REFUSED, path);
	return fd;
}

/* A bad value: refused with an errno of @expected, nothing changed. */
static void knob_check_bad(const char *file, const char *val, int err,
			   unsigned long long expected, bool same)
{
	char e[64];

	htmm_esc(val, e, sizeof(e));
	if (!err)
		fail("%s: bad value \"%s\" accepted", file, e);
	else if (!err_in(err, expected))
		fail("%s: bad value \"%s\" refused with %d", file, e, err);
	else
		count(C_KNOB_BAD, 1);
	if (!same)
		fail("%s: bad value \"%s\" changed it", file, e);
}

/* A good value: taken and read back as @want, or refused as expected. */
static void knob_check_good(const char *file, const char *val, int err,
			    unsigned long long expected, enum counter done,
			    const char *want, const char *got, bool same)
{
	char e[64];

	htmm_esc(val, e, sizeof(e));
	if (!outcome(err, expected, done, file)) {
		if (!same)
			fail("%s: refused \"%s\" (%d) changed it", file, e, err);
		return;
	}
	if (strcmp(got, want))
		fail("%s: wrote %s, read back %.30s", file, e, got);
}

/*
 * Write @val to @file of @slot and read it back through the same open
 * file, which stays with that cgroup.  @want: what a good value reads
 * back as; NULL for a bad value.
 */
static void knob_write(int slot, const char *file, const char *val,
		       const char *want, unsigned long long expected,
		       enum counter done)
{
	char before[64], after[64];
	int fd = knob_open(slot, file), err, rerr;

	if (fd < 0)
		return;
	rerr = fd_reread(fd, before, sizeof(before));
	err = fd_put(fd, val);
	if (!rerr)
		rerr = fd_reread(fd, after, sizeof(after));
	close(fd);
	if (err_in(err, GONE) || err_in(rerr, GONE)) {
		count(C_REFUSED, 1);	/* the cgroup went meanwhile */
		return;
	}
	if (rerr) {
		fail("%s of slot %d: read: %s", file, slot, strerror(-rerr));
		return;
	}
	if (want)
		knob_check_good(file, val, err, expected, done, want, after,
				!strcmp(before, after));
	else
		knob_check_bad(file, val, err, expected,
			       !strcmp(before, after));
}

static void knob_enable(struct rng *r, int slot)
{
	bool on = chance(r, 60);

	/* EBUSY: disabling a cgroup with enabled children */
	knob_write(slot, "memory.htmm_enabled", on ? "enabled" : "disabled",
		   on ? "enabled\n" : "disabled\n", on ? 0 : EBIT(EBUSY),
		   on ? C_ENABLE : C_DISABLE);
}

static void knob_budget(struct rng *r, int slot)
{
	static const char * const vals[][2] = {
		{ "0", "0\n" }, { "4M", "4194304\n" }, { "16M", "16777216\n" },
		{ "64M", "67108864\n" }, { "256M", "268435456\n" },
		{ "1g", "1073741824\n" }, { "12345", "12288\n" },
		{ "max", "max\n" },
	};
	unsigned int v = below(r, ARRAY_SIZE(vals));
	char file[32];

	snprintf(file, sizeof(file), "memory.max_at_node%d", pick_node(r));
	knob_write(slot, file, vals[v][0], vals[v][1], 0, C_BUDGET);
}

static void knob_bad(struct rng *r, int slot)
{
	static const char * const budgets[] = {
		"abc", "-1", "1Q", "16M16", "0x", "16E",
		"18446744073709551615", "99999999999999999999",
	};
	static const char * const states[] = {
		"bogus", "enable", "1", "on", "enabled disabled",
	};
	char file[32];

	if (chance(r, 50)) {
		snprintf(file, sizeof(file), "memory.max_at_node%d",
			 pick_node(r));
		knob_write(slot, file, budgets[below(r, ARRAY_SIZE(budgets))],
			   NULL, EBIT(EINVAL) | EBIT(ERANGE), C_KNOB_BAD);
	} else {
		knob_write(slot, "memory.htmm_enabled",
			   states[below(r, ARRAY_SIZE(states))], NULL,
			   EBIT(EINVAL), C_KNOB_BAD);
	}
}

static void knobs_worker(struct rng *r)
{
	while (!stopping()) {
		int slot = (int)below(r, NR_SLOTS + 1) - 1;
		unsigned long op = below(r, 10);

		if (op < 4)
			knob_enable(r, slot);
		else if (op < 7)
			knob_budget(r, slot);
		else
			knob_bad(r, slot);
		nap(r, 20, 300);
	}
}

/* ------------------------------------------------------------------ */
/* The cgroups worker                                                  */
/* ------------------------------------------------------------------ */

static void cg_mkdir(int slot)
{
	char path[PATH_MAX];
	int err;

	slot_path(path, sizeof(path), slot);
	err = mkdir(path, 0755) ? -errno : 0;
	if (!outcome(err, EBIT(EEXIST) | EBIT(ENOENT), C_MKDIR, "mkdir"))
		return;
	if (slot != SLOT_N)
		return;
	slot_file(path, sizeof(path), slot, "cgroup.subtree_control");
	outcome(htmm_write_str(path, "+memory"), GONE, C_REFUSED,
		"+memory in n");
}

static void cg_rmdir(int slot)
{
	char path[PATH_MAX];
	int err;

	slot_path(path, sizeof(path), slot);
	err = rmdir(path) ? -errno : 0;
	/* EBUSY: tasks or children in it */
	outcome(err, EBIT(EBUSY) | EBIT(ENOENT), C_RMDIR, "rmdir");
}

/* Move the data worker, the forks worker or ourselves. */
static void cg_move(struct rng *r)
{
	static const int movable[] = { W_DATA, W_FORKS, W_CGROUPS };
	pid_t pid = sh->pid[movable[below(r, ARRAY_SIZE(movable))]];
	char path[CG_PATH_MAX];

	if (pid <= 0)
		return;
	if (chance(r, 15))
		snprintf(path, sizeof(path), "%s", HTMM_CGROUP_ROOT);
	else
		slot_path(path, sizeof(path), pick_leaf(r));
	outcome(htmm_cg_enter(path, pid), GONE | EBIT(ESRCH), C_MOVE,
		"task move");
}

static void cgroups_worker(struct rng *r)
{
	while (!stopping()) {
		unsigned long op = below(r, 20);

		if (op < 5)
			cg_mkdir(below(r, NR_SLOTS));
		else if (op < 9)
			cg_rmdir(below(r, NR_SLOTS));
		else
			cg_move(r);
		nap(r, 10, 200);
	}
}

/* ------------------------------------------------------------------ */
/* The forks worker                                                    */
/* ------------------------------------------------------------------ */

struct kid {
	pid_t pid;
	bool killed;
};

/* Map, fill and check 1-8 MiB (huge pages or not); maybe fork again. */
static void kid_main(unsigned long long seed)
{
	struct rng r = { .s = seed };
	size_t i, len = (1 + below(&r, 8)) * MiB;
	unsigned long token = rnd(&r), bad = 0;
	char cg[CG_PATH_MAX], *p;

	who = "forks-child";
	if (chance(&r, 60)) {
		slot_path(cg, sizeof(cg), pick_leaf(&r));
		htmm_cg_enter(cg, getpid());	/* the slot may be gone */
	}
	p = mmap(NULL, len + HPAGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(0);	/* no memory: not an error of htmm's */
	p = (char *)(((unsigned long)p + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
	if (chance(&r, 50))
		madvise(p, len, MADV_HUGEPAGE);
	for (i = 0; i < len; i += PAGE_SZ) {
		*(unsigned long *)(p + i) = i ^ token;
		*(unsigned long *)(p + i + PAGE_SZ - 8) = ~(i ^ token);
	}
	if (chance(&r, 30) && fork() == 0)
		_exit(0);	/* a grandchild that shares it and goes */
	nap(&r, 0, 300);
	for (i = 0; i < len; i += PAGE_SZ) {
		if (*(unsigned long *)(p + i) != (i ^ token) ||
		    *(unsigned long *)(p + i + PAGE_SZ - 8) != ~(i ^ token))
			bad++;
	}
	if (bad)
		msg("%lu of %zu pages wrong", bad, len / PAGE_SZ);
	add_mismatches(bad);
	while (wait(NULL) > 0)
		;
	_exit(0);
}

/* Reap the children that ended (all of them if @block). */
static void reap_kids(struct kid *kids, bool block)
{
	int i, status;

	for (i = 0; i < MAX_KIDS; i++) {
		pid_t pid;

		if (kids[i].pid <= 0)
			continue;
		pid = wait_child(kids[i].pid, &status, block ? 0 : WNOHANG);
		if (!pid)
			continue;
		if (pid < 0)
			fail("waitpid %d: %s", (int)kids[i].pid, strerror(errno));
		else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
			 kids[i].killed)
			count(C_KILL, 1);
		else if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("child %d: wait status 0x%x", (int)pid, status);
		kids[i].pid = 0;
	}
}

static void spawn_kid(struct rng *r, struct kid *k)
{
	unsigned long long seed = rnd(r);
	pid_t pid = fork();

	if (pid == 0)
		kid_main(seed);
	if (pid < 0) {
		outcome(-errno, EBIT(EAGAIN) | EBIT(ENOMEM), C_FORK, "fork");
		return;
	}
	k->pid = pid;
	k->killed = false;
	count(C_FORK, 1);
}

static void forks_worker(struct rng *r)
{
	struct kid kids[MAX_KIDS];
	int i;

	memset(kids, 0, sizeof(kids));
	while (!stopping()) {
		reap_kids(kids, false);
		i = below(r, MAX_KIDS);
		if (!kids[i].pid && chance(r, 70)) {
			spawn_kid(r, &kids[i]);
		} else if (kids[i].pid && chance(r, 20)) {
			kids[i].killed = true;
			kill(kids[i].pid, SIGKILL);
		}
		nap(r, 10, 200);
	}
	for (i = 0; i < MAX_KIDS; i++) {
		if (kids[i].pid <= 0)
			continue;
		kids[i].killed = true;
		kill(kids[i].pid, SIGKILL);
	}
	reap_kids(kids, true);
}

/* ------------------------------------------------------------------ */
/* The hotplug worker                                                  */
/* ------------------------------------------------------------------ */

static void set_cpu1(bool online)
{
	int err = htmm_write_str(CPU1_ONLINE, online ? "1" : "0");

	outcome(err, EBIT(EBUSY) | EBIT(EAGAIN), online ? C_CPU_ON : C_CPU_OFF,
		online ? "cpu1 online" : "cpu1 offline");
}

static void hotplug_worker(struct rng *r)
{
	if (!htmm_path_exists(CPU1_ONLINE)) {
		msg("no %s: vCPU hotplug skipped", CPU1_ONLINE);
		return;
	}
	while (!stopping()) {
		nap(r, 200, 3000);
		if (stopping())
			break;
		set_cpu1(false);
		nap(r, 100, 2000);
		set_cpu1(true);
	}
}

/* ------------------------------------------------------------------ */
/* Setup, supervision, teardown                                        */
/* ------------------------------------------------------------------ */

static const struct {
	const char *name;
	void (*run)(struct rng *r);
} workers[NR_WORKERS] = {
	[W_DATA] = { "data", data_worker },
	[W_TUNABLES] = { "tunables", tunables_worker },
	[W_KNOBS] = { "knobs", knobs_worker },
	[W_CGROUPS] = { "cgroups", cgroups_worker },
	[W_FORKS] = { "forks", forks_worker },
	[W_HOTPLUG] = { "hotplug", hotplug_worker },
};

static char saved_tunables[NR_TUNABLES][32];
static char saved_thp[32];
static const char * const khugepaged_names[] = {
	"khugepaged/scan_sleep_millisecs", "khugepaged/alloc_sleep_millisecs",
};

static char saved_khugepaged[ARRAY_SIZE(khugepaged_names)][32];

static void save_tunables(void)
{
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; i < NR_TUNABLES; i++) {
		saved_tunables[i][0] = '\0';
		if (!tunables[i].good[0])
			continue;
		tunable_path(path, sizeof(path), &tunables[i]);
		if (htmm_read_file(path, saved_tunables[i], 32) <= 0)
			saved_tunables[i][0] = '\0';
		saved_tunables[i][strcspn(saved_tunables[i], "\n")] = '\0';
	}
	htmm_save_files(THP_DIR, khugepaged_names,
			ARRAY_SIZE(khugepaged_names), saved_khugepaged);
	if (htmm_thp_get(saved_thp, sizeof(saved_thp)))
		saved_thp[0] = '\0';
}

/* Twice: a value may only fit once its partner is back. */
static void restore_tunables(void)
{
	char path[PATH_MAX], got[64];
	unsigned int i, pass;

	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < NR_TUNABLES; i++) {
			if (!saved_tunables[i][0])
				continue;
			tunable_path(path, sizeof(path), &tunables[i]);
			if (htmm_read_file(path, got, sizeof(got)) < 0)
				got[0] = '\0';
			got[strcspn(got, "\n")] = '\0';
			if (!strcmp(got, saved_tunables[i]))
				continue;
			if (htmm_write_str(path, saved_tunables[i]) && pass)
				fail("restoring %s=%s", tunables[i].name,
				     saved_tunables[i]);
		}
	}
	htmm_restore_files(THP_DIR, khugepaged_names,
			   ARRAY_SIZE(khugepaged_names), saved_khugepaged);
	if (saved_thp[0] && htmm_thp_set(saved_thp))
		fail("restoring THP mode %s", saved_thp);
}

/* Settings that make things move from the start; the workers vary them. */
static void initial_settings(void)
{
	static const char * const set[][2] = {
		{ "htmm_perf_event", "sw-page-faults" },
		{ "htmm_promotion_period_in_ms", "100" },
		{ "htmm_demotion_period_in_ms", "100" },
		{ "htmm_settle_ms", "0" }, { "htmm_mode", "2" },
		{ "htmm_thres_split", "1" }, { "htmm_split_period", "1" },
		{ "htmm_cooling_period", "2048" },
	};
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(set); i++) {
		err = htmm_tunable_set(set[i][0], set[i][1]);
		if (err)
			fail("setting %s=%s: %s", set[i][0], set[i][1],
			     strerror(-err));
	}
	if (!strcmp(saved_thp, "never") && htmm_thp_set("madvise"))
		fail("THP mode madvise");
	/* khugepaged collapses too, more often than by default */
	for (i = 0; i < ARRAY_SIZE(khugepaged_names); i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), THP_DIR "/%s", khugepaged_names[i]);
		htmm_write_str(path, "100");
	}
}

/* Write @val to @file of @slot at setup; 0 or -errno (logged). */
static int setup_write(int slot, const char *file, const char *val)
{
	char path[PATH_MAX];
	int err;

	slot_file(path, sizeof(path), slot, file);
	err = htmm_write_str(path, val);
	if (err)
		fail("setting up: %s <- %s: %s", path, val, strerror(-err));
	return err;
}

/*
 * mkdir; +memory for its children if @parent; if @budget, enable htmm
 * with that budget on the fast node.
 */
static int make_cg(int slot, bool parent, const char *budget)
{
	char path[PATH_MAX], file[32];

	slot_path(path, sizeof(path), slot);
	if (mkdir(path, 0755)) {
		fail("mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	if (parent && setup_write(slot, "cgroup.subtree_control", "+memory"))
		return -1;
	if (!budget)
		return 0;
	snprintf(file, sizeof(file), "memory.max_at_node%d", HTMM_FAST_NODE);
	if (setup_write(slot, file, budget) ||
	    setup_write(slot, "memory.htmm_enabled", "enabled"))
		return -1;
	return 0;
}

/* top (enabled, 64M), c0 (enabled, 32M: the data starts there), n, n/c0. */
static int make_cgroups(void)
{
	snprintf(top_cg, sizeof(top_cg), "%s/htmm_soak_%d", HTMM_CGROUP_ROOT,
		 (int)getpid());
	if (make_cg(SLOT_TOP, true, "64M") || make_cg(SLOT_DATA, false, "32M"))
		return -1;
	if (make_cg(SLOT_N, true, NULL) || make_cg(SLOT_N_C0, false, NULL))
		return -1;
	return 0;
}

static long long perf_counters(void)
{
	unsigned long long v = 0;

	if (htmm_read_value(PERF_COUNTERS, &v))
		return -1;
	return v;
}

/* No kmigraterd, ksamplingd or perf counter within IDLE_TIMEOUT_S. */
static void check_idle(const char *when)
{
	double t0 = htmm_now_s();
	int nm, ns;
	long long np;

	for (;;) {
		nm = htmm_count_threads("kmigraterd");
		ns = htmm_count_threads("ksamplingd");
		np = perf_counters();
		if ((!nm && !ns && np <= 0) || htmm_now_s() - t0 > IDLE_TIMEOUT_S)
			break;
		usleep(100 * 1000);
	}
	if (nm || ns || np > 0)
		fail("%s: %d kmigraterd, %d ksamplingd, %lld perf counters left",
		     when, nm, ns, np);
	else
		msg("%s: no kmigraterd, ksamplingd or perf counter after %.1f s%s",
		    when, htmm_now_s() - t0,
		    np < 0 ? " (no perf_counters file)" : "");
}

/*
 * htmm off in every soak cgroup, children first: each write must work.
 * EBUSY is retried for a while: a child removed just before the stop may
 * not be offline (and so disabled) yet.
 */
static void disable_all(void)
{
	char path[PATH_MAX];
	int slot, err, tries;

	for (slot = NR_SLOTS - 1; slot >= SLOT_TOP; slot--) {
		slot_file(path, sizeof(path), slot, "memory.htmm_enabled");
		if (!htmm_path_exists(path))
			continue;
		for (tries = 0; tries < 100; tries++) {
			err = htmm_write_str(path, "disabled");
			if (err != -EBUSY)
				break;
			usleep(100 * 1000);
		}
		if (err)
			fail("disabling %s: %s", path, strerror(-err));
	}
}

/*
 * After the last disable: the top cgroup's memory.htmm_stat has enabled
 * and ksamplingd_running 0, and the kernel's last word was "inactive".
 */
static void check_inactive(void)
{
	const char *on = "htmm: active", *off = "htmm: inactive";
	char path[PATH_MAX], *buf, *p, *last_on = NULL, *last_off = NULL;
	int size = klogctl(10, NULL, 0), len;	/* SYSLOG_ACTION_SIZE_BUFFER */
	unsigned long long v;

	slot_file(path, sizeof(path), SLOT_TOP, "memory.htmm_stat");
	if (htmm_keyed_get(path, "enabled", &v) || v)
		fail("%s: enabled is not 0 after disabling", path);
	if (htmm_keyed_get(path, "ksamplingd_running", &v) || v)
		fail("%s: ksamplingd_running is not 0 after disabling", path);
	buf = size > 0 ? calloc(1, size + 1) : NULL;
	len = buf ? klogctl(3, buf, size) : -1;	/* SYSLOG_ACTION_READ_ALL */
	if (len < 0) {
		msg("cannot read the kernel log: \"%s\" not checked", off);
		free(buf);
		return;
	}
	for (p = buf; (p = strstr(p, on)); p++)
		last_on = p;
	for (p = buf; (p = strstr(p, off)); p++)
		last_off = p;
	if (last_on > last_off)
		fail("the kernel log says \"%s\" after the last disable", on);
	else if (!last_off)
		msg("\"%s\" not in the kernel log (wrapped?)", off);
	free(buf);
}

static void remove_all(void)
{
	char path[CG_PATH_MAX];
	int slot, err;

	for (slot = NR_SLOTS - 1; slot >= SLOT_TOP; slot--) {
		slot_path(path, sizeof(path), slot);
		err = htmm_cg_destroy(path);
		if (err)
			fail("removing %s: %s", path, strerror(-err));
	}
}

static void cpu1_back_online(void)
{
	char buf[8];
	int tries;

	if (!htmm_path_exists(CPU1_ONLINE))
		return;
	for (tries = 0; tries < 50; tries++) {
		if (htmm_read_file(CPU1_ONLINE, buf, sizeof(buf)) > 0 &&
		    buf[0] == '1')
			return;
		htmm_write_str(CPU1_ONLINE, "1");
		usleep(100 * 1000);
	}
	fail("cpu1 does not come back online");
}

static void teardown(void)
{
	char state[64];

	cpu1_back_online();
	htmm_cg_enter(HTMM_CGROUP_ROOT, getpid());
	if (top_cg[0]) {
		disable_all();
		check_idle("after the last disable");
		check_inactive();
		remove_all();
		check_idle("after removing the soak cgroups");
	}
	restore_tunables();
	if (htmm_read_file(HTMM_SYSFS_DIR "/state", state, sizeof(state)) < 0 ||
	    strcmp(state, "on\n"))
		fail("state file does not read \"on\" at the end");
}

static void start_worker(int i)
{
	struct rng r = { .s = derive_seed(master_seed, i) };
	pid_t pid = fork();

	if (pid < 0) {
		fail("fork of worker %s: %s", workers[i].name, strerror(errno));
		return;
	}
	if (pid) {
		sh->pid[i] = pid;
		return;
	}
	who = workers[i].name;
	sh->pid[i] = getpid();
	msg("worker %d, seed 0x%llx", i, r.s);
	workers[i].run(&r);
	while (!stopping())	/* done early (or skipped): wait for the rest */
		usleep(100 * 1000);
	_exit(0);
}

/* A worker ended: fine only after the stop, with status 0. */
static void worker_ended(pid_t pid, int status)
{
	int i;

	for (i = 0; i < NR_WORKERS; i++) {
		if (sh->pid[i] != pid)
			continue;
		sh->pid[i] = 0;
		if (!stopping())
			fail("worker %s ended before the stop (status 0x%x)",
			     workers[i].name, status);
		else if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("worker %s: wait status 0x%x", workers[i].name,
			     status);
		return;
	}
}

/* Reap what ended; returns the number of workers still running. */
static int reap_workers(void)
{
	int i, status, left = 0;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		worker_ended(pid, status);
	for (i = 0; i < NR_WORKERS; i++)
		left += sh->pid[i] > 0;
	return left;
}

static void progress(double t)
{
	msg("t=%.0fs: %lu checksum mismatches, %lu errors; %lu pages verified",
	    t, sh->mismatches, sh->errors, sh->count[C_VERIFIED]);
	msg("t=%.0fs: mbind %lu, move_pages %lu, %lu collapses, %lu splits",
	    t, sh->count[C_MBIND], sh->count[C_MOVE_PAGES],
	    sh->count[C_COLLAPSE], sh->count[C_SPLIT]);
}

/*
 * The data worker first, alone: it must be in its cgroup before the
 * cgroups worker may remove it.  Then the others.
 */
static void start_workers(void)
{
	double t0 = htmm_now_s();
	int i;

	start_worker(W_DATA);
	while (!__atomic_load_n(&sh->data_ready, __ATOMIC_RELAXED) &&
	       sh->pid[W_DATA] > 0 && htmm_now_s() - t0 < STOP_TIMEOUT_S) {
		reap_workers();
		usleep(100 * 1000);
	}
	msg("data in place after %.1f s", htmm_now_s() - t0);
	for (i = 0; i < NR_WORKERS; i++)
		if (i != W_DATA)
			start_worker(i);
}

static void run_workers(int seconds)
{
	double t0, next = PROGRESS_S, t;
	int i;

	start_workers();
	t0 = htmm_now_s();
	while ((t = htmm_now_s() - t0) < seconds) {
		reap_workers();
		if (t >= next) {
			progress(t);
			next += PROGRESS_S;
		}
		usleep(200 * 1000);
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	msg("stop after %.0f s", t);
	t0 = htmm_now_s();
	while (reap_workers() && htmm_now_s() - t0 < STOP_TIMEOUT_S)
		usleep(100 * 1000);
	for (i = 0; i < NR_WORKERS; i++) {
		if (sh->pid[i] <= 0)
			continue;
		fail("worker %s still running %d s after the stop: killed",
		     workers[i].name, STOP_TIMEOUT_S);
		kill(sh->pid[i], SIGKILL);
	}
	t0 = htmm_now_s();
	while (reap_workers() && htmm_now_s() - t0 < 10)
		usleep(100 * 1000);
}

/* Kernel events that show the soak did what it says. */
static const char * const vm_events[] = {
	"thp_fault_alloc", "thp_collapse_alloc", "thp_split_pmd",
	"thp_split_page", "pgmigrate_success", "htmm_nr_sampled",
	"htmm_nr_promoted", "htmm_nr_demoted", "htmm_nr_split_done",
};

#define NR_VM_EVENTS	ARRAY_SIZE(vm_events)

static unsigned long long vm_start[NR_VM_EVENTS];

/* With @start, note the events; else log how much each went up. */
static void vm_events_delta(bool start)
{
	char line[512];
	unsigned long long v;
	unsigned int i;
	int n = 0;

	for (i = 0; i < NR_VM_EVENTS; i++) {
		if (htmm_vmstat_get(vm_events[i], &v))
			continue;
		if (start) {
			vm_start[i] = v;
			continue;
		}
		n += snprintf(line + n, sizeof(line) - n, "%s%s %llu",
			      n ? ", " : "", vm_events[i], v - vm_start[i]);
	}
	if (!start)
		msg("kernel events: %s", n ? line : "none readable");
}

static void print_counts(void)
{
	char line[512];
	int i, n = 0;

	for (i = 0; i < NR_COUNTERS; i++) {
		n += snprintf(line + n, sizeof(line) - n, "%s%s %lu",
			      n ? ", " : "", counter_names[i], sh->count[i]);
		if (i % 6 == 5 || i == NR_COUNTERS - 1) {
			msg("counts: %s", line);
			n = 0;
		}
	}
}

/* ------------------------------------------------------------------ */
/* main                                                                */
/* ------------------------------------------------------------------ */

static void show_usage(const char *prog)
{
	fprintf(stderr, "usage: %s [--seed N] [--seconds S]\n", prog);
	exit(2);
}

static void parse_args(int argc, char **argv, int *seconds)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	bool seeded = false;
	int c;

	*seconds = 180;
	while ((c = getopt_long(argc, argv, "s:t:h", opts, NULL)) != -1) {
		if (c == 's' && !htmm_parse_ull(optarg, &v)) {
			master_seed = v;
			seeded = true;
		} else if (c == 't' && !htmm_parse_ull(optarg, &v) && v &&
			   v <= 86400) {
			*seconds = v;
		} else {
			show_usage(argv[0]);
		}
	}
	if (optind < argc)
		show_usage(argv[0]);
	if (!seeded) {
		v = time(NULL) ^ ((unsigned long long)getpid() << 32);
		master_seed = mix64(v) % 1000000000ULL;
	}
}

/* htmm on, cgroup v2 with memory, nothing of htmm running: 0, or 4. */
static int preconditions(void)
{
	char state[64];

	if (htmm_read_file(HTMM_SYSFS_DIR "/state", state, sizeof(state)) < 0 ||
	    strcmp(state, "on\n")) {
		msg("htmm is not on (boot with htmm=on): skipped");
		return 4;
	}
	if (htmm_cg_prepare()) {
		msg("no cgroup v2 memory controller: skipped");
		return 4;
	}
	nr_mem_nodes = htmm_memory_nodes(mem_nodes, HTMM_MAX_NODES);
	if (nr_mem_nodes <= 0) {
		msg("cannot read the nodes with memory: skipped");
		return 4;
	}
	if (htmm_count_threads("kmigraterd") || htmm_count_threads("ksamplingd"))
		fail("htmm is already active before the soak");
	have_inject = htmm_path_exists(HTMM_DEBUGFS_DIR "/inject");
	return 0;
}

int main(int argc, char **argv)
{
	int seconds, rc;

	parse_args(argc, argv, &seconds);
	signal(SIGPIPE, SIG_IGN);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(sh, 0, sizeof(*sh));
	msg("seed %llu, %d s (replay: htmm_soak --seed %llu --seconds %d)",
	    master_seed, seconds, master_seed, seconds);
	rc = preconditions();
	if (rc) {
		printf("soak: seed %llu, 0 s, skipped\n", master_seed);
		return rc;
	}
	msg("nodes with memory: %d; inject %s; vCPU hotplug %s", nr_mem_nodes,
	    have_inject ? "yes" : "no",
	    htmm_path_exists(CPU1_ONLINE) ? "yes" : "no");
	save_tunables();
	initial_settings();
	vm_events_delta(true);
	if (!make_cgroups())
		run_workers(seconds);
	teardown();
	print_counts();
	vm_events_delta(false);
	printf("soak: seed %llu, %d s, %lu checksum mismatches, %lu errors\n",
	       master_seed, seconds, sh->mismatches, sh->errors);
	fflush(stdout);
	return sh->mismatches || sh->errors ? 1 : 0;
}
