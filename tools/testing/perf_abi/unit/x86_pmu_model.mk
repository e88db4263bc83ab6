# SPDX-License-Identifier: GPL-2.0
#
# rdpmc.c's x86 code run against a model of the PMU (unit/x86_pmu_model.c)
# on an x86_64 host: compiled to assembly, each rdpmc and rdtsc made a call
# into the model, the perf syscalls, ioctl(), sched_setaffinity() and glob()
# (its knobs: files under the model's root) wrapped by the linker.
# Included by the top Makefile.
#
#   check-unit-x86model  build/check/unit-x86model.ktap (also part of make unit)
#   X86_MODEL_RDPMC=FILE  another rdpmc.c in the suite's place (an old one)

X86M := $(B)/unit/x86model
X86_MODEL_RDPMC ?= $(SUITE)/rdpmc.c
X86M_WRAP := syscall mmap munmap read close ioctl glob sched_setaffinity

ifeq ($(shell uname -m),x86_64)
CHECK_STAGES += unit-x86model
unit: check-unit-x86model
endif
.PHONY: check-unit-x86model

# Built every time: X86_MODEL_RDPMC may name another file of any age.
check-unit-x86model: stage
	@mkdir -p "$(X86M)" "$(CHECK)"
	@$(CC) $(UNIT_CFLAGS) -g0 -mno-red-zone -S -o "$(X86M)/rdpmc.s" \
		"$(X86_MODEL_RDPMC)"
	@sed -i -E 's/^\t(rdpmc|rdtsc)$$/\tcall x86_pmu_model_\1/' \
		"$(X86M)/rdpmc.s"
	@$(CC) $(UNIT_CFLAGS) -o "$(X86M)/rdpmc" "$(X86M)/rdpmc.s" \
		"$(M)/unit/x86_pmu_model.c" \
		$(foreach w,$(X86M_WRAP),-Wl,--wrap=$(w)) -lcap
	@! objdump -d "$(X86M)/rdpmc" | grep -P '\t(rdpmc|rdtsc) *$$' || \
		{ echo "x86_pmu_model: an instruction above was not replaced" >&2; exit 1; }
	@"$(M)/unit/x86_pmu_model.sh" "$(X86M)/rdpmc" "$(X86M)/run" \
		>"$(CHECK)/unit-x86model.ktap"; rc=$$?; \
	  cat "$(CHECK)/unit-x86model.ktap"; exit $$rc
