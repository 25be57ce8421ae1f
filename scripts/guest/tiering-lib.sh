# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest benchmark scripts: sets a tiering configuration up
# and tears it down again.
#   tier_setup CONFIG CGROUP BUDGET   CONFIG one of
#       none | all-fast      no migration (all-fast: the caller gives the
#                            workload all of node 0)
#       autonuma             NUMA-balancing tiering (numa_balancing=2 and
#                            demotion in reclaim)
#       damon                DAMON migrate_hot (node 1 to 0) and
#                            migrate_cold (node 0 to 1), paddr, 1 GiB/s,
#                            young-page filters
#       htmm-abit            htmm, Accessed-bit sampler
#       htmm-inject|htmm-split|htmm-nosplit   htmm, injected samples
#                            ($tier_inject is the converge option to add)
#       htmm-epebs|htmm-epebs-nosplit         htmm, the QEMU plugin's
#                            emulated PEBS through epebs_relay
#     (*-nosplit: htmm_mode 1, no splitting).  htmm gets the cgroup's
#     memory.max_at_node0 set to BUDGET.
#   tier_teardown CGROUP              undoes it (for several runs in one
#     boot); prints the relay's output, prefixed with "bench ".
# With tier_damon_memcg set (a cgroup path below /sys/fs/cgroup, e.g.
# "/wl"), DAMON's schemes get a memcg filter: they act on that cgroup's
# pages only, as htmm does, and never move other memory of the node (a
# filler's mlocked pages are cold and movable).
# DAMON samples every $tier_damon_sample_us (default 5000) and aggregates
# every $tier_damon_aggr_us (default 100000), DAMON's own defaults; the
# workloads test suite, which checks that DAMON runs and not how well,
# makes both five times longer (scripts/guest/workloads-test.sh).
# With bench_htmm_set ("NAME:VALUE,NAME:VALUE", from the guest's command
# line), the htmm configurations also set those files of
# /sys/kernel/mm/htmm (e.g. ksampled_soft_cpu_quota:300), a diagnosis
# option: such a run is not a table cell of the defaults.
H=/sys/kernel/mm/htmm
D=/sys/kernel/mm/damon/admin/kdamonds
tier_inject=
relay=
# The htmm files a configuration wrote, as "NAME:OLD_VALUE ...", for
# tier_teardown to restore (a file's first old value only).
tier_saved=

# Write VALUE $2 to htmm file $1, keeping its old value in $tier_saved.
tier_htmm_write() {
	[ -f "$H/$1" ] || { echo "bench: no htmm file $1"; return 1; }
	case " $tier_saved " in
	*" $1:"*) ;;
	*) tier_saved="$tier_saved $1:$(cat "$H/$1")" ;;
	esac
	echo "$2" > "$H/$1"
}

# Write bench_htmm_set's files.
tier_htmm_set() {
	for kv in $(echo "${bench_htmm_set:-}" | tr ',' ' '); do
		tier_htmm_write "${kv%%:*}" "${kv#*:}" || return 1
		echo "bench htmm_set ${kv%%:*} $(cat "$H/${kv%%:*}")"
	done
}

# The sum over node 0's zones of the /proc/zoneinfo fields named in $@
# (page counts, e.g. "high", "boost", "count:" of the per-CPU lists), in
# KiB; a field written -NAME counts negative.
node0_kb() {
	awk -v fields="$*" '
		BEGIN {
			n = split(fields, f, " ")
			for (i = 1; i <= n; i++)
				if (f[i] ~ /^-/) w[substr(f[i], 2)] = -1
				else w[f[i]] = 1
		}
		$1 == "Node" { node = $2 }
		node == "0," && ($1 in w) { s += w[$1] * $2 }
		END { print s * 4 }' /proc/zoneinfo
}

# Physical byte range "start end" of a node, from /proc/zoneinfo.
node_range() {
	awk -v node="$1" '
		$1 == "Node" { n = $2; sub(",", "", n) }
		$1 == "spanned" { sp = $2 }
		$1 == "start_pfn:" && n == node && sp > 0 {
			if (min == "" || $2 < min) min = $2
			if ($2 + sp > max) max = $2 + sp
		}
		END { printf "%.0f %.0f\n", min * 4096, max * 4096 }' /proc/zoneinfo
}

# DAMON's sysfs files take damon_sysfs_lock with mutex_trylock() and
# fail with EBUSY when it is held, and a running kdamond takes it briefly
# at every sampling interval (damon_sysfs_cmd_request_callback()).  So a
# write made while a kdamond runs can fail although nothing is wrong:
# the workloads guest lost a run that way (kdamond 1's nr_contexts,
# written while kdamond 0 ran).  The kdamonds are therefore set up
# before either starts, and every write goes through
# damon_write, which writes again only after EBUSY, up to 100 times
# 10 ms apart, and says so.  Any other error, or EBUSY 100 times, sets
# damon_err and prints why.
damon_err=
damon_write() {
	_n=0
	while ! _e=$( (echo "$1" > "$2") 2>&1 ); do
		case "$_e" in
		*busy*) _n=$((_n + 1)) ;;
		*) _n=100 ;;
		esac
		if [ $_n -ge 100 ]; then
			echo "bench damon: writing '$1' to ${2#$D/} failed: $_e"
			damon_err=1
			return 1
		fi
		sleep 0.01
	done
	[ $_n -eq 0 ] || echo "bench damon: ${2#$D/} was busy $_n times"
}

# Set up DAMON kdamond $1 to watch node $2 and apply $3 towards node $4;
# it is started apart (damon_write on > $D/$1/state).
damon_kdamond() {
	K=$D/$1/contexts
	damon_write 1 $K/nr_contexts
	damon_write paddr $K/0/operations
	damon_write "${tier_damon_sample_us:-5000}" $K/0/monitoring_attrs/intervals/sample_us
	damon_write "${tier_damon_aggr_us:-100000}" $K/0/monitoring_attrs/intervals/aggr_us
	damon_write 1000000 $K/0/monitoring_attrs/intervals/update_us
	damon_write 10 $K/0/monitoring_attrs/nr_regions/min
	damon_write 1000 $K/0/monitoring_attrs/nr_regions/max
	damon_write 1 $K/0/targets/nr_targets
	damon_write 1 $K/0/targets/0/regions/nr_regions
	set -- "$@" $(node_range "$2")
	echo "bench damon kdamond $1: $3 of node $2 [$5, $6) to node $4, sample_us ${tier_damon_sample_us:-5000} aggr_us ${tier_damon_aggr_us:-100000}"
	damon_write "$6" $K/0/targets/0/regions/0/end
	damon_write "$5" $K/0/targets/0/regions/0/start
	damon_write 1 $K/0/schemes/nr_schemes
	S=$K/0/schemes/0
	damon_write "$3" $S/action
	damon_write "$4" $S/target_nid
	# Every range defaults to [0, 0].
	damon_write 4096 $S/access_pattern/sz/min
	damon_write 4294967295 $S/access_pattern/sz/max
	damon_write 4294967295 $S/access_pattern/age/max
	if [ "$3" = migrate_hot ]; then
		damon_write 1 $S/access_pattern/nr_accesses/min
		damon_write 4294967295 $S/access_pattern/nr_accesses/max
	else
		damon_write 0 $S/access_pattern/nr_accesses/max
		damon_write 10 $S/access_pattern/age/min
	fi
	# As DAMON's own tiering example (damo's) does: promote only pages
	# that are young, demote none that is (the filter checks and clears
	# the page's Accessed bits).  Without it, a region that DAMON saw
	# idle as a whole is demoted with the pages in it that are in use.
	# (nr_filters makes the directories anew: write it once.)
	if [ -n "${tier_damon_memcg:-}" ]; then
		damon_write 2 $S/filters/nr_filters
	else
		damon_write 1 $S/filters/nr_filters
	fi
	damon_write young $S/filters/0/type
	if [ "$3" = migrate_hot ]; then
		damon_write N $S/filters/0/matching
	else
		damon_write Y $S/filters/0/matching
	fi
	if [ -n "${tier_damon_memcg:-}" ]; then
		damon_write memcg $S/filters/1/type
		damon_write "$tier_damon_memcg" $S/filters/1/memcg_path
		# Filter out what does not match: other cgroups' pages.
		damon_write N $S/filters/1/matching
	fi
	# The same rate limit as htmm's default, 1 GiB/s.
	damon_write 1073741824 $S/quotas/bytes
	damon_write 1000 $S/quotas/reset_interval_ms
}

# The DAMON schemes' statistics, one "bench damon" line per kdamond.
damon_stats() {
	for k in 0 1; do
		damon_write update_schemes_stats $D/$k/state
		S=$D/$k/contexts/0/schemes/0
		echo "bench damon kdamond $k state $(cat $D/$k/state)" \
			"tried $(cat $S/stats/sz_tried) applied $(cat $S/stats/sz_applied)" \
			"quota_exceeds $(cat $S/stats/qt_exceeds)" \
			"filters $(cat $S/filters/*/type | tr '\n' ' ')"
	done
}

tier_setup() {
	case "$1" in
	none|all-fast) ;;
	autonuma)
		echo 2 > /proc/sys/kernel/numa_balancing
		echo true > /sys/kernel/mm/numa/demotion_enabled ;;
	damon)
		damon_err=
		damon_write 2 $D/nr_kdamonds
		damon_kdamond 0 1 migrate_hot 0
		damon_kdamond 1 0 migrate_cold 1
		damon_write on $D/0/state
		damon_write on $D/1/state
		[ -z "$damon_err" ] ;;
	htmm-abit|htmm-inject|htmm-split|htmm-nosplit|htmm-epebs|htmm-epebs-nosplit)
		case "$1" in
		htmm-abit) tier_htmm_write htmm_sampler abit ;;
		htmm-epebs*)
			tier_htmm_write htmm_sampler inject
			tier_htmm_write htmm_cooling_period 200000
			/htmm/bin/epebs_relay > /tmp/relay.out 2>&1 &
			relay=$! ;;
		*)
			tier_htmm_write htmm_sampler inject
			tier_htmm_write htmm_cooling_period 200000
			tier_inject="--inject ${bench_inject:-40000}" ;;
		esac
		case "$1" in *nosplit) tier_htmm_write htmm_mode 1 ;; esac
		tier_htmm_set || return 1
		echo "$3" > "$2/memory.max_at_node0"
		echo enabled > "$2/memory.htmm_enabled" ;;
	*) echo "bench: unknown configuration $1"; return 1 ;;
	esac
}

tier_teardown() {
	echo 0 > /proc/sys/kernel/numa_balancing
	echo false > /sys/kernel/mm/numa/demotion_enabled
	if [ "$(cat $D/nr_kdamonds)" != 0 ]; then
		for k in 0 1; do
			[ "$(cat $D/$k/state 2> /dev/null)" = on ] &&
				damon_write off $D/$k/state
		done
		damon_write 0 $D/nr_kdamonds
	fi
	if [ -f "$1/memory.htmm_enabled" ]; then
		echo disabled > "$1/memory.htmm_enabled"
	fi
	for kv in $tier_saved; do
		echo "${kv#*:}" > "$H/${kv%%:*}"
	done
	tier_saved=
	if [ -n "$relay" ]; then
		kill -TERM "$relay"
		wait "$relay"
		sed 's/^/bench /' /tmp/relay.out
		relay=
	fi
	tier_inject=
}
