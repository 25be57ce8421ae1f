#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Export the whole of htmm as one git-am-able series against the pristine
# 6.12 tree, with a cover letter, into $BUILD/series/.
#   export-series.sh           write the series
#   export-series.sh --check   also build every step of it (demo config)
#
# Each hook patch in patches/series becomes one commit, carrying the new
# files that its series line names; the documentation and the selftests
# follow as commits of their own.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

check=0
[ "${1:-}" = "--check" ] && check=1
"$HTMM_TOP/scripts/prepare-tree.sh" > /dev/null
export GIT_DIR=$BUILD/linux/.git
unset GIT_WORK_TREE
wt=$BUILD/export
out=$BUILD/series
gitq() { git -c user.name=htmm -c user.email=htmm@localhost -c gc.auto=0 "$@"; }

git worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
git worktree prune
gitq worktree add -q --detach "$wt" pristine
# From here on, git works in the export worktree with its own index.
unset GIT_DIR GIT_WORK_TREE
cd "$wt"

added=()
add_paths() {
	local p
	for p in "$@"; do
		[ -e "$HTMM_TOP/$p" ] || die "series names $p, which does not exist"
		mkdir -p "$(dirname "$p")"
		cp -a "$HTMM_TOP/$p" "$(dirname "$p")/"
		gitq add -f "$p"
		added+=("$p")
	done
}

while read -r p paths; do
	case "$p" in ''|'#'*) continue ;; esac
	gitq am -q --whitespace=error "$HTMM_TOP/patches/$p" || die "git am $p failed"
	if [ -n "$paths" ]; then
		# shellcheck disable=SC2086
		add_paths $paths
		gitq commit -q --amend --no-edit
	fi
done < "$HTMM_TOP/patches/series"

# What is left: documentation, then selftests.
commit_rest() {
	local dir=$1 subject=$2 body=$3 f left=()
	while read -r f; do
		local covered=0 a
		for a in "${added[@]}"; do
			case "$f" in "$a"|"$a"/*) covered=1 ;; esac
		done
		[ $covered = 0 ] && left+=("$f")
	done < <(cd "$HTMM_TOP" && find "$dir" -type f 2>/dev/null | sort)
	[ ${#left[@]} -gt 0 ] || return 0
	add_paths "${left[@]}"
	gitq commit -q -s -m "$subject" -m "$body" \
		--author="$(sed -n 's/^From: //p' "$HTMM_TOP/patches/"0001-*.patch | head -n1)"
}
commit_rest Documentation "Documentation: admin-guide: add htmm" \
	"Describe htmm's cgroup files, tunables, counters and limits for operators, and add the sysfs ABI entries."
commit_rest tools/testing/selftests/htmm "selftests: htmm: add tests" \
	"Add kselftests for htmm's tunables, cgroup files, memory.max_at_node<N> enforcement and the tier layout."

rm -rf "$out"
gitq format-patch -q --cover-letter --no-signature -o "$out" pristine..HEAD
cover=$(ls "$out"/0000-cover-letter.patch)
python3 - "$cover" "$HTMM_TOP/patches/cover-letter.txt" <<'PY'
import sys
cover, text = sys.argv[1], open(sys.argv[2]).read()
subject, _, body = text.partition('\n')
s = open(cover).read()
s = s.replace('*** SUBJECT HERE ***', subject.strip())
s = s.replace('*** BLURB HERE ***', body.strip())
open(cover, 'w').write(s)
PY
echo "series: $(ls "$out" | wc -l) files in $out"

if [ $check = 1 ]; then
	n=0
	for c in $(git rev-list --reverse pristine..HEAD); do
		n=$((n + 1))
		gitq checkout -q --detach "$c"
		note "building step $n: $(git log -1 --format=%s "$c")"
		cfg=$BUILD/series-check
		mkdir -p "$cfg"
		make -s -C "$wt" O="$cfg" ARCH=x86_64 tinyconfig > /dev/null
		"$wt/scripts/kconfig/merge_config.sh" -m -O "$cfg" "$cfg/.config" \
			"$HTMM_TOP/configs/htmm.config" > /dev/null
		make -s -C "$wt" O="$cfg" ARCH=x86_64 olddefconfig > /dev/null
		make -s -C "$wt" O="$cfg" ARCH=x86_64 CC="ccache gcc" -j"$NPROC" bzImage ||
			die "step $n does not build"
	done
	echo "every step of the series builds"
fi
