/* SPDX-License-Identifier: GPL-2.0 */
/*
 * htmm(8): shared declarations.
 *
 * Files are split so that everything the host unit tests link (parse.c,
 * kv.c, tunables.c, recfile.c, calc.c, tierbench.c, util.c) needs neither
 * root nor an htmm kernel; the files that touch the system (system.c,
 * cgroup.c, claims.c, session.c, supervise.c, record.c, status.c, tune.c,
 * report.c, cmd_run.c) reach every kernel file through hm_path(), which
 * puts $HTMM_SYSFS_ROOT in front, so that the tests can point them at a
 * fake tree.
 */
#ifndef HTMM_CLI_H
#define HTMM_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define HM_VERSION	"1.0"
#define HM_MAX_NODES	64
#define HM_PATH		4096
#define HM_VAL		64		/* a tunable or stat value, as text */

/* Exit statuses (see htmm(8), EXIT STATUS). */
#define HM_EXIT_OK	0
#define HM_EXIT_FAIL	1
#define HM_EXIT_USAGE	2
#define HM_EXIT_TOOL	125	/* run, record -- CMD: htmm itself failed */
#define HM_EXIT_NOEXEC	126
#define HM_EXIT_NOENT	127

/* "max" as a size: no limit. */
#define HM_SIZE_MAX	UINT64_MAX

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---------------------------------------------------------------- util.c */
void hm_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hm_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *hm_root(void);
bool hm_fake(void);
int hm_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int hm_read(const char *path, char *buf, size_t len);
char *hm_slurp(const char *path, size_t *len);
int hm_pread(int fd, char *buf, size_t len);
int hm_write(const char *path, const char *val);
bool hm_exists(const char *path);
bool hm_isdir(const char *path);
double hm_mono(void);
double hm_wall(void);
void hm_sleep(double secs);
char *hm_strip(char *s);
ssize_t hm_strscpy(char *dst, const char *src, size_t size);

/* --------------------------------------------------------------- parse.c */
int hm_parse_size(const char *s, uint64_t *bytes);
void hm_fmt_size(uint64_t bytes, char *buf, size_t len);
int hm_parse_ull(const char *s, unsigned long long max,
		 unsigned long long *v);
int hm_parse_nodelist(const char *s, bool *nodes, int max);
void hm_fmt_nodelist(const bool *nodes, int max, char *buf, size_t len);

struct hm_budget {
	int node;
	uint64_t bytes;		/* HM_SIZE_MAX for "max" */
};

int hm_parse_budget(const char *s, struct hm_budget *b);
void hm_budget_value(const struct hm_budget *b, char *buf, size_t len);

struct hm_set {
	char name[HM_VAL];
	char value[HM_VAL];
};

int hm_parse_set(const char *s, struct hm_set *set);
int hm_cgroup_rel(const char *arg, char *rel, size_t len);

/* ------------------------------------------------------------------ kv.c */
struct hm_kv {
	char key[56];
	char val[40];
};

struct hm_kvset {
	int n, cap;
	struct hm_kv *kv;
};

int hm_kv_parse(struct hm_kvset *s, const char *text, const char *prefix);
void hm_kv_free(struct hm_kvset *s);
const char *hm_kv_get(const struct hm_kvset *s, const char *key);
int hm_kv_num(const struct hm_kvset *s, const char *key, long long *v);
int hm_value_num(const char *val, long long *v);

/* ------------------------------------------------------------ tunables.c */
struct hm_tunable {
	const char *name;
	const char *def;		/* the default, as the file reads it */
	unsigned long long min, max;	/* numeric tunables */
	const char *const *words;	/* choice tunables: NULL-terminated */
	const char *meaning;
	bool preset;			/* written by --preset memtis */
};

extern const struct hm_tunable hm_tunables[];
extern const int hm_nr_tunables;

const struct hm_tunable *hm_tunable_find(const char *name);
int hm_tunable_check(const struct hm_tunable *t, const char *value);
void hm_tunable_range(const struct hm_tunable *t, char *buf, size_t len);
int hm_alias_set(const char *opt, const char *arg, struct hm_set *set);

/* One tunable to change: its value before, the value wanted. */
struct hm_tval {
	char name[HM_VAL];
	char old[HM_VAL];
	char want[HM_VAL];
	bool done;			/* written */
};

int hm_tvals_check(const struct hm_tval *tv, int n,
		   const struct hm_kvset *cur);
int hm_tvals_write(struct hm_tval *tv, int n, bool restore);
int hm_tunables_read(struct hm_kvset *cur);

/* -------------------------------------------------------------- claims.c */
int hm_claims_lock(void);
void hm_claims_unlock(int fd);
int hm_claims_reap(void);
int hm_claim_holder(const char *name, pid_t *pid);
int hm_claim_take(const char *name, const char *old, const char *want);
void hm_claim_drop(const char *name);

/* -------------------------------------------------------------- system.c */
int hm_check_root(const char *what);
int hm_check_htmm(void);
int hm_check_htmm_dir(void);
int hm_htmm_state(char *buf, size_t len);
int hm_check_cgroup2(void);

struct hm_node {
	bool online, mem, cpu, fast;
	int tier;			/* memory_tier<N>, -1 if none */
	uint64_t total;			/* MemTotal, bytes */
	char cpus[64];
};

struct hm_topo {
	int nr;				/* highest node id + 1 */
	struct hm_node node[HM_MAX_NODES];
	bool tiers_known;
};

int hm_topo_load(struct hm_topo *t);

struct hm_kthread {
	char comm[16];
	pid_t pid;			/* 0: not found */
	int fd;				/* /proc/<pid>/stat */
	unsigned long long ticks;	/* utime + stime */
	bool valid;
};

/* Other kernel threads a record may follow: --kthread COMM. */
#define HM_MAX_XKT		8

struct hm_kthreads {
	int n;
	struct hm_kthread t[HM_MAX_NODES + 1 + HM_MAX_XKT];
	double scanned;			/* hm_mono() of the last /proc scan */
};

void hm_kthreads_init(struct hm_kthreads *k, const struct hm_topo *t);
int hm_kthreads_add(struct hm_kthreads *k, const char *comm);
void hm_kthreads_read(struct hm_kthreads *k);
void hm_kthreads_close(struct hm_kthreads *k);
int hm_stat_ticks(const char *stat, unsigned long long *ticks,
		  unsigned long *flags);
int hm_kmsg_source(char *buf, size_t len);

/* -------------------------------------------------------------- cgroup.c */
int hm_cg_file(char *buf, size_t len, const char *rel, const char *file);
int hm_cg_read(const char *rel, const char *file, char *buf, size_t len);
int hm_cg_write(const char *rel, const char *file, const char *val);
bool hm_cg_exists(const char *rel);
void hm_cg_parent(const char *rel, char *parent, size_t len);
int hm_cg_has_controller(const char *rel, const char *file,
			 const char *ctrl);
char *hm_cg_children(const char *rel);
int hm_cg_mkdir(const char *rel);
int hm_cg_rmdir(const char *rel, double timeout);
int hm_cg_set_htmm(const char *rel, bool on);
bool hm_cg_htmm_enabled(const char *rel);
int hm_cg_walk(void (*fn)(const char *rel, void *arg), void *arg);

/*
 * The record file: recfile.c (writer, reader) and calc.c (report figures).
 */
enum hm_format { HM_FMT_CSV, HM_FMT_JSONL };

int hm_format_parse(const char *s, enum hm_format *f);
enum hm_format hm_format_guess(const char *path);

struct hm_writer {
	FILE *f;
	enum hm_format fmt;
	int ncols;
	char **cols;
};

int hm_writer_header(struct hm_writer *w, const char *const *cols, int ncols);
int hm_writer_row(struct hm_writer *w, const char *const *vals);
void hm_writer_free(struct hm_writer *w);

struct hm_table {
	int ncols, nrows, cap;
	char **cols;
	double *v;			/* nrows x ncols, NAN when missing */
};

int hm_table_load(const char *path, struct hm_table *t);
int hm_table_parse(const char *text, struct hm_table *t);
void hm_table_free(struct hm_table *t);
int hm_table_col(const struct hm_table *t, const char *name);
double hm_table_get(const struct hm_table *t, int row, int col);

#define HM_REPORT_THREADS	(HM_MAX_NODES + 1 + HM_MAX_XKT)

struct hm_cpu_stat {
	char name[32];
	double mean, peak;		/* CPU ms per second */
};

#define HM_NR_BINS		16	/* hist_0 .. hist_15 */

struct hm_report {
	int rows;
	double duration;
	/* The hot set in the fast tier: hot_fast_pct, see calc.c. */
	bool have_hot;			/* the record has its columns */
	int hot_rows;			/* rows where it is defined */
	double hot_first_t;		/* first such row; < 0: none */
	double t_hot[3];		/* 50, 90, 95 %; < 0: not reached */
	double t_hot_stay[3];		/* from then on at or above; < 0: not */
	double hot_last_t, hot_last_pct, hot_last_pages; /* last such row */
	bool have_fast;			/* resident_fast: all data */
	double fast_first, fast_peak, fast_peak_t, fast_final;
	bool have_cg_mig, have_vm_mig;
	double promoted, demoted;	/* cgroup, base pages */
	double vm_promoted, vm_demoted;	/* system, base pages */
	double t_prom[3];
	int nthreads;
	struct hm_cpu_stat thr[HM_REPORT_THREADS];
	struct hm_cpu_stat all;
};

extern const int hm_report_pct[3];
int hm_report_compute(const struct hm_table *t, struct hm_report *r);
double hm_table_rate(const struct hm_table *t, int row, int col);
double hm_hot_fast_pct(const struct hm_table *t, int row, double *pages);
bool hm_is_cpu_col(const char *name);
bool hm_is_htmm_cpu_col(const char *name);

/* ----------------------------------------------------------- tierbench.c */
struct hm_nodelat {
	int node;
	double ns;
};

int hm_tierbench_parse(const char *text, struct hm_nodelat *lat, int max);
int hm_tierbench_pick(const struct hm_nodelat *lat, int n,
		      long *fast, int *fast_node, long *slow, int *slow_node);

/* -------------------------------------------------------------- record.c */
struct hm_rec {
	struct hm_writer w;
	char path[HM_PATH];
	bool created;
	int stat_fd, vmstat_fd;
	char cg[HM_PATH];
	struct hm_topo topo;
	struct hm_kthreads kt;
	double t0;
	int rows;
};

int hm_rec_open(struct hm_rec *r, const char *path, enum hm_format fmt);
int hm_rec_start(struct hm_rec *r, const char *cg, const char *const *xkt,
		 int nxkt);
int hm_rec_row(struct hm_rec *r);
void hm_rec_close(struct hm_rec *r, bool discard);

/* ---------------------------------------------- session.c, supervise.c */
#define HM_MAX_SETS	64
#define HM_MAX_PIDS	256

struct hm_session {
	const char *verb;		/* "run", "attach", "record" */
	char cg[HM_PATH];		/* relative to the cgroup2 mount */
	bool cg_given;
	bool create;			/* run: our own cgroup */
	struct hm_budget budget[HM_MAX_NODES];
	int nbudget;
	struct hm_set set[HM_MAX_SETS];
	int nset;
	const char *record;
	const char *xkt[HM_MAX_XKT];	/* --kthread */
	int nxkt;
	enum hm_format fmt;
	bool fmt_given;
	unsigned int interval_ms;
	char **cmd;
	pid_t pids[HM_MAX_PIDS];
	unsigned long long pid_start[HM_MAX_PIDS];
	char (*orig_cg)[HM_PATH];	/* attach: where each pid was */
	int npids;
	/* what was done, for the undo */
	int lock_fd;
	bool made_memory, made_cg, made_htmm, recording;
	char *kids_before;		/* child cgroups when +memory was made */
	char old_budget[HM_MAX_NODES][HM_VAL];
	bool budget_done[HM_MAX_NODES];
	struct hm_tval tv[HM_MAX_SETS];
	int ntv;
	bool claimed[HM_MAX_SETS];
	struct hm_rec rec;
	pid_t child;
};

extern int hm_verbose;
extern volatile int hm_signal;

int hm_session_option(struct hm_session *s, const char *opt, const char *arg);
void hm_session_init(struct hm_session *s, const char *verb);
int hm_session_prepare(struct hm_session *s);
int hm_session_setup(struct hm_session *s);
int hm_session_undo(struct hm_session *s, bool failed);
int hm_session_run(struct hm_session *s);
int hm_session_attach(struct hm_session *s);
void hm_signals_catch(void);
bool hm_proc_alive(pid_t pid, unsigned long long start);
unsigned long long hm_proc_start(pid_t pid);

/* Commands. */
int cmd_run(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_tune(int argc, char **argv);

#endif /* HTMM_CLI_H */
