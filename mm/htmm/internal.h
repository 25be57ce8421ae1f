/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * htmm internal definitions shared by the files in mm/htmm/.
 */
#ifndef _MM_HTMM_INTERNAL_H
#define _MM_HTMM_INTERNAL_H

#include <linux/atomic.h>
#include <linux/gfp_types.h>
#include <linux/memcontrol.h>
#include <linux/mutex.h>
#include <linux/types.h>

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
};

enum htmm_mode {
	HTMM_MODE_NO_MIGRATION = 0,	/* sample and classify only */
	HTMM_MODE_BASE = 1,		/* migrate, huge pages stay whole */
	HTMM_MODE_HUGEPAGE = 2,		/* migrate and split skewed THPs */
	HTMM_MODE_MAX = HTMM_MODE_HUGEPAGE,
};

extern struct htmm_params htmm_params;

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

int htmm_memcg_set_enabled(struct mem_cgroup *memcg, bool enable);

int htmm_parse_uint(const char *buf, unsigned int min, unsigned int max,
		    unsigned int *res);
bool htmm_over_limit(unsigned long usage, unsigned long nr,
		     unsigned long limit);
int htmm_pick_node(int nid, gfp_t gfp,
		   bool (*full)(int nid, void *arg), void *arg);
unsigned long htmm_memcg_node_pages(struct mem_cgroup *memcg, int nid);

int __init htmm_sysfs_init(void);
int __init htmm_memcg_init(void);

#endif /* _MM_HTMM_INTERNAL_H */
