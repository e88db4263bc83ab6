# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by run_tests.sh: the --output directory.
#
# A run writes its reports into a temporary directory and publishes them
# at the end: the files the previous run listed in DIR/.perf-abi-output
# (ours) are removed, the new ones moved in and listed.  Files we did not
# write are never removed; a non-empty DIR without that marker is refused
# up front (it is someone else's), unless it lies in build/ or holds the
# summary.json and report.ktap of an earlier run_tests.sh.

OUT_MARKER=.perf-abi-output
out_made=	# the topmost directory this run created, if any

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
		p=$(dirname "$p")
	done
	[ -d "$p" ] && [ -w "$p" ] && [ -x "$p" ] ||
		echo "cannot create $d ($p is not a writable directory)"
}

# out_create DIR: make it (and remember what we made, to undo)
out_create() {
	local p=$1 top=
	while [ ! -e "$p" ]; do
		top=$p
		p=$(dirname "$p")
	done
	mkdir -p "$1" || return 1
	out_made=$top
}

# out_undo: remove what out_create made if nothing was written into it
out_undo() {
	[ -n "$out_made" ] && [ -d "$out_made" ] || return 0
	[ -z "$(find "$out_made" ! -type d -print -quit 2>/dev/null)" ] &&
		rm -rf "$out_made"
	out_made=
}

# out_publish SRC DIR: the files of SRC replace our earlier ones in DIR
out_publish() {
	local src=$1 d=$2 f
	if [ -f "$d/$OUT_MARKER" ]; then
		while IFS= read -r f; do
			case $f in ''|'#'*|*/*|.|..) continue ;; esac
			rm -rf "${d:?}/$f"
		done < "$d/$OUT_MARKER"
	fi
	{
		echo "# files written by run_tests.sh (removed by its next run here)"
		(cd "$src" && ls -A) | grep -vxF "$OUT_MARKER.new"
	} > "$src/$OUT_MARKER.new"
	for f in "$src"/* "$src"/.[!.]*; do
		[ -e "$f" ] || continue
		case ${f##*/} in "$OUT_MARKER.new") continue ;; esac
		rm -rf "${d:?}/${f##*/}"
		mv -f "$f" "$d/"
	done
	mv -f "$src/$OUT_MARKER.new" "$d/$OUT_MARKER"
	out_made=
}
