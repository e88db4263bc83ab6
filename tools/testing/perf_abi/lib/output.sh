# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by run_tests.sh: the run's own directory (issue 28).
#
# Every run writes into a directory of its own, and removes or renames
# nothing it did not create in this run.  -o DIR: DIR itself when it is
# new or empty; else (and always for the default build/logs/MODE) a new
# DIR/<label>-<UTC time>[-N]/ (made with mkdir: never one that exists),
# and DIR/latest, a symlink replaced with one rename when a run completes.
# DIR may hold anything else.
# The run holds an flock on its directory from out_claim to its end.
# Reports are written into the run's work directory and copied in at the
# end (out_publish).  What could not be copied (a full disk) is removed
# again, with the directories this run made: the next run finds DIR as it
# was.  Signals are held while the reports are copied.

out_made=()	# directories this run made (mkdir), outermost first
out_claimed=	# the run's directory, once it is locked and ours
out_wrote=()	# names this run copied into it
out_latest=	# runs in DIR: the temporary link of latest, until renamed

# out_check DIR: an error message on stdout if DIR cannot be the run's
out_check() {
	local d=$1 p
	[ ${#d} -lt 3800 ] || { echo "the path is ${#d} bytes long; at most 3800"; return; }
	[ ! -e "$d" ] || [ -d "$d" ] || { echo "$d exists and is not a directory"; return; }
	if [ -d "$d" ]; then
		[ -w "$d" ] && [ -x "$d" ] || echo "cannot write into $d"
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

# out_mkdir DIR: make DIR and its missing parents one by one, noting the
# ones this run made (another run may make one at the same time)
out_mkdir() {
	local p=$1 todo=()
	while [ ! -e "$p" ]; do
		todo=("$p" ${todo[@]+"${todo[@]}"})
		p=$(dirname -- "$p")
	done
	for p in ${todo[@]+"${todo[@]}"}; do
		if mkdir -- "$p" 2>/dev/null; then
			out_made+=("$p")
		fi
	done
	[ -d "$1" ]
}

# out_claim DIR [LABEL]: make the run's directory (with LABEL, a new
# DIR/LABEL-<time>[-N]) and lock it (fd 6); status 1 and out_err when it
# cannot be ours
out_claim() {
	local d=$1 i stamp
	out_err="cannot create $d"
	out_mkdir "$d" || return 1
	if [ -n "${2:-}" ]; then
		stamp=${2:0:64}-$(date -u +%Y%m%dT%H%M%SZ)
		for ((i = 1; ; i++)); do
			d=$1/$stamp
			[ "$i" = 1 ] || d=$d-$i
			mkdir -- "$d" 2>/dev/null && break
			[ "$i" -lt 100 ] || return 1
		done
		out_made+=("$d")
	fi
	exec 6<"$d" || return 1
	if ! flock -n 6; then
		# another run's, even if this one made it
		[ ${#out_made[@]} = 0 ] || [ "${out_made[-1]}" != "$d" ] || unset 'out_made[-1]'
		out_err="another run_tests.sh is writing to $d"
		return 1
	fi
	out_err="$d is not empty: give a new or empty directory"
	[ -z "$(ls -A -- "$d" 2>/dev/null)" ] || return 1
	out_claimed=$d
}

# out_undo: what this run made and wrote, removed (never another run's:
# only with the directory locked, and rmdir removes only empty ones)
out_undo() {
	local i f
	[ -z "$out_latest" ] || rm -f -- "$out_latest"
	out_latest=
	if [ -n "$out_claimed" ]; then
		for f in ${out_wrote[@]+"${out_wrote[@]}"}; do
			rm -rf -- "${out_claimed:?}/$f"
		done
	fi
	for ((i = ${#out_made[@]} - 1; i >= 0; i--)); do
		rmdir -- "${out_made[i]}" 2>/dev/null || break
	done
	out_made=() out_wrote=() out_claimed=
}

# out_publish SRC [complete]: copy the reports of SRC into the claimed
# directory; with "complete" and runs in a DIR ($runs), point latest at it.  Status 1,
# with a message on stderr and nothing left of this run, when they cannot
# be written there.
out_publish() {
	local src=$1 f err= name st=0
	for f in "$src"/* "$src"/.[!.]*; do
		[ -e "$f" ] || continue
		name=${f##*/}
		out_wrote+=("$name")
		err=$(cp -a -- "$f" "$out_claimed/" 2>&1) || { st=1; break; }
	done
	if [ "$st" != 0 ]; then
		echo "run_tests.sh: cannot write the reports into $out_claimed${err:+: ${err##*: }}" >&2
		out_undo
		return 1
	fi
	if [ -n "${2:-}" ] && [ -n "$runs" ]; then
		name=${out_claimed##*/}
		if [ -e "$runs/latest" ] && [ ! -L "$runs/latest" ]; then
			echo "run_tests.sh: $runs/latest is not a symlink of run_tests.sh: left as it is" >&2
		else
			out_latest=$runs/.latest.$name
			ln -s -- "$name" "$out_latest" && mv -T -- "$out_latest" "$runs/latest" ||
				rm -f -- "$out_latest"
			out_latest=
		fi
	fi
	out_made=() out_wrote=() out_claimed=
}
