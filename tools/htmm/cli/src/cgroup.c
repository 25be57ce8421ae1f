// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): cgroup v2 files.  A cgroup is named by its path relative to the
 * mount, /sys/fs/cgroup ("" is the root cgroup).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "htmm.h"

int hm_cg_file(char *buf, size_t len, const char *rel, const char *file)
{
	return hm_path(buf, len, "/sys/fs/cgroup%s%s%s%s", *rel ? "/" : "",
		       rel, file ? "/" : "", file ? file : "");
}

int hm_cg_read(const char *rel, const char *file, char *buf, size_t len)
{
	char path[HM_PATH];

	if (hm_cg_file(path, sizeof(path), rel, file))
		return -ENAMETOOLONG;
	return hm_read(path, buf, len);
}

int hm_cg_write(const char *rel, const char *file, const char *val)
{
	char path[HM_PATH];

	if (hm_cg_file(path, sizeof(path), rel, file))
		return -ENAMETOOLONG;
	return hm_write(path, val);
}

bool hm_cg_exists(const char *rel)
{
	char path[HM_PATH];

	return !hm_cg_file(path, sizeof(path), rel, NULL) && hm_exists(path);
}

void hm_cg_parent(const char *rel, char *parent, size_t len)
{
	const char *slash = strrchr(rel, '/');
	size_t n = slash ? (size_t)(slash - rel) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(parent, rel, n);
	parent[n] = '\0';
}

/*
 * 1 if the word @ctrl is in @rel's @file (cgroup.controllers etc.).  A fake
 * tree keeps what was written, so "+memory" counts there as "memory".
 */
int hm_cg_has_controller(const char *rel, const char *file, const char *ctrl)
{
	char buf[1024], *w, *save;
	int r = hm_cg_read(rel, file, buf, sizeof(buf));

	if (r < 0)
		return r;
	for (w = strtok_r(buf, "\n ", &save); w; w = strtok_r(NULL, "\n ", &save))
		if (!strcmp(w + (*w == '+' && hm_fake()), ctrl))
			return 1;
	return 0;
}

/* The names of @rel's child cgroups, as "\nname\nname\n"; NULL on error. */
char *hm_cg_children(const char *rel)
{
	char path[HM_PATH], *list, *n;
	size_t len = 1;
	struct dirent *de;
	DIR *d;

	if (hm_cg_file(path, sizeof(path), rel, NULL))
		return NULL;
	d = opendir(path);
	if (!d)
		return NULL;
	list = strdup("\n");
	while (list && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		n = realloc(list, len + strlen(de->d_name) + 2);
		if (!n) {
			free(list);
			list = NULL;
			break;
		}
		list = n;
		len += sprintf(list + len, "%s\n", de->d_name);
	}
	closedir(d);
	return list;
}

/*
 * cgroupfs gives a new cgroup its files; a fake tree copies them from
 * $HTMM_SYSFS_ROOT/cgroup-template/, if it has one.
 */
static void fake_populate(const char *dir)
{
	char tdir[HM_PATH], from[HM_PATH], to[HM_PATH], *text;
	struct dirent *de;
	DIR *d;

	if (hm_path(tdir, sizeof(tdir), "/cgroup-template"))
		return;
	d = opendir(tdir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_type != DT_REG ||
		    snprintf(from, sizeof(from), "%s/%s", tdir, de->d_name) >=
		    (int)sizeof(from) ||
		    snprintf(to, sizeof(to), "%s/%s", dir, de->d_name) >=
		    (int)sizeof(to))
			continue;
		text = hm_slurp(from, NULL);
		if (!text)
			continue;
		hm_write(to, text);
		free(text);
	}
	closedir(d);
}

int hm_cg_mkdir(const char *rel)
{
	char path[HM_PATH];

	if (hm_cg_file(path, sizeof(path), rel, NULL))
		return -ENAMETOOLONG;
	if (mkdir(path, 0755))
		return -errno;
	if (hm_fake())
		fake_populate(path);
	return 0;
}

/* A fake tree has real files where cgroupfs has its own: remove them. */
static void fake_clear(const char *dir)
{
	char path[HM_PATH];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_type == DT_REG &&
		    snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
		    (int)sizeof(path))
			unlink(path);
	closedir(d);
}

/*
 * Remove a cgroup.  Its last process may still be exiting (a zombie keeps
 * it busy until reaped, and an exiting task until its exit completes):
 * retry on EBUSY until @timeout seconds have passed.
 */
int hm_cg_rmdir(const char *rel, double timeout)
{
	char path[HM_PATH];
	double end = hm_mono() + timeout;

	if (hm_cg_file(path, sizeof(path), rel, NULL))
		return -ENAMETOOLONG;
	if (hm_fake())
		fake_clear(path);
	for (;;) {
		if (!rmdir(path) || errno == ENOENT)
			return 0;
		if (errno != EBUSY || hm_mono() >= end)
			return -errno;
		hm_sleep(0.02);
	}
}

int hm_cg_set_htmm(const char *rel, bool on)
{
	int err = hm_cg_write(rel, "memory.htmm_enabled",
			      on ? "enabled" : "disabled");

	if (!err)
		return 0;
	if (err == -EOPNOTSUPP)
		hm_err("cannot enable htmm in /%s: htmm is off (boot with htmm=on)",
		       rel);
	else if (err == -EPERM)
		hm_err("cannot enable htmm in /%s: needs CAP_SYS_ADMIN, or a parent with htmm enabled",
		       rel);
	else if (err == -EBUSY)
		hm_err("cannot disable htmm in /%s: a child cgroup has it enabled",
		       rel);
	else if (err == -ENOMEM)
		hm_err("cannot enable htmm in /%s: the cgroup cannot hold htmm's 160 KiB",
		       rel);
	else
		hm_err("cannot %s htmm in /%s: memory.htmm_enabled: %s",
		       on ? "enable" : "disable", rel, strerror(-err));
	return err;
}

bool hm_cg_htmm_enabled(const char *rel)
{
	char buf[32];

	return hm_cg_read(rel, "memory.htmm_enabled", buf, sizeof(buf)) > 0 &&
	       !strcmp(buf, "enabled");
}

static void (*walk_fn)(const char *rel, void *arg);
static void *walk_arg;
static size_t walk_base;

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)st;
	if (type != FTW_D || ftw->level == 0)
		return 0;
	walk_fn(path + walk_base + 1, walk_arg);
	return 0;
}

/* Call @fn for every cgroup below the root, parents first. */
int hm_cg_walk(void (*fn)(const char *rel, void *arg), void *arg)
{
	char root[HM_PATH];

	if (hm_cg_file(root, sizeof(root), "", NULL))
		return -ENAMETOOLONG;
	walk_fn = fn;
	walk_arg = arg;
	walk_base = strlen(root);
	return nftw(root, walk_one, 32, FTW_PHYS | FTW_MOUNT) ? -EIO : 0;
}
