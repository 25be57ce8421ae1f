// SPDX-License-Identifier: GPL-2.0
/* htmm(8): "htmm report": a record's summary, and its plot by gnuplot. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "htmm.h"

static const char report_usage[] =
"usage: htmm report FILE [--plot OUT.png]\n"
"\n"
"Summarise a record (htmm record, run --record):\n"
"  - t50/t90/t95: seconds from the first row to the first row where the\n"
"    hot set in the fast tier, hot_fast_pct, reaches 50/90/95%, to the\n"
"    first row from which it stays there to the end, and its last value.\n"
"    An estimate from the kernel's own classification, per\n"
"    row: hot set = sum of hist_<B> for B >= hot_threshold (4 KiB pages),\n"
"    hot_fast_pct = 100 * (1 - min(1, promotion_queue_hot_pages / hot set));\n"
"    undefined (skipped) while hot_threshold is none or the hot set empty.\n"
"    Dropped queue entries and hot folios not sampled since they went to\n"
"    the slow tier are not counted (see htmm(8)).\n"
"  - the same times for the cgroup's promotions, the fast-tier residency\n"
"    (all data, hot or cold), migrations, and the mean and peak CPU of\n"
"    ksamplingd, kmigraterd<N> and the threads of record --kthread\n"
"    (\"all\" sums htmm's own threads only).\n"
"\n"
"  -p, --plot OUT.png   also draw residency per node with hot_fast_pct,\n"
"                       migrations per second and kernel thread CPU with\n"
"                       gnuplot\n"
"  -h, --help           this help\n";

static const char *fmt_time(double t, char *buf, size_t len)
{
	if (t < 0)
		snprintf(buf, len, "never");
	else
		snprintf(buf, len, "%.1f s", t);
	return buf;
}

/* "<what>: t50 X, t90 Y, t95 Z" (scripts look for the word after t95). */
static void put_times(const char *what, const double *t)
{
	char b[3][32];
	int k;

	for (k = 0; k < 3; k++)
		fmt_time(t[k], b[k], sizeof(b[k]));
	printf("%s: t50 %s, t90 %s, t95 %s\n", what, b[0], b[1], b[2]);
}

static void print_hot(const struct hm_report *r)
{
	if (!r->have_hot) {
		printf("hot set in the fast tier: not in the record (needs hot_threshold, hist_0..hist_15, promotion_queue_hot_pages)\n");
		return;
	}
	put_times("hot set in the fast tier (estimate)", r->t_hot);
	if (!r->hot_rows) {
		printf("  no hot set in the record (hot_threshold none or no hot pages)\n");
		return;
	}
	put_times("  at or above it from then on", r->t_hot_stay);
	/* Rounded down: 100.0% only when nothing is queued. */
	printf("  first hot set at %.1f s; last %.1f%% of a %.1f MiB hot set in the fast tier at %.1f s (%d of %d rows with a hot set)\n",
	       r->hot_first_t, floor(r->hot_last_pct * 10) / 10,
	       r->hot_last_pages / 256,
	       r->hot_last_t, r->hot_rows, r->rows);
}

static void print_fast(const struct hm_report *r)
{
	char a[32], b[32], c[32];

	if (r->have_cg_mig)
		put_times("promotions (share of the record's total)", r->t_prom);
	if (!r->have_fast) {
		printf("fast-tier residency: not in the record\n");
		return;
	}
	hm_fmt_size((uint64_t)r->fast_first, a, sizeof(a));
	hm_fmt_size((uint64_t)r->fast_peak, b, sizeof(b));
	hm_fmt_size((uint64_t)r->fast_final, c, sizeof(c));
	printf("fast-tier residency (hot and cold): first %s, peak %s at %.1f s, last %s\n",
	       a, b, r->fast_peak_t, c);
}

static void print_migrations(const struct hm_report *r)
{
	char sz[32];

	if (r->have_cg_mig) {
		hm_fmt_size((uint64_t)((r->promoted + r->demoted) * 4096), sz,
			    sizeof(sz));
		printf("migrations (cgroup, base pages): promoted %.0f, demoted %.0f, total %.0f (%s)\n",
		       r->promoted, r->demoted, r->promoted + r->demoted, sz);
	}
	if (r->have_vm_mig)
		printf("migrations (system, vmstat): promoted %.0f, demoted %.0f, total %.0f\n",
		       r->vm_promoted, r->vm_demoted,
		       r->vm_promoted + r->vm_demoted);
	if (!r->have_cg_mig && !r->have_vm_mig)
		printf("migrations: not in the record\n");
}

static void print_cpu(const struct hm_report *r)
{
	int i;

	if (!r->nthreads) {
		printf("kernel thread CPU: not in the record\n");
		return;
	}
	printf("kernel thread CPU, ms per s (10 = 1%% of one CPU):\n");
	printf("  %-16s %8s %8s\n", "thread", "mean", "peak");
	for (i = 0; i < r->nthreads; i++)
		printf("  %-16s %8.1f %8.1f\n", r->thr[i].name, r->thr[i].mean,
		       r->thr[i].peak);
	printf("  %-16s %8.1f %8.1f\n", "all", r->all.mean, r->all.peak);
}

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[HM_PATH], *dirs, *d, *save;
	bool found = false;

	dirs = strdup(path ? path : "/usr/bin:/bin");
	for (d = strtok_r(dirs, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save))
		found = snprintf(buf, sizeof(buf), "%s/%s", d, prog) <
			(int)sizeof(buf) && !access(buf, X_OK);
	free(dirs);
	return found;
}

static void put_cell(FILE *g, double v)
{
	if (isnan(v))
		fputs(" ?", g);
	else
		fprintf(g, " %.6g", v);
}

/* Plotted: residency per node and thread CPU columns with some data. */
static bool plotted(const struct hm_table *t, int c, bool cpu)
{
	int i;

	if (cpu ? !hm_is_cpu_col(t->cols[c]) :
	    strncmp(t->cols[c], "resident_node", 13))
		return false;
	for (i = 0; i < t->nrows; i++)
		if (!isnan(hm_table_get(t, i, c)))
			return true;
	return false;
}

/* Counter @col's rate at @row (? if none); sets *@any when there is one. */
static void put_rate(FILE *g, const struct hm_table *t, int row, int col,
		     bool *any)
{
	double v = col < 0 ? NAN : hm_table_rate(t, row, col);

	*any |= !isnan(v);
	put_cell(g, v);
}

/* The columns of the data block, after time: see plot_data(). */
struct plot_cols {
	int nres, ncpu;
	bool hot;			/* hot_fast_pct defined in some row */
	bool mig;			/* a migration rate in some row */
};

static void plot_header(FILE *g, const struct hm_table *t,
			struct plot_cols *pc)
{
	int c;

	memset(pc, 0, sizeof(*pc));
	fprintf(g, "$data << EOD\ntime");
	for (c = 0; c < t->ncols; c++)
		if (plotted(t, c, false) && ++pc->nres)
			fprintf(g, " node%s", t->cols[c] + 13);
	fprintf(g, " hot_fast_pct promoted demoted");
	for (c = 0; c < t->ncols; c++)
		if (plotted(t, c, true) && ++pc->ncpu)
			fprintf(g, " %.*s", (int)strlen(t->cols[c]) - 7, t->cols[c]);
}

/*
 * The data block: time, residency per node (MiB), hot_fast_pct (%),
 * migrations/s, CPU.
 */
static void plot_data(FILE *g, const struct hm_table *t, struct plot_cols *pc)
{
	int tc = hm_table_col(t, "time"), c, i;
	int prc = hm_table_col(t, "promoted"), dc = hm_table_col(t, "demoted");
	double pct;

	if (prc < 0 || dc < 0) {
		prc = hm_table_col(t, "htmm_nr_promoted");
		dc = hm_table_col(t, "htmm_nr_demoted");
	}
	plot_header(g, t, pc);
	for (i = 0; i < t->nrows; i++) {
		fprintf(g, "\n%.3f", hm_table_get(t, i, tc) - hm_table_get(t, 0, tc));
		for (c = 0; c < t->ncols; c++)
			if (plotted(t, c, false))
				put_cell(g, hm_table_get(t, i, c) / 1048576);
		pct = hm_hot_fast_pct(t, i, NULL);
		pc->hot |= !isnan(pct);
		put_cell(g, pct);
		put_rate(g, t, i, prc, &pc->mig);
		put_rate(g, t, i, dc, &pc->mig);
		for (c = 0; c < t->ncols; c++)	/* < 0: a thread restarted */
			if (plotted(t, c, true))
				put_cell(g, hm_table_rate(t, i, c) < 0 ? NAN :
					 hm_table_rate(t, i, c));
	}
	fprintf(g, "\nEOD\n");
}

/*
 * Residency per node (MiB, y) and hot_fast_pct (0-100%, y2; column 2 +
 * nres), the latter only if it is defined somewhere (gnuplot fails on a
 * curve without points).
 */
static void plot_residency(FILE *g, const struct plot_cols *pc)
{
	fprintf(g, "set title 'residency per node, hot set in the fast tier'\n"
		"set ylabel 'MiB'\n");
	if (pc->hot)
		fprintf(g, "set y2range [0:100]\nset y2tics 0,20,100 format '%%g%%%%'\n"
			"set ytics nomirror\n");
	if (pc->nres)
		fprintf(g, "plot for [i=2:%d] $data using 1:i with lines lw 2",
			1 + pc->nres);
	else
		fprintf(g, "plot 0 title 'no residency data'");
	if (pc->hot)
		fprintf(g, ", $data using 1:%d axes x1y2 with lines lw 2 dt 2 lc rgb 'black'",
			2 + pc->nres);
	fprintf(g, "\nunset y2tics\nset ytics mirror\n");
}

static void plot_script(FILE *g, const struct hm_table *t, const char *in,
			const char *out)
{
	struct plot_cols pc;

	fprintf(g, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		"  set terminal pngcairo noenhanced size 1000,1200\n"
		"} else {\n  set terminal png noenhanced size 1000,1200\n}\n"
		"set output '%s'\nset datafile missing '?'\n", out);
	plot_data(g, t, &pc);
	fprintf(g, "set key autotitle columnhead outside right\n"
		"set grid\nset xlabel 'time (s)'\nset lmargin 12\nset rmargin 22\n"
		"set yrange [0:*]\n"
		"set multiplot layout 3,1 title 'htmm record %s'\n", in);
	plot_residency(g, &pc);
	fprintf(g, "set title 'migrations per second'\nset ylabel 'base pages/s'\n");
	if (pc.mig)
		fprintf(g, "plot for [i=%d:%d] $data using 1:i with lines lw 2\n",
			3 + pc.nres, 4 + pc.nres);
	else
		fprintf(g, "plot 0 title 'no migration data'\n");
	fprintf(g, "set title 'kernel thread CPU'\nset ylabel 'CPU ms/s'\n");
	if (pc.ncpu)
		fprintf(g, "plot for [i=%d:%d] $data using 1:i with lines lw 2\n",
			5 + pc.nres, 4 + pc.nres + pc.ncpu);
	else
		fprintf(g, "plot 0 title 'no thread data'\n");
	fprintf(g, "unset multiplot\n");
}

/* Three plots in one PNG, drawn by gnuplot (pngcairo, or png). */
static int run_gnuplot(const struct hm_table *t, const char *in, const char *out)
{
	FILE *g;
	int r;

	if (strpbrk(out, "'\"\n") || strpbrk(in, "'\"\n")) {
		hm_err("--plot: file names with quotes or newlines are not supported");
		return -EINVAL;
	}
	if (!in_path("gnuplot")) {
		hm_err("--plot needs gnuplot, which is not in PATH: install gnuplot-nox (Debian) or gnuplot");
		return -ENOENT;
	}
	signal(SIGPIPE, SIG_IGN);	/* gnuplot may stop reading early */
	unlink(out);
	g = popen("gnuplot", "w");
	if (!g) {
		hm_err("cannot run gnuplot: %s", strerror(errno));
		return -EIO;
	}
	plot_script(g, t, in, out);
	r = pclose(g);
	if (r || access(out, F_OK)) {
		hm_err("gnuplot failed (status %d): no %s", r, out);
		return -EIO;
	}
	printf("plot: %s\n", out);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "plot", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *out = NULL;
	struct hm_table t;
	struct hm_report r;
	int c, err;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(report_usage, stdout);
			return HM_EXIT_OK;
		}
		if (c != 'p') {
			hm_err("report: bad %s (see htmm report --help)",
			       argv[optind - 1]);
			return HM_EXIT_USAGE;
		}
		out = optarg;
	}
	if (optind != argc - 1) {
		hm_err("report: give one record FILE");
		return HM_EXIT_USAGE;
	}
	if (hm_table_load(argv[optind], &t))
		return HM_EXIT_FAIL;
	err = hm_report_compute(&t, &r);
	if (!err) {
		printf("record %s: %d rows over %.1f s\n", argv[optind], r.rows,
		       r.duration);
		print_hot(&r);
		print_fast(&r);
		print_migrations(&r);
		print_cpu(&r);
		if (out)
			err = run_gnuplot(&t, argv[optind], out);
	}
	hm_table_free(&t);
	return err ? HM_EXIT_FAIL : HM_EXIT_OK;
}
