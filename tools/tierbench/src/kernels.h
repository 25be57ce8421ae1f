/* SPDX-License-Identifier: GPL-2.0 */
/* tierbench: streaming kernels shared by bandwidth and loaded-latency. */
#ifndef TIERBENCH_KERNELS_H
#define TIERBENCH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/*
 * 16 bytes: the SSE2 register every x86-64 CPU (and QEMU's models) has.
 * Wider GCC vectors get split badly on that baseline and spill.
 */
typedef uint64_t tb_vec __attribute__((vector_size(16), aligned(16)));

/* All functions take line-aligned buffers and a length in bytes that is a
 * multiple of 64. */
uint64_t tb_k_read(const void *a, size_t len);
void tb_k_copy(void *d, const void *a, size_t len);		/* 1:1 */
void tb_k_add2(void *d, const void *a, const void *b, size_t len);	/* 2:1 */
void tb_k_add3(void *d, const void *a, const void *b, const void *c,
	       size_t len);						/* 3:1 */

#endif
