# SPDX-License-Identifier: GPL-2.0
#
# Guests: make check's vm stage, make matrix and make bench-vm.  Included by
# the top Makefile; everything runs through ./run_tests.sh.
#
#   check-vm    boot VM_CHECK_KERNELS (an x86_64 and an arm64 Debian kernel)
#               with the whole suite and VM_CHECK_SYSCTLS (user reads on,
#               upstream's paranoid, Yama's strictest ptrace_scope), then
#               VM_SHIPPED_KERNEL as shipped (no --sysctl) with rdpmc, as
#               root and as uid VM_SHIPPED_USER; build/check/vm.ktap holds
#               one result per guest with the guest's tests nested under it
#   check-vm-arches  the other architectures, only the cases that differ
#               by architecture (VM_CHECK_ARCHES: SPEC=PROG[:TEST] pairs;
#               the guests sharing a selection boot as one matrix); one
#               build/check/vm-arches-PROG[-TEST].ktap per selection
#   check-vm-32bit  the 32-bit programs (make install-i386, install-armhf)
#               as compat tasks of the vm stage's two kernels
#               (VM_CHECK_32BIT) with VM_CHECK_SYSCTLS;
#               build/check/vm-32bit.ktap holds one result per guest,
#               named LABEL+i386 and LABEL+armhf
#   check-vm-knob-pairs  two runs of rdpmc at once, 0 to 1000 ms apart,
#               on VM_SHIPPED_KERNEL as root (vm/knob_pairs.sh): the knob
#               back after every pair, no FAIL, nothing left running
#   matrix      ./run_tests.sh --matrix (kernels/matrix.list, every
#               architecture, the whole suite) into a new run directory in MATRIX_OUT
#   bench-vm    seconds for one x86_64 and one arm64 boot + suite and for
#               the default matrix with a warm cache (build/bench/vm.txt)

VM_CHECK_KERNELS ?= debian:6.1.0-57-cloud-amd64 debian:6.12.118+deb12-arm64
VM_BENCH_X86_64 ?= debian:6.1.0-57-cloud-amd64
VM_BENCH_ARM64 ?= debian:6.12.118+deb12-arm64
MATRIX_LIST ?= $(M)/kernels/matrix.list
MATRIX_OUT ?= $(TOP)/out
# (no perf_user_access: the agree tests turn it on as root themselves)
VM_CHECK_SYSCTLS ?= kernel.perf_event_paranoid=2 kernel.yama.ptrace_scope=3
VM_SHIPPED_KERNEL ?= debian:6.12.118+deb12-arm64
VM_SHIPPED_USER ?= 65534
VM_CHECK_OUT := $(B)/vm-check
# What differs by architecture: s390x is big-endian (the capability bits
# of every page), ppc64le-64k and arm64-16k have other page sizes (the
# data area, buffer sizes: mmap_page), riscv64 has its own counter reader
# (rdpmc).
# Exact versions the mirror serves (the lists name newer s390x ones).
# (ppc64le-64k is in make matrix only: on 2026-12-05 the archive's
# ppc64el lists were mid-sync and its kernel did not download.)
VM_CHECK_ARCHES ?= debian:6.12.113+deb13-s390x=mmap_page \
	debian:6.12.118+deb13-arm64-16k=mmap_page \
	debian:6.12.118+deb13-riscv64=rdpmc

VM_CHECK_32BIT ?= $(addprefix compat:,$(VM_CHECK_KERNELS))

CHECK_STAGES += vm vm-arches vm-32bit vm-knob-pairs
.PHONY: check-vm check-vm-arches check-vm-32bit check-vm-knob-pairs bench-vm $(addprefix vm-helpers-,$(GUEST_ARCHES))

# The guest's helpers in /usr/bin (vm/initramfs.sh), static for ARCH:
# privrun (vm/privrun.c, with libcap as the suite links it: run_tests.sh
# --privilege, --cells, --user) and sibling (soak/sibling.c:
# perf_abi.sibling=N).
$(addprefix vm-helpers-,$(GUEST_ARCHES)): vm-helpers-%: $(B)/privrun-% $(B)/sibling-%

$(B)/privrun-%: $(M)/vm/privrun.c
	@$(if $(DEPS_$*),"$(M)/deps.sh" $(DEPS_$*))
	@$(if $(SYSROOT_$*),$(MAKE) --no-print-directory "$(SYSROOT_$*)/.done")
	@mkdir -p "$(B)"
	@$(CROSS_$*)gcc -static -O2 -Wall -Wextra -Werror $(LIBCAP_$*) \
		-o "$@.tmp" "$<" -lcap && mv "$@.tmp" "$@"

$(B)/sibling-%: $(M)/soak/sibling.c
	@$(if $(DEPS_$*),"$(M)/deps.sh" $(DEPS_$*))
	@mkdir -p "$(B)"
	@$(CROSS_$*)gcc -static -O2 -Wall -Wextra -Werror -o "$@.tmp" "$<" && mv "$@.tmp" "$@"

check-vm:
	@mkdir -p "$(CHECK)" "$(B)"
	@printf '%s\n' $(VM_CHECK_KERNELS) > "$(B)/vm-check.list"
	@rm -rf "$(VM_CHECK_OUT)" "$(VM_CHECK_OUT)-shipped" "$(VM_CHECK_OUT)-shipped-user"
	@./run_tests.sh --matrix "$(B)/vm-check.list" --output "$(VM_CHECK_OUT)" \
	    $(addprefix --sysctl ,$(VM_CHECK_SYSCTLS)); echo $$? > "$(B)/vm-check.rc"
	@./run_tests.sh --kernel $(VM_SHIPPED_KERNEL) -t rdpmc --label shipped-root \
	    --output "$(VM_CHECK_OUT)-shipped" >/dev/null 2>"$(B)/vm-check-shipped.err"; \
	  echo $$? > "$(B)/vm-check-shipped.rc"
	@./run_tests.sh --kernel $(VM_SHIPPED_KERNEL) -t rdpmc --label shipped-uid$(VM_SHIPPED_USER) \
	    --user $(VM_SHIPPED_USER) --output "$(VM_CHECK_OUT)-shipped-user" \
	    >/dev/null 2>"$(B)/vm-check-shipped-user.err"; \
	  echo $$? > "$(B)/vm-check-shipped-user.rc"
	@k="$(VM_CHECK_OUT)-shipped/shipped-root.ktap"; r="not ok"; \
	  grep -qx '# after the run: /proc/sys/kernel/perf_user_access = 0' "$$k" && \
	  [ "$$(grep -Ec '^# ok [0-9]+ agree\.[a-z0-9_]+$$' "$$k")" -ge 6 ] && \
	  ! grep -Eq '^# not ok [0-9]+ agree\.' "$$k" && r=ok; \
	  printf 'TAP version 13\n1..1\n%s 1 selftests: vm: arm64 as shipped, root: agree.* pass, perf_user_access back to 0\n' \
	    "$$r" > "$(CHECK)/vm-shipped.ktap"; [ "$$r" = ok ] || grep -E "agree|after the run" "$$k" || true
	@python3 "$(M)/vm/merge_reports.py" --known "$(M)/kernels/known-bugs" "$(CHECK)/vm.ktap" \
	  "$(VM_CHECK_OUT)" $$(cat "$(B)/vm-check.rc") \
	  "$(VM_CHECK_OUT)-shipped" $$(cat "$(B)/vm-check-shipped.rc") \
	  "$(VM_CHECK_OUT)-shipped-user" $$(cat "$(B)/vm-check-shipped-user.rc")

check-vm-arches:
	@mkdir -p "$(CHECK)" "$(B)"
	@rm -rf "$(B)/vm-arches" "$(CHECK)"/vm-arches-*.ktap
	@fail=0; \
	  for t in $$(printf '%s\n' $(VM_CHECK_ARCHES) | sed 's/.*=//' | sort -u); do \
	    n=$$(echo "$$t" | tr ':' '-'); out="$(B)/vm-arches/$$n"; \
	    mkdir -p "$$out"; \
	    printf '%s\n' $(VM_CHECK_ARCHES) | sed -n "s/=$$t\$$//p" > "$$out.list"; \
	    ./run_tests.sh --matrix "$$out.list" -t "$$t" --output "$$out"; \
	    rc=$$?; \
	    if [ -f "$$out/report.ktap" ]; then \
	      cp "$$out/report.ktap" "$(CHECK)/vm-arches-$$n.ktap"; \
	    else \
	      printf 'TAP version 13\n1..1\nnot ok 1 selftests: vm-arches: %s # exit=%d\n' \
	        "$$t" $$rc > "$(CHECK)/vm-arches-$$n.ktap"; \
	    fi; \
	    [ $$rc = 0 ] || fail=1; \
	  done; \
	  exit $$fail

check-vm-32bit:
	@mkdir -p "$(CHECK)" "$(B)"
	@rm -rf "$(B)/vm-32bit" "$(CHECK)/vm-32bit.ktap"
	@printf '%s\n' $(VM_CHECK_32BIT) > "$(B)/vm-32bit.list"
	@./run_tests.sh --matrix "$(B)/vm-32bit.list" --output "$(B)/vm-32bit" \
	    $(addprefix --sysctl ,$(VM_CHECK_SYSCTLS)); rc=$$?; \
	  if [ -f "$(B)/vm-32bit/report.ktap" ]; then \
	    cp "$(B)/vm-32bit/report.ktap" "$(CHECK)/vm-32bit.ktap"; \
	  else \
	    printf 'TAP version 13\n1..1\nnot ok 1 selftests: vm-32bit: compat tasks # exit=%d\n' \
	      $$rc > "$(CHECK)/vm-32bit.ktap"; \
	  fi; \
	  [ $$rc = 0 ] || [ $$rc = 4 ]

KNOB_PAIRS_SUITE := $(B)/knob-pairs-suite
check-vm-knob-pairs: install-arm64
	@mkdir -p "$(CHECK)"
	@rm -rf "$(KNOB_PAIRS_SUITE)" "$(B)/knob-pairs" "$(CHECK)/vm-knob-pairs.ktap"
	@cp -a "$(B)/install-arm64" "$(KNOB_PAIRS_SUITE)"
	@mkdir -p "$(KNOB_PAIRS_SUITE)/perf_abi"
	@cp "$(M)/vm/knob_pairs.sh" "$(KNOB_PAIRS_SUITE)/perf_abi/"
	@echo perf_abi:knob_pairs.sh >> "$(KNOB_PAIRS_SUITE)/kselftest-list.txt"
	@./run_tests.sh --kernel $(VM_SHIPPED_KERNEL) --suite "$(KNOB_PAIRS_SUITE)" \
	    -t knob_pairs.sh --label knob-pairs --output "$(B)/knob-pairs"; rc=$$?; \
	  if [ -f "$(B)/knob-pairs/report.ktap" ]; then \
	    cp "$(B)/knob-pairs/report.ktap" "$(CHECK)/vm-knob-pairs.ktap"; \
	  else \
	    printf 'TAP version 13\n1..1\nnot ok 1 selftests: vm-knob-pairs # exit=%d\n' \
	      $$rc > "$(CHECK)/vm-knob-pairs.ktap"; \
	  fi; \
	  [ $$rc = 0 ]

matrix:
	@./run_tests.sh --matrix "$(MATRIX_LIST)" -o "$(MATRIX_OUT)"

# Warm first (kernels fetched, suites built, initramfs cached: not timed),
# then time a boot alone (perf_abi.test=none: the guest runs no test), a
# boot with the whole suite per architecture, and the default matrix; the
# figures go to build/bench/vm.txt, the matrix table follows.  A boot's
# time is qemu's, from start to exit (bench/qemu_time.sh stands in for
# it); the whole ./run_tests.sh command's is given beside it.
bench-vm:
	@mkdir -p "$(B)/bench"
	@for s in $(VM_BENCH_X86_64) $(VM_BENCH_ARM64) \
	    $$(sed -e 's/#.*//' "$(MATRIX_LIST)"); do \
	  "$(M)/kernels/image.sh" "$$s" >/dev/null || exit 2; \
	done
	@set -e; out="$(B)/bench/vm.txt"; : > "$$out.tmp"; \
	  export BENCH_QEMU_MS="$(B)/bench/qemu.ms"; \
	  t() { local t0=$$(date +%s%N); rm -f "$$BENCH_QEMU_MS"; \
	    "$$@" >/dev/null 2>&1 || true; \
	    echo $$(( ($$(date +%s%N) - t0) / 1000000 )) $$(cat "$$BENCH_QEMU_MS" 2>/dev/null); }; \
	  med() { t "$$@" >/dev/null; { t "$$@"; t "$$@"; t "$$@"; } > "$(B)/bench/runs"; \
	    for c in 1 2; do cut -d' ' -f$$c "$(B)/bench/runs" | sort -n | sed -n 2p; done; }; \
	  s() { printf '%d.%01d s' $$(($$1 / 1000)) $$(($$1 % 1000 / 100)); }; \
	  load=$$(cut -d' ' -f1 /proc/loadavg); \
	  for k in "x86_64 $(VM_BENCH_X86_64) 3500 1200" "arm64 $(VM_BENCH_ARM64) 10000 4400"; do \
	    read -r a kern target share <<<"$$k"; \
	    q=QEMU_$${a^^}; export BENCH_QEMU=$$(awk '$$1 == "qemu" { print $$2 }' "$(M)/vm/qemu/$$a.conf"); \
	    { read -r boot; read -r qboot; } < <(med env "$$q=$(M)/bench/qemu_time.sh" \
	      ./run_tests.sh --kernel "$$kern" --append perf_abi.test=none); \
	    { read -r all; read -r qall; } < <(med env "$$q=$(M)/bench/qemu_time.sh" \
	      ./run_tests.sh --kernel "$$kern"); \
	    printf 'bench-vm: %s %s (median of 3): qemu boots alone in %s, boots and runs the suite in %s (target <= %s), the suite %s (target <= %s); ./run_tests.sh %s and %s\n' \
	      $$a "$$kern" "$$(s $$qboot)" "$$(s $$qall)" "$$(s $$target)" \
	      "$$(s $$((qall - qboot)))" "$$(s $$share)" "$$(s $$boot)" "$$(s $$all)" | tee -a "$$out.tmp"; \
	  done; \
	  ms=$$(t ./run_tests.sh --matrix "$(MATRIX_LIST)" | cut -d' ' -f1); \
	  printf 'bench-vm: matrix of %d kernels, warm cache: %s (target <= 180 s)\n' \
	    $$(sed -e 's/#.*//' "$(MATRIX_LIST)" | grep -c .) "$$(s $$ms)" | tee -a "$$out.tmp"; \
	  printf 'bench-vm: %d CPUs, load average %s at the start\n' $$(nproc) $$load | tee -a "$$out.tmp"; \
	  mv "$$out.tmp" "$$out"
	@cat "$(B)/logs/matrix/latest/table.md"
