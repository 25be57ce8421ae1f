// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench host unit tests. Prints "ok N - name" / "not ok N - name" per
 * check and ends with "N passed, N failed"; exits non-zero on a failure.
 *
 * usage: tierbench-unit PATH/TO/tierbench [PATH/TO/guest-smoke.sh]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernels.h"
#include "tierbench.h"

static int n_pass, n_fail, n_test;
static const char *bin;
static const char *smoke;

static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	n_test++;
	printf("%sok %d - ", cond ? "" : "not ", n_test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (cond)
		n_pass++;
	else
		n_fail++;
}

/* ------------------------------------------------------------ helpers */

/* Silence the parsers' error messages while testing rejections. */
static int saved_stderr = -1;

static void quiet(void)
{
	int fd = open("/dev/null", O_WRONLY);

	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static void loud(void)
{
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n + 1);
	if (fread(buf, 1, n, f) != (size_t)n)
		n = 0;
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Run argv; returns the exit status (128+sig if killed). */
static int run(char *const argv[], char **out, char **err)
{
	char of[] = "/tmp/tb-unit-outXXXXXX", ef[] = "/tmp/tb-unit-errXXXXXX";
	int ofd = mkstemp(of), efd = mkstemp(ef), st;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (!pid) {
		dup2(ofd, 1);
		dup2(efd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	close(ofd);
	close(efd);
	if (out)
		*out = slurp(of);
	if (err)
		*err = slurp(ef);
	unlink(of);
	unlink(ef);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int argc_of(char **argv)
{
	int n = 0;

	while (argv[n])
		n++;
	return n;
}

/* -------------------------------------------------------------- chain */

static int is_permutation(const uint32_t *o, uint64_t n)
{
	unsigned char *seen = calloc(n, 1);
	uint64_t i;
	int ok = 1;

	for (i = 0; i < n && ok; i++) {
		if (o[i] >= n || seen[o[i]])
			ok = 0;
		else
			seen[o[i]] = 1;
	}
	free(seen);
	return ok;
}

/* Every block of spc positions stays inside one chunk. */
static int chunks_whole(const uint32_t *o, uint64_t n, uint64_t spc,
			int want_seq)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		uint64_t pos_chunk = i / spc, slot_chunk = o[i] / spc;

		if (slot_chunk != o[i - i % spc] / spc)
			return 0;
		if (want_seq && slot_chunk != pos_chunk)
			return 0;
	}
	return 1;
}

static void test_chain(void)
{
	uint64_t sizes[] = { 1, 2, 3, 1000, 4096, 100003 };
	size_t k;
	int seed;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint64_t n = sizes[k];
		uint32_t *o = malloc(n * sizeof(*o));
		int ok = 1;

		for (seed = 0; seed < 3; seed++) {
			tb_chain_order(o, n, TB_PAT_RANDOM, 0, TB_ORDER_SEQ, seed);
			ok &= is_permutation(o, n);
		}
		check(ok, "chain: random order of %llu slots is a permutation",
		      (unsigned long long)n);
		free(o);
	}

	{
		uint64_t n = 64 * 100, spc = 64, i, fixed = 0;
		uint32_t *o = malloc(n * sizeof(*o));

		tb_chain_order(o, n, TB_PAT_RANDOM, 0, TB_ORDER_SEQ, 7);
		for (i = 0; i < n; i++)
			fixed += o[i] == i;
		check(fixed < 20, "chain: random order is shuffled (%llu fixed points of %llu)",
		      (unsigned long long)fixed, (unsigned long long)n);

		tb_chain_order(o, n, TB_PAT_CHUNK, spc, TB_ORDER_SEQ, 7);
		check(is_permutation(o, n) && chunks_whole(o, n, spc, 1),
		      "chain: chunk pattern visits each chunk whole, chunks in order");

		tb_chain_order(o, n, TB_PAT_CHUNK, spc, TB_ORDER_RANDOM, 7);
		{
			int moved = 0;

			for (i = 0; i < n; i += spc)
				moved += o[i] / spc != i / spc;
			check(is_permutation(o, n) && chunks_whole(o, n, spc, 0) &&
			      moved > 50,
			      "chain: chunk pattern with random chunk order (%d of 100 chunks moved)",
			      moved);
		}
		free(o);
	}

	{
		/* A partial last chunk is still covered. */
		uint64_t n = 64 * 10 + 17;
		uint32_t *o = malloc(n * sizeof(*o));
		int ok;

		tb_chain_order(o, n, TB_PAT_CHUNK, 64, TB_ORDER_SEQ, 3);
		ok = is_permutation(o, n);
		tb_chain_order(o, n, TB_PAT_CHUNK, 64, TB_ORDER_RANDOM, 3);
		ok &= is_permutation(o, n);
		check(ok, "chain: partial last chunk is visited");
		free(o);
	}

	{
		/* In memory: one lap visits every slot exactly once. */
		size_t strides[] = { 8, 64, 128 };
		enum tb_pattern pats[] = { TB_PAT_RANDOM, TB_PAT_CHUNK };
		size_t s, p;

		for (s = 0; s < 3; s++) {
			for (p = 0; p < 2; p++) {
				size_t len = 1 << 20, stride = strides[s];
				uint64_t n = len / stride, i;
				char *base = aligned_alloc(4096, len);
				unsigned char *seen = calloc(n, 1);
				void *start, *q;
				int ok = 1;

				start = tb_chain_build(base, len, stride, pats[p],
						       16384, TB_ORDER_RANDOM, 5);
				q = start;
				for (i = 0; i < n && ok; i++) {
					uint64_t off = (char *)q - base;

					if (off % stride || off / stride >= n ||
					    seen[off / stride])
						ok = 0;
					else
						seen[off / stride] = 1;
					q = *(void **)q;
				}
				ok &= q == start;
				ok &= tb_chase(start, n) == start;
				ok &= tb_chase(start, 3) ==
				      *(void **)*(void **)*(void **)start;
				check(ok, "chain: %s chain in memory, stride %zu: every slot once, closes the cycle",
				      pats[p] == TB_PAT_RANDOM ? "random" : "chunk",
				      stride);
				free(seen);
				free(base);
			}
		}
	}

	{
		/* lmbench's thrash chain: a single cycle over every slot, each
		 * step to another page, pages in the same order every lap. */
		size_t strides[] = { 64, 512, 4096 };
		size_t s;

		for (s = 0; s < 3; s++) {
			size_t len = 256 << 10, stride = strides[s];
			uint64_t n = len / stride, np = len / 4096, i;
			char *base = aligned_alloc(4096, len);
			unsigned char *seen = calloc(n, 1);
			uint64_t *lap0 = calloc(np, sizeof(*lap0));
			void *start, *q;
			int ok = 1;

			start = tb_chain_build(base, len, stride, TB_PAT_LMBENCH,
					       0, TB_ORDER_SEQ, 3);
			q = start;
			for (i = 0; i < n && ok; i++) {
				uint64_t off = (char *)q - base, next;

				if (off % stride || off / stride >= n ||
				    seen[off / stride])
					ok = 0;
				else
					seen[off / stride] = 1;
				if (i < np)
					lap0[i] = off / 4096;
				else if (off / 4096 != lap0[i % np])
					ok = 0;	/* same page order each lap */
				next = (uint64_t)((char *)*(void **)q - base);
				if (np > 1 && next / 4096 == off / 4096)
					ok = 0;	/* always another page */
				q = *(void **)q;
			}
			ok &= q == start;
			check(ok, "chain: lmbench chain, stride %zu: every slot once, page after page, closes the cycle",
			      stride);
			free(lap0);
			free(seen);
			free(base);
		}
	}

	{
		struct tb_rng r;
		int i, ok = 1, hits[10] = { 0 };

		tb_rng_seed(&r, 42);
		for (i = 0; i < 100000; i++) {
			uint64_t v = tb_rng_below(&r, 10);

			if (v >= 10)
				ok = 0;
			else
				hits[v]++;
		}
		for (i = 0; i < 10; i++)
			ok &= hits[i] > 9000 && hits[i] < 11000;
		check(ok, "rng: bounded values are in range and roughly uniform");
	}
}

/* ------------------------------------------------------------ parsers */

static void test_parsers(void)
{
	static const struct { const char *s; uint64_t v; } good_sizes[] = {
		{ "4096", 4096 }, { "4K", 4096 }, { "4k", 4096 },
		{ "64KiB", 65536 }, { "2M", 2 << 20 }, { "2MB", 2 << 20 },
		{ "1G", 1ULL << 30 }, { "1GiB", 1ULL << 30 }, { "3T", 3ULL << 40 },
		{ "512B", 512 },
	};
	static const char *const bad_sizes[] = {
		"", "-1", "+1", "1X", "K", "1.5G", " 1G", "1G ", "1 G",
		"99999999999999999999", "17179869184G", "1KK", "1iB", "0x10",
	};
	static const char *const good_dur[] = { "0.5", "50ms", "2s", "100us", "1", ".25" };
	static const char *const bad_dur[] = { "", "0", "-1", "abc", "1h", "nan",
					       "inf", "1e9", "0ms", " 1", "1 s" };
	int ids[64], n;
	size_t i;
	int ok;

	ok = 1;
	for (i = 0; i < sizeof(good_sizes) / sizeof(good_sizes[0]); i++) {
		uint64_t v = 0;

		if (tb_parse_size(good_sizes[i].s, &v) || v != good_sizes[i].v) {
			printf("# size '%s' -> %llu\n", good_sizes[i].s,
			       (unsigned long long)v);
			ok = 0;
		}
	}
	check(ok, "parse: sizes with K/M/G/T, KiB, MB suffixes are accepted");
	ok = 1;
	for (i = 0; i < sizeof(bad_sizes) / sizeof(bad_sizes[0]); i++) {
		uint64_t v;

		if (!tb_parse_size(bad_sizes[i], &v)) {
			printf("# size '%s' accepted\n", bad_sizes[i]);
			ok = 0;
		}
	}
	check(ok, "parse: malformed, signed and overflowing sizes are rejected");

	ok = 1;
	for (i = 0; i < sizeof(good_dur) / sizeof(good_dur[0]); i++) {
		double d;

		ok &= !tb_parse_duration(good_dur[i], &d) && d > 0;
	}
	{
		double d = 0;

		ok &= !tb_parse_duration("50ms", &d) && fabs(d - 0.05) < 1e-12;
	}
	check(ok, "parse: durations in s, ms, us are accepted");
	ok = 1;
	for (i = 0; i < sizeof(bad_dur) / sizeof(bad_dur[0]); i++) {
		double d;

		if (!tb_parse_duration(bad_dur[i], &d)) {
			printf("# duration '%s' accepted\n", bad_dur[i]);
			ok = 0;
		}
	}
	check(ok, "parse: zero, negative, non-finite and malformed durations are rejected");

	{
		long v;

		ok = !tb_parse_long("12", 0, 100, &v) && v == 12;
		ok &= tb_parse_long("101", 0, 100, &v) != 0;
		ok &= tb_parse_long("-1", 0, 100, &v) != 0;
		ok &= tb_parse_long("1a", 0, 100, &v) != 0;
		ok &= tb_parse_long("", 0, 100, &v) != 0;
		ok &= tb_parse_long(" 1", 0, 100, &v) != 0;
		check(ok, "parse: integers are range checked and must be whole");
	}

	n = tb_parse_cpulist("0-3,8,10-11\n", ids, 64);
	check(n == 7 && ids[0] == 0 && ids[3] == 3 && ids[4] == 8 && ids[6] == 11,
	      "parse: cpulist '0-3,8,10-11' gives 7 CPUs");
	ok = 1;
	{
		static const char *const bad[] = { "3-1", "1,", ",1", "a", "1--2", "1-", "" };

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			ok &= tb_parse_cpulist(bad[i], ids, 64) <= 0;
	}
	check(ok, "parse: malformed cpulists are rejected");
}

/* -------------------------------------------------------------- mixes */

/*
 * The kernels are built with -DTB_KERNEL_TRACE for this program and report
 * every line they load or store into; tr_* records that per line of one
 * buffer. A line loaded twice, or loaded after it was stored into, or a
 * report outside the buffer counts in tr_bad.
 */
#define TR_LD 1
#define TR_ST 2
static unsigned char *tr_state;
static const char *tr_base;
static size_t tr_lines;
static int tr_bad;

void tb_k_trace(const void *line, int store)
{
	const char *p = line;
	size_t i;

	if (!tr_state)
		return;
	if (p < tr_base || (size_t)(p - tr_base) % TB_LINE ||
	    (size_t)(p - tr_base) / TB_LINE >= tr_lines) {
		tr_bad++;
		return;
	}
	i = (size_t)(p - tr_base) / TB_LINE;
	if (store ? tr_state[i] & TR_ST : tr_state[i] != 0)
		tr_bad++;
	tr_state[i] |= store ? TR_ST : TR_LD;
}

struct tr_count {
	uint64_t ld, st, rw;	/* lines loaded only, stored only, both */
	uint64_t misplaced;	/* loads in the target, stores in the source,
				   lines of the arrays not touched, or lines
				   beyond them touched */
};

/* One pass of mix m over len bytes (in two pieces), traced and counted. */
static void trace_pass(enum tb_mix m, size_t len, struct tb_mix_layout *l,
		       struct tr_count *c)
{
	char *buf = aligned_alloc(4096, len);
	uint64_t i, first = 3, sline;

	memset(buf, 0, len);
	memset(c, 0, sizeof(*c));
	tb_mix_layout(len, m, l);
	tr_base = buf;
	tr_lines = len / TB_LINE;
	tr_state = calloc(tr_lines, 1);
	tr_bad = 0;
	tb_sink += tb_mix_run(buf, l, m, 0, first);
	tb_sink += tb_mix_run(buf, l, m, first, l->steps - first);
	sline = l->src / TB_LINE;
	for (i = 0; i < tr_lines; i++) {
		unsigned char st = tr_state[i];

		c->ld += st == TR_LD;
		c->st += st == TR_ST;
		c->rw += st == (TR_LD | TR_ST);
		if (i < sline ? st != TR_LD :
		    i < sline + l->dst / TB_LINE ? !(st & TR_ST) : st != 0)
			c->misplaced++;
	}
	free(tr_state);
	tr_state = NULL;
	free(buf);
}

/* Expected lines per step: read, written; and the shape of the stream. */
static const struct {
	enum tb_mix m;
	unsigned int rd, wr;		/* MLC's ratio */
	unsigned int ld, st, rw;	/* loaded only, stored only, both */
} mix_want[] = {
	{ TB_MIX_READ, 1, 0, 1, 0, 0 },
	{ TB_MIX_3_1, 3, 1, 2, 1, 0 },
	{ TB_MIX_2_1, 2, 1, 1, 1, 0 },
	{ TB_MIX_1_1, 1, 1, 0, 1, 0 },
	{ TB_MIX_RMW, 1, 1, 0, 0, 1 },
	{ TB_MIX_COPY, 1, 1, 1, 1, 0 },
};

static void test_mix_trace(void)
{
	/* 100 KiB + 5 lines: no mix divides it evenly. */
	size_t len = (100 << 10) + 5 * TB_LINE, k;

	for (k = 0; k < sizeof(mix_want) / sizeof(mix_want[0]); k++) {
		enum tb_mix m = mix_want[k].m;
		const struct tb_mix_plan *p = tb_mix_plan(m);
		struct tb_mix_layout l;
		struct tr_count c;
		uint64_t rd, wr, n;
		int ok;

		trace_pass(m, len, &l, &c);
		n = l.steps;
		/* The read for ownership of a line only stored into. */
		rd = c.ld + c.rw + (p->rfo ? c.st : 0);
		wr = c.st + c.rw;
		ok = !tr_bad && !c.misplaced && n == len / TB_LINE /
		     (mix_want[k].ld + mix_want[k].st + mix_want[k].rw);
		ok &= c.ld == n * mix_want[k].ld && c.st == n * mix_want[k].st &&
		      c.rw == n * mix_want[k].rw;
		ok &= rd == n * mix_want[k].rd && wr == n * mix_want[k].wr;
		ok &= (rd + wr) * TB_LINE == l.bytes;
		if (!ok)
			printf("# %s: steps %llu loaded %llu stored %llu both %llu misplaced %llu bad %d bytes %llu\n",
			       tb_mix_name(m), (unsigned long long)n,
			       (unsigned long long)c.ld, (unsigned long long)c.st,
			       (unsigned long long)c.rw,
			       (unsigned long long)c.misplaced, tr_bad,
			       (unsigned long long)l.bytes);
		check(ok, "mix %s: the kernel reads %u and writes %u lines per step (%llu steps), bytes counted = (reads + writes) * 64",
		      tb_mix_name(m), mix_want[k].rd, mix_want[k].wr,
		      (unsigned long long)n);
	}
}

static void test_mix_plans(void)
{
	size_t k;
	int ok = 1;

	for (k = 0; k < sizeof(mix_want) / sizeof(mix_want[0]); k++) {
		unsigned int rd, wr;

		tb_mix_lines(mix_want[k].m, &rd, &wr);
		ok &= rd == mix_want[k].rd && wr == mix_want[k].wr;
	}
	ok &= !strcmp(tb_mix_plan(TB_MIX_1_1)->mlc, "-W5") &&
	      !strcmp(tb_mix_plan(TB_MIX_2_1)->mlc, "-W2") &&
	      !strcmp(tb_mix_plan(TB_MIX_3_1)->mlc, "-W3") &&
	      !tb_mix_plan(TB_MIX_RMW)->mlc && !tb_mix_plan(TB_MIX_COPY)->mlc &&
	      !tb_mix_plan(TB_MIX_COPY)->rfo && tb_mix_plan(TB_MIX_1_1)->rfo;
	check(ok, "mix: plans give MLC's ratios (3:1 = W3, 2:1 = W2, 1:1 = W5; rmw and copy 1:1, copy without the read for ownership)");
}

static void test_mix_bytes(void)
{
	static const struct { enum tb_mix m; uint64_t bytes; } want[] = {
		{ TB_MIX_READ, 1 << 20 },
		{ TB_MIX_3_1, 16384 / 3 * 4 * 64 },	/* 4/3 of the region */
		{ TB_MIX_2_1, 3 << 19 },		/* 3/2 */
		{ TB_MIX_1_1, 2 << 20 },
		{ TB_MIX_RMW, 2 << 20 },
		{ TB_MIX_COPY, 1 << 20 },	/* as 1.0's 1:1 counted */
	};
	struct tb_mix_layout l;
	size_t k;
	int ok = 1;

	for (k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		tb_mix_layout(1 << 20, want[k].m, &l);
		if (l.bytes != want[k].bytes ||
		    l.src + l.dst > (1 << 20) || l.bytes != l.steps * l.step_bytes) {
			printf("# %s: %llu bytes per pass\n",
			       tb_mix_name(want[k].m), (unsigned long long)l.bytes);
			ok = 0;
		}
	}
	check(ok, "mix: bytes counted per pass over 1 MiB: all-reads 1 MiB, 3:1 4/3, 2:1 3/2, 1:1 and rmw 2 MiB, copy 1 MiB");
}

static void test_mix_names(void)
{
	static const struct { const char *s; enum tb_mix m; } good[] = {
		{ "all-reads", TB_MIX_READ }, { "reads", TB_MIX_READ },
		{ "r", TB_MIX_READ }, { "R", TB_MIX_READ },
		{ "3:1", TB_MIX_3_1 }, { "W3", TB_MIX_3_1 },
		{ "2:1", TB_MIX_2_1 }, { "w2", TB_MIX_2_1 },
		{ "1:1", TB_MIX_1_1 }, { "W5", TB_MIX_1_1 },
		{ "rmw", TB_MIX_RMW }, { "copy", TB_MIX_COPY },
	};
	static const char *const bad[] = {
		"", "all", "4:1", "1:2", "W6", "W", "-W5", "RMW", "1:1 ", "in-place",
	};
	enum tb_mix m;
	size_t i;
	int ok = 1;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok &= !tb_parse_mix(good[i].s, &m) && m == good[i].m;
	for (m = 0; m < TB_MIX_COUNT; m++) {
		enum tb_mix back;

		ok &= !tb_parse_mix(tb_mix_name(m), &back) && back == m;
	}
	check(ok, "mix: names, MLC's R/W3/W2/W5 and the old spellings parse; every name parses back");
	ok = 1;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!tb_parse_mix(bad[i], &m)) {
			printf("# mix '%s' accepted\n", bad[i]);
			ok = 0;
		}
	check(ok, "mix: unknown mixes are rejected");
}

static void test_mixes(void)
{
	test_mix_names();
	test_mix_plans();
	test_mix_bytes();
	test_mix_trace();
}

/* Parse argv with fn; returns its result with messages silenced. */
#define PARSE(fn, opts, ...)						\
	({								\
		char *av_[] = { "cmd", __VA_ARGS__, NULL };		\
		int r_;							\
		quiet();						\
		r_ = fn(argc_of(av_), av_, opts);			\
		loud();							\
		r_;							\
	})

static void test_option_parsers(void)
{
	struct tb_latency_opts lo;
	struct tb_bandwidth_opts bo;
	struct tb_memcpy_opts mo;
	struct tb_loaded_opts ldo;
	struct tb_hugepages_opts ho;
	struct tb_run_opts ro;
	int ok;

	ok = PARSE(latency_parse, &lo, "--size", "64M", "--pattern", "chunk",
		   "--chunk", "512K", "--stride", "128", "--mem-node", "1",
		   "--cpu-node", "0", "--page", "thp", "--duration", "50ms",
		   "--json") == 0;
	ok &= lo.c.size == 64 << 20 && lo.pattern == TB_PAT_CHUNK &&
	      lo.chunk == 512 << 10 && lo.stride == 128 && lo.c.mem_node == 1 &&
	      lo.c.cpu_node == 0 && lo.c.page == TB_PAGE_THP &&
	      fabs(lo.c.duration - 0.05) < 1e-9 && lo.c.json;
	check(ok, "latency options: a full valid command line is parsed");
	ok = PARSE(latency_parse, &lo, "--matrix", "-s", "8M") == 0 && lo.matrix;
	check(ok, "latency options: --matrix");
	ok = PARSE(latency_parse, &lo, "--pattern", "lmbench") == 0 &&
	     lo.pattern == TB_PAT_LMBENCH;
	check(ok, "latency options: --pattern lmbench");

	ok = PARSE(latency_parse, &lo, "--bogus") < 0;
	ok &= PARSE(latency_parse, &lo, "-x") < 0;
	ok &= PARSE(latency_parse, &lo, "--size", "12X") < 0;
	ok &= PARSE(latency_parse, &lo, "--size", "100") < 0;
	ok &= PARSE(latency_parse, &lo, "--size") < 0;
	ok &= PARSE(latency_parse, &lo, "--stride", "12") < 0;
	ok &= PARSE(latency_parse, &lo, "--stride", "0") < 0;
	ok &= PARSE(latency_parse, &lo, "--pattern", "linear") < 0;
	ok &= PARSE(latency_parse, &lo, "--pattern", "lmbench", "--chunk", "4K") < 0;
	ok &= PARSE(latency_parse, &lo, "--chunk", "256K") < 0;
	ok &= PARSE(latency_parse, &lo, "--chunk-order", "up") < 0;
	ok &= PARSE(latency_parse, &lo, "--page", "64k") < 0;
	ok &= PARSE(latency_parse, &lo, "--mem-node", "-1") < 0;
	ok &= PARSE(latency_parse, &lo, "--mem-node", "x") < 0;
	ok &= PARSE(latency_parse, &lo, "--cpu-node", "99999") < 0;
	ok &= PARSE(latency_parse, &lo, "--duration", "0") < 0;
	ok &= PARSE(latency_parse, &lo, "--warmup", "-1") < 0;
	ok &= PARSE(latency_parse, &lo, "--matrix", "--mem-node", "0") < 0;
	ok &= PARSE(latency_parse, &lo, "extra") < 0;
	check(ok, "latency options: unknown options, bad values, missing values, conflicts and stray arguments are rejected");

	ok = PARSE(bandwidth_parse, &bo, "--mix", "2:1,1:1", "--threads", "2") == 0;
	ok &= !bo.mixes[TB_MIX_READ] && bo.mixes[TB_MIX_2_1] &&
	      bo.mixes[TB_MIX_1_1] && bo.threads == 2;
	check(ok, "bandwidth options: --mix list and --threads");
	{
		static const unsigned char four[TB_MIX_COUNT] = { 1, 1, 1, 1, 0, 0 };
		static const unsigned char extra[TB_MIX_COUNT] = { 1, 1, 1, 1, 1, 1 };
		static const unsigned char mlc[TB_MIX_COUNT] = { 0, 1, 1, 1, 0, 0 };

		ok = PARSE(bandwidth_parse, &bo, "-s", "8M") == 0 &&
		     !memcmp(bo.mixes, four, TB_MIX_COUNT);
		ok &= PARSE(bandwidth_parse, &bo, "--mix", "all") == 0 &&
		      !memcmp(bo.mixes, four, TB_MIX_COUNT);
		ok &= PARSE(bandwidth_parse, &bo, "--mix", "all,rmw,copy") == 0 &&
		      !memcmp(bo.mixes, extra, TB_MIX_COUNT);
		ok &= PARSE(bandwidth_parse, &bo, "--mix", "W5,W2,W3") == 0 &&
		      !memcmp(bo.mixes, mlc, TB_MIX_COUNT);
		check(ok, "bandwidth options: default and 'all' are the four MLC mixes; rmw and copy only when named");
	}
	ok = PARSE(bandwidth_parse, &bo, "--threads", "0") < 0;
	ok &= PARSE(bandwidth_parse, &bo, "--mix", "4:1") < 0;
	ok &= PARSE(bandwidth_parse, &bo, "--mix", "2:1,") < 0;
	ok &= PARSE(bandwidth_parse, &bo, "--mix", "") < 0;
	ok &= PARSE(bandwidth_parse, &bo, "--mix", "rmw,W6") < 0;
	ok &= PARSE(bandwidth_parse, &bo, "--pattern", "chunk") < 0;
	check(ok, "bandwidth options: bad thread counts, mixes and foreign options are rejected");

	ok = PARSE(memcpy_parse, &mo, "--block", "large,16K,4M") == 0 &&
	     mo.nblocks == 3 && mo.blocks[0] == 0 && mo.blocks[1] == 16384;
	ok &= PARSE(memcpy_parse, &mo, "--block", "100") < 0;
	ok &= PARSE(memcpy_parse, &mo, "--block", "huge") < 0;
	ok &= PARSE(memcpy_parse, &mo, "--block", "16K,") < 0;
	check(ok, "memcpy options: block lists are parsed, bad blocks rejected");

	ok = PARSE(loaded_parse, &ldo, "--delays", "0,10,1000", "--plot", "x.png") == 0 &&
	     ldo.ndelays == 3 && ldo.delays[2] == 1000;
	ok &= PARSE(loaded_parse, &ldo, "--delays", "1,,2") < 0;
	ok &= PARSE(loaded_parse, &ldo, "--delays", "x") < 0;
	ok &= PARSE(loaded_parse, &ldo, "--delays", "-5") < 0;
	ok &= PARSE(loaded_parse, &ldo, "--load-size", "1K") < 0;
	check(ok, "loaded-latency options: delay lists are parsed, bad lists rejected");

	ok = PARSE(hugepages_parse, &ho, "--size", "1G", "--count", "2", "--node",
		   "1", "--", "/bin/true", "-x") == 0;
	ok &= ho.page_kb == 1048576 && ho.count == 2 && ho.node == 1 &&
	      ho.cmd_index > 0;
	ok &= PARSE(hugepages_parse, &ho, "--status") == 0 && ho.status;
	ok &= PARSE(hugepages_parse, &ho, "--count", "2") < 0;	/* no command */
	ok &= PARSE(hugepages_parse, &ho, "--", "/bin/true") < 0;	/* no count */
	ok &= PARSE(hugepages_parse, &ho, "--size", "3M", "--count", "1", "--", "x") < 0;
	ok &= PARSE(hugepages_parse, &ho, "--count", "0", "--", "x") < 0;
	ok &= PARSE(hugepages_parse, &ho, "--status", "--count", "1") < 0;
	check(ok, "hugepages options: reservation and --status parsed, incomplete or bad ones rejected");

	ok = PARSE(run_parse, &ro, "--mem-nodes", "0,1", "--skip", "memcpy,loaded",
		   "--apply-to-htmm", "-d", "0.1") == 0;
	ok &= ro.mem_nodes_given && ro.mem_nodes[0] && ro.mem_nodes[1] &&
	      ro.skip_memcpy && ro.skip_loaded && !ro.skip_bandwidth &&
	      ro.apply_htmm;
	ok &= PARSE(run_parse, &ro, "--skip", "latency") < 0;
	ok &= PARSE(run_parse, &ro, "--mem-nodes", "a") < 0;
	ok &= PARSE(run_parse, &ro, "--bw-size", "4K") < 0;
	ok &= PARSE(run_parse, &ro, "--matrix") < 0;
	check(ok, "run options: valid line parsed, bad skip lists, node lists and sizes rejected");
}

/* --------------------------------------------------------------- JSON */

static int valid(const char *s)
{
	char err[128];

	return tb_json_validate(s, strlen(s), err, sizeof(err)) == 0;
}

static void test_json(void)
{
	static const char *const good[] = {
		"{}", "[]", "0", "-1.5e3", "\"a\\u00e9\\n\"", "true", "null",
		"{\"a\": [1, 2, {\"b\": false}], \"c\": \"x\"}", " {\"a\":1} \n",
	};
	static const char *const bad[] = {
		"", "{", "{\"a\":1,}", "[1,]", "{a:1}", "{\"a\" 1}", "01", "1.",
		"NaN", "\"\\x\"", "{} {}", "\"a", "[1 2]", "tru", "-", "\"\t\"",
	};
	char buf[4096];
	size_t i;
	FILE *f;
	int ok = 1;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok &= valid(good[i]);
	check(ok, "json: validator accepts valid documents");
	ok = 1;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (valid(bad[i])) {
			printf("# accepted: %s\n", bad[i]);
			ok = 0;
		}
	}
	check(ok, "json: validator rejects invalid documents");

	f = fmemopen(buf, sizeof(buf), "w");
	{
		struct tb_json j;

		tb_json_begin(&j, f);
		tb_json_str(&j, "s", "quote \" backslash \\ tab \t nl \n ctl \x01");
		tb_json_num(&j, "nan", NAN, 2);
		tb_json_num(&j, "x", 1.25, 2);
		tb_json_int(&j, "i", -3);
		tb_json_bool(&j, "b", 1);
		tb_json_arr(&j, "a");
		tb_json_obj(&j, NULL);
		tb_json_int(&j, "k", 1);
		tb_json_obj_end(&j);
		tb_json_obj(&j, NULL);
		tb_json_obj_end(&j);
		tb_json_arr_end(&j);
		tb_json_obj(&j, "o");
		tb_json_arr(&j, "e");
		tb_json_arr_end(&j);
		tb_json_obj_end(&j);
		tb_json_end(&j);
	}
	fclose(f);
	check(valid(buf) && tb_json_has_key(buf, "nan") && strstr(buf, "null"),
	      "json: writer output (escapes, NaN as null, nesting) parses");
}

/* ---------------------------------------------------------------- CLI */

static int json_ok(const char *out, const char *const *keys)
{
	char err[128];

	if (tb_json_validate(out, strlen(out), err, sizeof(err))) {
		printf("# invalid JSON: %s\n", err);
		return 0;
	}
	for (; *keys; keys++)
		if (!tb_json_has_key(out, *keys)) {
			printf("# missing key %s\n", *keys);
			return 0;
		}
	return 1;
}

/* Run av; check that it exits with want and that stderr has msg. */
static void check_fails(char *const av[], int want, const char *msg,
			const char *name)
{
	char *out, *err;
	int st = run(av, &out, &err);

	check(st == want && strstr(err, msg), "%s", name);
	free(out);
	free(err);
}

/*
 * Run av; check that it exits 0, that stdout is valid JSON with the keys
 * (unless keys is NULL) and has every string of also (NULL-terminated).
 */
static void check_output(char *const av[], const char *const *keys,
			 const char *const *also, const char *name)
{
	char *out, *err;
	int st = run(av, &out, &err), ok;

	ok = st == 0 && (!keys || json_ok(out, keys));
	for (; ok && also && *also; also++)
		ok = strstr(out, *also) != NULL;
	check(ok, "%s", name);
	free(out);
	free(err);
}

#define TINY "--duration", "0.02", "--warmup", "0.01"

static void test_cli(void)
{
	char *out, *err;
	int st;

	{
		char *av[] = { (char *)bin, "--help", NULL };
		static const char *const also[] = { "latency", "hugepages", NULL };

		check_output(av, NULL, also,
			     "cli: tierbench --help lists the commands");
	}
	{
		static const char *const cmds[] = { "latency", "bandwidth", "memcpy",
						    "loaded-latency", "hugepages",
						    "run", "json-check" };
		size_t i;
		int ok = 1;

		for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			char *av[] = { (char *)bin, (char *)cmds[i], "--help", NULL };

			st = run(av, &out, &err);
			ok &= st == 0 && strstr(out, "usage:") != NULL;
			free(out);
			free(err);
		}
		check(ok, "cli: every command has --help (exit 0)");
	}
	{
		char *av[] = { (char *)bin, "latency", "--frobnicate", NULL };

		check_fails(av, 2, "unknown option '--frobnicate'",
			    "cli: unknown option -> exit 2 and a clear message");
	}
	{
		char *av[] = { (char *)bin, "bandwidth", "--size", "lots", NULL };

		check_fails(av, 2, "invalid --size 'lots'",
			    "cli: bad value -> exit 2 and a clear message");
	}
	{
		char *av[] = { (char *)bin, "frob", NULL };

		check_fails(av, 2, "unknown command",
			    "cli: unknown command -> exit 2");
	}
	{
		char *av[] = { (char *)bin, "latency", "--mem-node", "1000", "--size", "4M", NULL };

		check_fails(av, 2, "no such online NUMA node",
			    "cli: a node the machine does not have -> exit 2");
	}
	{
		char *av[] = { (char *)bin, "bandwidth", "--threads", "4096", "--size", "8M", NULL };

		check_fails(av, 2, "usable CPUs",
			    "cli: more threads than the node's CPUs -> exit 2");
	}
	{
		char *av[] = { (char *)bin, "latency", "--size", "4M", TINY, NULL };
		static const char *const also[] = { "latency cpu_node=",
						    " ns_per_load=", NULL };

		check_output(av, NULL, also,
			     "cli: latency text output has its fields");
	}
	{
		char *av[] = { (char *)bin, "latency", "--size", "4M", "--pattern", "lmbench", TINY, NULL };
		char *av2[] = { (char *)bin, "latency", "--size", "3M", "--pattern", "lmbench",
				"--stride", "24", NULL };
		int ok;

		st = run(av, &out, &err);
		ok = st == 0 && strstr(out, "pattern=lmbench") && strstr(out, "chunk=4K") &&
		     strstr(out, "placed_pct=100.0");
		free(out);
		free(err);
		st = run(av2, &out, &err);
		ok &= st == 2 && strstr(err, "power of two");
		check(ok, "cli: latency --pattern lmbench runs; a stride that is not a power of two is rejected");
		free(out);
		free(err);
	}
	{
		char *av[] = { (char *)bin, "latency", "--size", "4M", "--pattern", "chunk",
			       "--chunk", "64K", "--json", TINY, NULL };
		static const char *const keys[] = { "tool", "params", "results",
						    "ns_per_load", "mem_node", NULL };

		check_output(av, keys, NULL, "cli: latency --json parses");
	}
	{
		char *av[] = { (char *)bin, "latency", "--matrix", "--size", "4M", "--json", TINY, NULL };
		static const char *const keys[] = { "results", "cpu_node", "ns_per_load", NULL };
		static const char *const also[] = { "\"matrix\"", NULL };

		check_output(av, keys, also, "cli: latency --matrix --json parses");
	}
	{
		char *av[] = { (char *)bin, "bandwidth", "--size", "8M", "--json", TINY, NULL };
		static const char *const keys[] = { "results", "mix", "mbs", "gbs", NULL };
		static const char *const also[] = { "\"all-reads\"", "\"3:1\"",
						    "\"2:1\"", "\"1:1\"", NULL };

		st = run(av, &out, &err);
		check(st == 0 && json_ok(out, keys) && strstr(out, also[0]) &&
		      strstr(out, also[1]) && strstr(out, also[2]) &&
		      strstr(out, also[3]) && !strstr(out, "\"rmw\"") &&
		      !strstr(out, "\"copy\""),
		      "cli: bandwidth --json parses and has the four default mixes, not rmw and copy");
		free(out);
		free(err);
	}
	{
		char *av[] = { (char *)bin, "bandwidth", "--size", "8M", "--mix",
			       "rmw,copy", TINY, NULL };
		static const char *const also[] = { " mix=rmw ", " mix=copy ",
						    " gbs=", NULL };

		check_output(av, NULL, also,
			     "cli: bandwidth --mix rmw,copy runs both extra mixes");
	}
	{
		char *av[] = { (char *)bin, "memcpy", "--size", "8M", "--json", TINY, NULL };
		static const char *const keys[] = { "results", "block", "block_bytes", "gbs", NULL };
		static const char *const also[] = { "\"large\"", "\"16K\"", NULL };

		check_output(av, keys, also,
			     "cli: memcpy --json parses and has large and 16K copies");
	}
	{
		char *av[] = { (char *)bin, "loaded-latency", "--size", "4M", "--load-size", "4M",
			       "--delays", "0,1000", "--json", TINY, NULL };
		static const char *const keys[] = { "results", "delay", "bw_gbs", "lat_ns", NULL };

		st = run(av, &out, &err);
		if (st == 2 && strstr(err, "one usable CPU"))
			check(1, "cli: loaded-latency --json parses # SKIP one CPU");
		else
			check(st == 0 && json_ok(out, keys),
			      "cli: loaded-latency --json parses");
		free(out);
		free(err);
	}
	{
		char *av[] = { (char *)bin, "hugepages", "--status", "--json", NULL };
		static const char *const keys[] = { "tool", "pools", NULL };

		check_output(av, keys, NULL, "cli: hugepages --status --json parses");
	}
	{
		char *av[] = { (char *)bin, "run", "--size", "4M", "--bw-size", "4M",
			       "--delays", "0,1000", "--json", TINY, NULL };
		static const char *const keys[] = { "nodes", "idle_latency_ns", "bandwidth",
						    "memcpy", "htmm", NULL };

		check_output(av, keys, NULL, "cli: run --json parses");
	}
	{
		char *av[] = { (char *)bin, "run", "--size", "4M", "--bw-size", "4M",
			       "--skip", "memcpy,loaded", TINY, NULL };
		static const char *const also[] = { "Idle latency node",
						    "Peak bandwidth node",
						    " all-reads ", " GB/s", NULL };

		check_output(av, NULL, also, "cli: run prints the summary lines");
	}
	{
		char *av[] = { (char *)bin, "run", "--apply-to-htmm", "--htmm-dir",
			       "/nonexistent/htmm", "--size", "4M", NULL };

		check_fails(av, 1, "no htmm latency tunables",
			    "cli: run --apply-to-htmm without the tunables -> clear message, exit 1");
	}
	{
		char dir[] = "/tmp/tb-unit-htmmXXXXXX", fast[256], slow[256];
		char *a, *b;
		int fd;

		mkdtemp(dir);
		snprintf(fast, sizeof(fast), "%s/htmm_fast_latency_ns", dir);
		snprintf(slow, sizeof(slow), "%s/htmm_slow_latency_ns", dir);
		fd = open(fast, O_CREAT | O_WRONLY, 0644);
		close(fd);
		fd = open(slow, O_CREAT | O_WRONLY, 0644);
		close(fd);
		{
			char *av[] = { (char *)bin, "run", "--apply-to-htmm", "--htmm-dir",
				       dir, "--size", "4M", "--bw-size", "4M", "--skip",
				       "bandwidth,memcpy,loaded", TINY, NULL };

			st = run(av, &out, &err);
		}
		a = slurp(fast);
		b = slurp(slow);
		/*
		 * htmm refuses fast >= slow: where the fastest and the slowest
		 * node measure the same (one node, as on most build hosts),
		 * nothing may be written.
		 */
		if (strstr(err, "nothing written"))
			check(st != 0 && !*a && !*b,
			      "cli: run --apply-to-htmm writes nothing when fast and slow measure the same");
		else
			check(st == 0 && atol(a) > 0 && atol(b) > atol(a) &&
			      strchr(a, '\n') && strstr(out, "Applied to htmm"),
			      "cli: run --apply-to-htmm writes integer ns to the tunables (fast %ld, slow %ld)",
			      atol(a), atol(b));
		free(a);
		free(b);
		free(out);
		free(err);
		unlink(fast);
		unlink(slow);
		rmdir(dir);
	}
	{
		char *av[] = { (char *)bin, "json-check", "--require", "a,b", "/dev/stdin", NULL };
		char tmp[] = "/tmp/tb-unit-jsonXXXXXX";
		int fd = mkstemp(tmp);
		char *av2[] = { (char *)bin, "json-check", "--require", "a,zz", tmp, NULL };
		char *av3[] = { (char *)bin, "json-check", tmp, NULL };
		int ok;

		(void)av;
		if (write(fd, "{\"a\":1,\"b\":[2]}", 15) != 15)
			fd = -1;
		close(fd);
		av[4] = tmp;
		ok = run(av, &out, &err) == 0;
		free(out);
		free(err);
		ok &= run(av2, &out, &err) == 1 && strstr(out, "missing key: zz");
		free(out);
		free(err);
		fd = open(tmp, O_WRONLY | O_TRUNC);
		if (write(fd, "{\"a\":1,}", 8) != 8)
			ok = 0;
		close(fd);
		ok &= run(av3, &out, &err) == 1 && strstr(out, "invalid JSON");
		free(out);
		free(err);
		unlink(tmp);
		check(ok, "cli: json-check validates and checks required keys");
	}
}

static void test_smoke_script(void)
{
	char dir[512], *out, *err, *p;
	int st, plan = -1, lines = 0, notok = 0;

	if (!smoke || access(smoke, R_OK)) {
		check(1, "guest-smoke.sh runs on the host # SKIP script not given");
		return;
	}
	snprintf(dir, sizeof(dir), "%s", bin);
	p = strrchr(dir, '/');
	if (p)
		*p = 0;
	{
		char *av[] = { "/bin/sh", (char *)smoke, dir, NULL };

		st = run(av, &out, &err);
	}
	for (p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, "1..", 3))
			plan = atoi(p + 3);
		else if (!strncmp(p, "ok ", 3))
			lines++;
		else if (!strncmp(p, "not ok ", 7)) {
			lines++;
			notok++;
		}
	}
	if (notok || st)
		printf("# guest-smoke.sh output:\n%s\n# stderr:\n%s\n", out ? out : "", err ? err : "");
	check(st == 0 && plan > 0 && plan == lines && !notok,
	      "guest-smoke.sh passes on the host (%d checks, plan %d)", lines, plan);
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH/TO/tierbench [guest-smoke.sh]\n",
			argv[0]);
		return 2;
	}
	bin = argv[1];
	smoke = argc > 2 ? argv[2] : NULL;
	test_chain();
	test_parsers();
	test_mixes();
	test_option_parsers();
	test_json();
	test_cli();
	test_smoke_script();
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
