#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Export the whole of htmm as one git-am-able series against the pristine
# 6.12 tree, into $BUILD/series/: the patches in $BUILD/series/patches/
# and the cover letter apart, $BUILD/series/cover-letter.patch, so that
# "git am $BUILD/series/patches/*.patch" applies exactly the series.
#   export-series.sh [-v N] [--subject-prefix P] [--apply-check|--check]
#   -v N                 version of the series (v2, v3...: "[PATCH vN 0/8]")
#   --subject-prefix P   instead of PATCH (for example "RFC PATCH")
#   --apply-check        then apply the series as the README says (git am
#                        of patches/*.patch onto a fresh worktree of the
#                        pristine tree) and check that the result is the
#                        build's overlay tree; TAP on stdout (scripts/test.sh)
#   --check              --apply-check, then scripts/kernel-doc -none on our
#                        new files (errors fail), get_maintainer.pl on each
#                        patch (its recipients printed), and a build of
#                        every step (demo config; slow)
#
# Each hook patch in patches/series becomes one commit, carrying the new
# files that its series line names; the documentation and the selftests
# follow as commits of their own.  Author and sign-off are the git
# identity (user.name, user.email) of whoever runs this, if one is set;
# otherwise the repository's, that of the patches in patches/ (said on
# stderr).  The cover letter's text is patches/cover-letter.txt (first
# line: the subject, without prefix), then the base from patches/BASE and
# the changelog of patches/changelog.txt.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

check=0 version= prefix=PATCH
while [ $# -gt 0 ]; do
	case "$1" in
	--check) check=2 ;;
	--apply-check) check=1 ;;
	-v) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || die "-v needs a version number"
	    version=$2; shift ;;
	--subject-prefix) [ -n "${2:-}" ] || die "--subject-prefix needs a value"
	    prefix=$2; shift ;;
	*) die "unknown option '$1' (-v N, --subject-prefix P, --apply-check, --check)" ;;
	esac
	shift
done
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

# Author, committer and sign-off of every commit.
ident_name=$(git -C "$HTMM_TOP" config user.name || true)
ident_email=$(git -C "$HTMM_TOP" config user.email || true)
ident_from=you
if [ -z "$ident_name" ] || [ -z "$ident_email" ]; then
	ident_name=$(git mailinfo /dev/null /dev/null < "$HTMM_TOP/patches/0001-"*.patch | sed -n 's/^Author: //p')
	ident_email=$(git mailinfo /dev/null /dev/null < "$HTMM_TOP/patches/0001-"*.patch | sed -n 's/^Email: //p')
	ident_from=repo
	warn "no git identity (user.name and user.email) is set: author and sign-off fall back to the repository's, $ident_name <$ident_email>"
fi
export GIT_COMMITTER_NAME=$ident_name GIT_COMMITTER_EMAIL=$ident_email
ident="$ident_name <$ident_email>"
[ $ident_from = you ] && note "author and sign-off: $ident (your git identity)"

added=()
add_paths() {
	local p
	for p in "$@"; do
		if [ "${p#!}" != "$p" ]; then
			# Left out of this commit: a later line of the series adds it.
			gitq rm -q --cached "${p#!}" && rm -f "${p#!}"
			continue
		fi
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
	fi
	gitq commit -q --amend --no-edit -s --author="$ident"
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
	gitq commit -q -s -m "$subject" -m "$body" --author="$ident"
}
commit_rest Documentation "Documentation: admin-guide: add htmm" \
	"Describe htmm's cgroup files, tunables, counters and limits for operators, and add the sysfs ABI entries."
commit_rest tools/testing/selftests/htmm "selftests: htmm: add tests" \
	"Add kselftests for htmm's tunables, cgroup files, memory.max_at_node<N> enforcement and the tier layout."

rm -rf "$out"
fp=(--subject-prefix="$prefix")
[ -z "$version" ] || fp+=(-v "$version")
gitq format-patch -q --cover-letter --no-signature "${fp[@]}" -o "$out/patches" pristine..HEAD
mv "$out"/patches/*0000-cover-letter.patch "$out/cover-letter.patch"
python3 - "$out/cover-letter.patch" "$HTMM_TOP/patches" <<'PY'
import re
import sys
cover, pdir = sys.argv[1], sys.argv[2]
subject, _, body = open(pdir + '/cover-letter.txt').read().partition('\n')
subject = re.sub(r'^\s*(\[[^]]*\]\s*)+', '', subject).strip()
base = dict(l.split(': ', 1) for l in open(pdir + '/BASE').read().splitlines() if ': ' in l)
blurb = body.strip() + '\n\nBase: Linux %s. No upstream commit ID is at hand: the base was\n' \
    'imported from %s.\n\nChangelog:\n%s' % (
        base['version'], base['package'], open(pdir + '/changelog.txt').read().rstrip())
s = open(cover).read()
s = s.replace('*** SUBJECT HERE ***', subject).replace('*** BLURB HERE ***', blurb)
open(cover, 'w').write(s)
PY
echo "series: $(ls "$out/patches" | wc -l) patches in $out/patches, cover letter $out/cover-letter.patch" >&2

[ $check = 0 ] && exit 0
# The README's way: git am of the patches onto the pristine tree, checked
# out clean; the result must be the build's overlay tree.  The export's
# worktree serves: checking pristine out there rewrites only the files the
# series touches, where a second worktree checked out the whole tree (about
# 30 s of the test run).
ok=0 tn=0
tap() {
	tn=$((tn + 1))
	if [ "$1" = 0 ]; then echo "ok $tn - $2"; else ok=1; echo "not ok $tn - $2"; fi
}
echo "1..3"
cd "$wt"
rc=0
{ gitq checkout -q --detach pristine && git clean -fdxq &&
  gitq am -q "$out"/patches/*.patch; } > "$BUILD/series-apply.log" 2>&1 || rc=$?
tap $rc "git am $out/patches/*.patch onto the pristine tree ($(ls "$out/patches" | wc -l) patches)"
[ $rc = 0 ] || sed 's/^/# /' "$BUILD/series-apply.log"
overlay=$(git -C "$BUILD/linux" rev-parse 'HEAD^{tree}')
applied=$(git rev-parse 'HEAD^{tree}')
rc=0
[ "$overlay" = "$applied" ] || rc=1
tap $rc "the applied series is the build's overlay tree ($applied)"
[ $rc = 0 ] || git diff --stat "$overlay" HEAD | sed 's/^/# /'
subj=$(sed -n 's/^Subject: //p' "$out/cover-letter.patch")
rc=0
[ "$(grep -o '\[' <<< "$subj" | wc -l)" = 1 ] && grep -q '^Base: Linux ' "$out/cover-letter.patch" || rc=1
tap $rc "the cover letter has one subject prefix and its base: $subj"
[ $check = 1 ] && exit $ok

# kernel-doc on our new files; get_maintainer.pl's recipients per patch.
kd=$(cd "$HTMM_TOP" && ls mm/htmm/*.[ch] include/linux/htmm.h include/trace/events/htmm.h 2>/dev/null)
# shellcheck disable=SC2086
(cd "$wt" && perl scripts/kernel-doc -none $kd) 2> "$BUILD/series-kernel-doc.log" || true
if grep -q 'error' "$BUILD/series-kernel-doc.log"; then
	cat "$BUILD/series-kernel-doc.log"
	die "kernel-doc found errors in our files"
fi
note "kernel-doc -none: $(grep -c warning "$BUILD/series-kernel-doc.log" || true) warnings, no errors"
for p in "$out"/patches/*.patch; do
	echo "== $(basename "$p")"
	(cd "$wt" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats "$p") | sed 's/^/   /'
done
[ $ok = 0 ] || die "the series does not apply as the README says"

if [ $check = 2 ]; then
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
