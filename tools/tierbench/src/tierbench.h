/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tierbench - memory-tier characterisation tools.
 *
 * Shared declarations for the multi-call binary: option parsing helpers,
 * NUMA topology, node-bound memory, the pointer chain, timing, JSON output
 * and the entry points of every subcommand.
 */
#ifndef TIERBENCH_H
#define TIERBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TB_VERSION "1.1"

/* Exit codes shared by every subcommand. */
#define TB_EXIT_OK      0
#define TB_EXIT_FAIL    1	/* the measurement or the system failed */
#define TB_EXIT_USAGE   2	/* bad command line */

#define TB_MAX_NODES    1024
#define TB_MAX_CPUS     4096

/* ------------------------------------------------------------------ util */

/* Name used as the prefix of every message ("tierbench latency"). */
extern const char *tb_prog;

void tb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tb_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int tb_verbose;

/*
 * Strict parsers: the whole string must be consumed, no sign, no overflow.
 * All return 0 on success and -1 (without printing) on bad input.
 */
int tb_parse_size(const char *s, uint64_t *out);	/* 4096, 64K, 2M, 1GiB */
int tb_parse_duration(const char *s, double *out);	/* 0.5, 50ms, 2s */
int tb_parse_long(const char *s, long min, long max, long *out);
/* "0,2-3" -> bitmap; "all" is handled by the callers. */
int tb_parse_list(const char *s, unsigned char *set, int max);

/* Format a byte count as "256K", "1G", "1536M" or plain bytes. */
const char *tb_fmt_size(uint64_t v, char *buf, size_t len);

double tb_now(void);			/* CLOCK_MONOTONIC, seconds */
double tb_median(const double *v, int n);
double tb_min(const double *v, int n);
double tb_max(const double *v, int n);

/* splitmix64 seeded, xoshiro-like 64-bit generator. */
struct tb_rng {
	uint64_t s;
};
void tb_rng_seed(struct tb_rng *r, uint64_t seed);
uint64_t tb_rng_next(struct tb_rng *r);
uint64_t tb_rng_below(struct tb_rng *r, uint64_t n);	/* [0, n) */

/* Spin for about n simple loop iterations (roughly one cycle each). */
void tb_spin(uint64_t n);
/* Busy loop for `seconds` so that the core leaves its idle frequency. */
void tb_busy_wait(double seconds);

/* Context switches of the calling thread so far (voluntary + not). */
uint64_t tb_ctxsw(void);

/* Keeps results of benchmark loops alive. */
extern volatile uint64_t tb_sink;

/* ------------------------------------------------------------------ JSON */

struct tb_json {
	FILE *f;
	int depth;
	int need_comma[32];
};
void tb_json_begin(struct tb_json *j, FILE *f);		/* opens { */
void tb_json_end(struct tb_json *j);			/* closes }, newline */
/* tb_json_begin, then the "tool" and "version" members. */
void tb_json_tool(struct tb_json *j, FILE *f, const char *tool);
void tb_json_obj(struct tb_json *j, const char *key);	/* key may be NULL in arrays */
void tb_json_obj_end(struct tb_json *j);
void tb_json_arr(struct tb_json *j, const char *key);
void tb_json_arr_end(struct tb_json *j);
void tb_json_str(struct tb_json *j, const char *key, const char *v);
void tb_json_num(struct tb_json *j, const char *key, double v, int decimals);
void tb_json_int(struct tb_json *j, const char *key, long long v);
void tb_json_bool(struct tb_json *j, const char *key, int v);

/*
 * Validate a JSON text. Returns 0 when it is exactly one valid JSON value
 * (with optional surrounding whitespace), else -1 and a message in err.
 */
int tb_json_validate(const char *text, size_t len, char *err, size_t errlen);
/* Does the text contain the object key "key" anywhere? (after validation) */
int tb_json_has_key(const char *text, const char *key);

/* -------------------------------------------------------------- topology */

struct tb_topo {
	int nr_nodes;			/* highest online node + 1 */
	unsigned char online[TB_MAX_NODES];
	unsigned char has_mem[TB_MAX_NODES];
	int ncpus[TB_MAX_NODES];	/* allowed, online CPUs of the node */
	int *cpus[TB_MAX_NODES];	/* their ids, ascending */
	int numa_sysfs;			/* 0: no /sys/devices/system/node */
};

int tb_topo_load(struct tb_topo *t);
void tb_topo_free(struct tb_topo *t);
int tb_topo_first_cpu_node(const struct tb_topo *t);
int tb_topo_first_mem_node(const struct tb_topo *t);
/* Validate a node given on the command line; print a message on error. */
int tb_check_cpu_node(const struct tb_topo *t, long node, const char *opt);
int tb_check_mem_node(const struct tb_topo *t, long node, const char *opt);
int tb_node_of_cpu(const struct tb_topo *t, int cpu);
/* Pin the calling thread to one CPU. */
int tb_pin_cpu(int cpu);

/* Parse a cpulist such as "0-3,8,10-11" into ids; returns count or -1. */
int tb_parse_cpulist(const char *s, int *ids, int max);

/* ---------------------------------------------------------------- memory */

enum tb_page {
	TB_PAGE_4K,
	TB_PAGE_THP,
	TB_PAGE_2M,
	TB_PAGE_1G,
};
int tb_parse_page(const char *s, enum tb_page *out);
const char *tb_page_name(enum tb_page p);
uint64_t tb_page_bytes(enum tb_page p);

struct tb_mem {
	void *base;		/* aligned start, len bytes usable */
	size_t len;
	void *map;		/* what mmap returned */
	size_t maplen;
	int node;
	enum tb_page page;
	double placed_pct;	/* sampled pages on `node`, -1 if unknown */
	double huge_pct;	/* THP: share of the region backed by huge pages */
	void *chain;		/* pointer chain built in it, if any */
	uint64_t chain_sig;	/* parameters the chain was built with */
};

/*
 * Map len bytes bound to node with the page kind, fault every page in
 * (so no page fault happens in a timed window) and check placement.
 * Prints a message and returns -1 on failure.
 */
int tb_mem_alloc(struct tb_mem *m, size_t len, int node, enum tb_page page);
/*
 * The same without faulting the pages in (prefault = 0): the caller's
 * first writes place them. Placement is then checked by the caller.
 */
int tb_mem_alloc_ex(struct tb_mem *m, size_t len, int node,
		    enum tb_page page, int prefault);
void tb_mem_free(struct tb_mem *m);
/* Placement and THP share of a faulted-in region, with warnings. */
void tb_mem_check(struct tb_mem *m);
/* Sample the pages again: percent on m->node now, -1 if unknown. */
double tb_mem_placement(const struct tb_mem *m);

/* ------------------------------------------------------------- the chain */

enum tb_pattern {
	TB_PAT_RANDOM,		/* random over the whole region */
	TB_PAT_CHUNK,		/* random inside a chunk, then the next chunk */
	TB_PAT_LMBENCH,		/* lmbench lat_mem_rd -t: page after page */
};
const char *tb_pattern_name(enum tb_pattern p);
int tb_parse_pattern(const char *s, enum tb_pattern *out);
enum tb_chunk_order {
	TB_ORDER_SEQ,
	TB_ORDER_RANDOM,
};

/*
 * Fill order[0..n-1] with the visiting order of the n slots: a permutation
 * of 0..n-1. For TB_PAT_CHUNK, slots are grouped by slots_per_chunk (n must
 * be a multiple) and every group is visited completely, in random order,
 * before the next group.
 */
void tb_chain_order(uint32_t *order, uint64_t n, enum tb_pattern pat,
		    uint64_t slots_per_chunk, enum tb_chunk_order co,
		    uint64_t seed);
/*
 * Write the pointer chain into base: slot order[i] points to slot
 * order[i+1], the last back to order[0]. Returns the first slot's address.
 */
void *tb_chain_link(void *base, size_t stride, const uint32_t *order,
		    uint64_t n);
/*
 * lmbench's "thrash" chain (lat_mem_rd -t): 4 KiB pages in random order,
 * one slot per page per lap, the slot's offset moving on by one (in
 * bit-reversed order) each lap; a single cycle through every slot. Pages
 * are written in the order the chase first visits them. stride must be a
 * power of two <= 4096 and len a multiple of 4096.
 */
void *tb_chain_build_lmbench(void *base, size_t len, size_t stride,
			     uint64_t seed);
/* Build the chain in memory directly; returns the start or NULL (ENOMEM). */
void *tb_chain_build(void *base, size_t len, size_t stride,
		     enum tb_pattern pat, size_t chunk,
		     enum tb_chunk_order co, uint64_t seed);
/* Follow n links from p; returns where it stopped. */
void *tb_chase(void *p, uint64_t n);

/* ------------------------------------------------------------ measurement */

struct tb_lat_cfg {
	int cpu;			/* CPU to run on */
	int mem_node;
	enum tb_page page;
	uint64_t size;
	uint64_t stride;
	uint64_t chunk;			/* 0: default for the page kind */
	enum tb_pattern pattern;
	enum tb_chunk_order order;
	double duration;
	double warmup;
	uint64_t seed;
};

struct tb_lat_res {
	double ns;			/* median ns per load */
	double ns_min, ns_max;
	int repeats;			/* repeats the median is taken over */
	int disturbed;			/* repeats set aside: context switch */
	uint64_t loads;
	uint64_t chunk;			/* effective chunk */
	double placed_pct, huge_pct;
};

uint64_t tb_default_chunk(enum tb_page p);
int tb_lat_validate(const struct tb_lat_cfg *c);
/* Measure with an already allocated region (used by the matrix). */
int tb_lat_measure_mem(const struct tb_lat_cfg *c, struct tb_mem *m,
		       struct tb_lat_res *r);
int tb_lat_measure(const struct tb_lat_cfg *c, struct tb_lat_res *r);

/*
 * Read/write mixes of the bandwidth tool (README.md, "Definitions"). The
 * ratios are MLC's: cache lines read from memory (a stored line's read for
 * ownership included) to lines written back, and the bytes counted are
 * reads + writes. rmw and copy are extra mixes, only run when asked for.
 */
enum tb_mix {
	TB_MIX_READ,		/* all reads (MLC's default traffic) */
	TB_MIX_3_1,		/* MLC -W3 */
	TB_MIX_2_1,		/* MLC -W2 */
	TB_MIX_1_1,		/* MLC -W5 */
	TB_MIX_RMW,		/* in place: each line loaded, then stored */
	TB_MIX_COPY,		/* tierbench 1.0's "1:1", STREAM counting */
	TB_MIX_COUNT,
};
#define TB_MIX_NR_DEFAULT	(TB_MIX_1_1 + 1)	/* --mix all, run */

/* What one step of a mix touches, in 64-byte lines. */
struct tb_mix_plan {
	const char *name;	/* --mix spelling and output name */
	const char *mlc;	/* MLC traffic type it matches, or NULL */
	unsigned char src;	/* lines loaded from the source array */
	unsigned char dst;	/* lines of the target array stored into */
	unsigned char inplace;	/* lines of the target loaded, then stored */
	unsigned char rfo;	/* 1: a stored line's read for ownership counts */
};

/* A mix laid out in a region of len bytes: source array, then target. */
struct tb_mix_layout {
	uint64_t steps;		/* steps per pass */
	size_t src;		/* bytes of the source array, at offset 0 */
	size_t dst;		/* bytes of the target array, after it */
	uint64_t step_bytes;	/* bytes counted per step: reads + writes */
	uint64_t bytes;		/* bytes counted per pass */
};

const char *tb_mix_name(enum tb_mix m);
int tb_parse_mix(const char *s, enum tb_mix *out);
const struct tb_mix_plan *tb_mix_plan(enum tb_mix m);
/* Lines counted as read and as written per step. */
void tb_mix_lines(enum tb_mix m, unsigned int *rd, unsigned int *wr);
void tb_mix_layout(size_t len, enum tb_mix m, struct tb_mix_layout *l);
/* Run steps [step, step + n) of the mix in base; returns a sink value. */
uint64_t tb_mix_run(void *base, const struct tb_mix_layout *l, enum tb_mix m,
		    uint64_t step, uint64_t n);

struct tb_bw_cfg {
	const int *cpus;
	int nthreads;
	int mem_node;
	enum tb_page page;
	uint64_t size;			/* total, split across threads */
	double duration;
	double warmup;
};
struct tb_bw_res {
	double mbs;			/* median MB/s (10^6 bytes) */
	double mbs_min, mbs_max;
	int repeats;
	double placed_pct;
};
/* Runs every mix whose want[mix] is set; res indexed by mix. */
int tb_bw_measure(const struct tb_bw_cfg *c, const unsigned char *want,
		  struct tb_bw_res *res);

#define TB_MEMCPY_LARGE 0		/* block size 0 = whole buffer */
struct tb_cpy_res {
	uint64_t block;
	double mbs, mbs_min, mbs_max;
	int repeats;
};
int tb_memcpy_measure(const struct tb_bw_cfg *c, const uint64_t *blocks,
		      int nblocks, struct tb_cpy_res *res);

struct tb_loaded_cfg {
	int lat_cpu;
	const int *load_cpus;
	int nload;
	int mem_node;
	enum tb_page page;
	uint64_t lat_size;
	uint64_t load_size;		/* total across load threads */
	uint64_t stride;
	enum tb_pattern pattern;
	const uint64_t *delays;
	int ndelays;
	double duration;
	double warmup;
	uint64_t seed;
};
struct tb_loaded_row {
	uint64_t delay;
	double bw_mbs;
	double lat_ns;
};
int tb_loaded_measure(const struct tb_loaded_cfg *c, struct tb_loaded_row *rows);
/* The latency thread's chase of a loaded-latency run, as an idle one. */
void tb_loaded_lat_cfg(const struct tb_loaded_cfg *c, struct tb_lat_cfg *lc);

/* ------------------------------------------------------------- hugepages */

/*
 * Reserve `count` free hugetlb pages of size page_kb (2048 or 1048576) on
 * node (-1: system pool). The previous nr_hugepages is restored by
 * tb_hp_restore_all(), at exit and on SIGINT/SIGTERM/SIGHUP/SIGQUIT.
 */
int tb_hp_reserve(uint64_t page_kb, long count, int node);
void tb_hp_restore_all(void);
int tb_hp_path(char *buf, size_t len, uint64_t page_kb, int node,
	       const char *file);
long tb_hp_read(uint64_t page_kb, int node, const char *file);

/* ----------------------------------------------------------- subcommands */

int cmd_latency(int argc, char **argv);
int cmd_bandwidth(int argc, char **argv);
int cmd_memcpy(int argc, char **argv);
int cmd_loaded(int argc, char **argv);
int cmd_hugepages(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_json_check(int argc, char **argv);

/*
 * Option structures of the subcommands, exposed so that the unit tests can
 * drive the parsers. Every *_parse returns 0, 1 (help printed) or -1 (bad
 * option, message printed).
 */
struct tb_common_opts {
	long cpu_node;			/* -1: default */
	long mem_node;			/* -1: default */
	long cpu;			/* -1: first CPU of the node */
	enum tb_page page;
	uint64_t size;
	double duration;
	double warmup;
	int json;
};

struct tb_latency_opts {
	struct tb_common_opts c;
	uint64_t stride;
	uint64_t chunk;
	enum tb_pattern pattern;
	enum tb_chunk_order order;
	int matrix;
	uint64_t seed;
};
int latency_parse(int argc, char **argv, struct tb_latency_opts *o);

struct tb_bandwidth_opts {
	struct tb_common_opts c;
	long threads;
	unsigned char mixes[TB_MIX_COUNT];
};
int bandwidth_parse(int argc, char **argv, struct tb_bandwidth_opts *o);

struct tb_memcpy_opts {
	struct tb_common_opts c;
	long threads;
	uint64_t blocks[16];
	int nblocks;
};
int memcpy_parse(int argc, char **argv, struct tb_memcpy_opts *o);

struct tb_loaded_opts {
	struct tb_common_opts c;
	long threads;
	uint64_t load_size;
	uint64_t stride;
	enum tb_pattern pattern;
	uint64_t delays[64];
	int ndelays;
	const char *plot;
	uint64_t seed;
};
int loaded_parse(int argc, char **argv, struct tb_loaded_opts *o);

struct tb_hugepages_opts {
	uint64_t page_kb;
	long count;
	long node;
	int status;
	int json;
	int cmd_index;			/* argv index of the command, 0: none */
};
int hugepages_parse(int argc, char **argv, struct tb_hugepages_opts *o);

struct tb_run_opts {
	long cpu_node;
	unsigned char mem_nodes[TB_MAX_NODES];
	int mem_nodes_given;
	enum tb_page page;
	uint64_t lat_size;
	uint64_t bw_size;
	double duration;
	double warmup;
	int json;
	int apply_htmm;
	int skip_loaded;
	int skip_memcpy;
	int skip_bandwidth;
	uint64_t delays[64];
	int ndelays;
	const char *plot_prefix;
	const char *htmm_dir;
};
int run_parse(int argc, char **argv, struct tb_run_opts *o);

/* "0,100,400" -> delays; returns the count or -1. */
int tb_parse_delays(const char *arg, uint64_t *delays, int max);

/*
 * gnuplot helper shared by loaded-latency and run: latency against
 * bandwidth, titled with the nodes; says on stderr where the plot went.
 */
int tb_plot_loaded(const char *png, long cpu_node, long mem_node,
		   const struct tb_loaded_row *rows, int n);
/* One loaded-latency point as a JSON object (in an array). */
void tb_json_loaded_row(struct tb_json *j, const struct tb_loaded_row *row);

#endif
