#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: one run of the CCoW micro-benchmark (tools/htmm/
# ccowbench.c) for every zipfian exponent and configuration:
#   cow            plain copy-on-write, base pages (CCoW never)
#   cow-thp        plain copy-on-write on transparent huge pages
#   ccow-t0 .. -t90  CCoW at threshold 0, 50, 80, 90 (2 MiB regions, base
#                  pages, the whole region copied in the fault)
#   ccow-huge-t0, ccow-huge-t80  CCoW on huge pages, copies of whole huge
#                  pages (htmm_ccow_huge 1)
#   ccow-bounded, ccow-bounded-t0  threshold 80 or 0, at most 256 KiB
#                  copied in the fault, the rest by the worker
# Kernel command line (lists with commas): bench_alphas (0.9,1.0,1.1),
# bench_configs (all),
# bench_mib (384), bench_seconds (20), bench_fork_every (4),
# bench_child_ms (1000), bench_op_iters (1000).  The child lives 1 s, as a
# snapshot of a few hundred MiB to a fast disk does, and each write comes
# with 1000 loop iterations of other work (about 200 k writes a second
# under TCG), so that the parent's writes between two forks leave part of
# the area unwritten, the more the higher the exponent.  Without that
# work, TCG's 3 M writes a second write every page of 256 MiB within the
# child's life at every exponent, and locality makes no difference.
# Each run prints "### run ALPHA CONFIG", ccowbench's output, and the
# cgroup's CCoW counters over the run ("stat KEY DELTA").  Everything goes
# to the results port (ttyS1); the host side is scripts/bench.sh ccow.
exec > /dev/ttyS1 2>&1
. /htmm/ccow-lib.sh
CG=/sys/fs/cgroup/ccowbench
H=/sys/kernel/mm/htmm
THP=/sys/kernel/mm/transparent_hugepage/enabled
alphas=$(echo "${bench_alphas:-0.9,1.0,1.1}" | tr , ' ')
configs=$(echo "${bench_configs:-cow,cow-thp,ccow-t0,ccow-t50,ccow-t80,ccow-t90,ccow-huge-t0,ccow-huge-t80,ccow-bounded,ccow-bounded-t0}" | tr , ' ')
mib=${bench_mib:-384}
seconds=${bench_seconds:-20}
every=${bench_fork_every:-4}
child=${bench_child_ms:-1000}
op=${bench_op_iters:-1000}

echo "+memory" > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p $CG
echo madvise > $THP


# Set the tunables of configuration $1; prints ccowbench's extra options.
setup() {
	echo never > $H/htmm_ccow_enabled
	echo 2048 > $H/htmm_ccow_region_kb
	echo 2048 > $H/htmm_ccow_max_sync_kb
	echo 1 > $H/htmm_ccow_huge
	case "$1" in
	cow) ;;
	cow-thp) echo --thp ;;
	ccow-t*) echo "${1#ccow-t}" > $H/htmm_ccow_threshold
		 echo always > $H/htmm_ccow_enabled ;;
	ccow-huge-t*) echo "${1#ccow-huge-t}" > $H/htmm_ccow_threshold
		      echo always > $H/htmm_ccow_enabled
		      echo --thp ;;
	ccow-bounded) echo 80 > $H/htmm_ccow_threshold
		      echo 256 > $H/htmm_ccow_max_sync_kb
		      echo always > $H/htmm_ccow_enabled ;;
	ccow-bounded-t0) echo 0 > $H/htmm_ccow_threshold
			 echo 256 > $H/htmm_ccow_max_sync_kb
			 echo always > $H/htmm_ccow_enabled ;;
	*) return 1 ;;
	esac
}

echo "bench ccow mib $mib seconds $seconds fork_every $every child_ms $child op_iters $op"
for a in $alphas; do
	for c in $configs; do
		if ! extra=$(setup "$c"); then
			echo "bench: unknown configuration $c"
			exit 1
		fi
		echo "### run $a $c"
		ccow_stats_begin $CG
		echo 3 > /proc/sys/vm/drop_caches
		sh -c "echo \$\$ > $CG/cgroup.procs && exec /htmm/bin/ccowbench --mib $mib --alpha $a --seconds $seconds --fork-every $every --child-ms $child --op-iters $op --cgroup $CG $extra"
		echo "### exit $?"
		ccow_stats_end $CG
		grep -E '^thp_(fault_alloc|split_pmd|collapse_alloc) ' /proc/vmstat | sed 's/^/vmstat /'
	done
done
echo never > $H/htmm_ccow_enabled
echo "### done"
