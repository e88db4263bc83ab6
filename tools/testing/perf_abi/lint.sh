#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Style and build checks of the upstreamable suite, as KTAP:
#   lint.sh FW OUT
# FW is the framework tree (build/ksft-7.3, the newest) whose checkpatch.pl
# and .clang-format are used; OUT receives the KTAP log.  Checked: every
# suite file with checkpatch --strict --no-tree, every C file with
# clang-format, builds with gcc and clang under -Werror against its harness,
# and that git tracks no file of the kernel.
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

for f in $files; do
	case $f in *.c|*.h) ;; *) continue ;; esac
	clang-format --style="file:$fw/.clang-format" "$f" | diff -u "$f" - \
		>"$tmp/log" 2>&1
	result "clang-format $f" "$tmp/log" $?
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
