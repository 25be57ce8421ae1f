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

. /htmm/tiering-lib.sh

# CPU time of the kernel threads, from `htmm record` (record-lib.sh):
# htmm's, DAMON's kdamonds and the kswapds (NUMA balancing demotes there).
REC=/tmp/tiering-record.csv
. /htmm/record-lib.sh

mkdir -p $CG
case "$config" in
ceiling) extra=--ceiling ;;
*) tier_setup "$config" $CG "$budget" || exit 1
   inject=$tier_inject ;;
esac

echo "bench config $config seconds $seconds cold $cold hot $hot budget $budget scenario $scenario"
rec_start bench --kthread kdamond.0 --kthread kdamond.1 \
	--kthread kswapd0 --kthread kswapd1
sh -c "echo \$\$ > $CG/cgroup.procs && exec /htmm/bin/converge --cold $cold --hot $hot $work --seconds $seconds $inject $extra"
rec_stop
if [ -n "$relay" ]; then
	kill -TERM "$relay"
	wait "$relay"
	sed 's/^/bench /' /tmp/relay.out
fi
echo "bench kthread_ms $(rec_ms 'ksamplingd|kmigraterd|kdamond' 0)"
echo "bench kswapd_ms $(rec_ms kswapd 0)"
echo "bench record_rows $(($(wc -l < $REC) - 1))"
if [ "$config" = damon ]; then
	damon_stats
fi
if [ -f $CG/memory.htmm_stat ]; then
	sed 's/^/bench htmm_stat /' $CG/memory.htmm_stat
fi
grep -E '^(pgpromote_success|pgdemote_[a-z]+|pgmigrate_success|pgmigrate_fail) ' /proc/vmstat |
	sed 's/^/bench vmstat /'
echo "bench end"
