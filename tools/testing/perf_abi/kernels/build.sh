#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a guest kernel from a kernel source tree, the way kunit.py does:
# out of tree, from tinyconfig + the repo's top-level `config` (the suite's
# needs, spelled out) + kernels/tiny-ARCH.config, every option checked.
# Print the image path (the only line on stdout).
#
#   build.sh [--arch x86_64|arm64|riscv64] [-j N] [--log FILE] TREE
#
# Cache ($PERF_ABI_CACHE, default ~/.cache/perf-abi):
#   tree/<arch>-<where>-<cfg>/obj/     O= of TREE for that arch and config:
#                                      a changed file rebuilds incrementally
#   tree/<arch>-<where>-<cfg>/img-<state>/  the finished image of one state
#                                      of the sources, kept for a week
# <where> hashes TREE's path, <cfg> the config inputs, this script's
# configure step and the compiler, <state> the sources: a git tree's HEAD
# (and its uncommitted diff), else the path, size and mtime of every file.
# An unchanged tree prints the cached image without running make.
# Exit 2 with one line on stderr: bad usage, a tree that is not a kernel
# or not clean (make mrproper), a requested option the config lacks;
# exit 3 when make fails (the line names the log).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}
arch=x86_64
jobs=${PERF_ABI_JOBS:-$(nproc)}
logfile=

die() { echo "build.sh: $*" >&2; exit 2; }
log() { echo "build.sh: $*" >&2; }

while [ $# -gt 0 ]; do
	case $1 in
	--arch) arch=${2:-}; shift 2 || die "--arch needs x86_64, arm64 or riscv64" ;;
	-j) jobs=${2:-}; shift 2 || die "-j needs a number" ;;
	--log) logfile=${2:-}; shift 2 || die "--log needs a file" ;;
	-h|--help) sed -n '4,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$1' (try --help)" ;;
	*) break ;;
	esac
done
[ $# = 1 ] || die "usage: build.sh [--arch A] [-j N] TREE"
[[ $jobs =~ ^[1-9][0-9]*$ ]] || die "-j: '$jobs' is not a number"

case $arch in
x86_64|amd64) arch=x86_64 karch=x86 cross='' target=bzImage image=arch/x86/boot/bzImage ;;
arm64|aarch64) arch=arm64 karch=arm64 cross=aarch64-linux-gnu- target=Image image=arch/arm64/boot/Image ;;
riscv64) karch=riscv cross=riscv64-linux-gnu- target=Image image=arch/riscv/boot/Image ;;
*) die "unknown architecture '$arch' (x86_64, arm64, riscv64)" ;;
esac
[ -d "$1" ] || die "no such kernel tree: $1"
tree=$(cd "$1" && pwd)
[ -f "$tree/Makefile" ] && [ -f "$tree/Kconfig" ] && [ -d "$tree/arch/$karch" ] ||
	die "$1 is not a kernel source tree (no Makefile, Kconfig, arch/$karch)"
if [ -f "$tree/.config" ] || [ -d "$tree/include/config" ]; then
	die "$1 is not clean (it has a .config or include/config): run make mrproper there"
fi
frags=("$top/config" "$here/tiny-$arch.config")
for f in "${frags[@]}"; do [ -f "$f" ] || die "missing config fragment $f"; done
command -v "${cross}gcc" >/dev/null 2>&1 ||
	die "no ${cross}gcc (apt-get install gcc${cross:+-${cross%-}})"
for t in make flex bison bc; do
	command -v "$t" >/dev/null 2>&1 || die "no $t (tools/testing/perf_abi/deps.sh kernel)"
done

sum() { sha256sum | cut -c1-16; }
where=$(printf '%s' "$tree" | sum)
cfg=$( { echo "$arch"; "${cross}gcc" --version | head -n 1; cat "${frags[@]}"; \
	 sed -n '/^# --- configure/,/^# --- end/p' "$0"; } | sum)

# The state of the sources.
state=
if git -C "$tree" rev-parse --show-toplevel 2>/dev/null | grep -qxF "$tree"; then
	head=$(git -C "$tree" rev-parse HEAD 2>/dev/null || true)
	if [ -n "$head" ]; then
		if git -C "$tree" diff --quiet HEAD -- 2>/dev/null; then
			state=$head
		else
			state=$head-$(git -C "$tree" diff HEAD -- | sum)
		fi
		state=$(echo "$state" | sum)
	fi
fi
if [ -z "$state" ]; then
	state=$(cd "$tree" && find . -path ./.git -prune -o -type f -printf '%P %s %T@\n' |
		LC_ALL=C sort | sum)
fi

bdir=$cache/tree/$arch-$where-$cfg
obj=$bdir/obj
img=$bdir/img-$state/$(basename "$image")
if [ -s "$img" ]; then
	touch "$bdir/img-$state"
	echo "$img"
	exit 0
fi

mkdir -p "$bdir"
# One build per O= directory at a time.
exec 9>"$bdir/lock"
flock 9
if [ -s "$img" ]; then
	echo "$img"
	exit 0
fi
blog=${logfile:-$bdir/build.log}
: > "$blog"

mk() { make -C "$tree" O="$obj" ARCH=$karch CROSS_COMPILE=$cross "$@" >> "$blog" 2>&1; }

# Options the fragments ask for that this arch's Kconfig defines and
# .config does not have as asked (the suite's fragment is arch-neutral:
# HW_PERF_EVENTS is no x86 symbol).  HAVE_* are what an arch selects, not
# options a fragment can set: riscv 6.12 has no HAVE_HW_BREAKPOINT, and
# the suite's breakpoint case SKIPs there.
symbols() {
	find "$tree" \( -path "$tree/arch" -o -path "$tree/.git" -o -path "$tree/Documentation" \) -prune \
		-o -name 'Kconfig*' -type f -print
	find "$tree/arch/$karch" "$tree/arch/Kconfig" -name 'Kconfig*' -type f
}
lacks() {	# FRAGMENT...
	local line o m='' known
	known=$(symbols | xargs -d '\n' sed -nE 's/^[[:space:]]*(menu)?config[[:space:]]+([A-Za-z0-9_]+).*/\2/p' | sort -u)
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*) o=${line%%=*} ;;
		"# CONFIG_"*" is not set") o=${line#\# }; o=${o%% *} ;;
		*) continue ;;
		esac
		case $o in CONFIG_HAVE_*) continue ;; esac
		grep -qxF "${o#CONFIG_}" <<<"$known" || continue
		case $line in
		CONFIG_*=*) grep -qxF "$line" "$obj/.config" || m="$m $line" ;;
		*) ! grep -q "^$o=" "$obj/.config" || m="$m $o=n" ;;
		esac
	done < <(cat "$@")
	echo "$m"
}

# --- configure
if [ "$(cat "$obj/.perf-abi-cfg" 2>/dev/null)" != "$cfg" ]; then
	rm -rf "$obj"
	mkdir -p "$obj"
	mk tinyconfig || die "make tinyconfig failed in $1 (log: $blog)"
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
		"${frags[@]}" >> "$blog" 2>&1 || die "merge_config.sh failed (log: $blog)"
	mk olddefconfig || die "make olddefconfig failed in $1 (log: $blog)"
	echo "$cfg" > "$obj/.perf-abi-cfg"
fi
# --- end
# Checked on every build: a source change can drop an option too.
m=$(lacks "${frags[@]}")
if [ -n "$m" ]; then
	rm -f "$obj/.perf-abi-cfg"
	die "the $arch kernel config of $1 lacks:$m"
fi

log "building $arch $target of $tree in $obj"
start=$(date +%s)
if ! mk -j"$jobs" $target; then
	grep -E 'error|Error' "$blog" | head -n 5 >&2 || true
	echo "build.sh: the $arch kernel of $1 did not build (log: $blog)" >&2
	exit 3
fi
# A .config the sources changed (new Kconfig at another commit) is checked
# again after make's silent syncconfig.
m=$(lacks "${frags[@]}")
[ -z "$m" ] || die "the $arch kernel config of $1 lacks:$m"
log "$arch kernel built in $(( $(date +%s) - start ))s"
mkdir -p "$bdir/img-$state.tmp"
cp "$obj/$image" "$obj/.config" "$bdir/img-$state.tmp/"
rm -rf "$bdir/img-$state"
mv "$bdir/img-$state.tmp" "$bdir/img-$state"
# Old images go after a week; the O= directory stays.
find "$bdir" -maxdepth 1 -name 'img-*' -mtime +7 -exec rm -rf {} + 2>/dev/null || true
echo "$img"
