// SPDX-License-Identifier: GPL-2.0-only
/*
 * htmm policy core.  See policy.h: pure C, shared with the host tests.
 */
#include "policy.h"

#ifdef __KERNEL__
#include <linux/math64.h>
#endif

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
 *
 * The first bin that does not fit, if it is not below @floor, is the fill
 * bin when the hot set fills less than 75% of @capacity: its pages are
 * promoted into room that would otherwise stay unused, without making
 * room for them (a set of huge pages of one density larger than the
 * budget would otherwise never move up).  Else the fill bin is
 * HTMM_BIN_NONE.
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
	t->fill = HTMM_BIN_NONE;
	if (b < HTMM_NR_BINS && b >= floor && sum < capacity - capacity / 4)
		t->fill = b;
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

/* a / b; the kernel needs div64_u64() on 32-bit machines. */
static u64 htmm_div(u64 a, u64 b)
{
#ifdef __KERNEL__
	return div64_u64(a, b);
#else
	return a / b;
#endif
}

/* Typical density (units) of a page in @bin: the middle of its range. */
static u64 htmm_bin_weight(unsigned int bin)
{
	return bin ? (3ULL << bin) / 2 - 1 : 0;
}

/**
 * htmm_hit_permille - Share of accesses the fast tier would serve.
 * @h: The histogram.
 * @capacity: Pages the fast tier holds.
 *
 * The densest pages are placed in the fast tier first, whole bins while
 * they fit and then part of the next one; a page weighs the typical
 * density of its bin.  Comparing the split histogram with the folio one
 * tells how much splitting huge pages would gain.
 *
 * Return: The share in per mille; 0 for a histogram without samples.
 */
u32 htmm_hit_permille(const struct htmm_hist *h, u64 capacity)
{
	u64 hit = 0, total = 0, left = capacity, take;
	unsigned int b = HTMM_NR_BINS;

	while (b-- > 0) {
		take = h->nr_pages[b] < left ? h->nr_pages[b] : left;
		hit += take * htmm_bin_weight(b);
		total += h->nr_pages[b] * htmm_bin_weight(b);
		left -= take;
	}
	return total ? (u32)htmm_div(hit * 1000, total) : 0;
}

/* floor(sqrt(@x)), bit by bit. */
static u64 htmm_isqrt(u64 x)
{
	u64 root = 0, bit = 1ULL << 62;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= root + bit) {
			x -= root + bit;
			root = (root >> 1) + bit;
		} else {
			root >>= 1;
		}
		bit >>= 2;
	}
	return root;
}

/* Colliding sample pairs a skew class needs beyond the noise. */
#define HTMM_SKEW_SLACK	3

/**
 * htmm_skew_class - How concentrated the accesses of a huge page are.
 * @n: Samples on the huge page (the sum of its subpage counts).
 * @sumsq: The sum of the squares of its subpage counts.
 * @nr: Its number of subpages.
 *
 * (sumsq - n) / 2 counts the pairs of samples that fell on the same
 * subpage, and nr * (sumsq - n) / (n * (n - 1)) estimates nr times the sum
 * of the squared access probabilities of the subpages: about 1 when every
 * subpage is accessed alike, @nr when one subpage takes all accesses.  A
 * few samples on a uniform huge page may collide by chance, so the pairs
 * are first lowered by three standard deviations (three times their square
 * root, as for a Poisson count) and HTMM_SKEW_SLACK: the class is a lower
 * bound.  Callers keep @n below 2^25.
 *
 * Return: 0 when the samples cannot tell the huge page from a uniform one
 * or when the bound is below 1, else the bound's log2 plus one: up to
 * log2(@nr) for all samples on one subpage.
 */
unsigned int htmm_skew_class(u64 n, u64 sumsq, unsigned int nr)
{
	u64 pairs, noise, ratio;
	unsigned int class = 0;

	if (n < 2 || sumsq <= n)
		return 0;
	pairs = (sumsq - n) / 2;
	noise = 3 * htmm_isqrt(pairs) + HTMM_SKEW_SLACK;
	if (pairs <= noise)
		return 0;
	ratio = htmm_div((u64)nr * 2 * (pairs - noise), n * (n - 1));
	while (ratio) {
		class++;
		ratio >>= 1;
	}
	return class;
}

/**
 * htmm_skew_stale - Whether a huge page's skew class must be computed again.
 * @then: Samples on the huge page when its class was computed, cooled
 *	since by the same coolings as @now.
 * @now: Samples on it now.
 *
 * Computing the class reads the count of every subpage.  Coolings halve
 * the counts alike and leave the ratio the class estimates about where it
 * was; new samples add evidence, and after a quarter more of them the
 * class may have moved.
 *
 * Return: true once @now exceeds @then by more than a quarter of @then.
 */
bool htmm_skew_stale(u32 then, u32 now)
{
	return now > (u64)then + then / 4;
}

/**
 * htmm_split_count - How many skewed huge pages to split in one round.
 * @nr_skewed: Huge pages whose skew class allows a split.
 * @gap_permille: Hit share with base pages minus hit share now.
 * @gamma: Aggressiveness, in tenths.
 * @fast_ns: Access latency of the fast tier.
 * @slow_ns: Access latency of the slow tier.
 *
 * The fraction split is gap * gamma * (slow - fast) / fast, at most all.
 *
 * Return: The number, rounded up; 0 without a gap or a latency gap.
 */
u64 htmm_split_count(u64 nr_skewed, int gap_permille, unsigned int gamma,
		     u32 fast_ns, u32 slow_ns)
{
	u64 num, den;

	if (gap_permille <= 0 || !gamma || !fast_ns || slow_ns <= fast_ns)
		return 0;
	num = (u64)gap_permille * gamma * (slow_ns - fast_ns);
	den = 1000ULL * 10 * fast_ns;
	if (num >= den)
		return nr_skewed;
	return htmm_div(nr_skewed * num + den - 1, den);
}
