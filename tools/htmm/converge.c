// SPDX-License-Identifier: GPL-2.0
/*
 * converge: the tiering convergence scenario.
 *
 *   converge [--cold MIB] [--hot MIB] [--seconds N] [--inject RATE]
 *            [--fast NODE] [--slow NODE] [--ceiling] [--quiet]
 *
 * Faults a cold region in on the fast node and a hot region on the slow
 * node, drops both bindings, then reads the hot region at random (one
 * cache line of a random page at a time) for N seconds.  Once a second it
 * prints the share of the hot and of the cold region on the fast node
 * (from at most MAX_QUERY evenly spaced pages of each):
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
 * With --thp the hot region is made of huge pages; with --skew K only K
 * evenly spaced subpages of each huge page are hot (read and sampled),
 * the "hot region" shares printed are those of the hot subpages.  With
 * --thp the lines also give the megabytes of the whole region on the fast
 * node (region_fast_mb, counted over every page), the result line their
 * ratio to the hot bytes (fast_per_hot).
 * With --ceiling the hot region starts on the fast node and the cold one
 * on the slow node: the best placement there is, for reference.
 *
 * The second half of the run is the steady-state window.  On x86-64 its
 * start and end are marked with "xchg %rcx,%rcx" and "xchg %rdx,%rdx",
 * which the ground-truth QEMU plugin (qemu-plugin/htmm_mem.c) watches for.
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
#define MAX_QUERY	8192

struct opts {
	unsigned long cold_mb, hot_mb, seconds, inject, skew;
	int fast, slow, quiet, ceiling, thp;
};

#define HPAGE_NR	512UL	/* base pages per 2 MiB huge page */

/* The hot region: its pages, and which of them are hot. */
struct hot {
	char *base;
	unsigned long npages;	/* pages of the region */
	unsigned long nhot;	/* hot pages */
	unsigned long skew;	/* hot pages per huge page, 0: all pages */
};

/* The page index of hot page @i. */
static unsigned long hot_page(const struct hot *h, unsigned long i)
{
	if (!h->skew)
		return i;
	return i / h->skew * HPAGE_NR + i % h->skew * (HPAGE_NR / h->skew);
}

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

/*
 * Map @size bytes (2 MiB aligned; huge pages if @thp) and fault them in on
 * @node; then drop the binding.
 */
static char *place(unsigned long size, int node, int thp)
{
	unsigned long mask = 1UL << node, align = HPAGE_NR * PAGE;
	char *p;

	p = mmap(NULL, size + align, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("converge: mmap");
		exit(1);
	}
	p = (char *)(((unsigned long)p + align - 1) & ~(align - 1));
	madvise(p, size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
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

/*
 * Per cent of @n pages on @node: the pages at @p plus @page(@h, i) * PAGE.
 * At most MAX_QUERY of them, evenly spaced, are looked at, so that the
 * query does not weigh on the accesses that the ground-truth plugin
 * counts.  Return: the share, -1 on error.
 */
static double share_of(char *p, unsigned long n, const struct hot *h,
		       unsigned long (*page)(const struct hot *, unsigned long),
		       int node, void **pages, int *status)
{
	unsigned long step = (n + MAX_QUERY - 1) / MAX_QUERY;
	unsigned long i, k = 0, on = 0;

	for (i = 0; i < n; i += step, k++) {
		pages[k] = p + (page ? page(h, i) : i) * PAGE;
		status[k] = -1;
	}
	if (syscall(SYS_move_pages, 0, k, pages, NULL, status, 0))
		return -1;
	for (i = 0; i < k; i++)
		on += status[i] == node;
	return 100.0 * on / k;
}

static double share(char *p, unsigned long size, int node, void **pages,
		    int *status)
{
	return share_of(p, size / PAGE, NULL, NULL, node, pages, status);
}

/*
 * Share of every page of [p, p + size) on @node.  Evenly spaced pages
 * would alias with the hot subpages of split huge pages.
 */
static double share_all(char *p, unsigned long size, int node,
			void **pages, int *status)
{
	unsigned long n = size / PAGE, done, k, i, on = 0;

	for (done = 0; done < n; done += k) {
		k = n - done < MAX_QUERY ? n - done : MAX_QUERY;
		for (i = 0; i < k; i++) {
			pages[i] = p + (done + i) * PAGE;
			status[i] = -1;
		}
		if (syscall(SYS_move_pages, 0, k, pages, NULL, status, 0))
			return -1;
		for (i = 0; i < k; i++)
			on += status[i] == node;
	}
	return n ? 100.0 * on / n : 0;
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

/* Write @nr samples on random hot pages. */
static void inject(int fd, const struct hot *h, unsigned long nr,
		   unsigned long *x)
{
	static char buf[64 * 1024];
	unsigned long i;
	size_t off = 0;

	for (i = 0; i < nr; i++) {
		off += snprintf(buf + off, 64, "%d %p load-slow\n", getpid(),
				h->base + hot_page(h, xorshift(x) % h->nhot) * PAGE);
		if (off > sizeof(buf) - 64 || i == nr - 1) {
			if (write(fd, buf, off) < 0) {
				perror("converge: writing samples");
				exit(1);
			}
			off = 0;
		}
	}
}

static void mark_window(int open)
{
#ifdef __x86_64__
	if (open)
		asm volatile("xchg %%rcx, %%rcx" : : : "rcx", "memory");
	else
		asm volatile("xchg %%rdx, %%rdx" : : : "rdx", "memory");
#else
	(void)open;
#endif
}

static void usage(void)
{
	fprintf(stderr, "Usage: converge [--cold MIB] [--hot MIB] [--seconds N] [--inject RATE]\n"
		"                [--fast NODE] [--slow NODE] [--ceiling] [--quiet]\n"
		"                [--thp [--skew K]]\n");
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
		{ "ceiling", no_argument, NULL, 'C' },
		{ "thp", no_argument, NULL, 'T' },
		{ "skew", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	unsigned long v;
	int c;

	*o = (struct opts){ 400, 128, 60, 0, 0, 0, 1, 0, 0, 0 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (c == 'q' || c == 'C' || c == 'T') {
			*(c == 'q' ? &o->quiet : c == 'C' ? &o->ceiling : &o->thp) = 1;
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
		else if (c == 'k')
			o->skew = v;
		else
			o->slow = (int)v;
	}
	if (optind != argc || !o->hot_mb || !o->seconds || o->fast > 63 ||
	    o->slow > 63)
		usage();
	if (o->skew && (!o->thp || o->hot_mb % 2 || HPAGE_NR % o->skew)) {
		fprintf(stderr,
			"converge: --skew needs --thp, an even --hot and a divisor of 512\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	unsigned long reads = 0, x = 88172645463325252UL, i, mig0;
	double region = 0;
	struct hot h;
	double t0, next, s = 0, when[3] = { -1, -1, -1 };
	static const double marks[3] = { 50, 90, 95 };
	unsigned long sum = 0;
	char *cold = NULL, *hot;
	struct opts o;
	void **pages;
	int *status, fd = -1, m, opened = 0;

	parse(argc, argv, &o);
	if (o.cold_mb)
		cold = place(o.cold_mb << 20, o.ceiling ? o.slow : o.fast, 0);
	hot = place(o.hot_mb << 20, o.ceiling ? o.fast : o.slow, o.thp);
	h.base = hot;
	h.npages = (o.hot_mb << 20) / PAGE;
	h.skew = o.skew;
	h.nhot = o.skew ? h.npages / HPAGE_NR * o.skew : h.npages;
	pages = malloc(MAX_QUERY * sizeof(*pages));
	status = malloc(MAX_QUERY * sizeof(*status));
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
	       o.hot_mb, o.ceiling ? o.fast : o.slow, o.cold_mb,
	       o.ceiling ? o.slow : o.fast);
	fflush(stdout);

	mig0 = migrated();
	t0 = now();
	next = t0;
	for (;;) {
		double t = now();

		if (t >= next) {
			int sec = (int)(t - t0 + 0.5);

			if (!opened && t - t0 >= o.seconds / 2.0) {
				mark_window(1);
				opened = 1;
			}

			s = share_of(hot, h.nhot, &h, hot_page, o.fast, pages,
				     status);
			if (o.thp)
				region = share_all(hot, o.hot_mb << 20, o.fast,
						   pages, status);
			for (m = 0; m < 3; m++)
				if (when[m] < 0 && s >= marks[m])
					when[m] = t - t0;
			if (!o.quiet) {
				printf("t %d hot_fast %.1f cold_fast %.1f migrated %lu",
				       sec, s,
				       cold ? share(cold, o.cold_mb << 20, o.fast,
						    pages, status) : 0.0,
				       migrated() - mig0);
				printf(" region_fast_mb %.1f\n",
				       region * o.hot_mb / 100);
			}
			fflush(stdout);
			if (t - t0 >= o.seconds) {
				mark_window(0);
				break;
			}
			if (fd >= 0)
				inject(fd, &h, o.inject, &x);
			next += 1;
		}
		for (i = 0; i < 4096; i++) {
			unsigned long r = xorshift(&x);

			sum += hot[hot_page(&h, r % h.nhot) * PAGE +
				   ((r >> 40) & 63) * 64];
		}
		reads += 4096;
	}
	printf("result t50 %.1f t90 %.1f t95 %.1f final %.1f reads %lu",
	       when[0], when[1], when[2], s, reads);
	printf(" migrated %lu sum %lu fast_per_hot %.1f\n",
	       migrated() - mig0, sum,
	       o.thp ? region * o.hot_mb / 100 / (h.nhot * PAGE / 1048576.0) :
	       0.0);
	return 0;
}
