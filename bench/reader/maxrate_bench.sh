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
# The highest rate one reader takes with nothing lost (issue 21): a
# getppid() loop paced at a ladder of rates (paced_loop, entry and return
# traced: two events a call), under
#   btrace -c            lossless, the -c default: threads wait for room
#   btrace -c --no-lossless   rings that drop when full
#   bpftrace -c          syscalls:sys_{enter,exit}_getppid, /pid == cpid/
# each with a printf-free script (`@[tid] = count()`, which btrace reads
# event by event: BTRACE_NOPUSH=1, not folded in the tracee) and a
# printf-per-event one (into a file).  A rung is taken when the median of
# REPS runs lost nothing, counted every event (2 x calls), and kept the
# loop within 5% of its schedule: a tracer that makes the loop wait takes
# only the rate the loop then reaches.  A tool's first rung not taken
# ends its ladder (the rungs above: "-").  The machine's noise moves every
# tool alike: read the tools against each other in one run.  Root, for
# bpftrace; without bpftrace its column says "-".  A benchmark, not a
# test: it asserts nothing.
#
# usage: maxrate_bench.sh BUILD [reps [seconds]]
#   BUILD: a meson build directory (daemon/dtd, client/btrace,
#   bench/reader/paced_loop in it); seconds: each run's length at its
#   rate (default 2).  MAXRATE_LADDER: the rates, events a second
#   (default 500000 1000000 2000000 3000000 4000000).
set -u
[ $# -ge 1 ] || { echo "usage: $0 BUILD [reps [seconds]]" >&2; exit 2; }
B=$1
REPS=${2:-3}
SECS=${3:-2}
LADDER=${MAXRATE_LADDER:-500000 1000000 2000000 3000000 4000000}
LOOP=$B/bench/reader/paced_loop
BPFTRACE=$(command -v bpftrace || true)

. "$(dirname "$0")/../../tests/regress/lib.sh"
dtd_tmp
dtd_serve "$B/daemon/dtd"

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

BT_COUNT='syscall:getppid:entry,syscall:getppid:return { @[tid] = count(); }'
BT_PRINT='syscall:getppid:entry,syscall:getppid:return { printf("%d\n", tid); }'
BP_COUNT='tracepoint:syscalls:sys_enter_getppid,tracepoint:syscalls:sys_exit_getppid /pid == cpid/ { @[tid] = count(); }'
BP_PRINT='tracepoint:syscalls:sys_enter_getppid,tracepoint:syscalls:sys_exit_getppid /pid == cpid/ { printf("%d\n", tid); }'

# one run: tool script rate -> "lost% slowdown" (counted events short of
# 2 x calls are lost, said or not)
run() {
	local tool=$1 kind=$2 rate=$3 calls out n
	calls=$((rate / 2 * SECS))
	out=$TMP/out
	rm -f "$TMP/wall"
	case $tool in
	lossless|lossy)
		local script=$BT_COUNT flag=
		[ "$kind" = print ] && script=$BT_PRINT
		[ "$tool" = lossy ] && flag=--no-lossless
		USERDT_SOCKET="$TMP/ingest.sock" BTRACE_NOPUSH=1 \
		    "$B/client/btrace" -d "$DEV" $flag \
		    -c "$LOOP $((rate / 2)) $calls $TMP/cpu $TMP/wall" \
		    -e "$script" > "$out" 2> "$TMP/err" ;;
	bpftrace)
		local script=$BP_COUNT
		[ "$kind" = print ] && script=$BP_PRINT
		"$BPFTRACE" -c "$LOOP $((rate / 2)) $calls $TMP/cpu $TMP/wall" \
		    -e "$script" > "$out" 2> "$TMP/err" ;;
	esac
	if [ "$kind" = count ]; then
		n=$(awk '/^@/ { s += $NF } END { print s + 0 }' "$out")
	else
		n=$(grep -c '^[0-9][0-9]*$' "$out")
	fi
	# the launcher's own calls (btrace's child before its exec) count too
	[ "$n" -gt $((2 * calls)) ] && n=$((2 * calls))
	awk -v n="$n" -v c="$calls" -v r="$rate" -v w="$(cat "$TMP/wall" \
	    2>/dev/null || echo 0)" 'BEGIN {
		sched = 2 * c / r;
		printf("%.3f %.3f\n", (2 * c - n) * 100 / (2 * c),
		    w > 0 ? w / sched : 99) }'
}

printf 'maxrate_bench: paced getppid(), entry and return, %s s a run, median of %s; lost%% and the loop over its schedule\n' "$SECS" "$REPS"
printf '%-9s %-6s' rate script
for tool in lossless lossy bpftrace; do printf ' %-18s' "$tool"; done
echo
for kind in count print; do
	: > "$TMP/failed"
	for rate in $LADDER; do
		printf '%-9s %-6s' "$rate" "$kind"
		for tool in lossless lossy bpftrace; do
			if { [ "$tool" = bpftrace ] && [ -z "$BPFTRACE" ]; } ||
			    grep -qx "$tool" "$TMP/failed"; then
				printf ' %-18s' -
				continue
			fi
			: > "$TMP/runs"
			for r in $(seq "$REPS"); do
				run "$tool" "$kind" "$rate" >> "$TMP/runs"
			done
			l=$(awk '{ print $1 }' "$TMP/runs" | median)
			s=$(awk '{ print $2 }' "$TMP/runs" | median)
			ok=$(awk -v l="$l" -v s="$s" \
			    'BEGIN { print (l == 0 && s <= 1.05) ? "ok" : "" }')
			printf ' %-18s' "$(printf '%s%% %sx %s' "$l" "$s" "$ok")"
			if [ -n "$ok" ]; then
				echo "$kind $tool $rate" >> "$TMP/taken"
			else
				echo "$tool" >> "$TMP/failed"
			fi
		done
		echo
	done
done
echo "highest rate taken (events/s; 0: not the first rung):"
for kind in count print; do
	for tool in lossless lossy bpftrace; do
		printf '  %-6s %-9s %s\n' "$kind" "$tool" "$(awk -v k="$kind" \
		    -v t="$tool" '$1 == k && $2 == t && $3 > m { m = $3 }
		    END { print m + 0 }' "$TMP/taken" 2>/dev/null || echo 0)"
	done
done
