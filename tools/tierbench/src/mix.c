// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench: the read/write mixes of the bandwidth tool (and of the
 * loaded-latency load threads): what each one touches, how a region is
 * laid out for it and how many bytes a pass counts.
 *
 * The ratios follow Intel MLC: lines read from memory, a stored line's
 * read for ownership included, to lines written back. -W5 (1:1) only
 * stores, -W2 (2:1) loads one line and stores into another, -W3 (3:1)
 * loads two lines per line stored; the stores write part of a line, so the
 * read for ownership happens on every CPU. The bytes counted are reads +
 * writes. copy keeps tierbench 1.0's "1:1" with its STREAM counting (the
 * read for ownership is not counted).
 */
#define _GNU_SOURCE
#include <string.h>
#include <strings.h>

#include "kernels.h"
#include "tierbench.h"

static const struct tb_mix_plan plans[TB_MIX_COUNT] = {
	/*                 name         mlc    src dst inpl rfo */
	[TB_MIX_READ] = { "all-reads", "-R",    1, 0, 0, 0 },
	[TB_MIX_3_1]  = { "3:1",       "-W3",   2, 1, 0, 1 },
	[TB_MIX_2_1]  = { "2:1",       "-W2",   1, 1, 0, 1 },
	[TB_MIX_1_1]  = { "1:1",       "-W5",   0, 1, 0, 1 },
	[TB_MIX_RMW]  = { "rmw",       NULL,    0, 0, 1, 0 },
	[TB_MIX_COPY] = { "copy",      NULL,    1, 1, 0, 0 },
};

const struct tb_mix_plan *tb_mix_plan(enum tb_mix m)
{
	return &plans[m];
}

const char *tb_mix_name(enum tb_mix m)
{
	return plans[m].name;
}

/* Names, the old short names of all-reads, and MLC's -R/-W2/-W3/-W5. */
int tb_parse_mix(const char *s, enum tb_mix *out)
{
	int m;

	for (m = 0; m < TB_MIX_COUNT; m++) {
		if (!strcmp(s, plans[m].name) ||
		    (plans[m].mlc && !strcasecmp(s, plans[m].mlc + 1))) {
			*out = m;
			return 0;
		}
	}
	if (!strcmp(s, "reads")) {
		*out = TB_MIX_READ;
		return 0;
	}
	return -1;
}

void tb_mix_lines(enum tb_mix m, unsigned int *rd, unsigned int *wr)
{
	const struct tb_mix_plan *p = &plans[m];

	*rd = p->src + p->inplace + (p->rfo ? p->dst : 0);
	*wr = p->dst + p->inplace;
}

void tb_mix_layout(size_t len, enum tb_mix m, struct tb_mix_layout *l)
{
	const struct tb_mix_plan *p = &plans[m];
	unsigned int rd, wr;

	tb_mix_lines(m, &rd, &wr);
	memset(l, 0, sizeof(*l));
	l->steps = len / TB_LINE / (p->src + p->dst + p->inplace);
	l->src = l->steps * p->src * TB_LINE;
	l->dst = l->steps * (p->dst + p->inplace) * TB_LINE;
	l->step_bytes = (uint64_t)(rd + wr) * TB_LINE;
	l->bytes = l->steps * l->step_bytes;
}

uint64_t tb_mix_run(void *base, const struct tb_mix_layout *l, enum tb_mix m,
		    uint64_t step, uint64_t n)
{
	const struct tb_mix_plan *p = &plans[m];
	char *src = (char *)base + step * p->src * TB_LINE;
	char *dst = (char *)base + l->src +
		    step * (p->dst + p->inplace) * TB_LINE;

	switch (m) {
	case TB_MIX_READ:
		return tb_k_read(src, n);
	case TB_MIX_3_1:
		return tb_k_r2w1(dst, src, n);
	case TB_MIX_2_1:
		return tb_k_r1w1(dst, src, n);
	case TB_MIX_1_1:
		tb_k_w1(dst, n);
		return 0;
	case TB_MIX_RMW:
		return tb_k_rmw(dst, n);
	case TB_MIX_COPY:
		tb_k_copy(dst, src, n);
		return 0;
	default:
		return 0;
	}
}
