# SPDX-License-Identifier: GPL-2.0
#
# rdpmc.c's and user_access_off.c's x86 code run against a model of the PMU (unit/x86_pmu_model.c)
# on an x86_64 host: compiled to assembly, each rdpmc and rdtsc made a call
# into the model, the perf syscalls, ioctl(), sched_setaffinity() and glob()
# (its knobs: files under the model's root) wrapped by the linker.
# Included by the top Makefile.
#
#   check-unit-x86model  build/check/unit-x86model.ktap (also part of make unit)
#   X86_MODEL_RDPMC=FILE  another rdpmc.c in the suite's place (an old one);
#                         user_access_off.c is taken from its directory

X86M := $(B)/unit/x86model
X86_MODEL_RDPMC ?= $(SUITE)/rdpmc.c

ifeq ($(shell uname -m),x86_64)
CHECK_STAGES += unit-x86model
unit: check-unit-x86model
endif
.PHONY: check-unit-x86model

# Built every time: X86_MODEL_RDPMC may name another file of any age.
check-unit-x86model: stage
	@mkdir -p "$(X86M)" "$(CHECK)"
	@"$(M)/unit/x86_pmu_model.sh" build "$(X86M)/rdpmc" "$(X86_MODEL_RDPMC)" \
		$(CC) $(UNIT_CFLAGS)
	@"$(M)/unit/x86_pmu_model.sh" build "$(X86M)/user_access_off" \
		"$(dir $(X86_MODEL_RDPMC))user_access_off.c" $(CC) $(UNIT_CFLAGS)
	@"$(M)/unit/x86_pmu_model.sh" "$(X86M)/rdpmc" "$(X86M)/run" \
		"$(X86M)/user_access_off" \
		>"$(CHECK)/unit-x86model.ktap"; rc=$$?; \
	  cat "$(CHECK)/unit-x86model.ktap"; exit $$rc
