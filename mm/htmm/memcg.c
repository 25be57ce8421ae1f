// SPDX-License-Identifier: GPL-2.0-only
/*
 * htmm per-cgroup state, the cgroup v2 control files and the enforcement
 * of memory.max_at_node<N> at page allocation.
 *
 * Files on every non-root memory cgroup:
 *   memory.htmm_enabled      "enabled" / "disabled"
 *   memory.max_at_node<N>    one per node with memory at boot; bytes with
 *                            optional K/M/G suffix, or "max"
 *   memory.htmm_stat         read-only "key value" lines
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/cgroup.h>
#include <linux/htmm.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/memcontrol.h>
#include <linux/memory-tiers.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/page_counter.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmstat.h>

#include "internal.h"

/**
 * htmm_memcg_alloc - Allocate the htmm state of a new memory cgroup.
 * @memcg: The cgroup being created.
 *
 * Context: Process context, may sleep.
 * Return: 0 or -ENOMEM.
 */
int htmm_memcg_alloc(struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm;
	int nid;

	hm = kzalloc(struct_size(hm, max_nr_pages, nr_node_ids), GFP_KERNEL);
	if (!hm)
		return -ENOMEM;
	for (nid = 0; nid < nr_node_ids; nid++)
		hm->max_nr_pages[nid] = PAGE_COUNTER_MAX;
	htmm_memcg_state_init(hm);
	memcg->htmm = hm;
	return 0;
}

/**
 * htmm_memcg_free - Free the htmm state of a memory cgroup.
 * @memcg: The cgroup being freed.
 */
void htmm_memcg_free(struct mem_cgroup *memcg)
{
	if (memcg->htmm)
		kvfree(memcg->htmm->cand);
	kfree(memcg->htmm);
	memcg->htmm = NULL;
}

/**
 * htmm_memcg_node_pages - Pages of a cgroup resident on a node.
 * @memcg: The cgroup.
 * @nid: The node.
 * @flush: Flush the cgroup's pending statistics first (may sleep).
 *
 * Counts the cgroup's own LRU pages on @nid (anonymous, file and
 * unevictable; not those of descendant cgroups) from the per-memcg,
 * per-node NR_LRU_BASE statistics.  Both the classic LRU and the
 * multi-gen LRU keep these through __update_lru_size(), unlike the
 * per-zone lru_zone_size array, which only the classic LRU maintains.
 *
 * The statistics are rstat-aggregated, so they are not exact: updates that
 * are still batched per CPU are missing, and without a flush so is
 * whatever accumulated since the last flush.  mem_cgroup_flush_stats()
 * flushes only when the pending updates exceed MEMCG_CHARGE_BATCH per
 * online CPU, which bounds the error (to about 64 pages per CPU) without
 * flushing on every call.
 *
 * Context: Process context if @flush; any context otherwise.
 * Return: The number of base pages.
 */
unsigned long htmm_memcg_node_pages(struct mem_cgroup *memcg, int nid,
				    bool flush)
{
	struct lruvec *lruvec = mem_cgroup_lruvec(memcg, NODE_DATA(nid));
	unsigned long nr = 0;
	enum lru_list lru;

	if (flush)
		mem_cgroup_flush_stats(memcg);
	for_each_lru(lru)
		nr += lruvec_page_state_local(lruvec, NR_LRU_BASE + lru);
	return nr;
}

/**
 * htmm_over_limit - Would @nr more pages take @usage past @limit?
 * @usage: Pages in use.
 * @nr: Pages about to be added.
 * @limit: The limit; PAGE_COUNTER_MAX means none.
 *
 * Return: true if @usage + @nr exceeds @limit.
 */
bool htmm_over_limit(unsigned long usage, unsigned long nr,
		     unsigned long limit)
{
	if (limit >= PAGE_COUNTER_MAX)
		return false;
	return usage > limit || nr > limit - usage;
}

/**
 * htmm_pick_node - Find the first node after @nid that is not full.
 * @nid: The preferred node, known to be full.
 * @gfp: GFP flags of the allocation, for the fallback zonelist.
 * @full: Tells whether a node is full.
 * @arg: Passed to @full.
 *
 * Candidates are taken first along the demotion path of @nid
 * (next_demotion_node()), then in the fallback order of @nid's zonelist.
 * Each node is asked once.
 *
 * Return: A node id, or NUMA_NO_NODE if every candidate is full.
 */
int htmm_pick_node(int nid, gfp_t gfp,
		   bool (*full)(int nid, void *arg), void *arg)
{
	nodemask_t seen = NODE_MASK_NONE;
	struct zoneref *z;
	struct zone *zone;
	int n;

	node_set(nid, seen);
	for (n = next_demotion_node(nid); n != NUMA_NO_NODE;
	     n = next_demotion_node(n)) {
		if (node_isset(n, seen))
			break;
		node_set(n, seen);
		if (!full(n, arg))
			return n;
	}
	for_each_zone_zonelist(zone, z, node_zonelist(nid, gfp), gfp_zone(gfp)) {
		n = zone_to_nid(zone);
		if (node_isset(n, seen))
			continue;
		node_set(n, seen);
		if (!full(n, arg))
			return n;
	}
	return NUMA_NO_NODE;
}

struct htmm_alloc_ctx {
	struct mem_cgroup *memcg;
	struct htmm_memcg *hm;
	unsigned long nr;
	bool flush;
};

static bool htmm_node_full(int nid, void *arg)
{
	struct htmm_alloc_ctx *ctx = arg;
	unsigned long limit = READ_ONCE(ctx->hm->max_nr_pages[nid]);

	if (limit >= PAGE_COUNTER_MAX)
		return false;
	if (ctx->flush) {
		/* One flush per allocation decision is enough. */
		mem_cgroup_flush_stats(ctx->memcg);
		ctx->flush = false;
	}
	return htmm_over_limit(htmm_memcg_node_pages(ctx->memcg, nid, false),
			       ctx->nr, limit);
}

int __htmm_alloc_node(struct mm_struct *mm, gfp_t gfp, unsigned int order,
		      int nid)
{
	struct htmm_alloc_ctx ctx;
	int target = nid;

	if (nid == NUMA_NO_NODE || !htmm_in_use())
		return nid;
	ctx.memcg = get_mem_cgroup_from_mm(mm);
	if (!ctx.memcg)
		return nid;
	ctx.hm = htmm_memcg(ctx.memcg);
	ctx.nr = 1UL << order;
	ctx.flush = gfpflags_allow_blocking(gfp);
	if (!ctx.hm || !READ_ONCE(ctx.hm->enabled) || !htmm_node_full(nid, &ctx))
		goto out;

	target = htmm_pick_node(nid, gfp, htmm_node_full, &ctx);
	if (target == NUMA_NO_NODE) {
		/* Every node is at its limit: the limit never fails anything. */
		target = nid;
		atomic_long_inc(&ctx.hm->nr_alloc_over_limit);
		count_vm_event(HTMM_ALLOC_OVER_LIMIT);
	} else {
		atomic_long_inc(&ctx.hm->nr_alloc_redirected);
		count_vm_event(HTMM_ALLOC_REDIRECTED);
	}
out:
	css_put(&ctx.memcg->css);
	return target;
}

static int htmm_enabled_show(struct seq_file *m, void *v)
{
	struct htmm_memcg *hm = htmm_memcg(mem_cgroup_from_seq(m));

	seq_printf(m, "%s\n", READ_ONCE(hm->enabled) ? "enabled" : "disabled");
	return 0;
}

static ssize_t htmm_enabled_write(struct kernfs_open_file *of, char *buf,
				  size_t nbytes, loff_t off)
{
	struct mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
	bool enable;
	int err;

	if (sysfs_streq(buf, "enabled"))
		enable = true;
	else if (sysfs_streq(buf, "disabled"))
		enable = false;
	else
		return -EINVAL;
	err = htmm_memcg_set_enabled(memcg, enable);
	return err ? err : nbytes;
}

static void htmm_seq_pages(struct seq_file *m, const char *key,
			   unsigned long nr_pages)
{
	if (key)
		seq_printf(m, "%s ", key);
	if (nr_pages >= PAGE_COUNTER_MAX)
		seq_puts(m, "max\n");
	else
		seq_printf(m, "%llu\n", (u64)nr_pages * PAGE_SIZE);
}

static int htmm_max_at_node_show(struct seq_file *m, void *v)
{
	struct htmm_memcg *hm = htmm_memcg(mem_cgroup_from_seq(m));
	int nid = seq_cft(m)->private;

	htmm_seq_pages(m, NULL, READ_ONCE(hm->max_nr_pages[nid]));
	return 0;
}

static ssize_t htmm_max_at_node_write(struct kernfs_open_file *of, char *buf,
				      size_t nbytes, loff_t off)
{
	struct mem_cgroup *memcg = mem_cgroup_from_css(of_css(of));
	struct htmm_memcg *hm = htmm_memcg(memcg);
	int nid = of_cft(of)->private;
	u64 digits, bytes, unit = 1;
	char one[3] = "1", *end;
	unsigned long nr_pages;
	size_t len;
	int err;

	buf = strstrip(buf);
	len = strlen(buf);
	if (!strcmp(buf, "max")) {
		nr_pages = PAGE_COUNTER_MAX;
		goto set;
	}
	/* The syntax of memory.max: what memparse() takes, and only that. */
	memparse(buf, &end);
	if (end == buf || *end)
		return -EINVAL;
	/*
	 * memparse() wraps silently, so parse the number again, without
	 * its suffix if it has one, and let memparse() scale "1<suffix>".
	 */
	err = kstrtoull(buf, 0, &digits);
	if (err == -EINVAL) {
		one[1] = buf[len - 1];
		unit = memparse(one, NULL);
		buf[len - 1] = '\0';
		err = kstrtoull(buf, 0, &digits);
	}
	if (err)
		return err;
	if (check_mul_overflow(digits, unit, &bytes) ||
	    bytes >> PAGE_SHIFT > PAGE_COUNTER_MAX)
		return -ERANGE;
	nr_pages = bytes >> PAGE_SHIFT;
set:
	mutex_lock(&htmm_lock);
	WRITE_ONCE(hm->max_nr_pages[nid], nr_pages);
	/* The fast-tier budget moved: so do the thresholds. */
	htmm_memcg_adapt(memcg);
	htmm_migrate_wake();
	mutex_unlock(&htmm_lock);
	return nbytes;
}

static int htmm_stat_show(struct seq_file *m, void *v)
{
	struct mem_cgroup *memcg = mem_cgroup_from_seq(m);
	struct htmm_memcg *hm = htmm_memcg(memcg);
	char key[32];
	int nid;

	if (!htmm_available())
		seq_printf(m, "htmm %s\n", htmm_state());
	seq_printf(m, "enabled %d\n", READ_ONCE(hm->enabled));
	for_each_node_state(nid, N_MEMORY) {
		snprintf(key, sizeof(key), "resident_node%d", nid);
		htmm_seq_pages(m, key, htmm_memcg_node_pages(memcg, nid, true));
		snprintf(key, sizeof(key), "max_at_node%d", nid);
		htmm_seq_pages(m, key, READ_ONCE(hm->max_nr_pages[nid]));
	}
	seq_printf(m, "alloc_redirected %ld\n",
		   atomic_long_read(&hm->nr_alloc_redirected));
	seq_printf(m, "alloc_over_limit %ld\n",
		   atomic_long_read(&hm->nr_alloc_over_limit));
	htmm_memcg_stat(memcg, m);
	htmm_sampler_stat(m);
	return 0;
}

static struct cftype htmm_base_files[] = {
	{
		.name = "htmm_enabled",
		.flags = CFTYPE_NOT_ON_ROOT,
		.seq_show = htmm_enabled_show,
		.write = htmm_enabled_write,
	},
	{
		.name = "htmm_stat",
		.flags = CFTYPE_NOT_ON_ROOT,
		.seq_show = htmm_stat_show,
	},
	{ }	/* terminate */
};

int __init htmm_memcg_init(void)
{
	struct cftype *cft;
	int nid, i = 0, err;

	if (mem_cgroup_disabled())
		return 0;

	err = cgroup_add_dfl_cftypes(&memory_cgrp_subsys, htmm_base_files);
	if (err)
		return err;

	/*
	 * One memory.max_at_node<N> per node that has memory now.  The
	 * array lives as long as the cgroup files do: forever.
	 */
	cft = kcalloc(num_node_state(N_MEMORY) + 1, sizeof(*cft), GFP_KERNEL);
	if (!cft)
		return -ENOMEM;
	for_each_node_state(nid, N_MEMORY) {
		snprintf(cft[i].name, MAX_CFTYPE_NAME, "max_at_node%d", nid);
		cft[i].flags = CFTYPE_NOT_ON_ROOT;
		cft[i].private = nid;
		cft[i].seq_show = htmm_max_at_node_show;
		cft[i].write = htmm_max_at_node_write;
#ifdef CONFIG_DEBUG_LOCK_ALLOC
		/* kernfs uses this key for the file: it must be registered. */
		lockdep_register_key(&cft[i].lockdep_key);
#endif
		i++;
	}
	err = cgroup_add_dfl_cftypes(&memory_cgrp_subsys, cft);
	if (err) {
#ifdef CONFIG_DEBUG_LOCK_ALLOC
		while (i--)
			lockdep_unregister_key(&cft[i].lockdep_key);
#endif
		kfree(cft);
	}
	return err;
}
