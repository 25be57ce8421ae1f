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

#define TB_LINE 64	/* bytes per cache line */

/*
 * All kernels take line-aligned buffers and a count of 64-byte lines.
 * "Load a line" reads all of it; "store into a line" writes one 16-byte
 * vector of it, a partial line, so that the CPU has to read the line for
 * ownership first (as MLC's kernels do) and cannot turn a full-line write
 * into an invalidate without a read. Kernels that load return an XOR of
 * what they read, for the caller to keep alive.
 */
uint64_t tb_k_read(const void *a, size_t lines);		/* all-reads */
uint64_t tb_k_r2w1(void *d, const void *a, size_t dlines);	/* 3:1 */
uint64_t tb_k_r1w1(void *d, const void *a, size_t lines);	/* 2:1 */
void tb_k_w1(void *d, size_t lines);				/* 1:1 */
uint64_t tb_k_rmw(void *d, size_t lines);			/* rmw */
/* copy: whole lines loaded from a and stored to d (tierbench 1.0's 1:1) */
void tb_k_copy(void *d, const void *a, size_t lines);

/*
 * Built with -DTB_KERNEL_TRACE (the unit tests), every kernel reports each
 * line it loads (store = 0) or stores into (store = 1) to this hook, which
 * the test program defines.
 */
void tb_k_trace(const void *line, int store);

#endif
