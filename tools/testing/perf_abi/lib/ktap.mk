# SPDX-License-Identifier: GPL-2.0
#
# make check-ktap: lib/ktap.py against the kernel's own KTAP parser
# (tools/testing/kunit/kunit.py parse of the same kernel source), and the
# JUnit of run_tests.sh --junit against its --ktap: on the crafted broken
# KTAP of unit/ktap/, a host run and one guest (KTAP_GUEST, rdpmc only).
# Included by the top Makefile.

KTAP_GUEST ?= debian:6.1.0-57-cloud-amd64
KUNIT_DIR := $(B)/kunit-$(notdir $(FW))

CHECK_STAGES += ktap
.PHONY: check-ktap

check-ktap: stage
	@mkdir -p "$(CHECK)"
	@"$(M)/lib/ktap-check.sh" "$(KSFT_SRC)" "$(KUNIT_DIR)" "$(CHECK)/ktap.ktap" "$(KTAP_GUEST)"
