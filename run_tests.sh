#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the perf user-page ABI selftests on the running kernel or on kernels
# booted under qemu (--help): tools/testing/perf_abi/lib/run_tests.py.
# -S: no site-packages (stdlib only), and no Python code before the
# program's own, where a ^C would end in a traceback and exit 1.
exec python3 -S "$(dirname "$0")/tools/testing/perf_abi/lib/run_tests.py" "$@"
