// SPDX-License-Identifier: GPL-2.0
/*
 * Print the host's TSC frequency in kHz, measured against
 * CLOCK_MONOTONIC_RAW over about 200 ms.
 *
 * Under TCG, QEMU's x86 guest reads the host's TSC (plus an offset), so
 * this is the guest's TSC frequency too.  run-vm.sh passes it to the
 * guest as tsc_early_khz=, because the guest's own calibration fails on
 * a loaded host: the emulated-PEBS guest once took the PIT's 532.6 MHz
 * over the HPET's 2445.7 MHz, its clock ran 4.6 times too fast, and it
 * reported an RCU stall before its watchdog dropped the TSC.
 *
 * Each reading pairs a clock read with the TSC reads around it, and
 * keeps the tightest of several pairs, so a preemption in between costs
 * nothing.  Exits 1 (printing nothing) where the TSC is not constant.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

struct pair {
	uint64_t tsc;	/* midpoint of the two TSC reads */
	uint64_t ns;
};

static struct pair read_pair(void)
{
	struct pair best = { 0, 0 };
	uint64_t gap = UINT64_MAX;
	struct timespec ts;
	int i;

	for (i = 0; i < 64; i++) {
		uint64_t a = __rdtsc(), b;

		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		b = __rdtsc();
		if (b - a < gap) {
			gap = b - a;
			best.tsc = a + (b - a) / 2;
			best.ns = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
		}
	}
	return best;
}

static int constant_tsc(void)
{
	char line[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int ok = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "flags", 5)) {
			ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
			break;
		}
	}
	fclose(f);
	return ok;
}

int main(void)
{
	struct timespec gap = { 0, 200000000 };
	struct pair p0, p1;

	if (!constant_tsc())
		return 1;
	p0 = read_pair();
	nanosleep(&gap, NULL);
	p1 = read_pair();
	if (p1.ns <= p0.ns || p1.tsc <= p0.tsc)
		return 1;
	printf("%llu\n", (unsigned long long)((p1.tsc - p0.tsc) * 1000000ull /
					      (p1.ns - p0.ns)));
	return 0;
}
