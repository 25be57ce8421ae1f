// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench: streaming kernels. Written with GCC vector types so that they
 * compile to 16-byte SSE2 loads and stores on the baseline ISA, and with an
 * XOR in the copy so the compiler cannot turn it into a memcpy call (glibc
 * would then pick non-temporal stores on its own). Each loop step covers
 * one 64-byte cache line of every array it touches.
 */
#include "kernels.h"

#define VPL 4	/* vectors per cache line */

#ifdef TB_KERNEL_TRACE
#define TRACE(p, store)	tb_k_trace((p), (store))
#else
#define TRACE(p, store)	do { } while (0)
#endif

static const tb_vec key = { 1, 1 };

/* Load a whole line. */
static inline tb_vec load_line(const tb_vec *p)
{
	TRACE(p, 0);
	return (p[0] ^ p[1]) ^ (p[2] ^ p[3]);
}

/* Store one vector into a line: a partial write, read for ownership. */
static inline void store_part(tb_vec *p, tb_vec v)
{
	TRACE(p, 1);
	p[0] = v;
}

static inline uint64_t fold(tb_vec v)
{
	return v[0] ^ v[1];
}

uint64_t tb_k_read(const void *a, size_t lines)
{
	const tb_vec *p = a;
	tb_vec s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
	size_t i;

	for (i = 0; i < lines; i++, p += VPL) {
		TRACE(p, 0);
		s0 ^= p[0];
		s1 ^= p[1];
		s2 ^= p[2];
		s3 ^= p[3];
	}
	return fold(s0 ^ s1 ^ s2 ^ s3);
}

/* Per line of d: two lines of a loaded, one store into d (MLC -W3). */
uint64_t tb_k_r2w1(void *d, const void *a, size_t dlines)
{
	const tb_vec *x = a;
	tb_vec *y = d, s = { 0 };
	size_t i;

	for (i = 0; i < dlines; i++, x += 2 * VPL, y += VPL) {
		s ^= load_line(x) ^ load_line(x + VPL);
		store_part(y, key);
	}
	return fold(s);
}

/* Per line: one line of a loaded, one store into a line of d (MLC -W2). */
uint64_t tb_k_r1w1(void *d, const void *a, size_t lines)
{
	const tb_vec *x = a;
	tb_vec *y = d, s = { 0 };
	size_t i;

	for (i = 0; i < lines; i++, x += VPL, y += VPL) {
		s ^= load_line(x);
		store_part(y, key);
	}
	return fold(s);
}

/* Stores only; each line's read for ownership is the read (MLC -W5). */
void tb_k_w1(void *d, size_t lines)
{
	tb_vec *y = d;
	size_t i;

	for (i = 0; i < lines; i++, y += VPL)
		store_part(y, key);
}

/* In place: each line loaded, then stored into. */
uint64_t tb_k_rmw(void *d, size_t lines)
{
	tb_vec *y = d, s = { 0 }, v;
	size_t i;

	for (i = 0; i < lines; i++, y += VPL) {
		v = load_line(y);
		s ^= v;
		store_part(y, v ^ key);
	}
	return fold(s);
}

void tb_k_copy(void *d, const void *a, size_t lines)
{
	const tb_vec *x = a;
	tb_vec *y = d;
	size_t i;

	for (i = 0; i < lines; i++, x += VPL, y += VPL) {
		TRACE(x, 0);
		TRACE(y, 1);
		y[0] = x[0] ^ key;
		y[1] = x[1] ^ key;
		y[2] = x[2] ^ key;
		y[3] = x[3] ^ key;
	}
}
