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
# A call's latency folded where it is made (dtvar.h's DTF_LAT, bt_lat.c):
# `@s[tid] = nsecs` on entry, `hist(nsecs - @s[tid])` on return.  A
# latency differs from run to run: what must be the same as the events'
# run (BTRACE_NOPUSH=1) is the number of calls timed and the maps'
# structure, exactly so for an lhist whose one bucket holds any call of
# under a second.  Each case starts a private dtd on a temporary device
# path and stops it by pid.
#
# usage: run-srclat.sh btrace dtd case
set -u

[ $# -eq 3 ] || { echo "usage: $0 btrace dtd case" >&2; exit 2; }
BTRACE=$1
DTD=$2
CASE=$3

. "$(dirname "$0")/lib.sh"
dtd_start
export USERDT_SOCKET=$TMP/ingest.sock

N=20000
# the histogram's calls: the counts of its bucket lines summed
total() {
	awk '/^\[/ { sub(/^[^)]*\) */, ""); n += $1 } END { print n + 0 }' "$1"
}

# The fold wants @s cleared at the end (bt_lat.c): what a thread still
# inside a call would leave there, the events' run prints.
ENDCLR='
END { clear(@s); }'

# lhist's one bucket for anything under a second: the same every run
one_bucket() {
	printf '%s' "syscall:readv:entry { @s[tid] = nsecs; }
syscall:readv:return /@s[tid]/ { @l$1 = lhist(nsecs - @s[tid], 0, 1000000000, 1000000000); delete(@s[tid]); }$ENDCLR${2:-}"
}

# run TAG PROG [ARGS]: btrace -v over lat_reads, folded, and the same by
# events (BTRACE_NOPUSH=1): $TMP/on.TAG, $TMP/off.TAG and their .err.
run() {
	local tag=$1 prog=$2 args=${3:-$N}

	bt -v -c "$LAT_READS $args" -e "$prog" > "$TMP/on.$tag" \
	    2> "$TMP/on.$tag.err" || fail "$tag: $(cat "$TMP/on.$tag.err")"
	# the reference lost nothing (the lossless wait is bounded)
	for try in 1 2 3; do
		BTRACE_NOPUSH=1 bt -v -c "$LAT_READS $args" -e "$prog" \
		    > "$TMP/off.$tag" 2> "$TMP/off.$tag.err" ||
		    fail "$tag by events: $(cat "$TMP/off.$tag.err")"
		grep -q '^0 events dropped$' "$TMP/off.$tag.err" && break
	done
	grep -q '^0 events dropped$' "$TMP/on.$tag.err" ||
	    fail "$tag: dropped: $(cat "$TMP/on.$tag.err")"
	echo "$tag: $(head -c 300 "$TMP/on.$tag" | tr '\n' ' ')"
}

# folded TAG: btrace said the calls were timed by the hooks and read no
# event for them
folded() {
	grep -q 'its calls timed by the hooks' "$TMP/on.$1.err" ||
	    fail "$1: not timed by the hooks: $(cat "$TMP/on.$1.err")"
	grep -q '^1 rules aggregated in dtd$' "$TMP/on.$1.err" ||
	    fail "$1: not aggregated in dtd: $(cat "$TMP/on.$1.err")"
	grep -q '^0 events read$' "$TMP/on.$1.err" ||
	    fail "$1: events read: $(cat "$TMP/on.$1.err")"
}

# sizes OUT NS: OUT's hist (or sum) holds the durations the tracee
# measured itself around each call (NS, lat_pipe.c), a duration being at
# most its measurement (50 us over for two clocks' rates) and at least
# that less what the hooks' own time and a preemption between the
# tracee's clock and the hooks' stamps may take off it (0.5 ms + 2 %;
# for a sum, 2 ms + 1 % in all).  For hist, for every power of two E:
# the calls of E or more are those measured so, within those bounds.
sizes() {
	awk -v slack=50000 '
	function lo(d) { return d - 500000 - d / 50 }
	function num(s,   m) {
		m = 1
		if (s ~ /K$/) m = 1024
		else if (s ~ /M$/) m = 1048576
		else if (s ~ /G$/) m = 1073741824
		sub(/[KMG]$/, "", s)
		return s * m
	}
	FNR == NR { d[nd++] = $1; next }
	/^@[a-z]*: [0-9]+$/ { sum = $2; issum = 1 }
	/^\[/ {
		lab = $0; sub(/^\[/, "", lab); sub(/[,\]].*/, "", lab)
		rest = $0; sub(/^[^)\]]*[)\]] */, "", rest)
		split(rest, f, " ")
		cnt[num(lab)] += f[1]
		tot += f[1]
	}
	END {
		if (issum) {
			# one preemption of 1 ms or two, not one a call
			for (i = 0; i < nd; i++) { a += d[i]; b += d[i] + slack }
			a -= 2000000 + a / 100
			printf "sum %d, measured %d to %d\n", sum, a, b
			exit (sum < a || sum > b)
		}
		if (tot != nd) { print tot " calls, " nd " measured"; exit 1 }
		for (e = 1024; e <= 68719476736; e *= 2) {
			n = 0
			for (l in cnt)
				if (l + 0 >= e)
					n += cnt[l]
			a = b = 0
			for (i = 0; i < nd; i++) {
				if (lo(d[i]) >= e) a++
				if (d[i] + slack >= e) b++
			}
			if (n < a || n > b) {
				print n " calls of " e " ns or more, " a " to " b \
				    " measured"
				exit 1
			}
		}
		print tot " calls, each in its measured bucket"
	}' "$2" "$1"
}

case $CASE in
exact)
	# every call timed once, none lost, by hist and by one bucket
	r0=$(ingest_stat records)
	bt -c "$LAT_READS $N" -e 'syscall:readv:entry { @s[tid] = nsecs; }
syscall:readv:return /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }'"$ENDCLR" \
	    > /dev/null || fail "records: btrace"
	# no record of either half: a few of the -c shell's at most
	r1=$(ingest_stat records)
	echo "records for $N calls: $((r1 - r0))"
	[ $((r1 - r0)) -le 8 ] || fail "$((r1 - r0)) records for $N calls"
	run hist 'syscall:readv:entry { @s[tid] = nsecs; }
syscall:readv:return /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }'"$ENDCLR"
	folded hist
	[ "$(total "$TMP/on.hist")" = $N ] ||
	    fail "hist: $(total "$TMP/on.hist") calls, not $N"
	[ "$(total "$TMP/off.hist")" = $N ] ||
	    fail "hist by events: $(total "$TMP/off.hist") calls, not $N"
	[ "$(head -1 "$TMP/on.hist")" = "$(head -1 "$TMP/off.hist")" ] ||
	    fail "hist: not the same map"
	run one "$(one_bucket "")"
	folded one
	diff -u "$TMP/off.one" "$TMP/on.one" || fail "one: output differs"
	grep -q "^\[0, 1000000000) *$N " "$TMP/on.one" ||
	    fail "one: not $N calls"
	# the other functions, keyed by the thread's name
	run funcs 'syscall:readv:entry { @s[tid] = nsecs; }
syscall:readv:return /@s[tid]/ { @n[comm] = min(nsecs - @s[tid]); delete(@s[tid]); }'"$ENDCLR"
	folded funcs
	sed -E 's/: [0-9]+$/: V/' "$TMP/on.funcs" > "$TMP/on.funcs.v"
	sed -E 's/: [0-9]+$/: V/' "$TMP/off.funcs" > "$TMP/off.funcs.v"
	diff -u "$TMP/off.funcs.v" "$TMP/on.funcs.v" ||
	    fail "funcs: keys differ"
	;;
threads)
	# four threads at once, keyed by the thread and not: each thread's
	# calls timed in its own
	run threads "$(one_bucket "[comm]")" "$N 3"
	folded threads
	diff -u "$TMP/off.threads" "$TMP/on.threads" ||
	    fail "threads: output differs"
	grep -q "^\[0, 1000000000) *$((4 * N)) " "$TMP/on.threads" ||
	    fail "threads: not $((4 * N)) calls"
	;;
records)
	# USERDT_SRCAGG=0: the hooks record the returns with their
	# durations, which dtd folds as the hooks would have
	r0=$(ingest_stat records)
	USERDT_SRCAGG=0 bt -c "$LAT_READS $N" -e "$(one_bucket "")" \
	    > /dev/null || fail "records: btrace"
	r1=$(ingest_stat records)
	echo "records for $N calls: $((r1 - r0))"
	[ $((r1 - r0)) -ge $N ] || fail "$((r1 - r0)) records for $N calls"
	USERDT_SRCAGG=0 run rec "$(one_bucket "")"
	grep -q 'its calls timed by the hooks' "$TMP/on.rec.err" ||
	    fail "rec: not timed: $(cat "$TMP/on.rec.err")"
	diff -u "$TMP/off.rec" "$TMP/on.rec" || fail "rec: output differs"
	# an lhist of more buckets than the hooks' slots hold: dtd folds
	# the returns' records, each with its duration
	run big 'syscall:readv:entry { @s[tid] = nsecs; }
syscall:readv:return /@s[tid]/ { @b = lhist(nsecs - @s[tid], 0, 2000000000, 10000000); delete(@s[tid]); }'"$ENDCLR"
	folded big
	[ "$(total "$TMP/on.big")" = $N ] ||
	    fail "big: $(total "$TMP/on.big") calls, not $N"
	[ "$(total "$TMP/off.big")" = $N ] ||
	    fail "big by events: $(total "$TMP/off.big") calls, not $N"
	;;
vfork)
	# a vfork child's calls, under the child's tid in the events: timed
	# in the child too, on the stamp of its own it keeps beside its
	# waiting parent's
	run vfork "$(one_bucket "")" "$N 0 vfork"
	folded vfork
	diff -u "$TMP/off.vfork" "$TMP/on.vfork" ||
	    fail "vfork: output differs"
	grep -q "^\[0, 1000000000) *$((2 * N)) " "$TMP/on.vfork" ||
	    fail "vfork: not $((2 * N)) calls"
	# a posix_spawn child's file actions (64 dup2 calls, lat_reads.c),
	# on its parent's memory as a vfork child is
	run spawn 'syscall:dup2:entry { @s[tid] = nsecs; }
syscall:dup2:return /@s[tid]/ { @l = lhist(nsecs - @s[tid], 0, 1000000000, 1000000000); delete(@s[tid]); }'"$ENDCLR" "$N 0 spawn"
	folded spawn
	diff -u "$TMP/off.spawn" "$TMP/on.spawn" ||
	    fail "spawn: output differs"
	grep -q '^\[0, 1000000000) *64 ' "$TMP/on.spawn" ||
	    fail "spawn: not 64 calls"
	;;
nested)
	# a write() returns inside each timed readv(), in a signal's handler:
	# another rule's return, which leaves the script's @s as it is, so
	# it leaves the readv()'s stamp too
	prog='syscall:readv:entry { @s[tid] = nsecs; }
syscall:readv:return /@s[tid]/ { @l = lhist(nsecs - @s[tid], 0, 1000000000, 1000000000); delete(@s[tid]); }
syscall:write:return { @w = sum(retval); }'"$ENDCLR"
	bt -v -c "$LAT_PIPE $TMP/on.ns 3 signal" -e "$prog" > "$TMP/on.nested" \
	    2> "$TMP/on.nested.err" || fail "nested: $(cat "$TMP/on.nested.err")"
	grep -q 'its calls timed by the hooks' "$TMP/on.nested.err" ||
	    fail "nested: not timed by the hooks: $(cat "$TMP/on.nested.err")"
	BTRACE_NOPUSH=1 bt -c "$LAT_PIPE $TMP/off.ns 3 signal" -e "$prog" \
	    > "$TMP/off.nested" || fail "nested by events: btrace"
	echo "nested: $(tr '\n' ' ' < "$TMP/on.nested")"
	# the writes' count is the run's; the readv()s' must be all 12
	grep -v '^@w' "$TMP/on.nested" > "$TMP/on.nested.l"
	grep -v '^@w' "$TMP/off.nested" > "$TMP/off.nested.l"
	diff -u "$TMP/off.nested.l" "$TMP/on.nested.l" ||
	    fail "nested: output differs"
	grep -q '^\[0, 1000000000) *12 ' "$TMP/on.nested" ||
	    fail "nested: not 12 calls"
	;;
sessions)
	# two opens timing different calls: B times write() and holds its
	# command (a shell waiting on a fifo) while A times readv()s, inside
	# each of which a handler makes a write().  B's mark would take A's
	# stamp; dtd refuses A's duration, so A reads its events whole, and
	# each prints what its events do.
	progb='syscall:write:entry { @s[tid] = nsecs; }
syscall:write:return /@s[tid]/ { @l = lhist(nsecs - @s[tid], 0, 1000000000, 1000000000); delete(@s[tid]); }'"$ENDCLR"
	proga=$(one_bucket "")
	proga2='syscall:readv:entry, syscall:write:entry { @s[tid] = nsecs; }
syscall:readv:return /@s[tid]/ { @r = lhist(nsecs - @s[tid], 0, 1000000000, 1000000000); delete(@s[tid]); }
syscall:write:return /@s[tid]/ { @w = lhist(nsecs - @s[tid], 0, 1000000000, 1000000000); delete(@s[tid]); }'"$ENDCLR"
	# sessb TAG [env]: B started; returns once its command runs
	sessb() {
		rm -f "$TMP/ready" "$TMP/go"
		mkfifo "$TMP/ready" "$TMP/go" || fail "mkfifo"
		env ${2:-} "$BTRACE" -d "$DEV" -v -c \
		    "sh -c 'echo r > $TMP/ready; read x < $TMP/go'" \
		    -e "$progb" > "$TMP/$1.b" 2> "$TMP/$1.b.err" &
		BTPID=$!
		read -r -t 60 x < "$TMP/ready" ||
		    fail "$1: B did not start: $(cat "$TMP/$1.b.err")"
	}
	sessb_end() {
		echo go > "$TMP/go"
		wait "$BTPID" || fail "$1: B: $(cat "$TMP/$1.b.err")"
		BTPID=
	}
	sessb on
	grep -q 'its calls timed by the hooks' "$TMP/on.b.err" ||
	    fail "B: not timed by the hooks: $(cat "$TMP/on.b.err")"
	bt -v -c "$LAT_PIPE $TMP/on.ns 3 signal" -e "$proga" > "$TMP/on.a" \
	    2> "$TMP/on.a.err" || fail "A: $(cat "$TMP/on.a.err")"
	# two calls, refused on the first return: both entries as events,
	# the whole script read so (bt_lat.c), none half folded
	bt -v -c "$LAT_PIPE $TMP/on2.ns 3 signal" -e "$proga2" \
	    > "$TMP/on.a2" 2> "$TMP/on.a2.err" || fail "A2: $(cat "$TMP/on.a2.err")"
	sessb_end on
	sessb off BTRACE_NOPUSH=1
	sessb_end off
	BTRACE_NOPUSH=1 bt -c "$LAT_PIPE $TMP/off.ns 3 signal" -e "$proga" \
	    > "$TMP/off.a" || fail "A by events: btrace"
	echo "A: $(tr '\n' ' ' < "$TMP/on.a")"
	echo "B: $(tr '\n' ' ' < "$TMP/on.b")"
	diff -u "$TMP/off.a" "$TMP/on.a" || fail "A: output differs"
	diff -u "$TMP/off.b" "$TMP/on.b" || fail "B: output differs"
	grep -q '^\[0, 1000000000) *12 ' "$TMP/on.a" || fail "A: not 12 calls"
	grep -q 'timed by the hooks' "$TMP/on.a.err" &&
	    fail "A: folded beside B: $(cat "$TMP/on.a.err")"
	BTRACE_NOPUSH=1 bt -c "$LAT_PIPE $TMP/off2.ns 3 signal" -e "$proga2" \
	    > "$TMP/off.a2" || fail "A2 by events: btrace"
	echo "A2: $(tr '\n' ' ' < "$TMP/on.a2")"
	diff -u "$TMP/off.a2" "$TMP/on.a2" || fail "A2: output differs"
	grep -q 'timed by the hooks' "$TMP/on.a2.err" &&
	    fail "A2: folded beside B: $(cat "$TMP/on.a2.err")"
	;;
sizes)
	# durations of a known size, folded and by events: readv()s of a
	# pipe held 2.8 to 22.4 ms, each measured by the tracee too
	for f in hist sum; do
		case $f in
		hist) agg='@h = hist(nsecs - @s[tid])' ;;
		sum) agg='@t = sum(nsecs - @s[tid])' ;;
		esac
		prog="syscall:readv:entry { @s[tid] = nsecs; }
syscall:readv:return /@s[tid]/ { $agg; delete(@s[tid]); }$ENDCLR"
		bt -v -c "$LAT_PIPE $TMP/on.$f.ns 3" -e "$prog" \
		    > "$TMP/on.$f" 2> "$TMP/on.$f.err" ||
		    fail "$f: $(cat "$TMP/on.$f.err")"
		folded "$f"
		echo "$f: $(tr '\n' ' ' < "$TMP/on.$f")"
		echo "$f: measured $(tr '\n' ' ' < "$TMP/on.$f.ns")"
		sizes "$TMP/on.$f" "$TMP/on.$f.ns" || fail "$f: sizes"
		BTRACE_NOPUSH=1 bt -c "$LAT_PIPE $TMP/off.$f.ns 3" -e "$prog" \
		    > "$TMP/off.$f" || fail "$f by events: btrace"
		sizes "$TMP/off.$f" "$TMP/off.$f.ns" ||
		    fail "$f by events: sizes"
	done
	;;
fallback)
	# @s read elsewhere, another filter, a count (no value), @s not
	# cleared at the end or cleared under a condition: events
	n=0
	while read -r prog; do
		n=$((n + 1))
		run "fb$n" "$prog"
		grep -q 'timed by the hooks' "$TMP/on.fb$n.err" &&
		    fail "fb$n: folded: $prog"
		# the lines but the buckets, @s's tids and times left, and
		# the buckets' total
		for f in "$TMP/on.fb$n" "$TMP/off.fb$n"; do
			{ grep -v '^\[' "$f" |
			    sed -E 's/^(@s\[)[0-9]+\]: [0-9]+$/\1T]: NS/'
			    total "$f"; } > "$f.shape"
		done
		diff -u "$TMP/off.fb$n.shape" "$TMP/on.fb$n.shape" ||
		    fail "fb$n: output differs"
	done <<PROGS
$(one_bucket "" " END { print(@s); }" | tr '\n' ' ')
syscall:readv:entry { @s[tid] = nsecs; } syscall:readv:return /@s[tid] && pid > 0/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }
syscall:readv:entry { @s[tid] = nsecs; } syscall:readv:return /@s[tid]/ { @h = count(); delete(@s[tid]); }
syscall:readv:entry { @s[tid] = nsecs; } syscall:readv:return /@s[tid]/ { @h = hist(nsecs - @s[tid]); }
syscall:readv:entry, syscall:read:entry { @s[tid] = nsecs; } syscall:readv:return /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }
syscall:readv:entry { @s[tid] = nsecs; } syscall:readv:return /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }
syscall:readv:entry { @s[tid] = nsecs; } syscall:readv:return /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); } END { if (pid >= 0) { clear(@s); } }
syscall:readv:entry { @s[tid] = nsecs; } syscall:readv:return /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); } END /pid >= 0/ { clear(@s); }
syscall:readv:entry { @s[tid] = nsecs; } syscall:readv:return /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); } END { exit(); clear(@s); }
PROGS
	;;
*)
	fail "no case $CASE"
	;;
esac
exit 0
