#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The patch series (upstream/series.py) on crafted kernel trees, without a
# real one: a tree whose perf_events/ holds another test (its Makefile with
# CFLAGS, LDFLAGS, settings timeout=300), and a tree with no perf_events/
# and a lib.mk without KHDR_INCLUDES (as 5.10).  The series must apply with
# git am to a fresh copy of each, a kernel fix that applies first and one
# that does not left out, keep their lines, give our flags to our programs
# only (make evaluates the merged Makefile over a stand-in lib.mk), keep
# the larger timeout and leave MAINTAINERS alone.  Each patch must build
# on its own with gcc -Wall -Wextra -Werror against the harness of
# KSFT_SELFTESTS (make check's framework), and the first must not carry
# the read loop or the knob.  To and Cc come from get_maintainer.pl
# without keywords, From and Signed-off-by from whoever runs it, counts
# from the code; a placeholder left or no identity exits 2 with one line.
# Prints KTAP; exit 1 on failure.
set -u

top=$(cd "$(dirname "$0")/../../../.." && pwd)
series=$top/tools/testing/perf_abi/upstream/series.py
suite=$top/tools/testing/selftests/perf_events
msgs=$top/tools/testing/perf_abi/upstream/series
tmp=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$tmp"' EXIT

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
	printf '#!/usr/bin/perl\nprint "A <a\\@example.org> (maintainer:PERFORMANCE EVENTS SUBSYSTEM)\\n";\nprint "list\\@example.org (open list:PERF)\\n";\nprint "K <k\\@example.org> (keyword:riscv)\\n" unless grep { $_ eq "--no-keywords" } @ARGV;\n' \
		> "$d/scripts/get_maintainer.pl"
	mkdir -p "$d/arch/x86/events"
	printf 'int x86_pmu;\n' > "$d/arch/x86/events/core.c"
	if [ -n "${KSFT_SELFTESTS:-}" ]; then
		cp "$KSFT_SELFTESTS"/kselftest*.h "$d/tools/testing/selftests/"
	fi
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

# Two kernel fixes: one applies to the crafted trees, one does not.
mkdir -p "$tmp/fixes"
cat > "$tmp/fixes/0001-perf-x86-a-fix.patch" <<'PATCH'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Someone Else <else@example.org>
Subject: [PATCH] perf/x86: A fix
 that is folded

Why the fix.

Signed-off-by: Someone Else <else@example.org>
---
 arch/x86/events/core.c | 1 +
 1 file changed, 1 insertion(+)

diff --git a/arch/x86/events/core.c b/arch/x86/events/core.c
--- a/arch/x86/events/core.c
+++ b/arch/x86/events/core.c
@@ -1 +1,2 @@
 int x86_pmu;
+int fixed;
-- 
2.39.5
PATCH
sed -e 's/A fix/Another fix/' -e 's/^ int x86_pmu;/ int arm_pmu;/' \
	"$tmp/fixes/0001-perf-x86-a-fix.patch" > "$tmp/fixes/0002-perf-x86-another.patch"

export GIT_AUTHOR_NAME='Test Author' GIT_AUTHOR_EMAIL=author@example.org
for kind in merged new; do
	t=$tmp/$kind
	if [ $kind = merged ]; then mktree "$t" 1 1; else mktree "$t" 0 0; fi
	base=$(git -C "$t" rev-parse HEAD)
	python3 "$series" --fixes "$tmp/fixes" "$t" "$suite" "$msgs" "$tmp/out-$kind" \
		> "$tmp/list-$kind" 2> "$tmp/err-$kind"
	ok $? "$kind: series.py writes the series"
	grep -q 'Subject: \[PATCH 1/[0-9]\] perf/x86: A fix that is folded' "$tmp/out-$kind/0001-"*.patch &&
		! grep -q 'Someone Else' "$tmp/out-$kind/0001-"*.patch &&
		grep -q '0002-perf-x86-another.patch does not apply' "$tmp/err-$kind" &&
		! grep -rq 'Another fix' "$tmp/out-$kind"
	ok $? "$kind: the fix that applies comes first, signed off by the author; the other is left out"
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
	grep -q '^This series adds ' "$tmp/out-$kind/0000-cover-letter.patch" &&
		! grep -q '\*\*\* .* HERE \*\*\*' "$tmp/out-$kind/0000-cover-letter.patch"
	ok $? "$kind: the cover letter has its text"
	git -C "$tmp/am-$kind" diff --quiet "$base" HEAD -- MAINTAINERS
	ok $? "$kind: MAINTAINERS is left alone"
	for f in $patches "$tmp/out-$kind/0000-cover-letter.patch"; do
		grep -q '^To: A <a@example.org>$' "$f" && grep -q '^Cc: list@example.org$' "$f" &&
			! grep -q 'k@example.org' "$f" && ! grep -q '@[A-Z][A-Z]*@' "$f" || echo "# $f"
	done > "$tmp/hdr"
	[ ! -s "$tmp/hdr" ]
	ok $? "$kind: To and Cc from get_maintainer.pl, no keyword match, no placeholder"
	nc=$(grep -c '^FIXTURE_VARIANT_ADD(page,' "$suite/page_cases.h")
	grep -q "The $nc cases" $patches
	ok $? "$kind: the case count is the table's ($nc)"
	# Each patch builds on its own, and carries only what it uses.
	if [ -n "${KSFT_SELFTESTS:-}" ]; then
		: > "$tmp/builds"
		for c in $(git -C "$tmp/am-$kind" rev-list --reverse "$base..HEAD"); do
			git -C "$tmp/am-$kind" checkout -q "$c"
			for src in "$p"/*.c; do
				[ -f "$src" ] && [ "$(basename "$src")" != theirs.c ] || continue
				gcc -Wall -Wextra -Wno-unused-parameter -Werror -O2 \
					-I"$tmp/am-$kind/tools/testing/selftests" -o "$tmp/prog" "$src" \
					-lcap -lpthread > "$tmp/cc" 2>&1 ||
					{ echo "# $(git -C "$tmp/am-$kind" log -1 --format=%s) $(basename "$src")"; sed 's/^/# /' "$tmp/cc" | head -5; }
			done >> "$tmp/builds"
		done
		cat "$tmp/builds"
		[ ! -s "$tmp/builds" ]
		ok $? "$kind: each patch builds on its own, -Wextra -Werror"
		first=$(git -C "$tmp/am-$kind" log --reverse --format=%H --grep='user page ABI' "$base..HEAD" | head -n 1)
		git -C "$tmp/am-$kind" show "$first:tools/testing/selftests/perf_events/user_page.h" > "$tmp/h1"
		! grep -q 'up_self_read\|up_knobs_lock\|up_hw_counter\|<glob.h>' "$tmp/h1" &&
			grep -q 'up_check_size' "$tmp/h1"
		ok $? "$kind: the page ABI patch's user_page.h has no read loop and no knob"
		git -C "$tmp/am-$kind" checkout -q -
	else
		n=$((n + 1)); echo "ok $n $kind: each patch builds on its own # SKIP no KSFT_SELFTESTS"
		n=$((n + 1)); echo "ok $n $kind: the page ABI patch carries no read loop # SKIP no KSFT_SELFTESTS"
	fi
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

# No identity at all: series.py refuses, rather than sign with a
# placeholder (the tree's own identity is no one's).
mktree "$tmp/noid" 0 0
git -C "$tmp/noid" config user.name 'Tree Own'
git -C "$tmp/noid" config user.email tree@localhost
mkdir -p "$tmp/home"
(cd "$tmp" && env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL -u EMAIL HOME="$tmp/home" \
	XDG_CONFIG_HOME="$tmp/home" GIT_CONFIG_NOSYSTEM=1 \
	python3 "$series" "$tmp/noid" "$suite" "$msgs" "$tmp/out-noid" > /dev/null 2> "$tmp/err-noid")
rc=$?
if git -C "$tmp" -c user.useConfigOnly=false var GIT_AUTHOR_IDENT > /dev/null 2>&1 &&
	(cd "$tmp" && env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL -u EMAIL HOME="$tmp/home" \
		XDG_CONFIG_HOME="$tmp/home" GIT_CONFIG_NOSYSTEM=1 git var GIT_AUTHOR_IDENT > /dev/null 2>&1); then
	# git derives one from the login and host here: that is whoever runs it
	[ $rc = 0 ] && ! grep -q 'Tree Own' "$tmp/out-noid"/*.patch
else
	[ $rc = 2 ] && [ "$(wc -l < "$tmp/err-noid")" = 1 ] && grep -q 'no author identity' "$tmp/err-noid"
fi
ok $? "no git identity: not the tree's; exit 2 where git knows none"

# A message with a placeholder series.py does not know.
cp -r "$msgs" "$tmp/msgs"
echo 'Counts: @NOSUCH@.' >> "$tmp/msgs/2-user-reads.msg"
python3 "$series" "$tmp/merged" "$suite" "$tmp/msgs" "$tmp/o2" > /dev/null 2> "$tmp/err"
[ $? = 2 ] && [ "$(wc -l < "$tmp/err")" = 1 ] && grep -q '@NOSUCH@' "$tmp/err"
ok $? "a placeholder left: exit 2, one line"

echo "1..$n"
exit $fail
