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
# Aggregations at the source keyed by stacks (issue 22), measured: the
# CPU dtd and btrace spend per sample of '@[kstack] = count()' folded in
# dtd against the same with BTRACE_NOPUSH=1 (every sample a record read
# and folded by btrace), on profile:hz:4999 machine-wide and on
# raw_syscalls:sys_enter under a flat-out getppid loop.  Configurations
# take turns in each of REPS rounds; medians and their ratios, all from
# this one run.  Root.  A benchmark, not a test.
#
# usage: stackagg_bench.sh btrace dtd agg_loop [reps [secs]]
set -u
[ $# -ge 3 ] || {
	echo "usage: $0 btrace dtd agg_loop [reps [secs]]" >&2
	exit 2
}
BTRACE=$1
DTD=$2
LOOP=$3
REPS=${4:-3}
SECS=${5:-2}

. "$(dirname "$0")/../../tests/regress/lib.sh"
dtd_start
export USERDT_SOCKET=$TMP/ingest.sock

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# dtd's CPU seconds so far
dtd_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' \
	    "/proc/$DTDPID/stat"
}

# one round of workload $1 in mode $2 (agg|nopush): ns of dtd+btrace CPU
# per sample appended to $TMP/ns.$1.$2
round() {
	local w=$1 m=$2 prog d0 d1 bcpu n

	case $w in
	profile)
		prog="profile:hz:4999 { @[kstack] = count(); } interval:s:$SECS { exit(); }" ;;
	tracepoint)
		prog="tracepoint:raw_syscalls:sys_enter { @[kstack] = count(); } interval:s:$SECS { exit(); }" ;;
	esac
	[ "$m" = nopush ] && export BTRACE_NOPUSH=1
	d0=$(dtd_cpu)
	if [ "$w" = tracepoint ]; then
		"$LOOP" 100000000 /dev/null &
		BTPID=$!
	fi
	# btrace's CPU as its parent's rusage of it
	python3 -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as o, open(sys.argv[2], "w") as e:
    subprocess.run(sys.argv[3:], stdout=o, stderr=e)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime + r.ru_stime)' "$TMP/bt.out" "$TMP/bt.err" \
	    "$BTRACE" -d "$DEV" -v -e "$prog" > "$TMP/bt.cpu"
	if [ -n "$BTPID" ]; then
		kill "$BTPID" 2>/dev/null
		wait "$BTPID" 2>/dev/null
		BTPID=
	fi
	d1=$(dtd_cpu)
	unset BTRACE_NOPUSH
	bcpu=$(cat "$TMP/bt.cpu")
	if [ "$m" = agg ]; then
		n=$(sed -n 's/^\([0-9]*\) events aggregated by dtd$/\1/p' "$TMP/bt.err")
	else
		n=$(sed -n 's/^\([0-9]*\) events read$/\1/p' "$TMP/bt.err")
	fi
	[ "${n:-0}" -gt 0 ] || { echo "no samples: $(cat "$TMP/bt.err")" >&2; return; }
	echo "$n" >> "$TMP/n.$w.$m"
	d=$(awk -v a="$d0" -v b="$d1" 'BEGIN { print b - a }')
	awk -v d="$d" -v b="$bcpu" -v n="$n" \
	    'BEGIN { printf("%.1f\n", (d + b) * 1e9 / n) }' >> "$TMP/ns.$w.$m"
	awk -v d="$d" -v n="$n" 'BEGIN { printf("%.1f\n", d * 1e9 / n) }' \
	    >> "$TMP/dns.$w.$m"
	awk -v b="$bcpu" -v n="$n" 'BEGIN { printf("%.1f\n", b * 1e9 / n) }' \
	    >> "$TMP/bns.$w.$m"
}

for r in $(seq "$REPS"); do
	for w in profile tracepoint; do
		for m in agg nopush; do
			round "$w" "$m"
		done
	done
done

echo "stackagg_bench: @[kstack] = count(), $SECS s a run, median of $REPS rounds"
for w in profile tracepoint; do
	a=$(median < "$TMP/ns.$w.agg")
	p=$(median < "$TMP/ns.$w.nopush")
	awk -v w="$w" -v a="$a" -v p="$p" -v na="$(median < "$TMP/n.$w.agg")" \
	    -v np="$(median < "$TMP/n.$w.nopush")" \
	    -v da="$(median < "$TMP/dns.$w.agg")" \
	    -v dp="$(median < "$TMP/dns.$w.nopush")" \
	    -v ba="$(median < "$TMP/bns.$w.agg")" \
	    -v bp="$(median < "$TMP/bns.$w.nopush")" 'BEGIN {
		printf("  %-10s folded %8.0f ns/sample (%d samples)  BTRACE_NOPUSH=1 %8.0f ns/sample (%d read)  folded/NOPUSH x%.2f\n",
		    w, a, na, p, np, a / p)
		printf("  %-10s   dtd x%.2f (%.0f vs %.0f ns), btrace x%.2f (%.0f vs %.0f ns; its start, kallsyms, included)\n",
		    "", da / dp, da, dp, ba / bp, ba, bp) }'
done
