// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the htmm helpers that need no running workload.
 */
#include <kunit/test.h>
#include <linux/align.h>
#include <linux/gfp.h>
#include <linux/htmm.h>
#include <linux/nodemask.h>
#include <linux/numa.h>
#include <linux/page_counter.h>
#include <linux/page_ext.h>
#include <linux/string.h>

#include "internal.h"

/* The policy core's cases, shared with the host tests. */
struct htmm_ptest {
	struct kunit *test;
};

#define PT_EXPECT(t, cond) KUNIT_EXPECT_TRUE((t)->test, cond)
#define PT_EXPECT_EQ(t, a, b) KUNIT_EXPECT_EQ((t)->test, (u64)(a), (u64)(b))

#include "policy_tests.h"

static const void *htmm_policy_gen(const void *prev, char *desc)
{
	const struct htmm_policy_case *c = prev;

	c = c ? c + 1 : htmm_policy_cases;
	if (!c->name)
		return NULL;
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
	return c;
}

static void htmm_test_policy(struct kunit *test)
{
	const struct htmm_policy_case *c = test->param_value;
	struct htmm_ptest t = { .test = test };

	c->fn(&t);
}

static void htmm_test_period_ladder(struct kunit *test)
{
	unsigned int level, p, prev = 199;

	KUNIT_EXPECT_EQ(test, htmm_period_at(199, 0), 199U);
	for (level = 1; level < 12; level++) {
		p = htmm_period_at(199, level);
		KUNIT_EXPECT_GT(test, p, prev);
		prev = p;
	}
	KUNIT_EXPECT_EQ(test, htmm_period_at(INT_MAX, 3), (unsigned int)INT_MAX);
	/* The steps are primes. */
	KUNIT_EXPECT_EQ(test, htmm_period_at(100, 1), 151U);
}

static void htmm_test_parse_uint(struct kunit *test)
{
	unsigned int v = 42;

	KUNIT_EXPECT_EQ(test, htmm_parse_uint("7", 0, 10, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 7U);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("10\n", 0, 10, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 10U);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("0", 0, 10, &v), 0);
	KUNIT_EXPECT_EQ(test, v, 0U);

	/* Errors leave the result untouched. */
	v = 42;
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("11", 0, 10, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("0", 1, 10, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("", 0, 10, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("\n", 0, 10, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("-1", 0, 10, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("1x", 0, 10, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("1.5", 0, 10, &v), -EINVAL);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("4294967296", 0, UINT_MAX, &v),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, v, 42U);
	KUNIT_EXPECT_EQ(test, htmm_parse_uint("4294967295", 0, UINT_MAX, &v), 0);
	KUNIT_EXPECT_EQ(test, v, UINT_MAX);
}

static void htmm_test_room_lacks(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, htmm_room_lacks(1, 1));
	KUNIT_EXPECT_TRUE(test, htmm_room_lacks(0, 1));
	KUNIT_EXPECT_FALSE(test, htmm_room_lacks(512, 512));
	KUNIT_EXPECT_TRUE(test, htmm_room_lacks(511, 512));
	/* Usage already above a lowered limit. */
	KUNIT_EXPECT_TRUE(test, htmm_room_lacks(-990, 1));
	KUNIT_EXPECT_TRUE(test, htmm_room_lacks(-1, 0));
	/* No budget binds. */
	KUNIT_EXPECT_FALSE(test, htmm_room_lacks(LONG_MAX, 512));
	KUNIT_EXPECT_FALSE(test, htmm_room_lacks(LONG_MAX, LONG_MAX));
	KUNIT_EXPECT_TRUE(test, htmm_room_lacks(LONG_MAX, ULONG_MAX));
}

/* @arg is a nodemask of the nodes that are full. */
static bool htmm_test_full(int nid, void *arg)
{
	return node_isset(nid, *(nodemask_t *)arg);
}

static void htmm_test_pick_node(struct kunit *test)
{
	nodemask_t full = NODE_MASK_NONE;
	int nid, other = NUMA_NO_NODE, first = first_memory_node;

	for_each_node_state(nid, N_MEMORY)
		if (nid != first) {
			other = nid;
			break;
		}
	if (other == NUMA_NO_NODE)
		kunit_skip(test, "needs two memory nodes");

	/* The preferred node itself is never offered again. */
	node_set(first, full);
	nid = htmm_pick_node(first, GFP_HIGHUSER_MOVABLE, htmm_test_full,
			     &full);
	KUNIT_EXPECT_NE(test, nid, first);
	KUNIT_EXPECT_NE(test, nid, NUMA_NO_NODE);
	KUNIT_EXPECT_TRUE(test, node_state(nid, N_MEMORY));

	/* Every node full: nothing to pick. */
	for_each_node_state(nid, N_MEMORY)
		node_set(nid, full);
	KUNIT_EXPECT_EQ(test, htmm_pick_node(first, GFP_HIGHUSER_MOVABLE,
					     htmm_test_full, &full),
			NUMA_NO_NODE);

	/* Only @other has room: it is found wherever it sits in the order. */
	node_clear(other, full);
	KUNIT_EXPECT_EQ(test, htmm_pick_node(first, GFP_HIGHUSER_MOVABLE,
					     htmm_test_full, &full), other);
}

static void htmm_test_defaults(struct kunit *test)
{
	/* The defaults the MEMTIS tunables documented; scripts rely on them. */
	KUNIT_EXPECT_EQ(test, htmm_params.sample_period, 199U);
	KUNIT_EXPECT_EQ(test, htmm_params.inst_sample_period, 100007U);
	KUNIT_EXPECT_EQ(test, htmm_params.cooling_period, 2000000U);
	KUNIT_EXPECT_EQ(test, htmm_params.adaptation_period, 100000U);
	KUNIT_EXPECT_EQ(test, htmm_params.mode, (unsigned int)HTMM_MODE_HUGEPAGE);
}

/*
 * page_ext does not align its clients: with page_owner=on, a record that
 * is not a multiple of 8 bytes would misalign every other page's page_ext.
 */
static void htmm_test_page_ext_layout(struct kunit *test)
{
	struct page_ext *ext;
	struct htmm_meta *m;
	struct page *page;

	KUNIT_EXPECT_EQ(test, sizeof(struct htmm_meta), (size_t)24);
	if (!htmm_available())
		kunit_skip(test, "booted without htmm=on");
	kunit_info(test, "record %zu bytes at offset %zu, page_ext %lu bytes\n",
		   htmm_page_ext_ops.size, htmm_page_ext_ops.offset,
		   page_ext_size);
	KUNIT_EXPECT_EQ(test, htmm_page_ext_ops.size, sizeof(struct htmm_meta));
	KUNIT_EXPECT_TRUE(test, IS_ALIGNED(htmm_page_ext_ops.offset, 8));
	KUNIT_EXPECT_TRUE(test, IS_ALIGNED(page_ext_size, 8));

	page = alloc_pages(GFP_KERNEL, 1);
	KUNIT_ASSERT_NOT_NULL(test, page);
	m = htmm_meta_get(page, &ext);
	if (m) {
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED((unsigned long)ext, 8));
		KUNIT_EXPECT_TRUE(test, IS_ALIGNED((unsigned long)m, 8));
		KUNIT_EXPECT_TRUE(test,
				  IS_ALIGNED((unsigned long)page_ext_next(ext),
					     8));
		page_ext_put(ext);
	}
	__free_pages(page, 1);
	KUNIT_EXPECT_NOT_NULL(test, m);
}

/* Epochs start at the wrap: the first cooling of every cgroup crosses it. */
static void htmm_test_epoch_start(struct kunit *test)
{
	struct htmm_memcg *hm;

	hm = kunit_kzalloc(test, struct_size(hm, max_nr_pages, nr_node_ids),
			   GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, hm);
	htmm_memcg_state_init(hm);
	KUNIT_EXPECT_EQ(test, htmm_coolings(hm), 0U);
	hm->epoch++;
	KUNIT_EXPECT_EQ(test, hm->epoch, 0U);
	KUNIT_EXPECT_EQ(test, htmm_coolings(hm), 1U);
	KUNIT_EXPECT_EQ(test, htmm_epoch_delta(hm->epoch, HTMM_EPOCH_INITIAL),
			1U);
}

static struct kunit_case htmm_core_cases[] = {
	KUNIT_CASE(htmm_test_page_ext_layout),
	KUNIT_CASE(htmm_test_epoch_start),
	KUNIT_CASE(htmm_test_parse_uint),
	KUNIT_CASE(htmm_test_room_lacks),
	KUNIT_CASE(htmm_test_pick_node),
	KUNIT_CASE(htmm_test_defaults),
	KUNIT_CASE(htmm_test_period_ladder),
	KUNIT_CASE_PARAM(htmm_test_policy, htmm_policy_gen),
	{}
};

static struct kunit_suite htmm_core_suite = {
	.name = "htmm_core",
	.test_cases = htmm_core_cases,
};

kunit_test_suites(&htmm_core_suite);
