// SPDX-License-Identifier: GPL-2.0
/*
 * btree: B-tree index point lookups on SQLite (Debian's libsqlite3).
 *
 * It models an in-memory index lookup service: an SQLite database opened
 * as ":memory:" (every page anonymous heap memory, nothing can be
 * evicted), a table t(key INTEGER, payload BLOB) with a UNIQUE secondary
 * index on key.  The keys are random 64-bit integers (the outputs of a
 * SplitMix64 stream, so all distinct) inserted in that random order:
 * the table's rowid B-tree is filled in append order while the index
 * B-tree grows by random inserts and page splits, like a real one.  A
 * lookup descends the index B-tree to find the rowid, then the table
 * B-tree to fetch the payload, both at random pages.
 *
 * Setup: SQLITE_CONFIG_MEMSTATUS off, journal_mode OFF, synchronous OFF,
 * locking_mode EXCLUSIVE, a page cache large enough for every page; the
 * rows are inserted in one transaction.  The row count comes from --mb
 * (BYTES_PER_ROW measured with SQLite 3.40.1, 4 KiB pages).
 *
 * Measured phase: --lookups (default 1500000, times --work) point
 * lookups of uniformly random existing keys through one prepared
 * "SELECT payload FROM t WHERE key=?1", reset and bound each time.
 *
 * Options: --mb N (default 300), --seed S (1), --work X (1.0),
 * --lookups N.
 *
 * Output: "wl result rows R lookups L seconds S lookups_per_s X"; the
 * check: every lookup returned exactly one row whose 100-byte payload is
 * the one derived from its key (its first 8 bytes the key), 1000 keys
 * not inserted return no row, and count(*) is the number of rows.
 */
#include <sqlite3.h>
#include "wl.h"

#define PAYLOAD		100
#define MISSES		1000
#define DEFAULT_LOOKUPS	1500000
#define MIN_ROWS	1000
/* Memory model: RSS ~ BASE_KB + rows * BYTES_PER_ROW (measured). */
#define BYTES_PER_ROW	160
#define BASE_KB		3500
#define KEY_STEP	0xd1b54a32d192ed03ULL

struct bt {
	sqlite3 *db;
	uint64_t kbase;
	long rows;
};

static const char * const opts[] = {
	"--mb", "--seed", "--work", "--lookups", NULL,
};

static void die(const struct bt *b, const char *what)
{
	printf("wl check FAIL %s: %s\n", what,
	       b->db ? sqlite3_errmsg(b->db) : "no database");
	fflush(stdout);
	exit(1);
}

/* The key of row @i (0-based): distinct random 64-bit values. */
static int64_t key_of(const struct bt *b, uint64_t i)
{
	uint64_t s = b->kbase + i * KEY_STEP;

	return (int64_t)wl_rand(&s);
}

/* The payload of @key: the key's 8 bytes, then bytes derived from it. */
static void payload_of(int64_t key, unsigned char *p)
{
	uint64_t s = (uint64_t)key, v = 0;
	int i;

	memcpy(p, &key, sizeof(key));
	for (i = sizeof(key); i < PAYLOAD; i++) {
		if (!(i % 8))
			v = wl_rand(&s);
		p[i] = (unsigned char)v;
		v >>= 8;
	}
}

static void exec(struct bt *b, const char *sql)
{
	if (sqlite3_exec(b->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		die(b, sql);
}

static sqlite3_stmt *prepare(struct bt *b, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(b->db, sql, -1, &st, NULL) != SQLITE_OK)
		die(b, sql);
	return st;
}

static void open_db(struct bt *b, double mb)
{
	char sql[96];

	b->db = NULL;
	if (sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK ||
	    sqlite3_initialize() != SQLITE_OK)
		die(b, "sqlite3_initialize");
	if (sqlite3_open(":memory:", &b->db) != SQLITE_OK)
		die(b, "sqlite3_open");
	exec(b, "PRAGMA journal_mode=OFF");
	exec(b, "PRAGMA synchronous=OFF");
	exec(b, "PRAGMA locking_mode=EXCLUSIVE");
	exec(b, "PRAGMA temp_store=MEMORY");
	/* Negative: KiB; twice the footprint, so no page is ever dropped. */
	snprintf(sql, sizeof(sql), "PRAGMA cache_size=-%ld",
		 (long)(mb * 2048) + 65536);
	exec(b, sql);
	exec(b, "CREATE TABLE t(key INTEGER NOT NULL, payload BLOB NOT NULL)");
	exec(b, "CREATE UNIQUE INDEX t_key ON t(key)");
}

/* Insert the rows in key-generation (random key) order. */
static void load(struct bt *b)
{
	sqlite3_stmt *st = prepare(b, "INSERT INTO t(key, payload) VALUES(?1, ?2)");
	unsigned char p[PAYLOAD];
	long i;

	exec(b, "BEGIN");
	for (i = 0; i < b->rows; i++) {
		int64_t key = key_of(b, i);

		payload_of(key, p);
		if (sqlite3_bind_int64(st, 1, key) != SQLITE_OK ||
		    sqlite3_bind_blob(st, 2, p, PAYLOAD, SQLITE_STATIC) !=
		    SQLITE_OK || sqlite3_step(st) != SQLITE_DONE ||
		    sqlite3_reset(st) != SQLITE_OK)
			die(b, "insert");
	}
	exec(b, "COMMIT");
	sqlite3_finalize(st);
}

/* One lookup of @key: 1 if it gives no row, 2 if one good row, else 0. */
static int lookup(struct bt *b, sqlite3_stmt *st, int64_t key)
{
	unsigned char want[PAYLOAD];
	const void *got;
	int rc, ret = 0;

	if (sqlite3_bind_int64(st, 1, key) != SQLITE_OK)
		die(b, "bind");
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		ret = 1;
	} else if (rc == SQLITE_ROW) {
		got = sqlite3_column_blob(st, 0);
		payload_of(key, want);
		if (got && sqlite3_column_bytes(st, 0) == PAYLOAD &&
		    !memcmp(got, want, PAYLOAD) &&
		    sqlite3_step(st) == SQLITE_DONE)
			ret = 2;
	} else {
		die(b, "select");
	}
	sqlite3_reset(st);
	return ret;
}

static long lookups(struct bt *b, sqlite3_stmt *st, long n, uint64_t seed)
{
	uint64_t s = seed;
	long i, bad = 0;

	for (i = 0; i < n; i++)
		bad += lookup(b, st, key_of(b, wl_randn(&s, b->rows))) != 2;
	return bad;
}

/* Keys of another stream: none of them was inserted. */
static long misses(struct bt *b, sqlite3_stmt *st, uint64_t seed)
{
	uint64_t s = seed;
	long i, bad = 0;

	for (i = 0; i < MISSES; i++)
		bad += lookup(b, st, (int64_t)wl_rand(&s)) != 1;
	return bad;
}

static long count_rows(struct bt *b)
{
	sqlite3_stmt *st = prepare(b, "SELECT count(*) FROM t");
	long n = -1;

	if (sqlite3_step(st) == SQLITE_ROW)
		n = (long)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int main(int argc, char **argv)
{
	double mb = wl_arg(argc, argv, "--mb", 300);
	uint64_t seed = (uint64_t)wl_arg(argc, argv, "--seed", 1);
	double work = wl_arg(argc, argv, "--work", 1.0);
	long n = (long)(wl_arg(argc, argv, "--lookups", DEFAULT_LOOKUPS) *
			work + 0.5);
	long bad, miss, count;
	sqlite3_stmt *st;
	struct bt b;
	double secs;

	wl_check_opts(argc, argv, opts);
	if (mb < 4 || mb > 65536 || work <= 0 || n < 1) {
		fprintf(stderr, "%s: bad --mb, --work or --lookups\n", argv[0]);
		return 2;
	}
	b.kbase = wl_fnv64(seed ^ 0xb7ee);
	b.rows = (long)((mb * 1024 - BASE_KB) * 1024 / BYTES_PER_ROW);
	b.rows = b.rows < MIN_ROWS ? MIN_ROWS : b.rows;
	open_db(&b, mb);
	load(&b);
	st = prepare(&b, "SELECT payload FROM t WHERE key=?1");
	wl_phase_begin();
	bad = lookups(&b, st, n, wl_fnv64(seed ^ 0x100c));
	secs = wl_phase_end();
	miss = misses(&b, st, wl_fnv64(seed ^ 0x0155));
	count = count_rows(&b);
	sqlite3_finalize(st);
	printf("wl result rows %ld lookups %ld seconds %.3f lookups_per_s %.0f\n",
	       b.rows, n, secs, n / secs);
	printf("wl check %s %ld of %ld lookups wrong, %ld of %d absent keys found, count %ld of %ld rows\n",
	       !bad && !miss && count == b.rows ? "ok" : "FAIL", bad, n, miss,
	       MISSES, count, b.rows);
	fflush(stdout);
	sqlite3_close(b.db);
	return !bad && !miss && count == b.rows ? 0 : 1;
}
