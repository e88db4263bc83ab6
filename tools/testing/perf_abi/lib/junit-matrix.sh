#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's junit-matrix stage: the JUnit of a matrix run read with an
# XML parser against the KTAP of each of its kernels (ktap_xcheck.py
# junit-matrix), and two broken copies of it refused, so that the check is
# seen to fail:
#   junit-matrix.sh DIR KUNIT OUT
# DIR is a run_tests.sh --matrix --output directory (junit.xml,
# LABEL.ktap), KUNIT the kernel's tools/testing/kunit, OUT the KTAP.
set -u
dir=${1:?usage: junit-matrix.sh DIR KUNIT OUT}
kunit=${2:?usage: junit-matrix.sh DIR KUNIT OUT}
out=${3:?usage: junit-matrix.sh DIR KUNIT OUT}
xc=$(cd "$(dirname "$0")" && pwd)/ktap_xcheck.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
result() {	# OK NAME LOG
	n=$((n + 1))
	sed -e 's/^/# /' "$3"
	if [ "$1" = 0 ]; then
		echo "ok $n junit-matrix: $2"
	else
		echo "not ok $n junit-matrix: $2"
	fi
}

{
	echo "TAP version 13"
	echo "1..3"
	if [ ! -f "$dir/junit.xml" ] || [ ! -f "$kunit/kunit.py" ]; then
		echo "no $dir/junit.xml or no $kunit/kunit.py (the vm and ktap stages make them)" > "$tmp/log"
		result 1 "the matrix JUnit against its KTAP" "$tmp/log"
		result 1 "a skip reason changed in the JUnit is refused" "$tmp/log"
		result 1 "a kernel's testsuite missing from the JUnit is refused" "$tmp/log"
	else
		python3 "$xc" junit-matrix "$kunit" "$dir/junit.xml" "$dir" > "$tmp/log" 2>&1
		result $? "the matrix JUnit against its KTAP" "$tmp/log"
		# The first <skipped message> changed.
		mkdir -p "$tmp/a"
		cp "$dir"/*.ktap "$tmp/a/"
		python3 - "$dir/junit.xml" "$tmp/a/junit.xml" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
open(sys.argv[2], 'w').write(re.sub(r'<skipped message="', '<skipped message="changed ', t, count=1))
PY
		python3 "$xc" junit-matrix "$kunit" "$tmp/a/junit.xml" "$tmp/a" > "$tmp/log" 2>&1
		rc=$?
		if cmp -s "$dir/junit.xml" "$tmp/a/junit.xml"; then
			echo "the JUnit has no skipped testcase to change" >> "$tmp/log"
			rc=0
		fi
		result $((rc == 0)) "a skip reason changed in the JUnit is refused" "$tmp/log"
		# The last kernel's testsuite gone (its KTAP stays).
		mkdir -p "$tmp/b"
		cp "$dir"/*.ktap "$tmp/b/"
		python3 - "$dir/junit.xml" "$tmp/b/junit.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
tree = ET.parse(sys.argv[1])
root = tree.getroot()
root.remove(root.findall('testsuite')[-1])
tree.write(sys.argv[2])
PY
		python3 "$xc" junit-matrix "$kunit" "$tmp/b/junit.xml" "$tmp/b" > "$tmp/log" 2>&1
		result $(($? == 0)) "a kernel's testsuite missing from the JUnit is refused" "$tmp/log"
	fi
} > "$out"
cat "$out"
python3 "$(dirname "$0")/ktap.py" total "$out" >/dev/null
