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

say "Tunables in /sys/kernel/mm/htmm/: htmm tune --show"
/htmm/bin/htmm tune --show

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

# Where the hot pages live, second by second: converge faults 400 MiB
# of cold data in on node 0 and 128 MiB of hot data on node 1, then reads
# the hot data at random.  $1: how to start it.
tiering_run() {
	"$@" /htmm/bin/converge --cold 400 --hot 128 --seconds ${DEMO_SECONDS:-30} |
		awk '$1 == "t" { printf "  t=%3ss  hot data on node 0: %5s%%   cold data on node 0: %5s%%   pages migrated: %s\n", $2, $4, $6, $8 }
		     $1 == "result" { print "  95% of the hot data on node 0 after: " ($7 < 0 ? "never" : $7 " s") }'
}
in_cgroup() {
	sh -c "echo \$\$ > $CG/cgroup.procs && exec \"\$@\"" sh "$@"
}
say "Tiering WITHOUT htmm: the hot data stays in the slow tier"
echo disabled > $CG/memory.htmm_enabled
tiering_run in_cgroup
rmdir $CG

say "Tiering WITH htmm: htmm run --sampler abit --budget 0=256M --record FILE -- converge ..."
# The record also goes out on the results port: the host plots it.
REC=/tmp/demo-record.csv
STATUS_AT=${DEMO_STATUS_AT:-10}
(sleep "$STATUS_AT" && /htmm/bin/htmm status > /tmp/demo-status.txt 2>&1) &
tiering_run /htmm/bin/htmm run --sampler abit --budget 0=256M --record $REC --
wait
say "htmm status, taken ${STATUS_AT} s into that run"
cat /tmp/demo-status.txt
say "htmm report $REC"
/htmm/bin/htmm report $REC
[ -c /dev/ttyS1 ] && cat $REC > /dev/ttyS1

say "htmm counters in /proc/vmstat"
grep '^htmm_' /proc/vmstat
