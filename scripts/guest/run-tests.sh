#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: every kselftest binary and every guest smoke script,
# each framed by markers that the host parser (scripts/parse-results.py)
# understands.  Output goes to the second serial port.  htmm_tests=GLOB on
# the kernel command line runs only the suites whose name matches, and
# htmm_test_args=ARG passes one argument to each (for example -tNAME, to
# run one test of a kselftest suite).
cd /htmm || exit 1
echo "# htmm-guest: begin"
for t in tests/*; do
	[ -x "$t" ] || continue
	name=${t##*/}
	case "$name" in ${htmm_tests:-*}) ;; *) continue ;; esac
	echo "# htmm-suite: $name"
	# shellcheck disable=SC2086 # one optional word
	"$t" ${htmm_test_args:-} 2>&1
	echo "# htmm-exit: $name $?"
done
for s in smoke/*.sh; do
	[ -f "$s" ] || continue
	name=${s##*/}
	name=${name%.sh}
	case "$name" in ${htmm_tests:-*}) ;; *) continue ;; esac
	echo "# htmm-suite: $name"
	sh "$s" /htmm/bin 2>&1
	echo "# htmm-exit: $name $?"
done
echo "# htmm-guest: end"
