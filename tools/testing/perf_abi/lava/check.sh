#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's LAVA stage: run the jobs of run_tests.sh --lava-job end to end
# with LAVA's own dispatcher (lava-run from Debian's lava-dispatcher, no
# server) and compare their results with a direct run of the same kernel.
#
#   check.sh OUT.ktap WORKDIR
#
# For each kernel of LAVA_CHECK_KERNELS (default: an x86_64 and an arm64
# Debian kernel), with the test program LAVA_CHECK_TEST (default rdpmc):
#   - ./run_tests.sh --lava-job writes the job; lava.py validate checks it
#     against lava_common's job schema, as a lab's server does;
#   - the device dictionary (qemu-perf-abi.jinja2, no_kvm) is rendered with
#     the device-type templates of lava-server's package (apt-get download,
#     dpkg-deb -x, cached) and the job's context, as lava-server does;
#   - lava-run runs the job (qemu under TCG) and logs to stderr; its
#     results are the YAML lines at lvl "results";
#   - ./run_tests.sh --kernel SPEC -t PROG --sysctl ... boots the same kernel
#     directly, with the settings the test definition makes;
#   - lava.py compare: every name in both, the same verdict in both.
# OUT.ktap has one result per kernel, the comparison nested under it.
# Every boot runs under the shared lock $PERF_ABI_LOCK
# (default /tmp/perf-abi-heavy.lock).
set -u

here=$(cd "$(dirname "$0")" && pwd)
m=$(dirname "$here")
top=$(cd "$m/../../.." && pwd)
out=${1:?usage: check.sh OUT.ktap WORKDIR}
work=${2:?usage: check.sh OUT.ktap WORKDIR}
cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}
lock=${PERF_ABI_LOCK:-/tmp/perf-abi-heavy.lock}
kernels=${LAVA_CHECK_KERNELS:-debian:6.1.0-57-cloud-amd64 debian:6.12.118+deb12-arm64}
prog=${LAVA_CHECK_TEST:-rdpmc}
# lava-run and the libraries it needs are Debian's: the system python.
py=/usr/bin/python3

bail() {	# REASON: the whole stage failed before any job ran
	printf 'TAP version 13\n1..1\n# %s\nnot ok 1 selftests: lava: setup\n' "$1" > "$out"
	echo "lava: $1" >&2
	exit 1
}

if [ "$(id -u)" != 0 ]; then
	# lava-run works in /var/lib/lava and runs as root.
	printf 'TAP version 13\n1..1\nok 1 selftests: lava: lava-run # SKIP needs root\n' > "$out"
	exit 0
fi
"$m/deps.sh" lava >&2 || bail "deps.sh lava failed"
command -v lava-run >/dev/null || bail "lava-run not found (package lava-dispatcher)"

rm -rf "$work"
mkdir -p "$work"

# lava-server's device-type templates, of the dispatcher's own version.
ver=$(dpkg-query -W -f='${Version}' lava-dispatcher)
types=$cache/lava-server-$ver/usr/share/lava-server/device-types
if [ ! -f "$types/qemu.jinja2" ]; then
	tmp=$(mktemp -d "$cache/.lava-server.XXXXXX")
	if ! (cd "$tmp" && apt-get download -q "lava-server=$ver" >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get download -q "lava-server=$ver" >/dev/null; }); then
		rm -rf "$tmp"
		bail "apt-get download lava-server=$ver failed"
	fi
	dpkg-deb -x "$tmp"/lava-server_*.deb "$tmp/x" || { rm -rf "$tmp"; bail "dpkg-deb -x lava-server failed"; }
	rm -rf "$cache/lava-server-$ver"
	mv "$tmp/x" "$cache/lava-server-$ver"
	rm -rf "$tmp"
fi
[ -f "$types/qemu.jinja2" ] || bail "lava-server $ver has no qemu.jinja2"

locked() {	# STAMP CMD...: CMD under the lock, its start time in STAMP
	local stamp=$1
	shift
	flock "$lock" /bin/sh -c 'date +%s%N > "$0"; exec "$@"' "$stamp" "$@"
}

n=0 fail=0
: > "$work/body"
for spec in $kernels; do
	n=$((n + 1))
	d=$work/$n
	mkdir -p "$d"
	t0=$(date +%s%N)
	why=
	job=$("$top/run_tests.sh" --lava-job "$d/jobs" --kernel "$spec" -t "$prog" 2>"$d/lava-job.err") ||
		why="run_tests.sh --lava-job failed: $(tail -n 1 "$d/lava-job.err")"
	label=$(basename "${job:-$spec}" .yaml)
	arch=$(sed -n 's/^  arch: "\(.*\)"$/\1/p' "${job:-/dev/null}" 2>/dev/null | head -n 1)
	if [ -z "$why" ] && ! $py "$here/lava.py" validate "$job" 2>"$d/validate.err"; then
		why="the job does not pass lava_common's schema: $(tail -n 1 "$d/validate.err")"
	fi
	if [ -z "$why" ] && ! $py "$here/lava.py" device "$types" "$here/qemu-perf-abi.jinja2" \
		"$job" > "$d/device.yaml" 2>"$d/device.err"; then
		why="the device dictionary did not render: $(tail -n 1 "$d/device.err")"
	fi
	t1=$(date +%s%N)
	if [ -z "$why" ]; then
		# A job id of its own: lava-run works in /var/lib/lava/dispatcher/tmp/ID.
		locked "$d/t1" timeout --kill-after=10 600 lava-run \
			--job-id "perf-abi-$$-$n" --output-dir "$d/out" \
			--device "$d/device.yaml" "$job" >"$d/lava-run.out" 2>"$d/lava-run.log"
		rc=$?
		[ "$rc" = 0 ] || why="lava-run exited with $rc (log: $d/lava-run.log)"
	fi
	t2=$(date +%s%N)
	if [ -z "$why" ]; then
		# The paranoid level the test definition sets (perf_events.yaml's
		# PARANOID); user access the agree tests turn on as root.
		locked "$d/t2" "$top/run_tests.sh" --kernel "$spec" -t "$prog" -o "$d/direct" \
			--sysctl kernel.perf_event_paranoid=2 \
			>/dev/null 2>"$d/direct.err"
		rc=$?
		if [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$rc" != 1 ]; then
			why="the direct run failed (exit $rc): $(head -n 1 "$d/direct.err")"
		elif [ ! -f "$d/direct/$label.ktap" ]; then
			why="the direct run left no $label.ktap"
		fi
	fi
	t3=$(date +%s%N)
	# the seconds each boot took, not its wait for the lock
	[ -s "$d/t1" ] && t1=$(cat "$d/t1")
	[ -s "$d/t2" ] && t2x=$(cat "$d/t2") || t2x=$t2
	secs() { printf '%d.%d' $((($2 - $1) / 1000000000)) $((($2 - $1) / 100000000 % 10)); }
	{
		echo "# selftests: lava: $label"
		if [ -z "$why" ]; then
			$py "$here/lava.py" compare "$d/lava-run.log" "$d/direct/$label.ktap" "$label" \
				> "$d/compare.ktap" 2>"$d/compare.err"
			rc=$?
			[ -s "$d/compare.ktap" ] || echo "not ok 1 compare # $(tail -n 1 "$d/compare.err")" > "$d/compare.ktap"
			echo "# $label ($arch) -t $prog: lava-run $(secs "$t1" "$t2") s, direct run $(secs "$t2x" "$t3") s"
			sed -e 's/^/# /' "$d/compare.ktap"
			if [ "$rc" = 0 ]; then
				echo "ok $n selftests: lava: $label"
			else
				echo "not ok $n selftests: lava: $label # exit=1 LAVA and direct verdicts differ"
				fail=1
			fi
		else
			echo "# $why"
			echo "not ok $n selftests: lava: $label # exit=1"
			echo "lava: $label: $why" >&2
			fail=1
		fi
	} >> "$work/body"
done
{
	echo "TAP version 13"
	echo "1..$n"
	cat "$work/body"
} > "$out"
grep -E '^# [^#]+ -t .*lava-run' "$out" | sed 's/^# /lava: /' >&2
exit $fail
