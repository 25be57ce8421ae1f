#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the htmm kernel out of tree.
#   scripts/build-kernel.sh demo    tinyconfig + configs/htmm.config
#   scripts/build-kernel.sh debug   ... + configs/htmm-debug.config (tests)
#   scripts/build-kernel.sh nothp   tinyconfig + configs/htmm.config, THP=n
#   scripts/build-kernel.sh nohtmm  tinyconfig + configs/htmm.config, HTMM=n
#   scripts/build-kernel.sh distro  x86_64_defconfig + configs/distro.config
# The last three are for "make check-configs".  Every flavour builds from
# the same prepared tree, $BUILD/linux.
# Output: $BUILD/kernel-<flavour>/arch/x86/boot/bzImage
set -euo pipefail
source "$(dirname "$0")/lib.sh"

flavour=${1:-debug}
base=tinyconfig
over=()		# options that override the fragments
case "$flavour" in
demo) frags=("$HTMM_TOP/configs/htmm.config") ;;
debug) frags=("$HTMM_TOP/configs/htmm.config" "$HTMM_TOP/configs/htmm-debug.config") ;;
nothp) frags=("$HTMM_TOP/configs/htmm.config")
	over=(CONFIG_TRANSPARENT_HUGEPAGE=n CONFIG_TRANSPARENT_HUGEPAGE_MADVISE=n) ;;
nohtmm) frags=("$HTMM_TOP/configs/htmm.config")
	over=(CONFIG_HTMM=n CONFIG_HTMM_DEBUG=n) ;;
distro) base=x86_64_defconfig frags=("$HTMM_TOP/configs/distro.config") ;;
*) die "unknown flavour '$flavour' (demo, debug, nothp, nohtmm or distro)" ;;
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
if [ ${#over[@]} -gt 0 ]; then
	printf '%s\n' "${over[@]}" > "$cfgdir/override.frag"
	frags+=("$cfgdir/override.frag")
fi
make -s -C "$SRC" O="$cfgdir" ARCH=x86_64 "$base" >/dev/null
"$SRC/scripts/kconfig/merge_config.sh" -m -O "$cfgdir" "$cfgdir/.config" "${frags[@]}" >/dev/null
make -s -C "$SRC" O="$cfgdir" ARCH=x86_64 olddefconfig >/dev/null
# Every option a fragment asks for must have survived olddefconfig (the
# last fragment that names an option wins; =n also holds for an option
# that is not there, such as one whose dependencies are off).
bad=0
declare -A want=()
while IFS= read -r line; do
	case "$line" in CONFIG_*=*) want[${line%%=*}]=$line ;; esac
done < <(cat "${frags[@]}")
for opt in "${!want[@]}"; do
	line=${want[$opt]}
	case "$line" in
	CONFIG_*=n) ! grep -q "^$opt=" "$cfgdir/.config" || { echo "config: $line did not stick" >&2; bad=1; } ;;
	*) grep -qx "$line" "$cfgdir/.config" || { echo "config: $line did not stick" >&2; bad=1; } ;;
	esac
done
[ $bad -eq 0 ] || die "kernel configuration is missing options (see above)"
if ! cmp -s "$cfgdir/.config" "$OUT/.config"; then
	cp "$cfgdir/.config" "$OUT/.config"
fi

note "building $flavour kernel in $OUT"
start=$(date +%s)
kmake olddefconfig >/dev/null
kmake -j"$NPROC" bzImage
echo "built $OUT/arch/x86/boot/bzImage in $(( $(date +%s) - start )) s" >&2
