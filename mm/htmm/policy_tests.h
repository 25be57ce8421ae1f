/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Test cases of the htmm policy core, shared by KUnit (htmm_kunit.c) and
 * the host tests (tools/htmm/policy/).  The includer defines:
 *   struct htmm_ptest            its test context
 *   PT_EXPECT(t, cond)           record a failure when cond is false
 *   PT_EXPECT_EQ(t, a, b)        the same for a == b (integers)
 * and gets htmm_policy_cases[], a NULL-terminated table.
 */
#ifndef _MM_HTMM_POLICY_TESTS_H
#define _MM_HTMM_POLICY_TESTS_H

#include "policy.h"

static void pt_bin_edges(struct htmm_ptest *t)
{
	PT_EXPECT_EQ(t, htmm_bin(0), 0);
	PT_EXPECT_EQ(t, htmm_bin(1), 1);
	PT_EXPECT_EQ(t, htmm_bin(2), 1);
	PT_EXPECT_EQ(t, htmm_bin(3), 2);
	PT_EXPECT_EQ(t, htmm_bin(6), 2);
	PT_EXPECT_EQ(t, htmm_bin(7), 3);
	PT_EXPECT_EQ(t, htmm_bin((1ULL << 15) - 2), 14);
	PT_EXPECT_EQ(t, htmm_bin((1ULL << 15) - 1), 15);
	PT_EXPECT_EQ(t, htmm_bin((1ULL << 16) - 1), 15);
	PT_EXPECT_EQ(t, htmm_bin(~0ULL), 15);
}

static void pt_units_one_scale(struct htmm_ptest *t)
{
	/* One sample on a base page weighs as much as 512 on a huge page. */
	PT_EXPECT_EQ(t, htmm_units(1, 1), htmm_units(512, 512));
	PT_EXPECT_EQ(t, htmm_units(1, 512), 1);
	PT_EXPECT_EQ(t, htmm_units(0, 1), 0);
	PT_EXPECT_EQ(t, htmm_units(5, 0), 0);
	PT_EXPECT_EQ(t, htmm_units(HTMM_COUNT_MAX, 1),
		     (u64)HTMM_COUNT_MAX * HTMM_UNIT_SCALE);
	PT_EXPECT_EQ(t, htmm_bin(htmm_units(1, 1)), 9);
}

static void pt_count_saturates(struct htmm_ptest *t)
{
	PT_EXPECT_EQ(t, htmm_count_add(1, 2), 3);
	PT_EXPECT_EQ(t, htmm_count_add(HTMM_COUNT_MAX - 1, 1), HTMM_COUNT_MAX);
	PT_EXPECT_EQ(t, htmm_count_add(HTMM_COUNT_MAX - 1, 5), HTMM_COUNT_MAX);
	PT_EXPECT_EQ(t, htmm_count_add(HTMM_COUNT_MAX, HTMM_COUNT_MAX),
		     HTMM_COUNT_MAX);
}

static void pt_cooling_arithmetic(struct htmm_ptest *t)
{
	struct htmm_hist h = { { 0 } };
	unsigned int b;

	PT_EXPECT_EQ(t, htmm_count_cool(100, 0), 100);
	PT_EXPECT_EQ(t, htmm_count_cool(100, 1), 50);
	PT_EXPECT_EQ(t, htmm_count_cool(101, 1), 50);
	PT_EXPECT_EQ(t, htmm_count_cool(100, 3), 12);
	PT_EXPECT_EQ(t, htmm_count_cool(HTMM_COUNT_MAX, 31), 1);
	PT_EXPECT_EQ(t, htmm_count_cool(HTMM_COUNT_MAX, 32), 0);
	PT_EXPECT_EQ(t, htmm_count_cool(HTMM_COUNT_MAX, 1000), 0);
	PT_EXPECT_EQ(t, htmm_bin_cool(5, 2), 3);
	PT_EXPECT_EQ(t, htmm_bin_cool(1, 3), 0);

	for (b = 0; b < HTMM_NR_BINS; b++)
		h.nr_pages[b] = b + 1;
	htmm_hist_cool(&h, 1);
	PT_EXPECT_EQ(t, h.nr_pages[0], 1 + 2);
	PT_EXPECT_EQ(t, h.nr_pages[1], 3);
	PT_EXPECT_EQ(t, h.nr_pages[14], 16);
	PT_EXPECT_EQ(t, h.nr_pages[15], 0);
	/* Cooling never loses pages. */
	PT_EXPECT_EQ(t, htmm_hist_total(&h), 136);
	htmm_hist_cool(&h, 40);
	PT_EXPECT_EQ(t, h.nr_pages[0], 136);

	/* A page's bin follows the histogram's shift. */
	PT_EXPECT_EQ(t, htmm_bin_cool(htmm_bin(htmm_units(8, 1)), 1),
		     htmm_bin(htmm_units(8, 1)) - 1);
}

static void pt_hist_add_sub(struct htmm_ptest *t)
{
	struct htmm_hist h = { { 0 } };

	htmm_hist_add(&h, 3, 512);
	htmm_hist_add(&h, 99, 1);	/* clamps to the top bin */
	PT_EXPECT_EQ(t, h.nr_pages[3], 512);
	PT_EXPECT_EQ(t, h.nr_pages[15], 1);
	PT_EXPECT(t, htmm_hist_sub(&h, 3, 500));
	PT_EXPECT_EQ(t, h.nr_pages[3], 12);
	PT_EXPECT(t, !htmm_hist_sub(&h, 3, 13));
	PT_EXPECT_EQ(t, h.nr_pages[3], 0);
}

static void pt_thresholds_empty(struct htmm_ptest *t)
{
	struct htmm_hist h = { { 0 } };
	struct htmm_thresholds th;

	htmm_thresholds(&h, 1000, 1, false, &th);
	PT_EXPECT_EQ(t, th.hot, 1);		/* the floor */
	PT_EXPECT_EQ(t, th.warm, 0);
	PT_EXPECT_EQ(t, th.hot_pages, 0);
}

static void pt_thresholds_all_hot(struct htmm_ptest *t)
{
	struct htmm_hist h = { { 0 } };
	struct htmm_thresholds th;

	h.nr_pages[2] = 100;
	h.nr_pages[9] = 200;
	h.nr_pages[12] = 50;
	htmm_thresholds(&h, 1000, 1, false, &th);
	PT_EXPECT_EQ(t, th.hot, 1);
	PT_EXPECT_EQ(t, th.hot_pages, 350);
	PT_EXPECT_EQ(t, th.warm, 0);
	htmm_thresholds(&h, 1000, 0, false, &th);
	PT_EXPECT_EQ(t, th.hot, 0);
	PT_EXPECT_EQ(t, th.warm, 0);
}

static void pt_thresholds_budget(struct htmm_ptest *t)
{
	struct htmm_hist h = { { 0 } };
	struct htmm_thresholds th;

	h.nr_pages[3] = 1000;
	h.nr_pages[9] = 200;
	h.nr_pages[12] = 50;
	/* 250 fit, 1250 do not: bins 4..15 are hot (3 is the first left out). */
	htmm_thresholds(&h, 300, 1, false, &th);
	PT_EXPECT_EQ(t, th.hot, 4);
	PT_EXPECT_EQ(t, th.hot_pages, 250);
	/* 250 < 75% of 400: the bin below is warm; bin 3 fills the rest. */
	htmm_thresholds(&h, 400, 1, false, &th);
	PT_EXPECT_EQ(t, th.warm, 3);
	PT_EXPECT_EQ(t, th.fill, 3);
	/* ... but not below the floor. */
	htmm_thresholds(&h, 400, 4, false, &th);
	PT_EXPECT_EQ(t, th.fill, HTMM_BIN_NONE);
	htmm_thresholds(&h, 400, 1, true, &th);
	PT_EXPECT_EQ(t, th.warm, th.hot);
	/* 250 >= 75% of 300: no warm set, no fill bin. */
	htmm_thresholds(&h, 300, 1, false, &th);
	PT_EXPECT_EQ(t, th.warm, 4);
	PT_EXPECT_EQ(t, th.fill, HTMM_BIN_NONE);
	/* Exactly full is still a fit. */
	htmm_thresholds(&h, 250, 1, false, &th);
	PT_EXPECT_EQ(t, th.hot, 4);
	htmm_thresholds(&h, 249, 1, false, &th);
	PT_EXPECT_EQ(t, th.hot, 10);
	PT_EXPECT_EQ(t, th.hot_pages, 50);
	PT_EXPECT_EQ(t, th.fill, 9);
	/* A higher floor wins over a roomy budget. */
	htmm_thresholds(&h, 1000000, 10, false, &th);
	PT_EXPECT_EQ(t, th.hot, 10);
	PT_EXPECT_EQ(t, th.hot_pages, 50);
}

static void pt_thresholds_zero_budget(struct htmm_ptest *t)
{
	struct htmm_hist h = { { 0 } };
	struct htmm_thresholds th;

	h.nr_pages[15] = 1;
	htmm_thresholds(&h, 0, 1, false, &th);
	PT_EXPECT_EQ(t, th.hot, HTMM_BIN_NONE);
	PT_EXPECT_EQ(t, th.warm, HTMM_BIN_NONE);
	PT_EXPECT_EQ(t, th.hot_pages, 0);
	/* No room to fill. */
	PT_EXPECT_EQ(t, th.fill, HTMM_BIN_NONE);
	/* One page of room: the top bin fills it. */
	h.nr_pages[15] = 4;
	htmm_thresholds(&h, 1, 1, false, &th);
	PT_EXPECT_EQ(t, th.hot, HTMM_BIN_NONE);
	PT_EXPECT_EQ(t, th.fill, 15);
	/* Lower bins only: the empty top bins "fit", nothing real is hot. */
	h.nr_pages[15] = 0;
	h.nr_pages[5] = 10;
	htmm_thresholds(&h, 0, 1, false, &th);
	PT_EXPECT_EQ(t, th.hot, 6);
	PT_EXPECT_EQ(t, th.hot_pages, 0);
}

static void pt_hit_share(struct htmm_ptest *t)
{
	struct htmm_hist h = { { 0 } };

	PT_EXPECT_EQ(t, htmm_hit_permille(&h, 100), 0);
	h.nr_pages[10] = 100;
	PT_EXPECT_EQ(t, htmm_hit_permille(&h, 100), 1000);
	PT_EXPECT_EQ(t, htmm_hit_permille(&h, 50), 500);
	PT_EXPECT_EQ(t, htmm_hit_permille(&h, 0), 0);
	/* Dense pages first: 10 pages of bin 12 take most of the weight. */
	h.nr_pages[12] = 10;
	PT_EXPECT(t, htmm_hit_permille(&h, 10) > 250);
	PT_EXPECT(t, htmm_hit_permille(&h, 10) < 300);
	/* Pages never sampled (bin 0) weigh nothing. */
	h.nr_pages[0] = 1000000;
	PT_EXPECT_EQ(t, htmm_hit_permille(&h, 110), 1000);
}

/* Cooling epochs are u32 counters: a cgroup and its pages cross the wrap. */
static void pt_epoch_wrap(struct htmm_ptest *t)
{
	u32 cg = 0xfffffffeU, page = cg;	/* sampled two before the wrap */

	PT_EXPECT_EQ(t, htmm_epoch_delta(cg, page), 0);
	cg += 3;
	PT_EXPECT_EQ(t, cg, 1);
	PT_EXPECT_EQ(t, htmm_epoch_delta(cg, page), 3);
	PT_EXPECT_EQ(t, htmm_count_cool(100, htmm_epoch_delta(cg, page)), 12);
	PT_EXPECT_EQ(t, htmm_bin_cool(9, htmm_epoch_delta(cg, page)), 6);
	/* Left behind 40 coolings, across the wrap: fully cooled. */
	PT_EXPECT_EQ(t, htmm_epoch_delta(30, 0xfffffff6U), 40);
	PT_EXPECT_EQ(t, htmm_count_cool(HTMM_COUNT_MAX,
					htmm_epoch_delta(30, 0xfffffff6U)), 0);
	/* 65536 coolings apart: a 16-bit epoch would see 0 and no cooling. */
	PT_EXPECT_EQ(t, htmm_epoch_delta(0x10005U, 5), 0x10000);
	PT_EXPECT_EQ(t, htmm_count_cool(100, htmm_epoch_delta(0x10005U, 5)), 0);
	PT_EXPECT_EQ(t, htmm_bin_cool(15, htmm_epoch_delta(0x10005U, 5)), 0);
}

/* Migration times are u32 counters of HTMM_MTIME_MS units that wrap. */
static void pt_mtime_wrap(struct htmm_ptest *t)
{
	u32 moved = 0xffffff00U;	/* 25.6 s before the wrap */

	PT_EXPECT_EQ(t, htmm_mtime_age_ms(moved, moved), 0);
	PT_EXPECT_EQ(t, htmm_mtime_age_ms(moved + 0x100 + 50, moved),
		     (0x100 + 50) * HTMM_MTIME_MS);
	/* Two hours later: a 16-bit time (6553.6 s) would say 0.8 hours. */
	PT_EXPECT_EQ(t, htmm_mtime_age_ms(moved + 72000, moved), 7200000);
	/* 50 days later the age saturates instead of wrapping to 0.3 days. */
	PT_EXPECT_EQ(t, htmm_mtime_age_ms(moved + 43200000, moved),
		     0xffffffffU);
	PT_EXPECT_EQ(t, htmm_mtime_age_ms(moved - 1, moved), 0xffffffffU);
}

static void pt_skew_class(struct htmm_ptest *t)
{
	/* One sample tells nothing. */
	PT_EXPECT_EQ(t, htmm_skew_class(1, 1, 512), 0);
	/* 512 samples on 512 subpages, one each: uniform. */
	PT_EXPECT_EQ(t, htmm_skew_class(512, 512, 512), 0);
	/* Two samples on each subpage: more even than chance, class 0. */
	PT_EXPECT_EQ(t, htmm_skew_class(1024, 2048, 512), 0);
	/* Ten samples, one pair on a subpage: chance, not skew. */
	PT_EXPECT_EQ(t, htmm_skew_class(10, 12, 512), 0);
	/* Forty samples, four pairs (about the chance of 1.5): uniform. */
	PT_EXPECT_EQ(t, htmm_skew_class(40, 48, 512), 0);
	/* Six samples, all on one subpage: already clearly skewed. */
	PT_EXPECT_EQ(t, htmm_skew_class(6, 36, 512), 7);
	/* All 100 samples on one subpage: ratio 489 at least, class 9. */
	PT_EXPECT_EQ(t, htmm_skew_class(100, 10000, 512), 9);
	/* Half the subpages, ten samples each: ratio 1.75 at least. */
	PT_EXPECT_EQ(t, htmm_skew_class(2560, 256 * 100, 512), 1);
	/* An eighth of them: ratio 6.8 at least. */
	PT_EXPECT_EQ(t, htmm_skew_class(640, 64 * 100, 512), 3);
}

static void pt_skew_stale(struct htmm_ptest *t)
{
	/* No new sample, or fewer after a cooling: the class holds. */
	PT_EXPECT(t, !htmm_skew_stale(400, 400));
	PT_EXPECT(t, !htmm_skew_stale(200, 150));
	PT_EXPECT(t, !htmm_skew_stale(0, 0));
	/* Up to a quarter more samples: it still holds. */
	PT_EXPECT(t, !htmm_skew_stale(400, 500));
	PT_EXPECT(t, htmm_skew_stale(400, 501));
	/* Few samples: each new one counts. */
	PT_EXPECT(t, htmm_skew_stale(0, 1));
	PT_EXPECT(t, htmm_skew_stale(3, 4));
	/* No overflow at the saturated count. */
	PT_EXPECT(t, !htmm_skew_stale(0xffffffffU, 0xffffffffU));
}

static void pt_split_count(struct htmm_ptest *t)
{
	PT_EXPECT_EQ(t, htmm_split_count(100, 0, 4, 100, 300), 0);
	PT_EXPECT_EQ(t, htmm_split_count(100, -5, 4, 100, 300), 0);
	PT_EXPECT_EQ(t, htmm_split_count(100, 500, 0, 100, 300), 0);
	PT_EXPECT_EQ(t, htmm_split_count(100, 500, 4, 300, 300), 0);
	/* 0.5 * 0.4 * (300 - 100) / 100 = 0.4 of 100. */
	PT_EXPECT_EQ(t, htmm_split_count(100, 500, 4, 100, 300), 40);
	/* Capped at all of them; rounded up. */
	PT_EXPECT_EQ(t, htmm_split_count(100, 1000, 10, 100, 300), 100);
	PT_EXPECT_EQ(t, htmm_split_count(3, 1, 1, 100, 101), 1);
}

struct htmm_policy_case {
	const char *name;
	void (*fn)(struct htmm_ptest *t);
};

static const struct htmm_policy_case htmm_policy_cases[] = {
	{ "bin_edges", pt_bin_edges },
	{ "units_one_scale", pt_units_one_scale },
	{ "count_saturates", pt_count_saturates },
	{ "cooling_arithmetic", pt_cooling_arithmetic },
	{ "epoch_wrap", pt_epoch_wrap },
	{ "mtime_wrap", pt_mtime_wrap },
	{ "hist_add_sub", pt_hist_add_sub },
	{ "thresholds_empty", pt_thresholds_empty },
	{ "thresholds_all_hot", pt_thresholds_all_hot },
	{ "thresholds_budget", pt_thresholds_budget },
	{ "thresholds_zero_budget", pt_thresholds_zero_budget },
	{ "hit_share", pt_hit_share },
	{ "skew_class", pt_skew_class },
	{ "skew_stale", pt_skew_stale },
	{ "split_count", pt_split_count },
	{ NULL, NULL }
};

#endif /* _MM_HTMM_POLICY_TESTS_H */
