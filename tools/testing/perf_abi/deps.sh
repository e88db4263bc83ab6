#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages this project needs, and only those missing.
# Usage: deps.sh [--check] GROUP...
#   GROUP: build (the suite, framework from linux-source-6.12), suite (the
#          same without linux-source: KSRC given), src-6.1 (linux-source-6.1),
#          vm (qemu guests), kernel (tiny/mutant kernels), cross (unit
#          tests built for s390x and run under qemu-user), soak
#          (stress-ng for make soak), upstream (real kernel trees, their
#          checkpatch), lava (LAVA's dispatcher, lava-run, for make check's
#          LAVA jobs), all
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
pkgs_vm="qemu-system-x86 qemu-system-arm qemu-system-misc qemu-system-ppc
	busybox-static cpio file dpkg-dev zstd
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	gcc-s390x-linux-gnu libc6-dev-s390x-cross
	gcc-powerpc64le-linux-gnu libc6-dev-ppc64el-cross
	gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
	gcc-i686-linux-gnu libc6-dev-i386-cross
	gcc-arm-linux-gnueabihf libc6-dev-armhf-cross"
pkgs_kernel="flex bison bc libelf-dev libssl-dev kmod gcc-aarch64-linux-gnu"
pkgs_cross="gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user-static"
pkgs_soak="stress-ng"

# upstream: real kernel trees (git, dpkg-deb) and their checkpatch's
# SPDX check (ply, GitPython)
pkgs_upstream="git dpkg xz-utils python3-ply python3-git"


# lava-dispatcher brings some 135 packages (libguestfs, udev, ...): about
# 47 MB to fetch, 212 MB installed, a minute to install.
pkgs_lava="lava-dispatcher python3-jinja2 python3-yaml"

# linux-source-VER: a version apt knows, checked before installing anything.
src_known() {
	[[ $1 =~ ^[0-9]+\.[0-9]+$ ]] || return 1
	[ -f "/usr/src/linux-source-$1.tar.xz" ] && return 0
	apt-cache pkgnames linux-source- 2>/dev/null | grep -qxF "linux-source-$1"
}

want=
for g in "${@:-build}"; do
	case $g in
	suite) want="$want $pkgs_suite" ;;
	build) want="$want $pkgs_build" ;;
	src-*)
		src_known "${g#src-}" || {
			echo "deps.sh: KVER=${g#src-}: apt knows no linux-source-${g#src-} ($(apt-cache pkgnames linux-source- 2>/dev/null | sed 's/^linux-source-//' | sort -V | tr '\n' ' ' | sed 's/ $//'))" >&2
			exit 2
		}
		want="$want $pkgs_suite linux-source-${g#src-}" ;;
	vm) want="$want $pkgs_build $pkgs_vm" ;;
	kernel) want="$want $pkgs_build $pkgs_vm $pkgs_kernel" ;;
	cross) want="$want $pkgs_build $pkgs_cross" ;;
	soak) want="$want $pkgs_build $pkgs_vm $pkgs_soak" ;;
	upstream) want="$want $pkgs_suite $pkgs_upstream" ;;
	lava) want="$want $pkgs_build $pkgs_vm $pkgs_lava" ;;
	all) want="$want $pkgs_build $pkgs_vm $pkgs_kernel $pkgs_cross
		$pkgs_soak $pkgs_upstream $pkgs_lava linux-source-6.1" ;;
	*) echo "deps.sh: unknown group '$g' (build, suite, src-VER, vm, kernel, cross, soak, upstream, lava, all)" >&2
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
# Another apt-get or dpkg may hold the dpkg lock (an install, unattended
# upgrades): wait for it, up to LOCK_WAIT seconds, and say so.
LOCK_WAIT=300
apt=(apt-get -o "DPkg::Lock::Timeout=$LOCK_WAIT")
if command -v fuser >/dev/null &&
	fuser /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock >/dev/null 2>&1; then
	echo "deps: another apt-get or dpkg holds the dpkg lock: waiting up to ${LOCK_WAIT}s" >&2
fi
err=$(mktemp)
trap 'rm -f "$err"' EXIT
# A stale or empty package list makes apt-get install fail: refresh once.
if ! "${apt[@]}" install -y -qq --no-install-recommends $missing >/dev/null 2>"$err"; then
	if ! "${apt[@]}" update -qq >/dev/null 2>"$err" ||
		! "${apt[@]}" install -y -qq --no-install-recommends $missing >/dev/null 2>"$err"; then
		if grep -q 'lock' "$err"; then
			echo "deps.sh: the dpkg lock stayed held for ${LOCK_WAIT}s by another apt-get or dpkg; run again when it is done: $line" >&2
		else
			echo "deps.sh: $line failed: $(grep -v '^$' "$err" | tail -n 1)" >&2
		fi
		exit 2
	fi
fi
