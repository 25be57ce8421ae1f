// SPDX-License-Identifier: GPL-2.0
/*
 * htmm_mem: a QEMU TCG plugin that gives the two-tier VM what TCG lacks:
 * ground truth of the guest's memory accesses per NUMA node, an emulated
 * PEBS, and modelled memory time.
 *
 *   -plugin htmm_mem.so,split=BYTES[,out=FILE][,llc_kb=KB][,ways=N]
 *           [,slow=BYTES][,pebs=SOCKET][,load_period=N][,store_period=N]
 *           [,base_ps=P][,fast_ns=N][,slow_ns=N]
 *
 * Cache model: every load and store of a vCPU goes through a model of a
 * set-associative last-level cache with LRU replacement (one per vCPU,
 * llc_kb KiB, default 1024, 64-byte lines, 8 ways).  Only misses count as
 * memory accesses: to the fast node if the guest physical address is
 * below @split, to the slow node otherwise.  I/O accesses are not counted.
 *
 * Window: the guest marks a measurement window with two instructions that
 * compilers do not emit: "xchg %rcx,%rcx" opens it and "xchg %rdx,%rdx"
 * closes it.  Outside it, and before the relay said hello (pebs=), the
 * memory callback returns at once: the cache model runs only where its
 * figures are used.
 *
 * Modelled time of the window: instructions x base_ps (default 500 ps)
 * + fast misses x fast_ns + slow misses x slow_ns (default 100 and 300
 * ns, the HMAT latencies scripts/run-vm.sh declares).  TCG runs both
 * nodes at one speed; this is the time a machine with those latencies
 * would have taken, everything the vCPUs did counted (kernel work too),
 * except the emulation's own work in the guest.  The window line sums all
 * vCPUs, as if one core did everything; the vcpu lines give each vCPU's
 * own: the time of a workload pinned to that vCPU on a machine whose
 * other cores run the kernel threads.
 *
 * Left out: "xchg %rbx,%rbx" takes the vCPU that runs it out of the
 * model (its instructions are counted apart, its memory accesses are
 * neither modelled nor sampled) until "xchg %rsi,%rsi" runs on any vCPU.
 * epebs_relay brackets its own work with them: reading the samples from
 * the port and formatting them, which real PEBS hardware does without a
 * process.  The injection into htmm (the kernel's part, which stands for
 * the PEBS interrupt and ksamplingd's drain) stays counted.  One vCPU at
 * a time is left out; a second "xchg %rbx,%rbx" moves the mark.
 *
 * Guest physical addresses: QEMU 7.2's qemu_plugin_hwaddr_phys_addr()
 * returns the RAM block's offset plus the offset in it plus the region's
 * address in its container.  That is the guest physical address for the
 * first block, node 0's, but for node 1's (block offset and region
 * address both @split) it is 2 * @split beyond the node's start; and the
 * q35 machine maps RAM above 2 GiB at 4 GiB once it has 2.75 GiB or more.
 * gpa_of() undoes both, given node 1's size (slow=BYTES); the guest test
 * (scripts/guest/epebs.sh) checks the result against /proc/self/pagemap.
 *
 * Emulated PEBS (pebs=SOCKET): the plugin connects to the Unix socket
 * SOCKET, where QEMU's chardev of a virtio-serial port listens
 * (scripts/run-vm.sh --pebs), retrying until QEMU has created it.  Each vCPU counts its cache-missing loads
 * and all its stores; every load_period-th such load (default 199) and
 * every store_period-th store (default 100007) becomes a sample: its
 * guest physical address and kind (load-fast, load-slow by the node that
 * served it, store).  A writer thread sends the samples to the guest,
 * where tools/htmm/epebs_relay.c injects them into htmm.  The relay sends
 * back the periods in force ("period LOAD STORE"), the plugin acks them,
 * and every 100 ms the plugin sends a ping that the relay answers once
 * the samples before it are injected: the delivery delay, counted from
 * the relay's "hello" on (pings sent before it waited for the relay to
 * start).
 *
 * Protocol, plugin to guest: 64-bit little-endian records, kind in bits
 * 0-1 (0 load-fast, 1 load-slow, 2 store: the address >> 6 in bits 2-63;
 * 3 control: subtype in bits 2-5 (0 ping, 1 load period ack, 2 store
 * period ack), value in bits 6-63).  Guest to plugin: text lines
 * "hello", "period LOAD STORE" and "pong SEQ".
 *
 * At exit the plugin writes to FILE (out=):
 *   total fast N slow M      (all the model saw: the window, and with
 *                             pebs= the run from the relay's hello on)
 *   window fast N slow M insns I model_ns T left_out_insns L
 *                            (if opened and closed; L: instructions of
 *                            the vCPUs while left out, not in I or T)
 *   vcpu K fast N slow M insns I model_ns T left_out_insns L
 *                            the same for each vCPU K that ran: the
 *                            modelled time of one CPU, for a workload
 *                            pinned to it while the kernel threads run on
 *                            the others, as on a machine with spare cores
 *   pebs loads N stores M sent S dropped D pings P delay_us mean X max Y
 *   periods load L store S acks A
 *
 * Counters are per vCPU, written only by the vCPU's thread; the window
 * marks read all of them with relaxed atomic loads.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LINE_SHIFT	6
#define MAX_VCPUS	64
#define RING_RECS	(1 << 16)	/* samples waiting for the writer */
#define PING_NS		100000000ULL
#define NR_PINGS	64

enum { K_LOAD_FAST, K_LOAD_SLOW, K_STORE, K_CTL };
enum { C_PING, C_LOAD_ACK, C_STORE_ACK };

struct vcpu {
	uint64_t *tags;		/* sets * ways line numbers + 1, 0: empty */
	uint64_t fast, slow;	/* misses */
	uint64_t insns;
	uint64_t off_insns;	/* in the window, while left out */
	uint64_t nload, nstore;	/* events since the last sample */
	uint64_t loads, stores;	/* samples taken */
};

static struct vcpu vcpus[MAX_VCPUS];
static uint64_t split;
static unsigned int nr_sets, ways = 8;
static char *out_path;
static uint64_t base_ps = 500, fast_ns = 100, slow_ns = 300;
static uint64_t llc_kb = 1024, ways_arg = 8, slow_bytes;

/* The window: sums at its marks. */
struct sums {
	uint64_t fast, slow, insns, off_insns;
};
static struct sums win0, win1;
static struct sums vwin0[MAX_VCPUS], vwin1[MAX_VCPUS];	/* per vCPU */
static int win_state;	/* 0: not opened, 1: open, 2: closed */

/*
 * Emulated PEBS; the periods are read by the vCPUs, set by the reader.
 * Sampling starts with the relay's hello (pebs_live): samples of a guest
 * without a relay would only queue up ahead of the relay's first ones.
 */
static int pebs_on, pebs_live;
static uint64_t load_period = 199, store_period = 100007;
static char *pebs_path;
static int conn_fd = -1;	/* under ring_lock */
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ring_cond = PTHREAD_COND_INITIALIZER;
static uint64_t ring[RING_RECS];
static unsigned int ring_head, ring_len;	/* under ring_lock */
static uint64_t sent, dropped, acks;		/* under ring_lock */
static uint64_t ping_t[NR_PINGS];		/* send times, under ring_lock */
static uint64_t nr_pings, nr_pongs, delay_sum_ns, delay_max_ns, ping_base;

static const uint8_t mark_open[3] = { 0x48, 0x87, 0xc9 };	/* xchg rcx,rcx */
static const uint8_t mark_close[3] = { 0x48, 0x87, 0xd2 };	/* xchg rdx,rdx */
static const uint8_t mark_off[3] = { 0x48, 0x87, 0xdb };	/* xchg rbx,rbx */
static const uint8_t mark_on[3] = { 0x48, 0x87, 0xf6 };	/* xchg rsi,rsi */
enum { M_CLOSE, M_OPEN, M_OFF, M_ON };

/* The vCPU left out of the model (mark_off), or -1. */
static int off_vcpu = -1;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

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

/* The guest physical address of the plugin's @raw one (see above). */
static uint64_t gpa_of(uint64_t raw)
{
	uint64_t total = split + slow_bytes, low, gpa;

	if (raw < split)
		return raw;
	gpa = raw - split;
	low = total >= 0xb0000000ULL ? 0x80000000ULL : total;
	return gpa < low ? gpa : gpa - low + 0x100000000ULL;
}

/* Queue one record for the writer; drop it if the ring is full. */
static void ring_put(uint64_t rec)
{
	pthread_mutex_lock(&ring_lock);
	if (ring_len == RING_RECS || conn_fd < 0) {
		dropped++;
	} else {
		ring[(ring_head + ring_len++) % RING_RECS] = rec;
		if (ring_len == 1)
			pthread_cond_signal(&ring_cond);
	}
	pthread_mutex_unlock(&ring_lock);
}

static void pebs_count(struct vcpu *v, uint64_t pa, int store, int hit)
{
	if (store) {
		if (++v->nstore < __atomic_load_n(&store_period, __ATOMIC_RELAXED))
			return;
		v->nstore = 0;
		v->stores++;
		ring_put((gpa_of(pa) >> LINE_SHIFT) << 2 | K_STORE);
		return;
	}
	if (hit || ++v->nload < __atomic_load_n(&load_period, __ATOMIC_RELAXED))
		return;
	v->nload = 0;
	v->loads++;
	ring_put((gpa_of(pa) >> LINE_SHIFT) << 2 |
		 (pa < split ? K_LOAD_FAST : K_LOAD_SLOW));
}

static void mem_cb(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
		   uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw;
	struct vcpu *v;
	uint64_t pa;
	int hit, live;

	(void)udata;
	if ((int)vcpu_index == __atomic_load_n(&off_vcpu, __ATOMIC_RELAXED))
		return;
	live = __atomic_load_n(&pebs_live, __ATOMIC_RELAXED);

	if (!live && __atomic_load_n(&win_state, __ATOMIC_RELAXED) != 1)
		return;
	hw = qemu_plugin_get_hwaddr(info, vaddr);
	if (!hw || qemu_plugin_hwaddr_is_io(hw))
		return;
	v = vcpu_get(vcpu_index);
	pa = qemu_plugin_hwaddr_phys_addr(hw);
	hit = cache_access(v, pa >> LINE_SHIFT);
	if (live)
		pebs_count(v, pa, qemu_plugin_mem_is_store(info), hit);
	if (hit)
		return;
	if (pa < split)
		__atomic_store_n(&v->fast, v->fast + 1, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&v->slow, v->slow + 1, __ATOMIC_RELAXED);
}

static void tb_exec(unsigned int vcpu_index, void *udata)
{
	struct vcpu *v = &vcpus[vcpu_index % MAX_VCPUS];

	if (__atomic_load_n(&win_state, __ATOMIC_RELAXED) != 1)
		return;
	if ((int)vcpu_index == __atomic_load_n(&off_vcpu, __ATOMIC_RELAXED))
		__atomic_store_n(&v->off_insns, v->off_insns + (uintptr_t)udata,
				 __ATOMIC_RELAXED);
	else
		__atomic_store_n(&v->insns, v->insns + (uintptr_t)udata,
				 __ATOMIC_RELAXED);
}

/* The counters of every vCPU (@per, if not NULL) and their sum (@s). */
static void sum(struct sums *s, struct sums *per)
{
	struct sums v;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < MAX_VCPUS; i++) {
		v.fast = __atomic_load_n(&vcpus[i].fast, __ATOMIC_RELAXED);
		v.slow = __atomic_load_n(&vcpus[i].slow, __ATOMIC_RELAXED);
		v.insns = __atomic_load_n(&vcpus[i].insns, __ATOMIC_RELAXED);
		v.off_insns = __atomic_load_n(&vcpus[i].off_insns,
					      __ATOMIC_RELAXED);
		s->fast += v.fast;
		s->slow += v.slow;
		s->insns += v.insns;
		s->off_insns += v.off_insns;
		if (per)
			per[i] = v;
	}
}

static void mark_cb(unsigned int vcpu_index, void *udata)
{
	int mark = (int)(uintptr_t)udata;

	if (mark == M_OFF) {
		__atomic_store_n(&off_vcpu, (int)vcpu_index, __ATOMIC_RELAXED);
	} else if (mark == M_ON) {
		__atomic_store_n(&off_vcpu, -1, __ATOMIC_RELAXED);
	} else if (mark == M_OPEN && win_state == 0) {
		sum(&win0, vwin0);
		__atomic_store_n(&win_state, 1, __ATOMIC_RELAXED);
	} else if (mark == M_CLOSE && win_state == 1) {
		sum(&win1, vwin1);
		__atomic_store_n(&win_state, 2, __ATOMIC_RELAXED);
	}
}

/* The mark @b is, or -1. */
static int mark_of(const uint8_t *b)
{
	static const uint8_t *const marks[] = {
		[M_CLOSE] = mark_close, [M_OPEN] = mark_open,
		[M_OFF] = mark_off, [M_ON] = mark_on,
	};
	int i;

	for (i = 0; i < 4; i++)
		if (!memcmp(b, marks[i], 3))
			return i;
	return -1;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     (void *)(uintptr_t)n);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *b = qemu_plugin_insn_data(insn);
		int mark;

		qemu_plugin_register_vcpu_mem_cb(insn, mem_cb,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, NULL);
		if (qemu_plugin_insn_size(insn) != 3)
			continue;
		mark = mark_of(b);
		if (mark >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_cb,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)mark);
	}
}

/* Write all of @len bytes to @fd (a blocking socket); 0 or -1. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The writer: sends the ring's records, and a ping every PING_NS. */
static void *writer_fn(void *arg)
{
	static uint64_t buf[4096];
	uint64_t next_ping = 0, t;
	struct timespec ts;
	unsigned int n, i;
	int fd;

	(void)arg;
	pthread_mutex_lock(&ring_lock);
	for (;;) {
		t = now_ns();
		if (conn_fd >= 0 && t >= next_ping &&
		    __atomic_load_n(&pebs_live, __ATOMIC_RELAXED)) {
			ping_t[nr_pings % NR_PINGS] = t;
			if (ring_len < RING_RECS)
				ring[(ring_head + ring_len++) % RING_RECS] =
					(nr_pings++ << 6) | (C_PING << 2) | K_CTL;
			next_ping = t + PING_NS;
		}
		if (!ring_len) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&ring_cond, &ring_lock, &ts);
			continue;
		}
		n = ring_len < 4096 ? ring_len : 4096;
		for (i = 0; i < n; i++)
			buf[i] = ring[(ring_head + i) % RING_RECS];
		ring_head = (ring_head + n) % RING_RECS;
		ring_len -= n;
		fd = conn_fd;
		pthread_mutex_unlock(&ring_lock);
		if (fd >= 0 && write_all(fd, buf, n * sizeof(*buf)))
			fd = -1;
		pthread_mutex_lock(&ring_lock);
		if (fd >= 0)
			sent += n;
	}
	return NULL;
}

/* One line from the guest: a period change or a pong. */
static void reader_line(const char *line)
{
	unsigned long long a, b;
	uint64_t t, d;

	if (!strcmp(line, "hello")) {
		pthread_mutex_lock(&ring_lock);
		ping_base = nr_pings;
		pthread_mutex_unlock(&ring_lock);
		__atomic_store_n(&pebs_live, 1, __ATOMIC_RELAXED);
	} else if (sscanf(line, "period %llu %llu", &a, &b) == 2 && a && b) {
		__atomic_store_n(&load_period, a, __ATOMIC_RELAXED);
		__atomic_store_n(&store_period, b, __ATOMIC_RELAXED);
		pthread_mutex_lock(&ring_lock);
		acks++;
		pthread_mutex_unlock(&ring_lock);
		ring_put(a << 6 | C_LOAD_ACK << 2 | K_CTL);
		ring_put(b << 6 | C_STORE_ACK << 2 | K_CTL);
	} else if (sscanf(line, "pong %llu", &a) == 1) {
		t = now_ns();
		pthread_mutex_lock(&ring_lock);
		if (a >= ping_base && a < nr_pings && nr_pings - a <= NR_PINGS) {
			d = t - ping_t[a % NR_PINGS];
			nr_pongs++;
			delay_sum_ns += d;
			if (d > delay_max_ns)
				delay_max_ns = d;
		}
		pthread_mutex_unlock(&ring_lock);
	}
}

/* Connect to QEMU's chardev socket; retry every 50 ms until it is there. */
static int connect_qemu(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	strcpy(sa.sun_path, pebs_path);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		if (fd >= 0)
			close(fd);
		usleep(50000);
	}
}

/* The reader: connects to QEMU and reads the guest's lines. */
static void *reader_fn(void *arg)
{
	char buf[4096], line[256];
	size_t len = 0;
	ssize_t n, i;
	int fd;

	(void)arg;
	for (;;) {
		fd = connect_qemu();
		pthread_mutex_lock(&ring_lock);
		conn_fd = fd;
		pthread_mutex_unlock(&ring_lock);
		while ((n = read(fd, buf, sizeof(buf))) > 0) {
			for (i = 0; i < n; i++) {
				if (buf[i] != '\n' && len < sizeof(line) - 1) {
					line[len++] = buf[i];
					continue;
				}
				line[len] = 0;
				reader_line(line);
				len = 0;
			}
		}
		pthread_mutex_lock(&ring_lock);
		conn_fd = -1;
		pthread_mutex_unlock(&ring_lock);
		close(fd);
	}
	return NULL;
}

static int pebs_start(void)
{
	struct sockaddr_un sa;
	pthread_t t;

	if (strlen(pebs_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "htmm_mem: socket path too long\n");
		return -1;
	}
	if (pthread_create(&t, NULL, reader_fn, NULL) ||
	    pthread_create(&t, NULL, writer_fn, NULL)) {
		fprintf(stderr, "htmm_mem: cannot start the pebs threads\n");
		return -1;
	}
	pebs_on = 1;
	return 0;
}

static void write_pebs(FILE *f)
{
	uint64_t loads = 0, stores = 0;
	unsigned int i;

	for (i = 0; i < MAX_VCPUS; i++) {
		loads += __atomic_load_n(&vcpus[i].loads, __ATOMIC_RELAXED);
		stores += __atomic_load_n(&vcpus[i].stores, __ATOMIC_RELAXED);
	}
	pthread_mutex_lock(&ring_lock);
	fprintf(f, "pebs loads %llu stores %llu sent %llu dropped %llu pings %llu delay_us mean %.1f max %.1f\n",
		(unsigned long long)loads, (unsigned long long)stores,
		(unsigned long long)sent, (unsigned long long)dropped,
		(unsigned long long)nr_pongs,
		nr_pongs ? delay_sum_ns / 1e3 / nr_pongs : 0.0,
		delay_max_ns / 1e3);
	fprintf(f, "periods load %llu store %llu acks %llu\n",
		(unsigned long long)load_period,
		(unsigned long long)store_period, (unsigned long long)acks);
	pthread_mutex_unlock(&ring_lock);
}

/* One line of window figures: what @b counted beyond @a. */
static void write_window(FILE *f, const char *label, const struct sums *a,
			 const struct sums *b)
{
	struct sums w = {
		.fast = b->fast - a->fast, .slow = b->slow - a->slow,
		.insns = b->insns - a->insns,
		.off_insns = b->off_insns - a->off_insns,
	};

	fprintf(f, "%s fast %llu slow %llu insns %llu model_ns %.0f left_out_insns %llu\n",
		label, (unsigned long long)w.fast, (unsigned long long)w.slow,
		(unsigned long long)w.insns,
		w.insns * (base_ps / 1000.0) + (double)w.fast * fast_ns +
		(double)w.slow * slow_ns, (unsigned long long)w.off_insns);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	struct sums all;
	unsigned int i;
	FILE *f;

	(void)id;
	(void)udata;
	if (!out_path)
		return;
	f = fopen(out_path, "w");
	if (!f) {
		perror(out_path);
		return;
	}
	sum(&all, NULL);
	fprintf(f, "total fast %llu slow %llu\n", (unsigned long long)all.fast,
		(unsigned long long)all.slow);
	if (win_state == 2) {
		write_window(f, "window", &win0, &win1);
		for (i = 0; i < MAX_VCPUS; i++) {
			char label[32];

			if (!vcpus[i].tags)
				continue;
			snprintf(label, sizeof(label), "vcpu %u", i);
			write_window(f, label, &vwin0[i], &vwin1[i]);
		}
	}
	if (pebs_on)
		write_pebs(f);
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

static int parse_arg(const char *arg)
{
	static const struct {
		const char *key;
		uint64_t *val;
	} keys[] = {
		{ "split", &split }, { "llc_kb", &llc_kb }, { "ways", &ways_arg },
		{ "load_period", &load_period }, { "store_period", &store_period },
		{ "base_ps", &base_ps }, { "fast_ns", &fast_ns },
		{ "slow_ns", &slow_ns }, { "slow", &slow_bytes },
	};
	unsigned int i;
	int r;

	if (!strncmp(arg, "out=", 4)) {
		out_path = (char *)arg + 4;
		return 1;
	}
	if (!strncmp(arg, "pebs=", 5)) {
		pebs_path = (char *)arg + 5;
		return 1;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		r = parse_u64(arg, keys[i].key, keys[i].val);
		if (r)
			return r;
	}
	fprintf(stderr, "htmm_mem: unknown argument '%s'\n", arg);
	return -1;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (parse_arg(argv[i]) <= 0)
			return -1;
	if (!split || (!out_path && !pebs_path) || !ways_arg || ways_arg > 64 ||
	    !llc_kb ||
	    !load_period || !store_period) {
		fprintf(stderr,
			"htmm_mem: needs split=BYTES and out=FILE or pebs=SOCKET (llc_kb, ways 1-64, periods > 0)\n");
		return -1;
	}
	ways = (unsigned int)ways_arg;
	nr_sets = (unsigned int)((llc_kb << 10) >> LINE_SHIFT) / ways;
	if (!nr_sets)
		nr_sets = 1;
	if (pebs_path && pebs_start())
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
