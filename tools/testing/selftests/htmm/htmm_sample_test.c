// SPDX-License-Identifier: GPL-2.0
/*
 * htmm access sampling: ksamplingd and its sample sources, the debugfs
 * injector, per-page access counts, the histograms, the hot threshold and
 * cooling.
 *
 * Each test runs its workload in forked children inside the cgroup
 * HTMM_CGROUP_ROOT/htmm_sample_<pid>. The children report the addresses
 * they mapped over a pipe; /sys/kernel/debug/htmm/page_info then tells
 * how htmm classified a page. Tunables changed by a test are saved when
 * first written and restored in the teardown, after htmm was disabled
 * and the cgroup removed.
 *
 * Needs CONFIG_HTMM_DEBUG (debugfs files) and root. Everything that
 * depends on timing waits for a condition with a deadline.
 */
#define _GNU_SOURCE
#include "htmm_util.h"	/* includes kselftest_harness.h */

#include <poll.h>
#include <sched.h>
#include <time.h>

#ifndef HTMM_DEBUGFS_DIR
#define HTMM_DEBUGFS_DIR	"/sys/kernel/debug/htmm"
#endif
#define INJECT_FILE		HTMM_DEBUGFS_DIR "/inject"
#define PAGE_INFO_FILE		HTMM_DEBUGFS_DIR "/page_info"
#define PERF_COUNTERS_FILE	HTMM_DEBUGFS_DIR "/perf_counters"
#define RINGS_FILE		HTMM_DEBUGFS_DIR "/rings"
#define INJECT_MAX_WRITE	(256 * 1024)

#define PG			4096UL	/* htmm counts 4 KiB pages */
#define HPAGE_SZ		(2UL << 20)	/* a PMD huge page */
#define NR_BINS			16
#define BIN_NONE		NR_BINS	/* "none" in memory.htmm_stat */
#define POLL_MS			50	/* interval of every wait loop */
#define REPLY_MS		(120 * 1000)	/* for a child's report */

#define MAX_SAVED		16
#define MAX_KIDS		4
#define MAX_CPUS		256
#define MAX_STAT_KEYS		160

/* ------------------------------------------------------------------ */
/* Time and waiting                                                    */
/* ------------------------------------------------------------------ */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Sleep one poll interval; false once now_ms() reached @deadline. */
static bool poll_again(long long deadline)
{
	if (now_ms() >= deadline)
		return false;
	usleep(POLL_MS * 1000);
	return true;
}

/* ------------------------------------------------------------------ */
/* Test context: the cgroup, saved tunables, children                  */
/* ------------------------------------------------------------------ */

struct saved_tunable {
	char name[48];
	char value[64];		/* as read, with the newline */
};

struct sample_ctx {
	char cg[HTMM_CG_PATH_MAX];
	struct saved_tunable saved[MAX_SAVED];
	int nr_saved;
	struct htmm_child kids[MAX_KIDS];
	int cpus[MAX_CPUS];	/* online CPUs */
	int nr_cpus;
};

static void ctx_setup(struct __test_metadata *_metadata, struct sample_ctx *x)
{
	struct stat st;
	int i, err;

	for (i = 0; i < MAX_KIDS; i++) {
		x->kids[i].pid = -1;
		x->kids[i].res_fd = -1;
		x->kids[i].cmd_fd = -1;
	}
	if (stat(HTMM_SYSFS_DIR, &st) || !S_ISDIR(st.st_mode))
		SKIP(return, HTMM_SYSFS_DIR " not present (htmm not built in?)");
	if (stat(HTMM_DEBUGFS_DIR, &st) || !S_ISDIR(st.st_mode))
		SKIP(return, HTMM_DEBUGFS_DIR " not present (needs CONFIG_HTMM_DEBUG and debugfs)");
	err = htmm_cg_prepare();
	if (err == -ENODEV)
		SKIP(return, "no cgroup v2 memory controller at " HTMM_CGROUP_ROOT);
	ASSERT_EQ(0, err) TH_LOG("enabling +memory: %s", strerror(-err));
	x->nr_cpus = htmm_read_list("/sys/devices/system/cpu/online", x->cpus,
				    MAX_CPUS);
	ASSERT_LT(0, x->nr_cpus) TH_LOG("cannot parse the online CPU list");

	/* last: the teardown only runs once the setup completed */
	err = htmm_cg_create(x->cg, sizeof(x->cg), "htmm_sample");
	ASSERT_EQ(0, err) TH_LOG("mkdir %s: %s", x->cg, strerror(-err));
}

static void kid_stop(struct htmm_child *c, bool kill_it, int *status);

static void ctx_teardown(struct __test_metadata *_metadata,
			 struct sample_ctx *x)
{
	char path[PATH_MAX], buf[64];
	int i, err;

	for (i = 0; i < MAX_KIDS; i++)
		kid_stop(&x->kids[i], true, NULL);
	if (x->cg[0] && htmm_path_exists(x->cg)) {
		htmm_cg_file(path, sizeof(path), x->cg, "memory.htmm_enabled");
		htmm_write_str(path, "disabled");
		err = htmm_cg_destroy(x->cg);
		EXPECT_EQ(0, err) TH_LOG("removing %s: %s", x->cg,
					 strerror(-err));
	}
	/* in reverse order, so each tunable gets its original value */
	for (i = x->nr_saved - 1; i >= 0; i--) {
		const struct saved_tunable *t = &x->saved[i];

		snprintf(path, sizeof(path), HTMM_SYSFS_DIR "/%s", t->name);
		err = htmm_write_str(path, t->value);
		EXPECT_EQ(0, err) TH_LOG("restoring %s: %s", t->name,
					 strerror(-err));
		EXPECT_LE(0, htmm_read_file(path, buf, sizeof(buf)));
		EXPECT_CONTENT(t->value, buf, t->name);
	}
}

/* Write a tunable, saving its old value the first time. */
static void set_tunable(struct __test_metadata *_metadata,
			struct sample_ctx *x, const char *name, const char *val)
{
	char path[PATH_MAX];
	ssize_t n;
	int i, err;

	snprintf(path, sizeof(path), HTMM_SYSFS_DIR "/%s", name);
	for (i = 0; i < x->nr_saved; i++)
		if (!strcmp(x->saved[i].name, name))
			break;
	if (i == x->nr_saved) {
		struct saved_tunable *t = &x->saved[i];

		ASSERT_GT(MAX_SAVED, x->nr_saved);
		n = htmm_read_file(path, t->value, sizeof(t->value));
		ASSERT_LT(0, n) TH_LOG("read %s: %s", path,
				       n ? strerror(-n) : "empty");
		snprintf(t->name, sizeof(t->name), "%s", name);
		x->nr_saved++;
	}
	err = htmm_write_str(path, val);
	ASSERT_EQ(0, err) TH_LOG("write %s to %s: %s", val, path,
				 strerror(-err));
}

static void cg_path(char *buf, size_t size, const struct sample_ctx *x,
		    const char *file)
{
	htmm_cg_file(buf, size, x->cg, file);
}

static void cg_write(struct __test_metadata *_metadata,
		     const struct sample_ctx *x, const char *file,
		     const char *val)
{
	char path[PATH_MAX];
	int err;

	cg_path(path, sizeof(path), x, file);
	err = htmm_write_str(path, val);
	ASSERT_EQ(0, err) TH_LOG("write %s to %s: %s", val, path,
				 strerror(-err));
}

static int set_enabled(const struct sample_ctx *x, bool on)
{
	char path[PATH_MAX];

	cg_path(path, sizeof(path), x, "memory.htmm_enabled");
	return htmm_write_str(path, on ? "enabled" : "disabled");
}

static void set_fast_limit(struct __test_metadata *_metadata,
			   const struct sample_ctx *x, const char *val)
{
	char file[64];

	snprintf(file, sizeof(file), "memory.max_at_node%d", HTMM_FAST_NODE);
	cg_write(_metadata, x, file, val);
}

/* ------------------------------------------------------------------ */
/* memory.htmm_stat snapshots                                          */
/* ------------------------------------------------------------------ */

struct stat_snap {
	int nr;
	char key[MAX_STAT_KEYS][32];
	char val[MAX_STAT_KEYS][24];
	bool malformed;		/* a line that is not "key value" */
};

static int snap_read(const struct sample_ctx *x, struct stat_snap *s)
{
	static char buf[16384];
	char path[PATH_MAX], *line, *save = NULL;
	ssize_t n;

	memset(s, 0, sizeof(*s));
	cg_path(path, sizeof(path), x, "memory.htmm_stat");
	n = htmm_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	if (!n || buf[n - 1] != '\n')
		s->malformed = true;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (!sp || sp == line || !sp[1] || strchr(sp + 1, ' ') ||
		    (size_t)(sp - line) >= sizeof(s->key[0]) ||
		    strlen(sp + 1) >= sizeof(s->val[0]) ||
		    s->nr == MAX_STAT_KEYS) {
			s->malformed = true;
			continue;
		}
		*sp = '\0';
		snprintf(s->key[s->nr], sizeof(s->key[0]), "%s", line);
		snprintf(s->val[s->nr], sizeof(s->val[0]), "%s", sp + 1);
		s->nr++;
	}
	return 0;
}

static const char *snap_str(const struct stat_snap *s, const char *key)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->key[i], key))
			return s->val[i];
	return NULL;
}

static bool is_decimal(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* A decimal value; ULLONG_MAX (and a failure) if missing or not decimal. */
static unsigned long long snap_u64(struct __test_metadata *_metadata,
				   const struct stat_snap *s, const char *key)
{
	const char *v = snap_str(s, key);

	EXPECT_TRUE(v && is_decimal(v))
		TH_LOG("memory.htmm_stat: %s is %s", key, v ? v : "missing");
	if (!v || !is_decimal(v))
		return ULLONG_MAX;
	return strtoull(v, NULL, 10);
}

/* A threshold bin: 0..15 or BIN_NONE; -1 (and a failure) if malformed. */
static int snap_bin(struct __test_metadata *_metadata,
		    const struct stat_snap *s, const char *key)
{
	const char *v = snap_str(s, key);

	if (v && !strcmp(v, "none"))
		return BIN_NONE;
	EXPECT_TRUE(v && is_decimal(v) && strtoul(v, NULL, 10) < NR_BINS)
		TH_LOG("memory.htmm_stat: %s is %s", key, v ? v : "missing");
	if (!v || !is_decimal(v))
		return -1;
	return strtoul(v, NULL, 10);
}

static unsigned long long hist_total(struct __test_metadata *_metadata,
				     const struct stat_snap *s,
				     const char *prefix)
{
	unsigned long long sum = 0;
	char key[32];
	int b;

	for (b = 0; b < NR_BINS; b++) {
		snprintf(key, sizeof(key), "%s%d", prefix, b);
		sum += snap_u64(_metadata, s, key);
	}
	return sum;
}

/* One value of a fresh snapshot. */
static unsigned long long stat_now(struct __test_metadata *_metadata,
				   const struct sample_ctx *x,
				   const char *key)
{
	struct stat_snap s;
	int err = snap_read(x, &s);

	EXPECT_EQ(0, err) TH_LOG("read memory.htmm_stat: %s", strerror(-err));
	if (err)
		return ULLONG_MAX;
	return snap_u64(_metadata, &s, key);
}

static const char *bin_str(int bin, char *buf, size_t size)
{
	if (bin == BIN_NONE)
		return "none";
	snprintf(buf, size, "%d", bin);
	return buf;
}

/* ------------------------------------------------------------------ */
/* debugfs                                                             */
/* ------------------------------------------------------------------ */

struct page_info {
	unsigned int count, bin, folio_count, folio_bin, nr_pages, epoch;
	int hot;
};

/*
 * Ask page_info about one page. A new open per query: the answer is read
 * from offset 0 of the file and the file is not seekable.
 * Returns 0 or -errno of the write (ENODEV: never sampled).
 */
static int page_info(pid_t pid, unsigned long addr, struct page_info *pi)
{
	char buf[256];
	ssize_t n;
	int fd, len, err;

	memset(pi, 0, sizeof(*pi));
	fd = open(PAGE_INFO_FILE, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%d 0x%lx", (int)pid, addr);
	n = write(fd, buf, len);
	if (n != len) {
		err = n < 0 ? -errno : -EIO;
		close(fd);
		return err;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	if (sscanf(buf,
		   "count %u bin %u folio_count %u folio_bin %u nr_pages %u epoch %u hot %d",
		   &pi->count, &pi->bin, &pi->folio_count, &pi->folio_bin,
		   &pi->nr_pages, &pi->epoch, &pi->hot) != 7)
		return -EPROTO;
	return 0;
}

/* Write to the injector. Returns the bytes accepted or -errno. */
static ssize_t inject(const char *buf, size_t len)
{
	return htmm_write_file(INJECT_FILE, buf, len);
}

/* Append @times records "<pid> <addr> <kind>" to buf. */
static void add_recs(char *buf, size_t size, size_t *len, pid_t pid,
		     unsigned long addr, const char *kind, int times)
{
	while (times-- > 0 && *len < size)
		*len += snprintf(buf + *len, size - *len, "%d 0x%lx %s\n",
				 (int)pid, addr, kind);
}

static long long perf_counters(void)
{
	unsigned long long v = 0;
	int err = htmm_read_value(PERF_COUNTERS_FILE, &v);

	return err ? err : (long long)v;
}

struct rings {
	unsigned long long pushed[MAX_CPUS];
	unsigned long long dropped[MAX_CPUS];
	unsigned long long paddr[MAX_CPUS];	/* resolved by physical address */
	unsigned long long mm[MAX_CPUS];	/* ... by mm and user address */
	unsigned long long exited[MAX_CPUS];	/* dropped: the mm had exited */
	unsigned long long queued[MAX_CPUS];	/* waiting on the ring */
	unsigned long long waited[MAX_CPUS];	/* waited for their fault */
};

static int read_rings(struct rings *r)
{
	static char buf[65536];
	char *line, *save = NULL;
	ssize_t n;
	int lines = 0;

	memset(r, 0, sizeof(*r));
	n = htmm_read_file(RINGS_FILE, buf, sizeof(buf));
	if (n < 0)
		return n;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long p, d, pa, mm, ex, q, w;
		int cpu;

		if (sscanf(line,
			   "cpu%d pushed %llu dropped %llu paddr %llu mm %llu exited %llu queued %llu waited %llu",
			   &cpu, &p, &d, &pa, &mm, &ex, &q, &w) != 8 || cpu < 0)
			return -EPROTO;
		if (cpu < MAX_CPUS) {
			r->pushed[cpu] = p;
			r->dropped[cpu] = d;
			r->paddr[cpu] = pa;
			r->mm[cpu] = mm;
			r->exited[cpu] = ex;
			r->queued[cpu] = q;
			r->waited[cpu] = w;
		}
		lines++;
	}
	return lines ? 0 : -EPROTO;
}

/* Number of tasks whose /proc/<pid>/comm is @comm. */
static int count_comm(const char *comm)
{
	char path[PATH_MAX], buf[64];
	struct dirent *de;
	int nr = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!is_decimal(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (htmm_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		buf[strcspn(buf, "\n")] = '\0';
		if (!strcmp(buf, comm))
			nr++;
	}
	closedir(d);
	return nr;
}

/*
 * Wait until no ksamplingd is left (an exited kthread may be listed until
 * it is reaped). Returns the number still there at the deadline.
 */
static int wait_no_ksamplingd(int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	int nr;

	do {
		nr = count_comm("ksamplingd");
		if (!nr)
			break;
	} while (poll_again(deadline));
	return nr;
}

/*
 * Wait until the cgroup's @key in memory.htmm_stat has not changed for
 * @stable_ms. Returns true if it settled before @timeout_ms.
 */
static bool wait_stat_stable(struct __test_metadata *_metadata,
			     const struct sample_ctx *x, const char *key,
			     int stable_ms, int timeout_ms,
			     unsigned long long *val)
{
	long long deadline = now_ms() + timeout_ms, since = now_ms();
	unsigned long long v;

	*val = stat_now(_metadata, x, key);
	do {
		v = stat_now(_metadata, x, key);
		if (v != *val) {
			*val = v;
			since = now_ms();
		} else if (now_ms() - since >= stable_ms) {
			return true;
		}
	} while (poll_again(deadline));
	return false;
}

/* ------------------------------------------------------------------ */
/* Children                                                            */
/* ------------------------------------------------------------------ */

enum { KID_QUIT, KID_TOUCH };

struct kid_cmd {
	int op;
	unsigned long pages;	/* KID_TOUCH: fresh 4 KiB pages to touch */
};

struct kid_reply {
	int err;		/* errno of the failed step, or 0 */
	char step[32];
	unsigned long addr[2];	/* mappings made by the step */
	unsigned long len[2];
	pid_t pid;		/* a process the child forked, or 0 */
};

struct kid_spec;
typedef void (*kid_body)(const struct kid_spec *s, int res_fd, int cmd_fd);

struct kid_spec {
	kid_body body;
	int cpu;		/* pin to this CPU first; -1: no pinning */
	unsigned long pages;	/* hold: pages mapped and touched at start */
	size_t len;		/* churn: bytes per round; hot_cold: cold */
	size_t hot_len;		/* hot_cold: the hot region */
	long long run_ms;	/* churn: exit(0) after this long; 0: never */
	bool thp;		/* leave THP on (else PR_SET_THP_DISABLE) */
};

/* In a child: report a failure and exit. */
static void kid_fail(int res_fd, const char *step)
{
	struct kid_reply r = { .err = errno ? errno : EIO };

	snprintf(r.step, sizeof(r.step), "%s", step);
	htmm_full_write(res_fd, &r, sizeof(r));
	_exit(1);
}

static void kid_reply_ok(int res_fd, const struct kid_reply *r)
{
	if (!htmm_full_write(res_fd, r, sizeof(*r)))
		_exit(2);
}

static char *kid_map(int res_fd, size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		kid_fail(res_fd, "mmap");
	return p;
}

/* Has the parent sent something (or gone away)? */
static bool kid_told(int cmd_fd)
{
	struct pollfd p = { .fd = cmd_fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/*
 * Map and touch s->pages pages, report them, then for each KID_TOUCH map
 * and touch that many fresh pages (kept mapped) and report them.
 */
static void kid_hold(const struct kid_spec *s, int res_fd, int cmd_fd)
{
	struct kid_reply r;
	struct kid_cmd cmd;
	char *p;

	memset(&r, 0, sizeof(r));
	if (s->pages) {
		p = kid_map(res_fd, s->pages * PG);
		htmm_touch(p, s->pages * PG);
		r.addr[0] = (unsigned long)p;
		r.len[0] = s->pages * PG;
	}
	kid_reply_ok(res_fd, &r);
	while (htmm_full_read(cmd_fd, &cmd, sizeof(cmd)) &&
	       cmd.op == KID_TOUCH) {
		memset(&r, 0, sizeof(r));
		p = kid_map(res_fd, cmd.pages * PG);
		htmm_touch(p, cmd.pages * PG);
		r.addr[0] = (unsigned long)p;
		r.len[0] = cmd.pages * PG;
		kid_reply_ok(res_fd, &r);
	}
	_exit(0);
}

#define FILE_SPARE	64	/* more than a CPU's LRU add batch (31 folios) */

/*
 * For each KID_TOUCH: a memfd of that many pages and FILE_SPARE more,
 * written with pwrite(), then its first pages mapped shared and written
 * to: one minor fault per page, on a page cache page that is already on
 * the LRU (the spare pages pushed it out of this CPU's LRU add batch), so
 * htmm accounts a sample of it at once. Pin the child: the batch is per
 * CPU.
 */
static void kid_file(const struct kid_spec *s, int res_fd, int cmd_fd)
{
	static char page[PG];
	struct kid_reply r;
	struct kid_cmd cmd;
	unsigned long i;
	char *p;
	int fd;

	(void)s;
	memset(&r, 0, sizeof(r));
	memset(page, 1, sizeof(page));
	kid_reply_ok(res_fd, &r);
	while (htmm_full_read(cmd_fd, &cmd, sizeof(cmd)) &&
	       cmd.op == KID_TOUCH) {
		memset(&r, 0, sizeof(r));
		fd = memfd_create("htmm_sample", MFD_CLOEXEC);
		if (fd < 0)
			kid_fail(res_fd, "memfd_create");
		for (i = 0; i < cmd.pages + FILE_SPARE; i++)
			if (pwrite(fd, page, PG, i * PG) != (ssize_t)PG)
				kid_fail(res_fd, "pwrite");
		p = mmap(NULL, cmd.pages * PG, PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			kid_fail(res_fd, "mmap memfd");
		close(fd);
		htmm_touch(p, cmd.pages * PG);
		r.addr[0] = (unsigned long)p;
		r.len[0] = cmd.pages * PG;
		kid_reply_ok(res_fd, &r);
	}
	_exit(0);
}

/*
 * Map and write s->pages pages, then fork a sharer that keeps them mapped
 * until this child exits, and report the pages and the sharer's pid. For
 * each KID_TOUCH, write one byte of each page: the first time, a
 * copy-on-write fault per page gives this child a copy and leaves the
 * original to the sharer.
 */
static void kid_cow(const struct kid_spec *s, int res_fd, int cmd_fd)
{
	struct kid_reply r;
	struct kid_cmd cmd;
	int hold[2];
	char *p, c;

	memset(&r, 0, sizeof(r));
	p = kid_map(res_fd, s->pages * PG);
	htmm_touch(p, s->pages * PG);
	if (pipe2(hold, O_CLOEXEC))
		kid_fail(res_fd, "pipe2");
	r.pid = fork();
	if (r.pid < 0)
		kid_fail(res_fd, "fork");
	if (!r.pid) {
		close(res_fd);
		close(cmd_fd);
		close(hold[1]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* until this child exits: end of file */
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(hold[0]);
	r.addr[0] = (unsigned long)p;
	r.len[0] = s->pages * PG;
	kid_reply_ok(res_fd, &r);
	while (htmm_full_read(cmd_fd, &cmd, sizeof(cmd)) &&
	       cmd.op == KID_TOUCH) {
		htmm_touch(p, s->pages * PG);
		kid_reply_ok(res_fd, &r);
	}
	_exit(0);
}

/*
 * Touch a cold region once, then write one byte per page of a hot region
 * over and over until told anything.
 */
/*
 * Map and touch s->len bytes, then s->hot_len bytes, and report both (in
 * that order).  Return: the second region; the first in *@first.
 */
static char *kid_map_two(const struct kid_spec *s, int res_fd, char **first)
{
	struct kid_reply r;
	char *hot;

	memset(&r, 0, sizeof(r));
	*first = kid_map(res_fd, s->len);
	htmm_touch(*first, s->len);
	hot = kid_map(res_fd, s->hot_len);
	htmm_touch(hot, s->hot_len);
	r.addr[0] = (unsigned long)*first;
	r.len[0] = s->len;
	r.addr[1] = (unsigned long)hot;
	r.len[1] = s->hot_len;
	kid_reply_ok(res_fd, &r);
	return hot;
}

static void kid_hot_cold(const struct kid_spec *s, int res_fd, int cmd_fd)
{
	char *cold, *hot;

	hot = kid_map_two(s, res_fd, &cold);
	while (!kid_told(cmd_fd))
		htmm_touch(hot, s->hot_len);
	_exit(0);
}

/*
 * Map and touch s->len bytes of warm pages and s->hot_len of hot ones,
 * then until told anything: write every hot page, then one warm page, in
 * turn.  A warm page is used s->len / s->hot_len times less often than a
 * hot one.
 */
static void kid_rates(const struct kid_spec *s, int res_fd, int cmd_fd)
{
	size_t nwarm = s->len / PG, i = 0, off;
	char *hot, *warm;

	hot = kid_map_two(s, res_fd, &warm);
	for (;;) {
		for (off = 0; off < s->hot_len; off += PG)
			hot[off]++;
		warm[i++ % nwarm * PG]++;
		/* Every write of every round, not one per page at the end. */
		asm volatile("" : : : "memory");
		if (!(i % 4096) && kid_told(cmd_fd))
			break;
	}
	_exit(0);
}

/*
 * Map s->len bytes of base pages (MADV_NOHUGEPAGE) and s->hot_len of huge
 * pages (2 MiB aligned, MADV_HUGEPAGE), report them in that order, then
 * until told anything write every 4 KiB page of both in turn.
 */
static void kid_huge_base(const struct kid_spec *s, int res_fd, int cmd_fd)
{
	char *base, *map, *huge;
	struct kid_reply r;
	size_t off;

	base = kid_map(res_fd, s->len);
	if (madvise(base, s->len, MADV_NOHUGEPAGE))
		kid_fail(res_fd, "MADV_NOHUGEPAGE");
	map = kid_map(res_fd, s->hot_len + HPAGE_SZ);
	huge = (char *)(((unsigned long)map + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
	if (madvise(huge, s->hot_len, MADV_HUGEPAGE))
		kid_fail(res_fd, "MADV_HUGEPAGE");
	memset(&r, 0, sizeof(r));
	r.addr[0] = (unsigned long)base;
	r.len[0] = s->len;
	r.addr[1] = (unsigned long)huge;
	r.len[1] = s->hot_len;
	htmm_touch(base, s->len);
	htmm_touch(huge, s->hot_len);
	kid_reply_ok(res_fd, &r);
	while (!kid_told(cmd_fd)) {
		for (off = 0; off < s->len; off += PG)
			base[off]++;
		for (off = 0; off < s->hot_len; off += PG)
			huge[off]++;
		asm volatile("" : : : "memory");
	}
	_exit(0);
}

/*
 * Map, touch and unmap s->len bytes in a loop until told anything, or
 * until s->run_ms passed (then exit by itself with status 0).
 */
static void kid_churn(const struct kid_spec *s, int res_fd, int cmd_fd)
{
	long long end = s->run_ms ? now_ms() + s->run_ms : LLONG_MAX;
	struct kid_reply r;
	size_t off;
	char *p;

	memset(&r, 0, sizeof(r));
	kid_reply_ok(res_fd, &r);
	while (!kid_told(cmd_fd)) {
		p = kid_map(res_fd, s->len);
		for (off = 0; off < s->len; off += 64 * PG) {
			size_t n = s->len - off < 64 * PG ? s->len - off : 64 * PG;

			htmm_touch(p + off, n);
			if (now_ms() >= end)
				break;
		}
		munmap(p, s->len);
		if (now_ms() >= end)
			break;
	}
	_exit(0);
}

/* Wait up to @timeout_ms for the next report. Returns 0 or -errno. */
static int kid_wait_reply(struct htmm_child *c, struct kid_reply *r,
			  int timeout_ms)
{
	struct pollfd p = { .fd = c->res_fd, .events = POLLIN };
	int n;

	do {
		n = poll(&p, 1, timeout_ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (!n)
		return -ETIMEDOUT;
	return htmm_full_read(c->res_fd, r, sizeof(*r)) ? 0 : -EPIPE;
}

/* Fork a child into the test cgroup and wait for its first report. */
static void kid_start(struct __test_metadata *_metadata, struct sample_ctx *x,
		      int slot, const struct kid_spec *s, struct kid_reply *r)
{
	struct htmm_child *c = &x->kids[slot];
	pid_t parent = getpid();
	int res[2], cmd[2], err, i;

	ASSERT_EQ(-1, c->pid);
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, pipe2(res, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(cmd, O_CLOEXEC));
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	ASSERT_LE(0, c->pid) TH_LOG("fork: %s", strerror(errno));
	if (c->pid == 0) {
		close(res[0]);
		close(cmd[1]);
		/* the other children's pipes: their EOF is not ours to hold */
		for (i = 0; i < MAX_KIDS; i++) {
			if (x->kids[i].cmd_fd >= 0)
				close(x->kids[i].cmd_fd);
			if (x->kids[i].res_fd >= 0)
				close(x->kids[i].res_fd);
		}
		errno = 0;
		/* never outlive the test, whatever happens to it */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
			_exit(3);
		err = htmm_cg_enter(x->cg, getpid());
		if (err) {
			errno = -err;
			kid_fail(res[1], "enter cgroup");
		}
		if (!s->thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
			kid_fail(res[1], "PR_SET_THP_DISABLE");
		if (s->cpu >= 0 && htmm_pin_cpu(s->cpu))
			kid_fail(res[1], "sched_setaffinity");
		s->body(s, res[1], cmd[0]);
		_exit(0);
	}
	close(res[1]);
	close(cmd[0]);
	c->res_fd = res[0];
	c->cmd_fd = cmd[1];

	err = kid_wait_reply(c, r, REPLY_MS);
	ASSERT_EQ(0, err) TH_LOG("child %d did not report: %s", c->pid,
				 strerror(-err));
	ASSERT_EQ(0, r->err) TH_LOG("child failed at %s: %s", r->step,
				    strerror(r->err));
}

/* Ask a holding child to touch @pages fresh pages and wait for it. */
static void kid_touch(struct __test_metadata *_metadata, struct sample_ctx *x,
		      int slot, unsigned long pages, struct kid_reply *r)
{
	struct kid_cmd cmd = { .op = KID_TOUCH, .pages = pages };
	struct htmm_child *c = &x->kids[slot];
	int err;

	ASSERT_TRUE(htmm_full_write(c->cmd_fd, &cmd, sizeof(cmd)));
	err = kid_wait_reply(c, r, REPLY_MS);
	ASSERT_EQ(0, err) TH_LOG("child %d did not report: %s", c->pid,
				 strerror(-err));
	ASSERT_EQ(0, r->err) TH_LOG("child failed at %s: %s", r->step,
				    strerror(r->err));
}

/*
 * Tell a child to quit (or kill it) and reap it; *status gets the wait
 * status, -1 if there was no child.
 */
static void kid_stop(struct htmm_child *c, bool kill_it, int *status)
{
	struct kid_cmd cmd = { .op = KID_QUIT };
	int st = -1;

	if (c->pid > 0) {
		if (kill_it)
			kill(c->pid, SIGKILL);
		else
			htmm_full_write(c->cmd_fd, &cmd, sizeof(cmd));
		if (waitpid(c->pid, &st, 0) != c->pid)
			st = -1;
	}
	if (c->cmd_fd >= 0)
		close(c->cmd_fd);
	if (c->res_fd >= 0)
		close(c->res_fd);
	c->pid = -1;
	c->cmd_fd = -1;
	c->res_fd = -1;
	if (status)
		*status = st;
}

/* ------------------------------------------------------------------ */
/* Expected values                                                     */
/* ------------------------------------------------------------------ */

/* The bin of @count samples on a folio of @nr_pages 4 KiB pages. */
static unsigned int bin_of(unsigned long long count, unsigned int nr_pages)
{
	unsigned long long units = count * 512 / nr_pages;
	unsigned int bin = 0;

	if (units >= (1ULL << NR_BINS) - 1)
		return NR_BINS - 1;
	for (units++; units >>= 1;)
		bin++;
	return bin;
}

static void expect_page(struct __test_metadata *_metadata, pid_t pid,
			unsigned long addr, const char *what,
			unsigned int count, int hot)
{
	struct page_info pi;
	int err = page_info(pid, addr, &pi);

	EXPECT_EQ(0, err) TH_LOG("%s: page_info: %s", what, strerror(-err));
	if (err)
		return;
	EXPECT_EQ(count, pi.count) TH_LOG("%s", what);
	EXPECT_EQ(bin_of(count, 1), pi.bin) TH_LOG("%s: count %u", what,
						   pi.count);
	EXPECT_EQ(1U, pi.nr_pages) TH_LOG("%s: THP was disabled", what);
	EXPECT_EQ(pi.count, pi.folio_count) TH_LOG("%s", what);
	EXPECT_EQ(pi.bin, pi.folio_bin) TH_LOG("%s", what);
	if (hot < 0)
		return;
	EXPECT_EQ(hot, pi.hot) TH_LOG("%s: bin %u", what, pi.bin);
}

static void expect_cold(struct __test_metadata *_metadata, pid_t pid,
			unsigned long addr, const char *what)
{
	struct page_info pi;
	int err = page_info(pid, addr, &pi);

	EXPECT_EQ(-ENODEV, err)
		TH_LOG("%s: page_info: %s (count %u), want ENODEV", what,
		       err ? strerror(-err) : "answered", pi.count);
}

/* ------------------------------------------------------------------ */
/* The tests                                                           */
/* ------------------------------------------------------------------ */

FIXTURE(htmm_sample) {
	struct sample_ctx x;
};

FIXTURE_SETUP(htmm_sample)
{
	ctx_setup(_metadata, &self->x);
}

FIXTURE_TEARDOWN(htmm_sample)
{
	ctx_teardown(_metadata, &self->x);
}

#define INJ_PAGES	16
#define INJ_HOT		4	/* pages 0..3: 8 samples each */
#define INJ_WARM	8	/* pages 4..7: 1 sample each */
#define INJ_HOT_COUNT	8

/*
 * sampler=inject, one child with INJ_PAGES base pages, htmm enabled,
 * memory.max_at_node0 set to @limit unless NULL: 8 load-fast samples into
 * each of pages 0-3 and one into each of pages 4-7, in one write.
 */
static void inject_setup(struct __test_metadata *_metadata,
			 struct sample_ctx *x, const char *limit,
			 struct kid_reply *r)
{
	const struct kid_spec spec = {
		.body = kid_hold, .cpu = -1, .pages = INJ_PAGES,
	};
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	int p, err;

	set_tunable(_metadata, x, "htmm_sampler", "inject");
	set_tunable(_metadata, x, "htmm_adaptation_period", "1");
	set_tunable(_metadata, x, "htmm_cooling_period", "2000000");
	set_tunable(_metadata, x, "htmm_thres_hot", "1");
	kid_start(_metadata, x, 0, &spec, r);
	err = set_enabled(x, true);
	ASSERT_EQ(0, err) TH_LOG("enable: %s", strerror(-err));
	if (limit)
		set_fast_limit(_metadata, x, limit);

	for (p = 0; p < INJ_WARM; p++)
		add_recs(buf, sizeof(buf), &len, x->kids[0].pid,
			 r->addr[0] + p * PG, "load-fast",
			 p < INJ_HOT ? INJ_HOT_COUNT : 1);
	ASSERT_GT(sizeof(buf), len);
	n = inject(buf, len);
	ASSERT_EQ((ssize_t)len, n) TH_LOG("inject: %s",
					  n < 0 ? strerror(-n) : "short");
}

/* 6 pages of budget: the 4 pages with 8 samples are hot, not the others. */
TEST_F_TIMEOUT(htmm_sample, inject_hot_pages, 120)
{
	unsigned int hot_bin = bin_of(INJ_HOT_COUNT, 1), one_bin = bin_of(1, 1);
	struct sample_ctx *x = &self->x;
	struct kid_reply r;
	struct stat_snap s;
	char what[64], b1[8], b2[8];
	pid_t pid;
	int p, hot, warm;

	/* 24K = 6 pages; less 2% rounded down: still 6 pages */
	inject_setup(_metadata, x, "24K", &r);
	pid = x->kids[0].pid;
	/* a write of the limit recomputes the thresholds */
	set_fast_limit(_metadata, x, "24K");

	for (p = 0; p < INJ_PAGES; p++) {
		snprintf(what, sizeof(what), "page %d", p);
		if (p < INJ_HOT)
			expect_page(_metadata, pid, r.addr[0] + p * PG, what,
				    INJ_HOT_COUNT, 1);
		else if (p < INJ_WARM)
			expect_page(_metadata, pid, r.addr[0] + p * PG, what,
				    1, 0);
		else
			expect_cold(_metadata, pid, r.addr[0] + p * PG, what);
	}

	ASSERT_EQ(0, snap_read(x, &s));
	EXPECT_EQ(36ULL, snap_u64(_metadata, &s, "samples_inject"));
	EXPECT_EQ(36ULL, snap_u64(_metadata, &s, "samples_load_fast"));
	EXPECT_EQ(0ULL, snap_u64(_metadata, &s, "samples_store"));
	EXPECT_EQ(6 * PG, snap_u64(_metadata, &s, "fast_capacity"));
	snprintf(what, sizeof(what), "hist_%u", hot_bin);
	EXPECT_EQ((unsigned long long)INJ_HOT, snap_u64(_metadata, &s, what));
	snprintf(what, sizeof(what), "hist_%u", one_bin);
	EXPECT_EQ((unsigned long long)(INJ_WARM - INJ_HOT),
		  snap_u64(_metadata, &s, what));
	EXPECT_EQ((unsigned long long)INJ_WARM,
		  hist_total(_metadata, &s, "hist_"));
	EXPECT_EQ((unsigned long long)INJ_WARM,
		  hist_total(_metadata, &s, "hist_split_"));

	/*
	 * The 4 pages of bin 12 fit in 6 pages, the next 4 (bin 9) do not:
	 * the threshold lies above bin 9 and at most at bin 12. Bins 10 and
	 * 11 are empty, so where in 10..12 it lands depends on whether empty
	 * bins below the last one taken are counted as taken.
	 */
	hot = snap_bin(_metadata, &s, "hot_threshold");
	warm = snap_bin(_metadata, &s, "warm_threshold");
	TH_LOG("hot_threshold %s, warm_threshold %s (bin of 8 samples %u, of 1 sample %u)",
	       bin_str(hot, b1, sizeof(b1)), bin_str(warm, b2, sizeof(b2)),
	       hot_bin, one_bin);
	EXPECT_LT((int)one_bin, hot);
	EXPECT_GE((int)hot_bin, hot);
}

/* Every malformed record fails the whole write; nothing is injected. */
TEST_F_TIMEOUT(htmm_sample, inject_bad_records, 120)
{
	const struct kid_spec spec = { .body = kid_hold, .cpu = -1, .pages = 2 };
	static const char *const bad_lines[] = {
		"garbage", "%d 0x%lx bogus-kind", "%d 0x%lx load_fast",
		"1 2 3 4", "0xZZ store", "store", "0 0x%lx store",
		"%d 0x%lx", "-1 store", "%d 0x%lx store extra",
	};
	struct sample_ctx *x = &self->x;
	char valid[128], bad[128], buf[512], pm_path[PATH_MAX];
	unsigned long long before, pme = 0;
	unsigned long addr;
	struct kid_reply r;
	struct page_info pi;
	unsigned int i;
	pid_t pid, gone;
	ssize_t n;
	char *big;
	size_t len;
	int fd, err;

	set_tunable(_metadata, x, "htmm_sampler", "inject");
	kid_start(_metadata, x, 0, &spec, &r);
	ASSERT_EQ(0, set_enabled(x, true));
	pid = x->kids[0].pid;
	addr = r.addr[0];
	snprintf(valid, sizeof(valid), "%d 0x%lx load-fast\n", (int)pid, addr);
	before = stat_now(_metadata, x, "samples_inject");
	EXPECT_EQ(0ULL, before);

	for (i = 0; i < ARRAY_SIZE(bad_lines); i++) {
		/* the formats take the pid and/or the address, in order */
		if (!strncmp(bad_lines[i], "%d", 2))
			snprintf(bad, sizeof(bad), bad_lines[i], (int)pid, addr);
		else if (strstr(bad_lines[i], "%lx"))
			snprintf(bad, sizeof(bad), bad_lines[i], addr);
		else
			snprintf(bad, sizeof(bad), "%s", bad_lines[i]);
		len = snprintf(buf, sizeof(buf), "%s%s\n", valid, bad);
		n = inject(buf, len);
		EXPECT_EQ(-EINVAL, n) TH_LOG("valid line + \"%s\": %s", bad,
					     n < 0 ? strerror(-n) : "accepted");
	}
	/* a malformed line first, then a valid one */
	len = snprintf(buf, sizeof(buf), "1 2 3 4\n%s", valid);
	EXPECT_EQ(-EINVAL, inject(buf, len));
	/* no record at all */
	n = inject("", 0);
	EXPECT_EQ(-EINVAL, n) TH_LOG("empty write: %s",
				     n < 0 ? strerror(-n) : "accepted");
	n = inject("\n\n", 2);
	EXPECT_EQ(-EINVAL, n) TH_LOG("blank lines: %s",
				     n < 0 ? strerror(-n) : "accepted");
	/* more than 256 KiB of valid lines */
	big = malloc(INJECT_MAX_WRITE + sizeof(valid));
	ASSERT_NE(NULL, big);
	for (len = 0; len <= INJECT_MAX_WRITE;)
		len += snprintf(big + len, sizeof(valid), "%s", valid);
	n = inject(big, len);
	free(big);
	EXPECT_GT(0, n) TH_LOG("write of %zu bytes accepted", len);

	EXPECT_EQ(before, stat_now(_metadata, x, "samples_inject"))
		TH_LOG("a rejected write injected samples");
	expect_cold(_metadata, pid, addr, "after rejected writes");

	/* page_info errors */
	gone = fork();
	ASSERT_LE(0, gone);
	if (!gone)
		_exit(0);
	ASSERT_EQ(gone, waitpid(gone, NULL, 0));
	err = page_info(gone, addr, &pi);
	EXPECT_EQ(-ESRCH, err) TH_LOG("pid of an exited process: %s",
				      strerror(-err));
	err = page_info(pid, 4096, &pi);
	EXPECT_EQ(-EFAULT, err) TH_LOG("unmapped address: %s", strerror(-err));

	/* the valid line alone, then a hex address and other kinds */
	n = inject(valid, strlen(valid));
	EXPECT_EQ((ssize_t)strlen(valid), n);
	len = snprintf(buf, sizeof(buf), "%d 0x%lx load-slow\n\t%d %lu  store\n",
		       (int)pid, addr, (int)pid, addr);
	n = inject(buf, len);
	EXPECT_EQ((ssize_t)len, n) TH_LOG("hex/decimal addresses: %s",
					  n < 0 ? strerror(-n) : "short");
	expect_page(_metadata, pid, addr, "3 valid records", 3, -1);
	EXPECT_EQ(before + 3, stat_now(_metadata, x, "samples_inject"));
	EXPECT_EQ(1ULL, stat_now(_metadata, x, "samples_load_fast"));
	EXPECT_EQ(1ULL, stat_now(_metadata, x, "samples_load_slow"));
	EXPECT_EQ(1ULL, stat_now(_metadata, x, "samples_store"));

	/* "<paddr> <kind>", with the address from /proc/<pid>/pagemap */
	snprintf(pm_path, sizeof(pm_path), "/proc/%d/pagemap", (int)pid);
	fd = open(pm_path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open %s: %s", pm_path, strerror(errno));
	n = pread(fd, &pme, sizeof(pme), addr / PG * sizeof(pme));
	close(fd);
	ASSERT_EQ((ssize_t)sizeof(pme), n);
	ASSERT_NE(0ULL, pme >> 63) TH_LOG("page not present");
	pme &= (1ULL << 55) - 1;
	ASSERT_NE(0ULL, pme) TH_LOG("no PFN in pagemap (no CAP_SYS_ADMIN?)");
	len = snprintf(buf, sizeof(buf), "0x%llx store\n", pme * PG);
	n = inject(buf, len);
	EXPECT_EQ((ssize_t)len, n) TH_LOG("physical address record: %s",
					  n < 0 ? strerror(-n) : "short");
	expect_page(_metadata, pid, addr, "after a physical address record",
		    4, -1);
	EXPECT_EQ(2ULL, stat_now(_metadata, x, "samples_store"));
}

/* cooling_period 64: the 64th sample halves every count. */
TEST_F_TIMEOUT(htmm_sample, cooling_halves, 120)
{
	const struct kid_spec spec = { .body = kid_hold, .cpu = -1, .pages = 2 };
	unsigned long long epoch0, epoch1, cool0 = 0, cool1 = 0;
	struct sample_ctx *x = &self->x;
	unsigned long a, b;
	struct kid_reply r;
	struct page_info pi;
	struct stat_snap s;
	char buf[4096], key[32];
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	int err;

	set_tunable(_metadata, x, "htmm_sampler", "inject");
	set_tunable(_metadata, x, "htmm_cooling_period", "64");
	kid_start(_metadata, x, 0, &spec, &r);
	ASSERT_EQ(0, set_enabled(x, true));
	pid = x->kids[0].pid;
	a = r.addr[0];
	b = r.addr[0] + PG;

	epoch0 = stat_now(_metadata, x, "cooling_epoch");
	ASSERT_EQ(0, htmm_vmstat_get("htmm_nr_cooling", &cool0));

	add_recs(buf, sizeof(buf), &len, pid, a, "load-fast", 40);
	ASSERT_GT(sizeof(buf), len);
	n = inject(buf, len);
	ASSERT_EQ((ssize_t)len, n);
	err = page_info(pid, a, &pi);
	ASSERT_EQ(0, err) TH_LOG("page_info A: %s", strerror(-err));
	EXPECT_EQ(40U, pi.count);
	EXPECT_EQ(epoch0, pi.epoch) TH_LOG("cooled after 40 of 64 samples");

	len = 0;
	add_recs(buf, sizeof(buf), &len, pid, b, "store", 24);
	n = inject(buf, len);
	ASSERT_EQ((ssize_t)len, n);

	ASSERT_EQ(0, snap_read(x, &s));
	epoch1 = snap_u64(_metadata, &s, "cooling_epoch");
	ASSERT_EQ(0, htmm_vmstat_get("htmm_nr_cooling", &cool1));
	TH_LOG("cooling_epoch %llu -> %llu, htmm_nr_cooling %llu -> %llu",
	       epoch0, epoch1, cool0, cool1);
	EXPECT_EQ(epoch0 + 1, epoch1);
	EXPECT_LE(cool0 + 1, cool1);

	err = page_info(pid, a, &pi);
	ASSERT_EQ(0, err) TH_LOG("page_info A: %s", strerror(-err));
	EXPECT_EQ(20U, pi.count);
	/* the page's bin moved down one bin: the bin of 40 samples - 1 */
	EXPECT_EQ(bin_of(40, 1) - 1, pi.bin);
	EXPECT_EQ(epoch0 + 1, pi.epoch);
	err = page_info(pid, b, &pi);
	ASSERT_EQ(0, err) TH_LOG("page_info B: %s", strerror(-err));
	EXPECT_EQ(12U, pi.count);
	EXPECT_EQ(bin_of(24, 1) - 1, pi.bin);
	EXPECT_EQ(epoch0 + 1, pi.epoch);

	/* the histograms moved along */
	snprintf(key, sizeof(key), "hist_%u", bin_of(40, 1) - 1);
	EXPECT_EQ(1ULL, snap_u64(_metadata, &s, key)) TH_LOG("%s", key);
	snprintf(key, sizeof(key), "hist_%u", bin_of(24, 1) - 1);
	EXPECT_EQ(1ULL, snap_u64(_metadata, &s, key)) TH_LOG("%s", key);
	EXPECT_EQ(2ULL, hist_total(_metadata, &s, "hist_"));
	EXPECT_EQ(64ULL, snap_u64(_metadata, &s, "samples_inject"));
}

/* The hot threshold follows memory.max_at_node0. */
TEST_F_TIMEOUT(htmm_sample, threshold_follows_budget, 120)
{
	static const char *const limits[] = { "max", "4K", "24K", "max" };
	unsigned int hot_bin = bin_of(INJ_HOT_COUNT, 1), one_bin = bin_of(1, 1);
	struct sample_ctx *x = &self->x;
	unsigned long long cap;
	struct kid_reply r;
	struct stat_snap s;
	char what[64], b1[8];
	unsigned int i;
	int p, hot;

	inject_setup(_metadata, x, NULL, &r);
	for (i = 0; i < ARRAY_SIZE(limits); i++) {
		set_fast_limit(_metadata, x, limits[i]);
		ASSERT_EQ(0, snap_read(x, &s));
		hot = snap_bin(_metadata, &s, "hot_threshold");
		cap = snap_u64(_metadata, &s, "fast_capacity");
		TH_LOG("max_at_node%d %s: fast_capacity %llu, hot_threshold %s",
		       HTMM_FAST_NODE, limits[i], cap,
		       bin_str(hot, b1, sizeof(b1)));
		EXPECT_EQ(0ULL, cap % PG);
		if (!strcmp(limits[i], "max")) {
			/* everything fits: the floor htmm_thres_hot = 1 */
			EXPECT_LT(INJ_WARM * PG, cap);
			EXPECT_EQ(1, hot);
		} else if (!strcmp(limits[i], "4K")) {
			/* 1 page: not even the top bin fits */
			EXPECT_EQ(PG, cap);
			EXPECT_TRUE(hot == BIN_NONE || hot > (int)hot_bin)
				TH_LOG("hot_threshold %d with 1 page of budget",
				       hot);
		} else {
			EXPECT_EQ(6 * PG, cap);
			EXPECT_LT((int)one_bin, hot);
			EXPECT_GE((int)hot_bin, hot);
		}
		for (p = 0; p < INJ_WARM; p++) {
			int want = hot != BIN_NONE &&
				   bin_of(p < INJ_HOT ? INJ_HOT_COUNT : 1, 1) >=
				   (unsigned int)hot;

			snprintf(what, sizeof(what), "limit %s, page %d",
				 limits[i], p);
			expect_page(_metadata, x->kids[0].pid,
				    r.addr[0] + p * PG, what,
				    p < INJ_HOT ? INJ_HOT_COUNT : 1, want);
		}
	}
}

#define MOVE_ROUNDS	200
#define MOVE_REFUSALS	MOVE_ROUNDS	/* at most, in all */

/*
 * In a child: move one page of @pid between the nodes MOVE_ROUNDS times.
 * A move that migrate_pages() gave up on (move_pages(2) returns the
 * number of pages it did not move) is tried again: the page was busy,
 * for instance referenced by a page_info query at that moment, which is
 * how migration treats any transient reference.  The refusals are
 * counted in *@refused.
 */
static void move_page_rounds(pid_t pid, unsigned long addr,
			     unsigned int *refused)
{
	void *page = (void *)addr;
	int i, node, status;
	long ret;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		_exit(3);
	for (i = 0; i < MOVE_ROUNDS; i++) {
		node = i % 2 ? HTMM_FAST_NODE : HTMM_SLOW_NODE;
		status = -1;
		ret = syscall(SYS_move_pages, pid, 1, &page, &node, &status,
			      MPOL_MF_MOVE);
		if (ret > 0 && ++*refused <= MOVE_REFUSALS) {
			i--;
			continue;
		}
		if (ret)
			_exit(1);
		if (status != node)
			_exit(2);
	}
	_exit(0);
}

/*
 * A page under migration is mapped by a migration entry for a moment.
 * page_info waits for the move to end instead of failing with EFAULT
 * (a test that lowered a budget once saw EFAULT while kmigraterd demoted
 * the page it asked about).  A second child moves one sampled page back
 * and forth with move_pages(2) while this process asks about it.
 */
TEST_F_TIMEOUT(htmm_sample, page_info_waits_for_migration, 180)
{
	unsigned int queries = 0, errors = 0, wrong = 0, *refused, nr_refused;
	struct sample_ctx *x = &self->x;
	int err, status, first_err = 0;
	struct kid_reply r;
	struct page_info pi;
	double t0, secs;
	pid_t mover;

	refused = mmap(NULL, sizeof(*refused), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, refused);
	*refused = 0;
	inject_setup(_metadata, x, NULL, &r);
	t0 = htmm_now_s();
	fflush(stdout);
	fflush(stderr);
	mover = fork();
	ASSERT_LE(0, mover) TH_LOG("fork: %s", strerror(errno));
	if (mover == 0)
		move_page_rounds(x->kids[0].pid, r.addr[0], refused);
	do {
		err = page_info(x->kids[0].pid, r.addr[0], &pi);
		queries++;
		if (err && !errors++)
			first_err = err;
		else if (!err && pi.count != INJ_HOT_COUNT)
			wrong++;
	} while (waitpid(mover, &status, WNOHANG) == 0);
	secs = htmm_now_s() - t0;
	nr_refused = *refused;
	munmap(refused, sizeof(*refused));
	TH_LOG("%d moves in %.1f s, %u refused and tried again", MOVE_ROUNDS,
	       secs, nr_refused);
	TH_LOG("%u queries: %u failed (first: %s), %u miscounted", queries,
	       errors, first_err ? strerror(-first_err) : "none", wrong);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("the mover failed (status %#x): move_pages failed, or refused over %d times",
		       status, MOVE_REFUSALS);
	EXPECT_EQ(0U, errors);
	EXPECT_EQ(0U, wrong);
}

#define COLD_LEN	(256 * MiB)	/* abit_holds_cpu_quota: a long scan */
#define HVC_COLD_LEN	(32 * MiB)	/* abit_hot_vs_cold */
#define HOT_LEN		(32 * MiB)
#define NR_PROBE	8
#define NR_MEAN		64

/*
 * Mean bin of NR_MEAN pages spread over a region (ENODEV counts as 0);
 * their largest sample count in *@max_count, their mean one in *@mean.
 */
static double mean_bin(struct __test_metadata *_metadata, pid_t pid,
		       unsigned long addr, unsigned long len,
		       unsigned int *max_count, double *mean)
{
	unsigned long stride = len / PG / NR_MEAN * PG;
	unsigned int sum = 0, counts = 0;
	struct page_info pi;
	int i, err;

	*max_count = 0;
	for (i = 0; i < NR_MEAN; i++) {
		err = page_info(pid, addr + i * stride, &pi);
		if (err == -ENODEV)
			continue;
		EXPECT_EQ(0, err) TH_LOG("page_info: %s", strerror(-err));
		sum += pi.bin;
		counts += pi.count;
		if (pi.count > *max_count)
			*max_count = pi.count;
	}
	*mean = (double)counts / NR_MEAN;
	return (double)sum / NR_MEAN;
}

/*
 * The Accessed-bit sampler, a scan started every 100 ms, no cooling and no
 * CPU quota: the scan is paced to the quota, and this debug kernel (KASAN,
 * lockdep) under TCG is far slower than the machines the default quota is
 * for.  Classification is tested with this, the quota elsewhere.
 */
static void abit_classify_setup(struct __test_metadata *_metadata,
				struct sample_ctx *x)
{
	set_tunable(_metadata, x, "htmm_sampler", "abit");
	set_tunable(_metadata, x, "htmm_abit_interval_ms", "100");
	set_tunable(_metadata, x, "htmm_cooling_period", "2147483647");
	set_tunable(_metadata, x, "ksampled_soft_cpu_quota", "0");
}

/*
 * Wait up to 120 s for NR_PROBE pages @stride apart from @addr in @pid to
 * have @want samples each.  Return: the fewest any of them had.
 */
static unsigned int wait_probes(struct __test_metadata *_metadata, pid_t pid,
				unsigned long addr, unsigned long stride,
				unsigned int want)
{
	long long t0 = now_ms();
	unsigned int min_count;
	struct page_info pi;
	int i, err;

	do {
		min_count = UINT_MAX;
		for (i = 0; i < NR_PROBE && min_count >= want; i++) {
			err = page_info(pid, addr + i * stride, &pi);
			ASSERT_TRUE(!err || err == -ENODEV)
				TH_LOG("page_info: %s", strerror(-err));
			if (err || pi.count < min_count)
				min_count = err ? 0 : pi.count;
		}
		if (min_count >= want)
			break;
	} while (poll_again(t0 + 120 * 1000));
	TH_LOG("%d probed hot pages reached %u samples after %lld ms",
	       NR_PROBE, min_count, now_ms() - t0);
	return min_count;
}

/*
 * The Accessed-bit scanner tells a hot region from a cold one.  Each scan
 * walks the child's whole address space, so by the time the hot probes
 * have 3 samples (4 scans, the first of which only clears) every cold
 * page was tested at least twice since its bit was cleared, however
 * large the cold region: 32 MiB prove what 256 did, and the guest takes
 * about 0.1 s a MiB to touch them.
 */
TEST_F_TIMEOUT(htmm_sample, abit_hot_vs_cold, 300)
{
	const struct kid_spec spec = {
		.body = kid_hot_cold, .cpu = -1, .len = HVC_COLD_LEN,
		.hot_len = HOT_LEN,
	};
	struct sample_ctx *x = &self->x;
	unsigned int min_count, hot_max, cold_max;
	double hot_mean, cold_mean, counts;
	struct kid_reply r;
	struct stat_snap s;
	unsigned long hot;
	long long t0;
	pid_t pid;

	abit_classify_setup(_metadata, x);
	t0 = now_ms();
	kid_start(_metadata, x, 0, &spec, &r);
	TH_LOG("child touched %lu MiB cold + %lu MiB hot in %lld ms",
	       HVC_COLD_LEN / MiB, HOT_LEN / MiB, now_ms() - t0);
	pid = x->kids[0].pid;
	hot = r.addr[1];
	ASSERT_EQ(0, set_enabled(x, true));

	/* wait until NR_PROBE hot pages have at least 3 samples each */
	min_count = wait_probes(_metadata, pid, hot,
				HOT_LEN / PG / NR_PROBE * PG, 3);
	ASSERT_LE(3U, min_count) TH_LOG("hot pages not sampled within 120 s");

	hot_mean = mean_bin(_metadata, pid, hot, HOT_LEN, &hot_max, &counts);
	cold_mean = mean_bin(_metadata, pid, r.addr[0], HVC_COLD_LEN,
			     &cold_max, &counts);
	TH_LOG("mean bin: hot %.2f (max count %u), cold %.2f (max count %u)",
	       hot_mean, hot_max, cold_mean, cold_max);
	EXPECT_GT(hot_mean, cold_mean);
	/*
	 * The cold region was touched only before htmm was enabled: the
	 * first scan of the child only clears its Accessed bits, so its
	 * pages have no sample.
	 */
	EXPECT_EQ(0U, cold_max);

	ASSERT_EQ(0, snap_read(x, &s));
	TH_LOG("samples_abit %llu, samples_access %llu",
	       snap_u64(_metadata, &s, "samples_abit"),
	       snap_u64(_metadata, &s, "samples_access"));
	EXPECT_LT(0ULL, snap_u64(_metadata, &s, "samples_abit"));
	EXPECT_LT(0ULL, hist_total(_metadata, &s, "hist_"));
	EXPECT_EQ(0ULL, snap_u64(_metadata, &s, "samples_inject"));
}

#define HB_LEN		(8 * MiB)
#define HB_HPAGES	(HB_LEN / HPAGE_SZ)

/*
 * A huge page ranks with base pages used as often under the Accessed-bit
 * sampler.  A child writes every 4 KiB page of 8 MiB of base pages and of
 * 8 MiB of huge pages in turn, without a pause: every PTE and every huge
 * PMD is young at every scan.  A young PMD counts one sample on each page
 * of its huge page, so the huge pages' folio bins must be those of the
 * base pages, within the one bin that a scan half done can make.  With one
 * sample on the whole folio, they were nine bins (512 times) lower, and
 * kmigraterd demoted huge pages for any base page.
 */
TEST_F_TIMEOUT(htmm_sample, abit_huge_ranks_with_base, 300)
{
	const struct kid_spec spec = {
		.body = kid_huge_base, .cpu = -1, .len = HB_LEN,
		.hot_len = HB_LEN, .thp = true,
	};
	struct sample_ctx *x = &self->x;
	double base_mean, huge_mean = 0, counts;
	unsigned int min_count, base_max;
	unsigned long i, huge;
	struct kid_reply r;
	struct page_info pi;
	pid_t pid;

	abit_classify_setup(_metadata, x);
	kid_start(_metadata, x, 0, &spec, &r);
	pid = x->kids[0].pid;
	huge = r.addr[1];
	ASSERT_EQ(0, set_enabled(x, true));

	min_count = wait_probes(_metadata, pid, r.addr[0], HB_LEN / NR_PROBE, 3);
	ASSERT_LE(3U, min_count) TH_LOG("base pages not sampled within 120 s");
	base_mean = mean_bin(_metadata, pid, r.addr[0], HB_LEN, &base_max,
			     &counts);
	for (i = 0; i < HB_HPAGES; i++) {
		ASSERT_EQ(0, page_info(pid, huge + i * HPAGE_SZ, &pi))
			TH_LOG("huge page %lu has no sample", i);
		ASSERT_EQ(HPAGE_SZ / PG, pi.nr_pages)
			TH_LOG("huge page %lu is not one (no free 2 MiB block?)", i);
		TH_LOG("huge page %lu: folio count %u, folio bin %u", i,
		       pi.folio_count, pi.folio_bin);
		huge_mean += (double)pi.folio_bin / HB_HPAGES;
	}
	TH_LOG("mean bin: base pages %.2f (mean count %.2f, max %u), huge pages %.2f",
	       base_mean, counts, base_max, huge_mean);
	EXPECT_GE(1.0, huge_mean - base_mean);
	EXPECT_LE(-1.0, huge_mean - base_mean);
}

#define RATE_HOT_PAGES	64
#define RATE_WARM_LEN	(64 * MiB)

/*
 * With a test window, the Accessed-bit scanner ranks pages by how often
 * they are used even where every page is used between two of its visits.
 * A child writes 64 hot pages in turn without a pause, and after each
 * round one of 16384 warm pages: a warm page is used 16384 rounds apart,
 * tens of ms or more in this guest, and a pass over the child takes
 * longer than that.  Without a window every page is young at every visit,
 * and hot and warm pages get a sample a pass alike; with a 1 ms window a
 * warm page is young at a few per cent of its tests, a hot one at all.
 */
TEST_F_TIMEOUT(htmm_sample, abit_window_ranks_by_rate, 300)
{
	const struct kid_spec spec = {
		.body = kid_rates, .cpu = -1, .len = RATE_WARM_LEN,
		.hot_len = RATE_HOT_PAGES * PG,
	};
	struct sample_ctx *x = &self->x;
	unsigned int min_count, hot_max, warm_max;
	double hot_count, warm_count;
	struct kid_reply r;
	pid_t pid;

	abit_classify_setup(_metadata, x);
	set_tunable(_metadata, x, "htmm_abit_window_us", "1000");
	kid_start(_metadata, x, 0, &spec, &r);
	pid = x->kids[0].pid;
	ASSERT_EQ(0, set_enabled(x, true));

	/* Until every eighth hot page has 5 samples. */
	min_count = wait_probes(_metadata, pid, r.addr[1],
				RATE_HOT_PAGES / NR_PROBE * PG, 5);
	ASSERT_LE(5U, min_count);
	mean_bin(_metadata, pid, r.addr[1], r.len[1], &hot_max, &hot_count);
	mean_bin(_metadata, pid, r.addr[0], r.len[0], &warm_max, &warm_count);
	TH_LOG("mean samples: hot %.2f (max %u), warm %.2f (max %u)",
	       hot_count, hot_max, warm_count, warm_max);
	EXPECT_LE(warm_count * 4, hot_count);
}

#define QUOTA_SECONDS	20

/*
 * The Accessed-bit scan holds ksamplingd to ksampled_soft_cpu_quota
 * second by second.  288 MiB of one child's page tables take this guest
 * tens of seconds to scan at the default 3% of a CPU, so every second
 * below is in the middle of a scan.  A scan once ran chunks of 64 MiB of
 * address space between two checks of its pace (tens of ms of CPU each
 * here), ksamplingd_cpu_permille stood still while a scan lasted, and the
 * quota control stepped the scan's level up on top of the pace that held
 * the quota already.  From the 5th second on, the mean must be within 10%
 * of the quota and every second within 50%: under TCG the guest clock runs
 * on while the host has a vCPU off its CPU, so single seconds measured 23
 * and 35 in a run whose mean was 30 (1 run in 4 had a second beyond 20%),
 * while a scan that stalls the pace shows 0 or twice the quota.
 * The first pass over an address space only clears its Accessed bits, so
 * the samples come from the second pass on, which begins with the hot
 * pages (mapped last, so lowest).  Two passes ended 52 and 64 s after the
 * start here, and once the second had not begun by the 25th second (0
 * samples then); with the workloads guest beside this one on the host at
 * nice 19, none had come 90 s after the start (clean run of 2ac6391).
 * So, once the quota's seconds are measured, the quota goes (0, no
 * control: how fast passes go at the quota is the benchmark's figure),
 * and the test waits for the first sample, with a deadline of 90 s from
 * the start, and fails if two passes ended without one (abit_scans).
 * Once (clean run of b50f840, on a slower host) seconds 23 to 25 read 40,
 * 55 and 46 while the mean held (32.1).  The pace pays back any excess
 * within about 33 times its length, so three such seconds in a row mean
 * CPU time the pace did not see; four runs of 45 s, alone and beside two
 * busy nice 19 processes on the host, stayed within 21 to 37, with the
 * second pass's samples flowing from the 10th to the 15th second.  Not
 * explained yet: the samples taken by each second are logged, to tell
 * whether the second pass had begun.
 */
TEST_F_TIMEOUT(htmm_sample, abit_holds_cpu_quota, 180)
{
	const struct kid_spec spec = {
		.body = kid_hot_cold, .cpu = -1, .len = COLD_LEN,
		.hot_len = HOT_LEN,
	};
	const unsigned long long quota = 30;
	unsigned long long v[QUOTA_SECONDS], scans, scans0, sum = 0, smp;
	struct sample_ctx *x = &self->x;
	long long t0, deadline;
	char line[QUOTA_SECONDS * 6] = "", sline[QUOTA_SECONDS * 12] = "";
	struct kid_reply r;
	struct stat_snap s;
	int i, out = 0;

	set_tunable(_metadata, x, "htmm_sampler", "abit");
	set_tunable(_metadata, x, "ksampled_soft_cpu_quota", "30");
	set_tunable(_metadata, x, "htmm_abit_interval_ms", "1000");
	kid_start(_metadata, x, 0, &spec, &r);
	ASSERT_EQ(0, snap_read(x, &s));
	scans0 = snap_u64(_metadata, &s, "abit_scans");
	ASSERT_EQ(0, set_enabled(x, true));
	t0 = now_ms();
	sleep(5);
	for (i = 0; i < QUOTA_SECONDS; i++) {
		sleep(1);
		ASSERT_EQ(0, snap_read(x, &s));
		v[i] = snap_u64(_metadata, &s, "ksamplingd_cpu_permille");
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 " %llu", v[i]);
		smp = snap_u64(_metadata, &s, "samples_abit");
		snprintf(sline + strlen(sline), sizeof(sline) - strlen(sline),
			 " %llu", smp);
		sum += v[i];
		if (v[i] * 2 < quota || v[i] * 2 > quota * 3)
			out++;
	}
	scans = snap_u64(_metadata, &s, "abit_scans");
	TH_LOG("ksamplingd per mille, seconds 6 to %d (quota %llu):%s",
	       5 + QUOTA_SECONDS, quota, line);
	TH_LOG("samples_abit by then:%s", sline);
	TH_LOG("%llu scans, %llu entries, level %llu", scans,
	       snap_u64(_metadata, &s, "abit_scanned_entries"),
	       snap_u64(_metadata, &s, "sampler_level"));
	TH_LOG("mean %llu.%llu per mille", sum / QUOTA_SECONDS,
	       sum * 10 / QUOTA_SECONDS % 10);
	EXPECT_EQ(0, out) TH_LOG("%d seconds off the quota by over 50%%", out);
	EXPECT_LE(sum * 10, quota * QUOTA_SECONDS * 11);
	EXPECT_GE(sum * 10, quota * QUOTA_SECONDS * 9);
	EXPECT_EQ(0ULL, snap_u64(_metadata, &s, "sampler_level"));
	/* The first sample, from the second pass over the child. */
	set_tunable(_metadata, x, "ksampled_soft_cpu_quota", "0");
	deadline = t0 + 90000;
	while (!snap_u64(_metadata, &s, "samples_abit") &&
	       snap_u64(_metadata, &s, "abit_scans") < scans0 + 2 &&
	       poll_again(deadline))
		ASSERT_EQ(0, snap_read(x, &s));
	TH_LOG("%llu samples %lld ms after the start, %llu scans ended",
	       snap_u64(_metadata, &s, "samples_abit"), now_ms() - t0,
	       snap_u64(_metadata, &s, "abit_scans") - scans0);
	EXPECT_LT(0ULL, snap_u64(_metadata, &s, "samples_abit"));
}

/*
 * Free memory of node @nid in KiB, or -1: the free pages of its zones and
 * those in their per-CPU lists (/proc/zoneinfo), which MemFree leaves out
 * until they are drained back, a second or more after a process exited.
 */
static long long node_free_kb(int nid)
{
	long long pages = 0, v;
	char line[256];
	int node = -1;
	FILE *f;

	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d,", &node) == 1)
			continue;
		if (node != nid)
			continue;
		if (sscanf(line, " pages free %lld", &v) == 1 ||
		    sscanf(line, " count: %lld", &v) == 1)
			pages += v;
	}
	fclose(f);
	return node == -1 ? -1 : pages * (getpagesize() >> 10);
}

#define EXIT_PAGES	((64UL << 20) / PG)
#define EXIT_SLACK_KB	(4LL << 10)

/*
 * Node @nid's free memory once it has stopped growing: no more than
 * EXIT_SLACK_KB in 500 ms, for at most 60 s.  The previous test's
 * children may still be giving theirs back: an exited process whose
 * address space a scan held is torn down by mmput_async(), and 288 MiB
 * of base pages took the debug guest seconds, during which this test
 * once saw node 0 gain 168 MiB while its own child took 64 MiB.
 */
static long long settled_free_kb(struct __test_metadata *_metadata, int nid)
{
	long long t0 = now_ms(), prev = node_free_kb(nid), cur;

	for (;;) {
		usleep(500 * 1000);
		cur = node_free_kb(nid);
		if (cur - prev <= EXIT_SLACK_KB || !poll_again(t0 + 60 * 1000))
			break;
		prev = cur;
	}
	TH_LOG("node %d: %lld KiB free, settled after %lld ms", nid, cur,
	       now_ms() - t0);
	return cur;
}

/*
 * An Accessed-bit scan is paced over seconds.  A process that exits in
 * the middle of one must free its memory at once, as it does without
 * htmm, and not when the scan ends: until then its pages stayed charged
 * to the cgroup's node budgets, and the cgroup's next process found the
 * fast node full.  At 1 MiB of entries a second the child's 64 MiB take
 * 64 s to scan; its memory must be back on node 0 within 5 s of its exit.
 */
TEST_F_TIMEOUT(htmm_sample, abit_exit_frees_at_once, 120)
{
	const struct kid_spec spec = {
		.body = kid_hold, .cpu = -1, .pages = EXIT_PAGES,
	};
	struct sample_ctx *x = &self->x;
	long long before, held, now = -1, t0, deadline;
	unsigned long long scans0;
	struct kid_reply r;
	struct stat_snap s;

	set_tunable(_metadata, x, "htmm_sampler", "abit");
	set_tunable(_metadata, x, "htmm_abit_interval_ms", "100");
	set_tunable(_metadata, x, "htmm_abit_rate_mb", "1");
	/* htmm's own memory (rings, threads) is allocated by now. */
	ASSERT_EQ(0, set_enabled(x, true));
	before = settled_free_kb(_metadata, 0);
	ASSERT_LT(0, before);
	kid_start(_metadata, x, 0, &spec, &r);
	held = node_free_kb(0);
	ASSERT_GE(before - held, (long long)(EXIT_PAGES * PG >> 10) - EXIT_SLACK_KB)
		TH_LOG("the child's memory is not on node 0: %lld KiB taken",
		       before - held);
	sleep(1);
	ASSERT_EQ(0, snap_read(x, &s));
	scans0 = snap_u64(_metadata, &s, "abit_scans");
	sleep(1);
	/*
	 * Scans start 100 ms apart: if none ended in this second, the one
	 * under way started before it and is in the child.
	 */
	ASSERT_EQ(0, snap_read(x, &s));
	ASSERT_EQ(scans0, snap_u64(_metadata, &s, "abit_scans"))
		TH_LOG("a scan ended within 1 s: the pace does not hold it");
	kid_stop(&x->kids[0], true, NULL);
	t0 = now_ms();
	deadline = t0 + 5000;
	do {
		now = node_free_kb(0);
	} while (now < before - EXIT_SLACK_KB && poll_again(deadline));
	TH_LOG("node 0 free: %lld KiB before, %lld with the child, %lld %lld ms after its exit",
	       before, held, now, now_ms() - t0);
	EXPECT_GE(now, before - EXIT_SLACK_KB)
		TH_LOG("the exited child's memory is still held");
}

/* Ring counters grew on both CPUs? */
static bool rings_grew(const struct rings *a, const struct rings *b,
		       int cpu0, int cpu1)
{
	return b->pushed[cpu0] > a->pushed[cpu0] &&
	       b->pushed[cpu1] > a->pushed[cpu1];
}

static unsigned long long rings_sum(const struct rings *r, bool dropped)
{
	unsigned long long sum = 0;
	int i;

	for (i = 0; i < MAX_CPUS; i++)
		sum += dropped ? r->dropped[i] : r->pushed[i];
	return sum;
}

/*
 * Disable htmm (the last enabled cgroup): the write returns within 1 s,
 * the perf counters are gone and ksamplingd with them.
 */
static void disable_and_check_stopped(struct __test_metadata *_metadata,
				      const struct sample_ctx *x)
{
	long long t0, dt, deadline;
	long long nr_perf;
	int err, nr;

	t0 = now_ms();
	err = set_enabled(x, false);
	dt = now_ms() - t0;
	ASSERT_EQ(0, err) TH_LOG("disable: %s", strerror(-err));
	TH_LOG("disabling htmm took %lld ms", dt);
	EXPECT_GT(1000, dt);

	deadline = now_ms() + 2000;
	do {
		nr_perf = perf_counters();
		nr = count_comm("ksamplingd");
		if (!nr_perf && !nr)
			break;
	} while (poll_again(deadline));
	EXPECT_EQ(0, nr_perf) TH_LOG("perf counters left after disabling");
	EXPECT_EQ(0, nr) TH_LOG("ksamplingd still there after disabling");
}

/* The software page-fault events feed the sampler on every CPU. */
TEST_F_TIMEOUT(htmm_sample, perf_sw_events, 240)
{
	struct kid_spec spec = { .body = kid_hold, .cpu = -1, .pages = 1 };
	struct sample_ctx *x = &self->x;
	unsigned long long base, grown = 0, after, period = 0, inst = 0;
	struct rings r0, r1;
	struct kid_reply rep;
	long long deadline, t0, nr_perf = 0;
	int cpu0, cpu1, k;

	if (x->nr_cpus < 2)
		SKIP(return, "needs two online CPUs");
	cpu0 = x->cpus[0];
	cpu1 = x->cpus[1];
	ASSERT_GT(MAX_CPUS, cpu1);
	ASSERT_EQ(0, wait_no_ksamplingd(2000))
		TH_LOG("ksamplingd is running: another cgroup has htmm enabled");

	/* the event first: pebs with the PEBS events fails without a PMU */
	set_tunable(_metadata, x, "htmm_perf_event", "sw-page-faults");
	set_tunable(_metadata, x, "htmm_sampler", "pebs");
	set_tunable(_metadata, x, "htmm_sample_period", "1");
	set_tunable(_metadata, x, "htmm_inst_sample_period", "1");
	set_tunable(_metadata, x, "ksampled_soft_cpu_quota", "0");

	/* two children in the cgroup, one on each of two CPUs */
	spec.cpu = cpu0;
	kid_start(_metadata, x, 0, &spec, &rep);
	spec.cpu = cpu1;
	kid_start(_metadata, x, 1, &spec, &rep);
	ASSERT_EQ(0, set_enabled(x, true));

	t0 = now_ms();
	deadline = t0 + 10 * 1000;
	do {
		nr_perf = perf_counters();
		if (nr_perf == 2 * x->nr_cpus)
			break;
	} while (poll_again(deadline));
	TH_LOG("perf_counters %lld after %lld ms (%d online CPUs)", nr_perf,
	       now_ms() - t0, x->nr_cpus);
	ASSERT_EQ(2 * x->nr_cpus, nr_perf);

	/* period 1: every fault of the children is sampled */
	ASSERT_EQ(0, read_rings(&r0));
	base = stat_now(_metadata, x, "samples_pebs");
	for (k = 0; k < 2; k++)
		kid_touch(_metadata, x, k, 2000, &rep);
	t0 = now_ms();
	deadline = t0 + 20 * 1000;
	do {
		ASSERT_EQ(0, read_rings(&r1));
		grown = stat_now(_metadata, x, "samples_pebs") - base;
		if (grown >= 1000 && rings_grew(&r0, &r1, cpu0, cpu1))
			break;
	} while (poll_again(deadline));
	TH_LOG("period 1: samples_pebs +%llu after %lld ms", grown,
	       now_ms() - t0);
	TH_LOG("ring pushes cpu%d +%llu, cpu%d +%llu; drops +%llu", cpu0,
	       r1.pushed[cpu0] - r0.pushed[cpu0], cpu1,
	       r1.pushed[cpu1] - r0.pushed[cpu1],
	       rings_sum(&r1, true) - rings_sum(&r0, true));
	EXPECT_LE(1000ULL, grown);
	EXPECT_TRUE(rings_grew(&r0, &r1, cpu0, cpu1));

	/* period 1000: the same work gives few samples */
	set_tunable(_metadata, x, "htmm_sample_period", "1000");
	set_tunable(_metadata, x, "htmm_inst_sample_period", "1000");
	t0 = now_ms();
	deadline = t0 + 5 * 1000;
	do {
		period = stat_now(_metadata, x, "sample_period");
		inst = stat_now(_metadata, x, "inst_sample_period");
		if (period == 1000 && inst == 1000)
			break;
	} while (poll_again(deadline));
	TH_LOG("sample_period %llu, inst_sample_period %llu after %lld ms",
	       period, inst, now_ms() - t0);
	ASSERT_EQ(1000ULL, period);
	ASSERT_EQ(1000ULL, inst);

	/* the rings may still hold samples taken at period 1 */
	ASSERT_TRUE(wait_stat_stable(_metadata, x, "samples_pebs", 500,
				     10 * 1000, &base))
		TH_LOG("samples_pebs does not settle");
	ASSERT_EQ(0, read_rings(&r0));
	kid_touch(_metadata, x, 0, 4000, &rep);
	ASSERT_TRUE(wait_stat_stable(_metadata, x, "samples_pebs", 500,
				     10 * 1000, &after))
		TH_LOG("samples_pebs does not settle");
	ASSERT_EQ(0, read_rings(&r1));
	TH_LOG("period 1000: 4000 faults gave samples_pebs +%llu, ring pushes +%llu (all tasks)",
	       after - base, rings_sum(&r1, false) - rings_sum(&r0, false));
	EXPECT_GT(100ULL, after - base);
	EXPECT_LE(1ULL, after - base) TH_LOG("no sample at all at period 1000");

	disable_and_check_stopped(_metadata, x);
}

/* 100 enable/disable cycles while a child faults at full rate. */
TEST_F_TIMEOUT(htmm_sample, enable_disable_under_load, 300)
{
	const struct kid_spec churn = {
		.body = kid_churn, .cpu = -1, .len = 4 * MiB,
	};
	const struct kid_spec hold = { .body = kid_hold, .cpu = -1, .pages = 1 };
	long long t0, dt, max_dt = 0, deadline, total;
	unsigned long long abit0, abit1 = 0;
	int i, err, misses = 0, slow = 0;
	struct sample_ctx *x = &self->x;
	struct kid_reply r;
	struct page_info pi;
	char buf[128];
	long long nr_perf = 0;
	size_t len;
	bool pebs = true;

	ASSERT_EQ(0, wait_no_ksamplingd(2000))
		TH_LOG("ksamplingd is running: another cgroup has htmm enabled");
	set_tunable(_metadata, x, "htmm_perf_event", "sw-page-faults");
	set_tunable(_metadata, x, "htmm_sample_period", "1");
	set_tunable(_metadata, x, "ksampled_soft_cpu_quota", "0");
	kid_start(_metadata, x, 0, &churn, &r);

	total = now_ms();
	for (i = 0; i < 100; i++) {
		if (i % 10 == 0) {
			pebs = !(i / 10 % 2);
			set_tunable(_metadata, x, "htmm_sampler",
				    pebs ? "pebs" : "abit");
		}
		/*
		 * A scan round counts even when it finds no young page (the
		 * churning child may have just unmapped its region).
		 */
		abit0 = stat_now(_metadata, x, "abit_scans");
		err = set_enabled(x, true);
		ASSERT_EQ(0, err) TH_LOG("cycle %d: enable: %s", i,
					 strerror(-err));
		/* let the source get going before pulling it down */
		deadline = now_ms() + 5000;
		do {
			if (pebs) {
				nr_perf = perf_counters();
				if (nr_perf == 2 * x->nr_cpus)
					break;
			} else {
				abit1 = stat_now(_metadata, x, "abit_scans");
				if (abit1 > abit0)
					break;
			}
		} while (poll_again(deadline));
		if (pebs ? nr_perf != 2 * x->nr_cpus : abit1 <= abit0) {
			misses++;
			TH_LOG("cycle %d: %s source not running after 5 s", i,
			       pebs ? "pebs" : "abit");
		}

		t0 = now_ms();
		err = set_enabled(x, false);
		dt = now_ms() - t0;
		ASSERT_EQ(0, err) TH_LOG("cycle %d: disable: %s", i,
					 strerror(-err));
		if (dt > max_dt)
			max_dt = dt;
		if (dt >= 1000) {
			slow++;
			TH_LOG("cycle %d (%s): disable took %lld ms", i,
			       pebs ? "pebs" : "abit", dt);
		}
	}
	TH_LOG("100 cycles in %lld ms; slowest disable %lld ms; %d source misses",
	       now_ms() - total, max_dt, misses);
	EXPECT_EQ(0, slow);
	EXPECT_EQ(0, misses);

	deadline = now_ms() + 2000;
	do {
		nr_perf = perf_counters();
		if (!nr_perf && !count_comm("ksamplingd"))
			break;
	} while (poll_again(deadline));
	EXPECT_EQ(0, nr_perf);
	EXPECT_EQ(0, count_comm("ksamplingd"));

	/* htmm still works: a final enable and injection */
	set_tunable(_metadata, x, "htmm_sampler", "inject");
	kid_start(_metadata, x, 1, &hold, &r);
	ASSERT_EQ(0, set_enabled(x, true));
	len = snprintf(buf, sizeof(buf), "%d 0x%lx load-fast\n",
		       x->kids[1].pid, r.addr[0]);
	ASSERT_EQ((ssize_t)len, inject(buf, len));
	err = page_info(x->kids[1].pid, r.addr[0], &pi);
	ASSERT_EQ(0, err) TH_LOG("page_info: %s", strerror(-err));
	EXPECT_EQ(1U, pi.count);
}

/* ------------------------------------------------------------------ */
/* Where perf samples land: a physical address, or the sampled mm      */
/* ------------------------------------------------------------------ */

/* Records ksamplingd took off a CPU's ring so far. */
static unsigned long long rings_taken(const struct rings *r, int cpu)
{
	return r->paddr[cpu] + r->mm[cpu] + r->exited[cpu];
}

static unsigned long long rings_delta(const unsigned long long *a,
				      const unsigned long long *b)
{
	unsigned long long sum = 0;
	int i;

	for (i = 0; i < MAX_CPUS; i++)
		sum += b[i] - a[i];
	return sum;
}

/*
 * Wait until ksamplingd took off every record that was on a ring when @at
 * was read. Returns the milliseconds it took, or -1 at the deadline.
 */
static long long wait_rings_taken(const struct rings *at, int timeout_ms)
{
	long long t0 = now_ms(), deadline = t0 + timeout_ms;
	struct rings now;
	int cpu;

	do {
		if (read_rings(&now))
			return -1;
		for (cpu = 0; cpu < MAX_CPUS; cpu++)
			if (rings_taken(&now, cpu) <
			    rings_taken(at, cpu) + at->queued[cpu])
				break;
		if (cpu == MAX_CPUS)
			return now_ms() - t0;
	} while (poll_again(deadline));
	return -1;
}

/*
 * The perf source on the software page-fault events: PAGE_FAULTS (counted
 * before the fault is handled; load-fast samples) every @load faults and
 * PAGE_FAULTS_MIN (counted after; store samples) every @store faults,
 * without cooling. A child must already be in the cgroup.
 */
static void sw_sampling_on(struct __test_metadata *_metadata,
			   struct sample_ctx *x, const char *load,
			   const char *store)
{
	long long deadline, nr_perf = 0;

	set_tunable(_metadata, x, "htmm_perf_event", "sw-page-faults");
	set_tunable(_metadata, x, "htmm_sampler", "pebs");
	set_tunable(_metadata, x, "htmm_sample_period", load);
	set_tunable(_metadata, x, "htmm_inst_sample_period", store);
	set_tunable(_metadata, x, "ksampled_soft_cpu_quota", "0");
	set_tunable(_metadata, x, "htmm_cooling_period", "2147483647");
	ASSERT_EQ(0, set_enabled(x, true));
	deadline = now_ms() + 10 * 1000;
	do {
		nr_perf = perf_counters();
		if (nr_perf == 2 * x->nr_cpus)
			break;
	} while (poll_again(deadline));
	ASSERT_EQ(2 * x->nr_cpus, nr_perf) TH_LOG("perf counters not set up");
}

#define FAULT_PAGES	64

/*
 * A kid_file child (slot 0) maps and writes FAULT_PAGES page cache pages
 * with the sampler on one of the two page-fault events only; returns how
 * many of the pages have a sample, the rings before the touches and after
 * ksamplingd took their records off. No page may have more than @max.
 */
static int touch_and_count(struct __test_metadata *_metadata,
			   struct sample_ctx *x, unsigned int max,
			   struct rings *r0, struct rings *r1)
{
	struct kid_reply r;
	struct page_info pi;
	struct rings at;
	long long dt;
	int i, err, one = 0;

	if (read_rings(r0))
		return -1;
	kid_touch(_metadata, x, 0, FAULT_PAGES, &r);
	if (read_rings(&at))
		return -1;
	dt = wait_rings_taken(&at, 10 * 1000);
	EXPECT_LE(0, dt) TH_LOG("the rings were not drained within 10 s");
	if (read_rings(r1))
		return -1;
	for (i = 0; i < FAULT_PAGES; i++) {
		err = page_info(x->kids[0].pid, r.addr[0] + i * PG, &pi);
		if (!err && pi.count >= 1)
			one++;
		if (err != -ENODEV)
			EXPECT_TRUE(!err && pi.count <= max)
				TH_LOG("page %d: %s, count %u", i,
				       err ? strerror(-err) : "ok", pi.count);
	}
	TH_LOG("%d of %d touched pages have a sample (at most %u); rings drained in %lld ms",
	       one, FAULT_PAGES, max, dt);
	return one;
}

/*
 * PAGE_FAULTS_MIN only: the sample is taken once the fault has mapped the
 * page, so the overflow handler resolves its physical address. Each of
 * the pages the child touched must get exactly the one sample of its
 * fault: the physical address is that of the page the child touched (a
 * wrong one would credit another page, or none). No load-fast sample.
 */
TEST_F_TIMEOUT(htmm_sample, perf_paddr_matches_page, 120)
{
	struct kid_spec spec = { .body = kid_file };
	unsigned long long store0, store1, load0, load1;
	struct sample_ctx *x = &self->x;
	struct rings r0, r1;
	struct kid_reply r;
	int one;

	spec.cpu = x->cpus[0];
	kid_start(_metadata, x, 0, &spec, &r);
	sw_sampling_on(_metadata, x, "2147483647", "1");
	store0 = stat_now(_metadata, x, "samples_store");
	load0 = stat_now(_metadata, x, "samples_load_fast");
	one = touch_and_count(_metadata, x, 1, &r0, &r1);
	store1 = stat_now(_metadata, x, "samples_store");
	load1 = stat_now(_metadata, x, "samples_load_fast");
	TH_LOG("samples_store +%llu, samples_load_fast +%llu",
	       store1 - store0, load1 - load0);
	TH_LOG("ring records resolved by physical address +%llu, by mm +%llu",
	       rings_delta(r0.paddr, r1.paddr), rings_delta(r0.mm, r1.mm));
	EXPECT_LE(FAULT_PAGES - FAULT_PAGES / 16, one);
	EXPECT_LE((unsigned long long)FAULT_PAGES, store1 - store0);
	EXPECT_EQ(0ULL, load1 - load0);
	EXPECT_LE((unsigned long long)FAULT_PAGES,
		  rings_delta(r0.paddr, r1.paddr));
}

/*
 * PAGE_FAULTS only: the sample is taken before the fault is handled, the
 * page is not there yet, and the record carries the sampled mm instead.
 * ksamplingd finds the page in that mm once the fault has mapped it: a
 * record it comes to while the address maps no page yet waits for its
 * fault (200 ms at most), so all pages but those of a fault that outlasts
 * the wait, 1/16 at most, must have their sample. PAGE_FAULTS counts every
 * fault exception, and the first write to a new mapping may take two, so
 * a page may have two samples, never more.
 */
TEST_F_TIMEOUT(htmm_sample, perf_mm_resolves_fault, 120)
{
	struct kid_spec spec = { .body = kid_file };
	unsigned long long load0, load1;
	struct sample_ctx *x = &self->x;
	struct rings r0, r1;
	struct kid_reply r;
	int one;

	spec.cpu = x->cpus[0];
	kid_start(_metadata, x, 0, &spec, &r);
	sw_sampling_on(_metadata, x, "1", "2147483647");
	load0 = stat_now(_metadata, x, "samples_load_fast");
	one = touch_and_count(_metadata, x, 2, &r0, &r1);
	load1 = stat_now(_metadata, x, "samples_load_fast");
	TH_LOG("samples_load_fast +%llu; ring records by mm +%llu, by physical address +%llu",
	       load1 - load0, rings_delta(r0.mm, r1.mm),
	       rings_delta(r0.paddr, r1.paddr));
	TH_LOG("%llu records waited for their fault",
	       rings_delta(r0.waited, r1.waited));
	EXPECT_LE(FAULT_PAGES - FAULT_PAGES / 16, one);
	EXPECT_LE((unsigned long long)FAULT_PAGES, rings_delta(r0.mm, r1.mm));
}

#define COW_PAGES	64

/*
 * PAGE_FAULTS only, on copy-on-write faults. The event fires before the
 * fault is handled, when the page mapped at the address is still the
 * original the process shares, not the copy it goes on to use; the
 * original may be freed by the other sharer and reused by anyone before
 * ksamplingd runs. So the record must carry no physical address, and
 * ksamplingd credits the copy it finds in the mm afterwards. A child
 * writes COW_PAGES pages it shares with a forked sharer: its copies must
 * have the samples, the sharer's originals not. A record ksamplingd comes
 * to while its fault is still being handled finds the original mapped
 * read-only and not exclusive, and waits for the fault, 200 ms at most.
 * Before it did, a page went the wrong way whenever ksamplingd woke during
 * its fault, and once in CI more than the 1/4 this test then allowed. Now
 * only a fault that outlasts the wait may, so 1/16 is allowed.
 */
TEST_F_TIMEOUT(htmm_sample, perf_cow_fault_credits_copy, 120)
{
	struct kid_spec spec = { .body = kid_cow, .pages = COW_PAGES };
	struct sample_ctx *x = &self->x;
	int i, copy = 0, orig = 0;
	struct rings r0, at, r1;
	struct page_info pi;
	struct kid_reply r;
	unsigned long addr;
	long long dt;

	spec.cpu = x->cpus[0];
	kid_start(_metadata, x, 0, &spec, &r);
	ASSERT_LT(0, r.pid);
	sw_sampling_on(_metadata, x, "1", "2147483647");
	ASSERT_EQ(0, read_rings(&r0));
	kid_touch(_metadata, x, 0, 0, &r);
	ASSERT_EQ(0, read_rings(&at));
	dt = wait_rings_taken(&at, 10 * 1000);
	ASSERT_LE(0, dt) TH_LOG("the rings were not drained within 10 s");
	ASSERT_EQ(0, read_rings(&r1));
	for (i = 0; i < COW_PAGES; i++) {
		addr = r.addr[0] + i * PG;
		if (!page_info(x->kids[0].pid, addr, &pi) && pi.count)
			copy++;
		if (!page_info(r.pid, addr, &pi) && pi.count)
			orig++;
	}
	TH_LOG("%d of %d copies and %d originals have a sample",
	       copy, COW_PAGES, orig);
	TH_LOG("ring records by mm +%llu (%llu waited for their fault), by physical address +%llu",
	       rings_delta(r0.mm, r1.mm), rings_delta(r0.waited, r1.waited),
	       rings_delta(r0.paddr, r1.paddr));
	EXPECT_LE(COW_PAGES - COW_PAGES / 16, copy);
	EXPECT_GE(COW_PAGES / 16, orig);
}

#define EXIT_ROUNDS	6
#define EXIT_ADDR	0x600000000000UL	/* the same in both processes */

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP	0x200000000ULL
#endif
#ifndef __NR_clone3
#define __NR_clone3		435
#endif

/* The layout of struct clone_args up to @cgroup (CLONE_ARGS_SIZE_VER2). */
struct clone3_args {
	__u64 flags, pidfd, child_tid, parent_tid, exit_signal;
	__u64 stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

static void segv_return(int sig)
{
	(void)sig;	/* back to the faulting load, which faults again */
}

/*
 * Map a PROT_NONE page at EXIT_ADDR and load from it until killed: every
 * fault is a PAGE_FAULTS sample of this mm, with no page to find.
 */
static void faulter(int res_fd)
{
	struct sigaction sa = { .sa_handler = segv_return };
	char err = 0, *p;

	p = mmap((void *)EXIT_ADDR, PG, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)EXIT_ADDR || sigaction(SIGSEGV, &sa, NULL) ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL))
		err = 1;
	if (write(res_fd, &err, 1) != 1 || err)
		_exit(1);
	for (;;) {
		err = *p;
		asm volatile("" : : "r" (err) : "memory");
	}
}

/*
 * The process that gets the pid of the faulter: EXIT_ADDR mapped and
 * populated without a fault (MAP_POPULATE: no sample), in the cgroup.
 * FILE_SPARE more pages push the first one out of the LRU add batch, so
 * that a sample of it would be accounted.
 */
static void successor(int res_fd, int cmd_fd)
{
	char err = 0;
	void *p;

	p = mmap((void *)EXIT_ADDR, (1 + FILE_SPARE) * PG,
		 PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE |
		 MAP_POPULATE, -1, 0);
	if (p != (void *)EXIT_ADDR || prctl(PR_SET_PDEATHSIG, SIGKILL))
		err = 1;
	if (write(res_fd, &err, 1) != 1 || err)
		_exit(1);
	while (read(cmd_fd, &err, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* Fork the faulter; returns its pid once it faults, or -1. */
static pid_t start_faulter(void)
{
	int fds[2];
	char err = 1;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		close(fds[0]);
		faulter(fds[1]);
	}
	close(fds[1]);
	if (pid > 0 && (read(fds[0], &err, 1) != 1 || err)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

/*
 * clone3() a successor with pid @pid into the cgroup @cg_fd; returns its
 * pid once it has mapped EXIT_ADDR, or -errno. *cmd gets the pipe that
 * tells it to exit (by closing it).
 */
static pid_t start_successor(pid_t pid, int cg_fd, int *cmd)
{
	struct clone3_args args;
	int res[2], cfd[2];
	__u64 tid = pid;
	char err = 1;
	long ret;

	if (pipe2(res, O_CLOEXEC))
		return -errno;
	if (pipe2(cfd, O_CLOEXEC)) {
		close(res[0]);
		close(res[1]);
		return -errno;
	}
	memset(&args, 0, sizeof(args));
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.set_tid = (__u64)(unsigned long)&tid;
	args.set_tid_size = 1;
	args.cgroup = cg_fd;
	fflush(stdout);
	ret = syscall(__NR_clone3, &args, sizeof(args));
	if (!ret) {
		close(res[0]);
		close(cfd[1]);
		successor(res[1], cfd[0]);
	}
	ret = ret < 0 ? -errno : ret;
	close(res[1]);
	close(cfd[0]);
	if (ret > 0 && (read(res[0], &err, 1) != 1 || err)) {
		kill(ret, SIGKILL);
		waitpid(ret, NULL, 0);
		ret = -EPROTO;
	}
	close(res[0]);
	if (ret > 0)
		*cmd = cfd[1];
	else
		close(cfd[1]);
	return ret;
}

/*
 * Samples of a process that exited are dropped, not credited to the next
 * process with its pid. The faulter loads from a PROT_NONE page at
 * EXIT_ADDR until it is killed, so samples of it are on the rings when it
 * dies; the successor gets its pid (clone3() set_tid) and a populated page
 * at EXIT_ADDR, with no fault of its own. Once ksamplingd has taken off
 * what was on the rings, the successor's page must have no sample. A
 * lookup by pid would credit it the faulter's samples.
 */
TEST_F_TIMEOUT(htmm_sample, perf_exited_sample_dropped, 180)
{
	const struct kid_spec hold = { .body = kid_hold, .cpu = -1, .pages = 1 };
	unsigned long long exited = 0, mm_live = 0, ex, live;
	struct sample_ctx *x = &self->x;
	struct rings r0, r1, r2;
	struct page_info pi;
	struct kid_reply r;
	int round, cg_fd, cmd = -1, credited = 0, err;
	long long deadline, dt;
	pid_t a, b;

	/* keeps the cgroup populated, so the source runs throughout */
	kid_start(_metadata, x, 0, &hold, &r);
	sw_sampling_on(_metadata, x, "1", "1");
	cg_fd = open(x->cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, cg_fd) TH_LOG("open %s: %s", x->cg, strerror(errno));

	for (round = 0; round < EXIT_ROUNDS; round++) {
		ASSERT_EQ(0, read_rings(&r0));
		a = start_faulter();
		ASSERT_LT(0, a) TH_LOG("round %d: faulter did not start", round);
		/* it faults, and ksamplingd resolves its samples by mm */
		deadline = now_ms() + 10 * 1000;
		do {
			ASSERT_EQ(0, read_rings(&r1));
			if (rings_delta(r0.mm, r1.mm) >= 100)
				break;
		} while (poll_again(deadline));
		live = rings_delta(r0.mm, r1.mm);
		ASSERT_EQ(0, kill(a, SIGKILL));
		ASSERT_EQ(a, waitpid(a, NULL, 0));
		b = start_successor(a, cg_fd, &cmd);
		ASSERT_EQ(a, b) TH_LOG("round %d: clone3 with pid %d: %s",
				       round, a, b < 0 ? strerror(-b) : "other pid");
		ASSERT_EQ(0, read_rings(&r2));
		dt = wait_rings_taken(&r2, 10 * 1000);
		ASSERT_LE(0, dt) TH_LOG("the rings were not drained within 10 s");
		ASSERT_EQ(0, read_rings(&r2));
		ex = rings_delta(r1.exited, r2.exited);
		err = page_info(b, EXIT_ADDR, &pi);
		TH_LOG("round %d: pid %d: %llu samples resolved while it ran, %llu after it exited",
		       round, a, live, ex);
		TH_LOG("round %d: the successor's page: %s (count %u)", round,
		       err ? strerror(-err) : "sampled", err ? 0 : pi.count);
		EXPECT_EQ(-ENODEV, err);
		if (err != -ENODEV)
			credited++;
		exited += ex;
		mm_live += live;
		close(cmd);
		ASSERT_EQ(b, waitpid(b, NULL, 0));
	}
	close(cg_fd);
	TH_LOG("%d rounds: %llu samples resolved by mm while the faulters ran",
	       EXIT_ROUNDS, mm_live);
	TH_LOG("%llu dropped because they had exited; %d successors credited",
	       exited, credited);
	EXPECT_EQ(0, credited);
	EXPECT_LT(0ULL, exited) TH_LOG("no sample outlived its process");
}

/* Intel family 6 models with our PEBS events, and the Debug Store. */
static bool cpu_has_htmm_pebs(void)
{
	static const int models[] = { 0x55, 0x6a, 0x8f, 0xcf };
	static char buf[65536];
	int family = -1, model = -1;
	unsigned int i;
	char *p;

	if (htmm_read_file("/proc/cpuinfo", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "GenuineIntel"))
		return false;
	p = strstr(buf, "cpu family");
	if (p)
		sscanf(p, "cpu family : %d", &family);
	p = strstr(buf, "\nmodel\t");
	if (p)
		sscanf(p, "\nmodel : %d", &model);
	p = strstr(buf, "\nflags");
	if (family != 6 || !p || !strstr(p, " dts"))
		return false;
	for (i = 0; i < ARRAY_SIZE(models); i++)
		if (model == models[i])
			return true;
	return false;
}

static void expect_tunable(struct __test_metadata *_metadata,
			   const char *name, const char *want)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), HTMM_SYSFS_DIR "/%s", name);
	ASSERT_LT(0, htmm_read_file(path, buf, sizeof(buf)));
	EXPECT_CONTENT(want, buf, name);
}

/*
 * On a CPU without our PEBS events, htmm_sampler=pebs with
 * htmm_perf_event=pebs is refused (EOPNOTSUPP) and nothing changes: the
 * running source goes on. With the software events it is accepted, and
 * htmm_perf_event=pebs is then refused.  No CPU quota: that the scans go
 * on is tested, not their pace.  At the default quota, with the
 * workloads guest beside this one on the host at nice 19, the scans went
 * from 777 to 779 in the 10 s (clean run of ff14249).  Under TCG the
 * guest counts the host's preemptions as ksamplingd's run time, which
 * slowed htmm_migrate's numa_balancing_coexists the same way; this
 * failure was not traced further.
 */
TEST_F_TIMEOUT(htmm_sample, pebs_refused_without_events, 120)
{
	const struct kid_spec hold = { .body = kid_hold, .cpu = -1, .pages = 1 };
	unsigned long long scans0 = 0, scans1 = 0;
	struct sample_ctx *x = &self->x;
	long long deadline, nr_perf;
	struct kid_reply r;
	int err;

	if (cpu_has_htmm_pebs())
		SKIP(return, "this CPU has the PEBS events");
	set_tunable(_metadata, x, "htmm_perf_event", "pebs");
	set_tunable(_metadata, x, "htmm_sampler", "abit");
	set_tunable(_metadata, x, "htmm_abit_interval_ms", "10");
	set_tunable(_metadata, x, "ksampled_soft_cpu_quota", "0");

	/* htmm off */
	err = htmm_write_str(HTMM_SYSFS_DIR "/htmm_sampler", "pebs");
	EXPECT_EQ(-EOPNOTSUPP, err) TH_LOG("pebs, htmm off: %s",
					   err ? strerror(-err) : "accepted");
	expect_tunable(_metadata, "htmm_sampler", "abit\n");

	/* htmm on, the abit source running */
	kid_start(_metadata, x, 0, &hold, &r);
	ASSERT_EQ(0, set_enabled(x, true));
	scans0 = stat_now(_metadata, x, "abit_scans");
	err = htmm_write_str(HTMM_SYSFS_DIR "/htmm_sampler", "pebs");
	EXPECT_EQ(-EOPNOTSUPP, err) TH_LOG("pebs, htmm on: %s",
					   err ? strerror(-err) : "accepted");
	expect_tunable(_metadata, "htmm_sampler", "abit\n");
	deadline = now_ms() + 10 * 1000;
	do {
		scans1 = stat_now(_metadata, x, "abit_scans");
		if (scans1 > scans0 + 2)
			break;
	} while (poll_again(deadline));
	TH_LOG("abit_scans %llu -> %llu after the refused write", scans0,
	       scans1);
	EXPECT_LT(scans0 + 2, scans1) TH_LOG("the abit source stopped");
	EXPECT_EQ(1ULL, stat_now(_metadata, x, "ksamplingd_running"));
	EXPECT_EQ(0, perf_counters());

	/* the software events need no PMU; then the PEBS events are refused */
	set_tunable(_metadata, x, "htmm_perf_event", "sw-page-faults");
	set_tunable(_metadata, x, "htmm_sampler", "pebs");
	deadline = now_ms() + 10 * 1000;
	do {
		nr_perf = perf_counters();
		if (nr_perf == 2 * x->nr_cpus)
			break;
	} while (poll_again(deadline));
	ASSERT_EQ(2 * x->nr_cpus, nr_perf);
	err = htmm_write_str(HTMM_SYSFS_DIR "/htmm_perf_event", "pebs");
	EXPECT_EQ(-EOPNOTSUPP, err) TH_LOG("perf_event pebs: %s",
					   err ? strerror(-err) : "accepted");
	expect_tunable(_metadata, "htmm_perf_event", "sw-page-faults\n");
	EXPECT_EQ(2 * x->nr_cpus, perf_counters());
}

/* memory.htmm_stat: the documented keys, once each, in order. */
static void check_stat_format(struct __test_metadata *_metadata,
			      const struct sample_ctx *x, struct stat_snap *s)
{
	static const char *const keys_mid[] = {
		"alloc_redirected", "alloc_over_limit",
		"samples_load_fast", "samples_load_slow", "samples_store",
		"samples_access", "samples_pebs", "samples_abit",
		"samples_inject", "hot_threshold", "warm_threshold",
		"fast_capacity", "cooling_epoch", "accounting_repairs",
	};
	static const char *const keys_end[] = {
		"samples_dropped", "sample_period", "inst_sample_period",
		"ksamplingd_cpu_permille", "sampler_level",
		"ksamplingd_running",
	};
	char keys[MAX_STAT_KEYS][32];
	int nodes[HTMM_MAX_NODES], nr_nodes, nr = 0, seen[MAX_STAT_KEYS];
	int i, j, last = -1, b;
	unsigned int k;

	nr_nodes = htmm_memory_nodes(nodes, HTMM_MAX_NODES);
	ASSERT_LT(0, nr_nodes);
	snprintf(keys[nr++], sizeof(keys[0]), "enabled");
	for (i = 0; i < nr_nodes; i++) {
		snprintf(keys[nr++], sizeof(keys[0]), "resident_node%d",
			 nodes[i]);
		snprintf(keys[nr++], sizeof(keys[0]), "max_at_node%d",
			 nodes[i]);
	}
	for (k = 0; k < ARRAY_SIZE(keys_mid); k++)
		snprintf(keys[nr++], sizeof(keys[0]), "%s", keys_mid[k]);
	for (b = 0; b < NR_BINS; b++)
		snprintf(keys[nr++], sizeof(keys[0]), "hist_%d", b);
	for (b = 0; b < NR_BINS; b++)
		snprintf(keys[nr++], sizeof(keys[0]), "hist_split_%d", b);
	for (k = 0; k < ARRAY_SIZE(keys_end); k++)
		snprintf(keys[nr++], sizeof(keys[0]), "%s", keys_end[k]);
	memset(seen, 0, sizeof(seen));

	ASSERT_EQ(0, snap_read(x, s));
	EXPECT_FALSE(s->malformed) TH_LOG("a line is not \"key value\"");
	for (i = 0; i < s->nr; i++) {
		const char *key = s->key[i], *val = s->val[i];
		const char *p;

		for (p = key; *p; p++)
			if (!islower((unsigned char)*p) &&
			    !isdigit((unsigned char)*p) && *p != '_')
				break;
		EXPECT_FALSE(*p) TH_LOG("bad key \"%s\"", key);
		for (j = 0; j < nr; j++)
			if (!strcmp(keys[j], key))
				break;
		if (j == nr) {
			TH_LOG("undocumented key \"%s\"", key);
			continue;
		}
		seen[j]++;
		EXPECT_LT(last, j) TH_LOG("\"%s\" out of order", key);
		last = j;
		if (!strncmp(key, "max_at_node", 11)) {
			EXPECT_TRUE(is_decimal(val) || !strcmp(val, "max"))
				TH_LOG("%s %s", key, val);
		} else if (strstr(key, "_threshold")) {
			EXPECT_TRUE(!strcmp(val, "none") ||
				    (is_decimal(val) && atoi(val) < NR_BINS))
				TH_LOG("%s %s", key, val);
		} else {
			EXPECT_TRUE(is_decimal(val)) TH_LOG("%s %s", key, val);
		}
	}
	for (j = 0; j < nr; j++) {
		EXPECT_EQ(1, seen[j]) TH_LOG("key %s seen %d times", keys[j],
					     seen[j]);
	}
}

/* Consistency of the values of one snapshot. */
static void check_stat_values(struct __test_metadata *_metadata,
			      const struct stat_snap *s)
{
	static const char *const kinds[] = {
		"samples_load_fast", "samples_load_slow", "samples_store",
		"samples_access",
	};
	static const char *const srcs[] = {
		"samples_pebs", "samples_abit", "samples_inject",
	};
	unsigned long long by_kind = 0, by_src = 0;
	unsigned int i;

	EXPECT_GE(1ULL, snap_u64(_metadata, s, "enabled"));
	EXPECT_GE(1ULL, snap_u64(_metadata, s, "ksamplingd_running"));
	EXPECT_GE(1000ULL, snap_u64(_metadata, s, "ksamplingd_cpu_permille"));
	EXPECT_EQ(0ULL, snap_u64(_metadata, s, "fast_capacity") % PG);
	for (i = 0; i < ARRAY_SIZE(kinds); i++)
		by_kind += snap_u64(_metadata, s, kinds[i]);
	for (i = 0; i < ARRAY_SIZE(srcs); i++)
		by_src += snap_u64(_metadata, s, srcs[i]);
	EXPECT_EQ(by_kind, by_src) TH_LOG("samples by kind and by source");
	if (!snap_u64(_metadata, s, "accounting_repairs")) {
		EXPECT_EQ(hist_total(_metadata, s, "hist_"),
			  hist_total(_metadata, s, "hist_split_"));
	}
}

TEST_F_TIMEOUT(htmm_sample, stat_format, 120)
{
	const struct kid_spec spec = { .body = kid_hold, .cpu = -1, .pages = 4 };
	struct sample_ctx *x = &self->x;
	struct kid_reply r;
	struct stat_snap s;
	char buf[512];
	size_t len = 0;
	pid_t pid;

	/* a new cgroup, htmm disabled */
	check_stat_format(_metadata, x, &s);
	check_stat_values(_metadata, &s);
	EXPECT_EQ(0ULL, snap_u64(_metadata, &s, "enabled"));
	EXPECT_EQ(0ULL, hist_total(_metadata, &s, "hist_"));
	EXPECT_EQ(0ULL, snap_u64(_metadata, &s, "samples_inject"));
	EXPECT_EQ(0ULL, snap_u64(_metadata, &s, "cooling_epoch"));

	/* enabled, with some samples */
	set_tunable(_metadata, x, "htmm_sampler", "inject");
	kid_start(_metadata, x, 0, &spec, &r);
	ASSERT_EQ(0, set_enabled(x, true));
	pid = x->kids[0].pid;
	add_recs(buf, sizeof(buf), &len, pid, r.addr[0], "load-fast", 1);
	add_recs(buf, sizeof(buf), &len, pid, r.addr[0], "load-slow", 1);
	add_recs(buf, sizeof(buf), &len, pid, r.addr[0], "store", 1);
	add_recs(buf, sizeof(buf), &len, pid, r.addr[0] + PG, "store", 1);
	ASSERT_EQ((ssize_t)len, inject(buf, len));

	check_stat_format(_metadata, x, &s);
	check_stat_values(_metadata, &s);
	EXPECT_EQ(1ULL, snap_u64(_metadata, &s, "enabled"));
	EXPECT_EQ(1ULL, snap_u64(_metadata, &s, "ksamplingd_running"));
	EXPECT_EQ(1ULL, snap_u64(_metadata, &s, "samples_load_fast"));
	EXPECT_EQ(1ULL, snap_u64(_metadata, &s, "samples_load_slow"));
	EXPECT_EQ(2ULL, snap_u64(_metadata, &s, "samples_store"));
	EXPECT_EQ(4ULL, snap_u64(_metadata, &s, "samples_inject"));
	EXPECT_EQ(2ULL, hist_total(_metadata, &s, "hist_"));
	EXPECT_EQ(2ULL, hist_total(_metadata, &s, "hist_split_"));
}

/* ------------------------------------------------------------------ */
/* Tasks leaving the cgroup while it is sampled                        */
/* ------------------------------------------------------------------ */

FIXTURE(htmm_sample_move) {
	struct sample_ctx x;
};

FIXTURE_VARIANT(htmm_sample_move) {
	bool pebs;	/* pebs/sw-page-faults at period 1, else abit */
};

FIXTURE_VARIANT_ADD(htmm_sample_move, abit) {
	.pebs = false,
};

FIXTURE_VARIANT_ADD(htmm_sample_move, pebs_sw) {
	.pebs = true,
};

FIXTURE_SETUP(htmm_sample_move)
{
	ctx_setup(_metadata, &self->x);
}

FIXTURE_TEARDOWN(htmm_sample_move)
{
	ctx_teardown(_metadata, &self->x);
}

/*
 * One child exits by itself after 2 s of churning 64 MiB, another one is
 * moved to the root cgroup while it churns 4 MiB. The cgroup stays
 * enabled, ksamplingd stays, and the source stops once the cgroup is
 * empty.
 */
TEST_F_TIMEOUT(htmm_sample_move, exit_and_move_mid_sampling, 240)
{
	const struct kid_spec mover = {
		.body = kid_churn, .cpu = -1, .len = 4 * MiB,
	};
	const struct kid_spec exiter = {
		.body = kid_churn, .cpu = -1, .len = 64 * MiB, .run_ms = 2000,
	};
	const char *src = variant->pebs ? "samples_pebs" : "samples_abit";
	unsigned long long before, now = 0, populated = 1;
	char path[PATH_MAX], buf[256], events[PATH_MAX];
	struct sample_ctx *x = &self->x;
	long long t0, deadline, nr_perf = -1;
	struct htmm_child *ex;
	struct stat_snap s;
	struct kid_reply r;
	int status = -1, err;
	pid_t pid;

	if (variant->pebs) {
		set_tunable(_metadata, x, "htmm_perf_event", "sw-page-faults");
		set_tunable(_metadata, x, "htmm_sampler", "pebs");
		set_tunable(_metadata, x, "htmm_sample_period", "1");
		set_tunable(_metadata, x, "ksampled_soft_cpu_quota", "0");
	} else {
		set_tunable(_metadata, x, "htmm_sampler", "abit");
		set_tunable(_metadata, x, "htmm_abit_interval_ms", "10");
	}
	kid_start(_metadata, x, 0, &mover, &r);
	before = stat_now(_metadata, x, src);
	ASSERT_EQ(0, set_enabled(x, true));

	/* sampling runs */
	t0 = now_ms();
	deadline = t0 + 20 * 1000;
	do {
		now = stat_now(_metadata, x, src);
		if (now > before)
			break;
	} while (poll_again(deadline));
	TH_LOG("%s %llu -> %llu after %lld ms", src, before, now,
	       now_ms() - t0);
	ASSERT_LT(before, now) TH_LOG("no samples from the mover");

	/* the exiter starts, the mover leaves while both touch memory */
	kid_start(_metadata, x, 1, &exiter, &r);
	t0 = now_ms();
	ex = &x->kids[1];
	pid = x->kids[0].pid;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	err = htmm_write_str(HTMM_CGROUP_ROOT "/cgroup.procs", buf);
	ASSERT_EQ(0, err) TH_LOG("moving %d to the root cgroup: %s", pid,
				 strerror(-err));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	ASSERT_LT(0, htmm_read_file(path, buf, sizeof(buf)));
	EXPECT_TRUE(!strncmp(buf, "0::/\n", 5) || strstr(buf, "\n0::/\n"))
		TH_LOG("%s: %s", path, buf);

	/* the exiter ends by itself */
	deadline = t0 + 60 * 1000;
	do {
		if (waitpid(ex->pid, &status, WNOHANG) == ex->pid)
			break;
		status = -1;
	} while (poll_again(deadline));
	TH_LOG("exiter ended after %lld ms, wait status 0x%x", now_ms() - t0,
	       status);
	ASSERT_NE(-1, status) TH_LOG("exiter still running after 60 s");
	ex->pid = -1;
	kid_stop(ex, false, NULL);	/* closes the pipes */
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, kill(pid, 0)) TH_LOG("the moved child died");

	/* the cgroup is empty; htmm stays enabled, the source stops */
	cg_path(events, sizeof(events), x, "cgroup.events");
	deadline = now_ms() + 3000;
	do {
		err = htmm_keyed_get(events, "populated", &populated);
		if (!err && !populated)
			break;
	} while (poll_again(deadline));
	ASSERT_EQ(0ULL, populated) TH_LOG("cgroup still populated");
	t0 = now_ms();
	deadline = t0 + 3000;
	do {
		nr_perf = perf_counters();
		if (!nr_perf)
			break;
	} while (poll_again(deadline));
	TH_LOG("perf_counters %lld %lld ms after the cgroup emptied",
	       nr_perf, now_ms() - t0);
	EXPECT_EQ(0, nr_perf);

	ASSERT_EQ(0, snap_read(x, &s));
	check_stat_values(_metadata, &s);
	EXPECT_EQ(1ULL, snap_u64(_metadata, &s, "enabled"));
	EXPECT_EQ(1ULL, snap_u64(_metadata, &s, "ksamplingd_running"));
	/* an exited ksamplingd may linger until it is reaped */
	EXPECT_LE(1, count_comm("ksamplingd"));
	TH_LOG("%s %llu, samples_dropped %llu", src,
	       snap_u64(_metadata, &s, src),
	       snap_u64(_metadata, &s, "samples_dropped"));

	/* the moved child is still fine and quits when told */
	kid_stop(&x->kids[0], false, &status);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("moved child wait status 0x%x", status);
}

TEST_HARNESS_MAIN
