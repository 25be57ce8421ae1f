#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the configurations users build and check each (make check-configs;
# slow, not part of scripts/test.sh):
#   nothp   tinyconfig + configs/htmm.config with TRANSPARENT_HUGEPAGE=n: builds
#   nohtmm  tinyconfig + configs/htmm.config with HTMM=n: builds, boots to /init
#   distro  x86_64_defconfig + configs/distro.config: builds, boots in the
#           two-tier guest and passes htmm_sysfs_test, htmm_cgroup_test,
#           htmm_enforce_test and htmm_migrate_test's converge_abit
# Prints one result line per configuration with its wall time and exits
# non-zero if one failed.  Logs: $BUILD/logs/check-configs/.
#   CONFIGS="nothp nohtmm distro"   the configurations to check, in order
set -uo pipefail
source "$(dirname "$0")/lib.sh"

CONFIGS=${CONFIGS:-nothp nohtmm distro}
GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800}
LOGS=$BUILD/logs/check-configs
mkdir -p "$LOGS"
start=$(date +%s)
summary=()
failed=0

need_packages "${BUILD_PACKAGES[@]}" libnuma-dev

since() { echo $(( $(date +%s) - $1 )); }

# result PASS|FAIL NAME WHAT SECONDS: one line now and in the summary.
result() {
	local line
	line=$(printf '%s %-7s %s (%d s)' "$1" "$2" "$3" "$4")
	[ "$1" = PASS ] || failed=1
	summary+=("$line")
	echo "$line"
}

# build FLAVOUR: build the kernel; print the build's wall time.
build() {
	local t
	t=$(date +%s)
	note "building the $1 kernel (log: $LOGS/build-$1.log)"
	if ! "$HTMM_TOP/scripts/build-kernel.sh" "$1" > "$LOGS/build-$1.log" 2>&1; then
		tail -n 30 "$LOGS/build-$1.log" >&2
		echo "build of $1 failed after $(since "$t") s" >&2
		return 1
	fi
	echo "# $1: built in $(since "$t") s" >&2
}

# A kernel report in a console log, or nothing.
kernel_report() {
	grep -m1 -E 'WARNING:|BUG:|Oops|Kernel panic|general protection fault|soft lockup|rcu: INFO' "$1"
}

initrd=$BUILD/initramfs-test.cpio
initramfs() {
	[ -n "${initrd_done:-}" ] && return 0
	"$HTMM_TOP/scripts/mkinitramfs.sh" "$initrd" > "$LOGS/initramfs.log" 2>&1 ||
		{ cat "$LOGS/initramfs.log" >&2; return 1; }
	initrd_done=1
}

# boot FLAVOUR NAME APPEND: boot the kernel in the two-tier guest.
boot() {
	local t rc
	t=$(date +%s)
	note "booting the $1 kernel: $3"
	rm -f "$LOGS/$2-console.log" "$LOGS/$2-results.log"
	"$HTMM_TOP/scripts/run-vm.sh" --kernel "$BUILD/kernel-$1/arch/x86/boot/bzImage" \
		--initrd "$initrd" --append "$3" --console "$LOGS/$2-console.log" \
		--results "$LOGS/$2-results.log" --timeout "$GUEST_TIMEOUT" > /dev/null
	rc=$?
	echo "# $2: guest ran $(since "$t") s (qemu exit $rc)" >&2
	return $rc
}

check_nothp() {
	local t
	t=$(date +%s)
	if ! build nothp; then
		result FAIL nothp "tinyconfig+htmm, THP=n: build failed" "$(since "$t")"
	elif grep -q '^CONFIG_TRANSPARENT_HUGEPAGE=y' "$BUILD/kernel-nothp/.config" ||
	     ! grep -q '^CONFIG_HTMM=y' "$BUILD/kernel-nothp/.config"; then
		result FAIL nothp "tinyconfig+htmm, THP=n: not the configuration asked for" "$(since "$t")"
	else
		result PASS nothp "tinyconfig+htmm, THP=n: builds" "$(since "$t")"
	fi
}

check_nohtmm() {
	local t con=$LOGS/nohtmm-console.log bad
	t=$(date +%s)
	if ! build nohtmm; then
		result FAIL nohtmm "tinyconfig+htmm.config, HTMM=n: build failed" "$(since "$t")"
		return
	fi
	if grep -q '^CONFIG_HTMM=y' "$BUILD/kernel-nohtmm/.config"; then
		result FAIL nohtmm "tinyconfig+htmm.config, HTMM=n: HTMM is on" "$(since "$t")"
		return
	fi
	if ! initramfs; then
		result FAIL nohtmm "tinyconfig+htmm.config, HTMM=n: built; initramfs failed" "$(since "$t")"
		return
	fi
	# The test job with no suite to run: /init to its end, then power off.
	boot nohtmm nohtmm "guest_job=tests htmm_tests=none"
	if ! grep -q 'htmm guest: kernel' "$con" || ! grep -q 'htmm guest: done' "$con"; then
		result FAIL nohtmm "tinyconfig+htmm.config, HTMM=n: built; did not run /init to the end" "$(since "$t")"
	elif bad=$(kernel_report "$con"); then
		result FAIL nohtmm "tinyconfig+htmm.config, HTMM=n: built, booted; kernel report: $bad" "$(since "$t")"
	elif [ -e "$BUILD/kernel-nohtmm/mm/htmm" ]; then
		result FAIL nohtmm "tinyconfig+htmm.config, HTMM=n: mm/htmm was built" "$(since "$t")"
	else
		result PASS nohtmm "tinyconfig+htmm.config, HTMM=n: builds, boots to /init" "$(since "$t")"
	fi
}

check_distro() {
	local t out rc1 rc2 tail1 tail2
	t=$(date +%s)
	if ! build distro; then
		result FAIL distro "x86_64_defconfig+distro.config: build failed" "$(since "$t")"
		return
	fi
	if ! initramfs; then
		result FAIL distro "x86_64_defconfig+distro.config: built; initramfs failed" "$(since "$t")"
		return
	fi
	# The control-surface suites whole, then one convergence test.
	boot distro distro-control \
		"guest_job=tests page_owner=on htmm=on htmm_tests=htmm_[sce][ygn]*_test"
	rc1=$?
	python3 "$HTMM_TOP/scripts/parse-results.py" \
		--console "$LOGS/distro-control-console.log" \
		--results "$LOGS/distro-control-results.log" \
		--expect htmm_sysfs_test,htmm_cgroup_test,htmm_enforce_test \
		--qemu-rc "$rc1" > "$LOGS/distro-control.txt" 2>&1
	rc1=$?
	boot distro distro-converge \
		"guest_job=tests page_owner=on htmm=on htmm_tests=htmm_migrate_test htmm_test_args=-tconverge_abit"
	rc2=$?
	python3 "$HTMM_TOP/scripts/parse-results.py" \
		--console "$LOGS/distro-converge-console.log" \
		--results "$LOGS/distro-converge-results.log" \
		--expect htmm_migrate_test --qemu-rc "$rc2" > "$LOGS/distro-converge.txt" 2>&1
	rc2=$?
	grep -v '^PASS' "$LOGS/distro-control.txt" "$LOGS/distro-converge.txt" >&2
	tail1=$(tail -n 1 "$LOGS/distro-control.txt")
	tail2=$(tail -n 1 "$LOGS/distro-converge.txt")
	# converge_abit must have run and passed, not been skipped.
	grep -q '^PASS .*converge_abit' "$LOGS/distro-converge.txt" || rc2=1
	out="x86_64_defconfig+distro.config: builds, boots; sysfs+cgroup+enforce: $tail1; converge_abit: $tail2"
	if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then
		result PASS distro "$out" "$(since "$t")"
	else
		result FAIL distro "$out (see $LOGS)" "$(since "$t")"
	fi
}

for c in $CONFIGS; do
	case "$c" in
	nothp|nohtmm|distro) "check_$c" ;;
	*) die "unknown configuration '$c' (nothp, nohtmm or distro)" ;;
	esac
done

echo "# check-configs: $(since "$start") s in all; logs in $LOGS"
printf '%s\n' "${summary[@]}"
exit $failed
