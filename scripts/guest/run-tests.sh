#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: every kselftest binary and every guest smoke script,
# each framed by markers that the host parser (scripts/parse-results.py)
# understands.  Output goes to the second serial port.  htmm_tests=GLOB on
# the kernel command line runs only the suites whose name matches,
# htmm_test_args=ARG passes one argument to each (for example -tNAME, to
# run one test of a kselftest suite) and htmm_repeat=N repeats them.
cd /htmm || exit 1
LRU_GEN=/sys/kernel/mm/lru_gen/enabled
echo "# htmm-guest: begin"

# Free memory of node 0 (fast), and its free blocks of 2 MiB and more.
mem_line() {
	free=$(awk '/MemFree/ { print $4 }' /sys/devices/system/node/node0/meminfo)
	huge=$(awk '$2 == "0," { n += $(NF - 1) + 2 * $NF } END { print n + 0 }' \
		/proc/buddyinfo)
	echo "# htmm-mem: $1: node 0 has $free kB free, $huge free 2 MiB blocks"
}
# Where node 0's memory is (kB): what the kernel reserved before the page
# allocator (MemTotal), and what files, slab and page tables hold.
node_line() {
	awk -v when="$1" '{ v[$3] = $4 } END {
		printf "# htmm-mem: %s, node 0: MemTotal %d, MemFree %d, FilePages %d, Shmem %d, AnonPages %d, Slab %d, KernelStack %d, PageTables %d kB\n",
			when, v["MemTotal:"], v["MemFree:"], v["FilePages:"],
			v["Shmem:"], v["AnonPages:"], v["Slab:"],
			v["KernelStack:"], v["PageTables:"] }' \
		/sys/devices/system/node/node0/meminfo
}
node_line "at boot"

# Run a suite, "$@", its output passed on as it comes, with a line
# "# htmm-test-time: <its result line> <seconds>" after each test's
# result, from the previous result (or the start); exits with its status.
# The times show where the test run's minutes go.
run_timed() {
	{ "$@" 2>&1; echo "# htmm-rc: $?"; } | awk '
		function up(l, a) {
			getline l < "/proc/uptime"
			close("/proc/uptime")
			split(l, a, " ")
			return a[1]
		}
		BEGIN { t = up(); rc = 1 }
		/^# htmm-rc: / { rc = $3; next }
		{ print; fflush() }
		/^(not )?ok [0-9]+ / {
			n = up()
			printf "# htmm-test-time: %s %.1f s\n", $0, n - t
			fflush()
			t = n
		}
		END { exit rc }'
}

# What a suite left behind, as one more test, "<suite>/leftovers": a
# cgroup it made, a process in one, or htmm's threads still running 3 s
# after it ended (the last cgroup's threads stop at once, or from a work
# item when the cgroup was removed while enabled).  A cgroup left with
# htmm enabled shares node 0 with every later test's cgroup and keeps
# ksamplingd scanning its processes, so the later tests fail for it; the
# check names the suite that left it, then removes it all (disabled,
# processes killed, deepest cgroups first) so that the next suite starts
# clean.
cgroups_now() {
	find /sys/fs/cgroup -mindepth 1 -type d 2> /dev/null | sort
}
CG_BOOT=$(cgroups_now)
kthreads_now() {
	grep -lE '^(ksamplingd|kmigraterd[0-9]*)$' /proc/[0-9]*/comm 2> /dev/null |
		while read -r f; do cat "$f"; done | sort | tr '\n' ' '
}
check_leftovers() {
	local i left cgs c p thr

	echo "# htmm-suite: $1/leftovers"
	echo "1..1"
	i=0
	while [ -n "$(kthreads_now)" ] && [ $i -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	left=
	cgs=$(cgroups_now | grep -vxF "$CG_BOOT" | sort -r)
	for c in $cgs; do
		left="$left cgroup ${c#/sys/fs/cgroup/} ($(cat "$c"/memory.htmm_enabled 2> /dev/null), procs: $(tr "\n" " " < "$c"/cgroup.procs))"
	done
	thr=$(kthreads_now)
	[ -n "$thr" ] && left="$left threads: $thr"
	if [ -z "$left" ]; then
		echo "ok 1 $1 left no cgroup, process or htmm thread"
	else
		echo "not ok 1 $1 left:$left"
		for c in $cgs; do
			echo disabled > "$c"/memory.htmm_enabled 2> /dev/null
			while read -r p; do kill -9 "$p"; done < "$c"/cgroup.procs
		done
		for c in $cgs; do
			i=0
			until rmdir "$c" 2> /dev/null || [ $i -ge 50 ]; do
				sleep 0.1
				i=$((i + 1))
			done
		done
	fi
	echo "# htmm-exit: $1/leftovers 0"
}

# The suites run as distribution kernels do, with the multi-gen LRU on
# (the debug kernel has CONFIG_LRU_GEN_ENABLED=y): say so, and fail if not.
case "lru_gen" in ${htmm_tests:-*})
	echo "# htmm-suite: lru_gen"
	echo "1..1"
	state=$(cat $LRU_GEN 2>/dev/null)
	case "$state" in
	""|0x0000) echo "not ok 1 multi-gen LRU on for the suites (state '$state')" ;;
	*) echo "ok 1 multi-gen LRU on for the suites (state $state)" ;;
	esac
	echo "# htmm-exit: lru_gen 0" ;;
esac

# The enforcement and convergence tests, and the demotion walk's rests,
# with the classic LRU, switched at run time, as suites named
# <suite>_classic_lru; first, while node 0 still
# has the free memory these tests fill (late in the run it has far less).
# thp_full_node tests an allocation path that no LRU takes part in, and
# its filling of node 0 takes 40 s; disabled_control, with htmm disabled,
# reads no residency (the one thing the LRUs give htmm differently).
if [ -w $LRU_GEN ]; then
	state=$(cat $LRU_GEN)
	echo n > $LRU_GEN
	for spec in "htmm_enforce_test -Tthp_full_node -Tdisabled_control" \
		    "htmm_migrate_test -tconverge_abit -tfruitless_room_walk_rests -thot_entry_follows_its_folio"; do
		t=${spec%% *}
		name=${t}_classic_lru
		case "$name" in ${htmm_tests:-*}) ;; *) continue ;; esac
		mem_line "before $name"
		echo "# htmm-suite: $name"
		echo "# lru_gen: $(cat $LRU_GEN)"
		# shellcheck disable=SC2086 # the optional -t word
		run_timed tests/$spec
		echo "# htmm-exit: $name $?"
		check_leftovers "$name"
	done
	echo "$state" > $LRU_GEN
fi
# htmm_repeat=N runs each selected kselftest suite N times, as suites
# named <suite>#<k> (scripts/repeat-suite.sh).
k=1
while [ "$k" -le "${htmm_repeat:-1}" ]; do
	for t in tests/*; do
		[ -x "$t" ] || continue
		name=${t##*/}
		case "$name" in ${htmm_tests:-*}) ;; *) continue ;; esac
		[ "${htmm_repeat:-1}" -gt 1 ] && name="$name#$k"
		mem_line "before $name"
		echo "# htmm-suite: $name"
		t0=$(cut -d. -f1 /proc/uptime)
		# shellcheck disable=SC2086 # one optional word
		run_timed "$t" ${htmm_test_args:-}
		echo "# htmm-exit: $name $?"
		echo "# htmm-time: $name $(( $(cut -d. -f1 /proc/uptime) - t0 )) s"
		check_leftovers "$name"
	done
	k=$((k + 1))
done
for s in smoke/*.sh; do
	[ -f "$s" ] || continue
	name=${s##*/}
	name=${name%.sh}
	case "$name" in ${htmm_tests:-*}) ;; *) continue ;; esac
	# htmm_skip=NAME[,NAME]: smoke runs another guest runs.
	case ",${htmm_skip:-}," in *",$name,"*) continue ;; esac
	echo "# htmm-suite: $name"
	sh "$s" /htmm/bin 2>&1
	echo "# htmm-exit: $name $?"
done
mem_line "at the end"
node_line "at the end"
echo "# htmm-guest: end"
