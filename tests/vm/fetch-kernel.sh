#!/bin/sh
# Copyright (c) 2026 The userdt authors
# ISC licence: see include/dev/dt/dtvar.h.
#
# Fetch the kernel for the CUSE test VM and print the directory that holds
# vmlinux, fuse.ko and cuse.ko, and 9p/: the modules that mount a virtio-9p
# share (the host's root, where the bpftrace comparison finds bpftrace) in
# 9p/order's load order.  Our machines' kernel has no CUSE, Debian's
# stock kernel has it as a module; the uncompressed vmlinux boots through
# QEMU's PVH entry, much faster than vmlinuz through the BIOS.
#
# The cache lives outside the clone (USERDT_VM_CACHE, default
# /var/cache/userdt-vm) so that fresh clones on one machine download the
# ~70 MB package once.  It is keyed by package name and version: a Debian
# kernel update brings a new ABI name or version and thus a new download.
set -eu

cache=${USERDT_VM_CACHE:-/var/cache/userdt-vm}
prog=fetch-kernel

die() {
	echo "$prog: $*" >&2
	exit 1
}

# The ABI number in the package name changes with Debian's kernel updates,
# so ask which package the meta package currently means.  One apt-cache
# call where possible: without a pkgcache.bin each costs over a second.
resolve() {
	dep=$(apt-cache show --no-all-versions linux-image-amd64 2>/dev/null |
	    sed -n 's/^Depends: *//p' | head -n 1 | tr ',|' '\n\n' |
	    sed -n 's/^ *\(linux-image-[^ ]*\)\(.*\)$/\1\2/p' | head -n 1)
	pkg=${dep%% *}
	[ -n "$pkg" ] || return 1
	case $dep in
	*"(= "*")"*)
		ver=${dep#*(= }
		ver=${ver%%)*}
		;;
	*)
		ver=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null |
		    sed -n 's/^Version: *//p' | head -n 1)
		;;
	esac
	[ -n "$ver" ]
}

# Only root may refresh apt's lists; a stale list is the usual reason why a
# name does not resolve or a download 404s on a machine that did not run
# apt-get update for a while.
refresh() {
	[ "$(id -u)" = 0 ] || return 1
	echo "$prog: refreshing apt lists" >&2
	apt-get update -qq >&2
}

# apt's answer changes only when its lists do: reuse the last one unless a
# list is newer, which saves the test a second or more per run.
lists=/var/lib/apt/lists
memo=$cache/.resolved
pkg='' ver=''
if [ -f "$memo" ] && [ -d "$lists" ] &&
    [ -z "$(find "$lists" -newer "$memo" -print -quit 2>/dev/null)" ]; then
	read -r pkg ver <"$memo" || pkg=
fi
if [ -z "$pkg" ] || [ -z "$ver" ]; then
	if ! resolve; then
		refresh && resolve ||
		    die "cannot resolve the package linux-image-amd64 depends on (apt-cache show linux-image-amd64)"
	fi
	if mkdir -p "$cache" 2>/dev/null; then
		echo "$pkg $ver" >"$memo.$$" && mv "$memo.$$" "$memo" ||
		    rm -f "$memo.$$"
	fi
fi

key=$(printf '%s_%s' "$pkg" "$ver" | tr -c 'A-Za-z0-9._+~-' '_')
dir=$cache/$key

mkdir -p "$cache" || die "cannot create cache directory $cache"
# Test runs in parallel share one download; resolving above needs no lock.
exec 9>"$cache/.lock"
flock 9 || die "cannot lock $cache/.lock"

# A cache filled before 9p/ was part of it has everything else: such a
# directory only gets 9p/ added (below), so that older checkouts sharing
# the cache keep their files while we fetch.
complete() {
	[ -f "$dir/.complete" ] && [ -f "$dir/9p/order" ]
}

if complete; then
	echo "$dir"
	exit 0
fi

# Under the lock, any other .fetch directory is a killed run's leftover.
rm -rf "$cache"/.fetch.*
work=$(mktemp -d "$cache/.fetch.XXXXXX") || die "mktemp in $cache failed"
trap 'rm -rf "$work"' EXIT

echo "$prog: downloading $pkg $ver into $cache" >&2
t0=$(date +%s.%N)
# The sandbox user _apt cannot write into a root-owned cache; we are
# already the user who asked for the download.
download() {
	(cd "$work" && apt-get download -q -o APT::Sandbox::User=root \
	    "$pkg=$ver" >&2)
}
if ! download; then
	rm -f "$memo"
	refresh && resolve || die "apt-get download $pkg=$ver failed"
	echo "$pkg $ver" >"$memo"
	key=$(printf '%s_%s' "$pkg" "$ver" | tr -c 'A-Za-z0-9._+~-' '_')
	dir=$cache/$key
	if complete; then
		echo "$dir"
		exit 0
	fi
	download || die "apt-get download $pkg=$ver failed"
fi
t1=$(date +%s.%N)
echo "$prog: download took $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s" >&2

deb=$(ls "$work"/*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] || die "apt-get download left no .deb in $work"
dpkg-deb -x "$deb" "$work/root" || die "dpkg-deb -x $deb failed"
rm -f "$deb"

# A module, uncompressed, whatever Debian compressed it with.
unpack_ko() {
	case $1 in
	*.ko)	cp "$1" "$2" ;;
	*.ko.xz) xz -dc "$1" >"$2" ;;
	*.ko.zst) zstd -dcq "$1" >"$2" ;;
	*.ko.gz) gzip -dc "$1" >"$2" ;;
	*)	die "unknown module compression: $1" ;;
	esac || die "cannot decompress $1"
}

# The 9p modules and what they need, which changes between kernel versions
# (6.1 has 9p on netfs and fscache, virtio itself as modules): read each
# module's depends= from its .modinfo and load dependencies first.  The
# .deb has no modules.dep, and the host may have no modinfo.
modpath() {
	grep -m 1 -E "/$(echo "$1" | sed 's/_/[-_]/g')\.ko(\.[a-z]+)?\$" \
	    "$work/kos"
}

moddeps() {
	objcopy -O binary --only-section=.modinfo "$1" /dev/stdout |
	    tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '
}

ninep_add() {
	case " $order " in
	*" $1 "*) return 0 ;;
	esac
	f=$(modpath "$1")
	[ -n "$f" ] || die "module $1 (for 9p) not found in $pkg"
	unpack_ko "$f" "$work/9p/$1.ko"
	for d in $(moddeps "$work/9p/$1.ko"); do
		ninep_add "$d"
	done
	order="$order $1"
}

mkdir "$work/9p"
find "$work/root/lib/modules" -name '*.ko*' >"$work/kos"
order=
# The filesystem, its virtio transport, the PCI side of virtio.
for m in 9p 9pnet_virtio virtio_pci; do
	ninep_add "$m"
done
echo $order >"$work/9p/order"

if [ -f "$dir/.complete" ]; then
	rm -rf "$dir/9p"
	mv "$work/9p" "$dir/9p" || die "cannot move 9p/ into $dir"
	echo "$dir"
	exit 0
fi

vmlinuz=$(ls "$work"/root/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$vmlinuz" ] || die "no /boot/vmlinuz-* in $pkg"

# vmlinuz is a bzImage whose payload is one xz stream; the decompressor
# stub around it is of no use to a PVH boot.
off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$vmlinuz" | head -n 1 | cut -d: -f1)
[ -n "$off" ] || die "no xz payload in $vmlinuz (kernel not xz-compressed?)"
tail -c +$((off + 1)) "$vmlinuz" | xz -dc --single-stream >"$work/vmlinux" ||
    die "xz payload of $vmlinuz does not decompress"
[ "$(head -c 4 "$work/vmlinux" | od -An -c | tr -d ' ')" = '177ELF' ] ||
    die "payload of $vmlinuz is not an ELF kernel"

for m in fuse cuse; do
	f=$(find "$work/root/lib/modules" -path "*/kernel/fs/fuse/$m.ko*" | head -n 1)
	[ -n "$f" ] || die "$m.ko not found in $pkg"
	unpack_ko "$f" "$work/$m.ko"
done

rm -rf "$dir"
mkdir "$dir"
mv "$work/vmlinux" "$work/fuse.ko" "$work/cuse.ko" "$work/9p" "$dir/"
echo "$pkg $ver" >"$dir/.complete"

# Older kernels are of no further use; they are ~70 MB each.
for old in "$cache"/*; do
	[ "$old" = "$dir" ] || [ ! -f "$old/.complete" ] || rm -rf "$old"
done

echo "$dir"
