#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: build the htmm demo kernel, boot it in the two-tier guest
# and run a scripted tour of htmm (scripts/guest/demo.sh), then plot the
# record of its `htmm run` with `htmm report --plot`.
# Console log: $BUILD/logs/demo-console.log; plot: $BUILD/demo-tiering.png
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need_packages "${BUILD_PACKAGES[@]}"
"$HTMM_TOP/scripts/build-kernel.sh" demo
initrd=$BUILD/initramfs.cpio
"$HTMM_TOP/scripts/mkinitramfs.sh" "$initrd" > /dev/null
make -s -C "$HTMM_TOP/tools/htmm/cli" O="$BUILD/htmm-cli" > /dev/null
mkdir -p "$BUILD/logs"
record=$BUILD/logs/demo-record.csv
rm -f "$record"
note "booting the demo kernel: node 0 = CPUs + ${FAST_MB:-512} MiB fast, node 1 = ${SLOW_MB:-2048} MiB slow"
"$HTMM_TOP/scripts/run-vm.sh" --kernel "$BUILD/kernel-demo/arch/x86/boot/bzImage" \
	--initrd "$initrd" --append "guest_job=demo htmm=on quiet" \
	--console "$BUILD/logs/demo-console.log" --results "$record" \
	--timeout "${DEMO_TIMEOUT:-900}"
tr -d '\r' < "$record" > "$record.tmp" && mv "$record.tmp" "$record"
"$BUILD/htmm-cli/htmm" report "$record" --plot "$BUILD/demo-tiering.png" > /dev/null
note "the tiering run with htmm, plotted: $BUILD/demo-tiering.png (record: $record)"
