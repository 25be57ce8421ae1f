// SPDX-License-Identifier: GPL-2.0-only
/*
 * htmm tunables in /sys/kernel/mm/htmm/.
 *
 * Every numeric tunable is an unsigned decimal with a documented range.
 * A write that does not parse, overflows or falls outside the range fails
 * with -EINVAL (-ERANGE for overflow) and leaves the old value in place.
 */
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/kstrtox.h>
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
	.migrate_rate_mb	= 1024,
	.promotion_wmark	= 20,
	.demotion_wmark		= 10,
	.settle_ms		= 10000,
	.fast_latency_ns	= 100,
	.slow_latency_ns	= 250,
	.split_cooldown_ms	= 300000,
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
	void (*changed)(void);	/* called after a successful write */
};

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
	WRITE_ONCE(*t->val, val);
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

#define HTMM_TUNABLE_CB(_name, _field, _min, _max, _changed)		\
	{								\
		.attr = __ATTR(_name, 0644, htmm_tunable_show,		\
			       htmm_tunable_store),			\
		.val = &htmm_params._field,				\
		.min = (_min),						\
		.max = (_max),						\
		.changed = (_changed),					\
	}
#define HTMM_TUNABLE(_name, _field, _min, _max)				\
	HTMM_TUNABLE_CB(_name, _field, _min, _max, NULL)

static struct htmm_tunable htmm_tunables[] = {
	HTMM_TUNABLE_CB(htmm_sample_period, sample_period, 1, INT_MAX,
			htmm_sampler_periods_changed),
	HTMM_TUNABLE_CB(htmm_inst_sample_period, inst_sample_period, 1, INT_MAX,
			htmm_sampler_periods_changed),
	HTMM_TUNABLE(htmm_thres_hot, thres_hot, 0, 15),
	HTMM_TUNABLE(htmm_split_period, split_period, 1, 1000),
	HTMM_TUNABLE(htmm_adaptation_period, adaptation_period, 1, INT_MAX),
	HTMM_TUNABLE(htmm_cooling_period, cooling_period, 1, INT_MAX),
	HTMM_TUNABLE_CB(htmm_mode, mode, 0, HTMM_MODE_MAX, htmm_migrate_kick),
	HTMM_TUNABLE(htmm_demotion_period_in_ms, demotion_period_ms, 10, 60000),
	HTMM_TUNABLE(htmm_promotion_period_in_ms, promotion_period_ms, 10, 60000),
	HTMM_TUNABLE(htmm_gamma, gamma, 0, 10),
	HTMM_TUNABLE(ksampled_soft_cpu_quota, cpu_quota, 0, 1000),
	HTMM_TUNABLE(htmm_thres_split, thres_split, 0, 15),
	HTMM_TUNABLE(htmm_nowarm, nowarm, 0, 1),
	HTMM_TUNABLE(htmm_abit_interval_ms, abit_interval_ms, 10, 60000),
	HTMM_TUNABLE(htmm_abit_rate_mb, abit_rate_mb, 1, 1048576),
	HTMM_TUNABLE(htmm_migrate_rate_mb, migrate_rate_mb, 1, 1048576),
	HTMM_TUNABLE_CB(htmm_promotion_watermark, promotion_wmark, 0, 500,
			htmm_migrate_kick),
	HTMM_TUNABLE_CB(htmm_demotion_watermark, demotion_wmark, 0, 500,
			htmm_migrate_kick),
	HTMM_TUNABLE(htmm_settle_ms, settle_ms, 0, 600000),
	HTMM_TUNABLE_CB(htmm_fast_latency_ns, fast_latency_ns, 1, 1000000,
			htmm_latency_written),
	HTMM_TUNABLE_CB(htmm_slow_latency_ns, slow_latency_ns, 1, 1000000,
			htmm_latency_written),
	HTMM_TUNABLE(htmm_split_cooldown_ms, split_cooldown_ms, 0, 3600000),
};

/* A tunable that takes one word out of a list; the value is its index. */
struct htmm_choice {
	struct kobj_attribute attr;
	unsigned int *val;
	const char * const *words;
	unsigned int nr;
	int (*changed)(void);	/* called after a write; may fail it */
};

static ssize_t htmm_choice_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	struct htmm_choice *c = container_of(attr, struct htmm_choice, attr);

	return sysfs_emit(buf, "%s\n", c->words[READ_ONCE(*c->val)]);
}

static DEFINE_MUTEX(htmm_choice_mutex);	/* serialises choice writes */

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
	WRITE_ONCE(*c->val, i);
	if (old != i && c->changed) {
		err = c->changed();
		if (err)
			WRITE_ONCE(*c->val, old);
	}
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

#define HTMM_CHOICE(_name, _field, _words, _nr, _changed)		\
	{								\
		.attr = __ATTR(_name, 0644, htmm_choice_show,		\
			       htmm_choice_store),			\
		.val = &htmm_params._field,				\
		.words = (_words),					\
		.nr = (_nr),						\
		.changed = (_changed),					\
	}

static struct htmm_choice htmm_choices[] = {
	HTMM_CHOICE(htmm_cxl_mode, cxl_mode, htmm_onoff_words, 2, NULL),
	HTMM_CHOICE(htmm_sampler, sampler, htmm_sampler_words,
		    HTMM_NR_SAMPLERS, htmm_sampler_restart),
	HTMM_CHOICE(htmm_perf_event, perf_event, htmm_perf_event_words,
		    HTMM_NR_PERF_EVENTS,
		    htmm_sampler_restart),
};

/* The numeric tunables, the choices and the terminating NULL. */
static struct attribute *htmm_attrs[ARRAY_SIZE(htmm_tunables) +
				    ARRAY_SIZE(htmm_choices) + 1];

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

	kobj = kobject_create_and_add("htmm", mm_kobj);
	if (!kobj)
		return -ENOMEM;
	err = sysfs_create_group(kobj, &htmm_attr_group);
	if (err)
		kobject_put(kobj);
	return err;
}
