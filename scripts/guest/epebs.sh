#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest for guest_job=epebs, a boot under the QEMU plugin with
# emulated PEBS (scripts/run-vm.sh --pebs): checks that the samples the
# plugin takes reach htmm with the right physical addresses and kinds, and
# that a period change reaches the plugin.  Framed like run-tests.sh, one
# suite, htmm_epebs; output on the second serial port.
#
# A pointer chase (epebs_probe) over 16 MiB on node 0 and 16 MiB on node
# 1, with a store every 16 loads, runs in an htmm cgroup (sampler inject,
# so that ksamplingd runs and publishes the periods in force) while the
# relay injects the plugin's samples and logs them.  Every load sample of
# a probe page must carry the kind of the page's node; the probe's pages
# must get most load samples; halfway, htmm_sample_period goes from 199
# to 997, and the plugin's ack of 997 must reach the relay.
cd /htmm || exit 1
B=/htmm/bin
H=/sys/kernel/mm/htmm
CG=/sys/fs/cgroup/epebs
T=/tmp/epebs
SECS=${htmm_epebs_seconds:-8}
BAD='WARNING:|BUG:|Oops|Kernel panic|general protection fault|KASAN:|UBSAN:'
BAD="$BAD|INFO: possible|possible circular locking|inconsistent lock state"
BAD="$BAD|suspicious RCU usage|soft lockup|kernel BUG at"
mkdir -p $T

N=0
FAIL=0
ok() { N=$((N + 1)); echo "ok $N - $1"; }
nok() { N=$((N + 1)); FAIL=$((FAIL + 1)); echo "not ok $N - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { if [ "$CHK" = 0 ]; then ok "$@"; else nok "$@"; fi; }

echo "# htmm-guest: begin"
echo "# htmm-suite: htmm_epebs"
echo "1..6"
t0=$(cut -d. -f1 /proc/uptime)
p0=$(cat $H/htmm_sample_period)

m0=$(cat $H/htmm_mode)
q0=$(cat $H/ksampled_soft_cpu_quota)
echo inject > $H/htmm_sampler
echo 0 > $H/htmm_mode		# classify only: the probe's pages stay put
# No quota control: the periods in force are the tunable's, 199 then 997.
echo 0 > $H/ksampled_soft_cpu_quota
mkdir -p $CG
echo enabled > $CG/memory.htmm_enabled
$B/epebs_relay --log $T/log --log-max 400000 > $T/relay.out 2>&1 &
rpid=$!
sh -c "echo \$\$ > $CG/cgroup.procs && exec $B/epebs_probe --fast 16 --slow 16 --seconds $SECS --stores 16 --pfns $T/pfns" \
	> $T/probe.out 2>&1 &
ppid=$!
sleep $((SECS / 2 + 2))
echo 997 > $H/htmm_sample_period
wait $ppid
prc=$?
# The ack of 997, with a deadline.
i=0
while ! grep -q '^ack load 997$' $T/log && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
acked=$i
kill -TERM $rpid
wait $rpid
rrc=$?
sed 's/^/# /' $T/probe.out $T/relay.out
grep -E '^(sent|ack) ' $T/log | head -20 | sed 's/^/# relay: /'

CHK=1
[ "$prc" = 0 ] && [ "$rrc" = 0 ] && CHK=0
check "probe and relay ran (exit $prc, $rrc)"

# Load samples of the probe's pages: their kinds against the pages' nodes.
awk '
FILENAME == ARGV[1] { kind[$1] = $2; next }
$2 == "store" { stores++; if ($1 in kind) pstores++; next }
$2 ~ /^load-/ {
	loads++
	if (!($1 in kind)) next
	mine++
	if ($2 == kind[$1]) good++; else bad++
	if ($2 == "load-fast") fast++; else slow++
}
END {
	printf "loads %d probe %d right %d wrong %d fast %d slow %d stores %d probe_stores %d\n",
	       loads, mine, good, bad, fast, slow, stores, pstores
}' $T/pfns $T/log > $T/sum
cat $T/sum | sed 's/^/# samples: /'
# shellcheck disable=SC2046 # the words of one line
set -- $(cat $T/sum)
loads=$2 mine=$4 wrong=$8 fast=${10} slow=${12} pstores=${16}
CHK=1
[ "$loads" -ge 1000 ] && CHK=0
check "samples arrive ($loads load samples)"
CHK=1
[ "$mine" -gt 0 ] && [ "$wrong" = 0 ] && [ "$fast" -gt 0 ] && [ "$slow" -gt 0 ] && CHK=0
check "every load sample of a probe page has its node's kind ($mine, $wrong wrong)"
CHK=1
[ $((mine * 2)) -ge "$loads" ] && [ "$pstores" -gt 0 ] && CHK=0
check "the probe gets most load samples ($mine of $loads) and store samples ($pstores)"
CHK=1
grep -q '^ack load 997$' $T/log && CHK=0
check "a period change reaches the plugin (ack of 997, $acked tenths of a second after the probe)"

n=$(dmesg | grep -cE "$BAD")
CHK=1
[ "$n" = 0 ] && CHK=0
check "no kernel report in the kernel log ($n lines)"
grep "^samples_inject\|^sample_period" $CG/memory.htmm_stat | sed 's/^/# stat: /'
echo disabled > $CG/memory.htmm_enabled
echo "$p0" > $H/htmm_sample_period
echo "$m0" > $H/htmm_mode
echo "$q0" > $H/ksampled_soft_cpu_quota
echo "# htmm-exit: htmm_epebs $FAIL"
echo "# htmm-time: htmm_epebs $(( $(cut -d. -f1 /proc/uptime) - t0 )) s"
echo "# htmm-guest: end"
