// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench: streaming kernels. Written with GCC vector types so that they
 * compile to 16-byte SSE2 loads and stores on the baseline ISA, and with an
 * XOR in the copy so the compiler cannot turn it into a memcpy call (glibc
 * would then pick non-temporal stores on its own). Each loop step covers
 * one 64-byte cache line.
 */
#include "kernels.h"

#define VPL 4	/* vectors per cache line */

uint64_t tb_k_read(const void *a, size_t len)
{
	const tb_vec *p = a;
	tb_vec s0 = { 0 }, s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
	size_t i, n = len / sizeof(tb_vec);

	for (i = 0; i + VPL <= n; i += VPL) {
		s0 ^= p[i];
		s1 ^= p[i + 1];
		s2 ^= p[i + 2];
		s3 ^= p[i + 3];
	}
	s0 ^= s1 ^ s2 ^ s3;
	return s0[0] ^ s0[1];
}

void tb_k_copy(void *d, const void *a, size_t len)
{
	const tb_vec *x = a;
	tb_vec *y = d;
	const tb_vec key = { 1, 1 };
	size_t i, n = len / sizeof(tb_vec);

	for (i = 0; i + VPL <= n; i += VPL) {
		y[i] = x[i] ^ key;
		y[i + 1] = x[i + 1] ^ key;
		y[i + 2] = x[i + 2] ^ key;
		y[i + 3] = x[i + 3] ^ key;
	}
}

void tb_k_add2(void *d, const void *a, const void *b, size_t len)
{
	const tb_vec *x = a, *z = b;
	tb_vec *y = d;
	size_t i, n = len / sizeof(tb_vec);

	for (i = 0; i + VPL <= n; i += VPL) {
		y[i] = x[i] + z[i];
		y[i + 1] = x[i + 1] + z[i + 1];
		y[i + 2] = x[i + 2] + z[i + 2];
		y[i + 3] = x[i + 3] + z[i + 3];
	}
}

void tb_k_add3(void *d, const void *a, const void *b, const void *c,
	       size_t len)
{
	const tb_vec *x = a, *z = b, *w = c;
	tb_vec *y = d;
	size_t i, n = len / sizeof(tb_vec);

	for (i = 0; i + VPL <= n; i += VPL) {
		y[i] = x[i] + z[i] + w[i];
		y[i + 1] = x[i + 1] + z[i + 1] + w[i + 1];
		y[i + 2] = x[i + 2] + z[i + 2] + w[i + 2];
		y[i + 3] = x[i + 3] + z[i + 3] + w[i + 3];
	}
}
