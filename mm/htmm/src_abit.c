// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Accessed-bit sample source.
 *
 * Every htmm_abit_interval_ms, ksamplingd walks the page tables of the
 * processes in htmm-enabled cgroups, test-and-clears the Accessed bit of
 * every present PTE and PMD and turns each bit it found set into one
 * sample.  The TLB entries of the cleared range are flushed, so the next
 * access sets the bit again (also under QEMU, whose soft TLB would
 * otherwise hide it).  The walk is done in chunks of address space with
 * the mmap_lock dropped between chunks, and paced to at most
 * htmm_abit_rate_mb MiB of address space a second.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/mm.h>
#include <linux/cgroup.h>
#include <linux/delay.h>
#include <linux/hugetlb.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/pagewalk.h>
#include <linux/pgtable.h>
#include <linux/sched/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <asm/tlbflush.h>

#include "internal.h"

#include <trace/events/htmm.h>

#define HTMM_ABIT_CHUNK		(64UL << 20)	/* address space per lock hold */
#define HTMM_ABIT_MAX_MMS	64		/* processes scanned per round */

struct htmm_abit_walk {
	unsigned long nr_young;
	unsigned long nr_accounted;
	u64 scanned;		/* bytes of address space walked */
};

static void htmm_abit_sample(struct page *page, struct htmm_abit_walk *w)
{
	w->nr_young++;
	if (!htmm_ingest_page(page, HTMM_ACCESS, HTMM_SRC_ABIT))
		w->nr_accounted++;
}

static int htmm_abit_pmd(pmd_t *pmd, unsigned long addr, unsigned long next,
			 struct mm_walk *walk)
{
	struct vm_area_struct *vma = walk->vma;
	struct htmm_abit_walk *w = walk->private;
	unsigned long a, start = addr;
	bool flush = false;
	/* The page table lock of the PMD or PTE table being scanned. */
	spinlock_t *ptl;
	pte_t *pte, *ptep;

	ptl = pmd_trans_huge_lock(pmd, vma);
	if (ptl) {
		pmd_t val = pmdp_get(pmd);

		if (pmd_present(val) && pmd_young(val) &&
		    pmdp_test_and_clear_young(vma, addr & HPAGE_PMD_MASK, pmd)) {
			htmm_abit_sample(pmd_page(val), w);
			flush = true;
		}
		spin_unlock(ptl);
		goto out;
	}

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
		if (!ptep_test_and_clear_young(vma, a, ptep))
			continue;
		flush = true;
		page = vm_normal_page(vma, a, val);
		if (page)
			htmm_abit_sample(page, w);
	}
	pte_unmap_unlock(pte, ptl);
out:
	if (flush)
		flush_tlb_range(vma, start, next);
	return 0;
}

static const struct mm_walk_ops htmm_abit_ops = {
	.pmd_entry = htmm_abit_pmd,
	.walk_lock = PGWALK_RDLOCK,
};

/* Scan one address space; return false if ksamplingd must stop. */
static bool htmm_abit_scan_mm(struct mm_struct *mm, struct htmm_abit_walk *w,
			      unsigned int level)
{
	unsigned long rate = READ_ONCE(htmm_params.abit_rate_mb);
	unsigned long addr = 0, end = TASK_SIZE;
	u64 t0 = ktime_get_ns();
	unsigned long scanned = 0;

	/* The CPU quota control slows the scan down level by level. */
	rate = max(1UL, rate >> min(level, 10U));
	while (addr < end) {
		unsigned long next = min(end, addr + HTMM_ABIT_CHUNK);
		struct vm_area_struct *vma;
		u64 budget_ns;

		if (kthread_should_stop())
			return false;
		if (mmap_read_lock_killable(mm))
			return true;
		vma = find_vma(mm, addr);
		if (!vma) {
			mmap_read_unlock(mm);
			break;
		}
		if (vma->vm_start >= next) {
			/* Skip the hole in one step. */
			addr = vma->vm_start & ~(HTMM_ABIT_CHUNK - 1);
			mmap_read_unlock(mm);
			continue;
		}
		walk_page_range(mm, addr, next, &htmm_abit_ops, w);
		mmap_read_unlock(mm);
		scanned += next - addr;
		w->scanned += next - addr;
		addr = next;

		/* Pace: scanned bytes at @rate MiB/s must not be early. */
		budget_ns = div64_u64((u64)scanned * NSEC_PER_SEC, rate << 20);
		while (ktime_get_ns() - t0 < budget_ns) {
			u64 left = budget_ns - (ktime_get_ns() - t0);

			if (kthread_should_stop())
				return false;
			msleep_interruptible(min_t(u64, 10,
						   div64_u64(left, NSEC_PER_MSEC) + 1));
		}
		cond_resched();
	}
	return true;
}

static unsigned long htmm_abit_next_scan;	/* jiffies; ksamplingd only */

/* Scan statistics, written by ksamplingd only, read by the stat file. */
static u64 htmm_abit_nr_scans;
static u64 htmm_abit_scanned;		/* bytes of address space */
static u64 htmm_abit_scan_ns;		/* CPU time of ksamplingd scanning */

/**
 * htmm_abit_stat - Print the scanner's statistics.
 * @m: The memory.htmm_stat file.
 */
void htmm_abit_stat(struct seq_file *m)
{
	seq_printf(m, "abit_scans %llu\n", READ_ONCE(htmm_abit_nr_scans));
	seq_printf(m, "abit_scanned_bytes %llu\n", READ_ONCE(htmm_abit_scanned));
	seq_printf(m, "abit_scan_cpu_ns %llu\n", READ_ONCE(htmm_abit_scan_ns));
}

/* Collect references to the address spaces of one cgroup's tasks. */
static int htmm_abit_collect(struct mem_cgroup *memcg, struct mm_struct **mms,
			     int nr, int max)
{
	struct css_task_iter it;
	struct task_struct *task;
	int i;

	css_task_iter_start(&memcg->css, CSS_TASK_ITER_PROCS, &it);
	while (nr < max && (task = css_task_iter_next(&it))) {
		struct mm_struct *mm = get_task_mm(task);

		if (!mm)
			continue;
		for (i = 0; i < nr; i++)
			if (mms[i] == mm)
				break;
		if (i < nr) {
			mmput(mm);
			continue;
		}
		mms[nr++] = mm;
	}
	css_task_iter_end(&it);
	return nr;
}

static void htmm_abit_tick(unsigned int level)
{
	struct mm_struct *mms[HTMM_ABIT_MAX_MMS];
	struct htmm_abit_walk w = { 0 };
	struct mem_cgroup *memcgs[HTMM_ABIT_MAX_MMS];
	struct htmm_memcg *hm;
	int i, nr_memcg = 0, nr = 0;
	bool go = true;
	u64 run;

	if (time_before(jiffies, htmm_abit_next_scan))
		return;

	spin_lock(&htmm_list_lock);
	list_for_each_entry(hm, &htmm_enabled_list, node) {
		if (nr_memcg == HTMM_ABIT_MAX_MMS)
			break;
		if (css_tryget_online(&hm->memcg->css))
			memcgs[nr_memcg++] = hm->memcg;
	}
	spin_unlock(&htmm_list_lock);
	for (i = 0; i < nr_memcg; i++) {
		nr = htmm_abit_collect(memcgs[i], mms, nr, HTMM_ABIT_MAX_MMS);
		css_put(&memcgs[i]->css);
	}

	run = current->se.sum_exec_runtime;
	for (i = 0; i < nr; i++) {
		if (go)
			go = htmm_abit_scan_mm(mms[i], &w, level);
		mmput(mms[i]);
	}
	WRITE_ONCE(htmm_abit_scan_ns, htmm_abit_scan_ns +
		   current->se.sum_exec_runtime - run);
	WRITE_ONCE(htmm_abit_scanned, htmm_abit_scanned + w.scanned);
	WRITE_ONCE(htmm_abit_nr_scans, htmm_abit_nr_scans + 1);
	trace_htmm_sample_batch(HTMM_SRC_ABIT, w.nr_young, w.nr_accounted,
				w.nr_young - w.nr_accounted);
	htmm_abit_next_scan = jiffies +
		msecs_to_jiffies(READ_ONCE(htmm_params.abit_interval_ms));
}

static int htmm_abit_start(unsigned int period, unsigned int inst_period)
{
	htmm_abit_next_scan = jiffies;
	return 0;
}

static void htmm_abit_stop(void)
{
}

const struct htmm_source_ops htmm_abit_source = {
	.name = "abit",
	.start = htmm_abit_start,
	.stop = htmm_abit_stop,
	.tick = htmm_abit_tick,
};
