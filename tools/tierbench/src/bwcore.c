// SPDX-License-Identifier: GPL-2.0
/*
 * tierbench: multi-threaded streaming measurements (peak bandwidth per
 * read/write mix, memcpy bandwidth). Every thread is pinned to its own CPU
 * and streams its own region bound to the memory node. A round is started
 * and ended with barriers; its time runs from the earliest thread start to
 * the latest thread end.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tierbench.h"

#define MAX_ROUNDS 4096

enum job { JOB_MIX, JOB_MEMCPY, JOB_EXIT };

struct pool;

struct worker {
	pthread_t th;
	int cpu;
	struct pool *pool;
	struct tb_mem mem;
	size_t len;
	double t0, t1;
	uint64_t sink;
	int err;
} __attribute__((aligned(64)));

struct pool {
	int n;
	struct worker *w;
	pthread_barrier_t go, done;
	enum job job;
	enum tb_mix mix;
	struct tb_mix_layout layout;	/* of the mix, in every region */
	uint64_t block;
	uint64_t passes;
	int mem_node;
	enum tb_page page;
};

static void run_mix(struct worker *w, enum tb_mix m)
{
	w->sink ^= tb_mix_run(w->mem.base, &w->pool->layout, m, 0,
			      w->pool->layout.steps);
}

static size_t cpy_half(size_t len)
{
	return len / 2 / 64 * 64;
}

static void run_memcpy(struct worker *w, uint64_t block)
{
	char *src = w->mem.base;
	size_t half = cpy_half(w->len), off;
	char *dst = src + half;

	if (!block || block >= half) {
		memcpy(dst, src, half);
		return;
	}
	for (off = 0; off + block <= half; off += block)
		memcpy(dst + off, src + off, block);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->pool;

	if (tb_pin_cpu(w->cpu) ||
	    tb_mem_alloc(&w->mem, w->len, p->mem_node, p->page))
		w->err = 1;
	pthread_barrier_wait(&p->done);	/* set-up finished */
	for (;;) {
		uint64_t i;

		pthread_barrier_wait(&p->go);
		if (p->job == JOB_EXIT || w->err)
			break;
		w->t0 = tb_now();
		for (i = 0; i < p->passes; i++) {
			if (p->job == JOB_MIX)
				run_mix(w, p->mix);
			else
				run_memcpy(w, p->block);
		}
		w->t1 = tb_now();
		pthread_barrier_wait(&p->done);
	}
	tb_sink += w->sink;
	if (w->mem.map)
		tb_mem_free(&w->mem);
	return NULL;
}

static void pool_stop(struct pool *p, int started)
{
	int i;

	p->job = JOB_EXIT;
	pthread_barrier_wait(&p->go);
	for (i = 0; i < started; i++)
		pthread_join(p->w[i].th, NULL);
	pthread_barrier_destroy(&p->go);
	pthread_barrier_destroy(&p->done);
	free(p->w);
}

static int pool_start(struct pool *p, const struct tb_bw_cfg *c)
{
	int i, err = 0;
	size_t per = c->size / c->nthreads / 4096 * 4096;

	memset(p, 0, sizeof(*p));
	if (per < 4096 * 4) {
		tb_err("--size too small for %d threads", c->nthreads);
		return -1;
	}
	p->n = c->nthreads;
	p->mem_node = c->mem_node;
	p->page = c->page;
	p->w = aligned_alloc(64, sizeof(*p->w) * p->n);
	if (!p->w)
		return -1;
	memset(p->w, 0, sizeof(*p->w) * p->n);
	pthread_barrier_init(&p->go, NULL, p->n + 1);
	pthread_barrier_init(&p->done, NULL, p->n + 1);
	for (i = 0; i < p->n; i++) {
		p->w[i].cpu = c->cpus[i];
		p->w[i].pool = p;
		p->w[i].len = per;
		if (pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i])) {
			/* Threads already started wait on the barrier: give up. */
			tb_err("cannot create thread %d of %d", i + 1, p->n);
			exit(TB_EXIT_FAIL);
		}
	}
	pthread_barrier_wait(&p->done);
	for (i = 0; i < p->n; i++)
		err |= p->w[i].err;
	if (err) {
		pool_stop(p, p->n);
		return -1;
	}
	return 0;
}

/* One round: returns bytes per second over all threads. */
static double pool_round(struct pool *p, uint64_t passes, uint64_t bytes_per_pass,
			 double *elapsed)
{
	double t0 = 1e300, t1 = 0;
	int i;

	p->passes = passes;
	pthread_barrier_wait(&p->go);
	pthread_barrier_wait(&p->done);
	for (i = 0; i < p->n; i++) {
		if (p->w[i].t0 < t0)
			t0 = p->w[i].t0;
		if (p->w[i].t1 > t1)
			t1 = p->w[i].t1;
	}
	*elapsed = t1 - t0;
	return (double)passes * bytes_per_pass * p->n / (t1 - t0);
}

/*
 * Warm up (at least one round, until the warm-up time has passed), size
 * the rounds so that about ten fill the duration, then repeat until the
 * duration is reached; median of the rounds.
 */
static void pool_measure(struct pool *p, uint64_t bytes_per_pass,
			 const struct tb_bw_cfg *c, double *med, double *mn,
			 double *mx, int *reps)
{
	static double bw[MAX_ROUNDS];
	double el, warm = 0, t_pass, t_rep, spent = 0;
	uint64_t passes;
	int n = 0;

	pool_round(p, 1, bytes_per_pass, &el);
	t_pass = el > 1e-9 ? el : 1e-9;
	warm = el;
	t_rep = c->duration / 10;
	if (t_rep < 0.001)
		t_rep = 0.001;
	if (t_rep > 0.5)
		t_rep = 0.5;
	passes = (uint64_t)(t_rep / t_pass + 0.5);
	if (passes < 1)
		passes = 1;
	while (warm < c->warmup) {
		pool_round(p, passes, bytes_per_pass, &el);
		warm += el;
	}
	while (n < MAX_ROUNDS) {
		bw[n++] = pool_round(p, passes, bytes_per_pass, &el);
		spent += el;
		if (n >= 3 && spent >= c->duration)
			break;
	}
	*med = tb_median(bw, n) / 1e6;
	*mn = tb_min(bw, n) / 1e6;
	*mx = tb_max(bw, n) / 1e6;
	*reps = n;
}

int tb_bw_measure(const struct tb_bw_cfg *c, const unsigned char *want,
		  struct tb_bw_res *res)
{
	struct pool p;
	int m;

	if (pool_start(&p, c))
		return -1;
	for (m = 0; m < TB_MIX_COUNT; m++) {
		if (!want[m])
			continue;
		p.job = JOB_MIX;
		p.mix = m;
		tb_mix_layout(p.w[0].len, m, &p.layout);
		tb_info("bandwidth: mix %s, %d threads, node %d", tb_mix_name(m),
			c->nthreads, c->mem_node);
		pool_measure(&p, p.layout.bytes, c, &res[m].mbs,
			     &res[m].mbs_min, &res[m].mbs_max, &res[m].repeats);
		res[m].placed_pct = p.w[0].mem.placed_pct;
	}
	pool_stop(&p, p.n);
	return 0;
}

int tb_memcpy_measure(const struct tb_bw_cfg *c, const uint64_t *blocks,
		      int nblocks, struct tb_cpy_res *res)
{
	struct pool p;
	int b;

	if (pool_start(&p, c))
		return -1;
	for (b = 0; b < nblocks; b++) {
		size_t half = cpy_half(p.w[0].len);
		uint64_t bytes = blocks[b] && blocks[b] < half ?
				 half / blocks[b] * blocks[b] : half;

		p.job = JOB_MEMCPY;
		p.block = blocks[b];
		tb_info("memcpy: block %llu, %d threads, node %d",
			(unsigned long long)blocks[b], c->nthreads, c->mem_node);
		res[b].block = blocks[b] && blocks[b] < half ? blocks[b] : half;
		pool_measure(&p, bytes, c, &res[b].mbs, &res[b].mbs_min,
			     &res[b].mbs_max, &res[b].repeats);
	}
	pool_stop(&p, p.n);
	return 0;
}
