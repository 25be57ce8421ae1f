#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl --strict on our hook patches and on every
# new file of ours that lands in the kernel tree.
#   checkpatch.sh          human-readable report, exit 1 on any finding
#   checkpatch.sh --tap    one TAP line per file
set -uo pipefail
source "$(dirname "$0")/lib.sh"

SRC=$BUILD/linux
CP=$SRC/scripts/checkpatch.pl
[ -x "$CP" ] || "$HTMM_TOP/scripts/prepare-tree.sh" > /dev/null || die "cannot prepare the tree"
tap=0
[ "${1:-}" = "--tap" ] && tap=1

mapfile -t patches < <(cd "$HTMM_TOP" && ls patches/*.patch)
mapfile -t files < <(cd "$HTMM_TOP" && ls mm/htmm/*.[ch] include/linux/htmm.h \
	tools/testing/selftests/htmm/*.[ch] 2>/dev/null)
opts=(--strict --quiet --no-summary --show-types --root="$SRC")
n=0 bad=0
[ $tap = 1 ] && echo "1..$(( ${#patches[@]} + ${#files[@]} ))"
check() {
	local what=$1 out
	shift
	n=$((n + 1))
	out=$(cd "$HTMM_TOP" && PATH=/usr/bin:$PATH perl "$CP" "${opts[@]}" "$@" 2>&1)
	if [ -z "$out" ]; then
		[ $tap = 1 ] && echo "ok $n checkpatch $what"
	else
		bad=$((bad + 1))
		if [ $tap = 1 ]; then
			echo "not ok $n checkpatch $what"
			echo "$out" | sed 's/^/# /'
		else
			echo "$out"
		fi
	fi
}
for p in "${patches[@]}"; do check "$p" "$p"; done
for f in "${files[@]}"; do check "$f" -f "$f"; done
[ $tap = 0 ] && echo "checkpatch: $bad of $n files with findings"
[ $bad -eq 0 ]
