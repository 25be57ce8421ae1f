// SPDX-License-Identifier: GPL-2.0
/*
 * epebs_relay: the guest half of the emulated PEBS.  The QEMU plugin
 * (tools/htmm/qemu-plugin/htmm_mem.c, pebs=) sends samples of the
 * guest's memory accesses over a virtio-serial port; this relay injects
 * them into htmm through /sys/kernel/debug/htmm/inject, and sends the
 * plugin the sample periods in force (memory.htmm_stat's sample_period
 * and inst_sample_period, which ksamplingd's quota control may raise) and
 * the answers to its pings, once the samples before them are injected.
 *
 * usage: epebs_relay [--port NAME] [--log FILE] [--log-max N]
 *                    [--stat FILE] [--seconds S]
 *   --port     the virtio port's name (default htmm.epebs)
 *   --log      write the first --log-max (default 100000) samples, as
 *              "<pfn> <kind>", and every period ack ("ack load N",
 *              "ack store N") to FILE
 *   --stat     where the periods in force are read, every 100 ms
 *              (default: the first /sys/fs/cgroup/<name>/memory.htmm_stat
 *              there is then; without one, the tunables)
 *   --seconds  stop after S seconds (default: on SIGINT or SIGTERM)
 *
 * The relay's own work (reading the port, formatting the samples, the
 * period and ping traffic) is left out of the plugin's modelled time: it
 * runs between "xchg %rbx,%rbx" and "xchg %rsi,%rsi", the plugin's marks
 * for that, since real PEBS has no such process.  Its writes to the
 * injector, the kernel's part, are not left out.
 *
 * At the end it prints one line: "epebs_relay: records R loads_fast F
 * loads_slow S stores T injected I inject_errors E pongs P acks A".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define INJECT		"/sys/kernel/debug/htmm/inject"
#define TUNABLES	"/sys/kernel/mm/htmm/"
#define OUT_MAX		(200 * 1024)	/* under the injector's 256 KiB */
#define LINE_MAX_LEN	40

enum { K_LOAD_FAST, K_LOAD_SLOW, K_STORE, K_CTL };
enum { C_PING, C_LOAD_ACK, C_STORE_ACK };

static const char *const kinds[] = { "load-fast", "load-slow", "store" };

static char out[OUT_MAX + LINE_MAX_LEN];
static size_t out_len, out_n;
static int inject_fd, port_fd;
static FILE *logf;
static unsigned long long log_max = 100000, logged;
static unsigned long long n_recs, n_kind[3], n_injected, n_errors, n_pongs,
	n_acks;

/* Whether the relay's vCPU is left out of the plugin's model now. */
static int left_out;

static void model_off(void)
{
	asm volatile("xchg %%rbx, %%rbx" : : : "memory");
	left_out = 1;
}

static void model_on(void)
{
	asm volatile("xchg %%rsi, %%rsi" : : : "memory");
	left_out = 0;
}

/* A signal writes a byte here; the relay polls the other end. */
static int sig_pipe[2];

static void on_signal(int sig)
{
	char c = (char)sig;

	if (write(sig_pipe[1], &c, 1) < 0)
		return;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The device of the virtio port named @name, in @dev. */
static int find_port(const char *name, char *dev, size_t len)
{
	char path[512], buf[128];
	struct dirent *de;
	DIR *d = opendir("/sys/class/virtio-ports");
	FILE *f;
	int found = 0;

	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) &&
		    !strcmp(strtok(buf, "\n") ?: "", name)) {
			snprintf(dev, len, "/dev/%s", de->d_name);
			found = 1;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return found ? 0 : -1;
}

static int write_all(int fd, const char *p, size_t len)
{
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

/* Inject what is pending, in one write. */
static void flush_out(void)
{
	int was_out = left_out;

	if (!out_len)
		return;
	if (was_out)
		model_on();
	if (write(inject_fd, out, out_len) == (ssize_t)out_len)
		n_injected += out_n;
	else
		n_errors++;
	if (was_out)
		model_off();
	out_len = 0;
	out_n = 0;
}

static void control(uint64_t rec)
{
	unsigned int sub = (rec >> 2) & 15;
	unsigned long long val = rec >> 6;
	char line[64];

	if (sub == C_PING) {
		flush_out();
		snprintf(line, sizeof(line), "pong %llu\n", val);
		if (!write_all(port_fd, line, strlen(line)))
			n_pongs++;
	} else if (sub == C_LOAD_ACK || sub == C_STORE_ACK) {
		n_acks++;
		if (logf)
			fprintf(logf, "ack %s %llu\n",
				sub == C_LOAD_ACK ? "load" : "store", val);
	}
}

static void record(uint64_t rec)
{
	unsigned int kind = rec & 3;
	unsigned long long pa = (rec >> 2) << 6;

	n_recs++;
	if (kind == K_CTL) {
		control(rec);
		return;
	}
	n_kind[kind]++;
	out_len += snprintf(out + out_len, LINE_MAX_LEN, "0x%llx %s\n", pa,
			    kinds[kind]);
	out_n++;
	if (logf && logged < log_max) {
		fprintf(logf, "%llu %s\n", pa >> 12, kinds[kind]);
		logged++;
	}
	if (out_len >= OUT_MAX)
		flush_out();
}

/* The periods in force: from @stat (memory.htmm_stat), else tunables. */
static int read_periods(const char *stat, unsigned long long *load,
			unsigned long long *store)
{
	char line[128];
	FILE *f = stat ? fopen(stat, "r") : NULL;
	int n = 0;

	*load = 0;
	*store = 0;
	while (f && fgets(line, sizeof(line), f) && n < 2) {
		n += sscanf(line, "sample_period %llu", load) == 1;
		n += sscanf(line, "inst_sample_period %llu", store) == 1;
	}
	if (f)
		fclose(f);
	if (*load && *store)
		return 0;
	f = fopen(TUNABLES "htmm_sample_period", "r");
	if (!f || fscanf(f, "%llu", load) != 1)
		*load = 0;
	if (f)
		fclose(f);
	f = fopen(TUNABLES "htmm_inst_sample_period", "r");
	if (!f || fscanf(f, "%llu", store) != 1)
		*store = 0;
	if (f)
		fclose(f);
	return *load && *store ? 0 : -1;
}

/* The first cgroup's memory.htmm_stat, looked up each time (cgroups come and go). */
static const char *default_stat(void)
{
	static char path[512];
	glob_t g;

	if (glob("/sys/fs/cgroup/*/memory.htmm_stat", 0, NULL, &g)) {
		globfree(&g);
		return NULL;
	}
	snprintf(path, sizeof(path), "%s", g.gl_pathv[0]);
	globfree(&g);
	return path;
}

/* Tell the plugin the periods when they change. */
static void send_periods(const char *stat, unsigned long long *sent_l,
			 unsigned long long *sent_s)
{
	unsigned long long l, s;
	char line[64];

	if (read_periods(stat ?: default_stat(), &l, &s) ||
	    (l == *sent_l && s == *sent_s))
		return;
	snprintf(line, sizeof(line), "period %llu %llu\n", l, s);
	if (!write_all(port_fd, line, strlen(line))) {
		*sent_l = l;
		*sent_s = s;
		if (logf)
			fprintf(logf, "sent %s", line);
	}
}

/* Until @sig_fd has a signal, or for @seconds (0: no end). */
static void relay(const char *stat, double seconds, int sig_fd)
{
	static unsigned char buf[65536];
	unsigned long long sent_l = 0, sent_s = 0;
	double t0 = now_s(), next_period = 0, first = 0, t;
	struct pollfd p[2] = {
		{ .fd = port_fd, .events = POLLIN },
		{ .fd = sig_fd, .events = POLLIN },
	};
	size_t have = 0, i;
	uint64_t rec;
	ssize_t n;

	model_off();
	while (!seconds || now_s() - t0 < seconds) {
		p[1].revents = 0;
		t = now_s();
		if (t >= next_period) {
			send_periods(stat, &sent_l, &sent_s);
			next_period = t + 0.1;
		}
		model_on();
		n = poll(p, 2, 10);
		model_off();
		if (n <= 0)
			p[0].revents = 0;
		else if (p[1].revents)
			break;
		if (p[0].revents & POLLIN) {
			n = read(port_fd, buf + have, sizeof(buf) - have);
			if (n > 0) {
				have += (size_t)n;
				for (i = 0; i + 8 <= have; i += 8) {
					memcpy(&rec, buf + i, 8);
					record(rec);
				}
				memmove(buf, buf + i, have - i);
				have -= i;
			}
		}
		if (out_len && !first)
			first = now_s();
		/* Pending samples wait 10 ms at most. */
		if (out_len && now_s() - first >= 0.01) {
			flush_out();
			first = 0;
		} else if (!out_len) {
			first = 0;
		}
	}
	model_on();
	flush_out();
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "log", required_argument, NULL, 'l' },
		{ "log-max", required_argument, NULL, 'm' },
		{ "stat", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	const char *name = "htmm.epebs", *stat = NULL;
	double seconds = 0;
	char dev[300];
	int c;

	while ((c = getopt_long(argc, argv, "p:l:m:s:t:", opts, NULL)) != -1) {
		if (c == 'p') {
			name = optarg;
		} else if (c == 'l') {
			logf = fopen(optarg, "w");
			if (!logf) {
				perror(optarg);
				return 1;
			}
		} else if (c == 'm') {
			log_max = strtoull(optarg, NULL, 0);
		} else if (c == 's') {
			stat = optarg;
		} else if (c == 't') {
			seconds = atof(optarg);
		} else {
			fprintf(stderr, "usage: epebs_relay [--port NAME] [--log FILE]\n"
				"       [--log-max N] [--stat FILE] [--seconds S]\n");
			return 2;
		}
	}
	if (find_port(name, dev, sizeof(dev))) {
		fprintf(stderr, "epebs_relay: no virtio port named %s\n", name);
		return 1;
	}
	port_fd = open(dev, O_RDWR | O_CLOEXEC);
	inject_fd = open(INJECT, O_WRONLY | O_CLOEXEC);
	if (port_fd < 0 || inject_fd < 0) {
		perror(port_fd < 0 ? dev : INJECT);
		return 1;
	}
	if (write_all(port_fd, "hello\n", 6)) {
		perror(dev);
		return 1;
	}
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK)) {
		perror("pipe2");
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	relay(stat, seconds, sig_pipe[0]);
	if (logf)
		fclose(logf);
	printf("epebs_relay: records %llu loads_fast %llu loads_slow %llu stores %llu",
	       n_recs, n_kind[K_LOAD_FAST], n_kind[K_LOAD_SLOW], n_kind[K_STORE]);
	printf(" injected %llu inject_errors %llu pongs %llu acks %llu\n",
	       n_injected, n_errors, n_pongs, n_acks);
	return 0;
}
