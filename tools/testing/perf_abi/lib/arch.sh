# SPDX-License-Identifier: GPL-2.0
#
# The guest architectures, read from vm/qemu/ARCH.conf (one file an
# architecture, "KEY VALUE" lines, # comments; as kunit's qemu_configs/).
# Sourced by run_tests.sh and vm/*.sh:
#
#   arch_list                 the architectures, one a line
#   arch_name NAME            ARCH for NAME or one of its aliases; status 1
#                             when unknown
#   arch_get ARCH KEY         the value of KEY (status 1 when missing)
#   arch_qemu ARCH            the qemu binary: $QEMU_<ARCH> or the conf's
#
# Keys: qemu, package (Debian package of qemu), tcg and kvm (machine
# arguments), console, boot (seconds a boot may take under TCG), debarch
# (Debian architecture), debsuite (the Debian suite busybox and libcap of
# ARCH come from, when the machine's own release lacks ARCH), elf
# (extended regex matching file(1)'s description of a program of ARCH),
# aliases (other names for ARCH), compat (the 32-bit ARCH whose programs
# run as compat tasks of ARCH's kernels: run_tests.sh's compat:SPEC).

perf_abi_arch_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../vm/qemu" && pwd)

arch_list() {
	local f
	for f in "$perf_abi_arch_dir"/*.conf; do
		[ -e "$f" ] || continue
		f=${f##*/}
		echo "${f%.conf}"
	done
}

arch_get() {	# ARCH KEY
	local f=$perf_abi_arch_dir/$1.conf k v
	[ -r "$f" ] || return 1
	while read -r k v; do
		case $k in ''|'#'*) continue ;; esac
		if [ "$k" = "$2" ]; then
			echo "$v"
			return 0
		fi
	done < "$f"
	return 1
}

arch_name() {	# NAME -> ARCH
	local a al
	for a in $(arch_list); do
		if [ "$a" = "$1" ]; then
			echo "$a"
			return 0
		fi
		for al in $(arch_get "$a" aliases || true); do
			if [ "$al" = "$1" ]; then
				echo "$a"
				return 0
			fi
		done
	done
	return 1
}

arch_qemu() {	# ARCH -> qemu binary ($QEMU_X86_64, $QEMU_PPC64LE, ...)
	local var=QEMU_${1^^}
	if [ -n "${!var:-}" ]; then
		echo "${!var}"
	else
		arch_get "$1" qemu
	fi
}
