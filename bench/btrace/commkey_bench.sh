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
# Issue 22's system-wide count keyed by the task's name, which no
# counting event keeps: `tracepoint:raw_syscalls:sys_enter { @[comm] =
# count(); }` while x (dd under another name) reads a byte at a time
# flat out, and a second dd under a third name does the same beside it
# as the machine's other work.  Configurations take turns in each of
# REPS rounds: btrace as it runs (the count in a kernel eBPF program,
# dt_tp_kbpf.c), btrace against a second dtd started with USERDT_KBPF=0
# (every call on the machine a perf record, folded in dtd), and
# bpftrace.  For each, the median of x's count against the calls strace
# counts in x's same command, the rounds whose count was exact, the
# tracer's CPU (dtd's and btrace's, or bpftrace's) per call x made, and
# x's own CPU per call, where the kernel programs run (an untraced
# round first gives x's own baseline).  Root.  A benchmark, not a
# test: it asserts nothing.
#
# usage: commkey_bench.sh btrace dtd [reps [reads]]
# COMMKEY_FILTER=1: the rule under /comm == "x"/ as well.
# COMMKEY_NOISE=0: no second dd (a quiet machine).
set -u
[ $# -ge 2 ] || { echo "usage: $0 btrace dtd [reps [reads]]" >&2; exit 2; }
BTRACE=$1
DTD=$2
REPS=${3:-5}
NREAD=${4:-100000}

. "$(dirname "$0")/../../tests/regress/lib.sh"
. "$(dirname "$0")/comm_round.sh"
dtd_start
comm_setup commkey_bench USERDT_KBPF

X=cswx
cp /bin/dd "$TMP/$X" || exit 2
if [ "${COMMKEY_FILTER:-0}" = 1 ]; then
	PROG="tracepoint:raw_syscalls:sys_enter /comm == \"$X\"/ { @[comm] = count(); }"
else
	PROG="tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }"
fi

comm_want
comm_noise "${COMMKEY_NOISE:-1}"
comm_rounds commkey_bench "s/^@\\[$X\\]: //p" \
    none count sampled bpf

echo "system wide, $PROG"
echo "x: dd bs=1 count=$NREAD, $want calls by strace;"
[ "${COMMKEY_NOISE:-1}" != 0 ] && echo "another dd flat out beside it;"
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
	count)	name="btrace (count by comm in a kernel program)" ;;
	sampled) name="btrace, USERDT_KBPF=0 (records folded in dtd)" ;;
	bpf)	name="bpftrace" ;;
	esac
	printf '  %-50s count %s (%s of %s exact), tracer CPU %s, x CPU %s\n' \
	    "$name" "$n" "$ex" "$REPS" "$(ns "$cpu")" "$(ns "$xc")"
done
