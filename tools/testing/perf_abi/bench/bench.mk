# SPDX-License-Identifier: GPL-2.0
#
# make bench-read: median ns per counter read through read() and through
# the user-page self-read (bench/read_bench.c), on the running kernel and
# in an arm64 guest (BENCH_READ_KERNEL), as a small table; also written to
# build/bench/read.txt.  Speed figures, not a pass/fail test: a SKIP line
# where there is no PMU.

BENCH_READ := $(B)/bench/read
BENCH_READ_SRC := $(M)/bench/read_bench.c
BENCH_READ_KERNEL ?= debian:6.12.118+deb12-arm64
BENCH_READ_CFLAGS := -Wall -Wextra -O2 -I"$(SUITE)" -I"$(FWSEL)"

.PHONY: bench-read

$(BENCH_READ)/read_bench-host: $(BENCH_READ_SRC) $(SUITE)/user_page.h
	@mkdir -p "$(@D)"
	@$(CC) $(BENCH_READ_CFLAGS) -o "$@" "$<"

# A one-program tree the guest's init runs as it runs a kselftest tree.
$(BENCH_READ)/arm64/run_kselftest.sh: $(BENCH_READ_SRC) $(SUITE)/user_page.h
	@"$(M)/deps.sh" vm
	@mkdir -p "$(@D)"
	@aarch64-linux-gnu-gcc $(BENCH_READ_CFLAGS) -static \
		-o "$(@D)/read_bench" "$<"
	@printf 'bench:read_bench\n' > "$(@D)/kselftest-list.txt"
	@printf '#!/bin/sh\ncd "$$(dirname "$$0")" && ./read_bench\n' > "$@"
	@chmod +x "$@"

bench-read: $(BENCH_READ)/read_bench-host $(BENCH_READ)/arm64/run_kselftest.sh
	@rm -rf "$(BENCH_READ)/out-arm64"
	@{ "$(BENCH_READ)/read_bench-host"; \
	  ./run_tests.sh --kernel $(BENCH_READ_KERNEL) --arch arm64 \
		--suite "$(BENCH_READ)/arm64" -o "$(BENCH_READ)/out-arm64" \
		>/dev/null 2>&1; \
	  cat "$(BENCH_READ)/out-arm64"/*.ktap 2>/dev/null | \
		grep -E '^(# bench-read|(not )?ok [0-9]+ bench-read)' || \
		echo "ok 2 bench-read arm64 # SKIP the guest did not run (see $(BENCH_READ)/out-arm64)"; \
	} | tee "$(B)/bench/read.txt"
