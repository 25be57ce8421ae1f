// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): a session of "run", "attach" or "record -- CMD": the options
 * they share, everything checked before anything is created, the setup
 * (each step recorded) and its undo in reverse order.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "htmm.h"

int hm_verbose;

void hm_session_init(struct hm_session *s, const char *verb)
{
	memset(s, 0, sizeof(*s));
	s->verb = verb;
	s->interval_ms = 1000;
	s->lock_fd = -1;
	s->rec.stat_fd = -1;
	s->rec.vmstat_fd = -1;
}

static int add_budget(struct hm_session *s, const char *arg)
{
	struct hm_budget b;
	int i, err = hm_parse_budget(arg, &b);

	if (err) {
		hm_err("bad --budget %s: want NODE=SIZE, SIZE a number of bytes with an optional K, M, G, T, P or E, or max%s",
		       arg, err == -ERANGE ? " (value or node out of range)" : "");
		return err;
	}
	for (i = 0; i < s->nbudget; i++) {
		if (s->budget[i].node == b.node) {
			hm_err("--budget for node %d given twice", b.node);
			return -EINVAL;
		}
	}
	s->budget[s->nbudget++] = b;
	return 0;
}

static int add_set(struct hm_session *s, const struct hm_set *set)
{
	int i;

	for (i = 0; i < s->nset; i++) {
		if (!strcmp(s->set[i].name, set->name)) {
			hm_err("%s set twice", set->name);
			return -EINVAL;
		}
	}
	if (s->nset == HM_MAX_SETS) {
		hm_err("too many --set");
		return -E2BIG;
	}
	s->set[s->nset++] = *set;
	return 0;
}

/* One of the shared options, by its long name.  0 or -errno (said why). */
int hm_session_option(struct hm_session *s, const char *opt, const char *arg)
{
	unsigned long long v;
	struct hm_set set;

	if (!strcmp(opt, "budget"))
		return add_budget(s, arg);
	if (!strcmp(opt, "set")) {
		if (hm_parse_set(arg, &set)) {
			hm_err("bad --set %s: want TUNABLE=VALUE", arg);
			return -EINVAL;
		}
		return add_set(s, &set);
	}
	if (!strcmp(opt, "sampler") || !strcmp(opt, "mode")) {
		if (hm_alias_set(opt, arg, &set)) {
			hm_err("bad --%s %s", opt, arg);
			return -EINVAL;
		}
		return add_set(s, &set);
	}
	if (!strcmp(opt, "record")) {
		s->record = arg;
	} else if (!strcmp(opt, "kthread")) {
		if (!arg[0] || strlen(arg) > 15 || s->nxkt == HM_MAX_XKT) {
			hm_err("bad --kthread %s: a thread name of 1 to 15 characters, at most %d of them",
			       arg, HM_MAX_XKT);
			return -EINVAL;
		}
		s->xkt[s->nxkt++] = arg;
	} else if (!strcmp(opt, "interval")) {
		if (hm_parse_ull(arg, 3600000, &v) || v < 10) {
			hm_err("bad --interval %s: milliseconds, 10 to 3600000", arg);
			return -EINVAL;
		}
		s->interval_ms = (unsigned int)v;
	} else if (!strcmp(opt, "format")) {
		if (hm_format_parse(arg, &s->fmt)) {
			hm_err("bad --format %s: csv or jsonl", arg);
			return -EINVAL;
		}
		s->fmt_given = true;
	} else if (!strcmp(opt, "cgroup")) {
		if (hm_cgroup_rel(arg, s->cg, sizeof(s->cg))) {
			hm_err("bad cgroup %s: a path below /sys/fs/cgroup, not the root", arg);
			return -EINVAL;
		}
		s->cg_given = true;
	} else {
		return -ENOENT;
	}
	return 0;
}

static int check_nodes(struct hm_session *s)
{
	struct hm_topo t;
	bool mem[HM_MAX_NODES] = { false };
	char list[256];
	int i, n;

	if (hm_topo_load(&t))
		t.nr = 0;
	for (i = 0; i < t.nr; i++)
		mem[i] = t.node[i].mem;
	hm_fmt_nodelist(mem, HM_MAX_NODES, list, sizeof(list));
	for (i = 0; i < s->nbudget; i++) {
		n = s->budget[i].node;
		if (n < t.nr && t.node[n].mem)
			continue;
		hm_err("unknown node %d: the nodes with memory are %s", n, list);
		return -ENOENT;
	}
	return 0;
}

/* The tunables to change: known, in range, not held by another htmm. */
static int check_sets(struct hm_session *s)
{
	struct hm_kvset cur = { 0 };
	const struct hm_tunable *t;
	const char *now;
	int i, err = 0;

	if (s->nset && hm_tunables_read(&cur) < 0) {
		hm_err("cannot read /sys/kernel/mm/htmm");
		return -EIO;
	}
	for (i = 0; i < s->nset && !err; i++) {
		struct hm_set *set = &s->set[i];

		t = hm_tunable_find(set->name);
		now = hm_kv_get(&cur, set->name);
		if (!now || !strcmp(set->name, "state")) {
			hm_err("unknown tunable %s (see htmm tune --show)", set->name);
			err = -ENOENT;
		} else if (!t) {
			hm_warn("%s is not in htmm's table: its value is not checked",
				set->name);
		} else if (hm_tunable_check(t, set->value)) {
			char range[128];

			hm_tunable_range(t, range, sizeof(range));
			hm_err("bad value %s for %s: %s", set->value, set->name, range);
			err = -EINVAL;
		} else if (!t->words) {		/* "02" -> "2", as it reads back */
			snprintf(set->value, sizeof(set->value), "%llu",
				 strtoull(set->value, NULL, 10));
		}
		if (err || !strcmp(now, set->value))
			continue;	/* unchanged: nothing to write or restore */
		snprintf(s->tv[s->ntv].name, HM_VAL, "%s", set->name);
		snprintf(s->tv[s->ntv].old, HM_VAL, "%s", now);
		snprintf(s->tv[s->ntv++].want, HM_VAL, "%s", set->value);
	}
	if (!err)
		err = hm_tvals_check(s->tv, s->ntv, &cur);
	hm_kv_free(&cur);
	return err;
}

static int check_new_cgroup(struct hm_session *s)
{
	char parent[HM_PATH];

	if (!s->cg_given)
		snprintf(s->cg, sizeof(s->cg), "htmm-%s.%d", s->verb, (int)getpid());
	if (hm_cg_exists(s->cg)) {
		hm_err("cgroup /%s already exists: give --cgroup a new name", s->cg);
		return -EEXIST;
	}
	hm_cg_parent(s->cg, parent, sizeof(parent));
	if (!hm_cg_exists(parent)) {
		hm_err("parent cgroup /%s does not exist", parent);
		return -ENOENT;
	}
	if (hm_cg_has_controller(parent, "cgroup.controllers", "memory") != 1) {
		hm_err("the memory controller is not available in /%s (not in its cgroup.controllers)",
		       parent);
		return -ENOENT;
	}
	return 0;
}

static int check_old_cgroup(struct hm_session *s)
{
	char path[HM_PATH];
	int i;

	if (!hm_cg_exists(s->cg)) {
		hm_err("cgroup /%s does not exist", s->cg);
		return -ENOENT;
	}
	if (hm_cg_file(path, sizeof(path), s->cg, "memory.htmm_enabled") ||
	    !hm_exists(path)) {
		hm_err("/%s has no memory.htmm_enabled: enable the memory controller in its parent (echo +memory > cgroup.subtree_control)",
		       s->cg);
		return -ENOENT;
	}
	for (i = 0; i < s->nbudget; i++) {
		char f[32];

		snprintf(f, sizeof(f), "memory.max_at_node%d", s->budget[i].node);
		if (hm_cg_file(path, sizeof(path), s->cg, f) || !hm_exists(path)) {
			hm_err("/%s has no %s (node %d had no memory at boot)",
			       s->cg, f, s->budget[i].node);
			return -ENOENT;
		}
	}
	return 0;
}

static int check_pids(struct hm_session *s)
{
	int i;

	for (i = 0; i < s->npids; i++) {
		s->pid_start[i] = hm_proc_start(s->pids[i]);
		if (!s->pid_start[i] || !hm_proc_alive(s->pids[i], 0)) {
			hm_err("no process %d", (int)s->pids[i]);
			return -ESRCH;
		}
	}
	return 0;
}

/*
 * Everything that can be checked before anything is changed: root, the
 * kernel, the cgroup, nodes, tunables, processes.  Opens (creates) the
 * record file last; hm_session_teardown() removes it again on failure.
 */
int hm_session_prepare(struct hm_session *s)
{
	int err;

	err = hm_check_root(s->verb);
	if (!err)
		err = hm_check_htmm();
	if (!err)
		err = hm_check_cgroup2();
	if (!err)
		err = s->create ? check_new_cgroup(s) : check_old_cgroup(s);
	if (!err)
		err = check_nodes(s);
	if (!err)
		err = check_pids(s);
	if (!err)
		err = check_sets(s);
	if (!err && s->record) {
		err = hm_rec_open(&s->rec, s->record,
				  s->fmt_given ? s->fmt : hm_format_guess(s->record));
		s->recording = !err;
	}
	return err;
}

/* Claim the tunables; another live htmm holding one fails the session. */
static int take_claims(struct hm_session *s)
{
	pid_t pid;
	int i, err;

	hm_claims_reap();
	for (i = 0; i < s->ntv; i++) {
		if (hm_claim_holder(s->tv[i].name, &pid)) {
			hm_err("%s is held by htmm pid %d, which changed it: leave it alone or wait for that run to end",
			       s->tv[i].name, (int)pid);
			return -EBUSY;
		}
	}
	for (i = 0; i < s->ntv; i++) {
		err = hm_claim_take(s->tv[i].name, s->tv[i].old, s->tv[i].want);
		if (err) {
			hm_err("cannot record the claim on %s: %s", s->tv[i].name,
			       strerror(-err));
			return err;
		}
		s->claimed[i] = true;
	}
	return 0;
}

/* Turn on the memory controller for the new cgroup, then create it. */
static int make_cgroup(struct hm_session *s)
{
	char parent[HM_PATH];
	int err;

	hm_cg_parent(s->cg, parent, sizeof(parent));
	if (hm_cg_has_controller(parent, "cgroup.subtree_control", "memory") != 1) {
		s->kids_before = hm_cg_children(parent);
		err = hm_cg_write(parent, "cgroup.subtree_control", "+memory");
		if (err) {
			hm_err("cannot enable the memory controller in /%s/cgroup.subtree_control: %s%s",
			       parent, strerror(-err), err == -EBUSY ?
			       " (the cgroup has processes of its own)" : "");
			return err;
		}
		s->made_memory = true;
	}
	err = hm_cg_mkdir(s->cg);
	if (err == -EEXIST) {
		hm_err("cgroup /%s already exists", s->cg);
		return err;
	}
	if (err) {
		hm_err("cannot create cgroup /%s: %s", s->cg, strerror(-err));
		return err;
	}
	s->made_cg = true;
	if (hm_verbose)
		hm_err("created cgroup /%s", s->cg);
	return 0;
}

static int write_budgets(struct hm_session *s)
{
	char f[32], val[HM_VAL];
	int i, err;

	for (i = 0; i < s->nbudget; i++) {
		snprintf(f, sizeof(f), "memory.max_at_node%d", s->budget[i].node);
		if (hm_cg_read(s->cg, f, s->old_budget[i], HM_VAL) < 0) {
			if (!hm_fake()) {
				hm_err("node %d: /%s has no %s (no memory at boot?)",
				       s->budget[i].node, s->cg, f);
				return -ENOENT;
			}
			hm_strscpy(s->old_budget[i], "max", HM_VAL);
		}
		hm_budget_value(&s->budget[i], val, sizeof(val));
		err = hm_cg_write(s->cg, f, val);
		if (err) {
			hm_err("cannot write %s to /%s/%s: %s", val, s->cg, f,
			       strerror(-err));
			return err;
		}
		s->budget_done[i] = true;
	}
	return 0;
}

/* The changes, in order; on failure the caller tears down. */
int hm_session_setup(struct hm_session *s)
{
	int err;

	s->lock_fd = hm_claims_lock();
	if (s->lock_fd < 0)
		return -EIO;
	err = take_claims(s);
	if (!err && s->create)
		err = make_cgroup(s);
	if (!err)
		err = write_budgets(s);
	if (!err)
		err = hm_tvals_write(s->tv, s->ntv, false);
	if (!err && !hm_cg_htmm_enabled(s->cg)) {
		err = hm_cg_set_htmm(s->cg, true);
		s->made_htmm = !err;
	}
	if (!err && hm_verbose)
		hm_err("/%s: %d budget(s), %d tunable(s) changed, htmm %s",
		       s->cg, s->nbudget, s->ntv,
		       s->made_htmm ? "enabled" : "was enabled already");
	if (!err && s->recording)
		err = hm_rec_start(&s->rec, s->cg, s->xkt, s->nxkt);
	hm_claims_unlock(s->lock_fd);
	s->lock_fd = -1;
	return err;
}

/*
 * The parent's memory controller goes off again unless a child cgroup
 * came since it was turned on (another run's, say, that relies on it).
 */
static void undo_memory(struct hm_session *s)
{
	char parent[HM_PATH], *now, *name, *save, key[HM_PATH];
	bool busy = !s->kids_before;

	hm_cg_parent(s->cg, parent, sizeof(parent));
	now = hm_cg_children(parent);
	for (name = now ? strtok_r(now, "\n", &save) : NULL; name && !busy;
	     name = strtok_r(NULL, "\n", &save)) {
		snprintf(key, sizeof(key), "\n%s\n", name);
		busy = !strstr(s->kids_before, key);
	}
	if (now && !busy)
		hm_cg_write(parent, "cgroup.subtree_control", "-memory");
	free(now);
	free(s->kids_before);
	s->kids_before = NULL;
}

static int undo_cgroup(struct hm_session *s)
{
	int err = hm_cg_rmdir(s->cg, 5);

	if (err == -EBUSY) {
		hm_warn("processes the command left in /%s: killing them", s->cg);
		hm_cg_write(s->cg, "cgroup.kill", "1");
		err = hm_cg_rmdir(s->cg, 5);
	}
	if (err)
		hm_err("cannot remove cgroup /%s: %s", s->cg, strerror(-err));
	return err;
}

static int undo_budgets(struct hm_session *s)
{
	char f[32];
	int i, err = 0;

	for (i = s->nbudget - 1; i >= 0; i--) {
		if (!s->budget_done[i])
			continue;
		snprintf(f, sizeof(f), "memory.max_at_node%d", s->budget[i].node);
		if (hm_cg_write(s->cg, f, s->old_budget[i])) {
			hm_err("cannot restore /%s/%s to %s", s->cg, f,
			       s->old_budget[i]);
			err = -EIO;
		}
		s->budget_done[i] = false;
	}
	return err;
}

/* Undo what was done, in reverse order.  0 if all of it went back. */
int hm_session_undo(struct hm_session *s, bool failed)
{
	bool ok = true;
	int i;

	if (s->recording)
		hm_rec_close(&s->rec, failed);
	s->recording = false;
	if (s->made_cg) {
		ok = !undo_cgroup(s);
		s->made_cg = !ok;
		if (ok && hm_verbose)
			hm_err("removed cgroup /%s", s->cg);
	} else {
		if (s->made_htmm && hm_cg_set_htmm(s->cg, false))
			ok = false;
		if (undo_budgets(s))
			ok = false;
	}
	s->made_htmm = false;
	if (hm_tvals_write(s->tv, s->ntv, true))
		ok = false;
	s->lock_fd = hm_claims_lock();
	for (i = s->ntv - 1; i >= 0; i--)
		if (s->claimed[i])
			hm_claim_drop(s->tv[i].name);
	if (s->made_memory && !s->made_cg)
		undo_memory(s);
	hm_claims_unlock(s->lock_fd);
	s->lock_fd = -1;
	return ok ? 0 : -EIO;
}
