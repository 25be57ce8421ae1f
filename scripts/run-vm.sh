#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel in the two-tier QEMU/TCG guest.
#   node 0: all vCPUs + fast memory      node 1: no CPU, slow memory
# HMAT latency/bandwidth entries for both nodes make the guest's
# memory-tiers code put node 1 in a lower tier than node 0.
#
# Usage: run-vm.sh --kernel BZIMAGE --initrd CPIO [options]
#   --fast MB --slow MB      node sizes (default 512 / 2048, or $FAST_MB/$SLOW_MB)
#   --cpus N                 vCPUs on node 0 (default 2)
#   --append "ARGS"          extra kernel command line
#   --console FILE           log the console there (default: stdout only)
#   --results FILE           second serial port (ttyS1) to FILE
#   --timeout SEC            kill the guest after SEC seconds (exit 124)
#   --plugin SPEC            load a TCG plugin: "file.so,arg=value,..."
#   --pebs SOCKET            a virtio-serial port "htmm.epebs" whose chardev
#                            listens on the Unix socket SOCKET, where the
#                            plugin's emulated PEBS connects (pebs=SOCKET)
#   --interactive            console on this terminal (Ctrl-A X quits)
set -euo pipefail
source "$(dirname "$0")/lib.sh"

kernel= initrd= append= console= results= timeout=0 interactive=0 plugin= pebs=
fast=${FAST_MB:-512} slow=${SLOW_MB:-2048} cpus=2
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift ;;
	--initrd) initrd=$2; shift ;;
	--fast) fast=$2; shift ;;
	--slow) slow=$2; shift ;;
	--cpus) cpus=$2; shift ;;
	--append) append=$2; shift ;;
	--console) console=$2; shift ;;
	--results) results=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--plugin) plugin=$2; shift ;;
	--pebs) pebs=$2; shift ;;
	--interactive) interactive=1 ;;
	*) die "run-vm.sh: unknown option $1" ;;
	esac
	shift
done
[ -f "$kernel" ] || die "no kernel image '$kernel'"
[ -f "$initrd" ] || die "no initramfs '$initrd'"
for v in "$fast" "$slow" "$cpus" "$timeout"; do
	[[ "$v" =~ ^[0-9]+$ ]] || die "not a number: $v"
done
[ "$fast" -ge 128 ] && [ "$slow" -ge 128 ] || die "each node needs at least 128 MiB"

# Under TCG the guest's TSC is the host's: give the guest its frequency
# (scripts/tsc-khz.c) instead of letting it calibrate on a loaded host,
# where it once took the PIT's 532.6 MHz over the HPET's 2445.7 and ran
# its clock 4.6 times too fast.  Without a constant TSC, or without gcc,
# the guest calibrates as before.
tsc_khz() {
	local bin=$BUILD/host/tsc-khz src=$HTMM_TOP/scripts/tsc-khz.c tmp
	[ "$(uname -m)" = x86_64 ] || return 0
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
		mkdir -p "$BUILD/host"
		tmp=$(mktemp "$bin.XXXXXX")
		if ! gcc -O2 -Wall -Wextra -Werror -o "$tmp" "$src"; then
			rm -f "$tmp"
			warn "run-vm.sh: scripts/tsc-khz.c did not build; the guest calibrates its TSC"
			return 0
		fi
		mv "$tmp" "$bin"
	fi
	"$bin" || true
}
khz=$(tsc_khz)
[ -z "$khz" ] || append="tsc_early_khz=$khz $append"

args=(
	-machine q35,hmat=on -accel tcg -smp "$cpus" -m "$((fast + slow))M"
	-object memory-backend-ram,size="${fast}M",id=m0
	-object memory-backend-ram,size="${slow}M",id=m1
	-numa node,nodeid=0,memdev=m0,cpus=0-$((cpus - 1)),initiator=0
	-numa node,nodeid=1,memdev=m1,initiator=0
	-numa dist,src=0,dst=1,val=20
	-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-latency,latency=100
	-numa hmat-lb,initiator=0,target=0,hierarchy=memory,data-type=access-bandwidth,bandwidth=200G
	-numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=300
	-numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-bandwidth,bandwidth=50G
	-kernel "$kernel" -initrd "$initrd"
	-append "console=ttyS0 panic=-1 oops=panic $append"
	-no-reboot -display none -nodefaults
)
[ -n "$plugin" ] && args+=(-plugin "$plugin")
# QEMU listens; the plugin connects once the socket is there.
[ -n "$pebs" ] && args+=(-device virtio-serial-pci
	-chardev "socket,id=epebs,path=$pebs,server=on,wait=off"
	-device virtserialport,chardev=epebs,name=htmm.epebs)
if [ "$interactive" = 1 ]; then
	exec qemu-system-x86_64 "${args[@]}" -serial mon:stdio
fi
args+=(-serial stdio)
[ -n "$results" ] && args+=(-serial "file:$results")
run() {
	if [ "$timeout" -gt 0 ]; then
		timeout --foreground -k 10 "$timeout" qemu-system-x86_64 "${args[@]}"
	else
		qemu-system-x86_64 "${args[@]}"
	fi
}
if [ -n "$console" ]; then
	set +e
	run < /dev/null | tee "$console"
	rc=${PIPESTATUS[0]}
	exit "$rc"
fi
run < /dev/null
