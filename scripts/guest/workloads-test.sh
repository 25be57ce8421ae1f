#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest for guest_job=workloads: the quick mode of the
# workloads benchmark (bench-workloads.sh) as a test suite,
# htmm_workloads, framed like run-tests.sh.  Every workload runs small
# (bench_mb, default 24 MiB; bench_work, default 0.02) at fast:slow 1:4
# under every configuration that needs no plugin.  Per run it checks that
# the workload ran to its end and its own check of its result passed, and
# that the placement obeys the configuration:
#   all-fast   at most 2% of the cgroup's anon memory on node 1;
#   none       node 0 holds at most the budget plus the gap between node
#              0's high and min watermarks (the filler leaves the budget
#              above the high watermark; allocations may go down to min);
#   htmm-abit  node 0 holds at most the budget (memory.max_at_node0) plus
#              2 MiB, the overrun the admin guide allows (unflushed
#              statistics, LRU batches).
# The figures are printed as they are (no plugin: wall-clock time only).
export bench_ratio=4 bench_mb=${bench_mb:-24} bench_work=${bench_work:-0.02}
export bench_workloads=${bench_workloads:-redis xslookup graph500 btree liblinear pagerank}
export bench_configs=${bench_configs:-all-fast none autonuma damon htmm-abit}
OUT=/tmp/workloads.out
N=0
FAIL=0
ok() { N=$((N + 1)); echo "ok $N - $1"; }
nok() { N=$((N + 1)); FAIL=$((FAIL + 1)); echo "not ok $N - $1"; shift; for l in "$@"; do echo "# $l"; done; }

echo "# htmm-guest: begin"
echo "# htmm-suite: htmm_workloads"
set -- $bench_workloads
nw=$#
set -- $bench_configs
echo "1..$((nw * $#))"
t0=$(cut -d. -f1 /proc/uptime)
/htmm/bench-workloads.sh > $OUT 2>&1
sed 's/^/# /' $OUT
gap=$(awk '$1 == "Node" { n = $2 } n == "0," && $1 == "high" { s += $2 }
	   n == "0," && $1 == "min" { s -= $2 } END { print s * 4 }' /proc/zoneinfo)
# One run's block of $OUT: from "bench run workload $1 config $2" to its end.
block() {
	awk -v w="$1" -v c="$2" '$1 == "bench" && $2 == "run" && $3 == "workload" {
		p = ($4 == w && $6 == c) } p' $OUT
}
for c in $bench_configs; do
	for w in $bench_workloads; do
		b=$(block "$w" "$c")
		budget=$(echo "$b" | awk '$2 == "run" { print $14 }')
		set -- $(echo "$b" | awk '$2 == "nodes_end_kb" { print $3, $4 }')
		n0=${1:-0} n1=${2:-0}
		why=
		echo "$b" | grep -q '^bench run end' || why="the run did not end"
		echo "$b" | grep -q '^bench exit 0$' || why="$why; the workload exited non-zero"
		echo "$b" | grep -q '^bench wl check ok' || why="$why; its check did not pass"
		case "$c" in
		all-fast) [ $((n1 * 50)) -le $((n0 + n1)) ] ||
			why="$why; $n1 KiB of $((n0 + n1)) on node 1" ;;
		none) [ "$n0" -le $((budget + gap)) ] ||
			why="$why; node 0 holds $n0 KiB, more than the budget $budget + $gap" ;;
		damon) for k in 0 1; do
			echo "$b" | grep -q "^bench damon kdamond $k state on .* filters young memcg" ||
				why="$why; kdamond $k is not on with its young and memcg filters"
		done ;;
		htmm-abit) [ "$n0" -le $((budget + 2048)) ] ||
			why="$why; node 0 holds $n0 KiB, more than the budget $budget + 2048" ;;
		esac
		secs=$(echo "$b" | awk '$2 == "wl" && $3 == "end" { print $5 }')
		what="$w under $c: node 0 $n0 KiB, node 1 $n1 KiB, budget $budget KiB, ${secs:-?} s"
		if [ -z "$why" ]; then ok "$what"; else nok "$what" "${why#; }"; fi
	done
done
echo "# htmm-time: htmm_workloads $(( $(cut -d. -f1 /proc/uptime) - t0 )) s"
echo "# htmm-exit: htmm_workloads $FAIL"
echo "# htmm-guest: end"
