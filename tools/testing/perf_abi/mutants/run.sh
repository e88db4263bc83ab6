#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The mutant kill matrix.
#   run.sh [--arch x86_64,arm64] [--mutant NAME,...] [--output DIR]
#          [--ktap FILE] [--jobs N]
# Builds (or reuses) one kernel per arch with every patch of this directory
# applied (kernels/tiny.sh), boots it once pristine (no parameter) and once
# per mutant (perf_abi_mutant=NAME) through ./run_tests.sh with a kselftest
# install tree holding this suite (perf_events) and, as the reference, the
# kernel's own perf_events selftests (perf_events.upstream), then prints
# mutant x the TEST()s that failed.  Exit 0 only when both pristine kernels
# pass all of our tests, every mutant is killed by at least one named test
# of ours and every boot ended with a verdict; else 1 (2: bad usage).
# --ktap FILE also writes one ok/not ok per (arch, mutant) and per pristine
# kernel, in the kselftest runner's format.
# Needs the top Makefile's install trees: run it as `make mutants`, which
# passes INSTALL_x86_64/INSTALL_arm64 (combined trees) in the environment.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
m=$top/tools/testing/perf_abi
arches=x86_64,arm64
only=
out=$top/build/mutants/runs
ktap=
jobs=${PERF_ABI_JOBS:-$(nproc)}

die() { echo "mutants/run.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arches=${2:?}; shift 2 ;;
	--mutant) only=${2:?}; shift 2 ;;
	--output) out=${2:?}; shift 2 ;;
	--ktap) ktap=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	-h|--help) sed -n '4,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option '$1' (try --help)" ;;
	esac
done
# PERF_ABI_RUNNER: another runner with the same options (for debugging).
runner=${PERF_ABI_RUNNER:-$top/run_tests.sh}
[ -x "$runner" ] || die "no $runner"
"$runner" --help 2>/dev/null | grep -q -- --kernel ||
	die "$runner has no --kernel yet (the qemu runner has not landed)"

patches=("$here"/[0-9][0-9]-*.patch)
[ -f "${patches[0]}" ] || die "no patches in $here"
# Mutant names and arches come from the patch files (00-base is none).
mutants_for() {	# ARCH -> names, in patch order
	local p n
	for p in "${patches[@]}"; do
		n=$(basename "$p" .patch); n=${n#[0-9][0-9]-}
		[ "$n" = base ] && continue
		grep -q "^Arches:.*\b$1\b" "$p" || continue
		if [ -n "$only" ] && ! [[ ",$only," == *",$n,"* ]]; then
			continue
		fi
		echo "$n"
	done
}

rm -rf "$out"
mkdir -p "$out"
jobfile=$out/jobs
: > "$jobfile"
for a in ${arches//,/ }; do
	case $a in x86_64|arm64) ;; *) die "unknown arch '$a'" ;; esac
	var=INSTALL_$a
	suite=${!var:-$top/build/mutants/install-$a}
	[ -x "$suite/run_kselftest.sh" ] || die "no install tree $suite (make mutants builds it)"
	pargs=()
	for p in "${patches[@]}"; do pargs+=(--patch "$p"); done
	img=$("$m/kernels/tiny.sh" --arch "$a" "${pargs[@]}") ||
		die "the $a kernel did not build"
	echo "kernel $a: $img" >&2
	echo "$a pristine $img $suite" >> "$jobfile"
	for n in $(mutants_for "$a"); do
		echo "$a $n $img $suite" >> "$jobfile"
	done
done

# One boot per line of the job file, $jobs at a time (TCG is CPU bound).
boot() {	# ARCH NAME IMAGE SUITE
	local d=$out/$1/$2 app=() t0
	[ "$2" = pristine ] || app=(--append "perf_abi_mutant=$2")
	mkdir -p "$d"
	t0=$(date +%s)
	"$runner" --kernel "$3" --arch "$1" "${app[@]}" --label "$1-$2" \
		--output "$d" --suite "$4" > "$d/run.log" 2>&1
	echo "$? $(( $(date +%s) - t0 ))" > "$d/rc"
	echo "  $1 $2: rc $(cut -d' ' -f1 "$d/rc"), $(cut -d' ' -f2 "$d/rc")s" >&2
}
export -f boot
export out runner
t0=$(date +%s)
echo "booting $(wc -l < "$jobfile") kernels, $jobs at a time" >&2
xargs -P "$jobs" -L 1 bash -c 'boot "$@"' _ < "$jobfile"
echo "boots done in $(( $(date +%s) - t0 ))s" >&2

ours=$(sed -n 's/^TEST_GEN_PROGS *:= *//p' \
	"$top/tools/testing/selftests/perf_events/Makefile")
python3 "$here/table.py" "$m/lib" "$out" "$jobfile" "$ours" "${ktap:-}"
