# SPDX-License-Identifier: GPL-2.0
#
# The suite in real kernel trees, as an upstream patch series, installed
# and packaged (issue 10, sections 1, 2 and 4).
#   make upstream-check  per tree of UPSTREAM_VERS: the series applied with
#                        git am to the pristine linux-source-VER tree, make
#                        headers, run_tests (upstream's tests and ours),
#                        install + run_kselftest.sh -t, gen_kselftest_tar.sh
#                        (build/check/upstream-VER.ktap; a make check stage)
#   make patch [KSRC=]   the git format-patch series against KSRC (a kernel
#                        git tree; default the pristine linux-source-7.3),
#                        into build/patch/, checkpatch --strict on each patch
#                        (FILE_PATH_CHANGES aside: MAINTAINERS lists no
#                        perf_events selftests, and the cover letter says so)
#   make install DESTDIR= PREFIX=   the runnable suite, as a kselftest install
#   make dist            perf-abi-selftests-VERSION.tar.gz
# Pristine trees are extracted once per package version into
# $(PERF_ABI_CACHE)/trees/ (tree.sh); their usr/include stays between runs.

UP := $(M)/upstream
# The trees a stable backport builds the series in unchanged (6.1, 6.12)
# and the newest; older kernels run what the newest tree built (the vm
# stage).
UPSTREAM_VERS ?= 6.1 6.12 7.3
PATCH_BASE ?= 7.3
PATCH_OUT ?= $(B)/patch
PREFIX ?= /usr/local
DESTDIR ?=
INSTALL_DIR = $(DESTDIR)$(PREFIX)/libexec/perf-abi-selftests
VERSION = $(shell cat "$(TOP)/VERSION" 2>/dev/null || \
	git -C "$(TOP)" describe --tags --always --dirty 2>/dev/null || echo unknown)
DIST_NAME = perf-abi-selftests-$(VERSION)

CHECK_STAGES += upstream dist

.PHONY: upstream-check check-upstream upstream-trees patch install dist \
	check-dist $(addprefix upstream-,$(UPSTREAM_VERS))

upstream-trees:
	@"$(M)/deps.sh" upstream
	@for v in $(UPSTREAM_VERS); do "$(UP)/tree.sh" $$v || exit 2; done

# One tree: build/upstream/VER/ (logs, series, install, tarball),
# build/check/upstream-VER.ktap.
# Upstream's own tests run in the trees of UPSTREAM_THEIRS only; elsewhere
# run_tests runs ours alone: 6.1's backported mmap test sits out three
# 30 s harness timeouts there (its fixture SKIPs, and the 6.1 harness goes
# on with the test), 90 s that test nothing of ours.
UPSTREAM_THEIRS ?= 6.12 7.3
$(addprefix upstream-,$(UPSTREAM_VERS)): upstream-%:
	@mkdir -p "$(CHECK)"
	@"$(UP)/run.sh" $(if $(filter $*,$(UPSTREAM_THEIRS)),,--ours-only) \
		$(if $(filter $*,$(PATCH_BASE)),--checkpatch) \
		$* "$(B)/upstream/$*" "$(CHECK)/upstream-$*.ktap"

# Two trees at a time (each run is one process at a time, mostly forks).
UPSTREAM_JOBS ?= 2
check-upstream:
	@"$(M)/deps.sh" upstream
	@$(MAKE) --no-print-directory -j$(UPSTREAM_JOBS) -k \
		$(addprefix upstream-,$(UPSTREAM_VERS))

upstream-check:
	@$(MAKE) --no-print-directory check-upstream; rc=$$?; \
	  python3 "$(M)/lib/ktap.py" total $(foreach v,$(UPSTREAM_VERS),"$(CHECK)/upstream-$(v).ktap") \
		|| rc=1; exit $$rc

patch:
	@"$(M)/deps.sh" upstream
	@tree="$(if $(KSRC),$(abspath $(KSRC)),$$("$(UP)/tree.sh" $(PATCH_BASE)))" || exit 2; \
	  python3 "$(UP)/series.py" --fixes "$(M)/kernels/fixes" "$$tree" "$(SUITE)" \
		"$(UP)/series" "$(PATCH_OUT)" >/dev/null || exit $$?; \
	  rc=0; for p in "$(PATCH_OUT)"/*.patch; do \
	    case $$p in */0000-cover-letter.patch) echo "$$p"; continue ;; esac; \
	    t=$$(cd "$$tree" && PATH=/usr/bin:/bin:$$PATH perl scripts/checkpatch.pl --strict \
		--ignore FILE_PATH_CHANGES "$$p" 2>&1 | \
		grep '^total:'); \
	    echo "$$p: checkpatch --strict: $${t#total: }"; \
	    case $$t in "total: 0 errors, 0 warnings, 0 checks, "*) ;; *) rc=1 ;; esac; \
	  done; exit $$rc

# The runnable suite the way a kselftest install lays it out (programs,
# settings, run_kselftest.sh and its kselftest/ runner, kselftest-list.txt)
# under PREFIX/libexec/perf-abi-selftests, and PREFIX/bin/perf-abi-selftests
# to run it.
install: install-host
	@rm -rf "$(INSTALL_DIR)"
	@mkdir -p "$(INSTALL_DIR)" "$(DESTDIR)$(PREFIX)/bin"
	@cp -a "$(B)/install-host/." "$(INSTALL_DIR)/"
	@printf '#!/bin/sh\n# perf user page ABI selftests (%s)\ncd "%s" && exec ./run_kselftest.sh -c perf_events "$$@"\n' \
		"$(VERSION)" "$(PREFIX)/libexec/perf-abi-selftests" \
		> "$(DESTDIR)$(PREFIX)/bin/perf-abi-selftests"
	@chmod 755 "$(DESTDIR)$(PREFIX)/bin/perf-abi-selftests"
	@echo "installed $(VERSION) in $(INSTALL_DIR)"

# Source tarball of what git tracks (with uncommitted changes to tracked
# files), plus a VERSION file that a build from the tarball reads.
dist:
	@git -C "$(TOP)" rev-parse --git-dir >/dev/null 2>&1 || \
	  { echo "make dist: needs the git clone (no .git in $(TOP))" >&2; exit 2; }
	@mkdir -p "$(B)/dist"
	@echo "$(VERSION)" > "$(B)/dist/VERSION"
	@ref=$$(git -C "$(TOP)" stash create); \
	  git -C "$(TOP)" archive --format=tar.gz --prefix=$(DIST_NAME)/ \
		--add-file="$(B)/dist/VERSION" -o "$(B)/dist/$(DIST_NAME).tar.gz" $${ref:-HEAD}
	@echo "$(B)/dist/$(DIST_NAME).tar.gz"

# make check: the tarball holds exactly the tracked files and its VERSION;
# an install from it (DESTDIR) lists and runs mmap_page through the
# installed runner.
check-dist:
	@mkdir -p "$(CHECK)"
	@"$(UP)/dist-check.sh" "$(CHECK)/dist.ktap"
