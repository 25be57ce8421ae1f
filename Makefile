# SPDX-License-Identifier: GPL-2.0
#
# Developer shortcuts.  Each target is a thin wrapper around scripts/.
# The two commands of the README are scripts/demo.sh and scripts/test.sh.

.PHONY: all demo test kernel kernel-debug vm patches check-series check-configs fresh-check \
	checkpatch clean distclean

all: demo

demo:			## build the demo kernel, boot the two-tier VM, tour htmm
	scripts/demo.sh

test:			## every test: host suites, KUnit and kselftests in the VM
	scripts/test.sh

kernel:			## build the demo kernel only
	scripts/build-kernel.sh demo

kernel-debug:		## build the debug (test) kernel only
	scripts/build-kernel.sh debug

vm:			## interactive shell in the two-tier guest
	scripts/vm.sh

patches:		## export the git-am series to build/series/patches, its cover letter apart
	scripts/export-series.sh

check-series:		## export, git am onto pristine, compare, kernel-doc, get_maintainer, build each step
	scripts/export-series.sh --check

check-configs:		## build THP=n, HTMM=n and distro-like kernels; test the last (slow, not in CI)
	scripts/check-configs.sh

fresh-check:		## the README's two commands in a fresh Debian 12 chroot (very slow, not in CI)
	scripts/fresh-check.sh

checkpatch:		## checkpatch --strict on our patches and files
	scripts/checkpatch.sh

clean:			## remove kernel build outputs and logs (keeps the source import)
	rm -rf build/kernel-* build/logs build/selftests build/series build/series-check \
		build/tierbench* build/*.cpio

distclean:		## remove everything under build/
	rm -rf build
