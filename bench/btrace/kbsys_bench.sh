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
# Issue 22's system-wide syscall probes: `syscall:*:entry { @[comm,
# probe] = count(); }` as root counts every process through the
# kernel's raw_syscalls, while x (dd under another name) reads a byte at
# a time flat out, and a second dd under a third name does the same
# beside it as the machine's other work.  Configurations take turns in
# each of REPS rounds: btrace as it runs (the kernel part counted in an
# eBPF program by call number, dt_tp_ksysbpf.c), btrace against a second
# dtd started with USERDT_KBPF=0 (every call on the machine a perf
# record through the syscall probes' kernel feed, dt_tp_ksys.c), and
# bpftrace (`tracepoint:raw_syscalls:sys_enter { @[comm, args->id] =
# count(); }`).  For each, the median of x's calls (summed over its
# probes) against strace's count of x's same command, the rounds whose
# count was exact, the tracer's CPU (dtd's and btrace's, or bpftrace's)
# per call x made, and x's own CPU per call (an untraced round first
# gives x's own; bpftrace's CPU from its BEGIN on, past its compile).
# Root.  A benchmark, not a test: it asserts nothing.
#
# usage: kbsys_bench.sh btrace dtd [reps [reads]]
# KBSYS_NOISE=0: no second dd (a quiet machine).
# KBSYS_ARG2=N: the rule counts only calls whose third argument is N
# (`/arg2 == N/`, bpftrace's `/args->args[2] == N/`; with N 1, each of
# dd's one-byte reads and writes), and x's want is the calls strace
# shows with that third argument.
set -u
[ $# -ge 2 ] || { echo "usage: $0 btrace dtd [reps [reads]]" >&2; exit 2; }
BTRACE=$1
DTD=$2
REPS=${3:-5}
NREAD=${4:-100000}

. "$(dirname "$0")/../../tests/regress/lib.sh"
. "$(dirname "$0")/comm_round.sh"
# the syscall groups' program, on unless USERDT_KSYSBPF=0 (dt_tp_ksysbpf.c)
export USERDT_KSYSBPF=1
dtd_start
comm_setup kbsys_bench USERDT_KBPF

X=ksysx
cp /bin/dd "$TMP/$X" || exit 2
PROG="syscall:*:entry { @[comm, probe] = count(); }"
BPROG="tracepoint:raw_syscalls:sys_enter { @[comm, args->id] = count(); }"
if [ -n "${KBSYS_ARG2:-}" ]; then
	PROG="syscall:*:entry /arg2 == $KBSYS_ARG2/ { @[comm, probe] = count(); }"
	BPROG="tracepoint:raw_syscalls:sys_enter /args->args[2] == $KBSYS_ARG2/ {
	    @[comm, args->id] = count(); }"
fi

comm_want
if [ -n "${KBSYS_ARG2:-}" ]; then
	# strace's lines of x whose third argument is N, all arguments
	# as the registers hold them (-e raw=all: hex, 0 as "0")
	strace -f -qq -e raw=all -o "$TMP/x.args" "$TMP/$X" \
	    if=/dev/zero of=/dev/null bs=1 count="$NREAD" 2> /dev/null
	hex=$(printf '0x%x' "$KBSYS_ARG2")
	[ "$KBSYS_ARG2" = 0 ] && hex=0
	want=$(awk -v h="$hex" -F', ' '{ sub(/\) += .*/, "") }
	    NF >= 3 && $3 == h { k++ } END { print k + 0 }' "$TMP/x.args")
fi
comm_noise "${KBSYS_NOISE:-1}"
comm_rounds kbsys_bench "s/^@\\[$X, [^]]*\\]: //p" \
    none count sampled bpf

echo "system wide, $PROG"
echo "x: dd bs=1 count=$NREAD, $want calls${KBSYS_ARG2:+ with arg2 \
$KBSYS_ARG2} by strace;"
[ "${KBSYS_NOISE:-1}" != 0 ] && echo "another dd flat out beside it;"
echo "median of $REPS rounds (ns a call of x):"
ns() {
	awk -v s="$1" -v w="$want" 'BEGIN { printf("%.0f", s * 1e9 / w) }'
}
base=$(awk '{ print $3 }' "$TMP/r.none" | median)
printf '  %-50s x CPU %s\n' "untraced" "$(ns "$base")"
for c in count sampled bpf; do
	[ -f "$TMP/r.$c" ] || continue
	n=$(awk '{ print $1 }' "$TMP/r.$c" | median)
	ex=$(awk -v w="$want" '$1 == w { n++ } END { print n + 0 }' "$TMP/r.$c")
	cpu=$(awk '{ print $2 }' "$TMP/r.$c" | median)
	xc=$(awk '{ print $3 }' "$TMP/r.$c" | median)
	case $c in
	count)	name="btrace (counted in a kernel program)" ;;
	sampled) name="btrace, USERDT_KBPF=0 (perf records, dtd)" ;;
	bpf)	name="bpftrace" ;;
	esac
	printf '  %-50s count %s (%s of %s exact), tracer CPU %s, x CPU %s\n' \
	    "$name" "$n" "$ex" "$REPS" "$(ns "$cpu")" "$(ns "$xc")"
done
# the ratio: the sampled path's tracer CPU over the program's
if [ -f "$TMP/r.count" ] && [ -f "$TMP/r.sampled" ]; then
	a=$(awk '{ print $2 }' "$TMP/r.count" | median)
	b=$(awk '{ print $2 }' "$TMP/r.sampled" | median)
	awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0)
	    printf("  tracer CPU, USERDT_KBPF=0 over the program: %.1f\n", b / a) }'
fi
