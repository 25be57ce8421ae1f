// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): claims on global tunables, so that concurrent runs do not undo
 * each other's settings.
 *
 * The rule (htmm(8), CONCURRENCY): a run or attach that changes a tunable
 * claims it in /run/htmm/claim.<tunable> ("pid starttime old new") for as
 * long as it runs; another run or attach, and "htmm tune", refuse to change
 * a tunable that a live htmm holds.  Runs that change nothing, or other
 * tunables, go ahead side by side.  A claim whose holder died without
 * cleaning up (SIGKILL) is reaped by the next htmm that takes the lock: it
 * writes the old value back if the tunable still has the claimed one.
 * /run is a tmpfs, so claims do not outlive a reboot, nor do tunables.
 * All of this happens under flock() of /run/htmm/lock.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "htmm.h"

#define CLAIM_DIR	"/run/htmm"
#define CLAIM_PREFIX	"claim."

static int claim_path(char *buf, size_t len, const char *name)
{
	if (name)
		return hm_path(buf, len, CLAIM_DIR "/" CLAIM_PREFIX "%s", name);
	return hm_path(buf, len, CLAIM_DIR);
}

struct claim {
	pid_t pid;
	unsigned long long start;
	char old[HM_VAL], want[HM_VAL];
};

static int claim_read(const char *name, struct claim *c)
{
	char path[HM_PATH], buf[3 * HM_VAL];
	int pid;

	if (claim_path(path, sizeof(path), name) ||
	    hm_read(path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	if (sscanf(buf, "%d %llu %63s %63s", &pid, &c->start, c->old,
		   c->want) != 4)
		return -EINVAL;
	c->pid = pid;
	return 0;
}

static bool claim_live(const struct claim *c)
{
	if (kill(c->pid, 0) && errno != EPERM)
		return false;
	return hm_proc_start(c->pid) == c->start;
}

/*
 * Without flock(2) (CONFIG_FILE_LOCKING=n, as in tiny kernels) the lock is
 * a file made with O_EXCL that holds the holder's pid; a holder that died
 * without removing it is found with kill(pid, 0).  Waits up to 10 s.
 */
static int excl_held;

static int excl_lock(void)
{
	char path[HM_PATH], buf[32], *end;
	int fd, tries;
	long pid;

	if (hm_path(path, sizeof(path), CLAIM_DIR "/lock.pid"))
		return -1;
	for (tries = 0; tries < 1000; tries++) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			dprintf(fd, "%d\n", (int)getpid());
			excl_held = 1;
			return fd;
		}
		if (errno != EEXIST)
			break;
		if (hm_read(path, buf, sizeof(buf)) < 0)
			buf[0] = 0;
		pid = strtol(buf, &end, 10);
		if (end != buf && pid > 0 &&
		    kill((pid_t)pid, 0) && errno == ESRCH) {
			unlink(path);
			continue;
		}
		usleep(10000);
	}
	hm_err("cannot lock %s: %s", path,
	       tries == 1000 ? "held for over 10 s" : strerror(errno));
	return -1;
}

/* Take the claims lock; returns its fd, or -1 (said why). */
int hm_claims_lock(void)
{
	char dir[HM_PATH], path[HM_PATH];
	int fd;

	if (claim_path(dir, sizeof(dir), NULL) ||
	    hm_path(path, sizeof(path), "/run")) {
		hm_err("path too long under HTMM_SYSFS_ROOT");
		return -1;
	}
	/* A fake tree or a minimal system (an initramfs) may have no /run. */
	if (mkdir(path, 0755) && errno != EEXIST) {
		hm_err("cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		hm_err("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	hm_path(path, sizeof(path), CLAIM_DIR "/lock");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		hm_err("cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX)) {
		/* A kernel without CONFIG_FILE_LOCKING has no flock(2). */
		close(fd);
		return excl_lock();
	}
	return fd;
}

void hm_claims_unlock(int fd)
{
	char path[HM_PATH];

	if (excl_held && fd >= 0 &&
	    !hm_path(path, sizeof(path), CLAIM_DIR "/lock.pid")) {
		unlink(path);
		excl_held = 0;
	}
	if (fd >= 0)
		close(fd);
}

static void reap_one(const char *name)
{
	char path[HM_PATH], cur[HM_VAL];
	struct claim c;

	if (claim_read(name, &c) == 0 && claim_live(&c))
		return;
	if (claim_read(name, &c) == 0 &&
	    !hm_path(path, sizeof(path), "/sys/kernel/mm/htmm/%s", name) &&
	    hm_read(path, cur, sizeof(cur)) >= 0 && !strcmp(cur, c.want)) {
		if (hm_write(path, c.old))
			hm_warn("cannot restore %s to %s (left by htmm pid %d)",
				name, c.old, (int)c.pid);
		else
			hm_warn("restored %s to %s: htmm pid %d had set %s and died",
				name, c.old, (int)c.pid, c.want);
	}
	if (!claim_path(path, sizeof(path), name))
		unlink(path);
}

/* Undo the claims of dead holders.  Call with the lock held. */
int hm_claims_reap(void)
{
	char dir[HM_PATH];
	struct dirent *de;
	DIR *d;

	if (claim_path(dir, sizeof(dir), NULL))
		return -ENAMETOOLONG;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, CLAIM_PREFIX, strlen(CLAIM_PREFIX)))
			reap_one(de->d_name + strlen(CLAIM_PREFIX));
	closedir(d);
	return 0;
}

/* 1 if a live htmm other than this one holds @name (*@pid), else 0. */
int hm_claim_holder(const char *name, pid_t *pid)
{
	struct claim c;

	if (claim_read(name, &c) || !claim_live(&c) || c.pid == getpid())
		return 0;
	*pid = c.pid;
	return 1;
}

int hm_claim_take(const char *name, const char *old, const char *want)
{
	char path[HM_PATH], buf[3 * HM_VAL + 48];
	ssize_t n;
	int fd;

	if (claim_path(path, sizeof(path), name))
		return -ENAMETOOLONG;
	snprintf(buf, sizeof(buf), "%d %llu %s %s\n", (int)getpid(),
		 hm_proc_start(getpid()), old, want);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, strlen(buf));
	close(fd);
	return n == (ssize_t)strlen(buf) ? 0 : -EIO;
}

void hm_claim_drop(const char *name)
{
	char path[HM_PATH];
	struct claim c;

	if (claim_read(name, &c) || c.pid != getpid())
		return;
	if (!claim_path(path, sizeof(path), name))
		unlink(path);
}
