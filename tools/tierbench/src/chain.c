// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench: the randomised pointer chain used by every latency figure.
 *
 * The region is cut into slots of `stride` bytes. A random permutation of
 * the slots gives the visiting order; slot order[i] holds the address of
 * slot order[i+1] and the last slot closes the cycle, so one lap touches
 * every slot exactly once. A random order leaves the stride prefetchers
 * nothing to predict, and every load depends on the previous one, so loads
 * cannot overlap.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "tierbench.h"

static void shuffle(uint32_t *a, uint64_t n, struct tb_rng *r)
{
	uint64_t i;

	if (n < 2)
		return;
	for (i = n - 1; i > 0; i--) {
		uint64_t j = tb_rng_below(r, i + 1);
		uint32_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

void tb_chain_order(uint32_t *order, uint64_t n, enum tb_pattern pat,
		    uint64_t slots_per_chunk, enum tb_chunk_order co,
		    uint64_t seed)
{
	struct tb_rng r;
	uint64_t i, c, nchunks;

	tb_rng_seed(&r, seed);
	if (pat == TB_PAT_RANDOM || slots_per_chunk >= n || !slots_per_chunk) {
		for (i = 0; i < n; i++)
			order[i] = (uint32_t)i;
		shuffle(order, n, &r);
		return;
	}
	nchunks = n / slots_per_chunk;
	if (co == TB_ORDER_RANDOM) {
		uint32_t *chunks = malloc(nchunks * sizeof(*chunks));

		if (chunks) {
			for (c = 0; c < nchunks; c++)
				chunks[c] = (uint32_t)c;
			shuffle(chunks, nchunks, &r);
			for (c = 0; c < nchunks; c++) {
				uint64_t first = (uint64_t)chunks[c] * slots_per_chunk;
				uint32_t *o = order + c * slots_per_chunk;

				for (i = 0; i < slots_per_chunk; i++)
					o[i] = (uint32_t)(first + i);
				shuffle(o, slots_per_chunk, &r);
			}
			free(chunks);
			/* A partial last chunk, if n is not a multiple. */
			for (i = nchunks * slots_per_chunk; i < n; i++)
				order[i] = (uint32_t)i;
			shuffle(order + nchunks * slots_per_chunk,
				n - nchunks * slots_per_chunk, &r);
			return;
		}
		/* No memory for the chunk list: fall back to chunks in order. */
	}
	for (i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	for (c = 0; c < nchunks; c++)
		shuffle(order + c * slots_per_chunk, slots_per_chunk, &r);
	shuffle(order + nchunks * slots_per_chunk,
		n - nchunks * slots_per_chunk, &r);
}

void *tb_chain_link(void *base, size_t stride, const uint32_t *order,
		    uint64_t n)
{
	char *b = base;
	uint64_t i;

	for (i = 0; i + 1 < n; i++)
		*(void **)(b + (uint64_t)order[i] * stride) =
			b + (uint64_t)order[i + 1] * stride;
	*(void **)(b + (uint64_t)order[n - 1] * stride) =
		b + (uint64_t)order[0] * stride;
	return b + (uint64_t)order[0] * stride;
}

const char *tb_pattern_name(enum tb_pattern p)
{
	static const char *const names[] = { "random", "chunk", "lmbench" };

	return names[p];
}

int tb_parse_pattern(const char *s, enum tb_pattern *out)
{
	if (!strcmp(s, "random"))
		*out = TB_PAT_RANDOM;
	else if (!strcmp(s, "chunk"))
		*out = TB_PAT_CHUNK;
	else if (!strcmp(s, "lmbench"))
		*out = TB_PAT_LMBENCH;
	else
		return -1;
	return 0;
}

/* i with its low `bits` bits in reverse order. */
static uint64_t bit_reverse(uint64_t i, int bits)
{
	uint64_t r = 0;
	int k;

	for (k = 0; k < bits; k++)
		if (i & (1ULL << k))
			r |= 1ULL << (bits - 1 - k);
	return r;
}

void *tb_chain_build_lmbench(void *base, size_t len, size_t stride,
			     uint64_t seed)
{
	uint64_t np = len / 4096, nw = 4096 / stride, i, j;
	uint32_t *pg;
	uint64_t *w;
	char *b = base;
	void *start;
	int bits = 0;

	if (!np || !nw || np > UINT32_MAX)
		return NULL;
	while ((1ULL << bits) < nw)
		bits++;
	pg = malloc(np * sizeof(*pg));
	w = malloc(nw * sizeof(*w));
	if (!pg || !w) {
		free(pg);
		free(w);
		return NULL;
	}
	tb_chain_order(pg, np, TB_PAT_RANDOM, 0, TB_ORDER_SEQ, seed);
	for (j = 0; j < nw; j++)
		w[j] = bit_reverse(j, bits) * stride;
	/*
	 * In lap k the chase visits page pg[i] at offset w[(i + k) % nw] and
	 * goes on to pg[i + 1] at w[(i + k + 1) % nw]; from the last page it
	 * returns to pg[0] one offset further on. Page pg[i] is written
	 * completely at step i, so the pages are faulted in the order the
	 * first lap visits them - as lmbench does.
	 */
	for (i = 0; i < np; i++) {
		char *cur = b + (uint64_t)pg[i] * 4096;
		char *nxt = b + (uint64_t)pg[(i + 1) % np] * 4096;

		for (j = 0; j < nw; j++) {
			uint64_t to = i + 1 < np ? (i + j + 1) % nw : (j + 1) % nw;

			*(void **)(cur + w[(i + j) % nw]) = nxt + w[to];
		}
	}
	start = b + (uint64_t)pg[0] * 4096 + w[0];
	free(pg);
	free(w);
	return start;
}

void *tb_chain_build(void *base, size_t len, size_t stride,
		     enum tb_pattern pat, size_t chunk,
		     enum tb_chunk_order co, uint64_t seed)
{
	uint64_t n = len / stride;
	uint32_t *order;
	void *start;

	if (pat == TB_PAT_LMBENCH)
		return tb_chain_build_lmbench(base, len, stride, seed);
	if (!n || n > UINT32_MAX)
		return NULL;
	order = malloc(n * sizeof(*order));
	if (!order)
		return NULL;
	tb_chain_order(order, n, pat, chunk / stride, co, seed);
	start = tb_chain_link(base, stride, order, n);
	free(order);
	return start;
}

/*
 * Eight dependent loads per iteration keep the loop overhead off the
 * critical path; each load's address is the previous load's value, so the
 * compiler can neither drop nor reorder them as long as the caller uses
 * the result.
 */
__attribute__((noinline)) void *tb_chase(void *p, uint64_t n)
{
	void **q = p;

	while (n >= 8) {
		q = (void **)*q;
		q = (void **)*q;
		q = (void **)*q;
		q = (void **)*q;
		q = (void **)*q;
		q = (void **)*q;
		q = (void **)*q;
		q = (void **)*q;
		n -= 8;
	}
	while (n--)
		q = (void **)*q;
	return q;
}
