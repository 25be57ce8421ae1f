// SPDX-License-Identifier: GPL-2.0
/*
 * ccowbench: the CCoW micro-benchmark (scripts/guest/bench-ccow.sh).
 *
 *   ccowbench --mib M --alpha A --seconds S --fork-every F --child-ms C
 *             [--thp] [--cgroup DIR] [--seed N] [--op-iters N]
 *
 * Fills an anonymous area of M MiB (MADV_HUGEPAGE with --thp, else
 * MADV_NOHUGEPAGE), then writes 8 bytes at a time to pages drawn from a
 * zipfian distribution of exponent A over the area's pages, page i the
 * i-th most popular, so that the popular pages lie together as the hot
 * data of a real program does.  Each write comes with N iterations of a
 * loop (--op-iters, default 0), the rest of the work of an update, so
 * that writes are not all the program does.  Every F seconds it forks a child that
 * reads the whole area once, as a snapshot child writing it out would,
 * and exits C ms after the fork; meanwhile every write of the parent to a
 * page still shared takes a copy-on-write fault.
 *
 * It prints the parent's writes per 100 ms tick, and per fork:
 *   fork K at_ms T pre_wps P dip D recover_ms R minflt N mem_extra_kb X
 * P: writes per second in the second before the fork; D: the lowest tick
 * of the second after it, over P; R: from the fork to the first of three
 * ticks in a row at 90% of P or more (-1: not before the next fork); N:
 * the parent's minor faults until the next fork; X: the most that
 * DIR/memory.current rose above its value before the fork (0 without
 * --cgroup).  Then the whole run:
 *   total writes_per_s W minflt N forks K
 * Exit status 2 on bad options, 1 if the area cannot be had.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TICK_MS		100
#define MAX_TICKS	100000
#define BATCH		256

static struct {
	unsigned long mib, seconds, fork_every, child_ms, seed, op_iters;
	double alpha;
	int thp;
	const char *cgroup;
} opt = { .mib = 256, .seconds = 40, .fork_every = 8, .child_ms = 4000,
	  .alpha = 1.0, .seed = 1 };

static const char fork_fmt[] =
	"fork %d at_ms %ld pre_wps %.0f dip %.3f recover_ms %ld minflt %ld mem_extra_kb %lld\n";
static const char usage[] =
	"usage: ccowbench --mib M --alpha A --seconds S --fork-every F --child-ms C\n"
	"                 [--thp] [--cgroup DIR] [--seed N] [--op-iters N]\n";

static uint64_t ticks[MAX_TICKS];	/* writes per tick */
static long long mem_tick[MAX_TICKS];	/* memory.current at each tick */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* The cumulative zipfian distribution over @n pages, exponent @alpha. */
static double *zipf_cdf(size_t n, double alpha)
{
	double *cdf = malloc(n * sizeof(*cdf)), sum = 0;
	size_t i;

	if (!cdf)
		return NULL;
	for (i = 0; i < n; i++)
		cdf[i] = sum += 1.0 / pow((double)(i + 1), alpha);
	for (i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

static size_t zipf_pick(const double *cdf, size_t n, uint64_t *s)
{
	double u = (xorshift(s) >> 11) * (1.0 / 9007199254740992.0);
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static long long mem_current(void)
{
	char path[512], buf[64];
	ssize_t n;
	int fd;

	if (!opt.cgroup)
		return 0;
	snprintf(path, sizeof(path), "%s/memory.current", opt.cgroup);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return atoll(buf);
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* The child: read the area once, as a snapshot does, then wait to exit. */
static void child(const char *p, size_t len, double t_fork)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < len; i += 64) {
		sum += p[i];
		asm("" : "+r" (sum));	/* every read happens */
	}
	while (now_ms() < t_fork + opt.child_ms)
		usleep(10000);
	_exit(sum == 1);	/* never 1: keeps the reads */
}

/* One fork's figures, from the ticks around fork tick @f to tick @end. */
static void fork_report(int k, long f, long end, long flt, long long mem0)
{
	long per_s = 1000 / TICK_MS, i, run = 0, recover = -1;
	double pre = 0, dip = -1, r;
	long long extra = 0;

	for (i = f - per_s; i < f; i++)
		pre += i >= 0 ? ticks[i] : 0;
	for (i = f; i < end; i++) {
		r = pre ? ticks[i] * per_s / pre : 0;
		if (i < f + per_s && (dip < 0 || r < dip))
			dip = r;
		run = r >= 0.9 ? run + 1 : 0;
		if (run == 3 && recover < 0)
			recover = (i - 2 - f) * TICK_MS;
		if (mem_tick[i] - mem0 > extra)
			extra = mem_tick[i] - mem0;
	}
	printf(fork_fmt, k, f * TICK_MS, pre, dip, recover, flt, extra >> 10);
}

static int parse(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end = NULL;

		if (!strcmp(a, "--thp")) {
			opt.thp = 1;
			continue;
		}
		if (!v)
			return -1;
		i++;
		errno = 0;
		if (!strcmp(a, "--cgroup"))
			opt.cgroup = v;
		else if (!strcmp(a, "--alpha"))
			opt.alpha = strtod(v, &end);
		else if (!strcmp(a, "--mib"))
			opt.mib = strtoul(v, &end, 10);
		else if (!strcmp(a, "--seconds"))
			opt.seconds = strtoul(v, &end, 10);
		else if (!strcmp(a, "--fork-every"))
			opt.fork_every = strtoul(v, &end, 10);
		else if (!strcmp(a, "--child-ms"))
			opt.child_ms = strtoul(v, &end, 10);
		else if (!strcmp(a, "--op-iters"))
			opt.op_iters = strtoul(v, &end, 10);
		else if (!strcmp(a, "--seed"))
			opt.seed = strtoul(v, &end, 10);
		else
			return -1;
		if (end && (*end || errno))
			return -1;
	}
	if (!opt.mib || opt.alpha <= 0 || !opt.fork_every || !opt.seconds ||
	    opt.seconds * 1000 / TICK_MS >= MAX_TICKS)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	long t, last = -1, f = -1, flt0 = 0, end, nt;
	uint64_t s, total = 0, b;
	long long mem0 = 0;
	double *cdf, t0;
	size_t len, n;
	int k = 0;
	char *p;

	if (parse(argc, argv)) {
		fputs(usage, stderr);
		return 2;
	}
	len = opt.mib << 20;
	n = len / 4096;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cdf = zipf_cdf(n, opt.alpha);
	if (p == MAP_FAILED || !cdf)
		return 1;
	madvise(p, len, opt.thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(p, 1, len);
	s = opt.seed * 0x9e3779b97f4a7c15ULL + 1;
	nt = opt.seconds * 1000 / TICK_MS;
	t0 = now_ms();
	for (;;) {
		for (b = 0; b < BATCH; b++) {
			size_t pg = zipf_pick(cdf, n, &s);
			volatile unsigned long w;

			for (w = 0; w < opt.op_iters; w++)
				;

			((uint64_t *)(p + pg * 4096))[xorshift(&s) & 511] = total + b;
		}
		total += BATCH;
		t = (long)((now_ms() - t0) / TICK_MS);
		if (t >= nt)
			break;
		ticks[t] += BATCH;
		if (t == last)
			continue;
		/* A new tick: reap, sample memory, fork on schedule. */
		for (; last < t; last++)
			mem_tick[last + 1] = mem_current();
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (t % (opt.fork_every * 1000 / TICK_MS) || !t)
			continue;
		if (f >= 0)
			fork_report(k++, f, t, minflt() - flt0, mem0);
		mem0 = mem_current();
		flt0 = minflt();
		f = t;
		if (!fork())
			child(p, len, now_ms());
	}
	end = nt;
	if (f >= 0)
		fork_report(k++, f, end, minflt() - flt0, mem0);
	while (wait(NULL) > 0)
		;
	for (t = 0; t < nt; t++)
		printf("tick %ld %llu\n", t * TICK_MS, (unsigned long long)ticks[t]);
	printf("total writes_per_s %.0f minflt %ld forks %d\n",
	       total / (now_ms() - t0) * 1000, minflt(), k);
	return 0;
}
