#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest test of the htmm command (tools/htmm/cli) on the booted htmm
# kernel: `htmm run` of a hot/cold workload with a record, `htmm report`
# on it, `status` and `status --watch`, `attach` (to its end and stopped
# by SIGINT), `tune --show`, `--preset memtis` and `--from-tierbench` on a
# tierbench result measured here, a run stopped by SIGINT, what an
# unprivileged user may do, and errors that must leave nothing behind.
# After every run, the tunables in /sys/kernel/mm/htmm and the cgroups
# under /sys/fs/cgroup must be as before.  POSIX sh (busybox ash); TAP.
#
# usage: guest-smoke.sh BINDIR   (BINDIR holds htmm, converge, asuser and
#                                 tierbench)

B=${1:?usage: guest-smoke.sh BINDIR}
HT=$B/htmm
T=/tmp/htmm-cli-smoke.$$
TUN=/sys/kernel/mm/htmm
INTERVAL_MS=500
RUN_S=24
mkdir -p "$T" || exit 2
trap 'rm -rf "$T"' EXIT

N=0
FAIL=0
echo "1..27"
pass() { N=$((N + 1)); echo "ok $N - htmm $1"; }
fail() {
	N=$((N + 1))
	FAIL=$((FAIL + 1))
	echo "not ok $N - htmm $1"
	shift
	for l in "$@"; do echo "# $l"; done
	for f in out err; do
		[ -s "$T/$f" ] && sed -n "1,20s/^/#   $f: /p" "$T/$f"
	done
	return 0
}
check() {	# check DESC WHY... : pass if $CHK is 0
	if [ "$CHK" = 0 ]; then pass "$1"; else fail "$@"; fi
}

# What must be the same after every run: every tunable and the cgroups.
state() {
	for f in "$TUN"/*; do
		[ -f "$f" ] && [ -r "$f" ] && echo "${f##*/} $(cat "$f" 2>/dev/null)"
	done
	ls -d /sys/fs/cgroup/*/ 2>/dev/null
	cat /sys/fs/cgroup/cgroup.subtree_control
}
state > "$T/state0"
same_state() {	# same_state DESC
	state > "$T/state1"
	if cmp -s "$T/state0" "$T/state1"; then
		pass "$1"
	else
		fail "$1" "changed:" "$(diff "$T/state0" "$T/state1" | grep '^[-+][^-+]' | head -10 | tr '\n' ';')"
	fi
}

# 1-2: the read-only views.
"$HT" status > "$T/out" 2> "$T/err"
CHK=$?
[ "$CHK" = 0 ] && { grep -q "^0 .* fast " "$T/out" && grep -q "^1 .* slow " "$T/out" || CHK=1; }
check "status shows the fast and the slow node" "exit status $CHK or a node line missing"
"$HT" tune --show > "$T/out" 2> "$T/err"
CHK=$?
[ "$CHK" = 0 ] && { grep -q "htmm_sample_period" "$T/out" || CHK=1; }
check "tune --show lists the tunables" "no htmm_sample_period line"

# 3-7: a hot/cold workload under `htmm run`, recorded.  converge faults
# 96 MiB of cold data in on node 0 and 32 MiB of hot data on node 1, and
# injects 20000 samples a second on the hot data; the budget is 64 MiB.
"$HT" run --budget 0=64M --sampler inject --set htmm_cooling_period=200000 \
	--record "$T/rec.csv" --interval $INTERVAL_MS -- \
	sh -c "cat /proc/self/cgroup > $T/cgroup; exec $B/converge --cold 96 --hot 32 --seconds $RUN_S --inject 20000 --quiet" \
	> "$T/out" 2> "$T/err"
rc=$?
grep "^result" "$T/out" | sed 's/^/# converge: /'
CHK=$rc
check "run exits with the command's status" "exit $rc"
CHK=1
grep -q "^0::/htmm-run\.[0-9]*$" "$T/cgroup" 2>/dev/null && CHK=0
check "run starts the command in its cgroup" "cgroup: $(cat "$T/cgroup" 2>/dev/null)"

# One row per interval, with the fields the man page promises.
awk -F, -v iv=$INTERVAL_MS -v run=$RUN_S '
NR == 1 {
	for (i = 1; i <= NF; i++) col[$i] = i
	split("time resident_node0 resident_node1 promoted demoted hot_threshold htmm_nr_promoted ksamplingd_cpu_ms kmigraterd0_cpu_ms", need, " ")
	for (k in need) if (!(need[k] in col)) { print "missing column " need[k]; bad = 1 }
	next
}
{ t[NR - 1] = $col["time"] }
END {
	rows = NR - 1
	want = run * 1000 / iv
	printf "rows %d for %d s at %d ms\n", rows, run, iv
	if (rows < want * 0.9) bad = 1
	for (i = 2; i <= rows; i++) {
		d = t[i] - t[i - 1]
		if (d <= 0) { print "time not increasing at row " i; bad = 1 }
		else if (d > 2 * iv / 1000) late++
	}
	printf "rows more than two intervals apart: %d\n", late
	if (late > rows / 10) bad = 1
	exit bad
}' "$T/rec.csv" > "$T/rows" 2>&1
CHK=$?
check "record has one row per interval and the fields" "$(tr '\n' ';' < "$T/rows")"
sed 's/^/# /' "$T/rows"

"$HT" report "$T/rec.csv" > "$T/out" 2> "$T/err"
CHK=$?
t95=$(awk '/^hot set/ && /t95/ { for (i = 1; i <= NF; i++) if ($i == "t95") print $(i + 1) }' "$T/out")
stay=$(awk '/at or above it from then on/ { for (i = 1; i <= NF; i++) if ($i == "t95") print $(i + 1) }' "$T/out")
sed 's/^/# report: /' "$T/out"
case "$t95" in ""|never|-*) CHK=1 ;; esac
case "$stay" in ""|never|-*) CHK=1 ;; esac
check "report finds the hot set reaching the fast tier and staying" "t95 '$t95', from then on '$stay'"
same_state "run restores the tunables and removes its cgroup"

# 8-10: SIGINT in the middle of a run.
"$HT" run --set htmm_cooling_period=300000 -- \
	"$B/converge" --cold 8 --hot 8 --seconds 120 --quiet > "$T/out" 2> "$T/err" &
pid=$!
sleep 3
t0=$(cut -d. -f1 /proc/uptime)
kill -INT $pid
wait $pid
rc=$?
dt=$(($(cut -d. -f1 /proc/uptime) - t0))
echo "# SIGINT: exit $rc after $dt s"
CHK=1
[ "$rc" = 130 ] && CHK=0
check "run stopped by SIGINT exits 130" "exit $rc"
CHK=1
[ "$dt" -le 30 ] && CHK=0
check "run stopped by SIGINT ends within 30 s" "$dt s"
same_state "run stopped by SIGINT restores everything"

# 11-12: bad input is refused before anything is made.
"$HT" run --budget 7=1M --set htmm_cooling_period=400000 -- true > "$T/out" 2> "$T/err"
rc=$?
CHK=1
[ "$rc" != 0 ] && grep -q "^htmm: .*node" "$T/err" && CHK=0
check "run refuses an unknown node" "exit $rc"
same_state "a refused run leaves nothing behind"

# 13-19: attach to a running process, in a cgroup of the operator's.
ACG=htmm-smoke-att.$$
A=/sys/fs/cgroup/$ACG
NOBODY="$B/asuser 65534 65534"
mkdir $A
en0=$(cat $A/memory.htmm_enabled) max0=$(cat $A/memory.max_at_node0)
wait_in() {	# wait_in PID CGDIR: until PID is in CGDIR (10 s); seconds
	i=0
	while ! grep -qx "$1" "$2/cgroup.procs" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -qx "$1" "$2/cgroup.procs"
}
"$B/converge" --cold 8 --hot 8 --seconds 10 --quiet > /dev/null 2>&1 &
wpid=$!
"$HT" attach --cgroup $ACG --budget 0=16M --set htmm_cooling_period=500000 \
	--record "$T/att.csv" --interval 500 $wpid > "$T/out" 2> "$T/err" &
apid=$!
CHK=1
wait_in $wpid $A && [ "$(cat $A/memory.htmm_enabled)" = enabled ] &&
	[ "$(cat $A/memory.max_at_node0)" = 16777216 ] &&
	[ "$(cat $TUN/htmm_cooling_period)" = 500000 ] && CHK=0
check "attach moves the process in, enables htmm, sets budget and tunable" \
	"procs $(tr '\n' ' ' < $A/cgroup.procs), $(cat $A/memory.htmm_enabled), max_at_node0 $(cat $A/memory.max_at_node0)"
# A record of the operator's cgroup beside it, JSON Lines, with kswapd0.
"$HT" record --cgroup $ACG -n 3 -i 200 --kthread kswapd0 -o "$T/rc.jsonl" \
	> /dev/null 2> "$T/err"
rc=$?
CHK=1
[ "$rc" = 0 ] && [ "$(grep -c '^{"time":.*"resident_node0":.*"kswapd0_cpu_ms":' "$T/rc.jsonl")" = 3 ] && CHK=0
check "record --cgroup writes 3 JSON rows, with a --kthread column" "exit $rc, $(wc -l < "$T/rc.jsonl") lines"
wait $apid
rc=$?
CHK=1
[ "$rc" = 0 ] && [ "$(($(wc -l < "$T/att.csv") - 1))" -ge 4 ] && CHK=0
check "attach ends with its process, exit 0, recorded" "exit $rc, $(wc -l < "$T/att.csv") lines"
CHK=1
[ -d $A ] && [ "$(cat $A/memory.htmm_enabled)" = "$en0" ] &&
	[ "$(cat $A/memory.max_at_node0)" = "$max0" ] && CHK=0
check "attach leaves the cgroup, htmm and budget as they were" \
	"$(cat $A/memory.htmm_enabled) max_at_node0 $(cat $A/memory.max_at_node0)"
# Stopped by SIGINT: the process goes back where it came from, alive.
sleep 120 &
spid=$!
from=$(cat /proc/$spid/cgroup)
"$HT" attach --cgroup $ACG $spid > "$T/out" 2> "$T/err" &
apid=$!
wait_in $spid $A
kill -INT $apid
wait $apid
rc=$?
CHK=1
[ "$rc" = 0 ] && kill -0 $spid 2> /dev/null &&
	[ "$(cat /proc/$spid/cgroup)" = "$from" ] &&
	[ "$(cat $A/memory.htmm_enabled)" = "$en0" ] && CHK=0
check "attach stopped by SIGINT moves the process back, alive" \
	"exit $rc; now $(cat /proc/$spid/cgroup 2>/dev/null), was $from"
# An unprivileged user may not attach: refused, nothing changed.
$NOBODY "$HT" attach --cgroup $ACG $spid > "$T/out" 2> "$T/err"
rc=$?
CHK=1
[ "$rc" = 1 ] && grep -q "needs root" "$T/err" &&
	[ "$(cat /proc/$spid/cgroup)" = "$from" ] &&
	[ "$(cat $A/memory.htmm_enabled)" = "$en0" ] && CHK=0
check "attach by an unprivileged user is refused" "exit $rc"
kill $spid
wait $spid 2> /dev/null
rmdir $A
same_state "attach restores the tunables"

# 20-22: unprivileged users may look but not change.
$NOBODY "$HT" run -- true > "$T/out" 2> "$T/err"
rc=$?
CHK=1
[ "$rc" = 125 ] && grep -q "needs root" "$T/err" && CHK=0
check "run by an unprivileged user is refused (125)" "exit $rc"
$NOBODY "$HT" status > "$T/out" 2> "$T/err"
rc=$?
CHK=1
[ "$rc" = 0 ] && grep -q "^1 .* slow " "$T/out" && CHK=0
check "status works for an unprivileged user" "exit $rc"
same_state "an unprivileged user changed nothing"

# 23: status --watch refreshes until SIGINT.  Waits for 3 screens (at
# most 20 s); each starts with the clear-screen sequence.
"$HT" status --watch 1 > "$T/watch" 2> "$T/err" &
spid=$!
t0=$(cut -d' ' -f1 /proc/uptime)
i=0
while [ "$(grep -c "$(printf '\033')\[H" "$T/watch")" -lt 3 ] && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
screens=$(grep -c "$(printf '\033')\[H" "$T/watch")
echo "# status --watch 1: $screens screens after $(awk -v a="$t0" '{ printf "%.1f", $1 - a }' /proc/uptime) s"
kill -INT $spid
wait $spid
rc=$?
CHK=1
[ "$rc" = 0 ] && [ "$screens" -ge 3 ] &&
	[ "$(grep -c "^0 .* fast " "$T/watch")" -ge 3 ] && CHK=0
check "status --watch refreshes the screen, ends on SIGINT" "exit $rc, $screens screens"

# 24-25: tune --preset memtis puts back a changed default.
"$HT" tune --set htmm_cooling_period=333333 > "$T/out" 2> "$T/err"
"$HT" tune --preset memtis > "$T/out" 2> "$T/err"
rc=$?
def=$("$HT" tune --show | awk '$1 == "htmm_cooling_period" { print $2 }')
CHK=1
[ "$rc" = 0 ] && grep -q "^htmm_cooling_period: 333333 -> $def$" "$T/out" &&
	[ "$(cat $TUN/htmm_cooling_period)" = "$def" ] && CHK=0
check "tune --preset memtis writes the defaults" "exit $rc, cooling period $(cat $TUN/htmm_cooling_period), default $def"
# Put back what the preset changed, with the tool itself.
sets=$(sed -n 's/^\([a-z_]*\): \(.*\) -> .*/--set \1=\2/p' "$T/out")
# shellcheck disable=SC2086 # a list of options
[ -z "$sets" ] || "$HT" tune $sets > /dev/null
"$HT" tune --set htmm_cooling_period="$(grep '^htmm_cooling_period ' "$T/state0" | cut -d' ' -f2)" > /dev/null
same_state "tune --set puts the preset's changes back"

# 26-27: tune --from-tierbench on a tierbench run of this VM.  Under TCG
# both nodes run at one speed, so which is faster is chance: the tool
# must write the lowest and the highest node latency when they differ,
# and refuse, changing nothing, when they do not.
"$B/tierbench" latency --matrix --size 8M --duration 0.05 --warmup 0.01 --json \
	> "$T/tb.json" 2> "$T/err"
exp=$(awk -F'[:,]' '
	/"mem_node"/ { n = $2 + 0 }
	/"ns_per_load"/ { v = $2 + 0; if (!(n in m) || v < m[n]) m[n] = v }
	END {
		for (k in m) {
			if (f == "" || m[k] < f) f = m[k]
			if (s == "" || m[k] > s) s = m[k]
		}
		printf "%d %d\n", f + 0.5, s + 0.5
	}' "$T/tb.json")
fast=${exp% *} slow=${exp#* }
"$HT" tune --from-tierbench "$T/tb.json" > "$T/out" 2> "$T/err"
rc=$?
got="$(cat $TUN/htmm_fast_latency_ns) $(cat $TUN/htmm_slow_latency_ns)"
echo "# tierbench: fastest node $fast ns, slowest $slow ns; tune exit $rc, now $got"
CHK=1
if [ "$fast" -lt "$slow" ]; then
	[ "$rc" = 0 ] && [ "$got" = "$fast $slow" ] && CHK=0
else
	[ "$rc" = 1 ] && grep -q "fast latency below the slow one" "$T/err" && CHK=0
fi
check "tune --from-tierbench writes the measured latencies (or refuses equal ones)" \
	"expected $fast $slow, exit $rc, now $got"
# shellcheck disable=SC2046 # a list of options
"$HT" tune $(for k in htmm_fast_latency_ns htmm_slow_latency_ns; do
	echo "--set $k=$(grep "^$k " "$T/state0" | cut -d' ' -f2)"; done) > /dev/null
same_state "the latencies are put back"

[ "$FAIL" = 0 ]
