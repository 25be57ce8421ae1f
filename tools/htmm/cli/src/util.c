// SPDX-License-Identifier: GPL-2.0
/* htmm(8): messages, kernel file access under $HTMM_SYSFS_ROOT, clocks. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "htmm.h"

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	fflush(stdout);
	fprintf(stderr, "htmm: %s", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void hm_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void hm_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

/* $HTMM_SYSFS_ROOT: put before /sys, /proc, /dev/kmsg and /run/htmm. */
const char *hm_root(void)
{
	const char *r = getenv("HTMM_SYSFS_ROOT");

	return r ? r : "";
}

bool hm_fake(void)
{
	return *hm_root() != '\0';
}

/* The kernel file @fmt (an absolute path) under the root; -1 if too long. */
int hm_path(char *buf, size_t len, const char *fmt, ...)
{
	const char *root = hm_root();
	size_t rl = strlen(root);
	va_list ap;
	int n;

	if (rl >= len)
		return -1;
	memcpy(buf, root, rl);
	va_start(ap, fmt);
	n = vsnprintf(buf + rl, len - rl, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len - rl)
		return -1;
	return 0;
}

/*
 * Copy @src into @dst (@size bytes), always NUL-terminated, as the kernel's
 * strscpy(): the length copied, or -E2BIG if @src was cut short.
 */
ssize_t hm_strscpy(char *dst, const char *src, size_t size)
{
	size_t len = strnlen(src, size);

	if (len < size) {
		memcpy(dst, src, len + 1);
		return len;
	}
	if (size) {
		memcpy(dst, src, size - 1);
		dst[size - 1] = '\0';
	}
	return -E2BIG;
}

/* Strip trailing white space in place. */
char *hm_strip(char *s)
{
	size_t n = strlen(s);

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

int hm_pread(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t r;

	while (got + 1 < len) {
		r = pread(fd, buf + got, len - 1 - got, got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += r;
	}
	buf[got] = '\0';
	return (int)got;
}

/* Read a small file whole, trailing newline stripped; -errno on failure. */
int hm_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	r = hm_pread(fd, buf, len);
	close(fd);
	if (r >= 0)
		hm_strip(buf);
	return r;
}

/* A file of any size (sysfs reads of one page, or a record). */
char *hm_slurp(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "re");
	size_t cap = 65536, len = 0, r;
	char *buf = malloc(cap);

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	while ((r = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += r;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	fclose(f);
	if (lenp)
		*lenp = len;
	return buf;
}

/*
 * Write @val with one write(), as echo does.  The kernel files exist; in a
 * fake tree (HTMM_SYSFS_ROOT) the file is created when it is missing.
 */
int hm_write(const char *path, const char *val)
{
	int flags = O_WRONLY | O_CLOEXEC | (hm_fake() ? O_CREAT | O_TRUNC : 0);
	size_t n = strlen(val);
	int fd = open(path, flags, 0644);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, val, n);
	if (r < 0) {
		r = -errno;
		close(fd);
		return (int)r;
	}
	if (close(fd) && errno != EINTR)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

bool hm_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

bool hm_isdir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static double clock_secs(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

double hm_mono(void)
{
	return clock_secs(CLOCK_MONOTONIC);
}

double hm_wall(void)
{
	return clock_secs(CLOCK_REALTIME);
}

/* Sleep; returns early (EINTR) when a signal arrives. */
void hm_sleep(double secs)
{
	struct timespec ts;

	if (secs <= 0)
		return;
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}
