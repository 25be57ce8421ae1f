#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: Redis snapshots under CCoW (scripts/bench.sh
# ccow-redis).  Per configuration, a fresh redis-server (Debian's) in its
# own cgroup saves a snapshot with BGSAVE whenever a record changed in the
# last 2 seconds (save "2 1"): a forked child writes the data set out
# while the server keeps taking updates.  Our YCSB client loads
# bench_mb MiB of records (default 128), then runs workload A (50% reads,
# 50% updates, scrambled zipfian) for bench_ops operations (default
# 60000).  Configurations (bench_configs, commas): cow, cow-thp (THP
# "always", as Redis runs with --disable-thp no), ccow-t0, ccow-t50,
# ccow-t80, ccow-t90 (2 MiB regions, THP "never"), ccow-huge-t0 (THP
# "always", huge-page copies).  Per run it prints the client's phase line
# (ops_per_s), the snapshots the server finished, the most the cgroup's
# memory rose above its level after the load (sampled every 100 ms), and
# the cgroup's CCoW counters over the run ("stat KEY DELTA").
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu
exec > /dev/ttyS1 2>&1
. /htmm/ccow-lib.sh
H=/sys/kernel/mm/htmm
THP=/sys/kernel/mm/transparent_hugepage/enabled
mb=${bench_mb:-128}
ops=${bench_ops:-60000}
configs=$(echo "${bench_configs:-cow,cow-thp,ccow-t0,ccow-t50,ccow-t80,ccow-t90,ccow-huge-t0}" | tr , ' ')

echo "+memory" > /sys/fs/cgroup/cgroup.subtree_control


# The tunables and THP mode of configuration $1.
setup() {
	echo never > $H/htmm_ccow_enabled
	echo 2048 > $H/htmm_ccow_region_kb
	echo 2048 > $H/htmm_ccow_max_sync_kb
	echo 1 > $H/htmm_ccow_huge
	echo never > $THP
	case "$1" in
	cow) ;;
	cow-thp) echo always > $THP ;;
	ccow-t*) echo "${1#ccow-t}" > $H/htmm_ccow_threshold
		 echo always > $H/htmm_ccow_enabled ;;
	ccow-huge-t*) echo "${1#ccow-huge-t}" > $H/htmm_ccow_threshold
		      echo always > $H/htmm_ccow_enabled
		      echo always > $THP ;;
	*) return 1 ;;
	esac
}

# Wait until process $1 has stopped itself (or is gone).
wait_stopped() {
	until [ "$(cut -d' ' -f3 /proc/$1/stat 2> /dev/null)" = T ]; do
		kill -0 "$1" 2> /dev/null || return 1
		sleep 0.05
	done
}

echo "bench ccow-redis mb $mb ops $ops"
for c in $configs; do
	setup "$c" || { echo "bench: unknown configuration $c"; exit 1; }
	echo "### run redis $c"
	cg=/sys/fs/cgroup/redis-$c
	mkdir -p $cg
	rm -rf /tmp/redis && mkdir -p /tmp/redis
	sh -c "echo \$\$ > $cg/cgroup.procs && exec redis-server --port 0 \
		--unixsocket /tmp/redis/sock --unixsocketperm 700 \
		--save '2 1' --appendonly no --daemonize no --io-threads 1 \
		--jemalloc-bg-thread no --disable-thp no --activedefrag no \
		--rdbcompression no --maxmemory 0 --loglevel notice \
		--dir /tmp/redis --logfile /tmp/redis/log" &
	srv=$!
	i=0
	until [ -S /tmp/redis/sock ] || [ $i -ge 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	# The client stops itself at the start and the end of its measured
	# phase (wl.h's WL_FIFO), after the load and before its checks.
	rm -f /tmp/wl.fifo && mkfifo /tmp/wl.fifo
	exec 3<> /tmp/wl.fifo
	WL_FIFO=/tmp/wl.fifo /htmm/wl/ycsb --sock /tmp/redis/sock --mb "$mb" \
		--ops "$ops" --phases A > /tmp/run.out 2>&1 &
	cli=$!
	read -r word <&3
	wait_stopped $cli
	ccow_stats_begin $cg
	base=$(cat $cg/memory.current)
	peak=$base
	kill -CONT $cli
	# Sample until the client stops itself at the end (or is gone).
	while :; do
		m=$(cat $cg/memory.current)
		[ "$m" -gt "$peak" ] && peak=$m
		sleep 0.1
		st=$(cut -d' ' -f3 /proc/$cli/stat 2> /dev/null)
		[ "$st" = T ] || [ -z "$st" ] && break
	done
	[ -z "$st" ] || read -r word <&3
	kill -CONT $cli
	wait $cli
	echo "### exit $?"
	grep '^wl result phase\|^wl check\|^wl result records' /tmp/run.out
	echo "snapshots $(grep -c 'Background saving terminated with success' /tmp/redis/log)"
	echo "mem_extra_kb $(((peak - base) / 1024)) base_kb $((base / 1024))"
	kill $srv
	wait $srv 2> /dev/null
	ccow_stats_end $cg
	rmdir $cg 2> /dev/null
done
echo never > $H/htmm_ccow_enabled
echo "### done"
