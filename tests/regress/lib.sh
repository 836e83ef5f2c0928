# shellcheck shell=bash
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
# What the regress scripts share, sourced by them: a private dtd for the
# device cases, and the check of JSON output.  run-regress.sh (sh) uses
# json_check alone; the rest is bash's.

fail() {
	echo "FAIL: $*"
	exit 1
}

# json_check FILE [CODE]: every line of FILE parses as JSON on its own;
# then python's CODE runs with the objects in `objs' and says what is
# wrong, if anything, by exiting.
json_check() {
	python3 -c '
import json, sys
objs = []
for n, line in enumerate(open(sys.argv[1], "rb"), 1):
    try:
        objs.append(json.loads(line.decode("utf-8")))
    except ValueError as e:
        sys.exit("line %d is not JSON: %s" % (n, e))
exec(sys.argv[2])' "$1" "${2:-}"
}

dtd_cleanup() {
	if [ -n "$BTPID" ]; then
		kill "$BTPID" 2>/dev/null
		wait "$BTPID" 2>/dev/null
	fi
	if [ -n "$DTDPID" ]; then
		kill -TERM "$DTDPID" 2>/dev/null
		wait "$DTDPID" 2>/dev/null
	fi
	rm -rf "$TMP"
}

# dtd_need WHAT: fail unless WHAT (running a dtd) can be done here, as
# root with /dev/fuse.  Never a silent skip: a suite that cannot run
# fails.
dtd_need() {
	if [ "$(id -u)" != 0 ] || [ ! -c /dev/fuse ]; then
		fail "$1 needs root and /dev/fuse"
	fi
}

# dtd_tmp: a temporary directory, $TMP.  At exit the case's background
# process, $BTPID, and dtd, $DTDPID, are stopped by their pids and $TMP
# is removed.
# int_stop PID: SIGINT to bpftrace PID, and again every half second in
# the background while PID is still a bpftrace.  bpftrace 0.17 here can
# take the signal just before it waits for events and then sleep in
# epoll_wait with nothing to wake it (a kbsys_bench round stuck 10
# minutes; a second SIGINT ended it).  The caller waits for PID, or
# reads its output, as after a plain kill; the resender holds none of
# the caller's descriptors and ends once PID is no bpftrace.
int_stop() {
	kill -INT "$1" 2> /dev/null
	( exec < /dev/null > /dev/null 2>&1
	    for fd in 3 4 5 6 7 8 9; do eval "exec $fd>&-"; done
	    while sleep 0.5 &&
		[ "$(cat "/proc/$1/comm" 2> /dev/null)" = bpftrace ]; do
		kill -INT "$1" 2> /dev/null
	    done ) &
}

dtd_tmp() {
	TMP=$(mktemp -d) || exit 2
	DTDPID=
	BTPID=
	trap dtd_cleanup EXIT
}

# dtd_start [dtd option ...]: start $DTD on a temporary device path
# (FUSE-file front end) and return once it serves: $TMP, $DEV, $DTDPID
# (dtd_tmp(), dtd_serve()).
dtd_start() {
	dtd_need "each device case"
	dtd_tmp
	dtd_serve "$DTD" "$@"
}

# dtd_serve DTD [dtd option ...]: start the dtd binary DTD on $TMP/dt
# (FUSE-file front end, its socket and symbol image in $TMP too) and
# return once it serves: $DEV, $DTDPID; its log in $TMP/dtd.log.  The
# caller stops it by $DTDPID.
dtd_serve() {
	local line dtd=$1

	shift
	DEV=$TMP/dt
	# With $DEVSOCK_LIB (a libuserdt-dev.so): the device from dtd's
	# socket alone, the library preloaded into whatever runs next.
	if [ -n "${DEVSOCK_LIB:-}" ]; then
		set -- "$@" --frontend socket --device-socket "$TMP/dt.sock"
		export USERDT_DEVICE="$DEV" USERDT_DEVICE_SOCKET="$TMP/dt.sock"
		export LD_PRELOAD="$DEVSOCK_LIB"
		export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	fi
	# dtd says "ready" on a pipe once the device is served.
	rm -f "$TMP/ready"
	mkfifo "$TMP/ready" || exit 2
	exec 4<>"$TMP/ready"
	"$dtd" --foreground --frontend fuse --device "$DEV" --ready-fd 4 \
	    --ingest "$TMP/ingest.sock" --ksyms "$TMP/ksyms" "$@" \
	    > "$TMP/dtd.log" 2>&1 4>&4 &
	DTDPID=$!
	if ! read -r -t 30 line <&4 || [ "$line" != ready ]; then
		cat "$TMP/dtd.log"
		fail "$dtd did not get ready"
	fi
	exec 4<&-
}

bt() {
	"$BTRACE" -d "$DEV" "$@"
}

# The wire's header, whose UDT_VERSION a hello must carry: for the bash
# runners (reuse_round()); run-regress.sh is sh, which cannot say where
# a sourced file lies and would stop at the expansion.
if [ -n "${BASH_VERSION:-}" ]; then
	UDT_WIRE_H=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../include/userdt" &&
	    pwd)/udt_wire.h
fi

# reuse_round RUN PROG BASE N: one run of btrace -p "$TPID" with PROG
# (and a 20 Hz tick, whose first line says it records; the fifo
# $TMP/bo carries its output) while the traced process whose fifos are
# on descriptors 5 and 6 makes N calls from BASE and answers; its output
# in $TMP/out.RUN, its standard error in $TMP/err.RUN, the records dtd
# took meanwhile in REUSE_RECORDS.  Fails unless the rule was folded.
reuse_round() {
	"$BTRACE" -d "$DEV" -v -p "$TPID" -e "$2
	    interval:hz:20 { printf(\"tick\\n\"); }" > "$TMP/bo" \
	    2> "$TMP/err.$1" &
	BTPID=$!
	exec 7<"$TMP/bo"
	read -r -t 30 l <&7 ||
	    fail "run $1: btrace did not start: $(cat "$TMP/err.$1")"
	r0=$(ingest_stat records)
	echo "$3 $4" >&5
	read -r -t 30 l <&6 || fail "run $1: the tracee did not answer"
	r1=$(ingest_stat records)
	kill -INT "$BTPID"
	wait "$BTPID"
	BTPID=
	grep -v '^tick$' <&7 > "$TMP/out.$1"
	exec 7<&-
	grep -q 'aggregated in dtd' "$TMP/err.$1" ||
	    fail "run $1: not folded: $(cat "$TMP/err.$1")"
	REUSE_RECORDS=$((r1 - r0))
}

# ingest_stat NAME: dtd's ingest counter NAME (udt_stats: records,
# forged, ...) from its socket.
ingest_stat() {
	python3 - "$USERDT_SOCKET" "$1" "$UDT_WIRE_H" <<'PY'
import re, socket, struct, sys
ver = int(re.search(r"#define UDT_VERSION\s+(\d+)u",
                    open(sys.argv[3]).read()).group(1))
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
# udt_hello: UDT_MAGIC, UDT_VERSION (udt_wire.h), no probes, UDT_HELLO_STATS
s.sendall(struct.pack("<IIII", 0x75647464, ver, 0, 2))
d = b""
while len(d) < 96:
    x = s.recv(4096)
    if not x:
        break
    d += x
names = ("magic procs attached records garbage lost recur adopted "
         "refused forged misnamed maps_bytes maps_evicted").split()
print(dict(zip(names, struct.unpack("<II11Q", d[:96])))[sys.argv[2]])
PY
}

# kcount_pidns NAME: in a pid namespace of its own (unshare --pid
# --mount-proc), with the caller's btrace "ns" counting @[comm, pid] of
# NAME (a copy of dd in $TMP): run it, stop btrace (the caller's
# bt_end) and dtd, and fail unless dtd said it samples for the
# namespace (a kernel program reads the initial one's ids), the kernel
# counted nothing, and the pid is as dtd's namespace sees it.
kcount_pidns() {
	local p

	"$TMP/$1" if=/dev/zero of=/dev/null bs=1 count=500 2> /dev/null &
	p=$!
	wait $p || fail "$1"
	bt_end ns
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	grep -q "no count in the kernel (pid namespace" "$TMP/dtd.log" ||
	    fail "not said: $(cat "$TMP/dtd.log")"
	grep -qx "0 of them counted by the kernel" "$TMP/ns.err" ||
	    fail "counted by the kernel in a pid namespace: $(cat "$TMP/ns.err")"
	grep -q "^@\[$1, $p\]: [1-9]" "$TMP/ns.out" ||
	    fail "not pid $p: $(cat "$TMP/ns.out" "$TMP/ns.err")"
}

# btrace $BTRACE -v on $DEV, one at a time ($BTPID, output on fd 6),
# for run-kbpf.sh and run-kbsys.sh.
# start btrace $1 (name) on program $2, env $3, flags $BT_FLAGS; wait
# until it runs
bt_go() {
	local name=$1 prog=$2 l

	mkfifo "$TMP/$name" || exit 2
	env ${3:-} "$BTRACE" -d "$DEV" -v ${BT_FLAGS:-} -e "BEGIN { printf(\"go\\n\"); } $prog" \
	    > "$TMP/$name" 2> "$TMP/$name.err" &
	BTPID=$!
	exec 6< "$TMP/$name"
	read -r -t 30 l <&6 && [ "$l" = go ] ||
	    fail "$name: $l $(cat "$TMP/$name.err")"
}

# stop it; its map lines into $TMP/$1.out
bt_end() {
	kill -TERM "$BTPID"
	wait "$BTPID" || fail "$1: exit $?: $(cat "$TMP/$1.err")"
	BTPID=
	sed -n "/^@/p" <&6 > "$TMP/$1.out"
	exec 6<&-
}

# the first of two btraces aside (pid $PY, output on fd 7) while a
# second starts; bt_unpark makes it the current one again
bt_park() {
	PY=$BTPID
	exec 7<&6
}
bt_unpark() {
	exec 6<&7 7<&-
	BTPID=$PY
	PY=
}
