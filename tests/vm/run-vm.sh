#!/bin/sh
# Copyright (c) 2026 The userdt authors
# ISC licence: see include/dev/dt/dtvar.h.
#
# Run the integration client against dtd's CUSE front end inside a QEMU
# guest running Debian's stock kernel (which has CUSE as a module).
#
#   run-vm.sh [--hostroot] [--keys 'KEY ...'] DTD-STATIC ITEST-STATIC INIT \
#	WORKDIR SMP KPTEST-STATIC BTRACE-STATIC
#
# --hostroot shares the host's root file system read-only with the guest
# (virtio-9p, mount tag hostroot) and puts the 9p modules in the
# initramfs, for programs the guest cannot carry itself (bpftrace, with
# LLVM's libraries); such a guest gets more memory.  --keys: the statuses
# the result line must have (default: init's).
#
# Passes only if the guest printed its VMTEST-RESULT line, every status in
# it is 0 (dt-itest's runs, dt-kptest's, btrace's, dtd's exits on
# SIGTERM) and its summary says "N passed, 0 failed" with N > 0.
# Anything that keeps the test from running fails it: a missing QEMU or a
# failed kernel download is a broken test machine, not a pass.
set -eu

prog=run-vm
hostroot=no
keys="itest dtd kprobe btrace"
while [ $# -gt 0 ]; do
	case $1 in
	--hostroot) hostroot=yes; shift ;;
	--keys)	[ $# -ge 2 ] || break; keys=$2; shift 2 ;;
	*)	break ;;
	esac
done
[ $# -eq 7 ] || { echo "usage: $0 [--hostroot] [--keys 'k ...'] dtd itest init workdir smp kptest btrace" >&2; exit 2; }
dtd=$1 itest=$2 init=$3 work=$4 smp=$5 kptest=$6 btrace=$7
here=$(cd "$(dirname "$0")" && pwd)
# Boot, test and power-off take a few seconds; this only catches hangs.
boot_timeout=${USERDT_VM_TIMEOUT:-240}

die() {
	echo "$prog: FAIL: $*" >&2
	exit 1
}

now() {
	date +%s.%N
}

elapsed() {
	echo "$1 $2" | awk '{ printf "%.1f", $2 - $1 }'
}

command -v qemu-system-x86_64 >/dev/null ||
    die "qemu-system-x86_64 not found (scripts/deps.sh installs qemu-system-x86)"
for t in cpio gzip xz dpkg-deb apt-get flock timeout readelf objcopy; do
	command -v "$t" >/dev/null || die "$t not found (run scripts/deps.sh)"
done

# A dynamically linked busybox would die in the guest with a bare panic;
# say here what is wrong.
busybox=/bin/busybox
[ -x "$busybox" ] || die "$busybox not found (install busybox-static)"
for b in "$busybox" "$dtd" "$itest" "$kptest" "$btrace"; do
	[ -x "$b" ] || die "$b is not an executable"
	! readelf -lW "$b" | grep -q INTERP ||
	    die "$b is dynamically linked; the guest has no C library"
done

t0=$(now)
kdir=$(sh "$here/fetch-kernel.sh") || die "cannot fetch the guest kernel"
t1=$(now)
for f in vmlinux fuse.ko cuse.ko 9p/order; do
	[ -s "$kdir/$f" ] || die "$kdir/$f missing"
done
echo "$prog: kernel $(cat "$kdir/.complete") ready in $(elapsed "$t0" "$t1") s"

rm -rf "$work"
root=$work/root
mkdir -p "$root/bin" "$root/lib/modules" "$root/dev" "$root/proc" \
    "$root/sys" "$root/tmp" "$root/run" || die "mkdir in $work"
cp "$busybox" "$root/bin/busybox"
# Links for every applet, so that /init and the client can run plain
# command names without a busybox --install at boot.
for a in $("$busybox" --list); do
	[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
done
cp "$dtd" "$root/bin/dtd"
cp "$itest" "$root/bin/dt-itest"
cp "$kptest" "$root/bin/dt-kptest"
# dt-kptest's workloads, told apart by the name (and so the comm) they
# run under.
for w in kpreader kpload kpping; do
	ln -s dt-kptest "$root/bin/$w"
done
cp "$btrace" "$root/bin/btrace"
cp "$init" "$root/init"
chmod 755 "$root/init"
cp "$kdir/fuse.ko" "$kdir/cuse.ko" "$root/lib/modules/"
mem=512M
share=
if [ "$hostroot" = yes ]; then
	cp -r "$kdir/9p" "$root/lib/modules/9p"
	# bpftrace with LLVM's libraries and its compile in the guest.
	mem=2G
	# The host's root spans file systems (/proc, /sys, mounts): without
	# remap their inode numbers could collide in the guest's cache.
	share="-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
fi

initrd=$work/initramfs.cpio.gz
(cd "$root" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) \
    >"$initrd" || die "cannot build $initrd"

log=$work/console.log
echo "$prog: booting with $smp cpu(s), console in $log"
t2=$(now)
# stdin from /dev/null: QEMU must not fiddle with a terminal that is not
# its own.  timeout: a hung guest fails the test instead of the suite's
# own, less telling, timeout.
set +e
timeout --kill-after=10 "$boot_timeout" qemu-system-x86_64 \
    -accel tcg -m "$mem" -smp "$smp" \
    -nodefaults -no-user-config -display none -serial stdio \
    -no-reboot -net none $share \
    -kernel "$kdir/vmlinux" -initrd "$initrd" \
    -append "console=ttyS0 quiet panic=-1" \
    </dev/null >"$log" 2>&1
qst=$?
set -e
t3=$(now)
echo "$prog: guest ran $(elapsed "$t2" "$t3") s, qemu exit status $qst"

fail() {
	echo "$prog: FAIL: $*" >&2
	echo "---- console ($log), last 400 lines ----" >&2
	tail -n 400 "$log" | tr -d '\r' >&2
	exit 1
}

[ "$qst" -ne 124 ] && [ "$qst" -ne 137 ] ||
    fail "guest did not power off within $boot_timeout s"
[ "$qst" -eq 0 ] || fail "qemu exited with status $qst"

line=$(tr -d '\r' <"$log" | sed -n 's/^VMTEST-RESULT: //p' | tail -n 1)
[ -n "$line" ] || fail "no VMTEST-RESULT line: the guest did not get to the end of /init"
echo "$prog: result: $line"

# key=status ... N passed, M failed: every status must be 0 (- means the
# step could not run); no globbing of what the guest printed.
set -f
set -- $line
seen=
while [ $# -gt 0 ]; do
	case $1 in
	*=*)	;;
	*)	break ;;
	esac
	k=${1%%=*} v=${1#*=}
	case $k in
	setup)	fail "guest setup failed: $v" ;;
	esac
	[ "$v" = 0 ] || fail "$k: status $v: $line"
	seen="$seen $k"
	shift
done
for k in $keys; do
	case "$seen " in
	*" $k "*) ;;
	*) fail "malformed result (no $k=): $line" ;;
	esac
done
summary=$*
npass=$(echo "$summary" | sed -n 's/^\([0-9][0-9]*\) passed, [0-9][0-9]* failed$/\1/p')
nfail=$(echo "$summary" | sed -n 's/^[0-9][0-9]* passed, \([0-9][0-9]*\) failed$/\1/p')

[ -n "$npass" ] && [ -n "$nfail" ] || fail "no 'N passed, N failed' summary: $line"
[ "$nfail" -eq 0 ] || fail "$summary"
[ "$npass" -gt 0 ] || fail "no checks ran"

# The client's own lines, for the test log ('quiet' keeps the kernel's out).
echo "---- console ($log), last 400 lines ----"
tail -n 400 "$log" | tr -d '\r'
echo "$prog: PASS: $summary ($smp cpu(s))"
