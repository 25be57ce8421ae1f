#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks in the two-tier guest, on the demo kernel.
#   scripts/bench.sh sampling     ingestion cost, ksamplingd CPU, abit scan cost
# Output: the figures on stdout; console log in $BUILD/logs/bench-*.log
set -euo pipefail
source "$(dirname "$0")/lib.sh"

what=${1:-sampling}
case "$what" in
sampling) ;;
*) die "unknown benchmark '$what' (sampling)" ;;
esac
need_packages "${BUILD_PACKAGES[@]}"
"$HTMM_TOP/scripts/build-kernel.sh" demo >&2
"$HTMM_TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio" > /dev/null
mkdir -p "$BUILD/logs"
"$HTMM_TOP/scripts/run-vm.sh" --kernel "$BUILD/kernel-demo/arch/x86/boot/bzImage" \
	--initrd "$BUILD/initramfs.cpio" --append "guest_job=bench-$what quiet" \
	--console "$BUILD/logs/bench-$what.log" --timeout "${BENCH_TIMEOUT:-1800}"
