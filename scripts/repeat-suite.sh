#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run kselftest suites of the debug kernel N times in a row in one guest,
# to show that a test holds (or to catch one that fails once in N runs).
#   scripts/repeat-suite.sh GLOB [N] [-tTEST]
# e.g. scripts/repeat-suite.sh htmm_split_test 10
# A GLOB that names a guest smoke script (htmm_cli, tierbench) runs it once.
# Ends with "N passed, N failed, N skipped" like scripts/test.sh; logs in
# $BUILD/logs/repeat/.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

glob=${1:?usage: repeat-suite.sh GLOB [N] [-tTEST]}
n=${2:-10}
targ=${3:-}
[[ "$n" =~ ^[1-9][0-9]*$ ]] || die "not a repeat count: $n"
LOGS=$BUILD/logs/repeat
mkdir -p "$LOGS"
rm -f "$LOGS"/console.log "$LOGS"/results.log

start=$(date +%s)
build_debug_kernel "$LOGS"
initrd=$BUILD/initramfs-test.cpio
"$HTMM_TOP/scripts/mkinitramfs.sh" "$initrd" > "$LOGS/initramfs.log" 2>&1 ||
	{ cat "$LOGS/initramfs.log"; bail "building the initramfs failed"; }
expect=
for t in "$BUILD"/selftests/$glob; do
	[ -x "$t" ] || continue
	for k in $(seq 1 "$n"); do
		expect+="${expect:+,}${t##*/}"
		[ "$n" -gt 1 ] && expect+="#$k"
	done
done
# The guest smoke scripts (run once, whatever N).
for s in htmm_cli tierbench; do
	# shellcheck disable=SC2254 # $glob is a pattern
	case "$s" in $glob) expect+="${expect:+,}$s" ;; esac
done
[ -n "$expect" ] || die "no kselftest suite or smoke script matches '$glob'"

vmstart=$(date +%s)
"$HTMM_TOP/scripts/run-vm.sh" --fast "$TEST_FAST_MB" --kernel "$BUILD/kernel-debug/arch/x86/boot/bzImage" \
	--initrd "$initrd" \
	--append "guest_job=tests page_owner=on htmm=on kunit.enable=0 htmm_tests=$glob htmm_repeat=$n${targ:+ htmm_test_args=$targ}" \
	--console "$LOGS/console.log" --results "$LOGS/results.log" \
	--timeout "${GUEST_TIMEOUT:-7200}" > /dev/null
qrc=$?
echo "# guest ran $(( $(date +%s) - vmstart )) s; logs in $LOGS"
python3 "$HTMM_TOP/scripts/parse-results.py" --console "$LOGS/console.log" \
	--results "$LOGS/results.log" --expect "$expect" --qemu-rc "$qrc"
