// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): the figures of "htmm report", from a record loaded as a table.
 * No system access.
 *
 * Time to X% of the hot set in the fast tier, estimated from the kernel's
 * own classification in memory.htmm_stat (the record carries its columns
 * as they are; hot_fast_pct is derived here, per row, not recorded):
 *
 *   hot set (4 KiB pages)  = sum of hist_<B> for B >= hot_threshold
 *   not yet in fast tier  ~= promotion_queue_hot_pages
 *   hot_fast_pct           = 100 * (1 - min(1, queue / hot set))
 *
 * undefined where hot_threshold is none, a column is missing or the hot
 * set is empty.  A hot folio on the slow tier is queued when it is
 * sampled; entries the full queue dropped, and hot folios not sampled
 * since they went to the slow tier, are not counted.  tX is the time from
 * the first row to the first row where hot_fast_pct >= X.  It also gives
 * the same times for the cgroup's promotions (X% of the promotions of the
 * whole record), and the fast-tier residency (all data, hot or not).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <string.h>

#include "htmm.h"

const int hm_report_pct[3] = { 50, 90, 95 };

static double cell(const struct hm_table *t, int row, int col)
{
	return hm_table_get(t, row, col);
}

/* Column @col's change from the previous row per second (NAN if unknown). */
double hm_table_rate(const struct hm_table *t, int row, int col)
{
	int tc = hm_table_col(t, "time");
	double dt, dv;

	if (row < 1 || tc < 0)
		return NAN;
	dt = cell(t, row, tc) - cell(t, row - 1, tc);
	dv = cell(t, row, col) - cell(t, row - 1, col);
	if (!(dt > 0) || isnan(dv))
		return NAN;
	return dv / dt;
}

/*
 * Columns "<thread>_cpu_ms": a kernel thread's CPU time; htmm's own are
 * ksamplingd's and kmigraterd<N>'s, the others come from --kthread.
 */
bool hm_is_cpu_col(const char *name)
{
	size_t n = strlen(name);

	return n > 7 && !strcmp(name + n - 7, "_cpu_ms");
}

bool hm_is_htmm_cpu_col(const char *name)
{
	return hm_is_cpu_col(name) && (!strncmp(name, "ksamplingd_", 11) ||
				       !strncmp(name, "kmigraterd", 10));
}

/* The first row's time at which column @col reaches @level (-1: never). */
static double time_to(const struct hm_table *t, int col, double level,
		      double base)
{
	int tc = hm_table_col(t, "time"), i;

	for (i = 0; i < t->nrows; i++)
		if (cell(t, i, col) - base >= level)
			return cell(t, i, tc) - cell(t, 0, tc);
	return -1;
}

/* The columns hot_fast_pct needs; false if the record lacks one. */
static bool hot_cols(const struct hm_table *t, int *thr, int *queue,
		     int hist[HM_NR_BINS])
{
	char name[16];
	int b;

	*thr = hm_table_col(t, "hot_threshold");
	*queue = hm_table_col(t, "promotion_queue_hot_pages");
	for (b = 0; b < HM_NR_BINS; b++) {
		snprintf(name, sizeof(name), "hist_%d", b);
		hist[b] = hm_table_col(t, name);
		if (hist[b] < 0)
			return false;
	}
	return *thr >= 0 && *queue >= 0;
}

/**
 * hm_hot_fast_pct - A row's estimated share of the hot set in the fast tier.
 * @t: The record.
 * @row: The row.
 * @pages: Set to the hot set in 4 KiB pages (0 when undefined); may be NULL.
 *
 * Return: hot_fast_pct in percent, or NAN where it is undefined: no such
 * columns, hot_threshold none (missing) or out of range, a missing value,
 * an empty hot set.
 */
double hm_hot_fast_pct(const struct hm_table *t, int row, double *pages)
{
	int thr, queue, hist[HM_NR_BINS], b;
	double hot = 0, q, th;

	if (pages)
		*pages = 0;
	if (!hot_cols(t, &thr, &queue, hist))
		return NAN;
	th = cell(t, row, thr);
	q = cell(t, row, queue);
	if (!(th >= 0 && th < HM_NR_BINS) || th != (int)th || !(q >= 0))
		return NAN;
	for (b = (int)th; b < HM_NR_BINS; b++)
		hot += cell(t, row, hist[b]);	/* NAN stays NAN */
	if (!(hot > 0))
		return NAN;
	if (pages)
		*pages = hot;
	/* Multiplied first: exact where the share is a whole percent. */
	return 100 * (hot - fmin(q, hot)) / hot;
}

static void hot_figures(const struct hm_table *t, struct hm_report *r)
{
	int tc = hm_table_col(t, "time"), thr, queue, hist[HM_NR_BINS], i, k;
	double pct, pages, ti;

	r->hot_first_t = -1;
	for (k = 0; k < 3; k++) {
		r->t_hot[k] = -1;
		r->t_hot_stay[k] = -1;
	}
	r->have_hot = hot_cols(t, &thr, &queue, hist);
	for (i = 0; r->have_hot && i < t->nrows; i++) {
		pct = hm_hot_fast_pct(t, i, &pages);
		if (isnan(pct))
			continue;
		ti = cell(t, i, tc) - cell(t, 0, tc);
		if (!r->hot_rows++)
			r->hot_first_t = ti;
		for (k = 0; k < 3; k++) {
			if (r->t_hot[k] < 0 && pct >= hm_report_pct[k])
				r->t_hot[k] = ti;
			if (pct < hm_report_pct[k])
				r->t_hot_stay[k] = -1;
			else if (r->t_hot_stay[k] < 0)
				r->t_hot_stay[k] = ti;
		}
		r->hot_last_t = ti;
		r->hot_last_pct = pct;
		r->hot_last_pages = pages;
	}
}

static void fast_figures(const struct hm_table *t, struct hm_report *r)
{
	int c = hm_table_col(t, "resident_fast"), tc = hm_table_col(t, "time");
	int i;
	double v;

	if (c < 0 || !t->nrows)
		return;
	r->have_fast = true;
	r->fast_first = cell(t, 0, c);
	r->fast_final = cell(t, t->nrows - 1, c);
	for (i = 0; i < t->nrows; i++) {
		v = cell(t, i, c);
		if (v > r->fast_peak) {
			r->fast_peak = v;
			r->fast_peak_t = cell(t, i, tc) - cell(t, 0, tc);
		}
	}
}

/* A counter's growth over the record: last valid minus first valid. */
static bool growth(const struct hm_table *t, const char *name, double *first,
		   double *d)
{
	int c = hm_table_col(t, name), i, a = -1, b = -1;

	if (c < 0)
		return false;
	for (i = 0; i < t->nrows; i++) {
		if (isnan(cell(t, i, c)))
			continue;
		if (a < 0)
			a = i;
		b = i;
	}
	if (a < 0)
		return false;
	*first = cell(t, a, c);
	*d = cell(t, b, c) - *first;
	return true;
}

static void migration_figures(const struct hm_table *t, struct hm_report *r)
{
	double p0 = 0, d0 = 0;
	int k;

	r->have_cg_mig = growth(t, "promoted", &p0, &r->promoted) &&
			 growth(t, "demoted", &d0, &r->demoted);
	r->have_vm_mig = growth(t, "htmm_nr_promoted", &d0, &r->vm_promoted) &&
			 growth(t, "htmm_nr_demoted", &d0, &r->vm_demoted);
	for (k = 0; k < 3; k++)
		r->t_prom[k] = -1;
	if (!r->have_cg_mig || !(r->promoted > 0))
		return;
	for (k = 0; k < 3; k++)
		r->t_prom[k] = time_to(t, hm_table_col(t, "promoted"),
				       r->promoted * hm_report_pct[k] / 100, p0);
}

/*
 * A thread's CPU ms in one interval.  The counter starts again at 0 when
 * htmm stops and restarts its threads: then the new value is the delta.
 */
static double cpu_delta(const struct hm_table *t, int row, int col)
{
	double a = cell(t, row - 1, col), b = cell(t, row, col);

	if (isnan(b))
		return 0;
	if (isnan(a) || b < a)
		return isnan(a) ? 0 : b;
	return b - a;
}

static void thread_figures(const struct hm_table *t, int c,
			   struct hm_cpu_stat *s, double duration)
{
	int tc = hm_table_col(t, "time"), i;
	double dt, d, sum = 0;

	snprintf(s->name, sizeof(s->name), "%.*s",
		 (int)(strlen(t->cols[c]) - 7), t->cols[c]);
	for (i = 1; i < t->nrows; i++) {
		dt = cell(t, i, tc) - cell(t, i - 1, tc);
		d = cpu_delta(t, i, c);
		sum += d;
		if (dt > 0 && d / dt > s->peak)
			s->peak = d / dt;
	}
	s->mean = duration > 0 ? sum / duration : 0;
}

/*
 * CPU ms per second of each thread recorded, and of all htmm's threads
 * together ("all" leaves out the --kthread ones).
 */
static void cpu_figures(const struct hm_table *t, struct hm_report *r)
{
	int tc = hm_table_col(t, "time"), c, i;
	double dt, sum;

	for (c = 0; c < t->ncols && r->nthreads < HM_REPORT_THREADS; c++) {
		if (!hm_is_cpu_col(t->cols[c]))
			continue;
		thread_figures(t, c, &r->thr[r->nthreads], r->duration);
		if (hm_is_htmm_cpu_col(t->cols[c]))
			r->all.mean += r->thr[r->nthreads].mean;
		r->nthreads++;
	}
	hm_strscpy(r->all.name, "all", sizeof(r->all.name));
	for (i = 1; i < t->nrows; i++) {
		dt = cell(t, i, tc) - cell(t, i - 1, tc);
		if (!(dt > 0))
			continue;
		for (c = 0, sum = 0; c < t->ncols; c++)
			if (hm_is_htmm_cpu_col(t->cols[c]))
				sum += cpu_delta(t, i, c);
		if (sum / dt > r->all.peak)
			r->all.peak = sum / dt;
	}
}

/* Everything "htmm report" prints.  -EINVAL without a time column. */
int hm_report_compute(const struct hm_table *t, struct hm_report *r)
{
	int tc = hm_table_col(t, "time");

	memset(r, 0, sizeof(*r));
	if (tc < 0) {
		hm_err("the record has no \"time\" column");
		return -EINVAL;
	}
	r->rows = t->nrows;
	if (t->nrows > 1)
		r->duration = cell(t, t->nrows - 1, tc) - cell(t, 0, tc);
	hot_figures(t, r);
	fast_figures(t, r);
	migration_figures(t, r);
	cpu_figures(t, r);
	return 0;
}
