#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the ground-truth QEMU plugin (tools/htmm/qemu-plugin/htmm_mem.c)
# against the plugin header of the QEMU that is installed.  The header
# comes from Debian's qemu source package of the same version, fetched
# into $BUILD/qemu-src with "apt-get source" (a deb-src entry for the
# system's own suites is added if there is none).  Prints the plugin path.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

need_packages qemu-system-x86 gcc xz-utils dpkg-dev
out=$BUILD/plugin/htmm_mem.so
src=$HTMM_TOP/tools/htmm/qemu-plugin/htmm_mem.c
ver=$(dpkg-query -W -f='${source:Version}' qemu-system-x86)
hdrdir=$BUILD/qemu-src/include-${ver//:/_}

if [ ! -f "$hdrdir/qemu-plugin.h" ]; then
	mkdir -p "$BUILD/qemu-src"
	if ! ls "$BUILD"/qemu-src/qemu_*.orig.tar.* >/dev/null 2>&1; then
		if ! apt-cache showsrc qemu 2>/dev/null | grep -qx "Version: $ver"; then
			[ "$(id -u)" = 0 ] || die "no deb-src entry for qemu $ver; run once as root to add one"
			note "adding deb-src entries for the system's suites"
			if [ -f /etc/apt/sources.list.d/debian.sources ]; then
				sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
					> /etc/apt/sources.list.d/htmm-deb-src.sources
			else
				sed -n 's/^deb /deb-src /p' /etc/apt/sources.list \
					> /etc/apt/sources.list.d/htmm-deb-src.list
			fi
			apt-get update -qq
		fi
		note "fetching the qemu $ver source package"
		(cd "$BUILD/qemu-src" && apt-get source --download-only "qemu=$ver" >/dev/null 2>&1) ||
			die "apt-get source qemu=$ver failed"
	fi
	tmp=$(mktemp -d "$BUILD/qemu-src/x.XXXXXX")
	tar -C "$tmp" -xf "$BUILD"/qemu-src/qemu_*.orig.tar.* \
		--wildcards "*/include/qemu/qemu-plugin.h"
	hdr=$(find "$tmp" -name qemu-plugin.h | head -n 1)
	[ -n "$hdr" ] || die "qemu-plugin.h not found in the qemu source"
	mkdir -p "$hdrdir"
	cp "$hdr" "$hdrdir/"
	rm -rf "$tmp"
fi
if [ ! -f "$out" ] || [ "$src" -nt "$out" ]; then
	mkdir -p "$(dirname "$out")"
	gcc -shared -fPIC -O2 -Wall -Wextra -Werror -pthread -I"$hdrdir" -o "$out" "$src"
fi
echo "$out"
