# SPDX-License-Identifier: GPL-2.0
#
# The privilege table: the suite in a guest as root, as uid 0 without any
# capability (nocaps), as uid 65534 with CAP_PERFMON only (perfmon) and as
# uid 65534 (user), at perf_event_paranoid -1, 0, 1, 2 and 3, every cell of
# one kernel in one boot (run_tests.sh --cells; vm/init, vm/privrun.c).
#
#   privileges        PRIV_KERNELS (an arm64 kernel, whose guest has a PMU,
#                     and an x86_64 one), --cells all, PRIV_SYSCTLS; the
#                     table in build/privileges/table.md (lib/privileges.py)
#   check-privileges  make check's part: rdpmc on PRIV_CHECK_KERNEL in
#                     PRIV_CHECK_CELLS; no FAIL, every SKIP of a test that
#                     passed in another cell names a permission; the cells'
#                     KTAP go to lib/names.mk's check (build/check/privileges.ktap)

PRIV_KERNELS ?= debian:6.12.118+deb12-arm64 debian:6.1.0-57-cloud-amd64
# arm64 user reads on, so that the counter-reading tests run where the
# privileges allow them; only on PRIV_SYSCTL_KERNELS: x86_64 has no such
# setting, and a --sysctl a guest lacks is an error (exit 2).
PRIV_SYSCTLS ?= kernel.perf_user_access=1
PRIV_SYSCTL_KERNELS ?= $(filter %-arm64,$(PRIV_KERNELS))
PRIV_OUT := $(B)/privileges
PRIV_CHECK_KERNEL ?= debian:6.12.118+deb12-arm64
PRIV_CHECK_CELLS ?= perfmon@2,nocaps@2,user@3
PRIV_CHECK_OUT := $(B)/privileges-check

CHECK_STAGES += privileges
.PHONY: privileges check-privileges

# LABEL=KTAP of every guest of a run_tests.sh output directory DIR.
priv_ktaps = $$(for f in "$(1)"/*.ktap; do \
	  b=$${f\#\#*/}; [ -f "$$f" ] && [ "$$b" != report.ktap ] || continue; \
	  printf '%s=%s\n' "$${b%.ktap}" "$$f"; done)

# One run per kernel (run-1, run-2 ...), each with its own sysctls.
privileges:
	@mkdir -p "$(PRIV_OUT)"
	@rm -rf "$(PRIV_OUT)/cells" "$(PRIV_OUT)"/run-*
	@n=0; for k in $(PRIV_KERNELS); do n=$$((n + 1)); \
	  s=; case " $(PRIV_SYSCTL_KERNELS) " in *" $$k "*) s="$(addprefix --sysctl ,$(PRIV_SYSCTLS))" ;; esac; \
	  ./run_tests.sh --kernel "$$k" --cells all $$s --output "$(PRIV_OUT)/run-$$n" >/dev/null; \
	  rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
	done; \
	python3 "$(M)/lib/privileges.py" --cells-dir "$(PRIV_OUT)/cells" \
	  "$(PRIV_OUT)/table.md" $$(for d in "$(PRIV_OUT)"/run-*; do printf "%s\n" $(call priv_ktaps,$$d); done)

check-privileges:
	@mkdir -p "$(CHECK)"
	@rm -rf "$(PRIV_CHECK_OUT)"
	@./run_tests.sh --kernel $(PRIV_CHECK_KERNEL) -t rdpmc --cells $(PRIV_CHECK_CELLS) \
	    $(addprefix --sysctl ,$(PRIV_SYSCTLS)) --output "$(PRIV_CHECK_OUT)/run" \
	    >"$(PRIV_CHECK_OUT).out" 2>&1; rc=$$?; \
	  { echo 'TAP version 13'; echo '1..2'; \
	    echo "# run_tests.sh --kernel $(PRIV_CHECK_KERNEL) -t rdpmc --cells $(PRIV_CHECK_CELLS)"; \
	    if [ $$rc -le 1 ]; then echo "ok 1 privileges: the cells ran, exit $$rc"; \
	    else tail -n 20 "$(PRIV_CHECK_OUT).out" | sed -e 's/^/# /'; \
	      echo "not ok 1 privileges: the cells ran, exit $$rc"; fi; \
	    python3 "$(M)/lib/privileges.py" --known "$(M)/kernels/known-bugs" \
	      --cells-dir "$(PRIV_CHECK_OUT)/cells" \
	      "$(PRIV_CHECK_OUT)/table.md" $(call priv_ktaps,$(PRIV_CHECK_OUT)/run) \
	      >"$(PRIV_CHECK_OUT).table" 2>&1; prc=$$?; \
	    sed -e 's/^/# /' "$(PRIV_CHECK_OUT).table"; \
	    if [ $$prc = 0 ]; then echo "ok 2 privileges: no FAIL, every SKIP a permission explains names it"; \
	    else echo "not ok 2 privileges: no FAIL, every SKIP a permission explains names it"; fi; \
	  } > "$(CHECK)/privileges.ktap"; \
	  cat "$(CHECK)/privileges.ktap"; \
	  python3 "$(M)/lib/ktap.py" total "$(CHECK)/privileges.ktap" >/dev/null
