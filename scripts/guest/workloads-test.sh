#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest for guest_job=workloads: the quick mode of the
# workloads benchmark (bench-workloads.sh) as a test suite,
# htmm_workloads, framed like run-tests.sh.  Every workload runs small
# (bench_mb, default 24 MiB; bench_work, default 0.01; Redis 0.004) at
# fast:slow 1:4 under every configuration that needs no plugin.  Per run
# it checks that the workload ran to its end and its own check of its
# result passed, and that the placement obeys the configuration:
#   all-fast   at most 2% of the cgroup's anon memory on node 1;
#   none       node 0 holds at most the budget plus the gap between node
#              0's high and min watermarks (the filler leaves the budget
#              above the high watermark; allocations may go down to min)
#              plus 2 MiB: what other users give back to node 0 during
#              the run (this debug kernel's KASAN quarantine frees slab
#              pages long after their objects; node 0's free memory at
#              the end, against the filler's and the cgroup's use, showed
#              -1.9 to +2.2 MiB from the rest of the system over four
#              Redis runs);
#   htmm-abit  node 0 holds at most the budget (memory.max_at_node0) plus
#              2 MiB, the overrun the admin guide allows (unflushed
#              statistics, LRU batches);
#   all but all-fast  node 0's watermark boost is 0 when the filler starts
#              and at the run's end (bench-workloads.sh turns boosting
#              off; a boost that kswapd clears mid-run gives the run more
#              node 0 than the filler left it).
# The figures are printed as they are (no plugin: wall-clock time only).
export bench_ratio=4 bench_mb=${bench_mb:-24} bench_work=${bench_work:-0.01}
# Redis: 240 operations per phase, not 600 (at 600 its run under DAMON,
# with kdamond on the client's CPU, was the longest: 52 s of 556).
export bench_work_redis=${bench_work_redis:-0.004}
export bench_workloads=${bench_workloads:-redis xslookup graph500 btree liblinear pagerank}
export bench_configs=${bench_configs:-all-fast none autonuma damon htmm-abit}
# DAMON samples every 25 ms and aggregates every 500 ms, five times its
# defaults: the checks are that its two kdamonds run with their filters,
# not how well they place.  At the defaults, on this one-vCPU guest with
# KASAN, the kdamonds took the CPU from everything else: the six DAMON
# runs took 276 s of the suite's 734 s, the six NUMA-balancing runs 137 s
# (per-run phases, "bench phases_s").
export tier_damon_sample_us=${tier_damon_sample_us:-25000}
export tier_damon_aggr_us=${tier_damon_aggr_us:-500000}
OUT=/tmp/workloads.out

echo "# htmm-guest: begin"
echo "# htmm-suite: htmm_workloads"
set -- $bench_workloads
nw=$#
set -- $bench_configs
echo "1..$((nw * $#))"
t0=$(cut -d. -f1 /proc/uptime)

# One line to the kernel console.
kmsg() {
	echo "htmm-wl: $*" > /dev/kmsg
}

# What every task is doing, to the console: its state and, unless it is
# sleeping in user space or idle, its kernel stack.
dump_tasks() {
	for p in /proc/[0-9]*; do
		st=$(sed 's/.*) //' $p/stat 2> /dev/null | cut -d' ' -f1)
		[ -n "$st" ] || continue
		kmsg "task ${p#/proc/} $(cat $p/comm 2> /dev/null) state $st wchan $(cat $p/wchan 2> /dev/null)"
		case "$st" in
		S|I) grep -q . $p/stack 2> /dev/null &&
			! grep -qE 'do_wait|ep_poll|pipe_read|do_select|do_sys_poll|kthread_worker_fn|smpboot_thread_fn|rescuer_thread|worker_thread' $p/stack ||
			continue ;;
		esac
		while read -r l; do kmsg "  $l"; done < $p/stack 2> /dev/null
	done
}

# The benchmark, watched: each run's first line goes to the console with
# the kernel's time stamps, and a run that takes over $run_limit s (the
# quick runs take seconds) gets the tasks' states and stacks dumped there,
# once, so that a hang says where it is before the guest's deadline.  The
# watch wakes every 5 s and uses shell builtins only: a loop of forks
# every second made the 30 runs take 467 s instead of 333.
run_limit=${wl_run_limit:-240}
/htmm/bench-workloads.sh > $OUT 2>&1 &
bpid=$!
seen=0 since=$t0 dumped=
while kill -0 $bpid 2> /dev/null; do
	read -r up _ < /proc/uptime
	now=${up%.*}
	n=0
	while read -r l; do
		case "$l" in "bench run workload "*) ;; *) continue ;; esac
		n=$((n + 1))
		[ $n -gt $seen ] && kmsg "$l"
	done < $OUT
	if [ $n -gt $seen ]; then
		seen=$n since=$now dumped=
	elif [ -z "$dumped" ] && [ $((now - since)) -ge "$run_limit" ]; then
		kmsg "a run is over $run_limit s; its last output lines:"
		tail -n 8 $OUT | while read -r l; do kmsg "  $l"; done
		dump_tasks
		dumped=1
	fi
	sleep 5
done
wait $bpid
sed 's/^/# /' $OUT
. /htmm/tiering-lib.sh
gap=$(node0_kb high -min)
# Every run's checks in one pass over $OUT (under TCG and KASAN, a few
# processes per run took half a minute in all).  A run is the block from
# "bench run workload W config C" to the next such line.
awk -v workloads="$bench_workloads" -v configs="$bench_configs" -v gap="$gap" '
function check(w, c,    k, why, d) {
	k = w SUBSEP c
	if (!(k in seen))
		return "the run did not start"
	if (!(k in ended)) why = why "; the run did not end"
	if (ex[k] != "0")
		why = why "; the workload exited with " (ex[k] == "" ? "no status" : \
			ex[k] > 128 ? ex[k] " (signal " ex[k] - 128 ")" : ex[k])
	if (!(k in ok)) why = why "; its check did not pass"
	if (c == "all-fast" && n1[k] * 50 > n0[k] + n1[k])
		why = why "; " n1[k] " KiB of " n0[k] + n1[k] " on node 1"
	if (c == "none" && n0[k] > bud[k] + gap + 2048)
		why = why "; node 0 holds " n0[k] " KiB, more than the budget " bud[k] " + " gap " + 2048"
	if (c == "damon")
		for (d = 0; d < 2; d++)
			if (!((k SUBSEP d) in kd))
				why = why "; kdamond " d " is not on with its young and memcg filters"
	if (c == "htmm-abit" && n0[k] > bud[k] + 2048)
		why = why "; node 0 holds " n0[k] " KiB, more than the budget " bud[k] " + 2048"
	if (c != "all-fast" && boost[k] != "0,0")
		why = why "; node 0 watermark boost (KiB, at the filler and at the end) is " \
			(boost[k] == "" ? "missing" : boost[k])
	return substr(why, 3)
}
$1 != "bench" { next }
$2 == "run" && $3 == "workload" { k = $4 SUBSEP $6; seen[k] = 1; bud[k] = $14; n0[k] = n1[k] = 0; nl[k] = 0; next }
# The last lines of a run but its statistics, to say why if it fails.
$2 !~ /^(vmstat|irq|cpu_ms|htmm_stat|trace|record_rows|damon|run|filler|boost_kb|node0_free_end_kb|nodes_begin_kb|thp_begin_kb|thp_end_kb|phases_s)$/ && !($2 == "wl" && $3 == "result") {
	tl[k, nl[k]++ % 8] = $0
}
$2 == "run" && $3 == "end" { ended[k] = 1 }
$2 == "exit" { ex[k] = $3 }
$2 == "wl" && $3 == "check" && $4 == "ok" { ok[k] = 1 }
$2 == "wl" && $3 == "end" { secs[k] = $5 }
$2 == "nodes_end_kb" { n0[k] = $3; n1[k] = $4 }
$2 == "boost_kb" { boost[k] = $3 "," $4 }
$2 == "damon" && $3 == "kdamond" && / state on .* filters young memcg/ { kd[k, $4 + 0] = 1 }
END {
	nc = split(configs, C, " "); nw = split(workloads, W, " ")
	for (i = 1; i <= nc; i++)
		for (j = 1; j <= nw; j++) {
			k = W[j] SUBSEP C[i]; why = check(W[j], C[i])
			# Why first: the host reports a failure with the lines
			# before its "not ok" (parse-results.py).
			if (why != "") {
				print "# " why
				for (l = (nl[k] > 8 ? nl[k] - 8 : 0); l < nl[k]; l++)
					print "# " tl[k, l % 8]
				fail++
			}
			printf "%s %d - %s under %s: node 0 %d KiB, node 1 %d KiB, budget %s KiB, %s s\n",
				why == "" ? "ok" : "not ok", ++n, W[j], C[i], n0[k], n1[k], bud[k],
				secs[k] == "" ? "?" : secs[k]
		}
	print "# htmm-exit-count " fail + 0
}' $OUT > /tmp/workloads.tap
grep -v '^# htmm-exit-count' /tmp/workloads.tap
FAIL=$(awk '$2 == "htmm-exit-count" { print $3 }' /tmp/workloads.tap)
echo "# htmm-time: htmm_workloads $(( $(cut -d. -f1 /proc/uptime) - t0 )) s"
echo "# htmm-exit: htmm_workloads $FAIL"
echo "# htmm-guest: end"
