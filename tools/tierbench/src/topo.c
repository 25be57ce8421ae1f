// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench: NUMA topology from sysfs, CPU pinning, and node-bound memory
 * (mmap + mbind through raw system calls, so the static binary needs no
 * libnuma and works in a busybox initramfs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tierbench.h"

#define NODE_SYSFS "/sys/devices/system/node"

#ifndef MPOL_BIND
#define MPOL_BIND 2
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE 15
#endif

static int read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return 0;
}

/* Node meminfo value ("MemTotal", "MemFree") in bytes, or 0. */
static uint64_t node_meminfo(int node, const char *field)
{
	char path[128], line[256];
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), NODE_SYSFS "/node%d/meminfo", node);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, field);
		unsigned long long kb;

		if (p && p[strlen(field)] == ':' &&
		    sscanf(p + strlen(field) + 1, "%llu", &kb) == 1) {
			v = kb * 1024;
			break;
		}
	}
	fclose(f);
	return v;
}

int tb_topo_load(struct tb_topo *t)
{
	int *online_cpus = NULL, nonline = -1;
	char buf[8192], path[128];
	cpu_set_t *allowed;
	size_t setsz;
	int node, ids[TB_MAX_CPUS], n, i;

	memset(t, 0, sizeof(*t));
	setsz = CPU_ALLOC_SIZE(TB_MAX_CPUS);
	allowed = CPU_ALLOC(TB_MAX_CPUS);
	if (!allowed)
		return -1;
	CPU_ZERO_S(setsz, allowed);
	if (sched_getaffinity(0, setsz, allowed)) {
		tb_err("sched_getaffinity: %s", strerror(errno));
		CPU_FREE(allowed);
		return -1;
	}
	if (!read_file("/sys/devices/system/cpu/online", buf, sizeof(buf))) {
		online_cpus = malloc(sizeof(int) * TB_MAX_CPUS);
		if (online_cpus)
			nonline = tb_parse_cpulist(buf, online_cpus,
						   TB_MAX_CPUS);
	}

	if (read_file(NODE_SYSFS "/online", buf, sizeof(buf))) {
		/* Kernel without NUMA: one node holding everything. */
		t->numa_sysfs = 0;
		t->nr_nodes = 1;
		t->online[0] = 1;
		t->has_mem[0] = 1;
		t->cpus[0] = malloc(sizeof(int) * TB_MAX_CPUS);
		if (!t->cpus[0])
			goto fail;
		for (i = 0; i < TB_MAX_CPUS; i++)
			if (CPU_ISSET_S(i, setsz, allowed))
				t->cpus[0][t->ncpus[0]++] = i;
		CPU_FREE(allowed);
		free(online_cpus);
		return 0;
	}
	t->numa_sysfs = 1;
	n = tb_parse_cpulist(buf, ids, TB_MAX_CPUS);
	if (n <= 0) {
		tb_err("cannot parse " NODE_SYSFS "/online");
		goto fail;
	}
	for (i = 0; i < n; i++) {
		if (ids[i] >= TB_MAX_NODES)
			continue;
		t->online[ids[i]] = 1;
		if (ids[i] + 1 > t->nr_nodes)
			t->nr_nodes = ids[i] + 1;
	}
	if (!read_file(NODE_SYSFS "/has_memory", buf, sizeof(buf))) {
		n = tb_parse_cpulist(buf, ids, TB_MAX_CPUS);
		for (i = 0; i < n; i++)
			if (ids[i] < TB_MAX_NODES && t->online[ids[i]])
				t->has_mem[ids[i]] = 1;
	} else {
		for (node = 0; node < t->nr_nodes; node++)
			if (t->online[node] && node_meminfo(node, "MemTotal"))
				t->has_mem[node] = 1;
	}
	for (node = 0; node < t->nr_nodes; node++) {
		if (!t->online[node])
			continue;
		snprintf(path, sizeof(path), NODE_SYSFS "/node%d/cpulist", node);
		if (read_file(path, buf, sizeof(buf)))
			continue;
		n = tb_parse_cpulist(buf, ids, TB_MAX_CPUS);
		if (n <= 0)
			continue;
		t->cpus[node] = malloc(sizeof(int) * n);
		if (!t->cpus[node])
			goto fail;
		for (i = 0; i < n; i++) {
			int ok = CPU_ISSET_S(ids[i], setsz, allowed), k;

			if (ok && nonline >= 0) {
				ok = 0;
				for (k = 0; k < nonline; k++)
					if (online_cpus[k] == ids[i])
						ok = 1;
			}
			if (ok)
				t->cpus[node][t->ncpus[node]++] = ids[i];
		}
	}
	CPU_FREE(allowed);
	free(online_cpus);
	return 0;
fail:
	CPU_FREE(allowed);
	free(online_cpus);
	tb_topo_free(t);
	return -1;
}

void tb_topo_free(struct tb_topo *t)
{
	int i;

	for (i = 0; i < TB_MAX_NODES; i++) {
		free(t->cpus[i]);
		t->cpus[i] = NULL;
	}
}

/* Is node n online with CPUs this process may use (want_cpu) or memory? */
static int node_has(const struct tb_topo *t, int n, int want_cpu)
{
	return t->online[n] && (want_cpu ? t->ncpus[n] != 0 : t->has_mem[n]);
}

static int first_node(const struct tb_topo *t, int want_cpu)
{
	int n;

	for (n = 0; n < t->nr_nodes; n++)
		if (node_has(t, n, want_cpu))
			return n;
	return -1;
}

int tb_topo_first_cpu_node(const struct tb_topo *t)
{
	return first_node(t, 1);
}

int tb_topo_first_mem_node(const struct tb_topo *t)
{
	return first_node(t, 0);
}

static void list_nodes(const struct tb_topo *t, int want_cpu, char *buf,
		       size_t len)
{
	size_t off = 0;
	int n;

	buf[0] = 0;
	for (n = 0; n < t->nr_nodes && off + 8 < len; n++)
		if (node_has(t, n, want_cpu))
			off += snprintf(buf + off, len - off, "%s%d",
					off ? "," : "", n);
	if (!off)
		snprintf(buf, len, "none");
}

/* Validate a node from the command line: want_cpu ? CPUs : memory. */
static int check_node(const struct tb_topo *t, long node, const char *opt,
		      int want_cpu)
{
	const char *with = want_cpu ? "usable CPUs" : "memory";
	char nodes[256];

	list_nodes(t, want_cpu, nodes, sizeof(nodes));
	if (node < 0 || node >= t->nr_nodes || !t->online[node]) {
		tb_err("%s %ld: no such online NUMA node (nodes with %s: %s)",
		       opt, node, with, nodes);
		return -1;
	}
	if (!node_has(t, node, want_cpu)) {
		tb_err("%s %ld: node has no %s (nodes with %s: %s)", opt, node,
		       want_cpu ? "CPUs this process may run on" : "memory",
		       with, nodes);
		return -1;
	}
	return 0;
}

int tb_check_cpu_node(const struct tb_topo *t, long node, const char *opt)
{
	return check_node(t, node, opt, 1);
}

int tb_check_mem_node(const struct tb_topo *t, long node, const char *opt)
{
	return check_node(t, node, opt, 0);
}

int tb_node_of_cpu(const struct tb_topo *t, int cpu)
{
	int n, i;

	for (n = 0; n < t->nr_nodes; n++)
		for (i = 0; i < t->ncpus[n]; i++)
			if (t->cpus[n][i] == cpu)
				return n;
	return -1;
}

int tb_pin_cpu(int cpu)
{
	size_t setsz = CPU_ALLOC_SIZE(TB_MAX_CPUS);
	cpu_set_t *set = CPU_ALLOC(TB_MAX_CPUS);
	int r;

	if (!set)
		return -1;
	CPU_ZERO_S(setsz, set);
	CPU_SET_S(cpu, setsz, set);
	r = sched_setaffinity(0, setsz, set);
	CPU_FREE(set);
	if (r) {
		tb_err("cannot pin to CPU %d: %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- memory */

int tb_parse_page(const char *s, enum tb_page *out)
{
	if (!strcmp(s, "4k") || !strcmp(s, "4K"))
		*out = TB_PAGE_4K;
	else if (!strcmp(s, "thp"))
		*out = TB_PAGE_THP;
	else if (!strcmp(s, "2m") || !strcmp(s, "2M"))
		*out = TB_PAGE_2M;
	else if (!strcmp(s, "1g") || !strcmp(s, "1G"))
		*out = TB_PAGE_1G;
	else
		return -1;
	return 0;
}

const char *tb_page_name(enum tb_page p)
{
	static const char *const names[] = { "4k", "thp", "2m", "1g" };

	return names[p];
}

uint64_t tb_page_bytes(enum tb_page p)
{
	switch (p) {
	case TB_PAGE_2M:
	case TB_PAGE_THP:
		return 2ULL << 20;
	case TB_PAGE_1G:
		return 1ULL << 30;
	default:
		return 4096;
	}
}

static long sys_mbind(void *addr, unsigned long len, int mode,
		      const unsigned long *mask, unsigned long maxnode,
		      unsigned flags)
{
	return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

static long sys_move_pages(unsigned long count, void **pages, int *status)
{
	return syscall(SYS_move_pages, 0, count, pages, NULL, status, 0);
}

/* Sampled share of the region's pages that sit on the wanted node. */
static double check_placement(const struct tb_mem *m, uint64_t pgsz);

double tb_mem_placement(const struct tb_mem *m)
{
	return check_placement(m, m->page == TB_PAGE_THP ? 4096 :
				  tb_page_bytes(m->page));
}

static double check_placement(const struct tb_mem *m, uint64_t pgsz)
{
	enum { SAMPLES = 256 };
	void *pages[SAMPLES];
	int status[SAMPLES], n = 0, ok = 0, i;
	uint64_t npages = m->len / pgsz, step;

	if (!npages)
		return -1;
	step = npages > SAMPLES ? npages / SAMPLES : 1;
	for (i = 0; i < SAMPLES && (uint64_t)i * step < npages; i++)
		pages[n++] = (char *)m->base + i * step * pgsz;
	if (sys_move_pages(n, pages, status))
		return -1;
	for (i = 0; i < n; i++)
		if (status[i] == m->node)
			ok++;
	return 100.0 * ok / n;
}

/* Share of [base, base+len) backed by transparent huge pages. */
static double thp_share(const struct tb_mem *m)
{
	unsigned long lo, hi, start = (unsigned long)m->base;
	char line[512];
	int inside = 0;
	uint64_t huge = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			inside = lo < start + m->len && hi > start;
			continue;
		}
		if (inside && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
			huge += kb * 1024;
	}
	fclose(f);
	return m->len ? 100.0 * (huge > m->len ? m->len : huge) / m->len : -1;
}

static int thp_mode_always(void)
{
	char buf[256];

	if (read_file("/sys/kernel/mm/transparent_hugepage/enabled", buf,
		      sizeof(buf)))
		return 0;
	return strstr(buf, "[always]") != NULL;
}

static int thp_available(void)
{
	char buf[256];

	if (read_file("/sys/kernel/mm/transparent_hugepage/enabled", buf,
		      sizeof(buf)))
		return 0;
	return !strstr(buf, "[never]");
}

int tb_mem_alloc(struct tb_mem *m, size_t len, int node, enum tb_page page)
{
	return tb_mem_alloc_ex(m, len, node, page, 1);
}

int tb_mem_alloc_ex(struct tb_mem *m, size_t len, int node,
		    enum tb_page page, int prefault)
{
	uint64_t pgsz = tb_page_bytes(page), total;
	unsigned long mask[TB_MAX_NODES / (8 * sizeof(unsigned long))];
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	char sz[32];
	size_t maplen;
	void *p;

	memset(m, 0, sizeof(*m));
	m->node = node;
	m->page = page;
	m->placed_pct = -1;
	m->huge_pct = -1;
	if (!len) {
		tb_err("empty region");
		return -1;
	}
	total = node_meminfo(node, "MemTotal");
	if (total && len > total) {
		tb_err("%s bytes do not fit on node %d (%llu MiB in all)",
		       tb_fmt_size(len, sz, sizeof(sz)), node,
		       (unsigned long long)(total >> 20));
		return -1;
	}
	len = (len + pgsz - 1) / pgsz * pgsz;
	maplen = len;
	if (page == TB_PAGE_THP) {
		if (!thp_available()) {
			tb_err("--page thp: transparent huge pages are not available (kernel without THP or 'never')");
			return -1;
		}
		maplen = len + pgsz;	/* room to align to 2 MiB */
	} else if (page == TB_PAGE_2M || page == TB_PAGE_1G) {
		uint64_t kb = pgsz >> 10, need = len / pgsz;
		long nfree = tb_hp_read(kb, node, "free_hugepages");

		if (nfree < 0)
			nfree = tb_hp_read(kb, -1, "free_hugepages");
		if (nfree < 0) {
			tb_err("--page %s: this kernel has no %s hugetlb pages",
			       tb_page_name(page), tb_fmt_size(pgsz, sz, sizeof(sz)));
			return -1;
		}
		if ((uint64_t)nfree < need) {
			tb_err("--page %s: %llu free %s hugetlb pages needed on node %d, %ld free; reserve them with 'tierbench hugepages --size %s --count %llu --node %d -- COMMAND'",
			       tb_page_name(page), (unsigned long long)need,
			       tb_fmt_size(pgsz, sz, sizeof(sz)), node, nfree,
			       page == TB_PAGE_2M ? "2M" : "1G",
			       (unsigned long long)need, node);
			return -1;
		}
		flags |= MAP_HUGETLB |
			 ((page == TB_PAGE_2M ? 21 : 30) << MAP_HUGE_SHIFT);
	}
	p = mmap(NULL, maplen, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED) {
		tb_err("mmap of %zu bytes (%s pages) failed: %s", maplen,
		       tb_page_name(page), strerror(errno));
		return -1;
	}
	m->map = p;
	m->maplen = maplen;
	m->base = p;
	if (page == TB_PAGE_THP)
		m->base = (void *)(((uintptr_t)p + pgsz - 1) & ~(pgsz - 1));
	m->len = len;

	memset(mask, 0, sizeof(mask));
	mask[node / (8 * sizeof(unsigned long))] |=
		1UL << (node % (8 * sizeof(unsigned long)));
	if (sys_mbind(m->base, len, MPOL_BIND, mask, TB_MAX_NODES + 1, 0)) {
		/* A kernel without NUMA has only node 0: nothing to bind. */
		if (!(errno == ENOSYS && node == 0)) {
			tb_err("mbind to node %d failed: %s", node,
			       strerror(errno));
			tb_mem_free(m);
			return -1;
		}
	}
	if (page == TB_PAGE_THP) {
		if (madvise(m->base, len, MADV_HUGEPAGE)) {
			if (errno == ENOSYS && thp_mode_always()) {
				/* No madvise(), but THP applies anyway. */
			} else {
				if (errno == ENOSYS)
					tb_err("--page thp: THP is in 'madvise' mode but this kernel has no madvise() system call (CONFIG_ADVISE_SYSCALLS is not set)");
				else
					tb_err("madvise(MADV_HUGEPAGE) failed: %s",
					       strerror(errno));
				tb_mem_free(m);
				return -1;
			}
		}
	} else if (page == TB_PAGE_4K) {
		/* With THP "always" the kernel would otherwise use 2 MiB. */
		madvise(m->base, len, MADV_NOHUGEPAGE);
	}
	if (!prefault)
		return 0;
	/* Fault everything in now: no page fault in a timed window. */
	memset(m->base, 0x5a, len);
	tb_mem_check(m);
	return 0;
}

void tb_mem_check(struct tb_mem *m)
{
	m->placed_pct = tb_mem_placement(m);
	if (m->placed_pct >= 0 && m->placed_pct < 99.9)
		tb_warn("only %.1f%% of the sampled pages are on node %d",
			m->placed_pct, m->node);
	if (m->page == TB_PAGE_THP) {
		m->huge_pct = thp_share(m);
		if (m->huge_pct >= 0 && m->huge_pct < 50)
			tb_warn("--page thp: only %.0f%% of the region got transparent huge pages",
				m->huge_pct);
	} else if (m->page != TB_PAGE_4K) {
		m->huge_pct = 100;
	} else {
		m->huge_pct = 0;
	}
}

void tb_mem_free(struct tb_mem *m)
{
	if (m->map)
		munmap(m->map, m->maplen);
	m->map = NULL;
	m->base = NULL;
}
