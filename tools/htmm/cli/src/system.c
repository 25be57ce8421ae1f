// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): what the system has: root, htmm, cgroup v2, the NUMA nodes and
 * memory tiers, htmm's kernel threads and their CPU time.
 *
 * Nodes are read from sysfs, not with libnuma: libnuma has no notion of
 * memory tiers (/sys/devices/virtual/memory_tiering), reads the very same
 * node files for what it does have, and would not follow
 * $HTMM_SYSFS_ROOT, which the host tests need.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "htmm.h"

#define PF_KTHREAD_	0x00200000UL	/* include/linux/sched.h */

/* Root, to write the kernel's files; a fake tree is the user's own. */
int hm_check_root(const char *what)
{
	if (geteuid() == 0 || hm_fake())
		return 0;
	hm_err("%s needs root: it writes cgroup files and /sys/kernel/mm/htmm",
	       what);
	return -EPERM;
}

/* /sys/kernel/mm/htmm exists: the kernel has htmm (on or off). */
int hm_check_htmm_dir(void)
{
	char path[HM_PATH];

	if (hm_path(path, sizeof(path), "/sys/kernel/mm/htmm") ||
	    !hm_isdir(path)) {
		hm_err("this kernel has no htmm: %s is missing (not an htmm kernel, or CONFIG_HTMM=n)",
		       path);
		return -ENOENT;
	}
	return 0;
}

/* The state file: "on", or "off (boot with htmm=on)". */
int hm_htmm_state(char *buf, size_t len)
{
	char path[HM_PATH];

	if (hm_path(path, sizeof(path), "/sys/kernel/mm/htmm/state") ||
	    hm_read(path, buf, len) < 0) {
		snprintf(buf, len, "unknown");
		return -EIO;
	}
	return strcmp(buf, "on") ? -EOPNOTSUPP : 0;
}

/* htmm is there and on. */
int hm_check_htmm(void)
{
	char state[128];
	int err = hm_check_htmm_dir();

	if (err)
		return err;
	err = hm_htmm_state(state, sizeof(state));
	if (err == -EIO)
		hm_err("cannot read /sys/kernel/mm/htmm/state");
	else if (err)
		hm_err("htmm is off (state: %s): boot the kernel with htmm=on",
		       state);
	return err;
}

/* cgroup v2 at /sys/fs/cgroup, with the memory controller available. */
int hm_check_cgroup2(void)
{
	char path[HM_PATH];

	if (hm_path(path, sizeof(path), "/sys/fs/cgroup/cgroup.controllers") ||
	    !hm_exists(path)) {
		hm_err("no cgroup v2 hierarchy at /sys/fs/cgroup (%s is missing): mount cgroup2 there",
		       path);
		return -ENOENT;
	}
	if (hm_cg_has_controller("", "cgroup.controllers", "memory") != 1) {
		hm_err("the memory controller is not available in cgroup v2 (%s lacks \"memory\": bound to cgroup v1, or cgroup_disable=memory?)",
		       path);
		return -ENOENT;
	}
	return 0;
}

static int node_list(const char *file, bool *nodes)
{
	char path[HM_PATH], buf[512];

	if (hm_path(path, sizeof(path), "/sys/devices/system/node/%s", file) ||
	    hm_read(path, buf, sizeof(buf)) < 0)
		return -ENOENT;
	return hm_parse_nodelist(buf, nodes, HM_MAX_NODES);
}

static void node_facts(struct hm_node *n, int id)
{
	char path[HM_PATH], buf[4096], *p = NULL;

	if (!hm_path(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo",
		     id) && hm_read(path, buf, sizeof(buf)) > 0)
		p = strstr(buf, "MemTotal:");
	if (p)
		n->total = strtoull(p + 9, NULL, 10) * 1024;
	n->cpus[0] = '\0';
	if (!hm_path(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist",
		     id))
		hm_read(path, n->cpus, sizeof(n->cpus));
	if (!n->cpus[0])
		hm_strscpy(n->cpus, "-", sizeof(n->cpus));
}

/* memory_tier<N>/nodelist: the tier of each node. */
static void load_tiers(struct hm_topo *t)
{
	char dir[HM_PATH], path[HM_PATH], buf[512];
	bool nodes[HM_MAX_NODES];
	struct dirent *de;
	DIR *d;
	int i, tier;

	if (hm_path(dir, sizeof(dir), "/sys/devices/virtual/memory_tiering"))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (sscanf(de->d_name, "memory_tier%d", &tier) != 1 ||
		    snprintf(path, sizeof(path), "%s/%s/nodelist", dir,
			     de->d_name) >= (int)sizeof(path) ||
		    hm_read(path, buf, sizeof(buf)) < 0 ||
		    hm_parse_nodelist(buf, nodes, HM_MAX_NODES))
			continue;
		for (i = 0; i < HM_MAX_NODES; i++)
			if (nodes[i] && i < t->nr)
				t->node[i].tier = tier;
		t->tiers_known = true;
	}
	closedir(d);
}

/*
 * The fast nodes, as htmm sees them: the top memory tier (the lowest
 * memory_tier<N> with memory), or with htmm_cxl_mode=enabled the memory
 * nodes that have CPUs.
 */
static void mark_fast(struct hm_topo *t)
{
	char path[HM_PATH], cxl[32] = "";
	int i, top = -1;

	if (!hm_path(path, sizeof(path), "/sys/kernel/mm/htmm/htmm_cxl_mode"))
		hm_read(path, cxl, sizeof(cxl));
	for (i = 0; i < t->nr; i++)
		if (t->node[i].mem && t->node[i].tier >= 0 &&
		    (top < 0 || t->node[i].tier < top))
			top = t->node[i].tier;
	for (i = 0; i < t->nr; i++) {
		struct hm_node *n = &t->node[i];

		if (!strcmp(cxl, "enabled"))
			n->fast = n->mem && n->cpu;
		else
			n->fast = n->mem && (top < 0 || n->tier == top);
	}
}

int hm_topo_load(struct hm_topo *t)
{
	bool online[HM_MAX_NODES], mem[HM_MAX_NODES], cpu[HM_MAX_NODES];
	int i;

	memset(t, 0, sizeof(*t));
	if (node_list("online", online)) {
		/* No NUMA in the kernel: one node 0 with everything. */
		memset(online, 0, sizeof(online));
		online[0] = true;
		memcpy(mem, online, sizeof(mem));
		memcpy(cpu, online, sizeof(cpu));
	} else {
		if (node_list("has_memory", mem))
			memcpy(mem, online, sizeof(mem));
		if (node_list("has_cpu", cpu))
			memcpy(cpu, online, sizeof(cpu));
	}
	for (i = 0; i < HM_MAX_NODES; i++) {
		t->node[i].tier = -1;
		if (!online[i])
			continue;
		t->nr = i + 1;
		t->node[i].online = true;
		t->node[i].mem = mem[i];
		t->node[i].cpu = cpu[i];
		node_facts(&t->node[i], i);
	}
	load_tiers(t);
	mark_fast(t);
	return t->nr ? 0 : -ENOENT;
}

/* utime + stime (clock ticks) and flags from a /proc/<pid>/stat line. */
int hm_stat_ticks(const char *stat, unsigned long long *ticks,
		  unsigned long *flags)
{
	unsigned long long ut, st;
	const char *p = strrchr(stat, ')');

	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %llu %llu",
			 flags, &ut, &st) != 3)
		return -EINVAL;
	*ticks = ut + st;
	return 0;
}

void hm_kthreads_init(struct hm_kthreads *k, const struct hm_topo *t)
{
	int i;

	memset(k, 0, sizeof(*k));
	hm_strscpy(k->t[k->n].comm, "ksamplingd", sizeof(k->t[k->n].comm));
	k->t[k->n++].fd = -1;
	for (i = 0; i < t->nr; i++) {
		if (!t->node[i].mem)
			continue;
		snprintf(k->t[k->n].comm, sizeof(k->t[0].comm), "kmigraterd%d", i);
		k->t[k->n++].fd = -1;
	}
	k->scanned = -1e9;
}

static struct hm_kthread *kthread_by_comm(struct hm_kthreads *k,
					  const char *comm, size_t len)
{
	int i;

	for (i = 0; i < k->n; i++)
		if (strlen(k->t[i].comm) == len &&
		    !strncmp(k->t[i].comm, comm, len))
			return &k->t[i];
	return NULL;
}

/**
 * hm_kthreads_add() - also follow the kernel thread named @comm
 * @k: the threads, after hm_kthreads_init()
 * @comm: its name as in /proc/<pid>/comm, e.g. kdamond.0 or kswapd0
 *
 * Return: 0 (also when @comm is followed already), or -EINVAL for an
 * empty or too long name or when HM_MAX_XKT are added already.
 */
int hm_kthreads_add(struct hm_kthreads *k, const char *comm)
{
	size_t len = strlen(comm);

	if (!len || len >= sizeof(k->t[0].comm) ||
	    (size_t)k->n >= ARRAY_SIZE(k->t))
		return -EINVAL;
	if (kthread_by_comm(k, comm, len))
		return 0;
	hm_strscpy(k->t[k->n].comm, comm, sizeof(k->t[0].comm));
	k->t[k->n++].fd = -1;
	return 0;
}

/* The missing kernel thread whose /proc/<pid>/stat is @stat, if any. */
static struct hm_kthread *kthread_match(struct hm_kthreads *k, const char *stat)
{
	const char *a = strchr(stat, '('), *b = strrchr(stat, ')');
	unsigned long long ticks;
	struct hm_kthread *kt;
	unsigned long flags;

	if (!a || !b || b < a)
		return NULL;
	kt = kthread_by_comm(k, a + 1, b - a - 1);
	if (!kt || kt->fd >= 0 || hm_stat_ticks(stat, &ticks, &flags) ||
	    !(flags & PF_KTHREAD_))
		return NULL;		/* a user process may take the name */
	return kt;
}

/* Find the missing threads among the kernel threads in /proc. */
static void kthreads_scan(struct hm_kthreads *k)
{
	char dir[HM_PATH], path[HM_PATH], buf[1024];
	struct hm_kthread *kt;
	struct dirent *de;
	DIR *d;
	int fd;

	k->scanned = hm_mono();
	if (hm_path(dir, sizeof(dir), "/proc"))
		return;
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    snprintf(path, sizeof(path), "%s/%s/stat", dir,
			     de->d_name) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		kt = hm_pread(fd, buf, sizeof(buf)) > 0 ? kthread_match(k, buf) : NULL;
		if (!kt) {
			close(fd);
			continue;
		}
		kt->fd = fd;
		kt->pid = atoi(de->d_name);
	}
	closedir(d);
}

/* Read every thread's CPU time; looks for missing ones every 2 s. */
void hm_kthreads_read(struct hm_kthreads *k)
{
	char buf[1024];
	unsigned long flags;
	int i, missing = 0;

	for (i = 0; i < k->n; i++)
		missing += k->t[i].fd < 0;
	if (missing && hm_mono() - k->scanned >= 2)
		kthreads_scan(k);
	for (i = 0; i < k->n; i++) {
		struct hm_kthread *t = &k->t[i];

		t->valid = false;
		if (t->fd < 0)
			continue;
		if (hm_pread(t->fd, buf, sizeof(buf)) <= 0 ||
		    hm_stat_ticks(buf, &t->ticks, &flags)) {
			close(t->fd);	/* the thread is gone */
			t->fd = -1;
			t->pid = 0;
			continue;
		}
		t->valid = true;
	}
}

void hm_kthreads_close(struct hm_kthreads *k)
{
	int i;

	for (i = 0; i < k->n; i++)
		if (k->t[i].fd >= 0)
			close(k->t[i].fd);
	k->n = 0;
}

/*
 * The sample source the kernel chose and why: the last "htmm: sample
 * source: ..." line of the kernel log (/dev/kmsg; root).  0 if found.
 */
int hm_kmsg_source(char *out, size_t len)
{
	static const char key[] = "htmm: sample source: ";
	char path[HM_PATH], buf[8192], *line, *save, *m;
	int fd, found = -ENOENT, guard = 0;
	ssize_t r;

	if (hm_path(path, sizeof(path), "/dev/kmsg"))
		return -ENOENT;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (guard++ < 200000) {
		r = read(fd, buf, sizeof(buf) - 1);
		if (r < 0 && errno == EPIPE)
			continue;	/* records overwritten meanwhile */
		if (r <= 0)
			break;
		buf[r] = '\0';
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			m = strstr(line, key);
			if (!m)
				continue;
			snprintf(out, len, "%s", m + sizeof(key) - 1);
			found = 0;
		}
	}
	close(fd);
	return found;
}

/* A process's start time (real /proc, also under a fake root); 0: gone. */
unsigned long long hm_proc_start(pid_t pid)
{
	char path[64], buf[1024], *p;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (hm_read(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	for (i = 0; p && i < 20; i++)	/* field 22: 20 blanks after ')' */
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* Whether @pid still runs and is the process that started at @start. */
bool hm_proc_alive(pid_t pid, unsigned long long start)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (hm_read(path, buf, sizeof(buf)) <= 0)
		return false;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return false;
	return !start || hm_proc_start(pid) == start;
}
