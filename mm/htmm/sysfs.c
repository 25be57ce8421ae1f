// SPDX-License-Identifier: GPL-2.0-only
/*
 * htmm tunables in /sys/kernel/mm/htmm/.
 *
 * Every numeric tunable is an unsigned decimal with a documented range.
 * A write that does not parse, overflows or falls outside the range fails
 * with -EINVAL (-ERANGE for overflow) and leaves the old value in place.
 * So does a write that would break an invariant between two tunables:
 * htmm_fast_latency_ns < htmm_slow_latency_ns, htmm_demotion_watermark <=
 * htmm_promotion_watermark, and sample periods of at least
 * HTMM_PEBS_MIN_PERIOD while htmm_perf_event is pebs.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "internal.h"

struct htmm_params htmm_params = {
	.sample_period		= 199,
	.inst_sample_period	= 100007,
	.thres_hot		= 1,
	.split_period		= 2,
	.adaptation_period	= 100000,
	.cooling_period		= 2000000,
	.mode			= HTMM_MODE_HUGEPAGE,
	.demotion_period_ms	= 500,
	.promotion_period_ms	= 500,
	.gamma			= 4,
	.cpu_quota		= 30,
	.thres_split		= 2,
	.nowarm			= 0,
	.cxl_mode		= 0,
	.sampler		= HTMM_SAMPLER_AUTO,
	.perf_event		= HTMM_PERF_PEBS,
	.abit_interval_ms	= 1000,
	.abit_rate_mb		= 4096,
	.abit_window_us		= 0,
	.migrate_rate_mb	= 1024,
	.promotion_wmark	= 20,
	.demotion_wmark		= 10,
	.settle_ms		= 10000,
	.fast_latency_ns	= 100,
	.slow_latency_ns	= 250,
	.split_cooldown_ms	= 300000,
#ifdef CONFIG_HTMM_CCOW
	.ccow_enabled		= HTMM_CCOW_NEVER,
	.ccow_region_kb		= 2048,
	.ccow_threshold		= 80,
	.ccow_max_sync_kb	= 2048,
	.ccow_huge		= 1,
#endif
};

/* Set once the administrator wrote a tier latency: firmware stays out. */
bool htmm_latency_user_set;

static void htmm_latency_written(void)
{
	WRITE_ONCE(htmm_latency_user_set, true);
}

/**
 * htmm_parse_uint - Parse a tunable value and check its range.
 * @buf: The text written by the user; one trailing newline is allowed.
 * @min: The smallest accepted value.
 * @max: The largest accepted value.
 * @res: Where to store the value; untouched on error.
 *
 * Return: 0 on success, -EINVAL for malformed or out-of-range input,
 * -ERANGE when the number does not fit in an unsigned int.
 */
int htmm_parse_uint(const char *buf, unsigned int min, unsigned int max,
		    unsigned int *res)
{
	unsigned int val;
	int err;

	err = kstrtouint(buf, 10, &val);
	if (err)
		return err;
	if (val < min || val > max)
		return -EINVAL;
	*res = val;
	return 0;
}

struct htmm_tunable {
	struct kobj_attribute attr;
	unsigned int *val;
	unsigned int min;
	unsigned int max;
	/* checks a value in range against other tunables; may fail it */
	int (*check)(unsigned int val);
	void (*changed)(void);	/* called after a successful write */
};

/*
 * Serialises the writes whose check reads another tunable, and the choice
 * writes.  Taken before htmm_lock.
 */
static DEFINE_MUTEX(htmm_choice_mutex);

/*
 * Precise (PEBS) events of Intel cores since Golden Cove get periods below
 * 128 raised to 128 by the PMU driver; the other models take them, but a
 * period that small makes one PMI for nearly every LLC miss.  The software
 * page-fault events of htmm_perf_event=sw-page-faults take any period.
 */
#define HTMM_PEBS_MIN_PERIOD	128

static int htmm_check_period(unsigned int val)
{
	if (val >= HTMM_PEBS_MIN_PERIOD ||
	    READ_ONCE(htmm_params.perf_event) != HTMM_PERF_PEBS)
		return 0;
	pr_info_ratelimited("sample periods below %u need htmm_perf_event=sw-page-faults\n",
			    HTMM_PEBS_MIN_PERIOD);
	return -EINVAL;
}

static int htmm_check_perf_event(unsigned int val)
{
	if (val != HTMM_PERF_PEBS ||
	    min(READ_ONCE(htmm_params.sample_period),
		READ_ONCE(htmm_params.inst_sample_period)) >= HTMM_PEBS_MIN_PERIOD)
		return 0;
	pr_info_ratelimited("htmm_perf_event=pebs needs sample periods of at least %u\n",
			    HTMM_PEBS_MIN_PERIOD);
	return -EINVAL;
}

/* htmm_fast_latency_ns < htmm_slow_latency_ns, or splitting is off. */
static int htmm_check_fast_latency(unsigned int val)
{
	unsigned int slow = READ_ONCE(htmm_params.slow_latency_ns);

	if (val < slow)
		return 0;
	pr_info_ratelimited("htmm_fast_latency_ns must stay below htmm_slow_latency_ns (%u)\n",
			    slow);
	return -EINVAL;
}

static int htmm_check_slow_latency(unsigned int val)
{
	unsigned int fast = READ_ONCE(htmm_params.fast_latency_ns);

	if (val > fast)
		return 0;
	pr_info_ratelimited("htmm_slow_latency_ns must stay above htmm_fast_latency_ns (%u)\n",
			    fast);
	return -EINVAL;
}

/* Demotion must not stop above the level promotion fills up to. */
static int htmm_check_promotion_wmark(unsigned int val)
{
	unsigned int dw = READ_ONCE(htmm_params.demotion_wmark);

	if (val >= dw)
		return 0;
	pr_info_ratelimited("htmm_promotion_watermark must stay at or above htmm_demotion_watermark (%u)\n",
			    dw);
	return -EINVAL;
}

static int htmm_check_demotion_wmark(unsigned int val)
{
	unsigned int pw = READ_ONCE(htmm_params.promotion_wmark);

	if (val <= pw)
		return 0;
	pr_info_ratelimited("htmm_demotion_watermark must stay at or below htmm_promotion_watermark (%u)\n",
			    pw);
	return -EINVAL;
}

#ifdef CONFIG_HTMM_CCOW
/* A CCoW region is a power of two from 64 KiB to a PMD's span. */
static int htmm_check_ccow_region(unsigned int val)
{
	if (is_power_of_2(val) && val >= (PAGE_SIZE >> 10) &&
	    (u64)val << 10 <= PMD_SIZE)
		return 0;
	pr_info_ratelimited("htmm_ccow_region_kb must be a power of two up to %lu\n",
			    PMD_SIZE >> 10);
	return -EINVAL;
}
#endif

static ssize_t htmm_tunable_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	struct htmm_tunable *t = container_of(attr, struct htmm_tunable, attr);

	return sysfs_emit(buf, "%u\n", READ_ONCE(*t->val));
}

static ssize_t htmm_tunable_store(struct kobject *kobj,
				  struct kobj_attribute *attr,
				  const char *buf, size_t count)
{
	struct htmm_tunable *t = container_of(attr, struct htmm_tunable, attr);
	unsigned int val;
	int err;

	err = htmm_parse_uint(buf, t->min, t->max, &val);
	if (err)
		return err;
	if (t->check) {
		/* htmm_lock: the firmware writes the latencies under it. */
		mutex_lock(&htmm_choice_mutex);
		mutex_lock(&htmm_lock);
		err = t->check(val);
		if (!err)
			WRITE_ONCE(*t->val, val);
		mutex_unlock(&htmm_lock);
		mutex_unlock(&htmm_choice_mutex);
		if (err)
			return err;
	} else {
		WRITE_ONCE(*t->val, val);
	}
	if (t->changed)
		t->changed();
	return count;
}

/* Let kmigraterd see a new mode or watermark now. */
static void htmm_migrate_kick(void)
{
	mutex_lock(&htmm_lock);
	htmm_migrate_wake();
	mutex_unlock(&htmm_lock);
}

#define HTMM_TUNABLE_CHECK(_name, _field, _min, _max, _check, _changed) \
	{								\
		.attr = __ATTR(_name, 0644, htmm_tunable_show,		\
			       htmm_tunable_store),			\
		.val = &htmm_params._field,				\
		.min = (_min),						\
		.max = (_max),						\
		.check = (_check),					\
		.changed = (_changed),					\
	}
#define HTMM_TUNABLE_CB(_name, _field, _min, _max, _changed)		\
	HTMM_TUNABLE_CHECK(_name, _field, _min, _max, NULL, _changed)
#define HTMM_TUNABLE(_name, _field, _min, _max)				\
	HTMM_TUNABLE_CB(_name, _field, _min, _max, NULL)

/*
 * Lower limits against storms: htmm_cooling_period of at least 64 samples
 * (a cooling halves every count, and the 16-bit cooling epoch of a page
 * must not wrap within a few million samples); the sample periods, see
 * HTMM_PEBS_MIN_PERIOD.  An adaptation costs about what accounting one
 * sample does, so htmm_adaptation_period may be 1.  The sample periods
 * stop at INT_MAX, where the quota ladder (htmm_period_at()) caps them.
 */
static struct htmm_tunable htmm_tunables[] = {
	HTMM_TUNABLE_CHECK(htmm_sample_period, sample_period, 1, INT_MAX,
			   htmm_check_period, htmm_sampler_periods_changed),
	HTMM_TUNABLE_CHECK(htmm_inst_sample_period, inst_sample_period, 1,
			   INT_MAX, htmm_check_period,
			   htmm_sampler_periods_changed),
	HTMM_TUNABLE(htmm_thres_hot, thres_hot, 0, 15),
	HTMM_TUNABLE(htmm_split_period, split_period, 1, 1000),
	HTMM_TUNABLE(htmm_adaptation_period, adaptation_period, 1, INT_MAX),
	HTMM_TUNABLE(htmm_cooling_period, cooling_period, 64, INT_MAX),
	HTMM_TUNABLE_CB(htmm_mode, mode, 0, HTMM_MODE_MAX, htmm_migrate_kick),
	HTMM_TUNABLE(htmm_demotion_period_in_ms, demotion_period_ms, 10, 60000),
	HTMM_TUNABLE(htmm_promotion_period_in_ms, promotion_period_ms, 10, 60000),
	HTMM_TUNABLE(htmm_gamma, gamma, 0, 10),
	HTMM_TUNABLE(ksampled_soft_cpu_quota, cpu_quota, 0, 1000),
	HTMM_TUNABLE(htmm_thres_split, thres_split, 0, 15),
	HTMM_TUNABLE(htmm_nowarm, nowarm, 0, 1),
	HTMM_TUNABLE(htmm_abit_interval_ms, abit_interval_ms, 10, 60000),
	HTMM_TUNABLE(htmm_abit_rate_mb, abit_rate_mb, 1, 1048576),
	HTMM_TUNABLE(htmm_abit_window_us, abit_window_us, 0, 100000),
	HTMM_TUNABLE(htmm_migrate_rate_mb, migrate_rate_mb, 1, 1048576),
	HTMM_TUNABLE_CHECK(htmm_promotion_watermark, promotion_wmark, 0, 500,
			   htmm_check_promotion_wmark, htmm_migrate_kick),
	HTMM_TUNABLE_CHECK(htmm_demotion_watermark, demotion_wmark, 0, 500,
			   htmm_check_demotion_wmark, htmm_migrate_kick),
	HTMM_TUNABLE(htmm_settle_ms, settle_ms, 0, 600000),
	HTMM_TUNABLE_CHECK(htmm_fast_latency_ns, fast_latency_ns, 1, 999999,
			   htmm_check_fast_latency, htmm_latency_written),
	HTMM_TUNABLE_CHECK(htmm_slow_latency_ns, slow_latency_ns, 2, 1000000,
			   htmm_check_slow_latency, htmm_latency_written),
	HTMM_TUNABLE(htmm_split_cooldown_ms, split_cooldown_ms, 0, 3600000),
#ifdef CONFIG_HTMM_CCOW
	HTMM_TUNABLE_CHECK(htmm_ccow_region_kb, ccow_region_kb, 64, 2048,
			   htmm_check_ccow_region, NULL),
	HTMM_TUNABLE(htmm_ccow_threshold, ccow_threshold, 0, 100),
	HTMM_TUNABLE(htmm_ccow_max_sync_kb, ccow_max_sync_kb, 0, 2048),
	HTMM_TUNABLE(htmm_ccow_huge, ccow_huge, 0, 1),
#endif
};

/* A tunable that takes one word out of a list; the value is its index. */
struct htmm_choice {
	struct kobj_attribute attr;
	unsigned int *val;
	const char * const *words;
	unsigned int nr;
	int (*check)(unsigned int val);	/* before a write; may fail it */
	int (*changed)(void);	/* called after a write; may fail it */
};

static ssize_t htmm_choice_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	struct htmm_choice *c = container_of(attr, struct htmm_choice, attr);

	return sysfs_emit(buf, "%s\n", c->words[READ_ONCE(*c->val)]);
}

static ssize_t htmm_choice_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	struct htmm_choice *c = container_of(attr, struct htmm_choice, attr);
	unsigned int i, old;
	int err = 0;

	for (i = 0; i < c->nr; i++)
		if (sysfs_streq(buf, c->words[i]))
			break;
	if (i == c->nr)
		return -EINVAL;
	mutex_lock(&htmm_choice_mutex);
	old = *c->val;
	if (old != i && c->check) {
		err = c->check(i);
		if (err)
			goto unlock;
	}
	WRITE_ONCE(*c->val, i);
	if (old != i && c->changed) {
		err = c->changed();
		if (err)
			WRITE_ONCE(*c->val, old);
	}
unlock:
	mutex_unlock(&htmm_choice_mutex);
	return err ? err : count;
}

static const char * const htmm_onoff_words[2] = { "disabled", "enabled" };

static const char * const htmm_sampler_words[HTMM_NR_SAMPLERS] = {
	[HTMM_SAMPLER_AUTO] = "auto",
	[HTMM_SAMPLER_PEBS] = "pebs",
	[HTMM_SAMPLER_ABIT] = "abit",
	[HTMM_SAMPLER_INJECT] = "inject",
};

static const char * const htmm_perf_event_words[HTMM_NR_PERF_EVENTS] = {
	[HTMM_PERF_PEBS] = "pebs",
	[HTMM_PERF_SW] = "sw-page-faults",
};

#define HTMM_CHOICE_CHECK(_name, _field, _words, _nr, _check, _changed) \
	{								\
		.attr = __ATTR(_name, 0644, htmm_choice_show,		\
			       htmm_choice_store),			\
		.val = &htmm_params._field,				\
		.words = (_words),					\
		.nr = (_nr),						\
		.check = (_check),					\
		.changed = (_changed),					\
	}
#define HTMM_CHOICE(_name, _field, _words, _nr, _changed)		\
	HTMM_CHOICE_CHECK(_name, _field, _words, _nr, NULL, _changed)

#ifdef CONFIG_HTMM_CCOW
static const char * const htmm_ccow_words[HTMM_CCOW_NR_MODES] = {
	[HTMM_CCOW_NEVER] = "never",
	[HTMM_CCOW_ALWAYS] = "always",
	[HTMM_CCOW_HTMM] = "htmm",
};

/* The pre-copy marks live in page_ext, which htmm=on sets up. */
static int htmm_check_ccow_enabled(unsigned int val)
{
	if (val == HTMM_CCOW_NEVER || htmm_available())
		return 0;
	pr_info_ratelimited("htmm_ccow_enabled needs the kernel booted with htmm=on\n");
	return -ENODEV;
}
#endif

static struct htmm_choice htmm_choices[] = {
	HTMM_CHOICE(htmm_cxl_mode, cxl_mode, htmm_onoff_words, 2, NULL),
	HTMM_CHOICE(htmm_sampler, sampler, htmm_sampler_words,
		    HTMM_NR_SAMPLERS, htmm_sampler_restart),
	HTMM_CHOICE_CHECK(htmm_perf_event, perf_event, htmm_perf_event_words,
			  HTMM_NR_PERF_EVENTS, htmm_check_perf_event,
			  htmm_sampler_restart),
#ifdef CONFIG_HTMM_CCOW
	HTMM_CHOICE_CHECK(htmm_ccow_enabled, ccow_enabled, htmm_ccow_words,
			  HTMM_CCOW_NR_MODES, htmm_check_ccow_enabled,
			  htmm_ccow_enabled_changed),
#endif
};

/* state: read-only, "on" or why htmm is off (htmm=on not given). */
static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", htmm_state());
}

static struct kobj_attribute htmm_state_attr = __ATTR_RO(state);

/* The numeric tunables, the choices, state and the terminating NULL. */
static struct attribute *htmm_attrs[ARRAY_SIZE(htmm_tunables) +
				    ARRAY_SIZE(htmm_choices) + 2];

static const struct attribute_group htmm_attr_group = {
	.attrs = htmm_attrs,
};

int __init htmm_sysfs_init(void)
{
	struct kobject *kobj;
	int i, j, err;

	for (i = 0; i < ARRAY_SIZE(htmm_tunables); i++)
		htmm_attrs[i] = &htmm_tunables[i].attr.attr;
	for (j = 0; j < ARRAY_SIZE(htmm_choices); j++)
		htmm_attrs[i + j] = &htmm_choices[j].attr.attr;
	htmm_attrs[i + j] = &htmm_state_attr.attr;

	kobj = kobject_create_and_add("htmm", mm_kobj);
	if (!kobj)
		return -ENOMEM;
	err = sysfs_create_group(kobj, &htmm_attr_group);
	if (err)
		kobject_put(kobj);
	return err;
}
