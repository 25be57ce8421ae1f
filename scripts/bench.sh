#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks in the two-tier guest, on the demo kernel.
#   scripts/bench.sh sampling   ingestion cost, ksamplingd CPU, abit scan cost
#   scripts/bench.sh tiering    tiering scenarios side by side (see
#                               scripts/guest/bench-tiering.sh): converge
#                               under no migration, NUMA-balancing tiering,
#                               DAMON, htmm with abit and htmm with injected
#                               samples; skewed (huge pages with few hot
#                               subpages) and uniform (huge pages accessed
#                               evenly), both under no migration, NUMA
#                               balancing, DAMON and htmm with and
#                               without splitting
# tiering: SCENARIOS (converge skewed uniform); RUNS (3) runs per
# configuration, one fresh guest each; CONFIGS to pick configurations of
# the converge scenario (plus "ceiling": the hot region placed in the fast
# tier from the start), SKEWED_CONFIGS and UNIFORM_CONFIGS those of the
# others; SECONDS_PER_RUN (60) for converge, THP_SECONDS (40) for the
# others.  Then PLUGIN_RUNS (1) runs of PLUGIN_SECONDS (120) per
# configuration of the PLUGIN_SCENARIOS (converge) under the ground-truth
# QEMU plugin (scripts/build-plugin.sh), which counts the guest's memory
# accesses per node behind a cache model; PLUGIN_RUNS=0 skips them.
# Output: the figures on stdout; logs in $BUILD/logs/bench-*.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

what=${1:-sampling}
case "$what" in
sampling|tiering) ;;
*) die "unknown benchmark '$what' (sampling or tiering)" ;;
esac
need_packages "${BUILD_PACKAGES[@]}"
"$HTMM_TOP/scripts/build-kernel.sh" demo >&2
"$HTMM_TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio" > /dev/null
mkdir -p "$BUILD/logs"
kernel=$BUILD/kernel-demo/arch/x86/boot/bzImage

if [ "$what" = sampling ]; then
	exec "$HTMM_TOP/scripts/run-vm.sh" --kernel "$kernel" \
		--initrd "$BUILD/initramfs.cpio" --append "guest_job=bench-$what htmm=on quiet" \
		--console "$BUILD/logs/bench-$what.log" --timeout "${BENCH_TIMEOUT:-1800}"
fi

runs=${RUNS:-3}
configs=${CONFIGS:-none autonuma damon htmm-abit htmm-inject ceiling}
secs=${SECONDS_PER_RUN:-60}
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || die "SECONDS_PER_RUN must be a positive number"
out=${BENCH_OUT:-$BUILD/logs/bench-tiering}
rm -rf "$out"
mkdir -p "$out"
# $1 scenario, $2 config, $3 file stem, $4 seconds, $5... run-vm.sh options
boot() {
	local sc=$1 c=$2 stem=$3 s=$4
	shift 4
	"$HTMM_TOP/scripts/run-vm.sh" --kernel "$kernel" "$@" \
		--initrd "$BUILD/initramfs.cpio" \
		--append "guest_job=bench-tiering bench_scenario=$sc bench_config=$c bench_seconds=$s htmm=on quiet" \
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
	if [ "$1" = converge ]; then echo "$2"; else echo "$1.$2"; fi
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
			boot "$sc" "$c" "$(stem_of "$sc" "$c")-$r" "$(secs_of "$sc")"
		done
	done
done
# Ground truth: the plugin slows the guest down about twenty times, so
# these runs are separate and longer (the window is their second half).
gt_runs=${PLUGIN_RUNS:-1}
gt_secs=${PLUGIN_SECONDS:-120}
if [ "$gt_runs" -gt 0 ]; then
	so=$("$HTMM_TOP/scripts/build-plugin.sh")
	for r in $(seq 1 "$gt_runs"); do
		for sc in ${PLUGIN_SCENARIOS:-converge}; do
			for c in $(configs_of "$sc"); do
				st=$(stem_of "$sc" "$c")-gt$r
				note "tiering ground truth: $sc, $c, run $r of $gt_runs"
				boot "$sc" "$c" "$st" "$gt_secs" \
					--plugin "$so,split=$((${FAST_MB:-512} << 20)),out=$out/$st.plugin"
			done
		done
	done
fi
python3 "$HTMM_TOP/scripts/bench-table.py" "$out"
