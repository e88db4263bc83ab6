#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Test the commit checked out in a kernel git tree, for git bisect run:
#
#   cd linux && git bisect start BAD GOOD
#   git bisect run /path/to/tools/testing/perf_abi/bisect.sh \
#       [--arch x86_64|arm64] [-t PROG[:TEST]] [--append ARGS]
#
# Builds the tree as ./run_tests.sh --kernel tree:PATH does
# (kernels/build.sh: out of tree, cached, incremental), boots it under
# qemu and runs the suite, or PROG, or one TEST.  Exit status, in git
# bisect's terms: 0 the tests pass, 1 a test fails, 125 this commit
# cannot be tested (it does not build, its config lacks an option the
# suite needs, the kernel does not boot to the runner, every test
# skipped), 128 something is wrong with the setup itself (bad usage, a
# missing tool): that stops the bisection instead of blaming commits.
# Never 2 or 3.  Logs go to $PERF_ABI_CACHE/bisect/ (the last one is
# named on stderr).
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}

abort() {
	echo "bisect.sh: $*" >&2
	exit 128
}

arch=x86_64
args=()
while [ $# -gt 0 ]; do
	case $1 in
	-a|--arch)
		case ${2:-} in
		x86_64|amd64) arch=x86_64 ;;
		arm64|aarch64) arch=arm64 ;;
		*) abort "unknown architecture '${2:-}' (x86_64, arm64)" ;;
		esac
		shift 2 ;;
	-t|--test)
		[ -n "${2:-}" ] || abort "$1 needs PROG or PROG:TEST"
		args+=(-t "$2")
		shift 2 ;;
	--append)
		[ -n "${2:-}" ] || abort "$1 needs kernel command line arguments"
		args+=(--append "$2")
		shift 2 ;;
	-h|--help)
		sed -n '4,19p' "$0" | sed 's/^# \{0,1\}//'
		exit 0 ;;
	*)
		abort "unknown argument '$1' (--arch A, -t PROG[:TEST], --append ARGS)" ;;
	esac
done

tree=$(git rev-parse --show-toplevel 2>/dev/null) ||
	abort "not inside a git tree (run it from git bisect run in a kernel tree)"
commit=$(git -C "$tree" rev-parse --short=12 HEAD) || abort "no HEAD in $tree"
mkdir -p "$cache/bisect" || abort "cannot write $cache/bisect"
logf=$cache/bisect/$commit-$arch.log

echo "bisect.sh: $commit: building ($arch)" >&2
rc=0
img=$("$top/tools/testing/perf_abi/kernels/build.sh" --arch "$arch" "$tree" 2>"$logf") || rc=$?
case $rc in
0) ;;
3)	echo "bisect.sh: $commit: does not build: skip (log: $logf)" >&2
	exit 125 ;;
*)	if grep -q 'lacks:' "$logf"; then
		echo "bisect.sh: $commit: $(grep 'lacks:' "$logf" | tail -n 1 | sed 's/^build\.sh: //'): skip" >&2
		exit 125
	fi
	abort "$commit: cannot build: $(tail -n 1 "$logf" | sed 's/^build\.sh: //')" ;;
esac

out=$(mktemp -d "$cache/bisect/run.XXXXXX") || abort "cannot write $cache/bisect"
trap 'rm -rf "$out"' EXIT
echo "bisect.sh: $commit: booting" >&2
rc=0
"$top/run_tests.sh" --kernel "$img" --arch "$arch" "${args[@]}" -o "$out" \
	>>"$logf" 2>&1 || rc=$?
summary=$(grep -E '^perf_events on ' "$logf" | tail -n 1)
case $rc in
0)	echo "bisect.sh: $commit: good: ${summary:-pass}" >&2
	exit 0 ;;
1)	echo "bisect.sh: $commit: bad: ${summary:-a test failed} (log: $logf)" >&2
	exit 1 ;;
3)	echo "bisect.sh: $commit: did not boot to the runner: skip (log: $logf)" >&2
	exit 125 ;;
4)	echo "bisect.sh: $commit: every test skipped: skip" >&2
	exit 125 ;;
*)	abort "$commit: ./run_tests.sh failed (exit $rc): $(grep -v '^$' "$logf" | tail -n 1)" ;;
esac
