#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The mutant kill matrix.
#   run.sh [--arch x86_64,arm64,riscv64] [--mutant NAME,...] [--output DIR]
#          [--ktap FILE] [--jobs N] [--repeat N] [--fresh]
# Builds (or reuses) one kernel per arch with the fixes of kernels/fixes/
# and every patch of this directory
# applied (kernels/tiny.sh), boots it once pristine (no parameter) and once
# per mutant (perf_abi_mutant=NAME) through ./run_tests.sh with a kselftest
# install tree holding this suite (perf_events) and, as the reference, the
# kernel's own perf_events selftests (perf_events.upstream), then prints
# mutant x the TEST()s that failed.  A mutant is killed when a named test
# of ours fails, the kernel crashes (exit 3) while a test of ours runs, or
# splats (WARNING, BUG...) during one; the table says which.  Exit 0 only
# when every pristine kernel passes all of our tests without a splat, every
# mutant is killed and every boot ended with a verdict; else 1 (2: bad
# usage).
# --ktap FILE also writes one ok/not ok per (arch, mutant) and per pristine
# kernel, in the kselftest runner's format.
# --repeat N boots each kernel N times: a mutant is killed only when all
# N boots kill it, a pristine kernel passes only when all N pass.
# --counted N boots the mutant of each row HISTORY.md's table counts as
# caught N times in all on each arch its patch claims (what make check
# re-checks, rule 3 of HISTORY.md); --counted-arch LIST boots those arches
# only for that: their pristine kernel once and those mutants N times.
# Results are cached in $PERF_ABI_CACHE/mutant-runs under a hash of the
# kernel image, the install tree, the mutant and the runner (run_tests.sh,
# vm/, lib/): a rerun with nothing changed boots nothing.  Only expected
# outcomes are kept (pristine passed, mutant killed): a false alarm, a
# survivor or a run without verdict is booted again next time, so a flaky
# test cannot freeze a wrong verdict.  --fresh boots every kernel again.
# Needs the top Makefile's install trees: run it as `make mutants`, which
# passes INSTALL_ARCH (combined trees) for each arch in the environment.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
m=$top/tools/testing/perf_abi
arches=x86_64,arm64,riscv64
only=
out=$top/build/mutants/runs
ktap=
jobs=${PERF_ABI_JOBS:-$(nproc)}
repeat=1
counted=0
counted_arches=
fresh=
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}/mutant-runs

die() { echo "mutants/run.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--arch) arches=${2:?}; shift 2 ;;
	--mutant) only=${2:?}; shift 2 ;;
	--output) out=${2:?}; shift 2 ;;
	--ktap) ktap=${2:?}; shift 2 ;;
	--jobs) jobs=${2:?}; shift 2 ;;
	--repeat) repeat=${2:?}; shift 2 ;;
	--counted) counted=${2:?}; shift 2 ;;
	--counted-arch) counted_arches=${2?}; shift 2 ;;
	--fresh) fresh=1; shift ;;
	-h|--help) sed -n '4,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option '$1' (try --help)" ;;
	esac
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die "--repeat takes a number from 1, not '$repeat'"
[[ $counted =~ ^[0-9]+$ ]] || die "--counted takes a number, not '$counted'"
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

# ARCH MUTANT of each row HISTORY.md counts as caught (table.py --counted)
counted_list=
[ "$counted" -gt 0 ] && counted_list=$(python3 "$here/table.py" --counted \
	"$here/HISTORY.md" "$here")
counted_for() {	# ARCH -> the counted mutants of ARCH
	echo "$counted_list" | awk -v a="$1" '$1 == a { print $2 }'
}

rm -rf "$out"
mkdir -p "$out" "$cache"
jobfile=$out/jobs
hash_tree() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16; }
runner_key=$( { cat "$runner" "$here/run.sh"; for f in "$m"/vm/* "$m"/lib/*; do
	[ -f "$f" ] && cat "$f"; done; } | sha256sum | cut -c1-16)
: > "$jobfile"
all_arches=${arches//,/ }
for a in ${counted_arches//,/ }; do
	[[ " $all_arches " == *" $a "* ]] && continue
	# an arch booted only for counted rows: none, nothing to boot
	[ -n "$(counted_for "$a")" ] && all_arches="$all_arches $a"
done
for a in $all_arches; do
	case $a in x86_64|arm64|riscv64) ;; *) die "unknown arch '$a'" ;; esac
	full=
	[[ ",$arches," == *",$a,"* ]] && full=1
	var=INSTALL_$a
	suite=${!var:-$top/build/mutants/install-$a}
	[ -x "$suite/run_kselftest.sh" ] || die "no install tree $suite (make mutants builds it)"
	# the kernel fixes of kernels/fixes/ first: the mutants apply on them
	pargs=()
	for p in "$m"/kernels/fixes/*.patch "${patches[@]}"; do
		pargs+=(--patch "$p")
	done
	img=$("$m/kernels/tiny.sh" --arch "$a" "${pargs[@]}") ||
		die "the $a kernel did not build"
	# Make the guest's initramfs once before parallel boots: in a cold
	# cache two runners fetching busybox at once trip over each other.
	if [ -x "$m/vm/initramfs.sh" ]; then
		"$m/vm/initramfs.sh" "$a" "$suite" >/dev/null ||
			die "no initramfs for $a"
	fi
	echo "kernel $a: $img" >&2
	k=$(sha256sum < "$img" | cut -c1-16)-$(hash_tree "$suite")-$runner_key
	if [ -n "$full" ]; then
		for r in $(seq "$repeat"); do
			for n in pristine $(mutants_for "$a"); do
				echo "$a $n $img $suite $k $r" >> "$jobfile"
			done
		done
		first=$((repeat + 1))
	else
		echo "$a pristine $img $suite $k 1" >> "$jobfile"
		first=1
	fi
	# the rows HISTORY.md counts: --counted boots in all
	for r in $(seq "$first" "$counted"); do
		for n in $(counted_for "$a"); do
			echo "$a $n $img $suite $k $r" >> "$jobfile"
		done
	done
done

# One boot per line of the job file, $jobs at a time (TCG is CPU bound).
boot() {	# ARCH NAME IMAGE SUITE KEY REPEAT
	local d=$out/$1/$2 app=() t0 c=$cache/$1-$2-$5
	# the first boot keeps the name it had before --repeat existed
	[ "$6" = 1 ] || { d=$d@$6; c=$c@$6; }
	[ "$2" = pristine ] || app=(--append "perf_abi_mutant=$2")
	# The guest keeps the kernel's settings, as KernelCI does (arm64
	# perf_user_access 0: the agree tests turn it on themselves), but
	# for upstream's paranoid.
	app+=(--sysctl kernel.perf_event_paranoid=2)
	if [ -z "$fresh" ] && [ -f "$c/rc" ]; then
		mkdir -p "$out/$1"
		cp -a "$c" "$d"
		echo "  $1 $2 #$6: rc $(cut -d' ' -f1 "$d/rc") (cached, $(cut -d' ' -f2 "$d/rc")s when run)" >&2
		return
	fi
	mkdir -p "$d"
	t0=$(date +%s)
	# The runner takes only an empty or own --output: its log goes in after.
	"$runner" --kernel "$3" --arch "$1" "${app[@]}" --label "$1-$2" \
		--output "$d" --suite "$4" > "$d.log" 2>&1
	echo "$? $(( $(date +%s) - t0 ))" > "$d/rc"
	mv "$d.log" "$d/run.log"
	echo "$c" > "$d/cache-to"
	echo "  $1 $2 #$6: rc $(cut -d' ' -f1 "$d/rc"), $(cut -d' ' -f2 "$d/rc")s" >&2
}
export -f boot
export out runner cache fresh
t0=$(date +%s)
echo "booting $(wc -l < "$jobfile") kernels, $jobs at a time" >&2
xargs -P "$jobs" -L 1 bash -c 'boot "$@"' _ < "$jobfile"
echo "boots done in $(( $(date +%s) - t0 ))s" >&2

ours=$(sed -n 's/^TEST_GEN_PROGS *[+:]\{0,1\}= *//p' \
	"$top/tools/testing/selftests/perf_events/Makefile")
# The history table when every mutant of the arches booted ran: their
# columns from this run, the others' as HISTORY.md has them.
hist=
[ -z "$only" ] && hist=$here/HISTORY.md
python3 "$here/table.py" "$m/lib" "$out" "$jobfile" "$ours" "${ktap:-}" "$hist"
rc=$?
# Keep the runs table.py found as expected (OUTDIR/expected: ARCH DIR).
while read -r a n; do
	d=$out/$a/$n
	[ -f "$d/cache-to" ] || continue
	c=$(cat "$d/cache-to")
	rm -rf "$c.tmp" && cp -a "$d" "$c.tmp" && rm -f "$c.tmp/cache-to" &&
		rm -rf "$c" && mv "$c.tmp" "$c"
done < <(cat "$out/expected" 2>/dev/null)
exit $rc
