// SPDX-License-Identifier: GPL-2.0
/*
 * filler: take a node's free memory down to a given amount and hold it,
 * so that every tiering configuration of a benchmark sees the same fast
 * capacity (scripts/guest/bench-workloads.sh).
 *
 *   filler --node N --leave-kb KB
 *
 * Prefers node N (set_mempolicy MPOL_PREFERRED: where node N has no more
 * to give, a page comes from another node instead of an OOM kill; the
 * free count of a node includes pages its watermarks and lower-zone
 * reserves keep from this allocation), then maps and mlocks (which
 * populates) anonymous memory in chunks until the node's free memory is at
 * most KB, ending with chunks of one page; each chunk is at most half the
 * excess.  Free memory is the buddy allocator's free pages plus the pages
 * on the per-CPU lists (/proc/zoneinfo: nr_free_pages and the pagesets'
 * counts of the node's zones), as both are there for the next
 * allocations.  After a big free (the previous run's filler exiting) the
 * per-CPU lists hold megabytes, which another CPU cannot use until they
 * drain; so before each measurement the filler writes
 * /proc/sys/vm/stat_refresh a few times (each write decays the lists'
 * high marks and frees what is above them) and it tops up once more a
 * second later.
 * mlocked pages are unevictable: neither reclaim nor demotion nor htmm
 * (the filler is in no htmm cgroup) takes them back.  It prints
 *   filler locked_kb L free_kb F
 * and then holds the memory until it is killed.  On SIGUSR1 it levels the
 * node again, for the next run of a benchmark: it unmaps what it holds
 * beyond the node's shortfall below KB (the runs before may have left
 * page cache or slab there), locks more where the node has more than KB
 * free, and prints the line again (locked_kb then being what it holds).
 * Exit status 1 if the node had less than KB free to begin with or the
 * locking failed, 2 on bad options.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_PREFERRED 1
#define MAX_CHUNKS 4096

/* What the filler holds, in the order it mapped it (KiB, page multiples). */
static struct chunk {
	char *addr;
	long kb;
} chunks[MAX_CHUNKS];
static int nr_chunks;

/* SIGUSR1 only ends sigsuspend() (the default action would kill). */
static void on_usr1(int sig)
{
	(void)sig;
}

static long node_free_kb(int node)
{
	char line[256];
	long pages = 0, v;
	int n = -1, in_node = 0, found = 0;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d,", &n) == 1) {
			in_node = n == node;
			found |= in_node;
		} else if (in_node && (sscanf(line, " nr_free_pages %ld", &v) == 1 ||
				       sscanf(line, " count: %ld", &v) == 1)) {
			pages += v;
		}
	}
	fclose(f);
	return found ? pages * 4 : -1;
}

/* Shrink the per-CPU page lists (see above); errors do not matter. */
static void settle(void)
{
	ssize_t r;
	int i, fd;

	for (i = 0; i < 24; i++) {
		fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);
		if (fd < 0)
			return;
		r = write(fd, "1", 1);
		(void)r;
		close(fd);
	}
}

static long parse(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return -1;
	return v;
}

/*
 * Lock chunks until @node has at most @leave KiB free, or three chunks in
 * a row did not lower it (the node gives no more); KiB locked, or -1.
 */
static long fill(int node, long leave)
{
	long locked = 0, free_kb, chunk, prev = -1;
	int stalls = 0;
	void *p;

	for (;;) {
		settle();
		free_kb = node_free_kb(node);
		if (free_kb <= leave)
			break;
		if (prev >= 0 && free_kb >= prev && ++stalls >= 3)
			break;
		prev = free_kb;
		chunk = (free_kb - leave) / 2;
		if (chunk < 4)
			chunk = 4;
		if (chunk > 65536)
			chunk = 65536;
		chunk &= ~3L;
		if (nr_chunks == MAX_CHUNKS) {
			fprintf(stderr, "filler: more than %d chunks\n", MAX_CHUNKS);
			return -1;
		}
		/*
		 * mlock() faults the chunk in itself, each page once.  With
		 * MAP_POPULATE first, mlock() walked the chunk a second time,
		 * and a page that was being migrated in between (compaction:
		 * nothing else migrated there) made it wait for the move:
		 * over 60 s in a guest whose vCPU the host starved (a hung
		 * task report in the test run of 066023d).
		 */
		p = mmap(NULL, chunk << 10, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || mlock(p, chunk << 10)) {
			perror("filler: mmap/mlock");
			return -1;
		}
		chunks[nr_chunks].addr = p;
		chunks[nr_chunks++].kb = chunk;
		locked += chunk;
	}
	return free_kb < 0 ? -1 : locked;
}

/* Unmap the last @kb KiB mapped (whole pages, at most what is held). */
static void release(long kb)
{
	long n;

	while (kb > 0 && nr_chunks) {
		struct chunk *c = &chunks[nr_chunks - 1];

		n = kb < c->kb ? kb & ~3L : c->kb;
		if (!n)
			return;
		munmap(c->addr + ((c->kb - n) << 10), n << 10);
		c->kb -= n;
		kb -= n;
		if (!c->kb)
			nr_chunks--;
	}
}

static long held_kb(void)
{
	long kb = 0;
	int i;

	for (i = 0; i < nr_chunks; i++)
		kb += chunks[i].kb;
	return kb;
}

/*
 * Bring @node's free memory to @leave KiB: give back the shortfall, lock
 * the excess; twice, a second apart (see above).  0, or -1.
 */
static int level(int node, long leave)
{
	long free_kb;
	int i;

	for (i = 0; i < 2; i++) {
		settle();
		free_kb = node_free_kb(node);
		if (free_kb < 0)
			return -1;
		if (free_kb < leave)
			release(leave - free_kb);
		if (fill(node, leave) < 0)
			return -1;
		if (!i)
			sleep(1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long mask;
	long node = -1, leave = -1;
	sigset_t usr1, old;
	int i;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--node"))
			node = parse(argv[i + 1], 63);
		else if (!strcmp(argv[i], "--leave-kb"))
			leave = parse(argv[i + 1], 1L << 40);
		else
			break;
	}
	if (i != argc || node < 0 || leave < 0) {
		fprintf(stderr, "usage: filler --node N --leave-kb KB\n");
		return 2;
	}
	if (node_free_kb(node) < 0) {
		fprintf(stderr, "filler: no node %ld in /proc/zoneinfo\n", node);
		return 1;
	}
	if (node_free_kb(node) < leave) {
		fprintf(stderr, "filler: node %ld has %ld KiB free, less than %ld\n",
			node, node_free_kb(node), leave);
		return 1;
	}
	mask = 1UL << node;
	if (syscall(SYS_set_mempolicy, MPOL_PREFERRED, &mask, 64)) {
		perror("filler: set_mempolicy");
		return 1;
	}
	/*
	 * SIGUSR1 is blocked but in sigsuspend(): one sent while the node is
	 * being leveled waits there and starts the next leveling.
	 */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	signal(SIGUSR1, on_usr1);
	for (;;) {
		if (level(node, leave))
			return 1;
		printf("filler locked_kb %ld free_kb %ld\n", held_kb(), node_free_kb(node));
		fflush(stdout);
		sigsuspend(&old);
	}
}
