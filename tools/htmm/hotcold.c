// SPDX-License-Identifier: GPL-2.0
/*
 * hotcold: a hot/cold workload for htmm demos and benchmarks.
 *
 *   hotcold [--cold MIB] [--hot MIB] [--seconds N] [--thp]
 *
 * Touches a cold region once, then writes one byte per page of a hot
 * region, in a pseudo-random page order, for N seconds.  Prints the
 * regions' addresses and, at the end, the passes made over the hot region.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096UL

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *map_region(unsigned long size, int thp)
{
	unsigned long align = 2UL << 20;
	char *p = mmap(NULL, size + align, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("hotcold: mmap");
		exit(1);
	}
	p = (char *)(((unsigned long)p + align - 1) & ~(align - 1));
	madvise(p, size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	return p;
}

static unsigned long parse_mib(const char *s, const char *what)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*end || v == 0 || v > (1UL << 20)) {
		fprintf(stderr, "hotcold: bad %s '%s' (MiB, 1..1048576)\n", what, s);
		exit(2);
	}
	return v << 20;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cold", required_argument, NULL, 'c' },
		{ "hot", required_argument, NULL, 'h' },
		{ "seconds", required_argument, NULL, 's' },
		{ "thp", no_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long cold = 256UL << 20, hot = 32UL << 20, i, n, passes = 0;
	unsigned long x = 88172645463325252UL;
	double secs = 10, t0;
	int thp = 0, c;
	char *cp, *hp;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cold = parse_mib(optarg, "--cold");
			break;
		case 'h':
			hot = parse_mib(optarg, "--hot");
			break;
		case 's':
			secs = atof(optarg);
			if (secs <= 0) {
				fprintf(stderr, "hotcold: bad --seconds '%s'\n", optarg);
				return 2;
			}
			break;
		case 't':
			thp = 1;
			break;
		default:
			fprintf(stderr,
				"hotcold [--cold MIB] [--hot MIB] [--seconds N] [--thp]\n");
			return 2;
		}
	}
	cp = map_region(cold, thp);
	hp = map_region(hot, thp);
	for (i = 0; i < cold; i += PAGE)
		cp[i] = 1;
	for (i = 0; i < hot; i += PAGE)
		hp[i] = 1;
	printf("hotcold: cold %p %lu MiB, hot %p %lu MiB\n", cp, cold >> 20,
	       hp, hot >> 20);
	fflush(stdout);
	n = hot / PAGE;
	t0 = now();
	while (now() - t0 < secs) {
		for (i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			hp[(x % n) * PAGE]++;
		}
		passes++;
	}
	printf("hotcold: %lu passes over the hot region in %.1f s\n", passes,
	       now() - t0);
	return 0;
}
