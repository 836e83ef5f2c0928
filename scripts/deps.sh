#!/bin/sh
# Install everything userdt needs to build, test and benchmark on Debian 12.
# Idempotent: a machine that already has the packages spends a second here.
# passwd: useradd and userdel, for the tests' throwaway ordinary users.
# libc6-dbg: libc's separate debug file, which names its static functions
# in btrace's stacks (and the regress test that checks they are named).
# gdb: syscall-signals runs a traced program under it (no int3 of ours).
# libbz2-dev: libdw's static archive needs it, for the vm suite's static
# btrace.
set -eu

PKGS="meson ninja-build pkg-config gcc g++ clang libclang-rt-14-dev
libfuse3-dev fuse3 liburcu-dev libelf-dev libdw-dev elfutils
libcapstone-dev libc6-dbg
qemu-system-x86 busybox-static xz-utils cpio libbz2-dev
strace gdb bpftrace linux-perf binutils make git python3
mandoc man-db systemd debhelper dpkg-dev fakeroot
passwd"

# dtd without root (dtd(8)) mounts through fusermount3, which opens
# /dev/fuse as the user: udev makes it 0666 on an ordinary Debian machine,
# but a container or chroot without udev keeps the kernel's 0600.  Do what
# udev would, so the unprivileged mode and its test work there too.
fuse_for_users() {
	[ -c /dev/fuse ] || return 0
	mode=$(stat -c %a /dev/fuse)
	[ "$mode" = 666 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps.sh: /dev/fuse is mode $mode; dtd without root needs" \
		    "0666 (run as root to set it)" >&2
		return 0
	fi
	chmod 0666 /dev/fuse
	echo "deps.sh: /dev/fuse was mode $mode, now 0666 as udev sets it" >&2
}

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	fuse_for_users
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# qemu without recommends: the recommended set pulls in a desktop's worth of packages.
apt-get install -y -qq --no-install-recommends $missing >/dev/null
fuse_for_users
