# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest benchmarks: kernel thread CPU from `htmm record`.
#
# rec_ms REGEX FROM sums, over the record $REC's columns NAME_cpu_ms whose
# NAME starts with a match of the extended regex REGEX (e.g.
# "ksamplingd|kmigraterd"), the last value less the value in the first row
# at or after unix time FROM (0 for a thread not there yet).  The thread
# columns are system-wide, whatever cgroup the record follows.
rec_ms() {
	awk -F, -v pre="$1" -v from="$2" '
	NR == 1 {
		for (i = 1; i <= NF; i++) {
			if ($i == "unix_time") ut = i
			if ($i ~ ("^(" pre ")") && $i ~ /_cpu_ms$/) c[i] = 1
		}
		next
	}
	$ut >= from && !started { started = 1; for (i in c) a[i] = $i + 0 }
	{ for (i in c) if ($i != "") z[i] = $i + 0 }
	END { for (i in c) t += z[i] - a[i]; printf "%d\n", t }' "$REC"
}

# rec_start CGROUP [htmm record options]: record CGROUP into $REC, one
# row a second, in the background (pid in $recpid); returns once the
# first row is written (at most 10 s).
rec_start() {
	rm -f "$REC"
	cg=$1
	shift
	/htmm/bin/htmm record --cgroup "$cg" --interval 1000 "$@" -o "$REC" &
	recpid=$!
	i=0
	while [ "$(wc -l 2>/dev/null < "$REC" || echo 0)" -lt 2 ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# rec_stop: end the record; it writes a last row when stopped.
rec_stop() {
	kill -INT "$recpid"
	wait "$recpid"
}
