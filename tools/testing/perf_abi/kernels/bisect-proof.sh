#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's proof of bisect.sh: a synthetic git history made from the
# pristine linux-source-6.12 tree, in which one commit breaks the user
# page (mutants/04-size-zero.patch with its fault made unconditional) and
# an earlier one breaks the build; `git bisect run bisect.sh` must skip
# that one (exit 125) and name the faulty commit.  Writes KTAP to OUT.
#
#   bisect-proof.sh [--arch A] OUT
#
# The history is made once and kept in $PERF_ABI_CACHE/bisect-6.12/
# (remade when the tarball, this script or the patch change); each
# commit's kernel is cached by kernels/build.sh, so a warm run only boots.
set -u

here=$(cd "$(dirname "$0")" && pwd)
m=$(cd "$here/.." && pwd)
top=$(cd "$m/../../.." && pwd)
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}
tarball=${PERF_ABI_BISECT_SRC:-/usr/src/linux-source-6.12.tar.xz}
patch=$m/mutants/04-size-zero.patch
arch=x86_64
if [ "${1:-}" = --arch ]; then
	arch=${2:?}
	shift 2
fi
out=${1:?usage: bisect-proof.sh [--arch A] OUT}
: > "$out"
n=0
ktap() { echo "$*" >> "$out"; }
ok() { n=$((n + 1)); ktap "ok $n selftests: bisect: $1"; }
notok() { n=$((n + 1)); ktap "not ok $n selftests: bisect: $1"; }
finish() {
	{ echo "TAP version 13"; echo "1..$n"; cat "$out"; } > "$out.tmp"
	mv "$out.tmp" "$out"
	exit "$1"
}

[ -f "$tarball" ] || { notok "no $tarball (tools/testing/perf_abi/deps.sh kernel)"; finish 1; }
repo=$cache/bisect-6.12
# The history is remade when what makes it changes, not for any edit here.
id=$( { stat -c '%n %s %Y' "$tarball"; sed -n '/^# --- history/,/^# --- end/p' "$0"; cat "$patch"; } |
	sha256sum | cut -c1-16)
g() { git -C "$repo" -c user.name=perf-abi -c user.email=perf-abi@localhost "$@"; }
commit() { g add -f -A . && g commit -q -m "$1"; }

mkdir -p "$cache/bisect"
t0=$(date +%s)
# --- history
if [ "$(cat "$repo/.git/perf-abi-id" 2>/dev/null)" != "$id" ]; then
	echo "bisect-proof: making the synthetic history in $repo" >&2
	src=$(stat -c '%n %s %Y' "$tarball")
	if [ "$(cat "$repo/.git/perf-abi-src" 2>/dev/null)" = "$src" ]; then
		# Same pristine tree: new commits on its root commit, so only
		# the files they touch get new mtimes (builds stay incremental).
		g bisect reset -q >/dev/null 2>&1
		g checkout -q -f -B proof "$(g rev-list --max-parents=0 HEAD)" ||
			{ notok "cannot reset $repo"; finish 1; }
	else
		rm -rf "$repo" "$repo.tmp"
		mkdir -p "$repo.tmp"
		tar -xJf "$tarball" -C "$repo.tmp" --strip-components=1 || { notok "cannot extract $tarball"; finish 1; }
		mv "$repo.tmp" "$repo"
		# Debian's tarball ends its .gitignore with /*: git add -f.
		g init -q -b proof && commit "pristine linux-source-6.12" || { notok "git init failed"; finish 1; }
		echo "$src" > "$repo/.git/perf-abi-src"
	fi
	sed -i '1a /* perf_abi bisect proof: a harmless change */' "$repo/kernel/events/ring_buffer.c"
	commit "perf: a harmless comment"
	# The mutant, unconditional: drop its `if (perf_abi_mutant_is(...))`
	# line, move its body out one tab and recount the hunk.
	python3 - "$patch" > "$repo/.git/fault.patch" <<'EOF'
import re, sys
out, hunk = [], None
lines = open(sys.argv[1]).read().split('\n')
i = 0
while i < len(lines):
    l = lines[i]
    if l.startswith('+') and 'perf_abi_mutant_is(' in l and l.lstrip('+\t ').startswith('if'):
        i += 1
        out.append('+' + lines[i][2:])
        h = out[hunk]
        m = re.match(r'@@ -(\d+),(\d+) \+(\d+),(\d+) @@(.*)', h)
        out[hunk] = '@@ -%s,%s +%s,%d @@%s' % (m.group(1), m.group(2), m.group(3), int(m.group(4)) - 1, m.group(5))
    else:
        if l.startswith('@@'):
            hunk = len(out)
        out.append(l)
    i += 1
print('\n'.join(out), end='')
EOF
	# Second of four candidates, so that git bisect tests it first.
	echo '#error "perf_abi bisect proof: this commit does not build"' >> "$repo/kernel/events/ring_buffer.c"
	commit "perf: a commit that does not build"
	sed -i '$d' "$repo/kernel/events/ring_buffer.c"
	commit "perf: build again"
	patch -s -p1 -d "$repo" < "$repo/.git/fault.patch" || { notok "the unconditional size-zero fault does not apply"; finish 1; }
	commit "perf: userpg->size is 0 (the size-zero mutant, unconditional)"
	fault=$(g rev-parse HEAD)
	sed -i '1a /* perf_abi bisect proof: another harmless change */' "$repo/kernel/events/ring_buffer.c"
	commit "perf: another harmless comment"
	echo "$fault" > "$repo/.git/perf-abi-fault"
	echo "$id" > "$repo/.git/perf-abi-id"
fi
# --- end
fault=$(cat "$repo/.git/perf-abi-fault")
good=$(g rev-list --max-parents=0 HEAD)
g bisect reset -q >/dev/null 2>&1
g checkout -q proof
ok "synthetic history: $(g rev-list --count HEAD) commits, fault at ${fault:0:12} ($(( $(date +%s) - t0 ))s)"

# The base as a tree: kernel, built (or cached) and booted like any SPEC.
t1=$(date +%s)
g checkout -q "$good"
rc=0
"$top/run_tests.sh" --kernel "tree:$repo" --arch "$arch" -t 'mmap_page:page.*' \
	-o "$cache/bisect/proof-tree" > "$cache/bisect/proof-tree.log" 2>&1 || rc=$?
g checkout -q proof
if [ "$rc" = 0 ]; then
	ok "tree: kernel ($(grep '^perf_events on' "$cache/bisect/proof-tree.log" | tail -n 1 | sed 's/^perf_events on //'), $(( $(date +%s) - t1 ))s)"
else
	notok "tree: kernel exit $rc (log: $cache/bisect/proof-tree.log)"
fi

t2=$(date +%s)
log=$cache/bisect/proof-bisect.log
{
	g bisect start HEAD "$good" &&
	g bisect run "$m/bisect.sh" --arch "$arch" -t 'mmap_page:page.*'
} > "$log" 2>&1
first=$(sed -nE 's/^([0-9a-f]{40}) is the first bad commit$/\1/p' "$log")
steps=$(grep -c '^bisect.sh: .*: \(good\|bad\|does not build\|did not boot\)' "$log")
g bisect reset -q >/dev/null 2>&1
grep '^bisect.sh: ' "$log" | grep -v ': building\|: booting' | sed 's/^/# /' >> "$out"
if [ "$first" = "$fault" ] && ! grep -q ': does not build: skip' "$log"; then
	notok "git bisect run never met the commit that does not build (log: $log)"
	finish 1
fi
if [ "$first" = "$fault" ]; then
	ok "git bisect run names the faulty commit ${fault:0:12} ($steps steps, $(( $(date +%s) - t2 ))s)"
	finish 0
fi
notok "git bisect run named '${first:-nothing}', not ${fault:0:12} (log: $log)"
finish 1
