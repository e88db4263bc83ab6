#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The selection of lib/rt_suite.py, which -t and --list rest on: the
# harness's -l table read into full test names (fixtures with and without
# variants, a variant name wider than its column, more variants than tests
# and the reverse), globs and exact names matched, and the filter options
# made from a selection: the harness's own rule (the first -f/-v/-t/-r
# that matches enables a test) must enable exactly the selected tests.
# Prints KTAP; exit 1 on failure.
set -u

here=$(cd "$(dirname "$0")" && pwd)
# list_tests PROG, match_tests ALL PATTERN, compress_filter ALL SELECTED:
# rt_suite.py's functions (python3 -S, as run_tests.sh runs it), names one a line
py() {	# CODE ARGS...
	python3 -S -B -c "import sys; sys.path.insert(0, sys.argv[1]); import rt_suite as r
w = lambda x: sys.stdout.write(''.join(n + '\\n' for n in x))
a = lambda f: open(f).read().split()
$1" "$here/../lib" "${@:2}"
}
list_tests() { py 'w(r.list_tests(sys.argv[2]))' "$1"; }
match_tests() { py 'w(r.match_tests(a(sys.argv[2]), sys.argv[3]))' "$1" "$2"; }
compress_filter() { py 'w(r.compress_filter(a(sys.argv[2]), a(sys.argv[3])))' "$1" "$2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A program whose -l prints what kselftest_harness.h (6.12) prints.
cat > "$tmp/prog" <<'PROG'
#!/bin/sh
[ "$1" = -l ] || exit 1
{
printf '%-20s %-25s %s\n' '# FIXTURE' VARIANT TEST
printf '%-20s %-25s %s\n' global '' alpha
printf '%-20s %-25s %s\n' '' '' beta
printf '%-20s %-25s %s\n' '' '' gamma
echo --------------------------------------------------------------------------------
printf '%-20s %-25s %s\n' agree a_variant_name_much_longer_than_25 read
printf '%-20s %-25s %s\n' '' short ''
printf '%-20s %-25s %s\n' '' third ''
echo --------------------------------------------------------------------------------
printf '%-20s %-25s %s\n' page cpu one
printf '%-20s %-25s %s\n' '' dummy two
printf '%-20s %-25s %s\n' '' '' three
} >&2
exit 4
PROG
chmod +x "$tmp/prog"
cat > "$tmp/want" <<'WANT'
global.alpha
global.beta
global.gamma
agree.a_variant_name_much_longer_than_25.read
agree.short.read
agree.third.read
page.cpu.one
page.dummy.one
page.cpu.two
page.dummy.two
page.cpu.three
page.dummy.three
WANT

echo "TAP version 13"
echo "1..3"
failed=0
list_tests "$tmp/prog" > "$tmp/all"
if sort "$tmp/all" | cmp -s - <(sort "$tmp/want"); then
	echo "ok 1 the -l table read into full names"
else
	diff <(sort "$tmp/want") <(sort "$tmp/all") | sed 's/^/# /'
	echo "not ok 1 the -l table read into full names"
	failed=1
fi

# enabled ALL OPTIONS: the names the harness would run (test_enabled())
enabled() {
	awk 'NR == FNR { o[NR] = $1; a[NR] = $2; n = NR; next }
	{
		k = split($0, p, ".")
		f = p[1]; v = (k == 3) ? p[2] : ""; t = p[k]
		for (i = 1; i <= n; i++)
			if ((o[i] == "-f" && a[i] == f) || (o[i] == "-v" && a[i] == v) ||
			    (o[i] == "-t" && a[i] == t) || (o[i] == "-r" && a[i] == $0)) {
				print; break
			}
	}' "$2" "$1"
}

bad=
for pats in 'global.beta' 'agree.*' 'page.*.two' 'page.cpu.*' 'beta' \
	    'global.* page.dummy.one' 'page.cpu.one agree.short.read' '*'; do
	: > "$tmp/sel"
	for p in $pats; do
		match_tests "$tmp/all" "$p" >> "$tmp/sel"
	done
	compress_filter "$tmp/all" "$tmp/sel" > "$tmp/opts"
	enabled "$tmp/all" "$tmp/opts" > "$tmp/on"
	if ! cmp -s <(sort -u "$tmp/sel") <(sort -u "$tmp/on"); then
		bad="$bad [$pats -> $(tr '\n' ' ' < "$tmp/opts")]"
	fi
	[ "$pats" != 'page.*.two' ] || [ "$(cat "$tmp/opts")" = "-t two" ] || bad="$bad [page.*.two not -t two]"
	[ "$pats" != 'agree.*' ] || [ "$(cat "$tmp/opts")" = "-f agree" ] || bad="$bad [agree.* not -f agree]"
done
if [ -z "$bad" ]; then
	echo "ok 2 the filter options enable exactly the selected tests, shortest first"
else
	echo "# $bad"
	echo "not ok 2 the filter options enable exactly the selected tests, shortest first"
	failed=1
fi

m1=$(match_tests "$tmp/all" 'global.bet?' | tr '\n' ' ')
m2=$(match_tests "$tmp/all" 'global.b.ta' | tr '\n' ' ')
m3=$(match_tests "$tmp/all" 'one' | tr '\n' ' ')
if [ "$m1" = "global.beta " ] && [ -z "$m2" ] && [ "$m3" = "page.cpu.one page.dummy.one " ]; then
	echo "ok 3 globs match, a dot is a dot, a TEST alone matches its last part"
else
	echo "# '$m1' '$m2' '$m3'"
	echo "not ok 3 globs match, a dot is a dot, a TEST alone matches its last part"
	failed=1
fi
[ "$failed" = 0 ]
