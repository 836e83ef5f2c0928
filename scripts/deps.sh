#!/bin/sh
# Install everything userdt needs to build, test and benchmark on Debian 12.
# Idempotent: a machine that already has the packages spends a second here.
# passwd: useradd and userdel, for the tests' throwaway ordinary users.
set -eu

PKGS="meson ninja-build pkg-config gcc g++ clang libclang-rt-14-dev
libfuse3-dev fuse3 liburcu-dev libunwind-dev libelf-dev libdw-dev elfutils
libcapstone-dev
qemu-system-x86 busybox-static xz-utils cpio
strace bpftrace linux-perf binutils make git python3
mandoc man-db systemd debhelper dpkg-dev fakeroot
passwd"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# qemu without recommends: the recommended set pulls in a desktop's worth of packages.
apt-get install -y -qq --no-install-recommends $missing >/dev/null
