// SPDX-License-Identifier: GPL-2.0-only
/*
 * htmm core: global state and the enable/disable lifecycle.
 *
 * htmm is off unless the kernel was booted with htmm=on, which is what
 * gives every page its record in page_ext: without it no cgroup can
 * enable htmm and no hook ever does anything.  With it, htmm is dormant
 * until the first memory cgroup writes "enabled" to its
 * memory.htmm_enabled file.  From then until the last such cgroup is
 * disabled or removed, the allocation hooks look at the cgroup of every
 * default-policy user page allocation, and ksamplingd and one kmigraterd
 * per node with memory run.
 *
 * htmm_active_key is enabled with the first cgroup and never disabled:
 * the hooks behind it first test htmm_nr_enabled, one read-mostly load,
 * so they cost nothing more when no cgroup is left.  Tenants that enable
 * and disable htmm often would otherwise patch the allocator's text each
 * time (and a test that toggled it every 100 ms oopsed on an int3 at the
 * patched site in a JUMP_LABEL kernel under QEMU TCG).
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/cache.h>
#include <linux/cgroup.h>
#include <linux/htmm.h>
#include <linux/init.h>
#include <linux/jump_label.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/page_ext.h>
#include <linux/printk.h>
#include <linux/workqueue.h>

#include "internal.h"

DEFINE_STATIC_KEY_FALSE(htmm_active_key);
DEFINE_STATIC_KEY_FALSE(htmm_meta_key);

/* Serialises enable/disable and limit changes, see internal.h. */
DEFINE_MUTEX(htmm_lock);

/*
 * Number of cgroups with htmm enabled.  Written under htmm_lock; the
 * allocation hooks read it locklessly (htmm_in_use()).
 */
unsigned int htmm_nr_enabled __read_mostly;

LIST_HEAD(htmm_enabled_list);
DEFINE_SPINLOCK(htmm_list_lock);

/* Set by htmm=on; read by the page_ext need callback, so before page_ext. */
bool htmm_boot_on __ro_after_init;

static int __init htmm_boot_param(char *buf)
{
	return kstrtobool(buf, &htmm_boot_on);
}
early_param("htmm", htmm_boot_param);

/**
 * htmm_state - What /sys/kernel/mm/htmm/state reads.
 *
 * Return: "on", or why htmm is off.
 */
const char *htmm_state(void)
{
	return htmm_available() ? "on" : "off (boot with htmm=on)";
}

/* Has a child of @memcg htmm enabled?  Under htmm_lock. */
static bool htmm_child_enabled(struct mem_cgroup *memcg)
{
	struct cgroup_subsys_state *css;
	bool found = false;

	rcu_read_lock();
	css_for_each_child(css, &memcg->css) {
		if (READ_ONCE(htmm_memcg(mem_cgroup_from_css(css))->enabled)) {
			found = true;
			break;
		}
	}
	rcu_read_unlock();
	return found;
}

/* Has the parent of @memcg, other than the root, htmm enabled? */
static bool htmm_parent_enabled(struct mem_cgroup *memcg)
{
	struct mem_cgroup *parent = parent_mem_cgroup(memcg);

	return parent && !mem_cgroup_is_root(parent) &&
	       READ_ONCE(htmm_memcg(parent)->enabled);
}

/*
 * Are ksamplingd and kmigraterd running?  Under htmm_lock.  They outlive
 * the last enabled cgroup while htmm_stop_work has not run yet.
 */
static bool htmm_running;

/* Start the system-wide machinery for the first cgroup.  Under htmm_lock. */
static int htmm_start(void)
{
	int err;

	if (htmm_running)
		return 0;
	htmm_latency_from_firmware();
	err = htmm_sampler_start();
	if (err)
		return err;
	err = htmm_migrate_start();
	if (err) {
		htmm_sampler_stop();
		return err;
	}
	static_branch_enable(&htmm_meta_key);
	static_branch_enable(&htmm_active_key);
	htmm_running = true;
	pr_info("active\n");
	return 0;
}

/* Stop the machinery if no cgroup has htmm enabled.  Under htmm_lock. */
static void htmm_stop_idle(void)
{
	if (!htmm_running || htmm_nr_enabled)
		return;
	htmm_migrate_stop();
	htmm_sampler_stop();
	htmm_running = false;
	pr_info("inactive\n");
}

static void htmm_stop_fn(struct work_struct *work)
{
	mutex_lock(&htmm_lock);
	htmm_stop_idle();
	mutex_unlock(&htmm_lock);
}

static DECLARE_WORK(htmm_stop_work, htmm_stop_fn);

static int htmm_enable(struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	int err;

	err = htmm_memcg_cand_alloc(memcg);
	if (err)
		return err;
	err = htmm_start();
	if (err)
		return err;
	WRITE_ONCE(htmm_nr_enabled, htmm_nr_enabled + 1);
	hm->memcg = memcg;
	spin_lock(&htmm_list_lock);
	list_add_tail(&hm->node, &htmm_enabled_list);
	spin_unlock(&htmm_list_lock);
	WRITE_ONCE(hm->enabled, true);
	return 0;
}

/* Take @memcg off; the caller stops the machinery if it was the last. */
static void htmm_disable(struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);

	WRITE_ONCE(hm->enabled, false);
	spin_lock(&htmm_list_lock);
	list_del(&hm->node);
	WRITE_ONCE(hm->top, false);
	spin_unlock(&htmm_list_lock);
	WRITE_ONCE(htmm_nr_enabled, htmm_nr_enabled - 1);
}

/**
 * htmm_adapt_all - Recompute the thresholds of every enabled cgroup.
 *
 * Budgets are hierarchical and shared under overcommit, so a change of
 * one cgroup's budget or state may move those of any other.
 *
 * Context: Process context, htmm_lock held.
 */
void htmm_adapt_all(void)
{
	struct mem_cgroup *pos;

	lockdep_assert_held(&htmm_lock);
	for (pos = mem_cgroup_iter(NULL, NULL, NULL); pos;
	     pos = mem_cgroup_iter(NULL, pos, NULL))
		if (READ_ONCE(htmm_memcg(pos)->enabled))
			htmm_memcg_adapt(pos);
	htmm_migrate_wake();
}

/**
 * htmm_memcg_set_enabled - Enable or disable htmm for a memory cgroup.
 * @memcg: The cgroup.
 * @enable: The new state.
 * @may_start: The writer may start htmm where its parent does not run it
 *	(it has CAP_SYS_ADMIN in the initial user namespace).
 *
 * Setting the state a cgroup already has is a no-op.  A cgroup may enable
 * htmm where its parent (not the root) has it enabled, or with
 * @may_start: the owner of a delegated subtree cannot start sampling and
 * kernel threads by itself, only use them below a cgroup its delegator
 * enabled, and within that cgroup's budgets.  A cgroup may disable htmm
 * only when none of its children has it enabled.  The first cgroup to
 * enable htmm activates the hooks; the last one to leave deactivates them.
 *
 * Context: Process context, may sleep.  Takes htmm_lock.
 * Return: 0, -EOPNOTSUPP to enable when the kernel was not booted with
 * htmm=on, -EPERM to enable against the rule above, -EBUSY to disable
 * under enabled children, or the error of allocating or starting the
 * kernel threads.
 */
int htmm_memcg_set_enabled(struct mem_cgroup *memcg, bool enable,
			   bool may_start)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	int err = 0;

	if (enable && !htmm_available()) {
		pr_warn_once("cannot enable a cgroup: off, boot with htmm=on\n");
		return -EOPNOTSUPP;
	}
	mutex_lock(&htmm_lock);
	if (hm->enabled == enable)
		goto out;
	if (enable && !may_start && !htmm_parent_enabled(memcg)) {
		err = -EPERM;
		goto out;
	}
	if (!enable && htmm_child_enabled(memcg)) {
		err = -EBUSY;
		goto out;
	}
	if (enable) {
		err = htmm_enable(memcg);
	} else {
		htmm_disable(memcg);
		htmm_stop_idle();
	}
	if (!err) {
		/* Tops and shares may move anywhere. */
		htmm_recount_tops();
		htmm_adapt_all();
	}
out:
	mutex_unlock(&htmm_lock);
	return err;
}

/**
 * htmm_sampler_restart - Restart ksamplingd after the sampler changed.
 *
 * Context: Process context, may sleep.  Takes htmm_lock.
 * Return: 0, -EOPNOTSUPP if the new source cannot run on this machine
 * (nothing changed), or the error of the new start.
 */
int htmm_sampler_restart(void)
{
	int err = htmm_sampler_check();

	if (err)
		return err;
	mutex_lock(&htmm_lock);
	if (htmm_running) {
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
	if (!memcg->htmm)
		return;
	/*
	 * Children go offline first: none of them has htmm enabled now.
	 * This runs under cgroup_mutex: stopping the threads and the perf
	 * counters of the last cgroup is left to a work item.
	 */
	mutex_lock(&htmm_lock);
	if (memcg->htmm->enabled) {
		htmm_disable(memcg);
		htmm_recount_tops();
		htmm_adapt_all();
		if (!htmm_nr_enabled)
			schedule_work(&htmm_stop_work);
	}
	mutex_unlock(&htmm_lock);
}

static int __init htmm_init(void)
{
	int err;

	htmm_sampler_init_rings();
	err = htmm_sysfs_init();
	if (err)
		return err;
	err = htmm_memcg_init();
	if (err)
		return err;
	err = htmm_debugfs_init();
	if (err)
		pr_warn("no debugfs files: %d\n", err);
	if (htmm_available())
		pr_info("initialised: %zu-byte page record at page_ext offset %zu, page_ext %lu bytes a page\n",
			htmm_page_ext_ops.size, htmm_page_ext_ops.offset,
			page_ext_size);
	else
		pr_info("off: boot with htmm=on to use it\n");
	return 0;
}
subsys_initcall(htmm_init);
