/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * htmm: hugepage-aware tiered memory management.
 *
 * This header holds the thin hooks that core mm code calls.  The logic
 * lives in mm/htmm/.  Every hook is a no-op unless at least one memory
 * cgroup has htmm enabled, which is tracked by a static key.
 */
#ifndef _LINUX_HTMM_H
#define _LINUX_HTMM_H

#include <linux/gfp_types.h>
#include <linux/jump_label.h>
#include <linux/mm_types.h>
#include <linux/types.h>

struct folio;
struct htmm_memcg;
struct mem_cgroup;
struct mm_struct;
struct page;
struct page_ext_operations;
struct vm_fault;

#ifdef CONFIG_HTMM_CCOW
/* On from the first time htmm_ccow_enabled is not "never" (ccow.c). */
DECLARE_STATIC_KEY_FALSE(htmm_ccow_key);

void __htmm_ccow_fault(struct vm_fault *vmf);
bool __htmm_ccow_huge_fault(struct vm_fault *vmf);
void __htmm_ccow_reuse(struct page *page);
void __htmm_ccow_zap(struct folio *folio, pte_t ptent);
void __htmm_ccow_uncharge(struct folio *folio, struct mem_cgroup *memcg);
void __htmm_ccow_migrate(struct folio *old, struct folio *new);

/**
 * htmm_ccow_fault - A copy-on-write fault is done: CCoW may copy more.
 * @vmf: The fault.
 * @ret: What wp_page_copy() returned; 0 if it copied the page.
 *
 * Context: The mmap_lock or the VMA lock is held; may sleep.
 */
static inline void htmm_ccow_fault(struct vm_fault *vmf, vm_fault_t ret)
{
	if (static_branch_unlikely(&htmm_ccow_key) && !ret)
		__htmm_ccow_fault(vmf);
}

/**
 * htmm_ccow_huge_fault - A CoW fault on a shared huge page: copy it whole?
 * @vmf: The fault; no page table lock is held.
 *
 * Context: The mmap_lock or the VMA lock is held; may sleep.
 * Return: true if the fault is done (the caller returns 0), false if the
 * caller splits the PMD as usual.
 */
static inline bool htmm_ccow_huge_fault(struct vm_fault *vmf)
{
	return static_branch_unlikely(&htmm_ccow_key) &&
	       __htmm_ccow_huge_fault(vmf);
}

/**
 * htmm_ccow_reuse - A write fault reuses an exclusive anonymous page.
 * @page: The page.
 *
 * Context: Under the page table lock.
 */
static inline void htmm_ccow_reuse(struct page *page)
{
	if (static_branch_unlikely(&htmm_ccow_key))
		__htmm_ccow_reuse(page);
}

/**
 * htmm_ccow_zap - An anonymous folio is unmapped: was it a pre-copy, written?
 * @folio: The folio.
 * @ptent: The PTE that mapped it.
 *
 * Context: Under the page table lock.
 */
static inline void htmm_ccow_zap(struct folio *folio, pte_t ptent)
{
	if (static_branch_unlikely(&htmm_ccow_key))
		__htmm_ccow_zap(folio, ptent);
}
#else
static inline void htmm_ccow_fault(struct vm_fault *vmf, vm_fault_t ret)
{
}

static inline bool htmm_ccow_huge_fault(struct vm_fault *vmf)
{
	return false;
}

static inline void htmm_ccow_reuse(struct page *page)
{
}

static inline void htmm_ccow_zap(struct folio *folio, pte_t ptent)
{
}
#endif /* CONFIG_HTMM_CCOW */

/**
 * struct htmm_collapse - What khugepaged learns about a range from htmm.
 * @n: Samples on the range's pages.
 * @sumsq: Sum of the squares of the pages' sample counts.
 * @split: Some page of the range is part of a huge page that htmm split.
 * @recent: One of them was split less than htmm_split_cooldown_ms ago.
 */
struct htmm_collapse {
	u64 n;
	u64 sumsq;
	bool split;
	bool recent;
};

#ifdef CONFIG_HTMM

/* On from the first enable; the hooks then test htmm_in_use() (core.c). */
DECLARE_STATIC_KEY_FALSE(htmm_active_key);
/* On from the first enable: pages may carry htmm metadata from then on. */
DECLARE_STATIC_KEY_FALSE(htmm_meta_key);

extern struct page_ext_operations htmm_page_ext_ops;

void htmm_uncharge_folio(struct folio *folio, struct mem_cgroup *memcg);
void htmm_migrate_folio(struct folio *old, struct folio *new,
			struct mem_cgroup *memcg);
void htmm_split_folio(struct folio *folio, unsigned int new_order);
void __htmm_collapse_note(struct htmm_collapse *hc, struct page *page);
bool __htmm_collapse_allowed(const struct htmm_collapse *hc);

/**
 * htmm_collapse_note - khugepaged looks at a page of a range to collapse.
 * @hc: The range's state, zeroed before the first page.
 * @page: The page.
 *
 * Context: Under the page table lock.
 */
static inline void htmm_collapse_note(struct htmm_collapse *hc,
				      struct page *page)
{
	if (static_branch_unlikely(&htmm_meta_key))
		__htmm_collapse_note(hc, page);
}

/**
 * htmm_collapse_allowed - May khugepaged collapse the range?
 * @hc: What htmm_collapse_note() gathered for every page of the range.
 *
 * A range that htmm split stays split during htmm_split_cooldown_ms,
 * unless its accesses now look uniform, and after it while its samples
 * still show it skewed.
 *
 * Return: true if htmm has no objection.
 */
static inline bool htmm_collapse_allowed(const struct htmm_collapse *hc)
{
	return !hc->split || __htmm_collapse_allowed(hc);
}

/**
 * htmm_uncharge - A folio is uncharged (freed): drop its access metadata.
 * @folio: The folio.
 * @memcg: The cgroup it was charged to.
 *
 * Context: Any context.
 */
static inline void htmm_uncharge(struct folio *folio, struct mem_cgroup *memcg)
{
	if (static_branch_unlikely(&htmm_meta_key))
		htmm_uncharge_folio(folio, memcg);
#ifdef CONFIG_HTMM_CCOW
	if (static_branch_unlikely(&htmm_ccow_key))
		__htmm_ccow_uncharge(folio, memcg);
#endif
}

/**
 * htmm_migrate - A folio's charge moved to its migration target.
 * @old: The source folio.
 * @new: The target folio.
 * @memcg: The cgroup.
 *
 * Moves the access metadata along with the data.
 *
 * Context: Process context; both folios are locked.
 */
static inline void htmm_migrate(struct folio *old, struct folio *new,
				struct mem_cgroup *memcg)
{
	if (static_branch_unlikely(&htmm_meta_key))
		htmm_migrate_folio(old, new, memcg);
#ifdef CONFIG_HTMM_CCOW
	if (static_branch_unlikely(&htmm_ccow_key))
		__htmm_ccow_migrate(old, new);
#endif
}

/**
 * htmm_split - A large folio is about to be split.
 * @folio: The folio, locked with its refcount frozen.
 * @new_order: The order of the pieces.
 *
 * Hands the per-page access counts to the new folios.
 */
static inline void htmm_split(struct folio *folio, unsigned int new_order)
{
	if (static_branch_unlikely(&htmm_meta_key))
		htmm_split_folio(folio, new_order);
}

int __htmm_alloc_node(struct mm_struct *mm, gfp_t gfp, unsigned int order,
		      int nid);

/**
 * htmm_alloc_node - Apply memory.max_at_node<N> to a user page allocation.
 * @mm: The address space the folio will be mapped into (and charged to).
 * @gfp: GFP flags of the allocation.
 * @order: Order of the folio.
 * @nid: The node the allocation would prefer.
 *
 * Called for allocations that follow the default (local) memory policy.
 * If the cgroup of @mm or one of its ancestors has htmm enabled and its
 * subtree's resident pages on @nid already reached its limit there,
 * return the first node in demotion and then fallback order that is still
 * under the limits of the whole path.  A huge page allocated without
 * direct reclaim also goes on when @nid has no room for it above its low
 * watermark: there it would fail, and the fault would fall back to base
 * pages on the next node.  If every node is full, @nid is returned: the
 * limit never fails an allocation.
 *
 * Context: Process context; the caller holds the mmap_lock of @mm.
 * Return: The node to prefer for the allocation.
 */
static inline int htmm_alloc_node(struct mm_struct *mm, gfp_t gfp,
				  unsigned int order, int nid)
{
	if (static_branch_unlikely(&htmm_active_key))
		return __htmm_alloc_node(mm, gfp, order, nid);
	return nid;
}

int __htmm_numa_target(struct folio *folio, int curnid, int nid);

/**
 * htmm_numa_target - May NUMA balancing move a folio across tiers?
 * @folio: The folio of a NUMA hinting fault.
 * @curnid: The node it is on.
 * @nid: The node NUMA balancing would move it to.
 *
 * htmm places the pages of its cgroups between the fast and the slow
 * tiers; NUMA balancing still moves them within a tier.
 *
 * Context: Under the page table lock of the fault.
 * Return: @nid, or NUMA_NO_NODE to leave the folio where it is.
 */
static inline int htmm_numa_target(struct folio *folio, int curnid, int nid)
{
	if (static_branch_unlikely(&htmm_active_key))
		return __htmm_numa_target(folio, curnid, nid);
	return nid;
}

int htmm_memcg_alloc(struct mem_cgroup *memcg);
void htmm_memcg_free(struct mem_cgroup *memcg);
void htmm_memcg_offline(struct mem_cgroup *memcg);

#else /* !CONFIG_HTMM */

static inline int htmm_numa_target(struct folio *folio, int curnid, int nid)
{
	return nid;
}

static inline int htmm_alloc_node(struct mm_struct *mm, gfp_t gfp,
				  unsigned int order, int nid)
{
	return nid;
}

static inline int htmm_memcg_alloc(struct mem_cgroup *memcg)
{
	return 0;
}

static inline void htmm_memcg_free(struct mem_cgroup *memcg)
{
}

static inline void htmm_memcg_offline(struct mem_cgroup *memcg)
{
}

static inline void htmm_uncharge(struct folio *folio, struct mem_cgroup *memcg)
{
}

static inline void htmm_migrate(struct folio *old, struct folio *new,
				struct mem_cgroup *memcg)
{
}

static inline void htmm_split(struct folio *folio, unsigned int new_order)
{
}

static inline void htmm_collapse_note(struct htmm_collapse *hc,
				      struct page *page)
{
}

static inline bool htmm_collapse_allowed(const struct htmm_collapse *hc)
{
	return true;
}

#endif /* CONFIG_HTMM */
#endif /* _LINUX_HTMM_H */
