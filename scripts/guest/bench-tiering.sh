#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: one run of a tiering scenario under one tiering
# configuration, given on the kernel command line:
#   bench_scenario=converge   400 MiB cold on node 0, 128 MiB hot on node 1
#                  skewed     the hot region is 256 MiB of huge pages of
#                             which 4 subpages each are hot (2 MiB in all);
#                             htmm's budget is 64 MiB
#                  uniform    the converge scenario with huge pages
#   bench_config=none|autonuma|damon|htmm-abit|htmm-inject|ceiling
#                |htmm-split|htmm-nosplit|htmm-epebs|htmm-epebs-nosplit
#   (ceiling: no migration, the hot region starts in the fast tier;
#    htmm-split/-nosplit: injected samples, htmm_mode 2 or 1;
#    htmm-epebs/-nosplit: the samples of the QEMU plugin's emulated PEBS,
#    through epebs_relay, htmm_mode 2 or 1; the host boots these under
#    the plugin, scripts/run-vm.sh --pebs)
#   bench_seconds=N (default 60)  bench_budget=SIZE (memory.max_at_node0)
#   bench_inject=RATE (samples a second, default 40000)
# With injected samples the cooling period is 200000 samples, 5 s at the
# injection rate (the default suits hardware sample rates), so that split
# rounds happen within the run.
# Everything it prints goes to the results port (ttyS1); the host side
# (scripts/bench.sh tiering) builds the table.
H=/sys/kernel/mm/htmm
D=/sys/kernel/mm/damon/admin/kdamonds
CG=/sys/fs/cgroup/bench
config=${bench_config:-none}
scenario=${bench_scenario:-converge}
seconds=${bench_seconds:-60}
cold=400
case "$scenario" in
converge) hot=128 work= budget=${bench_budget:-256M} ;;
skewed) hot=256 work="--thp --skew 4" budget=${bench_budget:-64M} ;;
uniform) hot=128 work=--thp budget=${bench_budget:-256M} ;;
*) echo "bench: unknown scenario $scenario"; exit 1 ;;
esac
inject=
extra=

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

# CPU time of the kernel threads, from `htmm record` (record-lib.sh):
# htmm's, DAMON's kdamonds and the kswapds (NUMA balancing demotes there).
REC=/tmp/tiering-record.csv
. /htmm/record-lib.sh

mkdir -p $CG
case "$config" in
none) ;;
ceiling) extra=--ceiling ;;
autonuma)
	echo 2 > /proc/sys/kernel/numa_balancing
	echo true > /sys/kernel/mm/numa/demotion_enabled ;;
damon)
	echo 2 > $D/nr_kdamonds
	damon_kdamond 0 1 migrate_hot 0
	damon_kdamond 1 0 migrate_cold 1 ;;
htmm-abit|htmm-inject|htmm-split|htmm-nosplit|htmm-epebs|htmm-epebs-nosplit)
	case "$config" in
	htmm-abit) echo abit > $H/htmm_sampler ;;
	htmm-epebs*)
		echo inject > $H/htmm_sampler
		echo 200000 > $H/htmm_cooling_period
		/htmm/bin/epebs_relay > /tmp/relay.out 2>&1 &
		relay=$! ;;
	*)
		echo inject > $H/htmm_sampler
		echo 200000 > $H/htmm_cooling_period
		inject="--inject ${bench_inject:-40000}" ;;
	esac
	case "$config" in *nosplit) echo 1 > $H/htmm_mode ;; esac
	echo "$budget" > $CG/memory.max_at_node0
	echo enabled > $CG/memory.htmm_enabled ;;
*) echo "bench: unknown configuration $config"; exit 1 ;;
esac

echo "bench config $config seconds $seconds cold $cold hot $hot budget $budget scenario $scenario"
rec_start bench --kthread kdamond.0 --kthread kdamond.1 \
	--kthread kswapd0 --kthread kswapd1
sh -c "echo \$\$ > $CG/cgroup.procs && exec /htmm/bin/converge --cold $cold --hot $hot $work --seconds $seconds $inject $extra"
rec_stop
if [ -n "${relay:-}" ]; then
	kill -TERM "$relay"
	wait "$relay"
	sed 's/^/bench /' /tmp/relay.out
fi
echo "bench kthread_ms $(rec_ms 'ksamplingd|kmigraterd|kdamond' 0)"
echo "bench kswapd_ms $(rec_ms kswapd 0)"
echo "bench record_rows $(($(wc -l < $REC) - 1))"
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
