#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the perf user-page ABI selftests through the real kselftest runner and
# report KTAP, a one-line summary and an exit code (below): on the running
# kernel, or on a kernel image booted under qemu (--kernel), on a list of
# kernels (--matrix) or on two of them (--compare).  The guest machinery is
# in tools/testing/perf_abi/vm/ and kernels/, test selection and the output
# directory in lib/tests.sh and lib/output.sh.
set -eu

top=$(cd "$(dirname "$0")" && pwd)
m=$top/tools/testing/perf_abi
# shellcheck source=tools/testing/perf_abi/lib/tests.sh
. "$m/lib/tests.sh"
# shellcheck source=tools/testing/perf_abi/lib/output.sh
. "$m/lib/output.sh"
# shellcheck source=tools/testing/perf_abi/lib/arch.sh
. "$m/lib/arch.sh"

usage() {
	cat <<'USAGE'
Usage: ./run_tests.sh [OPTIONS]
       ./run_tests.sh --kernel SPEC [--arch A] [GUEST OPTIONS] [OPTIONS]
       ./run_tests.sh --matrix [FILE] [GUEST OPTIONS] [OPTIONS]
       ./run_tests.sh --compare OLD_SPEC NEW_SPEC [GUEST OPTIONS] [OPTIONS]
       ./run_tests.sh --list-kernels [PATTERN]
Run the perf_events user-page ABI selftests on the running kernel, or boot
kernels under qemu (software emulation) and run them there.

  -t, --test PROG[:TEST]  run one test program (mmap_page, rdpmc), or only
                      the TESTs of PROG that TEST names: a name as the KTAP
                      prints it (mmap_page:sideband.data_head_counts_records),
                      a TEST without fixture (rdpmc:time_zero_converts_sample_time)
                      or a shell glob (rdpmc:'agree.*'); may be repeated.
                      A name that selects no test is an error.  TESTs need
                      a 6.12 or newer kselftest harness (its -l list).
      --list          print the tests that would run (PROG:TEST) and exit
      --repeat N      run the suite N times and list every test whose
                      verdict changed (exit 1 if one did)
  -l, --log FILE      also write the KTAP output to FILE (one kernel)
  -o, --output DIR    write the reports to DIR if it is new or empty, else
                      to a new DIR/<label>-<UTC time>[-N]/ with DIR/latest
                      pointed at it when the run completes (the default
                      build/logs/{host,kernel,matrix,compare} is always
                      the latter): <label>.ktap (host.ktap on the running
                      kernel), <label>.console, summary.json, junit.xml,
                      table.md, report.ktap
      --ktap FILE     write the KTAP to FILE (a matrix: report.ktap, one
                      result per kernel with its tests nested)
      --junit FILE    write JUnit XML to FILE (each failed test's message
                      and log lines, skips with their reason)
  -h, --help          show this help

Kernels (SPEC: an image file -- bzImage, vmlinuz, arm64 or riscv64 Image,
ARM zImage, s390x image, ppc64le ELF vmlinux, gzip'd or not;
debian:VERSION-FLAVOUR, e.g. debian:5.10.0-43-cloud-amd64,
debian:7.3.4+deb13-arm64, debian:6.1.0-50-686-pae, fetched with apt-get
download from bullseye, bookworm, trixie, trixie-backports or sid and
cached in $PERF_ABI_CACHE; debian:LINE-FLAVOUR, e.g.
debian:6.12-cloud-amd64, the newest of that line; tree:PATH, a kernel
source tree built out of tree for --arch from tinyconfig + config +
kernels/tiny-ARCH.config; compat:SPEC, an x86_64 or arm64 kernel running
the 32-bit programs, i386 or armhf, as compat tasks.  Reports name a kernel
by the release string in its image, +i386 or +armhf after it for compat:):
  -k, --kernel SPEC   boot SPEC and run the suite in it
  -m, --matrix [FILE] run every SPEC listed in FILE (one a line, # comments;
                      default tools/testing/perf_abi/kernels/matrix.list),
                      --jobs at a time, and print a kernel x program table
      --compare OLD NEW  run both, print only the tests whose verdict
                      differs (regressions first); exit 1 if one regressed
      --list-kernels [PATTERN]  the Debian kernels apt knows, by line,
                      newest first, with their suite (PATTERN: a regex
                      on VERSION-FLAVOUR, e.g. cloud-amd64)
Guest options:
  -a, --arch A        x86_64, arm64, s390x, ppc64le, riscv64, i386 or
                      armhf (default: read from the image)
      --append ARGS   add ARGS to the guest kernel command line
      --smp N         guest CPUs (default 2)
      --memory M      guest memory, MiB or with an M/G suffix (default 512M)
      --kvm           use KVM instead of TCG (nested KVM may hang)
      --suite DIR     put the kselftest install tree DIR in the guest instead
                      of build/install-ARCH (e.g. one made with make install
                      from a kernel's tools/testing/selftests); it must be
                      built statically for the guest's architecture
      --label NAME    name of the kernel in reports (--kernel only; not
                      "report", the combined report's name)
      --sysctl NAME=VALUE  set /proc/sys/NAME (dots for slashes) in the
                      guest before the suite, e.g. kernel.perf_user_access=1
                      (repeatable; without it the guest keeps the kernel's
                      own settings, e.g. Debian's perf_event_paranoid 3)
      --user UID      run the suite as UID in the guest (default root); alone,
                      --privilege user
      --privilege MODE  run the suite in the guest as root (the default),
                      nocaps (uid 0 without any capability), perfmon (the
                      --user uid, default 65534, with CAP_PERFMON only) or
                      user (that uid, no capability)
      --cells LIST    in one boot, the suite once per cell MODE@LEVEL of
                      LIST (commas), in MODE at perf_event_paranoid LEVEL
                      (-1 to 3); "all": every MODE at every LEVEL.  The
                      guest's KTAP has one result per cell, "privileges:
                      MODE@LEVEL", the cell's runner KTAP nested in it
                      (tools/testing/perf_abi/privileges.sh makes a table)
  -j, --jobs N        guests at a time (default 2)

LAVA (the engine KernelCI and LKFT run; tools/testing/perf_abi/lava/):
      --lava-job DIR  write DIR/<label>.yaml, a LAVA job per kernel (qemu,
                      kernel and ramdisk to tmpfs, the suite's test
                      definition inline: one test case per TEST), its
                      kernel and ramdisk, and DIR/perf_events.yaml; takes
                      --kernel SPEC (again for more kernels), --matrix
                      [FILE] (the default without --kernel), --test,
                      --append, --smp, --memory; runs nothing

Guest kernel command line knobs read by the test init: perf_abi.live=1
(copy the whole runner output to the console as it comes),
perf_abi.sysctl=NAME=VALUE, perf_abi.user=UID, perf_abi.priv=MODE and
perf_abi.cells=LIST (what --sysctl, --user, --privilege and --cells pass),
perf_abi.paranoid=N (kernel.perf_event_paranoid), perf_abi.sibling=N (hold
N pinned hardware events per CPU during the run: make soak's sibling).
Environment: PERF_ABI_CACHE (downloaded kernels, initramfs; default
~/.cache/perf-abi), QEMU_X86_64, QEMU_ARM64, QEMU_S390X, QEMU_PPC64LE,
QEMU_RISCV64, QEMU_I386, QEMU_ARMHF (qemu binaries to use; the machine of each architecture is
in tools/testing/perf_abi/vm/qemu/ARCH.conf), PERF_ABI_BOOT_ALLOWANCE
(seconds a guest has to reach the test init; default the ARCH.conf's).

Exit status: 0 all passed, 1 a test failed (or, with --repeat, a verdict
changed), 4 every test skipped -- these three as kselftest's runner;
2 bad usage or a setup problem (a missing package, qemu that does not
start, an unwritable output or cache); 3 a kernel did not boot, panicked,
oopsed, hung or lost its end marker; 130, 143, 129 interrupted by SIGINT,
SIGTERM, SIGHUP (what finished is kept in the run's directory, with a
file INTERRUPTED).
--matrix: 2, else 3, else 1, else 0 over all kernels.  --compare: 2, 3,
else 1 if a test regressed, else 0.  The output directory, side files,
locks: tools/testing/perf_abi/lib/RUNNER.md.
USAGE
}

work= sig_status=
die() {
	echo "run_tests.sh: $*" >&2 || true
	cleanup
	exit 2
}

# --lava-job DIR: write LAVA jobs instead of running anything
# (tools/testing/perf_abi/lava/lava-job.sh takes the whole command line).
for a in "$@"; do
	case $a in
	--lava-job) exec "$m/lava/lava-job.sh" "$@" ;;
	esac
done

ktap_out= junit_out=
# --- signals -------------------------------------------------------------
# SIGINT, SIGTERM, SIGHUP: end every process this run started (qemu runs
# under timeout(1), in a process group of its own, so the terminal's ^C
# does not reach it), keep the finished results in the output directory
# with a note, remove the temporary files, exit 128 + the signal number.

descendants() {	# PID: every live process below PID (but this lookup)
	local self=$BASHPID
	ps -e -o pid=,ppid=,stat= | awk -v root="$1" -v self="$self" '
		$3 !~ /^Z/ { parent[$1] = $2 }
		END {
			want[root] = 1
			do {
				more = 0
				for (p in parent)
					if (!(p in want) && (parent[p] in want) &&
					    p != self && parent[p] != self) {
						want[p] = 1; more = 1
					}
			} while (more)
			for (p in want) if (p != root) print p
		}'
}

stop_all() {	# TERM, then KILL what is left after 5 s
	local pids i
	pids=$(descendants $$)
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do
		pids=$(descendants $$)
		[ -n "$pids" ] || break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
	wait 2>/dev/null || true
}

cleanup() {
	[ -z "$work" ] || rm -rf "$work"
	work=
	out_undo
}

# A closed stderr (2>&-) is /dev/null: nothing the run reports depends on it.
{ true >&2; } 2>/dev/null || exec 2>/dev/null
exec 7>&2	# the real stderr, for a trap that runs inside a redirection
on_signal() {	# NAME STATUS
	trap '' INT TERM HUP
	exec 2>&7
	stop_all
	echo "run_tests.sh: interrupted by SIG$1" >&2 || true
	sig_status=$2
	save_partial "SIG$1" 2>/dev/null || true
	cleanup
	exit "$2"
}
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP
trap cleanup EXIT

# The kselftest runner's per-program options (KSELFTEST_<PROG>_ARGS) are
# the runner's to set from -t: one inherited from the environment would
# narrow the run without a word.
while IFS= read -r v; do
	case $v in KSELFTEST_*_ARGS) unset "$v" ;; esac
done < <(compgen -e)

# HOME may be unset (cron, env -i): the passwd entry's home then.
if [ -z "${HOME:-}" ]; then
	HOME=$(getent passwd "$(id -u)" | cut -d: -f6)
	export HOME
fi
cache_from_home=
if [ -z "${PERF_ABI_CACHE:-}" ]; then
	[ -n "$HOME" ] || die "neither PERF_ABI_CACHE nor HOME is set (PERF_ABI_CACHE: where kernels are cached)"
	PERF_ABI_CACHE=$HOME/.cache/perf-abi
	cache_from_home=1
fi
# A relative cache is the one here (kernels/ and vm/ scripts run elsewhere).
case $PERF_ABI_CACHE in /*) ;; *) PERF_ABI_CACHE=$PWD/$PERF_ABI_CACHE ;; esac
export PERF_ABI_CACHE
# The cache must be writable before it is asked for anything.  A HOME that
# is no directory is not made one (HOME=/nonexistent).  Runs that share it
# take turns at writing it (cache_lock, fd 5).
need_cache() {
	[ -z "$cache_from_home" ] || [ -d "$PERF_ABI_CACHE" ] || [ -d "$HOME" ] ||
		die "HOME=$HOME is not a directory: set HOME, or PERF_ABI_CACHE (where kernels are cached)"
	mkdir -p "$PERF_ABI_CACHE" 2>/dev/null && [ -d "$PERF_ABI_CACHE" ] &&
		touch "$PERF_ABI_CACHE/.writable.$$" 2>/dev/null &&
		rm -f "$PERF_ABI_CACHE/.writable.$$" ||
		die "PERF_ABI_CACHE=$PERF_ABI_CACHE: cannot write the cache (downloaded kernels, initramfs)"
}
cache_lock() {
	exec 5>>"$PERF_ABI_CACHE/.lock" ||
		die "PERF_ABI_CACHE=$PERF_ABI_CACHE: cannot write the cache (downloaded kernels, initramfs)"
	flock -n 5 && return 0
	echo "run_tests.sh: waiting (up to 10 min) for another run_tests.sh using the cache $PERF_ABI_CACHE" >&2 || true
	run flock -w 600 5 || die "the cache $PERF_ABI_CACHE stayed locked by another run_tests.sh for 10 min"
}
[ -z "${PERF_ABI_BOOT_ALLOWANCE:-}" ] || [[ $PERF_ABI_BOOT_ALLOWANCE =~ ^[1-9][0-9]{0,4}$ ]] ||
	die "PERF_ABI_BOOT_ALLOWANCE='$PERF_ABI_BOOT_ALLOWANCE' is not a number of seconds"
# Paths are data, but a control character (a tab, a newline) is one the
# runner's records and qemu's command line cannot carry: refused.
no_cntrl() {	# OPTION PATH
	case $2 in
	*[[:cntrl:]]*)
		die "$1: $(printf '%q' "$2"): a control character (tab, newline) in a path; rename it" ;;
	esac
}
# The build tree: build/, or in the cache for a clone whose path holds a
# space (kselftest's lib.mk cannot build there; see the Makefile).
B=$top/build
case $top in
*[[:space:]]*)
	need_cache
	B=$(make -s -C "$top" --no-print-directory print-build 2>&1) ||
		die "${B##*: }"
	;;
esac

# A long command in the background, so that a signal is handled at once
# (bash runs traps only between foreground commands).
run() {
	"$@" &
	wait $!
}

# --- options ---------------------------------------------------------------

selectors=() log= mode=host spec= arch= append= smp=2 memory=512M kvm=
suite= label= jobs=2 outdir= runs= matrix_file= old_spec= new_spec= guest_opt=
list= repeat=1 matrix_given=
priv= cells= ncells=1 user_given=
sysctl_names=()
set_mode() {
	[ "$mode" = host ] || [ "$mode" = "$1" ] ||
		die "--kernel, --matrix and --compare go one at a time"
	mode=$1
}
# SPEC arguments: never an option (--compare A --smp 2 is a mistake).
spec_arg() {	# OPTION VALUE
	case $2 in
	'') die "$1 needs a kernel SPEC (try --help)" ;;
	-*) die "$1: '$2' is an option, not a kernel SPEC (try --help)" ;;
	esac
	no_cntrl "$1" "$2"
}
while [ $# -gt 0 ]; do
	case $1 in	# the guest's options: the first one, for the error below
	-a|--arch|--append|--smp|--memory|--kvm|--suite|--label|--sysctl|--user|--privilege|--cells|-j|--jobs)
		guest_opt=${guest_opt:-$1} ;;
	esac
	case $1 in
	-t|--test)
		[ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a test name (try --help)"
		case $2 in -*) die "$1 needs a test name, not the option '$2'" ;; esac
		[[ $2 =~ ^[A-Za-z0-9_.+-]+(:[][A-Za-z0-9_.*?!+-]+)?$ ]] ||
			die "$1: '$2' is not PROG or PROG:TEST (letters, digits, _ . - and globs * ? [ ])"
		selectors+=("$2")
		shift 2 ;;
	--list)
		list=1
		shift ;;
	--repeat)
		[ $# -ge 2 ] || die "$1 needs a number of runs (try --help)"
		[[ $2 =~ ^[1-9][0-9]{0,3}$ ]] || die "$1: '$2' is not a number of runs from 1 to 9999"
		[ "$repeat" = 1 ] || die "$1 given twice"
		repeat=$2
		shift 2 ;;
	-l|--log)
		[ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a file name (try --help)"
		no_cntrl "$1" "$2"
		[ -z "$log" ] || die "$1 given twice"
		log=$2
		shift 2 ;;
	--ktap|--junit)
		[ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a file name (try --help)"
		no_cntrl "$1" "$2"
		[ -d "$(dirname -- "$2")" ] || die "$1: no directory $(dirname -- "$2")"
		[ ! -d "$2" ] || die "$1: $2 is a directory"
		if [ "$1" = --ktap ]; then
			[ -z "$ktap_out" ] || die "$1 given twice"
			ktap_out=$2
		else
			[ -z "$junit_out" ] || die "$1 given twice"
			junit_out=$2
		fi
		shift 2 ;;
	-k|--kernel)
		[ $# -ge 2 ] || die "$1 needs a kernel SPEC (try --help)"
		spec_arg "$1" "$2"
		[ "$mode" = kernel ] && die "give --kernel once (use --matrix for several)"
		set_mode kernel
		spec=$2
		shift 2 ;;
	-m|--matrix)
		[ -z "$matrix_given" ] || die "$1 given twice"
		matrix_given=1
		set_mode matrix
		matrix_file=$m/kernels/matrix.list
		if [ $# -ge 2 ] && [ "${2#-}" = "$2" ]; then
			matrix_file=$2
			shift
		fi
		shift ;;
	--compare)
		[ $# -ge 3 ] || die "$1 needs two kernel SPECs, OLD and NEW (try --help)"
		spec_arg "$1" "$2"
		spec_arg "$1" "$3"
		[ "$mode" = compare ] && die "$1 given twice"
		set_mode compare
		old_spec=$2 new_spec=$3
		shift 3 ;;
	-a|--arch)
		[ $# -ge 2 ] || die "$1 needs an architecture (try --help)"
		arch=$(arch_name "$2") ||
			die "unknown architecture '$2' ($(arch_list | tr '\n' ' ' | sed 's/ $//'))"
		shift 2 ;;
	--append)
		[ $# -ge 2 ] || die "$1 needs kernel command line arguments (try --help)"
		case $2 in *[[:cntrl:]]*) die "$1: no control characters (newlines, tabs, CR) in the kernel command line" ;; esac
		append="$append $2"
		# the guest's own knobs: refused settings count as --sysctl's
		read -ra words <<<"$2"
		for w in ${words[@]+"${words[@]}"}; do
			case $w in
			perf_abi.sysctl=?*) w=${w#perf_abi.sysctl=}; sysctl_names+=("${w%%=*}") ;;
			perf_abi.paranoid=*) sysctl_names+=(kernel.perf_event_paranoid) ;;
			esac
		done
		shift 2 ;;
	--smp)
		[ $# -ge 2 ] || die "$1 needs a CPU count (try --help)"
		[[ $2 =~ ^[1-9][0-9]?$ ]] || die "$1: '$2' is not a CPU count from 1 to 99"
		smp=$2
		shift 2 ;;
	--memory)
		[ $# -ge 2 ] || die "$1 needs a size (try --help)"
		# Whole MiB or GiB only; at most what this machine has.
		maxm=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
		[[ $2 =~ ^([1-9][0-9]*)([MmGg]?)$ ]] ||
			die "$1: '$2' is not a memory size (whole MiB or GiB: 512M, 1G, 1536)"
		mib=${BASH_REMATCH[1]}
		[ ${#mib} -le 7 ] || mib=99999999
		case ${BASH_REMATCH[2]} in [Gg]) mib=$((mib * 1024)) ;; esac
		[ "$mib" -ge 128 ] && [ "$mib" -le "$maxm" ] ||
			die "$1: '$2' is not a memory size from 128M to ${maxm}M (this machine's memory)"
		memory=${mib}M
		shift 2 ;;
	--kvm)
		[ -w /dev/kvm ] || die "--kvm: /dev/kvm is not there or not writable"
		kvm=--kvm
		shift ;;
	--suite)
		[ $# -ge 2 ] || die "$1 needs a kselftest install tree (try --help)"
		no_cntrl "$1" "$2"
		[ -d "$2" ] || die "$1: no such directory: $2"
		[ -x "$2/run_kselftest.sh" ] && [ -r "$2/kselftest-list.txt" ] ||
			die "$1: $2 is not a kselftest install tree (no run_kselftest.sh, kselftest-list.txt)"
		suite=$(cd "$2" && pwd)
		shift 2 ;;
	--label)
		[ $# -ge 2 ] || die "$1 needs a name (try --help)"
		[[ $2 =~ ^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$ ]] ||
			die "$1: '${2:0:120}' is not a name (at most 100 letters, digits, . _ + -)"
		[ "$2" != report ] || die "$1: 'report' is reserved (report.ktap is the combined report)"
		label=$2
		shift 2 ;;
	--sysctl)
		[ $# -ge 2 ] || die "$1 needs NAME=VALUE (try --help)"
		[[ $2 =~ ^[a-z0-9_-]+(\.[a-z0-9_-]+)*=[^[:space:]]+$ ]] ||
			die "$1: '$2' is not NAME=VALUE (e.g. kernel.perf_user_access=1)"
		append="$append perf_abi.sysctl=$2"
		sysctl_names+=("${2%%=*}")
		shift 2 ;;
	--user)
		[ $# -ge 2 ] || die "$1 needs a uid (try --help)"
		[[ $2 =~ ^(0|[1-9][0-9]{0,9})$ ]] && [ "$2" -le 4294967294 ] ||
			die "$1: '$2' is not a numeric uid"
		append="$append perf_abi.user=$2"
		user_given=$2
		shift 2 ;;
	--privilege)
		[ $# -ge 2 ] || die "$1 needs a MODE: root, nocaps, perfmon or user (try --help)"
		case $2 in root|nocaps|perfmon|user) ;;
		*) die "$1: '$2' is not a MODE (root, nocaps, perfmon, user)" ;;
		esac
		[ -z "$priv" ] || die "$1 given twice"
		priv=$2
		append="$append perf_abi.priv=$2"
		shift 2 ;;
	--cells)
		[ $# -ge 2 ] || die "$1 needs MODE@LEVEL,... or all (try --help)"
		[ -z "$cells" ] || die "$1 given twice"
		cells=$2
		[ "$cells" != all ] || cells=$(printf '%s\n' {root,nocaps,perfmon,user}@{-1,0,1,2,3} | paste -sd,)
		[[ $cells =~ ^[^,[:space:]]+(,[^,[:space:]]+)*$ ]] ||
			die "$1: '$2' is not a comma-separated list of MODE@LEVEL (no spaces)"
		for c in ${cells//,/ }; do
			[[ $c =~ ^(root|nocaps|perfmon|user)@(-1|0|1|2|3)$ ]] ||
				die "$1: '$c' is not MODE@LEVEL (MODE root, nocaps, perfmon or user; LEVEL -1 to 3)"
		done
		ncells=$(tr ',' '\n' <<<"$cells" | wc -l)
		append="$append perf_abi.cells=$cells"
		shift 2 ;;
	-j|--jobs)
		[ $# -ge 2 ] || die "$1 needs a number (try --help)"
		[[ $2 =~ ^[1-9][0-9]?$ ]] || die "$1: '$2' is not a number of guests"
		jobs=$2
		shift 2 ;;
	-o|--output)
		[ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a directory (try --help)"
		case $2 in -*) die "$1 needs a directory, not the option '$2'" ;; esac
		no_cntrl "$1" "$2"
		[ -z "$outdir" ] || die "give one -o"
		outdir=$2
		shift 2 ;;
	--list-kernels)
		[ $# -le 2 ] || die "$1 takes one PATTERN at most"
		rc=0
		grep -qE -- "${2:-.}" </dev/null 2>/dev/null || rc=$?
		[ "$rc" -le 1 ] || die "$1: '${2:-}' is not a regular expression (grep -E)"
		exec "$m/kernels/debian.sh" --lines "${2:-.}" ;;
	-h|--help)
		usage
		exit 0 ;;
	-*)
		die "unknown option '$1' (try --help)" ;;
	*)
		die "unexpected argument '$1' (try --help)" ;;
	esac
done

[ -z "$guest_opt" ] || [ "$mode" != host ] ||
	die "$guest_opt goes with --kernel, --matrix or --compare"
[ -z "$label" ] || [ "$mode" = kernel ] || die "--label goes with --kernel"
[ -z "$priv" ] || [ -z "$cells" ] || die "--privilege and --cells go one at a time (a cell names its MODE)"
case $priv in root|nocaps)
	[ -z "$user_given" ] || die "--user goes with --privilege perfmon or user (root and nocaps run as uid 0)" ;;
esac
[ -z "$arch" ] || [ "$mode" != matrix ] || die "--arch goes with --kernel or --compare (a matrix names its kernels)"
[ -z "$log" ] || [ "$mode" = host ] || [ "$mode" = kernel ] || die "--log goes with one kernel; use --output"
[ -z "$list" ] || [ "$repeat" = 1 ] || die "--list and --repeat go one at a time"
[ "$repeat" = 1 ] || [ "$mode" != compare ] || die "--repeat goes with the running kernel, --kernel or --matrix"
if [ -n "$log" ]; then
	[ -d "$(dirname -- "$log")" ] || die "--log: no directory $(dirname -- "$log")"
	[ ! -d "$log" ] || die "--log: $log is a directory"
fi
# The run's directory: -o DIR itself if new or empty, else a new one in
# DIR (runs=DIR; always in the default build/logs/MODE).  Every check on
# the path the directory really is (new/.. is its parent).
final=$(realpath -m -- "${outdir:-$B/logs/$mode}") || die "--output: cannot resolve ${outdir:-$B/logs/$mode}"
[ -n "$outdir" ] && { [ ! -d "$final" ] || [ -z "$(ls -A -- "$final" 2>/dev/null)" ]; } || runs=$final
if [ -z "$list" ]; then
	err=$(out_check "$final")
	[ -z "$err" ] || die "--output: $err"
fi
rundir=$final
# Side files (-l, --ktap, --junit): writable before the run, never one of
# the output directory's own files.
side_seen=()
side_check() {	# OPTION FILE
	local f d x
	f=$(realpath -m -- "$2") || die "$1: cannot resolve $2"
	case $f/ in "$final"/*)
		die "$1: $2 is in the output directory $final, which holds the reports" ;;
	"$top"/tools/*|"$top"/run_tests.sh/|"$top"/Makefile/|"$top"/README/)
		die "$1: $2 is a file of this project" ;;
	esac
	for x in ${side_seen[@]+"${side_seen[@]}"}; do
		[ "$x" != "$f" ] || [ -c "$f" ] || die "$1: $2 is another side file too (-l, --ktap, --junit: one file each)"
	done
	side_seen+=("$f")
	for x in "$spec" "$old_spec" "$new_spec" "$matrix_file" "$0"; do
		[ -z "$x" ] || [ ! "$f" -ef "$x" ] || die "$1: $2 is an input of this run ($x)"
	done
	d=$(dirname -- "$f")
	if [ -e "$f" ]; then
		[ ! -d "$f" ] || die "$1: $2 is a directory"
		[ ! -p "$f" ] && [ ! -S "$f" ] || die "$1: $2 is a FIFO or a socket (a write there could wait for ever)"
		[ -w "$f" ] || die "$1: cannot write $2"
	else
		[ -d "$d" ] && [ -w "$d" ] && [ -x "$d" ] || die "$1: cannot create $2 ($d is not a writable directory)"
	fi
}
if [ -z "$list" ]; then
	[ -z "$log" ] || side_check --log "$log"
	[ -z "$ktap_out" ] || side_check --ktap "$ktap_out"
	[ -z "$junit_out" ] || side_check --junit "$junit_out"
fi
# side_write SRC FILE OPTION: a side file, after the run; a failure is
# noted (side_err: exit 2, the reports are kept)
side_err=
side_write() {
	local err
	[ -n "$2" ] || return 0
	err=$(cp -- "$1" "$2" 2>&1) && return 0
	echo "run_tests.sh: $3: cannot write $2: ${err##*: }" >&2
	side_err=1
}
# summary.json's exit: the exit of this process (ktap.py's JSON, indent
# 1: the top level's "exit" is the one line indented by one space)
json_exit() {	# FILE STATUS
	[ -f "$1" ] || return 0
	sed -i "s/^ \"exit\": [0-9]*\$/ \"exit\": $2/" "$1" || true
}

# Programs named by -t: those the tree lists (never a word of a Makefile).
sel_progs=()
for s in "${selectors[@]}"; do
	p=${s%%:*}
	if [ -n "$suite" ]; then
		[ -n "$(tree_coll "$suite" "$p")" ] ||
			die "no test program '$p' in $suite ($(tree_progs "$suite" | sed 's/.*://' | tr '\n' ' ' | sed 's/ $//'))"
	else
		ours=$(sed -n 's/^TEST_GEN_PROGS *[+:]\{0,1\}= *//p' "$top/tools/testing/selftests/perf_events/Makefile")
		case " $ours " in
		*" $p "*) ;;
		*) die "no test program '$p' ($(echo $ours | sed 's/ /, /g'))" ;;
		esac
	fi
	case " ${sel_progs[*]-} " in *" $p "*) ;; *) sel_progs+=("$p") ;; esac
done

mkdir -p "$B/vm" 2>/dev/null || die "cannot write the build tree $B"
work=$(mktemp -d "$B/vm/run.XXXXXX") || die "cannot write the build tree $B"

# select_tests TREE: writes $work/select/PROG.args (the harness options of
# each program named with a TEST) and, with --list, prints PROG:TEST lines.
select_tests() {
	local tree=$1 s p pat coll bin all sel rc progs
	mkdir -p "$work/select"
	progs=("${sel_progs[@]}")
	[ ${#progs[@]} -gt 0 ] || mapfile -t progs < <(tree_progs "$tree" | sed 's/.*://')
	for p in "${progs[@]}"; do
		coll=$(tree_coll "$tree" "$p")
		bin=$tree/$coll/$p
		all=$work/select/$p.all sel=$work/select/$p.sel
		: > "$sel"
		local want=
		for s in "${selectors[@]}"; do
			[ "${s%%:*}" = "$p" ] || continue
			[ "$s" != "$p" ] || { want=all; continue; }
			want=${want:-some}
		done
		[ -n "$list" ] || [ "$want" = some ] || continue
		if ! harness_lists "$bin"; then
			[ "$want" != some ] || die "-t $p:...: $p cannot list its tests (TESTs need a 6.12 or newer kselftest harness)"
			echo "$p"
			continue
		fi
		rc=0
		list_tests "$bin" > "$all" || rc=$?
		if [ "$rc" != 0 ] && [ -z "$suite" ] && [ "$tree" != "$B/install-host" ]; then
			# Another architecture: the names are the same in the
			# host's build of this suite.
			host_tree
			rc=0
			list_tests "$B/install-host/$coll/$p" > "$all" || rc=$?
		fi
		[ "$rc" = 0 ] && [ -s "$all" ] ||
			die "cannot list the tests of $p ($bin -l exited $rc)"
		if [ "$want" != some ]; then
			cp "$all" "$sel"
		else
			for s in "${selectors[@]}"; do
				[ "${s%%:*}" = "$p" ] && [ "$s" != "$p" ] || continue
				pat=${s#*:}
				match_tests "$all" "$pat" > "$work/select/match"
				[ -s "$work/select/match" ] ||
					die "-t $s: no test of $p is named '$pat' ($(wc -l < "$all") tests; see --list)"
				cat "$work/select/match" >> "$sel"
			done
			compress_filter "$all" "$sel" > "$work/select/$p.args"
		fi
		[ -z "$list" ] || awk '!seen[$0]++ { print p ":" $0 }' p="$p" "$sel"
	done
}

# An install tree is up to date when nothing of the suite is newer.
tree_fresh() {	# TREE
	[ -f "$1/kselftest-list.txt" ] && [ -z "$(find "$top/tools/testing/selftests/perf_events" \
		"$top/Makefile" -newer "$1/kselftest-list.txt" -print -quit)" ]
}

host_built=
host_tree() {	# build install-host once
	[ -z "$host_built" ] || return 0
	run "$m/deps.sh" build || exit 2
	tree_fresh "$B/install-host" && [ -z "${KSRC:-}" ] && { host_built=1; return 0; }
	need_cache	# the framework's kernel tree is cached there
	run make -s -C "$top" install-host >"$work/make.log" 2>&1 || {
		tail -n 20 "$work/make.log" >&2
		die "the suite did not build (make install-host)"
	}
	host_built=1
}

# Harness options per program, for the kselftest runner's environment
# (KSELFTEST_<PROG>_ARGS) or the guest's command line (vm/init).
prog_args() {	# PROG -> options on one line
	[ -f "$work/select/$1.args" ] && tr '\n' ' ' < "$work/select/$1.args" | sed 's/ $//'
	return 0
}

# Results on stdout, last: once the reports are written a reader that
# went away (| head) is no reason to die of SIGPIPE or to complain.
show() {
	trap '' PIPE
	cat "$@" 2>/dev/null || true
}

# --repeat: a verdict that changed fails a run that passed or skipped.
flipped() {	# FLIPS_STATUS
	[ "$1" = 0 ] || { [ "$rc" != 0 ] && [ "$rc" != 4 ]; } || rc=1
}

# What an interrupted run keeps (on_signal): set by the running part.
save_partial() { :; }

note_interrupted() {	# SIGNAME DIR WHAT
	printf 'run_tests.sh was interrupted by %s on %s.\n%s\n' "$1" "$(date -u '+%F %T UTC')" "$3" > "$2/INTERRUPTED"
}

# publish_partial SIGNAME: what an interrupted run keeps, into its
# directory, summary.json's exit the signal's status
publish_partial() {
	rm -f "$work/out/manifest.tsv"
	json_exit "$work/out/summary.json" "$sig_status"
	out_publish "$work/out" || return 0
	echo "run_tests.sh: what had finished is in $rundir" >&7 || true
}

# finish STATUS: the reports of $work/out written: the side files, the
# process's exit in summary.json, published into the output directory;
# sets rc (2 when a side file or the output could not be written)
finish() {	# STATUS SIDE_KTAP
	rc=$1
	# The run has ended: a signal now is ignored (by cp too, which a
	# terminal's SIGINT would kill mid-copy) until the reports are
	# written, and the exit stays the results' (summary = exit = KTAP).
	trap '' INT TERM HUP
	side_write "$2" "$log" --log
	side_write "$2" "$ktap_out" --ktap
	side_write "$work/out/junit.xml" "$junit_out" --junit
	[ -z "$side_err" ] || rc=2
	json_exit "$work/out/summary.json" "$rc"
	save_partial() { :; }
	rm -f "$work/out/manifest.tsv"
	out_publish "$work/out" complete || {
		cleanup
		exit 2
	}
	# Reports are written: from here on stderr or stdout that cannot be
	# written changes nothing (2>/dev/full, 2>&-).
	set +e
}

# --- the running kernel ------------------------------------------------

if [ "$mode" = host ]; then
	[ -z "$list" ] || [ -z "$outdir" ] || die "--list prints the tests; it writes no --output"
	host_tree
	select_tests "$B/install-host"
	[ -z "$list" ] || exit 0
	out_claim "$final" "${runs:+host}" || die "--output: $out_err"
	rundir=$out_claimed
	args=()
	for p in "${sel_progs[@]}"; do args+=(-t "perf_events:$p"); done
	mkdir -p "$work/out"
	save_partial() {
		local r= f
		if [ "$repeat" = 1 ]; then
			[ -f "$work/host.ktap" ] || return 0
			cp "$work/host.ktap" "$work/out/host.ktap"
		else
			# the runs that ended, and the one that was cut short
			mkdir -p "$work/out/repeat"
			r=1
			for ((; r <= repeat; r++)); do
				f=$work/host.$r.ktap
				[ -f "$f" ] || break
				cp "$f" "$work/out/repeat/$r.ktap"
				cp "$f" "$work/out/host.ktap"
			done
			r=$((r - 1))
		fi
		note_interrupted "$1" "$work/out" "host.ktap holds the KTAP of the run up to then${r:+; repeat/ the $r runs begun of $repeat, the last one cut short}."
		publish_partial "$1"
	}
	host_run() {	# KTAP [tee]: one run of the suite; tee: also on stdout
		local p v
		(
			cd "$B/install-host" || exit 1
			for p in "${sel_progs[@]}"; do
				v=$(echo "$p" | tr '[:lower:]' '[:upper:]' | tr -c 'A-Z0-9\n' '_')
				a=$(prog_args "$p")
				[ -z "$a" ] || export "KSELFTEST_${v}_ARGS=$a"
			done
			# Through a pipe: the runner reopens /dev/stdout to
			# append, which would overwrite a file at our offset.
			# tee -p: a reader that goes away (| head) stops
			# neither the run nor the file.
			if [ -n "${2:-}" ]; then
				./run_kselftest.sh "${args[@]}" 2>&1 | tee -p "$1"
			else
				./run_kselftest.sh "${args[@]}" 2>&1 | cat > "$1"
			fi
			echo "${PIPESTATUS[0]}" > "$1.rc"
		)
	}
	t0=$(date +%s%N)
	if [ "$repeat" = 1 ]; then
		run host_run "$work/host.ktap" tee || true
	else
		for ((r = 1; r <= repeat; r++)); do
			[ ! -t 2 ] || printf '\rrun_tests.sh: run %d of %d' "$r" "$repeat" >&2 || true
			run host_run "$work/host.$r.ktap" || true
		done
		[ ! -t 2 ] || echo >&2 || true
		cp "$work/host.1.ktap" "$work/host.ktap"
		cp "$work/host.1.ktap.rc" "$work/host.ktap.rc"
	fi
	t1=$(( ($(date +%s%N) - t0) / 100000000 ))
	grc=$(cat "$work/host.ktap.rc" 2>/dev/null || echo 255)
	cp "$work/host.ktap" "$work/out/host.ktap"
	printf 'host\t%s\trunning kernel %s\thost.ktap\tok\t%d.%d\t%s\t\n' "$(uname -m)" \
		"$(uname -r)" $((t1 / 10)) $((t1 % 10)) "$grc" > "$work/out/manifest.tsv"
	python3 "$m/lib/ktap.py" report "$work/out/manifest.tsv" \
		--json "$work/out/summary.json" --junit "$work/out/junit.xml" \
		--markdown "$work/out/table.md" --ktap "$work/out/report.ktap" >/dev/null || true
	rm -f "$work/out/manifest.tsv"
	rc=0
	summary=$(python3 "$m/lib/ktap.py" summary "$work/host.ktap" "perf_events on $(uname -r)") || rc=$?
	if [ "$repeat" != 1 ]; then
		mkdir -p "$work/out/repeat"
		for ((r = 1; r <= repeat; r++)); do
			mv "$work/host.$r.ktap" "$work/out/repeat/$r.ktap"
		done
		frc=0
		(cd "$work/out/repeat" && python3 "$m/lib/flips.py" $(seq -f '%g.ktap' 1 "$repeat")) \
			> "$work/out/flips.txt" || frc=$?
		flipped "$frc"
		[ "$frc" -le 1 ] || rc=2
	fi
	grc_bad=
	if [ "$grc" != 0 ] && [ "$grc" != 4 ] && [ "$rc" != 1 ]; then
		grc_bad=1
		[ "$rc" = 2 ] || rc=1
	fi
	finish "$rc" "$work/out/host.ktap"
	# Reports are written: only now the summary (a closed stdout loses
	# nothing, and is no reason to die).
	trap '' PIPE
	[ "$repeat" = 1 ] || show "$rundir/flips.txt"
	show <<<"$summary"
	[ -z "$grc_bad" ] || echo "run_tests.sh: the kselftest runner exited $grc" >&2
	echo "run_tests.sh: reports in $rundir" >&2
	exit "$rc"
fi

# --- kernels under qemu ------------------------------------------------
# Everything that can be wrong with the input is checked before anything
# is written: the kernels, qemu, the suite.

# --list: the names are the same in every architecture's build of the
# suite: the host's build (or --suite) lists them, no kernel is fetched.
if [ -n "$list" ]; then
	[ -n "$suite" ] || host_tree
	select_tests "${suite:-$B/install-host}"
	exit 0
fi
need_cache
cache_lock
specs=()
case $mode in
kernel) specs=("$spec") ;;
compare) specs=("$old_spec" "$new_spec") ;;
matrix)
	[ -e "$matrix_file" ] || die "no such matrix file: $matrix_file"
	[ -f "$matrix_file" ] && [ -r "$matrix_file" ] || die "cannot read matrix file: $matrix_file"
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}	# a file written on Windows
		line=${line%%#*}
		case $line in
		*[[:cntrl:]]*)
			die "$matrix_file: a control character in $(printf '%q' "$line")" ;;
		esac
		read -r s rest <<<"$line" || true
		[ -n "${s:-}" ] || continue
		[ -z "${rest:-}" ] || die "$matrix_file: one SPEC a line, not '$line'"
		case $s in -*) die "$matrix_file: '$s' is not a kernel SPEC" ;; esac
		specs+=("$s")
	done < "$matrix_file" || die "cannot read matrix file: $matrix_file"
	[ ${#specs[@]} -gt 0 ] || die "matrix file $matrix_file lists no kernel"
	;;
esac

# compat:SPEC: the guest's 32-bit programs (vm/qemu/ARCH.conf's compat,
# its whole userland) on that kernel; LABEL+ARCH names it in reports.
# k_arch: the guest's, k_tasks: its programs' architecture.
k_arch=() k_tasks=() k_label=() k_path=()
for s in "${specs[@]}"; do
	r=
	run "$m/kernels/image.sh" "${s#compat:}" "$arch" >"$work/image" 2>"$work/err" || {
		msg=$(grep -av '^$' "$work/err" | tail -n 1 | sed -E 's/^(image|debian|apt-fetch)(\.sh)?: //')
		die "${msg:-cannot use kernel $s}"
	}
	# ARCH LABEL PATH, the path to the end (a newline in the directory)
	r=$(cat "$work/image")
	a=${r%% *} r=${r#* }
	l=${r%% *} p=${r#* } t=$a
	if [ "$s" != "${s#compat:}" ]; then
		t=$(arch_get "$a" compat) || die "$s: an $a kernel runs no 32-bit programs here (compat: takes an x86_64 or arm64 kernel)"
		l=$l+$t
	fi
	k_arch+=("$a") k_tasks+=("$t") k_label+=("$l") k_path+=("$p")
done
[ -n "$label" ] && k_label[0]=$label
# Labels name files beside the reports: never one of theirs.
for ((i = 0; i < ${#k_label[@]}; i++)); do
	case ${k_label[i]} in report) k_label[i]=report-kernel ;; esac
done
# Unique labels: a second kernel of the same name gets -2, -3 ...
if [ "$mode" = compare ] && [ "${k_label[0]}" = "${k_label[1]}" ]; then
	k_label[0]=${k_label[0]}-old k_label[1]=${k_label[1]}-new
fi
for ((i = 1; i < ${#k_label[@]}; i++)); do
	n=1 base=${k_label[i]}
	for ((j = 0; j < i; j++)); do
		if [ "${k_label[j]}" = "${k_label[i]}" ]; then
			n=$((n + 1)) k_label[i]=$base-$n j=-1
		fi
	done
done

arches=$(printf '%s\n' "${k_arch[@]}" | sort -u)
for a in $arches; do
	q=$(arch_qemu "$a") qpkg=$(arch_get "$a" package)
	command -v "$q" >/dev/null 2>&1 && continue
	[ "$q" = "${q##*/}" ] || die "$q (from \$QEMU_${a^^}) is not an executable"
	if [ "$(dpkg-query -W -f='${db:Status-Status}' "$qpkg" 2>/dev/null)" = installed ]; then
		die "$q not found in PATH (package $qpkg is installed)"
	fi
	[ "$(id -u)" = 0 ] ||
		die "$q not found; run as root: apt-get install -y --no-install-recommends $qpkg (or make deps)"
	echo "run_tests.sh: $q is missing: installing it (make deps)" >&2 || true
	run "$m/deps.sh" vm >&2 || exit 2
	command -v "$q" >/dev/null 2>&1 || die "$q not found even after make deps (package $qpkg)"
done
tasks=$(printf '%s\n' "${k_tasks[@]}" | sort -u)
if [ -n "$suite" ] && [ "$(echo "$tasks" | wc -l)" != 1 ]; then
	die "--suite holds one architecture; these kernels run $(echo $tasks) programs"
fi

# The install trees (make install-ARCH), rebuilt when the suite changed,
# and the initramfs, per architecture of the programs.
declare -A tree initrd
for a in $tasks; do
	[ -z "$suite" ] || { tree[$a]=$suite; continue; }
	tree[$a]=$B/install-$a
	(
		flock 9
		tree_fresh "${tree[$a]}" && exit 0
		make -s -C "$top" "install-$a" >/dev/null 2>"$B/install-$a.log" || {
			echo "run_tests.sh: the suite did not build for $a (make install-$a; see $B/install-$a.log)" >&2
			exit 2
		}
	) 9>"$B/.install-$a.lock" &
	wait $! || exit 2
done
# -t: the names against each program's own list; --list prints them.
if [ ${#selectors[@]} -gt 0 ]; then
	for a in $tasks; do
		select_tests "${tree[$a]}"
	done
fi
for a in $tasks; do
	# The guest's helpers: privrun (--privilege, --cells, --user) and
	# sibling (perf_abi.sibling=N)
	make -s -C "$top" "vm-helpers-$a" >"$work/err" 2>&1 ||
		die "the guest helpers did not build for $a (make vm-helpers-$a): $(tail -n 1 "$work/err")"
	run "$m/vm/initramfs.sh" "$a" "${tree[$a]}" "$m/vm/init" \
		"$B/privrun-$a" "$B/sibling-$a" >"$work/initrd" 2>"$work/err" || {
		msg=$(tail -n 1 "$work/err" | sed -E 's/^(initramfs|apt-fetch)(\.sh)?: //')
		die "${msg:-cannot build the $a initramfs}"
	}
	initrd[$a]=$(cat "$work/initrd")
done
flock -u 5 2>/dev/null || true	# the cache: another run may use it now

# The selection on the guest's command line (vm/init): one perf_abi.test=
# per program, PROG or PROG:OPT,ARG,... (the harness options).
guest_append=$append
for p in "${sel_progs[@]}"; do
	a=$(prog_args "$p")
	guest_append="$guest_append perf_abi.test=$p${a:+:${a// /,}}"
done
[ ${#append} -le 1800 ] ||
	die "--append: the guest's kernel command line would be ${#append} bytes (with --sysctl, --user, --privilege, --cells); at most 1800"
[ ${#guest_append} -le 1800 ] ||
	die "-t selects too many single tests for a guest's command line (${#guest_append} bytes); select whole fixtures or programs"

# The boot allowance of an architecture (vm/qemu/ARCH.conf; 30 s with
# KVM; PERF_ABI_BOOT_ALLOWANCE overrides it, e.g. on a slow host).
boot_for() {	# ARCH
	[ -z "$kvm" ] || { echo "${PERF_ABI_BOOT_ALLOWANCE:-30}"; return; }
	echo "${PERF_ABI_BOOT_ALLOWANCE:-$(arch_get "$1" boot)}"
}

# Time allowed to a guest: the boot allowance plus the kselftest timeout of
# every program (its directory's settings, else the runner's 45 s).
limit_for() {	# TASKS-ARCH GUEST-ARCH
	local a=$1 t=0 d boot s x=
	boot=$(boot_for "$2")
	while IFS=: read -r d _; do
		s=$(sed -n 's/^timeout=//p' "${tree[$a]}/$d/settings" 2>/dev/null | head -n 1)
		t=$((t + ${s:-45}))
	done < <(tree_progs "${tree[$a]}")
	[ "$ncells" = 1 ] || x=" x $ncells cells"
	echo "$((boot + t * ncells)) boot allowance ${boot}s + settings timeouts ${t}s$x"
}

# --- boot them -----------------------------------------------------------

l=$mode
[ "$mode" != kernel ] || l=${k_label[0]}
out_claim "$final" "${runs:+$l}" || die "--output: $out_err"
rundir=$out_claimed
mkdir -p "$work/out"

run_one() {	# INDEX RUN: boot kernel INDEX, write its manifest row
	local i=$1 r=$2 a=${k_arch[$1]} t=${k_tasks[$1]} l=${k_label[$1]} t0 t1 rc=0 status=ok reason= grc=
	local d=$work/r$r
	mkdir -p "$d"
	t0=$(date +%s%N)
	local limit why
	read -r limit why <<<"$(limit_for "$t" "$a")"
	"$m/vm/boot.sh" --smp "$smp" --memory "$memory" $kvm \
		--limit "$limit" --limit-why "$why" --boot-limit "$(boot_for "$a")" --append "$guest_append$live" \
		"$a" "${k_path[$i]}" "${initrd[$t]}" "$d/$l" 2>"$d/$l.err" || rc=$?
	t1=$(date +%s%N)
	# A --sysctl the guest refused (vm/init's SYSCTL line): the knob and
	# the guest's words
	local knob
	for knob in ${sysctl_names[@]+"${sysctl_names[@]}"}; do
		tr -d '\r' < "$d/$l.console" 2>/dev/null |
			grep -a -m1 -F "@@PERF_ABI@@ SYSCTL $knob: " |
			sed 's/^@@PERF_ABI@@ SYSCTL //' >> "$d/$l.sysctl" || true
	done
	if [ "$rc" = 0 ]; then
		grc=$(cat "$d/$l.rc")
		rm -f "$d/$l.rc"
	else
		status=noboot
		reason=$(head -n 1 "$d/$l.err" | sed -e 's/^boot\.sh: //' -e 's/; last 30 lines of .*//' | tr '\t' ' ')
		[ "$rc" = 3 ] || { reason="could not start the guest: $reason"; echo 2 > "$d/$l.setup"; }
		# boot.sh leaves the results the guest had logged, if any
		[ -s "$d/$l.ktap" ] || printf 'TAP version 13\n1..0\n' > "$d/$l.ktap"
		echo "Bail out! $l: $reason" >> "$d/$l.ktap"
	fi
	t1=$(((t1 - t0) / 100000000))
	printf '%s\t%s\t%s\t%s\t%s\t%d.%d\t%s\t%s\n' "$l" "$t" "${specs[$i]}" \
		"$l.ktap" "$status" $((t1 / 10)) $((t1 % 10)) "$grc" "$reason" > "$d/$l.row.tmp"
	mv "$d/$l.row.tmp" "$d/$l.row"
}

# Progress on a terminal: kernel, program, tests done (the guest copies
# its runner's output to the console as it comes: perf_abi.live=1).
live=
progress_pid=
if [ -t 2 ]; then
	live=" perf_abi.live=1"
	progress() {
		local f l prog ndone line
		while sleep 2; do
			line=
			for f in "$work"/r*/*.console; do
				[ -f "$f" ] || continue
				l=${f##*/}; l=${l%.console}
				prog=$(tr -d '\r' < "$f" | sed -n 's/^# selftests: [^:]*: //p' | tail -n 1)
				ndone=$(tr -d '\r' < "$f" | grep -cE '^# (not )?ok [0-9]+ ' || true)
				line="$line  $l: ${prog:-booting}${prog:+ $ndone tests done}"
			done
			[ -z "$line" ] || printf '\r\033[K%s' "${line:2}" | cut -c1-200 >&2
		done
	}
	progress &
	progress_pid=$!
fi

extra=0	# background jobs that are not guests
[ -z "$progress_pid" ] || extra=1
n=${#specs[@]}
# What an interrupt keeps: the kernels that finished (first run).
save_partial() {
	local i l done=0
	[ -d "$work/r1" ] || return 0
	: > "$work/out/manifest.tsv"
	for ((i = 0; i < n; i++)); do
		l=${k_label[i]}
		[ -f "$work/r1/$l.row" ] || continue
		cat "$work/r1/$l.row" >> "$work/out/manifest.tsv"
		mv "$work/r1/$l.ktap" "$work/r1/$l.console" "$work/r1/$l.splats.json" "$work/out/" 2>/dev/null || true
		done=$((done + 1))
	done
	[ "$done" -gt 0 ] && report_into "$work/out" >/dev/null 2>&1 || true
	rm -f "$work/out/manifest.tsv"
	# The guests cut short: their console so far.
	local cut=
	for ((i = 0; i < n; i++)); do
		l=${k_label[i]}
		[ ! -f "$work/r1/$l.row" ] && [ -s "$work/r1/$l.console" ] || continue
		mv "$work/r1/$l.console" "$work/out/" 2>/dev/null && cut="$cut $l.console"
	done
	note_interrupted "$1" "$work/out" "$done of $n kernels had finished; their results are here.${cut:+ The console so far of the guests cut short:$cut.}"
	publish_partial "$1"
}

# The slowest architectures first (the largest boot allowance: arm64
# under -icount): starting the long guests first keeps the last slot from
# running alone.
order=()
for b in $(for a in $arches; do arch_get "$a" boot; done | sort -rnu); do
	for ((i = 0; i < n; i++)); do
		[ "$(arch_get "${k_arch[i]}" boot)" = "$b" ] && order+=("$i")
	done
done
for ((r = 1; r <= repeat; r++)); do
	for i in "${order[@]}"; do
		while [ "$(jobs -rp | wc -l)" -ge "$((jobs + extra))" ]; do
			wait -n || true
		done
		[ "$mode" = kernel ] && [ "$repeat" = 1 ] || echo "run_tests.sh: booting ${k_label[i]} (${k_arch[i]})${repeat:+$([ "$repeat" = 1 ] || echo ", run $r of $repeat")}" >&2 || true
		run_one "$i" "$r" &
	done
done
while [ "$(jobs -rp | wc -l)" -gt "$extra" ]; do
	wait -n || true
done
if [ -n "$progress_pid" ]; then
	kill "$progress_pid" 2>/dev/null || true
	wait "$progress_pid" 2>/dev/null || true
	printf '\r\033[K' >&2 || true
fi

setup_err=
sysctl_msgs=()
: > "$work/out/manifest.tsv"
for ((i = 0; i < n; i++)); do
	l=${k_label[i]}
	for ((r = 1; r <= repeat; r++)); do
		d=$work/r$r
		if [ ! -f "$d/$l.row" ]; then	# run_one itself broke
			printf '%s\t%s\t%s\t\tnoboot\t\t\tthe runner failed\n' "$l" "${k_tasks[i]}" "${specs[i]}" > "$d/$l.row"
		fi
		[ ! -f "$d/$l.setup" ] || setup_err=1
		if [ "$r" = 1 ] && [ -s "$d/$l.sysctl" ]; then
			while IFS= read -r x; do
				sysctl_msgs+=("run_tests.sh: $l: --sysctl ${x%%: *}: the guest refused it: ${x#*: }")
			done < "$d/$l.sysctl"
		fi
		if [ -s "$d/$l.err" ]; then	# a guest that did not make it
			{
				IFS= read -r first || true
				first=${first#boot.sh: }
				echo "run_tests.sh: $l: ${first//"$d/"/"$rundir/"}"
				cat
			} < "$d/$l.err" >&2 || true
		fi
	done
	cat "$work/r1/$l.row" >> "$work/out/manifest.tsv"
	mv "$work/r1/$l.ktap" "$work/out/" 2>/dev/null || true
	mv "$work/r1/$l.console" "$work/out/" 2>/dev/null || true
	mv "$work/r1/$l.splats.json" "$work/out/" 2>/dev/null || true	# boot.sh: kernel splats
	mv "$work/r1/$l.qemu" "$work/out/" 2>/dev/null || true
done
[ ${#selectors[@]} = 0 ] || echo "# ran only ${selectors[*]}" >> "$work/out/manifest.tsv"

report_into() {	# DIR [--table]
	python3 "$m/lib/ktap.py" report "$1/manifest.tsv" \
		--json "$1/summary.json" --junit "$1/junit.xml" \
		--markdown "$1/table.md" --ktap "$1/report.ktap" "${@:2}"
}

# --repeat: every run's KTAP under repeat/LABEL/, the flips per kernel.
flips_rc=0
if [ "$repeat" != 1 ]; then
	for ((i = 0; i < n; i++)); do
		l=${k_label[i]}
		mkdir -p "$work/out/repeat/$l"
		cp "$work/out/$l.ktap" "$work/out/repeat/$l/1.ktap" 2>/dev/null || true
		for ((r = 2; r <= repeat; r++)); do
			mv "$work/r$r/$l.ktap" "$work/out/repeat/$l/$r.ktap" 2>/dev/null || true
		done
		frc=0
		(cd "$work/out/repeat/$l" && python3 "$m/lib/flips.py" $(seq -f '%g.ktap' 1 "$repeat")) \
			> "$work/out/repeat/$l/flips.txt" 2>&1 || frc=$?
		sed "s/^/$l: /" "$work/out/repeat/$l/flips.txt" >> "$work/out/flips.txt"
		[ "$frc" = 0 ] || flips_rc=1
	done
fi

case $mode in
kernel)
	l=${k_label[0]}
	report_into "$work/out" >/dev/null || true
	rm -f "$work/out/manifest.tsv"
	st=$(cut -f5 "$work/r1/$l.row")
	grc=$(cut -f7 "$work/r1/$l.row")
	reason=$(cut -f8 "$work/r1/$l.row")
	rc=0 broke= grc_bad=
	if [ -n "$setup_err" ]; then
		rc=2 broke="qemu did not start"
	elif [ "$st" != ok ]; then
		rc=3 broke=${reason:-did not boot}
	else
		python3 "$m/lib/ktap.py" summary "$work/out/$l.ktap" "perf_events on $l (${k_arch[0]} guest)" >"$work/summary" || rc=$?
		if [ "$grc" != 0 ] && [ "$grc" != 4 ] && [ "$rc" != 1 ]; then
			grc_bad=1 rc=1
		fi
		flipped "$flips_rc"
	fi
	[ ${#sysctl_msgs[@]} = 0 ] || rc=2
	finish "$rc" "$work/out/$l.ktap"
	# Reports are written: only now print (a closed stdout loses nothing).
	if [ -n "$broke" ]; then
		echo "perf_events on $l (${k_arch[0]} guest): $broke" >&2
	else
		[ "$repeat" != 1 ] || show "$rundir/$l.ktap"
		[ "$repeat" = 1 ] || show "$rundir/flips.txt"
		show "$work/summary"
		[ -z "$grc_bad" ] || echo "run_tests.sh: the guest's kselftest runner exited $grc" >&2
	fi
	[ ${#sysctl_msgs[@]} = 0 ] || printf '%s\n' "${sysctl_msgs[@]}" >&2
	exit "$rc"
	;;
matrix)
	rc=0
	report_into "$work/out" --table >"$work/table" || rc=$?
	rm -f "$work/out/manifest.tsv"
	# The guest's own runner failed where its KTAP shows no failure.
	: > "$work/grc"
	while IFS=$'\t' read -r l _ _ _ st _ grc _; do
		[ "$st" = ok ] && [ -n "$grc" ] && [ "$grc" != 0 ] && [ "$grc" != 4 ] || continue
		echo "run_tests.sh: $l: the guest's kselftest runner exited $grc" >> "$work/grc"
		[ "$rc" != 0 ] && [ "$rc" != 4 ] || rc=1
	done < <(cat "$work"/r1/*.row 2>/dev/null)
	flipped "$flips_rc"
	[ -z "$setup_err" ] && [ ${#sysctl_msgs[@]} = 0 ] || rc=2
	finish "$rc" "$work/out/report.ktap"
	show "$work/table"
	[ "$repeat" = 1 ] || show "$rundir/flips.txt"
	cat "$work/grc" >&2
	[ ${#sysctl_msgs[@]} = 0 ] || printf '%s\n' "${sysctl_msgs[@]}" >&2
	echo "run_tests.sh: reports in $rundir" >&2
	exit "$rc"
	;;
compare)
	rc=0
	report_into "$work/out" >/dev/null || rc=$?
	rm -f "$work/out/manifest.tsv"
	cmp=
	if [ -n "$setup_err" ]; then
		rc=2
	elif [ "$rc" = 3 ] || [ "$rc" = 2 ]; then
		:
	else
		cmp=1 rc=0
		python3 "$m/lib/ktap.py" compare "$work/out/${k_label[0]}.ktap" "$work/out/${k_label[1]}.ktap" \
			"${k_label[0]}" "${k_label[1]}" "${specs[0]}" "${specs[1]}" > "$work/compare" || rc=$?
	fi
	[ ${#sysctl_msgs[@]} = 0 ] || rc=2
	finish "$rc" "$work/out/report.ktap"
	[ -z "$cmp" ] || show "$work/compare"
	[ ${#sysctl_msgs[@]} = 0 ] || printf '%s\n' "${sysctl_msgs[@]}" >&2
	exit "$rc"
	;;
esac
