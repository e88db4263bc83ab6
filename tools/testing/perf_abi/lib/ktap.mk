# SPDX-License-Identifier: GPL-2.0
#
# make check-ktap: lib/ktap.py against the kernel's own KTAP parser
# (tools/testing/kunit/kunit.py parse of the same kernel source), and the
# JUnit of run_tests.sh --junit against its --ktap: on the crafted broken
# KTAP of unit/ktap/, a host run and one guest (KTAP_GUEST, rdpmc only);
# late, check-junit-matrix: the vm stage's matrix JUnit against the KTAP
# of each of its kernels (lib/junit-matrix.sh).
# Included by the top Makefile.

KTAP_GUEST ?= debian:6.1.0-57-cloud-amd64
KUNIT_DIR := $(B)/kunit-$(notdir $(FW))

CHECK_STAGES += ktap
CHECK_LATE_STAGES += junit-matrix
.PHONY: check-ktap check-junit-matrix

check-ktap: stage
	@mkdir -p "$(CHECK)"
	@"$(M)/lib/ktap-check.sh" "$(KSFT_SRC)" "$(KUNIT_DIR)" "$(CHECK)/ktap.ktap" "$(KTAP_GUEST)"

check-junit-matrix:
	@mkdir -p "$(CHECK)"
	@"$(M)/lib/junit-matrix.sh" "$(VM_CHECK_OUT)" "$(KUNIT_DIR)/tools/testing/kunit" \
		"$(CHECK)/junit-matrix.ktap"
