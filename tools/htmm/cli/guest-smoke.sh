#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest test of the htmm command (tools/htmm/cli) on the booted htmm
# kernel: `htmm run` of a hot/cold workload with a record, `htmm report`
# on it, `status`, `tune --show`, a run stopped by SIGINT, and errors that
# must leave nothing behind.  After every run, the tunables in
# /sys/kernel/mm/htmm and the cgroups under /sys/fs/cgroup must be as
# before.  POSIX sh (busybox ash); prints TAP.
#
# usage: guest-smoke.sh BINDIR   (BINDIR holds htmm and converge)

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
echo "1..12"
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
sed 's/^/# report: /' "$T/out"
case "$t95" in ""|never|-*) CHK=1 ;; esac
check "report finds the hot set reaching the fast tier" "t95 '$t95'"
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

[ "$FAIL" = 0 ]
