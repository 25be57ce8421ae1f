#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: one run of the convergence scenario under one tiering
# configuration, given on the kernel command line:
#   bench_config=none|autonuma|damon|htmm-abit|htmm-inject
#   bench_seconds=N (default 60)  bench_cold=MIB (400)  bench_hot=MIB (128)
#   bench_budget=SIZE (htmm's memory.max_at_node0, default 256M)
# Everything it prints goes to the results port (ttyS1); the host side
# (scripts/bench.sh tiering) builds the table.
H=/sys/kernel/mm/htmm
D=/sys/kernel/mm/damon/admin/kdamonds
CG=/sys/fs/cgroup/bench
config=${bench_config:-none}
seconds=${bench_seconds:-60}
cold=${bench_cold:-400}
hot=${bench_hot:-128}
budget=${bench_budget:-256M}
inject=

exec > /dev/ttyS1 2>&1

# Physical byte range "start end" of a node, from /proc/zoneinfo.
node_range() {
	awk -v node="$1" '
		$1 == "Node" { n = $2; sub(",", "", n) }
		$1 == "spanned" { sp = $2 }
		$1 == "start_pfn:" && n == node && sp > 0 {
			if (min == "" || $2 < min) min = $2
			if ($2 + sp > max) max = $2 + sp
		}
		END { printf "%.0f %.0f\n", min * 4096, max * 4096 }' /proc/zoneinfo
}

# DAMON kdamond $1 watches node $2 and applies $3 towards node $4.
damon_kdamond() {
	K=$D/$1/contexts
	echo 1 > $K/nr_contexts
	echo paddr > $K/0/operations
	echo 5000 > $K/0/monitoring_attrs/intervals/sample_us
	echo 100000 > $K/0/monitoring_attrs/intervals/aggr_us
	echo 1000000 > $K/0/monitoring_attrs/intervals/update_us
	echo 10 > $K/0/monitoring_attrs/nr_regions/min
	echo 1000 > $K/0/monitoring_attrs/nr_regions/max
	echo 1 > $K/0/targets/nr_targets
	echo 1 > $K/0/targets/0/regions/nr_regions
	set -- "$@" $(node_range "$2")
	echo "bench damon kdamond $1: $3 of node $2 [$5, $6) to node $4"
	echo "$6" > $K/0/targets/0/regions/0/end
	echo "$5" > $K/0/targets/0/regions/0/start
	echo 1 > $K/0/schemes/nr_schemes
	S=$K/0/schemes/0
	echo "$3" > $S/action
	echo "$4" > $S/target_nid
	# Every range defaults to [0, 0].
	echo 4096 > $S/access_pattern/sz/min
	echo 4294967295 > $S/access_pattern/sz/max
	echo 4294967295 > $S/access_pattern/age/max
	if [ "$3" = migrate_hot ]; then
		echo 1 > $S/access_pattern/nr_accesses/min
		echo 4294967295 > $S/access_pattern/nr_accesses/max
	else
		echo 0 > $S/access_pattern/nr_accesses/max
		echo 10 > $S/access_pattern/age/min
	fi
	# The same rate limit as htmm's default, 1 GiB/s.
	echo 1073741824 > $S/quotas/bytes
	echo 1000 > $S/quotas/reset_interval_ms
	echo on > $D/$1/state
}

# CPU time (ms) of the tiering kernel threads.
kthread_ms() {
	t=0
	for p in /proc/[0-9]*; do
		case "$(cat $p/comm 2>/dev/null)" in
		ksamplingd|kmigraterd*|kdamond*)
			t=$((t + $(awk '{ print $14 + $15 }' $p/stat) * 10)) ;;
		esac
	done
	echo $t
}

mkdir -p $CG
case "$config" in
none) ;;
autonuma)
	echo 2 > /proc/sys/kernel/numa_balancing
	echo true > /sys/kernel/mm/numa/demotion_enabled ;;
damon)
	echo 2 > $D/nr_kdamonds
	damon_kdamond 0 1 migrate_hot 0
	damon_kdamond 1 0 migrate_cold 1 ;;
htmm-abit|htmm-inject)
	if [ "$config" = htmm-abit ]; then
		echo abit > $H/htmm_sampler
	else
		echo inject > $H/htmm_sampler
		inject="--inject ${bench_inject:-40000}"
	fi
	echo "$budget" > $CG/memory.max_at_node0
	echo enabled > $CG/memory.htmm_enabled ;;
*) echo "bench: unknown configuration $config"; exit 1 ;;
esac

echo "bench config $config seconds $seconds cold $cold hot $hot budget $budget"
k0=$(kthread_ms)
sh -c "echo \$\$ > $CG/cgroup.procs && exec /htmm/bin/converge --cold $cold --hot $hot --seconds $seconds $inject"
echo "bench kthread_ms $(( $(kthread_ms) - k0 ))"
if [ "$config" = damon ]; then
	for k in 0 1; do
		echo update_schemes_stats > $D/$k/state
		S=$D/$k/contexts/0/schemes/0
		echo "bench damon kdamond $k state $(cat $D/$k/state)" \
			"tried $(cat $S/stats/sz_tried) applied $(cat $S/stats/sz_applied)" \
			"quota_exceeds $(cat $S/stats/qt_exceeds)"
	done
fi
if [ -f $CG/memory.htmm_stat ]; then
	sed 's/^/bench htmm_stat /' $CG/memory.htmm_stat
fi
grep -E '^(pgpromote_success|pgdemote_[a-z]+|pgmigrate_success|pgmigrate_fail) ' /proc/vmstat |
	sed 's/^/bench vmstat /'
echo "bench end"
