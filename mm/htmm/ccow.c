// SPDX-License-Identifier: GPL-2.0-only
/*
 * CCoW: coverage-based copy-on-write.
 *
 * After fork(), every write to a shared anonymous page takes a fault and
 * copies one base page.  A region that a process writes densely is so
 * copied one fault at a time.  CCoW divides each anonymous VMA into
 * aligned regions of htmm_ccow_region_kb and, on a copy-on-write fault,
 * looks at the region's coverage: the share of its mapped pages that this
 * mm has written since they were shared.  Once the coverage reaches
 * htmm_ccow_threshold per cent (0: at the first fault), the fault copies
 * every page of the region that is still shared, at most
 * htmm_ccow_max_sync_kb of them; a worker copies the rest.
 *
 * Written, not pre-copied.  A pre-copy maps the new page writable and
 * clean, exclusive to the mm (PageAnonExclusive), as MADV_FREE leaves
 * pages, and marks it in page_ext (PAGE_EXT_HTMM_PRECOPY).  Its first
 * write takes no fault: the MMU makes the PTE dirty (or, where the
 * architecture does that in software, the fault handler does).  Coverage
 * counts the exclusive pages whose PTE is dirty, so a pre-copy never
 * counts until it is really written.  When the page is unmapped with a
 * dirty PTE, the mark is cleared (htmm_ccow_zap()); a pre-copied page
 * freed with its mark still set is the paper's unnecessary pre-copy
 * (htmm_ccow_uncharge()).  Soft-dirty tracking needs a fault on the first
 * write: in a VMA under soft-dirty tracking, a pre-copy is mapped
 * read-only instead, with the soft-dirty bit of the PTE it replaces, and
 * the first write takes a cheap reuse fault, no copy, that sets the
 * soft-dirty bit and clears the mark (htmm_ccow_reuse()).
 *
 * Left alone: shared and non-anonymous VMAs, mlocked VMAs, VMAs under
 * userfaultfd write protection, KSM pages, the zero page, pages that
 * only this mm maps (the fault reuses them without a copy), and pages
 * maybe pinned by GUP (fork() already copied those).
 *
 * A pre-copy allocates with the memory policy of the VMA, so
 * memory.max_at_node<N> applies as to any allocation of the cgroup, and is
 * charged to the mm's cgroup without reclaim: a pre-copy that cannot be
 * had at once is skipped (htmm_ccow_precopy_failed), and never causes
 * reclaim or compaction.  Nor does it take the last of a cgroup's room:
 * a batch is copied only while every cgroup on the mm's path keeps
 * ccow_reserve() pages below its memory.high and memory.max after it, so
 * that the writes that must copy still find room.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/highmem.h>
#include <linux/huge_mm.h>
#include <linux/hugetlb.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/page_ext.h>
#include <linux/rmap.h>
#include <linux/seq_file.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/userfaultfd_k.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>
#include <asm/tlbflush.h>

#include "../internal.h"
#include "internal.h"

DEFINE_STATIC_KEY_FALSE(htmm_ccow_key);

/* Pages copied in one pass: the candidates are gathered this many at a time. */
#define CCOW_BATCH		64
/* Region copies the workers may have queued at once. */
#define CCOW_MAX_WORK		64
/* No reclaim or compaction for a pre-copy, and no warning when it fails. */
#define CCOW_GFP	((GFP_HIGHUSER_MOVABLE & ~__GFP_DIRECT_RECLAIM) | \
			 __GFP_NOWARN | __GFP_NORETRY)

/* A huge copy in the fault: no reclaim, no compaction, no kswapd. */
#define CCOW_HUGE_GFP	(GFP_TRANSHUGE_LIGHT | __GFP_NORETRY)

/* One page to pre-copy: found under the PTL, copied outside it. */
struct ccow_cand {
	unsigned long addr;
	pte_t orig;		/* the PTE when it was found */
	struct page *page;	/* the shared page */
	struct folio *old;	/* its folio, referenced */
	struct folio *new;	/* the copy, charged; NULL if none */
	bool mapped;		/* the copy replaced the page */
};

/* The pages of a region this pass still has to look at. */
struct ccow_range {
	unsigned long start, end;
};

static atomic_t ccow_nr_work = ATOMIC_INIT(0);

static void ccow_count(struct mm_struct *mm, enum vm_event_item item,
		       unsigned long nr)
{
	struct mem_cgroup *memcg;
	struct htmm_ccow_stat *st;

	if (!nr)
		return;
	count_vm_events(item, nr);
	memcg = get_mem_cgroup_from_mm(mm);
	if (!memcg)
		return;
	st = &htmm_memcg(memcg)->ccow;
	atomic_long_add(nr, &st->nr[item - HTMM_CCOW_FAULT]);
	mem_cgroup_put(memcg);
}

/* Does CCoW act on the VMA at all? */
static bool ccow_vma_ok(struct vm_area_struct *vma)
{
	if (!vma_is_anonymous(vma) || !(vma->vm_flags & VM_WRITE))
		return false;
	if (vma->vm_flags & (VM_SHARED | VM_MAYSHARE | VM_LOCKED | VM_HUGETLB |
			     VM_PFNMAP | VM_MIXEDMAP | VM_SHADOW_STACK))
		return false;
	return !userfaultfd_wp(vma);
}

/* Is CCoW on for the mm, as htmm_ccow_enabled says? */
static bool ccow_mm_on(struct mm_struct *mm)
{
	struct mem_cgroup *memcg;
	bool on;

	switch (READ_ONCE(htmm_params.ccow_enabled)) {
	case HTMM_CCOW_ALWAYS:
		return true;
	case HTMM_CCOW_HTMM:
		memcg = get_mem_cgroup_from_mm(mm);
		if (!memcg)
			return false;
		on = htmm_path_enabled(memcg);
		mem_cgroup_put(memcg);
		return on;
	default:
		return false;
	}
}

/* The region around @addr, within @vma. */
static struct ccow_range ccow_region(struct vm_area_struct *vma,
				     unsigned long addr)
{
	unsigned long size = (unsigned long)READ_ONCE(htmm_params.ccow_region_kb) << 10;
	struct ccow_range r;

	r.start = max(ALIGN_DOWN(addr, size), vma->vm_start);
	r.end = min(ALIGN_DOWN(addr, size) + size, vma->vm_end);
	return r;
}

/*
 * Is @r a whole PMD-aligned range of @vma that a region copy should turn
 * into one huge page?  Only if htmm_ccow_huge is on and the VMA may have
 * huge pages as the THP settings stand.
 */
static bool ccow_huge_region(struct vm_area_struct *vma, struct ccow_range r)
{
	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) ||
	    !READ_ONCE(htmm_params.ccow_huge))
		return false;
	if (r.end - r.start != PMD_SIZE || !IS_ALIGNED(r.start, PMD_SIZE) ||
	    r.start < vma->vm_start || r.end > vma->vm_end)
		return false;
	return thp_vma_allowable_order(vma, vma->vm_flags, TVA_ENFORCE_SYSFS,
				       PMD_ORDER);
}

/*
 * The shared page that a pre-copy may replace, or NULL: @ptent maps it
 * read-only in @vma, anonymous, not exclusive, mapped elsewhere too.
 */
static struct page *ccow_shared_page(struct vm_area_struct *vma,
				     unsigned long addr, pte_t ptent)
{
	struct folio *folio;
	struct page *page;

	if (!pte_present(ptent) || pte_write(ptent) || pte_uffd_wp(ptent))
		return NULL;
	page = vm_normal_page(vma, addr, ptent);
	if (!page)
		return NULL;
	folio = page_folio(page);
	if (!folio_test_anon(folio) || folio_test_ksm(folio) ||
	    PageAnonExclusive(page) || folio_maybe_dma_pinned(folio))
		return NULL;
	if (folio_mapcount(folio) < 2)
		return NULL;
	return page;
}

/**
 * ccow_covered - Has the mm written enough of the region?
 * @vma: The VMA.
 * @pmd: The PMD that maps the region.
 * @r: The region.
 * @threshold: Per cent of its mapped pages that must be written.
 *
 * Looks at the PTEs alone, as it runs at every copy-on-write fault: a
 * page written since it was shared is mapped writable and dirty (copied,
 * reused, or a pre-copy written since), a page still shared read-only.
 * ccow_gather() checks each page it copies for itself.
 *
 * Context: The mmap_lock or the VMA lock is held.
 * Return: The pages of the region mapped read-only, if the written pages
 * reach @threshold per cent of the mapped ones; 0 otherwise.
 */
static unsigned long ccow_covered(struct vm_area_struct *vma, pmd_t *pmd,
				  struct ccow_range r, unsigned int threshold)
{
	unsigned long addr, mapped = 0, written = 0, shared = 0;
	pte_t *start_pte, *pte;
	spinlock_t *ptl;	/* the page table lock */

	start_pte = pte_offset_map_lock(vma->vm_mm, pmd, r.start, &ptl);
	if (!start_pte)
		return 0;
	for (addr = r.start, pte = start_pte; addr < r.end;
	     addr += PAGE_SIZE, pte++) {
		pte_t ptent = ptep_get(pte);

		if (!pte_present(ptent))
			continue;
		mapped++;
		if (!pte_write(ptent))
			shared++;
		else if (pte_dirty(ptent))
			written++;
	}
	pte_unmap_unlock(start_pte, ptl);
	if (written * 100 < (unsigned long)threshold * mapped)
		return 0;
	return shared;
}

/*
 * Gather up to CCOW_BATCH shared pages of @r, from r->start on, each with
 * a reference on its folio; r->start moves past the last one looked at.
 */
static int ccow_gather(struct vm_area_struct *vma, pmd_t *pmd,
		       struct ccow_range *r, struct ccow_cand *c)
{
	pte_t *start_pte, *pte;
	spinlock_t *ptl;	/* the page table lock */
	int n = 0;

	start_pte = pte_offset_map_lock(vma->vm_mm, pmd, r->start, &ptl);
	if (!start_pte) {
		r->start = r->end;
		return 0;
	}
	for (pte = start_pte; r->start < r->end && n < CCOW_BATCH;
	     r->start += PAGE_SIZE, pte++) {
		pte_t ptent = ptep_get(pte);
		struct page *page;

		page = ccow_shared_page(vma, r->start, ptent);
		if (!page || !folio_try_get(page_folio(page)))
			continue;
		c[n].addr = r->start;
		c[n].orig = ptent;
		c[n].page = page;
		c[n].old = page_folio(page);
		c[n].new = NULL;
		c[n].mapped = false;
		n++;
	}
	pte_unmap_unlock(start_pte, ptl);
	return n;
}

/* Room a cgroup keeps for the copies writes need: 2 MiB, or 1/32 of it. */
static unsigned long ccow_reserve(unsigned long limit)
{
	return max_t(unsigned long, SZ_2M >> PAGE_SHIFT, limit / 32);
}

/* May @nr more pages be charged to the cgroup of @mm for pre-copies? */
static bool ccow_room(struct mm_struct *mm, unsigned long nr)
{
	struct mem_cgroup *memcg, *pos;
	unsigned long used, limit;
	bool room = true;

	if (mem_cgroup_disabled())
		return true;
	memcg = get_mem_cgroup_from_mm(mm);
	if (!memcg)
		return true;
	for (pos = memcg; pos && room; pos = parent_mem_cgroup(pos)) {
		if (mem_cgroup_is_root(pos))
			break;
		used = page_counter_read(&pos->memory);
		limit = min(READ_ONCE(pos->memory.max),
			    READ_ONCE(pos->memory.high));
		room = used + nr + ccow_reserve(limit) <= limit;
	}
	mem_cgroup_put(memcg);
	return room;
}

/* Allocate, charge and fill the copies; returns how many failed. */
static unsigned long ccow_copy(struct vm_area_struct *vma,
			       struct ccow_cand *c, int n)
{
	unsigned long failed = 0;
	struct folio *new;
	int i;

	if (!ccow_room(vma->vm_mm, n))
		return n;
	for (i = 0; i < n; i++) {
		new = vma_alloc_folio(CCOW_GFP, 0, vma, c[i].addr, false);
		if (new && mem_cgroup_charge(new, vma->vm_mm, CCOW_GFP)) {
			folio_put(new);
			new = NULL;
		}
		if (new && copy_mc_user_highpage(&new->page, c[i].page,
						 c[i].addr, vma)) {
			folio_put(new);
			new = NULL;
		}
		if (!new) {
			failed++;
			continue;
		}
		__folio_mark_uptodate(new);
		c[i].new = new;
	}
	return failed;
}

/* Map one copy in place of the shared page; under the PTL, PTE cleared. */
static void ccow_map_one(struct vm_area_struct *vma, pte_t *pte,
			 struct ccow_cand *c)
{
	struct page_ext *ext;
	pte_t entry;

	entry = mk_pte(&c->new->page, vma->vm_page_prot);
	/*
	 * Writable and clean: the first write dirties the PTE, without a
	 * fault.  Under soft-dirty tracking, read-only, for the first write
	 * to fault and make the PTE soft-dirty.
	 */
	if (!vma_soft_dirty_enabled(vma))
		entry = maybe_mkwrite(entry, vma);
	if (pte_soft_dirty(c->orig))
		entry = pte_mksoft_dirty(entry);
	folio_add_new_anon_rmap(c->new, vma, c->addr, RMAP_EXCLUSIVE);
	folio_add_lru_vma(c->new, vma);
	set_pte_at(vma->vm_mm, c->addr, pte, entry);
	update_mmu_cache(vma, c->addr, pte);
	/* After the switch, as in wp_page_copy(). */
	folio_remove_rmap_pte(c->old, c->page, vma);
	/* The mark is cleared when the folio is uncharged: no memcg, no mark. */
	if (mem_cgroup_disabled())
		return;
	ext = page_ext_get(&c->new->page);
	if (ext) {
		set_bit(PAGE_EXT_HTMM_PRECOPY, &ext->flags);
		page_ext_put(ext);
	}
}

/*
 * Put the copies in place of the pages they copy, where the PTE has not
 * changed since; one TLB flush for all.  Returns how many were mapped
 * (c[i].mapped; the mm holds their copies now).
 */
static int ccow_install(struct vm_area_struct *vma, pmd_t *pmd,
			struct ccow_cand *c, int n)
{
	unsigned long first = c[0].addr, last = c[n - 1].addr;
	struct mm_struct *mm = vma->vm_mm;
	struct mmu_notifier_range range;
	pte_t *start_pte, *pte;
	spinlock_t *ptl;	/* the page table lock */
	int i, done = 0;

	mmu_notifier_range_init(&range, MMU_NOTIFY_CLEAR, 0, mm, first,
				last + PAGE_SIZE);
	mmu_notifier_invalidate_range_start(&range);
	start_pte = pte_offset_map_lock(mm, pmd, first, &ptl);
	if (!start_pte)
		goto out;
	/* Clear every PTE that still maps the shared page, then flush once. */
	for (i = 0; i < n; i++) {
		pte = start_pte + ((c[i].addr - first) >> PAGE_SHIFT);
		if (!c[i].new || !pte_same(ptep_get(pte), c[i].orig))
			continue;
		flush_cache_page(vma, c[i].addr, pte_pfn(c[i].orig));
		ptep_get_and_clear(mm, c[i].addr, pte);
		c[i].mapped = true;
		done++;
	}
	if (done)
		flush_tlb_range(vma, first, last + PAGE_SIZE);
	for (i = 0; i < n; i++) {
		if (!c[i].mapped)
			continue;
		ccow_map_one(vma, start_pte + ((c[i].addr - first) >> PAGE_SHIFT),
			     &c[i]);
		c[i].new = NULL;
	}
	pte_unmap_unlock(start_pte, ptl);
out:
	mmu_notifier_invalidate_range_end(&range);
	return done;
}

/* Drop what one pass holds: the unused copies and the old folios. */
static void ccow_release(struct ccow_cand *c, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (c[i].new)
			folio_put(c[i].new);
		if (c[i].mapped) {
			/* The reference of the mapping gone, as in wp_page_copy(). */
			folio_put(c[i].old);
			free_swap_cache(c[i].old);
		}
		folio_put(c[i].old);
	}
}

/**
 * ccow_copy_range - Pre-copy the shared pages of a range.
 * @vma: The VMA.
 * @pmd: The PMD that maps the range.
 * @r: The range; r->start moves on as pages are looked at.
 * @limit: Pages to copy at most.
 *
 * Context: The mmap_lock or the VMA lock is held; may sleep.
 * Return: The pages copied and mapped.
 */
static unsigned long ccow_copy_range(struct vm_area_struct *vma, pmd_t *pmd,
				     struct ccow_range *r, unsigned long limit)
{
	unsigned long copied = 0, failed = 0;
	struct ccow_cand *c;
	int n;

	c = kmalloc_array(CCOW_BATCH, sizeof(*c), GFP_KERNEL | __GFP_NOWARN);
	if (!c)
		return 0;
	while (r->start < r->end && copied < limit) {
		n = ccow_gather(vma, pmd, r, c);
		if (!n)
			continue;
		if (n > limit - copied) {
			/* Leave the rest of the batch to the next pass. */
			r->start = c[limit - copied].addr;
			ccow_release(c + (limit - copied), n - (limit - copied));
			n = limit - copied;
		}
		failed += ccow_copy(vma, c, n);
		copied += ccow_install(vma, pmd, c, n);
		ccow_release(c, n);
		cond_resched();
	}
	kfree(c);
	ccow_count(vma->vm_mm, HTMM_CCOW_PRECOPY, copied);
	ccow_count(vma->vm_mm, HTMM_CCOW_PRECOPY_FAILED, failed);
	return copied;
}

/*
 * A region copy a fault left to a worker: the rest of the region, or all
 * of it as one huge page.
 */
struct ccow_work {
	struct work_struct work;
	struct mm_struct *mm;	/* mmgrab()bed */
	struct ccow_range r;
	unsigned long shared;	/* pages still shared at the fault, if huge */
};

/*
 * Copy the region into one huge page: khugepaged's collapse copies the
 * pages still shared and those already written alike, and maps the huge
 * page with a PMD.  The worker may reclaim and compact for it, as
 * MADV_COLLAPSE does; the fault never does.  May drop and retake the
 * mmap_lock.  Returns whether the region is mapped by a PMD now.
 */
static bool ccow_collapse(struct vm_area_struct *vma, struct ccow_work *w)
{
	struct vm_area_struct *prev;

	if (!ccow_room(vma->vm_mm, HPAGE_PMD_NR))
		return false;
	if (madvise_collapse(vma, &prev, w->r.start, w->r.end))
		return false;
	ccow_count(vma->vm_mm, HTMM_CCOW_PRECOPY, w->shared);
	return true;
}

static void ccow_work_fn(struct work_struct *work)
{
	struct ccow_work *w = container_of(work, struct ccow_work, work);
	struct mm_struct *mm = w->mm;
	struct vm_area_struct *vma;
	bool done = false;
	pmd_t *pmd;

	if (!mmget_not_zero(mm))
		goto out;
	mmap_read_lock(mm);
	/* The same rules as in the fault: the VMA may have changed since. */
	vma = vma_lookup(mm, w->r.start);
	if (w->shared && vma && ccow_vma_ok(vma) && ccow_mm_on(mm) &&
	    ccow_huge_region(vma, w->r))
		done = ccow_collapse(vma, w);
	if (!done)
		vma = vma_lookup(mm, w->r.start);
	if (!done && vma && ccow_vma_ok(vma) && ccow_mm_on(mm)) {
		w->r.end = min(w->r.end, vma->vm_end);
		pmd = mm_find_pmd(mm, w->r.start);
		if (pmd)
			ccow_copy_range(vma, pmd, &w->r, ULONG_MAX);
	}
	mmap_read_unlock(mm);
	mmput(mm);
out:
	mmdrop(mm);
	kfree(w);
	atomic_dec(&ccow_nr_work);
}

/*
 * Leave the rest of a region to a worker, or all of it as a huge page if
 * @shared is not 0; dropped if too many wait.
 */
static void ccow_queue(struct mm_struct *mm, struct ccow_range r,
		       unsigned long shared)
{
	struct ccow_work *w;

	if (atomic_inc_return(&ccow_nr_work) > CCOW_MAX_WORK)
		goto drop;
	w = kmalloc(sizeof(*w), GFP_NOWAIT | __GFP_NOWARN);
	if (!w)
		goto drop;
	INIT_WORK(&w->work, ccow_work_fn);
	mmgrab(mm);
	w->mm = mm;
	w->r = r;
	w->shared = shared;
	queue_work(system_unbound_wq, &w->work);
	return;
drop:
	atomic_dec(&ccow_nr_work);
}

/**
 * __htmm_ccow_fault - A copy-on-write fault copied a page: copy its region?
 * @vmf: The fault, whose page wp_page_copy() has just copied.
 *
 * Counts the fault, and copies the shared pages of the faulting page's
 * region if the mm has written enough of it: htmm_ccow_max_sync_kb of
 * them here, the rest in a worker.  A whole PMD-aligned region that may
 * have a huge page goes to the worker at once, to be collapsed.
 *
 * Context: The mmap_lock or the VMA lock is held, no page table lock;
 * may sleep.
 */
void __htmm_ccow_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long sync, shared;
	struct ccow_range r;

	if ((vmf->flags & FAULT_FLAG_UNSHARE) || !ccow_vma_ok(vma) ||
	    !ccow_mm_on(vma->vm_mm))
		return;
	ccow_count(vma->vm_mm, HTMM_CCOW_FAULT, 1);
	r = ccow_region(vma, vmf->address);
	shared = ccow_covered(vma, vmf->pmd, r,
			      READ_ONCE(htmm_params.ccow_threshold));
	if (!shared)
		return;
	ccow_count(vma->vm_mm, HTMM_CCOW_REGION_COPY, 1);
	if (ccow_huge_region(vma, r)) {
		/* One huge page for all: copying base pages first would be lost. */
		ccow_queue(vma->vm_mm, r, shared);
		return;
	}
	sync = READ_ONCE(htmm_params.ccow_max_sync_kb) >> (PAGE_SHIFT - 10);
	ccow_copy_range(vma, vmf->pmd, &r, sync);
	if (r.start < r.end)
		ccow_queue(vma->vm_mm, r, 0);
}

/*
 * The shared huge folio that @vmf's PMD maps, referenced, if a huge copy
 * may replace it; NULL otherwise.
 */
static struct folio *ccow_huge_shared(struct vm_fault *vmf)
{
	struct folio *folio = NULL;
	struct page *page;

	spin_lock(vmf->ptl);
	if (!pmd_same(pmdp_get(vmf->pmd), vmf->orig_pmd) ||
	    !pmd_present(vmf->orig_pmd) || pmd_write(vmf->orig_pmd))
		goto out;
	page = pmd_page(vmf->orig_pmd);
	folio = page_folio(page);
	if (!folio_test_anon(folio) || folio_test_ksm(folio) ||
	    PageAnonExclusive(page) || folio_maybe_dma_pinned(folio) ||
	    folio_mapcount(folio) < 2 || !folio_try_get(folio))
		folio = NULL;
out:
	spin_unlock(vmf->ptl);
	return folio;
}

/* A new huge folio, charged, with @old's contents; NULL if none at once. */
static struct folio *ccow_huge_copy(struct vm_fault *vmf, struct folio *old)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long haddr = vmf->address & HPAGE_PMD_MASK;
	struct folio *new;

	if (!ccow_room(vma->vm_mm, HPAGE_PMD_NR))
		return NULL;
	new = vma_alloc_folio(CCOW_HUGE_GFP, HPAGE_PMD_ORDER, vma, haddr, true);
	if (!new)
		return NULL;
	if (mem_cgroup_charge(new, vma->vm_mm, CCOW_HUGE_GFP) ||
	    copy_user_large_folio(new, old, vmf->address, vma)) {
		folio_put(new);
		return NULL;
	}
	__folio_mark_uptodate(new);
	return new;
}

/* Map @new writable by PMD in place of @old, if the PMD did not change. */
static bool ccow_huge_map(struct vm_fault *vmf, struct folio *old,
			  struct folio *new)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long haddr = vmf->address & HPAGE_PMD_MASK;
	struct mmu_notifier_range range;
	bool mapped = false;
	pmd_t entry;

	mmu_notifier_range_init(&range, MMU_NOTIFY_CLEAR, 0, vma->vm_mm, haddr,
				haddr + HPAGE_PMD_SIZE);
	mmu_notifier_invalidate_range_start(&range);
	spin_lock(vmf->ptl);
	if (pmd_same(pmdp_get(vmf->pmd), vmf->orig_pmd)) {
		/* The write that faulted is done: dirty, as in wp_page_copy(). */
		entry = mk_huge_pmd(&new->page, vma->vm_page_prot);
		entry = maybe_pmd_mkwrite(pmd_mkdirty(entry), vma);
		pmdp_huge_clear_flush(vma, haddr, vmf->pmd);
		folio_add_new_anon_rmap(new, vma, haddr, RMAP_EXCLUSIVE);
		folio_add_lru_vma(new, vma);
		/* The page table deposited for the old PMD serves the new one. */
		set_pmd_at(vma->vm_mm, haddr, vmf->pmd, entry);
		update_mmu_cache_pmd(vma, vmf->address, vmf->pmd);
		folio_remove_rmap_pmd(old, &old->page, vma);
		mapped = true;
	}
	spin_unlock(vmf->ptl);
	mmu_notifier_invalidate_range_end(&range);
	return mapped;
}

/**
 * __htmm_ccow_huge_fault - Copy a shared huge page whole on a CoW fault?
 * @vmf: The write fault on a PMD that maps a huge page read-only.
 *
 * Where the region is the whole PMD, the threshold is 0 and the fault may
 * copy that much (htmm_ccow_max_sync_kb), copy the huge page into a new
 * one, taken without reclaim or compaction, and map it by PMD, instead of
 * splitting the PMD to copy one base page.
 *
 * Context: The mmap_lock or the VMA lock is held, no page table lock;
 * may sleep.
 * Return: true if the copy is mapped, or the PMD changed meanwhile (the
 * fault is retried); false if the caller splits the PMD as usual.
 */
bool __htmm_ccow_huge_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct folio *old, *new;
	struct ccow_range r;
	bool mapped;

	if ((vmf->flags & FAULT_FLAG_UNSHARE) || !ccow_vma_ok(vma) ||
	    !ccow_mm_on(vma->vm_mm) || READ_ONCE(htmm_params.ccow_threshold) ||
	    READ_ONCE(htmm_params.ccow_max_sync_kb) < (PMD_SIZE >> 10))
		return false;
	r = ccow_region(vma, vmf->address);
	if (!ccow_huge_region(vma, r))
		return false;
	old = ccow_huge_shared(vmf);
	if (!old)
		return false;
	new = ccow_huge_copy(vmf, old);
	if (!new) {
		ccow_count(vma->vm_mm, HTMM_CCOW_PRECOPY_FAILED, HPAGE_PMD_NR - 1);
		folio_put(old);
		return false;
	}
	mapped = ccow_huge_map(vmf, old, new);
	if (mapped) {
		ccow_count(vma->vm_mm, HTMM_CCOW_FAULT, 1);
		ccow_count(vma->vm_mm, HTMM_CCOW_REGION_COPY, 1);
		ccow_count(vma->vm_mm, HTMM_CCOW_PRECOPY, HPAGE_PMD_NR - 1);
		/* The mm's reference on the old folio, taken when it was mapped. */
		folio_put(old);
	} else {
		folio_put(new);
	}
	folio_put(old);
	return true;
}

/* Clear the pre-copy mark of @page: it was written. */
static void ccow_written(struct page *page)
{
	struct page_ext *ext = page_ext_get(page);

	if (!ext)
		return;
	if (test_bit(PAGE_EXT_HTMM_PRECOPY, &ext->flags))
		clear_bit(PAGE_EXT_HTMM_PRECOPY, &ext->flags);
	page_ext_put(ext);
}

/**
 * __htmm_ccow_reuse - A write fault reuses an exclusive anonymous page.
 * @page: The page; if it is a pre-copy, this is its first write.
 *
 * Context: Under the page table lock.
 */
void __htmm_ccow_reuse(struct page *page)
{
	ccow_written(page);
}

/**
 * __htmm_ccow_zap - An anonymous small folio is unmapped.
 * @folio: The folio.
 * @ptent: The PTE that mapped it; if dirty, a pre-copy was written.
 *
 * Context: Under the page table lock.
 */
void __htmm_ccow_zap(struct folio *folio, pte_t ptent)
{
	if (pte_dirty(ptent) && !folio_test_large(folio))
		ccow_written(&folio->page);
}

/**
 * __htmm_ccow_uncharge - A folio is freed: count a pre-copy never written.
 * @folio: The folio.
 * @memcg: The cgroup it was charged to.
 *
 * Context: Any context.
 */
void __htmm_ccow_uncharge(struct folio *folio, struct mem_cgroup *memcg)
{
	struct page_ext *ext;
	bool unused;

	if (folio_test_large(folio))
		return;
	ext = page_ext_get(&folio->page);
	if (!ext)
		return;
	unused = test_and_clear_bit(PAGE_EXT_HTMM_PRECOPY, &ext->flags);
	page_ext_put(ext);
	if (!unused)
		return;
	count_vm_event(HTMM_CCOW_PRECOPY_UNUSED);
	atomic_long_inc(&htmm_memcg(memcg)->ccow.nr[HTMM_CCOW_PRECOPY_UNUSED -
						    HTMM_CCOW_FAULT]);
}

/**
 * __htmm_ccow_migrate - A folio's contents moved: its pre-copy mark too.
 * @old: The source folio.
 * @new: The target folio.
 *
 * Context: Process context; both folios are locked.
 */
void __htmm_ccow_migrate(struct folio *old, struct folio *new)
{
	struct page_ext *ext;
	bool marked;

	if (folio_test_large(old))
		return;
	ext = page_ext_get(&old->page);
	if (!ext)
		return;
	marked = test_and_clear_bit(PAGE_EXT_HTMM_PRECOPY, &ext->flags);
	page_ext_put(ext);
	if (!marked)
		return;
	ext = page_ext_get(&new->page);
	if (!ext)
		return;
	set_bit(PAGE_EXT_HTMM_PRECOPY, &ext->flags);
	page_ext_put(ext);
}

static const char * const ccow_stat_names[HTMM_CCOW_NR_STATS] = {
	"ccow_faults", "ccow_region_copies", "ccow_precopied",
	"ccow_precopy_unused", "ccow_precopy_failed",
};

/**
 * htmm_ccow_stat - Print a cgroup's CCoW counters (memory.htmm_stat).
 * @memcg: The cgroup.
 * @m: The seq_file.
 */
void htmm_ccow_stat(struct mem_cgroup *memcg, struct seq_file *m)
{
	struct htmm_ccow_stat *st = &htmm_memcg(memcg)->ccow;
	int i;

	for (i = 0; i < HTMM_CCOW_NR_STATS; i++)
		seq_printf(m, "%s %ld\n", ccow_stat_names[i],
			   atomic_long_read(&st->nr[i]));
}

/**
 * htmm_ccow_enabled_changed - htmm_ccow_enabled was written.
 *
 * The hooks stay on once CCoW was on: pages may carry pre-copy marks
 * that only they clear.
 *
 * Context: Process context, may sleep.
 * Return: 0.
 */
int htmm_ccow_enabled_changed(void)
{
	if (READ_ONCE(htmm_params.ccow_enabled) != HTMM_CCOW_NEVER)
		static_branch_enable(&htmm_ccow_key);
	return 0;
}
