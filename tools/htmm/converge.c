// SPDX-License-Identifier: GPL-2.0
/*
 * converge: the tiering convergence scenario.
 *
 *   converge [--cold MIB] [--hot MIB] [--seconds N] [--inject RATE]
 *            [--fast NODE] [--slow NODE] [--quiet]
 *
 * Faults a cold region in on the fast node and a hot region on the slow
 * node, drops both bindings, then reads the hot region at random (one
 * cache line of a random page at a time) for N seconds.  Once a second it
 * prints the share of the hot and of the cold region on the fast node:
 *
 *   t 3 hot_fast 41.2 cold_fast 100.0 migrated 5230
 *
 * (migrated: pgmigrate_success in /proc/vmstat, pages, since the start) *
 * and at the end the seconds it took to reach 50%, 90% and 95% of the hot
 * region on the fast node (-1: never) and the share at the end:
 *
 *   result t50 2.1 t90 5.0 t95 6.3 final 99.8 reads 123456789 migrated 40000
 *
 * With --inject RATE it also writes RATE samples a second on random hot
 * pages to htmm's debugfs injector, as a stand-in for a hardware sampler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096UL
#define MPOL_DEFAULT_	0
#define MPOL_BIND_	2
#define INJECT_FILE	"/sys/kernel/debug/htmm/inject"

struct opts {
	unsigned long cold_mb, hot_mb, seconds, inject;
	int fast, slow, quiet;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long xorshift(unsigned long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Map @size bytes and fault them in on @node; then drop the binding. */
static char *place(unsigned long size, int node)
{
	unsigned long mask = 1UL << node;
	char *p;

	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("converge: mmap");
		exit(1);
	}
	madvise(p, size, MADV_NOHUGEPAGE);
	if (syscall(SYS_mbind, p, size, MPOL_BIND_, &mask, 64, 0)) {
		perror("converge: mbind");
		exit(1);
	}
	memset(p, 0x5a, size);
	if (syscall(SYS_mbind, p, size, MPOL_DEFAULT_, NULL, 0, 0)) {
		perror("converge: mbind default");
		exit(1);
	}
	return p;
}

/* Per cent of the pages of [p, p+size) on @node; -1 on error. */
static double share(char *p, unsigned long size, int node, void **pages,
		    int *status)
{
	unsigned long n = size / PAGE, i, on = 0;

	for (i = 0; i < n; i++) {
		pages[i] = p + i * PAGE;
		status[i] = -1;
	}
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0))
		return -1;
	for (i = 0; i < n; i++)
		on += status[i] == node;
	return 100.0 * on / n;
}

/* pgmigrate_success from /proc/vmstat, or 0. */
static unsigned long migrated(void)
{
	unsigned long v = 0;
	char line[128];
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "pgmigrate_success %lu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* Write @nr samples on random pages of the hot region. */
static void inject(int fd, char *hot, unsigned long npages, unsigned long nr,
		   unsigned long *x)
{
	static char buf[64 * 1024];
	unsigned long i;
	size_t off = 0;

	for (i = 0; i < nr; i++) {
		off += snprintf(buf + off, 64, "%d %p load-slow\n", getpid(),
				hot + (xorshift(x) % npages) * PAGE);
		if (off > sizeof(buf) - 64 || i == nr - 1) {
			if (write(fd, buf, off) < 0) {
				perror("converge: writing samples");
				exit(1);
			}
			off = 0;
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "Usage: converge [--cold MIB] [--hot MIB] [--seconds N] [--inject RATE]\n"
		"                [--fast NODE] [--slow NODE] [--quiet]\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "cold", required_argument, NULL, 'c' },
		{ "hot", required_argument, NULL, 'h' },
		{ "seconds", required_argument, NULL, 's' },
		{ "inject", required_argument, NULL, 'i' },
		{ "fast", required_argument, NULL, 'f' },
		{ "slow", required_argument, NULL, 'l' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	unsigned long v;
	int c;

	*o = (struct opts){ 400, 128, 60, 0, 0, 1, 0 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'q') {
			o->quiet = 1;
			continue;
		}
		if (c == '?')
			usage();
		errno = 0;
		v = strtoul(optarg, &end, 10);
		if (errno || *end || end == optarg || v > 1UL << 20) {
			fprintf(stderr, "converge: bad number '%s'\n", optarg);
			exit(2);
		}
		if (c == 'c')
			o->cold_mb = v;
		else if (c == 'h')
			o->hot_mb = v;
		else if (c == 's')
			o->seconds = v;
		else if (c == 'i')
			o->inject = v;
		else if (c == 'f')
			o->fast = (int)v;
		else
			o->slow = (int)v;
	}
	if (optind != argc || !o->hot_mb || !o->seconds || o->fast > 63 ||
	    o->slow > 63)
		usage();
}

int main(int argc, char **argv)
{
	unsigned long npages, reads = 0, x = 88172645463325252UL, i, mig0;
	double t0, next, s = 0, when[3] = { -1, -1, -1 };
	static const double marks[3] = { 50, 90, 95 };
	unsigned long sum = 0;
	char *cold = NULL, *hot;
	struct opts o;
	void **pages;
	int *status, fd = -1, m;

	parse(argc, argv, &o);
	npages = (o.hot_mb << 20) / PAGE;
	if (o.cold_mb)
		cold = place(o.cold_mb << 20, o.fast);
	hot = place(o.hot_mb << 20, o.slow);
	pages = malloc(((o.cold_mb > o.hot_mb ? o.cold_mb : o.hot_mb) << 20) /
		       PAGE * sizeof(*pages));
	status = malloc(((o.cold_mb > o.hot_mb ? o.cold_mb : o.hot_mb) << 20) /
			PAGE * sizeof(*status));
	if (!pages || !status) {
		fprintf(stderr, "converge: out of memory\n");
		return 1;
	}
	if (o.inject) {
		fd = open(INJECT_FILE, O_WRONLY);
		if (fd < 0) {
			perror("converge: " INJECT_FILE);
			return 1;
		}
	}
	printf("start hot %p %lu MiB node %d, cold %lu MiB node %d\n", hot,
	       o.hot_mb, o.slow, o.cold_mb, o.fast);
	fflush(stdout);

	mig0 = migrated();
	t0 = now();
	next = t0;
	for (;;) {
		double t = now();

		if (t >= next) {
			int sec = (int)(t - t0 + 0.5);

			s = share(hot, o.hot_mb << 20, o.fast, pages, status);
			for (m = 0; m < 3; m++)
				if (when[m] < 0 && s >= marks[m])
					when[m] = t - t0;
			if (!o.quiet)
				printf("t %d hot_fast %.1f cold_fast %.1f migrated %lu\n",
				       sec, s,
				       cold ? share(cold, o.cold_mb << 20, o.fast,
						    pages, status) : 0.0,
				       migrated() - mig0);
			fflush(stdout);
			if (t - t0 >= o.seconds)
				break;
			if (fd >= 0)
				inject(fd, hot, npages, o.inject, &x);
			next += 1;
		}
		for (i = 0; i < 4096; i++) {
			unsigned long r = xorshift(&x);

			sum += hot[(r % npages) * PAGE + ((r >> 40) & 63) * 64];
		}
		reads += 4096;
	}
	printf("result t50 %.1f t90 %.1f t95 %.1f final %.1f reads %lu migrated %lu sum %lu\n",
	       when[0], when[1], when[2], s, reads, migrated() - mig0, sum);
	return 0;
}
