# SPDX-License-Identifier: GPL-2.0
#
# mmap_page's case table (tools/testing/perf_abi/attrspace, issue 13).
#   make check-attrspace   regenerate the table and diff it with the
#                          suite's page_cases.h; count its coverage with the
#                          independent checker; and show that the checker
#                          rejects a table missing a case
#   make attrspace         rewrite page_cases.h from the model
#   make attrspace-cover KTAP=FILE   the pairs a run's SKIPs left uncovered

AS := $(M)/attrspace
AS_HDR := $(SUITE)/page_cases.h

CHECK_STAGES += attrspace

.PHONY: attrspace check-attrspace attrspace-cover

attrspace:
	@python3 "$(AS)/gen.py" "$(AS_HDR)"

attrspace-cover:
	@python3 "$(AS)/cover.py" "$(AS_HDR)" --ktap "$(KTAP)"

check-attrspace:
	@mkdir -p "$(CHECK)/attrspace"
	@d="$(CHECK)/attrspace"; n=0; fail=0; exec 3>"$(CHECK)/attrspace.ktap"; \
	echo "TAP version 13" >&3; \
	res() { n=$$((n + 1)); if [ "$$2" = 0 ]; then echo "ok $$n attrspace: $$1" >&3; \
	  else sed 's/^/# /' "$$d/log" >&3; echo "not ok $$n attrspace: $$1" >&3; fail=1; fi; }; \
	python3 "$(AS)/gen.py" "$$d/page_cases.h" >"$$d/log" 2>&1 && \
	  diff -u "$(AS_HDR)" "$$d/page_cases.h" >>"$$d/log" 2>&1; \
	res "page_cases.h is what gen.py generates" $$?; \
	python3 "$(AS)/cover.py" "$(AS_HDR)" >"$$d/log" 2>&1; rc=$$?; \
	sed 's/^/# /' "$$d/log" >&3; res "cover.py: every pair and triple covered" $$rc; \
	awk '/^FIXTURE_VARIANT_ADD/ && ++k == 2 { skip = 1 } !skip { print } skip && /^};/ { skip = 0 }' \
		"$(AS_HDR)" > "$$d/short.h"; \
	python3 "$(AS)/cover.py" "$$d/short.h" >"$$d/log" 2>&1; rc=$$?; \
	grep -q '^uncovered: ' "$$d/log"; res "cover.py rejects the table without its second case" $$(( rc == 0 || $$? )); \
	echo "1..$$n" >&3; exec 3>&-; cat "$(CHECK)/attrspace.ktap"; exit $$fail
