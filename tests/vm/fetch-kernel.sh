#!/bin/sh
# Copyright (c) 2026 The userdt authors
# ISC licence: see include/dev/dt/dtvar.h.
#
# Fetch the kernel for the CUSE test VM and print the directory that holds
# vmlinux, fuse.ko and cuse.ko.  Our machines' kernel has no CUSE, Debian's
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

if [ -f "$dir/.complete" ]; then
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
	if [ -f "$dir/.complete" ]; then
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
	case $f in
	*.ko)	cp "$f" "$work/$m.ko" ;;
	*.ko.xz) xz -dc "$f" >"$work/$m.ko" ;;
	*.ko.zst) zstd -dcq "$f" >"$work/$m.ko" ;;
	*.ko.gz) gzip -dc "$f" >"$work/$m.ko" ;;
	*)	die "unknown module compression: $f" ;;
	esac || die "cannot decompress $f"
done

rm -rf "$dir"
mkdir "$dir"
mv "$work/vmlinux" "$work/fuse.ko" "$work/cuse.ko" "$dir/"
echo "$pkg $ver" >"$dir/.complete"

# Older kernels are of no further use; they are ~70 MB each.
for old in "$cache"/*; do
	[ "$old" = "$dir" ] || [ ! -f "$old/.complete" ] || rm -rf "$old"
done

echo "$dir"
