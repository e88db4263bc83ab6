# SPDX-License-Identifier: GPL-2.0
#
# make check's name-stability stage (after the guests): the suite's KTAP
# from the host as root (the host stage's), the host as uid 65534 (the
# install tree run with setpriv; the runner reopens /dev/stdout, so its
# output goes through a pipe that uid owns), every guest of the vm stage
# and (test names and plans only) every privilege cell of the privileges
# stage, read by
# lib/names.py into name -> verdict maps: the same test names in every run,
# the same SKIP reason wherever a test skips (a lab's parser appends it to
# the case name), and no diagnostic taken for a result.
#
#   check-names   build/check/names.ktap

NAMES_OUT := $(B)/names
NAMES_UID ?= 65534

CHECK_LATE_STAGES += names
# names_arch DIR KTAP: the arch of that KTAP's kernel (or of DIR's first)
names_arch = python3 -c 'import json, sys; k = json.load(open(sys.argv[1] + "/summary.json"))["kernels"]; print(([x for x in k if x["ktap"] == sys.argv[2]] or k)[0]["arch"])'
.PHONY: check-names

check-names: stage
	@mkdir -p "$(CHECK)" "$(NAMES_OUT)"
	@set -e; \
	  root="$(CHECK)/host.ktap"; \
	  if [ ! -s "$$root" ]; then \
	    root="$(NAMES_OUT)/host-root.ktap"; \
	    ./run_tests.sh --log "$$root" >/dev/null || [ $$? = 4 ]; \
	  fi; \
	  $(MAKE) -s --no-print-directory install-host >/dev/null; \
	  tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  cp -a "$(B)/install-host" "$$tmp/suite"; \
	  chmod -R a+rX "$$tmp"; \
	  cd "$$tmp/suite"; \
	  setpriv --reuid $(NAMES_UID) --regid $(NAMES_UID) --clear-groups \
	    sh -c './run_kselftest.sh 2>&1 | cat' \
	    > "$(NAMES_OUT)/host-uid$(NAMES_UID).ktap" || true; \
	  cd "$(TOP)"; \
	  h=$$(uname -m | sed 's/^aarch64$$/arm64/'); \
	  set -- "$$h:host-root=$$root" \
	    "$$h:host-uid$(NAMES_UID)=$(NAMES_OUT)/host-uid$(NAMES_UID).ktap"; \
	  for f in "$(VM_CHECK_OUT)"/*.ktap; do \
	    [ -f "$$f" ] && [ "$${f##*/}" != report.ktap ] || continue; \
	    b=$${f##*/}; a=$$($(names_arch) "$(VM_CHECK_OUT)" "$$b"); \
	    set -- "$$@" "$$a:guest-$${b%.ktap}=$$f"; \
	  done; \
	  set -- "$$@" --names-only; \
	  for f in "$(PRIV_CHECK_OUT)"/cells/*.ktap; do \
	    [ -f "$$f" ] || continue; \
	    b=$${f##*/}; a=$$($(names_arch) "$(PRIV_CHECK_OUT)/run" ''); \
	    set -- "$$@" "$$a:cell-$${b%.ktap}=$$f"; \
	  done; \
	  python3 "$(M)/lib/names.py" "$(CHECK)/names.ktap" "$$@"
