// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Accessed-bit sample source.
 *
 * Every htmm_abit_interval_ms, ksamplingd walks the page tables of the
 * processes in htmm-enabled cgroups, test-and-clears the Accessed bit of
 * every present PTE and PMD and turns each bit it found set into one
 * sample: on the page a PTE maps, or for a huge PMD on each page of its
 * huge page (htmm_ingest_pmd()), so that a huge page and base pages used
 * alike rank alike.  Like DAMON, it clears with the _notify helpers (so secondary
 * MMUs are aged too) and hands the reference to the folio with
 * folio_set_young(), so that reclaim and MGLRU still see the pages as
 * referenced.
 *
 * TLB: clearing the young bit does not flush per entry; x86's
 * ptep_clear_flush_young() does not flush either, since a stale TLB entry
 * only delays the next Accessed bit.  Reclaim can wait for that; htmm
 * samples every interval, and a large TLB (QEMU's software TLB holds
 * thousands of entries and is dropped only on CR3 changes) would hide a
 * hot page for many intervals.  So one flush_tlb_mm() is done per address
 * space and scan, if any bit was cleared: one shootdown per process per
 * interval, instead of one per PMD.
 *
 * First sight: the Accessed bit of a page that the scanner has not seen
 * before tells only that the page was touched at some time since it was
 * mapped, maybe long before sampling started.  So, as DAMON clears the
 * bits of a region before it checks them, the first scan of an address
 * space (after the source starts, or when its process enters an htmm
 * cgroup) only clears the bits; samples start with the second scan.
 *
 * Pacing: the walk holds the mmap_lock for HTMM_ABIT_BATCH page-table
 * entries (and at most HTMM_ABIT_CHUNK of address space) at a time, and
 * sleeps between holds as long as its pace asks.  Its cost is
 * proportional to the entries it visits (a PTE or a huge PMD each), not
 * to the address space it covers, so it is paced by entries: at most
 * htmm_abit_rate_mb MiB of 4 KiB entries (256 entries per MiB) a second,
 * and at most ksampled_soft_cpu_quota of one CPU, measured on
 * ksamplingd's own run time over all it does, from one scan to the next
 * (htmm_abit_cpu).  The pace holds the quota by itself, a batch at a
 * time, so ksamplingd's quota control leaves the scan alone (the source
 * is .paced): two controls on one quota, one of them measuring
 * only between scans, once kept stepping the level up while the pace
 * already held the quota.  Under TCG an entry cost about 200 ns on the
 * demo kernel and 12 us on the KASAN one (samples included): a batch
 * there is about 3 ms, against the 30 ms a second of the default quota.
 *
 * Window (htmm_abit_window_us, 0: off): a bit found set says only that
 * the page was used since the scan last cleared it, a pass earlier.  A
 * pass over a large working set takes seconds at the quota, and under
 * random lookups every page is used within that time, so every page is
 * young at every visit and nothing ranks.  With a window, each batch is
 * tested over that window instead, as DAMON tests a region's page one
 * sampling interval after it cleared it: its bits are cleared (no sample),
 * the TLB of the address space flushed so that the next access sets them
 * again, and the window later the batch is walked once more, and each bit
 * found set is a sample.  A page's odds of a sample then grow with its
 * access rate.  It costs a second visit of every entry and one TLB flush
 * per batch (HTMM_ABIT_BATCH entries), and ksamplingd sleeps through the
 * window; the first-sight rule is not needed, as each test clears first.
 *
 * References: a paced scan lasts seconds, so between batches it holds
 * its address spaces by mmgrab() only, and takes a user reference
 * (mmget_not_zero()) for one batch at a time.  A process that exits
 * during a scan thus frees its memory at once, as it would without htmm;
 * a user reference held across the scan kept it, charged to the cgroup's
 * node budgets, until the scan's end, and the next process of the cgroup
 * found the fast node "full" and was placed on the slow one.  A user
 * reference is dropped with mmput_async(), so that the teardown of an
 * address space whose process has exited never runs in ksamplingd.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/mm.h>
#include <linux/cgroup.h>
#include <linux/delay.h>
#include <linux/hashtable.h>
#include <linux/hugetlb.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/memcontrol.h>
#include <linux/mmu_notifier.h>
#include <linux/page_idle.h>
#include <linux/pagewalk.h>
#include <linux/pgtable.h>
#include <linux/sched/cputime.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <asm/tlbflush.h>

#include "internal.h"

#include <trace/events/htmm.h>

#define HTMM_ABIT_CHUNK		(64UL << 20)	/* address space per lock hold */
#define HTMM_ABIT_BATCH		256		/* entries per lock hold */
#define HTMM_ABIT_BATCH_SAMPLES	32		/* samples per lock hold */
#define HTMM_ABIT_MAX_MMS	64		/* processes scanned per round */
#define HTMM_ABIT_ENTRIES_PER_MB	(SZ_1M / PAGE_SIZE)

struct htmm_abit_walk {
	unsigned long nr_young;
	unsigned long nr_accounted;
	u64 entries;		/* page-table entries visited */
	u64 stop_at;		/* end this lock hold at this many entries */
	unsigned int samples_left;	/* or once this many more are samples */
	unsigned long resume;	/* where the next lock hold starts */
	bool cleared;		/* an Accessed bit was cleared in this mm */
	bool first;		/* first scan of this mm: clear only */
};

/* The bit of @page's PTE, or with @pmd that of its huge page's PMD. */
static void htmm_abit_sample(struct page *page, bool pmd,
			     struct htmm_abit_walk *w)
{
	int err;

	/* Mapped under the page table lock: the folio cannot go away. */
	folio_set_young(page_folio(page));
	w->cleared = true;
	if (w->first)
		return;
	w->nr_young++;
	if (w->samples_left)
		w->samples_left--;
	if (pmd)
		err = htmm_ingest_pmd(page, HTMM_SRC_ABIT);
	else
		err = htmm_ingest_page(page, HTMM_ACCESS, HTMM_SRC_ABIT);
	if (!err)
		w->nr_accounted++;
}

/*
 * After the entries up to @next: end the walk (a positive return stops
 * walk_page_range()) once the batch is done, to go on at @next.  A sample
 * costs many times an entry without one (the ingestion looks the page up
 * and takes its cgroup's lock), so a batch also ends after
 * HTMM_ABIT_BATCH_SAMPLES of them: a batch of hot pages took 10 ms of
 * CPU in our KASAN guest, a third of a second's quota, and the CPU of
 * single seconds swung from 16 to 40 per mille around a quota of 30.
 */
static int htmm_abit_batch_end(struct htmm_abit_walk *w, unsigned long next)
{
	if (w->entries < w->stop_at && w->samples_left)
		return 0;
	w->resume = next;
	return 1;
}

static int htmm_abit_pmd(pmd_t *pmd, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	struct vm_area_struct *vma = walk->vma;
	struct htmm_abit_walk *w = walk->private;
	unsigned long a;
	/* The page table lock of the PMD or PTE table being scanned. */
	spinlock_t *ptl;
	pte_t *pte, *ptep;

	ptl = pmd_trans_huge_lock(pmd, vma);
	if (ptl) {
		pmd_t val = pmdp_get(pmd);

		w->entries++;
		if (pmd_present(val) && pmd_young(val) &&
		    pmdp_clear_young_notify(vma, addr & PMD_MASK, pmd))
			htmm_abit_sample(pmd_page(val), true, w);
		spin_unlock(ptl);
		return htmm_abit_batch_end(w, next);
	}

	/* End the batch within this PTE table if it is due there. */
	if (w->entries + ((next - addr) >> PAGE_SHIFT) > w->stop_at)
		next = addr + ((w->stop_at - w->entries) << PAGE_SHIFT);
	pte = pte_offset_map_lock(walk->mm, pmd, addr, &ptl);
	if (!pte) {
		walk->action = ACTION_AGAIN;
		return 0;
	}
	for (a = addr, ptep = pte; a < next; a += PAGE_SIZE, ptep++) {
		pte_t val = ptep_get(ptep);
		struct page *page;

		if (!pte_present(val) || !pte_young(val))
			continue;
		if (!ptep_clear_young_notify(vma, a, ptep))
			continue;
		page = vm_normal_page(vma, a, val);
		if (page)
			htmm_abit_sample(page, false, w);
		if (!w->samples_left) {
			a += PAGE_SIZE;
			break;
		}
	}
	pte_unmap_unlock(pte, ptl);
	w->entries += (a - addr) >> PAGE_SHIFT;
	return htmm_abit_batch_end(w, a);
}

static const struct mm_walk_ops htmm_abit_ops = {
	.pmd_entry = htmm_abit_pmd,
	.walk_lock = PGWALK_RDLOCK,
};

/* Entry pacing, from the start of one address space's scan. */
struct htmm_abit_pace {
	u64 t0;			/* ktime_get_ns() */
	u64 entries0;		/* w->entries */
	u64 rate;		/* entries a second */
};

/*
 * ksamplingd's CPU time against ksampled_soft_cpu_quota, kept across
 * scans: what the quota allowed since the source started, less what
 * ksamplingd used, everything between two scans included (gathering the
 * processes, the TLB flushes, its loop), at most HTMM_ABIT_BURST_NS ahead.
 * A pace that started again with each process left that work out, and
 * with scans 100 ms apart its CPU was 33 per mille on average against a
 * quota of 30.  The run time is the scheduler's as of its last update, up
 * to a tick behind, which the next update catches up.  With
 * task_sched_runtime(), which counts the running stretch as well, single
 * seconds kept closer to the quota (27 to 31 per mille against 24 to 34
 * on the demo kernel), but a scan in the debug kernel took 40% more CPU.
 * ksamplingd only.
 */
static struct {
	u64 t;			/* ktime_get_ns() at the last update */
	u64 run;		/* ksamplingd's run time then */
	s64 credit;		/* ns of CPU time it may still use */
} htmm_abit_cpu;

#define HTMM_ABIT_BURST_NS	(2 * NSEC_PER_MSEC)

static void htmm_abit_cpu_reset(void)
{
	htmm_abit_cpu.t = ktime_get_ns();
	htmm_abit_cpu.run = current->se.sum_exec_runtime;
	htmm_abit_cpu.credit = HTMM_ABIT_BURST_NS;
}

/*
 * Bring the CPU credit up to date.  Return: how long to sleep for the
 * quota to allow what was used, in ns; 0 if no wait.
 */
static u64 htmm_abit_cpu_wait(void)
{
	unsigned int quota = READ_ONCE(htmm_params.cpu_quota);
	u64 now = ktime_get_ns(), run = current->se.sum_exec_runtime;
	s64 allowed = min_t(u64, div_u64((now - htmm_abit_cpu.t) * quota,
					 1000), HTMM_ABIT_BURST_NS);

	htmm_abit_cpu.credit = min_t(s64, htmm_abit_cpu.credit + allowed -
				     (s64)(run - htmm_abit_cpu.run),
				     HTMM_ABIT_BURST_NS);
	htmm_abit_cpu.t = now;
	htmm_abit_cpu.run = run;
	if (!quota) {
		/* No control: a quota set later starts afresh. */
		htmm_abit_cpu.credit = HTMM_ABIT_BURST_NS;
		return 0;
	}
	if (htmm_abit_cpu.credit >= 0)
		return 0;
	return div_u64((u64)-htmm_abit_cpu.credit * 1000, quota);
}

/*
 * How much longer the scan must take for its entries at the entry rate.
 * 64-bit safe for any count (mul_u64_u64_div_u64()).
 */
static u64 htmm_abit_rate_wait(const struct htmm_abit_pace *p, u64 entries)
{
	u64 due = mul_u64_u64_div_u64(entries - p->entries0, NSEC_PER_SEC,
				      p->rate);
	u64 spent = ktime_get_ns() - p->t0;

	return due > spent ? due - spent : 0;
}

/* Sleep until the scan is on pace; return false if ksamplingd must stop. */
static bool htmm_abit_pace(const struct htmm_abit_pace *p, u64 entries)
{
	u64 wait;

	for (;;) {
		htmm_quota_window();
		wait = max(htmm_abit_rate_wait(p, entries),
			   htmm_abit_cpu_wait());
		if (!wait)
			return true;
		if (kthread_should_stop())
			return false;
		msleep_interruptible(min_t(u64, 10,
					   div_u64(wait, NSEC_PER_MSEC) + 1));
	}
}

/* End one batch: the mmap_lock and the user reference it held. */
static void htmm_abit_unlock_mm(struct mm_struct *mm)
{
	mmap_read_unlock(mm);
	mmput_async(mm);
}

/*
 * Take a user reference to @mm and its mmap_lock for one batch.  Return:
 * false if it has no user left or its process is being killed.
 */
static bool htmm_abit_lock_mm(struct mm_struct *mm)
{
	if (!mmget_not_zero(mm))
		return false;
	if (mmap_read_lock_killable(mm)) {
		mmput_async(mm);
		return false;
	}
	return true;
}

/*
 * Walk one batch of the locked @mm from @addr, at most HTMM_ABIT_CHUNK
 * and below @end, ending after @samples samples.  Return: where the next
 * batch starts.
 */
static unsigned long htmm_abit_walk_batch(struct mm_struct *mm,
					  struct htmm_abit_walk *w,
					  unsigned long addr, unsigned long end,
					  unsigned int samples)
{
	unsigned long next = min(end, addr + HTMM_ABIT_CHUNK);

	w->resume = next;
	w->stop_at = w->entries + HTMM_ABIT_BATCH;
	w->samples_left = samples;
	walk_page_range(mm, addr, next, &htmm_abit_ops, w);
	return w->resume;
}

/*
 * The batch at @addr of the locked @mm, tested over @window_us (see
 * Window above): clear, flush, sleep, then sample what was used since.
 * Unlocks @mm.  Return: where the next batch starts; @end if @mm has no
 * user left.
 */
static unsigned long htmm_abit_window(struct mm_struct *mm,
				      struct htmm_abit_walk *w,
				      unsigned long addr, unsigned long end,
				      unsigned int window_us)
{
	bool cleared = w->cleared, first = w->first;
	unsigned long stop;

	w->first = true;
	w->cleared = false;
	stop = htmm_abit_walk_batch(mm, w, addr, end, HTMM_ABIT_BATCH);
	if (w->cleared)
		flush_tlb_mm(mm);
	htmm_abit_unlock_mm(mm);
	/* This batch's TLB entries are gone: no flush at the scan's end. */
	w->cleared = cleared;
	usleep_range(window_us, window_us + window_us / 8 + 1);
	if (!htmm_abit_lock_mm(mm)) {
		w->first = first;
		return end;
	}
	w->first = false;
	stop = htmm_abit_walk_batch(mm, w, addr, stop, HTMM_ABIT_BATCH_SAMPLES);
	w->first = first;
	htmm_abit_unlock_mm(mm);
	return stop;
}

/*
 * Scan one address space (held by mmgrab()); return false if ksamplingd
 * must stop.  It ends early when the address space loses its last user.
 */
static bool htmm_abit_scan_mm(struct mm_struct *mm, struct htmm_abit_walk *w)
{
	struct htmm_abit_pace pace = {
		.t0 = ktime_get_ns(),
		.entries0 = w->entries,
		.rate = max_t(u64, 1, (u64)READ_ONCE(htmm_params.abit_rate_mb) *
				      HTMM_ABIT_ENTRIES_PER_MB),
	};
	unsigned int window_us = READ_ONCE(htmm_params.abit_window_us);
	unsigned long addr = 0, end = TASK_SIZE;
	struct vm_area_struct *vma;
	bool go = true;

	w->cleared = false;
	while (go && addr < end) {
		if (kthread_should_stop() || !htmm_abit_lock_mm(mm))
			break;
		vma = find_vma(mm, addr);
		if (!vma) {
			htmm_abit_unlock_mm(mm);
			break;
		}
		if (vma->vm_start >= min(end, addr + HTMM_ABIT_CHUNK)) {
			/* Skip the hole in one step. */
			addr = vma->vm_start & ~(HTMM_ABIT_CHUNK - 1);
			htmm_abit_unlock_mm(mm);
			continue;
		}
		if (window_us) {
			addr = htmm_abit_window(mm, w, addr, end, window_us);
		} else {
			addr = htmm_abit_walk_batch(mm, w, addr, end,
						    HTMM_ABIT_BATCH_SAMPLES);
			htmm_abit_unlock_mm(mm);
		}
		go = htmm_abit_pace(&pace, w->entries);
		cond_resched();
	}
	/* No user left: no TLB holds its entries any more. */
	if (w->cleared && mmget_not_zero(mm)) {
		flush_tlb_mm(mm);
		mmput_async(mm);
	}
	return go && !kthread_should_stop();
}

static unsigned long htmm_abit_next_scan;	/* jiffies; ksamplingd only */

/*
 * The address spaces scanned before, so that a scan knows which it sees
 * for the first time.  An entry holds an mmgrab() reference, so that a
 * pointer is never compared with a freed and reused mm_struct; it goes
 * when its process exits or leaves the htmm cgroups, so a process that
 * comes back is seen for the first time again.  Each is charged to the
 * cgroup of its process.  ksamplingd only.
 */
struct htmm_abit_seen {
	struct hlist_node node;
	struct mm_struct *mm;
};

#define HTMM_ABIT_SEEN_MAX	65536	/* beyond: every scan is a first */

static DEFINE_HASHTABLE(htmm_abit_seen, 10);
static unsigned int htmm_abit_nr_seen;

static struct htmm_abit_seen *htmm_abit_find(struct mm_struct *mm)
{
	struct htmm_abit_seen *e;

	hash_for_each_possible(htmm_abit_seen, e, node, (unsigned long)mm)
		if (e->mm == mm)
			return e;
	return NULL;
}

/* Remember @mm as seen.  Return: true if it was seen before. */
static bool htmm_abit_see(struct mm_struct *mm)
{
	struct mem_cgroup *memcg, *old;
	struct htmm_abit_seen *e;

	if (htmm_abit_find(mm))
		return true;
	if (htmm_abit_nr_seen >= HTMM_ABIT_SEEN_MAX)
		return false;
	memcg = get_mem_cgroup_from_mm(mm);
	old = set_active_memcg(memcg);
	e = kmalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	set_active_memcg(old);
	mem_cgroup_put(memcg);
	if (!e)
		return false;
	mmgrab(mm);
	e->mm = mm;
	hash_add(htmm_abit_seen, &e->node, (unsigned long)mm);
	htmm_abit_nr_seen++;
	return false;
}

/* Is @mm's process still in a cgroup that htmm scans? */
static bool htmm_abit_mm_in_use(struct mm_struct *mm)
{
	struct mem_cgroup *memcg;
	bool in;

	if (!mmget_not_zero(mm))
		return false;
	memcg = get_mem_cgroup_from_mm(mm);
	in = memcg && htmm_memcg(memcg) && READ_ONCE(htmm_memcg(memcg)->enabled);
	mem_cgroup_put(memcg);
	mmput_async(mm);
	return in;
}

/* Forget the address spaces gone from the htmm cgroups, or all of them. */
static void htmm_abit_forget(bool all)
{
	struct htmm_abit_seen *e;
	struct hlist_node *tmp;
	int bkt;

	hash_for_each_safe(htmm_abit_seen, bkt, tmp, e, node) {
		if (!all && htmm_abit_mm_in_use(e->mm))
			continue;
		hash_del(&e->node);
		mmdrop(e->mm);
		kfree(e);
		htmm_abit_nr_seen--;
	}
}

/*
 * Where the next scan starts: the @proc-th process of the @cg-th enabled
 * cgroup.  A scan takes at most HTMM_ABIT_MAX_MMS address spaces from
 * there on, wrapping around, and the next one goes on after them, so that
 * every process of every cgroup has its turn.  ksamplingd only.
 */
static unsigned int htmm_abit_cursor_cg, htmm_abit_cursor_proc;

/* Scan statistics, written by ksamplingd only, read by the stat file. */
static u64 htmm_abit_nr_scans;
static u64 htmm_abit_mm_scans;		/* address spaces scanned */
static u64 htmm_abit_mm_first;		/* of them, first sight: clear only */
static u64 htmm_abit_entries;		/* page-table entries visited */
static u64 htmm_abit_scan_ns;		/* CPU time of ksamplingd scanning */

/**
 * htmm_abit_stat - Print the scanner's statistics.
 * @m: The memory.htmm_stat file.
 */
void htmm_abit_stat(struct seq_file *m)
{
	seq_printf(m, "abit_scans %llu\n", READ_ONCE(htmm_abit_nr_scans));
	seq_printf(m, "abit_mm_scans %llu\n", READ_ONCE(htmm_abit_mm_scans));
	seq_printf(m, "abit_mm_first_scans %llu\n", READ_ONCE(htmm_abit_mm_first));
	seq_printf(m, "abit_scanned_entries %llu\n", READ_ONCE(htmm_abit_entries));
	seq_printf(m, "abit_scan_cpu_ns %llu\n", READ_ONCE(htmm_abit_scan_ns));
}

/* @task's address space, held by mmgrab(), as get_task_mm() finds it. */
static struct mm_struct *htmm_abit_grab_mm(struct task_struct *task)
{
	struct mm_struct *mm;

	task_lock(task);
	mm = task->flags & PF_KTHREAD ? NULL : task->mm;
	if (mm)
		mmgrab(mm);
	task_unlock(task);
	return mm;
}

/*
 * Collect mmgrab() references to the address spaces of one cgroup's
 * processes, from its @skip-th on.  Return: the new count; *@last is the
 * index of the process after the last one taken.
 */
static int htmm_abit_collect(struct mem_cgroup *memcg, unsigned int skip,
			     struct mm_struct **mms, int nr, unsigned int *last)
{
	struct css_task_iter it;
	struct task_struct *task;
	unsigned int proc = 0;
	int i;

	css_task_iter_start(&memcg->css, CSS_TASK_ITER_PROCS, &it);
	while (nr < HTMM_ABIT_MAX_MMS && (task = css_task_iter_next(&it))) {
		struct mm_struct *mm;

		if (proc++ < skip)
			continue;
		*last = proc;
		mm = htmm_abit_grab_mm(task);
		if (!mm)
			continue;
		for (i = 0; i < nr; i++)
			if (mms[i] == mm)
				break;
		if (i < nr) {
			mmdrop(mm);
			continue;
		}
		mms[nr++] = mm;
	}
	css_task_iter_end(&it);
	return nr;
}

/*
 * Pin up to HTMM_ABIT_MAX_MMS enabled cgroups from the cursor on, with
 * their positions in the list.  Return: how many; *@n: the list's length.
 */
static int htmm_abit_pin_memcgs(struct mem_cgroup **memcgs, unsigned int *pos,
				unsigned int *n)
{
	struct htmm_memcg *hm;
	unsigned int i, first, round;
	int nr = 0;

	spin_lock(&htmm_list_lock);
	*n = 0;
	list_for_each_entry(hm, &htmm_enabled_list, node)
		(*n)++;
	first = htmm_abit_cursor_cg < *n ? htmm_abit_cursor_cg : 0;
	/* The list from @first to its end, then from its head to @first. */
	for (round = 0; round < 2; round++) {
		i = 0;
		list_for_each_entry(hm, &htmm_enabled_list, node) {
			if (nr == HTMM_ABIT_MAX_MMS || (round && i >= first))
				break;
			if ((round || i >= first) &&
			    css_tryget_online(&hm->memcg->css)) {
				pos[nr] = i;
				memcgs[nr++] = hm->memcg;
			}
			i++;
		}
	}
	spin_unlock(&htmm_list_lock);
	if (first != htmm_abit_cursor_cg)
		htmm_abit_cursor_proc = 0;
	htmm_abit_cursor_cg = first;
	return nr;
}

/*
 * The address spaces of this scan: HTMM_ABIT_MAX_MMS at most, from the
 * cursor on; the cursor moves past them.  Return: how many, in @mms.
 */
static int htmm_abit_gather(struct mm_struct **mms)
{
	struct mem_cgroup *memcgs[HTMM_ABIT_MAX_MMS];
	unsigned int pos[HTMM_ABIT_MAX_MMS];
	unsigned int n, skip, last = 0, next_cg, next_proc = 0;
	int i, nr_memcg, nr = 0, prev;
	bool full = false;

	nr_memcg = htmm_abit_pin_memcgs(memcgs, pos, &n);
	skip = htmm_abit_cursor_proc;
	/* If all is taken, the next scan starts after these cgroups. */
	next_cg = nr_memcg ? pos[nr_memcg - 1] + 1 : 0;
	for (i = 0; i < nr_memcg; i++) {
		prev = nr;
		if (!full)
			nr = htmm_abit_collect(memcgs[i],
					       pos[i] == htmm_abit_cursor_cg ?
					       skip : 0, mms, nr, &last);
		css_put(&memcgs[i]->css);
		if (!full && nr == HTMM_ABIT_MAX_MMS && prev < nr) {
			/* Full: the next scan goes on in this cgroup. */
			full = true;
			next_cg = pos[i];
			next_proc = last;
		}
	}
	htmm_abit_cursor_cg = n ? next_cg % n : 0;
	htmm_abit_cursor_proc = next_proc;
	return nr;
}

static void htmm_abit_tick(void)
{
	struct mm_struct *mms[HTMM_ABIT_MAX_MMS];
	struct htmm_abit_walk w = { 0 };
	unsigned long start = jiffies;
	int i, nr;
	bool go = true;
	u64 run;

	if (time_before(start, htmm_abit_next_scan))
		return;

	nr = htmm_abit_gather(mms);
	run = task_sched_runtime(current);
	for (i = 0; i < nr; i++) {
		/* Its process has exited since: nothing to scan. */
		if (!go || !mmget_not_zero(mms[i]))
			continue;
		w.first = !htmm_abit_see(mms[i]);
		mmput_async(mms[i]);
		WRITE_ONCE(htmm_abit_mm_scans, htmm_abit_mm_scans + 1);
		if (w.first)
			WRITE_ONCE(htmm_abit_mm_first, htmm_abit_mm_first + 1);
		go = htmm_abit_scan_mm(mms[i], &w);
	}
	for (i = 0; i < nr; i++)
		mmdrop(mms[i]);
	htmm_abit_forget(false);
	WRITE_ONCE(htmm_abit_scan_ns, htmm_abit_scan_ns +
		   task_sched_runtime(current) - run);
	WRITE_ONCE(htmm_abit_entries, htmm_abit_entries + w.entries);
	WRITE_ONCE(htmm_abit_nr_scans, htmm_abit_nr_scans + 1);
	trace_htmm_sample_batch(HTMM_SRC_ABIT, w.nr_young, w.nr_accounted,
				w.nr_young - w.nr_accounted);
	/*
	 * Scans start an interval apart; one that took longer is followed
	 * at once, so that a scan paced to the quota keeps to it.
	 */
	htmm_abit_next_scan = start +
		msecs_to_jiffies(READ_ONCE(htmm_params.abit_interval_ms));
}

static int htmm_abit_start(unsigned int period, unsigned int inst_period)
{
	htmm_abit_next_scan = jiffies;
	htmm_abit_cpu_reset();
	return 0;
}

static void htmm_abit_stop(void)
{
	htmm_abit_forget(true);
	htmm_abit_cursor_cg = 0;
	htmm_abit_cursor_proc = 0;
}

const struct htmm_source_ops htmm_abit_source = {
	.name = "abit",
	.start = htmm_abit_start,
	.stop = htmm_abit_stop,
	.tick = htmm_abit_tick,
	.paced = true,
};
