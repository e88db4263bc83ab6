#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the perf user-page ABI selftests through the real kselftest runner and
# report KTAP, a one-line summary and the kselftest exit code (0 pass,
# 1 fail, 4 all skipped; 2 for bad usage).
set -u

top=$(cd "$(dirname "$0")" && pwd)
m=$top/tools/testing/perf_abi

usage() {
	cat <<'USAGE'
Usage: ./run_tests.sh [OPTIONS]
Run the perf_events user-page ABI selftests on the running kernel.

  -t, --test NAME     run one test program (mmap_page, rdpmc), or one TEST
                      as PROG:TEST (e.g. mmap_page:size_matches_header;
                      single TESTs need a 6.12 or newer kselftest harness)
  -l, --log FILE      also write the KTAP output to FILE
  -h, --help          show this help
Exit status: 0 all passed, 1 a test failed, 4 every test skipped,
2 bad usage or a missing dependency.
USAGE
}

die() {
	echo "run_tests.sh: $*" >&2
	exit 2
}

test_name=
log=
while [ $# -gt 0 ]; do
	case $1 in
	-t|--test)
		[ $# -ge 2 ] || die "$1 needs a test name (try --help)"
		test_name=$2
		shift 2 ;;
	-l|--log)
		[ $# -ge 2 ] || die "$1 needs a file name (try --help)"
		log=$2
		shift 2 ;;
	-h|--help)
		usage
		exit 0 ;;
	*)
		echo "run_tests.sh: unknown option '$1'" >&2
		usage >&2
		exit 2 ;;
	esac
done

prog=${test_name%%:*}
one=
[ "$prog" != "$test_name" ] && one=${test_name#*:}
if [ -n "$prog" ] && ! grep -qw "$prog" "$top/tools/testing/selftests/perf_events/Makefile"; then
	die "no test program '$prog' (mmap_page, rdpmc)"
fi

"$m/deps.sh" build || exit 2
make -s -C "$top" install-host >/dev/null || die "the suite did not build"

out=$top/build/logs
mkdir -p "$out"
ktap=$out/host.ktap
args=()
[ -n "$prog" ] && args=(-t "perf_events:$prog")
(
	cd "$top/build/install-host" || exit 1
	[ -n "$one" ] && export "KSELFTEST_$(echo "$prog" | tr '[:lower:]' '[:upper:]')_ARGS=-t $one"
	./run_kselftest.sh "${args[@]}"
) 2>&1 | tee "$ktap"
[ -n "$log" ] && cp "$ktap" "$log"
python3 "$m/lib/ktap.py" summary "$ktap" "perf_events on $(uname -r)"
