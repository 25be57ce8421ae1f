# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# scripts/bench.sh workloads [--quick]: sourced by scripts/bench.sh (which
# has built the demo kernel and the initramfs, and set kernel, kid and
# results).  Real workloads (tools/htmm/workloads/) at fast:slow ratios.
#
# Full mode: one guest per (workload, configuration, ratio), under the
# QEMU plugin (htmm_mem.so, with emulated PEBS for the htmm-epebs
# configurations).  The performance figure is the plugin's modelled time
# of the workload's measured phase, normalised to the all-fast run; the
# plugin also gives the fast tier's share of memory accesses (misses of
# its cache model).  Environment:
#   WL_WORKLOADS  (redis xslookup graph500 btree liblinear pagerank)
#   WL_CONFIGS    (all-fast none autonuma damon htmm-abit htmm-epebs
#                  htmm-epebs-nosplit); all-fast runs once per workload,
#                  the others once per ratio
#   WL_RATIOS     (1 2 4 8 16): fast:slow 1:R, budget footprint / (1 + R)
#   WL_MB (300) footprint, WL_WORK (1) amount of work, per workload
#   WL_FAST_MB (1024) node 0, SLOW_MB (2048) node 1
#   WL_GUEST_ARGS: more of the guest's command line, e.g. bench_trace=2
#                 (placement every 2 s in $BUILD/logs/bench-workloads/
#                 results.log) or bench_htmm_set=NAME:VALUE,... (htmm
#                 tunables of the run); such a run's CSV is kept as
#                 *.csv.diag, out of the table
#   RUNS (1): runs wanted per cell; cells that already have that many
#             result files for this kernel are skipped (WL_RESUME=0 runs
#             them anyway), so the table is built up over sessions
#   WL_PEERS: the kernel id of an earlier table whose cells without htmm
#             (all-fast, none, autonuma, damon) count for this one, so that
#             a change of htmm's code reruns only the htmm rows.  Refused
#             unless the two commits differ only in mm/htmm/ among the
#             paths that make the kernel id, besides what only the tests
#             use (peer_neutral()); such a change can still run
#             for cgroups without htmm (the folio hooks), which is for its
#             author to rule out.  The tables say which kernel each
#             configuration's cells come from.
# Each run leaves one CSV file in bench/results/workloads/<kernel>/ and
# its guest's log (memory.htmm_stat at the end, the trace lines) in
# $BUILD/logs/bench-workloads/runs/; the table and figures are rendered
# from the CSV files
# (scripts/bench-workloads-table.py; scripts/bench.sh workloads-table).
#
# Quick mode: one guest, no plugin, small sizes (24 MiB, work 0.01), 1:4,
# the configurations that need no plugin: the same guest job as the test
# in scripts/test.sh.  Its CSV files go to $BUILD/logs/workloads-quick/
# and its table uses wall-clock time (TCG's, equal for both nodes).
wl_initrd=$GBUILD/initramfs-workloads.cpio
wl_table=$HTMM_TOP/scripts/bench-workloads-table.py
note "workloads initramfs: $(( $(stat -c %s "$wl_initrd") >> 20 )) MiB"

if [ "${2:-}" = --quick ]; then
	log=$BUILD/logs/workloads-quick
	rm -rf "$log"
	mkdir -p "$log"
	rc=0
	"$HTMM_TOP/scripts/run-vm.sh" --fast "${WL_FAST_MB:-1024}" --kernel "$kernel" \
		--initrd "$wl_initrd" --append "guest_job=workloads rootfstype=ramfs htmm=on quiet" \
		--console "$log/console.log" --results "$log/results.log" \
		--timeout 1800 > /dev/null || rc=$?
	python3 "$wl_table" csv --kernel "$kid" --out "$log" "$log/results.log"
	grep -a '^not ok' "$log/results.log" && rc=1
	python3 "$wl_table" render --time wall "$log"
	exit "$rc"
elif [ -n "${2:-}" ]; then
	die "unknown option '$2' of workloads (--quick)"
fi

so=$(build_plugin)
wl_fast=${WL_FAST_MB:-1024}
wl_slow=${SLOW_MB:-2048}
runs=${RUNS:-1}
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number"
out=$BUILD/logs/bench-workloads
mkdir -p "$out"
# Can path $3, changed between commits $1 and $2, change a run without
# htmm?  No for htmm's code (mm/htmm/ and its header, whose hooks the
# author must rule out, as WL_PEERS says), for the test guests' scripts,
# and for the
# series' cover letter and order; neither for a patch that touches
# tools/testing/ alone in both versions (the selftest harness).  A patch
# added to the series is a changed patch file, judged by itself.
peer_neutral() {
	local c
	case "$3" in
	mm/htmm/*|include/linux/htmm.h|scripts/guest/run-tests.sh|scripts/guest/workloads-test.sh|\
	patches/cover-letter.txt|patches/series) return 0 ;;
	patches/*.patch)
		for c in "$1" "$2"; do
			git -C "$HTMM_TOP" show "$c:$3" 2> /dev/null |
				grep -E '^(\+\+\+|---) [ab]/' |
				grep -vqE '^(\+\+\+|---) [ab]/tools/testing/' && return 1
		done
		return 0 ;;
	esac
	return 1
}

peers=
if [ -n "${WL_PEERS:-}" ]; then
	peers=$HTMM_TOP/bench/results/workloads/$WL_PEERS
	[ -d "$peers" ] || die "WL_PEERS: no results in ${peers#"$HTMM_TOP"/}"
	other=
	for f in $(git -C "$HTMM_TOP" diff --name-only "$WL_PEERS" "${BENCH_COMMIT:-HEAD}" \
			-- "${KERNEL_PATHS[@]}"); do
		peer_neutral "$WL_PEERS" "${BENCH_COMMIT:-HEAD}" "$f" || other+="$f"$'\n'
	done
	[ -z "$other" ] ||
		die "WL_PEERS: $WL_PEERS and $kid differ outside mm/htmm/: $(echo "$other" | tr "\n" " ")"
fi

# One guest: workload $1, configuration $2, ratio $3.
wl_boot() {
	local sock spec rc=0
	spec="$so,split=$((wl_fast << 20)),slow=$((wl_slow << 20)),out=$out/run.plugin"
	rm -f "$out/run.plugin" "$out/results.log"
	local pebs=()
	case "$2" in
	htmm-epebs*)
		sock=$(mktemp -u /tmp/htmm-epebs.XXXXXX)
		spec+=",pebs=$sock"
		pebs=(--pebs "$sock") ;;
	esac
	local t0=$SECONDS
	"$HTMM_TOP/scripts/run-vm.sh" --fast "$wl_fast" --slow "$wl_slow" \
		--kernel "$kernel" --initrd "$wl_initrd" --plugin "$spec" "${pebs[@]}" \
		--append "guest_job=bench-workloads rootfstype=ramfs bench_workloads=$1 bench_configs=$2 bench_ratio=$3 bench_mb=${WL_MB:-300} bench_work=${WL_WORK:-1} htmm=on quiet${WL_GUEST_ARGS:+ $WL_GUEST_ARGS}" \
		--console "$out/console.log" --results "$out/results.log" \
		--timeout "${WL_TIMEOUT:-5400}" > /dev/null || rc=$?
	[ "$rc" = 0 ] || warn "guest of $1 under $2 at 1:$3 exited with $rc"
	python3 "$wl_table" csv --kernel "$kid" --out "$results" \
		--plugin "$out/run.plugin" --guest-exit "$rc" \
		--host-seconds $((SECONDS - t0 + 1)) "$out/results.log" ||
		warn "no result of $1 under $2 at 1:$3"
	# Each guest's full log (htmm_stat at the end, traces), for diagnosis.
	# The plugin's figures per vCPU too, to render them again.
	local stamp
	stamp=$out/runs/$1.$2.r$3-$(date -u +%Y%m%dT%H%M%S)
	mkdir -p "$out/runs"
	cp "$out/results.log" "$stamp.log" 2> /dev/null || true
	cp "$out/run.plugin" "$stamp.plugin" 2> /dev/null || true
}

for r in $(seq 1 "$runs"); do
	for ratio in ${WL_RATIOS:-1 2 4 8 16}; do
		for w in ${WL_WORKLOADS:-redis xslookup graph500 btree liblinear pagerank}; do
			for c in ${WL_CONFIGS:-all-fast none autonuma damon htmm-abit htmm-epebs htmm-epebs-nosplit}; do
				rr=$ratio
				[ "$c" = all-fast ] && rr=0
				have=$(find "$results" -name "$w.$c.r$rr-*.csv" | wc -l)
				case "$c" in
				htmm-*) ;;
				*) [ -z "$peers" ] || have=$((have + $(find "$peers" -name "$w.$c.r$rr-*.csv" | wc -l))) ;;
				esac
				if [ "${WL_RESUME:-1}" = 1 ] && [ "$have" -ge "$r" ]; then
					continue
				fi
				note "workloads: $w, $c, 1:$rr, run $r of $runs"
				wl_boot "$w" "$c" "$rr"
			done
		done
	done
done
note "results: ${results#"$HTMM_TOP"/}"
python3 "$wl_table" render --figures "$HTMM_TOP/bench/figures" ${peers:+--peers "$peers"} "$results"
