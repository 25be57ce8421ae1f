// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench run: the whole suite per memory node, a summary, and optionally
 * the measured latencies written to htmm's latency tunables.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"

#define HTMM_DIR "/sys/kernel/mm/htmm"
#define HTMM_FAST "htmm_fast_latency_ns"
#define HTMM_SLOW "htmm_slow_latency_ns"

struct node_res {
	int node;
	struct tb_lat_res lat, chunk;
	struct tb_bw_res bw[TB_MIX_COUNT];
	struct tb_cpy_res cpy[2];
	struct tb_loaded_row loaded[64];
	int have_bw, have_cpy, have_loaded;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: tierbench run [options]\n"
"\n"
"Run the suite against every memory node (or --mem-nodes) from one CPU\n"
"node: idle latency (random and chunked chase), peak bandwidth for the\n"
"all-reads, 3:1, 2:1 and 1:1 mixes (MLC's ratios, see 'tierbench\n"
"bandwidth --help'), memcpy bandwidth (large and 16K copies) and a\n"
"loaded-latency sweep, then print a summary.\n"
"\n"
"options:\n"
"  -c, --cpu-node N       node whose CPUs run everything (default: first\n"
"                         node with CPUs)\n"
"      --mem-nodes LIST   memory nodes, e.g. 0,1 or all (default all)\n"
"  -s, --size SIZE        latency chain region (default 1G)\n"
"      --bw-size SIZE     bandwidth, memcpy and load region, total over the\n"
"                         threads (default 1G)\n"
"  -p, --page KIND        4k (default), thp, 2m or 1g\n"
"  -d, --duration SEC     measuring time per figure (default 1)\n"
"      --warmup SEC       warm-up per figure (default 0.2)\n"
"      --delays LIST      loaded-latency delays (default 0,100,400,1600,6400)\n"
"      --skip LIST        leave out bandwidth, memcpy and/or loaded\n"
"      --plot PREFIX      loaded-latency plots PREFIX-nodeN.png (gnuplot)\n"
"      --apply-to-htmm    write the lowest and highest idle latency to\n"
"                         " HTMM_DIR "/" HTMM_FAST "\n"
"                         and " HTMM_SLOW " (integers, ns)\n"
"      --htmm-dir DIR     where those tunables live (default " HTMM_DIR ")\n"
"  -j, --json             JSON output instead of the summary\n"
"  -v, --verbose          progress on stderr\n"
"  -h, --help             this help\n"
"\n"
"summary lines:\n"
"  Idle latency node0 115.2 ns | node1 192.0 ns\n"
"  Idle latency (chunk 256K) node0 ... ns | ...\n"
"  Peak bandwidth node0 all-reads 63.9 GB/s | 3:1 ... GB/s | 2:1 ... | 1:1 ...\n"
"  Memcpy bandwidth node0 large ... GB/s | 16K ... GB/s\n"
"  Loaded latency node0 heavy ... ns @ ... GB/s | light ... ns @ ... GB/s\n"
"  Tier ratio node1/node0 latency ...x | all-reads bandwidth ...x\n");
}

enum {
	OPT_MEM_NODES = OPT_CMD_BASE,
	OPT_BW_SIZE,
	OPT_DELAYS,
	OPT_SKIP,
	OPT_PLOT,
	OPT_APPLY,
	OPT_HTMM_DIR,
};

static int skip_item(const char *item, void *ctx)
{
	struct tb_run_opts *o = ctx;

	if (!strcmp(item, "bandwidth"))
		o->skip_bandwidth = 1;
	else if (!strcmp(item, "memcpy"))
		o->skip_memcpy = 1;
	else if (!strcmp(item, "loaded"))
		o->skip_loaded = 1;
	else
		return -1;
	return 0;
}

static int run_opt(int c, const char *arg, void *ctx)
{
	struct tb_run_opts *o = ctx;

	switch (c) {
	case OPT_MEM_NODES:
		memset(o->mem_nodes, 0, sizeof(o->mem_nodes));
		if (!strcmp(arg, "all")) {
			o->mem_nodes_given = 0;
			return 0;
		}
		if (tb_parse_list(arg, o->mem_nodes, TB_MAX_NODES))
			return tb_bad_value("--mem-nodes", arg,
					    "expected a node list such as 0,1 or 0-1, or 'all'");
		o->mem_nodes_given = 1;
		return 0;
	case OPT_BW_SIZE:
		return tb_opt_size("--bw-size", arg, 1 << 20, &o->bw_size,
				   "expected a size of at least 1M");
	case OPT_DELAYS:
		return tb_opt_delays(arg, o->delays, &o->ndelays);
	case OPT_SKIP:
		if (tb_for_each_item(arg, skip_item, o) < 0)
			return tb_bad_value("--skip", arg,
					    "expected a comma list of bandwidth, memcpy, loaded");
		return 0;
	case OPT_PLOT:
		return tb_opt_string("--plot", arg, &o->plot_prefix,
				     "expected a file name prefix");
	case OPT_APPLY:
		o->apply_htmm = 1;
		return 0;
	case OPT_HTMM_DIR:
		return tb_opt_string("--htmm-dir", arg, &o->htmm_dir,
				     "expected a directory");
	}
	return TB_OPT_UNKNOWN;
}

int run_parse(int argc, char **argv, struct tb_run_opts *o)
{
	static const struct option lo[] = {
		{ "cpu-node", required_argument, NULL, OPT_CPU_NODE },
		TB_REGION_LONG_OPTS,
		TB_OUTPUT_LONG_OPTS,
		{ "mem-nodes", required_argument, NULL, OPT_MEM_NODES },
		{ "bw-size", required_argument, NULL, OPT_BW_SIZE },
		{ "delays", required_argument, NULL, OPT_DELAYS },
		{ "skip", required_argument, NULL, OPT_SKIP },
		{ "plot", required_argument, NULL, OPT_PLOT },
		{ "apply-to-htmm", no_argument, NULL, OPT_APPLY },
		{ "htmm-dir", required_argument, NULL, OPT_HTMM_DIR },
		{ NULL, 0, NULL, 0 },
	};
	static const uint64_t def[] = { 0, 100, 400, 1600, 6400 };
	struct tb_common_opts co;
	int r;

	memset(o, 0, sizeof(*o));
	tb_common_defaults(&co, 1ULL << 30);
	o->bw_size = 1ULL << 30;
	memcpy(o->delays, def, sizeof(def));
	o->ndelays = sizeof(def) / sizeof(def[0]);
	o->htmm_dir = HTMM_DIR;
	r = tb_getopt(argc, argv, ":c:s:p:d:jvh", lo, &co, usage, run_opt, o);
	/* The common options this command has (no --mem-node, no --cpu). */
	o->cpu_node = co.cpu_node;
	o->lat_size = co.size;
	o->page = co.page;
	o->duration = co.duration;
	o->warmup = co.warmup;
	o->json = co.json;
	return r;
}

static int htmm_path(char *buf, size_t len, const char *dir, const char *f)
{
	int n = snprintf(buf, len, "%s/%s", dir, f);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int htmm_check(const char *dir)
{
	const char *files[] = { HTMM_FAST, HTMM_SLOW };
	char path[512];
	int i;

	for (i = 0; i < 2; i++) {
		if (htmm_path(path, sizeof(path), dir, files[i]))
			return -1;
		if (access(path, F_OK)) {
			tb_err("--apply-to-htmm: %s does not exist: the running kernel has no htmm latency tunables (htmm not built in or not loaded)",
			       path);
			return -1;
		}
		if (access(path, W_OK)) {
			tb_err("--apply-to-htmm: %s is not writable: %s",
			       path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Write @v to @file; on failure errno tells why, and @loud reports it. */
static int htmm_write_one(const char *dir, const char *file, long v, int loud)
{
	char path[512], buf[32];
	int fd, n, ok, err;

	if (htmm_path(path, sizeof(path), dir, file))
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", v);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0) {
		err = errno;
		if (loud)
			tb_err("--apply-to-htmm: cannot open %s: %s", path,
			       strerror(err));
		errno = err;
		return -1;
	}
	ok = write(fd, buf, n) == n;
	err = errno;
	if (!ok && loud)
		tb_err("--apply-to-htmm: writing %ld to %s failed: %s", v,
		       path, strerror(err));
	close(fd);
	errno = err;
	return ok ? 0 : -1;
}

static int htmm_write(const char *dir, const char *file, long v)
{
	return htmm_write_one(dir, file, v, 1);
}

static int htmm_write_quiet(const char *dir, const char *file, long v)
{
	return htmm_write_one(dir, file, v, 0);
}

/*
 * Write both latencies so that fast < slow holds after each write (the
 * kernel refuses a write that breaks it): fast first, unless the new fast
 * is not below the current slow.
 */
static int htmm_apply(const char *dir, long fast, long slow)
{
	if (fast >= slow) {
		tb_err("--apply-to-htmm: the fastest and the slowest node measured %ld and %ld ns; htmm needs a fast latency below the slow one: nothing written",
		       fast, slow);
		return -1;
	}
	if (htmm_write_quiet(dir, HTMM_FAST, fast) == 0)
		return htmm_write(dir, HTMM_SLOW, slow);
	if (errno != EINVAL)
		return htmm_write(dir, HTMM_FAST, fast);
	return htmm_write(dir, HTMM_SLOW, slow) ||
	       htmm_write(dir, HTMM_FAST, fast);
}

static void print_summary(const struct tb_run_opts *o, const struct tb_lat_cfg *lc,
			  const struct node_res *nr, int n)
{
	char a[32];
	int i, m, d;

	printf("Idle latency");
	for (i = 0; i < n; i++)
		printf("%s node%d %.1f ns", i ? " |" : "", nr[i].node,
		       nr[i].lat.ns);
	printf("\n");
	printf("Idle latency (chunk %s)",
	       tb_fmt_size(nr[0].chunk.chunk ? nr[0].chunk.chunk :
			   tb_default_chunk(lc->page), a, sizeof(a)));
	for (i = 0; i < n; i++)
		printf("%s node%d %.1f ns", i ? " |" : "", nr[i].node,
		       nr[i].chunk.ns);
	printf("\n");
	for (i = 0; i < n && !o->skip_bandwidth; i++) {
		printf("Peak bandwidth node%d", nr[i].node);
		for (m = 0; m < TB_MIX_NR_DEFAULT; m++)
			printf("%s %s %.1f GB/s", m ? " |" : "",
			       tb_mix_name(m), nr[i].bw[m].mbs / 1e3);
		printf("\n");
	}
	for (i = 0; i < n && !o->skip_memcpy; i++)
		printf("Memcpy bandwidth node%d large %.1f GB/s | 16K %.1f GB/s\n",
		       nr[i].node, nr[i].cpy[0].mbs / 1e3,
		       nr[i].cpy[1].mbs / 1e3);
	for (i = 0; i < n; i++) {
		if (!nr[i].have_loaded)
			continue;
		d = o->ndelays - 1;
		printf("Loaded latency node%d heavy %.1f ns @ %.1f GB/s | light %.1f ns @ %.1f GB/s\n",
		       nr[i].node, nr[i].loaded[0].lat_ns,
		       nr[i].loaded[0].bw_mbs / 1e3, nr[i].loaded[d].lat_ns,
		       nr[i].loaded[d].bw_mbs / 1e3);
	}
	for (i = 1; i < n; i++) {
		printf("Tier ratio node%d/node%d latency %.2fx", nr[i].node,
		       nr[0].node, nr[i].lat.ns / nr[0].lat.ns);
		if (!o->skip_bandwidth)
			printf(" | all-reads bandwidth %.2fx",
			       nr[i].bw[TB_MIX_READ].mbs /
			       nr[0].bw[TB_MIX_READ].mbs);
		printf("\n");
	}
}

static void json_lat(struct tb_json *j, const char *key,
		     const struct tb_lat_res *r)
{
	tb_json_obj(j, key);
	tb_json_num(j, "ns_per_load", r->ns, 2);
	tb_json_num(j, "min_ns", r->ns_min, 2);
	tb_json_num(j, "max_ns", r->ns_max, 2);
	tb_json_int(j, "repeats", r->repeats);
	tb_json_int(j, "chunk_bytes", (long long)r->chunk);
	tb_json_num(j, "placed_pct", r->placed_pct, 1);
	tb_json_obj_end(j);
}

static void print_json(const struct tb_run_opts *o, int cpu_node, int cpu,
		       const struct node_res *nr, int n, int fast, int slow,
		       int applied)
{
	struct tb_json j;
	char a[32];
	int i, m, d;

	tb_json_tool(&j, stdout, "run");
	tb_json_obj(&j, "params");
	tb_json_int(&j, "cpu_node", cpu_node);
	tb_json_int(&j, "cpu", cpu);
	tb_json_str(&j, "page", tb_page_name(o->page));
	tb_json_int(&j, "size_bytes", (long long)o->lat_size);
	tb_json_int(&j, "bw_size_bytes", (long long)o->bw_size);
	tb_json_num(&j, "duration_s", o->duration, 3);
	tb_json_num(&j, "warmup_s", o->warmup, 3);
	tb_json_obj_end(&j);
	tb_json_arr(&j, "nodes");
	for (i = 0; i < n; i++) {
		tb_json_obj(&j, NULL);
		tb_json_int(&j, "mem_node", nr[i].node);
		tb_json_num(&j, "idle_latency_ns", nr[i].lat.ns, 2);
		json_lat(&j, "latency_random", &nr[i].lat);
		json_lat(&j, "latency_chunk", &nr[i].chunk);
		if (nr[i].have_bw) {
			tb_json_arr(&j, "bandwidth");
			for (m = 0; m < TB_MIX_NR_DEFAULT; m++) {
				tb_json_obj(&j, NULL);
				tb_json_str(&j, "mix", tb_mix_name(m));
				tb_json_num(&j, "mbs", nr[i].bw[m].mbs, 1);
				tb_json_num(&j, "gbs", nr[i].bw[m].mbs / 1e3, 2);
				tb_json_int(&j, "repeats", nr[i].bw[m].repeats);
				tb_json_obj_end(&j);
			}
			tb_json_arr_end(&j);
		}
		if (nr[i].have_cpy) {
			tb_json_arr(&j, "memcpy");
			for (m = 0; m < 2; m++) {
				tb_json_obj(&j, NULL);
				tb_json_str(&j, "block", m ? tb_fmt_size(16384, a, sizeof(a)) : "large");
				tb_json_int(&j, "block_bytes", (long long)nr[i].cpy[m].block);
				tb_json_num(&j, "mbs", nr[i].cpy[m].mbs, 1);
				tb_json_num(&j, "gbs", nr[i].cpy[m].mbs / 1e3, 2);
				tb_json_obj_end(&j);
			}
			tb_json_arr_end(&j);
		}
		if (nr[i].have_loaded) {
			tb_json_arr(&j, "loaded_latency");
			for (d = 0; d < o->ndelays; d++)
				tb_json_loaded_row(&j, &nr[i].loaded[d]);
			tb_json_arr_end(&j);
		}
		tb_json_obj_end(&j);
	}
	tb_json_arr_end(&j);
	tb_json_obj(&j, "htmm");
	tb_json_bool(&j, "applied", applied);
	tb_json_int(&j, "fast_node", nr[fast].node);
	tb_json_int(&j, "fast_latency_ns", lround(nr[fast].lat.ns));
	tb_json_int(&j, "slow_node", nr[slow].node);
	tb_json_int(&j, "slow_latency_ns", lround(nr[slow].lat.ns));
	tb_json_obj_end(&j);
	tb_json_end(&j);
}

int cmd_run(int argc, char **argv)
{
	static struct node_res nr[64];
	static const uint64_t blocks[2] = { TB_MEMCPY_LARGE, 16384 };
	struct tb_run_opts o;
	struct tb_lat_cfg lc;
	struct tb_bw_cfg bc;
	struct tb_loaded_cfg ldc;
	struct tb_common_opts co;
	unsigned char all_mix[TB_MIX_COUNT];
	struct tb_topo t;
	int n = 0, i, r, fast = 0, slow = 0, applied = 0, ret = TB_EXIT_FAIL;
	int *cpus, ncpu;

	r = run_parse(argc, argv, &o);
	if (r)
		return r > 0 ? TB_EXIT_OK : TB_EXIT_USAGE;
	if (o.apply_htmm && htmm_check(o.htmm_dir))
		return TB_EXIT_FAIL;
	if (tb_topo_load(&t))
		return TB_EXIT_FAIL;

	tb_common_defaults(&co, o.lat_size);
	co.cpu_node = o.cpu_node;
	if (tb_resolve_nodes(&t, &co))
		goto usage;
	cpus = t.cpus[co.cpu_node];
	ncpu = t.ncpus[co.cpu_node];
	for (i = 0; i < t.nr_nodes && n < 64; i++) {
		if (o.mem_nodes_given) {
			if (!o.mem_nodes[i])
				continue;
			if (tb_check_mem_node(&t, i, "--mem-nodes"))
				goto usage;
		} else if (!t.online[i] || !t.has_mem[i]) {
			continue;
		}
		nr[n++].node = i;
	}
	for (i = t.nr_nodes; i < TB_MAX_NODES && o.mem_nodes_given; i++)
		if (o.mem_nodes[i] && tb_check_mem_node(&t, i, "--mem-nodes"))
			goto usage;
	if (!n) {
		tb_err("no memory node to measure");
		goto usage;
	}

	memset(&ldc, 0, sizeof(ldc));
	ldc.lat_cpu = (int)co.cpu;
	ldc.load_cpus = cpus + 1;
	ldc.nload = ncpu - 1;
	ldc.page = o.page;
	ldc.lat_size = o.lat_size;
	ldc.load_size = o.bw_size;
	ldc.stride = 64;
	ldc.pattern = TB_PAT_RANDOM;
	ldc.delays = o.delays;
	ldc.ndelays = o.ndelays;
	ldc.duration = o.duration;
	ldc.warmup = o.warmup;
	ldc.seed = 1;
	/* Idle latency: the chase of the loaded sweep, without the load. */
	tb_loaded_lat_cfg(&ldc, &lc);
	if (tb_lat_validate(&lc))
		goto usage;
	/* The loaded sweep: half the time per point. */
	ldc.duration /= 2;
	ldc.warmup /= 2;

	memset(&bc, 0, sizeof(bc));
	bc.cpus = cpus;
	bc.nthreads = ncpu;
	bc.page = o.page;
	bc.size = o.bw_size;
	bc.duration = o.duration;
	bc.warmup = o.warmup;
	memset(all_mix, 0, sizeof(all_mix));
	memset(all_mix, 1, TB_MIX_NR_DEFAULT);

	if (!o.skip_loaded && ldc.nload < 1) {
		tb_warn("CPU node %ld has one usable CPU: skipping loaded latency",
			co.cpu_node);
		o.skip_loaded = 1;
	}
	if (!o.json)
		printf("# tierbench run: CPU node %ld (CPU %ld, %d CPUs), page %s, latency region %llu MiB, bandwidth region %llu MiB, %.2f s per figure\n",
		       co.cpu_node, co.cpu, ncpu, tb_page_name(o.page),
		       (unsigned long long)(o.lat_size >> 20),
		       (unsigned long long)(o.bw_size >> 20), o.duration);
	fflush(stdout);

	for (i = 0; i < n; i++) {
		struct tb_mem m;

		lc.mem_node = nr[i].node;
		tb_info("node %d: idle latency", nr[i].node);
		if (tb_pin_cpu(lc.cpu) ||
		    tb_mem_alloc(&m, lc.size, lc.mem_node, lc.page))
			goto out;
		lc.pattern = TB_PAT_RANDOM;
		if (tb_lat_measure_mem(&lc, &m, &nr[i].lat)) {
			tb_mem_free(&m);
			goto out;
		}
		nr[i].lat.chunk = lc.size;
		lc.pattern = TB_PAT_CHUNK;
		if (tb_lat_measure_mem(&lc, &m, &nr[i].chunk)) {
			tb_mem_free(&m);
			goto out;
		}
		tb_mem_free(&m);
		lc.pattern = TB_PAT_RANDOM;

		bc.mem_node = nr[i].node;
		if (!o.skip_bandwidth) {
			tb_info("node %d: peak bandwidth", nr[i].node);
			if (tb_bw_measure(&bc, all_mix, nr[i].bw))
				goto out;
			nr[i].have_bw = 1;
		}
		if (!o.skip_memcpy) {
			tb_info("node %d: memcpy bandwidth", nr[i].node);
			if (tb_memcpy_measure(&bc, blocks, 2, nr[i].cpy))
				goto out;
			nr[i].have_cpy = 1;
		}
		if (!o.skip_loaded) {
			tb_info("node %d: loaded latency", nr[i].node);
			ldc.mem_node = nr[i].node;
			if (tb_loaded_measure(&ldc, nr[i].loaded))
				goto out;
			nr[i].have_loaded = 1;
			if (o.plot_prefix) {
				char png[512];

				snprintf(png, sizeof(png), "%s-node%d.png",
					 o.plot_prefix, nr[i].node);
				if (tb_plot_loaded(png, co.cpu_node, nr[i].node,
						   nr[i].loaded, o.ndelays))
					goto out;
			}
		}
	}

	for (i = 1; i < n; i++) {
		if (nr[i].lat.ns < nr[fast].lat.ns)
			fast = i;
		if (nr[i].lat.ns > nr[slow].lat.ns)
			slow = i;
	}
	if (o.apply_htmm) {
		if (htmm_check(o.htmm_dir) ||
		    htmm_apply(o.htmm_dir, lround(nr[fast].lat.ns),
			       lround(nr[slow].lat.ns)))
			goto out;
		applied = 1;
	}
	if (o.json) {
		print_json(&o, (int)co.cpu_node, (int)co.cpu, nr, n, fast, slow,
			   applied);
	} else {
		print_summary(&o, &lc, nr, n);
		if (applied)
			printf("Applied to htmm: %s=%ld (node%d) %s=%ld (node%d)\n",
			       HTMM_FAST, lround(nr[fast].lat.ns), nr[fast].node,
			       HTMM_SLOW, lround(nr[slow].lat.ns), nr[slow].node);
	}
	ret = TB_EXIT_OK;
out:
	tb_topo_free(&t);
	return ret;
usage:
	tb_topo_free(&t);
	return TB_EXIT_USAGE;
}
