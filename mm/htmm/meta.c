// SPDX-License-Identifier: GPL-2.0-only
/*
 * htmm per-page metadata and the accounting of access samples.
 *
 * With htmm=on on the kernel command line, every 4 KiB page carries a
 * struct htmm_meta in page_ext; without it, htmm is off.  A sample on a
 * page of an htmm-enabled cgroup bumps the page's count (and, for a large
 * folio, the folio's count), moves the folio in the cgroup's histogram and
 * the page in the "as if split" histogram, and every so many samples
 * recomputes the thresholds (adaptation) or halves all counts (cooling).
 * Cooling is lazy: the cgroup's epoch moves and its histograms shift one
 * bin down; each page catches up with the epochs it missed when it is next
 * touched.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/htmm.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/memcontrol.h>
#include <linux/memory-tiers.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/page_counter.h>
#include <linux/page_ext.h>
#include <linux/pagewalk.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/vmstat.h>

#include "internal.h"

#define CREATE_TRACE_POINTS
#include <trace/events/htmm.h>

const char * const htmm_kind_names[HTMM_NR_KINDS] = {
	[HTMM_LOAD_FAST] = "load_fast",
	[HTMM_LOAD_SLOW] = "load_slow",
	[HTMM_STORE] = "store",
	[HTMM_ACCESS] = "access",
};

const char * const htmm_source_names[HTMM_NR_SOURCES] = {
	[HTMM_SRC_PEBS] = "pebs",
	[HTMM_SRC_ABIT] = "abit",
	[HTMM_SRC_INJECT] = "inject",
};

/* Records only with htmm=on, the way page_owner=on works. */
static bool __init htmm_need_page_ext(void)
{
	return htmm_boot_on;
}

struct page_ext_operations htmm_page_ext_ops = {
	.size = sizeof(struct htmm_meta),
	.need = htmm_need_page_ext,
};

/**
 * htmm_meta_get - Find the htmm metadata of a page.
 * @page: The page.
 * @ext: Set to the page_ext to release with page_ext_put().
 *
 * Return: The metadata, or NULL if the page has no page_ext or htmm is off
 * (another page_ext client may have a page_ext without our record).
 */
struct htmm_meta *htmm_meta_get(struct page *page, struct page_ext **ext)
{
	if (!htmm_available())
		return NULL;
	*ext = page_ext_get(page);
	if (!*ext)
		return NULL;
	return page_ext_data(*ext, &htmm_page_ext_ops);
}

void htmm_memcg_state_init(struct htmm_memcg *hm)
{
	spin_lock_init(&hm->lock);
	hm->epoch = HTMM_EPOCH_INITIAL;
	hm->hot = HTMM_BIN_NONE;
	hm->warm = HTMM_BIN_NONE;
	hm->fill = HTMM_BIN_NONE;
}

/**
 * htmm_node_is_fast - Is a node in the fast tier?
 * @nid: The node.
 *
 * Return: true for the top tier, or with htmm_cxl_mode for nodes with CPUs.
 */
bool htmm_node_is_fast(int nid)
{
	if (READ_ONCE(htmm_params.cxl_mode))
		return node_state(nid, N_CPU);
	return node_is_toptier(nid);
}

/*
 * Fast-tier pages the cgroup may use (its effective budgets), less the
 * promotion watermark.
 */
static u64 htmm_fast_capacity(struct mem_cgroup *memcg)
{
	u64 cap = 0, budget;
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		if (!htmm_node_is_fast(nid))
			continue;
		budget = htmm_path_budget(memcg, nid);
		cap += budget - htmm_wmark_pages(budget,
				READ_ONCE(htmm_params.promotion_wmark));
	}
	return cap;
}

/*
 * Like jiffies, the clock of the per-page migration times starts five
 * minutes before its wrap, so that the wrap is crossed in every test run.
 */
#define HTMM_MTIME_INITIAL	((u32)-(300000 / HTMM_MTIME_MS))

/* Now in HTMM_MTIME_MS units, wrapping; see htmm_mtime_age_ms(). */
static u32 htmm_mtime_now(void)
{
	u64 ms = jiffies64_to_msecs(get_jiffies_64() - INITIAL_JIFFIES);

	return (u32)div_u64(ms, HTMM_MTIME_MS) + HTMM_MTIME_INITIAL;
}

/*
 * The metadata of the folio at @pfn if it is accounted in @memcg, whose
 * hm->lock the caller holds; then *@ext must be put with page_ext_put().
 */
static struct htmm_meta *htmm_pfn_meta_locked(struct htmm_memcg *hm,
					      struct mem_cgroup *memcg,
					      unsigned long pfn,
					      struct page_ext **ext)
{
	struct page *page = pfn_to_online_page(pfn);
	struct htmm_meta *m;

	lockdep_assert_held(&hm->lock);
	if (!page)
		return NULL;
	m = htmm_meta_get(page, ext);
	if (!m)
		return NULL;
	/* Only metadata accounted here is under our lock. */
	if (READ_ONCE(m->memcg_id) != mem_cgroup_id(memcg)) {
		page_ext_put(*ext);
		return NULL;
	}
	return m;
}

/*
 * Count the pages of queue entry @e in @bin of each histogram it counts
 * in (@add), or stop counting them there.  Caller holds hm->lock.
 */
static void htmm_cand_count_locked(struct htmm_memcg *hm, unsigned long e,
				   unsigned int bin, bool add)
{
	struct htmm_hist *hists[3];
	unsigned long nr = 1UL << HTMM_CAND_ORDER(e);
	unsigned int i, n = 0;

	if (!(e & HTMM_CAND_FILL))
		hists[n++] = &hm->cand_room;
	if (e & HTMM_CAND_STRONG)
		hists[n++] = &hm->cand_strong;
	if ((e & HTMM_CAND_KIND) == HTMM_CAND_FILL)
		hists[n++] = &hm->cand_fill;
	for (i = 0; i < n; i++) {
		if (add)
			htmm_hist_add(hists[i], bin, nr);
		else if (!htmm_hist_sub(hists[i], bin, nr))
			hm->nr_unaccounted++;
	}
}

/**
 * htmm_cand_take_locked - Take the entry at the head of a promotion queue.
 * @hm: The cgroup's htmm state; the caller holds hm->lock.
 * @memcg: The cgroup; its queue is not empty.
 * @pfn: Set to the PFN of the folio the entry named.
 *
 * A folio queued from the fill bin and again as hot has two entries, the
 * fill one first.  Its fill entry is passed over: the folio stays marked
 * as queued, and goes up through its hot entry, whose room demotion made
 * and which gives that room back when it is taken.  Were it to go up
 * through the fill entry, its hot entry would go on asking for room it
 * no longer needs until it reached the head.
 *
 * Return: true if the caller may promote the folio at @pfn, false for
 * the fill entry of a folio that is also queued as hot.
 */
bool htmm_cand_take_locked(struct htmm_memcg *hm, struct mem_cgroup *memcg,
			   unsigned long *pfn)
{
	unsigned long e = hm->cand[hm->cand_head];
	struct page_ext *ext;
	struct htmm_meta *m;
	bool take = true;

	*pfn = HTMM_CAND_PFN(e);
	htmm_cand_count_locked(hm, e, hm->cand_bin[hm->cand_head], false);
	hm->cand_head = (hm->cand_head + 1) % HTMM_CAND_SIZE;
	hm->cand_len--;
	m = htmm_pfn_meta_locked(hm, memcg, *pfn, &ext);
	if (!m)
		return true;
	if ((e & HTMM_CAND_FILL) && (m->flags & HTMM_META_QUEUED_HOT))
		take = false;
	else
		m->flags &= ~HTMM_META_QUEUES;
	page_ext_put(ext);
	return take;
}

/* The bin of the folio queue entry @e names, whose head metadata is @h. */
static unsigned int htmm_cand_folio_bin(const struct htmm_memcg *hm,
					unsigned long e,
					const struct htmm_meta *h)
{
	return HTMM_CAND_ORDER(e) ? htmm_meta_hbin(hm, h) :
				    htmm_meta_bin(hm, h);
}

/**
 * htmm_cand_head_live_locked - Does the head entry of a queue still count?
 * @hm: The cgroup's htmm state; the caller holds hm->lock.
 * @memcg: The cgroup; its queue is not empty.
 *
 * Return: false if the folio the entry names is no longer queued
 * (promoted, demoted or freed since) or, for a hot entry, is no longer
 * hot: the thresholds rose or cooling lowered its bin since it was
 * queued, and the room it asked for would go to a folio that promotion
 * then passes over.
 */
bool htmm_cand_head_live_locked(struct htmm_memcg *hm,
				struct mem_cgroup *memcg)
{
	unsigned long e = hm->cand[hm->cand_head];
	struct page_ext *ext;
	struct htmm_meta *h;
	bool live = false;

	h = htmm_pfn_meta_locked(hm, memcg, HTMM_CAND_PFN(e), &ext);
	if (!h)
		return false;
	if (h->flags & HTMM_META_QUEUED)
		live = (e & HTMM_CAND_FILL) ||
		       htmm_bin_hot(hm, htmm_cand_folio_bin(hm, e, h));
	page_ext_put(ext);
	return live;
}

/**
 * htmm_cand_waiting - Pages of a cgroup's queued folios that ask for room.
 * @hm: The cgroup's htmm state.
 * @strong: Set to how many of them are queued strong (may be NULL).
 * @fill: Set to the pages of the fill entries in the fill bin now (may be
 *	NULL).
 *
 * Counts the entries in the bins that are hot now (for @strong, that are
 * HTMM_STRONG_BINS or more above the hot threshold now), not those that
 * were when they were queued.  A fill entry that turned hot is counted
 * by its hot entry, a hot entry whose folio fell to the fill bin as fill.
 *
 * Return: The pages of the hot entries.
 */
u64 htmm_cand_waiting(struct htmm_memcg *hm, u64 *strong, u64 *fill)
{
	u64 hot = 0, str = 0, fil = 0;
	unsigned long flags;
	unsigned int b;

	spin_lock_irqsave(&hm->lock, flags);
	for (b = 0; b < HTMM_NR_BINS; b++) {
		if (hm->hot != HTMM_BIN_NONE && b >= hm->hot) {
			hot += hm->cand_room.nr_pages[b];
			if (b >= hm->hot + HTMM_STRONG_BINS)
				str += hm->cand_strong.nr_pages[b];
		} else if (hm->fill != HTMM_BIN_NONE && b >= hm->fill) {
			/* Hot entries of folios no longer hot count as fill. */
			fil += hm->cand_fill.nr_pages[b] +
			       hm->cand_room.nr_pages[b];
		}
	}
	spin_unlock_irqrestore(&hm->lock, flags);
	if (strong)
		*strong = str;
	if (fill)
		*fill = fil;
	return hot;
}

/*
 * What an entry in @bin asks for under the thresholds now: 0 nothing, 1
 * fill, 2 room (hot), 3 strength (strong).  Caller holds hm->lock.
 */
static unsigned int htmm_cand_class(const struct htmm_memcg *hm,
				    unsigned int bin)
{
	if (htmm_bin_hot(hm, bin))
		return bin >= hm->hot + HTMM_STRONG_BINS ? 3 : 2;
	return hm->fill != HTMM_BIN_NONE && bin >= hm->fill;
}

/*
 * A sample took a folio with queue flags @flags from bin @was to @bin.
 * If it rose into a class it is queued for already, it gets no new entry
 * (htmm_cand_bits()), and the entry it has may count in a class below:
 * ask kmigraterd to count the entries again (htmm_cand_rebin()).  A rise
 * into a class it is not queued for queues a new entry in the right bin.
 */
static bool htmm_cand_rose_queued(const struct htmm_memcg *hm,
				  unsigned int flags, unsigned int was,
				  unsigned int bin)
{
	static const unsigned int queued_for[] = {
		0, HTMM_META_QUEUED, HTMM_META_QUEUED_HOT,
		HTMM_META_QUEUED_STRONG,
	};
	unsigned int c = htmm_cand_class(hm, bin);

	return c > htmm_cand_class(hm, was) && (flags & queued_for[c]);
}

/* Count the entry at ring position @p in its folio's bin now. */
static void htmm_cand_rebin_one_locked(struct htmm_memcg *hm,
				       struct mem_cgroup *memcg,
				       unsigned int p)
{
	unsigned long e = hm->cand[p];
	struct page_ext *ext;
	struct htmm_meta *h;
	unsigned int bin;

	h = htmm_pfn_meta_locked(hm, memcg, HTMM_CAND_PFN(e), &ext);
	if (!h)
		return;
	/* The bin htmm_cand_head_live_locked() judges the entry by. */
	bin = htmm_cand_folio_bin(hm, e, h);
	if ((h->flags & HTMM_META_QUEUED) && bin != hm->cand_bin[p]) {
		htmm_cand_count_locked(hm, e, hm->cand_bin[p], false);
		htmm_cand_count_locked(hm, e, bin, true);
		hm->cand_bin[p] = bin;
	}
	page_ext_put(ext);
}

/**
 * htmm_cand_rebin - Count a cgroup's queued entries in their folios' bins.
 * @memcg: The cgroup.
 *
 * An entry counts in the bin its folio was queued in, cooled since; the
 * samples that raise the folio afterwards do not move it.  Once a
 * threshold lies between the two (the hot threshold rose, or a cooling
 * lowered both and samples raised the folio again), the entry of a hot
 * folio counted as fill, asked for no room, and the folio, marked as
 * queued hot, was not queued again: with no cold page in the fast tier,
 * nothing made room for it (converge_abit stopped at 84.5% of its hot
 * region for good).  hm->cand_rebin asks for this walk: set when the hot
 * or fill threshold moves, or samples take a queued folio up into a
 * class it is queued for already (htmm_cand_rose_queued()).  The walk
 * holds hm->lock for HTMM_LOCKED_BATCH entries at a time; entries taken
 * or queued between two holds are seen or not, and counting any entry in
 * its folio's bin is right.  An entry whose folio is no longer queued
 * keeps its bin: it is dropped when it reaches the head.  A cooling needs
 * no walk of its own: it lowers entries and folios alike.  Walks are
 * HTMM_REBIN_GAP apart at least: each looks up the metadata of every
 * entry (16384 at most), on the fast node's CPUs, where the workload runs
 * too.
 */
void htmm_cand_rebin(struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	unsigned int p, left, b, off;
	unsigned long flags;

	/* Most passes of kmigraterd find nothing asked. */
	if (!READ_ONCE(hm->cand_rebin))
		return;
	spin_lock_irqsave(&hm->lock, flags);
	if (!hm->cand_rebin ||
	    time_before(jiffies, hm->cand_rebin_at + HTMM_REBIN_GAP)) {
		spin_unlock_irqrestore(&hm->lock, flags);
		return;
	}
	WRITE_ONCE(hm->cand_rebin, false);
	hm->cand_rebin_at = jiffies;
	left = hm->cand_len;
	p = hm->cand_head;
	while (left) {
		for (b = 0; b < HTMM_LOCKED_BATCH && left; b++, left--) {
			/* Still between the head and the tail? */
			off = (p + HTMM_CAND_SIZE - hm->cand_head) %
			      HTMM_CAND_SIZE;
			if (off < hm->cand_len)
				htmm_cand_rebin_one_locked(hm, memcg, p);
			p = (p + 1) % HTMM_CAND_SIZE;
		}
		spin_unlock_irqrestore(&hm->lock, flags);
		cond_resched();
		spin_lock_irqsave(&hm->lock, flags);
	}
	spin_unlock_irqrestore(&hm->lock, flags);
}

/*
 * The flags of the entry a folio in @bin with queue flags @flags gets: 0
 * if it needs none.  A folio queued in the fill bin that turns hot is
 * queued again, as hot: only hot entries ask demotion to make room, and
 * with the fast tier full a fill entry waits for room that nothing else
 * would make.  A folio queued as hot that turns strong is queued again
 * for the same reason, with an entry that only adds strength.
 */
static unsigned long htmm_cand_bits(const struct htmm_memcg *hm,
				    unsigned int flags, unsigned int bin)
{
	if (!htmm_bin_hot(hm, bin))
		return hm->fill != HTMM_BIN_NONE && bin >= hm->fill &&
		       !(flags & HTMM_META_QUEUED) ? HTMM_CAND_FILL : 0;
	if (bin < hm->hot + HTMM_STRONG_BINS)
		return flags & HTMM_META_QUEUED_HOT ? 0 : HTMM_CAND_HOT;
	if (flags & HTMM_META_QUEUED_STRONG)
		return 0;
	return flags & HTMM_META_QUEUED_HOT ?
	       HTMM_CAND_FILL | HTMM_CAND_STRONG : HTMM_CAND_STRONG;
}

/*
 * How much an entry with @bits asks of demotion: 0 for no room (fill), 1
 * for room cold folios make, 2 for room warm folios make as well (strong).
 */
static unsigned int htmm_cand_rank(unsigned long bits)
{
	if (bits & HTMM_CAND_STRONG)
		return 2;
	return bits & HTMM_CAND_FILL ? 0 : 1;
}

/*
 * Queue a folio that sits on a slow node for promotion (htmm_cand_bits()).
 * Caller holds hm->lock; @h is the folio's head metadata and @bin its bin.
 * On a full queue a folio takes the place of the entry at the head if that
 * asks for less: a hot one that of a fill entry, a strong one that of a
 * hot one.  Without the second, a queue full of hot entries kept every
 * strong one out, and warm folios, which go down only for strong entries,
 * stayed in the fast tier for ever.
 */
static void htmm_queue_locked(struct htmm_memcg *hm, struct mem_cgroup *memcg,
			      struct folio *folio, struct htmm_meta *h,
			      unsigned int bin)
{
	unsigned long bits = htmm_cand_bits(hm, h->flags, bin);
	bool hot = htmm_bin_hot(hm, bin);
	unsigned long e;
	unsigned int i;

	if (!hm->cand || !bits ||
	    READ_ONCE(htmm_params.mode) == HTMM_MODE_NO_MIGRATION ||
	    htmm_node_is_fast(folio_nid(folio)))
		return;
	/*
	 * A folio off the LRU is being migrated (or reclaimed), or waits in
	 * a per-CPU LRU batch.  In the first case its entry was taken off
	 * when promotion picked it, and a new one would ask for room again
	 * for a folio on its way up.  In the others its next sample queues
	 * it, once kmigraterd has drained the batches.
	 */
	if (!folio_test_lru(folio)) {
		htmm_note_parked();
		return;
	}
	if (hm->cand_len == HTMM_CAND_SIZE) {
		hm->nr_cand_dropped++;
		if (htmm_cand_rank(bits) <=
		    htmm_cand_rank(hm->cand[hm->cand_head]))
			return;
		htmm_cand_take_locked(hm, memcg, &e);	/* e: scratch */
		/* The head may have been this folio's own hot entry. */
		bits = htmm_cand_bits(hm, h->flags, bin);
	}
	e = HTMM_CAND_ENTRY(folio_pfn(folio), folio_order(folio)) |
	    (bits & ~HTMM_CAND_HOT);
	/* Only hot folios ask demotion to make room for them. */
	htmm_cand_count_locked(hm, e, bin, true);
	i = (hm->cand_head + hm->cand_len) % HTMM_CAND_SIZE;
	hm->cand[i] = e;
	hm->cand_bin[i] = bin;
	hm->cand_len++;
	h->flags |= HTMM_META_QUEUED;
	if (hot)
		h->flags |= HTMM_META_QUEUED_HOT;
	if (e & HTMM_CAND_STRONG)
		h->flags |= HTMM_META_QUEUED_STRONG;
}

static void htmm_hist_move(struct htmm_memcg *hm, struct htmm_hist *h,
			   unsigned int from, unsigned int to, u64 nr)
{
	if (from == to)
		return;
	if (!htmm_hist_sub(h, from, nr))
		hm->nr_unaccounted++;
	htmm_hist_add(h, to, nr);
}

/* Caller holds hm->lock. */
static void htmm_adapt_locked(struct mem_cgroup *memcg, struct htmm_memcg *hm)
{
	struct htmm_thresholds t;

	hm->capacity = htmm_fast_capacity(memcg);
	htmm_thresholds(&hm->hist, hm->capacity,
			READ_ONCE(htmm_params.thres_hot),
			READ_ONCE(htmm_params.nowarm), &t);
	if (t.hot != hm->hot || t.warm != hm->warm)
		trace_htmm_threshold(mem_cgroup_id(memcg), t.hot, t.warm,
				     hm->capacity, t.hot_pages);
	if (t.hot != hm->hot || t.fill != hm->fill)
		WRITE_ONCE(hm->cand_rebin, true);
	hm->hot = t.hot;
	hm->warm = t.warm;
	hm->fill = t.fill;
	hm->samples_since_adapt = 0;
}

/*
 * The queued entries cool with the histogram, so that they stop asking for
 * room once their folios are no longer hot.  Caller holds hm->lock.
 */
static void htmm_cand_cool_locked(struct htmm_memcg *hm)
{
	unsigned int i, j;

	htmm_hist_cool(&hm->cand_room, 1);
	htmm_hist_cool(&hm->cand_strong, 1);
	htmm_hist_cool(&hm->cand_fill, 1);
	for (i = 0; i < hm->cand_len; i++) {
		j = (hm->cand_head + i) % HTMM_CAND_SIZE;
		hm->cand_bin[j] = htmm_bin_cool(hm->cand_bin[j], 1);
	}
}

/* Caller holds hm->lock. */
static void htmm_cool_locked(struct mem_cgroup *memcg, struct htmm_memcg *hm)
{
	hm->epoch++;
	htmm_hist_cool(&hm->hist, 1);
	htmm_hist_cool(&hm->hist_split, 1);
	htmm_cand_cool_locked(hm);
	hm->samples_since_cool = 0;
	hm->usage_at_cool = page_counter_read(&memcg->memory);
	if (!(htmm_coolings(hm) % READ_ONCE(htmm_params.split_period)))
		hm->split.due = true;
	count_vm_event(HTMM_NR_COOLING);
	trace_htmm_cooling(mem_cgroup_id(memcg), htmm_coolings(hm));
	htmm_adapt_locked(memcg, hm);
}

/*
 * Adaptation time.  If the cgroup's memory doubled since the last cooling,
 * the counts describe a much smaller working set than the one now
 * resident: cool instead, which also adapts.  Caller holds hm->lock.
 */
static void htmm_adapt_or_cool_locked(struct mem_cgroup *memcg,
				      struct htmm_memcg *hm)
{
	unsigned long usage = page_counter_read(&memcg->memory);

	if (hm->usage_at_cool && usage / 2 > hm->usage_at_cool) {
		htmm_cool_locked(memcg, hm);
		return;
	}
	if (!hm->usage_at_cool)
		hm->usage_at_cool = usage;
	htmm_adapt_locked(memcg, hm);
}

/**
 * htmm_memcg_adapt - Recompute a cgroup's thresholds now.
 * @memcg: The cgroup, e.g. after its fast-tier budget changed.
 */
void htmm_memcg_adapt(struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	unsigned long flags;

	spin_lock_irqsave(&hm->lock, flags);
	htmm_adapt_locked(memcg, hm);
	/* A new budget: splitting may pay again. */
	hm->split.stopped = false;
	hm->split.last_nr = 0;
	spin_unlock_irqrestore(&hm->lock, flags);
}

/**
 * htmm_memcg_refresh - Recompute a cgroup's thresholds if samples arrived.
 * @memcg: The cgroup.
 *
 * kmigraterd calls this every period, so that a slow sample source (the
 * Accessed-bit scanner gives one sample per page and scan) does not leave
 * the thresholds stale until htmm_adaptation_period samples have come.
 */
void htmm_memcg_refresh(struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	unsigned long flags;

	spin_lock_irqsave(&hm->lock, flags);
	if (hm->samples_since_adapt)
		htmm_adapt_or_cool_locked(memcg, hm);
	spin_unlock_irqrestore(&hm->lock, flags);
}

/* Start accounting @folio in @hm: every page at count 0, bin 0. */
static void htmm_folio_start(struct htmm_memcg *hm, unsigned short id,
			     struct folio *folio, struct htmm_meta *head)
{
	long i, nr = folio_nr_pages(folio);
	struct page_ext *ext;
	struct htmm_meta *m;

	for (i = 0; i < nr; i++) {
		m = i ? htmm_meta_get(folio_page(folio, i), &ext) : head;
		if (!m)
			continue;
		m->count = 0;
		m->epoch = hm->epoch;
		m->bin = 0;
		if (i) {
			/* No skew class cached (htmm_folio_skew()). */
			m->hcount = 0;
			m->hbin = 0;
			page_ext_put(ext);
		}
	}
	head->hcount = 0;
	head->hepoch = hm->epoch;
	head->hbin = 0;
	head->memcg_id = id;
	head->flags = 0;
	head->mbin = 0;
	head->mtime = 0;
	htmm_hist_add(&hm->hist, 0, nr);
	htmm_hist_add(&hm->hist_split, 0, nr);
}

/* Stop accounting @folio in @hm and clear its metadata. */
static void htmm_folio_stop(struct htmm_memcg *hm, struct folio *folio,
			    struct htmm_meta *head)
{
	long i, nr = folio_nr_pages(folio);
	struct page_ext *ext;
	struct htmm_meta *m;
	unsigned int bin;

	for (i = 0; i < nr; i++) {
		m = i ? htmm_meta_get(folio_page(folio, i), &ext) : head;
		if (!m)
			continue;
		bin = htmm_meta_bin(hm, m);
		if (!htmm_hist_sub(&hm->hist_split, bin, 1))
			hm->nr_unaccounted++;
		if (nr == 1 && !htmm_hist_sub(&hm->hist, bin, 1))
			hm->nr_unaccounted++;
		if (i) {
			memset(m, 0, sizeof(*m));
			page_ext_put(ext);
		}
	}
	if (nr > 1) {
		bin = htmm_meta_hbin(hm, head);
		if (!htmm_hist_sub(&hm->hist, bin, nr))
			hm->nr_unaccounted++;
	}
	memset(head, 0, sizeof(*head));
}

/*
 * Remember a sampled huge page for the next split round.  Caller holds
 * hm->lock; @h is the folio's head metadata.
 */
static void htmm_thp_seen_locked(struct htmm_memcg *hm, struct folio *folio,
				 struct htmm_meta *h)
{
	if (!hm->split.ring || (h->flags & HTMM_META_SEEN) ||
	    hm->split.len == HTMM_THP_RING)
		return;
	hm->split.ring[(hm->split.head + hm->split.len) % HTMM_THP_RING] =
		folio_pfn(folio);
	hm->split.len++;
	h->flags |= HTMM_META_SEEN;
}

/*
 * Caller holds hm->lock; @folio is charged to the cgroup with id @id.
 * A @coarse sample says the folio was accessed, not which of its pages
 * (the Accessed bit of a huge page's PMD): only the folio count moves,
 * by one sample on each of its pages.  A young PMD is the same evidence
 * as a young PTE, once per scan, and the folio's density must rank with
 * a base page's: one sample on the folio made every huge page used like
 * a base page look 512 times colder (nine bins down), so that kmigraterd
 * demoted huge pages for any base page used as often.
 */
static void htmm_account(struct mem_cgroup *memcg, struct htmm_memcg *hm,
			 struct folio *folio, struct page *page, bool coarse)
{
	unsigned short id = mem_cgroup_id(memcg);
	long nr = folio_nr_pages(folio);
	struct page_ext *hext, *ext = NULL;
	struct htmm_meta *h, *m;
	unsigned int d, cur, bin, was = 0;

	h = htmm_meta_get(&folio->page, &hext);
	if (!h)
		return;
	if (h->memcg_id != id)
		htmm_folio_start(hm, id, folio, h);

	if (nr > 1) {
		d = htmm_epoch_delta(hm->epoch, h->hepoch);
		cur = htmm_bin_cool(h->hbin, d);
		h->hcount = htmm_count_add(htmm_count_cool(h->hcount, d),
					   coarse ? nr : 1);
		h->hepoch = hm->epoch;
		bin = htmm_bin(htmm_units(h->hcount, nr));
		htmm_hist_move(hm, &hm->hist, cur, bin, nr);
		h->hbin = bin;
		was = cur;
		if (!coarse)
			htmm_thp_seen_locked(hm, folio, h);
	}

	m = coarse ? NULL : page == &folio->page ? h : htmm_meta_get(page, &ext);
	if (m) {
		d = htmm_epoch_delta(hm->epoch, m->epoch);
		cur = htmm_bin_cool(m->bin, d);
		m->count = min_t(u32, htmm_count_cool(m->count, d) + 1,
				 HTMM_PAGE_COUNT_MAX);
		m->epoch = hm->epoch;
		bin = htmm_bin(htmm_units(m->count, 1));
		htmm_hist_move(hm, &hm->hist_split, cur, bin, 1);
		if (nr == 1) {
			htmm_hist_move(hm, &hm->hist, cur, bin, 1);
			was = cur;
		}
		m->bin = bin;
		if (ext)
			page_ext_put(ext);
	}
	bin = nr > 1 ? h->hbin : h->bin;
	if (htmm_cand_rose_queued(hm, h->flags, was, bin))
		WRITE_ONCE(hm->cand_rebin, true);
	htmm_queue_locked(hm, memcg, folio, h, bin);
	page_ext_put(hext);
}

/*
 * Account one sample on @page of the user folio @folio, which the caller
 * holds a reference on; @pmd: on the whole folio (htmm_account()'s coarse).
 */
static int htmm_ingest_folio(struct folio *folio, struct page *page,
			     enum htmm_kind kind, enum htmm_source src,
			     bool pmd)
{
	struct mem_cgroup *memcg;
	struct htmm_memcg *hm;
	unsigned long flags;
	int ret = -ENODEV;

	rcu_read_lock();
	memcg = folio_memcg_check(folio);
	hm = memcg ? htmm_memcg(memcg) : NULL;
	if (!hm || !READ_ONCE(hm->enabled))
		goto unlock;
	spin_lock_irqsave(&hm->lock, flags);
	/* Recheck under the lock: migration may have moved the charge. */
	if (folio_memcg_check(folio) == memcg) {
		htmm_account(memcg, hm, folio, page,
			     pmd && folio_test_large(folio));
		hm->nr_samples[kind]++;
		hm->nr_samples_src[src]++;
		if (++hm->samples_since_cool >= READ_ONCE(htmm_params.cooling_period))
			htmm_cool_locked(memcg, hm);
		else if (++hm->samples_since_adapt >=
			 READ_ONCE(htmm_params.adaptation_period))
			htmm_adapt_or_cool_locked(memcg, hm);
		ret = 0;
	}
	spin_unlock_irqrestore(&hm->lock, flags);
unlock:
	rcu_read_unlock();
	return ret;
}

static int __htmm_ingest_page(struct page *page, enum htmm_kind kind,
			      enum htmm_source src, bool pmd)
{
	struct folio *folio = page_folio(page);
	int ret = -ENOENT;

	if (!folio_try_get(folio))
		goto out;
	if (likely(page_folio(page) == folio && !folio_test_slab(folio) &&
		   !folio_test_hugetlb(folio) && !PageTable(&folio->page) &&
		   !folio_memcg_kmem(folio)))
		ret = htmm_ingest_folio(folio, page, kind, src, pmd);
	folio_put(folio);
out:
	count_vm_event(ret ? HTMM_NR_SAMPLES_IGNORED : HTMM_NR_SAMPLED);
	return ret;
}

/**
 * htmm_ingest_page - Account one access sample on a page.
 * @page: The sampled page: any page frame, free or in any use.
 * @kind: What kind of access it was.
 * @src: Which sample source saw it.
 *
 * Only pages of user folios (anonymous or page cache) charged to an
 * htmm-enabled cgroup are accounted.  The frame may be freed or reused
 * under us, so the folio is pinned first and only then checked, as
 * damon_get_folio() does; its cgroup is read with folio_memcg_check(),
 * which is safe on slab folios, after kernel memory (slab, page tables,
 * kmem charges) and hugetlb were ruled out.  Unlike a walk over page
 * frames, a sample does not require the folio to be on the LRU: a page
 * faulted in a moment ago still sits in a per-CPU LRU batch, and its
 * samples count.  Every other sample is counted in
 * htmm_nr_samples_ignored and leaves nothing behind.
 *
 * Context: Any context but NMI; takes the cgroup's htmm lock.
 * Return: 0 if the sample was accounted, -ENOENT if the page is not part of
 * a user folio (free, kernel, hugetlb, or changed under us), -ENODEV if it
 * belongs to no htmm cgroup.
 */
int htmm_ingest_page(struct page *page, enum htmm_kind kind,
		     enum htmm_source src)
{
	return __htmm_ingest_page(page, kind, src, false);
}

/**
 * htmm_ingest_pmd - Account the Accessed bit of a huge page's PMD.
 * @page: The page the PMD maps; the caller holds the PMD's lock.
 * @src: Which sample source saw it.
 *
 * The bit says that the huge page was used, not which of its pages: the
 * sample counts once on each of them (htmm_account()), as the bit of each
 * PTE would for a base page, and moves no subpage count.  Otherwise as
 * htmm_ingest_page() with HTMM_ACCESS.
 *
 * Context: As htmm_ingest_page().
 * Return: As htmm_ingest_page().
 */
int htmm_ingest_pmd(struct page *page, enum htmm_source src)
{
	return __htmm_ingest_page(page, HTMM_ACCESS, src, true);
}

/* Lookups of a page that migrates again and again before giving up. */
#define HTMM_LOOKUP_TRIES	8

/**
 * htmm_get_user_page - Find the page mapped at a process's address.
 * @pid: The process, in the caller's pid namespace.
 * @vaddr: The user virtual address.
 *
 * A page under migration is looked up once its migration has ended, so
 * that a query or an injected sample does not miss it for -EFAULT (unless
 * it migrates HTMM_LOOKUP_TRIES times in a row).
 *
 * Context: Process context, may sleep (takes the mmap_lock).
 * Return: The page with a reference on its folio, or an ERR_PTR().
 */
struct page *htmm_get_user_page(pid_t pid, unsigned long vaddr)
{
	struct task_struct *task;
	struct mm_struct *mm;
	struct page *page;
	int tries;

	task = find_get_task_by_vpid(pid);
	if (!task)
		return ERR_PTR(-ESRCH);
	mm = get_task_mm(task);
	put_task_struct(task);
	if (!mm)
		return ERR_PTR(-ESRCH);
	/*
	 * A page under migration is there again once the migration ends.
	 * Each further try follows a migration waited for, or a page
	 * mapped again; a present entry without a folio (the zero page)
	 * gets HTMM_LOOKUP_TRIES tries in all, which cost no waiting.
	 */
	for (tries = 0;; tries++) {
		page = htmm_mm_get_page(mm, vaddr, false);
		if (page != ERR_PTR(-EFAULT) || tries == HTMM_LOOKUP_TRIES ||
		    fatal_signal_pending(current) ||
		    !htmm_mm_wait_migration(mm, vaddr))
			break;
	}
	mmput(mm);
	return page;
}

/**
 * htmm_ingest_vaddr - Account a sample given as a process and an address.
 * @pid: The process, in the caller's pid namespace.
 * @vaddr: The user virtual address.
 * @kind: What kind of access it was.
 * @src: Which sample source saw it.
 *
 * Context: Process context, may sleep (takes the mmap_lock).
 * Return: 0 if accounted; -ESRCH, -EFAULT or an htmm_ingest_page() error.
 */
int htmm_ingest_vaddr(pid_t pid, unsigned long vaddr, enum htmm_kind kind,
		      enum htmm_source src)
{
	struct page *page = htmm_get_user_page(pid, vaddr);
	int ret;

	if (IS_ERR(page))
		return PTR_ERR(page);
	ret = htmm_ingest_page(page, kind, src);
	folio_put(page_folio(page));
	return ret;
}

/**
 * htmm_page_info - The classification state of one page, cooled to date.
 * @page: The page; the caller holds a reference on its folio.
 * @info: Result.
 *
 * Return: 0, or -ENODEV if the page is not accounted by an htmm cgroup.
 */
int htmm_page_info(struct page *page, struct htmm_page_info *info)
{
	struct folio *folio = page_folio(page);
	struct page_ext *hext, *ext = NULL;
	struct mem_cgroup *memcg;
	struct htmm_memcg *hm;
	struct htmm_meta *h, *m;
	unsigned long flags;
	int ret = -ENODEV;

	memset(info, 0, sizeof(*info));
	info->nr_pages = folio_nr_pages(folio);
	rcu_read_lock();
	memcg = folio_memcg_check(folio);
	hm = memcg ? htmm_memcg(memcg) : NULL;
	if (!hm)
		goto out;
	h = htmm_meta_get(&folio->page, &hext);
	if (!h)
		goto out;
	m = page == &folio->page ? h : htmm_meta_get(page, &ext);
	spin_lock_irqsave(&hm->lock, flags);
	if (m && h->memcg_id == mem_cgroup_id(memcg)) {
		unsigned int d = htmm_epoch_delta(hm->epoch, m->epoch);

		info->count = htmm_count_cool(m->count, d);
		info->bin = htmm_bin_cool(m->bin, d);
		if (info->nr_pages > 1) {
			d = htmm_epoch_delta(hm->epoch, h->hepoch);
			info->folio_count = htmm_count_cool(h->hcount, d);
			info->folio_bin = htmm_bin_cool(h->hbin, d);
		} else {
			info->folio_count = info->count;
			info->folio_bin = info->bin;
		}
		info->hot = htmm_bin_hot(hm, info->folio_bin);
		info->fill = info->hot || (hm->fill != HTMM_BIN_NONE &&
					   info->folio_bin >= hm->fill);
		info->sampled = true;
		info->hot_bin = hm->hot;
		info->warm_bin = hm->warm;
		info->fill_bin = hm->fill;
		info->epoch = htmm_coolings(hm);
		info->flags = h->flags;
		info->mbin = h->mbin;
		info->moved_ms = htmm_mtime_age_ms(htmm_mtime_now(), h->mtime);
		ret = 0;
	}
	spin_unlock_irqrestore(&hm->lock, flags);
	if (ext)
		page_ext_put(ext);
	page_ext_put(hext);
out:
	rcu_read_unlock();
	return ret;
}

/**
 * htmm_folio_mark - Change the migration flags of a folio.
 * @folio: The folio; the caller holds a reference.
 * @memcg: The cgroup it is expected to be accounted in.
 * @set: HTMM_META_* flags to set.  Setting HTMM_META_PROMOTED or
 *	HTMM_META_DEMOTED also records the folio's bin and the time.
 * @clear: HTMM_META_* flags to clear.
 *
 * Return: 0, or -ENODEV if the folio is not accounted in @memcg.
 */
int htmm_folio_mark(struct folio *folio, struct mem_cgroup *memcg,
		    unsigned int set, unsigned int clear)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	struct page_ext *ext;
	struct htmm_meta *h;
	unsigned long flags;
	int ret = -ENODEV;

	h = htmm_meta_get(&folio->page, &ext);
	if (!h)
		return ret;
	spin_lock_irqsave(&hm->lock, flags);
	if (h->memcg_id == mem_cgroup_id(memcg)) {
		h->flags = (h->flags & ~clear) | set;
		if (set & (HTMM_META_PROMOTED | HTMM_META_DEMOTED |
			   HTMM_META_SPLIT)) {
			h->mbin = folio_test_large(folio) ?
				  htmm_meta_hbin(hm, h) : htmm_meta_bin(hm, h);
			h->mtime = htmm_mtime_now();
		}
		ret = 0;
	}
	spin_unlock_irqrestore(&hm->lock, flags);
	page_ext_put(ext);
	return ret;
}

/**
 * htmm_pfn_clear_flag_locked - Clear a flag of the folio a queue named.
 * @hm: The cgroup's htmm state; the caller holds hm->lock.
 * @memcg: The cgroup.
 * @pfn: A PFN taken off one of the cgroup's queues.
 * @flag: HTMM_META_QUEUES or HTMM_META_RING.
 *
 * Done for every entry taken off a queue, whatever became of its folio,
 * so that a folio is never left marked as queued when it is not.  With
 * @flag 0, only reads the flags.
 *
 * Return: The flags the folio had, 0 if it is not accounted in @memcg.
 */
unsigned int htmm_pfn_clear_flag_locked(struct htmm_memcg *hm,
					struct mem_cgroup *memcg,
					unsigned long pfn, unsigned int flag)
{
	struct page_ext *ext;
	struct htmm_meta *m;
	unsigned int old;

	m = htmm_pfn_meta_locked(hm, memcg, pfn, &ext);
	if (!m)
		return 0;
	old = m->flags;
	m->flags &= ~flag;
	page_ext_put(ext);
	return old;
}

/**
 * htmm_folio_split_again - Keep a huge page to split for room.
 * @folio: A large folio whose split for room failed; the caller holds a
 *	reference.
 * @memcg: The cgroup it is expected to be accounted in.
 *
 * The folio goes back on the cgroup's split ring, marked so that the next
 * round splits it for room even if the node has room by then: the other
 * splits of the round that chose it made that room.
 */
void htmm_folio_split_again(struct folio *folio, struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	struct page_ext *ext;
	struct htmm_meta *h;
	unsigned long flags;

	h = htmm_meta_get(&folio->page, &ext);
	if (!h)
		return;
	spin_lock_irqsave(&hm->lock, flags);
	if (h->memcg_id == mem_cgroup_id(memcg)) {
		htmm_thp_seen_locked(hm, folio, h);
		if (h->flags & HTMM_META_SEEN)
			h->flags |= HTMM_META_ROOM;
	}
	spin_unlock_irqrestore(&hm->lock, flags);
	page_ext_put(ext);
}

/**
 * htmm_folio_queue - Queue a folio for promotion if it is hot and slow.
 * @folio: The folio; the caller holds a reference.
 * @memcg: The cgroup it is expected to be accounted in.
 */
void htmm_folio_queue(struct folio *folio, struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	struct page_ext *ext;
	struct htmm_meta *h;
	unsigned long flags;
	unsigned int bin;

	h = htmm_meta_get(&folio->page, &ext);
	if (!h)
		return;
	spin_lock_irqsave(&hm->lock, flags);
	if (h->memcg_id == mem_cgroup_id(memcg)) {
		if (folio_test_large(folio))
			bin = htmm_meta_hbin(hm, h);
		else
			bin = htmm_meta_bin(hm, h);
		htmm_queue_locked(hm, memcg, folio, h, bin);
	}
	spin_unlock_irqrestore(&hm->lock, flags);
	page_ext_put(ext);
}

/*
 * The skew class of a large folio is cached in the metadata of its second
 * page, whose head-only fields a tail page does not use: @hcount holds the
 * folio's samples when the class was computed, @hepoch their epoch, @hbin
 * the class plus one (0: none cached).  htmm_folio_start() and
 * htmm_split_folio() clear it; migration copies it with the counts.
 * Caller holds hm->lock.  Return: whether @c holds a class still good for
 * a folio with @now samples, in *@class.
 */
static bool htmm_skew_cached(struct htmm_memcg *hm, const struct htmm_meta *c,
			     u32 now, int *class)
{
	u32 then;

	if (!c->hbin)
		return false;
	then = htmm_count_cool(c->hcount, htmm_epoch_delta(hm->epoch, c->hepoch));
	if (htmm_skew_stale(then, now))
		return false;
	*class = c->hbin - 1;
	return true;
}

/* Sum the cooled subpage counts of @folio and their squares; hm->lock held. */
static void htmm_folio_sums(struct htmm_memcg *hm, struct folio *folio,
			    u64 *n, u64 *sumsq)
{
	long i, nr = folio_nr_pages(folio);
	struct page_ext *ext;
	struct htmm_meta *m;
	u64 c;

	for (i = 0; i < nr; i++) {
		m = htmm_meta_get(folio_page(folio, i), &ext);
		if (!m)
			continue;
		c = htmm_count_cool(m->count,
				    htmm_epoch_delta(hm->epoch, m->epoch));
		*n += c;
		*sumsq += c * c;
		page_ext_put(ext);
	}
}

/**
 * htmm_folio_skew - The skew class of a large folio's accesses.
 * @folio: The folio; the caller holds a reference.
 * @memcg: The cgroup it is expected to be accounted in.
 *
 * The class reads every subpage's count, so it is kept until the folio has
 * a quarter more samples (htmm_skew_stale()): promotion and demotion look
 * at the same huge pages again and again while they wait for room.
 *
 * Return: The class (see htmm_skew_class()), or -ENODEV if the folio is
 * not accounted in @memcg.
 */
int htmm_folio_skew(struct folio *folio, struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	struct page_ext *hext, *cext;
	struct htmm_meta *h, *c = NULL;
	u64 n = 0, sumsq = 0;
	unsigned long flags;
	int ret = -ENODEV;
	u32 now;

	h = htmm_meta_get(&folio->page, &hext);
	if (!h)
		return ret;
	if (folio_test_large(folio))
		c = htmm_meta_get(folio_page(folio, 1), &cext);
	spin_lock_irqsave(&hm->lock, flags);
	if (h->memcg_id != mem_cgroup_id(memcg))
		goto out;
	now = htmm_count_cool(h->hcount, htmm_epoch_delta(hm->epoch, h->hepoch));
	if (c && htmm_skew_cached(hm, c, now, &ret))
		goto out;
	htmm_folio_sums(hm, folio, &n, &sumsq);
	ret = htmm_skew_class(n, sumsq, folio_nr_pages(folio));
	if (c) {
		c->hcount = now;
		c->hepoch = hm->epoch;
		c->hbin = ret + 1;
	}
out:
	spin_unlock_irqrestore(&hm->lock, flags);
	if (c)
		page_ext_put(cext);
	page_ext_put(hext);
	return ret;
}

/**
 * htmm_uncharge_folio - A folio leaves its cgroup: stop accounting it.
 * @folio: The folio being uncharged (freed).
 * @memcg: The cgroup it was charged to.
 *
 * Context: Any context.
 */
void htmm_uncharge_folio(struct folio *folio, struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	struct page_ext *ext;
	struct htmm_meta *h;
	unsigned long flags;

	if (!hm)
		return;
	h = htmm_meta_get(&folio->page, &ext);
	if (!h)
		return;
	if (READ_ONCE(h->memcg_id)) {
		spin_lock_irqsave(&hm->lock, flags);
		if (h->memcg_id == mem_cgroup_id(memcg))
			htmm_folio_stop(hm, folio, h);
		else
			memset(h, 0, sizeof(*h));
		spin_unlock_irqrestore(&hm->lock, flags);
	}
	page_ext_put(ext);
}

/**
 * htmm_migrate_folio - Move the metadata of a migrated folio.
 * @old: The source folio, its charge already cleared.
 * @new: The destination folio, now charged to @memcg.
 * @memcg: The cgroup.
 *
 * The histograms do not change: the pages keep their counts and bins.
 *
 * Context: Process context; both folios are locked.
 */
void htmm_migrate_folio(struct folio *old, struct folio *new,
			struct mem_cgroup *memcg)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	long i, nr = folio_nr_pages(old);
	struct page_ext *oext, *next;
	struct htmm_meta *o, *n;
	unsigned long flags;

	if (!hm)
		return;
	o = htmm_meta_get(&old->page, &oext);
	if (!o)
		return;
	if (!READ_ONCE(o->memcg_id)) {
		page_ext_put(oext);
		return;
	}
	page_ext_put(oext);
	spin_lock_irqsave(&hm->lock, flags);
	for (i = 0; i < nr; i++) {
		o = htmm_meta_get(folio_page(old, i), &oext);
		n = htmm_meta_get(folio_page(new, i), &next);
		if (o && n) {
			*n = *o;
			/* The queues hold the old PFN: let it queue again. */
			n->flags &= ~(HTMM_META_QUEUES | HTMM_META_RING);
			memset(o, 0, sizeof(*o));
		}
		if (n)
			page_ext_put(next);
		if (o)
			page_ext_put(oext);
	}
	spin_unlock_irqrestore(&hm->lock, flags);
}

/**
 * htmm_split_folio - Hand a large folio's metadata to its parts.
 * @folio: The folio being split; its refcount is frozen.
 * @new_order: The order of the new folios.
 *
 * Each 4 KiB page already carries its own count, which becomes the count
 * of the base page it turns into.  Splits to a non-zero order end the
 * accounting of the pieces; they start over at their next sample.
 *
 * Context: The folio is locked and frozen; interrupts may be off.
 */
void htmm_split_folio(struct folio *folio, unsigned int new_order)
{
	struct mem_cgroup *memcg = folio_memcg(folio);
	struct htmm_memcg *hm = memcg ? htmm_memcg(memcg) : NULL;
	long i, nr = folio_nr_pages(folio);
	struct page_ext *ext, *sext;
	struct htmm_meta *h, *m;
	unsigned long flags;
	unsigned int bin;

	if (!hm || nr == 1)
		return;
	h = htmm_meta_get(&folio->page, &ext);
	if (!h)
		return;
	spin_lock_irqsave(&hm->lock, flags);
	if (h->memcg_id != mem_cgroup_id(memcg))
		goto out;
	if (new_order) {
		htmm_folio_stop(hm, folio, h);
		goto out;
	}
	bin = htmm_meta_hbin(hm, h);
	if (!htmm_hist_sub(&hm->hist, bin, nr))
		hm->nr_unaccounted++;
	for (i = 0; i < nr; i++) {
		m = i ? htmm_meta_get(folio_page(folio, i), &sext) : h;
		if (!m)
			continue;
		bin = htmm_meta_bin(hm, m);
		htmm_hist_add(&hm->hist, bin, 1);
		m->memcg_id = h->memcg_id;
		m->hcount = 0;
		m->hbin = 0;
		if (i) {
			/* Each part remembers how the folio last moved. */
			m->flags = h->flags & ~(HTMM_META_QUEUES |
						HTMM_META_RING);
			m->mbin = h->mbin;
			m->mtime = h->mtime;
		}
		if (i)
			page_ext_put(sext);
	}
out:
	spin_unlock_irqrestore(&hm->lock, flags);
	page_ext_put(ext);
}

/**
 * __htmm_collapse_note - Gather htmm's view of a page khugepaged looks at.
 * @hc: The range's state.
 * @page: The page.
 *
 * Reads the metadata without the cgroup lock: the answer is a heuristic.
 * A count is cooled by the coolings of its cgroup since it was last
 * brought up to date, so that samples that coolings have aged away no
 * longer make the range look skewed.
 *
 * Context: Under the page table lock.
 */
void __htmm_collapse_note(struct htmm_collapse *hc, struct page *page)
{
	unsigned int cooldown = READ_ONCE(htmm_params.split_cooldown_ms);
	struct mem_cgroup *memcg;
	struct page_ext *ext;
	struct htmm_meta *m;
	u16 id;
	u64 c;

	m = htmm_meta_get(page, &ext);
	if (!m)
		return;
	id = READ_ONCE(m->memcg_id);
	rcu_read_lock();
	memcg = id ? folio_memcg_check(page_folio(page)) : NULL;
	if (memcg && mem_cgroup_id(memcg) == id) {
		u32 age = htmm_mtime_age_ms(htmm_mtime_now(),
					    READ_ONCE(m->mtime));
		u32 d = htmm_epoch_delta(READ_ONCE(htmm_memcg(memcg)->epoch),
					 READ_ONCE(m->epoch));

		if (READ_ONCE(m->flags) & HTMM_META_SPLIT) {
			hc->split = true;
			hc->recent |= age < cooldown;
		}
		c = htmm_count_cool(READ_ONCE(m->count), d);
		hc->n += c;
		hc->sumsq += c * c;
	}
	rcu_read_unlock();
	page_ext_put(ext);
}

/**
 * __htmm_collapse_allowed - May a range that htmm split collapse again?
 * @hc: What __htmm_collapse_note() gathered for the range.
 *
 * Yes if splitting is off.  During the cooldown, only if the range has at
 * least as many samples as pages and their spread is below the splittable
 * skew classes; after it, unless its samples still put it in those
 * classes.  A range that is still skewed would otherwise be collapsed on
 * the node that holds most of its pages, the slow one once its cold
 * subpages went down, taking its hot subpages with it.
 *
 * Return: true to let khugepaged go on.
 */
bool __htmm_collapse_allowed(const struct htmm_collapse *hc)
{
	unsigned int thres = READ_ONCE(htmm_params.thres_split);
	bool skewed;

	/* Without THP there is no khugepaged and no HPAGE_PMD_NR. */
	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) || !thres)
		return true;
	skewed = htmm_skew_class(hc->n, hc->sumsq, HPAGE_PMD_NR) >= thres;
	if (hc->recent)
		return hc->n >= HPAGE_PMD_NR && !skewed;
	return !skewed;
}

/* Print "@key @bin", or "@key none" for HTMM_BIN_NONE. */
void htmm_seq_bin(struct seq_file *m, const char *key, unsigned int bin)
{
	if (bin >= HTMM_NR_BINS)
		seq_printf(m, "%s none\n", key);
	else
		seq_printf(m, "%s %u\n", key, bin);
}

/**
 * htmm_memcg_stat - Print a cgroup's classification state.
 * @memcg: The cgroup.
 * @m: The memory.htmm_stat file.
 */
void htmm_memcg_stat(struct mem_cgroup *memcg, struct seq_file *m)
{
	struct htmm_memcg *hm = htmm_memcg(memcg);
	struct htmm_hist hist, split;
	u64 kinds[HTMM_NR_KINDS], srcs[HTMM_NR_SOURCES];
	unsigned int hot, warm, b;
	unsigned long flags;
	u64 cap, unacc;
	u32 epoch;

	spin_lock_irqsave(&hm->lock, flags);
	hist = hm->hist;
	split = hm->hist_split;
	memcpy(kinds, hm->nr_samples, sizeof(kinds));
	memcpy(srcs, hm->nr_samples_src, sizeof(srcs));
	hot = hm->hot;
	warm = hm->warm;
	cap = hm->capacity;
	epoch = htmm_coolings(hm);
	unacc = hm->nr_unaccounted;
	spin_unlock_irqrestore(&hm->lock, flags);

	for (b = 0; b < HTMM_NR_KINDS; b++)
		seq_printf(m, "samples_%s %llu\n", htmm_kind_names[b], kinds[b]);
	for (b = 0; b < HTMM_NR_SOURCES; b++)
		seq_printf(m, "samples_%s %llu\n", htmm_source_names[b], srcs[b]);
	htmm_seq_bin(m, "hot_threshold", hot);
	htmm_seq_bin(m, "warm_threshold", warm);
	seq_printf(m, "fast_capacity %llu\n", cap << PAGE_SHIFT);
	seq_printf(m, "cooling_epoch %u\n", epoch);
	seq_printf(m, "accounting_repairs %llu\n", unacc);
	htmm_migrate_stat(hm, m);
	htmm_split_stat(hm, m);
	for (b = 0; b < HTMM_NR_BINS; b++)
		seq_printf(m, "hist_%u %llu\n", b, hist.nr_pages[b]);
	for (b = 0; b < HTMM_NR_BINS; b++)
		seq_printf(m, "hist_split_%u %llu\n", b, split.nr_pages[b]);
}
