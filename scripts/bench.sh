#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks in the two-tier guest, on the demo kernel.
#   scripts/bench.sh sampling   ingestion cost, ksamplingd CPU, abit scan cost
#   scripts/bench.sh tiering    the convergence scenario side by side under
#                               no migration, NUMA-balancing tiering, DAMON,
#                               htmm with abit and htmm with injected samples
# tiering: RUNS (3) runs per configuration, one fresh guest each;
# CONFIGS to pick configurations; SECONDS_PER_RUN (60).
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
		--initrd "$BUILD/initramfs.cpio" --append "guest_job=bench-$what quiet" \
		--console "$BUILD/logs/bench-$what.log" --timeout "${BENCH_TIMEOUT:-1800}"
fi

runs=${RUNS:-3}
configs=${CONFIGS:-none autonuma damon htmm-abit htmm-inject}
secs=${SECONDS_PER_RUN:-60}
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive number"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || die "SECONDS_PER_RUN must be a positive number"
out=$BUILD/logs/bench-tiering
rm -rf "$out"
mkdir -p "$out"
for r in $(seq 1 "$runs"); do
	for c in $configs; do
		note "tiering: $c, run $r of $runs"
		"$HTMM_TOP/scripts/run-vm.sh" --kernel "$kernel" \
			--initrd "$BUILD/initramfs.cpio" \
			--append "guest_job=bench-tiering bench_config=$c bench_seconds=$secs quiet" \
			--console "$out/$c-$r.console" --results "$out/$c-$r.txt" \
			--timeout $((secs * 4 + 300)) > /dev/null ||
			warn "guest for $c run $r exited with $?"
	done
done
python3 "$HTMM_TOP/scripts/bench-table.py" "$out"
