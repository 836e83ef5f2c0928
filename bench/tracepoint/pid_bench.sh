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
# btrace -p on a kernel tracepoint while another process makes system
# calls flat out (issue 22): `btrace -p PID -e 'tracepoint:raw_syscalls:
# sys_enter /arg0 == 39/ { @ = count(); }'`, PID a pid_target making
# CALLS getppid() calls in all, half from its main thread, a quarter
# from a thread started before btrace and the rest from one started
# after it began, each thread at RATE calls a second (0: flat out, more
# than any perf buffer holds while dtd waits for a CPU beside the
# others), and a dd reading a byte at a time beside it all rounds long
# (2 cores: mostly on the other one).  Three configurations take turns
# in each of REPS rounds: btrace as it runs (the pid it pushes is the
# kernel's, and the rule only counts: counters on PID's threads,
# dt_tp_pcnt.c, no record); the same against a second dtd started with
# USERDT_KCOUNT=0 (sampled events of dtd's own on PID's threads,
# dt_tp_pid.c, one record a call, folded by dtd); and btrace with
# BTRACE_NOPUSH=1 (every event of the machine read by dtd and filtered
# there).  For each, medians over the rounds: the count against CALLS,
# the rounds exact, the events btrace says dropped, and that dtd's CPU
# (utime + stime over the run) per call of PID; then the ratios of
# dtd's CPU, sampled and not pushed over counted, in this one run.
# Root.  A benchmark, not a test: it asserts nothing.
#
# usage: pid_bench.sh btrace dtd pid_target [reps [calls [rate]]]
set -u
[ $# -ge 3 ] || {
	echo "usage: $0 btrace dtd pid_target [reps [calls [rate]]]" >&2
	exit 2
}
BTRACE=$1
DTD=$2
TARGET=$3
REPS=${4:-5}
CALLS=${5:-200000}
RATE=${6:-50000}

. "$(dirname "$0")/../../tests/regress/lib.sh"
dtd_start
NOISE=
# the second dtd, which samples: its own device, sockets and image
mkdir "$TMP/s" && mkfifo "$TMP/s/ready" || exit 2
exec 4<>"$TMP/s/ready"
USERDT_KCOUNT=0 "$DTD" --foreground --frontend fuse --device "$TMP/s/dt" \
    --ready-fd 4 --ingest "$TMP/s/ingest.sock" --ksyms "$TMP/s/ksyms" \
    > "$TMP/s/dtd.log" 2>&1 4>&4 &
SDTDPID=$!
read -r -t 30 l <&4 && [ "$l" = ready ] ||
    { echo "pid_bench: the second dtd: $(cat "$TMP/s/dtd.log")" >&2; kill "$SDTDPID"; exit 1; }
exec 4<&-

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# CPU seconds process $1 has used so far (utime + stime)
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf("%.3f\n", ($14 + $15) / hz) }' \
	    "/proc/$1/stat"
}

cp /bin/dd "$TMP/pbnoise" || exit 2
setsid "$TMP/pbnoise" if=/dev/zero of=/dev/null bs=1 2> /dev/null &
NOISE=$!
trap 'kill -- -$NOISE 2> /dev/null; kill "$SDTDPID" 2> /dev/null
    dtd_cleanup' EXIT

n=$((CALLS / 2))
m=$((CALLS / 4))
k=$((CALLS - n - m))
PROG='BEGIN { printf("go\n"); }
tracepoint:raw_syscalls:sys_enter /arg0 == 39/ { @ = count(); }'
for i in $(seq "$REPS"); do
	for c in counted sampled nopush; do
		[ $c = nopush ] && e=BTRACE_NOPUSH=1 || e=
		[ $c = sampled ] && dpid=$SDTDPID dev=$TMP/s/dt ||
		    dpid=$DTDPID dev=$DEV
		rm -f "$TMP/tin" "$TMP/tout" "$TMP/bt"
		mkfifo "$TMP/tin" "$TMP/tout" "$TMP/bt" || exit 2
		exec 5<>"$TMP/tin"
		if [ "$RATE" = 0 ]; then
			"$TARGET" "$n" "$m" "$k" <&5 > "$TMP/tout" &
		else
			"$TARGET" "$n" "$m" "$k" "$RATE" <&5 > "$TMP/tout" &
		fi
		tp=$!
		exec 6< "$TMP/tout"
		read -r -t 30 l <&6 || { echo "pid_bench: no target" >&2; exit 1; }
		d0=$(cpu_of "$dpid")
		env ${e:+"$e"} "$BTRACE" -d "$dev" -v -p "$tp" -e "$PROG" \
		    > "$TMP/bt" 2> "$TMP/bt.err" &
		BTPID=$!
		exec 7< "$TMP/bt"
		read -r -t 60 l <&7 || {
			echo "pid_bench: btrace did not start: $(cat "$TMP/bt.err")" >&2
			exit 1
		}
		echo >&5
		wait "$tp"
		wait "$BTPID"
		BTPID=
		d1=$(cpu_of "$dpid")
		got=$(sed -n 's/^@: //p' <&7)
		exec 5>&- 6<&- 7<&-
		lost=$(sed -n 's/^\([0-9]*\) events dropped$/\1/p' "$TMP/bt.err")
		echo "${got:-0} ${lost:-0} $(echo "$d0 $d1" |
		    awk '{ printf("%.3f", $2 - $1) }')" >> "$TMP/r.$c"
		echo "round $i, $c: count, dropped, dtd CPU:" \
		    "$(tail -n 1 "$TMP/r.$c")"
	done
done

echo "btrace -p PID, tracepoint:raw_syscalls:sys_enter /arg0 == 39/" \
    "{ @ = count(); }"
echo "PID: $CALLS getppid() on 3 threads, each at $RATE a second (0: flat out);"
echo "a dd flat out beside it;"
echo "median of $REPS rounds:"
for c in counted sampled nopush; do
	got=$(awk '{ print $1 }' "$TMP/r.$c" | median)
	ex=$(awk -v w="$CALLS" '$1 == w { n++ } END { print n + 0 }' "$TMP/r.$c")
	lost=$(awk '{ print $2 }' "$TMP/r.$c" | median)
	cpu=$(awk '{ print $3 }' "$TMP/r.$c" | median)
	eval "cpu_$c=$cpu"
	case $c in
	counted) name="btrace (counted on PID's threads)" ;;
	sampled) name="btrace, USERDT_KCOUNT=0 (sampled on them)" ;;
	nopush)	name="btrace, BTRACE_NOPUSH=1 (pid in dtd)" ;;
	esac
	printf '  %-44s count %s (%s of %s exact), %s dropped, '\
'dtd CPU %s s (%s ns a call)\n' \
	    "$name" "$got" "$ex" "$REPS" "$lost" "$cpu" \
	    "$(awk -v s="$cpu" -v w="$CALLS" 'BEGIN { printf("%.0f", s * 1e9 / w) }')"
done
for c in sampled nopush; do
	eval "a=\$cpu_$c"
	awk -v c="$c" -v a="$a" -v b="$cpu_counted" 'BEGIN {
		if (b > 0)
			printf("dtd CPU, %s / counted: %.1f\n", c, a / b)
		else
			printf("dtd CPU, %s / counted: > %.1f (counted: below a tick)\n",
			    c, a / 0.01)
	}'
done
