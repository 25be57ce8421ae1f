/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the htmm selftests.
 *
 * Everything is static inline so that each test program is a single
 * translation unit and can be built with a plain "gcc -static" command.
 * Helpers return 0 / a non-negative value on success and -errno on failure.
 */
#ifndef __HTMM_UTIL_H
#define __HTMM_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

/*
 * For -Wextra builds: kselftest_harness.h and its TEST() wrappers have
 * unused parameters, and test bodies inlined into the setjmp() wrapper
 * give false -Wclobbered reports (their locals are dead after longjmp).
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/mempolicy.h>

/* The paths can be overridden with -D to try the tests on a mock tree. */
#ifndef HTMM_SYSFS_DIR
#define HTMM_SYSFS_DIR		"/sys/kernel/mm/htmm"
#endif
#ifndef HTMM_CGROUP_ROOT
#define HTMM_CGROUP_ROOT	"/sys/fs/cgroup"
#endif
#ifndef HTMM_NODE_DIR
#define HTMM_NODE_DIR		"/sys/devices/system/node"
#endif
#ifndef HTMM_TIER_DIR
#define HTMM_TIER_DIR		"/sys/devices/virtual/memory_tiering"
#endif
#define HTMM_THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"

/* Layout of the test VM: CPUs + fast memory, CPU-less slow memory. */
#define HTMM_FAST_NODE		0
#define HTMM_SLOW_NODE		1

#define HTMM_MAX_NODES		64
#define HTMM_CG_PATH_MAX	256	/* buffer size for a cgroup path */
#define HTMM_UNPRIV_ID		65534
#define HTMM_VALUE_MAX		ULLONG_MAX	/* "max" in a cgroup file */

#define KiB			(1024UL)
#define MiB			(1024UL * KiB)
#define GiB			(1024UL * MiB)

/* ------------------------------------------------------------------ */
/* Plain file access                                                   */
/* ------------------------------------------------------------------ */

/* Read up to size-1 bytes and NUL terminate. Returns length or -errno. */
static inline ssize_t htmm_read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd, err;

	if (!size)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	close(fd);
	return len;
}

/*
 * Write exactly the given bytes with a single write(2) call, as sysfs and
 * cgroup files expect. Returns the number of bytes written or -errno.
 */
static inline ssize_t htmm_write_file(const char *path, const void *buf,
				      size_t len)
{
	ssize_t n;
	int fd, err;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	err = n < 0 ? -errno : 0;
	close(fd);
	return err ? err : n;
}

/* Write a string; returns 0 if the whole string was accepted, else -errno. */
static inline int htmm_write_str(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n = htmm_write_file(path, s, len);

	if (n < 0)
		return n;
	return (size_t)n == len ? 0 : -EIO;
}

/* Printable copy of s with newlines shown as \n (for log messages). */
static inline const char *htmm_esc(const char *s, char *buf, size_t size)
{
	size_t o = 0;

	for (; *s && o + 3 < size; s++) {
		if (*s == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	return buf;
}

static inline bool htmm_path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Strict unsigned decimal parse of a whole string (one trailing \n ok). */
static inline int htmm_parse_ull(const char *s, unsigned long long *val)
{
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*val = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	if (*end == '\n')
		end++;
	return *end ? -EINVAL : 0;
}

/* Parse a cgroup style value: a decimal number or "max" (HTMM_VALUE_MAX). */
static inline int htmm_parse_value(const char *s, unsigned long long *val)
{
	if (!strcmp(s, "max") || !strcmp(s, "max\n")) {
		*val = HTMM_VALUE_MAX;
		return 0;
	}
	return htmm_parse_ull(s, val);
}

static inline int htmm_read_value(const char *path, unsigned long long *val)
{
	char buf[128];
	ssize_t n = htmm_read_file(path, buf, sizeof(buf));

	if (n < 0)
		return n;
	return htmm_parse_value(buf, val);
}

/*
 * Find "key value" in a flat keyed file (memory.htmm_stat, /proc/vmstat)
 * and copy the value, as text, to @val.  Returns 0, or -ENOENT if the key
 * is missing.
 */
static inline int htmm_keyed_str(const char *path, const char *key,
				 char *val, size_t size)
{
	static char buf[65536];
	size_t klen = strlen(key);
	ssize_t n;
	char *line, *save = NULL;

	n = htmm_read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			snprintf(val, size, "%s", line + klen + 1);
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The same, as a number.  Returns 0 and the value, -ENOENT if the key is
 * missing, -EINVAL if the value does not parse.
 */
static inline int htmm_keyed_get(const char *path, const char *key,
				 unsigned long long *val)
{
	char v[64];
	int err = htmm_keyed_str(path, key, v, sizeof(v));

	return err ? err : htmm_parse_value(v, val);
}

/* Fold per-cpu vmstat deltas so /proc/vmstat is exact (best effort). */
static inline void htmm_vmstat_refresh(void)
{
	htmm_write_str("/proc/sys/vm/stat_refresh", "1");
}

static inline int htmm_vmstat_get(const char *key, unsigned long long *val)
{
	htmm_vmstat_refresh();
	return htmm_keyed_get("/proc/vmstat", key, val);
}

/* ------------------------------------------------------------------ */
/* Node lists                                                          */
/* ------------------------------------------------------------------ */

/*
 * Parse a kernel node/cpu list ("", "0", "0-1", "0,2-3\n") into a sorted
 * array. Returns the number of entries or -EINVAL.
 */
static inline int htmm_parse_list(const char *s, int *ids, int max)
{
	int count = 0;

	while (*s && *s != '\n') {
		char *end;
		long a, b;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		a = strtol(s, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			b = strtol(end + 1, &end, 10);
		}
		if (b < a)
			return -EINVAL;
		for (; a <= b; a++) {
			if (count >= max)
				return -EINVAL;
			ids[count++] = a;
		}
		if (*end == ',')
			end++;
		else if (*end && *end != '\n')
			return -EINVAL;
		s = end;
	}
	return count;
}

static inline int htmm_read_list(const char *path, int *ids, int max)
{
	char buf[1024];
	ssize_t n = htmm_read_file(path, buf, sizeof(buf));

	if (n < 0)
		return n;
	return htmm_parse_list(buf, ids, max);
}

/* Nodes with memory, from /sys/devices/system/node/has_memory. */
static inline int htmm_memory_nodes(int *nodes, int max)
{
	return htmm_read_list(HTMM_NODE_DIR "/has_memory", nodes, max);
}

static inline bool htmm_list_has(const int *ids, int n, int id)
{
	int i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* cgroup v2                                                           */
/* ------------------------------------------------------------------ */

static inline bool htmm_word_in_file(const char *path, const char *word)
{
	char buf[4096], *tok, *save = NULL;

	if (htmm_read_file(path, buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, "\n ", &save); tok;
	     tok = strtok_r(NULL, "\n ", &save))
		if (!strcmp(tok, word))
			return true;
	return false;
}

/*
 * Make sure cgroup v2 is mounted at HTMM_CGROUP_ROOT with the memory
 * controller available to children. Returns 0 or -errno.
 */
static inline int htmm_cg_prepare(void)
{
	const char *ctl = HTMM_CGROUP_ROOT "/cgroup.subtree_control";

	if (!htmm_word_in_file(HTMM_CGROUP_ROOT "/cgroup.controllers",
			       "memory"))
		return -ENODEV;
	if (htmm_word_in_file(ctl, "memory"))
		return 0;
	return htmm_write_str(ctl, "+memory");
}

static inline int htmm_cg_create(char *path, size_t size, const char *name)
{
	snprintf(path, size, "%s/%s_%d", HTMM_CGROUP_ROOT, name, (int)getpid());
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static inline int htmm_cg_enter(const char *cg, pid_t pid)
{
	char path[PATH_MAX], buf[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return htmm_write_str(path, buf);
}

/* Move every task back to the root cgroup and remove the cgroup. */
static inline int htmm_cg_destroy(const char *cg)
{
	char path[PATH_MAX], buf[4096];
	int tries;

	if (!cg[0] || !htmm_path_exists(cg))
		return 0;
	for (tries = 0; tries < 50; tries++) {
		char *tok, *save = NULL;

		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		if (htmm_read_file(path, buf, sizeof(buf)) >= 0)
			for (tok = strtok_r(buf, "\n", &save); tok;
			     tok = strtok_r(NULL, "\n", &save))
				htmm_write_str(HTMM_CGROUP_ROOT "/cgroup.procs",
					       tok);
		if (!rmdir(cg) || errno == ENOENT)
			return 0;
		if (errno != EBUSY)
			return -errno;
		usleep(100 * 1000);	/* exiting tasks still attached */
	}
	return -EBUSY;
}

static inline void htmm_cg_file(char *buf, size_t size, const char *cg,
				const char *file)
{
	snprintf(buf, size, "%s/%s", cg, file);
}

/* ------------------------------------------------------------------ */
/* Access checks                                                       */
/* ------------------------------------------------------------------ */

enum {
	HTMM_ACCESS_OK = 0,
	HTMM_ACCESS_SETID_FAILED,
	HTMM_ACCESS_WRITE_ALLOWED,
	HTMM_ACCESS_WRITE_WRONG_ERRNO,
	HTMM_ACCESS_READ_OPEN_FAILED,
	HTMM_ACCESS_READ_FAILED,
	HTMM_ACCESS_CHILD_DIED,
};

static inline const char *htmm_access_str(int code)
{
	switch (code) {
	case HTMM_ACCESS_OK:
		return "ok";
	case HTMM_ACCESS_SETID_FAILED:
		return "setgid/setuid failed";
	case HTMM_ACCESS_WRITE_ALLOWED:
		return "unprivileged open for write succeeded";
	case HTMM_ACCESS_WRITE_WRONG_ERRNO:
		return "unprivileged open for write failed, but not with EACCES";
	case HTMM_ACCESS_READ_OPEN_FAILED:
		return "unprivileged open for read failed";
	case HTMM_ACCESS_READ_FAILED:
		return "unprivileged read failed";
	default:
		return "child died";
	}
}

/*
 * Run @fn(@arg) in a forked child as uid/gid HTMM_UNPRIV_ID.  Returns what
 * it returned (0 to 254), 255 if the child could not drop its privileges,
 * -1 if it died.
 */
static inline int htmm_run_unpriv(int (*fn)(const void *arg), const void *arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(HTMM_UNPRIV_ID) ||
		    setuid(HTMM_UNPRIV_ID))
			_exit(255);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The unprivileged side of htmm_check_unpriv_access(). */
static inline int htmm_unpriv_access(const void *arg)
{
	const char *path = arg;
	char buf[256];
	int fd;

	fd = open(path, O_WRONLY);
	if (fd >= 0)
		return HTMM_ACCESS_WRITE_ALLOWED;
	if (errno != EACCES)
		return HTMM_ACCESS_WRITE_WRONG_ERRNO;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return HTMM_ACCESS_READ_OPEN_FAILED;
	if (read(fd, buf, sizeof(buf)) <= 0)
		return HTMM_ACCESS_READ_FAILED;
	return HTMM_ACCESS_OK;
}

/*
 * In a forked child drop to uid/gid 65534 and check that the file cannot be
 * opened for writing (EACCES) but can be read. Returns an HTMM_ACCESS_* code.
 */
static inline int htmm_check_unpriv_access(const char *path)
{
	int rc = htmm_run_unpriv(htmm_unpriv_access, path);

	if (rc == 255)
		return HTMM_ACCESS_SETID_FAILED;
	return rc < 0 ? HTMM_ACCESS_CHILD_DIED : rc;
}

/* ------------------------------------------------------------------ */
/* Memory placement                                                    */
/* ------------------------------------------------------------------ */

/*
 * Write one byte into every 4 KiB of the range. The compiler barrier after
 * each store keeps the writes from being optimised away.
 */
static inline void htmm_touch(void *addr, size_t len)
{
	char *p = addr;
	size_t off;

	for (off = 0; off < len; off += 4096) {
		p[off] = 1;
		asm volatile("" : : "r" (p + off) : "memory");
	}
}

/*
 * Count on which node each 4 KiB page of the range lives, using
 * move_pages(2) with a NULL node array (query only), in process @pid.
 * per_node[] must have HTMM_MAX_NODES entries; pages whose status is an
 * error (not present, ...) are counted in *bad. Returns 0 or -errno.
 */
static inline int htmm_count_nodes_pid(pid_t pid, void *addr, size_t len,
				       unsigned long *per_node,
				       unsigned long *bad)
{
	enum { CHUNK = 8192 };
	void **pages;
	int *status;
	size_t npages = len / 4096, done = 0;
	int err = 0;

	memset(per_node, 0, HTMM_MAX_NODES * sizeof(*per_node));
	*bad = 0;
	pages = malloc(CHUNK * sizeof(*pages));
	status = malloc(CHUNK * sizeof(*status));
	if (!pages || !status) {
		err = -ENOMEM;
		goto out;
	}
	while (done < npages) {
		size_t i, n = npages - done < CHUNK ? npages - done : CHUNK;

		for (i = 0; i < n; i++) {
			pages[i] = (char *)addr + (done + i) * 4096;
			status[i] = INT_MIN;
		}
		if (syscall(SYS_move_pages, pid, n, pages, NULL, status, 0)) {
			err = -errno;
			goto out;
		}
		for (i = 0; i < n; i++) {
			if (status[i] >= 0 && status[i] < HTMM_MAX_NODES)
				per_node[status[i]]++;
			else
				(*bad)++;
		}
		done += n;
	}
out:
	free(pages);
	free(status);
	return err;
}

/* The same for the calling process. */
static inline int htmm_count_nodes(void *addr, size_t len,
				   unsigned long *per_node,
				   unsigned long *bad)
{
	return htmm_count_nodes_pid(0, addr, len, per_node, bad);
}

/* AnonHugePages of the calling process in kB (smaps_rollup or smaps). */
static inline long htmm_anon_huge_kb(void)
{
	static const char *const files[] = {
		"/proc/self/smaps_rollup", "/proc/self/smaps",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		char line[256];
		long total = 0, kb;
		FILE *f = fopen(files[i], "re");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
				total += kb;
		fclose(f);
		return total;
	}
	return -ENOENT;
}

/* ------------------------------------------------------------------ */
/* THP mode                                                            */
/* ------------------------------------------------------------------ */

/* Get the active THP mode ("always [madvise] never" -> "madvise"). */
static inline int htmm_thp_get(char *mode, size_t size)
{
	char buf[256], *open_b, *close_b;
	ssize_t n = htmm_read_file(HTMM_THP_ENABLED, buf, sizeof(buf));

	if (n < 0)
		return n;
	open_b = strchr(buf, '[');
	close_b = open_b ? strchr(open_b, ']') : NULL;
	if (!close_b || (size_t)(close_b - open_b) > size)
		return -EINVAL;
	*close_b = '\0';
	snprintf(mode, size, "%s", open_b + 1);
	return 0;
}

static inline int htmm_thp_set(const char *mode)
{
	return htmm_write_str(HTMM_THP_ENABLED, mode);
}

/* ------------------------------------------------------------------ */
/* Workload running in a child inside a cgroup                         */
/* ------------------------------------------------------------------ */

struct htmm_workload {
	size_t size;		/* bytes to map and touch */
	bool thp;		/* 2 MiB aligned + MADV_HUGEPAGE */
	bool thp_system;	/* with thp: no madvise, THP "always" decides */
	bool no_thp;		/* prctl(PR_SET_THP_DISABLE) */
	int policy;		/* MPOL_* or -1 for none */
	bool policy_mbind;	/* apply policy with mbind() on the range */
	unsigned long nodemask;	/* nodes for policy */
	bool hold;		/* stay alive and take commands */
};

struct htmm_result {
	int err;		/* 0 or errno of the failing step */
	char step[32];		/* name of the failing step */
	unsigned long pages;	/* 4 KiB pages touched in this round */
	unsigned long bad;	/* pages move_pages could not place */
	unsigned long per_node[HTMM_MAX_NODES];
	long anon_huge_kb;	/* AnonHugePages of the child */
};

struct htmm_child {
	pid_t pid;
	int res_fd;		/* parent reads results */
	int cmd_fd;		/* parent writes commands */
};

#define HTMM_CMD_ALLOC	'a'	/* map+touch another w->size bytes */
#define HTMM_CMD_QUIT	'q'

static inline bool htmm_full_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= n;
	}
	return true;
}

static inline bool htmm_full_read(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= n;
	}
	return true;
}

static inline void htmm_result_fail(struct htmm_result *r, const char *step)
{
	r->err = errno ? errno : EIO;
	snprintf(r->step, sizeof(r->step), "%s", step);
}

/* One round of the workload; fills *r. Returns false on failure. */
static inline bool htmm_workload_round(const struct htmm_workload *w,
				       struct htmm_result *r)
{
	size_t map_len = w->size + (w->thp ? 2 * MiB : 0);
	char *map, *addr;
	int err;

	memset(r, 0, sizeof(*r));
	errno = 0;
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		htmm_result_fail(r, "mmap");
		return false;
	}
	addr = map;
	if (w->thp) {
		addr = (char *)(((uintptr_t)map + 2 * MiB - 1) &
				~(uintptr_t)(2 * MiB - 1));
		if (!w->thp_system && madvise(addr, w->size, MADV_HUGEPAGE)) {
			htmm_result_fail(r, "madvise");
			return false;
		}
	}
	if (w->policy >= 0 && w->policy_mbind &&
	    syscall(SYS_mbind, addr, w->size, w->policy, &w->nodemask,
		    sizeof(w->nodemask) * 8, 0)) {
		htmm_result_fail(r, "mbind");
		return false;
	}

	htmm_touch(addr, w->size);
	r->pages = w->size / 4096;

	err = htmm_count_nodes(addr, w->size, r->per_node, &r->bad);
	if (err) {
		errno = -err;
		htmm_result_fail(r, "move_pages");
		return false;
	}
	r->anon_huge_kb = htmm_anon_huge_kb();
	/* the mapping is left in place until the child exits */
	return true;
}

/* Body of the workload child; never returns. */
static inline void htmm_workload_child(const char *cg,
				       const struct htmm_workload *w,
				       int res_fd, int cmd_fd)
{
	struct htmm_result r;
	char cmd;

	memset(&r, 0, sizeof(r));
	errno = 0;
	if (cg) {
		int err = htmm_cg_enter(cg, getpid());

		if (err) {
			errno = -err;
			htmm_result_fail(&r, "enter cgroup");
			goto report;
		}
	}
	if (w->no_thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)) {
		htmm_result_fail(&r, "PR_SET_THP_DISABLE");
		goto report;
	}
	if (w->policy >= 0 && !w->policy_mbind &&
	    syscall(SYS_set_mempolicy, w->policy, &w->nodemask,
		    sizeof(w->nodemask) * 8)) {
		htmm_result_fail(&r, "set_mempolicy");
		goto report;
	}
	htmm_workload_round(w, &r);
report:
	if (!htmm_full_write(res_fd, &r, sizeof(r)))
		_exit(2);
	if (r.err)
		_exit(1);
	if (!w->hold)
		_exit(0);
	while (htmm_full_read(cmd_fd, &cmd, 1)) {
		if (cmd != HTMM_CMD_ALLOC)
			break;
		htmm_workload_round(w, &r);
		if (!htmm_full_write(res_fd, &r, sizeof(r)))
			_exit(2);
		if (r.err)
			_exit(1);
	}
	_exit(0);
}

/* Fork the workload child. Returns 0 or -errno. */
static inline int htmm_workload_start(const char *cg,
				      const struct htmm_workload *w,
				      struct htmm_child *c)
{
	int res[2], cmd[2];

	c->pid = -1;
	c->res_fd = -1;
	c->cmd_fd = -1;
	/* commands to a child that already exited must not kill us */
	signal(SIGPIPE, SIG_IGN);
	if (pipe2(res, O_CLOEXEC))
		return -errno;
	if (pipe2(cmd, O_CLOEXEC)) {
		int err = -errno;

		close(res[0]);
		close(res[1]);
		return err;
	}
	fflush(stdout);
	fflush(stderr);
	c->pid = fork();
	if (c->pid < 0) {
		int err = -errno;

		close(res[0]);
		close(res[1]);
		close(cmd[0]);
		close(cmd[1]);
		return err;
	}
	if (c->pid == 0) {
		close(res[0]);
		close(cmd[1]);
		htmm_workload_child(cg, w, res[1], cmd[0]);
	}
	close(res[1]);
	close(cmd[0]);
	c->res_fd = res[0];
	c->cmd_fd = cmd[1];
	return 0;
}

/* Read the next result; returns 0 or -EPIPE if the child went away. */
static inline int htmm_workload_result(struct htmm_child *c,
				       struct htmm_result *r)
{
	if (!htmm_full_read(c->res_fd, r, sizeof(*r)))
		return -EPIPE;
	return 0;
}

static inline int htmm_workload_cmd(struct htmm_child *c, char cmd)
{
	return htmm_full_write(c->cmd_fd, &cmd, 1) ? 0 : -EPIPE;
}

/*
 * Let the child exit (or kill it if kill_it) and reap it.
 * Returns the wait status, or -1 if there was no child.
 */
static inline int htmm_workload_stop(struct htmm_child *c, bool kill_it)
{
	int status = -1;

	if (c->pid <= 0)
		return -1;
	if (kill_it)
		kill(c->pid, SIGKILL);
	else
		htmm_workload_cmd(c, HTMM_CMD_QUIT);
	if (c->cmd_fd >= 0)
		close(c->cmd_fd);
	if (c->res_fd >= 0)
		close(c->res_fd);
	c->cmd_fd = -1;
	c->res_fd = -1;
	if (waitpid(c->pid, &status, 0) != c->pid)
		status = -1;
	c->pid = -1;
	return status;
}

static inline unsigned long htmm_total_pages(const struct htmm_result *r)
{
	unsigned long sum = 0;
	int i;

	for (i = 0; i < HTMM_MAX_NODES; i++)
		sum += r->per_node[i];
	return sum;
}

/* ------------------------------------------------------------------ */
/* Checks shared by the interface tests (use the harness' _metadata)  */
/* ------------------------------------------------------------------ */

/* Compare file content with an expected string, logging both escaped. */
#define EXPECT_CONTENT(want, got, ctx) do {				\
	const char *__want = (want), *__got = (got), *__ctx = (ctx);	\
	char __w[128], __g[128], __c[128];				\
	EXPECT_EQ(0, strcmp(__want, __got))				\
		TH_LOG("%s: read \"%s\", want \"%s\"",			\
		       htmm_esc(__ctx, __c, sizeof(__c)),		\
		       htmm_esc(__got, __g, sizeof(__g)),		\
		       htmm_esc(__want, __w, sizeof(__w)));		\
} while (0)

/* Write @in, expect success and @want to be read back. */
static inline void htmm_expect_write_reads(struct __test_metadata *_metadata,
					   const char *path, const char *in,
					   const char *want)
{
	char buf[256], e[128];
	ssize_t n;
	int err;

	err = htmm_write_str(path, in);
	EXPECT_EQ(0, err) TH_LOG("write \"%s\" to %s: %s",
				 htmm_esc(in, e, sizeof(e)), path,
				 strerror(-err));
	n = htmm_read_file(path, buf, sizeof(buf));
	ASSERT_LE(0, n) TH_LOG("read %s: %s", path, strerror(-n));
	EXPECT_CONTENT(want, buf, in);
}

/*
 * Write @in exactly as given; the write must fail with EINVAL (or ERANGE
 * if @allow_erange) and @old must still be read back.
 */
static inline void htmm_expect_rejected(struct __test_metadata *_metadata,
					const char *path, const char *in,
					const char *old, bool allow_erange)
{
	char buf[256], e[128];
	ssize_t n;
	int err;

	err = htmm_write_str(path, in);
	EXPECT_TRUE(err == -EINVAL || (allow_erange && err == -ERANGE))
		TH_LOG("write \"%s\" to %s: got %d (%s), want EINVAL%s",
		       htmm_esc(in, e, sizeof(e)), path, err,
		       err ? strerror(-err) : "accepted",
		       allow_erange ? "/ERANGE" : "");
	n = htmm_read_file(path, buf, sizeof(buf));
	ASSERT_LE(0, n) TH_LOG("read %s: %s", path, strerror(-n));
	EXPECT_CONTENT(old, buf, in);
}

/*
 * Check one bad input. A zero length write never reaches a sysfs ->store()
 * or a cgroup file's ->write() (the sysfs and cgroup cores return 0 for it
 * first), so the empty input "" is written as "\n", and the zero length
 * write is only required to leave the value alone. Other inputs are tried
 * as-is and with a trailing newline.
 */
static inline void htmm_expect_bad_input(struct __test_metadata *_metadata,
					 const char *path, const char *in,
					 const char *old, bool allow_erange)
{
	char buf[256];
	ssize_t n;

	if (!in[0]) {
		n = htmm_write_file(path, "", 0);
		EXPECT_TRUE(n == 0 || n == -EINVAL ||
			    (allow_erange && n == -ERANGE))
			TH_LOG("zero length write to %s: %zd", path, n);
		n = htmm_read_file(path, buf, sizeof(buf));
		ASSERT_LE(0, n);
		EXPECT_CONTENT(old, buf, "(zero length write)");
		htmm_expect_rejected(_metadata, path, "\n", old, allow_erange);
		return;
	}
	htmm_expect_rejected(_metadata, path, in, old, allow_erange);
	snprintf(buf, sizeof(buf), "%s\n", in);
	htmm_expect_rejected(_metadata, path, buf, old, allow_erange);
}

/*
 * A root-only tunable: regular file, mode 0644, owned by root, and uid
 * 65534 gets EACCES opening it for writing while it can read it.
 */
static inline void htmm_expect_root_rw_file(struct __test_metadata *_metadata,
					    const char *path)
{
	struct stat st;
	int code;

	ASSERT_EQ(0, stat(path, &st)) TH_LOG("stat %s: %s", path,
					     strerror(errno));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0644U, st.st_mode & 07777U)
		TH_LOG("%s mode is %04o", path, st.st_mode & 07777);
	EXPECT_EQ(0U, st.st_uid);
	EXPECT_EQ(0U, st.st_gid);
	code = htmm_check_unpriv_access(path);
	EXPECT_EQ(HTMM_ACCESS_OK, code)
		TH_LOG("%s as uid %d: %s", path, HTMM_UNPRIV_ID,
		       htmm_access_str(code));
}

/* ------------------------------------------------------------------ */
/* Test cgroup fixture (create in setup, remove in teardown)           */
/* ------------------------------------------------------------------ */

struct htmm_cg_ctx {
	char cg[HTMM_CG_PATH_MAX];	/* the test cgroup, "" if none */
	int nodes[HTMM_MAX_NODES];	/* nodes with memory */
	int nr_nodes;
	struct htmm_child child;	/* workload child, pid -1 if none */
	char thp_saved[32];		/* THP mode to restore, if changed */
};

/*
 * Skip without cgroup v2 + memory controller (or, if @need_fast_slow,
 * without memory on both HTMM_FAST_NODE and HTMM_SLOW_NODE); then create
 * HTMM_CGROUP_ROOT/htmm_test_<pid>.
 */
static inline void htmm_cg_ctx_setup(struct __test_metadata *_metadata,
				     struct htmm_cg_ctx *c,
				     bool need_fast_slow)
{
	int err;

	c->child.pid = -1;
	err = htmm_cg_prepare();
	if (err == -ENODEV)
		SKIP(return, "no cgroup v2 memory controller at "
		     HTMM_CGROUP_ROOT);
	ASSERT_EQ(0, err) TH_LOG("enabling +memory: %s", strerror(-err));

	c->nr_nodes = htmm_memory_nodes(c->nodes, HTMM_MAX_NODES);
	ASSERT_LT(0, c->nr_nodes) TH_LOG("cannot parse has_memory");
	if (need_fast_slow &&
	    (!htmm_list_has(c->nodes, c->nr_nodes, HTMM_FAST_NODE) ||
	     !htmm_list_has(c->nodes, c->nr_nodes, HTMM_SLOW_NODE)))
		SKIP(return, "needs memory on nodes %d and %d",
		     HTMM_FAST_NODE, HTMM_SLOW_NODE);

	err = htmm_cg_create(c->cg, sizeof(c->cg), "htmm_test");
	ASSERT_EQ(0, err) TH_LOG("mkdir %s: %s", c->cg, strerror(-err));
}

/* Kill a leftover workload, restore THP, remove the cgroup. */
static inline void htmm_cg_ctx_teardown(struct __test_metadata *_metadata,
					struct htmm_cg_ctx *c)
{
	int err;

	htmm_workload_stop(&c->child, true);
	if (c->thp_saved[0]) {
		err = htmm_thp_set(c->thp_saved);
		EXPECT_EQ(0, err) TH_LOG("restoring THP mode %s: %s",
					 c->thp_saved, strerror(-err));
	}
	if (!c->cg[0])
		return;
	err = htmm_cg_destroy(c->cg);
	EXPECT_EQ(0, err) TH_LOG("removing %s: %s", c->cg, strerror(-err));
}

/* Path of a file in the test cgroup. */
static inline void htmm_cg_ctx_file(char *buf, size_t size,
				    const struct htmm_cg_ctx *c,
				    const char *file)
{
	htmm_cg_file(buf, size, c->cg, file);
}

#ifndef HTMM_DEBUGFS_DIR
#define HTMM_DEBUGFS_DIR	"/sys/kernel/debug/htmm"
#endif

/* Seconds on the monotonic clock. */
static inline double htmm_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The debugfs page_info line of @addr in this process, newline dropped.
 * Returns 0, or -errno (-ENODEV: the page is not accounted).
 */
static inline int htmm_page_info_str(const void *addr, char *buf, size_t size)
{
	char q[64];
	ssize_t n;
	int fd;

	fd = open(HTMM_DEBUGFS_DIR "/page_info", O_RDWR);
	if (fd < 0)
		return -errno;
	snprintf(q, sizeof(q), "%d %p", (int)getpid(), addr);
	if (write(fd, q, strlen(q)) < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Memory policy modes for raw mbind(2) calls (no libnuma here). */
#define HTMM_MPOL_DEFAULT	0
#define HTMM_MPOL_BIND		2

/* Write @val to a file of the test cgroup; the test fails if refused. */
static inline void htmm_cg_ctx_write(struct __test_metadata *_metadata,
				     const struct htmm_cg_ctx *c,
				     const char *file, const char *val)
{
	char path[PATH_MAX];

	htmm_cg_ctx_file(path, sizeof(path), c, file);
	ASSERT_EQ(0, htmm_write_str(path, val)) TH_LOG("%s <- %s", file, val);
}

/* A key of the test cgroup's memory.htmm_stat, 0 if missing. */
static inline unsigned long long htmm_cg_ctx_stat(const struct htmm_cg_ctx *c,
						  const char *key)
{
	unsigned long long v = 0;
	char path[PATH_MAX];

	htmm_cg_ctx_file(path, sizeof(path), c, "memory.htmm_stat");
	htmm_keyed_get(path, key, &v);
	return v;
}

/*
 * Inject @per load samples (debugfs) on every @stride bytes of
 * [@p, @p + @len) in the address space of process @pid.  Returns 0 or
 * -errno.  The buffer (192 KiB) is kept for the life of the process: a
 * new one each call would be mapped and unmapped each time, and a test
 * that injects in a loop would have the cgroup's memory on node 0 go up
 * and down by its 48 pages.
 */
static inline int htmm_inject(pid_t pid, const char *p, size_t len,
			      size_t stride, int per)
{
	enum { LINE = 48, CHUNK = 4096 };
	size_t npages = len / stride, i, n = 0, off = 0;
	static char *buf;
	int k, ret = 0;

	if (!buf)
		buf = malloc(CHUNK * LINE);
	if (!buf)
		return -ENOMEM;
	for (k = 0; k < per; k++) {
		for (i = 0; i < npages; i++) {
			off += snprintf(buf + off, LINE, "%d %p load-slow\n",
					(int)pid, p + i * stride);
			if (++n < CHUNK)
				continue;
			if (htmm_write_file(HTMM_DEBUGFS_DIR "/inject", buf,
					    off) < 0)
				ret = -EIO;
			n = 0;
			off = 0;
		}
	}
	if (off && htmm_write_file(HTMM_DEBUGFS_DIR "/inject", buf, off) < 0)
		ret = -EIO;
	return ret;
}

/* Number of processes (kernel threads) whose name starts with @prefix. */
static inline int htmm_count_threads(const char *prefix)
{
	char path[300], comm[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	dir = opendir("/proc");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		if (htmm_read_file(path, comm, sizeof(comm)) <= 0)
			continue;
		if (!strncmp(comm, prefix, strlen(prefix)))
			n++;
	}
	closedir(dir);
	return n;
}

/* Run the calling thread on @cpu only.  Returns 0 or -errno. */
static inline int htmm_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* mbind() [@p, @p + @len) to @node with @flags.  Returns 0 or -errno. */
static inline int htmm_bind_node(void *p, size_t len, int node,
				 unsigned int flags)
{
	unsigned long mask = 1UL << node;

	if (syscall(SYS_mbind, p, len, HTMM_MPOL_BIND, &mask, 64, flags))
		return -errno;
	return 0;
}

/* Drop the binding of [@p, @p + @len).  Returns 0 or -errno. */
static inline int htmm_unbind(void *p, size_t len)
{
	if (syscall(SYS_mbind, p, len, HTMM_MPOL_DEFAULT, NULL, 0, 0))
		return -errno;
	return 0;
}

/*
 * Fault [@p, @p + @len) in on @node (mbind() MPOL_BIND, then a write to
 * every byte), then drop the binding.  Returns 0 or -errno.
 */
static inline int htmm_fault_on(void *p, size_t len, int node)
{
	int err = htmm_bind_node(p, len, node, 0);

	if (err)
		return err;
	memset(p, 0x5a, len);
	return htmm_unbind(p, len);
}

/* Save the values of the files @names in @dir, to put them back later. */
static inline void htmm_save_files(const char *dir, const char * const *names,
				   unsigned int n, char (*saved)[32])
{
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (htmm_read_file(path, saved[i], 32) <= 0)
			saved[i][0] = '\0';
		saved[i][strcspn(saved[i], "\n")] = '\0';
	}
}

/* Put back what htmm_save_files() saved. */
static inline void htmm_restore_files(const char *dir,
				      const char * const *names,
				      unsigned int n, char (*saved)[32])
{
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!saved[i][0])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		htmm_write_str(path, saved[i]);
	}
}

/* Write a tunable in HTMM_SYSFS_DIR.  Returns 0 or -errno. */
static inline int htmm_tunable_set(const char *name, const char *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), HTMM_SYSFS_DIR "/%s", name);
	return htmm_write_str(path, val);
}

#endif /* __HTMM_UTIL_H */
