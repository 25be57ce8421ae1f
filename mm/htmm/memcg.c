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

#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/fs.h>
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

	/*
	 * Charged like the memcg's own structures: mem_cgroup_css_alloc()
	 * makes the parent the active memcg around this.
	 */
	hm = kzalloc(struct_size(hm, max_nr_pages, nr_node_ids),
		     GFP_KERNEL_ACCOUNT);
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
 * htmm_subtree_node_pages - Pages of a cgroup and its descendants on a node.
 * @memcg: The cgroup.
 * @nid: The node.
 *
 * Like htmm_memcg_node_pages() without a flush, but from the hierarchical
 * statistics: the pages of the whole subtree, which is what a budget
 * counts (as memory.max does).
 *
 * Return: The number of base pages.
 */
static unsigned long htmm_subtree_node_pages(struct mem_cgroup *memcg,
					     int nid)
{
	struct lruvec *lruvec = mem_cgroup_lruvec(memcg, NODE_DATA(nid));
	unsigned long nr = 0;
	enum lru_list lru;

	for_each_lru(lru)
		nr += lruvec_page_state(lruvec, NR_LRU_BASE + lru);
	return nr;
}

/*
 * Overcommit.  The budgets of the top htmm cgroups (enabled, with no
 * enabled ancestor) on each node, each at most the node's size, added up.
 * When they add up to more than the node, each top cgroup's budget is
 * scaled down by the same factor, so that they add up to the node: the
 * node is shared in proportion to the budgets.  Written under htmm_lock
 * (htmm_recount_tops()), read locklessly.  nr_node_ids entries.
 */
static unsigned long *htmm_top_sum;

/* Does the node's overcommit scale the budget of top cgroup @hm? */
static bool htmm_overcommitted(const struct htmm_memcg *hm, int nid)
{
	return READ_ONCE(hm->top) &&
	       READ_ONCE(htmm_top_sum[nid]) > node_present_pages(nid);
}

/**
 * htmm_budget_binds - Does a cgroup's budget on a node bind?
 * @pos: @memcg or one of its ancestors.
 * @memcg: The cgroup whose path is walked.
 * @nid: The node.
 * @self: The budget of @memcg binds whatever it is.
 *
 * The budget of a cgroup with htmm enabled and a limit on @nid binds its
 * whole subtree, as does that of a top cgroup on an overcommitted node.
 * With @self, that of @memcg binds even without a limit, as the size of
 * the node.
 *
 * Return: true if it binds.
 */
bool htmm_budget_binds(struct mem_cgroup *pos, struct mem_cgroup *memcg,
		       int nid, bool self)
{
	struct htmm_memcg *hm = htmm_memcg(pos);

	if (self && pos == memcg)
		return true;
	return READ_ONCE(hm->enabled) &&
	       (READ_ONCE(hm->max_nr_pages[nid]) < PAGE_COUNTER_MAX ||
		htmm_overcommitted(hm, nid));
}

/* The budget of @pos on @nid: its limit, its share if overcommitted. */
static unsigned long htmm_budget_of(struct mem_cgroup *pos, int nid)
{
	struct htmm_memcg *hm = htmm_memcg(pos);
	unsigned long present = node_present_pages(nid);
	unsigned long budget = min_t(unsigned long,
				     READ_ONCE(hm->max_nr_pages[nid]), present);
	unsigned long sum = READ_ONCE(htmm_top_sum[nid]);

	if (READ_ONCE(hm->top) && sum > present)
		budget = mult_frac(budget, present, sum);
	return budget;
}

/* Has a cgroup above @memcg htmm enabled? */
static bool htmm_ancestor_enabled(struct mem_cgroup *memcg)
{
	for (memcg = parent_mem_cgroup(memcg);
	     memcg && !mem_cgroup_is_root(memcg);
	     memcg = parent_mem_cgroup(memcg))
		if (READ_ONCE(htmm_memcg(memcg)->enabled))
			return true;
	return false;
}

/**
 * htmm_recount_tops - Find the top cgroups and add up their budgets.
 *
 * Called whenever a cgroup is enabled or disabled or a budget changes.
 * Followed by htmm_adapt_all(): every share may move.
 *
 * Context: htmm_lock held.
 */
void htmm_recount_tops(void)
{
	struct htmm_memcg *hm;
	unsigned long sum;
	int nid;

	lockdep_assert_held(&htmm_lock);
	spin_lock(&htmm_list_lock);
	list_for_each_entry(hm, &htmm_enabled_list, node)
		WRITE_ONCE(hm->top, !htmm_ancestor_enabled(hm->memcg));
	/* Each sum is written once: readers see the old one or the new. */
	for_each_node_state(nid, N_MEMORY) {
		sum = 0;
		list_for_each_entry(hm, &htmm_enabled_list, node)
			if (hm->top)
				sum += min_t(unsigned long,
					     hm->max_nr_pages[nid],
					     node_present_pages(nid));
		WRITE_ONCE(htmm_top_sum[nid], sum);
	}
	spin_unlock(&htmm_list_lock);
}

/**
 * htmm_budget_left - What a cgroup's budget leaves on a node.
 * @pos: The cgroup.
 * @nid: The node.
 * @permille: Share of the budget kept free, per mille (a watermark).
 *
 * The budget counts the pages of the whole subtree of @pos on @nid, from
 * the statistics as last flushed (htmm_path_flush()).
 *
 * Return: budget - watermark - pages, negative if over.
 */
long htmm_budget_left(struct mem_cgroup *pos, int nid, unsigned int permille)
{
	unsigned long budget = htmm_budget_of(pos, nid);

	return (long)(budget - htmm_wmark_pages(budget, permille)) -
	       (long)htmm_subtree_node_pages(pos, nid);
}

/**
 * htmm_path_flush - Flush the statistics the budgets on a path count.
 * @memcg: The cgroup.
 * @nid: The node.
 * @self: As for htmm_budget_binds().
 *
 * One flush of the highest cgroup whose budget binds covers the subtrees
 * of all the others on the path.  The flush is unconditional, unlike
 * mem_cgroup_flush_stats(), which skips it until the updates pending in
 * the hierarchy exceed MEMCG_CHARGE_BATCH per online CPU: kmigraterd fills
 * a budget up to its promotion watermark and demotes from its demotion
 * watermark, and a count that is off by more than the pages between the
 * two makes it trade pages up and down for ever.  The cost is that of
 * the rstat flush of the updated cgroups of that subtree, once a period.
 *
 * Context: Process context, may sleep.
 */
void htmm_path_flush(struct mem_cgroup *memcg, int nid, bool self)
{
	struct mem_cgroup *pos, *top = NULL;

	for (pos = memcg; pos && !mem_cgroup_is_root(pos);
	     pos = parent_mem_cgroup(pos))
		if (htmm_budget_binds(pos, memcg, nid, self))
			top = pos;
	if (top && !mem_cgroup_disabled())
		cgroup_rstat_flush(top->css.cgroup);
}

/**
 * htmm_path_budget - The effective budget of a cgroup on a node.
 * @memcg: The cgroup.
 * @nid: The node.
 *
 * Budgets are hierarchical: the effective one is the smallest of those of
 * @memcg and of its ancestors with htmm enabled, and at most the size of
 * the node.
 *
 * Context: Any context; @memcg must be pinned.
 * Return: The effective budget in pages.
 */
unsigned long htmm_path_budget(struct mem_cgroup *memcg, int nid)
{
	unsigned long budget = node_present_pages(nid);
	struct mem_cgroup *pos;

	for (pos = memcg; pos && !mem_cgroup_is_root(pos);
	     pos = parent_mem_cgroup(pos))
		if (htmm_budget_binds(pos, memcg, nid, true))
			budget = min(budget, htmm_budget_of(pos, nid));
	return budget;
}

/**
 * htmm_path_room - What the budgets on a cgroup's path leave on a node.
 * @memcg: The cgroup.
 * @nid: The node.
 * @permille: Share of each budget kept free, per mille (a watermark).
 * @self: Count the budget of @memcg even without htmm or a limit there.
 * @flush: Flush the statistics first (htmm_path_flush(); may sleep).
 *
 * Every binding budget on the path from @memcg to the root counts the
 * pages of its whole subtree on @nid: a delegated subtree cannot get more
 * than its delegator's budget by any arrangement of child cgroups.
 *
 * Context: Process context if @flush; any context otherwise.
 * Return: The smallest (budget - watermark - pages) along the path:
 * negative if some cgroup is over, LONG_MAX if no budget binds.
 */
long htmm_path_room(struct mem_cgroup *memcg, int nid, unsigned int permille,
		    bool self, bool flush)
{
	struct mem_cgroup *pos;
	long room = LONG_MAX;

	if (flush)
		htmm_path_flush(memcg, nid, self);
	for (pos = memcg; pos && !mem_cgroup_is_root(pos);
	     pos = parent_mem_cgroup(pos))
		if (htmm_budget_binds(pos, memcg, nid, self))
			room = min(room, htmm_budget_left(pos, nid, permille));
	return room;
}

/**
 * htmm_room_lacks - Is @room too small for @nr more pages?
 * @room: Pages left below a budget, negative if over it (htmm_path_room()).
 * @nr: Pages about to be added.
 *
 * Return: true if @nr pages do not fit in @room.
 */
bool htmm_room_lacks(long room, unsigned long nr)
{
	return room < 0 || nr > (unsigned long)room;
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
	unsigned long nr;
	gfp_t gfp;
	bool flush;
	bool huge;	/* a huge page: the node's own room counts too */
};

/* Would the allocation take a cgroup on the task's path past its budget? */
static bool htmm_budget_full(int nid, struct htmm_alloc_ctx *ctx)
{
	return htmm_room_lacks(htmm_path_room(ctx->memcg, nid, 0, false,
					      ctx->flush), ctx->nr);
}

/*
 * Has no zone of @nid that @gfp may use @nr pages free above its low
 * watermark?  A huge page is allocated without direct reclaim unless THP's
 * defrag setting asks for it, and the local policy tries only the local
 * node for it, so there it fails and the fault falls back to base pages,
 * which go to the next node once the node is at its low watermark.  The
 * order-0 test ignores fragmentation on purpose: while the node has free
 * pages, base pages there beat a huge page on a slower node.
 */
static bool htmm_node_lacks(int nid, struct htmm_alloc_ctx *ctx)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	int z, high = gfp_zone(ctx->gfp);

	for (z = 0; z <= high && z < pgdat->nr_zones; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		if (managed_zone(zone) &&
		    zone_watermark_ok(zone, 0, low_wmark_pages(zone) + ctx->nr,
				      high, 0))
			return false;
	}
	return true;
}

/* Must the allocation go to another node than @nid? */
static bool htmm_node_full(int nid, void *arg)
{
	struct htmm_alloc_ctx *ctx = arg;

	return htmm_budget_full(nid, ctx) ||
	       (ctx->huge && htmm_node_lacks(nid, ctx));
}

/**
 * htmm_path_enabled - Is there a cgroup with htmm enabled on a path?
 * @memcg: The cgroup; its ancestors count too.
 *
 * Return: true if @memcg or one of its ancestors has htmm enabled.
 */
bool htmm_path_enabled(struct mem_cgroup *memcg)
{
	return READ_ONCE(htmm_memcg(memcg)->enabled) ||
	       htmm_ancestor_enabled(memcg);
}

int __htmm_alloc_node(struct mm_struct *mm, gfp_t gfp, unsigned int order,
		      int nid)
{
	struct htmm_alloc_ctx ctx;
	struct htmm_memcg *hm;
	int target = nid;

	if (nid == NUMA_NO_NODE || !htmm_in_use())
		return nid;
	ctx.memcg = get_mem_cgroup_from_mm(mm);
	if (!ctx.memcg)
		return nid;
	hm = htmm_memcg(ctx.memcg);
	ctx.nr = 1UL << order;
	ctx.gfp = gfp;
	ctx.flush = gfpflags_allow_blocking(gfp);
	/*
	 * The budgets of every enabled cgroup on the path bind.  A huge page
	 * also goes on when its node has no room left for it (a huge page on
	 * the next node instead of base pages there, see htmm_node_lacks()).
	 */
	ctx.huge = order && !(gfp & __GFP_DIRECT_RECLAIM);
	if (!hm || !htmm_path_enabled(ctx.memcg) || !htmm_node_full(nid, &ctx))
		goto out;
	/* One flush per allocation decision is enough. */
	ctx.flush = false;

	target = htmm_pick_node(nid, gfp, htmm_node_full, &ctx);
	if (target == NUMA_NO_NODE) {
		/* Every node is full: the limit never fails anything. */
		target = nid;
		if (htmm_budget_full(nid, &ctx)) {
			atomic_long_inc(&hm->nr_alloc_over_limit);
			count_vm_event(HTMM_ALLOC_OVER_LIMIT);
		}
	} else {
		atomic_long_inc(&hm->nr_alloc_redirected);
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
	/* Capabilities of the opener, as cgroup checks them for writes. */
	err = htmm_memcg_set_enabled(memcg, enable,
				     file_ns_capable(of->file, &init_user_ns,
						     CAP_SYS_ADMIN));
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
	/* The fast-tier budgets moved, and the shares of all: thresholds. */
	htmm_recount_tops();
	htmm_adapt_all();
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
		snprintf(key, sizeof(key), "budget_node%d", nid);
		htmm_seq_pages(m, key, htmm_path_budget(memcg, nid));
	}
	seq_printf(m, "alloc_redirected %ld\n",
		   atomic_long_read(&hm->nr_alloc_redirected));
	seq_printf(m, "alloc_over_limit %ld\n",
		   atomic_long_read(&hm->nr_alloc_over_limit));
	htmm_memcg_stat(memcg, m);
	htmm_ccow_stat(memcg, m);
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
	htmm_top_sum = kcalloc(nr_node_ids, sizeof(*htmm_top_sum), GFP_KERNEL);
	if (!htmm_top_sum)
		return -ENOMEM;

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
