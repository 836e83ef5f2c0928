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
# Aggregations folded in the traced process (issue 22), before and
# after: two builds of userdt (A, B: their build directories), each
# with its own dtd on its own device, take turns in each of REPS rounds
# running a flat-out getppid loop (agg_loop) under btrace -c, for each
# program below, and B's loop untraced ("base").  Per call: the loop thread's CPU time (which other
# programs on a shared machine do not stretch) and dtd's (user + system,
# from /proc), medians; ratios B/A from this one run.  Root.  A
# benchmark, not a test.  A build of main folds these rules in dtd from
# records; USERDT_SRCAGG=0 gives the same with build B alone (config
# "rec").
#
# usage: srcagg_bench.sh BUILD_A BUILD_B [reps [calls]]
set -u
[ $# -ge 2 ] || { echo "usage: $0 build_a build_b [reps [calls]]" >&2; exit 2; }
A=$1
B=$2
REPS=${3:-5}
N=${4:-2000000}
# the programs: a sum of return values by pid, a histogram and a max
PROGS=${SRCAGG_BENCH_PROGS:-'syscall:getppid:return { @s[pid] = sum(retval); }
syscall:getppid:return { @h = hist(retval); @m = max(retval); }'}

. "$(dirname "$0")/../../tests/regress/lib.sh"
dtd_need "srcagg_bench"
dtd_tmp
TMPB=$TMP
# one dtd a build, its device and socket apart
for x in A B; do
	eval "dir=\$$x"
	mkdir -p "$TMPB/$x"
	TMP=$TMPB/$x
	dtd_serve "$dir/daemon/dtd"
	eval "DEV_$x=\$DEV DTD_$x=\$DTDPID"
done
TMP=$TMPB
DTDPID=
trap 'kill -TERM $DTD_A $DTD_B 2>/dev/null; wait; rm -rf "$TMPB"' EXIT

# CPU ticks (user + system) of process $1
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# round CONF PROGNO PROG: the loop's ns/call and dtd's into files
round() {
	local c=$1 k=$2 prog=$3 x dir dev pid t0 t1

	if [ "$c" = base ]; then
		"$B/bench/btrace/agg_loop" "$N" "$TMPB/loop.out"
		awk '{ print $2 }' "$TMPB/loop.out" >> "$TMPB/loop.$c.$k"
		echo 0 >> "$TMPB/dtd.$c.$k"
		echo 0 >> "$TMPB/lost.$c.$k"
		return
	fi
	x=$c
	[ "$c" = rec ] && x=B
	eval "dir=\$$x dev=\$DEV_$x pid=\$DTD_$x"
	[ "$c" = rec ] && export USERDT_SRCAGG=0
	t0=$(ticks "$pid")
	USERDT_SOCKET=$TMPB/$x/ingest.sock "$dir/client/btrace" -d "$dev" -v \
	    -c "$dir/bench/btrace/agg_loop $N $TMPB/loop.out" -e "$prog" \
	    > "$TMPB/bt.out" 2> "$TMPB/bt.err"
	t1=$(ticks "$pid")
	unset USERDT_SRCAGG
	awk '{ print $2 }' "$TMPB/loop.out" >> "$TMPB/loop.$c.$k"
	awk -v d=$((t1 - t0)) -v hz="$HZ" -v n="$N" \
	    'BEGIN { print d * 1e9 / hz / n }' >> "$TMPB/dtd.$c.$k"
	sed -n 's/^\([0-9]*\) events dropped$/\1/p' "$TMPB/bt.err" \
	    >> "$TMPB/lost.$c.$k"
}

for r in $(seq "$REPS"); do
	k=0
	while IFS= read -r prog; do
		k=$((k + 1))
		for c in base A B rec; do
			round "$c" "$k" "$prog"
		done
	done <<< "$PROGS"
done

echo "srcagg_bench: $N getppid calls flat out, median of $REPS rounds"
echo "  A = $A, B = $B, rec = B with USERDT_SRCAGG=0"
k=0
while IFS= read -r prog; do
	k=$((k + 1))
	echo " $prog"
	base=$(median < "$TMPB/loop.base.$k")
	for c in base A B rec; do
		printf "  %-4s loop %7.1f ns/call (%+6.1f untraced)  dtd %7.1f ns/call  dropped %s\n" \
		    "$c" "$(median < "$TMPB/loop.$c.$k")" \
		    "$(echo "$(median < "$TMPB/loop.$c.$k") - $base" | bc -l)" \
		    "$(median < "$TMPB/dtd.$c.$k")" \
		    "$(median < "$TMPB/lost.$c.$k")"
	done
	awk -v a="$(median < "$TMPB/loop.A.$k")" \
	    -v b="$(median < "$TMPB/loop.B.$k")" \
	    -v da="$(median < "$TMPB/dtd.A.$k")" \
	    -v db="$(median < "$TMPB/dtd.B.$k")" -v u="$base" 'BEGIN {
		printf("  B/A: loop x%.2f, over untraced x%.2f, loop + dtd x%.2f\n",
		    b / a, (b - u) / (a - u), (b + db) / (a + da)) }'
done <<< "$PROGS"
