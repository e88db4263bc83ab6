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

# A fake x86_64 bzImage ("HdrS" at 0x202, XLF_KERNEL_64 in xloadflags at
# 0x236) and a fake arm64 Image ("ARM\x64" at 0x38).
head -c 4096 /dev/zero > "$tmp/bzImage"
printf 'HdrS' | dd of="$tmp/bzImage" bs=1 seek=514 conv=notrunc status=none
printf '\001' | dd of="$tmp/bzImage" bs=1 seek=566 conv=notrunc status=none
head -c 4096 /dev/zero > "$tmp/Image"
printf 'ARMd' | dd of="$tmp/Image" bs=1 seek=56 conv=notrunc status=none
gzip -c "$tmp/Image" > "$tmp/Image.gz"
echo 'not a kernel' > "$tmp/notakernel"
printf 'garbage\037\213' > "$tmp/bad.gz"
mkdir "$tmp/matrix.d"
printf '# nothing but comments\n\n' > "$tmp/empty.list"
printf 'debian:6.1.0-47-cloud-amd64 extra-word\n' > "$tmp/twowords.list"
printf '%s\n' "$tmp/notakernel" > "$tmp/badkernel.list"
# A PATH with every command of this machine but qemu.
mkdir "$tmp/bin"
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	for f in "$d"/*; do
		n=${f##*/}
		case $n in qemu-system-*) continue ;; esac
		[ -e "$tmp/bin/$n" ] || ln -s "$f" "$tmp/bin/$n" 2>/dev/null || true
	done
done

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
add debian-other-arch 'is an arm64 kernel, not x86_64' --kernel debian:6.12.118+deb12-arm64 --arch x86_64 -o @OUT
add unknown-debian-version "unknown Debian kernel.*versions apt knows: .*6\\.1\\.0-" --kernel debian:6.1.0-999-cloud-amd64 -o @OUT
add unknown-debian-flavour 'unknown Debian kernel flavour' --kernel debian:6.1.0-47-sparc64 -o @OUT
add bad-debian-name 'is not VERSION-FLAVOUR' --kernel debian:latest -o @OUT
add unknown-debian-line "unknown Debian kernel line.*5\\.10" --kernel debian:4.19-cloud-amd64 -o @OUT
add tree-missing 'no such kernel tree' --kernel "tree:$tmp/no-such-tree" -o @OUT
add tree-not-a-kernel 'is not a kernel source tree' --kernel "tree:$tmp/matrix.d" -o @OUT
add list-kernels-two 'takes one PATTERN at most' --list-kernels a b
add unknown-arch "unknown architecture 'mips'" --kernel "$tmp/bzImage" --arch mips -o @OUT
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
add unknown-test "no test program 'nope'" --kernel "$tmp/bzImage" -t nope -o @OUT

echo "TAP version 13"
echo "1..${#cases[@]}"
n=0 failed=0
for c in "${cases[@]}"; do
	n=$((n + 1))
	eval "set -- $c"
	name=$1 pat=$2
	shift 2
	out=$tmp/out.$n
	env=() args=()
	for a in "$@"; do
		case $a in
		ENV:*) env+=("${a#ENV:}") ;;
		@OUT) args+=("$out") ;;
		*) args+=("$a") ;;
		esac
	done
	rc=0
	env "${env[@]}" "$rt" "${args[@]}" >"$tmp/stdout" 2>"$tmp/stderr" </dev/null || rc=$?
	why=
	lines=$(grep -c . "$tmp/stderr" || true)
	if [ "$rc" != 2 ]; then
		why="exit $rc, not 2"
	elif ! grep -qE "^run_tests.sh: .*$pat" "$tmp/stderr"; then
		why="stderr lacks /$pat/"
	elif [ "$lines" != 1 ]; then
		why="$lines lines on stderr, not one"
	elif [ -s "$tmp/stdout" ]; then
		why="output on stdout"
	elif [ -e "$out" ]; then
		why="left an output directory"
	fi
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
