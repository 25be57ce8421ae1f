// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): the table of /sys/kernel/mm/htmm/ tunables, their checks, and
 * writing a set of them in an order the kernel's pair rules accept.
 *
 * The table is Documentation/admin-guide/mm/htmm.rst's "Tunables" table
 * (and mm/htmm/sysfs.c).  "Defaults follow the MEMTIS prototype", says the
 * guide, and it lists no other MEMTIS values, so --preset memtis writes
 * these defaults; it leaves out the two tier latencies, which are facts of
 * the machine (firmware HMAT or tierbench), not policy.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htmm.h"

#define INT_MAX_ 2147483647ULL

static const char *const w_onoff[] = { "disabled", "enabled", NULL };
static const char *const w_sampler[] = { "auto", "pebs", "abit", "inject",
					 NULL };
static const char *const w_event[] = { "pebs", "sw-page-faults", NULL };
static const char *const w_ccow[] = { "never", "always", "htmm", NULL };

#define NUM(n, d, lo, hi, m)	{ n, d, lo, hi, NULL, m, true }
#define WORD(n, d, w, m)	{ n, d, 0, 0, w, m, true }
#define FACT(n, d, lo, hi, m)	{ n, d, lo, hi, NULL, m, false }
/* CCoW's (CONFIG_HTMM_CCOW), not MEMTIS's: left out of the preset, as FACT. */
#define CNUM(n, d, lo, hi, m)	FACT(n, d, lo, hi, m)
#define CWORD(n, d, w, m)	{ n, d, 0, 0, w, m, false }

const struct hm_tunable hm_tunables[] = {
	NUM("htmm_sample_period", "199", 1, INT_MAX_,
	    "LLC-miss loads per PEBS sample (>=128 with htmm_perf_event=pebs)"),
	NUM("htmm_inst_sample_period", "100007", 1, INT_MAX_,
	    "stores per PEBS sample (>=128 with htmm_perf_event=pebs)"),
	NUM("htmm_thres_hot", "1", 0, 15, "lowest histogram bin that is hot"),
	NUM("htmm_split_period", "2", 1, 1000,
	    "coolings between two split rounds"),
	NUM("htmm_adaptation_period", "100000", 1, INT_MAX_,
	    "samples between threshold updates"),
	NUM("htmm_cooling_period", "2000000", 64, INT_MAX_,
	    "samples between two coolings"),
	NUM("htmm_mode", "2", 0, 2,
	    "0 classify only, 1 migrate whole pages, 2 also split skewed THPs"),
	NUM("htmm_demotion_period_in_ms", "500", 10, 60000,
	    "kmigraterd demotion period"),
	NUM("htmm_promotion_period_in_ms", "500", 10, 60000,
	    "kmigraterd promotion period"),
	NUM("htmm_gamma", "4", 0, 10, "split aggressiveness, in tenths"),
	NUM("ksampled_soft_cpu_quota", "30", 0, 1000,
	    "sampler CPU budget, per mille of one CPU (0: no control)"),
	NUM("htmm_thres_split", "2", 0, 15,
	    "lowest skew class that may be split (0: never split)"),
	NUM("htmm_nowarm", "0", 0, 1, "1: no warm set below the hot set"),
	WORD("htmm_cxl_mode", "disabled", w_onoff,
	     "enabled: CPU-less memory nodes are the slow tier"),
	WORD("htmm_sampler", "auto", w_sampler, "sample source"),
	WORD("htmm_perf_event", "pebs", w_event,
	     "what the perf source counts (sw-page-faults: testing)"),
	NUM("htmm_abit_interval_ms", "1000", 10, 60000,
	    "time between the starts of two Accessed-bit scans"),
	NUM("htmm_abit_rate_mb", "4096", 1, 1048576,
	    "Accessed-bit scan pace, MiB of 4 KiB PTEs per second"),
	NUM("htmm_abit_window_us", "0", 0, 100000,
	    "Accessed-bit test window, us (0: since the last visit)"),
	NUM("htmm_migrate_rate_mb", "1024", 1, 1048576,
	    "migration limit per node, MiB/s"),
	NUM("htmm_promotion_watermark", "20", 0, 500,
	    "per mille of a node budget kept free by promotion"),
	NUM("htmm_demotion_watermark", "10", 0, 500,
	    "per mille of a node budget demotion goes below (<= promotion's)"),
	NUM("htmm_settle_ms", "10000", 0, 600000,
	    "a folio htmm moved stays this long"),
	FACT("htmm_fast_latency_ns", "100", 1, 999999,
	     "fast tier read latency (or HMAT's), below the slow one"),
	FACT("htmm_slow_latency_ns", "250", 2, 1000000,
	     "slow tier read latency (or HMAT's), above the fast one"),
	NUM("htmm_split_cooldown_ms", "300000", 0, 3600000,
	    "khugepaged leaves a range htmm split alone this long"),
	CWORD("htmm_ccow_enabled", "never", w_ccow,
	      "CCoW for no process, every process, or htmm cgroups'"),
	CNUM("htmm_ccow_region_kb", "2048", 64, 2048,
	     "CCoW region size, KiB (a power of two)"),
	CNUM("htmm_ccow_threshold", "80", 0, 100,
	     "per cent of a region written before a fault copies the rest"),
	CNUM("htmm_ccow_max_sync_kb", "2048", 0, 2048,
	     "KiB a CoW fault copies at most; a worker copies the rest"),
	CNUM("htmm_ccow_huge", "1", 0, 1,
	     "1: a whole 2 MiB region is copied as one huge page"),
};

const int hm_nr_tunables = ARRAY_SIZE(hm_tunables);

const struct hm_tunable *hm_tunable_find(const char *name)
{
	int i;

	for (i = 0; i < hm_nr_tunables; i++)
		if (!strcmp(hm_tunables[i].name, name))
			return &hm_tunables[i];
	return NULL;
}

/* 0 if @value is one the kernel takes for @t (its own range or words). */
int hm_tunable_check(const struct hm_tunable *t, const char *value)
{
	unsigned long long v;
	int i, err;

	if (t->words) {
		for (i = 0; t->words[i]; i++)
			if (!strcmp(t->words[i], value))
				return 0;
		return -EINVAL;
	}
	err = hm_parse_ull(value, t->max, &v);
	if (err)
		return err;
	return v < t->min ? -ERANGE : 0;
}

/* "1..15", "auto, pebs, abit, inject". */
void hm_tunable_range(const struct hm_tunable *t, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	if (!t->words) {
		if (t->max == INT_MAX_)
			snprintf(buf, len, "%llu..2^31-1", t->min);
		else
			snprintf(buf, len, "%llu..%llu", t->min, t->max);
		return;
	}
	buf[0] = '\0';
	for (i = 0; t->words[i] && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s", i ? "," : "",
				 t->words[i]);
}

/* --sampler S and --mode M as TUNABLE=VALUE; modes also by name. */
int hm_alias_set(const char *opt, const char *arg, struct hm_set *set)
{
	static const char *const modes[] = { "classify", "migrate", "split" };
	size_t i;

	if (hm_strscpy(set->value, arg, sizeof(set->value)) < 0)
		return -EINVAL;
	if (!strcmp(opt, "sampler")) {
		hm_strscpy(set->name, "htmm_sampler", sizeof(set->name));
		return 0;
	}
	hm_strscpy(set->name, "htmm_mode", sizeof(set->name));
	for (i = 0; i < ARRAY_SIZE(modes); i++)
		if (!strcmp(arg, modes[i]))
			snprintf(set->value, sizeof(set->value), "%zu", i);
	return 0;
}

static const char *final_value(const struct hm_tval *tv, int n,
			       const struct hm_kvset *cur, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(tv[i].name, name))
			return tv[i].want;
	return hm_kv_get(cur, name);
}

static long long final_num(const struct hm_tval *tv, int n,
			   const struct hm_kvset *cur, const char *name)
{
	const char *v = final_value(tv, n, cur, name);
	long long r;

	return v && !hm_value_num(v, &r) ? r : -1;
}

/*
 * The rules between tunables (sysfs.c) for the values after the change:
 * checked before anything is written.  Returns 0 or -EINVAL (said why).
 */
int hm_tvals_check(const struct hm_tval *tv, int n, const struct hm_kvset *cur)
{
	long long fast = final_num(tv, n, cur, "htmm_fast_latency_ns");
	long long slow = final_num(tv, n, cur, "htmm_slow_latency_ns");
	long long pw = final_num(tv, n, cur, "htmm_promotion_watermark");
	long long dw = final_num(tv, n, cur, "htmm_demotion_watermark");
	long long sp = final_num(tv, n, cur, "htmm_sample_period");
	long long ip = final_num(tv, n, cur, "htmm_inst_sample_period");
	const char *ev = final_value(tv, n, cur, "htmm_perf_event");

	if (fast >= 0 && slow >= 0 && fast >= slow) {
		hm_err("htmm_fast_latency_ns (%lld) must stay below htmm_slow_latency_ns (%lld)",
		       fast, slow);
		return -EINVAL;
	}
	if (pw >= 0 && dw >= 0 && dw > pw) {
		hm_err("htmm_demotion_watermark (%lld) must stay at or below htmm_promotion_watermark (%lld)",
		       dw, pw);
		return -EINVAL;
	}
	if (ev && !strcmp(ev, "pebs") &&
	    ((sp >= 0 && sp < 128) || (ip >= 0 && ip < 128))) {
		hm_err("sample periods below 128 need htmm_perf_event=sw-page-faults");
		return -EINVAL;
	}
	return 0;
}

static int tunable_file(char *buf, size_t len, const char *name)
{
	if (hm_path(buf, len, "/sys/kernel/mm/htmm/%s", name)) {
		hm_err("path too long for tunable %s", name);
		return -ENAMETOOLONG;
	}
	return 0;
}

/*
 * Write each pending value (@val[i] where @pending[i]); a write the kernel
 * refuses for now (a pair rule) is tried again after the others, until a
 * pass makes no progress.  Returns 0 or the first error of the last pass.
 */
static int write_passes(char (*names)[HM_VAL], char (*val)[HM_VAL],
			bool *pending, int n)
{
	char path[HM_PATH];
	int i, err, first, progress;

	do {
		progress = 0;
		first = 0;
		for (i = 0; i < n; i++) {
			if (!pending[i])
				continue;
			err = tunable_file(path, sizeof(path), names[i]);
			if (!err)
				err = hm_write(path, val[i]);
			if (!err) {
				pending[i] = false;
				progress = 1;
			} else if (!first) {
				first = err;
			}
		}
	} while (progress && first);
	return first;
}

static int tv_forward(struct hm_tval *tv, int n)
{
	char (*names)[HM_VAL] = calloc(n + 1, HM_VAL);
	char (*val)[HM_VAL] = calloc(n + 1, HM_VAL);
	bool *pending = calloc(n + 1, sizeof(bool));
	int i, err = -ENOMEM;

	if (names && val && pending) {
		for (i = 0; i < n; i++) {
			hm_strscpy(names[i], tv[i].name, HM_VAL);
			hm_strscpy(val[i], tv[i].want, HM_VAL);
			pending[i] = !tv[i].done;
		}
		err = write_passes(names, val, pending, n);
		for (i = 0; i < n; i++) {
			if (!pending[i])
				tv[i].done = true;
			else if (err)
				hm_err("cannot write %s to %s: %s", tv[i].want,
				       tv[i].name, strerror(-err));
		}
	}
	free(names);
	free(val);
	free(pending);
	return err;
}

/*
 * Put back the old value of every tunable written (tv[i].done), unless
 * someone else changed it since: then theirs stays, with a warning.
 */
static int tv_restore(struct hm_tval *tv, int n)
{
	char (*names)[HM_VAL] = calloc(n + 1, HM_VAL);
	char (*val)[HM_VAL] = calloc(n + 1, HM_VAL);
	bool *pending = calloc(n + 1, sizeof(bool));
	char path[HM_PATH], cur[HM_VAL];
	int i, err = -ENOMEM;

	if (names && val && pending) {
		for (i = 0; i < n; i++) {
			hm_strscpy(names[i], tv[i].name, HM_VAL);
			hm_strscpy(val[i], tv[i].old, HM_VAL);
			pending[i] = tv[i].done;
			if (!pending[i] || tunable_file(path, sizeof(path), tv[i].name) ||
			    hm_read(path, cur, sizeof(cur)) < 0 ||
			    !strcmp(cur, tv[i].want))
				continue;
			hm_warn("%s is %s now, not the %s htmm set: left as it is",
				tv[i].name, cur, tv[i].want);
			pending[i] = false;
			tv[i].done = false;
		}
		err = write_passes(names, val, pending, n);
		for (i = 0; i < n; i++) {
			if (pending[i])
				hm_err("cannot restore %s to %s", tv[i].name, tv[i].old);
			else
				tv[i].done = false;
		}
	}
	free(names);
	free(val);
	free(pending);
	return err;
}

/* Write the wanted values, or (@restore) put the old ones back. */
int hm_tvals_write(struct hm_tval *tv, int n, bool restore)
{
	if (!n)
		return 0;
	return restore ? tv_restore(tv, n) : tv_forward(tv, n);
}

/* Every file of /sys/kernel/mm/htmm/ with its value. */
int hm_tunables_read(struct hm_kvset *cur)
{
	char dir[HM_PATH], path[HM_PATH], val[HM_VAL], line[2 * HM_VAL + 2];
	struct dirent *de;
	DIR *d;
	char *text = NULL;
	size_t len = 0;
	int r;

	if (hm_path(dir, sizeof(dir), "/sys/kernel/mm/htmm"))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *nt;
		size_t n;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= HM_VAL ||
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(path) || hm_isdir(path) ||
		    hm_read(path, val, sizeof(val)) < 0)
			continue;
		snprintf(line, sizeof(line), "%s %s\n", de->d_name, val);
		n = strlen(line);
		nt = realloc(text, len + n + 1);
		if (!nt)
			break;
		text = nt;
		memcpy(text + len, line, n + 1);
		len += n;
	}
	closedir(d);
	r = hm_kv_parse(cur, text ? text : "", NULL);
	free(text);
	return r;
}
