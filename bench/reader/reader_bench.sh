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
# The reader path's CPU per event (issue 21), two builds A and B taking
# turns in each of REPS rounds so that the machine's drift hits both
# alike: a paced getppid() loop (paced_loop) under `btrace -c
# --no-lossless` with entry and return recorded and a printf-free script
# that btrace evaluates itself (BTRACE_NOPUSH=1: not folded in dtd), each
# build with its own dtd.  Per run: dtd's CPU and btrace's own (its
# shell's count less the loop's) over the events btrace counted, and the
# share of the loop's events lost.  Medians, and B over A.  Root.  A
# benchmark, not a test: it asserts nothing.  On two cores the loop, dtd
# and btrace share the machine: CPU per event is what bounds the rate a
# reader takes, the loss at a pace is what a user sees.
#
# usage: reader_bench.sh BUILD_A BUILD_B PACED_LOOP [reps [rate [calls]]]
#   BUILD_*: meson build directories (daemon/dtd, client/btrace in them)
#   rate: calls a second (2 events each), 0 flat out; default 500000
# READER_BENCH_RING=N gives both dtds --ring-size N.
set -u
[ $# -ge 3 ] || {
	echo "usage: $0 BUILD_A BUILD_B PACED_LOOP [reps [rate [calls]]]" >&2
	exit 2
}
A=$1
B=$2
LOOP=$3
REPS=${4:-5}
RATE=${5:-500000}
CALLS=${6:-2000000}
RING=${READER_BENCH_RING:-}
SCRIPT='syscall:getppid:entry,syscall:getppid:return { @[tid] = count(); }'
HZ=$(getconf CLK_TCK)
TMP=$(mktemp -d) || exit 2
DTDPID=
trap '[ -n "$DTDPID" ] && kill -TERM "$DTDPID" 2>/dev/null; rm -rf "$TMP"' EXIT

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# one run of build $1 labelled $2: "dtdns btns lost%" to $TMP/runs.$2
run() {
	local b=$1 l=$2 line d0 d1 t ev
	rm -f "$TMP/ready"
	mkfifo "$TMP/ready" || exit 2
	exec 4<>"$TMP/ready"
	"$b/daemon/dtd" --foreground --frontend fuse --device "$TMP/dt" \
	    --ready-fd 4 --ingest "$TMP/ingest.sock" --ksyms "$TMP/ksyms" \
	    ${RING:+--ring-size "$RING"} > "$TMP/dtd.log" 2>&1 4>&4 &
	DTDPID=$!
	if ! read -r -t 30 line <&4 || [ "$line" != ready ]; then
		cat "$TMP/dtd.log" >&2
		echo "reader_bench: $b's dtd did not get ready" >&2
		exit 1
	fi
	exec 4<&-
	d0=$(awk '{ print $14 + $15 }' "/proc/$DTDPID/stat")
	TIMEFORMAT='%U %S'
	t=$( { time USERDT_SOCKET="$TMP/ingest.sock" BTRACE_NOPUSH=1 \
	    "$b/client/btrace" -d "$TMP/dt" --no-lossless \
	    -c "$LOOP $RATE $CALLS $TMP/cpu" -e "$SCRIPT" \
	    > "$TMP/out" 2> "$TMP/err"; } 2>&1 )
	d1=$(awk '{ print $14 + $15 }' "/proc/$DTDPID/stat")
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	ev=$(awk '/^@/ { s += $NF } END { print s + 0 }' "$TMP/out")
	awk -v t="$t" -v l="$(cat "$TMP/cpu")" -v d=$((d1 - d0)) -v hz="$HZ" \
	    -v ev="$ev" -v n=$((2 * CALLS)) 'BEGIN {
		split(t, x, " ");
		if (ev == 0) { print "0 0 100"; exit }
		printf("%.1f %.1f %.3f\n", d / hz * 1e9 / ev,
		    (x[1] + x[2] - l) * 1e9 / ev, (n - ev) * 100 / n) }' \
	    >> "$TMP/runs.$l"
	[ -n "${READER_BENCH_VERBOSE:-}" ] && echo "$l: $(tail -1 "$TMP/runs.$l")"
	return 0
}

echo "reader_bench: $CALLS getppid() calls at ${RATE:-0}/s" \
    "(0: flat out), entry and return, ${RING:-default} ring, $REPS rounds"
for r in $(seq "$REPS"); do
	# alternate who goes first: neither always gets the warmer machine
	if [ $((r % 2)) -eq 1 ]; then run "$A" A; run "$B" B
	else run "$B" B; run "$A" A; fi
done
for l in A B; do
	printf '%s: dtd %6.1f ns/event, btrace %6.1f ns/event, lost %6.3f%% (medians)\n' \
	    "$l" "$(awk '{ print $1 }' "$TMP/runs.$l" | median)" \
	    "$(awk '{ print $2 }' "$TMP/runs.$l" | median)" \
	    "$(awk '{ print $3 }' "$TMP/runs.$l" | median)"
done
paste "$TMP/runs.A" "$TMP/runs.B" | awk '{ print $4 / $1, $5 / $2,
    ($4 + $5) / ($1 + $2) }' > "$TMP/ratios"
printf 'B/A: dtd %.2fx, btrace %.2fx, dtd+btrace %.2fx (medians of the rounds'"'"' ratios)\n' \
    "$(awk '{ print $1 }' "$TMP/ratios" | median)" \
    "$(awk '{ print $2 }' "$TMP/ratios" | median)" \
    "$(awk '{ print $3 }' "$TMP/ratios" | median)"
