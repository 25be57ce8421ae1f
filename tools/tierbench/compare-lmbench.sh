#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Cross-check tierbench's idle latency against lmbench's lat_mem_rd for the
# same region size and pattern, on the host.
#
# lat_mem_rd -t ("thrash") chains 64-byte slots page after page, pages in
# random order, one slot per page per lap, and faults the pages in while it
# builds the chain, i.e. in the order the chase visits them. tierbench's
# '--pattern lmbench' builds the same chain the same way: that is the
# like-for-like comparison. tierbench's default '--pattern random' is shown
# beside it: it visits lines in a fully random order over memory faulted in
# address order, and reads higher wherever physical locality is rewarded
# (see README.md). lmbench mallocs, and THP in 'madvise' mode leaves that
# on 4 KiB pages, so both use 4 KiB pages. lat_mem_rd sweeps sizes up to the
# one given; its last line is the size compared. Rounds alternate the tools
# so that a change in machine load hits them alike.
#
# usage: compare-lmbench.sh [SIZE_MB [ROUNDS [CPU]]]     (default 1024 3 1)
# lmbench is in Debian's non-free section: apt-get install lmbench
# (with non-free in the apt sources). Override its path with LAT_MEM_RD=.

SIZE=${1:-1024}
ROUNDS=${2:-3}
CPU=${3:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
TB=${TIERBENCH:-$HERE/out/tierbench}
LMB=${LAT_MEM_RD:-/usr/lib/lmbench/bin/x86_64-linux-gnu/lat_mem_rd}

[ -x "$TB" ] || { echo "no $TB: run make first" >&2; exit 2; }
[ -x "$LMB" ] || { echo "no lat_mem_rd at $LMB (apt-get install lmbench, non-free)" >&2; exit 2; }

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

: >/tmp/cmp-lmb.$$
: >/tmp/cmp-tb.$$
: >/tmp/cmp-rnd.$$
i=1
while [ "$i" -le "$ROUNDS" ]; do
	lm=$(taskset -c "$CPU" "$LMB" -t -N 5 "$SIZE" 64 2>&1 |
		awk -v s="$SIZE" '$1 + 0 == s { print $2 }')
	tb=$("$TB" latency --cpu "$CPU" --size "${SIZE}M" --stride 64 \
		--pattern lmbench --page 4k --duration 3 |
		sed -n 's/.*ns_per_load=\([0-9.]*\).*/\1/p')
	rnd=$("$TB" latency --cpu "$CPU" --size "${SIZE}M" --stride 64 \
		--pattern random --page 4k --duration 3 |
		sed -n 's/.*ns_per_load=\([0-9.]*\).*/\1/p')
	echo "round $i: lat_mem_rd -t $SIZE 64: $lm ns | tierbench --pattern lmbench: $tb ns | tierbench --pattern random: $rnd ns"
	echo "$lm" >>/tmp/cmp-lmb.$$
	echo "$tb" >>/tmp/cmp-tb.$$
	echo "$rnd" >>/tmp/cmp-rnd.$$
	i=$((i + 1))
done
lm=$(median </tmp/cmp-lmb.$$)
tb=$(median </tmp/cmp-tb.$$)
rnd=$(median </tmp/cmp-rnd.$$)
rm -f /tmp/cmp-lmb.$$ /tmp/cmp-tb.$$ /tmp/cmp-rnd.$$
awk -v a="$lm" -v b="$tb" -v c="$rnd" 'BEGIN {
	printf "median of %d rounds, region %s MiB, stride 64, 4 KiB pages:\n", '"$ROUNDS"', '"$SIZE"'
	printf "  lat_mem_rd -t               %6.1f ns\n", a
	printf "  tierbench --pattern lmbench %6.1f ns  (%+.1f%%)\n", b, (b - a) / a * 100
	printf "  tierbench --pattern random  %6.1f ns  (%+.1f%%)\n", c, (c - a) / a * 100 }'
