// SPDX-License-Identifier: GPL-2.0
/*
 * injbench: measure htmm's ingestion cost per sample through the debugfs
 * injector, for the physical-address path and the pid+vaddr path.
 * Run it as root inside an htmm-enabled cgroup with htmm_sampler=inject.
 *
 *   injbench [MIB]     (default 64)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define CHUNK (200 * 1024)
#define INJECT "/sys/kernel/debug/htmm/inject"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Write @buf in chunks that end on a line; return seconds spent. */
static double inject(const char *buf, size_t len)
{
	int fd = open(INJECT, O_WRONLY);
	double t0, t = 0;
	size_t off = 0;

	if (fd < 0) {
		perror("injbench: " INJECT);
		exit(1);
	}
	while (off < len) {
		size_t n = len - off > CHUNK ? CHUNK : len - off;

		while (off + n < len && buf[off + n - 1] != '\n')
			n--;
		t0 = now();
		if (write(fd, buf + off, n) != (ssize_t)n) {
			perror("injbench: write");
			exit(1);
		}
		t += now() - t0;
		off += n;
	}
	close(fd);
	return t;
}

int main(int argc, char **argv)
{
	unsigned long mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	unsigned long i, n = (mib << 20) / PAGE;
	char *p, *buf;
	size_t len = 0, cap = n * 48 + 1;
	int pm;
	double t;

	if (!n) {
		fprintf(stderr, "injbench [MIB]\n");
		return 2;
	}
	p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf = malloc(cap);
	if (p == MAP_FAILED || !buf)
		return 1;
	madvise(p, n * PAGE, MADV_NOHUGEPAGE);
	for (i = 0; i < n; i++)
		p[i * PAGE] = 1;

	for (i = 0; i < n; i++)
		len += snprintf(buf + len, cap - len, "%d %p load-fast\n",
				getpid(), p + i * PAGE);
	t = inject(buf, len);
	printf("ingest pid+vaddr: %lu samples in %.3f s: %.0f ns/sample\n",
	       n, t, t * 1e9 / n);

	pm = open("/proc/self/pagemap", O_RDONLY);
	if (pm < 0) {
		perror("injbench: pagemap");
		return 1;
	}
	len = 0;
	for (i = 0; i < n; i++) {
		uint64_t e;

		if (pread(pm, &e, 8, (off_t)((uintptr_t)(p + i * PAGE) / PAGE * 8)) != 8 ||
		    !(e & (1ULL << 63)))
			continue;
		len += snprintf(buf + len, cap - len, "0x%llx load-fast\n",
				(unsigned long long)((e & ((1ULL << 55) - 1)) * PAGE));
	}
	close(pm);
	t = inject(buf, len);
	printf("ingest paddr:     %lu samples in %.3f s: %.0f ns/sample\n",
	       n, t, t * 1e9 / n);
	return 0;
}
