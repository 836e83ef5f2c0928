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
# userdt as installed: meson install into a temporary DESTDIR, then check
# what landed where and run the installed programs from there, with no
# environment variable pointing at the build tree.
#
# usage: run-install.sh case
#   files    every installed file in its place; userdt.pc and dtvar.h
#            compile a client; man finds the installed pages; the
#            installed example scripts parse
#   run      the installed dtd on a temporary device path, the installed
#            btrace -l against it, and a btrace -c run recording a
#            system call through the installed preload library
#   unit     systemd-analyze verify on the installed dtd.service
#   clients  the example clients of share/userdt/examples/clients: the C
#            one built with cc -std=c99 against the installed dtvar.h
#            alone, both run against the installed dtd: the probe list,
#            events of interval (and profile) for -t 1 and until SIGINT,
#            and DTIOCGSTATS's count of what they read
#
# The layout comes from meson in the environment: UDT_BUILD (the build
# directory), UDT_PREFIX, UDT_BINDIR, UDT_SBINDIR, UDT_LIBDIR,
# UDT_INCLUDEDIR, UDT_MANDIR, UDT_DATADIR, UDT_UNITDIR (the last absolute,
# the others as meson's options give them).
set -u

[ $# -eq 1 ] || { echo "usage: $0 files|run|unit|clients" >&2; exit 2; }
CASE=$1

# fail, dtd_need, dtd_tmp, dtd_serve
. "$(dirname "$0")/../regress/lib.sh"

# Never a silent skip: what this needs is installed by scripts/deps.sh.
for p in meson pkg-config cc mandoc man systemd-analyze; do
	command -v "$p" >/dev/null || fail "$p is not installed (scripts/deps.sh)"
done

dtd_tmp
D=$TMP/dest

# A directory option as installed: relative ones lie under the prefix.
at() {
	case $1 in
	/*)	printf '%s%s' "$D" "$1" ;;
	*)	printf '%s%s/%s' "$D" "$UDT_PREFIX" "$1" ;;
	esac
}
BIN=$(at "$UDT_BINDIR")
SBIN=$(at "$UDT_SBINDIR")
LIB=$(at "$UDT_LIBDIR")
INC=$(at "$UDT_INCLUDEDIR")
MAN=$(at "$UDT_MANDIR")
DATA=$(at "$UDT_DATADIR")
UNIT=$(at "$UDT_UNITDIR")

# Nothing may lead the installed programs back to the build tree.
unset USERDT_PRELOAD USERDT_SOCKET DT_DEVICE LD_PRELOAD

meson install -C "$UDT_BUILD" --no-rebuild --quiet --destdir "$D" \
    > "$TMP/install.log" 2>&1 || { cat "$TMP/install.log"; fail "meson install"; }

case $CASE in
files)
	for f in "$SBIN/dtd" "$BIN/btrace" "$BIN/dtrun"; do
		[ -x "$f" ] || fail "$f: not installed"
	done
	for f in "$LIB/userdt/libuserdt-preload.so" "$LIB/userdt/libuserdt-preload-cs.so" \
	    "$LIB/userdt/libdtshim.so" \
	    "$INC/dev/dt/dtvar.h" "$LIB/pkgconfig/userdt.pc" \
	    "$MAN/man1/dtrun.1" "$MAN/man4/dt.4" "$MAN/man5/bt.5" \
	    "$MAN/man8/btrace.8" "$MAN/man8/dtd.8" "$UNIT/dtd.service" \
	    "$DATA/userdt/examples/busy.c" "$DATA/userdt/examples/syscalls.bt" \
	    "$DATA/userdt/examples/clients/dtclient.c"; do
		[ -f "$f" ] || fail "$f: not installed"
	done
	[ -x "$DATA/userdt/examples/clients/dtclient.py" ] ||
	    fail "dtclient.py: not installed executable"
	# The preload library is nowhere on the linker's search path.
	[ ! -e "$LIB/libuserdt-preload.so" ] ||
	    fail "the preload library is in $LIB too"

	# A client builds from the installed header through userdt.pc.
	cflags=$(PKG_CONFIG_PATH=$LIB/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D \
	    pkg-config --cflags userdt) || fail "pkg-config userdt"
	printf '#include <dev/dt/dtvar.h>\nint main(void) { return (int)sizeof(struct dt_evt) == 456 ? 0 : 1; }\n' \
	    > "$TMP/client.c"
	# shellcheck disable=SC2086
	cc $cflags -o "$TMP/client" "$TMP/client.c" ||
	    fail "a client of dev/dt/dtvar.h does not build with: $cflags"
	"$TMP/client" || fail "the installed header's struct dt_evt"

	# man(1) finds and formats the installed pages.
	for p in 1:dtrun 4:dt 5:bt 8:btrace 8:dtd; do
		sec=${p%%:*} name=${p#*:}
		w=$(man -M "$MAN" -w "$sec" "$name" 2>&1) ||
		    fail "man -M $MAN -w $sec $name: $w"
		[ "$w" = "$MAN/man$sec/$name.$sec" ] ||
		    fail "man $sec $name finds $w"
		MANPAGER=cat MANWIDTH=80 man -M "$MAN" "$sec" "$name" \
		    > "$TMP/page" 2>&1 || fail "man $sec $name: $(cat "$TMP/page")"
		grep -q "^NAME" "$TMP/page" || fail "man $sec $name: no NAME"
	done
	MANPAGER=cat man -M "$MAN" 8 btrace | grep -q -- '-c command' ||
	    fail "btrace(8) does not describe -c"

	# The installed example scripts parse.
	n=0
	for f in "$DATA"/userdt/examples/*.bt; do
		"$BIN/btrace" -n "$f" busy || fail "$f does not parse"
		n=$((n + 1))
	done
	[ "$n" -ge 1 ] || fail "no example script installed"
	;;
run)
	dtd_need "running the installed dtd"
	# dtrun hands commands the library installed beside it.
	out=$("$BIN/dtrun" /bin/sh -c 'printf "%s\n" "$LD_PRELOAD"') ||
	    fail "installed dtrun"
	[ "$out" = "$LIB/userdt/libuserdt-preload.so" ] ||
	    fail "installed dtrun preloads '$out'"

	dtd_serve "$SBIN/dtd"

	"$BIN/btrace" -d "$DEV" -l > "$TMP/list" 2>&1 ||
	    fail "installed btrace -l: $(cat "$TMP/list")"
	for p in profile:hz:97 interval:hz:1 syscall:write:entry \
	    syscall:write:return; do
		grep -qx "$p" "$TMP/list" || fail "btrace -l lists no $p"
	done

	# -c: the command's writes reach the device through the installed
	# preload library, found with no variable naming it.
	USERDT_SOCKET=$TMP/ingest.sock "$BIN/btrace" -d "$DEV" \
	    -c 'echo installed' \
	    -e 'syscall:write:entry /arg0 == 1/ { @w[comm, arg2] = count(); }' \
	    > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "btrace -c exited $rc: $(cat "$TMP/out")"
	grep -qx installed "$TMP/out" || fail "no command output: $(cat "$TMP/out")"
	grep -qx '@w\[sh, 10\]: 1' "$TMP/out" ||
	    fail "no write recorded: $(cat "$TMP/out")"

	kill -TERM "$DTDPID"
	wait "$DTDPID"
	rc=$?
	DTDPID=
	[ $rc -eq 0 ] || fail "dtd exited $rc on SIGTERM: $(cat "$TMP/dtd.log")"
	;;
unit)
	# verify needs the unit's programs where it names them: a copy
	# naming the installed tree's dtd, checked outside any systemd (this
	# also runs in a container whose PID 1 is not systemd).  MANPATH lets
	# it check Documentation= against the installed pages.
	sed "s|^ExecStart=$UDT_PREFIX|ExecStart=$D$UDT_PREFIX|" \
	    "$UNIT/dtd.service" > "$TMP/dtd.service"
	grep -q "^ExecStart=$D" "$TMP/dtd.service" ||
	    fail "ExecStart does not name the installed dtd: $(grep ExecStart "$UNIT/dtd.service")"
	MANPATH=$MAN SYSTEMD_LOG_COLOR=0 systemd-analyze verify \
	    "$TMP/dtd.service" > "$TMP/verify" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$TMP/verify" ]; then
		cat "$TMP/verify"
		fail "systemd-analyze verify: exit $rc"
	fi
	for k in Type=notify RuntimeDirectory=userdt Restart=on-failure; do
		grep -qx "$k" "$TMP/dtd.service" || fail "dtd.service lacks $k"
	done
	;;
clients)
	dtd_need "running the example clients"
	command -v python3 >/dev/null || fail "python3 is not installed"
	EX=$DATA/userdt/examples/clients
	# The installed header is all the C client needs.
	cc -std=c99 -Wall -Wextra -Werror -I"$INC" -o "$TMP/dtclient" \
	    "$EX/dtclient.c" > "$TMP/cc.log" 2>&1 ||
	    fail "dtclient.c does not build: $(cat "$TMP/cc.log")"

	dtd_serve "$SBIN/dtd"

	# The two list the same probes, the timers among them.
	"$TMP/dtclient" -d "$DEV" -l > "$TMP/list.c" 2>&1 ||
	    fail "dtclient -l: $(cat "$TMP/list.c")"
	"$EX/dtclient.py" -d "$DEV" -l > "$TMP/list.py" 2>&1 ||
	    fail "dtclient.py -l: $(cat "$TMP/list.py")"
	cmp -s "$TMP/list.c" "$TMP/list.py" ||
	    fail "the clients list different probes: $(diff "$TMP/list.c" "$TMP/list.py")"
	for p in profile:hz:97 interval:hz:1 syscall:sys%4:entry; do
		grep -q "^[0-9][0-9]* $p\$" "$TMP/list.c" ||
		    fail "dtclient -l lists no $p"
	done
	[ "$(wc -l < "$TMP/list.c")" -ge 100 ] ||
	    fail "dtclient -l lists $(wc -l < "$TMP/list.c") probes"

	# check OUT MIN PROBE...: every line of OUT an event of one of the
	# PROBEs with sane fields, in time order, at least MIN of them,
	# then the stats line, whose read count is the events printed.
	check() {
		python3 - "$TMP/list.c" "$DTDPID" "$T0" "$(date +%s)" "$@" <<'PY'
import re, sys
listf, dtd, t0, t1, out, least = sys.argv[1:7]
want = sys.argv[7:]
names = dict(l.split(None, 1) for l in open(listf).read().splitlines())
pbns = {}
for w in want:
    prov = w.split(":")[0]
    pbn = next(int(n) for n, nm in names.items() if nm.startswith(prov + ":"))
    pbns[pbn] = names[str(pbn)]
ev = re.compile(r"pbn=(\d+) probe=(\S+) pid=(-?\d+) tid=(-?\d+) "
                r"comm=(.*) time=(\d+)\.(\d{9})$")
lines = open(out).read().splitlines()
if not lines or not lines[-1].startswith("stats: "):
    sys.exit("%s: no stats line at the end" % out)
st = dict(kv.split("=") for kv in lines[-1].split()[1:])
if sorted(st) != ["dropped", "read", "recursive", "skipped"]:
    sys.exit("%s: stats line %r" % (out, lines[-1]))
seen, last = {}, 0
for l in lines[:-1]:
    m = ev.match(l)
    if not m:
        sys.exit("%s: not an event: %r" % (out, l))
    pbn, probe, pid, tid, comm = int(m[1]), m[2], int(m[3]), int(m[4]), m[5]
    t = int(m[6]) * 10**9 + int(m[7])
    if pbn not in pbns or probe != pbns[pbn]:
        sys.exit("%s: event of a probe not enabled: %r" % (out, l))
    if not int(t0) * 10**9 <= t <= (int(t1) + 1) * 10**9:
        sys.exit("%s: time outside the run [%s, %s]: %r" % (out, t0, t1, l))
    if t < last:
        sys.exit("%s: events out of time order at %r" % (out, l))
    last = t
    if probe.startswith("interval:"):
        # dtd's timer thread fires interval, named "dtd".
        if pid != int(dtd) or tid <= 0 or comm != "dtd":
            sys.exit("%s: interval event of pid %d tid %d comm %s, "
                     "not dtd's (%s)" % (out, pid, tid, comm, dtd))
    elif pid < 0 or tid < 0 or (pid == 0) != (tid == 0):
        sys.exit("%s: bad pid/tid: %r" % (out, l))
    seen[pbn] = seen.get(pbn, 0) + 1
n = len(lines) - 1
if int(st["read"]) != n:
    sys.exit("%s: DTIOCGSTATS read %s events, the client printed %d"
             % (out, st["read"], n))
for pbn in pbns:
    if seen.get(pbn, 0) < int(least):
        sys.exit("%s: %d events of %s, expected %s at least"
                 % (out, seen.get(pbn, 0), pbns[pbn], least))
print("ok: %s: %d events, %s" % (out, n, lines[-1]))
PY
	}

	# -t 1 at 100 Hz: a second of events, ended by SIGALRM.
	T0=$(date +%s)
	"$TMP/dtclient" -d "$DEV" -t 1 interval:hz:100 profile:hz:100 \
	    > "$TMP/t.c" 2> "$TMP/err" || fail "dtclient -t 1: $(cat "$TMP/err")"
	check "$TMP/t.c" 20 interval profile || fail "dtclient -t 1"
	T0=$(date +%s)
	"$EX/dtclient.py" -d "$DEV" -t 1 interval:hz:100 \
	    > "$TMP/t.py" 2> "$TMP/err" || fail "dtclient.py -t 1: $(cat "$TMP/err")"
	check "$TMP/t.py" 20 interval || fail "dtclient.py -t 1"

	# Until SIGINT: once a first event is out, interrupt the client
	# blocked in read(2); it prints the rest and its stats and exits 0.
	mkfifo "$TMP/fifo" || exit 2
	for c in "$TMP/dtclient" "$EX/dtclient.py"; do
		o=$TMP/int.${c##*/}
		T0=$(date +%s)
		"$c" -d "$DEV" interval:hz:100 > "$TMP/fifo" 2> "$TMP/err" &
		BTPID=$!
		exec 5< "$TMP/fifo"
		read -r -t 30 line <&5 || fail "$c: no event within 30 s"
		kill -INT "$BTPID"
		{ printf '%s\n' "$line"; cat <&5; } > "$o"
		exec 5<&-
		wait "$BTPID"
		rc=$?
		BTPID=
		[ $rc -eq 0 ] || fail "$c exited $rc on SIGINT: $(cat "$TMP/err")"
		check "$o" 1 interval || fail "$c until SIGINT"
	done

	kill -TERM "$DTDPID"
	wait "$DTDPID"
	rc=$?
	DTDPID=
	[ $rc -eq 0 ] || fail "dtd exited $rc on SIGTERM: $(cat "$TMP/dtd.log")"
	;;
*)
	echo "usage: $0 files|run|unit|clients" >&2
	exit 2
	;;
esac
echo "ok: $CASE"
