#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the htmm kernel out of tree.
#   scripts/build-kernel.sh demo    tinyconfig + configs/htmm.config
#   scripts/build-kernel.sh debug   ... + configs/htmm-debug.config (tests)
# Output: $BUILD/kernel-<flavour>/arch/x86/boot/bzImage
set -euo pipefail
source "$(dirname "$0")/lib.sh"

flavour=${1:-debug}
case "$flavour" in
demo) frags=("$HTMM_TOP/configs/htmm.config") ;;
debug) frags=("$HTMM_TOP/configs/htmm.config" "$HTMM_TOP/configs/htmm-debug.config") ;;
*) die "unknown flavour '$flavour' (demo or debug)" ;;
esac

need_packages "${BUILD_PACKAGES[@]}"
SRC=$("$HTMM_TOP/scripts/prepare-tree.sh")
OUT=$BUILD/kernel-$flavour
mkdir -p "$OUT"

export CCACHE_BASEDIR=$BUILD CCACHE_NOHASHDIR=1
kmake() { make -s -C "$SRC" O="$OUT" ARCH=x86_64 CC="ccache gcc" "$@"; }

# Generate the configuration in a scratch directory and install it only when
# it changed, so that an unchanged configuration does not trigger a rebuild.
cfgdir=$(mktemp -d "$BUILD/.config.XXXXXX")
trap 'rm -rf "$cfgdir"' EXIT
make -s -C "$SRC" O="$cfgdir" ARCH=x86_64 tinyconfig >/dev/null
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$cfgdir" "$cfgdir/.config" "${frags[@]}" >/dev/null
make -s -C "$SRC" O="$cfgdir" ARCH=x86_64 olddefconfig >/dev/null
# Every option a fragment asks for must have survived olddefconfig.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=n) opt=${line%%=*}
		grep -qx "# $opt is not set" "$cfgdir/.config" || { echo "config: $line did not stick" >&2; bad=1; } ;;
	CONFIG_*) grep -qx "$line" "$cfgdir/.config" || { echo "config: $line did not stick" >&2; bad=1; } ;;
	esac
done < <(cat "${frags[@]}")
[ $bad -eq 0 ] || die "kernel configuration is missing options (see above)"
if ! cmp -s "$cfgdir/.config" "$OUT/.config"; then
	cp "$cfgdir/.config" "$OUT/.config"
fi

note "building $flavour kernel in $OUT"
start=$(date +%s)
kmake olddefconfig >/dev/null
kmake -j"$NPROC" bzImage
echo "built $OUT/arch/x86/boot/bzImage in $(( $(date +%s) - start )) s" >&2
