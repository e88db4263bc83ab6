# SPDX-License-Identifier: GPL-2.0
#
# The unit tests cross-built for a big-endian target and run under
# qemu-user: the capability bits are a C bitfield, whose layout on s390x
# starts at bit 63, and every crafted page is built through bitfields in
# the target's layout.  Included by the top Makefile.
#
#   check-unit-s390x  build/check/unit-s390x.ktap (also part of make unit)

UNIT_CROSS_ARCHES ?= s390x
UNIT_CROSS_CC_s390x := s390x-linux-gnu-gcc
UNIT_CROSS_RUN_s390x := qemu-s390x-static
UNIT_CROSS_SRCS := $(filter-out %_test.sh,$(UNIT_SRCS))

CHECK_STAGES += $(UNIT_CROSS_ARCHES:%=unit-%)
.PHONY: $(UNIT_CROSS_ARCHES:%=check-unit-%)

unit: $(UNIT_CROSS_ARCHES:%=check-unit-%)

$(B)/unit-%/.built: $(UNIT_CROSS_SRCS) $(UNIT_HDR) $(STAGE)/.staged
	@"$(M)/deps.sh" cross
	@mkdir -p "$(@D)"
	@for src in $(UNIT_CROSS_SRCS); do \
	  $(UNIT_CROSS_CC_$*) $(UNIT_CFLAGS) -static \
	    -o "$(@D)/$$(basename "$$src" .c)" "$$src" -lpthread || exit 1; \
	done
	@touch $@

# Each test binary runs through a wrapper that starts it under qemu-user.
$(UNIT_CROSS_ARCHES:%=check-unit-%): check-unit-%: stage
	@$(MAKE) --no-print-directory $(B)/unit-$*/.built
	@mkdir -p "$(CHECK)"
	@for src in $(UNIT_CROSS_SRCS); do \
	  t=$$(basename "$$src" .c); \
	  printf '#!/bin/sh\nexec %s "$$(dirname "$$0")/%s" "$$@"\n' \
	    "$(UNIT_CROSS_RUN_$*)" "$$t" > "$(B)/unit-$*/$$t-$*"; \
	  chmod +x "$(B)/unit-$*/$$t-$*"; \
	done
	@"$(M)/lib/ktap-run.sh" "$(CHECK)/unit-$*.ktap" \
	  $(patsubst $(M)/unit/%.c,$(B)/unit-$*/%-$*,$(UNIT_CROSS_SRCS))
