// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): starting the command inside its cgroup, waiting for it (or for
 * attached processes) while recording, signals, and the way out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "htmm.h"

volatile int hm_signal;			/* the last SIGINT, SIGTERM, ... */
static volatile pid_t fwd_child;	/* gets the signals sent to us */

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/*
 * A signal from the terminal reaches the command by itself (same process
 * group); one sent to htmm alone with kill (si_code <= 0) is passed on.
 * Either way htmm waits for the command and cleans up after it.
 */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	hm_signal = sig;
	if (fwd_child > 0 && si && si->si_code <= 0)
		kill(fwd_child, sig);
}

static void on_child(int sig)
{
	(void)sig;			/* only to interrupt sleeps */
}

void hm_signals_catch(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;	/* no SA_RESTART: waits see EINTR */
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(stop_signals); i++)
		sigaction(stop_signals[i], &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_child;	/* sleeps end at once (no restart) */
	sa.sa_flags = SA_RESTART;	/* other calls are resumed */
	sigaction(SIGCHLD, &sa, NULL);
}

static void signals_default(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stop_signals); i++)
		signal(stop_signals[i], SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
}

struct spawn_msg {
	int stage;			/* 0: joining the cgroup, 1: exec */
	int err;
};

/* The child: join the cgroup, then exec.  Failures go up the pipe. */
static void __attribute__((noreturn))
child_exec(char **cmd, int procs_fd, int pipe_fd)
{
	struct spawn_msg m = { 0, 0 };
	char buf[32];
	int n;

	signals_default();
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(procs_fd, buf, n) != n) {
		m.err = errno;
		if (write(pipe_fd, &m, sizeof(m)) < 0)
			_exit(HM_EXIT_TOOL);
		_exit(HM_EXIT_TOOL);
	}
	close(procs_fd);
	execvp(cmd[0], cmd);
	m.stage = 1;
	m.err = errno;
	if (write(pipe_fd, &m, sizeof(m)) < 0)
		_exit(HM_EXIT_NOEXEC);
	_exit(m.err == ENOENT ? HM_EXIT_NOENT : HM_EXIT_NOEXEC);
}

/* What the child said; 0 once it has exec'd. */
static int spawn_result(struct hm_session *s, int pipe_fd)
{
	struct spawn_msg m;
	ssize_t n;

	do
		n = read(pipe_fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
	close(pipe_fd);
	if (n != sizeof(m))
		return 0;
	while (waitpid(s->child, NULL, 0) < 0 && errno == EINTR)
		;
	s->child = 0;
	fwd_child = 0;
	if (m.stage == 0) {
		hm_err("cannot move the command into /%s: %s", s->cg,
		       strerror(m.err));
		return HM_EXIT_TOOL;
	}
	hm_err("cannot run %s: %s", s->cmd[0], strerror(m.err));
	return m.err == ENOENT ? HM_EXIT_NOENT : HM_EXIT_NOEXEC;
}

/* fork; the child writes itself into cgroup.procs before it execs. */
static int spawn(struct hm_session *s)
{
	char path[HM_PATH];
	int pfd[2], procs;

	if (hm_cg_file(path, sizeof(path), s->cg, "cgroup.procs"))
		return HM_EXIT_TOOL;
	procs = open(path, O_WRONLY | O_CLOEXEC | (hm_fake() ? O_CREAT : 0), 0644);
	if (procs < 0 || pipe2(pfd, O_CLOEXEC)) {
		hm_err("cannot open %s: %s", path, strerror(errno));
		if (procs >= 0)
			close(procs);
		return HM_EXIT_TOOL;
	}
	fflush(NULL);
	s->child = fork();
	if (s->child == 0)
		child_exec(s->cmd, procs, pfd[1]);
	close(procs);
	close(pfd[1]);
	if (s->child < 0) {
		hm_err("fork: %s", strerror(errno));
		close(pfd[0]);
		return HM_EXIT_TOOL;
	}
	fwd_child = s->child;
	return spawn_result(s, pfd[0]);
}

/* One record row; a failure ends the recording, not the session. */
static void record_tick(struct hm_session *s)
{
	int err;

	if (!s->recording)
		return;
	err = hm_rec_row(&s->rec);
	if (!err)
		return;
	hm_warn("recording stopped after %d rows%s", s->rec.rows,
		err == -ENOENT ? ": the cgroup is gone" : "");
	hm_rec_close(&s->rec, false);
	s->recording = false;
}

/* Sleep to the next row's time (or a signal); take the row when due. */
static void tick_wait(struct hm_session *s, double *next, double max_sleep)
{
	double now = hm_mono(), step = s->interval_ms / 1000.0;

	if (!s->recording) {
		hm_sleep(max_sleep);
		return;
	}
	hm_sleep(*next - now < max_sleep ? *next - now : max_sleep);
	now = hm_mono();
	if (now < *next)
		return;
	record_tick(s);
	*next += step;
	if (*next < now)
		*next = now + step;
}

static int wait_child(struct hm_session *s)
{
	double next = hm_mono() + s->interval_ms / 1000.0;
	int status = 0;
	pid_t r;

	for (;;) {
		r = waitpid(s->child, &status, s->recording ? WNOHANG : 0);
		if (r == s->child)
			break;
		if (r < 0 && errno != EINTR) {
			hm_err("waitpid: %s", strerror(errno));
			return HM_EXIT_TOOL;
		}
		if (r == 0)
			tick_wait(s, &next, 3600);
	}
	s->child = 0;
	fwd_child = 0;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* run, record -- CMD: the command's exit status, or 125-127. */
int hm_session_run(struct hm_session *s)
{
	bool started;
	int status;

	hm_signals_catch();
	if (hm_session_prepare(s)) {
		if (s->recording)
			hm_rec_close(&s->rec, true);
		return HM_EXIT_TOOL;
	}
	if (hm_session_setup(s)) {
		hm_session_undo(s, true);
		return HM_EXIT_TOOL;
	}
	if (hm_signal) {
		hm_session_undo(s, true);
		return 128 + hm_signal;
	}
	record_tick(s);
	status = spawn(s);
	started = !status;
	if (started)
		status = wait_child(s);
	record_tick(s);
	if (hm_session_undo(s, !started) && !status)
		status = HM_EXIT_TOOL;
	return status;
}

/* The cgroup @pid is in now, relative to the mount ("" for the root). */
static int proc_cgroup(pid_t pid, char *rel, size_t len)
{
	char path[64], buf[HM_PATH], *p;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (hm_read(path, buf, sizeof(buf)) < 0)
		return -ESRCH;
	p = strstr(buf, "0::/");
	if (!p || (p != buf && p[-1] != '\n'))
		return -ENOENT;
	p += 4;
	snprintf(rel, len, "%.*s", (int)strcspn(p, "\n"), p);
	return 0;
}

static void move_back(struct hm_session *s, int n)
{
	char pid[32];
	int i;

	for (i = 0; i < n; i++) {
		if (!hm_proc_alive(s->pids[i], s->pid_start[i]))
			continue;
		snprintf(pid, sizeof(pid), "%d", (int)s->pids[i]);
		if (hm_cg_write(s->orig_cg[i], "cgroup.procs", pid))
			hm_warn("cannot move pid %s back to /%s", pid, s->orig_cg[i]);
	}
}

static int move_in(struct hm_session *s)
{
	char pid[32];
	int i, err;

	for (i = 0; i < s->npids; i++) {
		snprintf(pid, sizeof(pid), "%d", (int)s->pids[i]);
		err = hm_cg_write(s->cg, "cgroup.procs", pid);
		if (err) {
			hm_err("cannot move pid %s into /%s: %s%s", pid, s->cg,
			       strerror(-err), err == -EBUSY ?
			       " (the cgroup has child cgroups with controllers: use a leaf)" : "");
			move_back(s, i);
			return err;
		}
	}
	return 0;
}

static bool any_alive(const struct hm_session *s)
{
	int i;

	for (i = 0; i < s->npids; i++)
		if (hm_proc_alive(s->pids[i], s->pid_start[i]))
			return true;
	return false;
}

/* attach: 0 once the processes exited or a signal came, 1 on failure. */
int hm_session_attach(struct hm_session *s)
{
	double next = hm_mono() + s->interval_ms / 1000.0;
	int i, err;

	hm_signals_catch();
	s->orig_cg = calloc(s->npids, sizeof(*s->orig_cg));
	err = s->orig_cg ? hm_session_prepare(s) : -ENOMEM;
	for (i = 0; !err && i < s->npids; i++)
		err = proc_cgroup(s->pids[i], s->orig_cg[i], HM_PATH);
	if (err) {
		if (s->recording)
			hm_rec_close(&s->rec, true);
		free(s->orig_cg);
		return HM_EXIT_FAIL;
	}
	err = hm_session_setup(s);
	if (!err)
		err = move_in(s);
	if (!err) {
		record_tick(s);
		while (!hm_signal && any_alive(s))
			tick_wait(s, &next, 0.2);
		record_tick(s);
		if (hm_signal)
			move_back(s, s->npids);
	}
	if (hm_session_undo(s, err != 0))
		err = -EIO;
	free(s->orig_cg);
	return err ? HM_EXIT_FAIL : HM_EXIT_OK;
}
