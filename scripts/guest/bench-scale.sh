#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: one run of the scale benchmark, how htmm's own cost
# grows with the number of enabled cgroups and the size of the fast node.
#   bench_cgroups=N (default 1)  bench_seconds=S (default 30)
#   bench_nice=K (default 0): the workloads run at nice K
#   bench_over=1: each budget is half the cgroup's hot data instead, so
#     that hot data alike waits in the fill bin for good, with nothing
#     colder left on node 0 (the steady state of the fill walks)
# N cgroups are started together, each with the converge workload: cold
# memory on node 0 (half of node 0 in all), hot memory on node 1 (an
# eighth of node 0 in all), 40000 injected samples a second in all, and a
# budget of half its memory on node 0, so that every cgroup demotes cold
# pages and promotes hot ones.  Printed at the end: the CPU time of
# ksamplingd and of the kmigraterd threads, the pages moved, the pages the
# demotion walks looked at (demotion_lru_seen), and each cgroup's seconds
# to 95% of its hot data on node 0; and, for the last 10 s of the
# workloads (the steady state), kmigraterd's CPU time and the pages the
# demotion walks looked at.  The threads' CPU times come from an
# `htmm record` that runs all along; its own CPU time is printed too.
# Everything it prints goes to the results port (ttyS1); the host side is
# scripts/bench.sh scale.
H=/sys/kernel/mm/htmm
n=${bench_cgroups:-1}
seconds=${bench_seconds:-30}
nice=${bench_nice:-0}
over=${bench_over:-0}

exec > /dev/ttyS1 2>&1

# The pages the demotion walks of all the scale cgroups have looked at.
lru_seen() {
	cat /sys/fs/cgroup/scale*/memory.htmm_stat |
		awk '$1 == "demotion_lru_seen" { s += $2 } END { print s + 0 }'
}

# The kernel threads' CPU comes from `htmm record` (one row a second,
# cgroup scale1): rec_start, rec_stop and rec_ms of record-lib.sh.
REC=/tmp/scale-record.csv
. /htmm/record-lib.sh

# The CPU time (ms) of process $1.
proc_ms() {
	awk '{ print ($14 + $15) * 10 }' "/proc/$1/stat"
}

fast_mb=$(awk '/MemTotal/ { print int($4 / 1024) }' \
	/sys/devices/system/node/node0/meminfo)
cold=$((fast_mb / 2 / n))
hot=$((fast_mb / 8 / n))
[ "$hot" -ge 1 ] || hot=1
[ "$cold" -ge 1 ] || cold=1
budget=$(((cold + hot) / 2))
[ "$over" = 1 ] && budget=$(((hot + 1) / 2))
rate=$((40000 / n))
echo inject > $H/htmm_sampler
echo 200000 > $H/htmm_cooling_period
echo "bench scale cgroups $n fast_mb $fast_mb cold $cold hot $hot budget $budget rate $rate seconds $seconds nice $nice over $over"
i=1
while [ $i -le $n ]; do
	mkdir -p /sys/fs/cgroup/scale$i
	echo "${budget}M" > /sys/fs/cgroup/scale$i/memory.max_at_node0
	echo enabled > /sys/fs/cgroup/scale$i/memory.htmm_enabled
	i=$((i + 1))
done
rec_start scale1
t0=$(date +%s)
i=1
pids=
while [ $i -le $n ]; do
	sh -c "echo \$\$ > /sys/fs/cgroup/scale$i/cgroup.procs && renice -n $nice -p \$\$ > /dev/null && exec /htmm/bin/converge --cold $cold --hot $hot --seconds $seconds --inject $rate" \
		> /tmp/scale$i.out 2>&1 &
	pids="$pids $!"
	i=$((i + 1))
done
steady=10
[ "$seconds" -gt $((steady * 2)) ] || steady=$((seconds / 2))
# The window is the last $steady s of the workloads: starting many of
# them takes seconds of its own under TCG.
left=$((t0 + seconds - steady - $(date +%s)))
[ "$left" -le 0 ] || sleep "$left"
l1=$(lru_seen)
t1=$(date +%s)
# shellcheck disable=SC2086 # a list of pids
wait $pids
t2=$(date +%s)
l2=$(lru_seen)
rec_cpu=$(proc_ms $recpid)
rec_stop
echo "bench steady_s $((t2 - t1))"
echo "bench steady_kmigraterd_ms $(rec_ms kmigraterd $t1)"
echo "bench steady_lru_seen $((l2 - l1))"
echo "bench wall_s $((t2 - t0))"
echo "bench ksamplingd_ms $(rec_ms ksamplingd $t0)"
echo "bench kmigraterd_ms $(rec_ms kmigraterd $t0)"
echo "bench record_rows $(($(wc -l < $REC) - 1))"
echo "bench record_cpu_ms $rec_cpu"
i=1
while [ $i -le $n ]; do
	f=/sys/fs/cgroup/scale$i/memory.htmm_stat
	echo "bench cgroup $i $(grep '^result' /tmp/scale$i.out)" \
		"promoted $(awk '$1 == "promoted" { print $2 }' $f)" \
		"demoted $(awk '$1 == "demoted" { print $2 }' $f)" \
		"lru_seen $(awk '$1 == "demotion_lru_seen" { print $2 }' $f)"
	i=$((i + 1))
done
echo "bench end"
