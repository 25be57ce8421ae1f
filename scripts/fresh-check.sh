#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check the README's promise on a fresh Debian 12 system (make fresh-check;
# takes over an hour on 2 cores, not part of scripts/test.sh or CI):
#   1. build a minimal Debian 12 (bookworm) root with mmdebstrap, from the
#      Debian mirror this machine's apt uses, with bookworm-security (where
#      patches/BASE's linux-source-6.12 comes from);
#   2. git clone the committed HEAD of this repository into it (uncommitted
#      changes are not part of the check);
#   3. run the README's two commands there as root in a chroot with /proc,
#      /sys and /dev mounted: scripts/demo.sh, then scripts/test.sh.
# Prints one result line per command with its wall time; exits non-zero if
# one failed.  Must run as root.  The root stays in $FRESH_ROOT until the
# next run; logs go to $BUILD/logs/fresh-check/.
#   MIRROR=URI SECURITY_MIRROR=URI   Debian mirrors (default: this machine's)
#   VARIANT=minbase                  mmdebstrap variant
#   FRESH_ROOT=$BUILD/fresh-root     where the root is built
#   FRESH_COMMANDS="demo test"       the commands to run, in order
#   FRESH_TIMEOUT=10800              seconds allowed per command
#   FRESH_UNCOMMITTED=1              also copy the working tree's uncommitted
#                                    changes and new files into the clone
#                                    (to try a change before committing it)
set -uo pipefail
source "$(dirname "$0")/lib.sh"

SUITE=bookworm
VARIANT=${VARIANT:-minbase}
FRESH_ROOT=${FRESH_ROOT:-$BUILD/fresh-root}
FRESH_COMMANDS=${FRESH_COMMANDS:-demo test}
FRESH_TIMEOUT=${FRESH_TIMEOUT:-10800}
LOGS=$BUILD/logs/fresh-check
ROOT=$(realpath -m "$FRESH_ROOT")
start=$(date +%s)
summary=()
failed=0

[ "$(id -u)" -eq 0 ] || die "fresh-check.sh must run as root (chroot, mounts)"
mkdir -p "$LOGS"

since() { echo $(( $(date +%s) - $1 )); }

result() {
	local line
	line=$(printf '%s %s (%d s)' "$1" "$2" "$3")
	[ "$1" = PASS ] || failed=1
	summary+=("$line")
	echo "$line"
}

# The mounts under $ROOT, deepest first.
our_mounts() {
	findmnt -rn -o TARGET | awk -v r="$ROOT" 'index($0, r "/") == 1' | sort -r
}

# Stop what still runs inside the root (our children: the chroot's
# processes), then undo every mount under it.
cleanup() {
	local p m
	[ -z "${run_pid:-}" ] || kill -TERM "$run_pid" 2>/dev/null
	[ -d "$ROOT" ] || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && kill -TERM "${p#/proc/}" 2>/dev/null
	done
	sleep 1
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$ROOT" ] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	while read -r m; do
		[ -n "$m" ] || continue
		umount "$m" 2>/dev/null || umount -l "$m" || warn "could not unmount $m"
	done < <(our_mounts)
	[ -z "$(our_mounts)" ] || warn "mounts left under $ROOT"
}
trap cleanup EXIT
trap 'echo "interrupted" >&2; exit 130' INT TERM

# The Debian mirrors this machine's apt uses: the URI that serves the
# release and the one that serves its security suite.
apt_uri() {
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk -v want="$1" '$2 == want { print $1; exit }'
}
MIRROR=${MIRROR:-$(apt_uri "$SUITE")}
SECURITY_MIRROR=${SECURITY_MIRROR:-$(apt_uri "$SUITE-security")}
[ -n "$MIRROR" ] || die "no $SUITE mirror in this machine's apt sources; set MIRROR"
if [ -z "$SECURITY_MIRROR" ]; then
	SECURITY_MIRROR=${MIRROR%/}-security
	warn "no $SUITE-security in this machine's apt sources; trying $SECURITY_MIRROR"
fi
note "mirrors: $MIRROR ($SUITE, $SUITE-updates), $SECURITY_MIRROR ($SUITE-security)"

need_packages mmdebstrap git

# 1. The root.  Start from nothing: a previous run's root goes first.
cleanup
if [ -e "$ROOT" ]; then
	note "removing the previous root $ROOT"
	rm -rf --one-file-system "$ROOT" || die "cannot remove $ROOT"
fi
mkdir -p "$(dirname "$ROOT")"
aptopts=()
# Mirrors that serve frozen snapshots need what this machine's apt has.
if apt-config dump 2>/dev/null | grep -qx 'Acquire::Check-Valid-Until "false";'; then
	aptopts+=(--aptopt='Acquire::Check-Valid-Until "false"')
fi
t=$(date +%s)
note "building a $VARIANT Debian $SUITE root in $ROOT (log: $LOGS/mmdebstrap.log)"
if ! mmdebstrap --variant="$VARIANT" "${aptopts[@]}" "$SUITE" "$ROOT" \
	"deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" \
	"deb $SECURITY_MIRROR $SUITE-security main" > "$LOGS/mmdebstrap.log" 2>&1; then
	tail -n 20 "$LOGS/mmdebstrap.log" >&2
	result FAIL "mmdebstrap $VARIANT $SUITE" "$(since "$t")"
	exit 1
fi
result PASS "mmdebstrap $VARIANT $SUITE root: $(du -sh --one-file-system "$ROOT" | cut -f1)" "$(since "$t")"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"

# 2. The clone, of the committed HEAD.
t=$(date +%s)
head=$(git -C "$HTMM_TOP" rev-parse --short HEAD) || die "$HTMM_TOP is not a git repository"
git clone -q --no-local "$HTMM_TOP" "$ROOT/root/htmm" > "$LOGS/clone.log" 2>&1 ||
	{ cat "$LOGS/clone.log" >&2; die "git clone failed"; }
what="git clone of $head"
if [ "${FRESH_UNCOMMITTED:-0}" = 1 ]; then
	git -C "$HTMM_TOP" diff --binary HEAD | git -C "$ROOT/root/htmm" apply --whitespace=nowarn ||
		die "applying the uncommitted changes to the clone failed"
	(cd "$HTMM_TOP" && git ls-files -z --others --exclude-standard |
		xargs -0r cp -a --parents -t "$ROOT/root/htmm") ||
		die "copying the new files into the clone failed"
	what+=" + uncommitted changes"
elif [ -n "$(git -C "$HTMM_TOP" status --porcelain)" ]; then
	warn "the working tree has uncommitted changes; the check uses commit $head (FRESH_UNCOMMITTED=1 adds them)"
fi
result PASS "$what" "$(since "$t")"

# 3. The mounts a Debian system has, then the README's commands.
mount -t proc proc "$ROOT/proc" &&
mount -t sysfs sysfs "$ROOT/sys" &&
mount --bind /dev "$ROOT/dev" &&
mount --bind /dev/pts "$ROOT/dev/pts" &&
mount -t tmpfs -o mode=1777 tmpfs "$ROOT/dev/shm" ||
	die "mounting /proc, /sys or /dev in $ROOT failed"

for cmd in $FRESH_COMMANDS; do
	case "$cmd" in demo|test) ;; *) die "unknown command '$cmd' (demo or test)" ;; esac
	t=$(date +%s)
	log=$LOGS/$cmd.log
	note "running scripts/$cmd.sh in the fresh root (log: $log)"
	# In the background, so that a signal to us is handled at once.
	(timeout -k 30 "$FRESH_TIMEOUT" chroot "$ROOT" /usr/bin/env -i \
		HOME=/root LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/bash -c "cd /root/htmm && scripts/$cmd.sh" < /dev/null 2>&1 |
		tee "$log"; exit "${PIPESTATUS[0]}") &
	run_pid=$!
	wait "$run_pid"
	rc=$?
	run_pid=
	if [ "$cmd" = test ]; then
		what="scripts/test.sh: $(grep -E '^[0-9]+ passed' "$log" | tail -n 1)"
	else
		what="scripts/demo.sh"
	fi
	if [ "$rc" -eq 0 ]; then
		result PASS "$what" "$(since "$t")"
	else
		result FAIL "$what (exit $rc)" "$(since "$t")"
	fi
done

echo "# fresh-check: $(since "$start") s in all; root $ROOT; logs in $LOGS"
printf '%s\n' "${summary[@]}"
exit $failed
