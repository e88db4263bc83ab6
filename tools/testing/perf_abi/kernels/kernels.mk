# SPDX-License-Identifier: GPL-2.0
#
# Kernels from source trees (issue 11).
#   make bisect-proof   a tree: kernel and `git bisect run bisect.sh` on a
#                       synthetic linux-source-6.12 history
#                       (build/check/bisect.ktap).  Not a make check stage:
#                       its cold tree build alone is a third of CI's time,
#                       and it proves nothing new unless kernels/ or the
#                       runner change; run it then, as make soak is run.

.PHONY: bisect-proof check-bisect
bisect-proof: check-bisect
check-bisect:
	@mkdir -p "$(CHECK)"
	@"$(M)/deps.sh" kernel >/dev/null 2>&1; \
	  "$(M)/kernels/bisect-proof.sh" "$(CHECK)/bisect.ktap"; rc=$$?; \
	  sed -n 's/^\(not \)\{0,1\}ok [0-9]* selftests: bisect: /bisect: /p' "$(CHECK)/bisect.ktap"; \
	  exit $$rc
