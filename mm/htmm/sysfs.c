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
};

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
	return count;
}

#define HTMM_TUNABLE(_name, _field, _min, _max)				\
	{								\
		.attr = __ATTR(_name, 0644, htmm_tunable_show,		\
			       htmm_tunable_store),			\
		.val = &htmm_params._field,				\
		.min = (_min),						\
		.max = (_max),						\
	}

static struct htmm_tunable htmm_tunables[] = {
	HTMM_TUNABLE(htmm_sample_period, sample_period, 1, INT_MAX),
	HTMM_TUNABLE(htmm_inst_sample_period, inst_sample_period, 1, INT_MAX),
	HTMM_TUNABLE(htmm_thres_hot, thres_hot, 0, 15),
	HTMM_TUNABLE(htmm_split_period, split_period, 1, 1000),
	HTMM_TUNABLE(htmm_adaptation_period, adaptation_period, 1, INT_MAX),
	HTMM_TUNABLE(htmm_cooling_period, cooling_period, 1, INT_MAX),
	HTMM_TUNABLE(htmm_mode, mode, 0, HTMM_MODE_MAX),
	HTMM_TUNABLE(htmm_demotion_period_in_ms, demotion_period_ms, 10, 60000),
	HTMM_TUNABLE(htmm_promotion_period_in_ms, promotion_period_ms, 10, 60000),
	HTMM_TUNABLE(htmm_gamma, gamma, 0, 10),
	HTMM_TUNABLE(ksampled_soft_cpu_quota, cpu_quota, 0, 1000),
	HTMM_TUNABLE(htmm_thres_split, thres_split, 0, 15),
	HTMM_TUNABLE(htmm_nowarm, nowarm, 0, 1),
};

static ssize_t htmm_cxl_mode_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  READ_ONCE(htmm_params.cxl_mode) ? "enabled" : "disabled");
}

static ssize_t htmm_cxl_mode_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	if (sysfs_streq(buf, "enabled"))
		WRITE_ONCE(htmm_params.cxl_mode, 1);
	else if (sysfs_streq(buf, "disabled"))
		WRITE_ONCE(htmm_params.cxl_mode, 0);
	else
		return -EINVAL;
	return count;
}

static struct kobj_attribute htmm_cxl_mode_attr =
	__ATTR(htmm_cxl_mode, 0644, htmm_cxl_mode_show, htmm_cxl_mode_store);

/* The numeric tunables, htmm_cxl_mode and the terminating NULL. */
static struct attribute *htmm_attrs[ARRAY_SIZE(htmm_tunables) + 2];

static const struct attribute_group htmm_attr_group = {
	.attrs = htmm_attrs,
};

int __init htmm_sysfs_init(void)
{
	struct kobject *kobj;
	int i, err;

	for (i = 0; i < ARRAY_SIZE(htmm_tunables); i++)
		htmm_attrs[i] = &htmm_tunables[i].attr.attr;
	htmm_attrs[i] = &htmm_cxl_mode_attr.attr;

	kobj = kobject_create_and_add("htmm", mm_kobj);
	if (!kobj)
		return -ENOMEM;
	err = sysfs_create_group(kobj, &htmm_attr_group);
	if (err)
		kobject_put(kobj);
	return err;
}
