# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034  # OUT_PREVIOUS: read by run_tests.sh
#
# Sourced by run_tests.sh: the --output directory.
#
# DIR is resolved first (out_resolve: realpath -m, so that "new/.." is the
# directory it names) and every check applies to the resolved path.  A
# non-empty DIR without the marker DIR/.perf-abi-output is refused up front
# (it is someone else's), unless it lies in build/ or holds the
# summary.json and report.ktap of an earlier run_tests.sh.  The run holds
# a lock on DIR (flock on the directory itself) from out_create to its end.
#
# A run writes its reports into a work directory and publishes them at the
# end (out_publish): copied into a staging directory inside DIR (a full
# disk fails there, with DIR as it was), then each file renamed into
# place.  The files the previous run listed in the marker are removed, if
# their names are of the kinds run_tests.sh writes (a forged marker cannot
# remove a user's file of another name).  An interrupted run that replaces
# complete results moves them to DIR/previous/ instead (OUT_PREVIOUS says
# so); an interrupted run over interrupted results carries previous/ on.

OUT_MARKER=.perf-abi-output
OUT_STAGE=.perf-abi-staging
out_made=	# the topmost directory this run created, if any
OUT_PREVIOUS=	# set by out_publish: where the complete results before went

# out_resolve PATH: the absolute path PATH names, links and .. resolved
out_resolve() {
	realpath -m -- "$1"
}

# out_ours NAME: a name run_tests.sh writes into DIR (what a marker may
# list for removal)
out_ours() {
	case $1 in
	''|.|..|*/*) return 1 ;;
	summary.json|junit.xml|table.md|report.ktap|flips.txt|INTERRUPTED|repeat|previous) return 0 ;;
	*.ktap|*.console|*.splats.json|*.qemu|*.uncovered) return 0 ;;
	esac
	return 1
}

# out_check DIR BUILD: an error message on stdout if DIR cannot be ours
out_check() {
	local d=$1 p
	if [ -e "$d" ] && [ ! -d "$d" ]; then
		echo "$d exists and is not a directory"
		return
	fi
	if [ -d "$d" ]; then
		[ -w "$d" ] && [ -x "$d" ] || { echo "cannot write into $d"; return; }
		case $(cd "$d" && pwd -P)/ in "$(cd "$2" 2>/dev/null && pwd -P)"/*) return ;; esac
		# Reports of a run_tests.sh from before the marker: ours, but
		# nothing in them is known to be ours to remove.
		[ -f "$d/$OUT_MARKER" ] || [ ! -f "$d/summary.json" ] || [ ! -f "$d/report.ktap" ] ||
			return 0
		if [ ! -f "$d/$OUT_MARKER" ] && [ -n "$(ls -A "$d" 2>/dev/null)" ]; then
			echo "$d is not empty and holds no earlier report of run_tests.sh ($OUT_MARKER): give a new or empty directory"
		fi
		return
	fi
	# The nearest existing parent must be a directory we can write.
	p=$d
	while [ ! -e "$p" ]; do
		p=$(dirname -- "$p")
	done
	[ -d "$p" ] && [ -w "$p" ] && [ -x "$p" ] ||
		echo "cannot create $d ($p is not a writable directory)"
}

# out_create DIR: make it (and remember what we made, to undo)
out_create() {
	local p=$1 top=
	while [ ! -e "$p" ]; do
		top=$p
		p=$(dirname -- "$p")
	done
	mkdir -p -- "$1" || return 1
	out_made=$top
}

# out_lock DIR: hold a lock on DIR until this shell exits (fd 6); status 1
# when another run holds it
out_lock() {
	exec 6<"$1" || return 1
	flock -n 6
}

# out_undo: remove what out_create made if nothing was written into it
out_undo() {
	[ -n "$out_made" ] && [ -d "$out_made" ] || return 0
	[ -z "$(find "$out_made" ! -type d -print -quit 2>/dev/null)" ] &&
		rm -rf -- "$out_made"
	out_made=
}

# out_keeps DIR: "old" when DIR holds complete results of ours (an
# interrupted run moves them to previous/), "carry" when it holds
# interrupted ones over a previous/ (kept on), else nothing
out_keeps() {
	[ -f "$1/$OUT_MARKER" ] || return 0
	if [ ! -e "$1/INTERRUPTED" ]; then
		[ -z "$(sed -n '/^#/d; p' "$1/$OUT_MARKER")" ] || echo old
	elif [ -d "$1/previous" ]; then
		echo carry
	fi
}

# out_publish SRC DIR [interrupted]: the files of SRC replace our earlier
# ones in DIR.  Status 1, with a message on stderr and DIR as it was, when
# they cannot be written there.
out_publish() {
	local src=$1 d=$2 why=${3:-} stage f old keep= err
	OUT_PREVIOUS=
	stage=$(mktemp -d "$d/$OUT_STAGE.XXXXXX" 2>/dev/null) || {
		echo "run_tests.sh: cannot write the reports into $d" >&2
		return 1
	}
	[ -z "$why" ] || keep=$(out_keeps "$d")
	if ! err=$(cp -a -- "$src/." "$stage/" 2>&1) || ! err=$({
		echo "# files written by run_tests.sh (removed by its next run here)"
		(cd -- "$stage" && ls -A) | grep -vxF -e .marker
		[ -z "$keep" ] || echo previous
	} 2>&1 > "$stage/.marker"); then
		err=${err##*$'\n'}
		echo "run_tests.sh: cannot write the reports into $d: ${err##*: }" >&2
		rm -rf -- "$stage"
		return 1
	fi
	# Our earlier files out of the way (renames: no space needed).
	old=$stage/.old
	mkdir -- "$old" 2>/dev/null || { rm -rf -- "$stage"; echo "run_tests.sh: cannot write the reports into $d" >&2; return 1; }
	if [ -f "$d/$OUT_MARKER" ]; then
		while IFS= read -r f; do
			out_ours "$f" || continue
			[ -e "$d/$f" ] || [ -L "$d/$f" ] || continue
			mv -f -- "$d/$f" "$old/" 2>/dev/null || true
		done < "$d/$OUT_MARKER"
	fi
	for f in "$stage"/* "$stage"/.[!.]*; do
		[ -e "$f" ] || continue
		case ${f##*/} in .old|.marker) continue ;; esac
		if [ -e "$d/${f##*/}" ] || [ -L "$d/${f##*/}" ]; then
			mv -f -- "$d/${f##*/}" "$old/" 2>/dev/null || rm -rf -- "${d:?}/${f##*/}"
		fi
		mv -f -- "$f" "$d/"
	done
	case $keep in
	old)
		rm -rf -- "$old/previous"
		mv -- "$old" "$d/previous" && OUT_PREVIOUS=$d/previous ;;
	carry)
		[ ! -d "$old/previous" ] || mv -- "$old/previous" "$d/previous" &&
			OUT_PREVIOUS=$d/previous ;;
	esac
	mv -f -- "$stage/.marker" "$d/$OUT_MARKER"
	rm -rf -- "$stage"
	out_made=
}
