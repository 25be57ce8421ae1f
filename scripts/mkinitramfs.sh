#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the guest initramfs: static busybox, the guest scripts, the htmm
# kselftests and the guest tools, all statically linked.
#   mkinitramfs.sh OUTPUT.cpio
#   mkinitramfs.sh --workloads OUTPUT.cpio
# With --workloads it writes instead the archive of the workloads of
# scripts/bench.sh workloads: Debian's redis-server and our drivers of
# tools/htmm/workloads/, linked dynamically against Debian's libraries,
# with the libraries they load (their ldd closure) and the dynamic loader.
# Callers append it to the first archive (the kernel unpacks both), so
# that the other guests do not carry it.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

workloads=0
if [ "${1:-}" = --workloads ]; then
	workloads=1
	shift
fi
out=${1:?usage: mkinitramfs.sh [--workloads] OUTPUT.cpio}
need_packages busybox-static cpio build-essential
[ $workloads = 0 ] || need_packages "${WORKLOAD_PACKAGES[@]}"
SRC=$BUILD/linux
[ -f "$SRC/tools/testing/selftests/kselftest_harness.h" ] ||
	die "no prepared kernel tree in $SRC (run scripts/build-kernel.sh first)"

# The workloads' archive on stdout: programs under /htmm/wl and
# /usr/bin, libraries where ldd found them, the loader at its ELF path.
workloads_cpio() {
	local w=$root/wl progs p
	make -s -C "$HTMM_TOP/tools/htmm/workloads" O="$BUILD/workloads" >&2 ||
		die "building the workloads failed"
	mkdir -p "$w/htmm/wl" "$w/usr/bin"
	cp "$BUILD"/workloads/* "$w/htmm/wl/"
	cp /usr/bin/redis-server "$w/usr/bin/"
	progs=("$w"/htmm/wl/* "$w/usr/bin/redis-server")
	for p in $(ldd "${progs[@]}" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
			/^\t\/.*ld-linux/ { print $1 }' | sort -u); do
		mkdir -p "$w$(dirname "$p")"
		cp -L "$p" "$w$p"
	done
	(cd "$w" && find . -print0 | cpio -o -0 -H newc --quiet)
}

root=$(mktemp -d "$BUILD/.initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
if [ $workloads = 1 ]; then
	workloads_cpio > "$out.tmp"
	mv "$out.tmp" "$out"
	echo "$out"
	exit 0
fi
chmod 755 "$root"
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,root,htmm/tests,htmm/bin,htmm/smoke}
cp /bin/busybox "$root/bin/busybox"
cp "$HTMM_TOP/scripts/guest/init" "$root/init"
cp "$HTMM_TOP"/scripts/guest/*.sh "$root/htmm/"

# kselftests, built from the copy in the prepared tree so that the
# harness header matches the kernel.
objdir=$BUILD/selftests
mkdir -p "$objdir"
for c in "$SRC"/tools/testing/selftests/htmm/*_test.c; do
	[ -e "$c" ] || continue
	b=$objdir/$(basename "$c" .c)
	if [ ! -x "$b" ] || [ -n "$(find "$SRC/tools/testing/selftests/htmm" -newer "$b" -print -quit)" ]; then
		gcc -static -O2 -Wall -Wextra -Werror -I"$SRC/tools/testing/selftests" \
			-o "$b" "$c" || die "building $(basename "$c") failed"
	fi
	cp "$b" "$root/htmm/tests/"
done

# The soak (scripts/soak.sh), in bin/ so that run-tests.sh does not run it.
gcc -static -O2 -Wall -Wextra -Werror -I"$SRC/tools/testing/selftests" \
	-o "$root/htmm/bin/htmm_soak" "$SRC/tools/testing/selftests/htmm/htmm_soak.c" \
	-lpthread || die "building htmm_soak failed"

# Guest helper programs of our own.
for c in "$HTMM_TOP"/tools/htmm/*.c; do
	[ -e "$c" ] || continue
	gcc -static -O2 -Wall -Wextra -Werror -o "$root/htmm/bin/$(basename "$c" .c)" "$c" -lm ||
		die "building $(basename "$c") failed"
done

# Guest tools that ship a smoke script.
make -s -C "$HTMM_TOP/tools/htmm/cli" STATIC=1 O="$BUILD/htmm-cli-static" >/dev/null ||
	die "building the htmm command failed"
cp "$BUILD/htmm-cli-static/htmm" "$root/htmm/bin/htmm"
cp "$HTMM_TOP/tools/htmm/cli/guest-smoke.sh" "$root/htmm/smoke/htmm_cli.sh"
if [ -f "$HTMM_TOP/tools/tierbench/Makefile" ]; then
	make -s -C "$HTMM_TOP/tools/tierbench" O="$BUILD/tierbench" >/dev/null ||
		die "building tierbench failed"
	cp "$BUILD"/tierbench/* "$root/htmm/bin/" 2>/dev/null || true
	[ -f "$HTMM_TOP/tools/tierbench/guest-smoke.sh" ] &&
		cp "$HTMM_TOP/tools/tierbench/guest-smoke.sh" "$root/htmm/smoke/tierbench.sh"
fi

(cd "$root" && find . -print0 | cpio -o -0 -H newc --quiet) > "$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
