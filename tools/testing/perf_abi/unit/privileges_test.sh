#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The privilege table's pieces without a guest: lib/privileges.py on
# crafted --cells KTAP (a clean table; a FAIL; a SKIP of a test that passed
# in another cell whose reason names no permission), lib/names.py
# --names-only, and vm/privrun.c on this machine (as root only: each mode's
# uid and capability sets as /proc/self/status shows them after exec).
# Prints KTAP; exit 1 on failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../lib
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0 failed=0
check() {	# NAME OK [WHY]
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1${3:+ # $3}"
		failed=$((failed + 1))
	fi
}

cells() {	# OUT REASON VERDICT2: two cells; test b passes in root@2
	{
		printf '%s\n' 'TAP version 13' '1..2' '# privileges: root at perf_event_paranoid 2' \
			'# TAP version 13' '# 1..1' '# # selftests: perf_events: p' \
			'# # TAP version 13' '# # 1..2' '# # ok 1 g.a' '# # ok 2 g.b' \
			'# ok 1 selftests: perf_events: p' 'ok 1 privileges: root@2' \
			'# privileges: user at perf_event_paranoid 2' \
			'# TAP version 13' '# 1..1' '# # selftests: perf_events: p' \
			'# # TAP version 13' '# # 1..2' '# # ok 1 g.a'
		case $3 in
		skip) echo "# # ok 2 g.b # SKIP $2" ;;
		fail) echo "# # not ok 2 g.b" ;;
		esac
		case $3 in
		skip) printf '%s\n' '# ok 1 selftests: perf_events: p' 'ok 2 privileges: user@2' ;;
		fail) printf '%s\n' '# not ok 1 selftests: perf_events: p' 'not ok 2 privileges: user@2 # exit=1' ;;
		esac
	} > "$1"
}

cells "$tmp/good.ktap" "needs CAP_PERFMON or a lower perf_event_paranoid" skip
python3 "$lib/privileges.py" --cells-dir "$tmp/cells" "$tmp/t.md" k="$tmp/good.ktap" > "$tmp/out" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q '^| k | root |  |  |  | 2 / 0 / 0 |  |$' "$tmp/t.md" &&
	grep -q '^| k | user |  |  |  | 1 / 1 / 0 |  |$' "$tmp/t.md" &&
	grep -q '^| k | needs CAP_PERFMON or a lower perf_event_paranoid | user@2: 1 |$' "$tmp/t.md" &&
	[ -f "$tmp/cells/k-user@2.ktap" ]
check "privileges.py: a clean table, the permission SKIP listed, the cells split" $? "exit $rc: $(head -c 300 "$tmp/out")"

cells "$tmp/noperm.ktap" "needs a hardware PMU" skip
python3 "$lib/privileges.py" "$tmp/t.md" k="$tmp/noperm.ktap" > "$tmp/out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q 'SKIP "needs a hardware PMU" (in user@2) names no permission' "$tmp/out"
check "privileges.py: a SKIP naming no permission where root passed fails" $? "exit $rc"

cells "$tmp/fail.ktap" "" fail
python3 "$lib/privileges.py" "$tmp/t.md" k="$tmp/fail.ktap" > "$tmp/out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q 'k user@2: p:g.b failed' "$tmp/out" && grep -qF '**1 / 0 / 1**' "$tmp/t.md"
check "privileges.py: a failed test in a cell fails, its cell in bold" $? "exit $rc"

# names.py: the cells differ in SKIP reason (allowed after --names-only),
# not in test names.
r=$tmp/cells/k-root@2.ktap u=$tmp/cells/k-user@2.ktap
sed -e 's/SKIP .*/SKIP needs root/' "$u" > "$tmp/u2.ktap"
python3 "$lib/names.py" "$tmp/n.ktap" a="$r" b="$u" c="$tmp/u2.ktap" >/dev/null
rc1=$?
python3 "$lib/names.py" "$tmp/n.ktap" a="$r" b="$u" --names-only c="$tmp/u2.ktap" >/dev/null
rc2=$?
sed -e 's/g\.b/g.c/' "$u" > "$tmp/u3.ktap"
python3 "$lib/names.py" "$tmp/n.ktap" a="$r" --names-only c="$tmp/u3.ktap" >/dev/null
rc3=$?
[ "$rc1" = 1 ] && [ "$rc2" = 0 ] && [ "$rc3" = 1 ]
check "names.py --names-only: reasons may differ, names may not" $? "exits $rc1 $rc2 $rc3"

# privrun on this machine
if [ "$(id -u)" = 0 ] && gcc -static -O2 -o "$tmp/privrun" "$here/../vm/privrun.c" -lcap 2>/dev/null; then
	why=
	for want in "root 0 -" "nocaps 0 0000000000000000" "perfmon 65534 0000004000000000" "user 65534 0000000000000000"; do
		set -- $want
		st=$("$tmp/privrun" "$1" 65534 cat /proc/self/status)
		uid=$(echo "$st" | awk '/^Uid:/ { print $3 }')
		eff=$(echo "$st" | awk '/^CapEff:/ { print $2 }')
		amb=$(echo "$st" | awk '/^CapAmb:/ { print $2 }')
		[ "$uid" = "$2" ] || why="$why $1: euid $uid"
		[ "$3" = - ] || [ "$eff" = "$3" ] || why="$why $1: CapEff $eff"
		[ "$1" != perfmon ] || [ "$amb" = "$3" ] || why="$why $1: CapAmb $amb"
	done
	"$tmp/privrun" nocaps 0 sh -c 'exec cat /proc/self/status' | grep -q '^CapEff:.0000000000000000' ||
		why="$why nocaps: an exec gave root its capabilities back"
	"$tmp/privrun" bogus 0 true 2>/dev/null
	[ $? = 2 ] || why="$why bad mode not exit 2"
	[ -z "$why" ]
	check "privrun: uid and capabilities of every mode after exec" $? "${why# }"
else
	echo "ok $((n + 1)) privrun: uid and capabilities of every mode after exec # SKIP needs root and a static libcap"
	n=$((n + 1))
fi
echo "1..$n"
[ "$failed" = 0 ]
