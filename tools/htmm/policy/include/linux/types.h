/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host stand-in for <linux/types.h>, so that mm/htmm/policy.c builds as a
 * userspace library.
 */
#ifndef _HTMM_HOST_LINUX_TYPES_H
#define _HTMM_HOST_LINUX_TYPES_H

#include <stdbool.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#endif
