#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest for guest_job=soak (scripts/soak.sh): htmm_soak with
# the seed and the length the kernel command line gives
# (htmm_soak_seed=N, htmm_soak_seconds=S), framed like run-tests.sh so
# that the host parser (scripts/parse-results.py) reads it: one suite,
# htmm_soak, with two results, the soak itself and the kernel log after
# it.  Output goes to the second serial port.  The host checks the whole
# console for kernel reports as well; the kernel log here is a ring
# buffer and may have lost the start of a long run.
cd /htmm || exit 1
seed=${htmm_soak_seed:-1}
secs=${htmm_soak_seconds:-180}
# What scripts/parse-results.py (KERNEL_BAD) fails a run on.
BAD='WARNING:|BUG:|Oops|Kernel panic|general protection fault|KASAN:|UBSAN:'
BAD="$BAD|INFO: possible|INFO: task .* blocked|possible circular locking"
BAD="$BAD|possible recursive locking|inconsistent lock state"
BAD="$BAD|suspicious RCU usage|rcu: INFO|soft lockup|hard LOCKUP"
BAD="$BAD|DEBUG_LOCKS_WARN_ON|sleeping function called from invalid context"
BAD="$BAD|kernel BUG at|list_add corruption|list_del corruption"

echo "# htmm-guest: begin"
free=$(awk '/MemFree/ { print $4 }' /sys/devices/system/node/node0/meminfo)
echo "# htmm-mem: before htmm_soak: node 0 has $free kB free"
echo "# htmm-suite: htmm_soak"
echo "1..2"
t0=$(cut -d. -f1 /proc/uptime)
rm -f /tmp/soak.out /tmp/soak.rc
if [ -x bin/htmm_soak ]; then
	# shown as it runs, kept for the summary, exit status on the side
	{ bin/htmm_soak --seed "$seed" --seconds "$secs" 2>&1
	  echo $? > /tmp/soak.rc; } | tee /tmp/soak.out
	rc=$(cat /tmp/soak.rc 2>/dev/null)
else
	echo "# bin/htmm_soak is not in the initramfs"
fi
rc=${rc:-127}
summary=$(grep '^soak: seed' /tmp/soak.out 2>/dev/null | tail -n 1)
[ -n "$summary" ] || summary="soak: seed $seed, no summary line"
if [ "$rc" = 0 ]; then
	echo "ok 1 $summary"
else
	echo "not ok 1 $summary (exit status $rc)"
fi

n=$(dmesg | grep -cE "$BAD")
if [ "$n" = 0 ]; then
	echo "ok 2 no warning, BUG, lockdep or KASAN report in the kernel log"
else
	echo "not ok 2 $n kernel report line(s) in the kernel log"
	dmesg | grep -E "$BAD" | head -n 20 | sed 's/^/# /'
fi
echo "# htmm-exit: htmm_soak $rc"
echo "# htmm-time: htmm_soak $(( $(cut -d. -f1 /proc/uptime) - t0 )) s"
echo "# htmm-guest: end"
