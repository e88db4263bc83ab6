#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch series (upstream/series.py) on crafted kernel trees, without a
# real one: a tree whose perf_events/ holds another test (its Makefile with
# CFLAGS, LDFLAGS, settings timeout=300), and a tree with no perf_events/
# and a lib.mk without KHDR_INCLUDES (as 5.10).  The series must apply with
# git am to a fresh copy of each, keep their lines, give our flags to our
# programs only (make evaluates the merged Makefile over a stand-in lib.mk),
# keep the larger timeout and list the new files in MAINTAINERS in order.
# Bad input exits 2 with one line.  Prints KTAP; exit 1 on failure.
set -u

top=$(cd "$(dirname "$0")/../../../.." && pwd)
series=$top/tools/testing/perf_abi/upstream/series.py
suite=$top/tools/testing/selftests/perf_events
msgs=$top/tools/testing/perf_abi/upstream/series
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
fail=0
ok() {	# COND-EXIT NAME
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fail=1
	fi
}

# A tree: lib.mk stand-in that prefixes OUTPUT as the real one does and
# prints the flags make would use for a program.
mktree() {	# DIR WITH_PERF_EVENTS(0/1) KHDR(0/1)
	local d=$1
	mkdir -p "$d/tools/testing/selftests" "$d/scripts"
	{
		echo 'OUTPUT ?= $(CURDIR)'
		[ "$3" = 1 ] && echo 'KHDR_INCLUDES ?= -isystem $(top_srcdir)/usr/include'
		echo 'TEST_GEN_PROGS := $(patsubst %,$(OUTPUT)/%,$(TEST_GEN_PROGS))'
		echo 'all: $(TEST_GEN_PROGS)'
		echo '$(OUTPUT)/%:'
		echo '	@echo "$(notdir $@): CFLAGS=$(CFLAGS) LDLIBS=$(LDLIBS)"'
	} > "$d/tools/testing/selftests/lib.mk"
	printf 'PERFORMANCE EVENTS SUBSYSTEM\nM:\tA <a@example.org>\nF:\tkernel/events/*\nF:\ttools/perf/\n\nZZZ\nF:\tzzz/\n' \
		> "$d/MAINTAINERS"
	printf '#!/usr/bin/perl\nprint "A <a\\@example.org> (maintainer:PERFORMANCE EVENTS SUBSYSTEM)\\n";\n' \
		> "$d/scripts/get_maintainer.pl"
	printf 'VERSION = 9\nPATCHLEVEL = 9\nSUBLEVEL = 0\n' > "$d/Makefile"
	if [ "$2" = 1 ]; then
		local p=$d/tools/testing/selftests/perf_events
		mkdir -p "$p"
		printf '# SPDX-License-Identifier: GPL-2.0\nCFLAGS += -Wl,-no-as-needed -Wall $(KHDR_INCLUDES)\nLDFLAGS += -lpthread\n\nTEST_GEN_PROGS := theirs\ninclude ../lib.mk\n' > "$p/Makefile"
		printf '# SPDX-License-Identifier: GPL-2.0-only\ntheirs\n' > "$p/.gitignore"
		printf 'CONFIG_PERF_EVENTS=y\nCONFIG_THEIRS=y\n' > "$p/config"
		printf 'timeout=300\n' > "$p/settings"
		printf 'int main(void) { return 0; }\n' > "$p/theirs.c"
	fi
	git -C "$d" init -q -b pristine
	git -C "$d" add -f -A .
	git -C "$d" -c user.name=t -c user.email=t@localhost commit -q -m pristine
}

export GIT_AUTHOR_NAME='Test Author' GIT_AUTHOR_EMAIL=author@example.org
for kind in merged new; do
	t=$tmp/$kind
	if [ $kind = merged ]; then mktree "$t" 1 1; else mktree "$t" 0 0; fi
	base=$(git -C "$t" rev-parse HEAD)
	python3 "$series" "$t" "$suite" "$msgs" "$tmp/out-$kind" > "$tmp/list-$kind" 2> "$tmp/err-$kind"
	ok $? "$kind: series.py writes the series"
	[ "$(git -C "$t" status --porcelain | wc -l)" = 0 ] && [ "$(git -C "$t" rev-parse HEAD)" = "$base" ]
	ok $? "$kind: the tree's files and HEAD are untouched"
	patches=$(grep -v 0000-cover "$tmp/list-$kind")
	git clone -q "$t" "$tmp/am-$kind"
	# shellcheck disable=SC2086
	git -C "$tmp/am-$kind" -c user.name=t -c user.email=t@localhost am -q $patches 2> "$tmp/am-err"
	ok $? "$kind: git am applies it to a fresh copy"
	p=$tmp/am-$kind/tools/testing/selftests/perf_events
	flags=$(make -s -C "$p" -f Makefile top_srcdir=/top all 2>&1)
	echo "$flags" | sed 's/^/# /'
	for prog in $(sed -n 's/^TEST_GEN_PROGS[^=]*= *//p' "$suite/Makefile"); do
		echo "$flags" | grep -q "^$prog: CFLAGS=.*-Wextra"
		ok $? "$kind: make builds $prog with our flags"
	done
	grep -q 'Signed-off-by: Test Author <author@example.org>' $patches
	ok $? "$kind: patches are signed off by the author"
	grep -q 'A <a@example.org> (maintainer:PERFORMANCE EVENTS SUBSYSTEM)' "$tmp/out-$kind/0000-cover-letter.patch" &&
		! grep -q '\*\*\* .* HERE \*\*\*' "$tmp/out-$kind/0000-cover-letter.patch"
	ok $? "$kind: the cover letter has its text and get_maintainer.pl's lines"
	awk '/^PERFORMANCE EVENTS SUBSYSTEM/,/^$/' "$tmp/am-$kind/MAINTAINERS" | sed -n 's/^F:\t//p' > "$tmp/f"
	sort -c "$tmp/f" && grep -q '^tools/testing/selftests/perf_events/' "$tmp/f"
	ok $? "$kind: MAINTAINERS lists the new files, F: lines in order"
	if [ $kind = merged ]; then
		echo "$flags" | grep -q '^theirs: CFLAGS=-Wl,-no-as-needed -Wall -isystem /top/usr/include LDLIBS=$'
		ok $? "merged: their program builds with their flags only"
		grep -qx 'TEST_GEN_PROGS := theirs' "$p/Makefile" && grep -qx theirs "$p/.gitignore" &&
			grep -qx CONFIG_THEIRS=y "$p/config" && [ -f "$p/theirs.c" ]
		ok $? "merged: their Makefile, .gitignore and config lines stay"
		[ "$(grep -c '^CONFIG_PERF_EVENTS=' "$p/config")" = 1 ]
		ok $? "merged: config names CONFIG_PERF_EVENTS once"
		[ "$(cat "$p/settings")" = timeout=300 ]
		ok $? "merged: settings keeps their larger timeout"
	else
		grep -q -- '-isystem ../../../../usr/include/' "$p/Makefile"
		ok $? "new: without KHDR_INCLUDES the tree's usr/include is named"
		cmp -s "$p/settings" "$suite/settings"
		ok $? "new: settings is ours"
	fi
done

python3 "$series" "$tmp/nonexistent" "$suite" "$msgs" "$tmp/o" > /dev/null 2> "$tmp/err"
rc=$?
[ $rc = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] && [ ! -e "$tmp/o" ]
ok $? "bad tree: exit 2, one line, no output"

# Issue 28, row 19: no git identity but the tree's own (make check on a
# fresh machine, where tree.sh gives the cached tree one).
mktree "$tmp/noid" 0 0
git -C "$tmp/noid" config user.name 'Tree Own'
git -C "$tmp/noid" config user.email tree@localhost
mkdir -p "$tmp/home"
(cd "$tmp" && env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL HOME="$tmp/home" \
	XDG_CONFIG_HOME="$tmp/home" GIT_CONFIG_NOSYSTEM=1 \
	python3 "$series" "$tmp/noid" "$suite" "$msgs" "$tmp/out-noid" > "$tmp/list-noid" 2> "$tmp/err-noid") &&
	grep -q 'Signed-off-by: Tree Own <tree@localhost>' "$tmp/out-noid/0001-"*.patch
ok $? "no git identity but the tree's own: series.py uses the tree's"

echo "1..$n"
exit $fail
