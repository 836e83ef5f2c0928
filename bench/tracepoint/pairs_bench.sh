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
# Pairs across CPUs and sources (issue 21): a block request's issue and
# its completion, a thread's wakeup and its first moment on a CPU, as
# our btrace and bpftrace pair them in the same run, both tracing the
# whole machine at once over the same workload (64 synchronous 4 KB
# writes, 200 sleeps of 2 ms) while a spinner keeps each CPU busy (the
# kernel may not deliver a tracepoint raised on an idle CPU to perf).
# Each prints how many it saw begin and how many it paired; the ratio is
# our share paired over bpftrace's.  Medians of REPS runs.  Root; TMPDIR
# on a disk for the block events.  A benchmark, not a test.
#
# usage: pairs_bench.sh btrace dtd tp_target [reps]
set -u
[ $# -ge 3 ] || { echo "usage: $0 btrace dtd tp_target [reps]" >&2; exit 2; }
BTRACE=$1
DTD=$2
TARGET=$3
REPS=${4:-5}

. "$(dirname "$0")/../../tests/regress/lib.sh"
BPF=$(command -v bpftrace) || fail "bpftrace is needed"
dtd_start
export USERDT_SOCKET=$TMP/ingest.sock

BT_BIO='tracepoint:block:block_rq_issue /arg2 > 0/ { @s[arg0, arg1] = 1; @begun = count(); }
tracepoint:block:rq_complete /@s[arg0, arg1]/ { @paired = count(); delete(@s[arg0, arg1]); }
END { clear(@s); }'
BPF_BIO='tracepoint:sched:sched_switch /@armed == 0/ { @armed = 1; printf("ready\n"); }
tracepoint:block:block_rq_issue /args->nr_sector > 0/ { @s[args->dev, args->sector] = 1; @begun = count(); }
tracepoint:block:block_rq_complete /@s[args->dev, args->sector]/ { @paired = count(); delete(@s[args->dev, args->sector]); }
END { clear(@s); }'
BT_RUNQ='tracepoint:sched:wakeup { @q[arg0] = 1; @begun = count(); }
tracepoint:sched:on__cpu /@q[tid]/ { @paired = count(); delete(@q[tid]); }
END { clear(@q); }'
BPF_RUNQ='tracepoint:sched:sched_switch /@armed == 0/ { @armed = 1; printf("ready\n"); }
tracepoint:sched:sched_wakeup { @q[args->pid] = 1; @begun = count(); }
tracepoint:sched:sched_switch /@q[args->next_pid]/ { @paired = count(); delete(@q[args->next_pid]); }
END { clear(@q); }'

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# scalar FILE NAME: @NAME's value in FILE, or 0
scalar() {
	awk -v n="@$2:" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }' "$1"
}

# one CASE: both tracers over one workload; "begun paired" of each
# appended to $TMP/bt.CASE and $TMP/bpf.CASE
one() {
	local c=$1 bt bpf work spin="" i bpfpid
	case $c in
	bio)	bt=$BT_BIO; bpf=$BPF_BIO
		work="$TARGET bio 64 $TMP/bio.dat" ;;
	runq)	bt=$BT_RUNQ; bpf=$BPF_RUNQ
		work="$TARGET sleep 200 2000" ;;
	esac
	for i in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$i" sh -c 'while :; do :; done' &
		spin="$spin $!"
	done
	"$BPF" -e "$bpf" > "$TMP/bpf.out" 2>&1 &
	bpfpid=$!
	# bpftrace's first context switch once its probes are attached
	# (BEGIN, and its "Attaching" line, come before they are).
	for i in $(seq 600); do
		grep -q '^ready$' "$TMP/bpf.out" 2>/dev/null && break
		kill -0 "$bpfpid" 2>/dev/null ||
		    fail "bpftrace: $(cat "$TMP/bpf.out")"
		sleep 0.1
	done
	grep -q '^ready$' "$TMP/bpf.out" || fail "bpftrace not ready in 60 s"
	# -c: the workload starts once btrace records; -A: the machine's
	# events all the same, as bpftrace's.
	"$BTRACE" -d "$DEV" -A -c "$work" -e "$bt" > "$TMP/bt.out" 2>&1 ||
	    fail "btrace: $(cat "$TMP/bt.out")"
	int_stop "$bpfpid"
	wait "$bpfpid"
	kill $spin 2>/dev/null
	wait $spin 2>/dev/null
	echo "$(scalar "$TMP/bt.out" begun) $(scalar "$TMP/bt.out" paired)" \
	    >> "$TMP/bt.$c"
	echo "$(scalar "$TMP/bpf.out" begun) $(scalar "$TMP/bpf.out" paired)" \
	    >> "$TMP/bpf.$c"
}

echo "pairs across CPUs, btrace against bpftrace in the same runs (median of $REPS)"
for c in bio runq; do
	for r in $(seq "$REPS"); do
		one "$c"
	done
	btshare=$(awk '$1 > 0 { print $2 / $1 }' "$TMP/bt.$c" | median)
	bpfshare=$(awk '$1 > 0 { print $2 / $1 }' "$TMP/bpf.$c" | median)
	printf '  %-5s btrace paired %5.1f%%, bpftrace %5.1f%%: %.3fx (begun: btrace %s, bpftrace %s)\n' \
	    "$c" "$(echo "$btshare * 100" | bc -l)" \
	    "$(echo "$bpfshare * 100" | bc -l)" \
	    "$(echo "$btshare / $bpfshare" | bc -l)" \
	    "$(awk '{ print $1 }' "$TMP/bt.$c" | median)" \
	    "$(awk '{ print $1 }' "$TMP/bpf.$c" | median)"
done
