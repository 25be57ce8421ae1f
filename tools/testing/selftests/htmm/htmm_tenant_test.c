// SPDX-License-Identifier: GPL-2.0
/*
 * htmm with several tenants: a delegated cgroup subtree (hierarchical
 * budgets, the rule for enabling htmm, the charging of htmm's per-cgroup
 * memory) and four cgroups served side by side.
 *
 * The test (root) creates D = HTMM_CGROUP_ROOT/htmm_tenant_<pid>, enables
 * the memory controller for D's children and delegates D to uid/gid
 * 65534 the way Documentation/admin-guide/cgroup-v2.rst describes: chown
 * of the directory and of its cgroup.procs, cgroup.threads and
 * cgroup.subtree_control.  D's own interface files (memory.max_at_node0,
 * memory.htmm_enabled) stay the delegator's.  Unprivileged workers start
 * as root in D/stage, drop to 65534 and arrange the subtree as they like:
 * child cgroups of their own, htmm enabled or not, any budget of their
 * own.  Whatever they do, D's pages on node 0 stay within D's budget.
 * Privileged workers join a cgroup the test set up below D.
 */
#define _GNU_SOURCE
#include "htmm_util.h"	/* includes kselftest_harness.h */

#define PAGE_SZ		4096UL
#define SLACK		((long long)(2 * MiB))	/* stat batches, a migration batch */
#define BUDGET		((long long)(32 * MiB))	/* D's memory.max_at_node0 */
#define NR_WORKERS	4
#define QUEUE_BYTES	((16384 + 4096) * 8)	/* promotion + split queues */

/*
 * What a worker does in the child cgroup D/<name>: as uid 65534, create
 * it and set it up; as root (@root), join the cgroup the test set up.
 */
struct worker_spec {
	const char *name;
	bool root;		/* join D/<name> as root, nothing else */
	bool enable;		/* write "enabled" to its memory.htmm_enabled */
	const char *max0;	/* its memory.max_at_node0, or NULL */
	size_t slow_len;	/* bytes placed on node 1 (hot data) */
	size_t local_len;	/* bytes with the default policy */
	bool read_slow;		/* then read its node 1 data at random */
	bool thp;		/* huge pages: THP left on, MADV_HUGEPAGE */
};

struct worker_report {
	int err;		/* errno of the failing step, or 0 */
	char step[32];
	int enable_err;		/* errno of writing "enabled", or 0 */
	char *slow;		/* the data placed on node 1 */
	long huge_kb;		/* its AnonHugePages once placed */
};

struct worker {
	pid_t pid;
	int res_fd;
	int cmd_fd;
	struct worker_report r;
};

/* Tunables the tests change, restored in teardown. */
static const char * const saved_names[] = {
	"htmm_sampler", "htmm_promotion_period_in_ms",
	"htmm_demotion_period_in_ms", "htmm_mode", "htmm_settle_ms",
	"htmm_abit_interval_ms", "ksampled_soft_cpu_quota",
};

#define NR_SAVED	ARRAY_SIZE(saved_names)

#define NR_IDLE		70	/* more than ksamplingd scans at once */

FIXTURE(htmm_deleg) {
	char d[HTMM_CG_PATH_MAX];
	char saved[NR_SAVED][32];
	char thp_saved[16];	/* THP mode to restore, if changed */
	struct worker w[NR_WORKERS];
	int nr_workers;
	pid_t idle[NR_IDLE];
	int nr_idle;
};

static void path_in(char *buf, size_t size, const char *cg, const char *rel)
{
	if ((size_t)snprintf(buf, size, "%s/%s", cg, rel) >= size)
		abort();	/* cgroup paths here are short */
}

static void report_fail(struct worker_report *r, const char *step, int err)
{
	r->err = err ? err : EIO;
	snprintf(r->step, sizeof(r->step), "%s", step);
}

/*
 * Map @len bytes (with MADV_HUGEPAGE if @thp) and fault them in on @node,
 * then drop the binding.
 */
static char *place_on(size_t len, int node, bool thp)
{
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (thp && madvise(p, len, MADV_HUGEPAGE))
		return NULL;
	return htmm_fault_on(p, len, node) ? NULL : p;
}

/* The worker's steps; fills @r. */
static void worker_arrange(const char *d, const struct worker_spec *s,
			   struct worker_report *r)
{
	char cg[HTMM_CG_PATH_MAX], path[PATH_MAX];
	char *local;
	int err;

	path_in(cg, sizeof(cg), d, s->name);
	if (s->root)
		goto enter;
	if (setgroups(0, NULL) || setgid(HTMM_UNPRIV_ID) ||
	    setuid(HTMM_UNPRIV_ID))
		return report_fail(r, "setuid", errno);
	if (mkdir(cg, 0755))
		return report_fail(r, "mkdir", errno);
enter:
	err = htmm_cg_enter(cg, getpid());
	if (err)
		return report_fail(r, "enter own cgroup", -err);
	if (s->max0) {
		path_in(path, sizeof(path), cg, "memory.max_at_node0");
		err = htmm_write_str(path, s->max0);
		if (err)
			return report_fail(r, "max_at_node0", -err);
	}
	if (s->enable) {
		path_in(path, sizeof(path), cg, "memory.htmm_enabled");
		r->enable_err = -htmm_write_str(path, "enabled");
	}
	if (!s->thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		return report_fail(r, "PR_SET_THP_DISABLE", errno);
	if (s->slow_len) {
		r->slow = place_on(s->slow_len, HTMM_SLOW_NODE, s->thp);
		if (!r->slow)
			return report_fail(r, "place on node 1", errno);
	}
	if (s->local_len) {
		local = mmap(NULL, s->local_len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (local == MAP_FAILED)
			return report_fail(r, "mmap", errno);
		if (s->thp && madvise(local, s->local_len, MADV_HUGEPAGE))
			return report_fail(r, "madvise", errno);
		memset(local, 0x3c, s->local_len);
	}
	r->huge_kb = htmm_anon_huge_kb();
}

/* Read @len bytes at @p at random, one byte a page, until killed. */
static void read_forever(const char *p, size_t len)
{
	unsigned long x = 88172645463325252UL;
	char v;

	for (;;) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = p[(x % (len / PAGE_SZ)) * PAGE_SZ];
		asm volatile("" : : "r" (v));
	}
}

/*
 * Fork a worker: it enters D/stage as root, then arranges its part of the
 * subtree as 65534, reports and holds its memory until told to quit.
 */
static int worker_start(const char *d, const struct worker_spec *s,
			struct worker *w)
{
	char stage[HTMM_CG_PATH_MAX], cmd;
	int res[2], cmds[2], err;

	w->pid = -1;
	if (pipe2(res, O_CLOEXEC) || pipe2(cmds, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	w->pid = fork();
	if (w->pid < 0)
		return -errno;
	if (!w->pid) {
		struct worker_report r = { 0 };

		close(res[0]);
		close(cmds[1]);
		path_in(stage, sizeof(stage), d, "stage");
		err = htmm_cg_enter(stage, getpid());
		if (err)
			report_fail(&r, "enter stage", -err);
		else
			worker_arrange(d, s, &r);
		if (!htmm_full_write(res[1], &r, sizeof(r)))
			_exit(2);
		if (!r.err && s->read_slow)
			read_forever(r.slow, s->slow_len);
		htmm_full_read(cmds[0], &cmd, 1);
		_exit(r.err ? 1 : 0);
	}
	close(res[1]);
	close(cmds[0]);
	w->res_fd = res[0];
	w->cmd_fd = cmds[1];
	if (!htmm_full_read(w->res_fd, &w->r, sizeof(w->r)))
		return -EPIPE;
	return 0;
}

static void worker_stop(struct worker *w)
{
	if (w->pid <= 0)
		return;
	kill(w->pid, SIGKILL);
	close(w->cmd_fd);
	close(w->res_fd);
	waitpid(w->pid, NULL, 0);
	w->pid = -1;
}

/* Start @n workers in @d; *@nr counts those to stop in teardown. */
static void start_workers(struct __test_metadata *_metadata, const char *d,
			  struct worker *w, int *nr,
			  const struct worker_spec *specs, int n)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = worker_start(d, &specs[i], &w[i]);
		*nr = i + 1;
		ASSERT_EQ(0, err) TH_LOG("worker %s: %s", specs[i].name,
					 strerror(-err));
		ASSERT_EQ(0, w[i].r.err)
			TH_LOG("worker %s failed at %s: %s", specs[i].name,
			       w[i].r.step, strerror(w[i].r.err));
	}
}

/* Bytes of anonymous memory of cgroup @cg (and its subtree) on @node. */
static long long anon_on(const char *cg, int node)
{
	static char buf[16384];
	char path[PATH_MAX], key[16], *p;

	path_in(path, sizeof(path), cg, "memory.numa_stat");
	if (htmm_read_file(path, buf, sizeof(buf)) < 0 ||
	    strncmp(buf, "anon ", 5))
		return -1;
	snprintf(key, sizeof(key), " N%d=", node);
	p = strstr(buf, key);
	if (!p || p > strchr(buf, '\n'))
		return -1;
	return strtoll(p + strlen(key), NULL, 10);
}

static int chown_in(const char *cg, const char *rel)
{
	char path[PATH_MAX];

	path_in(path, sizeof(path), cg, rel);
	return chown(path, HTMM_UNPRIV_ID, HTMM_UNPRIV_ID) ? -errno : 0;
}

static void d_write(struct __test_metadata *_metadata, const char *d,
		    const char *file, const char *val)
{
	char path[PATH_MAX];
	int err;

	path_in(path, sizeof(path), d, file);
	err = htmm_write_str(path, val);
	ASSERT_EQ(0, err) TH_LOG("%s <- %s: %s", path, val, strerror(-err));
}

/* Remove the cgroups below @d (not @d), deepest first. */
static void remove_children(const char *d)
{
	char path[HTMM_CG_PATH_MAX];
	struct dirent *e;
	DIR *dir = opendir(d);

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		path_in(path, sizeof(path), d, e->d_name);
		remove_children(path);
		htmm_cg_destroy(path);
	}
	closedir(dir);
}

FIXTURE_SETUP(htmm_deleg)
{
	char path[PATH_MAX];
	int err;

	self->nr_workers = 0;
	self->nr_idle = 0;
	self->d[0] = '\0';
	err = htmm_cg_prepare();
	if (err == -ENODEV)
		SKIP(return, "no cgroup v2 memory controller");
	ASSERT_EQ(0, err);
	if (!htmm_path_exists(HTMM_DEBUGFS_DIR "/inject"))
		SKIP(return, "no htmm debugfs (CONFIG_HTMM_DEBUG)");
	htmm_save_files(HTMM_SYSFS_DIR, saved_names, NR_SAVED, self->saved);
	ASSERT_EQ(0, htmm_cg_create(self->d, sizeof(self->d), "htmm_tenant"));
	d_write(_metadata, self->d, "cgroup.subtree_control", "+memory");
	path_in(path, sizeof(path), self->d, "stage");
	ASSERT_EQ(0, mkdir(path, 0755));
	ASSERT_EQ(0, chown(self->d, HTMM_UNPRIV_ID, HTMM_UNPRIV_ID));
	ASSERT_EQ(0, chown_in(self->d, "cgroup.procs"));
	ASSERT_EQ(0, chown_in(self->d, "cgroup.threads"));
	ASSERT_EQ(0, chown_in(self->d, "cgroup.subtree_control"));
}

FIXTURE_TEARDOWN(htmm_deleg)
{
	int i;

	for (i = 0; i < self->nr_workers; i++)
		worker_stop(&self->w[i]);
	for (i = 0; i < self->nr_idle; i++) {
		kill(self->idle[i], SIGKILL);
		waitpid(self->idle[i], NULL, 0);
	}
	if (self->d[0]) {
		remove_children(self->d);
		EXPECT_EQ(0, htmm_cg_destroy(self->d));
	}
	htmm_restore_files(HTMM_SYSFS_DIR, saved_names, NR_SAVED, self->saved);
	if (self->thp_saved[0])
		EXPECT_EQ(0, htmm_thp_set(self->thp_saved));
}

struct unpriv_write_args {
	const char *path;
	const char *val;
};

static int unpriv_write_fn(const void *arg)
{
	const struct unpriv_write_args *a = arg;

	return -htmm_write_str(a->path, a->val);
}

/* As 65534: write @val to @path; return the errno, or 0. */
static int unpriv_write(const char *path, const char *val)
{
	const struct unpriv_write_args a = { path, val };

	return htmm_run_unpriv(unpriv_write_fn, &a);
}

/*
 * The delegatee cannot start htmm: not in its own child cgroup while D has
 * it disabled, and not in D even if D's switch was handed over too.
 * Below an enabled D it may enable its children; a cgroup with enabled
 * children cannot be disabled.
 */
TEST_F_TIMEOUT(htmm_deleg, enable_rule, 120)
{
	const struct worker_spec spec = { .name = "c1", .enable = true };
	char c1_file[PATH_MAX], d_file[PATH_MAX];
	double t0;
	int n;

	ASSERT_EQ(0, htmm_count_threads("ksamplingd")) TH_LOG("htmm already active");
	start_workers(_metadata, self->d, self->w, &self->nr_workers,
		      &spec, 1);
	EXPECT_EQ(EPERM, self->w[0].r.enable_err)
		TH_LOG("enabling below a disabled parent: %s",
		       strerror(self->w[0].r.enable_err));
	EXPECT_EQ(0, htmm_count_threads("ksamplingd"));
	EXPECT_EQ(0, htmm_count_threads("kmigraterd"));

	path_in(d_file, sizeof(d_file), self->d, "memory.htmm_enabled");
	path_in(c1_file, sizeof(c1_file), self->d, "c1/memory.htmm_enabled");
	EXPECT_EQ(EACCES, unpriv_write(d_file, "enabled"));
	/* A delegator that hands over D's switch by mistake. */
	ASSERT_EQ(0, chown_in(self->d, "memory.htmm_enabled"));
	EXPECT_EQ(EPERM, unpriv_write(d_file, "enabled"));
	EXPECT_EQ(0, htmm_count_threads("ksamplingd"));
	path_in(d_file, sizeof(d_file), self->d, "memory.max_at_node0");
	EXPECT_EQ(EACCES, unpriv_write(d_file, "1G"));

	d_write(_metadata, self->d, "memory.htmm_enabled", "enabled");
	EXPECT_EQ(1, htmm_count_threads("ksamplingd"));
	EXPECT_EQ(0, unpriv_write(c1_file, "enabled"));
	path_in(d_file, sizeof(d_file), self->d, "memory.htmm_enabled");
	EXPECT_EQ(EBUSY, unpriv_write(d_file, "disabled"));
	EXPECT_EQ(-EBUSY, htmm_write_str(d_file, "disabled"));
	EXPECT_EQ(0, unpriv_write(c1_file, "disabled"));
	EXPECT_EQ(0, htmm_write_str(d_file, "disabled"));
	t0 = htmm_now_s();
	while ((n = htmm_count_threads("ksamplingd")) && htmm_now_s() - t0 < 30)
		usleep(10000);
	EXPECT_EQ(0, n) TH_LOG("ksamplingd left after the last disable");
}

/* Create D/@name (in @cg), give it @max0 on node 0 if not NULL, enable it. */
static void child_cg(struct __test_metadata *_metadata, const char *d,
		     const char *name, char *cg, size_t size, const char *max0)
{
	path_in(cg, size, d, name);
	ASSERT_EQ(0, mkdir(cg, 0755));
	if (max0)
		d_write(_metadata, cg, "memory.max_at_node0", max0);
	d_write(_metadata, cg, "memory.htmm_enabled", "enabled");
}

/* Sample source @sampler, 100 ms periods, no settle time, htmm_mode @mode. */
static int quick_tunables(const char *sampler, const char *mode)
{
	return htmm_tunable_set("htmm_sampler", sampler) ?:
	       htmm_tunable_set("htmm_promotion_period_in_ms", "100") ?:
	       htmm_tunable_set("htmm_demotion_period_in_ms", "100") ?:
	       htmm_tunable_set("htmm_settle_ms", "0") ?:
	       htmm_tunable_set("htmm_mode", mode);
}

/* The delegator gives D @budget on node 0 and enables it; htmm_mode @mode. */
static void delegator_sets_budget(struct __test_metadata *_metadata,
				  const char *d, const char *budget,
				  const char *mode)
{
	ASSERT_EQ(0, quick_tunables("inject", mode));
	d_write(_metadata, d, "memory.max_at_node0", budget);
	d_write(_metadata, d, "memory.htmm_enabled", "enabled");
}

/*
 * Placement: children with htmm enabled and no budget, with a budget
 * above D's, or without htmm, all fault memory in with the default
 * policy.  D's subtree fills node 0 up to D's budget, the rest goes to
 * node 1.  No migration (htmm_mode 0).
 */
TEST_F_TIMEOUT(htmm_deleg, placement_obeys_ancestor, 300)
{
	const struct worker_spec specs[3] = {
		{ .name = "c1", .enable = true, .max0 = "max",
		  .local_len = 24 * MiB },
		{ .name = "c2", .local_len = 24 * MiB },
		{ .name = "c3", .enable = true, .max0 = "1G",
		  .local_len = 24 * MiB },
	};
	long long fast, slow;
	int i;

	delegator_sets_budget(_metadata, self->d, "32M", "0");
	start_workers(_metadata, self->d, self->w, &self->nr_workers,
		      specs, 3);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, self->w[i].r.enable_err) TH_LOG("worker %d", i);
	fast = anon_on(self->d, HTMM_FAST_NODE);
	slow = anon_on(self->d, HTMM_SLOW_NODE);
	TH_LOG("D: node 0 %lld KiB, node 1 %lld KiB, budget %lld KiB",
	       fast / 1024, slow / 1024, BUDGET / 1024);
	EXPECT_GE(BUDGET + SLACK, fast);
	EXPECT_LE(BUDGET - SLACK, fast) TH_LOG("node 0 not filled to the budget");
	EXPECT_LE((long long)(72 * MiB) - BUDGET - SLACK, slow);
}

/* A key of memory.htmm_stat of D/@name, 0 if missing. */
static unsigned long long child_stat(const char *d, const char *name,
				     const char *key)
{
	unsigned long long v = 0;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/memory.htmm_stat", d, name);
	htmm_keyed_get(path, key, &v);
	return v;
}

/* Inject @per load samples on each page of [@off, @off + @len) of @w's data. */
static int inject_part(const struct worker *w, size_t off, size_t len,
		       int per)
{
	return htmm_inject(w->pid, w->r.slow + off, len, PAGE_SZ, per);
}

static int inject_worker(const struct worker *w, size_t len, int per)
{
	return inject_part(w, 0, len, per);
}

/*
 * Promotion: two children with htmm enabled and no budget of their own
 * have 24 MiB of hot data each on node 1, 48 MiB in all.  kmigraterd
 * promotes until D's budget is used, never past it.
 */
TEST_F_TIMEOUT(htmm_deleg, promotion_obeys_ancestor, 300)
{
	const struct worker_spec specs[2] = {
		{ .name = "c1", .enable = true, .slow_len = 24 * MiB },
		{ .name = "c2", .enable = true, .max0 = "max",
		  .slow_len = 24 * MiB },
	};
	long long fast = 0, most = 0;
	double t0, t_full = -1;

	delegator_sets_budget(_metadata, self->d, "32M", "1");
	start_workers(_metadata, self->d, self->w, &self->nr_workers,
		      specs, 2);
	t0 = htmm_now_s();
	while (htmm_now_s() - t0 < 120) {
		ASSERT_EQ(0, inject_worker(&self->w[0], 24 * MiB, 2));
		ASSERT_EQ(0, inject_worker(&self->w[1], 24 * MiB, 2));
		fast = anon_on(self->d, HTMM_FAST_NODE);
		most = fast > most ? fast : most;
		if (t_full < 0 && fast >= (long long)(BUDGET * 3 / 4))
			t_full = htmm_now_s() - t0;
		/* Keep the samples coming for 10 s once it is full. */
		if (t_full >= 0 && htmm_now_s() - t0 > t_full + 10)
			break;
		usleep(200000);
	}
	TH_LOG("D on node 0: 3/4 of budget at %.1f s, max %lld KiB, now %lld KiB",
	       t_full, most / 1024, fast / 1024);
	TH_LOG("budget %lld KiB; promoted pages: c1 %llu, c2 %llu", BUDGET / 1024,
	       child_stat(self->d, "c1", "promoted"),
	       child_stat(self->d, "c2", "promoted"));
	EXPECT_LE(0, t_full) TH_LOG("D never used 3/4 of its budget");
	EXPECT_GE(BUDGET + SLACK, most) TH_LOG("D's budget exceeded");
}

/*
 * Demotion: D's budget is lowered below what its two children have on
 * node 0.  Their pages go down until D fits, and only the excess goes
 * down: the children share it, they do not each demote all of it.
 */
TEST_F_TIMEOUT(htmm_deleg, demotion_shares_excess, 300)
{
	const struct worker_spec specs[2] = {
		{ .name = "c1", .enable = true, .local_len = 24 * MiB },
		{ .name = "c2", .enable = true, .local_len = 24 * MiB },
	};
	unsigned long long d0, d1;
	long long fast0, fast = 0;
	double t0, t_fit = -1;

	delegator_sets_budget(_metadata, self->d, "64M", "1");
	start_workers(_metadata, self->d, self->w, &self->nr_workers,
		      specs, 2);
	fast0 = anon_on(self->d, HTMM_FAST_NODE);
	ASSERT_LE((long long)(48 * MiB - SLACK), fast0);
	ASSERT_EQ(0, htmm_vmstat_get("htmm_nr_demoted", &d0));
	d_write(_metadata, self->d, "memory.max_at_node0", "16M");
	t0 = htmm_now_s();
	while (htmm_now_s() - t0 < 120) {
		fast = anon_on(self->d, HTMM_FAST_NODE);
		if (fast <= (long long)(16 * MiB + SLACK)) {
			t_fit = htmm_now_s() - t0;
			break;
		}
		usleep(100000);
	}
	sleep(3);	/* any further demotion shows now */
	fast = anon_on(self->d, HTMM_FAST_NODE);
	ASSERT_EQ(0, htmm_vmstat_get("htmm_nr_demoted", &d1));
	TH_LOG("D on node 0: %lld KiB, fits 16 MiB after %.1f s, %lld KiB 3 s later",
	       fast0 / 1024, t_fit, fast / 1024);
	TH_LOG("demoted meanwhile: %llu KiB", (d1 - d0) * 4);
	EXPECT_LE(0, t_fit);
	EXPECT_GE((long long)(16 * MiB + SLACK), fast);
	/* The excess is 32 MiB; both children demoting it would be 48. */
	EXPECT_GE((unsigned long long)(fast0 - 16 * MiB + 4 * MiB) / PAGE_SZ,
		  d1 - d0);
}

/*
 * The promotion and split queues of a cgroup are charged to it when it
 * enables htmm, not to the writer of memory.htmm_enabled.
 */
TEST_F_TIMEOUT(htmm_deleg, queues_charged_to_cgroup, 60)
{
	char cg[PATH_MAX], path[PATH_MAX];
	unsigned long long k0, k1;
	double t0;

	path_in(cg, sizeof(cg), self->d, "stage");
	d_write(_metadata, self->d, "memory.htmm_enabled", "enabled");
	path_in(path, sizeof(path), cg, "memory.stat");
	ASSERT_EQ(0, htmm_keyed_get(path, "kernel", &k0));
	d_write(_metadata, cg, "memory.htmm_enabled", "enabled");
	/* memory.stat is flushed when enough changed, or every 2 s. */
	t0 = htmm_now_s();
	do {
		usleep(100000);
		ASSERT_EQ(0, htmm_keyed_get(path, "kernel", &k1));
	} while (k1 < k0 + QUEUE_BYTES && htmm_now_s() - t0 < 10);
	TH_LOG("memory.stat kernel of the cgroup: %llu -> %llu bytes after %.1f s",
	       k0, k1, htmm_now_s() - t0);
	EXPECT_LE((unsigned long long)QUEUE_BYTES, k1 - k0);
	d_write(_metadata, cg, "memory.htmm_enabled", "disabled");
}

/* Per cent of @w's data on node 1 at the start that is on node 0 now. */
static double fast_share(const struct worker *w, size_t len)
{
	unsigned long per_node[HTMM_MAX_NODES], bad;

	if (htmm_count_nodes_pid(w->pid, w->r.slow, len, per_node, &bad))
		return -1;
	return 100.0 * per_node[HTMM_FAST_NODE] / (len / PAGE_SZ);
}

#define PART	(2 * MiB)	/* injected per tenant in turn */

/*
 * A tenant: its memory.max_at_node0 and its size: hot data of 3/4 of it
 * on node 1, cold data of 1/2 of it with the default policy.
 */
struct tenant_plan {
	const char *max0;
	unsigned int mb;
};

struct tenants {
	const struct worker *w;
	const struct worker_spec *specs;
	double t0, t95[4], share[4];
	double goal[4];		/* per cent of the hot data that fits */
	unsigned long long budget[4];
	int left;
};

/* Note the tenants that reached their goal since the last look. */
static void tenants_look(struct tenants *t)
{
	double now;
	int i;

	for (i = 0; i < 4; i++) {
		if (t->t95[i] >= 0)
			continue;
		t->share[i] = fast_share(&t->w[i], t->specs[i].slow_len);
		now = htmm_now_s() - t->t0;
		if (t->share[i] >= t->goal[i]) {
			t->t95[i] = now;
			t->left--;
		}
	}
}

/*
 * Two samples on every hot page of each tenant still below its goal, PART
 * of each tenant in turn, looking at their shares after each turn.
 */
static int tenants_inject(struct tenants *t)
{
	size_t off, end = 0;
	int i, err;

	for (i = 0; i < 4; i++)
		if (t->specs[i].slow_len > end)
			end = t->specs[i].slow_len;
	for (off = 0; off < end && t->left; off += PART) {
		for (i = 0; i < 4; i++) {
			if (t->t95[i] >= 0 || off >= t->specs[i].slow_len)
				continue;
			err = inject_part(&t->w[i], off, PART, 2);
			if (err)
				return err;
		}
		tenants_look(t);
	}
	return 0;
}

/*
 * Each tenant's goal: 95% of the part of its hot data that fits its
 * effective budget on node 0 below the promotion watermark.
 */
static void tenants_goals(struct tenants *t, const char *d, char (*names)[8])
{
	unsigned long long wm = 20, fit;
	int i;

	htmm_read_value(HTMM_SYSFS_DIR "/htmm_promotion_watermark", &wm);
	for (i = 0; i < 4; i++) {
		t->budget[i] = child_stat(d, names[i], "budget_node0");
		fit = t->budget[i] / 1000 * (1000 - wm);
		if (fit > t->specs[i].slow_len)
			fit = t->specs[i].slow_len;
		t->goal[i] = 95.0 * fit / t->specs[i].slow_len;
		t->t95[i] = -1;
	}
}

/*
 * Start four tenants of @plan together in D's children t1..t4, D enabled
 * (@d_on, without a budget) or not, and inject their hot data until each
 * reaches its goal; report the times to the goal and their spread.
 */
static void four_tenants_run(struct __test_metadata *_metadata,
			     const char *d, struct worker *w, int *nr_workers,
			     const struct tenant_plan *plan, bool d_on, bool thp)
{
	struct worker_spec specs[4];
	char names[4][8], cg[HTMM_CG_PATH_MAX];
	struct tenants t = { .w = w, .specs = specs, .left = 4 };
	double lo = 1e9, hi = 0, since;
	int i;

	ASSERT_EQ(0, quick_tunables("inject", "1"));
	if (d_on)
		d_write(_metadata, d, "memory.htmm_enabled", "enabled");
	for (i = 0; i < 4; i++) {
		snprintf(names[i], sizeof(names[i]), "t%d", i + 1);
		child_cg(_metadata, d, names[i], cg, sizeof(cg), plan[i].max0);
		specs[i] = (struct worker_spec){
			.name = names[i], .root = true,
			.slow_len = plan[i].mb * MiB * 3 / 4,
			.local_len = plan[i].mb * MiB / 2, .thp = thp,
		};
	}
	tenants_goals(&t, d, names);
	start_workers(_metadata, d, w, nr_workers, specs, 4);
	for (i = 0; thp && i < 4; i++) {
		/* Most of each tenant's data in huge pages, or no THP test. */
		TH_LOG("%s: %ld KiB in huge pages", names[i], w[i].r.huge_kb);
		ASSERT_LE((long)(specs[i].slow_len / KiB), w[i].r.huge_kb);
	}
	t.t0 = htmm_now_s();
	while (t.left && htmm_now_s() - t.t0 < 300) {
		ASSERT_EQ(0, tenants_inject(&t));
		/* Then watch for 10 s before the next samples. */
		since = htmm_now_s();
		while (t.left && htmm_now_s() - since < 10) {
			tenants_look(&t);
			usleep(100000);
		}
	}
	for (i = 0; i < 4; i++) {
		TH_LOG("%s: budget %llu KiB, hot %zu KiB, %.1f%% up, goal %.1f%%, t95 %.1f s",
		       names[i], t.budget[i] >> 10, specs[i].slow_len >> 10,
		       t.share[i], t.goal[i], t.t95[i]);
		EXPECT_LE(0, t.t95[i]) TH_LOG("%s never reached its goal", names[i]);
		if (t.t95[i] >= 0) {
			lo = t.t95[i] < lo ? t.t95[i] : lo;
			hi = t.t95[i] > hi ? t.t95[i] : hi;
		}
	}
	TH_LOG("t95 spread: fastest %.1f s, slowest %.1f s", lo, hi);
}

/* Budgets that fit node 0 together, each above its tenant's hot data. */
static const struct tenant_plan fitting_plan[4] = {
	{ "8M", 8 }, { "16M", 16 }, { "24M", 24 }, { "32M", 32 },
};

/*
 * Four tenants of different sizes, started together, each with a budget,
 * hot data on node 1 that fits it (3/4 of it) and cold data on node 0
 * (1/2 of it): each must demote cold data to make room for its hot data.
 * Every tenant gets 95% of its hot data into node 0; the times to 95%
 * (from the first sample) and their spread are reported.
 */
TEST_F_TIMEOUT(htmm_deleg, four_tenants, 600)
{
	four_tenants_run(_metadata, self->d, self->w, &self->nr_workers,
			 fitting_plan, true, false);
}

/*
 * four_tenants with transparent huge pages, as distribution kernels run
 * (THP "always"; the tenants also ask with MADV_HUGEPAGE): hot and cold
 * data in huge pages, which go down and up whole.  The budgets are whole
 * huge pages, and the hot data of each fits below its watermark.
 */
TEST_F_TIMEOUT(htmm_deleg, four_tenants_thp, 600)
{
	ASSERT_EQ(0, htmm_thp_get(self->thp_saved, sizeof(self->thp_saved)));
	ASSERT_EQ(0, htmm_thp_set("always"));
	four_tenants_run(_metadata, self->d, self->w, &self->nr_workers,
			 fitting_plan, true, true);
}

/*
 * The same four tenants as top cgroups (D disabled) whose budgets
 * overcommit node 0: 8 and 16 MiB, and the whole node twice.  Each gets
 * budget * node / sum, so t1 and t2 get less than half their budget:
 * their cold data goes down, and only part of their hot data fits.  Each
 * tenant reaches 95% of the hot data that fits its share.
 */
TEST_F_TIMEOUT(htmm_deleg, four_tenants_overcommit, 600)
{
	static const struct tenant_plan plan[4] = {
		{ "8M", 8 }, { "16M", 16 }, { "max", 24 }, { "max", 32 },
	};

	four_tenants_run(_metadata, self->d, self->w, &self->nr_workers, plan,
			 false, false);
}

/* Present pages of @node, from /proc/zoneinfo; 0 if unknown. */
static unsigned long long node_present(int node)
{
	static char buf[1 << 17];
	unsigned long long sum = 0, v;
	char head[32], *line, *save = NULL;
	bool in = false;

	if (htmm_read_file("/proc/zoneinfo", buf, sizeof(buf)) <= 0)
		return 0;
	snprintf(head, sizeof(head), "Node %d, zone", node);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "Node ", 5))
			in = !strncmp(line, head, strlen(head));
		else if (in && sscanf(line, " present %llu", &v) == 1)
			sum += v;
	}
	return sum;
}

/*
 * Overcommit: two top cgroups whose budgets on node 0 add up to more than
 * the node share it in proportion to their budgets.  a (160 MiB) holds
 * 150 MiB of cold data on node 0 when b (max, the whole node) is enabled:
 * a's share falls to 160 MiB * node / (160 MiB + node), a demotes down to
 * it, and b's hot data on node 1 goes up.
 */
TEST_F_TIMEOUT(htmm_deleg, overcommit_shared_by_budget, 600)
{
	const struct worker_spec spec = {
		.name = "b", .root = true, .slow_len = 16 * MiB,
	};
	unsigned long long present, want, share_a, share_b;
	char a[HTMM_CG_PATH_MAX], b[HTMM_CG_PATH_MAX];
	long long a_fast = 0;
	double t0, t_fit = -1, hot = 0;
	char *cold;

	present = node_present(HTMM_FAST_NODE);
	ASSERT_LT(0ULL, present);
	ASSERT_EQ(0, quick_tunables("inject", "1"));
	child_cg(_metadata, self->d, "a", a, sizeof(a), "160M");
	/* a's cold data: charged to a, placed on node 0 with mbind(). */
	ASSERT_EQ(0, htmm_cg_enter(a, getpid()));
	cold = place_on(150 * MiB, HTMM_FAST_NODE, false);
	ASSERT_EQ(0, htmm_cg_enter(HTMM_CGROUP_ROOT, getpid()));
	ASSERT_NE(NULL, cold);
	EXPECT_EQ(160 * MiB, child_stat(self->d, "a", "budget_node0"));

	child_cg(_metadata, self->d, "b", b, sizeof(b), NULL);
	start_workers(_metadata, self->d, self->w, &self->nr_workers,
		      &spec, 1);
	want = 40960ULL * present / (40960 + present);
	share_a = child_stat(self->d, "a", "budget_node0");
	share_b = child_stat(self->d, "b", "budget_node0");
	TH_LOG("node 0: %llu pages; shares: a %llu KiB (want %llu), b %llu KiB",
	       present, share_a / 1024, want * 4, share_b / 1024);
	EXPECT_EQ(want * 4096, share_a);
	t0 = htmm_now_s();
	while (htmm_now_s() - t0 < 120) {
		ASSERT_EQ(0, inject_worker(&self->w[0], 16 * MiB, 2));
		a_fast = anon_on(a, HTMM_FAST_NODE);
		hot = fast_share(&self->w[0], 16 * MiB);
		if (t_fit < 0 && a_fast <= (long long)share_a + SLACK)
			t_fit = htmm_now_s() - t0;
		if (t_fit >= 0 && hot >= 95)
			break;
		usleep(100000);
	}
	TH_LOG("a on node 0: %lld KiB, within its share after %.1f s",
	       a_fast / 1024, t_fit);
	TH_LOG("b's hot data: %.1f%% on node 0", hot);
	EXPECT_LE(0, t_fit) TH_LOG("a kept more than its share");
	EXPECT_LE(95, hot);
	munmap(cold, 150 * MiB);
}

/* Processes in @cg: the lines of its cgroup.procs. */
static int count_procs(const char *cg)
{
	static char buf[65536];
	char path[PATH_MAX];
	ssize_t len;
	int n = 0;

	path_in(path, sizeof(path), cg, "cgroup.procs");
	len = htmm_read_file(path, buf, sizeof(buf));
	while (len-- > 0)
		n += buf[len] == '\n';
	return n;
}

/*
 * The Accessed-bit scanner takes 64 processes a scan.  A first cgroup
 * holds NR_IDLE idle ones; a second, enabled after it, holds one process
 * that reads hot data on node 1.  Every process has its turn, so that
 * data goes up all the same.  The quota is 100 per mille, as in
 * htmm_migrate's converge_abit: at the default 30, under TCG, the guest
 * counts the host's preemptions as ksamplingd's run time, and 95% of
 * the hot data was up after 29.5 s on an idle host and 142.4 s with
 * another guest beside this one at nice 19.  That every process has its
 * turn is tested here, not the pace at the default quota.
 */
TEST_F_TIMEOUT(htmm_deleg, abit_reaches_every_process, 600)
{
	const struct worker_spec spec = {
		.name = "hot", .root = true, .slow_len = 16 * MiB,
		.read_slow = true,
	};
	char many[HTMM_CG_PATH_MAX], hot[HTMM_CG_PATH_MAX];
	double t0, share = 0;
	pid_t pid;
	int i;

	ASSERT_EQ(0, quick_tunables("abit", "1"));
	ASSERT_EQ(0, htmm_tunable_set("htmm_abit_interval_ms", "500"));
	ASSERT_EQ(0, htmm_tunable_set("ksampled_soft_cpu_quota", "100"));
	d_write(_metadata, self->d, "memory.htmm_enabled", "enabled");
	child_cg(_metadata, self->d, "many", many, sizeof(many), NULL);
	child_cg(_metadata, self->d, "hot", hot, sizeof(hot), NULL);
	for (i = 0; i < NR_IDLE; i++) {
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (htmm_cg_enter(many, getpid()))
				_exit(1);
			for (;;)
				pause();
		}
		self->idle[self->nr_idle++] = pid;
	}
	t0 = htmm_now_s();
	while (count_procs(many) < NR_IDLE && htmm_now_s() - t0 < 30)
		usleep(10000);
	ASSERT_EQ(NR_IDLE, count_procs(many));
	start_workers(_metadata, self->d, self->w, &self->nr_workers,
		      &spec, 1);
	t0 = htmm_now_s();
	while (htmm_now_s() - t0 < 300) {
		share = fast_share(&self->w[0], spec.slow_len);
		if (share >= 95)
			break;
		usleep(500000);
	}
	TH_LOG("hot data of the process after %d idle ones: %.1f%% on node 0 after %.1f s",
	       NR_IDLE, share, htmm_now_s() - t0);
	EXPECT_LE(95, share);
}

TEST_HARNESS_MAIN
