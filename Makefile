# SPDX-License-Identifier: GPL-2.0
#
# Standalone driver of the perf user-page ABI selftests.  `make help` lists
# the targets.  The kselftest framework is taken from KSRC=<kernel tree>, or
# from the newest tree Debian ships (linux-source-$(KVER), fetched and
# extracted once into the cache by upstream/tree.sh), into build/ (never
# committed).

SHELL := /bin/bash
.DEFAULT_GOAL := build

TOP := $(CURDIR)
SUITE := tools/testing/selftests/perf_events
M := tools/testing/perf_abi
KVER ?= 7.3
KSRC ?=
# HOME may be unset (cron, env -i): the passwd entry's home then.
HOME ?= $(shell getent passwd "$$(id -u)" | cut -d: -f6)
export PERF_ABI_CACHE ?= $(HOME)/.cache/perf-abi
ifeq ($(strip $(PERF_ABI_CACHE)),/.cache/perf-abi)
$(error neither HOME nor PERF_ABI_CACHE is set (PERF_ABI_CACHE: where kernels and builds are cached))
endif

# Every path in a recipe is quoted, but kselftest's lib.mk splits its own
# $(realpath ...) at spaces: in a clone whose path holds a space the build
# tree goes to the cache (one per clone) and build/ links to it.
B := $(TOP)/build
ifneq ($(words $(TOP)),1)
B := $(PERF_ABI_CACHE)/trees/$(shell printf '%s' '$(subst ','\'',$(TOP))' | sha256sum | cut -c1-16)
ifneq ($(words $(B)),1)
$(error the clone ($(TOP)) and PERF_ABI_CACHE ($(PERF_ABI_CACHE)) both hold a space: kselftest's lib.mk cannot build there; set PERF_ABI_CACHE to a path without one)
endif
endif

ifeq ($(KSRC),)
KSFT_SRC = "$$("$(M)/upstream/tree.sh" $(KVER))"
FW := $(B)/ksft-$(KVER)
DEPS_BUILD := suite upstream
else
KSFT_SRC = "$(KSRC)"
FW := $(B)/ksft-ksrc
DEPS_BUILD := suite
endif
FWSEL := $(FW)/tools/testing/selftests
STAGE := $(FWSEL)/perf_events
HOSTOUT := $(B)/host-$(notdir $(FW))

SUITE_FILES := $(wildcard $(SUITE)/* $(SUITE)/.gitignore)

# build/ in the clone: the tree itself, or a link to it in the cache.
ifeq ($(B),$(TOP)/build)
LINK_BUILD := mkdir -p "$(B)"
else
LINK_BUILD := mkdir -p "$(B)" && { [ -L "$(TOP)/build" ] || [ ! -e "$(TOP)/build" ]; } && \
	ln -sfn "$(B)" "$(TOP)/build"
endif

# Settings per install tree: host (this machine, dynamic), or a static
# tree for a guest of that architecture (vm/qemu/ARCH.conf): the kernel's
# ARCH, the cross compiler prefix (= the multiarch triplet, but i386's is
# i386-linux-gnu), and for a foreign architecture a sysroot with its
# libcap from the Debian archive (vm/qemu/ARCH.conf's debarch, and
# debsuite when the machine's own release lacks that architecture).  The
# 32-bit trees (i386, armhf) also run as compat tasks of x86_64 and arm64
# guests (./run_tests.sh --kernel compat:SPEC).
KARCH_host := $(if $(filter aarch64,$(shell uname -m)),arm64,x86)
GUEST_ARCHES := x86_64 arm64 s390x ppc64le riscv64 i386 armhf
KARCH_x86_64 := x86
KARCH_arm64 := arm64
KARCH_s390x := s390
KARCH_ppc64le := powerpc
KARCH_riscv64 := riscv
KARCH_i386 := x86
KARCH_armhf := arm
CROSS_x86_64 :=
CROSS_arm64 := aarch64-linux-gnu-
CROSS_s390x := s390x-linux-gnu-
CROSS_ppc64le := powerpc64le-linux-gnu-
CROSS_riscv64 := riscv64-linux-gnu-
CROSS_i386 := i686-linux-gnu-
CROSS_armhf := arm-linux-gnueabihf-
$(foreach a,$(GUEST_ARCHES),$(eval STATIC_$(a) := -static))
$(foreach a,$(GUEST_ARCHES),$(eval DEPS_$(a) := vm))
$(foreach a,$(GUEST_ARCHES),$(eval MULTIARCH_$(a) := $(CROSS_$(a):-=)))
MULTIARCH_i386 := i386-linux-gnu
$(foreach a,$(filter-out x86_64,$(GUEST_ARCHES)),\
  $(eval SYSROOT_$(a) := $(B)/sysroot-$(a))\
  $(eval LIBCAP_$(a) = -I$$(SYSROOT_$(a))/usr/include \
	-L$$(SYSROOT_$(a))/usr/lib/$(MULTIARCH_$(a))))
arch_conf = $(shell sed -n 's/^$(2)[[:space:]]\{1,\}//p' "$(M)/vm/qemu/$(1).conf")

.PHONY: help deps framework stage build install-host \
	$(addprefix install-,$(GUEST_ARCHES)) run \
	check unit lint clean bench mutants matrix print-build soak

help:
	@echo 'make deps             install missing Debian packages (root)'
	@echo 'make build            build the suite for the running kernel'
	@echo 'make run              ./run_tests.sh on the running kernel'
	@echo 'make check            the project tests (unit, lint, host, guests, mutants)'
	@echo 'make unit             crafted-page unit tests and shell tests only'
	@echo 'make lint             checkpatch, clang-format, gcc/clang -Wall -Wextra'
	@echo 'make install-host     kselftest install tree for this machine (build/install-host)'
	@echo 'make install-ARCH     static install tree for a guest ($(GUEST_ARCHES))'
	@echo 'make bench            speed figures (not a pass/fail test)'
	@echo 'make mutants          the mutant-kernel kill matrix'
	@echo 'make soak             the suite N times, idle and under stress-ng; verdict flips'
	@echo 'make bisect-proof     tree: kernel and git bisect run on a synthetic history'
	@echo 'make clean            remove build/'
	@echo 'variables: KSRC=<kernel tree>  KVER=7.3|6.12|6.1|5.10  PERF_ABI_CACHE=<dir>'

deps:
	@"$(M)/deps.sh" all

# The framework: re-extracted only when its source changes (ksft.sh stamps it).
framework:
	@"$(M)/deps.sh" $(DEPS_BUILD)
	@$(LINK_BUILD)
	@src=$(KSFT_SRC) && "$(M)/ksft.sh" "$$src" "$(FW)"

# The suite, copied into the framework tree exactly as into a kernel tree.
$(STAGE)/.staged: $(SUITE_FILES) | framework
	@mkdir -p "$(STAGE)"
	@rsync -a --delete --exclude=.staged "$(SUITE)/" "$(STAGE)/"
	@touch "$@"

stage: framework
	@$(MAKE) --no-print-directory $(STAGE)/.staged

build: stage
	@mkdir -p "$(HOSTOUT)"
	@$(MAKE) --no-print-directory -C "$(STAGE)" OUTPUT="$(HOSTOUT)"

$(B)/sysroot-%/.done:
	@rm -rf "$(B)/sysroot-$*"
	@"$(M)/lib/apt-fetch.sh" \
		$(addprefix --suite ,$(call arch_conf,$*,debsuite)) \
		$(call arch_conf,$*,debarch) "$(B)/sysroot-$*" libcap-dev libcap2
	@touch "$@"

install-host $(addprefix install-,$(GUEST_ARCHES)): install-%: stage
	@$(if $(DEPS_$*),"$(M)/deps.sh" $(DEPS_$*))
	@$(if $(SYSROOT_$*),$(MAKE) --no-print-directory "$(SYSROOT_$*)/.done")
	@rm -rf "$(B)/install-$*.tmp" "$(B)/obj-$*"
	@$(MAKE) --no-print-directory -C "$(FWSEL)" TARGETS=perf_events \
		ARCH=$(KARCH_$*) CROSS_COMPILE=$(CROSS_$*) O="$(B)/obj-$*" \
		LDFLAGS=$(STATIC_$*) CPPFLAGS="$(LIBCAP_$*)" \
		INSTALL_PATH="$(B)/install-$*.tmp" install >/dev/null
	@rm -rf "$(B)/install-$*" && mv "$(B)/install-$*.tmp" "$(B)/install-$*"

run: build
	@./run_tests.sh

# make check: every stage writes build/check/<stage>.ktap (kselftest runner
# format); the last line sums them all.  Fragments of the machinery
# (tools/testing/perf_abi/*/*.mk) add their stages to CHECK_STAGES, or to
# CHECK_LATE_STAGES when they read the logs of the others.
CHECK := $(B)/check
CHECK_STAGES := unit lint host kselftest
CHECK_LATE_STAGES :=
UNIT_SRCS := $(wildcard $(M)/unit/*_test.c)
UNIT_BINS := $(patsubst $(M)/unit/%.c,$(B)/unit/%,$(UNIT_SRCS))
UNIT_SH := $(wildcard $(M)/unit/*_test.sh)
UNIT_HDR := $(B)/unit/hdr/user_page.h
UNIT_CFLAGS := -Wall -Wextra -Werror -Wno-unused-parameter -O2 -g \
	-I"$(dir $(UNIT_HDR))" -I"$(SUITE)" -I"$(STAGE)" -I"$(FWSEL)"

-include $(wildcard $(M)/*/*.mk)

# The unit tests' user_page.h: a test that defines UP_HAVE_HW_READ (and
# UP_TRAP_SIGNAL, up_hw_counter(), up_hw_cycles()) brings its own counter
# reader in place of the architecture's.
$(UNIT_HDR): $(SUITE)/user_page.h
	@mkdir -p "$(@D)"
	@sed 's/^#if defined(__aarch64__)$$/#if defined(UP_HAVE_HW_READ)\n#elif defined(__aarch64__)/' \
		"$<" > "$@.tmp"
	@grep -q '^#if defined(UP_HAVE_HW_READ)$$' "$@.tmp" || \
		{ echo "$@: no architecture branch to put a fake before" >&2; exit 1; }
	@mv "$@.tmp" "$@"

$(B)/unit/%: $(M)/unit/%.c $(UNIT_HDR) $(STAGE)/.staged
	@mkdir -p "$(dir $@)"
	@$(CC) $(UNIT_CFLAGS) -o "$@" "$<" -lcap -lpthread

check-unit: stage
	@$(MAKE) --no-print-directory $(UNIT_BINS)
	@mkdir -p "$(CHECK)"
	@KSFT_SELFTESTS="$(FWSEL)" "$(M)/lib/ktap-run.sh" "$(CHECK)/unit.ktap" \
		$(UNIT_BINS) $(UNIT_SH)

check-lint: stage
	@mkdir -p "$(CHECK)"
	@"$(M)/lint.sh" "$(FW)" "$(CHECK)/lint.ktap"

check-host: stage
	@mkdir -p "$(CHECK)"
	@./run_tests.sh --log "$(CHECK)/host.ktap" >/dev/null; rc=$$?; \
	  [ $$rc = 0 ] || [ $$rc = 4 ] || { cat "$(CHECK)/host.ktap"; exit 1; }

# The way a kernel tree runs it: the selftests Makefile with TARGETS.
check-kselftest: stage
	@mkdir -p "$(CHECK)"
	@$(MAKE) --no-print-directory -s -C "$(FWSEL)" TARGETS=perf_events \
		O="$(B)/obj-kselftest" all >/dev/null
	@$(MAKE) --no-print-directory -s -C "$(FWSEL)" TARGETS=perf_events \
		O="$(B)/obj-kselftest" run_tests > "$(CHECK)/kselftest.ktap" 2>&1; \
	  k="$(CHECK)/kselftest.ktap"; grep -q '^TAP version' "$$k" || { \
	    n=$$(grep -Ec '^(not )?ok ' "$$k"); \
	    { printf 'TAP version 13\n1..%s\n' "$$n"; cat "$$k"; } > "$$k.tmp" && mv "$$k.tmp" "$$k"; }; \
	  python3 "$(M)/lib/ktap.py" summary "$(CHECK)/kselftest.ktap" \
		"make -C tools/testing/selftests TARGETS=perf_events run_tests"; \
	  rc=$$?; [ $$rc = 0 ] || [ $$rc = 4 ] || { cat "$(CHECK)/kselftest.ktap"; exit 1; }

unit: check-unit
	@python3 "$(M)/lib/ktap.py" total "$(CHECK)"/unit*.ktap

lint: check-lint
	@python3 "$(M)/lib/ktap.py" total "$(CHECK)/lint.ktap"

# Speed figures, not pass/fail: self-read vs read(), guest boots, mutants.
BENCH_TARGETS ?= bench-host bench-read bench-vm bench-mutants
bench:
	@for t in $(BENCH_TARGETS); do \
	  $(MAKE) --no-print-directory $$t || exit 1; \
	done

check:
	@rm -rf "$(CHECK)" && mkdir -p "$(B)"
	@"$(M)/deps.sh" all
	@fail=0; : > "$(CHECK).times"; for s in $(CHECK_STAGES) $(CHECK_LATE_STAGES); do \
	  echo "== check: $$s" >&2; t0=$$(date +%s); \
	  $(MAKE) --no-print-directory check-$$s || fail=1; \
	  echo "$$s $$(( $$(date +%s) - t0 ))" >> "$(CHECK).times"; \
	done; \
	echo "== check: seconds per stage: $$(tr '\n' ' ' < "$(CHECK).times")" >&2; \
	python3 "$(M)/lib/ktap.py" total "$(CHECK)"/*.ktap || fail=1; \
	exit $$fail

# Prints the build tree (run_tests.sh asks, for a clone with a space).
print-build:
	@echo "$(B)"

clean:
	rm -rf "$(B)"$(if $(filter-out $(TOP)/build,$(B)), "$(TOP)/build")
