# SPDX-License-Identifier: GPL-2.0
#
# LAVA: make check's lava stage (included by the top Makefile).
#
#   check-lava   run_tests.sh --lava-job for LAVA_CHECK_KERNELS (an x86_64
#                and an arm64 Debian kernel, -t LAVA_CHECK_TEST), each job
#                run end to end by lava-run (Debian's lava-dispatcher, no
#                server) on a device rendered from lava-server's qemu
#                device type, its per-test results compared with a direct
#                run of the same kernel; build/check/lava.ktap

LAVA_CHECK_KERNELS ?= debian:6.1.0-57-cloud-amd64 debian:6.12.118+deb12-arm64
LAVA_CHECK_TEST ?= rdpmc

CHECK_STAGES += lava
.PHONY: check-lava

check-lava:
	@mkdir -p "$(CHECK)"
	@LAVA_CHECK_KERNELS="$(LAVA_CHECK_KERNELS)" LAVA_CHECK_TEST="$(LAVA_CHECK_TEST)" \
	  "$(M)/lava/check.sh" "$(CHECK)/lava.ktap" "$(B)/lava-check"
