#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages this project needs, and only those missing.
# Usage: deps.sh [--check] GROUP...
#   GROUP: build (the suite, framework from linux-source-6.12), suite (the
#          same without linux-source: KSRC given), src-6.1 (linux-source-6.1),
#          vm (qemu guests), kernel (tiny/mutant kernels), lava (LAVA's
#          dispatcher, lava-run, for make check's LAVA jobs), all
#   --check: install nothing; print the apt-get line and exit 2 if something
#            is missing (what a non-root caller gets).
set -eu

check_only=
if [ "${1:-}" = --check ]; then
	check_only=1
	shift
fi

pkgs_suite="build-essential clang libcap-dev linux-libc-dev perl python3
	xz-utils rsync"
pkgs_build="$pkgs_suite linux-source-6.12"
pkgs_vm="qemu-system-x86 qemu-system-arm busybox-static cpio file
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross dpkg-dev zstd"
pkgs_kernel="flex bison bc libelf-dev libssl-dev kmod gcc-aarch64-linux-gnu"
# lava-dispatcher brings some 135 packages (libguestfs, udev, ...): about
# 47 MB to fetch, 212 MB installed, a minute to install.
pkgs_lava="lava-dispatcher python3-jinja2 python3-yaml"

want=
for g in "${@:-build}"; do
	case $g in
	suite) want="$want $pkgs_suite" ;;
	build) want="$want $pkgs_build" ;;
	src-*) want="$want $pkgs_suite linux-source-${g#src-}" ;;
	vm) want="$want $pkgs_build $pkgs_vm" ;;
	kernel) want="$want $pkgs_build $pkgs_vm $pkgs_kernel" ;;
	lava) want="$want $pkgs_build $pkgs_vm $pkgs_lava" ;;
	all) want="$want $pkgs_build $pkgs_vm $pkgs_kernel $pkgs_lava linux-source-6.1" ;;
	*) echo "deps.sh: unknown group '$g' (build, vm, kernel, lava, all)" >&2
	   exit 2 ;;
	esac
done

missing=
for p in $want; do
	case " $missing " in *" $p "*) continue ;; esac
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

line="apt-get install -y --no-install-recommends$missing"
if [ -n "$check_only" ] || [ "$(id -u)" != 0 ]; then
	echo "missing packages; run as root: $line" >&2
	exit 2
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# A stale or empty package list makes apt-get install fail: refresh once.
if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
