# SPDX-License-Identifier: GPL-2.0
#
# Kernels from source trees (issue 11).
#   make check-bisect   a tree: kernel and `git bisect run bisect.sh` on a
#                       synthetic linux-source-6.12 history, as a make
#                       check stage (build/check/bisect.ktap)

CHECK_STAGES += bisect

.PHONY: check-bisect
check-bisect:
	@mkdir -p "$(CHECK)"
	@"$(M)/deps.sh" kernel >/dev/null 2>&1; \
	  "$(M)/kernels/bisect-proof.sh" "$(CHECK)/bisect.ktap"; rc=$$?; \
	  sed -n 's/^\(not \)\{0,1\}ok [0-9]* selftests: bisect: /bisect: /p' "$(CHECK)/bisect.ktap"; \
	  exit $$rc
