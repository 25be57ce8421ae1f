/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * htmm policy core: access-density histograms, hot/warm thresholds and
 * cooling arithmetic.
 *
 * Pure C with no kernel dependency beyond fixed-width types, so that the
 * same file is compiled into the kernel, into a host library with its own
 * unit tests (tools/htmm/policy/) and into simulators.  No locking here:
 * callers serialise access to the structures they pass in.
 */
#ifndef _MM_HTMM_POLICY_H
#define _MM_HTMM_POLICY_H

/* On the host, tools/htmm/policy/include provides this header. */
#include <linux/types.h>

#define HTMM_NR_BINS		16
/* No bin: nothing is hot (the fast tier has no room at all). */
#define HTMM_BIN_NONE		HTMM_NR_BINS
/*
 * Density scale: a sample on a base page weighs HTMM_UNIT_SCALE units, a
 * sample on a huge page of HTMM_UNIT_SCALE base pages weighs one, so both
 * are compared as samples per byte.
 */
#define HTMM_UNIT_SCALE		512U
#define HTMM_COUNT_MAX		0xffffffffU
/* Unit of the per-page migration times. */
#define HTMM_MTIME_MS		100U

/**
 * htmm_epoch_delta - Coolings from one cooling epoch to a later one.
 * @now: The later epoch (the cgroup's).
 * @then: The earlier one (a page's).
 *
 * Epochs are u32 counters that wrap; the difference modulo 2^32 is right
 * as long as the two are less than 2^32 coolings apart.
 *
 * Return: @now - @then.
 */
static inline unsigned int htmm_epoch_delta(u32 now, u32 then)
{
	return (u32)(now - then);
}

/**
 * htmm_mtime_age_ms - Milliseconds from one migration time to a later one.
 * @now: The later time, in HTMM_MTIME_MS units.
 * @then: The earlier one, in the same units.
 *
 * Times are u32 counters that wrap; the difference modulo 2^32 is right as
 * long as the two are less than 2^32 units (13.6 years) apart.
 *
 * Return: The age in milliseconds, at most 0xffffffff (49.7 days).
 */
static inline u32 htmm_mtime_age_ms(u32 now, u32 then)
{
	u64 ms = (u64)(u32)(now - then) * HTMM_MTIME_MS;

	return ms > 0xffffffffU ? 0xffffffffU : (u32)ms;
}

/* Number of 4 KiB pages per bin. */
struct htmm_hist {
	u64 nr_pages[HTMM_NR_BINS];
};

struct htmm_thresholds {
	unsigned int hot;	/* lowest hot bin, or HTMM_BIN_NONE */
	unsigned int warm;	/* lowest warm bin (== hot when no warm set) */
	unsigned int fill;	/* bin promoted into spare room, or NONE */
	u64 hot_pages;		/* pages in bins >= hot */
};

u64 htmm_units(u32 count, u32 nr_pages);
unsigned int htmm_bin(u64 units);
u32 htmm_count_add(u32 count, u32 n);
u32 htmm_count_cool(u32 count, unsigned int epochs);
unsigned int htmm_bin_cool(unsigned int bin, unsigned int epochs);
void htmm_hist_add(struct htmm_hist *h, unsigned int bin, u64 nr_pages);
bool htmm_hist_sub(struct htmm_hist *h, unsigned int bin, u64 nr_pages);
void htmm_hist_cool(struct htmm_hist *h, unsigned int epochs);
u64 htmm_hist_total(const struct htmm_hist *h);
void htmm_thresholds(const struct htmm_hist *h, u64 capacity,
		     unsigned int floor, bool nowarm,
		     struct htmm_thresholds *t);
u32 htmm_hit_permille(const struct htmm_hist *h, u64 capacity);
unsigned int htmm_skew_class(u64 n, u64 sumsq, unsigned int nr);
bool htmm_skew_stale(u32 then, u32 now);
u64 htmm_split_count(u64 nr_skewed, int gap_permille, unsigned int gamma,
		     u32 fast_ns, u32 slow_ns);

#endif /* _MM_HTMM_POLICY_H */
