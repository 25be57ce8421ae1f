// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): "key value" files: memory.htmm_stat and /proc/vmstat.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htmm.h"

static int kv_add(struct hm_kvset *s, const char *k, size_t kl,
		  const char *v, size_t vl)
{
	struct hm_kv *e;

	if (kl >= sizeof(e->key) || vl >= sizeof(e->val))
		return 0;		/* no such keys; skip rather than cut */
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 256;
		struct hm_kv *n = realloc(s->kv, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->kv = n;
		s->cap = cap;
	}
	e = &s->kv[s->n++];
	memcpy(e->key, k, kl);
	e->key[kl] = '\0';
	memcpy(e->val, v, vl);
	e->val[vl] = '\0';
	return 0;
}

/**
 * hm_kv_parse - Parse "key value" lines into @s (emptied first).
 * @s: The set; zero it before its first use, free with hm_kv_free().
 * @text: The file's text.
 * @prefix: Keep only the keys that start with it; NULL keeps all.
 *
 * Return: The number of entries, or -ENOMEM.
 */
int hm_kv_parse(struct hm_kvset *s, const char *text, const char *prefix)
{
	size_t pl = prefix ? strlen(prefix) : 0;
	const char *p = text, *k, *v;
	size_t kl, vl;

	s->n = 0;
	while (*p) {
		k = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		kl = p - k;
		while (*p == ' ' || *p == '\t')
			p++;
		v = p;
		while (*p && *p != '\n')
			p++;
		vl = p - v;
		while (vl && isspace((unsigned char)v[vl - 1]))
			vl--;
		if (*p)
			p++;
		if (!kl || (pl && (kl < pl || strncmp(k, prefix, pl))))
			continue;
		if (kv_add(s, k, kl, v, vl))
			return -ENOMEM;
	}
	return s->n;
}

void hm_kv_free(struct hm_kvset *s)
{
	free(s->kv);
	s->kv = NULL;
	s->n = 0;
	s->cap = 0;
}

const char *hm_kv_get(const struct hm_kvset *s, const char *key)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->kv[i].key, key))
			return s->kv[i].val;
	return NULL;
}

/*
 * A stat value as a number: a decimal (optionally negative), or "max"
 * (-1).  "none" and anything else: -EINVAL.
 */
int hm_value_num(const char *val, long long *v)
{
	char *end;

	if (!strcmp(val, "max")) {
		*v = -1;
		return 0;
	}
	if (!isdigit((unsigned char)val[0]) &&
	    !(val[0] == '-' && isdigit((unsigned char)val[1])))
		return -EINVAL;
	errno = 0;
	*v = strtoll(val, &end, 10);
	if (*end || errno)
		return -EINVAL;
	return 0;
}

int hm_kv_num(const struct hm_kvset *s, const char *key, long long *v)
{
	const char *val = hm_kv_get(s, key);

	return val ? hm_value_num(val, v) : -ENOENT;
}
