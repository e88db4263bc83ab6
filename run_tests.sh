#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run the perf user-page ABI selftests on the running kernel or on kernels
# booted under qemu (--help): tools/testing/perf_abi/lib/run_tests.py.
# -S: no site-packages (stdlib only), and no Python code before the
# program's own, where a ^C would end in a traceback and exit 1.  Called
# through a symlink: the program beside the file it points to.
command -v python3 >/dev/null || { echo 'run_tests.sh: python3 not found in PATH (apt-get install python3)' >&2; exit 2; }
exec python3 -S "$(dirname "$(readlink -f "$0")")/tools/testing/perf_abi/lib/run_tests.py" "$@"
