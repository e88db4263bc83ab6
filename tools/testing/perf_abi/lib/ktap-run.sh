#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run test executables (harness binaries or *_test.sh scripts printing KTAP)
# and write their output, in the kselftest runner's format, to OUT:
#   ktap-run.sh OUT PROG...
# Exits 1 when any program fails.
set -u
out=${1:?usage: ktap-run.sh OUT PROG...}
shift
# python3 chosen once: a version manager's shim (pyenv's) chooses the
# interpreter anew at every start (seconds); the programs get the one it
# chose first in PATH, as the shim's own exec does.
py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
case $py in /*) [ "$py" = "$(command -v python3)" ] || PATH=${py%/*}:$PATH ;; esac
n=0
rc=0
{
	echo "TAP version 13"
	echo "1..$#"
	for p in "$@"; do
		n=$((n + 1))
		name=$(basename "$p")
		echo "# selftests: unit: $name"
		"$p" 2>&1 | sed -e 's/^/# /'
		r=${PIPESTATUS[0]}
		case $r in
		0) echo "ok $n selftests: unit: $name" ;;
		4) echo "ok $n selftests: unit: $name # SKIP" ;;
		*) echo "not ok $n selftests: unit: $name # exit=$r"; rc=1 ;;
		esac
	done
} > "$out"
cat "$out"
exit $rc
