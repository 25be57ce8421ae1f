#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: one run of the plugin's model benchmark
# (scripts/bench.sh model), a pointer chase (epebs_probe) of
# bench_mb MiB (default 64) on node bench_node (0 or 1) for bench_seconds
# (default 10), with the emulated-PEBS relay running if the VM has its
# port.  Prints the probe's line and the relay's to the results port.
exec > /dev/ttyS1 2>&1
B=/htmm/bin
mb=${bench_mb:-64}
secs=${bench_seconds:-10}
if [ "${bench_node:-0}" = 0 ]; then
	where="--fast $mb"
else
	where="--slow $mb"
fi
echo "bench model node ${bench_node:-0} mb $mb seconds $secs"
rpid=
if ls /sys/class/virtio-ports/*/name > /dev/null 2>&1; then
	$B/epebs_relay > /tmp/relay.out 2>&1 &
	rpid=$!
fi
# shellcheck disable=SC2086 # two words
$B/epebs_probe $where --seconds "$secs"
if [ -n "$rpid" ]; then
	kill -TERM $rpid
	wait $rpid
	cat /tmp/relay.out
fi
