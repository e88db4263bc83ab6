#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Style and build checks of the upstreamable suite, as KTAP:
#   lint.sh FW OUT
# FW is the framework tree (build/ksft-7.3, the newest) whose checkpatch.pl
# is used; OUT receives the KTAP log.  Checked: every suite file with
# checkpatch --strict --no-tree, builds with gcc and clang under -Werror
# against its harness, and that git tracks no file of the kernel.
# clang-format is not a check: the kernel's .clang-format is advice, and
# its output differs from kernel style where the harness's macros name
# types (it writes "FIXTURE_DATA(page) * self") and in the case table.
set -u

fw=${1:?usage: lint.sh FW OUT}
out=${2:?usage: lint.sh FW OUT}
top=$(cd "$(dirname "$0")/../../.." && pwd)
suite=tools/testing/selftests/perf_events
cd "$top" || exit 2

n=0
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exec 3>"$out"
echo "TAP version 13" >&3

result() {	# NAME LOGFILE RC
	n=$((n + 1))
	if [ "$3" = 0 ]; then
		echo "ok $n lint: $1" >&3
	else
		sed -e 's/^/# /' "$2" >&3
		echo "not ok $n lint: $1" >&3
		fails=$((fails + 1))
	fi
}

files=$(git ls-files "$suite" 2>/dev/null)
[ -n "$files" ] || files=$(find "$suite" -type f | sort)

for f in $files; do
	perl "$fw/scripts/checkpatch.pl" --strict --no-tree --no-summary \
		--quiet -f "$f" >"$tmp/log" 2>&1
	rc=$?
	[ -s "$tmp/log" ] && rc=1
	result "checkpatch $f" "$tmp/log" $rc
done

make -s -C "$top" stage >"$tmp/stage.log" 2>&1
staged=$?
for cc in gcc clang; do
	llvm=
	[ $cc = clang ] && llvm=LLVM=1
	mkdir -p "$tmp/$cc"
	cp "$tmp/stage.log" "$tmp/log"
	[ $staged = 0 ] &&
	make -s -C "$fw/$suite" $llvm OUTPUT="$tmp/$cc" CPPFLAGS=-Werror \
		>>"$tmp/log" 2>&1
	rc=$?
	grep -q 'warning:' "$tmp/log" && rc=1
	result "build $cc with the harness of $(basename "$fw")" "$tmp/log" $rc
done

# The older harnesses a backport builds against (6.1, 6.12: their
# kselftest*.h from the cached tree, else from /usr/src's linux-source
# tarball, kept in the cache), each program with gcc and clang, -Wextra.
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}
progs=$(sed -n 's/^TEST_GEN_PROGS *+*:*= *//p' "$suite/Makefile")
khdr=
[ -d "$fw/usr/include" ] && khdr="-isystem $fw/usr/include"
for v in 6.1 6.12; do
	h=$cache/harness-$v
	t=$(ls -d "$cache/trees/linux-source-$v"/*/tools/testing/selftests 2>/dev/null | head -n 1)
	if [ ! -f "$h/kselftest_harness.h" ] && [ -n "$t" ]; then
		mkdir -p "$h" && cp "$t"/kselftest*.h "$h/"
	elif [ ! -f "$h/kselftest_harness.h" ] && [ -f "/usr/src/linux-source-$v.tar.xz" ]; then
		mkdir -p "$h" && tar -xJf "/usr/src/linux-source-$v.tar.xz" -C "$h" \
			--strip-components=4 --wildcards \
			"linux-source-$v/tools/testing/selftests/kselftest*.h"
	fi
	for cc in gcc clang; do
		noclob=
		[ "$cc" = gcc ] && noclob=-Wno-clobbered
		if [ ! -f "$h/kselftest_harness.h" ]; then
			n=$((n + 1))
			echo "ok $n lint: build $cc with the harness of $v # SKIP no linux-source-$v" >&3
			continue
		fi
		rm -rf "$tmp/h" && mkdir -p "$tmp/h/perf_events"
		cp "$h"/kselftest*.h "$tmp/h/" && cp "$suite"/*.[ch] "$tmp/h/perf_events/"
		: >"$tmp/log"
		rc=0
		for p in $progs; do
			# shellcheck disable=SC2086
			# -Wno-clobbered: 6.12's TEST_F wrapper keeps its
			# child variable across setjmp, which gcc 12 flags in
			# the harness's own lines (7.3's wrapper does not)
			$cc -Wall -Wextra -Wno-unused-parameter $noclob -O2 $khdr \
				-o "$tmp/h/$p" "$tmp/h/perf_events/$p.c" -lcap -lpthread \
				>>"$tmp/log" 2>&1 || rc=1
		done
		grep -q 'warning:' "$tmp/log" && rc=1
		result "build $cc with the harness of $v" "$tmp/log" $rc
	done
done

# No file of the kernel is committed: compare blob hashes.
: >"$tmp/log"
tracked=$(git ls-files -s 2>/dev/null | awk '{ print $2 }' | sort -u)
find "$fw" -type f ! -path '*/perf_events*' ! -name .ksft-stamp -print0 |
	xargs -0 git hash-object 2>/dev/null | sort -u >"$tmp/kernel"
comm -12 "$tmp/kernel" <(echo "$tracked") >"$tmp/log"
[ -s "$tmp/log" ]
result "git tracks no file of the kernel" "$tmp/log" $((1 - $?))

echo "1..$n" >&3
exec 3>&-
cat "$out"
[ $fails = 0 ]
