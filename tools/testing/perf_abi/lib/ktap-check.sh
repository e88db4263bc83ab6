#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check-ktap: our KTAP reader against the kernel's, our JUnit against
# our KTAP, on crafted broken KTAP, a host run and a guest run:
#   ktap-check.sh SRC KUNIT OUT [GUEST_SPEC]
# SRC: the kernel tree or linux-source tarball (tools/testing/kunit is
# taken from it into KUNIT); OUT receives the KTAP (runner format).
# GUEST_SPEC (default debian:6.1.0-57-cloud-amd64) boots once with rdpmc:
# the guest's KTAP, JUnit and console (the progress vm/init logs in one
# stream with the kernel's messages, no kernel splat); then twice with a
# crafted suite whose test WARNs (a WARNING line through /dev/kmsg) or
# crashes the kernel (sysrq c).  Exit 1 on failure.
set -u
src=${1:?usage: ktap-check.sh SRC KUNIT OUT [GUEST_SPEC]}
kunit=${2:?usage: ktap-check.sh SRC KUNIT OUT [GUEST_SPEC]}
out=${3:?usage: ktap-check.sh SRC KUNIT OUT [GUEST_SPEC]}
guest=${4:-debian:6.1.0-57-cloud-amd64}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../../.." && pwd)
xc=$here/ktap_xcheck.py

# The kernel's KTAP parser: tools/testing/kunit of SRC, at the same path
# under KUNIT (kunit.py finds the tree it is in from its own path).
kd=tools/testing/kunit
if [ ! -f "$kunit/$kd/kunit.py" ]; then
	rm -rf "$kunit.tmp"
	mkdir -p "$kunit.tmp/$kd"
	if [ -d "$src" ]; then
		cp -a "$src/$kd/." "$kunit.tmp/$kd/" 2>/dev/null
	else
		t=$(tar -tJf "$src" | head -n 1 | cut -d/ -f1)
		tar -xJf "$src" -C "$kunit.tmp" --strip-components=1 "$t/$kd" 2>/dev/null
	fi
	[ -f "$kunit.tmp/$kd/kunit.py" ] || { echo "ktap-check.sh: no $kd/kunit.py in $src" >&2; exit 2; }
	rm -rf "$kunit" && mv "$kunit.tmp" "$kunit"
fi
kunit=$kunit/$kd

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 fails=0
step() {	# NAME CMD...: one top-level result, the command's output nested
	local name=$1 rc
	shift
	n=$((n + 1))
	echo "# selftests: ktap: $name"
	"$@" > "$tmp/log" 2>&1
	rc=$?
	grep -q '^not ok' "$tmp/log" && rc=1
	sed -e 's/^/# /' "$tmp/log"
	if [ "$rc" = 0 ]; then
		echo "ok $n selftests: ktap: $name"
	else
		echo "not ok $n selftests: ktap: $name # exit=$rc"
		fails=$((fails + 1))
	fi
}

crafted() {
	python3 "$xc" kunit "$kunit" "$top"/tools/testing/perf_abi/unit/ktap/*.ktap
}

host() {	# a host run: its KTAP and JUnit, and the full host KTAP of make check
	local rc=0 f
	"$top/run_tests.sh" -t rdpmc --ktap "$tmp/host.ktap" --junit "$tmp/host.xml" \
		> "$tmp/host.out" 2>&1 || rc=$?
	echo "TAP version 13"
	echo "1..3"
	[ "$rc" = 0 ] || [ "$rc" = 4 ] || { sed -e 's/^/# /' "$tmp/host.out" | tail -n 20; }
	f=$top/build/check/host.ktap
	[ -s "$f" ] || f=$tmp/host.ktap
	python3 "$xc" kunit "$kunit" "$tmp/host.ktap" "$f" > "$tmp/x" 2>&1 &&
		echo "ok 1 kunit.py agrees on the host KTAP" ||
		{ sed -e 's/^/# /' "$tmp/x"; echo "not ok 1 kunit.py agrees on the host KTAP"; }
	python3 "$xc" junit "$kunit" "$tmp/host.xml" "$tmp/host.ktap" > "$tmp/x" 2>&1 &&
		{ sed -e 's/^/# /' "$tmp/x"; echo "ok 2 --junit against --ktap (host)"; } ||
		{ sed -e 's/^/# /' "$tmp/x"; echo "not ok 2 --junit against --ktap (host)"; }
	# -t naming no test is not a pass
	rc=0
	"$top/run_tests.sh" -t rdpmc:no_such_test > "$tmp/none.out" 2>&1 || rc=$?
	if [ "$rc" != 0 ] && ! grep -q ' [1-9][0-9]* passed' "$tmp/none.out"; then
		echo "ok 3 -t naming no test: exit $rc, nothing passed"
	else
		sed -e 's/^/# /' "$tmp/none.out" | tail -n 5
		echo "not ok 3 -t naming no test: exit $rc"
	fi
}

guest() {	# one guest: KTAP, JUnit, console progress, no splat
	local rc=0 d=$tmp/guest runs ktapruns
	"$top/run_tests.sh" --kernel "$guest" -t rdpmc -o "$d" \
		--ktap "$tmp/guest.ktap" --junit "$tmp/guest.xml" > "$tmp/guest.out" 2>&1 || rc=$?
	echo "TAP version 13"
	echo "1..4"
	if [ "$rc" = 0 ] || [ "$rc" = 4 ]; then
		echo "ok 1 $guest: run_tests.sh exit $rc"
	else
		sed -e 's/^/# /' "$tmp/guest.out" | tail -n 20
		echo "not ok 1 $guest: run_tests.sh exit $rc"
	fi
	python3 "$xc" kunit "$kunit" "$tmp/guest.ktap" > "$tmp/x" 2>&1 &&
		echo "ok 2 kunit.py agrees on the guest KTAP" ||
		{ sed -e 's/^/# /' "$tmp/x"; echo "not ok 2 kunit.py agrees on the guest KTAP"; }
	python3 "$xc" junit "$kunit" "$tmp/guest.xml" "$tmp/guest.ktap" > "$tmp/x" 2>&1 &&
		{ sed -e 's/^/# /' "$tmp/x"; echo "ok 3 --junit against --ktap (guest)"; } ||
		{ sed -e 's/^/# /' "$tmp/x"; echo "not ok 3 --junit against --ktap (guest)"; }
	# The guest logged every test's start and result on the console, in
	# order, and the kernel did not splat.
	runs=$(cat "$d"/*.console 2>/dev/null | tr -d '\r' | grep -c 'perf_abi: # #  RUN ')
	ktapruns=$(grep -c '^# #  RUN ' "$tmp/guest.ktap")
	if [ "$runs" = "$ktapruns" ] && [ "$runs" -gt 0 ] && ! ls "$d"/*.splats.json >/dev/null 2>&1; then
		echo "ok 4 the console holds the $runs RUN lines of the KTAP, no kernel splat"
	else
		ls "$d" | sed -e 's/^/# /'
		echo "not ok 4 console: $runs RUN lines of $ktapruns, splats: $(cat "$d"/*.splats.json 2>/dev/null | head -c 300)"
	fi
}

splat() {	# the same guest, with a suite whose tests make kernel splats
	local d=$tmp/splat-suite t rc
	mkdir -p "$d/warn" "$d/crash"
	cp -a "$top/build/install-x86_64/run_kselftest.sh" "$top/build/install-x86_64/kselftest" "$d/"
	printf 'warn:warn.sh\ncrash:crash.sh\n' > "$d/kselftest-list.txt"
	# A WARNING line as the kernel prints it, written to /dev/kmsg by the
	# test (no kernel WARN()s on demand), then a real crash (sysrq c).
	# The sleeps give the guest's progress logger time to log each RUN
	# line first: what is tested is the console's reading, not the race.
	cat > "$d/warn/warn.sh" <<'SH'
#!/bin/sh
echo "TAP version 13"
echo "1..2"
echo "#  RUN           splat.ok ..."
echo "ok 1 splat.ok"
echo "#  RUN           splat.warn ..."
sleep 1
echo "<4>WARNING: CPU: 0 PID: $$ at injected/by/the/test.c:1 ktap_check+0x0/0x1" > /dev/kmsg
echo "<4>Call Trace:" > /dev/kmsg
echo "<4>---[ end trace 0000000000000000 ]---" > /dev/kmsg
sleep 1
echo "ok 2 splat.warn"
SH
	cat > "$d/crash/crash.sh" <<'SH'
#!/bin/sh
echo "TAP version 13"
echo "1..2"
echo "#  RUN           splat.ok ..."
echo "ok 1 splat.ok"
echo "#  RUN           splat.crash ..."
sleep 1
echo c > /proc/sysrq-trigger
sleep 5
echo "ok 2 splat.crash"
SH
	chmod 755 "$d/warn/warn.sh" "$d/crash/crash.sh"
	echo "TAP version 13"
	echo "1..2"
	rc=0
	"$top/run_tests.sh" --kernel "$guest" --suite "$d" -t warn.sh -o "$tmp/warn" \
		--junit "$tmp/warn.xml" > "$tmp/warn.out" 2>&1 || rc=$?
	t=/dev/null
	for f in "$tmp/warn"/*.ktap; do [ "${f##*/}" = report.ktap ] || [ ! -f "$f" ] || t=$f; done
	if [ "$rc" = 1 ] && grep -q 'kernel splat during warn.sh:splat.warn: WARNING: CPU: 0' "$tmp/warn.out" &&
	   grep -q '^# ok 2 splat.warn' "$t" && grep -q 'kernel splat during warn.sh:splat.warn' "$tmp/warn.xml"; then
		echo "ok 1 a WARNING fails the run (exit 1), names warn.sh:splat.warn, keeps the results"
	else
		sed -e 's/^/# /' "$tmp/warn.out" | tail -n 20
		echo "not ok 1 a WARNING fails the run: exit $rc"
	fi
	rc=0
	"$top/run_tests.sh" --kernel "$guest" --suite "$d" -t crash.sh -o "$tmp/crash" \
		> "$tmp/crash.out" 2>&1 || rc=$?
	t=/dev/null
	for f in "$tmp/crash"/*.ktap; do [ "${f##*/}" = report.ktap ] || [ ! -f "$f" ] || t=$f; done
	if [ "$rc" = 3 ] && grep -q 'kernel broke: .* while running crash.sh:splat.crash' "$tmp/crash.out" &&
	   grep -q '^# ok 1 splat.ok' "$t" && grep -q '^Bail out!' "$t"; then
		echo "ok 2 a crash (sysrq c) exits 3, names crash.sh:splat.crash, keeps splat.ok"
	else
		sed -e 's/^/# /' "$tmp/crash.out" | tail -n 20
		sed -e 's/^/# ktap: /' "$t"
		echo "not ok 2 a crash keeps the results: exit $rc"
	fi
}

{
	echo "TAP version 13"
	echo "1..$([ -z "${KTAP_CHECK_NO_GUEST:-}" ] && echo 4 || echo 2)"
	step "kunit.py parse on crafted KTAP" crafted
	step "host --ktap --junit" host
	if [ -z "${KTAP_CHECK_NO_GUEST:-}" ]; then	# (only to try the rest)
		step "guest --ktap --junit, console" guest
		step "guest kernel splats" splat
	fi
} > "$out"
cat "$out"
python3 "$here/ktap.py" total "$out" >/dev/null
