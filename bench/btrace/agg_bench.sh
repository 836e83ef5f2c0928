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
# Aggregations at the source (issue 22), measured: a flat-out getppid
# loop under 'syscall:getppid:entry { @n = count(); }', its nanoseconds
# per call against the same loop untraced, under the preload library with
# nothing enabled, under btrace with dtd's aggregation off
# (BTRACE_NOPUSH=1), and under bpftrace counting the same calls in the
# kernel (when installed).  Configurations take turns in each of REPS
# rounds; medians, and the ratios and differences between them, all from
# this one run.  Root.  A benchmark, not a test.
#
# usage: agg_bench.sh btrace dtd dtrun agg_loop [reps [calls]]
set -u
[ $# -ge 4 ] || {
	echo "usage: $0 btrace dtd dtrun agg_loop [reps [calls]]" >&2
	exit 2
}
BTRACE=$1
DTD=$2
DTRUN=$3
LOOP=$4
REPS=${5:-5}
N=${6:-2000000}
PROG='syscall:getppid:entry { @n = count(); }'

. "$(dirname "$0")/../../tests/regress/lib.sh"
dtd_start
export USERDT_SOCKET=$TMP/ingest.sock
BPF=$(command -v bpftrace)

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# one round of configuration $1: ns per call appended to $TMP/ns.$1,
# what was counted to $TMP/n.$1
round() {
	local c=$1 out=$TMP/loop.out

	rm -f "$out"
	case $c in
	base)
		"$LOOP" "$N" "$out" ;;
	idle)
		"$DTRUN" -s "$USERDT_SOCKET" "$LOOP" "$N" "$out" ;;
	agg|nopush)
		[ "$c" = nopush ] && export BTRACE_NOPUSH=1
		"$BTRACE" -d "$DEV" -v -c "$LOOP $N $out" -e "$PROG" \
		    > "$TMP/bt.out" 2> "$TMP/bt.err"
		unset BTRACE_NOPUSH
		sed -n 's/^@n: //p' "$TMP/bt.out" >> "$TMP/n.$c"
		sed -n 's/^\([0-9]*\) events dropped$/\1/p' "$TMP/bt.err" \
		    >> "$TMP/lost.$c" ;;
	bpftrace)
		rm -f "$TMP/bpf.fifo" && mkfifo "$TMP/bpf.fifo"
		"$BPF" -e 'tracepoint:syscalls:sys_enter_getppid { @n = count(); }' \
		    > "$TMP/bpf.fifo" 2>&1 &
		BTPID=$!
		exec 5< "$TMP/bpf.fifo"
		# attached once it says so
		while read -r -t 60 l <&5; do
			case $l in Attaching*) break ;; esac
		done
		"$LOOP" "$N" "$out"
		kill -INT "$BTPID"
		sed -n 's/^@n: //p' <&5 >> "$TMP/n.$c"
		exec 5<&-
		wait "$BTPID"
		BTPID= ;;
	esac
	cat "$out" >> "$TMP/ns.$c"
}

CONFS="base idle agg nopush"
[ -n "$BPF" ] && CONFS="$CONFS bpftrace"
for r in $(seq "$REPS"); do
	for c in $CONFS; do
		round "$c"
	done
done

echo "agg_bench: $N getppid calls flat out, median of $REPS rounds"
b=$(median < "$TMP/ns.base")
i=$(median < "$TMP/ns.idle")
for c in $CONFS; do
	m=$(median < "$TMP/ns.$c")
	extra=
	[ -s "$TMP/n.$c" ] && extra="counted $(median < "$TMP/n.$c") of $N"
	[ -s "$TMP/lost.$c" ] && extra="$extra, dropped $(median < "$TMP/lost.$c")"
	awk -v c="$c" -v m="$m" -v b="$b" -v i="$i" -v x="$extra" 'BEGIN {
		printf("  %-9s %8.1f ns/call  x%.2f of untraced  %+7.1f ns vs untraced  %+7.1f ns vs nothing enabled  %s\n",
		    c, m, m / b, m - b, m - i, x) }'
done
if [ -n "$BPF" ]; then
	awk -v a="$(median < "$TMP/ns.agg")" -v p="$(median < "$TMP/ns.bpftrace")" \
	    -v b="$b" 'BEGIN {
		printf("  what btrace+dtd adds over untraced is %.2f of what bpftrace adds\n",
		    (a - b) / (p - b)) }'
fi
