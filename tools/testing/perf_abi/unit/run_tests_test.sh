#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Bad input to run_tests.sh: every case must print one clear line on stderr
# (matching a pattern), nothing on stdout, exit 2 and leave no output
# directory behind.  No guest is booted: the kernel images are fakes with
# just the header bytes the runner reads.  Prints KTAP; exit 1 on failure.
set -eu

top=$(cd "$(dirname "$0")/../../../.." && pwd)
rt=$top/run_tests.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A cache of our own: the runner unpacks images into it.  Package lists
# and Debian kernels already fetched are borrowed from the user's cache.
real_cache=${PERF_ABI_CACHE:-${HOME:-/nonexistent}/.cache/perf-abi}
export PERF_ABI_CACHE="$tmp/cache"
mkdir -p "$PERF_ABI_CACHE/kernels"
for d in apt debs kernels/debian; do
	[ -d "$real_cache/$d" ] && ln -s "$real_cache/$d" "$PERF_ABI_CACHE/$d"
done

# A fake x86_64 bzImage ("HdrS" at 0x202, XLF_KERNEL_64 in xloadflags at
# 0x236) and a fake arm64 Image ("ARM\x64" at 0x38).
head -c 4096 /dev/zero > "$tmp/bzImage"
printf 'HdrS' | dd of="$tmp/bzImage" bs=1 seek=514 conv=notrunc status=none
printf '\001' | dd of="$tmp/bzImage" bs=1 seek=566 conv=notrunc status=none
head -c 4096 /dev/zero > "$tmp/Image"
printf 'ARMd' | dd of="$tmp/Image" bs=1 seek=56 conv=notrunc status=none
gzip -c "$tmp/Image" > "$tmp/Image.gz"
# A fake riscv64 Image ("RSC\x05" at 0x38), s390x image (two IPL CCWs at
# 8, then 0x40 fill) and ppc64 ELF vmlinux headers, little- and big-endian
# (ELFCLASS64, EI_DATA, e_machine EM_PPC64 = 21).
head -c 4096 /dev/zero > "$tmp/rvImage"
printf 'RSC\005' | dd of="$tmp/rvImage" bs=1 seek=56 conv=notrunc status=none
head -c 4096 /dev/zero > "$tmp/s390image"
printf '\002\000\000\030\140\000\000\120\002\000\000\150\140\000\000\120\100' |
	dd of="$tmp/s390image" bs=1 seek=8 conv=notrunc status=none
head -c 4096 /dev/zero > "$tmp/vmlinux-le"
printf '\177ELF\002\001\001' | dd of="$tmp/vmlinux-le" bs=1 conv=notrunc status=none
printf '\025\000' | dd of="$tmp/vmlinux-le" bs=1 seek=18 conv=notrunc status=none
head -c 4096 /dev/zero > "$tmp/vmlinux-be"
printf '\177ELF\002\002\001' | dd of="$tmp/vmlinux-be" bs=1 conv=notrunc status=none
printf '\000\025' | dd of="$tmp/vmlinux-be" bs=1 seek=18 conv=notrunc status=none
echo 'not a kernel' > "$tmp/notakernel"
printf 'garbage\037\213' > "$tmp/bad.gz"
mkdir "$tmp/matrix.d"
printf '%s\r\n' "$tmp/no-such-crlf" > "$tmp/crlf.list"
# An apt-get that only says it was called: make KVER=9.9 must not get there.
mkdir "$tmp/fakeapt"
printf '#!/bin/sh\necho "apt-get $*" >> "%s/apt-called"\nexit 1\n' "$tmp" > "$tmp/fakeapt/apt-get"
chmod +x "$tmp/fakeapt/apt-get"
printf '# nothing but comments\n\n' > "$tmp/empty.list"
printf 'debian:6.1.0-47-cloud-amd64 extra-word\n' > "$tmp/twowords.list"
printf '%s\n' "$tmp/notakernel" > "$tmp/badkernel.list"
# A PATH with every command of this machine but qemu.
mkdir "$tmp/bin"
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	ln -s "$d"/* "$tmp/bin/" 2>/dev/null || true	# the first of each name stays
done
rm -f "$tmp/bin"/qemu-system-*

cases=()
add() {	# NAME PATTERN ARGS...  (ARGS may use @OUT for the output dir)
	cases+=("$(printf '%q ' "$@")")
}
add missing-file 'no such kernel image' --kernel "$tmp/no-such-bzImage" -o @OUT
add not-a-kernel 'not a kernel image' --kernel "$tmp/notakernel" -o @OUT
add not-a-kernel-gzip 'not a kernel image' --kernel "$tmp/bad.gz" -o @OUT
add directory-kernel 'not a regular file' --kernel "$tmp/matrix.d" -o @OUT
add elf-not-image 'ELF file, not a kernel boot image' --kernel /bin/true -o @OUT
add x86-image-as-arm64 'is an x86_64 kernel, not arm64' --kernel "$tmp/bzImage" --arch arm64 -o @OUT
add arm64-image-as-x86 'is an arm64 kernel, not x86_64' --kernel "$tmp/Image" --arch x86_64 -o @OUT
add arm64-gzip-as-x86 'is an arm64 kernel, not x86_64' --kernel "$tmp/Image.gz" --arch x86_64 -o @OUT
add riscv64-image-as-arm64 'is an riscv64 kernel, not arm64' --kernel "$tmp/rvImage" --arch arm64 -o @OUT
add s390x-image-as-x86 'is an s390x kernel, not x86_64' --kernel "$tmp/s390image" --arch amd64 -o @OUT
add ppc64le-elf-as-riscv 'is an ppc64le kernel, not riscv64' --kernel "$tmp/vmlinux-le" --arch riscv64 -o @OUT
add ppc64-big-endian-elf 'big-endian ppc64 ELF kernel' --kernel "$tmp/vmlinux-be" -o @OUT
add debian-other-arch 'is an arm64 kernel, not x86_64' --kernel debian:6.12.118+deb12-arm64 --arch x86_64 -o @OUT
add unknown-debian-version "unknown Debian kernel.*versions apt knows: .*6\\.1\\.0-" --kernel debian:6.1.0-999-cloud-amd64 -o @OUT
add unknown-debian-flavour 'unknown Debian kernel flavour' --kernel debian:6.1.0-47-sparc64 -o @OUT
add bad-debian-name 'is not VERSION-FLAVOUR' --kernel debian:latest -o @OUT
add unknown-debian-line "unknown Debian kernel line.*5\\.10" --kernel debian:4.19-cloud-amd64 -o @OUT
add tree-missing 'no such kernel tree' --kernel "tree:$tmp/no-such-tree" -o @OUT
add tree-not-a-kernel 'is not a kernel source tree' --kernel "tree:$tmp/matrix.d" -o @OUT
add list-kernels-two 'takes one PATTERN at most' --list-kernels a b
add unknown-arch "unknown architecture 'mips' \\(arm64 armhf i386 ppc64le riscv64 s390x x86_64\\)" --kernel "$tmp/bzImage" --arch mips -o @OUT
add qemu-missing-s390x 'qemu-system-s390x not found' ENV:PATH="$tmp/bin" --kernel "$tmp/s390image" -o @OUT
add qemu-missing 'qemu-system-x86_64 not found' ENV:PATH="$tmp/bin" --kernel "$tmp/bzImage" -o @OUT
add qemu-override-missing 'is not an executable' ENV:QEMU_ARM64=/nonexistent/qemu --kernel "$tmp/Image" -o @OUT
add matrix-missing 'no such matrix file' --matrix "$tmp/no-such.list" -o @OUT
add matrix-unreadable 'cannot read matrix file' --matrix "$tmp/matrix.d" -o @OUT
add matrix-empty 'lists no kernel' --matrix "$tmp/empty.list" -o @OUT
add matrix-two-words 'one SPEC a line' --matrix "$tmp/twowords.list" -o @OUT
add matrix-bad-kernel 'not a kernel image' --matrix "$tmp/badkernel.list" -o @OUT
add compare-one-spec 'needs two kernel SPECs' --compare "$tmp/bzImage"
add compare-bad-new 'no such kernel image' --compare "$tmp/bzImage" "$tmp/nope" -o @OUT
add unknown-option "unknown option '--frobnicate'" --frobnicate
add unknown-option-with-kernel "unknown option '--frobnicate'" --kernel "$tmp/bzImage" --frobnicate -o @OUT
add stray-argument "unexpected argument 'bzImage'" bzImage
add kernel-without-spec 'needs a kernel SPEC' --kernel
add guest-option-on-host '--append goes with --kernel' --append nosmp
add two-modes 'one at a time' --kernel "$tmp/bzImage" --matrix
add bad-smp "is not a CPU count" --kernel "$tmp/bzImage" --smp lots -o @OUT
add bad-memory 'is not a memory size' --kernel "$tmp/bzImage" --memory 64M -o @OUT
add output-is-file 'exists and is not a directory' --kernel "$tmp/bzImage" -o "$tmp/notakernel"
add suite-not-a-tree 'is not a kselftest install tree' --kernel "$tmp/bzImage" --suite "$tmp/matrix.d" -o @OUT
add sysctl-no-value 'is not NAME=VALUE' --kernel "$tmp/bzImage" --sysctl kernel.perf_user_access -o @OUT
add sysctl-space 'is not NAME=VALUE' --kernel "$tmp/bzImage" --sysctl 'kernel.x=1 perf_abi.user=0' -o @OUT
add sysctl-path 'is not NAME=VALUE' --kernel "$tmp/bzImage" --sysctl ../x=1 -o @OUT
add sysctl-on-host '--sysctl goes with --kernel' --sysctl kernel.perf_user_access=1
add user-not-uid 'is not a numeric uid' --kernel "$tmp/bzImage" --user nobody -o @OUT
add user-missing 'needs a uid' --kernel "$tmp/bzImage" --user
add unknown-test "no test program 'nope'" --kernel "$tmp/bzImage" -t nope -o @OUT
add test-is-an-option "-t needs a test name, not the option '-v'" -t -v -o @OUT
add test-lib-not-a-program "no test program 'lib'" -t lib -o @OUT
add test-not-a-regex "no test program 'mmap.page'" -t mmap.page -o @OUT
add test-names-no-test "-t mmap_page:no_such_test: no test of mmap_page is named" -t mmap_page:no_such_test -o @OUT
add test-glob-no-test "no test of rdpmc is named 'nothing\\.\\*'" -t 'rdpmc:nothing.*' -o @OUT
add memory-fraction "'1.5G' is not a memory size \\(whole MiB or GiB" --kernel "$tmp/bzImage" --memory 1.5G -o @OUT
add memory-absurd "'99999999G' is not a memory size from 128M to [0-9]+M" --kernel "$tmp/bzImage" --memory 99999999G -o @OUT
add compare-option-as-spec "'--smp' is an option, not a kernel SPEC" --compare "$tmp/bzImage" --smp 2 -o @OUT
add matrix-twice '--matrix given twice' --matrix "$tmp/empty.list" --matrix -o @OUT
add matrix-crlf "no such kernel image: $tmp/no-such-crlf\$" --matrix "$tmp/crlf.list" -o @OUT
add debian-no-name "'debian:' needs VERSION-FLAVOUR" --kernel debian: -o @OUT
add home-unset 'no such kernel image' ENV:-HOME --kernel "$tmp/no-such-bzImage" -o @OUT
add cache-unwritable "PERF_ABI_CACHE=$tmp/notakernel/cache: cannot write the cache" ENV:PERF_ABI_CACHE="$tmp/notakernel/cache" --kernel "$tmp/bzImage" -o @OUT
add label-reserved "'report' is reserved" --kernel "$tmp/bzImage" --label report -o @OUT
add output-uncreatable 'cannot create .* is not a writable directory' --kernel "$tmp/bzImage" -o "$tmp/notakernel/out"
add repeat-zero "'0' is not a number of runs" --repeat 0 -o @OUT
add privilege-unknown "--privilege: 'admin' is not a MODE" --kernel "$tmp/bzImage" --privilege admin -o @OUT
add cells-bad-level "--cells: 'user@4' is not MODE@LEVEL" --kernel "$tmp/bzImage" --cells root@2,user@4 -o @OUT
add cells-with-privilege '--privilege and --cells go one at a time' --kernel "$tmp/bzImage" --cells all --privilege user -o @OUT
add user-with-nocaps '--user goes with --privilege perfmon or user' --kernel "$tmp/bzImage" --privilege nocaps --user 1000 -o @OUT
add make-kver-unknown 'no suite known for linux-source-9.9' MAKE: ENV:PATH="$tmp/fakeapt:$PATH" KVER=9.9 framework

echo "TAP version 13"
echo "1..${#cases[@]}"
n=0 failed=0
for c in "${cases[@]}"; do
	n=$((n + 1))
	eval "set -- $c"
	name=$1 pat=$2
	shift 2
	out=$tmp/out.$n
	env=() args=() cmd=("$rt") prefix=run_tests.sh maxlines=1
	for a in "$@"; do
		case $a in
		ENV:-*) env+=(-u "${a#ENV:-}") ;;
		ENV:*) env+=("${a#ENV:}") ;;
		MAKE:) cmd=(make -s -C "$top" --no-print-directory) prefix='(deps|tree)\.sh' maxlines=2 ;;
		@OUT) args+=("$out") ;;
		*) args+=("$a") ;;
		esac
	done
	rc=0
	rm -f "$tmp/apt-called"
	env "${env[@]}" "${cmd[@]}" "${args[@]}" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null || rc=$?
	why=
	lines=$(grep -c . "$tmp/stderr" || true)
	if [ "$rc" != 2 ]; then
		why="exit $rc, not 2"
	elif ! grep -qE "^$prefix: .*$pat" "$tmp/stderr"; then
		why="stderr lacks /$pat/"
	elif [ "$lines" -gt "$maxlines" ]; then
		why="$lines lines on stderr, not one"
	elif grep -q $'\r' "$tmp/stderr"; then
		why="a carriage return on stderr"
	elif grep -qE 'unbound variable|line [0-9]+:|command not found|Traceback' "$tmp/stderr"; then
		why="an internal error leaked"
	elif [ -e "$tmp/apt-called" ]; then
		why="ran apt-get"
	elif [ -s "$tmp/stdout" ]; then
		why="output on stdout"
	elif [ -e "$out" ]; then
		why="left an output directory"
	fi
	[ -z "${DUMP_MESSAGES:-}" ] || printf '%s\t%s\t%s\n' "$name" "$(head -n 1 "$tmp/stderr" | sed "s|$tmp/|/tmp/|g")" "$rc" >> "$DUMP_MESSAGES"
	if [ -z "$why" ]; then
		echo "ok $n $name"
	else
		echo "# run_tests.sh ${args[*]}"
		sed -e 's/^/# stderr: /' "$tmp/stderr" | head -n 5
		echo "not ok $n $name # $why"
		failed=$((failed + 1))
	fi
	rm -rf "$out"
done
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
