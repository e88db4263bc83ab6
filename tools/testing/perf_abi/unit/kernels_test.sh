#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel machinery without a kernel: labels read from images
# (kernels/image.sh), the --compare regression-report block (lib/ktap.py),
# the suite check of lib/apt-fetch.sh.  Prints KTAP; exit 1 on failure.
set -u

m=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PERF_ABI_CACHE=$tmp/cache

n=0 failed=0
check() {	# NAME STATUS-OF-TEST [DETAIL]
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		echo "ok $n $1"
	else
		[ -z "${3:-}" ] || echo "# $3"
		echo "not ok $n $1"
		failed=$((failed + 1))
	fi
}
echo "TAP version 13"
echo "1..6"

# bzImage: kernel_version (0x20e) points at the version string, less 0x200.
head -c 8192 /dev/zero > "$tmp/bzImage"
printf 'HdrS' | dd of="$tmp/bzImage" bs=1 seek=514 conv=notrunc status=none
printf '\001' | dd of="$tmp/bzImage" bs=1 seek=566 conv=notrunc status=none
printf '\000\020' | dd of="$tmp/bzImage" bs=1 seek=526 conv=notrunc status=none
printf '5.10.0-43-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP\000' |
	dd of="$tmp/bzImage" bs=1 seek=$((0x1000 + 0x200)) conv=notrunc status=none
r=$("$m/kernels/image.sh" "$tmp/bzImage" 2>&1)
[ "$r" = "x86_64 5.10.0-43-cloud-amd64 $tmp/bzImage" ]
check "bzImage labelled by its kernel_version" $? "got: $r"

head -c 8192 /dev/zero > "$tmp/Image"
printf 'ARMd' | dd of="$tmp/Image" bs=1 seek=56 conv=notrunc status=none
printf 'Linux version 7.3.4+deb13-arm64 (debian-kernel@lists.debian.org)' |
	dd of="$tmp/Image" bs=1 seek=5000 conv=notrunc status=none
gzip -c "$tmp/Image" > "$tmp/Image.gz"
r=$("$m/kernels/image.sh" "$tmp/Image.gz" 2>&1)
[ "${r% *}" = "arm64 7.3.4+deb13-arm64" ]
check "gzip'd arm64 Image labelled by its banner" $? "got: $r"

# A regression between two runs: the block names both, the messages, the
# hint and regzbot's range.
cat > "$tmp/old.ktap" <<'KTAP'
TAP version 13
1..1
# TAP version 13
# 1..2
# ok 1 global.a
# ok 2 page.x.opened_disabled
ok 1 selftests: perf_events: mmap_page
KTAP
cat > "$tmp/new.ktap" <<'KTAP'
TAP version 13
1..1
# TAP version 13
# 1..2
# ok 1 global.a
# #  RUN           page.x.opened_disabled ...
# # mmap_page.c:623:opened_disabled:Expected 0 (0) != up_check_size(snap) (0)
# # mmap_page.c:624:opened_disabled:opened disabled: size 0 is below 76
# # hint: fa7315871046 (perf: Add size to struct perf_event_mmap_page)
# #          FAIL  page.x.opened_disabled
# not ok 2 page.x.opened_disabled
not ok 1 selftests: perf_events: mmap_page # exit=1
KTAP
out=$(python3 "$m/lib/ktap.py" compare "$tmp/old.ktap" "$tmp/new.ktap" \
	6.12.117+deb13-cloud-amd64 6.12.118+deb13-cloud-amd64 debian:6.12.117+deb13-cloud-amd64 tree:/src/linux)
rc=$?
want='  last good: 6.12.117+deb13-cloud-amd64
  first bad: 6.12.118+deb13-cloud-amd64 (tree:/src/linux)
1 test regressed; the first 1:
  mmap_page:page.x.opened_disabled (was pass)
    mmap_page.c:624: opened disabled: size 0 is below 76
hint: fa7315871046 (perf: Add size to struct perf_event_mmap_page)
#regzbot introduced: v6.12.117..v6.12.118'
[ "$rc" = 1 ] && [ "$(echo "$out" | tail -n 7)" = "$want" ]
check "compare: regression-report block" $? "got: $(echo "$out" | tail -n 7 | tr '\n' '|')"

out=$(python3 "$m/lib/ktap.py" compare "$tmp/old.ktap" "$tmp/new.ktap" 6.1.0-47-cloud-amd64 6.1.0-57-cloud-amd64)
! echo "$out" | grep -q regzbot && echo "$out" | grep -q '^  first bad: 6.1.0-57-cloud-amd64$'
check "compare: no regzbot range for Debian ABI names" $? "got: $(echo "$out" | tr '\n' '|')"

out=$(python3 "$m/lib/ktap.py" compare "$tmp/new.ktap" "$tmp/old.ktap" a b)
! echo "$out" | grep -q 'regression report'
check "compare: no block without a regression" $? "got: $(echo "$out" | tr '\n' '|')"

err=$("$m/lib/apt-fetch.sh" --suite hamm --list amd64 x 2>&1 >/dev/null)
rc=$?
[ "$rc" = 2 ] && [ "$err" = "apt-fetch: unknown Debian suite 'hamm' (bullseye, bookworm, trixie, trixie-backports, sid)" ]
check "apt-fetch: an unknown suite is one line, exit 2" $? "got: $rc $err"

echo "# $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
