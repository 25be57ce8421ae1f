// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): "htmm tune": show the tunables against the table compiled in,
 * apply the MEMTIS preset, tierbench's measured latencies, or single
 * values.  These changes stay (nothing is restored), but a tunable that a
 * running "htmm run" or "attach" holds is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "htmm.h"

static const char tune_usage[] =
"usage: htmm tune --show\n"
"       htmm tune [--preset memtis] [--from-tierbench FILE]\n"
"                 [--set TUNABLE=VALUE]... [--dry-run]\n"
"\n"
"  -l, --show                 every tunable: default, range, current value\n"
"  -p, --preset memtis        write the MEMTIS defaults of the admin guide\n"
"                             (all but the two tier latencies)\n"
"  -t, --from-tierbench FILE  write htmm_fast_latency_ns and\n"
"                             htmm_slow_latency_ns from a tierbench result\n"
"                             (run or latency, text or --json)\n"
"  -s, --set TUNABLE=VALUE    write one tunable (repeatable)\n"
"  -n, --dry-run              say what would be written, write nothing\n"
"  -h, --help                 this help\n";

struct tune_opts {
	bool show, dry;
	struct hm_set set[HM_MAX_SETS];
	int nset;
};

static int want(struct tune_opts *o, const char *name, const char *value)
{
	int i;

	for (i = 0; i < o->nset; i++)
		if (!strcmp(o->set[i].name, name))
			break;
	if (i == HM_MAX_SETS) {
		hm_err("tune: too many values");
		return -E2BIG;
	}
	snprintf(o->set[i].name, HM_VAL, "%s", name);
	snprintf(o->set[i].value, HM_VAL, "%s", value);
	if (i == o->nset)
		o->nset++;
	return 0;
}

static int add_preset(struct tune_opts *o, const char *name)
{
	int i;

	if (strcmp(name, "memtis")) {
		hm_err("tune: unknown preset %s (known: memtis)", name);
		return -EINVAL;
	}
	for (i = 0; i < hm_nr_tunables; i++)
		if (hm_tunables[i].preset &&
		    want(o, hm_tunables[i].name, hm_tunables[i].def))
			return -E2BIG;
	return 0;
}

static int add_tierbench(struct tune_opts *o, const char *file)
{
	struct hm_nodelat lat[HM_MAX_NODES];
	char *text = hm_slurp(file, NULL);
	long fast, slow;
	int n, fn, sn;
	char v[32];

	if (!text) {
		hm_err("cannot read %s: %s", file, strerror(errno));
		return -ENOENT;
	}
	n = hm_tierbench_parse(text, lat, HM_MAX_NODES);
	free(text);
	if (hm_tierbench_pick(lat, n, &fast, &fn, &slow, &sn))
		return -EINVAL;
	printf("tierbench: node%d %ld ns (fast), node%d %ld ns (slow)\n", fn,
	       fast, sn, slow);
	snprintf(v, sizeof(v), "%ld", fast);
	if (want(o, "htmm_fast_latency_ns", v))
		return -E2BIG;
	snprintf(v, sizeof(v), "%ld", slow);
	return want(o, "htmm_slow_latency_ns", v);
}

static int parse_tune(int argc, char **argv, struct tune_opts *o)
{
	static const struct option opts[] = {
		{ "show", no_argument, NULL, 'l' },
		{ "preset", required_argument, NULL, 'p' },
		{ "from-tierbench", required_argument, NULL, 't' },
		{ "set", required_argument, NULL, 's' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct hm_set set;
	bool writes;
	int c, err = 0;

	optind = 1;
	opterr = 0;
	while (!err && (c = getopt_long(argc, argv, "lp:t:s:nh", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(tune_usage, stdout);
			return 1;
		} else if (c == 'l') {
			o->show = true;
		} else if (c == 'n') {
			o->dry = true;
		} else if (c == 'p') {
			err = add_preset(o, optarg);
		} else if (c == 't') {
			if (add_tierbench(o, optarg))
				return -2;	/* the file, not the usage */
		} else if (c == 's' && !hm_parse_set(optarg, &set)) {
			err = want(o, set.name, set.value);
		} else {
			hm_err("tune: bad %s (see htmm tune --help)", argv[optind - 1]);
			return -1;
		}
	}
	if (!err && optind < argc) {
		hm_err("tune: unexpected argument %s", argv[optind]);
		return -1;
	}
	writes = o->nset > 0;
	if (!err && o->show == writes) {
		hm_err("tune: give --show, or values to write (--preset, --from-tierbench, --set)");
		return -1;
	}
	return err ? -1 : 0;
}

static void show_row(const struct hm_tunable *t, const char *cur,
		     pid_t holder)
{
	char range[64], note[48] = "";

	hm_tunable_range(t, range, sizeof(range));
	if (holder)
		snprintf(note, sizeof(note), " (held by htmm pid %d)", (int)holder);
	printf("%-28s %-9s %-22s %-10s%s %s%s\n", t->name, t->def, range,
	       cur ? cur : "missing", cur && strcmp(cur, t->def) ? "*" : " ",
	       t->meaning, note);
}

static int tune_show(void)
{
	struct hm_kvset cur = { 0 };
	pid_t holder;
	int i;

	if (hm_tunables_read(&cur) < 0) {
		hm_err("cannot read /sys/kernel/mm/htmm");
		return HM_EXIT_FAIL;
	}
	printf("state: %s\n", hm_kv_get(&cur, "state") ?: "?");
	printf("%-28s %-9s %-22s %-11s%s\n", "TUNABLE", "DEFAULT", "RANGE",
	       "CURRENT", "MEANING (* differs from the default)");
	for (i = 0; i < hm_nr_tunables; i++) {
		const struct hm_tunable *t = &hm_tunables[i];

		if (!hm_claim_holder(t->name, &holder))
			holder = 0;
		show_row(t, hm_kv_get(&cur, t->name), holder);
		/* CCoW's files exist only with CONFIG_HTMM_CCOW. */
		if (!hm_kv_get(&cur, t->name) &&
		    strncmp(t->name, "htmm_ccow_", 10))
			hm_warn("%s is in the table but not in /sys/kernel/mm/htmm",
				t->name);
	}
	for (i = 0; i < cur.n; i++)
		if (strcmp(cur.kv[i].key, "state") &&
		    !hm_tunable_find(cur.kv[i].key))
			hm_warn("/sys/kernel/mm/htmm/%s (%s) is not in htmm's table",
				cur.kv[i].key, cur.kv[i].val);
	hm_kv_free(&cur);
	return HM_EXIT_OK;
}

/* The values that change, checked; their list in @tv. */
static int tune_plan(struct tune_opts *o, const struct hm_kvset *cur,
		     struct hm_tval *tv, int *ntv)
{
	const struct hm_tunable *t;
	const char *now;
	int i;

	for (i = 0, *ntv = 0; i < o->nset; i++) {
		t = hm_tunable_find(o->set[i].name);
		now = hm_kv_get(cur, o->set[i].name);
		if (!t || !now) {
			hm_err("unknown tunable %s%s", o->set[i].name,
			       t ? " (not in /sys/kernel/mm/htmm)" : "");
			return -ENOENT;
		}
		if (hm_tunable_check(t, o->set[i].value)) {
			char range[64];

			hm_tunable_range(t, range, sizeof(range));
			hm_err("bad value %s for %s: %s", o->set[i].value,
			       t->name, range);
			return -EINVAL;
		}
		if (!t->words)		/* "0199" -> "199", as it reads back */
			snprintf(o->set[i].value, HM_VAL, "%llu",
				 strtoull(o->set[i].value, NULL, 10));
		if (!strcmp(now, o->set[i].value))
			continue;
		snprintf(tv[*ntv].name, HM_VAL, "%s", t->name);
		snprintf(tv[*ntv].old, HM_VAL, "%s", now);
		snprintf(tv[*ntv].want, HM_VAL, "%s", o->set[i].value);
		tv[(*ntv)++].done = false;
	}
	return hm_tvals_check(tv, *ntv, cur);
}

/* Write the plan under the claims lock; all or nothing. */
static int tune_write(struct hm_tval *tv, int ntv)
{
	pid_t holder;
	int i, fd, err = 0;

	fd = hm_claims_lock();
	if (fd < 0)
		return -EIO;
	hm_claims_reap();
	for (i = 0; i < ntv && !err; i++) {
		if (hm_claim_holder(tv[i].name, &holder)) {
			hm_err("%s is held by htmm pid %d (a running htmm run or attach): not changed",
			       tv[i].name, (int)holder);
			err = -EBUSY;
		}
	}
	if (!err)
		err = hm_tvals_write(tv, ntv, false);
	if (err)
		hm_tvals_write(tv, ntv, true);
	hm_claims_unlock(fd);
	return err;
}

int cmd_tune(int argc, char **argv)
{
	struct tune_opts o = { 0 };
	struct hm_kvset cur = { 0 };
	struct hm_tval tv[HM_MAX_SETS];
	int r = parse_tune(argc, argv, &o), ntv, i;
	char state[128];

	if (r)
		return r > 0 ? HM_EXIT_OK : r == -2 ? HM_EXIT_FAIL : HM_EXIT_USAGE;
	if (hm_check_htmm_dir())
		return HM_EXIT_FAIL;
	if (o.show)
		return tune_show();
	if (hm_htmm_state(state, sizeof(state)))
		hm_warn("htmm is off (state: %s); the tunables are written all the same",
			state);
	if ((!o.dry && hm_check_root("tune")) || hm_tunables_read(&cur) < 0)
		return HM_EXIT_FAIL;
	r = tune_plan(&o, &cur, tv, &ntv);
	hm_kv_free(&cur);
	if (r)
		return HM_EXIT_FAIL;
	for (i = 0; i < ntv; i++)
		printf("%s%s: %s -> %s\n", o.dry ? "would set " : "", tv[i].name,
		       tv[i].old, tv[i].want);
	if (!ntv)
		printf("nothing to change\n");
	if (o.dry || !ntv)
		return HM_EXIT_OK;
	return tune_write(tv, ntv) ? HM_EXIT_FAIL : HM_EXIT_OK;
}
