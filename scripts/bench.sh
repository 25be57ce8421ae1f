#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks in the two-tier guest, on the demo kernel.
#   scripts/bench.sh sampling   ingestion cost, ksamplingd CPU, abit scan cost
#   scripts/bench.sh model      the QEMU plugin's modelled time and cost: a
#                               pointer chase of 64 MiB on node 0, then on
#                               node 1, under plain TCG, the plugin, and
#                               the plugin with emulated PEBS (MODEL_MODES,
#                               default "plain plugin pebs"; RUNS, default
#                               3; SECONDS_PER_RUN, default 10)
#   scripts/bench.sh scale      htmm's own cost against the number of
#                               enabled cgroups (SCALE_CGROUPS, default
#                               1 4 16 64) and the size of the fast node
#                               (SCALE_FAST, MiB, default 512 2048);
#                               SCALE_NICE=N runs the workloads at nice N;
#                               SCALE_OVER=1 gives each cgroup a budget of
#                               half its hot data (fill walks' steady state);
#                               see scripts/guest/bench-scale.sh
#   scripts/bench.sh tenants    four tenants started together, under
#                               budgets that fit node 0 and budgets that
#                               overcommit it: each tenant's time to 95%
#                               of its hot data that fits (RUNS, default 3,
#                               guests; see scripts/guest/bench-tenants.sh)
#   scripts/bench.sh workloads [--quick]
#                               real programs (tools/htmm/workloads/:
#                               YCSB on Redis, an XSBench-style lookup
#                               kernel, Graph500 BFS, SQLite B-tree
#                               lookups, liblinear, PageRank) at fast:slow
#                               ratios 1:R under every configuration, each
#                               run a guest under the QEMU plugin, whose
#                               modelled time is the performance figure
#                               (see the section below)
#   scripts/bench.sh ccow       the CCoW micro-benchmark (tools/htmm/
#                               ccowbench.c): zipfian writes with a fork
#                               every few seconds, under plain CoW, CoW on
#                               THP and CCoW configurations (RUNS, default
#                               3, guests; CCOW_ALPHAS, CCOW_CONFIGS,
#                               CCOW_SECONDS, CCOW_OP_ITERS: see
#                               scripts/guest/bench-ccow.sh)
#   scripts/bench.sh ccow-redis Redis snapshots (BGSAVE every 2 s) under
#                               YCSB workload A, plain CoW against CCoW
#                               (RUNS, default 3, guests; CCOW_CONFIGS;
#                               see scripts/guest/bench-ccow-redis.sh)
#   scripts/bench.sh tiering    tiering scenarios side by side (see
#                               scripts/guest/bench-tiering.sh): converge
#                               under no migration, NUMA-balancing tiering,
#                               DAMON, htmm with abit and htmm with injected
#                               samples; skewed (huge pages with few hot
#                               subpages) and uniform (huge pages accessed
#                               evenly), both under no migration, NUMA
#                               balancing, DAMON and htmm with and
#                               without splitting
# tiering: SCENARIOS (converge skewed uniform); BENCH_BUDGET (htmm's fast
# budget, memory.max_at_node0, instead of the scenario's); RUNS (3) runs per
# configuration, one fresh guest each; CONFIGS to pick configurations of
# the converge scenario (plus "ceiling": the hot region placed in the fast
# tier from the start), SKEWED_CONFIGS and UNIFORM_CONFIGS those of the
# others; SECONDS_PER_RUN (60) for converge, THP_SECONDS (40) for the
# others.  Then PLUGIN_RUNS (1) runs of PLUGIN_SECONDS (120) per
# configuration of the PLUGIN_SCENARIOS (converge) under the ground-truth
# QEMU plugin (scripts/build-plugin.sh), which counts the guest's memory
# accesses per node behind a cache model; PLUGIN_RUNS=0 skips them.
# Output: the figures on stdout; logs in $BUILD/logs/bench-*.
#
# BENCH_COMMIT=REV builds the guest side (demo kernel, initramfs, QEMU
# plugin) from commit REV instead of the working tree: REV is checked out
# in $BUILD/bench-trees/<REV's first 12 hex digits> (a git worktree, one
# per commit, so that a queue alternating between two commits does not
# rebuild at each switch) and built there, in its own build directory
# (ccache is shared), and the results are named by REV's kernel id.  The
# host side (this script, run-vm.sh, the tables) is the working tree's.
# A long table can so keep growing on one commit while the tree moves on.
#
# Results: every run also leaves one file in bench/results/<benchmark>/
# <kernel>/, where <kernel> names the commit of this repository the kernel
# was built from (with -dirty if mm/, include/, patches/ or configs/ had
# changes), and the tiering table is rendered from all the files of that
# directory.  So runs add up across sessions: RUNS=1 three times gives the
# same table as RUNS=3 once.  scripts/bench.sh table [KERNEL] renders it
# again (default: the current kernel).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

# The commit a benchmark's results are named by in bench/results/: the
# last one that changed the kernel or what runs in the guest (tools/htmm
# holds the workloads and the QEMU plugin as well).  Commits of documentation, tables or host
# scripts leave it as it is, so that a long table can be built over
# sessions on one kernel commit.
KERNEL_PATHS=(mm include patches configs tools/htmm scripts/guest scripts/mkinitramfs.sh)
kernel_id() {
	local id
	id=$(git -C "$HTMM_TOP" log -1 --format=%h --abbrev=12 ${BENCH_COMMIT:+"$BENCH_COMMIT"} \
		-- "${KERNEL_PATHS[@]}")
	if [ -z "${BENCH_COMMIT:-}" ] &&
	   [ -n "$(git -C "$HTMM_TOP" status --porcelain -- "${KERNEL_PATHS[@]}")" ]; then
		id+=-dirty
	fi
	echo "$id"
}
# A run's name in bench/results: UTC time, digits only (sorts, and never
# collides with an earlier session's).
run_id() {
	date -u +%Y%m%d%H%M%S
}

what=${1:-sampling}
case "$what" in
sampling|tiering|scale|tenants|model|workloads|ccow|ccow-redis) ;;
workloads-table)
	# workloads-table [KERNEL [PEERS...]]: each of PEERS as WL_PEERS in
	# bench-workloads.sh, the first that has a cell giving it.
	d=$HTMM_TOP/bench/results/workloads/${2:-$(kernel_id)}
	[ -d "$d" ] || die "no results in $d"
	pa=()
	for p in "${@:3}"; do
		[ -d "$HTMM_TOP/bench/results/workloads/$p" ] || die "no results in bench/results/workloads/$p"
		pa+=(--peers "$HTMM_TOP/bench/results/workloads/$p")
	done
	exec python3 "$HTMM_TOP/scripts/bench-workloads-table.py" render \
		--figures "$HTMM_TOP/bench/figures" "${pa[@]}" "$d" ;;
ccow-table)
	d=$HTMM_TOP/bench/results/ccow/${2:-$(kernel_id)}
	[ -d "$d" ] || die "no results in $d"
	exec python3 "$HTMM_TOP/scripts/bench-ccow-table.py" \
		--figures "$HTMM_TOP/bench/figures" "$d" ;;
table)
	d=$HTMM_TOP/bench/results/tiering/${2:-$(kernel_id)}
	[ -d "$d" ] || die "no results in $d"
	exec python3 "$HTMM_TOP/scripts/bench-table.py" "$d" ;;
*) die "unknown benchmark '$what' (sampling, tiering, scale, tenants, model, workloads, ccow, table, workloads-table or ccow-table)" ;;
esac
need_packages "${BUILD_PACKAGES[@]}"
# The guest side's tree (GTOP) and build directory (GBUILD).
GTOP=$HTMM_TOP
GBUILD=$BUILD
if [ -n "${BENCH_COMMIT:-}" ]; then
	rev=$(git -C "$HTMM_TOP" rev-parse -q --verify "$BENCH_COMMIT^{commit}") ||
		die "BENCH_COMMIT: '$BENCH_COMMIT' is not a commit of this repository"
	BENCH_COMMIT=$rev
	GTOP=$BUILD/bench-trees/${rev:0:12}
	GBUILD=$GTOP/build
	git -C "$HTMM_TOP" worktree prune
	if [ ! -e "$GTOP/.git" ]; then
		mkdir -p "$BUILD/bench-trees"
		git -C "$HTMM_TOP" worktree add -q --detach "$GTOP" "$rev"
	fi
	note "guest side from $(git -C "$GTOP" log -1 --format='%h %s')"
	# One copy of QEMU's plugin header (build-plugin.sh fetches it).
	mkdir -p "$BUILD/qemu-src" "$GBUILD"
	[ -e "$GBUILD/qemu-src" ] || ln -s "$BUILD/qemu-src" "$GBUILD/qemu-src"
fi
BUILD=$GBUILD "$GTOP/scripts/build-kernel.sh" demo >&2
BUILD=$GBUILD "$GTOP/scripts/mkinitramfs.sh" "$GBUILD/initramfs.cpio" > /dev/null
if [ "$what" = workloads ] || [ "$what" = ccow-redis ]; then
	BUILD=$GBUILD "$GTOP/scripts/mkinitramfs.sh" --workloads "$GBUILD/workloads.cpio" > /dev/null
	cat "$GBUILD/initramfs.cpio" "$GBUILD/workloads.cpio" > "$GBUILD/initramfs-workloads.cpio"
fi
# The guest side's QEMU plugin; prints its path.
build_plugin() {
	BUILD=$GBUILD "$GTOP/scripts/build-plugin.sh"
}
mkdir -p "$BUILD/logs"
kernel=$GBUILD/kernel-demo/arch/x86/boot/bzImage

kid=$(kernel_id)
results=$HTMM_TOP/bench/results/$what/$kid
mkdir -p "$results"
if [ "$what" = sampling ]; then
	log=$BUILD/logs/bench-$what.log
	rc=0
	"$HTMM_TOP/scripts/run-vm.sh" --kernel "$kernel" \
		--initrd "$GBUILD/initramfs.cpio" --append "guest_job=bench-$what htmm=on quiet" \
		--console "$log" --timeout "${BENCH_TIMEOUT:-1800}" || rc=$?
	f=$results/$(run_id).txt
	{ echo "# bench sampling, kernel $kid, $(date -u +%FT%TZ), guest exit $rc"
	  tr -d '\r' < "$log" | awk '/^###/ { p = 1 } p'; } > "$f"
	note "result: ${f#"$HTMM_TOP"/}"
	exit "$rc"
fi

if [ "$what" = scale ]; then
	secs=${SECONDS_PER_RUN:-30}
	over=
	[ "${SCALE_OVER:-0}" = 0 ] || over=-over
	for f in ${SCALE_FAST:-512 2048}; do
		for n in ${SCALE_CGROUPS:-1 4 16 64}; do
			note "scale: $n cgroups, node 0 of $f MiB"
			log=$BUILD/logs/bench-scale-$n-$f
			rc=0
			"$HTMM_TOP/scripts/run-vm.sh" --kernel "$kernel" --fast "$f" \
				--initrd "$GBUILD/initramfs.cpio" \
				--append "guest_job=bench-scale bench_cgroups=$n bench_seconds=$secs bench_nice=${SCALE_NICE:-0} bench_over=${SCALE_OVER:-0} htmm=on quiet" \
				--console "$log.console" --results "$log.txt" \
				--timeout $((secs * 4 + 600)) > /dev/null || rc=$?
			[ "$rc" = 0 ] || warn "guest for $n cgroups, $f MiB exited with $rc"
			{ echo "# bench scale, kernel $kid, $(date -u +%FT%TZ), guest exit $rc"
			  cat "$log.txt"; } > "$results/c$n-f$f$over-$(run_id).txt"
		done
	done
	note "results: ${results#"$HTMM_TOP"/}"
	exec python3 "$HTMM_TOP/scripts/bench-scale-table.py" "$results"
fi

if [ "$what" = workloads ]; then
	source "$HTMM_TOP/scripts/bench-workloads.sh"
	exit
fi
runs=${RUNS:-3}
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number"
if [ "$what" = model ]; then
	so=$(build_plugin)
	secs=${SECONDS_PER_RUN:-10}
	split=$((${FAST_MB:-512} << 20)),slow=$((${SLOW_MB:-2048} << 20))
	for r in $(seq 1 "$runs"); do
		for mode in ${MODEL_MODES:-plain plugin pebs}; do
			for node in 0 1; do
				note "model: $mode, node $node, run $r of $runs"
				log=$BUILD/logs/bench-model
				sock=$(mktemp -u /tmp/htmm-epebs.XXXXXX)
				extra=()
				case "$mode" in
				plugin) extra=(--plugin "$so,split=$split,out=$log.plugin") ;;
				pebs) extra=(--plugin "$so,split=$split,out=$log.plugin,pebs=$sock"
					     --pebs "$sock") ;;
				esac
				rm -f "$log.plugin"
				rc=0
				"$HTMM_TOP/scripts/run-vm.sh" --kernel "$kernel" "${extra[@]}" \
					--initrd "$GBUILD/initramfs.cpio" \
					--append "guest_job=bench-model bench_node=$node bench_seconds=$secs htmm=on quiet" \
					--console "$log.console" --results "$log.txt" \
					--timeout 900 > /dev/null || rc=$?
				[ "$rc" = 0 ] || warn "guest of $mode node $node exited with $rc"
				{ echo "# bench model, kernel $kid, $(date -u +%FT%TZ), mode $mode, guest exit $rc"
				  tr -d '\r' < "$log.txt"
				  if [ -f "$log.plugin" ]; then sed 's/^/plugin /' "$log.plugin"; fi; } \
					> "$results/$mode-n$node-$(run_id).txt"
			done
		done
	done
	note "results: ${results#"$HTMM_TOP"/}"
	exec python3 "$HTMM_TOP/scripts/bench-model-table.py" "$results"
fi
if [ "$what" = ccow ]; then
	# Lists go to the guest's command line with commas for spaces.
	alphas=$(echo ${CCOW_ALPHAS:-0.9 1.0 1.1} | tr ' ' ,)
	configs=$(echo ${CCOW_CONFIGS:-} | tr ' ' ,)
	for r in $(seq 1 "$runs"); do
		note "ccow: run $r of $runs"
		log=$BUILD/logs/bench-ccow
		rc=0
		"$HTMM_TOP/scripts/run-vm.sh" --fast 2048 --kernel "$kernel" \
			--initrd "$GBUILD/initramfs.cpio" \
			--append "guest_job=bench-ccow htmm=on quiet bench_alphas=$alphas ${configs:+bench_configs=$configs} bench_seconds=${CCOW_SECONDS:-20} bench_op_iters=${CCOW_OP_ITERS:-1000}" \
			--console "$log.console" --results "$log.txt" \
			--timeout 5400 > /dev/null || rc=$?
		[ "$rc" = 0 ] || warn "guest of run $r exited with $rc"
		{ echo "# bench ccow, kernel $kid, $(date -u +%FT%TZ), guest exit $rc"
		  tr -d '\r' < "$log.txt"; } > "$results/$(run_id).txt"
	done
	note "results: ${results#"$HTMM_TOP"/}"
	exec python3 "$HTMM_TOP/scripts/bench-ccow-table.py" \
		--figures "$HTMM_TOP/bench/figures" "$results"
fi
if [ "$what" = ccow-redis ]; then
	configs=$(echo ${CCOW_CONFIGS:-} | tr ' ' ,)
	for r in $(seq 1 "$runs"); do
		note "ccow-redis: run $r of $runs"
		log=$BUILD/logs/bench-ccow-redis
		rc=0
		"$HTMM_TOP/scripts/run-vm.sh" --fast 2048 --kernel "$kernel" \
			--initrd "$GBUILD/initramfs-workloads.cpio" \
			--append "guest_job=bench-ccow-redis htmm=on quiet rootfstype=ramfs ${configs:+bench_configs=$configs}" \
			--console "$log.console" --results "$log.txt" \
			--timeout 5400 > /dev/null || rc=$?
		[ "$rc" = 0 ] || warn "guest of run $r exited with $rc"
		{ echo "# bench ccow-redis, kernel $kid, $(date -u +%FT%TZ), guest exit $rc"
		  tr -d '\r' < "$log.txt"; } > "$results/$(run_id).txt"
	done
	note "results: ${results#"$HTMM_TOP"/}"
	exec python3 "$HTMM_TOP/scripts/bench-ccow-table.py" --redis "$results"
fi
if [ "$what" = tenants ]; then
	for r in $(seq 1 "$runs"); do
		note "tenants: run $r of $runs"
		log=$BUILD/logs/bench-tenants
		rc=0
		"$HTMM_TOP/scripts/run-vm.sh" --fast "$TEST_FAST_MB" --kernel "$kernel" \
			--initrd "$GBUILD/initramfs.cpio" \
			--append "guest_job=bench-tenants htmm=on quiet" \
			--console "$log.console" --results "$log.txt" \
			--timeout 2400 > /dev/null || rc=$?
		[ "$rc" = 0 ] || warn "guest of run $r exited with $rc"
		{ echo "# bench tenants, kernel $kid, $(date -u +%FT%TZ), guest exit $rc"
		  tr -d '\r' < "$log.txt"; } > "$results/$(run_id).txt"
	done
	note "results: ${results#"$HTMM_TOP"/}"
	exec python3 "$HTMM_TOP/scripts/bench-tenants-table.py" "$results"
fi
configs=${CONFIGS:-none autonuma damon htmm-abit htmm-inject ceiling}
secs=${SECONDS_PER_RUN:-60}
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || die "SECONDS_PER_RUN must be a positive number"
out=${BENCH_OUT:-$BUILD/logs/bench-tiering}
rm -rf "$out"
mkdir -p "$out"
# Keep a run's result: $1 the file in $out, $2 its name in $results.
keep() {
	[ -f "$out/$1" ] || return 0
	{ echo "# bench tiering, kernel $kid, $(date -u +%FT%TZ)"
	  cat "$out/$1"; } > "$results/$2"
}
# $1 scenario, $2 config, $3 file stem, $4 seconds, $5... run-vm.sh options;
# the htmm-epebs configurations run under the plugin with emulated PEBS.
boot() {
	local sc=$1 c=$2 stem=$3 s=$4 sock
	shift 4
	case "$c" in
	htmm-epebs*)
		sock=$(mktemp -u /tmp/htmm-epebs.XXXXXX)
		set -- "$@" --pebs "$sock" --plugin \
			"$(build_plugin),split=$((${FAST_MB:-512} << 20)),slow=$((${SLOW_MB:-2048} << 20)),out=$out/$stem.epebs,pebs=$sock" ;;
	esac
	"$HTMM_TOP/scripts/run-vm.sh" --kernel "$kernel" "$@" \
		--initrd "$GBUILD/initramfs.cpio" \
		--append "guest_job=bench-tiering bench_scenario=$sc bench_config=$c bench_seconds=$s${BENCH_BUDGET:+ bench_budget=$BENCH_BUDGET} htmm=on quiet" \
		--console "$out/$stem.console" --results "$out/$stem.txt" \
		--timeout $((s * 4 + 300)) > /dev/null ||
		warn "guest for $stem exited with $?"
}
# The configurations of a scenario.
configs_of() {
	case "$1" in
	converge) echo "$configs" ;;
	skewed) echo "${SKEWED_CONFIGS:-none autonuma damon htmm-split htmm-nosplit}" ;;
	uniform) echo "${UNIFORM_CONFIGS:-none autonuma damon htmm-split htmm-nosplit}" ;;
	*) die "unknown scenario '$1' (converge, skewed or uniform)" ;;
	esac
}
# File name stem: the converge scenario's runs are plain <config>.
stem_of() {
	local b=${BENCH_BUDGET:+-b$BENCH_BUDGET}
	if [ "$1" = converge ]; then echo "$2$b"; else echo "$1.$2$b"; fi
}
scenarios=${SCENARIOS:-converge skewed uniform}
thp_secs=${THP_SECONDS:-40}
[[ "$thp_secs" =~ ^[1-9][0-9]*$ ]] || die "THP_SECONDS must be a positive number"
secs_of() {
	if [ "$1" = converge ]; then echo "$secs"; else echo "$thp_secs"; fi
}
for sc in $scenarios; do
	configs_of "$sc" > /dev/null
done
for r in $(seq 1 "$runs"); do
	for sc in $scenarios; do
		for c in $(configs_of "$sc"); do
			note "tiering: $sc, $c, run $r of $runs"
			st=$(stem_of "$sc" "$c")
			boot "$sc" "$c" "$st-$r" "$(secs_of "$sc")"
			keep "$st-$r.txt" "$st-$(run_id).txt"
			# Under the plugin already: its counts are ground truth.
			keep "$st-$r.epebs" "$st-gt$(run_id).plugin"
		done
	done
done
# Ground truth: the plugin slows the guest down about twenty times, so
# these runs are separate and longer (the window is their second half).
gt_runs=${PLUGIN_RUNS:-1}
gt_secs=${PLUGIN_SECONDS:-120}
if [ "$gt_runs" -gt 0 ]; then
	so=$(build_plugin)
	for r in $(seq 1 "$gt_runs"); do
		for sc in ${PLUGIN_SCENARIOS:-converge}; do
			for c in $(configs_of "$sc"); do
				case "$c" in htmm-epebs*) continue ;; esac
				st=$(stem_of "$sc" "$c")-gt$r
				note "tiering ground truth: $sc, $c, run $r of $gt_runs"
				boot "$sc" "$c" "$st" "$gt_secs" \
					--plugin "$so,split=$((${FAST_MB:-512} << 20)),out=$out/$st.plugin"
				keep "$st.plugin" "$(stem_of "$sc" "$c")-gt$(run_id).plugin"
			done
		done
	done
fi
note "results: ${results#"$HTMM_TOP"/} (the table is rendered from all runs there)"
python3 "$HTMM_TOP/scripts/bench-table.py" "$results"
