// SPDX-License-Identifier: GPL-2.0
/*
 * Memory tier layout of the test VM: node 0 has the CPUs and the fast
 * memory, node 1 is CPU-less slow memory in a lower (higher id) tier.
 * Tiers are /sys/devices/virtual/memory_tiering/memory_tier<ID>/nodelist.
 */
#define _GNU_SOURCE
#include "htmm_util.h"	/* includes kselftest_harness.h */

#define MAX_TIERS	32

struct tier {
	int id;
	int nodes[HTMM_MAX_NODES];
	int nr_nodes;		/* -errno if nodelist could not be read */
};

FIXTURE(layout) {
	int mem_nodes[HTMM_MAX_NODES];
	int nr_mem_nodes;
	struct tier tiers[MAX_TIERS];
	int nr_tiers;
};

static int load_tiers(struct tier *tiers, int max)
{
	struct dirent *de;
	int nr = 0;
	DIR *dir;

	dir = opendir(HTMM_TIER_DIR);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && nr < max) {
		char path[PATH_MAX], *end;
		long id;

		if (strncmp(de->d_name, "memory_tier", 11))
			continue;
		id = strtol(de->d_name + 11, &end, 10);
		if (end == de->d_name + 11 || *end)
			continue;
		tiers[nr].id = id;
		snprintf(path, sizeof(path), HTMM_TIER_DIR "/%s/nodelist",
			 de->d_name);
		tiers[nr].nr_nodes = htmm_read_list(path, tiers[nr].nodes,
						    HTMM_MAX_NODES);
		nr++;
	}
	closedir(dir);
	return nr;
}

/* Tier id of a node, or -1; *count is the number of tiers listing it. */
static int tier_of(const struct tier *tiers, int nr_tiers, int node,
		   int *count)
{
	int i, id = -1;

	*count = 0;
	for (i = 0; i < nr_tiers; i++) {
		const struct tier *t = &tiers[i];

		if (t->nr_nodes > 0 && htmm_list_has(t->nodes, t->nr_nodes, node)) {
			id = t->id;
			(*count)++;
		}
	}
	return id;
}

FIXTURE_SETUP(layout)
{
	self->nr_mem_nodes = htmm_memory_nodes(self->mem_nodes, HTMM_MAX_NODES);
	ASSERT_LT(0, self->nr_mem_nodes)
		TH_LOG("cannot parse " HTMM_NODE_DIR "/has_memory");
	if (self->nr_mem_nodes < 2)
		SKIP(return, "single memory node");
	self->nr_tiers = load_tiers(self->tiers, MAX_TIERS);
}

FIXTURE_TEARDOWN(layout)
{
}

TEST_F(layout, node_cpus)
{
	char path[PATH_MAX], buf[256], e[256];
	int cpus[1024], n;

	snprintf(path, sizeof(path), HTMM_NODE_DIR "/node%d/cpulist", HTMM_FAST_NODE);
	n = htmm_read_list(path, cpus, ARRAY_SIZE(cpus));
	EXPECT_LT(0, n) TH_LOG("node%d should have CPUs (%s: %d)", HTMM_FAST_NODE,
			       path, n);

	snprintf(path, sizeof(path), HTMM_NODE_DIR "/node%d/cpulist", HTMM_SLOW_NODE);
	ASSERT_LE(0, htmm_read_file(path, buf, sizeof(buf)))
		TH_LOG("read %s", path);
	EXPECT_EQ(0, htmm_parse_list(buf, cpus, ARRAY_SIZE(cpus)))
		TH_LOG("node%d should have no CPUs, cpulist \"%s\"", HTMM_SLOW_NODE,
		       htmm_esc(buf, e, sizeof(e)));
}

TEST_F(layout, tiers_have_nodelists)
{
	int i;

	ASSERT_LE(0, self->nr_tiers) TH_LOG("opendir " HTMM_TIER_DIR ": %s",
					    strerror(-self->nr_tiers));
	EXPECT_LE(2, self->nr_tiers) TH_LOG("only %d memory tier(s)",
					    self->nr_tiers);
	for (i = 0; i < self->nr_tiers; i++) {
		const struct tier *t = &self->tiers[i];

		EXPECT_LE(0, t->nr_nodes)
			TH_LOG("memory_tier%d/nodelist unreadable or malformed: %d",
			       t->id, t->nr_nodes);
		TH_LOG("memory_tier%d: %d node(s)%s", t->id, t->nr_nodes,
		       t->nr_nodes > 0 && htmm_list_has(t->nodes, t->nr_nodes,
							HTMM_FAST_NODE) ?
		       " incl. node0" :
		       t->nr_nodes > 0 && htmm_list_has(t->nodes, t->nr_nodes,
							HTMM_SLOW_NODE) ?
		       " incl. node1" : "");
	}
}

TEST_F(layout, memory_nodes_in_one_tier)
{
	int i, count;

	ASSERT_LE(0, self->nr_tiers);
	for (i = 0; i < self->nr_mem_nodes; i++) {
		tier_of(self->tiers, self->nr_tiers, self->mem_nodes[i], &count);
		EXPECT_EQ(1, count) TH_LOG("node%d is in %d tiers",
					   self->mem_nodes[i], count);
	}
}

TEST_F(layout, fast_and_slow_in_different_tiers)
{
	int fast, slow, count;

	ASSERT_LE(0, self->nr_tiers);
	fast = tier_of(self->tiers, self->nr_tiers, HTMM_FAST_NODE, &count);
	ASSERT_LE(0, fast) TH_LOG("node%d is in no tier", HTMM_FAST_NODE);
	slow = tier_of(self->tiers, self->nr_tiers, HTMM_SLOW_NODE, &count);
	ASSERT_LE(0, slow) TH_LOG("node%d is in no tier", HTMM_SLOW_NODE);
	TH_LOG("node%d: memory_tier%d, node%d: memory_tier%d", HTMM_FAST_NODE,
	       fast, HTMM_SLOW_NODE, slow);
	EXPECT_NE(fast, slow);
}

TEST_F(layout, fast_node_has_lower_tier_id)
{
	int fast, slow, count;

	ASSERT_LE(0, self->nr_tiers);
	fast = tier_of(self->tiers, self->nr_tiers, HTMM_FAST_NODE, &count);
	slow = tier_of(self->tiers, self->nr_tiers, HTMM_SLOW_NODE, &count);
	ASSERT_LE(0, fast) TH_LOG("node%d is in no tier", HTMM_FAST_NODE);
	ASSERT_LE(0, slow) TH_LOG("node%d is in no tier", HTMM_SLOW_NODE);
	EXPECT_LT(fast, slow) TH_LOG("node%d tier %d, node%d tier %d",
				     HTMM_FAST_NODE, fast, HTMM_SLOW_NODE, slow);
}

TEST_HARNESS_MAIN
