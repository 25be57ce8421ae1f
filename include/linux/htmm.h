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
#include <linux/types.h>

struct htmm_memcg;
struct mem_cgroup;
struct mm_struct;

#ifdef CONFIG_HTMM

DECLARE_STATIC_KEY_FALSE(htmm_active_key);

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
 * If @mm belongs to an htmm-enabled cgroup whose resident pages on @nid
 * already reached that node's limit, return the first node in demotion
 * and then fallback order that is still under its limit.  If every node
 * is at its limit, @nid is returned: the limit never fails an allocation.
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

int htmm_memcg_alloc(struct mem_cgroup *memcg);
void htmm_memcg_free(struct mem_cgroup *memcg);
void htmm_memcg_offline(struct mem_cgroup *memcg);

#else /* !CONFIG_HTMM */

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

#endif /* CONFIG_HTMM */
#endif /* _LINUX_HTMM_H */
