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
# Issue 22's system-wide count under a comm filter, on a machine that
# makes system calls for others: `tracepoint:raw_syscalls:sys_enter
# /comm == "x"/ { @ = count(); }` while x (dd under another name) reads
# a byte at a time flat out, and a second dd under a third name does the
# same beside it as the machine's other work (2 cores: on the other one,
# mostly).  Configurations
# take turns in each of REPS rounds: btrace as it runs (the filter and
# the count in the kernel, a perf counter), btrace against a second dtd
# started with USERDT_KCOUNT=0 (the filter in the kernel, the events
# sampled and folded in dtd, as before the counter), btrace with
# BTRACE_NOPUSH=1 (the filter in dtd, every kept event read), and
# bpftrace.  For each, the
# median count against the calls strace counts in x's same command, the
# rounds whose count was exact, the tracer's CPU (dtd's and btrace's, or
# bpftrace's) per call x made, and x's own CPU per call, where
# bpftrace's programs and the kernel's counters run (an untraced round
# first gives x's own baseline).  Root.  A benchmark, not a
# test: it asserts nothing.
#
# usage: commsw_bench.sh btrace dtd [reps [reads]]
# COMMSW_NOISE=0: no second dd (a quiet machine).
set -u
[ $# -ge 2 ] || { echo "usage: $0 btrace dtd [reps [reads]]" >&2; exit 2; }
BTRACE=$1
DTD=$2
REPS=${3:-5}
NREAD=${4:-100000}

. "$(dirname "$0")/../../tests/regress/lib.sh"
. "$(dirname "$0")/comm_round.sh"
dtd_start
comm_setup commsw_bench USERDT_KCOUNT

X=cswx
cp /bin/dd "$TMP/$X" || exit 2
PROG="tracepoint:raw_syscalls:sys_enter /comm == \"$X\"/ { @ = count(); }"

comm_want
comm_noise "${COMMSW_NOISE:-1}"
comm_rounds commsw_bench 's/^@: //p' none count sampled nopush bpf

echo "system wide, $PROG"
echo "x: dd bs=1 count=$NREAD, $want calls by strace;"
[ "${COMMSW_NOISE:-1}" != 0 ] && echo "another dd flat out beside it;"
echo "median of $REPS rounds (ns a call of x):"
ns() {
	awk -v s="$1" -v w="$want" 'BEGIN { printf("%.0f", s * 1e9 / w) }'
}
base=$(awk '{ print $3 }' "$TMP/r.none" | median)
printf '  %-50s x CPU %s\n' "untraced" "$(ns "$base")"
for c in count sampled nopush bpf; do
	[ -f "$TMP/r.$c" ] || continue
	n=$(awk '{ print $1 }' "$TMP/r.$c" | median)
	ex=$(awk -v w="$want" '$1 == w { n++ } END { print n + 0 }' "$TMP/r.$c")
	cpu=$(awk '{ print $2 }' "$TMP/r.$c" | median)
	xc=$(awk '{ print $3 }' "$TMP/r.$c" | median)
	case $c in
	count)	name="btrace (filter and count in the kernel)" ;;
	sampled) name="btrace, USERDT_KCOUNT=0 (count folded in dtd)" ;;
	nopush)	name="btrace, BTRACE_NOPUSH=1 (filter in dtd, events read)" ;;
	bpf)	name="bpftrace" ;;
	esac
	printf '  %-50s count %s (%s of %s exact), tracer CPU %s, x CPU %s\n' \
	    "$name" "$n" "$ex" "$REPS" "$(ns "$cpu")" "$(ns "$xc")"
done
