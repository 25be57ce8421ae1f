#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: a short tour of htmm's control surface.
CG=/sys/fs/cgroup/htmm-demo
say() { printf '\n### %s\n' "$*"; }

say "Memory tiers seen by the kernel (lower tier id = faster)"
for t in /sys/devices/virtual/memory_tiering/memory_tier*; do
	echo "${t##*/}: nodes $(cat "$t/nodelist")"
done
for n in /sys/devices/system/node/node[0-9]*; do
	echo "${n##*/}: cpus '$(cat "$n/cpulist")' $(grep MemTotal "$n/meminfo" | awk '{print $4, $5}')"
done

say "Tunables in /sys/kernel/mm/htmm/"
for f in /sys/kernel/mm/htmm/*; do
	printf '%-32s %s\n' "${f##*/}" "$(cat "$f")"
done

say "A bad value is rejected and changes nothing"
echo 0 > /sys/kernel/mm/htmm/htmm_sample_period ||
	echo "(rejected) htmm_sample_period is still $(cat /sys/kernel/mm/htmm/htmm_sample_period)"

say "An htmm cgroup with a 64 MiB fast-tier (node 0) budget"
mkdir -p $CG
echo enabled > $CG/memory.htmm_enabled
echo 64M > $CG/memory.max_at_node0
echo "memory.htmm_enabled:  $(cat $CG/memory.htmm_enabled)"
echo "memory.max_at_node0:  $(cat $CG/memory.max_at_node0)"
echo "memory.max_at_node1:  $(cat $CG/memory.max_at_node1)"

run_in_cgroup() {
	sh -c "echo \$\$ > $CG/cgroup.procs && exec /htmm/bin/placement $*"
}
say "256 MiB of base pages touched inside the cgroup"
run_in_cgroup 256
say "256 MiB of THP touched inside the cgroup"
run_in_cgroup --thp 256
say "The same 256 MiB with htmm disabled for the cgroup (limit not applied)"
echo disabled > $CG/memory.htmm_enabled
run_in_cgroup 256
echo enabled > $CG/memory.htmm_enabled

say "memory.htmm_stat after the placement runs"
grep -E '^(enabled|resident_node|max_at_node|alloc_)' $CG/memory.htmm_stat

say "Sampling: a hot/cold workload (128 MiB cold, 16 MiB hot) under the Accessed-bit sampler"
echo abit > /sys/kernel/mm/htmm/htmm_sampler
echo 200 > /sys/kernel/mm/htmm/htmm_abit_interval_ms
echo 2000 > /sys/kernel/mm/htmm/htmm_adaptation_period
echo max > $CG/memory.max_at_node0
sh -c "echo \$\$ > $CG/cgroup.procs && exec /htmm/bin/hotcold --cold 128 --hot 16 --seconds 25" &
w=$!
sleep 20
grep -E '^(samples_abit|samples_access|hot_threshold|warm_threshold|fast_capacity|cooling_epoch|hist_[0-9]+|ksamplingd_cpu_permille|abit_scans) ' \
	$CG/memory.htmm_stat | grep -v ' 0$'
say "The hot threshold follows the fast-tier budget (max_at_node0)"
for b in max 64M 20M 4M; do
	echo $b > $CG/memory.max_at_node0
	echo "max_at_node0=$b: $(grep -E '^(hot_threshold|warm_threshold) ' $CG/memory.htmm_stat | tr '\n' ' ')"
done
wait $w

say "htmm counters in /proc/vmstat"
grep '^htmm_' /proc/vmstat
echo disabled > $CG/memory.htmm_enabled
rmdir $CG
