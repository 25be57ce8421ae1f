#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak test: the debug kernel (lockdep, KASAN, DEBUG_VM) in the two-tier
# guest runs htmm_soak, which does at random, all at the same time, from
# one seed: good and bad tunable writes; enable and disable; mkdir and
# rmdir of cgroups and task moves between them; fork and exit; mbind()
# and move_pages(); huge page allocation, split and collapse; vCPU 1
# offline and online; with checksummed data going through all of it.
#   scripts/soak.sh [--minutes M] [--seed N]
# M defaults to 3 (30 for the long run); N to a random seed, printed, so
# that a run can be replayed.  Ends with "N passed, N failed, N skipped"
# like scripts/test.sh: it fails on a checksum mismatch, an error of the
# soak, a thread or perf counter left after the last disable, a kernel
# report in the console, or a guest that did not power off.  Logs in
# $BUILD/logs/soak/.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

usage() {
	echo "usage: scripts/soak.sh [--minutes M] [--seed N]" >&2
	exit 2
}

minutes=3
seed=
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) [ $# -ge 2 ] || usage; minutes=$2; shift ;;
	--minutes=*) minutes=${1#*=} ;;
	--seed) [ $# -ge 2 ] || usage; seed=$2; shift ;;
	--seed=*) seed=${1#*=} ;;
	-h|--help) usage ;;
	*) echo "soak.sh: unknown argument $1" >&2; usage ;;
	esac
	shift
done
[[ "$minutes" =~ ^[1-9][0-9]*$ ]] || die "not a number of minutes: $minutes"
if [ -z "$seed" ]; then
	seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
fi
[[ "$seed" =~ ^[0-9]+$ ]] || die "not a seed (a decimal number): $seed"
secs=$((minutes * 60))
echo "# soak: seed $seed, $minutes min (replay: scripts/soak.sh --minutes $minutes --seed $seed)"

LOGS=$BUILD/logs/soak
mkdir -p "$LOGS"
rm -f "$LOGS"/console.log "$LOGS"/results.log
start=$(date +%s)

build_debug_kernel "$LOGS"
initrd=$BUILD/initramfs-soak.cpio
"$HTMM_TOP/scripts/mkinitramfs.sh" "$initrd" > "$LOGS/initramfs.log" 2>&1 ||
	{ cat "$LOGS/initramfs.log"; bail "building the initramfs"; }

# Boot, the soak, the teardown checks and power-off; far more than enough.
deadline=${GUEST_TIMEOUT:-$((secs + 900))}
echo "# booting the debug kernel in the two-tier guest (deadline $deadline s)"
vmstart=$(date +%s)
"$HTMM_TOP/scripts/run-vm.sh" --fast "$TEST_FAST_MB" \
	--kernel "$BUILD/kernel-debug/arch/x86/boot/bzImage" --initrd "$initrd" \
	--append "guest_job=soak page_owner=on htmm=on kunit.enable=0 htmm_soak_seed=$seed htmm_soak_seconds=$secs" \
	--console "$LOGS/console.log" --results "$LOGS/results.log" \
	--timeout "$deadline" > /dev/null
qrc=$?
echo "# guest ran $(( $(date +%s) - vmstart )) s; total $(( $(date +%s) - start )) s; logs in $LOGS"
# The soak's errors, counts and summary.
grep -a -h -e "^soak: " -e "^# soak: .*ERROR" -e "^# soak: control: counts:" \
	-e "^# soak: control: kernel events:" -e "^# htmm-time:" "$LOGS/results.log" 2>/dev/null
echo "# replay: scripts/soak.sh --minutes $minutes --seed $seed"
python3 "$HTMM_TOP/scripts/parse-results.py" --console "$LOGS/console.log" \
	--results "$LOGS/results.log" --expect htmm_soak --qemu-rc "$qrc"
