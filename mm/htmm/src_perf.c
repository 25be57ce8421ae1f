// SPDX-License-Identifier: GPL-2.0-only
/*
 * The perf sample source: Intel PEBS, or a software event for testing.
 *
 * One kernel counter per event on every online CPU, following CPU
 * hotplug.  The overflow handler, which runs in NMI context for PEBS,
 * queues the sample on this CPU's ring with its physical address, or
 * else with a reference on the sampled mm (see htmm_perf_overflow()).
 *
 * With htmm_perf_event=sw-page-faults the same code counts the software
 * page-fault events, which carry the faulting address: this exercises the
 * counters, the handler, the rings, period changes and hotplug on machines
 * without PEBS, such as most virtual machines.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#ifdef CONFIG_X86
#include <asm/cpu_device_id.h>
#include <asm/intel-family.h>
#endif

#include "internal.h"

enum htmm_pev {
	HTMM_PEV_LOAD_FAST,
	HTMM_PEV_LOAD_SLOW,
	HTMM_PEV_LOAD_SLOW2,
	HTMM_PEV_STORE,
	HTMM_NR_PEV,
};

struct htmm_pev_desc {
	u32 type;
	u64 config;		/* 0: event not used on this model */
	enum htmm_kind kind;
	bool store_period;	/* uses htmm_inst_sample_period */
	/*
	 * Fires before the access is resolved (the software PAGE_FAULTS
	 * event): the page mapped at the address then is not the one
	 * accessed, a CoW fault replaces it, so records carry no physical
	 * address and ksamplingd finds the page in the mm afterwards.
	 */
	bool before_fault;
};

/*
 * PEBS events by CPU model (raw encoding umask << 8 | event):
 *   MEM_LOAD_L3_MISS_RETIRED.LOCAL_DRAM   0x01d3  fast tier loads
 *   MEM_LOAD_L3_MISS_RETIRED.REMOTE_DRAM  0x02d3  remote socket / CXL
 *   MEM_LOAD_RETIRED.LOCAL_PMM            0x80d1  persistent memory
 *   MEM_INST_RETIRED.ALL_STORES           0x82d0  all stores
 * None of them takes a load-latency threshold.  scripts/check-pebs-events.py
 * checks this table against the kernel's tools/perf/pmu-events/arch/x86/.
 * Skylake-SP (steppings 0-4) has no persistent memory event, Cascade Lake
 * (5-15) and Sapphire Rapids have one, Emerald Rapids has none.
 */
struct htmm_pebs_model {
	const char *name;
	u64 events[HTMM_NR_PEV];
};

static const struct htmm_pebs_model htmm_pebs_skx = {
	"Skylake-SP", { 0x01d3, 0x02d3, 0, 0x82d0 } };
static const struct htmm_pebs_model htmm_pebs_clx = {
	"Cascade Lake", { 0x01d3, 0x02d3, 0x80d1, 0x82d0 } };
static const struct htmm_pebs_model htmm_pebs_icx = {
	"Ice Lake-SP", { 0x01d3, 0x02d3, 0x80d1, 0x82d0 } };
static const struct htmm_pebs_model htmm_pebs_spr = {
	"Sapphire Rapids", { 0x01d3, 0x02d3, 0x80d1, 0x82d0 } };
static const struct htmm_pebs_model htmm_pebs_emr = {
	"Emerald Rapids", { 0x01d3, 0x02d3, 0, 0x82d0 } };

#ifdef CONFIG_X86
static const struct x86_cpu_id htmm_pebs_cpus[] = {
	X86_MATCH_VFM_STEPPINGS(INTEL_SKYLAKE_X, X86_STEPPINGS(0x0, 0x4),
				&htmm_pebs_skx),
	X86_MATCH_VFM_STEPPINGS(INTEL_SKYLAKE_X, X86_STEPPINGS(0x5, 0xf),
				&htmm_pebs_clx),
	X86_MATCH_VFM(INTEL_ICELAKE_X, &htmm_pebs_icx),
	X86_MATCH_VFM(INTEL_SAPPHIRERAPIDS_X, &htmm_pebs_spr),
	X86_MATCH_VFM(INTEL_EMERALDRAPIDS_X, &htmm_pebs_emr),
	{}
};
#endif

static const struct htmm_pebs_model *htmm_pebs_model(void)
{
#ifdef CONFIG_X86
	const struct x86_cpu_id *id = x86_match_cpu(htmm_pebs_cpus);

	if (id && boot_cpu_has(X86_FEATURE_DS))
		return (const struct htmm_pebs_model *)id->driver_data;
#endif
	return NULL;
}

bool htmm_perf_supported(void)
{
	return !!htmm_pebs_model();
}

const char *htmm_perf_unsupported_reason(void)
{
#ifdef CONFIG_X86
	if (!x86_match_cpu(htmm_pebs_cpus))
		return "no PEBS event table for this CPU model";
	return "the CPU does not expose PEBS (virtual machine?)";
#else
	return "PEBS needs an x86 CPU";
#endif
}

/* The events in use; fixed while the source runs (htmm_lock). */
static struct htmm_pev_desc htmm_pevs[HTMM_NR_PEV];
static DEFINE_PER_CPU(struct perf_event *, htmm_events[HTMM_NR_PEV]);
static unsigned int htmm_period, htmm_inst_period;
static enum cpuhp_state htmm_cpuhp_state;
/* Serialises period changes against CPU hotplug callbacks. */
static DEFINE_MUTEX(htmm_perf_mutex);
static atomic_t htmm_perf_nr_events = ATOMIC_INIT(0);

/*
 * The physical address of a user address of current, the way
 * perf_virt_to_phys() finds it for perf's own records: lockless and with
 * interrupts off, so safe in NMI.  0 if the page is not mapped (yet).
 */
static u64 htmm_perf_phys(unsigned long vaddr)
{
	struct page *page;
	u64 paddr = 0;

	pagefault_disable();
	if (get_user_page_fast_only(vaddr, 0, &page)) {
		paddr = page_to_phys(page) + offset_in_page(vaddr);
		put_page(page);
	}
	pagefault_enable();
	return paddr;
}

/*
 * The overflow handler: any context including NMI, on the CPU of the
 * sampled task, which is current.  perf_prepare_sample() does not run for
 * a counter with its own handler, so data->phys_addr is only there if the
 * PMU driver filled it; otherwise the handler resolves it, except for the
 * software page-fault event, which fires before the fault is handled:
 * the page is not mapped yet, or it is the shared page a CoW fault is
 * about to replace, which another process may free and a third reuse
 * before ksamplingd runs.  Every record carries a reference on current->mm,
 * taken with mmgrab() (an atomic increment): ksamplingd drops the record
 * if the mm has no user left, and looks a record without a physical
 * address up in that mm.  A pid is never used: by the time ksamplingd
 * runs, it may name another process.
 */
static void htmm_perf_overflow(struct perf_event *event,
			       struct perf_sample_data *data,
			       struct pt_regs *regs)
{
	struct htmm_pev_desc *d = event->overflow_handler_context;
	struct htmm_record rec = { .kind = d->kind, .src = HTMM_SRC_PEBS };

	if (!(data->sample_flags & PERF_SAMPLE_ADDR) || !is_user_task(current))
		return;
	rec.vaddr = data->addr;
	if (!rec.vaddr || rec.vaddr >= TASK_SIZE)
		return;
	if (data->sample_flags & PERF_SAMPLE_PHYS_ADDR)
		rec.paddr = data->phys_addr;
	rec.before_fault = d->before_fault;
	if (!rec.paddr && !d->before_fault)
		rec.paddr = htmm_perf_phys(rec.vaddr);
	/*
	 * Every record holds its mm, also one with a physical address: when
	 * the process exits before ksamplingd takes the record off, its
	 * frames may already belong to another process, and the record is
	 * dropped instead of credited to it.
	 */
	rec.mm = current->mm;
	mmgrab(rec.mm);
	/*
	 * current holds a user reference on its mm, hence on mm_count: this
	 * mmdrop() never frees the mm, so it is safe here too.
	 */
	if (!htmm_ring_push(&rec) && rec.mm)
		mmdrop(rec.mm);
}

static int htmm_perf_cpu_online(unsigned int cpu)
{
	struct perf_event_attr attr;
	struct perf_event *ev;
	int i;

	mutex_lock(&htmm_perf_mutex);
	for (i = 0; i < HTMM_NR_PEV; i++) {
		struct htmm_pev_desc *d = &htmm_pevs[i];

		if (!d->config && d->type != PERF_TYPE_SOFTWARE)
			continue;
		if (d->type == PERF_TYPE_SOFTWARE && i != HTMM_PEV_LOAD_FAST &&
		    i != HTMM_PEV_STORE)
			continue;
		memset(&attr, 0, sizeof(attr));
		attr.type = d->type;
		attr.size = sizeof(attr);
		attr.config = d->config;
		attr.sample_period = d->store_period ? htmm_inst_period : htmm_period;
		attr.sample_type = PERF_SAMPLE_ADDR | PERF_SAMPLE_PHYS_ADDR;
		attr.exclude_kernel = 1;
		attr.exclude_hv = 1;
		attr.precise_ip = d->type == PERF_TYPE_RAW ? 3 : 0;
		ev = perf_event_create_kernel_counter(&attr, cpu, NULL,
						      htmm_perf_overflow, d);
		if (IS_ERR(ev)) {
			pr_warn_ratelimited("cpu %u: perf event %d: %ld\n",
					    cpu, i, PTR_ERR(ev));
			continue;
		}
		per_cpu(htmm_events[i], cpu) = ev;
		atomic_inc(&htmm_perf_nr_events);
	}
	mutex_unlock(&htmm_perf_mutex);
	return 0;
}

static int htmm_perf_cpu_offline(unsigned int cpu)
{
	int i;

	mutex_lock(&htmm_perf_mutex);
	for (i = 0; i < HTMM_NR_PEV; i++) {
		struct perf_event *ev = per_cpu(htmm_events[i], cpu);

		if (!ev)
			continue;
		per_cpu(htmm_events[i], cpu) = NULL;
		perf_event_release_kernel(ev);
		atomic_dec(&htmm_perf_nr_events);
	}
	mutex_unlock(&htmm_perf_mutex);
	return 0;
}

static int htmm_perf_start(unsigned int period, unsigned int inst_period)
{
	const struct htmm_pebs_model *model = htmm_pebs_model();
	bool sw = READ_ONCE(htmm_params.perf_event) == HTMM_PERF_SW;
	int i, ret;

	memset(htmm_pevs, 0, sizeof(htmm_pevs));
	for (i = 0; i < HTMM_NR_PEV; i++) {
		htmm_pevs[i].kind = i == HTMM_PEV_LOAD_FAST ? HTMM_LOAD_FAST :
				    i == HTMM_PEV_STORE ? HTMM_STORE : HTMM_LOAD_SLOW;
		htmm_pevs[i].store_period = i == HTMM_PEV_STORE;
		if (sw) {
			htmm_pevs[i].type = PERF_TYPE_SOFTWARE;
			htmm_pevs[i].config = i == HTMM_PEV_STORE ?
				PERF_COUNT_SW_PAGE_FAULTS_MIN :
				PERF_COUNT_SW_PAGE_FAULTS;
			htmm_pevs[i].before_fault = i != HTMM_PEV_STORE;
		} else if (model) {
			htmm_pevs[i].type = PERF_TYPE_RAW;
			htmm_pevs[i].config = model->events[i];
		}
	}
	if (!sw && !model)
		return -EOPNOTSUPP;
	if (sw)
		pr_info("perf source: software page-fault events (test mode)\n");
	else
		pr_info("perf source: PEBS events for %s\n", model->name);

	htmm_period = period;
	htmm_inst_period = inst_period;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "mm/htmm:perf",
				htmm_perf_cpu_online, htmm_perf_cpu_offline);
	if (ret < 0)
		return ret;
	htmm_cpuhp_state = ret;
	if (!atomic_read(&htmm_perf_nr_events)) {
		cpuhp_remove_state(htmm_cpuhp_state);
		return -ENODEV;
	}
	return 0;
}

static void htmm_perf_stop(void)
{
	cpuhp_remove_state(htmm_cpuhp_state);
	WARN_ON_ONCE(atomic_read(&htmm_perf_nr_events));
}

static void htmm_perf_set_period(unsigned int period, unsigned int inst_period)
{
	int cpu, i;

	cpus_read_lock();
	mutex_lock(&htmm_perf_mutex);
	htmm_period = period;
	htmm_inst_period = inst_period;
	for_each_online_cpu(cpu) {
		for (i = 0; i < HTMM_NR_PEV; i++) {
			struct perf_event *ev = per_cpu(htmm_events[i], cpu);

			if (ev)
				perf_event_period(ev, htmm_pevs[i].store_period ?
						  inst_period : period);
		}
	}
	mutex_unlock(&htmm_perf_mutex);
	cpus_read_unlock();
}

/**
 * htmm_perf_nr_counters - Perf counters currently allocated by htmm.
 *
 * Return: The number of live counters, for tests and the stat file.
 */
int htmm_perf_nr_counters(void)
{
	return atomic_read(&htmm_perf_nr_events);
}

const struct htmm_source_ops htmm_perf_source = {
	.name = "pebs",
	.start = htmm_perf_start,
	.stop = htmm_perf_stop,
	.set_period = htmm_perf_set_period,
};
