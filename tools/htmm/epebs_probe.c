// SPDX-License-Identifier: GPL-2.0
/*
 * epebs_probe: a pointer chase for the emulated PEBS and the modelled
 * time of the QEMU plugin (tools/htmm/qemu-plugin/htmm_mem.c).
 *
 *   epebs_probe [--fast MB] [--slow MB] [--seconds S] [--stores N]
 *               [--pfns FILE] [--seed N]
 *
 * Maps MB on node 0 (--fast) and MB on node 1 (--slow), faults them in,
 * and links every 64-byte line of them into one random cycle; then
 * follows it for S seconds (default 5), a dependent load at a time, and
 * every N-th load (--stores, default 0: none) also stores to the line.
 * The chase is the plugin's measurement window ("xchg %rcx,%rcx" before,
 * "xchg %rdx,%rdx" after).  --pfns writes every page's physical frame
 * and the kind a load of it must carry ("<pfn> load-fast|load-slow"),
 * from /proc/self/pagemap (root).  Prints one line:
 * "epebs_probe: loads N seconds S ns_per_load X".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PG		4096UL
#define MPOL_BIND_	2

struct region {
	char *p;
	size_t len;
	int node;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int map_on(struct region *r, size_t mb, int node)
{
	unsigned long mask = 1UL << node;
	size_t i;

	r->len = mb << 20;
	r->node = node;
	r->p = NULL;
	if (!mb)
		return 0;
	r->p = mmap(NULL, r->len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->p == MAP_FAILED ||
	    madvise(r->p, r->len, MADV_NOHUGEPAGE) ||
	    syscall(SYS_mbind, r->p, r->len, MPOL_BIND_, &mask, 64, 0)) {
		perror("epebs_probe: map");
		return -1;
	}
	for (i = 0; i < r->len; i += PG)
		r->p[i] = 1;
	return 0;
}

static int write_pfns(const char *path, const struct region *r, int n)
{
	FILE *f = fopen(path, "w");
	int pm = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e;
	size_t i;
	int k;

	if (!f || pm < 0) {
		perror("epebs_probe: pfns");
		return -1;
	}
	for (k = 0; k < n; k++) {
		for (i = 0; i < r[k].len; i += PG) {
			uintptr_t va = (uintptr_t)r[k].p + i;

			if (pread(pm, &e, 8, va / PG * 8) != 8 || !(e >> 63))
				continue;
			fprintf(f, "%llu %s\n",
				(unsigned long long)(e & ((1ULL << 55) - 1)),
				r[k].node ? "load-slow" : "load-fast");
		}
	}
	close(pm);
	return fclose(f);
}

/* Every line of the regions, in one random cycle. */
static void **link_lines(const struct region *r, int n, unsigned int seed)
{
	size_t total = 0, i, j, k = 0;
	void **lines, *t;
	int m;

	for (m = 0; m < n; m++)
		total += r[m].len / 64;
	lines = malloc(total * sizeof(*lines));
	if (!lines || !total)
		return NULL;
	srandom(seed);
	for (m = 0; m < n; m++)
		for (i = 0; i < r[m].len; i += 64)
			lines[k++] = r[m].p + i;
	for (i = total - 1; i > 0; i--) {
		j = (size_t)random() % (i + 1);
		t = lines[i];
		lines[i] = lines[j];
		lines[j] = t;
	}
	for (i = 0; i < total; i++)
		*(void **)lines[i] = lines[(i + 1) % total];
	t = lines[0];
	free(lines);
	return t;
}

static unsigned long long chase(void **p, double seconds, unsigned long stores)
{
	unsigned long long loads = 0;
	double end = now_s() + seconds;
	unsigned long i;

	asm volatile("xchg %%rcx, %%rcx" : : : "rcx", "memory");
	do {
		for (i = 0; i < 65536; i++) {
			p = *p;
			if (stores && !(i % stores))
				__atomic_store_n((char *)p + 8, (char)i,
						 __ATOMIC_RELAXED);
		}
		loads += 65536;
	} while (now_s() < end);
	asm volatile("xchg %%rdx, %%rdx" : : : "rdx", "memory");
	return loads;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fast", required_argument, NULL, 'f' },
		{ "slow", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "stores", required_argument, NULL, 'w' },
		{ "pfns", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long fast = 0, slow = 0, stores = 0;
	unsigned int seed = 1;
	const char *pfns = NULL;
	struct region r[2];
	double seconds = 5, t0, t;
	unsigned long long loads;
	void **start;
	int c;

	while ((c = getopt_long(argc, argv, "f:s:t:w:p:r:", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fast = strtoul(optarg, NULL, 0);
			break;
		case 's':
			slow = strtoul(optarg, NULL, 0);
			break;
		case 't':
			seconds = atof(optarg);
			break;
		case 'w':
			stores = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			pfns = optarg;
			break;
		case 'r':
			seed = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: epebs_probe [--fast MB] [--slow MB] [--seconds S]\n"
				"       [--stores N] [--pfns FILE] [--seed N]\n");
			return 2;
		}
	}
	if (map_on(&r[0], fast, 0) || map_on(&r[1], slow, 1))
		return 1;
	if (pfns && write_pfns(pfns, r, 2))
		return 1;
	start = link_lines(r, 2, seed);
	if (!start) {
		fprintf(stderr, "epebs_probe: nothing to chase\n");
		return 2;
	}
	t0 = now_s();
	loads = chase(start, seconds, stores);
	t = now_s() - t0;
	printf("epebs_probe: loads %llu seconds %.2f ns_per_load %.1f\n", loads,
	       t, t * 1e9 / (double)loads);
	return 0;
}
