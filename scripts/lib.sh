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

BUILD_PACKAGES=(build-essential flex bison bc libelf-dev libssl-dev cpio ccache
		python3 python3-ply python3-git git busybox-static qemu-system-x86 xz-utils rsync)
