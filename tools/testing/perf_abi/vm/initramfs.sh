#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or find in the cache) the initramfs of a test guest:
#
#   initramfs.sh ARCH SUITE [INIT [HELPER...]]   print the path of the archive
#
# ARCH is one of vm/qemu/*.conf (x86_64, arm64, s390x, ppc64le, riscv64,
# i386, armhf; a compat: guest's is its 32-bit programs');
# SUITE a kselftest install tree (run_kselftest.sh, kselftest/, the test
# directories) built statically for ARCH.  The archive holds busybox-static
# of ARCH (the host's own when it is the same architecture, else fetched
# with lib/apt-fetch.sh from the conf's debsuite, default the machine's
# own Debian release), vm/init (or INIT: the LAVA ramdisk's, lava/init,
# starts a shell instead), a GNU-style
# /usr/bin/timeout, each HELPER (a static ARCH program: make vm-helpers-ARCH)
# as /usr/bin/NAME (its file name without "-ARCH"), and SUITE in /kselftest:
# nothing from the host's root
# filesystem.  It is cached in $PERF_ABI_CACHE/initramfs/ under a hash of
# all those inputs, so it is rebuilt only when one of them changes.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}

die() {
	echo "initramfs.sh: $*" >&2
	exit 2
}

arch=${1:?usage: initramfs.sh ARCH SUITE}
suite=${2:?usage: initramfs.sh ARCH SUITE [INIT [HELPER...]]}
init=${3:-$here/init}
shift $(($# < 3 ? $# : 3))
helpers=("$@")
. "$here/../lib/arch.sh"
debarch=$(arch_get "$arch" debarch) ||
	die "unknown architecture '$arch' ($(arch_list | tr '\n' ' ' | sed 's/ $//'))"
elf=$(arch_get "$arch" elf)
debsuite=$(arch_get "$arch" debsuite || true)
[ -f "$init" ] || die "no such init script: $init"
[ -x "$suite/run_kselftest.sh" ] || die "$suite is not a kselftest install tree (no run_kselftest.sh)"
suite=$(cd "$suite" && pwd)
for h in ${helpers[@]+"${helpers[@]}"}; do
	file -L "$h" 2>/dev/null | grep -qE "($elf).*statically linked" ||
		die "$h is not a static $arch program (make vm-helpers-$arch)"
done

# busybox-static for ARCH
host_debarch=$(dpkg --print-architecture 2>/dev/null || echo none)
bb=
if [ "$host_debarch" = "$debarch" ] &&
   [ "$(dpkg-query -W -f='${db:Status-Status}' busybox-static 2>/dev/null)" = installed ]; then
	bb=/bin/busybox
else
	bbdir=$cache/busybox-$debarch
	# One fetch at a time: parallel guests on a cold cache share it.
	mkdir -p "$cache"
	exec 9>"$bbdir.lock"
	flock 9
	# bookworm's package has bin/busybox, trixie's (merged /usr) usr/bin/busybox
	if [ ! -x "$bbdir/bin/busybox" ] && [ ! -x "$bbdir/usr/bin/busybox" ]; then
		rm -rf "$bbdir.tmp"
		"$(dirname "$here")/lib/apt-fetch.sh" ${debsuite:+--suite "$debsuite"} \
			"$debarch" "$bbdir.tmp" busybox-static >/dev/null ||
			die "cannot fetch busybox-static for $debarch${debsuite:+ from $debsuite}"
		rm -rf "$bbdir" && mv "$bbdir.tmp" "$bbdir"
	fi
	exec 9>&-
	bb=$bbdir/bin/busybox
	[ -x "$bb" ] || bb=$bbdir/usr/bin/busybox
fi
file -L "$bb" | grep -qE "($elf).*statically linked" || die "$bb is not a static $arch busybox"

# Statically linked test programs of ARCH only: the guest has no libc.
while IFS= read -r -d '' f; do
	desc=$(file -L "$f")
	case $desc in *ELF*) ;; *) continue ;; esac
	grep -qE "$elf" <<<"$desc" ||
		die "$f is not an $arch program ($(echo "${desc#*: }" | cut -d, -f1-2))"
	case $desc in
	*'dynamically linked'*)
		die "$f is dynamically linked; the guest has no shared libraries (build it static, as make install-$arch does)" ;;
	esac
done < <(find "$suite" -type f -perm -u+x -print0)

key=$( {
	sha256sum "$0" "$init" "$here/timeout" "$bb" ${helpers[@]+"${helpers[@]}"} | cut -d' ' -f1
	cd "$suite" && find . \( -type f -o -type l \) -printf '%p %m %l\n' | sort
	find . -type f -print0 | sort -z | xargs -0 -r sha256sum
} | sha256sum | cut -c1-16)
out=$cache/initramfs/$arch-$key.cpio
if [ -s "$out" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache/initramfs"
tmp=$(mktemp -d "$cache/initramfs/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
r=$tmp/root
mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,dev,proc,sys,tmp,root,etc,kselftest}
cp "$bb" "$r/bin/busybox"
# The guest's init links the other applets (busybox --install -s): a
# foreign busybox cannot list them here.
ln -s busybox "$r/bin/sh"
install -m 755 "$init" "$r/init"
install -m 755 "$here/timeout" "$r/usr/bin/timeout"
for h in ${helpers[@]+"${helpers[@]}"}; do
	n=${h##*/}
	install -m 755 "$h" "$r/usr/bin/${n%-"$arch"}"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
cp -a "$suite/." "$r/kselftest/"
[ "$(id -u)" = 0 ] && mknod -m 600 "$r/dev/console" c 5 1
(cd "$r" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) > "$tmp/initramfs.cpio"
mv -f "$tmp/initramfs.cpio" "$out"
# Keep the cache small: drop archives not used for a week.
find "$cache/initramfs" -name '*.cpio' -mtime +7 -delete 2>/dev/null || true
echo "$out"
