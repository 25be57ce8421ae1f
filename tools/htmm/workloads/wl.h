/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the workload drivers of scripts/bench.sh workloads share.
 *
 * Each driver sets its data up, then runs its measured phase between
 * wl_phase_begin() and wl_phase_end().  Those open and close the QEMU
 * plugin's measurement window (tools/htmm/qemu-plugin/htmm_mem.c: the
 * modelled time is the performance figure) and print, on stdout:
 *
 *   wl begin rss_kb N          at the start of the measured phase
 *   wl end seconds S rss_kb N  at its end (S: wall-clock seconds)
 *
 * A driver then prints its own "wl result ..." and "wl check ok|FAIL ..."
 * lines and exits 0 only if its check passed.  stdout is flushed at once.
 *
 * With WL_FIFO set in the environment, the driver also writes "begin"
 * (before the window opens) and "end" (after it closed) to that FIFO and
 * stops itself with SIGSTOP each time: the guest script
 * (scripts/guest/bench-workloads.sh) takes its snapshots while the
 * workload stands still, then continues it with SIGCONT, without polling
 * during the measured phase.
 */
#ifndef HTMM_WL_H
#define HTMM_WL_H

#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double wl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Resident set of this process in KiB (VmRSS), or 0. */
static inline long wl_rss_kb(void)
{
	char line[256];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static double wl_t0;

/* Tell the guest script @what over $WL_FIFO, if set, and stop. */
static inline void wl_sync(const char *what)
{
	const char *path = getenv("WL_FIFO");
	int fd;

	if (!path)
		return;
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	if (dprintf(fd, "%s\n", what) < 0)
		perror(path);
	close(fd);
	raise(SIGSTOP);
}

static inline void wl_phase_begin(void)
{
	printf("wl begin rss_kb %ld\n", wl_rss_kb());
	fflush(stdout);
	wl_sync("begin");
	wl_t0 = wl_now();
	asm volatile("xchg %%rcx, %%rcx" : : : "rcx", "memory");
}

static inline double wl_phase_end(void)
{
	double s;

	asm volatile("xchg %%rdx, %%rdx" : : : "rdx", "memory");
	s = wl_now() - wl_t0;
	printf("wl end seconds %.3f rss_kb %ld\n", s, wl_rss_kb());
	fflush(stdout);
	wl_sync("end");
	return s;
}

/* A fast, seedable generator (SplitMix64); state is one word. */
static inline uint64_t wl_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double wl_rand01(uint64_t *s)
{
	return (wl_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform in [0, n). */
static inline uint64_t wl_randn(uint64_t *s, uint64_t n)
{
	return n ? (uint64_t)(wl_rand01(s) * n) % n : 0;
}

/*
 * Zipfian integers in [0, n), item 0 the most popular, with exponent
 * theta < 1, by the method of Gray et al., "Quickly generating
 * billion-record synthetic databases" (SIGMOD 1994), the one YCSB
 * describes.  zeta(n) is summed once in wl_zipf_init(), O(n).
 */
struct wl_zipf {
	uint64_t n;
	double theta, alpha, zetan, eta, half_pow;
};

static inline double wl_zeta(uint64_t n, double theta)
{
	double sum = 0;
	uint64_t i;

	for (i = 1; i <= n; i++)
		sum += 1.0 / pow((double)i, theta);
	return sum;
}

static inline void wl_zipf_init(struct wl_zipf *z, uint64_t n, double theta)
{
	double zeta2 = wl_zeta(2, theta);

	z->n = n;
	z->theta = theta;
	z->alpha = 1.0 / (1.0 - theta);
	z->zetan = wl_zeta(n, theta);
	z->eta = (1.0 - pow(2.0 / n, 1.0 - theta)) / (1.0 - zeta2 / z->zetan);
	z->half_pow = 1.0 + pow(0.5, theta);
}

static inline uint64_t wl_zipf_next(const struct wl_zipf *z, uint64_t *s)
{
	double u = wl_rand01(s), uz = u * z->zetan;
	uint64_t v;

	if (uz < 1.0)
		return 0;
	if (uz < z->half_pow)
		return 1;
	v = (uint64_t)(z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
	return v < z->n ? v : z->n - 1;
}

/* FNV-1a of a 64-bit value: spreads zipfian ranks over the key space. */
static inline uint64_t wl_fnv64(uint64_t v)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int i;

	for (i = 0; i < 8; i++) {
		h ^= v & 0xff;
		h *= 0x100000001b3ULL;
		v >>= 8;
	}
	return h;
}

/*
 * "--name value" of argv as a number, or @def if absent.  A value that is
 * not a number ends the program with a message, exit status 2.
 */
static inline double wl_arg(int argc, char **argv, const char *name, double def)
{
	char *end;
	double v;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], name))
			continue;
		if (i + 1 >= argc) {
			fprintf(stderr, "%s: %s needs a value\n", argv[0], name);
			exit(2);
		}
		v = strtod(argv[i + 1], &end);
		if (end == argv[i + 1] || *end || !isfinite(v)) {
			fprintf(stderr, "%s: %s: not a number: '%s'\n", argv[0],
				name, argv[i + 1]);
			exit(2);
		}
		return v;
	}
	return def;
}

/*
 * Exits with status 2 if argv has an option not in the NULL-terminated
 * @names (options come as "--name value" pairs).
 */
static inline void wl_check_opts(int argc, char **argv,
				 const char *const *names)
{
	int i, j;

	for (i = 1; i < argc; i += 2) {
		for (j = 0; names[j]; j++)
			if (!strcmp(argv[i], names[j]))
				break;
		if (!names[j]) {
			fprintf(stderr, "%s: unknown option '%s'\n", argv[0],
				argv[i]);
			exit(2);
		}
	}
}

/*
 * Heap policy for drivers whose library allocates and frees big arrays.
 * wl_heap_setup(), first thing: big temporaries of the setup go back to
 * the system when freed (no dynamic mmap threshold).  wl_heap_keep(),
 * before the measured phase: free pages go back to the system once, then
 * freed memory stays in the heap, so that the measured phase's repeated
 * allocations reuse the same resident pages.
 */
static inline void wl_heap_setup(void)
{
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
}

static inline void wl_heap_keep(void)
{
	malloc_trim(0);
	mallopt(M_MMAP_MAX, 0);
	mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

/* malloc() that ends the program with a failed check when memory is out. */
static inline void *wl_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		printf("wl check FAIL out of memory\n");
		exit(1);
	}
	return p;
}

#endif /* HTMM_WL_H */
