// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8) host unit tests.  Prints "ok N - name" / "not ok N - name" per
 * check and ends with "N passed, N failed"; exits non-zero on a failure.
 *
 * usage: htmm-unit PATH/TO/htmm [PATH/TO/htmm.rst]
 *
 * The parsers, the record writer and reader, the report figures and the
 * tunables table are called directly; the commands run as the binary
 * against fake trees (HTMM_SYSFS_ROOT) in a temporary directory, which
 * is removed unless a test failed or HTMM_UNIT_KEEP is set.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "htmm.h"

static int n_pass, n_fail, n_test;
static const char *bin, *rst;
static char tmp[256];

static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	n_test++;
	printf("%sok %d - ", cond ? "" : "not ", n_test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (cond)
		n_pass++;
	else
		n_fail++;
}

static void skip(const char *what, const char *why)
{
	n_test++;
	n_pass++;
	printf("ok %d - %s # SKIP %s\n", n_test, what, why);
}

/* Silence the parsers' error messages while testing rejections. */
static int saved_stderr = -1;

static void quiet(void)
{
	int fd = open("/dev/null", O_WRONLY);

	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static void loud(void)
{
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
}

/* ---------------------------------------------------------- fake tree */

static void put(const char *root, const char *rel, const char *text)
{
	char path[2 * HM_PATH], *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static char *get(const char *root, const char *rel)
{
	char path[2 * HM_PATH];
	char *s;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	s = hm_slurp(path, NULL);
	if (s)
		hm_strip(s);
	return s ? s : strdup("<missing>");
}

static bool get_is(const char *root, const char *rel, const char *want)
{
	char *s = get(root, rel);
	bool r = !strcmp(s, want);

	if (!r)
		printf("# %s: \"%s\", want \"%s\"\n", rel, s, want);
	free(s);
	return r;
}

static bool exists(const char *root, const char *rel)
{
	char path[2 * HM_PATH];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return access(path, F_OK) == 0;
}

static const char fake_stat[] =
	"enabled 1\nresident_node0 1073741824\nmax_at_node0 1073741824\n"
	"budget_node0 1073741824\nresident_node1 536870912\nmax_at_node1 max\n"
	"budget_node1 1073741824\nalloc_redirected 12\nalloc_over_limit 0\n"
	"samples_load_fast 0\nsamples_load_slow 0\nsamples_store 0\n"
	"samples_access 5000\nsamples_pebs 0\nsamples_abit 5000\n"
	"samples_inject 0\nhot_threshold 5\nwarm_threshold 4\n"
	"fast_capacity 1052266496\ncooling_epoch 3\naccounting_repairs 0\n"
	"promoted 300\ndemoted 100\nmigrate_failed 0\nskipped_pinned 0\n"
	"promotion_queue 2\npromotion_queue_hot_pages 2\nfill_threshold none\n"
	"split_rounds 0\nsplit_done 0\n"
	"hist_0 100\nhist_1 0\nhist_2 0\nhist_3 50\nhist_4 2000\nhist_5 4000\n"
	"hist_6 10\nhist_7 0\nhist_8 0\nhist_9 0\nhist_10 0\nhist_11 0\n"
	"hist_12 0\nhist_13 0\nhist_14 0\nhist_15 0\nsamples_dropped 0\n"
	"sample_period 199\nksamplingd_cpu_permille 12\nksamplingd_running 1\n";

static void fake_kthread(const char *root, int pid, const char *comm,
			 unsigned long flags, int ticks)
{
	char rel[64], text[256];

	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(text, sizeof(text),
		 "%d (%s) S 2 0 0 0 -1 %lu 0 0 0 0 %d %d 0 0 20 0 1 0 100 0 0\n",
		 pid, comm, flags, ticks, ticks / 2);
	put(root, rel, text);
}

/* A two-node machine with htmm on and one enabled cgroup "app". */
static void make_fake(const char *root)
{
	char rel[128];
	int i;

	for (i = 0; i < hm_nr_tunables; i++) {
		snprintf(rel, sizeof(rel), "sys/kernel/mm/htmm/%s",
			 hm_tunables[i].name);
		put(root, rel, hm_tunables[i].def);
	}
	put(root, "sys/kernel/mm/htmm/state", "on\n");
	put(root, "sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
	put(root, "sys/fs/cgroup/cgroup.subtree_control", "\n");
	put(root, "sys/fs/cgroup/app/memory.htmm_enabled", "enabled\n");
	put(root, "sys/fs/cgroup/app/memory.htmm_stat", fake_stat);
	put(root, "sys/fs/cgroup/app/memory.max_at_node0", "1073741824\n");
	put(root, "sys/fs/cgroup/app/memory.max_at_node1", "max\n");
	put(root, "sys/fs/cgroup/app/cgroup.procs", "");
	put(root, "sys/fs/cgroup/app/cgroup.controllers", "memory\n");
	put(root, "cgroup-template/memory.htmm_enabled", "disabled\n");
	put(root, "cgroup-template/memory.htmm_stat", fake_stat);
	put(root, "cgroup-template/memory.max_at_node0", "max\n");
	put(root, "cgroup-template/memory.max_at_node1", "max\n");
	put(root, "cgroup-template/cgroup.procs", "");
	put(root, "sys/devices/system/node/online", "0-1\n");
	put(root, "sys/devices/system/node/has_memory", "0-1\n");
	put(root, "sys/devices/system/node/has_cpu", "0\n");
	put(root, "sys/devices/system/node/node0/meminfo",
	    "Node 0 MemTotal:        2097152 kB\n");
	put(root, "sys/devices/system/node/node0/cpulist", "0-1\n");
	put(root, "sys/devices/system/node/node1/meminfo",
	    "Node 1 MemTotal:        1048576 kB\n");
	put(root, "sys/devices/system/node/node1/cpulist", "\n");
	put(root, "sys/devices/virtual/memory_tiering/memory_tier4/nodelist", "0\n");
	put(root, "sys/devices/virtual/memory_tiering/memory_tier22/nodelist", "1\n");
	put(root, "proc/vmstat", "nr_free_pages 1000\nhtmm_nr_sampled 5000\n"
	    "htmm_nr_promoted 300\nhtmm_nr_demoted 100\nhtmm_nr_split_done 0\n"
	    "pgpromote_success 300\n");
	fake_kthread(root, 100, "ksamplingd", 0x208040, 40);
	fake_kthread(root, 101, "kmigraterd0", 0x208040, 20);
	fake_kthread(root, 102, "kmigraterd1", 0x208040, 10);
	fake_kthread(root, 103, "ksamplingd", 0x400100, 99);	/* not a kthread */
	fake_kthread(root, 104, "kdamond.0", 0x208040, 30);
	put(root, "dev/kmsg", "6,1,100,-;htmm: active\n"
	    "6,2,101,-;htmm: sample source: abit (auto: no PEBS events on this CPU)\n");
}

static void fake_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmp, name);
	mkdir(buf, 0755);
	make_fake(buf);
}

/* ------------------------------------------------ running the binary */

struct result {
	int status;
	char *out, *err;
};

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static pid_t start(const char *root, char *const argv[], int out, int err)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (root)
			setenv("HTMM_SYSFS_ROOT", root, 1);
		else
			unsetenv("HTMM_SYSFS_ROOT");
		dup2(out, 1);
		dup2(err, 2);
		execv(bin, argv);
		_exit(99);
	}
	return pid;
}

static int finish(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static struct result run(const char *root, char *const argv[])
{
	char o[HM_PATH], e[HM_PATH];
	struct result r;
	int fo, fe;

	snprintf(o, sizeof(o), "%s/out.txt", tmp);
	snprintf(e, sizeof(e), "%s/err.txt", tmp);
	fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	r.status = finish(start(root, argv, fo, fe));
	close(fo);
	close(fe);
	r.out = hm_slurp(o, NULL);
	r.err = hm_slurp(e, NULL);
	return r;
}

/* Run; check exit status @want and that stderr (or stdout) has @msg. */
static void expect(const char *root, char *const argv[], int want,
		   const char *msg, const char *name)
{
	struct result r = run(root, argv);
	bool ok = r.status == want &&
		  (!msg || strstr(r.err, msg) || strstr(r.out, msg));

	if (!ok)
		printf("# status %d (want %d)\n# stderr: %s# stdout: %.300s\n",
		       r.status, want, r.err, r.out);
	check(ok, "%s", name);
	result_free(&r);
}

#include "unit_parse.c"
#include "unit_cli.c"

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PATH/TO/htmm [htmm.rst]\n", argv[0]);
		return 2;
	}
	bin = argv[1];
	rst = argc > 2 ? argv[2] : NULL;
	snprintf(tmp, sizeof(tmp), "/tmp/htmm-unit.XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 2;
	}
	unsetenv("HTMM_SYSFS_ROOT");
	test_sizes();
	test_budgets_sets();
	test_tunables();
	test_kv();
	test_record_files();
	test_report();
	test_report_hot();
	test_tierbench();
	test_cli();
	if (!n_fail && !getenv("HTMM_UNIT_KEEP")) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", tmp);
	} else {
		printf("# fake trees left in %s\n", tmp);
	}
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
