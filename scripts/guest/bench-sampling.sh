#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: sampling benchmarks (ingestion cost, ksamplingd CPU
# against its quota, Accessed-bit scan cost).  Prints figures only.
H=/sys/kernel/mm/htmm
CG=/sys/fs/cgroup/bench
stat() { grep "^$1 " $CG/memory.htmm_stat | cut -d' ' -f2; }
mkdir -p $CG

echo "### ingestion cost (injector, 64 MiB of base pages)"
echo inject > $H/htmm_sampler
echo 2147483647 > $H/htmm_cooling_period
echo enabled > $CG/memory.htmm_enabled
sh -c "echo \$\$ > $CG/cgroup.procs && exec /htmm/bin/injbench 64"
echo disabled > $CG/memory.htmm_enabled

# One 60 s abit run with scans $1 ms apart: ksamplingd CPU each second.
abit_run() {
echo "### abit, scans $1 ms apart: ksamplingd CPU each second of 60 s and scan cost, hot/cold workload (256 MiB cold, 64 MiB hot)"
echo abit > $H/htmm_sampler
echo "$1" > $H/htmm_abit_interval_ms
echo 30 > $H/ksampled_soft_cpu_quota
echo enabled > $CG/memory.htmm_enabled
# The abit counters are system-wide and count on: this run's are the rise.
s0=$(stat samples_abit); n0=$(stat abit_scans)
e0=$(stat abit_scanned_entries); ns0=$(stat abit_scan_cpu_ns)
sh -c "echo \$\$ > $CG/cgroup.procs && exec /htmm/bin/hotcold --cold 256 --hot 64 --seconds 66" &
w=$!
i=0
line=
while [ $i -lt 60 ]; do
	sleep 1
	i=$((i + 1))
	line="$line $(stat ksamplingd_cpu_permille)"
	if [ $((i % 10)) -eq 0 ]; then
		echo "t=$((i - 9))..${i}s ksamplingd_cpu_permille (quota 30):$line"
		line=
	fi
done
echo "samples_abit $(( $(stat samples_abit) - s0 )) abit_scans $(( $(stat abit_scans) - n0 ))"
wait $w
e=$(( $(stat abit_scanned_entries) - e0 )); ns=$(( $(stat abit_scan_cpu_ns) - ns0 ))
echo "abit: $(( $(stat abit_scans) - n0 )) scans, $e page-table entries, $((ns / 1000000)) ms of CPU:" \
	"$(( ns / (e + 1) )) ns per entry; sampler_level $(stat sampler_level)"
echo disabled > $CG/memory.htmm_enabled
}
# The default interval: the scan needs less than the quota here.
abit_run 1000
# Scans 100 ms apart would take more than the quota: it must hold.
abit_run 100

echo "### perf source on software page faults: quota control (period 1, quota 30 per mille)"
echo sw-page-faults > $H/htmm_perf_event
echo pebs > $H/htmm_sampler
echo 1 > $H/htmm_sample_period
echo 1 > $H/htmm_inst_sample_period
echo enabled > $CG/memory.htmm_enabled
sh -c "echo \$\$ > $CG/cgroup.procs; i=0; while [ \$i -lt 60 ]; do /htmm/bin/placement 32 >/dev/null; i=\$((i+1)); done" &
w=$!
i=0
while [ $i -lt 6 ]; do
	sleep 5
	echo "t=$(( (i + 1) * 5 ))s ksamplingd_cpu_permille $(stat ksamplingd_cpu_permille)" \
		"sample_period $(stat sample_period) samples_pebs $(stat samples_pebs) dropped $(stat samples_dropped)"
	i=$((i + 1))
done
kill $w 2>/dev/null
wait $w 2>/dev/null
echo disabled > $CG/memory.htmm_enabled
rmdir $CG
