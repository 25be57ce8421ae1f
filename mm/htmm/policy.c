// SPDX-License-Identifier: GPL-2.0-only
/*
 * htmm policy core.  See policy.h: pure C, shared with the host tests.
 */
#include "policy.h"

/**
 * htmm_units - Access density of a page in histogram units.
 * @count: Samples on the page.
 * @nr_pages: Base pages the page covers (1, or 512 for a PMD THP).
 *
 * Return: @count * HTMM_UNIT_SCALE / @nr_pages; 0 for an empty page.
 */
u64 htmm_units(u32 count, u32 nr_pages)
{
	if (!nr_pages)
		return 0;
	return (u64)count * HTMM_UNIT_SCALE / nr_pages;
}

/**
 * htmm_bin - Histogram bin of a density.
 * @units: Density from htmm_units().
 *
 * Return: floor(log2(@units + 1)), at most HTMM_NR_BINS - 1.
 */
unsigned int htmm_bin(u64 units)
{
	unsigned int bin = 0;

	if (units >= (1ULL << HTMM_NR_BINS) - 1)
		return HTMM_NR_BINS - 1;
	units++;
	while (units >>= 1)
		bin++;
	return bin;
}

/**
 * htmm_count_add - Add samples to a counter, saturating.
 * @count: The counter.
 * @n: Samples to add.
 *
 * Return: The new value, at most HTMM_COUNT_MAX.
 */
u32 htmm_count_add(u32 count, u32 n)
{
	return n > HTMM_COUNT_MAX - count ? HTMM_COUNT_MAX : count + n;
}

/**
 * htmm_count_cool - Apply coolings that a counter missed.
 * @count: The counter.
 * @epochs: Coolings since it was last brought up to date.
 *
 * Every cooling halves the count.
 *
 * Return: The cooled value.
 */
u32 htmm_count_cool(u32 count, unsigned int epochs)
{
	return epochs >= 32 ? 0 : count >> epochs;
}

/**
 * htmm_bin_cool - Where a histogram cooling moved a bin.
 * @bin: The bin a page was accounted in.
 * @epochs: Coolings since then.
 *
 * Each cooling moves every page one bin down (bin 0 stays), matching
 * htmm_hist_cool().
 *
 * Return: The bin the page is accounted in now.
 */
unsigned int htmm_bin_cool(unsigned int bin, unsigned int epochs)
{
	return bin > epochs ? bin - epochs : 0;
}

/**
 * htmm_hist_add - Account pages in a bin.
 * @h: The histogram.
 * @bin: The bin.
 * @nr_pages: Base pages to add.
 */
void htmm_hist_add(struct htmm_hist *h, unsigned int bin, u64 nr_pages)
{
	if (bin >= HTMM_NR_BINS)
		bin = HTMM_NR_BINS - 1;
	h->nr_pages[bin] += nr_pages;
}

/**
 * htmm_hist_sub - Remove pages from a bin.
 * @h: The histogram.
 * @bin: The bin.
 * @nr_pages: Base pages to remove.
 *
 * Return: false if the bin held fewer pages (it is then emptied), which
 * means the caller's accounting is inconsistent.
 */
bool htmm_hist_sub(struct htmm_hist *h, unsigned int bin, u64 nr_pages)
{
	if (bin >= HTMM_NR_BINS)
		bin = HTMM_NR_BINS - 1;
	if (h->nr_pages[bin] < nr_pages) {
		h->nr_pages[bin] = 0;
		return false;
	}
	h->nr_pages[bin] -= nr_pages;
	return true;
}

/**
 * htmm_hist_cool - Cool a histogram.
 * @h: The histogram.
 * @epochs: Number of coolings.
 *
 * Halving every count moves every page one bin down; bin 0 keeps its
 * pages.  Pages are not lost.
 */
void htmm_hist_cool(struct htmm_hist *h, unsigned int epochs)
{
	unsigned int b;

	while (epochs--) {
		h->nr_pages[0] += h->nr_pages[1];
		for (b = 1; b < HTMM_NR_BINS - 1; b++)
			h->nr_pages[b] = h->nr_pages[b + 1];
		h->nr_pages[HTMM_NR_BINS - 1] = 0;
	}
}

/**
 * htmm_hist_total - Pages in a histogram.
 * @h: The histogram.
 *
 * Return: The sum of all bins.
 */
u64 htmm_hist_total(const struct htmm_hist *h)
{
	u64 sum = 0;
	unsigned int b;

	for (b = 0; b < HTMM_NR_BINS; b++)
		sum += h->nr_pages[b];
	return sum;
}

/**
 * htmm_thresholds - Derive the hot and warm bins from a histogram.
 * @h: The cgroup's histogram.
 * @capacity: Fast-tier pages available to the cgroup (budget minus the
 *	promotion watermark).
 * @floor: The lowest bin that may be hot (htmm_thres_hot).
 * @nowarm: Do not keep a warm set.
 * @t: Result.
 *
 * Walk the bins from the hottest down, taking whole bins while their pages
 * fit in @capacity.  The last bin taken is the hot threshold, but never
 * below @floor.  If the hot set fills less than 75% of @capacity, the bin
 * below it is warm (kept in the fast tier but not promoted into it).
 * Empty bins cost nothing and are taken as they come, so the threshold may
 * sit on an empty bin just above the first bin that does not fit: every
 * page at or above it fits.  If the top bin itself does not fit, nothing
 * is hot (HTMM_BIN_NONE).
 */
void htmm_thresholds(const struct htmm_hist *h, u64 capacity,
		     unsigned int floor, bool nowarm,
		     struct htmm_thresholds *t)
{
	unsigned int b = HTMM_NR_BINS, hot = HTMM_BIN_NONE;
	u64 sum = 0;

	if (floor >= HTMM_NR_BINS)
		floor = HTMM_NR_BINS - 1;
	while (b-- > 0) {
		if (h->nr_pages[b] > capacity - sum)
			break;
		sum += h->nr_pages[b];
		hot = b;
	}
	if (hot != HTMM_BIN_NONE && hot < floor) {
		hot = floor;
		sum = 0;
		for (b = hot; b < HTMM_NR_BINS; b++)
			sum += h->nr_pages[b];
	}
	t->hot = hot;
	t->hot_pages = sum;
	t->warm = hot;
	if (!nowarm && hot != HTMM_BIN_NONE && hot > 0 &&
	    sum < capacity - capacity / 4)
		t->warm = hot - 1;
}
