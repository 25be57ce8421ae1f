// SPDX-License-Identifier: GPL-2.0
/*
 * htmm tunables in /sys/kernel/mm/htmm/.
 *
 * Every tunable is a fixture variant, so each (tunable, check) pair is its
 * own test. The "htmm_default" fixture is declared first so that all
 * default values are checked before any other test writes a tunable.
 */
#define _GNU_SOURCE
#include "htmm_util.h"	/* includes kselftest_harness.h */

static const char *const numeric_bad_inputs[] = {
	"abc", "", "-1", "1.5", "12abc", "99999999999999999999999",
};

/*
 * String tunables take one word out of a fixed list. Per tunable: the
 * words accepted and some inputs that must be rejected (NULL terminated).
 */
static const char *const cxl_mode_values[] = {
	"enabled", "disabled", NULL,
};

static const char *const cxl_mode_bad_inputs[] = {
	"", "enable", "1", "yes", "enabled disabled", NULL,
};

/*
 * "pebs" is refused without the PMU events (the test VM has none): that is
 * htmm_sample_test's pebs_refused_without_events.
 */
static const char *const sampler_values[] = {
	"auto", "abit", "inject", NULL,
};

static const char *const sampler_bad_inputs[] = {
	"", "abits", "1", "auto pebs", NULL,
};

static const char *const perf_event_values[] = {
	"pebs", "sw-page-faults", NULL,
};

static const char *const perf_event_bad_inputs[] = {
	"", "sw", "page-faults", NULL,
};

struct htmm_tunable {
	const char *name;
	bool is_string;
	bool def_from_fw;	/* the default may come from firmware */
	unsigned long long def, min, max;	/* numeric tunables */
	/* string tunables: default, accepted words, rejected inputs */
	const char *str_def;
	const char *const *values;
	const char *const *bad;
	/*
	 * A tunable checked against another one (the partner): the
	 * htmm_tunable tests first write @partner_val to the partner, a
	 * value that lets this tunable take its whole range.
	 */
	const char *partner;
	const char *partner_val;
};

/* Index of each tunable in htmm_tunables[] */
enum {
	T_HTMM_SAMPLE_PERIOD,
	T_HTMM_INST_SAMPLE_PERIOD,
	T_HTMM_THRES_HOT,
	T_HTMM_SPLIT_PERIOD,
	T_HTMM_ADAPTATION_PERIOD,
	T_HTMM_COOLING_PERIOD,
	T_HTMM_MODE,
	T_HTMM_DEMOTION_PERIOD_IN_MS,
	T_HTMM_PROMOTION_PERIOD_IN_MS,
	T_HTMM_GAMMA,
	T_KSAMPLED_SOFT_CPU_QUOTA,
	T_HTMM_THRES_SPLIT,
	T_HTMM_NOWARM,
	T_HTMM_ABIT_INTERVAL_MS,
	T_HTMM_ABIT_RATE_MB,
	T_HTMM_ABIT_WINDOW_US,
	T_HTMM_MIGRATE_RATE_MB,
	T_HTMM_PROMOTION_WATERMARK,
	T_HTMM_DEMOTION_WATERMARK,
	T_HTMM_SETTLE_MS,
	T_HTMM_FAST_LATENCY_NS,
	T_HTMM_SLOW_LATENCY_NS,
	T_HTMM_SPLIT_COOLDOWN_MS,
	T_HTMM_CXL_MODE,
	T_HTMM_SAMPLER,
	T_HTMM_PERF_EVENT,
	NR_TUNABLES
};

static const struct htmm_tunable htmm_tunables[NR_TUNABLES] = {
	/* numeric tunables: name, default, min, max */
	[T_HTMM_SAMPLE_PERIOD] = {
		.name = "htmm_sample_period",
		/* min with htmm_perf_event=pebs, the default */
		.def = 199, .min = 128, .max = 2147483647,
	},
	[T_HTMM_INST_SAMPLE_PERIOD] = {
		.name = "htmm_inst_sample_period",
		.def = 100007, .min = 128, .max = 2147483647,
	},
	[T_HTMM_THRES_HOT] = {
		.name = "htmm_thres_hot",
		.def = 1, .min = 0, .max = 15,
	},
	[T_HTMM_SPLIT_PERIOD] = {
		.name = "htmm_split_period",
		.def = 2, .min = 1, .max = 1000,
	},
	[T_HTMM_ADAPTATION_PERIOD] = {
		.name = "htmm_adaptation_period",
		.def = 100000, .min = 1, .max = 2147483647,
	},
	[T_HTMM_COOLING_PERIOD] = {
		.name = "htmm_cooling_period",
		.def = 2000000, .min = 64, .max = 2147483647,
	},
	[T_HTMM_MODE] = {
		.name = "htmm_mode",
		.def = 2, .min = 0, .max = 2,
	},
	[T_HTMM_DEMOTION_PERIOD_IN_MS] = {
		.name = "htmm_demotion_period_in_ms",
		.def = 500, .min = 10, .max = 60000,
	},
	[T_HTMM_PROMOTION_PERIOD_IN_MS] = {
		.name = "htmm_promotion_period_in_ms",
		.def = 500, .min = 10, .max = 60000,
	},
	[T_HTMM_GAMMA] = {
		.name = "htmm_gamma",
		.def = 4, .min = 0, .max = 10,
	},
	[T_KSAMPLED_SOFT_CPU_QUOTA] = {
		.name = "ksampled_soft_cpu_quota",
		.def = 30, .min = 0, .max = 1000,
	},
	[T_HTMM_THRES_SPLIT] = {
		.name = "htmm_thres_split",
		.def = 2, .min = 0, .max = 15,
	},
	[T_HTMM_NOWARM] = {
		.name = "htmm_nowarm",
		.def = 0, .min = 0, .max = 1,
	},
	[T_HTMM_ABIT_INTERVAL_MS] = {
		.name = "htmm_abit_interval_ms",
		.def = 1000, .min = 10, .max = 60000,
	},
	[T_HTMM_ABIT_RATE_MB] = {
		.name = "htmm_abit_rate_mb",
		.def = 4096, .min = 1, .max = 1048576,
	},
	[T_HTMM_ABIT_WINDOW_US] = {
		.name = "htmm_abit_window_us",
		.def = 0, .min = 0, .max = 100000,
	},
	[T_HTMM_MIGRATE_RATE_MB] = {
		.name = "htmm_migrate_rate_mb",
		.def = 1024, .min = 1, .max = 1048576,
	},
	[T_HTMM_PROMOTION_WATERMARK] = {
		.name = "htmm_promotion_watermark",
		.def = 20, .min = 0, .max = 500,
		.partner = "htmm_demotion_watermark", .partner_val = "0",
	},
	[T_HTMM_DEMOTION_WATERMARK] = {
		.name = "htmm_demotion_watermark",
		.def = 10, .min = 0, .max = 500,
		.partner = "htmm_promotion_watermark", .partner_val = "500",
	},
	[T_HTMM_SETTLE_MS] = {
		.name = "htmm_settle_ms",
		.def = 10000, .min = 0, .max = 600000,
	},
	/* Firmware (HMAT) latencies replace these defaults at boot. */
	[T_HTMM_FAST_LATENCY_NS] = {
		.name = "htmm_fast_latency_ns",
		.def = 100, .min = 1, .max = 999999, .def_from_fw = true,
		.partner = "htmm_slow_latency_ns", .partner_val = "1000000",
	},
	[T_HTMM_SLOW_LATENCY_NS] = {
		.name = "htmm_slow_latency_ns",
		.def = 250, .min = 2, .max = 1000000, .def_from_fw = true,
		.partner = "htmm_fast_latency_ns", .partner_val = "1",
	},
	[T_HTMM_SPLIT_COOLDOWN_MS] = {
		.name = "htmm_split_cooldown_ms",
		.def = 300000, .min = 0, .max = 3600000,
	},
	/* string tunables: name, default, accepted words, bad inputs */
	[T_HTMM_CXL_MODE] = {
		.name = "htmm_cxl_mode",
		.is_string = true, .str_def = "disabled",
		.values = cxl_mode_values, .bad = cxl_mode_bad_inputs,
	},
	/*
	 * Writing htmm_sampler or htmm_perf_event restarts ksamplingd if
	 * htmm is active; no cgroup enables htmm in this program.
	 */
	[T_HTMM_SAMPLER] = {
		.name = "htmm_sampler",
		.is_string = true, .str_def = "auto",
		.values = sampler_values, .bad = sampler_bad_inputs,
	},
	[T_HTMM_PERF_EVENT] = {
		.name = "htmm_perf_event",
		.is_string = true, .str_def = "pebs",
		.values = perf_event_values, .bad = perf_event_bad_inputs,
	},
};

static void tunable_path(char *buf, size_t size, const struct htmm_tunable *t)
{
	snprintf(buf, size, HTMM_SYSFS_DIR "/%s", t->name);
}

static bool htmm_sysfs_present(void)
{
	struct stat st;

	return !stat(HTMM_SYSFS_DIR, &st) && S_ISDIR(st.st_mode);
}

/* Expected file content of the default: "%u\n" or "string\n". */
static void default_text(char *buf, size_t size, const struct htmm_tunable *t)
{
	if (t->is_string)
		snprintf(buf, size, "%s\n", t->str_def);
	else
		snprintf(buf, size, "%llu\n", t->def);
}

/* ------------------------------------------------------------------ */
/* Directory listing                                                   */
/* ------------------------------------------------------------------ */

TEST(all_tunables_listed)
{
	bool found[ARRAY_SIZE(htmm_tunables)] = { false };
	struct dirent *de;
	unsigned int i;
	DIR *dir;

	if (!htmm_sysfs_present())
		SKIP(return, HTMM_SYSFS_DIR " not present (htmm not built in?)");

	dir = opendir(HTMM_SYSFS_DIR);
	ASSERT_NE(NULL, dir) TH_LOG("opendir: %s", strerror(errno));
	while ((de = readdir(dir)))
		for (i = 0; i < ARRAY_SIZE(htmm_tunables); i++)
			if (!strcmp(de->d_name, htmm_tunables[i].name))
				found[i] = true;
	closedir(dir);

	for (i = 0; i < ARRAY_SIZE(htmm_tunables); i++) {
		const char *name = htmm_tunables[i].name;

		EXPECT_TRUE(found[i]) TH_LOG("%s missing", name);
	}
}

/* ------------------------------------------------------------------ */
/* Defaults (run before anything writes a tunable)                     */
/* ------------------------------------------------------------------ */

FIXTURE(htmm_default) {
	char path[PATH_MAX];
};

FIXTURE_VARIANT(htmm_default) {
	const struct htmm_tunable *t;
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_sample_period) {
	.t = &htmm_tunables[T_HTMM_SAMPLE_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_inst_sample_period) {
	.t = &htmm_tunables[T_HTMM_INST_SAMPLE_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_thres_hot) {
	.t = &htmm_tunables[T_HTMM_THRES_HOT],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_split_period) {
	.t = &htmm_tunables[T_HTMM_SPLIT_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_adaptation_period) {
	.t = &htmm_tunables[T_HTMM_ADAPTATION_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_cooling_period) {
	.t = &htmm_tunables[T_HTMM_COOLING_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_mode) {
	.t = &htmm_tunables[T_HTMM_MODE],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_demotion_period_in_ms) {
	.t = &htmm_tunables[T_HTMM_DEMOTION_PERIOD_IN_MS],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_promotion_period_in_ms) {
	.t = &htmm_tunables[T_HTMM_PROMOTION_PERIOD_IN_MS],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_gamma) {
	.t = &htmm_tunables[T_HTMM_GAMMA],
};

FIXTURE_VARIANT_ADD(htmm_default, ksampled_soft_cpu_quota) {
	.t = &htmm_tunables[T_KSAMPLED_SOFT_CPU_QUOTA],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_thres_split) {
	.t = &htmm_tunables[T_HTMM_THRES_SPLIT],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_nowarm) {
	.t = &htmm_tunables[T_HTMM_NOWARM],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_abit_interval_ms) {
	.t = &htmm_tunables[T_HTMM_ABIT_INTERVAL_MS],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_abit_rate_mb) {
	.t = &htmm_tunables[T_HTMM_ABIT_RATE_MB],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_abit_window_us) {
	.t = &htmm_tunables[T_HTMM_ABIT_WINDOW_US],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_migrate_rate_mb) {
	.t = &htmm_tunables[T_HTMM_MIGRATE_RATE_MB],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_promotion_watermark) {
	.t = &htmm_tunables[T_HTMM_PROMOTION_WATERMARK],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_demotion_watermark) {
	.t = &htmm_tunables[T_HTMM_DEMOTION_WATERMARK],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_settle_ms) {
	.t = &htmm_tunables[T_HTMM_SETTLE_MS],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_fast_latency_ns) {
	.t = &htmm_tunables[T_HTMM_FAST_LATENCY_NS],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_slow_latency_ns) {
	.t = &htmm_tunables[T_HTMM_SLOW_LATENCY_NS],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_split_cooldown_ms) {
	.t = &htmm_tunables[T_HTMM_SPLIT_COOLDOWN_MS],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_cxl_mode) {
	.t = &htmm_tunables[T_HTMM_CXL_MODE],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_sampler) {
	.t = &htmm_tunables[T_HTMM_SAMPLER],
};

FIXTURE_VARIANT_ADD(htmm_default, htmm_perf_event) {
	.t = &htmm_tunables[T_HTMM_PERF_EVENT],
};

FIXTURE_SETUP(htmm_default)
{
	if (!htmm_sysfs_present())
		SKIP(return, HTMM_SYSFS_DIR " not present (htmm not built in?)");
	tunable_path(self->path, sizeof(self->path), variant->t);
}

FIXTURE_TEARDOWN(htmm_default)
{
}

TEST_F(htmm_default, value)
{
	char want[64], buf[256];
	ssize_t n;

	default_text(want, sizeof(want), variant->t);
	n = htmm_read_file(self->path, buf, sizeof(buf));
	ASSERT_LE(0, n) TH_LOG("read %s: %s", self->path, strerror(-n));
	if (variant->t->def_from_fw) {
		unsigned long long v = 0;

		/* The built-in default, or what the firmware says. */
		ASSERT_EQ(0, htmm_parse_ull(buf, &v)) TH_LOG("'%s'", buf);
		EXPECT_LE(variant->t->min, v);
		EXPECT_GE(variant->t->max, v);
		TH_LOG("%s: %llu (built-in default %llu)", variant->t->name,
		       v, variant->t->def);
		return;
	}
	EXPECT_CONTENT(want, buf, "default");
}

/* ------------------------------------------------------------------ */
/* Round trip, bad input, permissions                                  */
/* ------------------------------------------------------------------ */

FIXTURE(htmm_tunable) {
	char path[PATH_MAX];
	char saved[256];	/* value before the test, restored in teardown */
	bool have_saved;
	char partner_path[PATH_MAX];
	char partner_saved[256];	/* restored after the tunable */
	bool have_partner;
};

FIXTURE_VARIANT(htmm_tunable) {
	const struct htmm_tunable *t;
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_sample_period) {
	.t = &htmm_tunables[T_HTMM_SAMPLE_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_inst_sample_period) {
	.t = &htmm_tunables[T_HTMM_INST_SAMPLE_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_thres_hot) {
	.t = &htmm_tunables[T_HTMM_THRES_HOT],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_split_period) {
	.t = &htmm_tunables[T_HTMM_SPLIT_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_adaptation_period) {
	.t = &htmm_tunables[T_HTMM_ADAPTATION_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_cooling_period) {
	.t = &htmm_tunables[T_HTMM_COOLING_PERIOD],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_mode) {
	.t = &htmm_tunables[T_HTMM_MODE],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_demotion_period_in_ms) {
	.t = &htmm_tunables[T_HTMM_DEMOTION_PERIOD_IN_MS],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_promotion_period_in_ms) {
	.t = &htmm_tunables[T_HTMM_PROMOTION_PERIOD_IN_MS],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_gamma) {
	.t = &htmm_tunables[T_HTMM_GAMMA],
};

FIXTURE_VARIANT_ADD(htmm_tunable, ksampled_soft_cpu_quota) {
	.t = &htmm_tunables[T_KSAMPLED_SOFT_CPU_QUOTA],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_thres_split) {
	.t = &htmm_tunables[T_HTMM_THRES_SPLIT],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_nowarm) {
	.t = &htmm_tunables[T_HTMM_NOWARM],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_abit_interval_ms) {
	.t = &htmm_tunables[T_HTMM_ABIT_INTERVAL_MS],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_abit_rate_mb) {
	.t = &htmm_tunables[T_HTMM_ABIT_RATE_MB],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_abit_window_us) {
	.t = &htmm_tunables[T_HTMM_ABIT_WINDOW_US],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_migrate_rate_mb) {
	.t = &htmm_tunables[T_HTMM_MIGRATE_RATE_MB],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_promotion_watermark) {
	.t = &htmm_tunables[T_HTMM_PROMOTION_WATERMARK],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_demotion_watermark) {
	.t = &htmm_tunables[T_HTMM_DEMOTION_WATERMARK],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_settle_ms) {
	.t = &htmm_tunables[T_HTMM_SETTLE_MS],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_fast_latency_ns) {
	.t = &htmm_tunables[T_HTMM_FAST_LATENCY_NS],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_slow_latency_ns) {
	.t = &htmm_tunables[T_HTMM_SLOW_LATENCY_NS],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_split_cooldown_ms) {
	.t = &htmm_tunables[T_HTMM_SPLIT_COOLDOWN_MS],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_cxl_mode) {
	.t = &htmm_tunables[T_HTMM_CXL_MODE],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_sampler) {
	.t = &htmm_tunables[T_HTMM_SAMPLER],
};

FIXTURE_VARIANT_ADD(htmm_tunable, htmm_perf_event) {
	.t = &htmm_tunables[T_HTMM_PERF_EVENT],
};

FIXTURE_SETUP(htmm_tunable)
{
	ssize_t n;

	if (!htmm_sysfs_present())
		SKIP(return, HTMM_SYSFS_DIR " not present (htmm not built in?)");
	tunable_path(self->path, sizeof(self->path), variant->t);
	n = htmm_read_file(self->path, self->saved, sizeof(self->saved));
	ASSERT_LE(0, n) TH_LOG("read %s: %s", self->path, strerror(-n));
	self->have_saved = true;
	if (!variant->t->partner)
		return;
	snprintf(self->partner_path, sizeof(self->partner_path),
		 HTMM_SYSFS_DIR "/%s", variant->t->partner);
	n = htmm_read_file(self->partner_path, self->partner_saved,
			   sizeof(self->partner_saved));
	ASSERT_LE(0, n) TH_LOG("read %s: %s", self->partner_path,
			       strerror(-n));
	self->have_partner = true;
	ASSERT_EQ(0, htmm_write_str(self->partner_path,
				    variant->t->partner_val))
		TH_LOG("%s <- %s", variant->t->partner, variant->t->partner_val);
}

FIXTURE_TEARDOWN(htmm_tunable)
{
	char buf[256];
	int err;

	if (!self->have_saved)
		return;
	err = htmm_write_str(self->path, self->saved);
	EXPECT_EQ(0, err) TH_LOG("restoring %s failed: %s", self->path,
				 strerror(-err));
	EXPECT_LE(0, htmm_read_file(self->path, buf, sizeof(buf)));
	EXPECT_CONTENT(self->saved, buf, "restored value");
	if (!self->have_partner)
		return;
	err = htmm_write_str(self->partner_path, self->partner_saved);
	EXPECT_EQ(0, err) TH_LOG("restoring %s failed: %s", self->partner_path,
				 strerror(-err));
}

TEST_F(htmm_tunable, round_trip)
{
	const struct htmm_tunable *t = variant->t;
	char in[64], want[64];
	unsigned int i;

	if (t->is_string) {
		for (i = 0; t->values[i]; i++) {
			const char *v = t->values[i];

			snprintf(want, sizeof(want), "%s\n", v);
			/* without and with the trailing newline */
			htmm_expect_write_reads(_metadata, self->path, v, want);
			htmm_expect_write_reads(_metadata, self->path, want, want);
		}
		default_text(want, sizeof(want), t);
		htmm_expect_write_reads(_metadata, self->path, t->str_def, want);
		return;
	}

	/* min with a trailing newline, max without */
	snprintf(in, sizeof(in), "%llu\n", t->min);
	htmm_expect_write_reads(_metadata, self->path, in, in);
	snprintf(in, sizeof(in), "%llu", t->max);
	snprintf(want, sizeof(want), "%llu\n", t->max);
	htmm_expect_write_reads(_metadata, self->path, in, want);
	/* back to the default */
	snprintf(in, sizeof(in), "%llu", t->def);
	default_text(want, sizeof(want), t);
	htmm_expect_write_reads(_metadata, self->path, in, want);
}

TEST_F(htmm_tunable, bad_input)
{
	const struct htmm_tunable *t = variant->t;
	char old[256], in[64];
	unsigned int i;
	ssize_t n;

	n = htmm_read_file(self->path, old, sizeof(old));
	ASSERT_LE(0, n);

	if (t->is_string) {
		for (i = 0; t->bad[i]; i++)
			htmm_expect_bad_input(_metadata, self->path,
					      t->bad[i], old, true);
		return;
	}

	for (i = 0; i < ARRAY_SIZE(numeric_bad_inputs); i++)
		htmm_expect_bad_input(_metadata, self->path,
				      numeric_bad_inputs[i], old, true);
	if (t->min > 0) {
		snprintf(in, sizeof(in), "%llu", t->min - 1);
		htmm_expect_bad_input(_metadata, self->path, in, old, true);
	}
	snprintf(in, sizeof(in), "%llu", t->max + 1);
	htmm_expect_bad_input(_metadata, self->path, in, old, true);
}

TEST_F(htmm_tunable, permissions)
{
	htmm_expect_root_rw_file(_metadata, self->path);
}

/* ------------------------------------------------------------------ */
/* Rules between two tunables                                          */
/* ------------------------------------------------------------------ */

/* The tunables the rule tests write; saved and restored around each. */
static const char *const rule_tunables[] = {
	"htmm_fast_latency_ns", "htmm_slow_latency_ns",
	"htmm_promotion_watermark", "htmm_demotion_watermark",
	"htmm_sample_period", "htmm_inst_sample_period", "htmm_perf_event",
	"htmm_cooling_period", "htmm_adaptation_period",
};

#define NR_RULE_TUNABLES	ARRAY_SIZE(rule_tunables)

FIXTURE(htmm_rule) {
	char saved[NR_RULE_TUNABLES][64];
	bool have_saved;
};

FIXTURE_SETUP(htmm_rule)
{
	char path[PATH_MAX];
	unsigned int i;
	ssize_t n;

	if (!htmm_sysfs_present())
		SKIP(return, HTMM_SYSFS_DIR " not present (htmm not built in?)");
	for (i = 0; i < NR_RULE_TUNABLES; i++) {
		snprintf(path, sizeof(path), HTMM_SYSFS_DIR "/%s",
			 rule_tunables[i]);
		n = htmm_read_file(path, self->saved[i], sizeof(self->saved[i]));
		ASSERT_LE(0, n) TH_LOG("read %s: %s", path, strerror(-n));
	}
	self->have_saved = true;
}

/*
 * Restore the saved values.  A rule may refuse one of them until its
 * partner is back, so go round until every write went through.
 */
FIXTURE_TEARDOWN(htmm_rule)
{
	bool done[NR_RULE_TUNABLES] = { false };
	unsigned int i, round, left = NR_RULE_TUNABLES;

	if (!self->have_saved)
		return;
	for (round = 0; left && round < NR_RULE_TUNABLES; round++)
		for (i = 0; i < NR_RULE_TUNABLES; i++)
			if (!done[i] && !htmm_tunable_set(rule_tunables[i],
							  self->saved[i])) {
				done[i] = true;
				left--;
			}
	EXPECT_EQ(0U, left) TH_LOG("%u tunables not restored", left);
}

/* Write @val to a tunable: it must fail with EINVAL and leave @old. */
static void expect_refused(struct __test_metadata *_metadata,
			   const char *name, const char *val, const char *old)
{
	char path[PATH_MAX], want[64];

	snprintf(path, sizeof(path), HTMM_SYSFS_DIR "/%s", name);
	snprintf(want, sizeof(want), "%s\n", old);
	htmm_expect_rejected(_metadata, path, val, want, false);
}

/* Write @val to a tunable: it must be taken. */
static void expect_taken(struct __test_metadata *_metadata,
			 const char *name, const char *val)
{
	char path[PATH_MAX], want[64];

	snprintf(path, sizeof(path), HTMM_SYSFS_DIR "/%s", name);
	snprintf(want, sizeof(want), "%s\n", val);
	htmm_expect_write_reads(_metadata, path, val, want);
}

/* fast >= slow would turn splitting off: refused, from either file. */
TEST_F(htmm_rule, fast_latency_below_slow)
{
	expect_taken(_metadata, "htmm_fast_latency_ns", "1");
	expect_taken(_metadata, "htmm_slow_latency_ns", "300");
	expect_taken(_metadata, "htmm_fast_latency_ns", "100");

	expect_refused(_metadata, "htmm_fast_latency_ns", "300", "100");
	expect_refused(_metadata, "htmm_fast_latency_ns", "301", "100");
	expect_refused(_metadata, "htmm_fast_latency_ns", "999999", "100");
	expect_refused(_metadata, "htmm_slow_latency_ns", "100", "300");
	expect_refused(_metadata, "htmm_slow_latency_ns", "99", "300");
	expect_refused(_metadata, "htmm_slow_latency_ns", "2", "300");

	/* right next to each other is fine */
	expect_taken(_metadata, "htmm_fast_latency_ns", "299");
	expect_taken(_metadata, "htmm_fast_latency_ns", "100");
	expect_taken(_metadata, "htmm_slow_latency_ns", "101");
}

/* The demotion watermark may not go above the promotion watermark. */
TEST_F(htmm_rule, demotion_wmark_not_above_promotion)
{
	expect_taken(_metadata, "htmm_demotion_watermark", "0");
	expect_taken(_metadata, "htmm_promotion_watermark", "20");
	expect_taken(_metadata, "htmm_demotion_watermark", "10");

	expect_refused(_metadata, "htmm_demotion_watermark", "21", "10");
	expect_refused(_metadata, "htmm_demotion_watermark", "500", "10");
	expect_refused(_metadata, "htmm_promotion_watermark", "9", "20");
	expect_refused(_metadata, "htmm_promotion_watermark", "0", "20");

	/* equal is fine */
	expect_taken(_metadata, "htmm_demotion_watermark", "20");
	expect_taken(_metadata, "htmm_demotion_watermark", "10");
	expect_taken(_metadata, "htmm_promotion_watermark", "10");
}

/* PEBS periods of at least 128; software page faults take any. */
TEST_F(htmm_rule, sample_period_minimum)
{
	expect_taken(_metadata, "htmm_sample_period", "199");
	expect_taken(_metadata, "htmm_inst_sample_period", "100007");
	expect_taken(_metadata, "htmm_perf_event", "pebs");

	expect_refused(_metadata, "htmm_sample_period", "1", "199");
	expect_refused(_metadata, "htmm_sample_period", "127", "199");
	expect_refused(_metadata, "htmm_inst_sample_period", "1", "100007");
	expect_taken(_metadata, "htmm_sample_period", "128");
	expect_taken(_metadata, "htmm_inst_sample_period", "128");

	expect_taken(_metadata, "htmm_perf_event", "sw-page-faults");
	expect_taken(_metadata, "htmm_sample_period", "1");
	expect_taken(_metadata, "htmm_inst_sample_period", "1");
	/* not back to pebs while a period is below 128 */
	expect_refused(_metadata, "htmm_perf_event", "pebs", "sw-page-faults");
	expect_taken(_metadata, "htmm_sample_period", "199");
	expect_refused(_metadata, "htmm_perf_event", "pebs", "sw-page-faults");
	expect_taken(_metadata, "htmm_inst_sample_period", "100007");
	expect_taken(_metadata, "htmm_perf_event", "pebs");
}

/* Coolings closer than 64 samples apart are refused. */
TEST_F(htmm_rule, cooling_period_minimum)
{
	char path[PATH_MAX], old[64];

	snprintf(path, sizeof(path), HTMM_SYSFS_DIR "/htmm_cooling_period");
	ASSERT_LE(0, htmm_read_file(path, old, sizeof(old)));
	htmm_expect_rejected(_metadata, path, "1", old, false);
	htmm_expect_rejected(_metadata, path, "63", old, false);
	/* htmm_adaptation_period keeps 1 as its minimum */
	snprintf(path, sizeof(path), HTMM_SYSFS_DIR "/htmm_adaptation_period");
	ASSERT_LE(0, htmm_read_file(path, old, sizeof(old)));
	htmm_expect_write_reads(_metadata, path, "1", "1\n");
	htmm_expect_write_reads(_metadata, path, old, old);
}

TEST_HARNESS_MAIN
