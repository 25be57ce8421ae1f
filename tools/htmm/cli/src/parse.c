// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): parsers of the command line's values.  No system access: the
 * host unit tests call these directly.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htmm.h"

/*
 * The most bytes memory.max_at_node<N> takes: PAGE_COUNTER_MAX pages of
 * 4 KiB (LONG_MAX / PAGE_SIZE) and what rounds down to them.
 */
#define HM_BYTES_LIMIT	((uint64_t)INT64_MAX)

static int suffix_shift(char c)
{
	switch (c) {
	case 'K': case 'k': return 10;
	case 'M': case 'm': return 20;
	case 'G': case 'g': return 30;
	case 'T': case 't': return 40;
	case 'P': case 'p': return 50;
	case 'E': case 'e': return 60;
	}
	return -1;
}

/**
 * hm_parse_size - Parse a size the way memory.max_at_node<N> does.
 * @s: "max", or a number in C notation (decimal, 0x hex, 0 octal) with an
 *     optional suffix K, M, G, T, P or E in either case (powers of 1024).
 * @bytes: The result; HM_SIZE_MAX for "max".
 *
 * Return: 0, -EINVAL for malformed input (empty, a sign, white space,
 * junk, a suffix without a number), -ERANGE for a value that does not fit
 * in 64 bits or exceeds what the kernel's page counter holds.
 */
int hm_parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	int shift = 0;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "max")) {
		*bytes = HM_SIZE_MAX;
		return 0;
	}
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (*end) {
		shift = suffix_shift(*end);
		if (shift < 0 || end[1])
			return -EINVAL;
	}
	if (errno == ERANGE)
		return -ERANGE;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	v <<= shift;
	if (v > HM_BYTES_LIMIT)
		return -ERANGE;
	*bytes = v;
	return 0;
}

/* "max", "512 B", "1.5 GiB". */
void hm_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB", "PiB",
					    "EiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes == HM_SIZE_MAX) {
		snprintf(buf, len, "max");
		return;
	}
	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return;
	}
	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.*f %s", v < 10 ? 2 : 1, v, unit[u]);
}

/* A strict unsigned decimal: digits only, at most @max. */
int hm_parse_ull(const char *s, unsigned long long max,
		 unsigned long long *v)
{
	unsigned long long r;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	r = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || r > max)
		return -ERANGE;
	*v = r;
	return 0;
}

static int parse_range(const char *tok, unsigned long long *a,
		       unsigned long long *b, int max)
{
	char first[32];
	const char *dash = strchr(tok, '-');
	size_t n = dash ? (size_t)(dash - tok) : strlen(tok);

	if (n == 0 || n >= sizeof(first))
		return -EINVAL;
	memcpy(first, tok, n);
	first[n] = '\0';
	if (hm_parse_ull(first, max - 1, a))
		return -EINVAL;
	*b = *a;
	if (dash && hm_parse_ull(dash + 1, max - 1, b))
		return -EINVAL;
	return *b < *a ? -EINVAL : 0;
}

/* A kernel node list ("0-1,3", or empty) into @nodes[0..max). */
int hm_parse_nodelist(const char *s, bool *nodes, int max)
{
	char buf[512], *tok, *save;
	unsigned long long a, b;

	memset(nodes, 0, max * sizeof(*nodes));
	if (hm_strscpy(buf, s, sizeof(buf)) < 0)
		return -EINVAL;
	hm_strip(buf);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (parse_range(tok, &a, &b, max))
			return -EINVAL;
		while (a <= b)
			nodes[a++] = true;
	}
	return 0;
}

void hm_fmt_nodelist(const bool *nodes, int max, char *buf, size_t len)
{
	size_t used = 0;
	int i, j;

	buf[0] = '\0';
	for (i = 0; i < max; i = j) {
		if (!nodes[i]) {
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < max && nodes[j]; j++)
			;
		used += snprintf(buf + used, used < len ? len - used : 0,
				 j - i > 1 ? "%s%d-%d" : "%s%d",
				 used ? "," : "", i, j - 1);
	}
	if (!used)
		snprintf(buf, len, "-");
}

/* "N=SIZE" or "nodeN=SIZE". */
int hm_parse_budget(const char *s, struct hm_budget *b)
{
	const char *eq = strchr(s, '=');
	char node[32];
	unsigned long long n;
	size_t len;

	if (!eq)
		return -EINVAL;
	len = eq - s;
	if (len >= 4 && !strncmp(s, "node", 4)) {
		s += 4;
		len -= 4;
	}
	if (!len || len >= sizeof(node))
		return -EINVAL;
	memcpy(node, s, len);
	node[len] = '\0';
	if (hm_parse_ull(node, HM_MAX_NODES - 1, &n))
		return -ERANGE;
	b->node = (int)n;
	return hm_parse_size(eq + 1, &b->bytes);
}

/* The text written to memory.max_at_node<N>: bytes, or "max". */
void hm_budget_value(const struct hm_budget *b, char *buf, size_t len)
{
	if (b->bytes == HM_SIZE_MAX)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%llu", (unsigned long long)b->bytes);
}

/* "TUNABLE=VALUE": syntax only; hm_tunable_check() judges the value. */
int hm_parse_set(const char *s, struct hm_set *set)
{
	const char *eq = strchr(s, '=');
	size_t i, len;

	if (!eq || eq == s || !eq[1])
		return -EINVAL;
	len = eq - s;
	if (len >= sizeof(set->name) || strlen(eq + 1) >= sizeof(set->value))
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return -EINVAL;
	for (i = 1; eq[i]; i++)
		if (isspace((unsigned char)eq[i]) || eq[i] == '/')
			return -EINVAL;
	memcpy(set->name, s, len);
	set->name[len] = '\0';
	hm_strscpy(set->value, eq + 1, sizeof(set->value));
	return 0;
}

/*
 * A cgroup as given on the command line, relative to the cgroup2 mount:
 * "a/b", "/a/b" and "/sys/fs/cgroup/a/b" name the same cgroup.  Repeated
 * slashes are ignored; "." and ".." are refused; so is the root cgroup
 * (it has no htmm files).
 */
int hm_cgroup_rel(const char *arg, char *rel, size_t len)
{
	static const char mnt[] = "/sys/fs/cgroup";
	const char *p = arg;
	char *c, *save, tmp[HM_PATH];

	if (!strncmp(p, mnt, sizeof(mnt) - 1) &&
	    (p[sizeof(mnt) - 1] == '/' || !p[sizeof(mnt) - 1]))
		p += sizeof(mnt) - 1;
	while (*p == '/')
		p++;
	if (!*p || strlen(p) >= len || hm_strscpy(tmp, p, sizeof(tmp)) < 0)
		return -EINVAL;
	rel[0] = '\0';
	for (c = strtok_r(tmp, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, ".") || !strcmp(c, ".."))
			return -EINVAL;
		if (rel[0])
			strcat(rel, "/");
		strcat(rel, c);
	}
	return rel[0] ? 0 : -EINVAL;
}
