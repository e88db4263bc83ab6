#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a tiny guest kernel from Debian's linux-source package and print the
# image path (the only line on stdout).
#   tiny.sh [--arch x86_64|arm64|riscv64] [--src TARBALL] [--patch FILE]... [--key] [-j N]
# Config: tinyconfig + the repo's top-level `config` (what the suite's
# config fragment asks for, spelled out for tinyconfig) +
# kernels/tiny-ARCH.config.  Patches (mutant or otherwise) are
# applied to a copy of the pristine tree, in the order given.
# Cache ($PERF_ABI_CACHE, default ~/.cache/perf-abi):
#   src/<ver>/            pristine tree, extracted once (stamped by tarball)
#   build/<arch>-<cfg>/   src/, a patched hardlink copy, one per arch+config;
#                         kernels/build.sh builds it (O= in its cache), so a
#                         patch change rebuilds incrementally
#   img/<arch>-<key>/     finished image; key = source + config + patches
# A cached image is printed without running make.  --key prints the key only.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}
arch=x86_64
tarball=/usr/src/linux-source-6.12.tar.xz
patches=()
only_key=
jobs=${PERF_ABI_JOBS:-$(nproc)}

die() { echo "tiny.sh: $*" >&2; exit 2; }
log() { echo "tiny.sh: $*" >&2; }

while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=${2:?}; shift 2 ;;
	--src) tarball=${2:?}; shift 2 ;;
	--patch) [ -f "${2:-}" ] || die "no patch '${2:-}'"
		 patches+=("$(realpath "$2")"); shift 2 ;;
	--key) only_key=1; shift ;;
	-j) jobs=${2:?}; shift 2 ;;
	-h|--help) sed -n '4,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option '$1' (try --help)" ;;
	esac
done

case $arch in
x86_64) cross=''; image=arch/x86/boot/bzImage ;;
arm64) cross=aarch64-linux-gnu-; image=arch/arm64/boot/Image ;;
riscv64) cross=riscv64-linux-gnu-; image=arch/riscv/boot/Image ;;
*) die "unknown arch '$arch' (x86_64, arm64, riscv64)" ;;
esac
[ -f "$tarball" ] || die "no kernel source $tarball (tools/testing/perf_abi/deps.sh kernel)"
frags=("$top/config" "$here/tiny-$arch.config")
for f in "${frags[@]}"; do [ -f "$f" ] || die "missing config fragment $f"; done

sum() { sha256sum | cut -c1-16; }
src_id="$(realpath "$tarball"):$(stat -c %s:%Y "$tarball")"
# The config key covers the builder too: how it configures is part of it.
cfg_key=$( { echo "$src_id $arch"; cat "${frags[@]}"; \
	     sed -n '/^# --- configure/,/^# --- end/p' "$here/build.sh"; } | sum)
# Only the diffs count: editing a patch's description rebuilds nothing.
patch_key=$( { for p in "${patches[@]}"; do sed -n '/^diff \|^--- /,$p' "$p"; done; } | sum)
key=$cfg_key-$patch_key
if [ -n "$only_key" ]; then echo "$key"; exit 0; fi

img_dir=$cache/img/$arch-$key
if [ -f "$img_dir/$(basename $image)" ]; then
	echo "$img_dir/$(basename $image)"
	exit 0
fi

"$top/tools/testing/perf_abi/deps.sh" kernel >&2 || exit 2
command -v "${cross}gcc" >/dev/null || die "no ${cross}gcc"
mkdir -p "$cache"
exec 9>"$cache/.lock-$arch-$cfg_key"
flock 9

# Pristine source, extracted once per tarball.
ver_dir=$cache/src/$(basename "$tarball" .tar.xz)
if [ "$(cat "$ver_dir/.stamp" 2>/dev/null)" != "$src_id" ]; then
	log "extracting $tarball"
	exec 8>"$cache/.lock-src"
	flock 8
	if [ "$(cat "$ver_dir/.stamp" 2>/dev/null)" != "$src_id" ]; then
		rm -rf "$ver_dir" "$ver_dir.tmp"
		mkdir -p "$ver_dir.tmp"
		tar -xJf "$tarball" -C "$ver_dir.tmp" --strip-components=1
		echo "$src_id" > "$ver_dir.tmp/.stamp"
		mv "$ver_dir.tmp" "$ver_dir"
	fi
	exec 8>&-
fi

# Patched copy: hard links to the pristine tree; patch(1) writes patched
# files anew, so the pristine tree is never modified.  Files patched by the
# previous set but not by this one get a fresh, newer copy so that make
# rebuilds them.
bdir=$cache/build/$arch-$cfg_key
tree=$bdir/src
mkdir -p "$bdir"
if [ "$(cat "$tree/.perf-abi-patches" 2>/dev/null)" != "$patch_key" ]; then
	old=$(cat "$tree/.perf-abi-files" 2>/dev/null || true)
	# Keep the previously patched files: where a file comes out the same
	# again it gets its old mtime back, so make does not rebuild it.
	rm -rf "$bdir/prev"
	for f in $old; do
		[ -f "$tree/$f" ] || continue
		mkdir -p "$bdir/prev/$(dirname "$f")"
		cp -p "$tree/$f" "$bdir/prev/$f"
	done
	rm -rf "$tree"
	cp -al "$ver_dir" "$tree"
	rm -f "$tree/.stamp"
	: > "$tree/.perf-abi-files"
	for p in "${patches[@]}"; do
		log "applying $(basename "$p")"
		patch -s -p1 -d "$tree" --no-backup-if-mismatch < "$p" ||
			die "$(basename "$p") does not apply"
		sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$p" >> "$tree/.perf-abi-files"
	done
	for f in $(sort -u "$tree/.perf-abi-files"); do
		if cmp -s "$bdir/prev/$f" "$tree/$f"; then
			touch -r "$bdir/prev/$f" "$tree/$f"
		fi
	done
	rm -rf "$bdir/prev"
	for f in $old; do
		grep -qxF "$f" "$tree/.perf-abi-files" && continue
		[ -f "$tree/$f" ] || continue
		cp --remove-destination "$ver_dir/$f" "$tree/$f"
		touch "$tree/$f"
	done
	echo "$patch_key" > "$tree/.perf-abi-patches"
fi

# The one kernel builder (kernels/build.sh): O= in its cache, keyed by
# this tree's path and the config, so a patch change rebuilds
# incrementally; it checks every requested option.
built=$("$here/build.sh" --arch "$arch" -j "$jobs" "$tree") || exit $?
mkdir -p "$img_dir.tmp"
cp "$built" "$(dirname "$built")/.config" "$img_dir.tmp/"
rm -rf "$img_dir"
mv "$img_dir.tmp" "$img_dir"
echo "$img_dir/$(basename $image)"
