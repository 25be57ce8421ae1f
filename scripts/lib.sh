# SPDX-License-Identifier: GPL-2.0
# Common settings for the htmm scripts.  Sourced, not executed.

HTMM_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$HTMM_TOP/build}
# The kernel tree the series was last tested on.
BASE_VERSION=$(sed -n 's/^version: *//p' "$HTMM_TOP/patches/BASE")
KTARBALL=${KTARBALL:-/usr/src/linux-source-6.12.tar.xz}
NPROC=$(nproc)

die() { echo "error: $*" >&2; exit 1; }
note() { echo "==> $*" >&2; }
warn() { echo "warning: $*" >&2; }

# Install the Debian packages we need, once, when we are root and they are
# missing.  Non-root users get a clear message instead.
need_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		die "missing packages: ${missing[*]} (run as root once, or apt-get install them)"
	fi
	note "installing ${missing[*]}"
	apt-get update -q >/dev/null || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
}

# Debian's pristine kernel source, unless the user points KSRC at a tree.
# Ask for the exact version in patches/BASE; when the archive no longer has
# it, take the newest linux-source-6.12 it has and say so.
# A setup step failed: say so as a test result and stop.
bail() {
	echo "FAIL setup: $1"
	echo "0 passed, 1 failed"
	exit 1
}

# Build the debug kernel (installing what it needs), its log in $1;
# $start is when the run began.
build_debug_kernel() {
	need_packages "${BUILD_PACKAGES[@]}" libnuma-dev
	"$HTMM_TOP/scripts/build-kernel.sh" debug > "$1/build-debug.log" 2>&1 ||
		{ tail -n 40 "$1/build-debug.log"; bail "building the debug kernel (see $1/build-debug.log)"; }
	echo "# kernel built ($(( $(date +%s) - start )) s)"
}

need_kernel_source() {
	local want have
	[ -n "${KSRC:-}" ] && return 0
	[ -f "$KTARBALL" ] && return 0
	[ "$KTARBALL" = /usr/src/linux-source-6.12.tar.xz ] ||
		die "$KTARBALL not found (KTARBALL is set; unset it to use Debian's linux-source-6.12)"
	[ "$(id -u)" -eq 0 ] ||
		die "$KTARBALL not found: run as root once, apt-get install linux-source-6.12, or set KSRC"
	want=$(sed -n 's/^package: *linux-source-6.12 *\([^ ]*\).*/\1/p' "$HTMM_TOP/patches/BASE")
	note "installing linux-source-6.12${want:+ $want}"
	apt-get update -q >/dev/null || die "apt-get update failed"
	have=$(apt-cache madison linux-source-6.12 2>/dev/null | awk -v w="$want" '$3 == w {print $3; exit}')
	if [ -n "$want" ] && [ "$have" = "$want" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			"linux-source-6.12=$want" >/dev/null || die "apt-get install linux-source-6.12=$want failed"
	else
		warn "linux-source-6.12 $want is no longer in the archive; taking the newest 6.12 it has"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			linux-source-6.12 >/dev/null || die "apt-get install linux-source-6.12 failed"
	fi
	[ -f "$KTARBALL" ] || die "linux-source-6.12 installed, but $KTARBALL is missing"
}

# What both commands install (gnuplot-nox draws `htmm report --plot`).
BUILD_PACKAGES=(build-essential flex bison bc libelf-dev libssl-dev cpio ccache
		python3 python3-ply python3-git git busybox-static qemu-system-x86 xz-utils rsync
		gnuplot-nox)
# The workloads of scripts/bench.sh workloads: Debian's Redis and the
# libraries our drivers (tools/htmm/workloads/) are written against.
WORKLOAD_PACKAGES=(redis-server libhiredis-dev liblinear-dev libigraph-dev libsqlite3-dev)

# Fast-node size of the test guests (MiB).  The debug kernel reserves much
# of node 0 at boot (KASAN shadow, one eighth of all memory; page_ext, 96
# bytes a page with page_owner; which node gets what was not worked out):
# with the default 512 + 2048 MiB, node 0 had 152 MiB in all and 95 MiB
# free when the first suite started.  With 1024 MiB it has 731 MiB and
# 655 MiB free (measured at boot).
TEST_FAST_MB=1024
