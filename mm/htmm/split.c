// SPDX-License-Identifier: GPL-2.0-only
/*
 * Splitting huge pages whose accesses are skewed.
 *
 * A huge page whose accesses fall on a few of its subpages wastes fast
 * memory when it is promoted whole and keeps hot subpages in the slow tier
 * when it is not.  Every htmm_split_period coolings of a cgroup, the
 * promotion thread of a fast node compares two estimates of the share of
 * accesses that the cgroup's fast-tier budget serves: with the pages as
 * they are (the folio histogram) and as if every huge page were split (the
 * split histogram).  The gap, the latency gap between the tiers and
 * htmm_gamma say how many of the skewed huge pages seen since the last
 * round to split (htmm_split_count()); the most skewed go first.  The
 * hot subpages of a split page are then queued for promotion and, on a
 * fast node, its subpages without samples are demoted.
 *
 * Splitting stops by itself for a cgroup when a round that split something
 * did not raise the hit share; a new budget, a grown gap or eight rounds
 * later start it again.
 *
 * The hit-share gap does not see huge pages that were promoted whole
 * before they looked skewed: once they fill the budget, the hit share is
 * as good as it gets, yet most of their bytes are cold.  So each round
 * also splits the skewed huge pages it saw on a fast node where the cgroup
 * has no room left for another huge page (htmm_promote_room()), whatever
 * the gap; their cold
 * subpages are demoted and the budget goes back to hotter data.  These
 * splits are also counted in split_for_room, and they do not count in the
 * stop rule.  One that fails because the folio was held for a moment (a
 * reference or its lock) is tried again next round, even if the other
 * splits have made room by then.  Demotion splits skewed huge pages too, rather than move
 * their hot subpages down with them (htmm_split_for_room()).  Samples of
 * the Accessed-bit source on a huge page's PMD do not say which subpage
 * was accessed, so they never make a huge page look skewed.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/init.h>
#include <linux/memcontrol.h>
#include <linux/memory-tiers.h>
#include <linux/mm.h>
#include <linux/node.h>
#include <linux/nodemask.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmstat.h>

#include "internal.h"

/* Growth of the gap, per mille, that starts a stopped splitter again. */
#define HTMM_SPLIT_REGAP	50
/* Rounds a stopped splitter waits before it tries again. */
#define HTMM_SPLIT_PAUSE	8
/* In a candidate's class byte: it sits on a fast node that is full. */
#define HTMM_SPLIT_ROOM		0x80
/* A node is full for a cgroup when another huge page does not fit. */
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
#define HTMM_SPLIT_FULL		HPAGE_PMD_NR
#else
#define HTMM_SPLIT_FULL		1
#endif

#include <trace/events/htmm.h>

/*
 * Split one huge page and place its parts: queue the hot subpages on a
 * slow node for promotion; on a fast node, demote the subpages without
 * samples (the thresholds still reflect the huge page, so "not hot" could
 * be a hot subpage; demotion judges the rest later, as base pages).  The
 * caller holds a reference on @folio.  If the split succeeds, that
 * reference is dropped here: it is on the first part, which must be free
 * of it to migrate.  Return: the pages sent to a slower tier, or the
 * split error (the caller keeps its reference).
 */
static long htmm_split_one(struct mem_cgroup *memcg, struct folio *folio)
{
	unsigned long pfn = folio_pfn(folio), nr = folio_nr_pages(folio), i;
	int nid = folio_nid(folio), target, err;
	struct htmm_page_info info;
	struct folio *part;
	nodemask_t allowed;
	long sent = 0;
	LIST_HEAD(list);

	if (!folio_trylock(folio))
		return -EAGAIN;
	/* The mark goes to every part if the split succeeds. */
	htmm_folio_mark(folio, memcg, HTMM_META_SPLIT, 0);
	err = split_folio(folio);
	if (err)
		htmm_folio_mark(folio, memcg, 0, HTMM_META_SPLIT);
	folio_unlock(folio);
	if (err)
		return err;

	target = htmm_node_is_fast(nid) ? next_demotion_node(nid) :
		 NUMA_NO_NODE;
	for (i = 0; i < nr; i++) {
		/* The first part is @folio: it has the caller's reference. */
		part = i ? htmm_get_folio(pfn + i) : folio;
		if (!part)
			continue;
		if (!htmm_folio_in(part, memcg) ||
		    htmm_page_info(&part->page, &info)) {
			folio_put(part);
			continue;
		}
		if (info.hot) {
			htmm_folio_queue(part, memcg);
		} else if (target != NUMA_NO_NODE && !info.count &&
			   htmm_isolate(part, &list) == HTMM_NR_SKIPS) {
			htmm_folio_mark(part, memcg, HTMM_META_DEMOTED,
					HTMM_META_PROMOTED);
			sent++;
		}
		folio_put(part);
	}
	if (!list_empty(&list)) {
		node_get_allowed_targets(NODE_DATA(nid), &allowed);
		htmm_migrate_list(memcg, &list, nid, target, &allowed, false);
	}
	return sent;
}

/* Add to a cgroup's split counters and to vmstat. */
static void htmm_split_account(struct htmm_memcg *hm, u64 requested,
			       u64 done, u64 failed, u64 for_room)
{
	unsigned long flags;

	spin_lock_irqsave(&hm->lock, flags);
	hm->split_stat.requested += requested;
	hm->split_stat.done += done;
	hm->split_stat.failed += failed;
	hm->split_stat.for_room += for_room;
	spin_unlock_irqrestore(&hm->lock, flags);
	count_vm_events(HTMM_NR_SPLIT_REQUESTED, requested);
	count_vm_events(HTMM_NR_SPLIT_DONE, done);
	count_vm_events(HTMM_NR_SPLIT_FAILED, failed);
}

/**
 * htmm_split_for_room - Split a skewed huge page rather than keep or
 *	demote it whole.
 * @memcg: The cgroup the folio belongs to.
 * @folio: A large folio of @memcg; the caller holds a reference, which
 *	this function drops if it splits the folio (return value >= 0).
 *
 * Demotion calls this for a huge page it would otherwise demote whole (its
 * hot subpages would go down with it) or keep whole, promotion for a huge
 * page of the fill bin it would otherwise promote whole.  If splitting is on
 * and the huge page is skewed enough, it is split, its subpages without
 * samples are demoted and the others stay.
 *
 * Context: kmigraterd, process context; may sleep.
 * Return: the pages sent to a slower tier, -EPERM if the huge page is not
 * to be split, or the split error.
 */
long htmm_split_for_room(struct mem_cgroup *memcg, struct folio *folio)
{
	unsigned int thres = READ_ONCE(htmm_params.thres_split);
	long sent;

	if (!thres || READ_ONCE(htmm_params.mode) != HTMM_MODE_HUGEPAGE ||
	    htmm_folio_skew(folio, memcg) < (int)thres)
		return -EPERM;
	sent = htmm_split_one(memcg, folio);
	htmm_split_account(htmm_memcg(memcg), 1, sent >= 0, sent < 0,
			   sent >= 0);
	return sent;
}

/* One split round: its candidates, its decision and what it did. */
struct htmm_round_state {
	unsigned long *pfns;	/* HTMM_THP_RING huge pages seen */
	u8 *class;		/* their skew classes, HTMM_SPLIT_ROOM */
	unsigned int n;		/* entries of pfns */
	unsigned int nr_skewed;	/* ... skewed enough to split */
	u64 nr_split;		/* to split for the hit-share gap */
	u64 nr_room;		/* to split for room */
	u64 requested, failed, done, done_room, for_room;
	u64 skew[HTMM_NR_SKEW];	/* huge pages seen, per skew class */
	u32 now_share;		/* hit share now */
	u32 split_share;	/* ... as if every huge page were split */
	int gap;		/* split_share - now_share */
};

/*
 * Take the huge pages sampled since the last round off the ring, into
 * @r->pfns, and whether a round chose them to split for room into
 * @r->class.  Each entry costs a page_ext lookup under hm->lock, so the
 * lock is dropped every HTMM_LOCKED_BATCH entries: interrupts stay off
 * for a bounded time.
 */
static void htmm_split_drain(struct htmm_memcg *hm, struct mem_cgroup *memcg,
			     struct htmm_round_state *r)
{
	unsigned int b, old;
	unsigned long flags;
	bool more;

	do {
		spin_lock_irqsave(&hm->lock, flags);
		for (b = 0; b < HTMM_LOCKED_BATCH && hm->split.len &&
		     r->n < HTMM_THP_RING; b++) {
			r->pfns[r->n] = hm->split.ring[hm->split.head];
			old = htmm_pfn_clear_flag_locked(hm, memcg,
							 r->pfns[r->n],
							 HTMM_META_RING);
			r->class[r->n++] = old & HTMM_META_ROOM ?
					   HTMM_SPLIT_ROOM : 0;
			hm->split.head = (hm->split.head + 1) % HTMM_THP_RING;
			hm->split.len--;
		}
		more = hm->split.len && r->n < HTMM_THP_RING;
		spin_unlock_irqrestore(&hm->lock, flags);
	} while (more);
}

/*
 * Read the hit shares and apply the stop rule: stop when the last round
 * split something for the gap and the hit share did not rise.  Start again
 * with a new budget, when the gap has grown by HTMM_SPLIT_REGAP, or after
 * HTMM_SPLIT_PAUSE rounds, since one round can be unlucky (a cooling
 * between two rounds moves the estimates too).  Return: stopped.
 */
static bool htmm_split_stop_rule(struct htmm_memcg *hm,
				 struct htmm_round_state *r)
{
	struct htmm_split_ctl *ctl = &hm->split;
	unsigned long flags;
	bool stopped;

	spin_lock_irqsave(&hm->lock, flags);
	r->now_share = htmm_hit_permille(&hm->hist, hm->capacity);
	r->split_share = htmm_hit_permille(&hm->hist_split, hm->capacity);
	r->gap = (int)r->split_share - (int)r->now_share;
	if (ctl->last_nr && r->now_share <= ctl->last_share &&
	    !ctl->stopped) {
		ctl->stopped = true;
		ctl->stop_gap = r->gap;
		ctl->pause = HTMM_SPLIT_PAUSE;
	} else if (ctl->stopped &&
		   (r->gap >= ctl->stop_gap + HTMM_SPLIT_REGAP ||
		    !--ctl->pause)) {
		ctl->stopped = false;
		ctl->last_nr = 0;
	}
	stopped = ctl->stopped;
	hm->split_stat.now_share = r->now_share;
	hm->split_stat.split_share = r->split_share;
	spin_unlock_irqrestore(&hm->lock, flags);
	return stopped;
}

/*
 * Keep the skewed huge pages of @r->pfns at the front, with their skew
 * classes, and mark those to split for room: on a fast node in @full, or
 * chosen for room by an earlier round whose split of them failed.
 */
static void htmm_split_classify(struct mem_cgroup *memcg,
				struct htmm_round_state *r,
				const nodemask_t *full, unsigned int thres)
{
	struct folio *folio;
	unsigned int i;
	bool again;
	int c, nid;

	for (i = 0; i < r->n; i++) {
		folio = htmm_get_folio(r->pfns[i]);
		if (!folio)
			continue;
		c = -ENODEV;
		nid = folio_nid(folio);
		if (folio_test_large(folio) && htmm_folio_in(folio, memcg))
			c = htmm_folio_skew(folio, memcg);
		folio_put(folio);
		if (c < 0)
			continue;
		c = min(c, HTMM_NR_SKEW - 1);
		r->skew[c]++;
		if (!thres || c < thres)
			continue;
		again = (r->class[i] & HTMM_SPLIT_ROOM) &&
			htmm_node_is_fast(nid);
		r->pfns[r->nr_skewed] = r->pfns[i];
		r->class[r->nr_skewed] = c;
		if (again || node_isset(nid, *full)) {
			r->class[r->nr_skewed] |= HTMM_SPLIT_ROOM;
			r->nr_room++;
		}
		r->nr_skewed++;
	}
}

/*
 * Split @folio, a huge page of @memcg that round @r chose, for room if
 * @room; the caller's reference is used up.  A split for room that failed
 * for a reference or the folio lock, held by someone else for a moment,
 * is tried again next round (htmm_folio_split_again()); a pinned folio
 * would fail again.
 */
static void htmm_split_candidate(struct mem_cgroup *memcg,
				 struct htmm_round_state *r,
				 struct folio *folio, bool room,
				 unsigned long *tokens)
{
	long sent;

	r->requested++;
	r->for_room += room;
	sent = htmm_split_one(memcg, folio);
	if (sent < 0) {
		r->failed++;
		if (room && sent == -EAGAIN && !folio_maybe_dma_pinned(folio))
			htmm_folio_split_again(folio, memcg);
		folio_put(folio);
		return;
	}
	if (room)
		r->done_room++;
	else
		r->done++;
	*tokens -= min_t(unsigned long, *tokens, sent);
}

/*
 * Split the most skewed first: r->nr_split of them for the gap, and every
 * one marked for room to give the budget back.
 */
static void htmm_split_chosen(struct mem_cgroup *memcg,
			      struct htmm_round_state *r,
			      unsigned long *tokens)
{
	struct folio *folio;
	unsigned int i, k;
	bool room;

	for (k = HTMM_NR_SKEW; k-- > 0 && (r->nr_split || r->nr_room);) {
		for (i = 0; i < r->nr_skewed; i++) {
			if ((r->class[i] & ~HTMM_SPLIT_ROOM) != k)
				continue;
			room = r->nr_room && (r->class[i] & HTMM_SPLIT_ROOM);
			if (!room && r->requested - r->for_room >= r->nr_split)
				continue;
			folio = htmm_get_folio(r->pfns[i]);
			if (!folio)
				continue;
			if (!folio_test_large(folio) ||
			    !htmm_folio_in(folio, memcg)) {
				folio_put(folio);
				continue;
			}
			htmm_split_candidate(memcg, r, folio, room, tokens);
			cond_resched();
		}
	}
}

/* Account round @r in the cgroup's split state and counters. */
static void htmm_split_round_done(struct htmm_memcg *hm,
				  const struct htmm_round_state *r)
{
	unsigned long flags;

	htmm_split_account(hm, r->requested, r->done + r->done_room,
			   r->failed, r->done_room);
	spin_lock_irqsave(&hm->lock, flags);
	hm->split_stat.rounds++;
	hm->split.last_share = r->now_share;
	/* Splits for room do not aim at the hit share: not in the stop rule. */
	hm->split.last_nr = r->done;
	hm->split_stat.last_skewed = r->nr_skewed;
	hm->split_stat.last_wanted = r->nr_split + r->nr_room;
	memcpy(hm->split_stat.skew, r->skew, sizeof(r->skew));
	spin_unlock_irqrestore(&hm->lock, flags);
}

/**
 * htmm_split_round - Decide how many huge pages to split, and split them.
 * @memcg: An htmm cgroup whose split round is due.
 * @tokens: The calling node's migration tokens: the pages that the splits
 *	send to a slower tier are charged to them.
 *
 * The caller claimed the round (cleared hm->split.due), so one kmigraterd
 * runs it even with several fast nodes.
 *
 * Context: kmigraterd, process context.
 */
void htmm_split_round(struct mem_cgroup *memcg, unsigned long *tokens)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	unsigned int thres = READ_ONCE(htmm_params.thres_split);
	nodemask_t full = NODE_MASK_NONE;
	struct htmm_round_state *r;
	struct mem_cgroup *old;
	bool splitting, stopped;
	int nid;

	/* Charged to the cgroup it works for, like its queues. */
	old = set_active_memcg(memcg);
	r = kvzalloc(sizeof(*r) + HTMM_THP_RING * (sizeof(*r->pfns) + 1),
		     GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	if (!r)
		return;
	r->pfns = (unsigned long *)(r + 1);
	r->class = (u8 *)(r->pfns + HTMM_THP_RING);
	splitting = thres &&
		    READ_ONCE(htmm_params.mode) == HTMM_MODE_HUGEPAGE;
	if (splitting) {
		for_each_node_state(nid, N_MEMORY)
			if (htmm_node_is_fast(nid) &&
			    htmm_promote_room(memcg, nid, true) <
			    HTMM_SPLIT_FULL)
				node_set(nid, full);
	}

	htmm_split_drain(hm, memcg, r);
	stopped = htmm_split_stop_rule(hm, r);
	htmm_split_classify(memcg, r, &full, thres);
	if (splitting && !stopped)
		r->nr_split = htmm_split_count(r->nr_skewed, r->gap,
					       READ_ONCE(htmm_params.gamma),
					       READ_ONCE(htmm_params.fast_latency_ns),
					       READ_ONCE(htmm_params.slow_latency_ns));
	if (!splitting)
		r->nr_room = 0;
	trace_htmm_split_decision(mem_cgroup_id(memcg), r->now_share,
				  r->split_share, r->nr_skewed, r->nr_split,
				  r->nr_room);
	htmm_split_chosen(memcg, r, tokens);
	htmm_split_round_done(hm, r);
	kvfree(r);
}

/**
 * htmm_split_stat - Print a cgroup's split counters and skew histogram.
 * @hm: The cgroup's htmm state.
 * @m: The memory.htmm_stat file.
 */
void htmm_split_stat(struct htmm_memcg *hm, struct seq_file *m)
{
	struct htmm_split_stats st;
	unsigned long flags;
	bool stopped;
	unsigned int i;

	spin_lock_irqsave(&hm->lock, flags);
	st = hm->split_stat;
	stopped = hm->split.stopped;
	spin_unlock_irqrestore(&hm->lock, flags);

	seq_printf(m, "split_rounds %llu\n", st.rounds);
	seq_printf(m, "split_requested %llu\n", st.requested);
	seq_printf(m, "split_done %llu\n", st.done);
	seq_printf(m, "split_failed %llu\n", st.failed);
	seq_printf(m, "split_for_room %llu\n", st.for_room);
	seq_printf(m, "split_stopped %d\n", stopped);
	seq_printf(m, "split_hit_permille %u\n", st.now_share);
	seq_printf(m, "split_hit_permille_if_split %u\n", st.split_share);
	seq_printf(m, "split_last_skewed %llu\n", st.last_skewed);
	seq_printf(m, "split_last_wanted %llu\n", st.last_wanted);
	for (i = 0; i < HTMM_NR_SKEW; i++)
		seq_printf(m, "skew_%u %llu\n", i, st.skew[i]);
}

/* The read latency firmware gives for @nid, or 0. */
static unsigned int htmm_node_latency(int nid)
{
	struct access_coordinate coord;

	if (!node_get_perf_attrs(nid, ACCESS_COORDINATE_CPU, &coord) &&
	    coord.read_latency)
		return coord.read_latency;
	if (!node_get_perf_attrs(nid, ACCESS_COORDINATE_LOCAL, &coord))
		return coord.read_latency;
	return 0;
}

/**
 * htmm_latency_from_firmware - Take the tier latencies from HMAT.
 *
 * Where the firmware gives read latencies for a fast and a slow node, they
 * replace the defaults of htmm_fast_latency_ns and htmm_slow_latency_ns
 * (the first fast and the first slow node with memory).  Done at boot and
 * again whenever htmm becomes active, for nodes that came later; values
 * written by the administrator are left alone.
 *
 * Context: Process context, htmm_lock held.
 */
void htmm_latency_from_firmware(void)
{
	unsigned int fast = 0, slow = 0, lat;
	int nid;

	lockdep_assert_held(&htmm_lock);
	if (htmm_latency_user_set)
		return;
	for_each_node_state(nid, N_MEMORY) {
		lat = htmm_node_latency(nid);
		if (!lat)
			continue;
		if (htmm_node_is_fast(nid) && !fast)
			fast = lat;
		else if (!htmm_node_is_fast(nid) && !slow)
			slow = lat;
	}
	if (!fast || !slow || slow <= fast)
		return;
	if (READ_ONCE(htmm_params.fast_latency_ns) != fast ||
	    READ_ONCE(htmm_params.slow_latency_ns) != slow)
		pr_info("tier latencies from firmware: fast %u ns, slow %u ns\n",
			fast, slow);
	WRITE_ONCE(htmm_params.fast_latency_ns, fast);
	WRITE_ONCE(htmm_params.slow_latency_ns, slow);
}

static int __init htmm_latency_init(void)
{
	mutex_lock(&htmm_lock);
	htmm_latency_from_firmware();
	mutex_unlock(&htmm_lock);
	return 0;
}
late_initcall(htmm_latency_init);
