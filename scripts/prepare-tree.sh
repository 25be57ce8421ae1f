#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare the patched kernel source tree in $BUILD/linux.
#
# The pristine tree (Debian's linux-source-6.12, or $KSRC) is imported once
# into a private git repository as the commit "pristine".  Each run builds a
# new tree object from pristine + patches/series (git apply: no fuzz) + our
# new files, and checks it out.  Only files whose contents changed are
# rewritten, so incremental kernel builds stay incremental.  The pristine
# source itself is never modified.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SRC=$BUILD/linux
export GIT_DIR=$SRC/.git GIT_WORK_TREE=$SRC
gitq() { git -c user.name=htmm -c user.email=htmm@localhost -c gc.auto=0 "$@"; }

source_id() {
	if [ -n "${KSRC:-}" ]; then
		echo "ksrc:$(cd "$KSRC" && pwd)"
	else
		echo "tarball:$KTARBALL:$(stat -c '%s:%Y' "$KTARBALL")"
	fi
}

import_pristine() {
	local id
	id=$(source_id)
	if [ -f "$GIT_DIR/htmm-source" ] && [ "$(cat "$GIT_DIR/htmm-source")" = "$id" ]; then
		return 0
	fi
	note "importing pristine kernel source ($id)"
	rm -rf "$SRC"
	mkdir -p "$SRC"
	if [ -n "${KSRC:-}" ]; then
		[ -f "$KSRC/Makefile" ] && [ -f "$KSRC/mm/memcontrol.c" ] ||
			die "KSRC=$KSRC does not look like a kernel tree"
		tar -C "$KSRC" --exclude=.git -cf - . | tar -C "$SRC" -xf -
	else
		[ -f "$KTARBALL" ] || die "$KTARBALL not found: install linux-source-6.12 or set KSRC"
		case "$KTARBALL" in
		# Debian's tarball has 62 xz blocks: one thread a core.
		*.xz) xz -T0 -dc "$KTARBALL" | tar -C "$SRC" --strip-components=1 -xf - ;;
		*) tar -C "$SRC" --strip-components=1 -xf "$KTARBALL" ;;
		esac
	fi
	[ ! -f "$SRC/.config" ] || die "the source tree has a .config; run 'make mrproper' in it first"
	gitq init -q
	gitq add -A -f
	gitq commit -q -m pristine
	gitq tag -f pristine >/dev/null
	echo "$id" > "$GIT_DIR/htmm-source"
}

check_version() {
	local v
	v=$(make -s -C "$SRC" kernelversion 2>/dev/null) || die "cannot read kernel version"
	case "$v" in
	6.12.*) ;;
	*) die "kernel $v is not 6.12: the series targets Linux 6.12" ;;
	esac
	[ "$v" = "$BASE_VERSION" ] ||
		echo "warning: kernel source is $v; the series was tested on $BASE_VERSION" >&2
}

# Files of ours that land in the kernel tree, relative to the repository.
overlay_files() {
	(cd "$HTMM_TOP" &&
	 find mm include Documentation tools/testing/selftests/htmm -type f \
		! -name '*.o' ! -name '*~' 2>/dev/null | sort)
}

build_tree() {
	local idx p f blob mode tree commit
	idx=$(mktemp "$BUILD/.index.XXXXXX")
	trap 'rm -f "$idx"' RETURN
	GIT_INDEX_FILE=$idx gitq read-tree pristine
	while read -r p _; do
		case "$p" in ''|'#'*) continue ;; esac
		GIT_INDEX_FILE=$idx gitq apply --cached "$HTMM_TOP/patches/$p" ||
			die "patches/$p does not apply to $(source_id)"
	done < "$HTMM_TOP/patches/series"
	while read -r f; do
		blob=$(gitq hash-object -w "$HTMM_TOP/$f")
		mode=100644
		[ -x "$HTMM_TOP/$f" ] && mode=100755
		GIT_INDEX_FILE=$idx gitq update-index --add --cacheinfo "$mode,$blob,$f"
	done < <(overlay_files)
	tree=$(GIT_INDEX_FILE=$idx gitq write-tree)
	if [ "$(gitq rev-parse -q --verify 'HEAD^{tree}' 2>/dev/null)" != "$tree" ] ||
	   [ -n "$(gitq status --porcelain --untracked-files=no)" ]; then
		commit=$(gitq commit-tree -p pristine -m "htmm overlay" "$tree")
		gitq checkout -q -f --detach "$commit"
	fi
}

mkdir -p "$BUILD"
need_kernel_source
import_pristine
check_version
build_tree
echo "$SRC"
