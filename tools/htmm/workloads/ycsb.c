// SPDX-License-Identifier: GPL-2.0
/*
 * ycsb: a YCSB-style client (core workloads A, B, C, F, D) driving a
 * redis-server over a unix socket with libhiredis.
 *
 * It models YCSB's core workloads as documented: records named
 * "user<n>", n the FNV-1a hash of the record number (insertorder hashed),
 * each a Redis hash of 10 fields "field0".."field9" of 100 bytes (as
 * YCSB's Redis binding stores them).  The load phase FLUSHALLs, then
 * inserts the records with HSET, pipelined (64 commands in flight).  The
 * measured phase runs the run phases one after the other, one operation
 * at a time (request, wait for the reply), like YCSB with one thread:
 *   A  50% read, 50% update            scrambled zipfian
 *   B  95% read,  5% update            scrambled zipfian
 *   C  100% read                       scrambled zipfian
 *   F  50% read, 50% read-modify-write scrambled zipfian
 *   D  95% read,  5% insert            latest
 * Read is HGETALL, update an HSET of one random field, read-modify-write
 * both, insert the HSET of a new record with the next record number.
 * Scrambled zipfian is YCSB's: a zipfian rank (constant 0.99) over 1e10
 * items, FNV-hashed modulo the record count.  Latest: the newest record
 * minus a zipfian rank over the record count, so recent inserts are the
 * most popular.
 *
 * A field's value is a function of (seed, record, field, version); the
 * client keeps each field's version, so it checks every value it reads.
 *
 * Options: --sock PATH (default /tmp/redis.sock), --mb N (target server
 * memory after the load, MiB; sets the record count from the measured
 * bytes per record, BYTES_PER_RECORD), --records N (the record count,
 * overrides --mb), --ops N (operations per run phase), --work X (scales
 * --ops), --phases STR (run phases in order, default ABCFD), --seed S.
 *
 * Output: "wl result load records N seconds S", "wl result server_rss_kb
 * N used_memory_kb M at before|after" around the measured phase (the
 * server's VmRSS, or INFO's used_memory_rss if it runs elsewhere; INFO's
 * used_memory), "wl result phase P ops N seconds S ops_per_s R" per phase,
 * a total line and the record counts.  The check: every reply well formed,
 * every value read the one last written (in the measured phase and in a
 * uniform sample of all the records after it), DBSIZE the records loaded
 * plus inserted.
 *
 * The server to run, no persistence, unix socket only:
 *   redis-server --port 0 --unixsocket /tmp/redis.sock --unixsocketperm 700
 *	--save '' --appendonly no --daemonize no --io-threads 1
 *	--jemalloc-bg-thread no --disable-thp no --activedefrag no
 *	--maxmemory 0 --loglevel warning --dir /tmp
 */
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include "wl.h"

#define FIELDS		10
#define FIELD_LEN	100
#define PIPE_DEPTH	64
#define MIN_RECORDS	1000
#define SAMPLE_READS	1000
#define ZIPF_THETA	0.99
/*
 * YCSB's scrambled zipfian draws its ranks over 1e10 items; their
 * zeta(1e10, 0.99), by Euler-Maclaurin summation.
 */
#define ZIPF_ITEMS	10000000000ULL
#define ZIPF_ZETAN	26.4690282018
/*
 * Server memory model, measured with Debian's redis-server 7.0.15
 * (jemalloc 5.3.0; a record is a hash in hashtable encoding, its values
 * being longer than hash-max-listpack-value 64), fresh server, after the
 * load: RSS ~ SERVER_BASE_KB + records * BYTES_PER_RECORD (5000 records:
 * 21392 KiB, 50000: 104860 KiB, 200000: 382836 KiB).
 */
#define SERVER_BASE_KB		12100
#define BYTES_PER_RECORD	1900
/* Default operations per run phase: ABCFD about 3.5 s natively, 300 MiB. */
#define DEFAULT_OPS		60000

struct phase {
	char name;
	double read, update, rmw;	/* the rest: insert */
	bool latest;
};

static const struct phase phases[] = {
	{ 'A', 0.50, 0.50, 0.00, false },
	{ 'B', 0.95, 0.05, 0.00, false },
	{ 'C', 1.00, 0.00, 0.00, false },
	{ 'F', 0.50, 0.00, 0.50, false },
	{ 'D', 0.95, 0.00, 0.00, true },
};

struct ycsb {
	redisContext *c;
	uint64_t seed, vseed, rng;
	uint64_t loaded, inserted, cap;
	uint16_t *ver;			/* [cap][FIELDS]: version of each field */
	struct wl_zipf scr;		/* rank of the scrambled zipfian */
	struct wl_zipf lat;		/* rank of latest, over lat.n items */
	uint64_t errors, bad;		/* wrong values; bad replies */
};

static const char *fname[FIELDS] = {
	"field0", "field1", "field2", "field3", "field4",
	"field5", "field6", "field7", "field8", "field9",
};

static void die(const char *what, const char *why)
{
	printf("wl check FAIL %s: %s\n", what, why);
	fflush(stdout);
	exit(1);
}

/* A zipfian rank generator over @n items whose zeta(n) is @zetan. */
static void zipf_set(struct wl_zipf *z, uint64_t n, double zetan)
{
	z->n = n;
	z->theta = ZIPF_THETA;
	z->alpha = 1.0 / (1.0 - ZIPF_THETA);
	z->zetan = zetan;
	z->eta = (1.0 - pow(2.0 / n, 1.0 - ZIPF_THETA)) /
		 (1.0 - wl_zeta(2, ZIPF_THETA) / zetan);
	z->half_pow = 1.0 + pow(0.5, ZIPF_THETA);
}

/* YCSB's hash: FNV-1a 64 as a signed value, made positive. */
static uint64_t ycsb_hash(uint64_t v)
{
	int64_t h = (int64_t)wl_fnv64(v);

	return h < 0 ? (uint64_t)-h : (uint64_t)h;
}

static int key_name(uint64_t rec, char *buf, size_t len)
{
	return snprintf(buf, len, "user%llu",
			(unsigned long long)ycsb_hash(rec));
}

/* The 100 printable bytes of (record, field, version). */
static void make_value(const struct ycsb *y, uint64_t rec, int f,
		       unsigned int ver, char *out)
{
	uint64_t s = wl_fnv64(rec ^ y->vseed) + f * 0x100000001b3ULL +
		     ver * 0xc2b2ae3d27d4eb4fULL;
	char head[48];
	int i, n;

	n = snprintf(head, sizeof(head), "r%llu.f%d.v%u.",
		     (unsigned long long)rec, f, ver);
	memcpy(out, head, n);
	for (i = n; i < FIELD_LEN; i++)
		out[i] = ' ' + (char)(wl_rand(&s) % 95);
}

static redisReply *command(struct ycsb *y, int argc, const char **argv,
			   const size_t *len)
{
	redisReply *r = redisCommandArgv(y->c, argc, argv, len);

	if (!r)
		die("redis connection", y->c->errstr);
	return r;
}

static redisReply *command1(struct ycsb *y, const char *cmd)
{
	return command(y, 1, &cmd, NULL);
}

static uint16_t *version(struct ycsb *y, uint64_t rec)
{
	uint64_t n;

	if (rec >= y->cap) {
		n = rec + 1 + rec / 8;
		y->ver = realloc(y->ver, n * FIELDS * sizeof(*y->ver));
		if (!y->ver)
			die("memory", "out of memory");
		memset(y->ver + y->cap * FIELDS, 0,
		       (n - y->cap) * FIELDS * sizeof(*y->ver));
		y->cap = n;
	}
	return y->ver + rec * FIELDS;
}

/* HSET of a whole new record (version 0), appended to the output buffer. */
static void append_insert(struct ycsb *y, uint64_t rec)
{
	char key[32], val[FIELDS][FIELD_LEN];
	const char *argv[2 + 2 * FIELDS];
	size_t len[2 + 2 * FIELDS];
	int f;

	version(y, rec);
	argv[0] = "HSET";
	len[0] = 4;
	argv[1] = key;
	len[1] = key_name(rec, key, sizeof(key));
	for (f = 0; f < FIELDS; f++) {
		make_value(y, rec, f, 0, val[f]);
		argv[2 + 2 * f] = fname[f];
		len[2 + 2 * f] = strlen(fname[f]);
		argv[3 + 2 * f] = val[f];
		len[3 + 2 * f] = FIELD_LEN;
	}
	if (redisAppendCommandArgv(y->c, 2 + 2 * FIELDS, argv, len))
		die("redis append", y->c->errstr);
}

/* The reply to an HSET that should have created @want fields. */
static void hset_reply(struct ycsb *y, redisReply *r, long long want)
{
	if (r->type != REDIS_REPLY_INTEGER || r->integer != want)
		y->bad++;
	freeReplyObject(r);
}

static void get_reply(struct ycsb *y, long long want)
{
	void *r;

	if (redisGetReply(y->c, &r) || !r)
		die("redis reply", y->c->errstr);
	hset_reply(y, r, want);
}

/* The load phase: records 0..n-1, PIPE_DEPTH commands in flight. */
static void load(struct ycsb *y, uint64_t n)
{
	uint64_t sent = 0, done = 0;

	while (done < n) {
		while (sent < n && sent - done < PIPE_DEPTH)
			append_insert(y, sent++);
		get_reply(y, FIELDS);
		done++;
	}
	y->loaded = n;
}

/* Checks an HGETALL reply against the versions the client wrote. */
static void check_record(struct ycsb *y, uint64_t rec, redisReply *r)
{
	const uint16_t *ver = version(y, rec);
	char want[FIELD_LEN];
	unsigned int seen = 0;
	redisReply *k, *v;
	size_t i;
	int f;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 * FIELDS) {
		y->bad++;
		return;
	}
	for (i = 0; i < r->elements; i += 2) {
		k = r->element[i];
		v = r->element[i + 1];
		if (k->type != REDIS_REPLY_STRING || k->len != 6 ||
		    memcmp(k->str, "field", 5) || k->str[5] < '0' ||
		    k->str[5] > '9' || v->type != REDIS_REPLY_STRING) {
			y->bad++;
			return;
		}
		f = k->str[5] - '0';
		make_value(y, rec, f, ver[f], want);
		if (seen & (1u << f) || v->len != FIELD_LEN ||
		    memcmp(v->str, want, FIELD_LEN))
			y->errors++;
		seen |= 1u << f;
	}
}

static void op_read(struct ycsb *y, uint64_t rec)
{
	const char *argv[2];
	size_t len[2];
	char key[32];
	redisReply *r;

	argv[0] = "HGETALL";
	len[0] = 7;
	argv[1] = key;
	len[1] = key_name(rec, key, sizeof(key));
	r = command(y, 2, argv, len);
	check_record(y, rec, r);
	freeReplyObject(r);
}

/* HSET of one random field of @rec, at its next version. */
static void op_update(struct ycsb *y, uint64_t rec)
{
	int f = (int)wl_randn(&y->rng, FIELDS);
	uint16_t *ver = version(y, rec);
	char key[32], val[FIELD_LEN];
	const char *argv[4];
	size_t len[4];

	ver[f]++;
	make_value(y, rec, f, ver[f], val);
	argv[0] = "HSET";
	len[0] = 4;
	argv[1] = key;
	len[1] = key_name(rec, key, sizeof(key));
	argv[2] = fname[f];
	len[2] = strlen(fname[f]);
	argv[3] = val;
	len[3] = FIELD_LEN;
	hset_reply(y, command(y, 4, argv, len), 0);
}

static void op_insert(struct ycsb *y)
{
	append_insert(y, y->loaded + y->inserted);
	get_reply(y, FIELDS);
	y->inserted++;
}

static uint64_t records(const struct ycsb *y)
{
	return y->loaded + y->inserted;
}

/* YCSB's scrambled zipfian: a rank over 1e10 items, hashed to a record. */
static uint64_t next_scrambled(struct ycsb *y)
{
	return ycsb_hash(wl_zipf_next(&y->scr, &y->rng)) % records(y);
}

/*
 * YCSB's latest: the newest record minus a zipfian rank over that many
 * records; zeta (from setup()) grows with the inserts, incrementally.
 */
static uint64_t next_latest(struct ycsb *y)
{
	uint64_t max = records(y) - 1, n = y->lat.n;
	double zetan = y->lat.zetan;

	if (max != n) {
		for (n++; n <= max; n++)
			zetan += pow((double)n, -ZIPF_THETA);
		zipf_set(&y->lat, max, zetan);
	}
	return max - wl_zipf_next(&y->lat, &y->rng);
}

static void run_op(struct ycsb *y, const struct phase *p)
{
	double u = wl_rand01(&y->rng);
	uint64_t rec;

	if (u >= p->read + p->update + p->rmw) {
		op_insert(y);
		return;
	}
	rec = p->latest ? next_latest(y) : next_scrambled(y);
	if (u < p->read) {
		op_read(y, rec);
	} else if (u < p->read + p->update) {
		op_update(y, rec);
	} else {		/* read-modify-write */
		op_read(y, rec);
		op_update(y, rec);
	}
}

static double run_phase(struct ycsb *y, const struct phase *p, uint64_t ops)
{
	double t = wl_now(), s;
	uint64_t i;

	for (i = 0; i < ops; i++)
		run_op(y, p);
	s = wl_now() - t;
	printf("wl result phase %c ops %llu seconds %.3f ops_per_s %.0f\n",
	       p->name, (unsigned long long)ops, s, s > 0 ? ops / s : 0.0);
	fflush(stdout);
	return s;
}

/* A number of INFO @section, e.g. "used_memory_rss" of "memory", or -1. */
static long long info(struct ycsb *y, const char *section, const char *name)
{
	const char *argv[2] = { "INFO", section };
	redisReply *r = command(y, 2, argv, NULL);
	size_t n = strlen(name);
	long long v = -1;
	const char *s;

	if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS)
		for (s = r->str; s && *s; s = strchr(s, '\n')) {
			s += *s == '\n';
			if (!strncmp(s, name, n) && s[n] == ':') {
				v = atoll(s + n + 1);
				break;
			}
		}
	freeReplyObject(r);
	return v;
}

/*
 * The server's resident set in KiB: VmRSS of its process if it runs on
 * this machine (INFO's used_memory_rss is only refreshed by the server's
 * cron, so it lags), else used_memory_rss.
 */
static long long server_rss_kb(struct ycsb *y)
{
	long long pid = info(y, "server", "process_id"), kb = -1;
	char line[256];
	FILE *f;

	snprintf(line, sizeof(line), "/proc/%lld/status", pid);
	f = pid > 0 ? fopen(line, "r") : NULL;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb >= 0 ? kb : info(y, "memory", "used_memory_rss") / 1024;
}

static void print_server_rss(struct ycsb *y, const char *when)
{
	printf("wl result server_rss_kb %lld used_memory_kb %lld at %s\n",
	       server_rss_kb(y), info(y, "memory", "used_memory") / 1024,
	       when);
	fflush(stdout);
}

static long long integer_command(struct ycsb *y, const char *cmd)
{
	redisReply *r = command1(y, cmd);
	long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

	freeReplyObject(r);
	return v;
}

static void flushall(struct ycsb *y)
{
	redisReply *r = command1(y, "FLUSHALL");

	if (r->type != REDIS_REPLY_STATUS || strcmp(r->str, "OK"))
		die("FLUSHALL", r->type == REDIS_REPLY_ERROR ? r->str : "?");
	freeReplyObject(r);
}

static const char *const num_opts[] = {
	"--mb", "--seed", "--work", "--ops", "--records",
};

/* "--name value" of argv as a string, or @def; rejects unknown options. */
static const char *str_arg(int argc, char **argv, const char *name,
			   const char *def)
{
	const char *v = def;
	size_t j;
	int i;

	for (i = 1; i < argc; i += 2) {
		for (j = 0; j < sizeof(num_opts) / sizeof(*num_opts); j++)
			if (!strcmp(argv[i], num_opts[j]))
				break;
		if (j == sizeof(num_opts) / sizeof(*num_opts) &&
		    strcmp(argv[i], "--sock") && strcmp(argv[i], "--phases")) {
			fprintf(stderr, "%s: unknown option '%s'\n", argv[0],
				argv[i]);
			exit(2);
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "%s: %s needs a value\n", argv[0],
				argv[i]);
			exit(2);
		}
		if (!strcmp(argv[i], name))
			v = argv[i + 1];
	}
	return v;
}

static const struct phase *find_phase(char name)
{
	size_t i;

	for (i = 0; i < sizeof(phases) / sizeof(*phases); i++)
		if (phases[i].name == name)
			return &phases[i];
	return NULL;
}

/* The record count for a server of about @mb MiB after the load. */
static uint64_t records_for(double mb)
{
	double n = (mb * 1024 - SERVER_BASE_KB) * 1024 / BYTES_PER_RECORD;

	return n > MIN_RECORDS ? (uint64_t)n : MIN_RECORDS;
}

/* Reads a uniform sample of all the records; returns the errors seen. */
static uint64_t sample_check(struct ycsb *y)
{
	uint64_t e = y->errors + y->bad, s = y->seed ^ 0x5a5a5a5aULL;
	int i;

	for (i = 0; i < SAMPLE_READS; i++)
		op_read(y, wl_randn(&s, records(y)));
	return y->errors + y->bad - e;
}

/*
 * Connects, flushes the database and loads @n records; room for @extra
 * inserts in the version table, which is touched now so that the client's
 * resident set does not grow during the measured phase.
 */
static void setup(struct ycsb *y, const char *sock, uint64_t n, uint64_t extra)
{
	double t = wl_now();
	uint64_t i;

	y->c = redisConnectUnix(sock);
	if (!y->c || y->c->err)
		die(sock, y->c ? y->c->errstr : "cannot connect");
	flushall(y);
	zipf_set(&y->scr, ZIPF_ITEMS, ZIPF_ZETAN);
	zipf_set(&y->lat, n - 1, wl_zeta(n - 1, ZIPF_THETA));
	y->cap = n + extra;
	y->ver = calloc(y->cap, FIELDS * sizeof(*y->ver));
	if (!y->ver)
		die("memory", "out of memory");
	for (i = 0; i < y->cap * FIELDS; i += 1024)
		((volatile uint16_t *)y->ver)[i] = 0;
	load(y, n);
	printf("wl result load records %llu seconds %.3f bad_replies %llu\n",
	       (unsigned long long)n, wl_now() - t,
	       (unsigned long long)y->bad);
	print_server_rss(y, "before");
}

static void finish(struct ycsb *y)
{
	long long dbsize;
	uint64_t sample;
	bool ok;

	print_server_rss(y, "after");
	dbsize = integer_command(y, "DBSIZE");
	sample = sample_check(y);
	printf("wl result records %llu loaded %llu inserted %llu dbsize %lld\n",
	       (unsigned long long)records(y), (unsigned long long)y->loaded,
	       (unsigned long long)y->inserted, dbsize);
	ok = !y->errors && !y->bad && dbsize == (long long)records(y);
	printf("wl check %s wrong_values %llu bad_replies %llu",
	       ok ? "ok" : "FAIL", (unsigned long long)y->errors,
	       (unsigned long long)y->bad);
	printf(" sample_errors %llu dbsize %lld expected %llu\n",
	       (unsigned long long)sample, dbsize,
	       (unsigned long long)records(y));
	fflush(stdout);
	redisFree(y->c);
	free(y->ver);
	exit(ok ? 0 : 1);
}

int main(int argc, char **argv)
{
	const char *sock = str_arg(argc, argv, "--sock", "/tmp/redis.sock");
	const char *list = str_arg(argc, argv, "--phases", "ABCFD");
	double mb = wl_arg(argc, argv, "--mb", 300);
	double work = wl_arg(argc, argv, "--work", 1.0);
	double nrec = wl_arg(argc, argv, "--records", 0);
	double ops = wl_arg(argc, argv, "--ops", DEFAULT_OPS) * work;
	struct ycsb y = { .seed = (uint64_t)wl_arg(argc, argv, "--seed", 1) };
	double s = 0;
	uint64_t total = 0;
	const char *p;

	for (p = list; *p; p++)
		if (!find_phase(*p)) {
			fprintf(stderr, "%s: no phase '%c'\n", argv[0], *p);
			exit(2);
		}
	if (!*list || mb <= 0 || work <= 0 || ops < 1 || nrec < 0 ||
	    (nrec > 0 && nrec < 2)) {
		fprintf(stderr, "%s: bad --mb, --work, --ops, --records or --phases\n",
			argv[0]);
		exit(2);
	}
	y.rng = y.seed;
	y.vseed = wl_fnv64(y.seed);
	setup(&y, sock, nrec >= 2 ? (uint64_t)nrec : records_for(mb),
	      (uint64_t)(strlen(list) * ops * 0.1) + 1024);
	wl_phase_begin();
	for (p = list; *p; p++) {
		s += run_phase(&y, find_phase(*p), (uint64_t)ops);
		total += (uint64_t)ops;
	}
	wl_phase_end();
	printf("wl result total ops %llu seconds %.3f ops_per_s %.0f\n",
	       (unsigned long long)total, s, s > 0 ? total / s : 0.0);
	finish(&y);
	return 0;
}
