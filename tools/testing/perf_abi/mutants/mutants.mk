# SPDX-License-Identifier: GPL-2.0
#
# The mutant kill matrix (tools/testing/perf_abi/mutants, issue 6).
#   make mutants         build or reuse the mutant kernels (MUT_ARCHES),
#                        boot each pristine and per mutant, print the kill
#                        table (REPEAT=N: each boot N times, killed only if
#                        killed in all N)
#   make check-mutants   the same as a make check stage, on CHECK_MUT_ARCHES
#                        (build/check/mutants.ktap)
#   make bench-mutants   cold (empty cache) and warm wall times of `make mutants`
# One kernel per arch carries every patch of mutants/; perf_abi_mutant=NAME
# on its command line picks the mutant, no parameter is the pristine kernel.

MUT := $(M)/mutants
MUT_B := $(B)/mutants
MUT_ARCHES ?= x86_64 arm64 riscv64
# make check boots every mutant of two arches once: riscv64's
# start-broadcast can lock up its guest until qemu's 9-minute timeout
# (mutants/README.md).  It boots the rows HISTORY.md counts as caught 3
# times on every arch they claim, riscv64 included (CHECK_COUNTED_ARCHES:
# booted for those rows only, and only when HISTORY.md counts one there).
CHECK_MUT_ARCHES ?= x86_64 arm64
CHECK_COUNTED_ARCHES ?= riscv64
CHECK_COUNTED ?= 3
REPEAT ?= 1
COUNTED ?= 0
COUNTED_ARCHES ?=
MUT_RUN = $(foreach a,$(MUT_ARCHES) $(COUNTED_ARCHES),INSTALL_$(a)="$(MUT_B)/install-$(a)") \
	"$(MUT)/run.sh" --arch $(subst $(mut_space),$(mut_comma),$(strip $(MUT_ARCHES))) \
	--repeat "$(REPEAT)" --counted "$(COUNTED)" \
	--counted-arch "$(subst $(mut_space),$(mut_comma),$(strip $(COUNTED_ARCHES)))"
# The arches of CHECK_COUNTED_ARCHES where HISTORY.md counts a row
mut_counted_arches = $(filter $(CHECK_COUNTED_ARCHES),$(shell python3 \
	"$(MUT)/table.py" --counted "$(MUT)/HISTORY.md" "$(MUT)" | cut -d' ' -f1 | sort -u))
mut_empty :=
mut_space := $(mut_empty) $(mut_empty)
mut_comma := ,

CHECK_STAGES += mutants

.PHONY: mutants check-mutants bench-mutants mutants-install

# Kselftest install tree per arch with this suite (perf_events) and the
# kernel's own perf_events selftests (perf_events.upstream, the reference):
# one boot runs both.  Static, as for install-ARCH; objects are kept in
# build/mutants/obj-ARCH so a rerun only relinks what changed.
# Reference programs left out per arch: on arm64 (TCG, -icount shift=0)
# sigtrap_threads ran over 5 minutes in one boot, remove_on_exec (exec_stress)
# hung a pristine boot past 5 minutes: 15 boots cannot afford them.
MUT_REF_SKIP_arm64 ?= sigtrap_threads remove_on_exec
# riscv64 (TCG) leaves them out as arm64 does (not timed there).
MUT_REF_SKIP_riscv64 ?= sigtrap_threads remove_on_exec
mutants-install: $(addprefix mutants-install-,$(MUT_ARCHES))
mutants-install-%: stage
	@$(if $(DEPS_$*),"$(M)/deps.sh" $(DEPS_$*))
	@$(if $(SYSROOT_$*),$(MAKE) --no-print-directory "$(SYSROOT_$*)/.done")
	@rm -rf "$(MUT_B)/install-$*.tmp"
	@$(MAKE) --no-print-directory -C "$(FWSEL)" \
		TARGETS="perf_events perf_events.upstream" \
		ARCH=$(KARCH_$*) CROSS_COMPILE=$(CROSS_$*) O="$(MUT_B)/obj-$*" \
		LDFLAGS=$(STATIC_$*) CPPFLAGS="$(LIBCAP_$*)" \
		INSTALL_PATH="$(MUT_B)/install-$*.tmp" install >/dev/null
	@for t in $(MUT_REF_SKIP_$*); do \
	  sed -i "/^perf_events.upstream:$$t\$$/d" "$(MUT_B)/install-$*.tmp/kselftest-list.txt"; \
	  rm -f "$(MUT_B)/install-$*.tmp/perf_events.upstream/$$t"; \
	done
	@rm -rf "$(MUT_B)/install-$*" && mv "$(MUT_B)/install-$*.tmp" "$(MUT_B)/install-$*"

mutants: mutants-install
	@"$(M)/deps.sh" kernel
	@$(MUT_RUN) --output "$(MUT_B)/runs"

check-mutants: MUT_ARCHES := $(CHECK_MUT_ARCHES)
check-mutants: COUNTED := $(CHECK_COUNTED)
check-mutants: COUNTED_ARCHES = $(filter-out $(CHECK_MUT_ARCHES),$(mut_counted_arches))
check-mutants:
	@mkdir -p "$(CHECK)"
	@rm -f "$(CHECK)/mutants.ktap"
	@$(MAKE) --no-print-directory MUT_ARCHES="$(MUT_ARCHES) $(COUNTED_ARCHES)" mutants-install \
		>"$(CHECK)/mutants.log" 2>&1 && \
	  "$(M)/deps.sh" kernel >>"$(CHECK)/mutants.log" 2>&1 && \
	  $(MUT_RUN) --output "$(MUT_B)/runs" --ktap "$(CHECK)/mutants.ktap" \
		>>"$(CHECK)/mutants.log" 2>&1; rc=$$?; \
	  [ -s "$(CHECK)/mutants.ktap" ] || printf 'TAP version 13\n1..1\n# see %s\nnot ok 1 selftests: mutants: matrix # exit=%s no verdict\n' \
		"$(CHECK)/mutants.log" $$rc > "$(CHECK)/mutants.ktap"; \
	  sed -n '/^arch /,$$p' "$(CHECK)/mutants.log"; \
	  [ $$rc = 0 ] || { tail -n 5 "$(CHECK)/mutants.log" >&2; exit 1; }

# Cold: an empty PERF_ABI_CACHE and no build/mutants (kernel source
# extraction, the kernel builds of MUT_ARCHES, initramfs, install trees,
# every boot).
# Warm: the same command again.  Targets: cold <= 1200 s, warm <= 180 s.
bench-mutants:
	@rm -rf "$(B)/bench-cache" "$(MUT_B)" && mkdir -p "$(B)"
	@t0=$$(date +%s); \
	  $(MAKE) --no-print-directory PERF_ABI_CACHE="$(B)/bench-cache" mutants \
		> "$(B)/bench-mutants-cold.log" 2>&1; rc1=$$?; \
	  t1=$$(date +%s); \
	  $(MAKE) --no-print-directory PERF_ABI_CACHE="$(B)/bench-cache" mutants \
		> "$(B)/bench-mutants-warm.log" 2>&1; rc2=$$?; \
	  t2=$$(date +%s); \
	  grep -h 'built in\|boots done' "$(B)/bench-mutants-cold.log" | sed 's/^/  cold: /'; \
	  grep -h 'boots done' "$(B)/bench-mutants-warm.log" | sed 's/^/  warm: /'; \
	  echo "bench-mutants: cold $$((t1 - t0))s (target 1200s, matrix rc $$rc1)," \
	       "warm $$((t2 - t1))s (target 180s, matrix rc $$rc2), $$(nproc) cores"; \
	  rm -rf "$(B)/bench-cache"
