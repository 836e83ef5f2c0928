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
# Aggregations keyed by user stacks folded in the traced process
# (userdt/udt_sagg.h, UDT_SK_USTACK): no record made, every call
# counted under the stack its record would have carried, btrace's output
# byte for byte what dtd's fold of the records gives (USERDT_SRCAGG=0);
# a full table of stacks recorded, said, still exact; a tracee that
# forges its stacks folds none of the forgery.  Each case starts a
# private dtd on a temporary device path and stops it by pid.
#
# usage: run-srcustk.sh btrace dtd case	(USTK_CALLS: the tracee)
set -u

[ $# -eq 3 ] || { echo "usage: $0 btrace dtd case" >&2; exit 2; }
BTRACE=$1
DTD=$2
CASE=$3

. "$(dirname "$0")/lib.sh"
dtd_start
export USERDT_SOCKET=$TMP/ingest.sock

# both MODE N PROG [tids]: the tracee folded, then recorded; the outputs
# the same (thread ids, which differ from run to run, in the order they
# first appear with "tids"), the folded run with no record of its own
# and nothing dropped.  The folded output in $TMP/on, stderr in .err.
both() {
	local mode=$1 n=$2 prog=$3 r0 r1 r2

	r0=$(ingest_stat records)
	bt -v -c "$USTK_CALLS $mode $n" -e "$prog" > "$TMP/on" \
	    2> "$TMP/on.err" || fail "$mode: $(cat "$TMP/on.err")"
	r1=$(ingest_stat records)
	USERDT_SRCAGG=0 bt -v -c "$USTK_CALLS $mode $n" -e "$prog" \
	    > "$TMP/off" 2> "$TMP/off.err" || fail "$mode: $(cat "$TMP/off.err")"
	r2=$(ingest_stat records)
	for f in on off; do
		grep -q '^0 events dropped$' "$TMP/$f.err" ||
		    fail "$mode $f: dropped: $(cat "$TMP/$f.err")"
		grep -q 'aggregated in dtd' "$TMP/$f.err" ||
		    fail "$mode $f: not aggregated in dtd"
	done
	grep -q '^0 events read$' "$TMP/on.err" || fail "$mode: events read"
	RECORDS_ON=$((r1 - r0))
	RECORDS_OFF=$((r2 - r1))
	echo "$mode: records folded $RECORDS_ON, USERDT_SRCAGG=0 $RECORDS_OFF"
	[ "$RECORDS_OFF" -ge "$n" ] ||
	    fail "$mode: USERDT_SRCAGG=0 made $RECORDS_OFF records"
	if [ "${4:-}" = tids ]; then
		python3 - "$TMP/on" "$TMP/off" <<'PY' || fail "$mode: tids"
import re, sys
for f in sys.argv[1:]:
    seen = {}
    txt = open(f).read()
    # a key's tid follows its stack: "], 1234]" ends the key
    txt = re.sub(r"(?<=\n, )\d+(?=\]:)",
                 lambda m: seen.setdefault(m.group(), "T%d" % len(seen)), txt)
    open(f, "w").write(txt)
PY
	fi
	diff -u "$TMP/off" "$TMP/on" || fail "$mode: output differs"
	[ -s "$TMP/on" ] || fail "$mode: no output"
}

# count FILE MAP FUNC: the values of MAP's entries whose stack holds
# FUNC, one a line (a stack key prints as "@m[\n frame\n ...\n]: v").
count() {
	python3 - "$1" "$2" "$3" <<'PY'
import re, sys
txt, m, fn = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
for key, val in re.findall(r"^%s\[\n(.*?)\]: (\d+)$" % re.escape(m), txt,
                           re.M | re.S):
    if re.search(r"^%s\+0x" % re.escape(fn), key, re.M):
        print(val)
PY
}

case $CASE in
exact)
	# flat out, a million calls: two call sites of getppid (N and 2N)
	# under their two stacks; each function over a stack (and a tid)
	n=333334
	both sites $n 'syscall:getppid:entry { @[ustack] = count(); }'
	[ "$RECORDS_ON" -le 8 ] || fail "$RECORDS_ON records while folded"
	[ "$(count "$TMP/on" @ site_a)" = $n ] || fail "site_a: $(cat "$TMP/on")"
	[ "$(count "$TMP/on" @ site_b)" = $((2 * n)) ] ||
	    fail "site_b: $(cat "$TMP/on")"
	n=100000
	both sites $n 'syscall:close:entry { @s[ustack, tid] = sum(arg0); @h[ustack] = hist(arg0); @l[ustack] = lhist(arg0, 100000, 100040, 4); @x[ustack] = max(arg0); @n[ustack] = min(arg0); @a[ustack] = avg(arg0); @c[ustack, tid] = count(); }' tids
	[ "$RECORDS_ON" -le 8 ] || fail "$RECORDS_ON records while folded"
	want=$(python3 -c "print(sum(100000 + i % 37 for i in range($n)))")
	[ "$(count "$TMP/on" @s site_c)" = "$want" ] ||
	    fail "sum: $(count "$TMP/on" @s site_c) not $want"
	[ "$(count "$TMP/on" @c site_c)" = $n ] || fail "@c: $(cat "$TMP/on")"
	[ "$(count "$TMP/on" @x site_c)" = 100036 ] || fail "max"
	[ "$(count "$TMP/on" @n site_c)" = 100000 ] || fail "min"
	;;
threads)
	# four threads at once from one site: three share a stack (3N
	# calls), the main thread's is its own (N); N a thread
	n=250000
	both threads $n 'syscall:getppid:entry { @[ustack] = count(); @t[ustack, tid] = count(); }' tids
	[ "$RECORDS_ON" -le 8 ] || fail "$RECORDS_ON records while folded"
	[ "$(count "$TMP/on" @ start_thread)" = $((3 * n)) ] ||
	    fail "threads': $(cat "$TMP/on")"
	[ "$(count "$TMP/on" @ site_a | sort -n | tr '\n' ' ')" = "$n $((3 * n)) " ] ||
	    fail "site_a: $(cat "$TMP/on")"
	[ "$(count "$TMP/on" @t site_a | sort -u)" = $n ] ||
	    fail "a thread's: $(count "$TMP/on" @t site_a)"
	[ "$(count "$TMP/on" @t site_a | wc -l)" = 4 ] || fail "not 4 threads"
	;;
overflow)
	# 512 stacks, more than the tracee's table of stacks: those it
	# could not hold are recorded and said, and the output stays exact
	n=51200
	both many $n 'syscall:getppid:entry { @[ustack] = count(); }'
	held=$(sed -n "s/^\([0-9]*\) events the tracees' stack tables could not hold (recorded)$/\1/p" \
	    "$TMP/on.err")
	echo "overflow: $held recorded for want of a stack, $RECORDS_ON records"
	[ -n "$held" ] && [ "$held" -gt 0 ] || fail "not said: $(cat "$TMP/on.err")"
	[ "$RECORDS_ON" -ge "$held" ] || fail "said $held, recorded $RECORDS_ON"
	grep -q "^0 events the tracees' stack tables could not hold" \
	    "$TMP/off.err" || fail "USERDT_SRCAGG=0 said some"
	python3 - "$TMP/on" $n <<'PY' || fail "overflow: counts"
import re, sys
txt, n = open(sys.argv[1]).read(), int(sys.argv[2])
vals = [int(v) for k, v in re.findall(r"^@\[\n(.*?)\]: (\d+)$", txt, re.M | re.S)
        if "uc_walk+0x" in k]
if len(vals) != 512 or set(vals) != {n // 512}:
    sys.exit("%d stacks, counts %s" % (len(vals), sorted(set(vals))))
PY
	;;
forge)
	# a tracee that rewrites its table of stacks after dtd read it: a
	# frame count past a record's, an index past the table (forged),
	# stacks left half-written or tagged for another user (waited for,
	# never taken); none of the 3 it added an entry is folded
	#
	# Exact to the event, but not always n folded: a look of dtd's may
	# read an entry's count just before the last call's count is added
	# and take its extremes just after its value was (dtd reads a count,
	# then the extremes; a hook folds the value, then the count).  The
	# tracee, which waits for the extremes to be taken, then forges in
	# the same step as that call's count, and dtd refuses the step
	# whole: the honest call in it is counted with the forgery, forged
	# (depth, index) or, its stack never whole, dropped at the stop
	# (busy, owner).  The tracee cannot wait that race out: dtd writes
	# nothing it could see when it reads a count.  So each entry folds
	# n or n - 1, and every call not folded is in the count said.
	prog='syscall:getppid:return { @[ustack] = count();
	    @m[ustack] = sum(retval); }'
	n=1000
	for mode in depth index busy owner; do
		f0=$(ingest_stat forged)
		bt -v -c "$USTK_CALLS forge-$mode $n" -e "$prog" > "$TMP/out" \
		    2> "$TMP/err" || fail "$mode: $(cat "$TMP/err")"
		f1=$(ingest_stat forged)
		kill -0 "$DTDPID" || fail "$mode: dtd died"
		set -- $(grep "^forged $mode " "$TMP/out")
		[ $# -eq 4 ] && [ "$4" -gt 0 ] ||
		    fail "$mode: $(cat "$TMP/out")"
		nent=$3 ppid=$4
		got=$(count "$TMP/out" @ site_a)
		sum=$(count "$TMP/out" @m site_a)
		[ $((sum % ppid)) -eq 0 ] || fail "$mode: sum $sum"
		# the calls left out of each entry's fold, 0 or 1 each
		left=$((n - got + n - sum / ppid))
		dropped=$(sed -n 's/^\([0-9]*\) events dropped$/\1/p' \
		    "$TMP/err")
		forged=$((f1 - f0))
		echo "$mode: site_a $got, sum $sum ($left left)," \
		    "$nent entries forged, $forged forged, $dropped dropped"
		[ "$got" -le $n ] && [ "$got" -ge $((n - 1)) ] &&
		    [ $((sum / ppid)) -le $n ] &&
		    [ $((sum / ppid)) -ge $((n - 1)) ] ||
		    fail "$mode: $got, $sum: $(cat "$TMP/out")"
		case $mode in
		depth|index)
			[ "$forged" -eq $((3 * nent + left)) ] &&
			    [ "$dropped" -eq 0 ] ||
			    fail "$mode: not $((3 * nent + left)) forged" ;;
		busy|owner)
			[ "$dropped" -eq $((3 * nent + left)) ] &&
			    [ "$forged" -eq 0 ] ||
			    fail "$mode: not $((3 * nent + left)) dropped" ;;
		esac
	done
	;;
reuse)
	# one long-lived traced process, btrace -p on it run after run, 100
	# stacks a run, 400 in all for a table of 256: the stacks of the
	# runs gone are claimed over (udt_sagg.h), so every run's are
	# folded, none recorded, each exact, an old run's stack counting
	# nothing for a new one (run 3 has run 1's stacks again)
	mkfifo "$TMP/tin" "$TMP/tout" "$TMP/bo" || exit 2
	exec 5<>"$TMP/tin" 6<>"$TMP/tout"
	# its own ends of the fifos read-only and write-only, none of ours:
	# EOF when ours closes
	LD_PRELOAD=$USERDT_PRELOAD "$USTK_CALLS" serve 3 < "$TMP/tin" \
	    > "$TMP/tout" 5>&- 6>&- &
	TPID=$!
	trap 'kill "$TPID" 2> /dev/null; dtd_cleanup' EXIT
	for run in 1 2 3 4; do
		base=$(( (run == 3 ? 1 : run) * 100 ))
		if [ $((run % 2)) -eq 1 ]; then
			prog='syscall:getppid:entry { @k[ustack] = count(); }'
		else
			prog='syscall:getppid:return { @k[ustack] = sum(retval); }'
		fi
		reuse_round "$run" "$prog" "$base" 100
		echo "run $run: $REUSE_RECORDS records"
		[ $REUSE_RECORDS -le 8 ] ||
		    fail "run $run: $REUSE_RECORDS records: stacks not reclaimed"
		grep -q "^0 events the tracees' stack tables could not hold" \
		    "$TMP/err.$run" || fail "run $run: $(cat "$TMP/err.$run")"
		python3 - "$TMP/out.$run" "$run" "$TPID" <<'PY' || fail "run $run: $(cat "$TMP/out.$run")"
import re, os, sys
txt, run = open(sys.argv[1]).read(), int(sys.argv[2])
vals = [int(v) for k, v in re.findall(r"^@k\[\n(.*?)\]: (-?\d+)$", txt,
                                      re.M | re.S) if "uc_walk+0x" in k]
# 3 calls a stack: counted, or their ppid summed
want = 3 if run % 2 else 3 * os.getppid()
if len(vals) != 100 or set(vals) != {want}:
    sys.exit("%d stacks, values %s, not 100 of %d" %
             (len(vals), sorted(set(vals))[:5], want))
PY
	done
	exec 5>&-
	wait "$TPID" || fail "the traced process"
	kill -0 "$DTDPID" || fail "dtd died"
	;;
hold)
	# an entry left for a stack not ready, then a quiet tracee: dtd
	# looked while the tracee held its stacks (as a hook that claims one
	# over holds it), left site_a's last steps, and the tracee made no
	# call after it put them back: those steps are folded all the same,
	# not lost, while the process lives on and btrace stops
	mkfifo "$TMP/tin" "$TMP/tout" "$TMP/bo" || exit 2
	exec 5<>"$TMP/tin" 6<>"$TMP/tout"
	LD_PRELOAD=$USERDT_PRELOAD "$USTK_CALLS" hold 1000 < "$TMP/tin" \
	    > "$TMP/tout" 5>&- 6>&- &
	TPID=$!
	trap 'kill "$TPID" 2> /dev/null; dtd_cleanup' EXIT
	prog='syscall:getppid:return { @c[ustack] = count();
	    @s[ustack] = sum(retval); }'
	"$BTRACE" -d "$DEV" -v -p "$TPID" -e "$prog
	    interval:hz:20 { printf(\"tick\\n\"); }" > "$TMP/bo" \
	    2> "$TMP/err" &
	BTPID=$!
	exec 7<"$TMP/bo"
	read -r -t 30 l <&7 || fail "btrace did not start: $(cat "$TMP/err")"
	echo go >&5
	read -r -t 60 l <&6 || fail "the tracee did not answer"
	set -- $l
	[ "$1" = held ] || fail "the tracee: $l"
	na=$2 nb=$3
	echo "hold: $nb rounds, $na calls from site_a"
	kill -INT "$BTPID"
	wait "$BTPID" || fail "btrace: $(cat "$TMP/err")"
	BTPID=
	grep -v '^tick$' <&7 > "$TMP/out"
	exec 7<&-
	kill -0 "$TPID" || fail "the tracee is gone"
	grep -q 'aggregated in dtd' "$TMP/err" || fail "not folded"
	dropped=$(sed -n 's/^\([0-9]*\) events dropped$/\1/p' "$TMP/err")
	got=$(count "$TMP/out" @c site_a)
	sum=$(count "$TMP/out" @s site_a)
	echo "hold: site_a $got of $na, sum $sum, $dropped dropped"
	[ "$(count "$TMP/out" @c site_b)" = "$nb" ] ||
	    fail "site_b: $(cat "$TMP/out")"
	# exact; or, were dtd to give up, what it could not fold said
	[ "${got:-0}" = "$na" ] && [ "$sum" = $((na * $$)) ] ||
	    [ $((na - ${got:-0})) -le "$dropped" ] ||
	    fail "$((na - ${got:-0})) lost, $dropped dropped: $(cat "$TMP/out")"
	[ "${got:-0}" = "$na" ] || echo "hold: not exact, said dropped"
	exec 5>&-
	wait "$TPID" || fail "the traced process"
	kill -0 "$DTDPID" || fail "dtd died"
	;;
*)
	fail "unknown case $CASE"
	;;
esac
echo "PASS: srcustk-$CASE"
