// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): the idle latency per memory node from a tierbench result file
 * (tools/tierbench/README.md).  Accepted, in this order of preference:
 *
 *   tierbench run --json       "nodes": [{"mem_node": N,
 *                              "idle_latency_ns": X, ...}, ...]
 *   tierbench latency --json   "results": [{... "mem_node": N,
 *                              "ns_per_load": X ...}, ...]
 *   tierbench run              "Idle latency node0 115.2 ns | node1 ..."
 *   tierbench latency          "latency ... mem_node=N ... pattern=random
 *                              ... ns_per_load=X ..." (random chain only)
 *
 * A node measured more than once (a --matrix run) counts with its lowest
 * latency: that of its nearest CPUs.  No system access.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "htmm.h"

static int add_lat(struct hm_nodelat *lat, int n, int max, int node, double ns)
{
	int i;

	if (node < 0 || !(ns > 0))
		return n;
	for (i = 0; i < n; i++) {
		if (lat[i].node == node) {
			if (ns < lat[i].ns)
				lat[i].ns = ns;
			return n;
		}
	}
	if (n == max)
		return n;
	lat[n].node = node;
	lat[n].ns = ns;
	return n + 1;
}

/* The number after "@key": in @p, before @limit; NAN if absent. */
static double json_num(const char *p, const char *limit, const char *key)
{
	const char *k = strstr(p, key);

	if (!k || (limit && k > limit))
		return NAN;
	k += strlen(key);
	while (*k == ' ' || *k == ':')
		k++;
	return strtod(k, NULL);
}

static int parse_json(const char *text, struct hm_nodelat *lat, int max)
{
	const char *p = text, *next;
	int n = 0;
	double ns;

	while ((p = strstr(p, "\"mem_node\""))) {
		next = strstr(p + 1, "\"mem_node\"");
		ns = json_num(p, next, "\"idle_latency_ns\"");
		if (isnan(ns))
			ns = json_num(p, next, "\"ns_per_load\"");
		n = add_lat(lat, n, max, (int)json_num(p, NULL, "\"mem_node\""), ns);
		p++;
	}
	return n;
}

/* "Idle latency node0 115.2 ns | node1 192.0 ns" */
static int parse_summary(const char *line, struct hm_nodelat *lat, int n,
			 int max)
{
	const char *p = line + strlen("Idle latency");
	int node, used;
	double ns;

	while (*p) {
		while (*p == ' ' || *p == '|')
			p++;
		if (sscanf(p, "node%d %lf ns%n", &node, &ns, &used) != 2)
			break;
		n = add_lat(lat, n, max, node, ns);
		p += used;
	}
	return n;
}

/* "latency ... mem_node=0 ... pattern=random ... ns_per_load=305.8 ..." */
static int parse_record(const char *line, struct hm_nodelat *lat, int n,
			int max)
{
	const char *m = strstr(line, " mem_node="), *v = strstr(line, " ns_per_load=");
	const char *pat = strstr(line, " pattern=");

	if (!m || !v || (pat && strncmp(pat, " pattern=random ", 16)))
		return n;
	return add_lat(lat, n, max, atoi(m + 10), strtod(v + 13, NULL));
}

static int parse_text(const char *text, struct hm_nodelat *lat, int max)
{
	const char *p, *nl;
	char line[2048];
	int n = 0, pass;

	for (pass = 0; pass < 2 && !n; pass++) {
		for (p = text; *p; p = *nl ? nl + 1 : nl) {
			nl = strchrnul(p, '\n');
			snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
			if (!pass && !strncmp(line, "Idle latency node", 17))
				n = parse_summary(line, lat, n, max);
			else if (pass && !strncmp(line, "latency ", 8))
				n = parse_record(line, lat, n, max);
		}
	}
	return n;
}

/* The nodes and their idle latencies; returns how many (0: none found). */
int hm_tierbench_parse(const char *text, struct hm_nodelat *lat, int max)
{
	const char *p = text;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '{')
		return parse_json(p, lat, max);
	return parse_text(p, lat, max);
}

/*
 * The latencies to write, as tierbench --apply-to-htmm picks them: the
 * lowest (fast) and the highest (slow), rounded to whole ns.  -EINVAL
 * (said why) unless fast < slow, as htmm requires.
 */
int hm_tierbench_pick(const struct hm_nodelat *lat, int n,
		      long *fast, int *fast_node, long *slow, int *slow_node)
{
	int i, f = 0, s = 0;

	if (n < 2) {
		hm_err("the tierbench file has %s: two tiers are needed",
		       n ? "one memory node" : "no idle latency of any node");
		return -EINVAL;
	}
	for (i = 1; i < n; i++) {
		if (lat[i].ns < lat[f].ns)
			f = i;
		if (lat[i].ns > lat[s].ns)
			s = i;
	}
	*fast = lround(lat[f].ns);
	*slow = lround(lat[s].ns);
	*fast_node = lat[f].node;
	*slow_node = lat[s].node;
	if (*fast < 1 || *fast >= *slow) {
		hm_err("the fastest and the slowest node measured %ld and %ld ns: htmm needs a fast latency below the slow one",
		       *fast, *slow);
		return -EINVAL;
	}
	return 0;
}
