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
# Two of issue 22's workloads, btrace against bpftrace on the same run
# of the same program, configurations taking turns in each of REPS
# rounds, medians and their ratios from this one run.  Root.  A
# benchmark, not a test: it asserts nothing.
#
# make: `make -s -j2` of start_bench's 32-file C project, untraced,
# under btrace -c with 'syscall:*:entry { @[comm, probe] = count(); }'
# and under bpftrace -c counting tracepoint:raw_syscalls:sys_enter by
# comm and call number.  The build is timed by /usr/bin/time inside
# each (its wall time, its tree's CPU time: what bpftrace's programs
# cost runs in the build's system calls and is in there); the tracer's
# own CPU apart: btrace's and dtd's for btrace, bpftrace's for bpftrace
# (start-up and the map's printing included).
#
# read: `dd if=/dev/zero of=/dev/null bs=4k count=N`, a latency
# histogram of its read()s (entry and return paired by a map keyed by
# tid), btrace's syscall probes against bpftrace's
# tracepoint:syscalls:sys_enter_read/sys_exit_read; dd times itself, so
# the tracers' start-up is not in it: nanoseconds a block untraced and
# traced, what each tracer adds to each read, and how many reads each
# histogram holds.  btrace folds the histogram in dd (the hooks time
# each read, bt_lat.c); btevents is the same btrace reading every read
# as two events (BTRACE_NOPUSH=1), as it did before.
#
# usage: sys_bench.sh btrace dtd start_bench [reps [reads]]
# SYS_BENCH_ONLY=make or =read runs one of the two.
set -u
[ $# -ge 3 ] || {
	echo "usage: $0 btrace dtd start_bench [reps [reads]]" >&2
	exit 2
}
BTRACE=$1
DTD=$2
START_BENCH=$3
REPS=${4:-5}
NREAD=${5:-200000}
ONLY=${SYS_BENCH_ONLY:-}

. "$(dirname "$0")/../../tests/regress/lib.sh"
dtd_start
export USERDT_SOCKET=$TMP/ingest.sock
BPF=$(command -v bpftrace)
[ -n "$BPF" ] || echo "sys_bench: no bpftrace: its rows are left out"
TIMEFORMAT='%R %U %S'

# median [FIELD]: of the first (or FIELD-th) number of each line
median() {
	awk -v f="${1:-1}" '{ print $f }' | sort -g |
	    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# CPU seconds process $1 has used so far (utime + stime)
cpu_of() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf("%.2f\n", ($14 + $15) / hz) }' \
	    "/proc/$1/stat"
}

# --- make -j2 ------------------------------------------------------------

PROJ=$TMP/proj
MKPROG='syscall:*:entry { @[comm, probe] = count(); }'
BPFMK='tracepoint:raw_syscalls:sys_enter { @[comm, args->id] = count(); }'

# one build under configuration $1: "wall cpu tracercpu" to $TMP/mk.$1
mk_round() {
	local c=$1 tm=$TMP/mk.time cmd=$TMP/mk.sh t d0 d1 tool

	# the same script under each: no quoting through the tracers' -c
	printf '#!/bin/sh\nexec /usr/bin/time -o %s -f "%%e %%U %%S" make -s -j2 -C %s\n' \
	    "$tm" "$PROJ" > "$cmd"
	chmod +x "$cmd"
	make -s -C "$PROJ" clean
	rm -f "$tm"
	case $c in
	untraced)
		"$cmd" > /dev/null
		tool=0 ;;
	btrace)
		d0=$(cpu_of "$DTDPID")
		t=$( { time "$BTRACE" -d "$DEV" -v -c "$cmd" -e "$MKPROG" \
		    > "$TMP/mk.out" 2> "$TMP/mk.err"; } 2>&1 )
		d1=$(cpu_of "$DTDPID")
		awk '/^@/ { s += $NF } END { print s }' "$TMP/mk.out" \
		    >> "$TMP/mkn.$c"
		sed -n 's/^\([0-9]*\) events dropped$/\1/p' "$TMP/mk.err" \
		    >> "$TMP/mkl.$c"
		grep -q 'aggregated in dtd' "$TMP/mk.err" && echo dtd \
		    >> "$TMP/mkagg.$c"
		# btrace's own (its children's less the build's) and dtd's
		tool=$(awk -v t="$t" -v b="$(cat "$tm")" -v d0="$d0" -v d1="$d1" \
		    'BEGIN { split(t, x, " "); split(b, y, " ");
			print x[2] + x[3] - y[2] - y[3] + d1 - d0 }') ;;
	bpftrace)
		# bpftrace -c wants a binary's full path
		t=$( { time "$BPF" -c "/bin/sh $cmd" -e "$BPFMK" \
		    > "$TMP/mk.out" 2>&1; } 2>&1 )
		awk '/^@/ { s += $NF } END { print s }' "$TMP/mk.out" \
		    >> "$TMP/mkn.$c"
		tool=$(awk -v t="$t" -v b="$(cat "$tm")" \
		    'BEGIN { split(t, x, " "); split(b, y, " ");
			print x[2] + x[3] - y[2] - y[3] }') ;;
	esac
	awk -v tool="$tool" '{ print $1, $2 + $3, tool }' "$tm" >> "$TMP/mk.$c"
}

mk_report() {
	local c b bc m mc tc

	echo "make -s -j2, 32 files, median of $REPS rounds:"
	b=$(median 1 < "$TMP/mk.untraced")
	bc=$(median 2 < "$TMP/mk.untraced")
	for c in $MKCONFS; do
		m=$(median 1 < "$TMP/mk.$c")
		mc=$(median 2 < "$TMP/mk.$c")
		tc=$(median 3 < "$TMP/mk.$c")
		awk -v c="$c" -v m="$m" -v mc="$mc" -v tc="$tc" -v b="$b" \
		    -v bc="$bc" 'BEGIN {
			printf("  %-9s wall %6.2f s x%.2f   build CPU %6.2f s x%.2f   tracer CPU %5.2f s   build + tracer CPU x%.2f\n",
			    c, m, m / b, mc, mc / bc, tc, (mc + tc) / bc) }'
		if [ -s "$TMP/mkn.$c" ]; then
			printf "            calls counted %s" \
			    "$(median < "$TMP/mkn.$c")"
			[ -s "$TMP/mkl.$c" ] && printf ", dropped %s" \
			    "$(median < "$TMP/mkl.$c")"
			[ -s "$TMP/mkagg.$c" ] && printf ", aggregated in dtd"
			[ "$c" = bpftrace ] && printf " (every process on the machine)"
			echo
		fi
	done
	if [ -n "$BPF" ]; then
		awk -v a="$(median 1 < "$TMP/mk.btrace")" \
		    -v p="$(median 1 < "$TMP/mk.bpftrace")" \
		    -v ac="$(median 2 < "$TMP/mk.btrace")" \
		    -v at="$(median 3 < "$TMP/mk.btrace")" \
		    -v pc="$(median 2 < "$TMP/mk.bpftrace")" \
		    -v pt="$(median 3 < "$TMP/mk.bpftrace")" 'BEGIN {
			printf("  btrace against bpftrace: wall x%.2f, build CPU x%.2f, build + tracer CPU x%.2f\n",
			    a / p, ac / pc, (ac + at) / (pc + pt)) }'
	fi
}

# --- read latency histogram ----------------------------------------------

DD="$(command -v dd) if=/dev/zero of=/dev/null bs=4k count=$NREAD"
RDPROG='syscall:read:entry { @s[tid] = nsecs; }
syscall:read:return /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }
END { clear(@s); }'
BPFRD='tracepoint:syscalls:sys_enter_read /pid == cpid/ { @s[tid] = nsecs; }
tracepoint:syscalls:sys_exit_read /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }
END { clear(@s); }'

# dd's own seconds, from its "copied, S s" line in file $1
dd_secs() {
	sed -n 's/.* copied, \([0-9.e-]*\) s,.*/\1/p' "$1"
}

# the reads a histogram in file $1 holds: its buckets' counts summed
hist_n() {
	awk '/^\[/ { sub(/^[^)]*\)[ \t]*/, ""); s += $1 } END { print s + 0 }' "$1"
}

# one dd under configuration $1: ns a block to $TMP/rd.$1
rd_round() {
	local c=$1

	case $c in
	untraced)
		$DD 2> "$TMP/rd.err" ;;
	btrace|btevents)
		# btevents: every read as two events, as before issue 22's
		# latency fold (BTRACE_NOPUSH=1)
		BTRACE_NOPUSH=$([ "$c" = btevents ] && echo 1 || echo 0) \
		    "$BTRACE" -d "$DEV" -v -c "$DD" -e "$RDPROG" > "$TMP/rd.out" \
		    2> "$TMP/rd.err"
		hist_n "$TMP/rd.out" >> "$TMP/rdn.$c"
		sed -n 's/^\([0-9]*\) events dropped$/\1/p' "$TMP/rd.err" \
		    >> "$TMP/rdl.$c" ;;
	bpftrace)
		"$BPF" -c "$DD" -e "$BPFRD" > "$TMP/rd.out" 2> "$TMP/rd.err"
		hist_n "$TMP/rd.out" >> "$TMP/rdn.$c" ;;
	esac
	awk -v s="$(dd_secs "$TMP/rd.err")" -v n="$NREAD" \
	    'BEGIN { printf("%.1f\n", s * 1e9 / n) }' >> "$TMP/rd.$c"
}

rd_report() {
	local c b m extra

	echo "read() latency histogram over $DD, median of $REPS rounds:"
	b=$(median < "$TMP/rd.untraced")
	for c in $RDCONFS; do
		m=$(median < "$TMP/rd.$c")
		extra=
		[ -s "$TMP/rdn.$c" ] &&
		    extra="reads in the histogram $(median < "$TMP/rdn.$c") (min $(sort -g "$TMP/rdn.$c" | head -1), max $(sort -g "$TMP/rdn.$c" | tail -1))"
		[ -s "$TMP/rdl.$c" ] &&
		    extra="$extra, dropped $(median < "$TMP/rdl.$c")"
		awk -v c="$c" -v m="$m" -v b="$b" -v x="$extra" 'BEGIN {
			printf("  %-9s %8.1f ns a block  x%.2f  %+7.1f ns a read   %s\n",
			    c, m, m / b, m - b, x) }'
	done
	if [ -n "$BPF" ]; then
		awk -v a="$(median < "$TMP/rd.btrace")" \
		    -v p="$(median < "$TMP/rd.bpftrace")" -v b="$b" 'BEGIN {
			printf("  what btrace+dtd adds to a read is %.2f of what bpftrace adds\n",
			    (a - b) / (p - b)) }'
		awk -v a="$(median < "$TMP/rd.btevents")" \
		    -v p="$(median < "$TMP/rd.bpftrace")" -v b="$b" 'BEGIN {
			printf("  read as events (BTRACE_NOPUSH=1), %.2f of it\n",
			    (a - b) / (p - b)) }'
	fi
}

MKCONFS="untraced btrace"
RDCONFS="untraced btrace btevents"
[ -n "$BPF" ] && MKCONFS="$MKCONFS bpftrace" RDCONFS="$RDCONFS bpftrace"
[ "$ONLY" = read ] || { mkdir -p "$PROJ" && "$START_BENCH" project "$PROJ"; } || exit 1
for r in $(seq "$REPS"); do
	if [ "$ONLY" != read ]; then
		for c in $MKCONFS; do
			mk_round "$c"
		done
	fi
	if [ "$ONLY" != make ]; then
		for c in $RDCONFS; do
			rd_round "$c"
		done
	fi
done
[ "$ONLY" = read ] || mk_report
[ "$ONLY" = make ] || rd_report
