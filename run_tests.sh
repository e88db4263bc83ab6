#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the perf user-page ABI selftests through the real kselftest runner and
# report KTAP, a one-line summary and the kselftest exit code (0 pass,
# 1 fail, 4 all skipped; 2 for bad usage; 3 a kernel did not boot): on the
# running kernel, or on a kernel image booted under qemu (--kernel), on a
# list of kernels (--matrix) or on two of them (--compare).  The guest
# machinery is in tools/testing/perf_abi/vm/ and kernels/.
set -eu

top=$(cd "$(dirname "$0")" && pwd)
m=$top/tools/testing/perf_abi
B=$top/build
export PERF_ABI_CACHE=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}

usage() {
	cat <<'USAGE'
Usage: ./run_tests.sh [OPTIONS]
       ./run_tests.sh --kernel SPEC [--arch A] [GUEST OPTIONS] [OPTIONS]
       ./run_tests.sh --matrix [FILE] [GUEST OPTIONS] [--output DIR]
       ./run_tests.sh --compare OLD_SPEC NEW_SPEC [GUEST OPTIONS] [--output DIR]
Run the perf_events user-page ABI selftests on the running kernel, or boot
kernels under qemu (software emulation) and run them there.

  -t, --test NAME     run one test program (mmap_page, rdpmc), or one TEST
                      as PROG:TEST (e.g. mmap_page:cap_fields_are_abi_bits;
                      single TESTs need a 6.12 or newer kselftest harness)
  -l, --log FILE      also write the KTAP output to FILE (one kernel)
  -h, --help          show this help

Kernels (SPEC: an image file -- bzImage, vmlinuz, arm64 Image, gzip'd or
not -- or debian:VERSION-FLAVOUR, e.g. debian:6.1.0-47-cloud-amd64,
debian:6.12.118+deb12-arm64: that linux-image-...-unsigned package is
fetched with apt-get download and cached in $PERF_ABI_CACHE):
  -k, --kernel SPEC   boot SPEC and run the suite in it; writes
                      DIR/<label>.ktap, <label>.console and summary.json
  -m, --matrix [FILE] run every SPEC listed in FILE (one a line, # comments;
                      default tools/testing/perf_abi/kernels/matrix.list),
                      --jobs at a time, and print a kernel x program table
      --compare OLD NEW  run both, print only the tests whose verdict
                      differs (regressions first); exit 1 if one regressed
Guest options:
  -a, --arch A        x86_64 or arm64 (default: read from the image)
      --append ARGS   add ARGS to the guest kernel command line
      --smp N         guest CPUs (default 2)
      --memory M      guest memory, MiB or with an M/G suffix (default 512M)
      --kvm           use KVM instead of TCG (nested KVM may hang)
      --suite DIR     put the kselftest install tree DIR in the guest instead
                      of build/install-ARCH (e.g. one made with make install
                      from a kernel's tools/testing/selftests); it must be
                      built statically for the guest's architecture
      --label NAME    name of the kernel in reports (--kernel only)
  -j, --jobs N        guests at a time (default 2)
  -o, --output DIR    write the reports to DIR: per-kernel .ktap and
                      .console, summary.json, junit.xml, table.md,
                      report.ktap (default build/logs, build/logs/matrix,
                      build/logs/compare)

LAVA (the engine KernelCI and LKFT run; tools/testing/perf_abi/lava/):
      --lava-job DIR  write DIR/<label>.yaml, a LAVA job per kernel (qemu,
                      kernel and ramdisk to tmpfs, the suite's test
                      definition inline: one test case per TEST), its
                      kernel and ramdisk, and DIR/perf_events.yaml; takes
                      --kernel SPEC (again for more kernels), --matrix
                      [FILE] (the default without --kernel), --test,
                      --append, --smp, --memory; runs nothing

Guest kernel command line knobs read by the test init: perf_abi.live=1
(copy the whole runner output to the console as it comes),
perf_abi.paranoid=N (kernel.perf_event_paranoid; the guest sets 2).
Environment: PERF_ABI_CACHE (downloaded kernels, initramfs; default
~/.cache/perf-abi), QEMU_X86_64, QEMU_ARM64 (qemu binaries to use).

Exit status: 0 all passed, 1 a test failed, 4 every test skipped,
2 bad usage or a missing dependency, 3 a kernel did not boot, panicked,
oopsed, hung or lost its end marker.  --matrix: 3 if a kernel did not
boot, else 1 if a test failed, else 0.  --compare: 3, else 1 if a test
regressed, else 0.
USAGE
}

die() {
	echo "run_tests.sh: $*" >&2
	exit 2
}

# --lava-job DIR: write LAVA jobs instead of running anything
# (tools/testing/perf_abi/lava/lava-job.sh takes the whole command line).
for a in "$@"; do
	case $a in
	--lava-job) exec "$m/lava/lava-job.sh" "$@" ;;
	esac
done

test_name= log= mode=host spec= arch= append= smp=2 memory=512M kvm=
suite= label= jobs=2 outdir= matrix_file= old_spec= new_spec= guest_opt=
set_mode() {
	[ "$mode" = host ] || [ "$mode" = "$1" ] ||
		die "--kernel, --matrix and --compare go one at a time"
	mode=$1
}
while [ $# -gt 0 ]; do
	case $1 in
	-t|--test)
		[ $# -ge 2 ] || die "$1 needs a test name (try --help)"
		test_name=$2
		shift 2 ;;
	-l|--log)
		[ $# -ge 2 ] || die "$1 needs a file name (try --help)"
		log=$2
		shift 2 ;;
	-k|--kernel)
		[ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a kernel SPEC (try --help)"
		[ "$mode" = kernel ] && die "give --kernel once (use --matrix for several)"
		set_mode kernel
		spec=$2
		shift 2 ;;
	-m|--matrix)
		set_mode matrix
		matrix_file=$m/kernels/matrix.list
		if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then
			matrix_file=$2
			shift
		fi
		shift ;;
	--compare)
		[ $# -ge 3 ] && [ -n "$2" ] && [ -n "$3" ] ||
			die "$1 needs two kernel SPECs, OLD and NEW (try --help)"
		set_mode compare
		old_spec=$2 new_spec=$3
		shift 3 ;;
	-a|--arch)
		guest_opt=${guest_opt:-$1}
		[ $# -ge 2 ] || die "$1 needs x86_64 or arm64 (try --help)"
		case $2 in
		x86_64|amd64) arch=x86_64 ;;
		arm64|aarch64) arch=arm64 ;;
		*) die "unknown architecture '$2' (x86_64, arm64)" ;;
		esac
		shift 2 ;;
	--append)
		guest_opt=${guest_opt:-$1}
		[ $# -ge 2 ] || die "$1 needs kernel command line arguments (try --help)"
		case $2 in *$'\n'*) die "$1: no newlines in the kernel command line" ;; esac
		append="$append $2"
		shift 2 ;;
	--smp)
		guest_opt=${guest_opt:-$1}
		[ $# -ge 2 ] || die "$1 needs a CPU count (try --help)"
		[[ $2 =~ ^[1-9][0-9]?$ ]] || die "$1: '$2' is not a CPU count from 1 to 99"
		smp=$2
		shift 2 ;;
	--memory)
		guest_opt=${guest_opt:-$1}
		[ $# -ge 2 ] || die "$1 needs a size (try --help)"
		case $2 in
		*[0-9]G|*[0-9]g) memory=$((${2%[Gg]} * 1024))M ;;
		*[0-9]M|*[0-9]m) memory=${2%[Mm]}M ;;
		*) memory=$2M ;;
		esac 2>/dev/null || true
		[[ $memory =~ ^[0-9]+M$ ]] && [ "${memory%M}" -ge 128 ] 2>/dev/null ||
			die "$1: '$2' is not a memory size of at least 128M (e.g. 512M, 1G)"
		shift 2 ;;
	--kvm)
		guest_opt=${guest_opt:-$1}
		[ -w /dev/kvm ] || die "--kvm: /dev/kvm is not there or not writable"
		kvm=--kvm
		shift ;;
	--suite)
		guest_opt=${guest_opt:-$1}
		[ $# -ge 2 ] || die "$1 needs a kselftest install tree (try --help)"
		[ -d "$2" ] || die "$1: no such directory: $2"
		[ -x "$2/run_kselftest.sh" ] && [ -r "$2/kselftest-list.txt" ] ||
			die "$1: $2 is not a kselftest install tree (no run_kselftest.sh, kselftest-list.txt)"
		suite=$(cd "$2" && pwd)
		shift 2 ;;
	--label)
		guest_opt=${guest_opt:-$1}
		[ $# -ge 2 ] || die "$1 needs a name (try --help)"
		[[ $2 =~ ^[A-Za-z0-9][A-Za-z0-9._+-]*$ ]] ||
			die "$1: '$2' is not a name (letters, digits, . _ + -)"
		label=$2
		shift 2 ;;
	-j|--jobs)
		guest_opt=${guest_opt:-$1}
		[ $# -ge 2 ] || die "$1 needs a number (try --help)"
		[[ $2 =~ ^[1-9][0-9]?$ ]] || die "$1: '$2' is not a number of guests"
		jobs=$2
		shift 2 ;;
	-o|--output)
		guest_opt=${guest_opt:-$1}
		[ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a directory (try --help)"
		outdir=$2
		shift 2 ;;
	-h|--help)
		usage
		exit 0 ;;
	-*)
		die "unknown option '$1' (try --help)" ;;
	*)
		die "unexpected argument '$1' (try --help)" ;;
	esac
done

[ -z "$guest_opt" ] || [ "$mode" != host ] ||
	die "$guest_opt goes with --kernel, --matrix or --compare"
[ -z "$label" ] || [ "$mode" = kernel ] || die "--label goes with --kernel"
[ -z "$arch" ] || [ "$mode" != matrix ] || die "--arch goes with --kernel or --compare (a matrix names its kernels)"
[ -z "$log" ] || [ "$mode" = host ] || [ "$mode" = kernel ] || die "--log goes with one kernel; use --output"
if [ -n "$outdir" ] && [ -e "$outdir" ] && [ ! -d "$outdir" ]; then
	die "--output: $outdir exists and is not a directory"
fi
if [ -n "$log" ]; then
	[ -d "$(dirname "$log")" ] || die "--log: no directory $(dirname "$log")"
	[ ! -d "$log" ] || die "--log: $log is a directory"
fi

prog=${test_name%%:*}
one=
[ "$prog" != "$test_name" ] && one=${test_name#*:}
if [ -n "$prog" ]; then
	if [ -n "$suite" ]; then
		grep -q ":$prog\$" "$suite/kselftest-list.txt" ||
			die "no test program '$prog' in $suite ($(sed 's/.*://' "$suite/kselftest-list.txt" | tr '\n' ' '))"
	elif ! grep -qw "$prog" "$top/tools/testing/selftests/perf_events/Makefile"; then
		die "no test program '$prog' (mmap_page, rdpmc)"
	fi
	[[ $test_name =~ ^[A-Za-z0-9_.:-]+$ ]] || die "bad test name '$test_name'"
fi

# --- the running kernel ------------------------------------------------

if [ "$mode" = host ]; then
	"$m/deps.sh" build || exit 2
	make -s -C "$top" install-host >/dev/null || die "the suite did not build"
	out=$B/logs
	mkdir -p "$out"
	ktap=$out/host.ktap
	args=()
	[ -n "$prog" ] && args=(-t "perf_events:$prog")
	(
		cd "$B/install-host" || exit 1
		[ -n "$one" ] && export "KSELFTEST_$(echo "$prog" | tr '[:lower:]' '[:upper:]')_ARGS=-t $one"
		./run_kselftest.sh "${args[@]}"
	) 2>&1 | tee "$ktap"
	[ -n "$log" ] && cp "$ktap" "$log"
	python3 "$m/lib/ktap.py" summary "$ktap" "perf_events on $(uname -r)"
	exit $?
fi

# --- kernels under qemu ------------------------------------------------
# Everything that can be wrong with the input is checked before anything
# is written: the kernels, qemu, the suite.

specs=()
case $mode in
kernel) specs=("$spec") ;;
compare) specs=("$old_spec" "$new_spec") ;;
matrix)
	[ -e "$matrix_file" ] || die "no such matrix file: $matrix_file"
	[ -f "$matrix_file" ] && [ -r "$matrix_file" ] || die "cannot read matrix file: $matrix_file"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		read -r s rest <<<"$line" || true
		[ -n "${s:-}" ] || continue
		[ -z "${rest:-}" ] || die "$matrix_file: one SPEC a line, not '$line'"
		specs+=("$s")
	done < "$matrix_file" || die "cannot read matrix file: $matrix_file"
	[ ${#specs[@]} -gt 0 ] || die "matrix file $matrix_file lists no kernel"
	;;
esac

k_arch=() k_label=() k_path=()
for s in "${specs[@]}"; do
	err=$(mktemp)
	if ! r=$("$m/kernels/image.sh" "$s" "$arch" 2>"$err"); then
		msg=$(grep -v '^$' "$err" | tail -n 1 | sed -E 's/^(image|debian|apt-fetch)(\.sh)?: //')
		rm -f "$err"
		die "${msg:-cannot use kernel $s}"
	fi
	rm -f "$err"
	read -r a l p <<<"$r"
	k_arch+=("$a") k_label+=("$l") k_path+=("$p")
done
[ -n "$label" ] && k_label[0]=$label
# Unique labels: a second kernel of the same name gets -2, -3 ...
if [ "$mode" = compare ] && [ "${k_label[0]}" = "${k_label[1]}" ]; then
	k_label[0]=${k_label[0]}-old k_label[1]=${k_label[1]}-new
fi
for ((i = 1; i < ${#k_label[@]}; i++)); do
	n=1 base=${k_label[i]}
	for ((j = 0; j < i; j++)); do
		if [ "${k_label[j]}" = "${k_label[i]}" ]; then
			n=$((n + 1)) k_label[i]=$base-$n j=-1
		fi
	done
done

arches=$(printf '%s\n' "${k_arch[@]}" | sort -u)
for a in $arches; do
	case $a in
	x86_64) q=${QEMU_X86_64:-qemu-system-x86_64} qpkg=qemu-system-x86 ;;
	arm64) q=${QEMU_ARM64:-qemu-system-aarch64} qpkg=qemu-system-arm ;;
	esac
	command -v "$q" >/dev/null 2>&1 && continue
	[ "$q" = "${q##*/}" ] || die "$q (from \$QEMU_${a^^}) is not an executable"
	if [ "$(dpkg-query -W -f='${db:Status-Status}' "$qpkg" 2>/dev/null)" = installed ]; then
		die "$q not found in PATH (package $qpkg is installed)"
	fi
	[ "$(id -u)" = 0 ] ||
		die "$q not found; run as root: apt-get install -y --no-install-recommends $qpkg (or make deps)"
	echo "run_tests.sh: $q is missing: installing it (make deps)" >&2
	"$m/deps.sh" vm >&2 || exit 2
	command -v "$q" >/dev/null 2>&1 || die "$q not found even after make deps (package $qpkg)"
done
if [ -n "$suite" ] && [ "$(echo "$arches" | wc -l)" != 1 ]; then
	die "--suite holds one architecture; these kernels are $(echo $arches)"
fi

# The install trees (make install-ARCH), rebuilt when the suite changed.
declare -A tree initrd
for a in $arches; do
	if [ -n "$suite" ]; then
		tree[$a]=$suite
		continue
	fi
	tree[$a]=$B/install-$a
	mkdir -p "$B"
	(
		flock 9
		stamp=${tree[$a]}/kselftest-list.txt
		if [ -f "$stamp" ] && [ -z "$(find "$top/tools/testing/selftests/perf_events" \
			"$top/Makefile" -newer "$stamp" -print -quit)" ]; then
			exit 0
		fi
		make -s -C "$top" "install-$a" >/dev/null 2>"$B/install-$a.log" ||
			die "the suite did not build for $a (make install-$a; see $B/install-$a.log)"
	) 9>"$B/.install-$a.lock" || exit 2
done
for a in $arches; do
	err=$(mktemp)
	if ! initrd[$a]=$("$m/vm/initramfs.sh" "$a" "${tree[$a]}" 2>"$err"); then
		msg=$(tail -n 1 "$err" | sed -E 's/^(initramfs|apt-fetch)(\.sh)?: //')
		rm -f "$err"
		die "${msg:-cannot build the $a initramfs}"
	fi
	rm -f "$err"
done

# Time allowed to a guest: the boot allowance plus the kselftest timeout of
# every program (its directory's settings, else the runner's 45 s).
limit_for() {	# ARCH
	local a=$1 t=0 d boot
	case $a in
	x86_64) boot=60 ;;
	arm64) boot=120 ;;
	esac
	[ -n "$kvm" ] && boot=30
	while IFS=: read -r d _; do
		local s
		s=$(sed -n 's/^timeout=//p' "${tree[$a]}/$d/settings" 2>/dev/null | head -n 1)
		t=$((t + ${s:-45}))
	done < "${tree[$a]}/kselftest-list.txt"
	echo "$((boot + t)) boot allowance ${boot}s + settings timeouts ${t}s"
}

# --- boot them -----------------------------------------------------------

case $mode in
kernel) final=${outdir:-$B/logs} ;;
matrix) final=${outdir:-$B/logs/matrix} ;;
compare) final=${outdir:-$B/logs/compare} ;;
esac
mkdir -p "$B/vm"
work=$(mktemp -d "$B/vm/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

guest_append=$append
[ -n "$test_name" ] && guest_append="$guest_append perf_abi.test=$test_name"

run_one() {	# INDEX: boot kernel INDEX, write its manifest row
	local i=$1 a=${k_arch[$1]} l=${k_label[$1]} t0 t1 rc=0 status=ok reason= grc=
	t0=$(date +%s%N)
	local limit why
	read -r limit why <<<"$(limit_for "$a")"
	"$m/vm/boot.sh" --smp "$smp" --memory "$memory" $kvm \
		--limit "$limit" --limit-why "$why" --append "$guest_append" \
		"$a" "${k_path[$i]}" "${initrd[$a]}" "$work/$l" 2>"$work/$l.err" || rc=$?
	t1=$(date +%s%N)
	if [ "$rc" = 0 ]; then
		grc=$(cat "$work/$l.rc")
		rm -f "$work/$l.rc"
	else
		status=noboot
		reason=$(head -n 1 "$work/$l.err" | sed -e 's/^boot\.sh: //' -e 's/; last 30 lines of .*//' | tr '\t' ' ')
		[ "$rc" = 3 ] || reason="could not start the guest: $reason"
		{
			echo "TAP version 13"
			echo "1..0"
			echo "Bail out! $l: $reason"
		} > "$work/$l.ktap"
	fi
	t1=$(((t1 - t0) / 100000000))
	printf '%s\t%s\t%s\t%s\t%s\t%d.%d\t%s\t%s\n' "$l" "$a" "${specs[$i]}" \
		"$l.ktap" "$status" $((t1 / 10)) $((t1 % 10)) "$grc" "$reason" > "$work/$l.row"
}

say() {	# progress of several guests
	[ "$mode" = kernel ] || echo "run_tests.sh: $*" >&2
}

n=${#specs[@]}
# arm64 guests first: under -icount they take longest, and starting the
# long ones first keeps the last slot from running alone.
order=()
for ((i = 0; i < n; i++)); do [ "${k_arch[i]}" = arm64 ] && order+=("$i"); done
for ((i = 0; i < n; i++)); do [ "${k_arch[i]}" = arm64 ] || order+=("$i"); done
for i in "${order[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n || true
	done
	say "booting ${k_label[i]} (${k_arch[i]})"
	run_one "$i" &
done
wait

: > "$work/manifest.tsv"
for ((i = 0; i < n; i++)); do
	l=${k_label[i]}
	if [ ! -f "$work/$l.row" ]; then	# run_one itself broke
		printf '%s\t%s\t%s\t\tnoboot\t\t\tthe runner failed\n' "$l" "${k_arch[i]}" "${specs[i]}" > "$work/$l.row"
	fi
	cat "$work/$l.row" >> "$work/manifest.tsv"
	if [ -s "$work/$l.err" ]; then	# a guest that did not make it
		sed -e "1s|^\(boot\.sh: \)\?|run_tests.sh: $l: |" -e "1s|$work/|$final/|" \
			"$work/$l.err" >&2
	fi
	rm -f "$work/$l.row" "$work/$l.err"
done
[ -n "$test_name" ] && echo "# ran only $test_name" >> "$work/manifest.tsv"

report() {	# extra ktap.py report arguments
	python3 "$m/lib/ktap.py" report "$work/manifest.tsv" \
		--json "$work/summary.json" --junit "$work/junit.xml" \
		--markdown "$work/table.md" --ktap "$work/report.ktap" "$@"
}

publish() {	# move the reports into the output directory
	mkdir -p "$final"
	mv -f "$work"/* "$final"/
	rm -f "$final/manifest.tsv"
}

case $mode in
kernel)
	l=${k_label[0]}
	report >/dev/null || true
	st=$(cut -f5 "$work/manifest.tsv" | head -n 1)
	[ "$st" = ok ] && cat "$work/$l.ktap"
	[ -n "$log" ] && cp "$work/$l.ktap" "$log"
	publish
	if [ "$st" != ok ]; then
		echo "perf_events on $l (${k_arch[0]} guest): did not boot" >&2
		exit 3
	fi
	python3 "$m/lib/ktap.py" summary "$final/$l.ktap" "perf_events on $l (${k_arch[0]} guest)"
	exit $?
	;;
matrix)
	report --table && rc=0 || rc=$?
	publish
	[ -n "$outdir" ] && echo "run_tests.sh: reports in $final" >&2
	exit $rc
	;;
compare)
	report >/dev/null && rc=0 || rc=$?
	publish
	if [ "$rc" = 3 ]; then
		exit 3
	fi
	python3 "$m/lib/ktap.py" compare "$final/${k_label[0]}.ktap" "$final/${k_label[1]}.ktap" \
		"${k_label[0]}" "${k_label[1]}"
	exit $?
	;;
esac
