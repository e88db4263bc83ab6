#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench-vm's stand-in for qemu (QEMU_<ARCH>=this): runs BENCH_QEMU
# with the runner's arguments and appends its wall time in ms to
# BENCH_QEMU_MS: the guest's boot and run, without the runner's own work.
t0=$(date +%s%N)
"$BENCH_QEMU" "$@"
rc=$?
echo $((($(date +%s%N) - t0) / 1000000)) >>"$BENCH_QEMU_MS"
exit $rc
