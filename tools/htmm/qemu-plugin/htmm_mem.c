// SPDX-License-Identifier: GPL-2.0
/*
 * htmm_mem: a QEMU TCG plugin that counts the guest's memory accesses by
 * NUMA node, as ground truth for tiering benchmarks.
 *
 *   -plugin htmm_mem.so,split=BYTES,out=FILE[,llc_kb=KB][,ways=N]
 *
 * Every load and store of a vCPU goes through a model of a set-associative
 * last-level cache with LRU replacement (one per vCPU, llc_kb KiB, default
 * 1024, 64-byte lines, 8 ways).  Only misses count as memory accesses: to
 * the fast node if the guest physical address is below @split, to the slow
 * node otherwise.  I/O accesses are not counted.
 *
 * The guest marks its measurement window with two instructions that
 * compilers do not emit: "xchg %rcx,%rcx" opens it and "xchg %rdx,%rdx"
 * closes it.  At exit the plugin writes to FILE:
 *
 *   total fast N slow M
 *   window fast N slow M      (only if the window was opened and closed)
 *
 * Counters are per vCPU, written only by the vCPU's thread; the window
 * marks read all of them with relaxed atomic loads.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LINE_SHIFT	6
#define MAX_VCPUS	64

struct vcpu {
	uint64_t *tags;		/* sets * ways line numbers + 1, 0: empty */
	uint64_t fast, slow;	/* misses */
};

static struct vcpu vcpus[MAX_VCPUS];
static uint64_t split;
static unsigned int nr_sets, ways = 8;
static char *out_path;
static uint64_t win_fast0, win_slow0, win_fast1, win_slow1;
static int win_state;	/* 0: not opened, 1: open, 2: closed */

static const uint8_t mark_open[3] = { 0x48, 0x87, 0xc9 };	/* xchg rcx,rcx */
static const uint8_t mark_close[3] = { 0x48, 0x87, 0xd2 };	/* xchg rdx,rdx */

static struct vcpu *vcpu_get(unsigned int idx)
{
	struct vcpu *v = &vcpus[idx % MAX_VCPUS];

	if (!v->tags) {
		v->tags = calloc((size_t)nr_sets * ways, sizeof(*v->tags));
		if (!v->tags) {
			fprintf(stderr, "htmm_mem: out of memory\n");
			abort();
		}
	}
	return v;
}

/* Look @line up in the vCPU's cache; insert it if missing.  Return hit. */
static int cache_access(struct vcpu *v, uint64_t line)
{
	uint64_t *set = v->tags + (line % nr_sets) * ways, tag = line + 1;
	unsigned int i;

	for (i = 0; i < ways; i++) {
		if (set[i] == tag) {
			/* Move to the front: the set is kept in LRU order. */
			memmove(set + 1, set, i * sizeof(*set));
			set[0] = tag;
			return 1;
		}
	}
	memmove(set + 1, set, (ways - 1) * sizeof(*set));
	set[0] = tag;
	return 0;
}

static void mem_cb(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	struct vcpu *v = vcpu_get(vcpu_index);
	uint64_t pa;

	(void)udata;
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;
	pa = qemu_plugin_hwaddr_phys_addr(hw);
	if (cache_access(v, pa >> LINE_SHIFT))
		return;
	if (pa < split)
		__atomic_store_n(&v->fast, v->fast + 1, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&v->slow, v->slow + 1, __ATOMIC_RELAXED);
}

static void sum(uint64_t *fast, uint64_t *slow)
{
	unsigned int i;

	*fast = 0;
	*slow = 0;
	for (i = 0; i < MAX_VCPUS; i++) {
		*fast += __atomic_load_n(&vcpus[i].fast, __ATOMIC_RELAXED);
		*slow += __atomic_load_n(&vcpus[i].slow, __ATOMIC_RELAXED);
	}
}

static void mark_cb(unsigned int vcpu_index, void *udata)
{
	int open = !!udata;

	(void)vcpu_index;
	if (open && win_state == 0) {
		sum(&win_fast0, &win_slow0);
		win_state = 1;
	} else if (!open && win_state == 1) {
		sum(&win_fast1, &win_slow1);
		win_state = 2;
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *b = qemu_plugin_insn_data(insn);

		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
		if (qemu_plugin_insn_size(insn) != 3)
			continue;
		if (!memcmp(b, mark_open, 3))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_cb,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)1);
		else if (!memcmp(b, mark_close, 3))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_cb,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	uint64_t fast, slow;
	FILE *f;

	(void)id;
	(void)udata;
	f = fopen(out_path, "w");
	if (!f) {
		perror(out_path);
		return;
	}
	sum(&fast, &slow);
	fprintf(f, "total fast %llu slow %llu\n", (unsigned long long)fast,
		(unsigned long long)slow);
	if (win_state == 2)
		fprintf(f, "window fast %llu slow %llu\n",
			(unsigned long long)(win_fast1 - win_fast0),
			(unsigned long long)(win_slow1 - win_slow0));
	fclose(f);
}

static int parse_u64(const char *arg, const char *key, uint64_t *val)
{
	size_t len = strlen(key);
	char *end;

	if (strncmp(arg, key, len) || arg[len] != '=')
		return 0;
	*val = strtoull(arg + len + 1, &end, 0);
	if (*end || end == arg + len + 1) {
		fprintf(stderr, "htmm_mem: bad value in '%s'\n", arg);
		return -1;
	}
	return 1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	uint64_t llc_kb = 1024, w = 8;
	int i, r;

	(void)info;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			out_path = argv[i] + 4;
			continue;
		}
		r = parse_u64(argv[i], "split", &split);
		if (!r)
			r = parse_u64(argv[i], "llc_kb", &llc_kb);
		if (!r)
			r = parse_u64(argv[i], "ways", &w);
		if (r <= 0) {
			if (!r)
				fprintf(stderr, "htmm_mem: unknown argument '%s'\n",
					argv[i]);
			return -1;
		}
	}
	if (!split || !out_path || !w || w > 64 || !llc_kb) {
		fprintf(stderr,
			"htmm_mem: needs split=BYTES,out=FILE (llc_kb, ways 1-64 optional)\n");
		return -1;
	}
	ways = (unsigned int)w;
	nr_sets = (unsigned int)((llc_kb << 10) >> LINE_SHIFT) / ways;
	if (!nr_sets)
		nr_sets = 1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
