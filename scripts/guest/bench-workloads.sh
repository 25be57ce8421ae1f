#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs in the guest: real workloads (tools/htmm/workloads/) under tiering
# configurations, at one fast:slow ratio (scripts/bench.sh workloads).
#   bench_workloads="redis xslookup ..."  the workloads, in order
#   bench_configs="all-fast none ..."     the configurations, in order
#                                         (see tiering-lib.sh)
#   bench_ratio=R      fast:slow is 1:R: the fast budget is the footprint
#                      / (1 + R) (default 8)
#   bench_mb=MB        each workload's footprint (default 300)
#   bench_work=X       each workload's amount of work (default 1)
#   bench_work_W=X     workload W's amount of work, instead of bench_work
#   bench_irq_cpus=L   (diagnosis) every interrupt's affinity set to CPU
#                      list L before the runs, where the kernel allows it
#   bench_trace=S      every S seconds of a run, from the workload's start,
#                      a "bench trace" line: the cgroup's per-node KiB and
#                      its memory.htmm_stat's placement keys (diagnosis)
# Every run (workload, configuration) gets a fresh cgroup.  Except under
# all-fast, a filler (tools/htmm/filler.c) mlocks node 0 down to the
# budget plus node 0's high watermarks (the free memory kswapd keeps), the
# same fast capacity for every configuration, and htmm's cgroup also gets
# memory.max_at_node0 set to the budget.  For that capacity to be the
# same, nothing else on node 0 may be movable: the host boots these
# guests with rootfstype=ramfs (the initramfs's files are unevictable, not
# tmpfs pages that demotion would move), and DAMON's schemes filter on the
# run's cgroup.  THP is "always", as MEMTIS ran, and vm.min_free_kbytes is
# 8 MiB: THP's recommended value (about 70 MiB here) spaces node 0's
# watermarks about 6 MiB apart, a third of the 1:16 budget, which
# first-touch and DAMON allocations may dip into and NUMA balancing,
# which promotes only above the high watermark, may not.  Where several
# runs share a boot, one filler serves them: before each run it gives
# back what the kernel's own allocations on node 0 (cgroups, page tables,
# files) took since, and locks what was freed (SIGUSR1), as a new filler
# would; starting a new one took about 5 s of a 15 s quick run on the
# debug kernel, exiting it more.  Watermark boosting is off
# (vm.watermark_boost_factor=0): after a fragmenting fallback the kernel
# raises a zone's watermarks by a pageblock at a time, up to 1.5 times the
# high watermark (about 5.6 MiB on node 0 here), until kswapd next runs.
# That took or gave back up to a third of the 1:16 budget in the middle of
# a run, so fast capacity differed between runs; a run reports node 0's
# boost when its filler starts and at its end ("bench boost_kb").  Under all-fast there is
# no filler: node 0 holds the whole footprint.  A run's figures go to the results port as
# "bench ..." lines, ending with "bench run end"; the host turns each run
# into one CSV file.  Output on stdout (the init sends it to ttyS1).
export LD_LIBRARY_PATH=/lib/x86_64-linux-gnu
B=/htmm/bin
W=/htmm/wl
REC=/tmp/wl-record.csv
. /htmm/tiering-lib.sh
. /htmm/record-lib.sh
ratio=${bench_ratio:-8}
mb=${bench_mb:-300}
work=${bench_work:-1}
budget_kb=$((mb * 1024 / (1 + ratio)))
fill= fill_leave= filled=
echo always > /sys/kernel/mm/transparent_hugepage/enabled
# No new boosts; setting the watermarks again clears the current ones.
echo 0 > /proc/sys/vm/watermark_boost_factor
echo 8192 > /proc/sys/vm/min_free_kbytes
irq_cpus=
if [ -n "${bench_irq_cpus:-}" ]; then
	n=0 all=0
	for f in /proc/irq/[0-9]*/smp_affinity_list; do
		all=$((all + 1))
		echo "$bench_irq_cpus" > "$f" 2> /dev/null && n=$((n + 1))
	done
	irq_cpus="$bench_irq_cpus: $n of $all interrupts"
fi

start_filler() {
	boost0=$(node0_kb boost)
	leave=$((budget_kb + $(node0_kb high)))
	filled=1
	if [ -n "$fill" ] && [ "$leave" = "$fill_leave" ] && kill -0 $fill 2> /dev/null; then
		n=$(grep -c '^filler' /tmp/filler.out)
		kill -USR1 $fill
	else
		stop_filler
		n=0
		$B/filler --node 0 --leave-kb $leave > /tmp/filler.out 2>&1 &
		fill=$! fill_leave=$leave
	fi
	i=0
	until [ "$(grep -c '^filler' /tmp/filler.out)" -gt $n ] ||
	      ! kill -0 $fill 2> /dev/null || [ $i -ge 3000 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "bench filler leave_kb $leave $(tail -n 1 /tmp/filler.out)"
	# Free blocks of node 0 by order (0..10), for the huge pages left.
	[ -n "${bench_trace:-}" ] &&
		echo "bench trace buddy_node0 $(awk '$2 == "0," { for (i = 5; i <= NF; i++) a[i] += $i }
			END { for (i = 5; i <= 15; i++) printf "%d ", a[i] }' /proc/buddyinfo)"
}

# Per-node anon KiB of cgroup $1: "N0 N1".
cg_nodes() {
	awk '$1 == "anon" { sub("N0=", "", $2); sub("N1=", "", $3);
	     print int($2 / 1024), int($3 / 1024) }' "$1/memory.numa_stat"
}

# KiB of cgroup $1's anonymous memory in huge pages.
cg_thp() {
	awk '$1 == "anon_thp" { print int($2 / 1024) }' "$1/memory.stat"
}

vmstat_snap() {
	grep -E '^(pgmigrate_success|pgpromote_success|pgdemote_kswapd|pgdemote_direct|pgdemote_khugepaged|htmm_nr_promoted|htmm_nr_demoted) ' /proc/vmstat > "$1"
	irq_snap "$1.irq"
}

# Per interrupt, its count on CPU 0 and on CPU 1 (a one-CPU guest: 0),
# as "NAME CPU0 CPU1"; NAME is the number, or the name of a per-CPU one.
irq_snap() {
	awk 'NR > 1 && $1 ~ /:$/ { n = $1; sub(":", "", n)
	     print n, $2 + 0, ($3 ~ /^[0-9]+$/ ? $3 : 0) }' /proc/interrupts > "$1"
}

# The interrupts each CPU took between snapshots $1 and $2, where either
# count moved, as "bench irq NAME CPU0 CPU1 DESCRIPTION": which CPU the
# emulated PEBS's port, the timers and the TLB shootdowns interrupted.
irq_delta() {
	awk 'FILENAME == ARGV[1] { a[$1] = $2; b[$1] = $3; next }
	     FILENAME == ARGV[2] { c0[$1] = $2 - a[$1]; c1[$1] = $3 - b[$1]; next }
	     { n = $1; sub(":", "", n) }
	     n in c0 && c0[n] + c1[n] > 0 {
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) ;
		d = ""
		for (; i <= NF; i++) d = d " " $i
		print "bench irq", n, c0[n], c1[n] d }' "$1" "$2" /proc/interrupts
}

# Start workload $1 in cgroup $2, output in /tmp/wl.out; pid in $wpid.
# The workload runs on CPU 0: the plugin's modelled time of CPU 0 is the
# performance figure, and the tiering systems' own threads (pin_helpers)
# and Redis's client have CPU 1, as on a machine with cores to spare.
# With one CPU, nothing is pinned.
pin0= pin1=
if [ "$(grep -c '^processor' /proc/cpuinfo)" -ge 2 ]; then
	pin0="taskset -c 0" pin1="taskset -c 1"
fi

# Pin the tiering systems' own threads to CPU 1: htmm's ksamplingd and
# kmigraterds, DAMON's kdamonds, the kswapds (NUMA-balancing tiering
# demotes there) and the emulated PEBS's relay.  Left to
# the scheduler, they ran on the workload's CPU whenever it waited: Redis
# under htmm-abit at 1:1 scored 0.614 and 0.690 in two runs of one
# kernel, the first with 0.72 G more instructions and 7.4 M more cache
# misses on CPU 0.  What runs in the workload's own context (its faults,
# NUMA balancing's hinting faults and their migrations) and the kernel's
# other threads (kcompactd, the workqueues) stay where the kernel puts
# them, for every configuration alike.  Prints the threads pinned;
# a thread that refuses fails the run.
pin_helpers() {
	[ -n "$pin1" ] || return 0
	pinned= bad=
	for f in /proc/[0-9]*/comm; do
		read -r name < "$f" 2> /dev/null || continue
		case "$name" in
		ksamplingd|kmigraterd[0-9]*|kdamond.[0-9]*|kswapd[0-9]*|epebs_relay) ;;
		*) continue ;;
		esac
		p=${f#/proc/}
		p=${p%/comm}
		if taskset -p -c 1 "$p" > /dev/null 2>&1 &&
		   [ "$(taskset -p "$p" 2> /dev/null | sed 's/.*: *//')" = 2 ]; then
			pinned="$pinned $name"
		else
			bad="$bad $name"
		fi
	done
	echo "bench pinned_cpu1$pinned"
	[ -z "$bad" ] || { echo "bench pin refused:$bad"; return 1; }
}

start_workload() {
	args="--mb $mb --work $wk"
	case "$1" in
	redis)
		rm -f /tmp/redis.sock
		# No persistence, no TCP, one I/O thread; no jemalloc thread
		# freeing on its own schedule; THP as the system has it.
		sh -c "echo \$\$ > $2/cgroup.procs && exec $pin0 redis-server --port 0 \
			--unixsocket /tmp/redis.sock --unixsocketperm 700 \
			--save '' --appendonly no --daemonize no --io-threads 1 \
			--jemalloc-bg-thread no --disable-thp no --activedefrag no \
			--maxmemory 0 --loglevel warning --dir /tmp \
			--logfile /tmp/redis.log" &
		srv=$!
		i=0
		until [ -S /tmp/redis.sock ] || [ $i -ge 600 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		cmd="$pin1 $W/ycsb --sock /tmp/redis.sock $args" ;;
	xslookup|graph500|btree|pagerank) cmd="$pin0 $W/$1 $args" ;;
	liblinear) cmd="$pin0 $W/linear $args" ;;
	*) echo "bench: unknown workload $1"; return 1 ;;
	esac
	# A watcher waits for the workload and writes "exit N" to the FIFO
	# when it is gone (busybox's wait returns only then, not when the
	# workload stops itself), so that a read of the FIFO never waits for
	# a workload that died.
	rm -f /tmp/wl.pid
	(sh -c "echo \$\$ > $2/cgroup.procs && exec $cmd" > /tmp/wl.out 2>&1 &
	 echo $! > /tmp/wl.pid
	 wait $!
	 echo "exit $?" > $WL_FIFO) &
	wwatch=$!
	until [ -s /tmp/wl.pid ]; do sleep 0.05; done
	read -r wpid < /tmp/wl.pid
	wexit=
}

# The workload's sync (wl.h): it writes "begin" or "end" to the FIFO
# $WL_FIFO and stops itself; wait for word $1, then for the stop.
# Returns non-zero if the workload is gone ($wexit is then its status) or
# said something else (it is then killed).  The read has no timeout:
# busybox's read -t drops what it has read when its time runs out, and a
# poll every 5 s lost the "b" of a "begin" that came at that moment (the
# workload then stood stopped and the run hung).  The watcher's "exit N"
# ends the wait if the workload dies.
wl_sync() {
	read -r word <&3
	case "$word" in
	"$1") ;;
	"exit "*)
		wexit=${word#exit }
		echo "bench sync: the workload ended before '$1'"
		return 1 ;;
	*)
		echo "bench sync: got '$word', not '$1'"
		kill -KILL $wpid
		return 1 ;;
	esac
	until [ "$(cut -d' ' -f3 /proc/$wpid/stat 2> /dev/null)" = T ]; do
		kill -0 $wpid 2> /dev/null || return 1
		sleep 0.05
	done
}

# With bench_trace=S, one "bench trace" line every S seconds about cgroup
# $1 until it is gone; pid in $trpid.
start_trace() {
	trpid=
	[ -n "${bench_trace:-}" ] || return 0
	(t0=$(cut -d. -f1 /proc/uptime)
	 while [ -d "$1" ]; do
		s=$(awk '/^(hot|warm|fill)_threshold|^hist_[0-9]|^promoted|^demoted|^promotion_queue_(hot|fill)_pages|^samples_(abit|inject)|^cooling_epoch|^abit_scans|^fast_capacity/ {
			printf "%s=%s ", $1, $2 }' "$1/memory.htmm_stat" 2> /dev/null)
		echo "bench trace t $(( $(cut -d. -f1 /proc/uptime) - t0 )) nodes_kb $(cg_nodes "$1") anon_thp_kb=$(cg_thp "$1" 2> /dev/null) $s"
		sleep "$bench_trace"
	 done) &
	trpid=$!
}

stop_filler() {
	[ -n "$fill" ] || return 0
	kill "$fill"
	wait "$fill"
	fill=
}

# The end of a run in cgroup $1, also of one whose setup failed: the
# configuration torn down and the cgroup gone, so that the next run
# starts from the same state (the filler is leveled again before it).
end_run() {
	tier_teardown "$1"
	[ -n "$trpid" ] && kill "$trpid" 2> /dev/null
	rmdir "$1"
	if [ -n "$filled" ]; then
		echo "bench boost_kb $boost0 $(node0_kb boost)"
		echo "bench node0_free_end_kb $free_end"
	fi
	echo "bench run end"
}

# One run: workload $1 under configuration $2.  The snapshots are taken
# while the workload is stopped at the start and at the end of its
# measured phase.
# Uptime in centiseconds (a builtin read, no fork).
ucs() {
	read -r up _ < /proc/uptime
	up=${up%.*}${up#*.}
	echo $((10#$up))
}

run_one() {
	case "$1" in *[!a-z0-9]*) echo "bench: bad workload name '$1'"; return 1 ;; esac
	ph0=$(ucs) ph1= ph2= ph3= filled=
	if [ "$2" = all-fast ]; then
		stop_filler
	else
		start_filler
	fi
	phf=$(ucs)
	cg=/sys/fs/cgroup/wl-$1-$2
	mkdir -p "$cg"
	srv='' trpid=''
	free_end=''
	eval "wk=\${bench_work_$1:-\$work}"
	echo "bench run workload $1 config $2 ratio $ratio mb $mb work $wk budget_kb $budget_kb"
	[ -z "$irq_cpus" ] || echo "bench irq_cpus $irq_cpus"
	tier_damon_memcg=/wl-$1-$2
	if ! tier_setup "$2" "$cg" "${budget_kb}K" || ! pin_helpers; then
		echo "bench setup of $2 failed"
		end_run "$cg"
		return 1
	fi
	rm -f /tmp/wl.fifo
	mkfifo /tmp/wl.fifo
	exec 3<> /tmp/wl.fifo
	export WL_FIFO=/tmp/wl.fifo
	ph1=$(ucs)
	start_workload "$1" "$cg" || return 1
	start_trace "$cg"
	if wl_sync begin; then
		ph2=$(ucs)
		vmstat_snap /tmp/vm0
		echo "bench nodes_begin_kb $(cg_nodes "$cg")"
		echo "bench thp_begin_kb $(cg_thp "$cg")"
		pin_helpers || echo "bench pin: a thread of the measured phase is not on CPU 1"
		rec_start "$cg" --kthread kdamond.0 --kthread kdamond.1 --kthread kswapd0 --kthread kswapd1
		from=$(date +%s)
		kill -CONT $wpid
		if wl_sync end; then
			ph3=$(ucs)
			rec_stop
			vmstat_snap /tmp/vm1
			echo "bench nodes_end_kb $(cg_nodes "$cg")"
			free_end=$(node0_kb nr_free_pages count:)
			echo "bench thp_end_kb $(cg_thp "$cg")"
			kill -CONT $wpid
		fi
	fi
	while [ -z "$wexit" ] && read -r word <&3; do
		case "$word" in "exit "*) wexit=${word#exit } ;; esac
	done
	wait $wwatch
	echo "bench exit $wexit"
	exec 3<&-
	unset WL_FIFO
	sed 's/^/bench /' /tmp/wl.out
	if [ -f /tmp/vm1 ]; then
		awk 'NR == FNR { a[$1] = $2; next } { print "bench vmstat", $1, $2 - a[$1] }' /tmp/vm0 /tmp/vm1
		irq_delta /tmp/vm0.irq /tmp/vm1.irq
		for t in ksamplingd kmigraterd kdamond kswapd; do
			echo "bench cpu_ms $t $(rec_ms $t "$from")"
		done
		echo "bench record_rows $(($(wc -l < $REC) - 1))"
	fi
	rm -f /tmp/vm0 /tmp/vm1 /tmp/vm0.irq /tmp/vm1.irq
	[ "$2" = damon ] && damon_stats
	case "$2" in htmm-*) sed 's/^/bench htmm_stat /' "$cg/memory.htmm_stat" ;; esac
	if [ -n "$srv" ]; then
		kill -TERM "$srv"
		wait "$srv"
	fi
	end_run "$cg"
	phases "$ph0" "$ph1" "$ph2" "$ph3" "$(ucs)" "$phf"
}

# Where a run's time went, in seconds of guest time: the filler (at $6)
# and the configuration's setup; the workload's start and its data (to
# "begin"); the measured phase; the statistics and teardown after it.
phases() {
	[ -n "$3" ] && [ -n "$4" ] || return 0
	echo "bench phases_s setup $(cs $1 $2) load $(cs $2 $3) measured $(cs $3 $4) after $(cs $4 $5) of_setup_filler $(cs $1 $6)"
}

cs() {
	d=$(($2 - $1))
	echo "$((d / 100)).$((d / 10 % 10))"
}

echo "bench workloads rootfs $(awk '$2 == "/" { print $3 }' /proc/mounts) initramfs_kb $(du -sk -x / 2>/dev/null | cut -f1) node0_free_kb $(awk '/MemFree/ { print $4 }' /sys/devices/system/node/node0/meminfo) thp $(cat /sys/kernel/mm/transparent_hugepage/enabled) min_free_kbytes $(cat /proc/sys/vm/min_free_kbytes)"
for c in ${bench_configs:-all-fast}; do
	for w in ${bench_workloads:-redis}; do
		run_one "$w" "$c"
	done
done
stop_filler
echo "bench workloads end"
