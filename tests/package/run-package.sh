#!/bin/bash
#
# Copyright (c) 2026 The userdt authors
#
# Permission to use, copy, modify, and distribute this software for any
# purpose with or without fee is hereby granted, provided that the above
# copyright notice and this permission notice appear in all copies.
#
# THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
# WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
# ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
# WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
# ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
# OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
#
# The Debian packages: built with dpkg-buildpackage from a copy of the
# source tree (never in the tree itself), unpacked into a throwaway root,
# and run from there: the packaged dtd on a temporary device path, the
# packaged btrace -l against it and a btrace -c run whose system call
# reaches the device through the packaged preload library.
#
# usage: run-package.sh srcdir
set -u

[ $# -eq 1 ] || { echo "usage: $0 srcdir" >&2; exit 2; }
SRC=$1

# fail, dtd_need, dtd_tmp, dtd_serve
. "$(dirname "$0")/../regress/lib.sh"

# Never a silent skip: scripts/deps.sh installs all of this.
for p in dpkg-buildpackage dpkg-checkbuilddeps dh tar cc; do
	command -v "$p" >/dev/null || fail "$p is not installed (scripts/deps.sh)"
done
dtd_need "running the packaged dtd"
[ -f "$SRC/debian/control" ] || fail "no debian/ in $SRC"

dtd_tmp
ROOT=$TMP/root

# The tree without build directories, git's store, the VM's kernel cache
# or the leftovers of an earlier package build.
mkdir "$TMP/src" "$ROOT" || exit 2
tar -C "$SRC" --exclude='./build*' --exclude='./obj-*' --exclude=./.git \
    --exclude=./tests/vm/cache --exclude='./tests/fuzz/crash-*' \
    --exclude=./debian/.debhelper --exclude=./debian/tmp \
    --exclude=./debian/userdt --exclude=./debian/userdt-dev \
    --exclude=./debian/files -cf - . | tar -C "$TMP/src" -xf - ||
    fail "copying $SRC"

(cd "$TMP/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
    dpkg-buildpackage -b -us -uc) > "$TMP/build.log" 2>&1 || {
	tail -n 40 "$TMP/build.log"
	fail "dpkg-buildpackage"
}
for p in userdt userdt-dev; do
	set -- "$TMP/${p}_"*.deb
	[ $# -eq 1 ] && [ -f "$1" ] || fail "no $p package built"
	dpkg-deb -x "$1" "$ROOT" || fail "dpkg-deb -x $1"
done

for f in usr/sbin/dtd usr/bin/btrace usr/bin/dtrun \
    usr/lib/x86_64-linux-gnu/userdt/libuserdt-preload.so \
    usr/lib/x86_64-linux-gnu/userdt/libuserdt-preload-cs.so \
    usr/lib/x86_64-linux-gnu/userdt/libdtshim.so \
    usr/include/dev/dt/dtvar.h usr/lib/x86_64-linux-gnu/pkgconfig/userdt.pc \
    usr/share/man/man8/btrace.8.gz usr/share/man/man4/dt.4.gz \
    lib/systemd/system/dtd.service \
    usr/share/userdt/examples/clients/dtclient.c \
    usr/share/userdt/examples/clients/dtclient.py; do
	[ -e "$ROOT/$f" ] || fail "/$f is not in the packages"
done
grep -qx 'ExecStart=/usr/sbin/dtd --foreground --ingest /run/userdt/ingest.sock' \
    "$ROOT/lib/systemd/system/dtd.service" || fail "dtd.service's ExecStart"

unset USERDT_PRELOAD USERDT_SOCKET DT_DEVICE LD_PRELOAD
dtd_serve "$ROOT/usr/sbin/dtd"

"$ROOT/usr/bin/btrace" -d "$DEV" -l > "$TMP/list" 2>&1 ||
    fail "packaged btrace -l: $(cat "$TMP/list")"
for p in profile:hz:97 interval:hz:1 syscall:write:entry; do
	grep -qx "$p" "$TMP/list" || fail "btrace -l lists no $p"
done
echo "ok - the packaged btrace -l lists $(wc -l < "$TMP/list") probes"

# The example clients as packaged: the C one builds on the packaged
# header alone, and both list the probes.
EX=$ROOT/usr/share/userdt/examples/clients
cc -std=c99 -I"$ROOT/usr/include" -o "$TMP/dtclient" "$EX/dtclient.c" ||
    fail "the packaged dtclient.c does not build"
for c in "$TMP/dtclient" "$EX/dtclient.py"; do
	"$c" -d "$DEV" -l > "$TMP/clist" 2>&1 || fail "$c -l: $(cat "$TMP/clist")"
	grep -qx '[0-9]* interval:hz:1' "$TMP/clist" || fail "$c -l lists no interval"
done
echo "ok - the packaged example clients build and list the probes"

USERDT_SOCKET=$TMP/ingest.sock "$ROOT/usr/bin/btrace" -d "$DEV" \
    -c 'echo packaged' \
    -e 'syscall:write:entry /arg0 == 1/ { @w[comm, arg2] = count(); }' \
    > "$TMP/out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "btrace -c exited $rc: $(cat "$TMP/out")"
grep -qx '@w\[sh, 9\]: 1' "$TMP/out" || fail "no write recorded: $(cat "$TMP/out")"
echo "ok - the packaged btrace -c records the command's write"

kill -TERM "$DTDPID"
wait "$DTDPID"
rc=$?
DTDPID=
[ $rc -eq 0 ] || fail "dtd exited $rc on SIGTERM: $(cat "$TMP/dtd.log")"
echo "ok - the packaged dtd stops cleanly"
