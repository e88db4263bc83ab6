# SPDX-License-Identifier: GPL-2.0
#
# make bench-host: how long the suite's programs take on the running
# kernel (target: both programs under 1 s), the median of
# BENCH_HOST_RUNS runs of each program alone, then the time of each test
# of one mmap_page run and the slowest BENCH_HOST_SLOWEST of them:
# where the time goes.  Figures in build/bench/host.txt; not a pass/fail
# test (a program that fails is reported, and the target exits 1).

BENCH_HOST_RUNS ?= 5
BENCH_HOST_SLOWEST ?= 8

.PHONY: bench-host

bench-host:
	@$(MAKE) --no-print-directory -s install-host
	@mkdir -p "$(B)/bench"
	@python3 "$(M)/bench/host.py" "$(B)/install-host/perf_events" \
	  $(BENCH_HOST_RUNS) $(BENCH_HOST_SLOWEST) | tee "$(B)/bench/host.txt.tmp"; \
	  rc=$${PIPESTATUS[0]}; mv "$(B)/bench/host.txt.tmp" "$(B)/bench/host.txt"; exit $$rc
