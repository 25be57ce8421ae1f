/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * htmm internal definitions shared by the files in mm/htmm/.
 */
#ifndef _MM_HTMM_INTERNAL_H
#define _MM_HTMM_INTERNAL_H

#include <linux/atomic.h>
#include <linux/gfp_types.h>
#include <linux/memcontrol.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "policy.h"

struct page;
struct page_ext;
struct seq_file;

/*
 * Tunables, exposed in /sys/kernel/mm/htmm/.  Each field is written with
 * WRITE_ONCE() by its sysfs store handler and read with READ_ONCE().  No
 * invariant spans two fields, so no lock protects them.
 */
struct htmm_params {
	unsigned int sample_period;		/* loads per PEBS sample */
	unsigned int inst_sample_period;	/* stores per PEBS sample */
	unsigned int thres_hot;			/* lowest hot histogram bin */
	unsigned int split_period;		/* coolings between split rounds */
	unsigned int adaptation_period;		/* samples between adaptations */
	unsigned int cooling_period;		/* samples between coolings */
	unsigned int mode;			/* enum htmm_mode */
	unsigned int demotion_period_ms;
	unsigned int promotion_period_ms;
	unsigned int gamma;			/* tenths */
	unsigned int cpu_quota;			/* per mille of one CPU */
	unsigned int thres_split;		/* lowest splittable skew class */
	unsigned int nowarm;			/* 1: no warm set */
	unsigned int cxl_mode;			/* 1: CPU-less nodes are slow */
	unsigned int sampler;			/* enum htmm_sampler */
	unsigned int perf_event;		/* enum htmm_perf_event */
	unsigned int abit_interval_ms;		/* between two abit scans */
	unsigned int abit_rate_mb;		/* abit scan rate, MiB/s */
	unsigned int abit_window_us;		/* abit test window; 0: none */
	unsigned int migrate_rate_mb;		/* per-node migration, MiB/s */
	unsigned int promotion_wmark;		/* per mille of the budget */
	unsigned int demotion_wmark;		/* per mille of the budget */
	unsigned int settle_ms;			/* no move back before this */
	unsigned int fast_latency_ns;		/* fast tier access latency */
	unsigned int slow_latency_ns;		/* slow tier access latency */
	unsigned int split_cooldown_ms;		/* no re-collapse before this */
#ifdef CONFIG_HTMM_CCOW
	unsigned int ccow_enabled;		/* enum htmm_ccow_mode */
	unsigned int ccow_region_kb;		/* a power of two, <= PMD */
	unsigned int ccow_threshold;		/* per cent written */
	unsigned int ccow_max_sync_kb;		/* copied in the fault */
	unsigned int ccow_huge;			/* whole PMD regions: a huge copy */
#endif
};

enum htmm_ccow_mode {
	HTMM_CCOW_NEVER,
	HTMM_CCOW_ALWAYS,
	HTMM_CCOW_HTMM,		/* mms of cgroups with htmm enabled */
	HTMM_CCOW_NR_MODES,
};

/* CCoW's counters of a cgroup, in the order of their vm events. */
#define HTMM_CCOW_NR_STATS	5
struct htmm_ccow_stat {
	atomic_long_t nr[HTMM_CCOW_NR_STATS];
};

enum htmm_sampler {
	HTMM_SAMPLER_AUTO,
	HTMM_SAMPLER_PEBS,
	HTMM_SAMPLER_ABIT,
	HTMM_SAMPLER_INJECT,
	HTMM_NR_SAMPLERS,
};

enum htmm_perf_event {
	HTMM_PERF_PEBS,		/* the PEBS events of the CPU model */
	HTMM_PERF_SW,		/* software page-fault events (testing) */
	HTMM_NR_PERF_EVENTS,
};

enum htmm_mode {
	HTMM_MODE_NO_MIGRATION = 0,	/* sample and classify only */
	HTMM_MODE_BASE = 1,		/* migrate, huge pages stay whole */
	HTMM_MODE_HUGEPAGE = 2,		/* migrate and split skewed THPs */
	HTMM_MODE_MAX = HTMM_MODE_HUGEPAGE,
};

extern struct htmm_params htmm_params;
extern bool htmm_latency_user_set;

/* Kinds of access samples. */
enum htmm_kind {
	HTMM_LOAD_FAST,		/* load served by the fast tier */
	HTMM_LOAD_SLOW,		/* load served by a slower tier */
	HTMM_STORE,
	HTMM_ACCESS,		/* an access of unknown kind (Accessed bit) */
	HTMM_NR_KINDS,
};

/* Where samples come from. */
enum htmm_source {
	HTMM_SRC_PEBS,
	HTMM_SRC_ABIT,
	HTMM_SRC_INJECT,
	HTMM_NR_SOURCES,
};

extern const char * const htmm_kind_names[HTMM_NR_KINDS];
extern const char * const htmm_source_names[HTMM_NR_SOURCES];

/*
 * Per-4 KiB-page metadata, kept in page_ext (24 bytes a page) when the
 * kernel was booted with htmm=on.  For a large folio, every page keeps its
 * own subpage count and the head page also keeps the folio's.  Protected
 * by the lock of the htmm_memcg whose id is in @memcg_id; a page whose
 * @memcg_id does not match the folio's cgroup is not accounted anywhere.
 * @flags, @mbin and @mtime are kept on the head page only.  The second
 * page of a large folio caches the folio's skew class in its @hcount,
 * @hepoch and @hbin (htmm_folio_skew()).
 *
 * The epochs and @mtime are 32-bit counters that wrap; they are only
 * compared through htmm_epoch_delta() and htmm_mtime_age_ms(), which are
 * right up to 2^32 coolings and 13.6 years apart.  @count saturates at
 * HTMM_PAGE_COUNT_MAX: a 4 KiB page reaches the top bin at 64 samples.
 */
struct htmm_meta {
	u32 hcount;	/* head of a large folio: samples on it; htmm_ingest_pmd() */
	u32 epoch;	/* cgroup cooling epoch @count is up to date with */
	u32 hepoch;	/* the same for @hcount */
	u32 mtime;	/* when, in HTMM_MTIME_MS units (htmm_mtime_now()) */
	u16 count;	/* samples on this 4 KiB page */
	u16 memcg_id;	/* head: cgroup whose histograms count the folio */
	u8 bin;		/* bin of this page in the split histogram */
	u8 hbin;	/* head of a large folio: its bin in the histogram */
	u8 flags;	/* HTMM_META_* */
	u8 mbin;	/* folio bin when it was last migrated by htmm */
};

/*
 * page_ext lays its clients out back to back and does not align them: a
 * record that is not a multiple of 8 bytes would misalign page_ext->flags
 * and page_owner's u64 fields of every other page (page_owner=on).
 */
static_assert(sizeof(struct htmm_meta) % sizeof(u64) == 0);

#define HTMM_PAGE_COUNT_MAX	U16_MAX

#define HTMM_META_QUEUED	0x01	/* on its cgroup's promotion queue */
#define HTMM_META_PROMOTED	0x02	/* last moved by htmm up a tier */
#define HTMM_META_DEMOTED	0x04	/* last moved by htmm down a tier */
#define HTMM_META_SEEN		0x08	/* huge page on the split candidates */
#define HTMM_META_SPLIT		0x10	/* split by htmm (at @mtime) */
#define HTMM_META_QUEUED_HOT	0x20	/* queued as hot: asks for room */
#define HTMM_META_QUEUED_STRONG	0x40	/* ... HTMM_STRONG_BINS above the hot bin */
#define HTMM_META_ROOM		0x80	/* to split for room: a split failed */
/* Cleared when the split ring stops naming the folio. */
#define HTMM_META_RING		(HTMM_META_SEEN | HTMM_META_ROOM)
/* Cleared when the folio's queue entries stop naming it. */
#define HTMM_META_QUEUES	(HTMM_META_QUEUED | HTMM_META_QUEUED_HOT | \
				 HTMM_META_QUEUED_STRONG)

/* Why kmigraterd left a page where it is. */
enum htmm_skip {
	HTMM_SKIP_PINNED,	/* pinned for DMA */
	HTMM_SKIP_MLOCKED,	/* mlocked or otherwise unevictable */
	HTMM_SKIP_ISOLATED,	/* off the LRU: isolated by someone else */
	HTMM_SKIP_UNMOVABLE,	/* its mapping cannot migrate */
	HTMM_SKIP_SETTLE,	/* moved too recently, class unchanged */
	HTMM_NR_SKIPS,
};

extern const char * const htmm_skip_names[HTMM_NR_SKIPS];

/*
 * Promotion candidates per cgroup: a ring under hm->lock of folio PFNs,
 * each shifted left by HTMM_CAND_SHIFT with the folio's order below,
 * HTMM_CAND_FILL for an entry that asks for no room (a folio queued from
 * the fill bin, not a hot one), and HTMM_CAND_STRONG for a hot folio
 * queued HTMM_STRONG_BINS or more above the hot threshold (warm folios,
 * a bin below it, may go down for its room: a margin of two bins).  A
 * folio queued as hot that turns strong is queued once more, with both
 * bits: its first entry still asks for the room.
 * cand_bin holds the bin each entry was queued in (below HTMM_NR_BINS, as
 * every bin htmm_bin() gives), cooled with the
 * histogram, and set to its folio's bin again when cand_rebin asks for it
 * (htmm_cand_rebin()); cand_room counts the pages of the entries without
 * HTMM_CAND_FILL by that bin, cand_strong those with HTMM_CAND_STRONG,
 * cand_fill those of the fill entries (HTMM_CAND_FILL alone).
 * Only the entries in bins that are still hot (strong) ask for room: the
 * thresholds rise as pages used alike cross into a new bin together, and
 * the entries queued just before would otherwise ask demotion for room
 * that promotion then does not take.
 */
#define HTMM_CAND_SIZE		16384
#define HTMM_REBIN_GAP		HZ
#define HTMM_STRONG_BINS	1
#define HTMM_CAND_SHIFT		7
#define HTMM_CAND_STRONG	(1UL << (HTMM_CAND_SHIFT - 1))
#define HTMM_CAND_FILL		(1UL << (HTMM_CAND_SHIFT - 2))
#define HTMM_CAND_HOT		BIT(HTMM_CAND_SHIFT)	/* not stored */
#define HTMM_CAND_KIND		(HTMM_CAND_STRONG | HTMM_CAND_FILL)
#define HTMM_CAND_ENTRY(pfn, order)	(((pfn) << HTMM_CAND_SHIFT) | (order))
#define HTMM_CAND_PFN(e)	((e) >> HTMM_CAND_SHIFT)
#define HTMM_CAND_ORDER(e)	((e) & (HTMM_CAND_FILL - 1))
/* Sampled huge pages since the last split round: PFNs, under hm->lock. */
#define HTMM_THP_RING		4096
/*
 * Most queue or ring entries handled per hold of hm->lock, which is taken
 * with interrupts off: each may cost a page_ext lookup.
 */
#define HTMM_LOCKED_BATCH	64
/* Skew classes: 0 (unknown or uniform) to log2(HPAGE_PMD_NR) + 1. */
#define HTMM_NR_SKEW		16

/* A cgroup's split rounds (split.c), under htmm_memcg.lock. */
struct htmm_split_ctl {
	unsigned long *ring;		/* HTMM_THP_RING PFNs, or NULL */
	unsigned int head;		/* oldest entry of the ring */
	unsigned int len;		/* entries on the ring */
	bool due;			/* a cooling asks for a split round */
	bool stopped;			/* the last round gained nothing */
	u32 last_share;			/* hit share before the last round */
	u64 last_nr;			/* huge pages it split for the gap */
	int stop_gap;			/* hit share gap when it stopped */
	unsigned int pause;		/* rounds until it tries again */
};

/* What a cgroup's split rounds saw and did, under htmm_memcg.lock. */
struct htmm_split_stats {
	u32 now_share;			/* hit share at the last round */
	u32 split_share;		/* ... as if every huge page split */
	u64 last_skewed;		/* splittable huge pages seen */
	u64 last_wanted;		/* huge pages the round chose */
	u64 rounds;
	u64 requested;
	u64 done;
	u64 failed;
	u64 for_room;			/* ... of them to free a full node */
	u64 skew[HTMM_NR_SKEW];		/* huge pages seen in the last round */
};

/*
 * Per memory cgroup state, hanging off mem_cgroup->htmm.  It is allocated
 * with the memcg and freed with it, so it is valid wherever the memcg is.
 */
struct htmm_memcg {
	/* Written under htmm_lock, read locklessly with READ_ONCE(). */
	bool enabled;
	atomic_long_t nr_alloc_redirected;
	atomic_long_t nr_alloc_over_limit;

	/*
	 * Protects the histograms, the epoch, the thresholds, the sample
	 * counters below and the htmm_meta of every page accounted here.
	 * Taken with interrupts off (folios may be freed from any context).
	 */
	spinlock_t lock;
	struct htmm_hist hist;		/* one entry per folio */
	struct htmm_hist hist_split;	/* one entry per 4 KiB page */
	u32 epoch;			/* from HTMM_EPOCH_INITIAL, wrapping */
	unsigned int hot, warm;		/* current thresholds */
	unsigned int fill;		/* fill bin (htmm_thresholds()) */
	u64 capacity;			/* fast-tier pages used for them */
	u64 samples_since_adapt;
	u64 samples_since_cool;
	unsigned long usage_at_cool;	/* memory.current at last cooling */
	u64 nr_samples[HTMM_NR_KINDS];
	u64 nr_samples_src[HTMM_NR_SOURCES];
	u64 nr_unaccounted;		/* inconsistencies repaired */
	unsigned long *cand;		/* HTMM_CAND_SIZE PFNs, or NULL */
	u8 *cand_bin;			/* HTMM_CAND_SIZE bins */
	unsigned int cand_head;		/* next to pop */
	unsigned int cand_len;		/* entries queued */
	struct htmm_hist cand_room;	/* pages of the queued hot folios */
	struct htmm_hist cand_strong;	/* ... of those queued strong */
	struct htmm_hist cand_fill;	/* pages of the queued fill folios */
	/*
	 * Entries may count in the wrong class.  Written under lock, with
	 * WRITE_ONCE(); htmm_cand_rebin() peeks at it first without the lock.
	 */
	bool cand_rebin;
	unsigned long cand_rebin_at;	/* jiffies: the last htmm_cand_rebin() */
	u64 nr_cand_dropped;		/* ring full */
	u64 nr_promoted;		/* pages */
	u64 nr_demoted;
	u64 nr_migrate_failed;
	u64 nr_skipped[HTMM_NR_SKIPS];
	u64 nr_demote_seen;		/* pages demotion walks looked at */
	struct htmm_split_ctl split;
	struct htmm_split_stats split_stat;
	struct htmm_ccow_stat ccow;	/* atomic, no lock */

	/*
	 * Enabled with no enabled ancestor: its budgets count in the
	 * overcommit of each node (htmm_recount_tops()).  Written under
	 * htmm_lock and htmm_list_lock, read locklessly.
	 */
	bool top;

	/* On htmm_enabled_list while enabled; under htmm_list_lock. */
	struct list_head node;
	struct mem_cgroup *memcg;	/* back pointer, fixed */
	/*
	 * Fast-tier budget: the most pages of this cgroup that may reside
	 * on each node, indexed by node id (nr_node_ids entries).
	 * PAGE_COUNTER_MAX means no limit.  Written under htmm_lock with
	 * WRITE_ONCE(), read locklessly with READ_ONCE().
	 */
	unsigned long max_nr_pages[];
};

/* Serialises enabling and disabling htmm and changes of cgroup limits. */
extern struct mutex htmm_lock;

static inline struct htmm_memcg *htmm_memcg(struct mem_cgroup *memcg)
{
	return memcg->htmm;
}

int htmm_memcg_set_enabled(struct mem_cgroup *memcg, bool enable,
			   bool may_start);
bool htmm_path_enabled(struct mem_cgroup *memcg);

#ifdef CONFIG_HTMM_CCOW
void htmm_ccow_stat(struct mem_cgroup *memcg, struct seq_file *m);
int htmm_ccow_enabled_changed(void);
#else
static inline void htmm_ccow_stat(struct mem_cgroup *memcg,
				  struct seq_file *m)
{
}
#endif

/* core.c: htmm=on on the kernel command line; set before page_ext init. */
extern bool htmm_boot_on;

/* Is htmm usable: booted with htmm=on, so pages have their records? */
static inline bool htmm_available(void)
{
	return htmm_boot_on;
}

const char *htmm_state(void);

extern unsigned int htmm_nr_enabled;

/*
 * Has any cgroup htmm enabled now?  htmm_active_key stays on once htmm
 * was used (see core.c), so the hooks behind it test this first.
 */
static inline bool htmm_in_use(void)
{
	return READ_ONCE(htmm_nr_enabled) != 0;
}

/*
 * Cooling epochs start close to the wrap, like jiffies, so that every test
 * that cools crosses it: an epoch comparison that is not wrap-safe fails
 * at once instead of after 2^32 coolings.  What users see counts from 0.
 */
#define HTMM_EPOCH_INITIAL	((u32)-1)

static inline u32 htmm_coolings(const struct htmm_memcg *hm)
{
	return hm->epoch - HTMM_EPOCH_INITIAL;
}

/* Is @bin at or above the cgroup's hot threshold?  Under hm->lock. */
static inline bool htmm_bin_hot(const struct htmm_memcg *hm, unsigned int bin)
{
	return hm->hot != HTMM_BIN_NONE && bin >= hm->hot;
}

/* The split-histogram bin of a page accounted in @hm; under hm->lock. */
static inline unsigned int htmm_meta_bin(const struct htmm_memcg *hm,
					 const struct htmm_meta *m)
{
	return htmm_bin_cool(m->bin, htmm_epoch_delta(hm->epoch, m->epoch));
}

/* The histogram bin of a large folio, from its head; under hm->lock. */
static inline unsigned int htmm_meta_hbin(const struct htmm_memcg *hm,
					  const struct htmm_meta *h)
{
	return htmm_bin_cool(h->hbin, htmm_epoch_delta(hm->epoch, h->hepoch));
}

int htmm_parse_uint(const char *buf, unsigned int min, unsigned int max,
		    unsigned int *res);
bool htmm_room_lacks(long room, unsigned long nr);
bool htmm_budget_binds(struct mem_cgroup *pos, struct mem_cgroup *memcg,
		       int nid, bool self);
long htmm_budget_left(struct mem_cgroup *pos, int nid, unsigned int permille);
void htmm_path_flush(struct mem_cgroup *memcg, int nid, bool self);
unsigned long htmm_path_budget(struct mem_cgroup *memcg, int nid);
void htmm_recount_tops(void);
long htmm_path_room(struct mem_cgroup *memcg, int nid, unsigned int permille,
		    bool self, bool flush);
int htmm_pick_node(int nid, gfp_t gfp,
		   bool (*full)(int nid, void *arg), void *arg);
unsigned long htmm_memcg_node_pages(struct mem_cgroup *memcg, int nid,
				    bool flush);

int __init htmm_sysfs_init(void);
int __init htmm_memcg_init(void);

/* meta.c: per-page metadata and sample accounting */
void htmm_memcg_state_init(struct htmm_memcg *hm);
int htmm_ingest_page(struct page *page, enum htmm_kind kind,
		     enum htmm_source src);
int htmm_ingest_pmd(struct page *page, enum htmm_source src);
int htmm_ingest_vaddr(pid_t pid, unsigned long vaddr, enum htmm_kind kind,
		      enum htmm_source src);
struct page *htmm_get_user_page(pid_t pid, unsigned long vaddr);

struct htmm_page_info {
	u32 count;		/* samples on the 4 KiB page */
	u32 folio_count;	/* samples on its folio */
	unsigned int bin;	/* bin of the page (split histogram) */
	unsigned int folio_bin;	/* bin of the folio (histogram) */
	unsigned int nr_pages;	/* pages in the folio */
	unsigned int epoch;	/* the cgroup's cooling epoch */
	bool hot;		/* folio at or above the hot threshold */
	bool fill;		/* ... or at least in the fill bin */
	bool sampled;		/* the folio has htmm metadata */
	unsigned int hot_bin;	/* the cgroup's hot threshold */
	unsigned int warm_bin;	/* the cgroup's warm threshold */
	unsigned int fill_bin;	/* the cgroup's fill bin */
	unsigned int flags;	/* HTMM_META_* of the folio */
	unsigned int mbin;	/* folio bin when htmm last moved it */
	unsigned int moved_ms;	/* since then (if a flag says it moved) */
};

int htmm_page_info(struct page *page, struct htmm_page_info *info);
int htmm_folio_mark(struct folio *folio, struct mem_cgroup *memcg,
		    unsigned int set, unsigned int clear);
void htmm_folio_queue(struct folio *folio, struct mem_cgroup *memcg);
void htmm_folio_split_again(struct folio *folio, struct mem_cgroup *memcg);
bool htmm_cand_take_locked(struct htmm_memcg *hm, struct mem_cgroup *memcg,
			   unsigned long *pfn);
u64 htmm_cand_waiting(struct htmm_memcg *hm, u64 *strong, u64 *fill);
void htmm_cand_rebin(struct mem_cgroup *memcg);
bool htmm_cand_head_live_locked(struct htmm_memcg *hm,
				struct mem_cgroup *memcg);
unsigned int htmm_pfn_clear_flag_locked(struct htmm_memcg *hm,
					struct mem_cgroup *memcg,
					unsigned long pfn, unsigned int flag);
int htmm_folio_skew(struct folio *folio, struct mem_cgroup *memcg);
void htmm_memcg_adapt(struct mem_cgroup *memcg);
void htmm_adapt_all(void);
void htmm_memcg_refresh(struct mem_cgroup *memcg);
void htmm_memcg_stat(struct mem_cgroup *memcg, struct seq_file *m);
struct htmm_meta *htmm_meta_get(struct page *page, struct page_ext **ext);
bool htmm_node_is_fast(int nid);
u64 htmm_wmark_pages(u64 budget, unsigned int permille);

/* migrate.c: kmigraterd */
int htmm_migrate_start(void);
void htmm_migrate_stop(void);
void htmm_migrate_wake(void);
int htmm_memcg_cand_alloc(struct mem_cgroup *memcg);
void htmm_migrate_stat(struct htmm_memcg *hm, struct seq_file *m);
void htmm_seq_bin(struct seq_file *m, const char *key, unsigned int bin);
struct folio *htmm_get_folio(unsigned long pfn);
bool htmm_folio_in(struct folio *folio, struct mem_cgroup *memcg);
enum htmm_skip htmm_isolate(struct folio *folio, struct list_head *list);
void htmm_count_skip(struct htmm_memcg *hm, enum htmm_skip why, long nr);
unsigned long htmm_promote_room(struct mem_cgroup *memcg, int nid, bool flush);
void htmm_note_parked(void);
unsigned long htmm_migrate_list(struct mem_cgroup *memcg,
				struct list_head *list, int src_nid, int nid,
				nodemask_t *allowed, bool up);

/* split.c: splitting skewed huge pages */
void htmm_split_round(struct mem_cgroup *memcg, unsigned long *tokens);
long htmm_split_for_room(struct mem_cgroup *memcg, struct folio *folio);
void htmm_split_stat(struct htmm_memcg *hm, struct seq_file *m);
void htmm_latency_from_firmware(void);

/*
 * Enabled cgroups.  Changed under htmm_lock and htmm_list_lock; walked
 * under htmm_list_lock (a spinlock, so ksamplingd can walk it while
 * htmm_lock is held by someone stopping ksamplingd).
 */
extern struct list_head htmm_enabled_list;
extern spinlock_t htmm_list_lock;

/*
 * sampler.c.  A sample on a ring: its physical address if known, its user
 * address, and a reference on the mm it belongs to (mmgrab(), released by
 * whoever takes the record off the ring, with mmdrop()).
 */
struct htmm_record {
	u64 paddr;		/* 0 if unknown */
	u64 vaddr;
	struct mm_struct *mm;	/* the sampled mm, with a reference (mmgrab) */
	u8 kind;		/* enum htmm_kind */
	u8 src;			/* enum htmm_source */
	bool before_fault;	/* sampled before its fault was handled */
};

#define HTMM_RING_SIZE	1024

/* A sample source.  Callbacks run in ksamplingd, with htmm running. */
struct htmm_source_ops {
	const char *name;
	int (*start)(unsigned int period, unsigned int inst_period);
	void (*stop)(void);
	void (*set_period)(unsigned int period, unsigned int inst_period);
	void (*tick)(void);
	/* Holds ksampled_soft_cpu_quota by itself: no quota levels. */
	bool paced;
};

extern const struct htmm_source_ops htmm_perf_source;
extern const struct htmm_source_ops htmm_abit_source;
extern const struct htmm_source_ops htmm_null_source;

bool htmm_ring_push(const struct htmm_record *rec);
struct page *htmm_mm_get_page(struct mm_struct *mm, unsigned long vaddr,
			      bool fault);
bool htmm_mm_wait_migration(struct mm_struct *mm, unsigned long vaddr);
int htmm_sampler_check(void);
unsigned int htmm_period_at(unsigned int base, unsigned int level);
void htmm_quota_window(void);
int htmm_sampler_start(void);
void htmm_sampler_stop(void);
void htmm_sampler_stat(struct seq_file *m);
void htmm_rings_show(struct seq_file *m);
void __init htmm_sampler_init_rings(void);
void htmm_sampler_periods_changed(void);
int htmm_sampler_restart(void);

/* src_abit.c */
void htmm_abit_stat(struct seq_file *m);

/* src_perf.c */
bool htmm_perf_supported(void);
const char *htmm_perf_unsupported_reason(void);
int htmm_perf_nr_counters(void);

/* inject.c */
#ifdef CONFIG_HTMM_DEBUG
int __init htmm_debugfs_init(void);
#else
static inline int htmm_debugfs_init(void)
{
	return 0;
}
#endif

#endif /* _MM_HTMM_INTERNAL_H */
