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
# AGG_BENCH_AB=LIB adds a configuration "ab": the agg one with another
# build of the preload library (USERDT_PRELOAD=LIB), taking its turn in
# every round like the others, for a before/after of the counting path.
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

# median [FIELD]: of the first (or FIELD-th) number of each line
median() {
	awk -v f="${1:-1}" '{ print $f }' | sort -g |
	    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
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
	agg|nopush|ab)
		[ "$c" = nopush ] && export BTRACE_NOPUSH=1
		[ "$c" = ab ] && export USERDT_PRELOAD=$AGG_BENCH_AB
		"$BTRACE" -d "$DEV" -v -c "$LOOP $N $out" -e "$PROG" \
		    > "$TMP/bt.out" 2> "$TMP/bt.err"
		unset BTRACE_NOPUSH USERDT_PRELOAD
		sed -n 's/^@n: //p' "$TMP/bt.out" >> "$TMP/n.$c"
		sed -n 's/^\([0-9]*\) events dropped$/\1/p' "$TMP/bt.err" \
		    >> "$TMP/lost.$c" ;;
	bpftrace)
		# its -c: the loop starts once the probe is attached, and
		# the map is printed when it ends (a SIGINT sent right after
		# "Attaching" could come before bpftrace's handler and be
		# lost: a hang)
		"$BPF" -c "$LOOP $N $out" \
		    -e 'tracepoint:syscalls:sys_enter_getppid /pid == cpid/ { @n = count(); }' \
		    > "$TMP/bpf.out" 2>&1
		sed -n 's/^@n: //p' "$TMP/bpf.out" >> "$TMP/n.$c" ;;
	esac
	cat "$out" >> "$TMP/ns.$c"
}

CONFS="base idle agg nopush"
[ -n "$BPF" ] && CONFS="$CONFS bpftrace"
[ -n "${AGG_BENCH_AB:-}" ] && CONFS="$CONFS ab"
# AGG_BENCH_CONFS="base idle agg ab": fewer configurations, more rounds
# in the same time (base and idle always run: the rest is against them)
[ -n "${AGG_BENCH_CONFS:-}" ] && CONFS=$AGG_BENCH_CONFS
for r in $(seq "$REPS"); do
	for c in $CONFS; do
		round "$c"
	done
done

echo "agg_bench: $N getppid calls flat out, median of $REPS rounds"
# field 1: wall time; 2: the loop thread's CPU time, which the other
# programs on a shared machine do not stretch
for f in 1 2; do
	[ $f = 1 ] && echo " wall time:" || echo " the loop's CPU time:"
	b=$(median $f < "$TMP/ns.base")
	i=$(median $f < "$TMP/ns.idle")
	for c in $CONFS; do
		m=$(median $f < "$TMP/ns.$c")
		extra=
		[ -s "$TMP/n.$c" ] && extra="counted $(median < "$TMP/n.$c") of $N"
		[ -s "$TMP/lost.$c" ] && extra="$extra, dropped $(median < "$TMP/lost.$c")"
		awk -v c="$c" -v m="$m" -v b="$b" -v i="$i" -v x="$extra" 'BEGIN {
			printf("  %-9s %8.1f ns/call  x%.2f of untraced  %+7.1f ns vs untraced  %+7.1f ns vs nothing enabled  %s\n",
			    c, m, m / b, m - b, m - i, x) }'
	done
	if [ -s "$TMP/ns.bpftrace" ]; then
		awk -v a="$(median $f < "$TMP/ns.agg")" \
		    -v p="$(median $f < "$TMP/ns.bpftrace")" -v b="$b" 'BEGIN {
			printf("  what btrace+dtd adds over untraced is %.2f of what bpftrace adds\n",
			    (a - b) / (p - b)) }'
	fi
done
