#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch Debian packages of any suite and architecture with apt, without
# touching the system's package state or its apt sources, and unpack them.
# Usage: apt-fetch.sh [--suite S] ARCH DESTDIR PKG...  unpack PKGs into DESTDIR
#        apt-fetch.sh [--suite S] --deb ARCH PKG[=VER] download PKG's .deb into
#                                                      the cache, print its path
#        apt-fetch.sh [--suite S] --list ARCH REGEX    package names apt knows
#        apt-fetch.sh [--suite S] --versions ARCH PKG  its versions, newest first
#        apt-fetch.sh [--suite S] --show ARCH REGEX    "PKG VERSION DEPENDS" of
#                                                      every version of those
#        apt-fetch.sh --refresh ARCH SUITE...          refresh those lists now
#                                                      if older than a day
# ARCH is a Debian architecture (amd64, arm64, s390x, ppc64el, riscv64...)
# or x86_64/aarch64.  SUITE is bullseye, bookworm, bookworm-backports,
# trixie, trixie-backports, forky or sid; the default is the machine's own
# release.  Each suite and arch has a private sources list and list
# directory in $PERF_ABI_CACHE/apt/SUITE-ARCH/ (the mirror is read from
# the machine's /etc/apt/sources.list{,.d}, which stay untouched); lists
# are refreshed at most once a day, under a lock.  A suite whose refresh
# fails is named on stderr (exit 2); other suites are not affected.
set -eu

die() {
	echo "apt-fetch: $*" >&2
	exit 2
}

host_release() {
	local c
	# shellcheck disable=SC1091
	c=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	echo "${c:-bookworm}"
}

mode=unpack
suite=
while [ $# -gt 0 ]; do
	case $1 in
	--deb) mode=deb; shift ;;
	--list) mode=list; shift ;;
	--versions) mode=versions; shift ;;
	--show) mode=show; shift ;;
	--refresh) mode=refresh; shift ;;
	--suite) suite=${2:-}; [ -n "$suite" ] || die "--suite needs a suite"; shift 2 ;;
	--suite=*) suite=${1#--suite=}; shift ;;
	*) break ;;
	esac
done
arch=${1:-}
[ -n "$arch" ] || die "usage: apt-fetch.sh [--suite S] [--deb|--list|--versions] ARCH ..."
shift
case $arch in
x86_64) arch=amd64 ;;
aarch64) arch=arm64 ;;
amd64|arm64|armhf|armel|i386|s390x|ppc64el|riscv64|mips64el|loong64) ;;
*) die "unknown Debian architecture '$arch'" ;;
esac
[ -n "$suite" ] || suite=$(host_release)

check_suite() {
	case $1 in
	bullseye|bookworm|trixie|forky|bookworm-backports|trixie-backports|\
	forky-backports|sid|unstable) ;;
	*) die "unknown Debian suite '$1' (bullseye, bookworm, trixie, trixie-backports, sid)" ;;
	esac
}

cache=${PERF_ABI_CACHE:-$HOME/.cache/perf-abi}
mkdir -p "$cache/debs"

# The machine's mirrors: the URI of its own release's main archive and of
# its security archive (one-line .list and deb822 .sources files).
mirrors() {
	local rel files
	rel=$(host_release)
	files=$(ls /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	[ -n "$files" ] || return 0
	# shellcheck disable=SC2086
	awk -v rel="$rel" '
	function emit(uri, s) {
		sub(/\/+$/, "", uri)
		if (s == rel && main == "") main = uri
		if (s == rel "-security" && sec == "") sec = uri
	}
	function flush(   i, n, u, s, nu, ns) {
		if (types ~ /(^| )deb( |$)/ && enabled != "no") {
			nu = split(uris, u, " "); ns = split(suites, s, " ")
			for (i = 1; i <= nu; i++)
				for (n = 1; n <= ns; n++) emit(u[i], s[n])
		}
		types = uris = suites = enabled = ""
	}
	FILENAME ~ /\.sources$/ {
		if (FILENAME != last) { flush(); last = FILENAME }
		if ($0 ~ /^[ \t]*$/) { flush(); next }
		if ($0 ~ /^#/) next
		key = tolower($1); $1 = ""; sub(/^ +/, "")
		if (key == "types:") types = $0
		else if (key == "uris:") uris = $0
		else if (key == "suites:") suites = $0
		else if (key == "enabled:") enabled = tolower($0)
		next
	}
	$1 == "deb" {
		flush()
		i = 2
		if ($2 ~ /^\[/) { while ($i !~ /\]$/ && i < NF) i++; i++ }
		emit($i, $(i + 1))
	}
	END { flush(); print main; print sec }' $files
}

# SUITE -> the private sources list, one line per archive suite
sources_for() {
	local s=$1 m main sec
	m=$(mirrors)
	main=$(sed -n 1p <<<"$m")
	sec=$(sed -n 2p <<<"$m")
	: "${main:=http://deb.debian.org/debian}"
	: "${sec:=${main%/debian}/debian-security}"
	local key=/usr/share/keyrings/debian-archive-keyring.gpg
	local opt="[arch=$arch signed-by=$key]"
	[ -r "$key" ] || opt="[arch=$arch]"
	case $s in
	*-backports|sid|unstable)
		echo "deb $opt $main $s main" ;;
	*)
		echo "deb $opt $main $s main"
		echo "deb $opt $main $s-updates main"
		echo "deb $opt $sec $s-security main" ;;
	esac
}

# Set apt_opts for SUITE and make sure its lists are at most a day old.
setup() {
	local s=$1 dir
	check_suite "$s"
	dir=$cache/apt/$s-$arch
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	apt_opts=(-o "Dir::Etc::SourceList=$dir/sources.list"
		  -o Dir::Etc::SourceParts=/dev/null
		  -o "Dir::State::Lists=$dir/lists"
		  -o "Dir::Cache=$dir/cache"
		  -o "Dir::State::status=$dir/status"
		  -o "APT::Architecture=$arch" -o "APT::Architectures=$arch"
		  -o Acquire::Languages=none -o APT::Sandbox::User=root
		  -o Debug::NoLocking=1 -q)
	if [ -n "$(find "$dir/stamp" -mmin -1440 2>/dev/null)" ]; then
		return 0
	fi
	# One refresh per suite and arch at a time; whoever waited finds the
	# stamp fresh and goes on.
	(
		flock 9
		[ -z "$(find "$dir/stamp" -mmin -1440 2>/dev/null)" ] || exit 0
		sources_for "$s" > "$dir/sources.list"
		: > "$dir/status"
		# A mirror hiccup fails one update: try twice more.
		for wait in 0 2 5; do
			sleep "$wait"
			if apt-get "${apt_opts[@]}" update > "$dir/update.log" 2>&1 &&
			   ! grep -qE '^(E:|W: Failed to fetch)' "$dir/update.log"; then
				touch "$dir/stamp"
				exit 0
			fi
		done
		# A mirror mid-sync on the -security or -updates pocket only:
		# the release's own list is enough (a day, then retried).
		if ! grep -E '^(E:|W: Failed to fetch)' "$dir/update.log" |
		     grep -vE -e '-(security|updates)/' -e '^E: Some index files failed' | grep -q . &&
		   ls "$dir/lists/"*"_dists_${s}_main_binary-${arch}_Packages"* >/dev/null 2>&1; then
			echo "apt-fetch: the $s $arch lists without $(grep -m1 -E '^(E|W): Failed to fetch' "$dir/update.log" | grep -oE 'dists/[a-z]+-[a-z]+' | cut -d/ -f2) (the mirror failed it)" >&2
			touch "$dir/stamp"
			exit 0
		fi
		exit 1
	) 9> "$dir/lock" ||
		die "cannot refresh the $s $arch package lists ($(grep -E '^(E:|W: Failed)' "$dir/update.log" 2>/dev/null | head -n 1 | sed -E 's/^(E|W): //' | cut -c1-160))"
}

if [ "$mode" = refresh ]; then
	[ $# -gt 0 ] || die "usage: apt-fetch.sh --refresh ARCH SUITE..."
	rc=0
	for s in "$@"; do
		(setup "$s") || rc=2
	done
	exit $rc
fi

setup "$suite"

if [ "$mode" = list ]; then
	apt-cache "${apt_opts[@]}" pkgnames | grep -E "${1:?regex}" | sort -V || true
	exit 0
fi

if [ "$mode" = show ]; then
	names=$(apt-cache "${apt_opts[@]}" pkgnames | grep -E "${1:?regex}" || true)
	[ -n "$names" ] || exit 0
	# shellcheck disable=SC2086
	apt-cache "${apt_opts[@]}" show $names 2>/dev/null | awk '
		/^Package:/ { p = $2 }
		/^Version:/ { v = $2 }
		/^Depends:/ { d = $0; sub(/^Depends: */, "", d); gsub(/ /, "", d) }
		/^$/ { if (p != "") print p, v, (d == "" ? "-" : d); p = v = d = "" }
		END { if (p != "") print p, v, (d == "" ? "-" : d) }'
	exit 0
fi

versions() {	# PKG -> its versions in this suite, newest first
	apt-cache "${apt_opts[@]}" madison "$1" 2>/dev/null |
		awk -F' [|] ' '{ gsub(/ /, "", $2); print $2 }' | sort -rV -u
}

if [ "$mode" = versions ]; then
	versions "${1:?pkg}"
	exit 0
fi

fetch() {	# PKG[=VER] -> path of the .deb in the cache
	local pkg=${1%%=*} ver='' deb fver
	case $1 in *=*) ver=${1#*=} ;; esac
	[ -n "$ver" ] || ver=$(versions "$pkg" | head -n 1)
	if [ -z "$ver" ]; then
		echo "apt-fetch: no package $pkg for $arch in $suite" >&2
		return 2
	fi
	fver=${ver//:/%3a}
	deb=$cache/debs/${pkg}_${fver}_$arch.deb
	[ -s "$deb" ] || deb=$cache/debs/${pkg}_${fver}_all.deb
	if [ ! -s "$deb" ]; then
		# An interrupted download leaves nothing in the cache (issue 28).
		dl_tmp=$(mktemp -d "$cache/debs/.dl.XXXXXX")
		trap 'rm -rf "$dl_tmp"' EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
		trap 'exit 129' HUP
		if ! (cd "$dl_tmp" && apt-get "${apt_opts[@]}" download "$pkg=$ver" >/dev/null 2>&1); then
			echo "apt-fetch: download of $pkg $ver ($arch, $suite) failed" >&2
			return 2
		fi
		deb=$(ls "$dl_tmp"/*.deb | head -n 1)
		mv -f "$deb" "$cache/debs/"
		deb=$cache/debs/$(basename "$deb")
	fi
	echo "$deb"
}

if [ "$mode" = deb ]; then
	fetch "${1:?pkg}"
	exit 0
fi

dest=${1:?usage: apt-fetch.sh [--suite S] ARCH DESTDIR PKG...}
shift
mkdir -p "$dest"
for pkg in "$@"; do
	deb=$(fetch "$pkg")
	dpkg-deb -x "$deb" "$dest"
done
