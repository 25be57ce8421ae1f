// SPDX-License-Identifier: GPL-2.0-only
/*
 * ksamplingd: the htmm sampler thread, the per-CPU sample rings and the
 * CPU quota control.
 *
 * Sample sources share struct htmm_source_ops.  The perf source (PEBS, or
 * a software event for testing) pushes records into a bounded per-CPU ring
 * from its overflow handler, possibly in NMI context; ksamplingd drains
 * the rings and feeds ingestion.  A record has a physical address, or a
 * user address and a reference on its mm: ksamplingd looks the address up
 * in that mm if the mm still has users (mmget_not_zero()), and drops the
 * sample if the process has exited.  The Accessed-bit source runs its scans
 * from ksamplingd itself.  The injector bypasses both and calls ingestion
 * directly.
 *
 * ksamplingd exists while at least one cgroup has htmm enabled.  While no
 * enabled cgroup has a task, the source is stopped and the thread idles.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/cgroup.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/pagewalk.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/cputime.h>
#include <linux/sched/mm.h>
#include <linux/seqlock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include <linux/vmstat.h>

#include "../internal.h"
#include "internal.h"

#include <trace/events/htmm.h>

/* A record taken off a ring that waits for its fault (htmm_drain_rings()) */
struct htmm_wait {
	struct htmm_record rec;
	unsigned long since;		/* jiffies */
};

#define HTMM_WAIT_SLOTS		16

/*
 * What a drain did with the records: accounted and dropped for the
 * htmm_sample_batch event, and per ring, until htmm_ring_commit(), how.
 */
struct htmm_drain_stat {
	unsigned long ok;
	unsigned long dropped;
	unsigned long paddr, mm, exited;
};

/*
 * Per-CPU sample ring: single producer (the overflow handler of this CPU,
 * which may run in NMI context), single consumer (ksamplingd).  @head is
 * written by the producer only, @tail by the consumer only.  A record's mm
 * reference belongs to the ring until the consumer takes the record off,
 * then to @wait while the record waits there.
 */
struct htmm_ring {
	unsigned int head;
	unsigned int tail;
	unsigned long nr_pushed;	/* producer only */
	unsigned long nr_dropped;	/* producer only */
	/* consumer: covers @tail, nr_paddr to nr_exited and @nr_wait */
	seqcount_t seq;
	unsigned long nr_paddr;		/* consumer: by physical address */
	unsigned long nr_mm;		/* consumer: by mm and user address */
	unsigned long nr_exited;	/* consumer: the mm had no user left */
	unsigned long nr_waited;	/* consumer: waited for their fault */
	unsigned int nr_wait;		/* consumer: records in @wait */
	struct htmm_wait wait[HTMM_WAIT_SLOTS];	/* consumer only */
	struct htmm_record rec[HTMM_RING_SIZE];
};

static DEFINE_PER_CPU(struct htmm_ring, htmm_rings);

/* How long a record may wait for the fault it sampled (htmm_drain_rings()) */
#define HTMM_FAULT_WAIT		(HZ / 5)

/* Samples lost because a ring was full or the page could not be found. */
static atomic64_t htmm_nr_dropped = ATOMIC64_INIT(0);

/**
 * htmm_ring_push - Queue a sample on this CPU's ring.
 * @rec: The sample.
 *
 * Context: Any context including NMI, with preemption disabled.
 * Return: false if the ring was full and the sample was dropped.
 */
bool htmm_ring_push(const struct htmm_record *rec)
{
	struct htmm_ring *r = this_cpu_ptr(&htmm_rings);
	unsigned int head = r->head;

	/* Pairs with the consumer's release of @tail: the slot is free. */
	if (head - smp_load_acquire(&r->tail) >= HTMM_RING_SIZE) {
		r->nr_dropped++;
		atomic64_inc(&htmm_nr_dropped);
		count_vm_event(HTMM_NR_SAMPLES_DROPPED);
		return false;
	}
	r->rec[head % HTMM_RING_SIZE] = *rec;
	r->nr_pushed++;
	/* Publish the record before the new head (consumer's acquire). */
	smp_store_release(&r->head, head + 1);
	return true;
}

/**
 * htmm_rings_show - Print per-CPU ring counters (debugfs).
 * @m: The file.
 *
 * One line per CPU: records pushed and dropped (ring full); how ksamplingd
 * resolved the records it took off: by physical address, by mm and user
 * address, or not at all because the mm had no user any more; how many
 * records wait, on the ring or for their fault; and how many records had
 * to wait for the fault they sampled to be over (htmm_fault_settled()).
 */
void htmm_rings_show(struct seq_file *m)
{
	unsigned long paddr, mm, exited;
	unsigned int tail, nr_wait, seq;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct htmm_ring *r = per_cpu_ptr(&htmm_rings, cpu);

		do {
			seq = read_seqcount_begin(&r->seq);
			/* @tail before @head, as htmm_ring_push() reads them */
			tail = smp_load_acquire(&r->tail);
			nr_wait = READ_ONCE(r->nr_wait);
			paddr = READ_ONCE(r->nr_paddr);
			mm = READ_ONCE(r->nr_mm);
			exited = READ_ONCE(r->nr_exited);
		} while (read_seqcount_retry(&r->seq, seq));
		/* @head read after @tail cannot be behind it */
		seq_printf(m, "cpu%d pushed %lu dropped %lu paddr %lu mm %lu exited %lu queued %u waited %lu\n",
			   cpu, READ_ONCE(r->nr_pushed),
			   READ_ONCE(r->nr_dropped), paddr, mm, exited,
			   READ_ONCE(r->head) - tail + nr_wait,
			   READ_ONCE(r->nr_waited));
	}
}

/**
 * htmm_sampler_init_rings - Set the rings up, once at boot.
 */
void __init htmm_sampler_init_rings(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		seqcount_init(&per_cpu_ptr(&htmm_rings, cpu)->seq);
}

/*
 * Whether the fault a before-fault sample fired for is over, judged from
 * what @vaddr maps now: a page, or no page for good.  Not yet while the
 * address maps no page although its VMA allows access and is not a special
 * one, such as vvar, that maps no folios (the fault has not mapped it
 * yet), nor while it maps read-only, in a writable private VMA,
 * an anonymous page that is not exclusive (the fault is about to replace
 * it with a copy, as wp_can_reuse_anon_folio() would not reuse it).
 * Caller holds the mmap_lock; @folio is NULL if nothing is mapped.
 */
static bool htmm_fault_settled(struct vm_area_struct *vma,
			       struct folio_walk *fw, struct folio *folio)
{
	bool writable;

	if (!folio)
		return !(vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC)) ||
		       (vma->vm_flags & VM_SPECIAL);
	if ((vma->vm_flags & (VM_SHARED | VM_WRITE)) != VM_WRITE ||
	    !folio_test_anon(folio))
		return true;
	if (fw->level == FW_LEVEL_PTE)
		writable = pte_write(fw->pte);
	else if (fw->level == FW_LEVEL_PMD)
		writable = pmd_write(fw->pmd);
	else
		return true;
	return writable || PageAnonExclusive(fw->page);
}

/**
 * htmm_mm_get_page - Find the page mapped at a user address of an mm.
 * @mm: The mm; the caller holds a user reference (mmget()).
 * @vaddr: The user virtual address.
 * @fault: The address is that of a fault that may still be under way.
 *
 * With @fault, an address whose fault has not mapped its page yet, or is
 * about to replace it with a copy, is not looked up: -EAGAIN says to try
 * again once the fault is over.
 *
 * Context: Process context, may sleep (takes the mmap_lock).
 * Return: The page with a reference on its folio, or an ERR_PTR().
 */
struct page *htmm_mm_get_page(struct mm_struct *mm, unsigned long vaddr,
			      bool fault)
{
	struct page *page = ERR_PTR(-EFAULT);
	struct vm_area_struct *vma;
	struct folio_walk fw;
	struct folio *folio;

	if (mmap_read_lock_killable(mm))
		return ERR_PTR(-EINTR);
	vma = vma_lookup(mm, vaddr);
	if (!vma)
		goto unlock;
	folio = folio_walk_start(&fw, vma, vaddr, fault ? FW_ZEROPAGE : 0);
	if (fault && !htmm_fault_settled(vma, &fw, folio))
		page = ERR_PTR(-EAGAIN);
	else if (folio && !is_zero_folio(folio) && !is_huge_zero_folio(folio))
		page = fw.page;
	if (!IS_ERR(page))
		folio_get(folio);
	if (folio)
		folio_walk_end(&fw, vma);
unlock:
	mmap_read_unlock(mm);
	return page;
}

/**
 * htmm_mm_wait_migration - Wait for the migration of the page at an address.
 * @mm: The mm; the caller holds a user reference (mmget()).
 * @vaddr: The user virtual address.
 *
 * A page under migration is mapped by a migration entry, which
 * htmm_mm_get_page() does not see.  If @vaddr maps one, wait for the
 * migration to end, as a fault on the address would
 * (migration_entry_wait()), so that the caller can look the page up again.
 * The migration may also have ended between the caller's lookup and this
 * check: then @vaddr maps a page again.
 *
 * Context: Process context, may sleep (takes the mmap_lock).
 * Return: true if @vaddr mapped a migration entry or maps a page now, so
 * that looking the page up again may find it; false otherwise.
 */
bool htmm_mm_wait_migration(struct mm_struct *mm, unsigned long vaddr)
{
	struct vm_area_struct *vma;
	bool found = false;
	pmd_t *pmd, pmdval;
	pte_t *pte, ptent;

	if (mmap_read_lock_killable(mm))
		return false;
	vma = vma_lookup(mm, vaddr);
	/* hugetlb has its own entries (migration_entry_wait_huge()) */
	if (!vma || is_vm_hugetlb_page(vma))
		goto unlock;
	pmd = mm_find_pmd(mm, vaddr);
	if (!pmd)
		goto unlock;
	pmdval = pmdp_get_lockless(pmd);
	if (is_pmd_migration_entry(pmdval)) {
		pmd_migration_entry_wait(mm, pmd);
		found = true;
		goto unlock;
	}
	if (pmd_trans_huge(pmdval)) {
		found = true;
		goto unlock;
	}
	pte = pte_offset_map(pmd, vaddr);
	if (!pte)
		goto unlock;
	ptent = ptep_get(pte);
	pte_unmap(pte);
	if (pte_present(ptent)) {
		found = true;
	} else if (is_swap_pte(ptent) &&
		   is_migration_entry(pte_to_swp_entry(ptent))) {
		/* Rechecks under the page table lock. */
		migration_entry_wait(mm, pmd, vaddr);
		found = true;
	}
unlock:
	mmap_read_unlock(mm);
	return found;
}

/*
 * Ingest a record whose process still has users: by its physical address,
 * or else by looking its user address up in its mm.  The caller holds a
 * user reference on rec->mm.  -EAGAIN: the record waits for its fault.
 */
static int htmm_ingest_live(const struct htmm_record *rec, bool may_wait,
			    struct htmm_drain_stat *st)
{
	struct page *page;
	int err;

	if (rec->paddr) {
		st->paddr++;
		page = pfn_to_online_page(PHYS_PFN(rec->paddr));
		return page ? htmm_ingest_page(page, rec->kind, rec->src) :
			      -ENOENT;
	}
	page = htmm_mm_get_page(rec->mm, rec->vaddr, may_wait);
	if (page == ERR_PTR(-EAGAIN))
		return -EAGAIN;
	st->mm++;
	if (IS_ERR(page))
		return PTR_ERR(page);
	err = htmm_ingest_page(page, rec->kind, rec->src);
	folio_put(page_folio(page));
	return err;
}

/*
 * Ingest one record if its mm still has users, else drop it: the process
 * exited, its address means nothing in any other process, and its frames
 * may be another process's by now.  Releases the record's mm reference,
 * unless the record is to wait for its fault (-EAGAIN, only if @may_wait).
 */
static int htmm_ingest_record(const struct htmm_record *rec, bool may_wait,
			      struct htmm_drain_stat *st)
{
	struct mm_struct *mm = rec->mm;
	int err = -ESRCH;

	if (mmget_not_zero(mm)) {
		err = htmm_ingest_live(rec, may_wait, st);
		/* ksamplingd does not tear an address space down */
		mmput_async(mm);
	} else {
		st->exited++;
	}
	if (err == -EAGAIN)
		return err;
	mmdrop(mm);
	if (!err) {
		st->ok++;
	} else if (err != -ENODEV) {
		st->dropped++;
		atomic64_inc(&htmm_nr_dropped);
		count_vm_event(HTMM_NR_SAMPLES_DROPPED);
	}
	return 0;
}

/*
 * Publish what ingesting records did to @r, at once for the reader of
 * htmm_rings_show(): a record is on the ring, waits, or is counted as
 * resolved, never two or none of these.
 */
static void htmm_ring_commit(struct htmm_ring *r, struct htmm_drain_stat *st,
			     unsigned int tail, unsigned int nr_wait)
{
	preempt_disable();
	write_seqcount_begin(&r->seq);
	r->nr_paddr += st->paddr;
	r->nr_mm += st->mm;
	r->nr_exited += st->exited;
	r->nr_wait = nr_wait;
	/* The records are released: hand the slots back. */
	smp_store_release(&r->tail, tail);
	write_seqcount_end(&r->seq);
	preempt_enable();
	st->paddr = 0;
	st->mm = 0;
	st->exited = 0;
}

/*
 * Retry the records of @r that wait for their fault; keep those that still
 * do, unless no record may wait (!@wait).
 */
static void htmm_retry_waiting(struct htmm_ring *r, bool wait,
			       struct htmm_drain_stat *st)
{
	unsigned int i, n = 0;

	for (i = 0; i < r->nr_wait; i++) {
		struct htmm_wait *w = &r->wait[i];
		bool may_wait = wait &&
			time_before(jiffies, w->since + HTMM_FAULT_WAIT);

		if (htmm_ingest_record(&w->rec, may_wait, st))
			r->wait[n++] = *w;
	}
	htmm_ring_commit(r, st, r->tail, n);
}

/*
 * Take the record at @tail off @r.  A record whose fault is still under
 * way is set aside, and retried at each drain until the fault is over,
 * for HTMM_FAULT_WAIT at most (a fault that failed leaves the address as
 * it was).  The records behind it go on at once: a frame that a process
 * frees is credited to its next owner if a record of it outlives that,
 * so records must not be held up.  When HTMM_WAIT_SLOTS records wait, the
 * next one does not.
 */
static void htmm_take_record(struct htmm_ring *r, unsigned int tail,
			     bool wait, struct htmm_drain_stat *st)
{
	struct htmm_record rec = r->rec[tail % HTMM_RING_SIZE];
	unsigned int nr_wait = r->nr_wait;

	if (htmm_ingest_record(&rec, wait && rec.before_fault &&
			       nr_wait < HTMM_WAIT_SLOTS, st)) {
		r->wait[nr_wait].rec = rec;
		r->wait[nr_wait].since = jiffies;
		nr_wait++;
		r->nr_waited++;
	}
	htmm_ring_commit(r, st, tail + 1, nr_wait);
}

/*
 * Drain at most @budget records from all rings; return how many.  With
 * !@wait, also the records that wait for their fault, and none waits.
 */
static unsigned long htmm_drain_rings(unsigned long budget, bool wait)
{
	struct htmm_drain_stat st = {};
	unsigned long nr = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct htmm_ring *r = per_cpu_ptr(&htmm_rings, cpu);
		unsigned int tail = r->tail;
		/* Pairs with the producer's release: records up to @head are written. */
		unsigned int head = smp_load_acquire(&r->head);

		if (r->nr_wait)
			htmm_retry_waiting(r, wait, &st);
		for (; tail != head && nr < budget; tail++, nr++)
			htmm_take_record(r, tail, wait, &st);
		cond_resched();
	}
	if (nr)
		trace_htmm_sample_batch(HTMM_SRC_PEBS, nr, st.ok, st.dropped);
	return nr;
}

/* Empty the rings without ingesting; the source is not running. */
static void htmm_rings_reset(void)
{
	struct htmm_drain_stat st = {};
	unsigned int i;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct htmm_ring *r = per_cpu_ptr(&htmm_rings, cpu);
		unsigned int tail = r->tail;
		/* As in htmm_drain_rings(): records up to @head are written. */
		unsigned int head = smp_load_acquire(&r->head);

		for (; tail != head; tail++) {
			struct mm_struct *mm = r->rec[tail % HTMM_RING_SIZE].mm;

			if (mm)
				mmdrop(mm);
		}
		for (i = 0; i < r->nr_wait; i++)
			mmdrop(r->wait[i].rec.mm);
		htmm_ring_commit(r, &st, tail, 0);
	}
}

/*
 * Sample period ladder for the CPU quota control: level 0 is the
 * configured period, each level up multiplies it by about 1.5 and picks a
 * prime, so that periodic access patterns do not alias with the period.
 */
#define HTMM_NR_LEVELS	12

static unsigned int htmm_level;		/* written by ksamplingd only */
static unsigned int htmm_cur_period;	/* periods in force, for the stat */
static unsigned int htmm_cur_inst_period;
static unsigned int htmm_cpu_permille;	/* ksamplingd's CPU, last window */

static bool htmm_is_prime(unsigned long n)
{
	unsigned long d;

	if (n < 2)
		return false;
	for (d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return true;
}

/**
 * htmm_period_at - The sample period at a quota level.
 * @base: The configured period (level 0).
 * @level: The level.
 *
 * Return: @base at level 0, otherwise the first prime at or above
 * @base * 1.5^@level, capped at INT_MAX.
 */
unsigned int htmm_period_at(unsigned int base, unsigned int level)
{
	unsigned long p = base;

	if (!level)
		return base;
	while (level--)
		p = p + p / 2 + 1;
	if (p >= INT_MAX)
		return INT_MAX;
	while (!htmm_is_prime(p))
		p++;
	return p;
}

static const struct htmm_source_ops *htmm_src;	/* running source */
static bool htmm_src_running;
static unsigned long htmm_src_retry;	/* jiffies: next start attempt */
static struct task_struct *htmm_ksamplingd;
static DECLARE_WAIT_QUEUE_HEAD(htmm_ksamplingd_wait);

static void htmm_apply_periods(void)
{
	unsigned int load = htmm_period_at(READ_ONCE(htmm_params.sample_period),
					   htmm_level);
	unsigned int store = htmm_period_at(READ_ONCE(htmm_params.inst_sample_period),
					    htmm_level);

	/*
	 * Only a real change reaches the counters: perf_event_period()
	 * restarts the count, and a software event then overflows on its
	 * very next event, whatever the period.
	 */
	if (load == htmm_cur_period && store == htmm_cur_inst_period)
		return;
	htmm_cur_period = load;
	htmm_cur_inst_period = store;
	if (htmm_src_running && htmm_src->set_period)
		htmm_src->set_period(load, store);
}

/* Called by the tunables when a period changes. */
void htmm_sampler_periods_changed(void)
{
	wake_up(&htmm_ksamplingd_wait);
}

/* Is any htmm-enabled cgroup populated? */
static bool htmm_any_populated(void)
{
	struct htmm_memcg *hm;
	bool ret = false;

	spin_lock(&htmm_list_lock);
	list_for_each_entry(hm, &htmm_enabled_list, node) {
		if (cgroup_is_populated(hm->memcg->css.cgroup)) {
			ret = true;
			break;
		}
	}
	spin_unlock(&htmm_list_lock);
	return ret;
}

static void htmm_source_start(void)
{
	int err;

	WRITE_ONCE(htmm_level, 0);
	htmm_rings_reset();
	htmm_cur_period = READ_ONCE(htmm_params.sample_period);
	htmm_cur_inst_period = READ_ONCE(htmm_params.inst_sample_period);
	err = htmm_src->start(htmm_cur_period, htmm_cur_inst_period);
	if (err) {
		pr_warn_ratelimited("sample source %s failed to start: %d\n",
				    htmm_src->name, err);
		/* a partial start may have queued samples; retry in 1 s */
		htmm_rings_reset();
		htmm_src_retry = jiffies + HZ;
		return;
	}
	htmm_src_running = true;
}

static void htmm_source_stop(void)
{
	if (!htmm_src_running)
		return;
	htmm_src->stop();
	htmm_src_running = false;
	/* no record outlives the source, nor holds its mm until a restart */
	htmm_drain_rings(ULONG_MAX, false);
}

/* Step the sample period to keep ksamplingd under its CPU quota. */
static void htmm_quota_control(u64 runtime_ns, u64 wall_ns)
{
	unsigned int quota = READ_ONCE(htmm_params.cpu_quota);
	unsigned int permille = wall_ns ? div64_u64(runtime_ns * 1000, wall_ns) : 0;
	unsigned int level = htmm_level;

	WRITE_ONCE(htmm_cpu_permille, permille);
	if (!quota || (htmm_src_running && htmm_src->paced))
		level = 0;
	else if (permille > quota && level < HTMM_NR_LEVELS - 1)
		level++;
	else if (permille < quota / 2 && level > 0)
		level--;
	if (level != htmm_level) {
		WRITE_ONCE(htmm_level, level);
		htmm_apply_periods();
	}
}

#define HTMM_QUOTA_WINDOW_NS	(1000ULL * NSEC_PER_MSEC)
#define HTMM_DRAIN_BUDGET	4096

/* ksamplingd's CPU quota window: its start and run time then.  ksamplingd only. */
static u64 htmm_win_start, htmm_win_run;

/**
 * htmm_quota_window - Close ksamplingd's CPU quota window if it is over.
 *
 * Called by ksamplingd between ticks, and by a source from within a long
 * tick (the Accessed-bit scan), so that ksamplingd_cpu_permille tells the
 * last second also while a scan runs for many.
 *
 * Context: ksamplingd only.
 */
void htmm_quota_window(void)
{
	u64 now = ktime_get_ns(), run;

	if (now - htmm_win_start < HTMM_QUOTA_WINDOW_NS)
		return;
	run = task_sched_runtime(current);
	htmm_quota_control(run - htmm_win_run, now - htmm_win_start);
	htmm_win_start = now;
	htmm_win_run = run;
}

static int htmm_ksamplingd_fn(void *unused)
{
	unsigned int period = 0, inst_period = 0;

	htmm_win_start = ktime_get_ns();
	htmm_win_run = task_sched_runtime(current);
	while (!kthread_should_stop()) {
		bool populated = htmm_any_populated();

		if (populated && !htmm_src_running &&
		    time_after_eq(jiffies, htmm_src_retry))
			htmm_source_start();
		else if (!populated && htmm_src_running)
			htmm_source_stop();

		if (htmm_src_running) {
			if (period != READ_ONCE(htmm_params.sample_period) ||
			    inst_period != READ_ONCE(htmm_params.inst_sample_period)) {
				period = READ_ONCE(htmm_params.sample_period);
				inst_period = READ_ONCE(htmm_params.inst_sample_period);
				htmm_apply_periods();
			}
			htmm_drain_rings(HTMM_DRAIN_BUDGET, true);
			if (htmm_src->tick)
				htmm_src->tick();
		}
		htmm_quota_window();
		wait_event_interruptible_timeout(htmm_ksamplingd_wait,
						 kthread_should_stop(),
						 msecs_to_jiffies(populated ? 10 : 100));
	}
	htmm_source_stop();
	return 0;
}

static const struct htmm_source_ops *htmm_pick_source(void)
{
	switch (READ_ONCE(htmm_params.sampler)) {
	case HTMM_SAMPLER_PEBS:
		pr_info("sample source: pebs (selected by htmm_sampler)\n");
		return &htmm_perf_source;
	case HTMM_SAMPLER_ABIT:
		pr_info("sample source: abit (selected by htmm_sampler)\n");
		return &htmm_abit_source;
	case HTMM_SAMPLER_INJECT:
		pr_info("sample source: inject only (selected by htmm_sampler)\n");
		return &htmm_null_source;
	default:
		break;
	}
	if (htmm_perf_supported()) {
		pr_info("sample source: pebs (auto: the PMU has our PEBS events)\n");
		return &htmm_perf_source;
	}
	pr_info("sample source: abit (auto: %s)\n", htmm_perf_unsupported_reason());
	return &htmm_abit_source;
}

/**
 * htmm_sampler_check - Can the sample source htmm_sampler names run here?
 *
 * Called when htmm_sampler or htmm_perf_event was written, before anything
 * else changes: PEBS events on a CPU that has none of ours fail the write
 * rather than leave ksamplingd unable to start its source.
 *
 * Return: 0, or -EOPNOTSUPP if htmm_sampler and htmm_perf_event are both
 * pebs and the CPU has no PEBS events htmm knows.
 */
int htmm_sampler_check(void)
{
	if (READ_ONCE(htmm_params.sampler) != HTMM_SAMPLER_PEBS ||
	    READ_ONCE(htmm_params.perf_event) != HTMM_PERF_PEBS ||
	    htmm_perf_supported())
		return 0;
	pr_info_ratelimited("htmm_sampler pebs refused: %s\n",
			    htmm_perf_unsupported_reason());
	return -EOPNOTSUPP;
}

/**
 * htmm_sampler_start - Start ksamplingd.
 *
 * Context: Process context; caller holds htmm_lock.
 * Return: 0 or a negative error.
 */
int htmm_sampler_start(void)
{
	struct task_struct *t;

	lockdep_assert_held(&htmm_lock);
	if (htmm_ksamplingd)
		return 0;
	htmm_src = htmm_pick_source();
	htmm_src_running = false;
	htmm_src_retry = jiffies;
	t = kthread_run(htmm_ksamplingd_fn, NULL, "ksamplingd");
	if (IS_ERR(t))
		return PTR_ERR(t);
	htmm_ksamplingd = t;
	return 0;
}

/**
 * htmm_sampler_stop - Stop ksamplingd and its sample source.
 *
 * Returns once the thread has exited and the source released everything.
 *
 * Context: Process context; caller holds htmm_lock.
 */
void htmm_sampler_stop(void)
{
	lockdep_assert_held(&htmm_lock);
	if (!htmm_ksamplingd)
		return;
	kthread_stop(htmm_ksamplingd);
	htmm_ksamplingd = NULL;
	htmm_src = NULL;
}

/**
 * htmm_sampler_stat - Print the sampler's state in memory.htmm_stat.
 * @m: The file.
 */
void htmm_sampler_stat(struct seq_file *m)
{
	seq_printf(m, "samples_dropped %lld\n", atomic64_read(&htmm_nr_dropped));
	seq_printf(m, "sample_period %u\n", READ_ONCE(htmm_cur_period));
	seq_printf(m, "inst_sample_period %u\n", READ_ONCE(htmm_cur_inst_period));
	seq_printf(m, "ksamplingd_cpu_permille %u\n", READ_ONCE(htmm_cpu_permille));
	seq_printf(m, "sampler_level %u\n", READ_ONCE(htmm_level));
	seq_printf(m, "ksamplingd_running %d\n", !!READ_ONCE(htmm_ksamplingd));
	htmm_abit_stat(m);
}

static int htmm_null_start(unsigned int period, unsigned int inst_period)
{
	return 0;
}

static void htmm_null_stop(void)
{
}

const struct htmm_source_ops htmm_null_source = {
	.name = "inject",
	.start = htmm_null_start,
	.stop = htmm_null_stop,
};
