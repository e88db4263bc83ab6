#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The suite in a real kernel tree, the tree's own way (issue 10, section 1).
# Usage: run.sh [--ours-only] [--checkpatch] VER OUTDIR KTAP
#   VER: 5.10, 6.1, 6.12, 7.3 (tree.sh)
#   --ours-only: run_tests runs only our programs (TEST_GEN_PROGS given on
#   the make command line, as lib.mk would have made it); upstream's are
#   still built, installed and put in the tarball.
#   --checkpatch: the tree's checkpatch.pl --strict must find nothing (the
#   tree the series is sent against); otherwise its totals are only listed.
# On the cached pristine tree of linux-source-VER: write the patch series
# against it (series.py, with the kernel fixes that apply to it),
# checkpatch --strict each patch, make headers, git am it onto the
# pristine commit one patch at a time, building perf_events after each
# (each patch must build on its own, unchanged: no include is rewritten
# for an older tree), make -C tools/testing/selftests TARGETS=perf_events
# run_tests (upstream's tests and ours), the kselftest
# install and run_kselftest.sh -t perf_events:<each of ours> from there,
# gen_kselftest_tar.sh and, unpacked elsewhere, run_kselftest.sh -l and a
# run of our programs.  KTAP (kselftest runner format) goes to KTAP: our
# programs must pass or skip; upstream's own verdicts are listed as
# diagnostics, not counted.  Exit 0 when every step of ours passed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
ours_only=
cp_required=
while [ $# -gt 0 ]; do
	case $1 in
	--ours-only) ours_only=1; shift ;;
	--checkpatch) cp_required=1; shift ;;
	*) break ;;
	esac
done
if [ $# -ne 3 ]; then
	echo "usage: run.sh [--ours-only] [--checkpatch] VER OUTDIR KTAP" >&2
	exit 2
fi
ver=$1
out=$2
ktap=$3
suite=$top/tools/testing/selftests/perf_events
sel=tools/testing/selftests

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
steps=$out/steps.tsv
: > "$steps"
last=$(date +%s.%N)
step() {	# NAME VERDICT DETAIL: one line of steps.tsv, with its seconds
	local now
	now=$(date +%s.%N)
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" \
		"$(awk -v a="$now" -v b="$last" 'BEGIN { printf "%.1f", a - b }')" >> "$steps"
	last=$now
}
finish() {
	python3 "$here/report.py" "$ktap" "upstream-$ver" "$out"
	exit $?
}
t0=$(date +%s)

tree=$("$here/tree.sh" "$ver" 2> "$out/tree.log") || {
	step tree fail "$(tail -n 1 "$out/tree.log")"
	finish
}
echo "$tree" > "$out/tree"

# One run at a time per cached tree; the tree is reset to its pristine
# commit first (generated files under tools/testing/selftests removed; the
# installed headers in usr/include are kept: make headers refreshes them).
exec 8> "$tree/.git/perf-abi-run.lock"
flock 8
pristine=$(cat "$tree/.git/perf-abi-pristine")
g() { git -C "$tree" "$@"; }
g am --abort >/dev/null 2>&1
g checkout -q -f --detach "$pristine" && g clean -fdxq -- "$sel" || {
	step tree fail "cannot reset $tree to $pristine"
	finish
}
step tree pass "linux-source-$ver $(basename "$tree")"

# From and Signed-off-by: whoever runs this.  Where git knows nobody
# (a fresh machine's make check), the login and host, as git itself
# would derive them.
if ! git var GIT_AUTHOR_IDENT > /dev/null 2>&1; then
	export GIT_AUTHOR_NAME="$(id -un)" GIT_AUTHOR_EMAIL="$(id -un)@$(hostname)"
fi
if ! python3 "$here/series.py" --fixes "$here/../kernels/fixes" "$tree" "$suite" \
	"$here/series" "$out/series" "$pristine" > "$out/series.list" 2> "$out/series.log"; then
	step series fail "$(tail -n 1 "$out/series.log")"
	finish
fi
step series pass "$(grep -vc cover-letter "$out/series.list") patches and a cover letter"
while IFS= read -r note; do
	step "series note" info "$note"
done < "$out/series.log"
mapfile -t patches < <(grep -v '/0000-cover-letter.patch$' "$out/series.list")

for p in "${patches[@]}"; do
	n=$(basename "$p" | cut -c1-4)
	# Debian's python3 (python3-ply, python3-git) runs its SPDX check.
	# FILE_PATH_CHANGES asks whether MAINTAINERS needs the new files: no
	# entry lists tools/testing/selftests/perf_events, and the cover
	# letter says so.
	(cd "$tree" && PATH=/usr/bin:/bin:$PATH perl scripts/checkpatch.pl --strict \
		--ignore FILE_PATH_CHANGES "$p") > "$out/checkpatch-$n.log" 2>&1
	tot=$(grep '^total:' "$out/checkpatch-$n.log" | tail -n 1)
	# --strict prints the checks too: all three must be 0.
	if [[ $tot =~ ^total:\ 0\ errors,\ 0\ warnings,\ 0\ checks,\ [0-9]+\ lines ]]; then
		step "checkpatch $n" pass "${tot#total: }"
	elif [ -n "$cp_required" ]; then
		step "checkpatch $n" fail "${tot:-no total line} (see $out/checkpatch-$n.log)"
	else
		step "checkpatch $n" info "${tot:-no total line} (listed only: not the tree the series is sent against)"
	fi
done

if ! make -C "$tree" -s headers > "$out/headers.log" 2>&1; then
	step "make headers" fail "$(tail -n 1 "$out/headers.log")"
	finish
fi
step "make headers" pass "$(ls "$tree/usr/include/linux" | wc -l) uapi headers in usr/include"

for p in "${patches[@]}"; do
	n=$(basename "$p" | cut -c1-4)
	if ! g am -q "$p" > "$out/git-am-$n.log" 2>&1; then
		step "git am $n" fail "$(head -n 1 "$out/git-am-$n.log")"
		g am --abort >/dev/null 2>&1
		finish
	fi
	g diff --quiet HEAD~1 HEAD -- "$sel/perf_events" && continue
	# the programs this patch leaves, built as the tree builds them
	mkdir -p "$out/build-$n"
	make -C "$tree/$sel/perf_events" OUTPUT="$out/build-$n" > "$out/build-$n.log" 2>&1
	rc=$?
	w=$(grep -c 'warning:' "$out/build-$n.log")
	if [ $rc = 0 ]; then
		step "build after $n" pass "$w warnings"
	else
		step "build after $n" fail "$(grep -m1 'error' "$out/build-$n.log")"
	fi
done
step "git am" pass "${#patches[@]} patches on $(g log -1 --format=%h "$pristine")"

# Our programs: those whose source the series adds.
mapfile -t ours < <(g diff --name-only --diff-filter=A "$pristine" HEAD -- "$sel/perf_events/*.c" |
	sed -e 's|.*/||' -e 's|\.c$||')
printf '%s\n' "${ours[@]}" > "$out/ours"

only=()
if [ -n "$ours_only" ]; then
	only=("TEST_GEN_PROGS=${ours[*]/#/$tree/$sel/perf_events/}")
	step "upstream's tests" info "not run here (--ours-only)"
fi
make -C "$tree/$sel" TARGETS=perf_events run_tests "${only[@]}" 2>&1 |
	cat > "$out/run_tests.log"
step "run_tests" log "run_tests.log"

inst=$out/install
if make -C "$tree/$sel" TARGETS=perf_events install INSTALL_PATH="$inst" \
	> "$out/install.log" 2>&1 && [ -x "$inst/run_kselftest.sh" ]; then
	step install pass "INSTALL_PATH=$inst"
	for p in "${ours[@]}"; do
		# Through a pipe: the runner reopens /dev/stdout, which on a
		# plain file would write over its own lines.
		(cd "$inst" && ./run_kselftest.sh -t "perf_events:$p") 2>&1 |
			cat > "$out/run_kselftest-$p.log"
		step "run_kselftest.sh -t perf_events:$p" log "run_kselftest-$p.log"
	done
else
	step install fail "$(tail -n 1 "$out/install.log")"
fi

# The tarball, the tree's way: gen_kselftest_tar.sh (its make sees
# TARGETS as if given on the command line, as the README of kselftest
# says for TARGETS).
rm -f "$tree/$sel/kselftest.tar"
if (cd "$tree/$sel" && MAKEFLAGS="TARGETS=perf_events" ./gen_kselftest_tar.sh tar) \
	> "$out/gen_tar.log" 2>&1 && [ -s "$tree/$sel/kselftest.tar" ]; then
	mv "$tree/$sel/kselftest.tar" "$out/kselftest.tar"
	mkdir -p "$out/unpacked"
	tar -xf "$out/kselftest.tar" -C "$out/unpacked"
	kdir=$(dirname "$(find "$out/unpacked" -name run_kselftest.sh | head -n 1)")
	step gen_kselftest_tar.sh pass "$(du -k "$out/kselftest.tar" | cut -f1) KiB, $(tar -tf "$out/kselftest.tar" | wc -l) members"
	(cd "$kdir" && ./run_kselftest.sh -l) > "$out/tar-list.log" 2>&1
	missing=
	for p in "${ours[@]}"; do
		grep -qx "perf_events:$p" "$out/tar-list.log" || missing="$missing $p"
	done
	if [ -z "$missing" ]; then
		step "tarball run_kselftest.sh -l" pass "lists $(wc -l < "$out/tar-list.log") programs, ours among them"
	else
		step "tarball run_kselftest.sh -l" fail "does not list:$missing"
	fi
	args=()
	for p in "${ours[@]}"; do
		args+=(-t "perf_events:$p")
	done
	(cd "$kdir" && ./run_kselftest.sh "${args[@]}") 2>&1 | cat > "$out/tar-run.log"
	step "tarball run_kselftest.sh" log "tar-run.log"
else
	step gen_kselftest_tar.sh fail "$(tail -n 1 "$out/gen_tar.log")"
fi

# Leave the cached tree pristine for the next user.
g checkout -q -f --detach "$pristine"
g clean -fdxq -- "$sel"
step seconds info "$(($(date +%s) - t0))"
finish
