// SPDX-License-Identifier: GPL-2.0-only
/*
 * htmm core: global state and the enable/disable lifecycle.
 *
 * htmm is dormant until the first memory cgroup writes "enabled" to its
 * memory.htmm_enabled file.  From then until the last such cgroup is
 * disabled or removed, htmm_active_key is on and the allocation hooks
 * look at the cgroup of every default-policy user page allocation, and
 * ksamplingd and one kmigraterd per node with memory run.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/htmm.h>
#include <linux/init.h>
#include <linux/jump_label.h>
#include <linux/mutex.h>
#include <linux/printk.h>

#include "internal.h"

DEFINE_STATIC_KEY_FALSE(htmm_active_key);
DEFINE_STATIC_KEY_FALSE(htmm_meta_key);

/* Serialises enable/disable and limit changes, see internal.h. */
DEFINE_MUTEX(htmm_lock);

/* Number of cgroups with htmm enabled.  Protected by htmm_lock. */
static unsigned int htmm_nr_enabled;

LIST_HEAD(htmm_enabled_list);
DEFINE_SPINLOCK(htmm_list_lock);

/**
 * htmm_memcg_set_enabled - Enable or disable htmm for a memory cgroup.
 * @memcg: The cgroup.
 * @enable: The new state.
 *
 * Setting the state a cgroup already has is a no-op.  The first cgroup to
 * enable htmm activates the hooks; the last one to leave deactivates them.
 *
 * Context: Process context, may sleep.  Takes htmm_lock.
 * Return: 0.
 */
int htmm_memcg_set_enabled(struct mem_cgroup *memcg, bool enable)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);

	int err = 0;

	mutex_lock(&htmm_lock);
	if (hm->enabled == enable)
		goto out;
	if (enable) {
		err = htmm_memcg_cand_alloc(hm);
		if (err)
			goto out;
		if (htmm_nr_enabled == 0) {
			htmm_latency_from_firmware();
			err = htmm_sampler_start();
			if (err)
				goto out;
			err = htmm_migrate_start();
			if (err) {
				htmm_sampler_stop();
				goto out;
			}
			static_branch_enable(&htmm_meta_key);
			static_branch_enable(&htmm_active_key);
			pr_info("active\n");
		}
		htmm_nr_enabled++;
		hm->memcg = memcg;
		spin_lock(&htmm_list_lock);
		list_add_tail(&hm->node, &htmm_enabled_list);
		spin_unlock(&htmm_list_lock);
		WRITE_ONCE(hm->enabled, true);
	} else {
		WRITE_ONCE(hm->enabled, false);
		spin_lock(&htmm_list_lock);
		list_del(&hm->node);
		spin_unlock(&htmm_list_lock);
		if (--htmm_nr_enabled == 0) {
			htmm_migrate_stop();
			htmm_sampler_stop();
			static_branch_disable(&htmm_active_key);
			pr_info("inactive\n");
		}
	}
out:
	mutex_unlock(&htmm_lock);
	return err;
}

/**
 * htmm_sampler_restart - Restart ksamplingd after the sampler changed.
 *
 * Context: Process context, may sleep.  Takes htmm_lock.
 * Return: 0 or the error of the new start.
 */
int htmm_sampler_restart(void)
{
	int err = 0;

	mutex_lock(&htmm_lock);
	if (htmm_nr_enabled) {
		htmm_sampler_stop();
		err = htmm_sampler_start();
	}
	mutex_unlock(&htmm_lock);
	return err;
}

/**
 * htmm_memcg_offline - Forget a memory cgroup that is being removed.
 * @memcg: The cgroup going offline.
 *
 * Context: Process context, may sleep.
 */
void htmm_memcg_offline(struct mem_cgroup *memcg)
{
	if (memcg->htmm)
		htmm_memcg_set_enabled(memcg, false);
}

static int __init htmm_init(void)
{
	int err;

	err = htmm_sysfs_init();
	if (err)
		return err;
	err = htmm_memcg_init();
	if (err)
		return err;
	err = htmm_debugfs_init();
	if (err)
		pr_warn("no debugfs files: %d\n", err);
	pr_info("initialised\n");
	return 0;
}
subsys_initcall(htmm_init);
