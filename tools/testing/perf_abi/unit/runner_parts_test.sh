#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The runner's parts (lib/run_tests.py, rt_base.py, rt_out.py, rt_suite.py,
# rt_qemu.py), each by the test module beside it (lib/PART_test.py),
# python3 -S as run_tests.sh runs them, no __pycache__ written.  Prints
# KTAP; exit 1 on failure.
cd "$(dirname "$0")/../lib" || exit 1
mods=(rt_base_test rt_out_test rt_suite_test rt_qemu_test run_tests_test)
echo "TAP version 13"
echo "1..${#mods[@]}"
n=0 failed=0
for m in "${mods[@]}"; do
	n=$((n + 1))
	if out=$(python3 -S -B -m unittest "$m" 2>&1); then
		echo "ok $n $m ($(grep -o 'Ran [0-9]* tests*' <<<"$out"))"
	else
		sed -e 's/^/# /' <<<"$out"
		echo "not ok $n $m"
		failed=$((failed + 1))
	fi
done
[ "$failed" = 0 ]
