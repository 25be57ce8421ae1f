// SPDX-License-Identifier: GPL-2.0
/*
 * placement: allocate and touch anonymous memory, then print on which NUMA
 * node its pages landed.  A guest demo helper for htmm.
 *
 *   placement [--thp] [--hold SEC] SIZE_MIB
 *
 * Output: one line "placement <size> MiB: node0 <MiB> node1 <MiB> ...".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PAGE 4096UL
#define MAX_NODES 64
#define BATCH 4096

static void print_help(FILE *f)
{
	fprintf(f, "placement [--thp] [--hold SEC] SIZE_MIB\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "thp", no_argument, NULL, 't' },
		{ "hold", required_argument, NULL, 'h' },
		{ "help", no_argument, NULL, '?' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long per_node[MAX_NODES] = { 0 }, other = 0;
	int thp = 0, hold = 0, c, n;
	unsigned long size, i, j;
	char *end, *p;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			thp = 1;
			break;
		case 'h':
			hold = atoi(optarg);
			break;
		default:
			print_help(c == '?' && optopt == 0 ? stdout : stderr);
			return c == '?' && optopt == 0 ? 0 : 2;
		}
	}
	if (optind != argc - 1) {
		print_help(stderr);
		return 2;
	}
	errno = 0;
	size = strtoul(argv[optind], &end, 10);
	if (errno || *end || size == 0 || size > (1UL << 20)) {
		fprintf(stderr, "placement: bad size '%s' (MiB, 1..1048576)\n",
			argv[optind]);
		return 2;
	}
	size <<= 20;
	p = mmap(NULL, size + (2UL << 20), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	p = (char *)(((unsigned long)p + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	if (madvise(p, size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		perror("madvise");
	for (i = 0; i < size; i += PAGE)
		p[i] = 1;

	for (i = 0; i < size / PAGE; i += BATCH) {
		void *addrs[BATCH];
		int status[BATCH];
		unsigned long cnt = size / PAGE - i;

		if (cnt > BATCH)
			cnt = BATCH;
		for (j = 0; j < cnt; j++)
			addrs[j] = p + (i + j) * PAGE;
		if (syscall(SYS_move_pages, 0, cnt, addrs, NULL, status, 0)) {
			perror("move_pages");
			return 1;
		}
		for (j = 0; j < cnt; j++) {
			if (status[j] >= 0 && status[j] < MAX_NODES)
				per_node[status[j]]++;
			else
				other++;
		}
	}
	printf("placement %lu MiB%s:", size >> 20, thp ? " (THP)" : "");
	for (n = 0; n < MAX_NODES; n++)
		if (per_node[n])
			printf(" node%d %lu MiB", n, per_node[n] * PAGE >> 20);
	if (other)
		printf(" unplaced %lu pages", other);
	printf("\n");
	fflush(stdout);
	if (hold > 0)
		sleep(hold);
	return 0;
}
