# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by run_tests.sh: the tests a kselftest install tree holds, and a
# -t selection turned into the harness's own filter options.
#
# Test names are the ones the KTAP prints: FIXTURE.TEST for TEST(), else
# FIXTURE.VARIANT.TEST.  They come from the program itself (the harness's
# -l, 6.12 and newer), never from a guess.

# tree_progs TREE: "COLLECTION:PROGRAM" lines of its kselftest-list.txt
tree_progs() {
	tr -d '\r' < "$1/kselftest-list.txt"
}

# tree_coll TREE PROG: the collection holding PROG (exact name, no regex)
tree_coll() {
	tree_progs "$1" | awk -F: -v p="$2" '$2 == p { print $1; exit }'
}

# harness_lists FILE: true if FILE is a kselftest harness that has -l
harness_lists() {
	grep -qa -- 'list all tests' "$1" 2>/dev/null
}

# list_tests FILE: the full names of the tests of one harness program,
# from its -l table (columns FIXTURE, VARIANT, TEST; a fixture's variants
# and tests are listed side by side, its tests run for every variant).
# Status 126 when FILE does not run here (another architecture).
list_tests() {
	local raw rc=0
	raw=$(timeout 20 "$1" -l 2>&1 >/dev/null) || rc=$?
	case $rc in 0|4) ;; *) return "$rc" ;; esac
	printf '%s\n' "$raw" | awk '
	function flush(i, j) {
		if (f == "")
			return
		for (j = 0; j < nt; j++) {
			if (nv == 0)
				print f "." t[j]
			for (i = 0; i < nv; i++)
				print f "." v[i] "." t[j]
		}
		f = ""; nv = 0; nt = 0
	}
	/^# FIXTURE/ { next }
	/^-----/ { flush(); next }
	NF == 0 { next }
	substr($0, 1, 1) != " " {
		flush()
		f = $1
		if (NF >= 3) { v[nv++] = $2; t[nt++] = $3 }
		else if (NF == 2) t[nt++] = $2
		next
	}
	{
		# FIXTURE is empty here: a VARIANT starts at column 22, a
		# TEST only after the 25 columns of VARIANT.
		if (substr($0, 22, 1) != " ") {
			v[nv++] = $1
			if (NF >= 2) t[nt++] = $2
		} else {
			t[nt++] = $1
		}
	}
	END { flush() }'
}

# compress_filter ALL SELECTED: the harness options (one a line, "-f X",
# "-t X", "-v X" or "-r NAME") that run exactly SELECTED (a subset of ALL,
# both files of full names), shortest first: a whole fixture, a test or a
# variant that belongs to one fixture only, else each name.
compress_filter() {
	awk '
	function split_name(n, a,   k) {
		k = split(n, a, ".")
		if (k == 2) { a[3] = a[2]; a[2] = "" }
	}
	NR == FNR {
		split_name($0, a)
		all[$0] = 1; order[++na] = $0
		nf[a[1]]++; nt[a[1] SUBSEP a[3]]++; nv[a[1] SUBSEP a[2]]++
		if (!((a[3], a[1]) in tfix)) { tfix[a[3], a[1]] = 1; tfixn[a[3]]++ }
		if (a[2] != "" && !((a[2], a[1]) in vfix)) { vfix[a[2], a[1]] = 1; vfixn[a[2]]++ }
		next
	}
	($0 in all) && !($0 in sel) {
		sel[$0] = 1
		split_name($0, a)
		sf[a[1]]++; st[a[1] SUBSEP a[3]]++; sv[a[1] SUBSEP a[2]]++
	}
	END {
		for (i = 1; i <= na; i++) {
			n = order[i]
			if (!(n in sel))
				continue
			split_name(n, a)
			if (sf[a[1]] == nf[a[1]]) {
				if (!(("f", a[1]) in done)) print "-f " a[1]
				done["f", a[1]] = 1
			} else if (st[a[1], a[3]] == nt[a[1], a[3]] && tfixn[a[3]] == 1) {
				if (!(("t", a[3]) in done)) print "-t " a[3]
				done["t", a[3]] = 1
			} else if (a[2] != "" && sv[a[1], a[2]] == nv[a[1], a[2]] && vfixn[a[2]] == 1) {
				if (!(("v", a[2]) in done)) print "-v " a[2]
				done["v", a[2]] = 1
			} else {
				print "-r " n
			}
		}
	}' "$1" "$2"
}

# match_tests ALL PATTERN: the names of ALL (a file) that PATTERN selects:
# a shell glob (* ? [...]) over the full name, or, for a PATTERN without a
# dot, over the TEST part alone.  Plain text is matched exactly.
match_tests() {
	local n base
	while IFS= read -r n; do
		base=${n##*.}
		# shellcheck disable=SC2053
		if [[ $n == $2 ]] || { [[ $2 != *.* ]] && [[ $base == $2 ]]; }; then
			echo "$n"
		fi
	done < "$1"
}
