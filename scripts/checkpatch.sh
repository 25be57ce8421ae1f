#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl --strict on our hook patches and on every
# new file of ours that lands in the kernel tree.
#   checkpatch.sh          human-readable report, exit 1 on any finding
#   checkpatch.sh --tap    one TAP line per file
#   --no-export            check the series already exported in $BUILD/series
#                          (scripts/test.sh's apply check has just exported it)
set -uo pipefail
source "$(dirname "$0")/lib.sh"

SRC=$BUILD/linux
CP=$SRC/scripts/checkpatch.pl
[ -x "$CP" ] || "$HTMM_TOP/scripts/prepare-tree.sh" > /dev/null || die "cannot prepare the tree"
tap=0 export=1
for a in "$@"; do
	case "$a" in
	--tap) tap=1 ;;
	--no-export) export=0 ;;
	*) die "unknown option '$a' (--tap, --no-export)" ;;
	esac
done

# The exported series: our hook patches together with the new files, as a
# reviewer receives them (commit messages, MAINTAINERS, Kconfig help).
if [ $export = 1 ]; then
	"$HTMM_TOP/scripts/export-series.sh" > /dev/null || die "exporting the series failed"
fi
mapfile -t patches < <(ls "$BUILD"/series/patches/*.patch 2>/dev/null)
[ ${#patches[@]} -gt 0 ] || die "no exported series in $BUILD/series/patches"
mapfile -t files < <(cd "$HTMM_TOP" && ls mm/htmm/*.[ch] include/linux/htmm.h \
	include/trace/events/htmm.h tools/htmm/*.c tools/htmm/policy/*.c \
	tools/testing/selftests/htmm/*.[ch] 2>/dev/null | grep -v '^tools/htmm/ccowbench.c$')
# The htmm command and the host's TSC probe are userspace: no u64, no
# __printf or __noreturn; the command must mark what a signal handler
# shares volatile, and prints its long
# messages with printf, which checkpatch does not exempt as it does pr_*().
# The workload drivers call libraries with CamelCase names (hiredis); the
# CCoW micro-benchmark's busy loop of other work is a volatile counter.
mapfile -t ufiles < <(cd "$HTMM_TOP" && ls tools/htmm/cli/src/*.[ch] tools/htmm/cli/tests/*.c \
	tools/htmm/workloads/*.[ch] tools/htmm/ccowbench.c scripts/tsc-khz.c 2>/dev/null)
uopts=(--ignore PREFER_KERNEL_TYPES,VOLATILE,PREFER_DEFINED_ATTRIBUTE_MACRO,LONG_LINE_STRING,CAMELCASE)
opts=(--strict --quiet --no-summary --show-types --root="$SRC")
n=0 bad=0
[ $tap = 1 ] && echo "1..$(( ${#patches[@]} + ${#files[@]} + ${#ufiles[@]} + 1 ))"
# The new paths we add to the kernel tree, as MAINTAINERS names them.
overlay_paths() {
	echo Documentation/ABI/testing/sysfs-kernel-mm-htmm
	echo Documentation/admin-guide/mm/htmm.rst
	echo include/linux/htmm.h
	echo mm/htmm/
	echo tools/testing/selftests/htmm/
	[ -e include/trace/events/htmm.h ] && echo include/trace/events/htmm.h
	true
}
# The checks run $NPROC at a time, each into its own file ($tmp/K.out,
# K from 1 in the order they were asked for), and report in that order.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs_asked=()
check() {
	local what=$1
	shift
	while [ "$(jobs -rp | wc -l)" -ge "$NPROC" ]; do wait -n; done
	jobs_asked+=("$what")
	(cd "$HTMM_TOP" && PATH=/usr/bin:$PATH perl "$CP" "${opts[@]}" "$@" \
		> "$tmp/${#jobs_asked[@]}.out" 2>&1) &
}
# Report checks $1.. in order, as numbers $n + 1 on.
report_checks() {
	local i out
	wait
	for ((i = $1; i <= ${#jobs_asked[@]}; i++)); do
		n=$((n + 1))
		out=$(cat "$tmp/$i.out")
		if [ -z "$out" ]; then
			[ $tap = 1 ] && echo "ok $n checkpatch ${jobs_asked[i - 1]}"
		else
			bad=$((bad + 1))
			if [ $tap = 1 ]; then
				echo "not ok $n checkpatch ${jobs_asked[i - 1]}"
				echo "$out" | sed 's/^/# /'
			else
				echo "$out"
			fi
		fi
	done
}
# checkpatch asks every patch that adds a file to update MAINTAINERS; ours
# has one MAINTAINERS entry (added by the core patch) for all our paths, so
# that question is answered once, below, instead of per patch.
for p in "${patches[@]}"; do check "series/${p##*/}" --ignore FILE_PATH_CHANGES "$p"; done
for f in "${files[@]}"; do check "$f" -f "$f"; done
for f in "${ufiles[@]}"; do check "$f" "${uopts[@]}" -f "$f"; done
report_checks 1
# Then the one MAINTAINERS check.
n=$((n + 1))
missing=$(cd "$HTMM_TOP" && for f in $(overlay_paths); do
		grep -q "^+F:	$f" "$BUILD"/series/patches/*.patch || echo "$f"
	done)
if [ -z "$missing" ]; then
	[ $tap = 1 ] && echo "ok $n MAINTAINERS covers every new path"
else
	bad=$((bad + 1))
	echo "${tap:+not ok $n MAINTAINERS covers every new path}"
	echo "# not in MAINTAINERS: $missing"
fi
[ $tap = 0 ] && echo "checkpatch: $bad of $n files with findings"
[ $bad -eq 0 ]
