#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tierbench guest smoke test: every tool once, with tiny regions and short
# durations, against node 0 and node 1 (the two-tier guest). POSIX sh, runs
# under busybox ash. Prints a TAP plan and one line per check; node-1 checks
# are skipped ("# SKIP no node 1") on a machine with a single memory node.
#
# usage: guest-smoke.sh BINDIR        (BINDIR holds the tierbench binary)
# exit:  0 when every check passed, 1 otherwise, 2 on bad usage.
#
# Figures are meaningless under TCG; this only proves that every code path
# runs and that the output has the expected fields and parses.

# $SMALL and friends hold several words on purpose.
# shellcheck disable=SC2086,SC2012
if [ $# -ne 1 ] || [ ! -x "$1/tierbench" ]; then
	echo "usage: $0 BINDIR   (BINDIR/tierbench must exist)" >&2
	exit 2
fi
TB="$1/tierbench"
T="${TMPDIR:-/tmp}/tierbench-smoke.$$"
mkdir -p "$T" || exit 2
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

PLAN=23
N=0
FAIL=0
SMALL="${TB_SMOKE_TIMES:---duration 0.05 --warmup 0.01}"
REGION=8M

echo "1..$PLAN"

ok() { N=$((N + 1)); echo "ok $N - tierbench $1"; }
skip() { N=$((N + 1)); echo "ok $N - tierbench $1 # SKIP $2"; }
notok() {
	N=$((N + 1))
	FAIL=$((FAIL + 1))
	echo "not ok $N - tierbench $1"
	[ -n "$2" ] && echo "# $2"
	[ -s "$T/out" ] && sed -n '1,15s/^/#   out: /p' "$T/out"
	[ -s "$T/err" ] && sed -n '1,15s/^/#   err: /p' "$T/err"
	return 0
}

# run CMD... : stdout to $T/out, stderr to $T/err, exit status in RC
run() {
	"$@" >"$T/out" 2>"$T/err"
	RC=$?
}

# has PATTERN... : every fixed string occurs in $T/out
has() {
	for p in "$@"; do
		grep -qF -- "$p" "$T/out" || { MISSING=$p; return 1; }
	done
	return 0
}

# run_ok DESC CMD... : run CMD; false, with a failed check, unless it exits 0
run_ok() {
	d=$1
	shift
	run "$@"
	[ "$RC" -eq 0 ] && return 0
	notok "$d" "exit status $RC"
	return 1
}

# json_ok KEYS : $T/out is valid JSON with the keys (else why in $T/chk)
json_ok() {
	"$TB" json-check --require "$1" "$T/out" >"$T/chk" 2>&1
}

# expect DESC "PATTERNS" CMD... : exit 0 and every pattern in stdout
expect() {
	desc=$1
	pats=$2
	shift 2
	run_ok "$desc" "$@" || return 0
	if has $pats; then ok "$desc"; else notok "$desc" "missing '$MISSING'"; fi
}

# expect_json DESC KEYS CMD... : exit 0 and valid JSON with the keys
expect_json() {
	desc=$1
	keys=$2
	shift 2
	run_ok "$desc" "$@" || return 0
	if json_ok "$keys"; then ok "$desc"; else notok "$desc" "$(cat "$T/chk")"; fi
}

# expect_err DESC STATUS PATTERN CMD... : exit STATUS, PATTERN in stderr
expect_err() {
	desc=$1
	want=$2
	pat=$3
	shift 3
	run "$@"
	if [ "$RC" -eq "$want" ] && grep -q "$pat" "$T/err"; then
		ok "$desc"
	else
		notok "$desc" "exit status $RC"
	fi
}

# ---------------------------------------------------------------- facts
node_mem_kb() {
	f=/sys/devices/system/node/node$1/meminfo
	[ -r "$f" ] || { echo 0; return; }
	awk '$3 == "MemTotal:" { print $4 }' "$f"
}
HAVE_N1=0
[ "$(node_mem_kb 1)" -gt 0 ] 2>/dev/null && HAVE_N1=1
NCPU0=1
if [ -r /sys/devices/system/node/node0/cpulist ]; then
	NCPU0=$(ls -d /sys/devices/system/node/node0/cpu[0-9]* 2>/dev/null | wc -l)
else
	NCPU0=$(grep -c '^processor' /proc/cpuinfo 2>/dev/null || echo 1)
fi
HAVE_THP=0
if [ -r /sys/kernel/mm/transparent_hugepage/enabled ] &&
	! grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled; then
	HAVE_THP=1
fi
HAVE_HUGETLB=0
[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] && HAVE_HUGETLB=1
IS_ROOT=0
[ "$(id -u 2>/dev/null)" = 0 ] && IS_ROOT=1

# node1 DESC CMD... : like expect/expect_json, skipped without node 1
n1() {
	if [ "$HAVE_N1" -ne 1 ]; then
		skip "$2" "no node 1"
		return
	fi
	"$@"
}

# ------------------------------------------------------------ the checks
# 1-3: command line
expect "--help lists the commands" "latency bandwidth memcpy loaded-latency hugepages run" \
	"$TB" --help

expect_err "rejects an unknown option (exit 2)" 2 "unknown option" \
	"$TB" latency --bogus-option
expect_err "rejects a node the machine does not have (exit 2)" 2 \
	"no such online NUMA node" "$TB" latency --mem-node 999 --size "$REGION"

# 4-8: idle latency
expect "latency node0 random" "ns_per_load= mem_node=0 pattern=random" \
	"$TB" latency --cpu-node 0 --mem-node 0 --size "$REGION" $SMALL
expect_json "latency node0 chunk --json" "ns_per_load,results,params" \
	"$TB" latency --cpu-node 0 --mem-node 0 --size "$REGION" --pattern chunk \
	--chunk 256K $SMALL --json
n1 expect "latency node1 random" "ns_per_load= mem_node=1 placed_pct=100.0" \
	"$TB" latency --cpu-node 0 --mem-node 1 --size "$REGION" $SMALL
n1 expect_json "latency node1 chunk --json" "ns_per_load,results" \
	"$TB" latency --cpu-node 0 --mem-node 1 --size "$REGION" --pattern chunk \
	--chunk-order random $SMALL --json
desc="latency --matrix --json"
if run_ok "$desc" "$TB" latency --matrix --size "$REGION" $SMALL --json; then
	if ! json_ok results,cpu_node,mem_node,ns_per_load; then
		notok "$desc" "$(cat "$T/chk")"
	elif [ "$HAVE_N1" -eq 1 ] && ! grep -q '"mem_node": 1' "$T/out"; then
		notok "$desc" "no memory node 1 in the matrix"
	else
		ok "$desc"
	fi
fi

# 9-10: THP (a kernel in 'madvise' THP mode without the madvise() system
# call, CONFIG_ADVISE_SYSCALLS=n, cannot give THP to anyone: skipped)
if [ "$HAVE_THP" -eq 1 ]; then
	run "$TB" latency --mem-node 0 --page thp --size 2M --duration 0.001 --warmup 0.001
	if [ "$RC" -ne 0 ] && grep -q "no madvise() system call" "$T/err"; then
		HAVE_THP=0
		THP_WHY="kernel without madvise() (CONFIG_ADVISE_SYSCALLS=n)"
	fi
else
	THP_WHY="no transparent huge pages"
fi
if [ "$HAVE_THP" -eq 1 ]; then
	expect "latency node0 thp" "ns_per_load= page=thp" \
		"$TB" latency --mem-node 0 --page thp --size "$REGION" $SMALL
	n1 expect "latency node1 thp" "ns_per_load= page=thp mem_node=1" \
		"$TB" latency --mem-node 1 --page thp --size "$REGION" $SMALL
else
	skip "latency node0 thp" "$THP_WHY"
	skip "latency node1 thp" "$THP_WHY"
fi

# 11-12: peak bandwidth (the four MLC mixes, 'all', and the two extra ones)
expect "bandwidth node0 all mixes" \
	"mix=all-reads mix=3:1 mix=2:1 mix=1:1 mix=rmw mix=copy gbs=" \
	"$TB" bandwidth --cpu-node 0 --mem-node 0 --size "$REGION" \
	--mix all,rmw,copy $SMALL
n1 expect_json "bandwidth node1 --json" "results,mix,mbs,gbs" \
	"$TB" bandwidth --cpu-node 0 --mem-node 1 --size "$REGION" $SMALL --json

# 13-14: memcpy
expect "memcpy node0 large and 16K" "block=large block=16K gbs=" \
	"$TB" memcpy --cpu-node 0 --mem-node 0 --size "$REGION" $SMALL
n1 expect_json "memcpy node1 --json" "results,block,gbs" \
	"$TB" memcpy --cpu-node 0 --mem-node 1 --size "$REGION" $SMALL --json

# 15-16: loaded latency
if [ "$NCPU0" -ge 2 ]; then
	expect "loaded-latency node0" "delay=0 delay=1000 bw_gbs= lat_ns=" \
		"$TB" loaded-latency --cpu-node 0 --mem-node 0 --size "$REGION" \
		--load-size "$REGION" --delays 0,1000 $SMALL
	n1 expect_json "loaded-latency node1 --json" "results,delay,bw_gbs,lat_ns" \
		"$TB" loaded-latency --cpu-node 0 --mem-node 1 --size "$REGION" \
		--load-size "$REGION" --delays 0,1000 $SMALL --json
else
	skip "loaded-latency node0" "node 0 has one CPU"
	skip "loaded-latency node1 --json" "node 0 has one CPU"
fi

# 17-20: hugetlb helper
if [ "$HAVE_HUGETLB" -eq 1 ]; then
	expect "hugepages --status" "hugepages node=all size=2M nr=" \
		"$TB" hugepages --status
else
	skip "hugepages --status" "no hugetlb support"
fi

nr_of() {
	cat "/sys/devices/system/node/node$1/hugepages/hugepages-2048kB/nr_hugepages" 2>/dev/null ||
		cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
}

# hp_check DESC NODE : reserve 2M pages on NODE for a 2m-page latency run
hp_check() {
	before=$(nr_of "$2")
	run_ok "$1" "$TB" hugepages --size 2M --count 4 --node "$2" -- \
		"$TB" latency --page 2m --mem-node "$2" --size "$REGION" $SMALL ||
		return 0
	after=$(nr_of "$2")
	if ! has "ns_per_load=" "page=2m"; then
		notok "$1" "missing '$MISSING'"
	elif [ "$before" != "$after" ]; then
		notok "$1" "nr_hugepages $before before, $after after"
	else
		ok "$1"
	fi
}
if [ "$HAVE_HUGETLB" -eq 1 ] && [ "$IS_ROOT" -eq 1 ]; then
	hp_check "hugepages node0: 2m latency run, setting restored" 0
	if [ "$HAVE_N1" -eq 1 ]; then
		hp_check "hugepages node1: 2m latency run, setting restored" 1
	else
		skip "hugepages node1: 2m latency run, setting restored" "no node 1"
	fi
	before=$(nr_of 0)
	run "$TB" hugepages --size 2M --count 2 --node 0 -- sh -c 'exit 3'
	after=$(nr_of 0)
	if [ "$RC" -eq 3 ] && [ "$before" = "$after" ]; then
		ok "hugepages restores the setting when the command fails"
	else
		notok "hugepages restores the setting when the command fails" \
			"exit $RC, nr_hugepages $before before, $after after"
	fi
else
	why="no hugetlb support"
	[ "$HAVE_HUGETLB" -eq 1 ] && why="not root"
	skip "hugepages node0: 2m latency run, setting restored" "$why"
	skip "hugepages node1: 2m latency run, setting restored" "$why"
	skip "hugepages restores the setting when the command fails" "$why"
fi

# 21-23: the driver
RUNOPTS="--cpu-node 0 --size $REGION --bw-size $REGION --delays 0,1000 $SMALL"
want="Idle latency node0 Peak bandwidth node0 Memcpy bandwidth node0"
[ "$HAVE_N1" -eq 1 ] && want="$want node1 Tier ratio node1/node0"
[ "$NCPU0" -ge 2 ] && want="$want Loaded latency node0"
expect "run: summary" "$want" "$TB" run $RUNOPTS
expect_json "run --json" "nodes,idle_latency_ns,bandwidth,memcpy,htmm" \
	"$TB" run $RUNOPTS --json

H=/sys/kernel/mm/htmm
if [ -e "$H/htmm_fast_latency_ns" ] && [ -e "$H/htmm_slow_latency_ns" ]; then
	oldf=$(cat "$H/htmm_fast_latency_ns")
	olds=$(cat "$H/htmm_slow_latency_ns")
	run "$TB" run --cpu-node 0 --size "$REGION" --skip bandwidth,memcpy,loaded \
		$SMALL --apply-to-htmm
	f=$(cat "$H/htmm_fast_latency_ns")
	s=$(cat "$H/htmm_slow_latency_ns")
	# Restore keeping fast < slow after each write, as the kernel wants.
	if [ "$oldf" -lt "$s" ]; then
		echo "$oldf" >"$H/htmm_fast_latency_ns" 2>/dev/null
		echo "$olds" >"$H/htmm_slow_latency_ns" 2>/dev/null
	else
		echo "$olds" >"$H/htmm_slow_latency_ns" 2>/dev/null
		echo "$oldf" >"$H/htmm_fast_latency_ns" 2>/dev/null
	fi
	case "$f$s" in
	*[!0-9]*) good=0 ;;
	*) good=1 ;;
	esac
	# Under TCG both nodes run at one speed: the two measurements may
	# round to the same value, and then nothing may be written.
	if [ "$RC" -eq 0 ] && [ "$good" -eq 1 ] && [ "$f" -lt "$s" ] &&
	   has "Applied to htmm"; then
		ok "run --apply-to-htmm writes the tunables (fast $f, slow $s; restored)"
	elif [ "$RC" -ne 0 ] && [ "$f" = "$oldf" ] && [ "$s" = "$olds" ] &&
	     grep -q "nothing written" "$T/err"; then
		ok "run --apply-to-htmm refuses equal latencies and writes nothing"
	else
		notok "run --apply-to-htmm writes the tunables" "exit $RC, fast '$f' slow '$s'"
	fi
else
	run "$TB" run --cpu-node 0 --size "$REGION" --skip bandwidth,memcpy,loaded \
		$SMALL --apply-to-htmm
	if [ "$RC" -ne 0 ] && grep -q "no htmm latency tunables" "$T/err"; then
		ok "run --apply-to-htmm without the tunables fails clearly"
	else
		notok "run --apply-to-htmm without the tunables fails clearly" "exit $RC"
	fi
fi

if [ "$N" -ne "$PLAN" ]; then
	echo "# planned $PLAN checks, ran $N"
	FAIL=$((FAIL + 1))
fi
echo "# $((N - FAIL)) passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
