#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# An interactive shell in the two-tier guest (demo kernel; KERNEL=debug for
# the test kernel).  Ctrl-A X leaves QEMU.  The guest programs are in /htmm.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

flavour=${KERNEL:-demo}
"$HTMM_TOP/scripts/build-kernel.sh" "$flavour"
"$HTMM_TOP/scripts/mkinitramfs.sh" "$BUILD/initramfs.cpio" > /dev/null
exec "$HTMM_TOP/scripts/run-vm.sh" --interactive \
	--kernel "$BUILD/kernel-$flavour/arch/x86/boot/bzImage" \
	--initrd "$BUILD/initramfs.cpio" --append "guest_job=shell htmm=on"
