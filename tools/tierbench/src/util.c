// SPDX-License-Identifier: GPL-2.0
/* tierbench: messages, strict parsers, clock, statistics, RNG. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tierbench.h"

const char *tb_prog = "tierbench";
int tb_verbose;
volatile uint64_t tb_sink;

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", tb_prog, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void tb_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
}

void tb_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void tb_info(const char *fmt, ...)
{
	va_list ap;

	if (!tb_verbose)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

/* Unsigned decimal, no sign, no leading space; returns chars consumed. */
static int parse_u64_prefix(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int i = 0;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	for (; isdigit((unsigned char)s[i]); i++) {
		unsigned d = s[i] - '0';

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return i;
}

int tb_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	uint64_t v, mult = 1;
	const char *p, *unit;
	int n, c;

	if (!s || !*s)
		return -1;
	n = parse_u64_prefix(s, &v);
	if (n < 0)
		return -1;
	p = s + n;
	/* K, M, G, T: powers of 1024. */
	c = toupper((unsigned char)*p);
	if (c && (unit = strchr(units, c))) {
		mult = 1ULL << (10 * (unit - units + 1));
		p++;
	} else if (c && c != 'B') {
		return -1;
	}
	/* Optional "B" or "iB" after the multiplier, or "B" alone. */
	if (mult > 1 && (p[0] == 'i' || p[0] == 'I') &&
	    (p[1] == 'B' || p[1] == 'b') && !p[2])
		p += 2;
	else if ((*p == 'B' || *p == 'b') && !p[1])
		p++;
	if (*p)
		return -1;
	if (v > UINT64_MAX / mult)
		return -1;
	*out = v * mult;
	return 0;
}

int tb_parse_duration(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	if (!strcmp(end, "ms"))
		v /= 1e3;
	else if (!strcmp(end, "us"))
		v /= 1e6;
	else if (strcmp(end, "s") && *end)
		return -1;
	if (v <= 0 || v > 86400)
		return -1;
	*out = v;
	return 0;
}

int tb_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int tb_parse_list(const char *s, unsigned char *set, int max)
{
	int ids[TB_MAX_CPUS];
	int n, i;

	n = tb_parse_cpulist(s, ids, TB_MAX_CPUS);
	if (n <= 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (ids[i] >= max)
			return -1;
		set[ids[i]] = 1;
	}
	return 0;
}

int tb_parse_cpulist(const char *s, int *ids, int max)
{
	int n = 0;

	if (!s)
		return -1;
	while (*s && *s != '\n') {
		uint64_t a, b;
		int k = parse_u64_prefix(s, &a);

		if (k < 0 || a >= (uint64_t)TB_MAX_CPUS)
			return -1;
		s += k;
		b = a;
		if (*s == '-') {
			k = parse_u64_prefix(s + 1, &b);
			if (k < 0 || b < a || b >= (uint64_t)TB_MAX_CPUS)
				return -1;
			s += 1 + k;
		}
		for (; a <= b; a++) {
			if (n >= max)
				return -1;
			ids[n++] = (int)a;
		}
		if (*s == ',') {
			s++;
			if (!*s || *s == '\n')
				return -1;
		} else if (*s && *s != '\n') {
			return -1;
		}
	}
	return n;
}

const char *tb_fmt_size(uint64_t v, char *buf, size_t len)
{
	static const char suf[] = "KMGT";
	int i;

	for (i = 3; i >= 0; i--) {
		uint64_t m = 1ULL << (10 * (i + 1));

		if (v >= m && v % m == 0) {
			snprintf(buf, len, "%llu%c",
				 (unsigned long long)(v / m), suf[i]);
			return buf;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

double tb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double tb_median(const double *v, int n)
{
	double *c, m;

	if (n <= 0)
		return NAN;
	c = malloc(n * sizeof(*c));
	if (!c)
		return NAN;
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_double);
	m = (n & 1) ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return m;
}

double tb_min(const double *v, int n)
{
	double m = INFINITY;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

double tb_max(const double *v, int n)
{
	double m = -INFINITY;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

void tb_rng_seed(struct tb_rng *r, uint64_t seed)
{
	r->s = seed ^ 0x9e3779b97f4a7c15ULL;
}

/* splitmix64: fine statistical quality and a full 2^64 period. */
uint64_t tb_rng_next(struct tb_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Lemire's multiply-and-reject: unbiased value in [0, n). */
uint64_t tb_rng_below(struct tb_rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)tb_rng_next(r) * n;
	uint64_t lo = (uint64_t)m;

	if (lo < n) {
		uint64_t t = -n % n;

		while (lo < t) {
			m = (unsigned __int128)tb_rng_next(r) * n;
			lo = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

void tb_spin(uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
}

void tb_busy_wait(double seconds)
{
	double end = tb_now() + seconds;

	while (tb_now() < end)
		tb_spin(1000);
}

uint64_t tb_ctxsw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}
