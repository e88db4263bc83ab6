# SPDX-License-Identifier: GPL-2.0
#
# make soak: the suite run again and again, idle and under load, and every
# verdict that changed between runs (run_tests.sh --repeat; lib/flips.py).
#   host      SOAK_HOST_N runs on the running kernel
#   arm64     SOAK_GUEST_N boots of SOAK_ARM64 (a PMU: the user-read tests
#             run), SOAK_JOBS at a time
#   each again under stress-ng --cpu SOAK_CPUS (both CPUs busy, the
#   scheduler migrating the tests)
# Reports in build/soak/<case>/ (flips.txt, repeat/); the closing lines
# are "<case>: N runs, N tests, N flips, N FAIL verdicts".  Exit 1 if a
# verdict flipped or a test failed anywhere.  Not part of make check,
# which runs a small N (unit/repeat_test.sh).

SOAK_HOST_N ?= 200
SOAK_GUEST_N ?= 20
SOAK_ARM64 ?= debian:6.12.118+deb12-arm64
SOAK_CPUS ?= 2
SOAK_JOBS ?= 2
SOAK_CASES ?= host host-stress arm64 arm64-stress
SOAK_OUT := $(B)/soak

.PHONY: soak $(addprefix soak-,$(SOAK_CASES))

soak_args_host = --repeat $(SOAK_HOST_N)
soak_args_arm64 = --kernel $(SOAK_ARM64) --repeat $(SOAK_GUEST_N) -j $(SOAK_JOBS)

# CASE[-stress]: run_tests.sh with the case's options (under stress-ng).
$(addprefix soak-,$(SOAK_CASES)): soak-%:
	@"$(M)/deps.sh" soak
	@mkdir -p "$(SOAK_OUT)"
	@c=$*; base=$${c%-stress}; \
	  case $$base in \
	  host) args="$(soak_args_host)" ;; arm64) args="$(soak_args_arm64)" ;; esac; \
	  spid=; \
	  if [ "$$c" != "$$base" ]; then \
	    stress-ng --cpu $(SOAK_CPUS) --cpu-method all --timeout 0 --quiet & spid=$$!; \
	  fi; \
	  t0=$$(date +%s); \
	  ./run_tests.sh $$args -o "$(SOAK_OUT)/$$c" >/dev/null; rc=$$?; \
	  [ -z "$$spid" ] || { kill $$spid; wait $$spid 2>/dev/null; }; \
	  echo "$$c: $$(tail -n 1 "$(SOAK_OUT)/$$c/flips.txt" 2>/dev/null || echo 'no report'), $$(( $$(date +%s) - t0 )) s, exit $$rc" \
	    | tee "$(SOAK_OUT)/$$c.line"; \
	  exit $$rc

soak:
	@fail=0; for c in $(SOAK_CASES); do \
	  $(MAKE) --no-print-directory soak-$$c || fail=1; \
	done; \
	cat $(foreach c,$(SOAK_CASES),"$(SOAK_OUT)/$(c).line"); exit $$fail
