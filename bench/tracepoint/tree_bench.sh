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
# btrace -c of a tracepoint rule that is not a plain count, on a machine
# busy with the same calls (issue 22, DTEVT_TREE): a paced getppid() loop
# under `btrace -c` with `tracepoint:raw_syscalls:sys_enter /comm ==
# "paced_loop"/ { @[arg0] = count(); }` and a return histogram, while a
# copy of the loop under the same name runs flat out outside the
# command's tree.  Two builds A and B take turns in each of REPS rounds,
# each with its own dtd, and bpftrace (if installed) counts the same
# loop's calls in the kernel beside the same noise (by pid == cpid: the
# name cannot tell the two loops apart, and its -c follows no tree).  Per
# configuration, medians over the rounds: the loop's calls counted
# against the calls it made, the rounds exact, the events said lost,
# and the tracer's CPU (dtd's and btrace's, or bpftrace's) per loop
# call.  Root.  A benchmark, not a test: it asserts nothing.
#
# usage: tree_bench.sh BUILD_A BUILD_B PACED_LOOP [reps [rate [calls]]]
#   BUILD_*: meson build directories (daemon/dtd, client/btrace in them)
#   rate: the loop's calls a second; default 100000; calls 200000
set -u
[ $# -ge 3 ] || {
	echo "usage: $0 BUILD_A BUILD_B PACED_LOOP [reps [rate [calls]]]" >&2
	exit 2
}
A=$1
B=$2
LOOP=$3
REPS=${4:-5}
RATE=${5:-100000}
CALLS=${6:-200000}
HZ=$(getconf CLK_TCK)
SCRIPT='tracepoint:raw_syscalls:sys_enter /comm == "paced_loop"/ {
    @[arg0] = count(); }
tracepoint:raw_syscalls:sys_exit /comm == "paced_loop"/ {
    @r = hist(arg1); }'
# bpftrace's -c has no tree: its own command's process by pid (cpid)
BPF='tracepoint:raw_syscalls:sys_enter /pid == cpid/ {
    @[args->id] = count(); }
tracepoint:raw_syscalls:sys_exit /pid == cpid/ {
    @r = hist(args->ret); }'
TMP=$(mktemp -d) || exit 2
DTDPID=
NOISE=
trap '[ -n "$DTDPID" ] && kill -TERM "$DTDPID" 2>/dev/null
    [ -n "$NOISE" ] && kill "$NOISE" 2>/dev/null; rm -rf "$TMP"' EXIT
mkdir "$TMP/noise" && cp "$LOOP" "$TMP/noise/paced_loop" || exit 2

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

cpu() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

noise_start() {
	"$TMP/noise/paced_loop" 0 4000000000 "$TMP/noise.cpu" &
	NOISE=$!
}

noise_stop() {
	kill "$NOISE"
	wait "$NOISE" 2>/dev/null
	NOISE=
}

# one run of build $1 labelled $2: "counted% exact lost ns/call"
run() {
	local b=$1 l=$2 line d0 d1 t got lost
	rm -f "$TMP/ready"
	mkfifo "$TMP/ready" || exit 2
	exec 4<>"$TMP/ready"
	"$b/daemon/dtd" --foreground --frontend fuse --device "$TMP/dt" \
	    --ready-fd 4 --ingest "$TMP/ingest.sock" --ksyms "$TMP/ksyms" \
	    > "$TMP/dtd.log" 2>&1 4>&4 &
	DTDPID=$!
	if ! read -r -t 30 line <&4 || [ "$line" != ready ]; then
		cat "$TMP/dtd.log" >&2
		echo "tree_bench: $b's dtd did not get ready" >&2
		exit 1
	fi
	exec 4<&-
	noise_start
	d0=$(cpu "$DTDPID")
	TIMEFORMAT='%U %S'
	t=$( { time USERDT_SOCKET="$TMP/ingest.sock" "$b/client/btrace" \
	    -d "$TMP/dt" -c "$LOOP $RATE $CALLS $TMP/cpu" -e "$SCRIPT" \
	    > "$TMP/out" 2> "$TMP/err"; } 2>&1 )
	d1=$(cpu "$DTDPID")
	noise_stop
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	# OpenBSD's getppid is 39
	got=$(sed -n 's/^@\[39\]: //p' "$TMP/out")
	lost=$(awk '/^Lost [0-9]+ events/ { s += $2 } END { print s + 0 }' \
	    "$TMP/out" "$TMP/err")
	awk -v t="$t" -v l="$(cat "$TMP/cpu")" -v d=$((d1 - d0)) \
	    -v hz="$HZ" -v got="${got:-0}" -v n="$CALLS" -v lost="$lost" \
	    'BEGIN { split(t, x, " ");
		printf("%.3f %d %d %.1f\n", got * 100 / n, got == n, lost,
		    (d / hz + x[1] + x[2] - l) * 1e9 / n) }' >> "$TMP/runs.$l"
	return 0
}

# bpftrace beside the same noise: its CPU per loop call (the loop's off)
run_bpf() {
	local t got
	noise_start
	TIMEFORMAT='%U %S'
	t=$( { time bpftrace -e "$BPF" -c "$LOOP $RATE $CALLS $TMP/cpu" \
	    > "$TMP/bout" 2> "$TMP/berr"; } 2>&1 )
	noise_stop
	# Linux's getppid is 110
	got=$(sed -n 's/^@\[110\]: //p' "$TMP/bout")
	awk -v t="$t" -v l="$(cat "$TMP/cpu")" -v got="${got:-0}" \
	    -v n="$CALLS" 'BEGIN { split(t, x, " ");
		printf("%.3f %d 0 %.1f\n", got * 100 / n, got == n,
		    (x[1] + x[2] - l) * 1e9 / n) }' >> "$TMP/runs.bpf"
}

BPFTRACE=$(command -v bpftrace)
echo "tree_bench: $CALLS getppid() calls at $RATE/s under btrace -c," \
    "a flat-out copy of the loop beside it, $REPS rounds"
for r in $(seq "$REPS"); do
	if [ $((r % 2)) -eq 1 ]; then run "$A" A; run "$B" B
	else run "$B" B; run "$A" A; fi
	[ -n "$BPFTRACE" ] && run_bpf
done
for l in A B bpf; do
	[ -s "$TMP/runs.$l" ] || continue
	printf '%-3s: counted %7.3f%%, exact %d of %d, lost %d, tracer %7.1f ns a call (medians)\n' \
	    "$l" "$(awk '{ print $1 }' "$TMP/runs.$l" | median)" \
	    "$(awk '{ s += $2 } END { print s }' "$TMP/runs.$l")" "$REPS" \
	    "$(awk '{ print $3 }' "$TMP/runs.$l" | median)" \
	    "$(awk '{ print $4 }' "$TMP/runs.$l" | median)"
done
