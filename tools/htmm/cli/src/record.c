// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): "htmm record" sampling: one row per interval of a cgroup's
 * memory.htmm_stat, the htmm counters of /proc/vmstat and the CPU time of
 * htmm's kernel threads.  The files stay open and are read with pread();
 * nothing is run.  The schema (htmm(8), RECORD FORMAT) is fixed by the
 * first row; the thresholds are in it even if that row has none.  Nothing
 * derived is recorded: "htmm report" computes hot_fast_pct (calc.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "htmm.h"

struct rowbuf {
	int n, cap;
	struct hm_kv *e;		/* key: column, val: value */
	bool *has;			/* false: missing (none) */
};

static int rb_add(struct rowbuf *rb, const char *name, const char *val)
{
	struct hm_kv *e;

	if (rb->n == rb->cap) {
		int cap = rb->cap ? rb->cap * 2 : 256;
		struct hm_kv *ne = realloc(rb->e, cap * sizeof(*ne));
		bool *nh = realloc(rb->has, cap * sizeof(*nh));

		if (ne)
			rb->e = ne;
		if (nh)
			rb->has = nh;
		if (!ne || !nh)
			return -ENOMEM;
		rb->cap = cap;
	}
	e = &rb->e[rb->n];
	snprintf(e->key, sizeof(e->key), "%s", name);
	snprintf(e->val, sizeof(e->val), "%s", val ? val : "");
	rb->has[rb->n++] = !!val;
	return 0;
}

static void rb_free(struct rowbuf *rb)
{
	free(rb->e);
	free(rb->has);
}

int hm_rec_open(struct hm_rec *r, const char *path, enum hm_format fmt)
{
	int fd;

	memset(r, 0, sizeof(*r));
	r->stat_fd = -1;
	r->vmstat_fd = -1;
	r->w.fmt = fmt;
	if (!path || !strcmp(path, "-")) {
		r->w.f = stdout;
		return 0;
	}
	snprintf(r->path, sizeof(r->path), "%s", path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	r->created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_WRONLY | O_CLOEXEC);	/* emptied at start */
	if (fd >= 0)
		r->w.f = fdopen(fd, "w");
	if (!r->w.f) {
		int err = errno;

		hm_err("cannot write %s: %s", path, strerror(err));
		if (fd >= 0)
			close(fd);
		if (r->created)
			unlink(path);
		return -err;
	}
	return 0;
}

/*
 * Start sampling cgroup @cg (relative to the cgroup2 mount), and the CPU of
 * htmm's threads and of the @nxkt other kernel threads named in @xkt.
 */
int hm_rec_start(struct hm_rec *r, const char *cg, const char *const *xkt,
		 int nxkt)
{
	char path[HM_PATH];
	int i;

	snprintf(r->cg, sizeof(r->cg), "%s", cg);
	if (hm_cg_file(path, sizeof(path), cg, "memory.htmm_stat"))
		return -ENAMETOOLONG;
	r->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->stat_fd < 0) {
		hm_err("cannot open %s: %s", path, strerror(errno));
		return -ENOENT;
	}
	if (!hm_path(path, sizeof(path), "/proc/vmstat"))
		r->vmstat_fd = open(path, O_RDONLY | O_CLOEXEC);
	hm_topo_load(&r->topo);
	hm_kthreads_init(&r->kt, &r->topo);
	for (i = 0; i < nxkt; i++)
		hm_kthreads_add(&r->kt, xkt[i]);
	if (r->path[0] && !r->created && ftruncate(fileno(r->w.f), 0)) {
		hm_err("cannot empty %s: %s", r->path, strerror(errno));
		return -EIO;
	}
	r->t0 = hm_mono();
	return 0;
}

/* resident_fast and resident_slow: the sums over the tiers' nodes. */
static int add_tiers(struct rowbuf *rb, const struct hm_topo *t,
		     const struct hm_kvset *st)
{
	long long fast = 0, slow = 0, v;
	char key[32], a[32], b[32];
	bool ok = true;
	int i;

	for (i = 0; i < t->nr; i++) {
		if (!t->node[i].mem)
			continue;
		snprintf(key, sizeof(key), "resident_node%d", i);
		if (hm_kv_num(st, key, &v) || v < 0)
			ok = false;
		else if (t->node[i].fast)
			fast += v;
		else
			slow += v;
	}
	snprintf(a, sizeof(a), "%lld", fast);
	snprintf(b, sizeof(b), "%lld", slow);
	if (rb_add(rb, "resident_fast", ok ? a : NULL))
		return -ENOMEM;
	return rb_add(rb, "resident_slow", ok ? b : NULL);
}

/*
 * Keys of memory.htmm_stat that are always columns, whatever their value in
 * the first row: bins, "none" (no such bin yet) until htmm classified
 * enough.  A value that is not a bin, or a key the file lacks, is missing.
 */
static const char *const always_cols[] = {
	"hot_threshold", "warm_threshold", "fill_threshold", NULL
};

static bool always_col(const char *const *always, const char *key)
{
	for (; always && *always; always++)
		if (!strcmp(*always, key))
			return true;
	return false;
}

/*
 * The numeric keys of a stat file: numbers, max (-1), none (missing); and
 * the keys of @always (may be NULL), missing when not numeric or absent.
 */
static int add_stat(struct rowbuf *rb, const struct hm_kvset *st,
		    const char *const *always)
{
	long long v;
	int i, err = 0;

	for (i = 0; i < st->n && !err; i++) {
		const char *val = st->kv[i].val;

		if (!hm_value_num(val, &v))
			err = rb_add(rb, st->kv[i].key, v == -1 ? "-1" : val);
		else if (!strcmp(val, "none") || always_col(always, st->kv[i].key))
			err = rb_add(rb, st->kv[i].key, NULL);
	}
	for (; always && *always && !err; always++)
		if (!hm_kv_get(st, *always))
			err = rb_add(rb, *always, NULL);
	return err;
}

static int add_threads(struct rowbuf *rb, const struct hm_kthreads *k)
{
	long hz = sysconf(_SC_CLK_TCK);
	char name[48], val[32];
	int i, err = 0;

	for (i = 0; i < k->n && !err; i++) {
		snprintf(name, sizeof(name), "%s_cpu_ms", k->t[i].comm);
		snprintf(val, sizeof(val), "%llu",
			 k->t[i].ticks * 1000 / (unsigned long long)(hz > 0 ? hz : 100));
		err = rb_add(rb, name, k->t[i].valid ? val : NULL);
	}
	return err;
}

static int gather(struct hm_rec *r, struct rowbuf *rb)
{
	struct hm_kvset st = { 0 }, vm = { 0 };
	char buf[65536], t[32], w[32];
	int err;

	if (hm_pread(r->stat_fd, buf, sizeof(buf)) < 0)
		return -ENOENT;		/* the cgroup is gone */
	snprintf(t, sizeof(t), "%.3f", hm_mono() - r->t0);
	snprintf(w, sizeof(w), "%.3f", hm_wall());
	err = hm_kv_parse(&st, buf, NULL) < 0;
	if (!err && r->vmstat_fd >= 0 && hm_pread(r->vmstat_fd, buf, sizeof(buf)) >= 0)
		err = hm_kv_parse(&vm, buf, "htmm_") < 0;
	hm_kthreads_read(&r->kt);
	err = err || rb_add(rb, "time", t) || rb_add(rb, "unix_time", w) ||
	      add_tiers(rb, &r->topo, &st) || add_stat(rb, &st, always_cols) ||
	      add_stat(rb, &vm, NULL) || add_threads(rb, &r->kt);
	hm_kv_free(&st);
	hm_kv_free(&vm);
	return err ? -ENOMEM : 0;
}

static int first_row(struct hm_rec *r, struct rowbuf *rb)
{
	const char **cols = calloc(rb->n, sizeof(char *));
	int i, err;

	if (!cols)
		return -ENOMEM;
	for (i = 0; i < rb->n; i++)
		cols[i] = rb->e[i].key;
	err = hm_writer_header(&r->w, cols, rb->n);
	free(cols);
	return err;
}

/* One row.  -ENOENT when the cgroup is gone, -EIO when writing failed. */
int hm_rec_row(struct hm_rec *r)
{
	struct rowbuf rb = { 0 };
	const char **vals = NULL;
	int i, j, err;

	err = gather(r, &rb);
	if (!err && !r->rows)
		err = first_row(r, &rb);
	if (!err) {
		vals = calloc(r->w.ncols, sizeof(char *));
		if (!vals)
			err = -ENOMEM;
	}
	for (i = 0; !err && i < r->w.ncols; i++) {
		/* Same order as the first row, unless keys came or went. */
		j = i < rb.n && !strcmp(rb.e[i].key, r->w.cols[i]) ? i : -1;
		for (int k = 0; j < 0 && k < rb.n; k++)
			if (!strcmp(rb.e[k].key, r->w.cols[i]))
				j = k;
		vals[i] = j >= 0 && rb.has[j] ? rb.e[j].val : NULL;
	}
	if (!err)
		err = hm_writer_row(&r->w, vals);
	if (err == -EIO)
		hm_err("cannot write the record%s%s: %s", r->path[0] ? " " : "",
		       r->path, strerror(errno));
	r->rows += !err;
	free(vals);
	rb_free(&rb);
	return err;
}

/* Close; @discard removes a file this record created. */
void hm_rec_close(struct hm_rec *r, bool discard)
{
	if (r->stat_fd >= 0)
		close(r->stat_fd);
	if (r->vmstat_fd >= 0)
		close(r->vmstat_fd);
	r->stat_fd = -1;
	r->vmstat_fd = -1;
	hm_kthreads_close(&r->kt);
	if (r->w.f && r->w.f != stdout)
		fclose(r->w.f);
	else if (r->w.f)
		fflush(stdout);
	r->w.f = NULL;
	if (discard && r->created)
		unlink(r->path);
	hm_writer_free(&r->w);
}
