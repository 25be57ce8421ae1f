// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmigraterd: the per-node threads that move pages between tiers.
 *
 * There is one thread per node with memory, started with htmm and stopped
 * with it.  Every htmm_demotion_period_in_ms the thread of node N demotes
 * the coldest pages of the cgroups that use more of N than their budget
 * allows, or that wait for room on N to promote hot pages, to
 * next_demotion_node(N).  Every htmm_promotion_period_in_ms the thread of a
 * fast node promotes the queued hot pages of the cgroups that have room on
 * it.
 *
 * Promotion candidates are not searched for: the sample path queues a
 * folio on its cgroup's promotion queue when the folio reaches the hot
 * threshold while it sits on a slow node.  Demotion candidates come from
 * the LRU lists of each cgroup that needs to demote, on that node, oldest
 * first (see htmm_lru_list()), a bounded number per period: the work
 * grows with the cgroup's pages, not with the node.
 *
 * Work is bounded by a token bucket per node (htmm_migrate_rate_mb, at
 * most one second of burst) and by the scan bound below.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/cpumask.h>
#include <linux/freezer.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/memory-tiers.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/swap.h>
#include <linux/vmstat.h>
#include <linux/wait.h>
/* Not self-contained: after linux/mm.h and linux/sched.h. */
#include <linux/compaction.h>

#include "../internal.h"
#include "internal.h"

/* Pages one demotion period looks at, at most. */
#define HTMM_SCAN_MAX		(SZ_512M >> PAGE_SHIFT)
/* Folios taken from an LRU list under its lock at a time. */
#define HTMM_LRU_BATCH		32
/* Folios migrated in one call of migrate_pages(). */
#define HTMM_BATCH		64
/* Promotion batches in a row that may move nothing, per cgroup and period. */
#define HTMM_IDLE_BATCHES	8

const char * const htmm_skip_names[HTMM_NR_SKIPS] = {
	[HTMM_SKIP_PINNED] = "pinned",
	[HTMM_SKIP_MLOCKED] = "mlocked",
	[HTMM_SKIP_ISOLATED] = "isolated",
	[HTMM_SKIP_UNMOVABLE] = "unmovable",
	[HTMM_SKIP_SETTLE] = "settle",
};

/* Demotion strictness: which folios of a cgroup over budget may go. */
enum htmm_level {
	HTMM_LEVEL_COLD,	/* below the warm threshold */
	HTMM_LEVEL_WARM,	/* below the hot threshold */
	HTMM_LEVEL_ANY,		/* anything: the budget is below the hot set */
};

/*
 * How long a walk for room rests after a pass at the last strictness that
 * did not free the room.  Such a pass took every folio that could go for
 * it, and sampling only raises a folio's bin: until the cgroup cools, its
 * hot or fill threshold moves, or hot or strong entries wait where none
 * did, a new pass finds nothing more (but folios new on the node, never
 * sampled, and folios that were settling).  So the rest doubles after
 * each such pass, from HTMM_ROOM_REST to HTMM_ROOM_REST_MAX, and one of
 * those changes ends it after HTMM_ROOM_REST.  With a rest of one second, a
 * cgroup whose hot folios waited for room behind a node full of folios
 * a bin below them walked its lists twice a second and demoted one page
 * in 2,800 looked at (Redis at 1:1 in the workloads benchmark).
 *
 * Walks for the room of fill entries alone rest until the cgroup's next
 * cooling, HTMM_FILL_REST at most: fill entries wait most of the time
 * wherever the budget is smaller than what is used, and what may go down
 * for them changes bins only at a cooling (new pages and folios busy
 * during the pass aside).
 *
 * Only the cgroup's own kmigraterd touches it (struct htmm_migrater).
 */
struct htmm_room_rest {
	unsigned long next;		/* length of the next rest; 0: none yet */
	unsigned long until;		/* jiffies: no walk for room before */
	unsigned long until_same;	/* ... nor before this, unchanged */
	unsigned long fill_until;	/* jiffies: no walk for fill before, */
	u32 epoch;			/* ... in this cooling epoch */
	unsigned int hot, fill;		/* the thresholds when it began */
	bool room, strong;		/* hot, strong entries still waited */
};

/*
 * Where the demotion walk over a cgroup's LRU lists on a node stands, and
 * how strict it is there.  A pass over all the lists that did not meet
 * the cgroup's need makes the next one less strict; after such a pass at
 * the last strictness, walks only for room (the cgroup is not over its
 * budget) rest (struct htmm_room_rest).  A cgroup that did not need to
 * demote in the last period starts anew, at the oldest list and the
 * strictest level; its rest goes on.
 */
struct htmm_lru_pos {
	unsigned short id;		/* mem_cgroup_id(); 0: unused */
	unsigned short slot;		/* list walked, for htmm_lru_list() */
	long left;			/* its pages still to see; -1: unread */
	unsigned long period;		/* htmm_migrater.period last served */
	unsigned int deferred;		/* skewed splits that failed this pass */
	bool settling;			/* a folio was settling this pass */
	unsigned long split_wait;	/* jiffies: strictness kept until; 0: no */
	enum htmm_level level;
	struct htmm_room_rest rest;
};

#define HTMM_ROOM_REST		HZ
#define HTMM_ROOM_REST_MAX	(16 * HZ)
#define HTMM_FILL_REST		(10 * HZ)
/* How long a busy skewed huge page holds its walk at the same strictness */
#define HTMM_SPLIT_WAIT		(10 * HZ)

/* Cgroups one demotion period serves, at most. */
#define HTMM_DEMOTE_MEMCGS	16

/* A cgroup that has to demote from a node this period. */
struct htmm_demote_need {
	struct mem_cgroup *memcg;	/* css reference held */
	long excess;			/* pages over the demotion watermark */
	long room;			/* pages to free for waiting promotions */
	long room_strong;		/* ... of it, for strong entries */
	long room_fill;			/* room, and as much for fill entries */
	struct list_head folios;	/* isolated, not yet migrated */
	unsigned long nr_isolated;
	unsigned long seen;		/* pages looked at this period */
	struct htmm_lru_pos *pos;
};

/* One kmigraterd.  Only its own thread touches the fields after start. */
struct htmm_migrater {
	struct task_struct *task;
	int nid;
	bool kicked;			/* WRITE_ONCE by htmm_migrate_wake() */
	unsigned long next_promote;	/* jiffies */
	unsigned long next_demote;
	unsigned long tokens;		/* pages we may still move */
	unsigned long refill;		/* jiffies of the last refill */
	unsigned int promote_cursor;	/* struct htmm_rotor.first */
	unsigned int demote_cursor;
	unsigned long period;		/* demotion periods run */
	/* The walks of the cgroups served last. */
	struct htmm_lru_pos lru_pos[HTMM_DEMOTE_MEMCGS];
	/* The cgroups one demotion period serves (too big for the stack). */
	struct htmm_demote_need needs[HTMM_DEMOTE_MEMCGS];
};

/*
 * The threads, indexed by node id.  Created and destroyed under htmm_lock;
 * htmm_migrate_wake() reads it under htmm_lock as well.
 */
static struct htmm_migrater **htmm_migraters;
static DECLARE_WAIT_QUEUE_HEAD(htmm_migrate_wq);

/**
 * htmm_wmark_pages - A watermark as a number of pages.
 * @budget: The budget in pages.
 * @permille: The watermark, per mille of @budget.
 *
 * Return: @budget * @permille / 1000, rounded down.
 */
u64 htmm_wmark_pages(u64 budget, unsigned int permille)
{
	return div_u64(budget * permille, 1000);
}

/* Free pages of @nid above the high watermark of each of its zones. */
static unsigned long htmm_node_room(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long room = 0, free, mark;
	int z;

	for (z = 0; z < pgdat->nr_zones; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		if (!managed_zone(zone))
			continue;
		free = zone_page_state(zone, NR_FREE_PAGES);
		mark = high_wmark_pages(zone);
		if (free > mark)
			room += free - mark;
	}
	return room;
}

/**
 * htmm_promote_room - Pages a cgroup may still promote into a node now.
 * @memcg: An htmm cgroup.
 * @nid: A fast node.
 * @flush: Flush the statistics first (htmm_path_flush()); false only
 *	right after such a flush.
 *
 * Context: Process context if @flush, may sleep.
 * Return: What the budgets on the cgroup's path (htmm_path_room()) leave
 * on @nid below their promotion watermarks, at most the node's free pages
 * above its zones' high marks.
 */
unsigned long htmm_promote_room(struct mem_cgroup *memcg, int nid, bool flush)
{
	long room = htmm_path_room(memcg, nid,
				   READ_ONCE(htmm_params.promotion_wmark),
				   true, flush);

	if (room <= 0)
		return 0;
	return min_t(unsigned long, room, htmm_node_room(nid));
}

static void htmm_refill(struct htmm_migrater *m)
{
	unsigned long now = jiffies;
	u64 rate = (u64)READ_ONCE(htmm_params.migrate_rate_mb) <<
		   (20 - PAGE_SHIFT);
	u64 add = div_u64(rate * (now - m->refill), HZ);

	m->tokens = min_t(u64, m->tokens + add, rate);
	m->refill = now;
}

/**
 * __htmm_numa_target - Leave cross-tier moves of htmm pages to htmm.
 * @folio: The folio of a NUMA hinting fault; the fault holds a reference.
 * @curnid: The node it is on.
 * @nid: The node NUMA balancing would move it to.
 *
 * See htmm_numa_target().
 *
 * Context: Under the page table lock of the fault.
 * Return: @nid, or NUMA_NO_NODE if the folio belongs to an htmm-enabled
 * cgroup and the move would cross between fast and slow nodes.
 */
int __htmm_numa_target(struct folio *folio, int curnid, int nid)
{
	struct mem_cgroup *memcg;
	struct htmm_memcg *hm;
	bool owned;

	if (nid == NUMA_NO_NODE || !htmm_in_use() ||
	    htmm_node_is_fast(curnid) == htmm_node_is_fast(nid))
		return nid;
	rcu_read_lock();
	memcg = folio_memcg_check(folio);
	hm = memcg ? htmm_memcg(memcg) : NULL;
	owned = hm && READ_ONCE(hm->enabled);
	rcu_read_unlock();
	if (!owned)
		return nid;
	count_vm_event(HTMM_NUMA_LEFT);
	return NUMA_NO_NODE;
}

/**
 * htmm_get_folio - Take a reference on the LRU folio at a page frame.
 * @pfn: The page frame.
 *
 * The frame may be freed and reused at any time, so the first LRU test is
 * only a hint: the folio is checked again once the reference pins it, as
 * damon_get_folio() does.
 *
 * Return: The folio with a reference, or NULL if @pfn is not (or no
 * longer) part of an LRU folio.
 */
struct folio *htmm_get_folio(unsigned long pfn)
{
	struct page *page = pfn_to_online_page(pfn);
	struct folio *folio;

	if (!page)
		return NULL;
	folio = page_folio(page);
	if (!folio_test_lru(folio) || !folio_try_get(folio))
		return NULL;
	if (unlikely(page_folio(page) != folio || !folio_test_lru(folio))) {
		folio_put(folio);
		return NULL;
	}
	return folio;
}

bool htmm_folio_in(struct folio *folio, struct mem_cgroup *memcg)
{
	bool ret;

	rcu_read_lock();
	ret = folio_memcg_check(folio) == memcg;
	rcu_read_unlock();
	return ret;
}

/*
 * Should a folio that htmm moved recently stay where it is?  It may move
 * back within htmm_settle_ms only if its own bin moved by two or more
 * since, not merely because the thresholds moved.
 */
static bool htmm_settling(const struct htmm_page_info *info, bool up)
{
	unsigned int against = up ? HTMM_META_DEMOTED : HTMM_META_PROMOTED;

	if (!(info->flags & against) ||
	    info->moved_ms >= READ_ONCE(htmm_params.settle_ms))
		return false;
	if (up)
		return info->folio_bin <= info->mbin + 1;
	return info->folio_bin + 1 >= info->mbin;
}

void htmm_count_skip(struct htmm_memcg *hm, enum htmm_skip why, long nr)
{
	unsigned long flags;

	spin_lock_irqsave(&hm->lock, flags);
	hm->nr_skipped[why] += nr;
	spin_unlock_irqrestore(&hm->lock, flags);
	count_vm_events(HTMM_NR_SKIP_PINNED + why, nr);
}

/*
 * Isolate @folio, on which the caller holds a reference, for migration.
 * Return: HTMM_NR_SKIPS if it went on @list, else why it was skipped.
 */
enum htmm_skip htmm_isolate(struct folio *folio, struct list_head *list)
{
	struct address_space *mapping;

	if (folio_maybe_dma_pinned(folio))
		return HTMM_SKIP_PINNED;
	if (folio_test_mlocked(folio) || folio_test_unevictable(folio))
		return HTMM_SKIP_MLOCKED;
	if (folio_test_hugetlb(folio) || folio_test_ksm(folio))
		return HTMM_SKIP_UNMOVABLE;
	if (!folio_test_anon(folio)) {
		mapping = folio_mapping(folio);
		if (mapping && !mapping->a_ops->migrate_folio)
			return HTMM_SKIP_UNMOVABLE;
	}
	if (!folio_isolate_lru(folio))
		return HTMM_SKIP_ISOLATED;
	node_stat_mod_folio(folio, NR_ISOLATED_ANON + folio_is_file_lru(folio),
			    folio_nr_pages(folio));
	list_add_tail(&folio->lru, list);
	return HTMM_NR_SKIPS;
}

/* Isolated pages on @list, by LRU type. */
static void htmm_count_isolated(struct list_head *list, long nr[2])
{
	struct folio *folio;

	nr[0] = 0;
	nr[1] = 0;
	list_for_each_entry(folio, list, lru)
		nr[folio_is_file_lru(folio)] += folio_nr_pages(folio);
}

/*
 * Allocate a promotion target on the fast node, as NUMA balancing
 * allocates its promotions (alloc_misplaced_dst_folio(), static and built
 * only with CONFIG_NUMA_BALANCING): never with direct reclaim, and for a
 * huge page without direct compaction either (GFP_TRANSHUGE_LIGHT).  When
 * no huge page is free, kcompactd is woken to make one in the background;
 * the folio stays where it is and goes up at a later try.
 */
static struct folio *htmm_alloc_promote(struct folio *src,
					unsigned long private)
{
	unsigned int order = folio_order(src);
	gfp_t gfp = __GFP_THISNODE | __GFP_NOWARN;
	int nid = (int)private;
	struct folio *dst;

	if (order)
		gfp |= GFP_TRANSHUGE_LIGHT;
	else
		gfp |= (GFP_HIGHUSER_MOVABLE & ~__GFP_RECLAIM) |
		       __GFP_NOMEMALLOC | __GFP_NORETRY;
	dst = __folio_alloc_node(gfp, order, nid);
	if (!dst && order)
		wakeup_kcompactd(NODE_DATA(nid), order, gfp_zone(gfp));
	return dst;
}

/*
 * Promote the folios on @list to @nid, base pages first: migrate_pages()
 * gives up on the rest of a batch at the first target it cannot
 * allocate, which for huge pages happens while the node is fragmented.
 * Return: pages migrated.
 */
static unsigned int htmm_promote_list(struct list_head *list, int nid)
{
	unsigned int nr = 0, nr_large = 0;
	struct folio *folio, *next;
	LIST_HEAD(large);

	list_for_each_entry_safe(folio, next, list, lru)
		if (folio_test_large(folio))
			list_move_tail(&folio->lru, &large);
	if (!list_empty(list))
		migrate_pages(list, htmm_alloc_promote, NULL, nid,
			      MIGRATE_ASYNC, MR_NUMA_MISPLACED, &nr);
	if (!list_empty(&large))
		migrate_pages(&large, htmm_alloc_promote, NULL, nid,
			      MIGRATE_ASYNC, MR_NUMA_MISPLACED, &nr_large);
	list_splice_tail(&large, list);
	return nr + nr_large;
}

/* Count promotions where NUMA-balancing tiering counts its own. */
static void htmm_count_promoted(struct mem_cgroup *memcg, int nid,
				unsigned int nr)
{
#ifdef CONFIG_NUMA_BALANCING
	mod_lruvec_state(mem_cgroup_lruvec(memcg, NODE_DATA(nid)),
			 PGPROMOTE_SUCCESS, nr);
#endif
}

/*
 * Migrate the folios on @list to @nid.  For a demotion, the folios come
 * from @src_nid and @allowed are the fallback nodes; promotions may come
 * from several nodes.  Failed folios go back to the LRU with their
 * migration mark cleared.  Return: pages migrated.
 */
unsigned long htmm_migrate_list(struct mem_cgroup *memcg,
				struct list_head *list, int src_nid, int nid,
				nodemask_t *allowed, bool up)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	struct migration_target_control mtc = {
		.nid = nid,
		.nmask = allowed,
		.gfp_mask = (GFP_HIGHUSER_MOVABLE & ~__GFP_RECLAIM) |
			    __GFP_NOWARN | __GFP_NOMEMALLOC,
		.reason = up ? MR_NUMA_MISPLACED : MR_DEMOTION,
	};
	unsigned int nr_succeeded = 0;
	long before[2], after[2];
	unsigned long flags, failed;
	struct folio *folio;

	if (list_empty(list))
		return 0;
	htmm_count_isolated(list, before);
	if (up) {
		nr_succeeded = htmm_promote_list(list, nid);
		htmm_count_promoted(memcg, nid, nr_succeeded);
	} else {
		/* The target node first, then the other lower tiers. */
		mtc.gfp_mask |= __GFP_KSWAPD_RECLAIM;
		migrate_pages(list, alloc_migrate_folio, NULL,
			      (unsigned long)&mtc, MIGRATE_ASYNC,
			      MR_DEMOTION, &nr_succeeded);
	}
	htmm_count_isolated(list, after);
	/*
	 * migrate_pages() drops the isolation count of what it migrated,
	 * except for demotions, whose usual caller (reclaim) keeps its own.
	 * Every folio of a demotion comes from @src_nid.
	 */
	if (!up) {
		mod_node_page_state(NODE_DATA(src_nid), NR_ISOLATED_ANON,
				    after[0] - before[0]);
		mod_node_page_state(NODE_DATA(src_nid), NR_ISOLATED_FILE,
				    after[1] - before[1]);
	}
	list_for_each_entry(folio, list, lru)
		htmm_folio_mark(folio, memcg, 0,
				HTMM_META_PROMOTED | HTMM_META_DEMOTED);
	failed = after[0] + after[1];
	putback_movable_pages(list);
	/*
	 * The new folios wait in this CPU's LRU batch, where the LRU
	 * statistics do not count them yet: the next look at the budget
	 * would see room that they already took.
	 */
	lru_add_drain();

	spin_lock_irqsave(&hm->lock, flags);
	if (up)
		hm->nr_promoted += nr_succeeded;
	else
		hm->nr_demoted += nr_succeeded;
	hm->nr_migrate_failed += failed;
	spin_unlock_irqrestore(&hm->lock, flags);
	count_vm_events(up ? HTMM_NR_PROMOTED : HTMM_NR_DEMOTED, nr_succeeded);
	count_vm_events(HTMM_NR_MIGRATE_FAILED, failed);
	return nr_succeeded;
}

/* Pop up to @max queued candidates of @memcg.  Return: how many. */
static unsigned int htmm_cand_pop(struct mem_cgroup *memcg,
				  unsigned long *pfns, unsigned int max)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	unsigned long flags;
	unsigned int n = 0;

	spin_lock_irqsave(&hm->lock, flags);
	while (n < max && hm->cand_len)
		if (htmm_cand_take_locked(hm, memcg, &pfns[n]))
			n++;
	spin_unlock_irqrestore(&hm->lock, flags);
	return n;
}

/*
 * Drop the entries at the head of @memcg's queue that no longer count
 * (htmm_cand_head_live_locked()).  The room their hot entries asked for
 * is not demoted for.
 */
static void htmm_cand_drop_stale(struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	unsigned long flags, pfn;
	unsigned int b;

	/* Interrupts off for HTMM_LOCKED_BATCH page_ext lookups at most. */
	do {
		spin_lock_irqsave(&hm->lock, flags);
		for (b = 0; b < HTMM_LOCKED_BATCH && hm->cand_len &&
		     !htmm_cand_head_live_locked(hm, memcg); b++)
			htmm_cand_take_locked(hm, memcg, &pfn);
		spin_unlock_irqrestore(&hm->lock, flags);
	} while (b == HTMM_LOCKED_BATCH);
}

/*
 * Isolate for promotion the folios at @pfns that still qualify, taking at
 * most @room pages.  Return: pages isolated onto @list; *@nr_base: how many
 * of them are base pages.
 */
static unsigned long htmm_promote_pick(struct mem_cgroup *memcg,
				       const unsigned long *pfns,
				       unsigned int n, unsigned long room,
				       struct list_head *list,
				       unsigned long *nr_base)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	/* Fill entries wait while hot ones do (the room is theirs). */
	u64 waiting = htmm_cand_waiting(hm, NULL, NULL);
	struct htmm_page_info info;
	unsigned long nr = 0;
	struct folio *folio;
	enum htmm_skip why;
	unsigned int i;

	for (i = 0; i < n; i++) {
		folio = htmm_get_folio(pfns[i]);
		if (!folio)
			continue;
		if (!htmm_folio_in(folio, memcg) ||
		    htmm_node_is_fast(folio_nid(folio)) ||
		    htmm_page_info(&folio->page, &info) || !info.fill)
			goto put;
		/*
		 * A skewed huge page that is only in the fill bin, or that
		 * does not fit the room left, has hot subpages in a cold huge
		 * page: split it, and its hot subpages are queued on their own.
		 * Splitting takes no room, so it does not wait for the hot
		 * folios queued before (those of the last split among them).
		 */
		if (folio_test_large(folio) &&
		    (!info.hot || folio_nr_pages(folio) > room - nr) &&
		    htmm_split_for_room(memcg, folio) >= 0)
			continue;	/* it took our reference */
		if (folio_nr_pages(folio) > room - nr ||
		    (!info.hot && waiting))
			goto put;
		if (htmm_settling(&info, true)) {
			htmm_count_skip(hm, HTMM_SKIP_SETTLE, folio_nr_pages(folio));
			goto put;
		}
		why = htmm_isolate(folio, list);
		if (why != HTMM_NR_SKIPS) {
			htmm_count_skip(hm, why, folio_nr_pages(folio));
			goto put;
		}
		nr += folio_nr_pages(folio);
		*nr_base += !folio_test_large(folio);
		htmm_folio_mark(folio, memcg, HTMM_META_PROMOTED,
				HTMM_META_DEMOTED);
put:
		folio_put(folio);
	}
	return nr;
}

/*
 * Promote queued hot folios of @memcg into @m's node, up to the room the
 * cgroup has there and the tokens left.  Folios of the fill bin go up
 * only while no hot folio waits; skewed huge pages among them are split.
 */
static void htmm_promote_memcg(struct htmm_migrater *m,
			       struct mem_cgroup *memcg, unsigned long end)
{
	unsigned long pfns[HTMM_BATCH];
	unsigned long room, nr, nr_base, moved;
	unsigned int n, idle = 0;
	LIST_HEAD(list);

	room = min(htmm_promote_room(memcg, m->nid, true), m->tokens);
	while (room && !kthread_should_stop() && time_before(jiffies, end)) {
		n = htmm_cand_pop(memcg, pfns, min_t(unsigned long, room,
						     HTMM_BATCH));
		if (!n)
			break;
		nr_base = 0;
		nr = htmm_promote_pick(memcg, pfns, n, room, &list, &nr_base);
		moved = htmm_migrate_list(memcg, &list, NUMA_NO_NODE, m->nid,
					  NULL, true);
		m->tokens -= min(m->tokens, moved);
		/*
		 * The budget may have been lowered since: a room computed
		 * once would promote past the new one for as long as the
		 * queue lasts, and demotion would wait for it.  The
		 * statistics read without a flush may not count all the
		 * pages just moved yet, hence the room also shrinks by them.
		 */
		room = min3(room - min(room, moved), m->tokens,
			    htmm_promote_room(memcg, m->nid, false));
		/*
		 * Not a base page moved: the node is full after all.  Huge
		 * pages alone fail while the node has no free huge page (and
		 * kcompactd was woken to make one); the base pages queued
		 * behind them still fit, but only HTMM_IDLE_BATCHES batches
		 * in a row may move nothing.
		 */
		if (!moved && nr && (nr_base || ++idle >= HTMM_IDLE_BATCHES))
			break;
		if (moved)
			idle = 0;
		cond_resched();
	}
}

/*
 * Claim a cgroup's due split round, so that one fast node's kmigraterd
 * runs it.  Return: true if this caller runs it.
 */
static bool htmm_split_claim(struct htmm_memcg *hm)
{
	unsigned long flags;
	bool due;

	spin_lock_irqsave(&hm->lock, flags);
	due = hm->split.due;
	hm->split.due = false;
	spin_unlock_irqrestore(&hm->lock, flags);
	return due;
}

/*
 * Set when a sample found a folio to queue off the LRU (any context);
 * cleared by the drain it asks for.
 */
static bool htmm_lru_parked;
static DEFINE_SPINLOCK(htmm_drain_lock);
static u64 htmm_next_drain;	/* get_jiffies_64(); under htmm_drain_lock */

/**
 * htmm_note_parked - Note a folio that a sample would queue but is off the LRU.
 *
 * See htmm_drain_parked().
 *
 * Context: Any context; callers hold a cgroup's htmm lock.
 */
void htmm_note_parked(void)
{
	if (!READ_ONCE(htmm_lru_parked))
		WRITE_ONCE(htmm_lru_parked, true);
}

/*
 * A folio off the LRU is being migrated or reclaimed, or waits in a
 * per-CPU LRU batch (cpu_fbatches): a folio just faulted in or migrated
 * stays there until 31 have gathered on that CPU or the CPU drains its
 * batches.  On a quiet CPU that may take forever, and nothing can isolate
 * the folio meanwhile, so a hot one would be neither queued nor promoted.
 * When samples found such folios, drain every CPU's batches, as khugepaged
 * and ksmd do once per scan: at most once a second for all the threads.
 */
static void htmm_drain_parked(void)
{
	u64 now = get_jiffies_64();
	bool due;

	if (!READ_ONCE(htmm_lru_parked))
		return;
	spin_lock(&htmm_drain_lock);
	due = time_after_eq64(now, htmm_next_drain);
	if (due) {
		htmm_next_drain = now + HZ;
		WRITE_ONCE(htmm_lru_parked, false);
	}
	spin_unlock(&htmm_drain_lock);
	if (due)
		lru_add_drain_all();
}

/*
 * A walk over the cgroups with htmm enabled, in pre-order, that starts
 * after the @first-th of them and wraps around: loops that serve cgroups
 * until their budget of work runs out start each period after the cgroup
 * served last, so that no cgroup waits for the ones before it.
 */
struct htmm_rotor {
	unsigned int first;		/* enabled cgroups to skip at first */
	unsigned int idx;		/* @memcg is the idx-th (from 1) */
	int pass;			/* 0: after @first, 1: up to it */
	struct mem_cgroup *memcg;	/* mem_cgroup_iter() position */
};

/*
 * The next cgroup of the walk, or NULL at its end.  To leave the walk
 * early, mem_cgroup_iter_break(NULL, memcg).
 */
static struct mem_cgroup *htmm_rotor_next(struct htmm_rotor *r)
{
	struct htmm_memcg *hm;
	bool after;

	while (r->pass < 2) {
		r->memcg = mem_cgroup_iter(NULL, r->memcg, NULL);
		if (!r->memcg) {
			r->pass++;
			r->idx = 0;
			continue;
		}
		hm = htmm_memcg(r->memcg);
		if (!hm || !READ_ONCE(hm->enabled))
			continue;
		after = ++r->idx > r->first;
		/* Pass 0 takes those after @first, pass 1 the others. */
		if (after != r->pass)
			return r->memcg;
	}
	return NULL;
}

static void htmm_promote(struct htmm_migrater *m)
{
	struct htmm_rotor r = { .first = m->promote_cursor };
	unsigned int period = READ_ONCE(htmm_params.promotion_period_ms);
	unsigned long end = jiffies + msecs_to_jiffies(period);
	struct mem_cgroup *memcg;
	struct htmm_memcg *hm;

	if (!htmm_node_is_fast(m->nid))
		return;
	htmm_drain_parked();
	while ((memcg = htmm_rotor_next(&r))) {
		hm = htmm_memcg(memcg);
		m->promote_cursor = r.idx;
		if (READ_ONCE(hm->split.due) && htmm_split_claim(hm))
			htmm_split_round(memcg, &m->tokens);
		if (READ_ONCE(hm->cand_len))
			htmm_promote_memcg(m, memcg, end);
		/*
		 * At most a period's time: demotion, which makes the room,
		 * and a lowered budget are seen in between.
		 */
		if (!m->tokens || kthread_should_stop() ||
		    time_after_eq(jiffies, end)) {
			mem_cgroup_iter_break(NULL, memcg);
			break;
		}
	}
}

/*
 * The excess of each over-budget cgroup seen in a demotion pass that is
 * not yet assigned to a cgroup of its subtree.  A cgroup over its budget
 * only through the pages of enabled descendants has them demote the
 * excess between them, once, not once each.
 */
#define HTMM_LEDGER	16

struct htmm_ledger {
	struct mem_cgroup *memcg[HTMM_LEDGER];	/* pinned by a descendant */
	long left[HTMM_LEDGER];
	unsigned int nr;
};

/* The entry of @pos, new with @excess if there is none; NULL if full. */
static long *htmm_ledger_slot(struct htmm_ledger *l, struct mem_cgroup *pos,
			      long excess)
{
	unsigned int i;

	for (i = 0; i < l->nr; i++)
		if (l->memcg[i] == pos)
			return &l->left[i];
	if (l->nr == HTMM_LEDGER)
		return NULL;
	l->memcg[l->nr] = pos;
	l->left[l->nr] = excess;
	return &l->left[l->nr++];
}

/*
 * Pages @memcg demotes from @nid for the budgets on its path: the largest
 * unassigned excess along it, at most the cgroup's own pages there.
 */
static long htmm_demote_excess(struct mem_cgroup *memcg, int nid,
			       unsigned int permille, struct htmm_ledger *l)
{
	struct mem_cgroup *pos;
	long excess = 0, e, *slot;

	htmm_path_flush(memcg, nid, true);
	for (pos = memcg; pos && !mem_cgroup_is_root(pos);
	     pos = parent_mem_cgroup(pos)) {
		if (!htmm_budget_binds(pos, memcg, nid, true))
			continue;
		e = -htmm_budget_left(pos, nid, permille);
		slot = htmm_ledger_slot(l, pos, e);
		excess = max(excess, slot ? *slot : e);
	}
	excess = min_t(long, excess, htmm_memcg_node_pages(memcg, nid, false));
	if (excess <= 0)
		return 0;
	for (pos = memcg; pos && !mem_cgroup_is_root(pos);
	     pos = parent_mem_cgroup(pos)) {
		if (!htmm_budget_binds(pos, memcg, nid, true))
			continue;
		slot = htmm_ledger_slot(l, pos, 0);
		if (slot)
			*slot -= excess;
	}
	return excess;
}

/* Work out what @memcg has to demote from @nid.  Return: true if any. */
static bool htmm_demote_need(struct mem_cgroup *memcg, int nid,
			     struct htmm_ledger *ledger,
			     struct htmm_demote_need *need)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	unsigned int pw = READ_ONCE(htmm_params.promotion_wmark);
	unsigned int dw = min(READ_ONCE(htmm_params.demotion_wmark), pw);
	unsigned long room;
	u64 waiting, strong, fill;

	need->excess = htmm_demote_excess(memcg, nid, dw, ledger);
	need->room = 0;
	need->room_strong = 0;
	need->room_fill = 0;
	if (htmm_node_is_fast(nid)) {
		htmm_cand_rebin(memcg);
		htmm_cand_drop_stale(memcg);
		waiting = htmm_cand_waiting(hm, &strong, &fill);
		strong = min(strong, waiting);
		/* htmm_demote_excess() flushed the same path. */
		room = htmm_promote_room(memcg, nid, false);
		if (waiting > room)
			need->room = waiting - room;
		if (strong > room)
			need->room_strong = strong - room;
		if (waiting + fill > room)
			need->room_fill = waiting + fill - room;
	}
	return need->excess > 0 || need->room_fill > 0;
}

/*
 * May a folio leave for @need at strictness @level?  For an excess, cold
 * folios go first, then warm ones; only a budget below the hot set itself
 * (strictness HTMM_LEVEL_ANY) lets hot folios go.
 *
 * Room for waiting hot folios is made with a margin of two bins, a factor
 * of two to four in density: a folio goes down for one that only reached
 * the hot threshold if its bin is two or more below the threshold (or it
 * was never sampled), and a warm folio only for a strong entry, queued
 * HTMM_STRONG_BINS or more above the threshold.  Sampling moves pages
 * used alike by a bin either way; without the margin, two such sets on
 * either side of the threshold would trade places for ever.  Fill
 * entries get room with the same margin below the fill bin (when the hot
 * set fits but the fill bin does not, cold folios would otherwise keep
 * the rest of the budget).
 */
static bool htmm_demotable(const struct htmm_page_info *info,
			   const struct htmm_demote_need *need,
			   enum htmm_level level)
{
	if (need->excess > 0) {
		switch (level) {
		case HTMM_LEVEL_COLD:
			return info->warm_bin != HTMM_BIN_NONE ?
			       info->folio_bin < info->warm_bin : true;
		case HTMM_LEVEL_WARM:
			return !info->hot;
		default:
			return true;
		}
	}
	if (!info->sampled || (info->fill_bin != HTMM_BIN_NONE &&
			       info->folio_bin + 2 <= info->fill_bin))
		return need->room_fill > 0;
	if (info->hot_bin != HTMM_BIN_NONE &&
	    info->folio_bin + 2 <= info->hot_bin)
		return need->room > 0;
	return level >= HTMM_LEVEL_WARM && !info->hot &&
	       need->room_strong > 0;
}

/* Unevictable folios are never demoted: their list is not walked. */
static const enum lru_list htmm_lrus[] = {
	LRU_INACTIVE_ANON, LRU_INACTIVE_FILE, LRU_ACTIVE_ANON, LRU_ACTIVE_FILE,
};

#ifdef CONFIG_LRU_GEN
#define HTMM_GEN_SLOTS		(MAX_NR_GENS * ANON_AND_FILE * MAX_NR_ZONES)
#else
#define HTMM_GEN_SLOTS		0
#endif
#define HTMM_LRU_SLOTS		(HTMM_GEN_SLOTS + ARRAY_SIZE(htmm_lrus))

/*
 * The LRU list a demotion walk looks at in @slot of @lruvec, and its size
 * in *@pages; NULL if the slot names none now.  Oldest first, as reclaim
 * takes them: the multi-gen LRU's generations from the oldest (each with
 * both types and all zones), then the classic lists, inactive before
 * active.  Only one kind has folios, except while the multi-gen LRU is
 * switched on or off.  Caller holds the LRU lock.
 */
static struct list_head *htmm_lru_list(struct lruvec *lruvec,
				       unsigned int slot, long *pages)
{
#ifdef CONFIG_LRU_GEN
	if (slot < HTMM_GEN_SLOTS) {
		struct lru_gen_folio *lrugen = &lruvec->lrugen;
		unsigned int zone = slot % MAX_NR_ZONES;
		unsigned int type = slot / MAX_NR_ZONES % ANON_AND_FILE;
		unsigned long seq = READ_ONCE(lrugen->min_seq[type]) +
				    slot / (MAX_NR_ZONES * ANON_AND_FILE);
		int gen = lru_gen_from_seq(seq);

		if (seq > READ_ONCE(lrugen->max_seq)) {
			*pages = 0;
			return NULL;
		}
		*pages = READ_ONCE(lrugen->nr_pages[gen][type][zone]);
		return &lrugen->folios[gen][type][zone];
	}
	slot -= HTMM_GEN_SLOTS;
#endif
	*pages = lruvec_page_state_local(lruvec, NR_LRU_BASE + htmm_lrus[slot]);
	return &lruvec->lists[htmm_lrus[slot]];
}

/*
 * Take a reference on up to @max folios where @pos stands, from the tail
 * of its list, and rotate every folio looked at to the head: the next
 * batch and the next period go on where this one stopped, and the walk of
 * a list ends once as many pages as it held (at least a batch) were looked
 * at.  Rotation keeps a multi-gen LRU folio in its generation; on the
 * classic LRU it gives the folios htmm kept one more trip along their list
 * before reclaim, as a referenced folio gets.
 * Return: how many, in @folios; the pages looked at are added to *@seen.
 */
static unsigned int htmm_lru_take(struct lruvec *lruvec,
				  struct htmm_lru_pos *pos,
				  struct folio **folios, unsigned int max,
				  unsigned long *seen)
{
	struct list_head *head;
	struct folio *folio;
	unsigned int n = 0;
	long pages, nr;

	spin_lock_irq(&lruvec->lru_lock);
	while (n < max && pos->slot < HTMM_LRU_SLOTS) {
		head = htmm_lru_list(lruvec, pos->slot, &pages);
		if (pos->left < 0)
			pos->left = max_t(long, pages, HTMM_LRU_BATCH);
		if (!head || list_empty(head) || !pos->left) {
			pos->slot++;
			pos->left = -1;
			continue;
		}
		folio = lru_to_folio(head);
		nr = folio_nr_pages(folio);
		pos->left -= min(pos->left, nr);
		*seen += nr;
		list_move(&folio->lru, head);
		/* Not if being freed or isolated, waiting for the lock. */
		if (folio_test_lru(folio) && folio_try_get(folio))
			folios[n++] = folio;
	}
	spin_unlock_irq(&lruvec->lru_lock);
	return n;
}

/*
 * The walk of @memcg on @m's node: the one kept, or a new one in place of
 * the one served longest ago.
 */
static struct htmm_lru_pos *htmm_lru_pos(struct htmm_migrater *m,
					 struct mem_cgroup *memcg)
{
	unsigned short id = mem_cgroup_id(memcg);
	struct htmm_lru_pos *pos = &m->lru_pos[0];
	unsigned int i;

	for (i = 0; i < HTMM_DEMOTE_MEMCGS; i++) {
		if (m->lru_pos[i].id == id) {
			pos = &m->lru_pos[i];
			break;
		}
		if (m->lru_pos[i].period < pos->period)
			pos = &m->lru_pos[i];
	}
	if (pos->id != id) {
		memset(pos, 0, sizeof(*pos));
		pos->id = id;
	}
	if (!pos->period || pos->period + 1 < m->period) {
		pos->slot = 0;
		pos->left = -1;
		pos->deferred = 0;
		pos->settling = false;
		pos->split_wait = 0;
		pos->level = HTMM_LEVEL_COLD;
	}
	pos->period = m->period;
	return pos;
}

/*
 * Has what a walk for @need may free changed since its rest began?
 * (struct htmm_room_rest)
 */
static bool htmm_room_changed(const struct htmm_room_rest *rest,
			      struct htmm_memcg *hm,
			      const struct htmm_demote_need *need)
{
	return READ_ONCE(hm->epoch) != rest->epoch ||
	       READ_ONCE(hm->hot) != rest->hot ||
	       READ_ONCE(hm->fill) != rest->fill ||
	       (need->room > 0 && !rest->room) ||
	       (need->room_strong > 0 && !rest->strong);
}

/* A pass for @need at the last strictness ended without freeing the room. */
static void htmm_room_rest_start(struct htmm_room_rest *rest,
				 struct htmm_memcg *hm,
				 const struct htmm_demote_need *need,
				 bool settling)
{
	unsigned long now = jiffies;

	/* Settling folios may go once settled: no longer a rest for them. */
	if (!rest->next || settling)
		rest->next = HTMM_ROOM_REST;
	rest->until = now + HTMM_ROOM_REST;
	rest->until_same = now + rest->next;
	rest->fill_until = now + HTMM_FILL_REST;
	rest->epoch = READ_ONCE(hm->epoch);
	rest->hot = READ_ONCE(hm->hot);
	rest->fill = READ_ONCE(hm->fill);
	rest->room = need->room > 0;
	rest->strong = need->room_strong > 0;
	if (!settling)
		rest->next = min_t(unsigned long, rest->next * 2,
				   HTMM_ROOM_REST_MAX);
}

/*
 * A walk over all of a cgroup's lists ended, and what the cgroup needs is
 * not met: the next walk is less strict.  Return: true if it is, and is
 * worth starting at once.
 *
 * Not only a pass that found nothing: the cgroup's own new pages, never
 * sampled, may trickle down a few at each pass while warm folios would
 * have to go as well, and it would never get less strict (the convergence
 * benchmark with the Accessed-bit sampler stalled 12-21 s that way).
 */
static bool htmm_lru_pass_end(struct htmm_demote_need *need,
			      struct htmm_memcg *hm)
{
	struct htmm_lru_pos *pos = need->pos;
	unsigned int deferred = pos->deferred;
	bool settling = pos->settling;

	pos->slot = 0;
	pos->left = -1;
	pos->deferred = 0;
	pos->settling = false;
	/*
	 * A skewed huge page could not be split (locked, or an extra
	 * reference).  Less strict, the walk would send the hot subpages of
	 * the huge pages it did split down before it came back to that one:
	 * the next period walks at this strictness again.  For
	 * HTMM_SPLIT_WAIT at most, as a page can stay busy for good (a
	 * reference held in a pipe by vmsplice()).
	 */
	if (deferred && !pos->split_wait)
		pos->split_wait = jiffies + HTMM_SPLIT_WAIT ?: 1;
	if (deferred && time_before(jiffies, pos->split_wait))
		return false;
	pos->split_wait = 0;
	if (pos->level < HTMM_LEVEL_ANY) {
		pos->level++;
		return true;
	}
	htmm_room_rest_start(&pos->rest, hm, need, settling);
	return false;
}

/*
 * Take from @need, a need of @hm's cgroup, what the rests of its walk
 * (struct htmm_room_rest) hold back.  Return: true if something is left
 * to demote for.
 */
static bool htmm_demote_rest(struct htmm_demote_need *need,
			     struct htmm_memcg *hm)
{
	struct htmm_room_rest *rest = &need->pos->rest;
	unsigned long now = jiffies;

	if (!rest->next)
		return need->excess > 0 || need->room_fill > 0;
	if (time_before(now, rest->until_same) &&
	    !time_before(now, rest->until) &&
	    htmm_room_changed(rest, hm, need)) {
		rest->until_same = now;
		rest->next = HTMM_ROOM_REST;
	}
	if (time_before(now, rest->until_same)) {
		need->room = 0;
		need->room_strong = 0;
		need->room_fill = 0;
	} else if (time_before(now, rest->fill_until) &&
		   rest->epoch == READ_ONCE(hm->epoch)) {
		need->room_fill = min(need->room_fill, need->room);
	}
	return need->excess > 0 || need->room_fill > 0;
}

/* @nr pages of @need went down, or are on their way. */
static void htmm_demote_count(struct htmm_migrater *m,
			      struct htmm_demote_need *need, long nr)
{
	need->excess -= nr;
	need->room -= nr;
	need->room_strong -= nr;
	need->room_fill -= nr;
	m->tokens -= min_t(unsigned long, m->tokens, nr);
}

/* Look at @folio, on which we hold a reference, for @need. */
static void htmm_demote_folio(struct htmm_migrater *m,
			      struct htmm_demote_need *need,
			      struct folio *folio)
{
	struct htmm_memcg *hm = htmm_memcg(need->memcg);
	enum htmm_level level = need->pos->level;
	long nr = folio_nr_pages(folio), sent;
	struct htmm_page_info info;
	enum htmm_skip why;
	int err;

	err = htmm_page_info(&folio->page, &info);
	if (err == -ENODEV) {
		/* Never sampled: as cold as it gets. */
		memset(&info, 0, sizeof(info));
		info.hot_bin = HTMM_BIN_NONE;
		info.warm_bin = HTMM_BIN_NONE;
	} else if (err) {
		goto put;
	}
	/*
	 * A huge page about to go down whole, or kept whole once cold folios
	 * ran out, is split instead if it is skewed: only its subpages
	 * without samples go down, the sampled ones stay.
	 */
	if (nr > 1 && (level >= HTMM_LEVEL_WARM ||
		       htmm_demotable(&info, need, level))) {
		sent = htmm_split_for_room(need->memcg, folio);
		if (sent >= 0) {
			htmm_demote_count(m, need, sent);
			return;	/* it took our reference */
		}
		/*
		 * Skewed, but the split failed for now (locked, or an extra
		 * reference such as a concurrent page walk): try again on
		 * the next pass rather than move the hot subpages down.
		 */
		if (sent != -EPERM) {
			need->pos->deferred++;
			goto put;
		}
	}
	if (!htmm_demotable(&info, need, level))
		goto put;
	if (htmm_settling(&info, false)) {
		need->pos->settling = true;
		htmm_count_skip(hm, HTMM_SKIP_SETTLE, nr);
		goto put;
	}
	why = htmm_isolate(folio, &need->folios);
	if (why != HTMM_NR_SKIPS) {
		htmm_count_skip(hm, why, nr);
		goto put;
	}
	htmm_folio_mark(folio, need->memcg, HTMM_META_DEMOTED,
			HTMM_META_PROMOTED | HTMM_META_QUEUES);
	need->nr_isolated += nr;
	htmm_demote_count(m, need, nr);
put:
	folio_put(folio);
}

static void htmm_demote_send(struct htmm_migrater *m,
			     struct htmm_demote_need *need, int target,
			     nodemask_t *allowed)
{
	if (list_empty(&need->folios))
		return;
	htmm_migrate_list(need->memcg, &need->folios, m->nid, target,
			  allowed, false);
	need->nr_isolated = 0;
}

/*
 * Walk @need's lists on @m's node from where the last walk stopped, until
 * it has what it needs, the period's bound or the tokens run out, or a
 * pass at the last strictness ends.
 */
static void htmm_demote_lru(struct htmm_migrater *m,
			    struct htmm_demote_need *need, int target,
			    nodemask_t *allowed, unsigned long *scanned)
{
	struct lruvec *lruvec = mem_cgroup_lruvec(need->memcg,
						  NODE_DATA(m->nid));
	struct folio *folios[HTMM_LRU_BATCH];
	struct htmm_memcg *hm = htmm_memcg(need->memcg);
	struct htmm_lru_pos *pos = need->pos;
	unsigned long seen;
	unsigned int n, i;

	for (;;) {
		if (!htmm_demote_rest(need, hm) ||
		    *scanned >= HTMM_SCAN_MAX || !m->tokens ||
		    kthread_should_stop())
			break;
		/* At most one pass a period, unless it got less strict. */
		if (pos->slot == HTMM_LRU_SLOTS &&
		    !htmm_lru_pass_end(need, hm))
			break;
		seen = 0;
		n = htmm_lru_take(lruvec, pos, folios, HTMM_LRU_BATCH, &seen);
		*scanned += seen;
		need->seen += seen;
		for (i = 0; i < n; i++)
			htmm_demote_folio(m, need, folios[i]);
		if (need->nr_isolated >= HTMM_BATCH)
			htmm_demote_send(m, need, target, allowed);
		cond_resched();
	}
	htmm_demote_send(m, need, target, allowed);
}

/*
 * The cgroups that must demote from the node this period, at most
 * HTMM_DEMOTE_MEMCGS of them, in turn from the one after the last taken.
 * Return: how many, each in @needs with a css reference.
 */
static unsigned int htmm_demote_collect(struct htmm_migrater *m,
					struct htmm_demote_need *needs)
{
	struct htmm_rotor r = { .first = m->demote_cursor };
	struct htmm_ledger ledger = { .nr = 0 };
	struct mem_cgroup *memcg;
	unsigned int nr = 0;

	while ((memcg = htmm_rotor_next(&r))) {
		htmm_memcg_refresh(memcg);
		if (!htmm_demote_need(memcg, m->nid, &ledger, &needs[nr]))
			continue;
		/* A resting walk takes none of the period's places. */
		needs[nr].pos = htmm_lru_pos(m, memcg);
		if (!htmm_demote_rest(&needs[nr], htmm_memcg(memcg)))
			continue;
		m->demote_cursor = r.idx;
		css_get(&memcg->css);
		needs[nr].memcg = memcg;
		INIT_LIST_HEAD(&needs[nr].folios);
		needs[nr].nr_isolated = 0;
		needs[nr].seen = 0;
		if (++nr == HTMM_DEMOTE_MEMCGS) {
			mem_cgroup_iter_break(NULL, memcg);
			break;
		}
	}
	return nr;
}

static void htmm_demote(struct htmm_migrater *m)
{
	struct htmm_demote_need *needs = m->needs;
	unsigned long scanned = 0, flags;
	unsigned int nr_needs, i;
	struct htmm_memcg *hm;
	nodemask_t allowed;
	int target;

	target = next_demotion_node(m->nid);
	if (target == NUMA_NO_NODE)
		return;
	node_get_allowed_targets(NODE_DATA(m->nid), &allowed);
	m->period++;
	nr_needs = htmm_demote_collect(m, needs);
	for (i = 0; i < nr_needs; i++) {
		htmm_demote_lru(m, &needs[i], target, &allowed, &scanned);
		hm = htmm_memcg(needs[i].memcg);
		spin_lock_irqsave(&hm->lock, flags);
		hm->nr_demote_seen += needs[i].seen;
		spin_unlock_irqrestore(&hm->lock, flags);
		css_put(&needs[i].memcg->css);
	}
}

static int htmm_migrater_fn(void *arg)
{
	struct htmm_migrater *m = arg;
	unsigned long now, next;
	unsigned int period;
	long wait;

	set_freezable();
	m->refill = jiffies;
	m->next_promote = jiffies;
	m->next_demote = jiffies;
	while (!kthread_should_stop()) {
		now = jiffies;
		if (READ_ONCE(m->kicked)) {
			WRITE_ONCE(m->kicked, false);
			m->next_promote = now;
			m->next_demote = now;
		}
		next = now + msecs_to_jiffies(1000);
		if (READ_ONCE(htmm_params.mode) != HTMM_MODE_NO_MIGRATION) {
			htmm_refill(m);
			/* Demote first: it makes room for promotions. */
			if (time_after_eq(now, m->next_demote)) {
				htmm_demote(m);
				period = READ_ONCE(htmm_params.demotion_period_ms);
				m->next_demote = now + msecs_to_jiffies(period);
			}
			if (time_after_eq(now, m->next_promote)) {
				htmm_promote(m);
				period = READ_ONCE(htmm_params.promotion_period_ms);
				m->next_promote = now + msecs_to_jiffies(period);
			}
			next = time_before(m->next_demote, m->next_promote) ?
			       m->next_demote : m->next_promote;
		}
		wait = (long)(next - jiffies);
		if (wait > 0)
			wait_event_freezable_timeout(htmm_migrate_wq,
						     kthread_should_stop() ||
						     READ_ONCE(m->kicked),
						     wait);
		else
			cond_resched();
	}
	return 0;
}

/**
 * htmm_migrate_start - Start one kmigraterd per node with memory.
 *
 * Context: Process context, htmm_lock held.
 * Return: 0 or a negative error, with no thread left running.
 */
int htmm_migrate_start(void)
{
	struct htmm_migrater *m;
	int nid, err = 0;

	lockdep_assert_held(&htmm_lock);
	htmm_migraters = kcalloc(nr_node_ids, sizeof(*htmm_migraters),
				 GFP_KERNEL);
	if (!htmm_migraters)
		return -ENOMEM;
	for_each_node_state(nid, N_MEMORY) {
		m = kzalloc_node(sizeof(*m), GFP_KERNEL, nid);
		if (!m) {
			err = -ENOMEM;
			break;
		}
		m->nid = nid;
		m->task = kthread_create_on_node(htmm_migrater_fn, m, nid,
						 "kmigraterd%d", nid);
		if (IS_ERR(m->task)) {
			err = PTR_ERR(m->task);
			kfree(m);
			break;
		}
		if (node_state(nid, N_CPU))
			set_cpus_allowed_ptr(m->task, cpumask_of_node(nid));
		htmm_migraters[nid] = m;
		wake_up_process(m->task);
	}
	if (err)
		htmm_migrate_stop();
	return err;
}

/**
 * htmm_migrate_stop - Stop every kmigraterd and wait for them.
 *
 * Context: Process context, htmm_lock held.
 */
void htmm_migrate_stop(void)
{
	int nid;

	lockdep_assert_held(&htmm_lock);
	if (!htmm_migraters)
		return;
	for (nid = 0; nid < nr_node_ids; nid++) {
		if (!htmm_migraters[nid])
			continue;
		kthread_stop(htmm_migraters[nid]->task);
		kfree(htmm_migraters[nid]);
	}
	kfree(htmm_migraters);
	htmm_migraters = NULL;
}

/**
 * htmm_migrate_wake - Have every kmigraterd look at its node now.
 *
 * Used when a budget or the mode changed.
 *
 * Context: Process context, htmm_lock held.
 */
void htmm_migrate_wake(void)
{
	int nid;

	lockdep_assert_held(&htmm_lock);
	if (!htmm_migraters)
		return;
	for (nid = 0; nid < nr_node_ids; nid++)
		if (htmm_migraters[nid])
			WRITE_ONCE(htmm_migraters[nid]->kicked, true);
	wake_up_all(&htmm_migrate_wq);
}

/**
 * htmm_memcg_cand_alloc - Give a cgroup its promotion and split queues.
 * @memcg: The cgroup.
 *
 * The queues are charged to @memcg itself (memory.stat "kernel"): a
 * tenant pays for the metadata of its own enabling.
 *
 * Context: Process context, htmm_lock held.
 * Return: 0 or -ENOMEM (also when the charge fails).
 */
int htmm_memcg_cand_alloc(struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	struct mem_cgroup *old;
	unsigned long *cand, flags;

	lockdep_assert_held(&htmm_lock);
	if (hm->cand)
		return 0;
	/*
	 * One block: the promotion queue, the split candidates, then the
	 * bins of the queue's entries.
	 */
	old = set_active_memcg(memcg);
	cand = kvzalloc((HTMM_CAND_SIZE + HTMM_THP_RING) * sizeof(*cand) +
			HTMM_CAND_SIZE, GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (!cand)
		return -ENOMEM;
	spin_lock_irqsave(&hm->lock, flags);
	hm->cand = cand;
	hm->split.ring = cand + HTMM_CAND_SIZE;
	hm->cand_bin = (u8 *)(hm->split.ring + HTMM_THP_RING);
	spin_unlock_irqrestore(&hm->lock, flags);
	return 0;
}

/**
 * htmm_migrate_stat - Print a cgroup's migration counters.
 * @hm: The cgroup's htmm state.
 * @m: The memory.htmm_stat file.
 */
void htmm_migrate_stat(struct htmm_memcg *hm, struct seq_file *m)
{
	u64 skipped[HTMM_NR_SKIPS], promoted, demoted, failed, dropped, hot;
	u64 seen, fill_pages;
	unsigned int queued, i, fill;
	unsigned long flags;

	spin_lock_irqsave(&hm->lock, flags);
	fill = hm->fill;
	promoted = hm->nr_promoted;
	demoted = hm->nr_demoted;
	failed = hm->nr_migrate_failed;
	memcpy(skipped, hm->nr_skipped, sizeof(skipped));
	queued = hm->cand_len;
	dropped = hm->nr_cand_dropped;
	seen = hm->nr_demote_seen;
	spin_unlock_irqrestore(&hm->lock, flags);
	hot = htmm_cand_waiting(hm, NULL, &fill_pages);

	seq_printf(m, "promoted %llu\n", promoted);
	seq_printf(m, "demoted %llu\n", demoted);
	seq_printf(m, "migrate_failed %llu\n", failed);
	for (i = 0; i < HTMM_NR_SKIPS; i++)
		seq_printf(m, "skipped_%s %llu\n", htmm_skip_names[i],
			   skipped[i]);
	seq_printf(m, "promotion_queue %u\n", queued);
	seq_printf(m, "promotion_queue_hot_pages %llu\n", hot);
	seq_printf(m, "promotion_queue_fill_pages %llu\n", fill_pages);
	seq_printf(m, "promotion_queue_dropped %llu\n", dropped);
	seq_printf(m, "demotion_lru_seen %llu\n", seen);
	htmm_seq_bin(m, "fill_threshold", fill);
}
