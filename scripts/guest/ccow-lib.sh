#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Sourced by the CCoW benchmarks' guest scripts (bench-ccow.sh,
# bench-ccow-redis.sh): the CCoW counters of a cgroup over a run.

# Snapshot cgroup $1's CCoW counters (memory.htmm_stat) before a run.
ccow_stats_begin() {
	grep '^ccow_' "$1/memory.htmm_stat" > /tmp/ccow.before
}

# Print "stat KEY DELTA" for each CCoW counter of cgroup $1 since then.
ccow_stats_end() {
	grep '^ccow_' "$1/memory.htmm_stat" | while read -r k v; do
		echo "stat $k $((v - $(awk -v k="$k" '$1 == k { print $2 }' /tmp/ccow.before)))"
	done
}
