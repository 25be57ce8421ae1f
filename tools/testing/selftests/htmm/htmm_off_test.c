// SPDX-License-Identifier: GPL-2.0
/*
 * htmm is off unless the kernel was booted with htmm=on: the state file
 * says which and why, enabling a cgroup fails with EOPNOTSUPP and one
 * kernel log line, memory.htmm_stat says so, and nothing runs.  The
 * state tests run in every boot; the off tests only in a boot without
 * htmm=on (scripts/test.sh boots the test kernel once more for them).
 */
#define _GNU_SOURCE
#include <strings.h>
#include <sys/klog.h>

#include "htmm_util.h"	/* includes kselftest_harness.h */

#define STATE_FILE	HTMM_SYSFS_DIR "/state"
#define OFF_TEXT	"off (boot with htmm=on)"
#define OFF_LOG		"htmm: cannot enable a cgroup: off, boot with htmm=on"

/* What the kernel made of htmm= on its command line (kstrtobool). */
static bool cmdline_htmm_on(void)
{
	char buf[4096], *tok, *save = NULL;
	bool on = false;

	if (htmm_read_file("/proc/cmdline", buf, sizeof(buf)) < 0)
		return false;
	for (tok = strtok_r(buf, "\n\t ", &save); tok;
	     tok = strtok_r(NULL, "\n\t ", &save)) {
		if (strncmp(tok, "htmm=", 5))
			continue;
		tok += 5;
		on = strchr("yYtT1", tok[0]) ||
		     !strcasecmp(tok, "on");
	}
	return on;
}

/* Occurrences of @what in the kernel log. */
static int klog_count(const char *what)
{
	int size = klogctl(10, NULL, 0);	/* SYSLOG_ACTION_SIZE_BUFFER */
	char *buf, *p;
	int n = 0, len;

	if (size <= 0)
		return -1;
	buf = calloc(1, size + 1);
	if (!buf)
		return -1;
	len = klogctl(3, buf, size);		/* SYSLOG_ACTION_READ_ALL */
	if (len < 0) {
		free(buf);
		return -1;
	}
	buf[len] = '\0';
	for (p = buf; (p = strstr(p, what)); p += strlen(what))
		n++;
	free(buf);
	return n;
}

static bool state_is_off(void)
{
	char buf[128];

	return htmm_read_file(STATE_FILE, buf, sizeof(buf)) > 0 &&
	       !strcmp(buf, OFF_TEXT "\n");
}

TEST(state_file)
{
	char buf[128];
	struct stat st;
	ssize_t n;

	ASSERT_EQ(0, stat(STATE_FILE, &st)) TH_LOG("%s: %s", STATE_FILE,
						   strerror(errno));
	EXPECT_EQ(0444U, st.st_mode & 07777U)
		TH_LOG("mode is %04o", st.st_mode & 07777);
	n = htmm_read_file(STATE_FILE, buf, sizeof(buf));
	ASSERT_LT(0, n) TH_LOG("read: %s", strerror((int)-n));
	EXPECT_STREQ(cmdline_htmm_on() ? "on\n" : OFF_TEXT "\n", buf);
	EXPECT_EQ(-EACCES, htmm_write_str(STATE_FILE, "on"));
}

FIXTURE(htmm_off) {
	char cg[HTMM_CG_PATH_MAX];
};

FIXTURE_SETUP(htmm_off)
{
	self->cg[0] = '\0';
	if (!state_is_off())
		SKIP(return, "htmm is on (booted with htmm=on)");
	ASSERT_EQ(0, htmm_cg_prepare());
	ASSERT_EQ(0, htmm_cg_create(self->cg, sizeof(self->cg), "htmm_off"));
}

FIXTURE_TEARDOWN(htmm_off)
{
	htmm_cg_destroy(self->cg);
}

/* Enabling fails with EOPNOTSUPP and says why in the log, once. */
TEST_F(htmm_off, enable_fails)
{
	char path[PATH_MAX], buf[64];
	int i;

	htmm_cg_file(path, sizeof(path), self->cg, "memory.htmm_enabled");
	for (i = 0; i < 2; i++)
		EXPECT_EQ(-EOPNOTSUPP, htmm_write_str(path, "enabled"));
	ASSERT_LT(0, htmm_read_file(path, buf, sizeof(buf)));
	EXPECT_STREQ("disabled\n", buf);
	EXPECT_EQ(0, htmm_write_str(path, "disabled"));
	EXPECT_EQ(-EINVAL, htmm_write_str(path, "bogus"));
	EXPECT_EQ(1, klog_count(OFF_LOG));
}

/* memory.htmm_stat starts with the reason. */
TEST_F(htmm_off, stat_says_off)
{
	char path[PATH_MAX], buf[8192];

	htmm_cg_file(path, sizeof(path), self->cg, "memory.htmm_stat");
	ASSERT_LT(0, htmm_read_file(path, buf, sizeof(buf)));
	EXPECT_EQ(0, strncmp(buf, "htmm " OFF_TEXT "\n",
			     strlen("htmm " OFF_TEXT "\n")))
		TH_LOG("memory.htmm_stat begins: %.40s", buf);
	EXPECT_NE(NULL, strstr(buf, "\nenabled 0\n"));
	EXPECT_NE(NULL, strstr(buf, "\nksamplingd_running 0\n"));
}

/* No htmm thread runs and nothing was sampled or moved. */
TEST_F(htmm_off, nothing_runs)
{
	static const char *const events[] = {
		"htmm_nr_sampled", "htmm_nr_cooling", "htmm_nr_promoted",
		"htmm_nr_demoted", "htmm_alloc_redirected",
	};
	char path[PATH_MAX], comm[64];
	unsigned long long v = 0;
	struct dirent *de;
	unsigned int i;
	DIR *dir;

	htmm_cg_file(path, sizeof(path), self->cg, "memory.htmm_enabled");
	EXPECT_EQ(-EOPNOTSUPP, htmm_write_str(path, "enabled"));
	dir = opendir("/proc");
	ASSERT_NE(NULL, dir);
	while ((de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		if (htmm_read_file(path, comm, sizeof(comm)) <= 0)
			continue;
		EXPECT_TRUE(strncmp(comm, "ksamplingd", 10) &&
			    strncmp(comm, "kmigraterd", 10))
			TH_LOG("thread %s: %s", de->d_name, comm);
	}
	closedir(dir);
	for (i = 0; i < ARRAY_SIZE(events); i++) {
		ASSERT_EQ(0, htmm_vmstat_get(events[i], &v))
			TH_LOG("%s missing in /proc/vmstat", events[i]);
		EXPECT_EQ(0ULL, v) TH_LOG("%s", events[i]);
	}
}

/* Pages have no record: the debugfs page_info finds nothing. */
TEST_F(htmm_off, no_page_records)
{
	char q[64], inj[64];
	char *p;
	int fd;

	if (!htmm_path_exists("/sys/kernel/debug/htmm/page_info"))
		SKIP(return, "no CONFIG_HTMM_DEBUG");
	ASSERT_EQ(0, htmm_cg_enter(self->cg, getpid()));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, (void *)p);
	htmm_touch(p, 4096);
	snprintf(inj, sizeof(inj), "%d %p load-fast\n", (int)getpid(), p);
	htmm_write_str("/sys/kernel/debug/htmm/inject", inj);
	fd = open("/sys/kernel/debug/htmm/page_info", O_RDWR);
	ASSERT_LE(0, fd);
	snprintf(q, sizeof(q), "%d %p", (int)getpid(), p);
	EXPECT_EQ(-1, write(fd, q, strlen(q)));
	EXPECT_EQ(ENODEV, errno);
	close(fd);
	munmap(p, 4096);
	htmm_cg_enter(HTMM_CGROUP_ROOT, getpid());
}

TEST_HARNESS_MAIN
