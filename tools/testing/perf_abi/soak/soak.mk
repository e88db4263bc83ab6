# SPDX-License-Identifier: GPL-2.0
#
# make soak: the suite run again and again, idle and under load, and every
# verdict that changed between runs (run_tests.sh --repeat; lib/flips.py).
#   host      SOAK_HOST_N runs on the running kernel
#   arm64     SOAK_GUEST_N boots of SOAK_ARM64 with user reads on
#             (SOAK_ARM64_SYSCTLS; a PMU: the user-read tests run),
#             SOAK_JOBS at a time
#   CASE-stress   under stress-ng --cpu SOAK_CPUS (both CPUs busy, the
#             scheduler migrating the tests)
#   CASE-sibling  beside a sibling process (soak/sibling.c) holding
#             SOAK_SIBLING_EVENTS pinned hardware events per CPU, more
#             than there are counters: the suite's events get no counter
#             (index 0) or run multiplexed.  On the host it runs as root
#             beside run_tests.sh; in a guest vm/init starts it
#             (perf_abi.sibling=N).  Where no hardware event opens (no
#             PMU) the sibling holds nothing, and the case's line says so.
#   CASE-stress-sibling  both.
# Reports in build/soak/<case>/ (flips.txt, repeat/); the closing lines
# are "<case>: N runs, N tests, N flips, N FAIL verdicts".  Exit 1 if a
# verdict flipped or a test failed anywhere.  Not part of make check,
# which runs a small N (unit/repeat_test.sh).  The full sizes take hours;
# a quick look: make soak SOAK_HOST_N=5 SOAK_GUEST_N=2.

SOAK_HOST_N ?= 200
SOAK_GUEST_N ?= 20
SOAK_ARM64 ?= debian:6.12.118+deb12-arm64
SOAK_ARM64_SYSCTLS ?= kernel.perf_user_access=1
SOAK_CPUS ?= 2
SOAK_JOBS ?= 2
SOAK_SIBLING_EVENTS ?= 32
SOAK_CASES ?= host host-stress host-sibling host-stress-sibling \
	arm64 arm64-stress arm64-sibling arm64-stress-sibling
SOAK_OUT := $(B)/soak

.PHONY: soak $(addprefix soak-,$(SOAK_CASES))

soak_args_host = --repeat $(SOAK_HOST_N)
soak_args_arm64 = --kernel $(SOAK_ARM64) --repeat $(SOAK_GUEST_N) -j $(SOAK_JOBS) \
	$(addprefix --sysctl ,$(SOAK_ARM64_SYSCTLS))

$(B)/sibling-host: $(M)/soak/sibling.c
	@mkdir -p "$(B)"
	@$(CC) -O2 -Wall -Wextra -Werror -o "$@.tmp" "$<" && mv "$@.tmp" "$@"

# CASE[-stress][-sibling]: run_tests.sh with the case's options.
$(addprefix soak-,$(SOAK_CASES)): soak-%: $(B)/sibling-host
	@"$(M)/deps.sh" soak
	@mkdir -p "$(SOAK_OUT)"
	@c=$*; base=$${c%%-*}; \
	  case $$base in \
	  host) args="$(soak_args_host)" ;; arm64) args="$(soak_args_arm64)" ;; \
	  *) echo "soak: unknown case $$c (host or arm64, then -stress, -sibling)" >&2; exit 2 ;; \
	  esac; \
	  spid= bpid= note=; \
	  case $$c in *-stress*) \
	    stress-ng --cpu $(SOAK_CPUS) --cpu-method all --timeout 0 --quiet & spid=$$!; \
	    note="$$note, stress-ng --cpu $(SOAK_CPUS)" ;; \
	  esac; \
	  case $$c in *-sibling*) \
	    if [ $$base = host ]; then \
	      "$(B)/sibling-host" $(SOAK_SIBLING_EVENTS) 2>"$(SOAK_OUT)/$$c.sibling" & bpid=$$!; \
	      sleep 1; kill -0 $$bpid 2>/dev/null || bpid=; \
	    else \
	      args="$$args --append perf_abi.sibling=$(SOAK_SIBLING_EVENTS)"; \
	    fi ;; \
	  esac; \
	  t0=$$(date +%s); \
	  rm -rf "$(SOAK_OUT)/$$c"; \
	  ./run_tests.sh $$args -o "$(SOAK_OUT)/$$c" >/dev/null; rc=$$?; \
	  [ -z "$$spid" ] || { kill $$spid; wait $$spid 2>/dev/null; }; \
	  [ -z "$$bpid" ] || { kill $$bpid; wait $$bpid 2>/dev/null; }; \
	  case $$c in *-sibling*) \
	    [ $$base = host ] || grep -ah '@@PERF_ABI@@ SIBLING' "$(SOAK_OUT)/$$c"/*.console 2>/dev/null | \
	      head -n 1 | sed 's/.*SIBLING //' > "$(SOAK_OUT)/$$c.sibling"; \
	    note="$$note, $$(tr -d '\r' < "$(SOAK_OUT)/$$c.sibling" | head -n 1)" ;; \
	  esac; \
	  echo "$$c: $$(tail -n 1 "$(SOAK_OUT)/$$c/flips.txt" 2>/dev/null || echo 'no report'), $$(( $$(date +%s) - t0 )) s, exit $$rc$$note" \
	    | tee "$(SOAK_OUT)/$$c.line"; \
	  exit $$rc

soak:
	@fail=0; for c in $(SOAK_CASES); do \
	  $(MAKE) --no-print-directory soak-$$c || fail=1; \
	done; \
	cat $(foreach c,$(SOAK_CASES),"$(SOAK_OUT)/$(c).line"); exit $$fail
