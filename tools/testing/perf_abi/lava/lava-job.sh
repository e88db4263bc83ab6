#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ./run_tests.sh --lava-job DIR [--kernel SPEC]... [--matrix [FILE]]
#                [-t PROG[:TEST]] [--append ARGS] [--smp N] [--memory M]
#
# Write, for each kernel (its architecture read from the image), a LAVA job
# DIR/LABEL.yaml, with the kernel and a busybox ramdisk holding the suite
# (DIR/LABEL/kernel, DIR/LABEL/ramdisk.cpio: vm/initramfs.sh with
# lava/init, a shell for LAVA to drive), and the test definition they all
# carry inline, DIR/perf_events.yaml (Lava-Test Test Definition 1.0).  The
# jobs fetch their files from file:// URLs in DIR: lava-run on this machine
# runs them as they are; for a lab, serve DIR and change the URLs (README).
# No kernel SPEC: the default matrix (kernels/matrix.list).  DIR must be
# new or empty (issue 28): nothing in it is replaced or removed but what
# this run wrote, which a failure removes again.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
m=$(dirname "$here")
top=$(cd "$m/../../.." && pwd)
B=$top/build
export PERF_ABI_CACHE=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}

die() {
	echo "run_tests.sh: $*" >&2
	exit 2
}

dir= specs=() matrix= test_name= append= smp=2 memory=512
while [ $# -gt 0 ]; do
	case $1 in
	--lava-job)
		[ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a directory (try --help)"
		[ -z "$dir" ] || die "give --lava-job once"
		dir=$2
		shift 2 ;;
	-k|--kernel)
		[ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a kernel SPEC (try --help)"
		specs+=("$2")
		shift 2 ;;
	-m|--matrix)
		matrix=$m/kernels/matrix.list
		if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then
			matrix=$2
			shift
		fi
		shift ;;
	-t|--test)
		[ $# -ge 2 ] || die "$1 needs a test name (try --help)"
		test_name=$2
		shift 2 ;;
	--append)
		[ $# -ge 2 ] || die "$1 needs kernel command line arguments (try --help)"
		case $2 in *[$'\n"\\']*) die "$1: no newlines, quotes or backslashes in a LAVA job's command line" ;; esac
		append="$append $2"
		shift 2 ;;
	--smp)
		[ $# -ge 2 ] || die "$1 needs a CPU count (try --help)"
		[[ $2 =~ ^[1-9][0-9]?$ ]] || die "$1: '$2' is not a CPU count from 1 to 99"
		smp=$2
		shift 2 ;;
	--memory)
		[ $# -ge 2 ] || die "$1 needs a size (try --help)"
		case $2 in
		*[0-9][Gg]) memory=$((${2%[Gg]} * 1024)) ;;
		*[0-9][Mm]) memory=${2%[Mm]} ;;
		*) memory=$2 ;;
		esac 2>/dev/null || true
		[[ $memory =~ ^[0-9]+$ ]] && [ "$memory" -ge 128 ] 2>/dev/null ||
			die "$1: '$2' is not a memory size of at least 128M (e.g. 512M, 1G)"
		shift 2 ;;
	-h|--help)
		exec "$top/run_tests.sh" --help ;;
	-*)
		die "$1 does not go with --lava-job (it takes --kernel, --matrix, --test, --append, --smp, --memory)" ;;
	*)
		die "unexpected argument '$1' (try --help)" ;;
	esac
done
[ -n "$dir" ] || die "--lava-job needs a directory"
[ -d "${TMPDIR:-/tmp}" ] && [ -w "${TMPDIR:-/tmp}" ] || die "TMPDIR=${TMPDIR:-/tmp} is not a writable directory"
if [ -e "$dir" ] && [ ! -d "$dir" ]; then
	die "--lava-job: $dir exists and is not a directory"
fi
[ ! -d "$dir" ] || [ -z "$(ls -A -- "$dir" 2>/dev/null)" ] ||
	die "--lava-job: $dir is not empty: give a new or empty directory"
if [ -z "$matrix" ] && [ ${#specs[@]} = 0 ]; then
	matrix=$m/kernels/matrix.list
fi
if [ -n "$matrix" ]; then
	[ -f "$matrix" ] && [ -r "$matrix" ] || die "cannot read matrix file: $matrix"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		read -r s rest <<<"$line" || true
		[ -n "${s:-}" ] || continue
		[ -z "${rest:-}" ] || die "$matrix: one SPEC a line, not '$line'"
		specs+=("$s")
	done < "$matrix"
	[ ${#specs[@]} -gt 0 ] || die "matrix file $matrix lists no kernel"
fi

prog=${test_name%%:*}
one=
[ "$prog" != "$test_name" ] && one=${test_name#*:}
if [ -n "$test_name" ]; then
	[[ $test_name =~ ^[A-Za-z0-9_.:-]+$ ]] || die "bad test name '$test_name'"
	grep -qw "$prog" "$top/tools/testing/selftests/perf_events/Makefile" ||
		die "no test program '$prog' (mmap_page, rdpmc)"
fi

# The kernels: everything is checked before anything is written.
k_arch=() k_label=() k_path=()
for s in "${specs[@]}"; do
	[ "$s" = "${s#compat:}" ] || die "$s: LAVA jobs boot a kernel with its own programs, not compat: ones"
	err=$(mktemp)
	if ! r=$("$m/kernels/image.sh" "$s" 2>"$err"); then
		msg=$(grep -av '^$' "$err" | tail -n 1 | sed -E 's/^(image|debian|apt-fetch)(\.sh)?: //')
		rm -f "$err"
		die "${msg:-cannot use kernel $s}"
	fi
	rm -f "$err"
	read -r a l p <<<"$r"
	for ol in "${k_label[@]}"; do
		[ "$ol" != "$l" ] || die "two kernels are named $l"
	done
	k_arch+=("$a") k_label+=("$l") k_path+=("$p")
done

# The suite of each architecture (make install-ARCH) and its LAVA ramdisk.
declare -A ramdisk
for a in $(printf '%s\n' "${k_arch[@]}" | sort -u); do
	"$m/deps.sh" vm >&2 || exit 2
	mkdir -p "$B"
	(	# as run_tests.sh: rebuilt only when the suite changed
		flock 9
		stamp=$B/install-$a/kselftest-list.txt
		if [ -f "$stamp" ] && [ -z "$(find "$top/tools/testing/selftests/perf_events" \
			"$top/Makefile" -newer "$stamp" -print -quit)" ]; then
			exit 0
		fi
		make -s -C "$top" "install-$a" >/dev/null 2>"$B/install-$a.log" ||
			die "the suite did not build for $a (make install-$a; see $B/install-$a.log)"
	) 9>"$B/.install-$a.lock" || exit 2
	err=$(mktemp)
	if ! ramdisk[$a]=$("$m/vm/initramfs.sh" "$a" "$B/install-$a" "$here/init" 2>"$err"); then
		msg=$(tail -n 1 "$err" | sed -E 's/^(initramfs|apt-fetch)(\.sh)?: //')
		rm -f "$err"
		die "${msg:-cannot build the $a ramdisk}"
	fi
	rm -f "$err"
done

# DIR, claimed: made by this run, or empty and locked by it.
made=
[ -d "$dir" ] || { mkdir -p -- "$(dirname -- "$dir")" && mkdir -- "$dir" && made=1; } ||
	die "--lava-job: cannot create $dir"
dir=$(cd "$dir" && pwd)
exec 6<"$dir"
flock -n 6 && [ -z "$(ls -A -- "$dir")" ] || {
	[ -z "$made" ] || ! flock -n 6 || rmdir -- "$dir"
	die "--lava-job: $dir is not empty, or another run is writing to it"
}
wrote=()
undo() {	# what this run wrote, on a failure
	local f
	for f in ${wrote[@]+"${wrote[@]}"}; do rm -rf -- "${dir:?}/$f"; done
	[ -z "$made" ] || rmdir -- "$dir" 2>/dev/null || true
}
trap 'rc=$?; [ "$rc" = 0 ] || undo' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
wrote+=(perf_events.yaml)
cp "$here/perf_events.yaml" "$dir/perf_events.yaml"
for ((i = 0; i < ${#specs[@]}; i++)); do
	a=${k_arch[i]} l=${k_label[i]}
	wrote+=("$l" "$l.yaml" "$l.yaml.tmp")
	mkdir -- "$dir/$l"
	cp "${k_path[i]}" "$dir/$l/kernel"
	cp "${ramdisk[$a]}" "$dir/$l/ramdisk.cpio"
	python3 "$here/lava.py" job --arch "$a" --label "$l" \
		--kernel "file://$dir/$l/kernel" --ramdisk "file://$dir/$l/ramdisk.cpio" \
		--program "$prog" --test "$one" --append "$append" \
		--smp "$smp" --memory "$memory" "$dir/perf_events.yaml" > "$dir/$l.yaml.tmp"
	mv "$dir/$l.yaml.tmp" "$dir/$l.yaml"
done
# The job set is complete: a stdout that cannot be written (>/dev/full,
# | true) changes nothing.
trap '' PIPE
for l in "${k_label[@]}"; do echo "$dir/$l.yaml"; done 2>/dev/null || true
