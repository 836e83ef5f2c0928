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
# Aggregations at the source (dtvar.h, DTIOCPRBAGG): btrace hands dtd the
# rules that only aggregate, and prints what it would have printed from
# the events themselves.  Each case starts a private dtd on a temporary
# device path (FUSE-file front end) and stops it by pid.
#
# usage: run-srcagg.sh btrace dtd case
set -u

[ $# -eq 3 ] || { echo "usage: $0 btrace dtd case" >&2; exit 2; }
BTRACE=$1
DTD=$2
CASE=$3

. "$(dirname "$0")/lib.sh"
dtd_start
export USERDT_SOCKET=$TMP/ingest.sock

# Run prog over "agg_calls n" with dtd aggregating and without; the
# outputs must be the same, and dtd must have taken the rule.
same() {
	local n=$1 prog=$2 tag=$3 r0

	r0=$(ingest_stat records)
	bt -v ${BTFLAGS:-} -c "$AGG_CALLS $n" -e "$prog" > "$TMP/on.$tag" \
	    2> "$TMP/on.err.$tag" || fail "$tag: $(cat "$TMP/on.err.$tag")"
	# the records the folded run made, for a caller that bounds them
	SAME_RECORDS=$(( $(ingest_stat records) - r0 ))
	# every event through read(2) is the reference: a run of it that
	# lost some under load (the lossless wait is bounded) is run again
	for try in 1 2 3; do
		BTRACE_NOPUSH=1 bt -v ${BTFLAGS:-} -c "$AGG_CALLS $n" \
		    -e "$prog" > "$TMP/off.$tag" 2> "$TMP/off.err.$tag" ||
		    fail "$tag not pushed: $(cat "$TMP/off.err.$tag")"
		grep -q '^0 events dropped$' "$TMP/off.err.$tag" && break
	done
	# pids and tids differ from run to run: the rest must not
	if [ "${4:-}" = pids ]; then
		sed -i -E 's/^(@[a-z]*\[)[0-9]+/\1PID/' "$TMP/off.$tag" \
		    "$TMP/on.$tag"
	fi
	# and so do the CPUs a program ran on: their total must not
	if [ "${4:-}" = cpus ]; then
		for f in "$TMP/off.$tag" "$TMP/on.$tag"; do
			awk -F': ' '{ s += $2 } END { print "total: " s }' \
			    "$f" > "$f.sum" && mv "$f.sum" "$f"
		done
	fi
	diff -u "$TMP/off.$tag" "$TMP/on.$tag" || fail "$tag: output differs"
	[ -s "$TMP/on.$tag" ] || fail "$tag: no output"
	grep -q 'aggregated in dtd' "$TMP/on.err.$tag" ||
	    fail "$tag: not aggregated in dtd: $(cat "$TMP/on.err.$tag")"
	grep -q 'aggregated in dtd' "$TMP/off.err.$tag" &&
	    fail "$tag: BTRACE_NOPUSH=1 aggregated in dtd"
	grep -q '^0 events dropped$' "$TMP/on.err.$tag" ||
	    fail "$tag: dropped: $(cat "$TMP/on.err.$tag")"
	echo "$tag: $(head -c 300 "$TMP/on.$tag" | tr '\n' ' ')"
}

# The stack maps of btrace's output: "total N", then each stack that
# holds at least a tenth of the samples, whole, by count (a profile's
# samples differ from run to run; its structure must not).
stack_shape() {
	python3 -c '
import re, sys
txt = open(sys.argv[1]).read()
ents = re.findall(r"^@\[(.*?)\]: (\d+)$", txt, re.M | re.S)
tot = sum(int(n) for _, n in ents)
print("total", tot)
for k, n in sorted(ents, key=lambda e: -int(e[1])):
    if int(n) * 10 >= tot:
        print("stack", k.replace("\n", ";"))
' "$1"
}

# shape_same ON OFF: totals within a quarter, and each run's top stack
# among the other's stacks of a tenth of the samples or more (two near
# each other may swap places between runs, and one near a tenth fall
# under it).
shape_same() {
	stack_shape "$1" > "$1.shape"
	stack_shape "$2" > "$2.shape"
	cat "$1.shape"
	python3 -c '
import sys
a = open(sys.argv[1]).read().split("\n")
b = open(sys.argv[2]).read().split("\n")
ta, tb = int(a[0].split()[1]), int(b[0].split()[1])
if ta == 0 or tb == 0 or abs(ta - tb) * 4 > max(ta, tb):
    sys.exit("totals %d folded, %d read" % (ta, tb))
if len(a) < 2 or len(b) < 2 or a[1] not in b[1:] or b[1] not in a[1:]:
    sys.exit("top stacks differ:\n%s\n%s" % (a[1:2], b[1:2]))
' "$1.shape" "$2.shape" || fail "$(cat "$1.shape" "$2.shape")"
}

# folded_said ERR: btrace said the rule was folded, no record was read
# but the interval's (N), and no event lost.
folded_said() {
	grep -q 'aggregated in dtd' "$1" || fail "not folded: $(cat "$1")"
	grep -q "^${2:-0} events read\$" "$1" || fail "records read: $(cat "$1")"
	grep -q '^0 events dtd.s stack table could not hold$' "$1" ||
	    fail "stack table overflow: $(cat "$1")"
}

case $CASE in
funcs)
	# every function, by every kind of key, on entry and return; a rule
	# marked F folded where its events happen (no record but the
	# launcher's shell's few), one marked R by records (a filter, or
	# more probes than the tracees' slots)
	n=0
	while read -r how prog; do
		n=$((n + 1))
		case $prog in
		*pid*|*tid*)	same 20000 "$prog" "$n" pids ;;
		*cpu*)		same 20000 "$prog" "$n" cpus ;;
		*)		same 20000 "$prog" "$n" ;;
		esac
		echo "$n: $SAME_RECORDS records"
		[ "$how" = R ] || [ "$SAME_RECORDS" -le 8 ] ||
		    fail "$n: $SAME_RECORDS records made, folded: $prog"
	done <<'PROGS'
F syscall:getppid:entry { @n = count(); }
F syscall:close:entry { @[arg0] = count(); }
F syscall:close:entry { @s[pid, comm] = sum(arg0); }
F syscall:close:entry { @lo[tid] = min(arg0); @hi[tid] = max(arg0); }
F syscall:close:entry { @a[probe] = avg(arg0); }
F syscall:close:entry { @h = hist(arg0); }
F syscall:close:entry { @l[comm] = lhist(arg0, 100000, 100030, 4); }
F syscall:close:return { @r[retval, errno] = count(); }
F syscall:close:return { @c[cpu] = count(); }
R syscall:close:return /errno == 9 && retval < 0/ { @[comm] = stats(errno); }
R syscall:close:entry /arg0 > 100010 && (arg0 < 100020 || arg0 == 100030)/ { @[comm] = stats(arg0); }
F syscall:getppid:entry, syscall:close:entry { @[probe] = count(); }
R syscall:*:entry { @[comm, probe] = count(); }
F syscall:close:entry { @z[arg0] = count(); } END { print(@z, 3); clear(@z); }
F syscall:getppid:entry { @g[comm] = count(); @t[tid] = count(); }
PROGS
	# the same maps as JSON, hist and lhist included
	BTFLAGS='-f json' same 20000 'syscall:close:entry { @c[comm] = count(); @h = hist(arg0); @l = lhist(arg0, 100000, 100030, 4); @a[probe] = avg(arg0); }' json
	;;
exact)
	# flat out, every call counted, none lost: getppid counted in the
	# traced process (no record), close's records summed in dtd; the
	# -c shell makes one getppid call of its own, the command's too
	prog='syscall:getppid:entry { @n = count(); } syscall:close:entry /arg0 >= 100000/ { @s = sum(arg0); }'
	bt -v -c "$AGG_CALLS 200000" -e "$prog" > "$TMP/out" 2> "$TMP/err" ||
	    fail "$(cat "$TMP/err")"
	cat "$TMP/out" "$TMP/err"
	grep -qx '@n: 200001' "$TMP/out" || fail "getppid count"
	# 2000 closes of 100000 + i % 37
	sum=$(python3 -c 'print(sum(100000 + i % 37 for i in range(2000)))')
	grep -qx "@s: $sum" "$TMP/out" || fail "sum of close's arg0"
	grep -q '^0 events dropped$' "$TMP/err" || fail "dropped"
	grep -q '^1 rules aggregated in dtd$' "$TMP/err" && fail "one rule"
	grep -q '^2 rules aggregated in dtd$' "$TMP/err" || fail "not both"
	grep -q '^0 events read$' "$TMP/err" || fail "events read"
	grep -q '^0 events dtd.s table could not hold$' "$TMP/err" ||
	    fail "overflow"
	# three threads at once: the entry's add is a locked one once
	# the process has more than one (udt_rw_mt)
	bt -v -c "$AGG_CALLS 100000 2" -e 'syscall:getppid:entry { @n = count(); }' \
	    > "$TMP/out" 2> "$TMP/err" || fail "$(cat "$TMP/err")"
	cat "$TMP/out"
	grep -qx '@n: 300001' "$TMP/out" || fail "getppid count, 3 threads"
	grep -q '^0 events dropped$' "$TMP/err" || fail "dropped, 3 threads"
	# two counts of one probe, keyless and by pid, are counted in the
	# traced process too: exact and nothing dropped even where records
	# would be (lossy, flat out)
	bt -v --no-lossless -c "$AGG_CALLS 200000" \
	    -e 'syscall:getppid:entry { @n = count(); @p[pid] = count(); }' \
	    > "$TMP/out" 2> "$TMP/err" || fail "$(cat "$TMP/err")"
	cat "$TMP/out"
	grep -qx '@n: 200001' "$TMP/out" || fail "two counts: @n"
	[ "$(grep -c '^@p\[[0-9]*\]: ' "$TMP/out")" = 2 ] &&
	    grep -q '^@p\[[0-9]*\]: 200000$' "$TMP/out" &&
	    grep -q '^@p\[[0-9]*\]: 1$' "$TMP/out" || fail "two counts: @p"
	grep -q '^0 events dropped$' "$TMP/err" || fail "dropped, two counts"
	grep -q '^0 events read$' "$TMP/err" || fail "events read, two counts"
	;;
regs)
	# the count-only path of the rewritten sites' entry (no time stamp,
	# no slot, no register saved) gives back every vector and mask
	# register as the kernel does (vregs_tracee.c); entry and return
	# both counted, and counted as dtd counts the records
	prog='syscall:getppid:entry { @e = count(); }
	    syscall:getppid:return { @r = count(); }
	    syscall:access:entry { @a = count(); }'
	bt -v -c "$VREGS_TRACEE" -e "$prog" > "$TMP/on" 2> "$TMP/on.err" ||
	    fail "$(cat "$TMP/on.err")"
	BTRACE_NOPUSH=1 bt -v -c "$VREGS_TRACEE" -e "$prog" > "$TMP/off" \
	    2> "$TMP/off.err" || fail "$(cat "$TMP/off.err")"
	cat "$TMP/on"
	grep -q '^bad ' "$TMP/on" && fail "registers changed"
	grep -qx 'done' "$TMP/on" || fail "the tracee did not finish"
	grep -qx 'site e9' "$TMP/on" || fail "the site was not rewritten"
	grep -q '^3 rules aggregated in dtd$' "$TMP/on.err" ||
	    fail "not aggregated: $(cat "$TMP/on.err")"
	grep -q '^0 events dropped$' "$TMP/off.err" ||
	    fail "the records dropped some: $(cat "$TMP/off.err")"
	diff -u "$TMP/off" "$TMP/on" || fail "counts differ"
	;;
signals)
	# every entry counted in the process (the entry's counting path for
	# each call that has no needs of its own): signals_tracee's modes
	# behave as untraced, and a handler on an alternate stack uses no
	# more of it than syscall-signals allows a traced call
	# (UDT_ALTSTACK_SYS there: 1280 bytes over the untraced handler)
	u=$("$SIGNALS_TRACEE" alt 1024 | sed -n 's/^used //p')
	printf '"$1" sigfd; echo "sigfd $?"\n"$1" plain; echo "plain $?"\n"$1" alt 1024; echo "alt $?"\n' \
	    > "$TMP/sig.sh"
	bt -v -c "/bin/sh $TMP/sig.sh $SIGNALS_TRACEE" \
	    -e 'syscall:*:entry { @[probe] = count(); }' > "$TMP/out" \
	    2> "$TMP/err" || fail "$(cat "$TMP/err")"
	grep -v '^@' "$TMP/out"
	grep -qx 'sigfd 23' "$TMP/out" || fail "sigfd: $(cat "$TMP/out")"
	grep -qx 'plain 23' "$TMP/out" || fail "plain: $(cat "$TMP/out")"
	grep -qx 'alt 0' "$TMP/out" || fail "alt: $(cat "$TMP/out")"
	tr=$(sed -n 's/^used //p' "$TMP/out")
	[ -n "$u" ] && [ -n "$tr" ] && [ "$tr" -le $((u + 1280)) ] ||
	    fail "alternate stack: $tr bytes traced, $u untraced"
	echo "alternate stack: $tr bytes counted, $u untraced"
	grep -q '^@\[syscall:getppid:entry\]: ' "$TMP/out" ||
	    fail "getppid not counted"
	grep -q '^0 events dropped$' "$TMP/err" || fail "dropped"
	;;
overflow)
	# a table of 8 entries for 37 keys: what did not fit is said
	BTRACE_AGGSIZE=8 bt -v -c "$AGG_CALLS 20000" \
	    -e 'syscall:close:entry /arg0 >= 100000/ { @[arg0] = count(); }' \
	    > "$TMP/out" 2> "$TMP/err" || fail "$(cat "$TMP/err")"
	cat "$TMP/err"
	grep -q 'events not aggregated: dtd.s table is full (8 entries' \
	    "$TMP/err" || fail "overflow not said"
	[ "$(wc -l < "$TMP/out")" -eq 8 ] || fail "$(cat "$TMP/out")"
	total=$(awk '{ s += $2 } END { print s }' "$TMP/out")
	lost=$(sed -n 's/^\([0-9]*\) events dtd.s table could not hold$/\1/p' \
	    "$TMP/err")
	[ $((total + lost)) -eq 200 ] || fail "$total counted, $lost over"
	;;
mixed)
	# a probe another rule reads events of stays with btrace; a rule
	# that cannot be folded (nsecs) too; the output is the same
	same 20000 'syscall:close:entry { @[arg0] = count(); } syscall:close:entry /arg0 == 100003/ { printf("%d\n", arg0); } syscall:getppid:entry { @g = count(); }' m1
	grep -q '^1 rules aggregated in dtd$' "$TMP/on.err.m1" ||
	    fail "m1: $(cat "$TMP/on.err.m1")"
	BTRACE_NOPUSH=0 bt -v -c "$AGG_CALLS 2000" \
	    -e 'syscall:close:entry { @[nsecs > 0] = count(); }' \
	    > "$TMP/out" 2> "$TMP/err" || fail "$(cat "$TMP/err")"
	grep -q 'aggregated in dtd' "$TMP/err" && fail "nsecs pushed"
	echo "@[1]: 24" | diff -u - "$TMP/out" || fail "nsecs"
	;;
cmdtree)
	# two concurrent -c runs, each folded in dtd, each counts its own
	# command's calls alone (the shell's one getppid included), with
	# the other's running meanwhile: dtd keys them by pid, btrace keeps
	# its tree's
	for x in A B; do mkfifo "$TMP/go$x" "$TMP/end$x" || exit 2; done
	prog='syscall:getppid:entry { @ = count(); }'
	bt -v -c "read l < $TMP/goA; $AGG_CALLS 3000; read l < $TMP/endA" \
	    -e "$prog" > "$TMP/outA" 2> "$TMP/errA" &
	PA=$!
	bt -v -c "read l < $TMP/goB; $AGG_CALLS 5000; read l < $TMP/endB" \
	    -e "$prog" > "$TMP/outB" 2> "$TMP/errB" &
	PB=$!
	exec 7> "$TMP/goA" 8> "$TMP/goB"
	exec 7>&- 8>&-
	exec 7> "$TMP/endA" 8> "$TMP/endB"
	exec 7>&- 8>&-
	wait $PA; ra=$?
	wait $PB; rb=$?
	[ $ra -eq 0 ] && [ $rb -eq 0 ] || fail "exit codes $ra $rb"
	cat "$TMP/outA" "$TMP/outB"
	grep -q 'aggregated in dtd' "$TMP/errA" || fail "A not folded"
	echo '@: 3001' | diff -u - "$TMP/outA" || fail "A counted others"
	echo '@: 5001' | diff -u - "$TMP/outB" || fail "B counted others"
	;;
pid)
	# -p: a traced process's calls folded in dtd, another traced
	# process's left out (dtd keys them by pid, btrace keeps -p's)
	mkfifo "$TMP/gate" "$TMP/up" "$TMP/first" || exit 2
	exec 5<>"$TMP/gate" 6<>"$TMP/up" 8<>"$TMP/first"
	LD_PRELOAD=$USERDT_PRELOAD sh -c "echo up >&6; read -r l; \
	    exec $AGG_CALLS 3000" <&5 6>&6 &
	TPID=$!
	read -r -t 30 l <&6 || fail "the traced shell did not start"
	# the first line of output (an interval event) says it records
	"$BTRACE" -d "$DEV" -v -p "$TPID" -e 'syscall:getppid:entry { @ = count(); }
	    interval:hz:100 { printf("tick\n"); }' 2> "$TMP/err" |
	    { read -r l; echo "$l" >&8; grep -v '^tick$' > "$TMP/res"; } &
	BTPID=$!
	read -r -t 30 l <&8 || fail "btrace did not start: $(cat "$TMP/err")"
	LD_PRELOAD=$USERDT_PRELOAD "$AGG_CALLS" 777 || fail "outsider"
	echo >&5
	wait "$TPID" || fail "the traced process"
	wait "$BTPID" || fail "btrace: $(cat "$TMP/err")"
	BTPID=
	cat "$TMP/res" "$TMP/err"
	grep -q 'aggregated in dtd' "$TMP/err" || fail "not folded"
	echo '@: 3000' | diff -u - "$TMP/res" || fail "-p counted others"
	# counted by the hooks themselves, which count only unfiltered
	# events: -p's pid, pushed as the probe's filter, once made every
	# call a record that dtd filtered and folded (lossy flat out)
	grep -q '^[1-9][0-9]* events filtered by dtd$' "$TMP/err" &&
	    fail "-p's pid made the count records"
	;;
nonroot)
	# A tracee that is not root: every event of it reaches the reader,
	# its last ones too.  dtd checks at each drain that such a tracee
	# is still the image that attached (the owner of /proc/PID), and
	# once took a process reaped between two drains for one that had
	# changed, discarding what was left in its ring, uncounted (12833
	# of 20000 read).  Records (BTRACE_NOPUSH), flat out, several runs.
	export USERDT_SOCKET=$TMP/ingest.sock BTRACE_NOPUSH=1
	chmod 755 "$TMP" || exit 2
	# the tracees' records alone: the kernel's feed of the machine's
	# getppid calls cannot wait, and took the room a lossless reader's
	# tracee records were held for (a slow build: ASan's)
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	dtd_serve "$DTD" --syscall-scope launched
	mkfifo "$TMP/nr" || exit 2
	# lossless (-L): the tracees wait for room rather than drop
	# the end: a marker's call, after the last tracee's in time order
	# (a batch held for its image's look once let the drain's mark
	# past it: the marker's call came before 2224 to 6432 of the last
	# tracee's records, 16 runs in 170 beside a build)
	ln -s "$AGG_CALLS" "$TMP/agg_mark" || exit 2
	"$BTRACE" -d "$DEV" -v -L -e 'BEGIN { printf("go\n"); }
	    syscall:getppid:entry /comm == "agg_calls"/ { @[pid] = count(); }
	    syscall:getppid:entry /comm == "agg_mark"/ { exit(); }' \
	    > "$TMP/nr" 2> "$TMP/err" &
	BTPID=$!
	exec 6< "$TMP/nr"
	read -r -t 30 l <&6 && [ "$l" = go ] ||
	    fail "btrace did not start: $l $(cat "$TMP/err")"
	for i in 1 2 3 4 5; do
		setpriv --reuid=65534 --regid=65534 --clear-groups \
		    env LD_PRELOAD="$USERDT_PRELOAD" "$AGG_CALLS" 20000 ||
		    fail "$i: the tracee"
	done
	LD_PRELOAD="$USERDT_PRELOAD" "$TMP/agg_mark" 1 || fail "the marker"
	wait "$BTPID" || fail "btrace: exit $?: $(cat "$TMP/err")"
	BTPID=
	cat <&6 > "$TMP/res"
	exec 6<&-
	cat "$TMP/res" "$TMP/err"
	grep 'no longer the image' "$TMP/dtd.log" &&
	    fail "dtd discarded a non-root tracee's records"
	# in time order: a record that came after the marker's call is
	# not read (btrace exits at it), and is said late only here
	# (btrace waits after exit() for dtd to have put all of before)
	grep 'came out of time order' "$TMP/err" &&
	    fail "btrace read events out of time order"
	grep -E 'order: [1-9][0-9]* of' "$TMP/dtd.log" &&
	    fail "dtd said events came late"
	# Every call read, or said lost: a tracee that ends before dtd
	# proved its ring its own (a slow dtd: ASan's) has its last
	# records discarded, and the reader is told (dropevt).
	got=$(awk '/^@/ { s += $NF } END { print s + 0 }' "$TMP/res")
	lost=$(sed -n 's/^\([0-9]*\) events dropped$/\1/p' "$TMP/err")
	[ $((got + ${lost:-0})) -eq 100000 ] ||
	    fail "read $got, said lost ${lost:-0}, of 100000"
	[ "$(grep -c ']: 20000$' "$TMP/res")" -eq 5 ] ||
	    echo "# not all read: $got read, ${lost:-0} said lost"
	;;
kstack)
	# profile keyed by kernel stacks, machine-wide for a second:
	# folded in dtd (no record read), and the shape of the samples of
	# the same run without dtd's folding.  A reader of /dev/zero a CPU
	# keeps every CPU in one kernel path, so that the two runs' top
	# stacks are that path's, not whatever else the machine did (an
	# idle CPU's loop in one run, a busy user's in the other); stopped
	# at exit, whatever way the case leaves
	prog='profile:hz:97 { @[kstack] = count(); } interval:hz:1 { exit(); }'
	ZS=
	for c in $(seq "$(nproc)"); do
		dd if=/dev/zero of=/dev/null bs=1M 2>/dev/null &
		ZS="$ZS $!"
	done
	# shellcheck disable=SC2086
	trap 'kill $ZS 2> /dev/null; dtd_cleanup' EXIT
	# Both at once: the same second of the machine, whatever else it
	# runs (one after the other, a build starting between them made
	# the second's top stack another program's).
	bt -v -e "$prog" > "$TMP/on" 2> "$TMP/on.err" &
	ON=$!
	BTRACE_NOPUSH=1 bt -v -e "$prog" > "$TMP/off" 2> "$TMP/off.err" &
	OFF=$!
	wait $ON || fail "$(cat "$TMP/on.err")"
	wait $OFF || fail "$(cat "$TMP/off.err")"
	# shellcheck disable=SC2086
	kill $ZS
	# shellcheck disable=SC2086
	wait $ZS 2>/dev/null
	folded_said "$TMP/on.err" 1
	grep -q 'aggregated in dtd' "$TMP/off.err" && fail "NOPUSH folded"
	shape_same "$TMP/on" "$TMP/off"
	;;
kstacktp)
	# a tracepoint keyed by kernel stacks: the forks of a traced shell
	# (-p), each from the same place, counted exactly, byte for byte
	# what the same run gives through read(2), as text and as JSON
	for mode in on off jon joff; do
		rm -f "$TMP/gate" "$TMP/up" "$TMP/first"
		mkfifo "$TMP/gate" "$TMP/up" "$TMP/first" || exit 2
		exec 5<>"$TMP/gate" 6<>"$TMP/up" 8<>"$TMP/first"
		sh -c 'echo up >&6; read -r l; for i in 1 2 3 4 5 6 7 8 9 10 11 12; do /bin/true; done' <&5 6>&6 &
		TPID=$!
		read -r -t 30 l <&6 || fail "the traced shell did not start"
		case $mode in *off) export BTRACE_NOPUSH=1 ;; esac
		fmt=; case $mode in j*) fmt='-f json' ;; esac
		# shellcheck disable=SC2086
		"$BTRACE" -d "$DEV" -v $fmt -p "$TPID" -e 'tracepoint:task:task_newtask { @[kstack] = count(); }
		    interval:hz:100 { printf("tick\n"); }' 2> "$TMP/$mode.err" |
		    { read -r l; echo "$l" >&8; grep -v 'tick' > "$TMP/$mode"; } &
		BTPID=$!
		unset BTRACE_NOPUSH
		read -r -t 30 l <&8 || fail "btrace did not start: $(cat "$TMP/$mode.err")"
		echo >&5
		wait "$TPID" || fail "the traced shell"
		wait "$BTPID" || fail "btrace: $(cat "$TMP/$mode.err")"
		BTPID=
		exec 5<&- 6<&- 8<&-
	done
	cat "$TMP/on" "$TMP/on.err"
	grep -q 'aggregated in dtd' "$TMP/on.err" || fail "not folded"
	grep -q 'aggregated in dtd' "$TMP/off.err" && fail "NOPUSH folded"
	grep -q '^0 events dtd.s stack table could not hold$' "$TMP/on.err" ||
	    fail "stack table overflow"
	grep -q '^]: 12$' "$TMP/on" || fail "not 12 forks"
	diff -u "$TMP/off" "$TMP/on" || fail "output differs"
	grep -q 'aggregated in dtd' "$TMP/jon.err" || fail "json: not folded"
	grep -q '"type": "map"' "$TMP/jon" || fail "json: no map: $(cat "$TMP/jon")"
	diff -u "$TMP/joff" "$TMP/jon" || fail "json output differs"
	cat "$TMP/jon"
	;;
ustack)
	# profile keyed by user stacks of -c's command: folded in dtd
	# (keyed by pid and comm too), symbolised in the command's maps as
	# events' stacks are, the shape of a run without dtd's folding
	prog='profile:hz:499 { @[ustack] = count(); }'
	# a second of CPU either way: the totals compare
	cmd="$BUSY -c 1 > /dev/null"
	bt -v -c "$cmd" -e "$prog" > "$TMP/on" 2> "$TMP/on.err" ||
	    fail "$(cat "$TMP/on.err")"
	BTRACE_NOPUSH=1 bt -v -c "$cmd" -e "$prog" > "$TMP/off" \
	    2> "$TMP/off.err" || fail "$(cat "$TMP/off.err")"
	folded_said "$TMP/on.err"
	grep -q 'aggregated in dtd' "$TMP/off.err" && fail "NOPUSH folded"
	grep -q '^is_prime+0x' "$TMP/on" || fail "no is_prime: $(head -40 "$TMP/on")"
	shape_same "$TMP/on" "$TMP/off"
	;;
upid)
	# the issue's one-liner on a process btrace does not launch nor dtd
	# trace (-p ends the run with it): folded, symbolised though the
	# process is gone when the maps print, shaped as without folding
	for mode in on off; do
		"$BUSY" -c 1 > /dev/null &
		TPID=$!
		[ $mode = off ] && export BTRACE_NOPUSH=1
		bt -v -p "$TPID" -e "profile:hz:499 /pid == $TPID/ { @[ustack] = count(); }" \
		    > "$TMP/$mode" 2> "$TMP/$mode.err" || fail "$(cat "$TMP/$mode.err")"
		unset BTRACE_NOPUSH
		wait "$TPID"
	done
	folded_said "$TMP/on.err"
	grep -q 'aggregated in dtd' "$TMP/off.err" && fail "NOPUSH folded"
	grep -q '^is_prime+0x' "$TMP/on" || fail "no is_prime: $(head -40 "$TMP/on")"
	shape_same "$TMP/on" "$TMP/off"
	;;
stkoverflow)
	# a stack table of one stack: what did not fit is said, counted
	# (system calls flat out meanwhile: kernel stacks of many kinds)
	"$AGG_CALLS" 100000000 &
	BTPID=$!
	BTRACE_STKSIZE=1 bt -v -e 'profile:hz:997 { @[kstack] = count(); } interval:hz:1 { exit(); }' \
	    > "$TMP/out" 2> "$TMP/err" || fail "$(cat "$TMP/err")"
	cat "$TMP/err"
	grep -q 'events not aggregated: dtd.s stack table is full (1 stacks' \
	    "$TMP/err" || fail "overflow not said"
	lost=$(sed -n 's/^\([0-9]*\) events dtd.s stack table could not hold$/\1/p' \
	    "$TMP/err")
	[ "${lost:-0}" -gt 0 ] || fail "no overflow counted"
	grep -q '^0 events dtd.s table could not hold$' "$TMP/err" ||
	    fail "the entries' table's overflow"
	kill "$BTPID"
	wait "$BTPID" 2>/dev/null
	BTPID=
	;;
tracee)
	# folded in the traced process (userdt/udt_sagg.h): no record made,
	# every call folded, flat out, from one thread and from three;
	# each function, keyed by nothing, the pid and the probe; byte for
	# byte what dtd folds from the records (USERDT_SRCAGG=0)
	n=200000
	while read -r thr prog; do
		r0=$(ingest_stat records)
		bt -v -c "$AGG_CALLS $n $thr" -e "$prog" > "$TMP/on" \
		    2> "$TMP/on.err" || fail "$(cat "$TMP/on.err")"
		r1=$(ingest_stat records)
		USERDT_SRCAGG=0 bt -v -c "$AGG_CALLS $n $thr" -e "$prog" \
		    > "$TMP/off" 2> "$TMP/off.err" || fail "$(cat "$TMP/off.err")"
		r2=$(ingest_stat records)
		cat "$TMP/on"
		grep -q '^0 events dropped$' "$TMP/on.err" ||
		    fail "dropped: $(cat "$TMP/on.err")"
		grep -q '^0 events read$' "$TMP/on.err" || fail "events read"
		# the launcher's shell may record a call or two: no more
		[ $((r1 - r0)) -le 8 ] ||
		    fail "$((r1 - r0)) records made while folded: $prog"
		[ $((r2 - r1)) -ge $((n / 100)) ] ||
		    fail "USERDT_SRCAGG=0 made $((r2 - r1)) records"
		# the pids (and so getppid's values) differ between runs
		python3 - "$TMP/on" "$TMP/off" "$n" "$thr" <<'PY' || fail "$prog: $(cat "$TMP/off.err")"
import re, sys
on, off = open(sys.argv[1]).read(), open(sys.argv[2]).read()
n, thr = int(sys.argv[3]), int(sys.argv[4] or 0)
calls = n * (1 + thr)
def norm(txt):
    # pids, getppid's results, their sums and their hist buckets differ
    # from run to run: each such as the order it first appears in
    seen = {}
    tok = lambda m: seen.setdefault(m.group(), "N%d" % len(seen))
    # a bucket's label with its padding: a ppid may cross a power of 2
    txt = re.sub(r"^\[[^)]*\)[ \t]*", tok, txt, flags=re.M)
    return re.sub(r"\b\d{3,}\b", tok, txt)
if norm(on) != norm(off):
    sys.exit("differs from the records' fold:\n" + on + "\n---\n" + off)
# exact: closes of 100000 + i % 37 (and the loader's of a low fd, which
# lhist's first bucket takes), getppid's count
closes = [100000 + i % 37 for i in range(n // 100)]
for m, want in (("@cx", max(closes)), ("@cr", -len(closes)), ("@ce", 9)):
    if re.search(r"^%s\b" % m, on, re.M) and \
       not re.search(r"^%s(\[\d+\])?: %d$" % (m, want), on, re.M):
        sys.exit("%s is not %d" % (m, want))
got = re.findall(r"^@cs\[\d+\]: (\d+)$", on, re.M)
if got and not any(0 <= int(g) - sum(closes) < 100 for g in got):
    sys.exit("@cs is not %d and a few low fds" % sum(closes))
if "@g" in on and not re.search(r"^@g\[\d+\]: %d$" % calls, on, re.M):
    sys.exit("getppid's count is not %d" % calls)
if "@l:" in on:
    for k in range(37):
        want = sum(1 for c in closes if c == 100000 + k)
        if not re.search(r"^\[%d, %d\)\s+%d " % (100000 + k, 100001 + k,
                                                 want), on, re.M):
            sys.exit("lhist bucket %d is not %d" % (100000 + k, want))
if "@p[" in on and not re.search(r"^@p\[syscall:close:return\]: -%d$"
                                 % len(closes), on, re.M):
    sys.exit("close:return by probe")
# exact: getppid returns one ppid to every call of the process, so its
# sum is calls times its max, and its min and avg are its max (norm()
# would take a wrong sum for another run's pid)
mx = dict(re.findall(r"^@mx\[(\d+)\]: (\d+)$", on, re.M))
one = re.findall(r"^@mx: (\d+)$", on, re.M)
g = dict(re.findall(r"^@g\[(\d+)\]: (\d+)$", on, re.M))
for p, v in re.findall(r"^@s\[(\d+)\]: (\d+)$", on, re.M):
    c = int(g.get(p, calls))
    if p in mx:
        ok = int(v) == c * int(mx[p])
    else:
        # @mx over every process: each one's ppid is at most that
        ok = bool(one) and int(v) % c == 0 and 0 < int(v) // c <= int(one[0])
    if not ok:
        sys.exit("@s[%s] is %s: not %d calls of one ppid" % (p, v, c))
for f in ("@mn", "@a"):
    for p, v in re.findall(r"^%s\[(\d+)\]: (\d+)$" % f, on, re.M):
        if p not in mx or v != mx[p]:
            sys.exit("%s[%s] is %s, not the max %s" % (f, p, v, mx.get(p)))
PY
	done <<'PROGS'
0 syscall:getppid:return { @g[pid] = count(); @s[pid] = sum(retval); @mn[pid] = min(retval); @mx[pid] = max(retval); @a[pid] = avg(retval); @h[pid] = hist(retval); }
2 syscall:getppid:return { @g[pid] = count(); @s[pid] = sum(retval); @h = hist(retval); @mx = max(retval); }
0 syscall:close:entry { @l = lhist(arg0, 100000, 100037, 1); @ca[pid] = avg(arg0); @h = hist(arg0); @cn[pid] = min(arg0); @cx[pid] = max(arg0); }
0 syscall:close:return { @cr[pid] = sum(retval); @ce[pid] = max(errno); @h = hist(arg2); @z = sum(arg1); }
0 syscall:close:return, syscall:getppid:return { @p[probe] = sum(arg0); @q[pid, probe] = max(retval); }
0 syscall:close:entry { @cs[pid] = sum(arg0); @e = max(errno); @r = min(retval); }
PROGS
	;;
tracee-keys)
	# keyed by the thread, its name, the CPU, arguments, the return
	# value and errno, folded in the traced process as above; the CPUs a
	# program ran on differ from run to run: their total must not.  The
	# extra threads name themselves (AGG_NAME): keys by name follow.
	n=100000
	export AGG_NAME=1
	while read -r thr prog; do
		r0=$(ingest_stat records)
		bt -v -c "$AGG_CALLS $n $thr" -e "$prog" > "$TMP/on" \
		    2> "$TMP/on.err" || fail "$(cat "$TMP/on.err")"
		r1=$(ingest_stat records)
		# the records' reference, again if it lost some under load
		for try in 1 2 3; do
			USERDT_SRCAGG=0 bt -v -c "$AGG_CALLS $n $thr" \
			    -e "$prog" > "$TMP/off" 2> "$TMP/off.err" ||
			    fail "$(cat "$TMP/off.err")"
			grep -q '^0 events dropped$' "$TMP/off.err" && break
		done
		head -20 "$TMP/on"
		grep -q '^0 events dropped$' "$TMP/on.err" ||
		    fail "dropped: $(cat "$TMP/on.err")"
		grep -q '^0 events read$' "$TMP/on.err" || fail "events read"
		# a key whose entries' neighbourhood is full is recorded
		# (exact all the same): a few of the 37 x 5 keys may be
		[ $((r1 - r0)) -le $((8 + n / 2000)) ] ||
		    fail "$((r1 - r0)) records made while folded: $prog"
		echo "$((r1 - r0)) records"
		python3 - "$TMP/on" "$TMP/off" "$n" "$thr" <<'PY' || fail "$prog: $(cat "$TMP/off.err")"
import re, sys
on, off = open(sys.argv[1]).read(), open(sys.argv[2]).read()
n, thr = int(sys.argv[3]), int(sys.argv[4] or 0)
def norm(txt):
    # a map keyed by cpu: its total; pids and tids by first appearance
    tot = {}
    def cpu(m):
        k = m.group(1) + (m.group(2) or "")
        tot[k] = tot.get(k, 0) + int(m.group(3))
        return ""
    txt = re.sub(r"^(@c\w*)\[\d+(, [^\]]*)?\]: (-?\d+)\n", cpu, txt,
                 flags=re.M)
    # a thread named apart: its name says which (its tid would tie
    # the tokens below to the order its entry printed in)
    txt = re.sub(r"^(@x\[[^,\]]+), \d+\]", r"\1, T]", txt, flags=re.M)
    seen = {}
    tok = lambda m: seen.setdefault(m.group(), "N%d" % len(seen))
    # a bucket's label with its padding: a ppid may cross a power of 2
    txt = re.sub(r"^\[[^)]*\)[ \t]*", tok, txt, flags=re.M)
    txt = re.sub(r"\b\d{3,}\b", tok, txt)
    # entries of equal value print in an order of their own
    return sorted(txt.split("\n")) + sorted(tot.items())
if norm(on) != norm(off):
    sys.exit("differs from the records' fold:\n" + on + "\n---\n" + off)
if "@t[" in on:
    counts = sorted(int(c) for c in re.findall(r"^@t\[\d+\]: (\d+)$", on, re.M))
    if counts[-(1 + thr):] != [n] * (1 + thr):
        sys.exit("getppid by thread: %s" % counts)
for k in range(37):
    if "@k[" in on and not re.search(r"^@k\[%d\]: %d$" % (100000 + k,
            sum(1 for i in range(n // 100) if i % 37 == k)), on, re.M):
        sys.exit("close by arg0 %d" % (100000 + k))
if "@r[" in on and not re.search(r"^@r\[-1, 9\]: %d$" % (n // 100), on, re.M):
    sys.exit("close by retval, errno")
if "@n[" in on:
    names = dict(re.findall(r"^@n\[([^\]]+)\]: (\d+)$", on, re.M))
    want = ["agg_calls"] + ["agg-w%d" % i for i in range(thr)]
    if any(names.get(w) != str(n) for w in want):
        sys.exit("getppid by name: %s" % names)
PY
	done <<'PROGS'
2 syscall:getppid:return { @t[tid] = count(); @m[tid] = max(retval); @c[cpu] = count(); }
2 syscall:getppid:return { @n[comm] = count(); @x[comm, tid] = max(retval); @cn[cpu, comm] = count(); }
2 syscall:getppid:entry { @n[comm] = count(); @t[tid] = count(); }
0 syscall:close:entry { @k[arg0] = count(); @s[arg0] = sum(arg0); @a[arg0, tid] = avg(arg0); @h[arg0] = hist(arg0); @l[arg1] = lhist(arg0, 100000, 100037, 5); }
0 syscall:close:return { @r[retval, errno] = count(); @e[errno] = min(retval); @cs[cpu, errno] = sum(retval); }
PROGS
	# a table of 512 entries for 2000 keys: the events that find no
	# entry are recorded, none lost, the output the same
	prog='syscall:close:entry { @[arg0] = count(); }'
	r0=$(ingest_stat records)
	bt -v -c "$SAGG_FORGE keys 2000" -e "$prog" > "$TMP/on" \
	    2> "$TMP/on.err" || fail "$(cat "$TMP/on.err")"
	r1=$(ingest_stat records)
	USERDT_SRCAGG=0 bt -v -c "$SAGG_FORGE keys 2000" -e "$prog" \
	    > "$TMP/off" 2> "$TMP/off.err" || fail "$(cat "$TMP/off.err")"
	echo "2000 keys: $((r1 - r0)) recorded"
	[ $((r1 - r0)) -ge $((2000 - 512)) ] || fail "$((r1 - r0)) recorded"
	[ "$(grep -c '^@\[2[0-9]*\]: 1$' "$TMP/on")" -eq 2000 ] ||
	    fail "not 2000 keys of 1: $(head "$TMP/on")"
	diff -u <(sort "$TMP/off") <(sort "$TMP/on") || fail "output differs"
	;;
tracee-overflow)
	# a table of 8 entries for 39 buckets: what did not fit is said,
	# and what printed and what was refused add up to the records' total
	prog='syscall:close:entry { @h = lhist(arg0, 100000, 100037, 1); }'
	USERDT_SRCAGG=0 bt -v -c "$AGG_CALLS 20000" -e "$prog" > "$TMP/ref" \
	    2> "$TMP/ref.err" || fail "$(cat "$TMP/ref.err")"
	r0=$(ingest_stat records)
	BTRACE_AGGSIZE=8 bt -v -c "$AGG_CALLS 20000" -e "$prog" \
	    > "$TMP/out" 2> "$TMP/err" || fail "$(cat "$TMP/err")"
	r1=$(ingest_stat records)
	cat "$TMP/out" "$TMP/err"
	[ $((r1 - r0)) -le 8 ] || fail "$((r1 - r0)) records: not folded"
	grep -q 'events not aggregated: dtd.s table is full (8 entries' \
	    "$TMP/err" || fail "overflow not said"
	total() { sed -n 's/^[[(].*) *\([0-9][0-9]*\) |.*/\1/p' "$1" |
	    awk '{ s += $1 } END { print s + 0 }'; }
	ref=$(total "$TMP/ref")
	got=$(total "$TMP/out")
	lost=$(sed -n 's/^\([0-9]*\) events dtd.s table could not hold$/\1/p' \
	    "$TMP/err")
	[ "$ref" -gt 200 ] && [ $((got + lost)) -eq "$ref" ] ||
	    fail "$got folded and $lost refused of $ref"
	;;
tracee-forge)
	# a tracee that writes its own accumulators: its forgery is counted,
	# never folded, and dtd goes on serving
	prog='syscall:getppid:return { @s = sum(retval); @h = hist(retval); @c[pid] = count(); @m = max(retval); }'
	for mode in wild minmax buckets noise; do
		f0=$(ingest_stat forged)
		bt -v -c "$SAGG_FORGE $mode 1000" -e "$prog" > "$TMP/out" \
		    2> "$TMP/err" || fail "$mode: $(cat "$TMP/err")"
		f1=$(ingest_stat forged)
		kill -0 "$DTDPID" || fail "$mode: dtd died"
		grep -qx "forged $mode" "$TMP/out" || fail "$mode: $(cat "$TMP/out")"
		echo "$mode: $((f1 - f0)) forged"
		[ $((f1 - f0)) -gt 0 ] || fail "$mode: nothing counted as forged"
		# at most what was called and what a plausible forgery adds
		# (5 for minmax's count)
		python3 - "$TMP/out" <<'PY' || fail "$mode: $(cat "$TMP/out")"
import re, sys
txt = open(sys.argv[1]).read()
for n in re.findall(r"^@c\[\d+\]: (\d+)$", txt, re.M):
    if int(n) > 1000 + 5:
        sys.exit("count %s" % n)
for n in re.findall(r"\)\s+(\d+) \|", txt):
    if int(n) > 1000 + 5:
        sys.exit("bucket %s" % n)
PY
	done
	# keyed entries: another process's thread (misnamed), a CPU past
	# the machine's, a wild step
	prog='syscall:getppid:return { @t[tid] = count(); @c[cpu] = count(); }'
	for mode in ktid kcpu kwild; do
		f0=$(( $(ingest_stat forged) + $(ingest_stat misnamed) ))
		bt -v -c "$SAGG_FORGE $mode 1000" -e "$prog" > "$TMP/out" \
		    2> "$TMP/err" || fail "$mode: $(cat "$TMP/err")"
		f1=$(( $(ingest_stat forged) + $(ingest_stat misnamed) ))
		kill -0 "$DTDPID" || fail "$mode: dtd died"
		echo "$mode: $((f1 - f0)) forged or misnamed"
		[ $((f1 - f0)) -gt 0 ] || fail "$mode: nothing counted"
		grep -q '^@t\[1\]' "$TMP/out" && fail "$mode: init's tid"
		# the map whose key was forged holds no more than was called
		# (the other's +3 an entry is a plausible claim)
		python3 - "$TMP/out" "$mode" <<'PY' || fail "$mode: $(cat "$TMP/out")"
import re, sys
txt = open(sys.argv[1]).read()
maps = {"ktid": ["@t"], "kcpu": ["@c"], "kwild": ["@t", "@c"]}[sys.argv[2]]
for m in maps:
    n = sum(int(x) for x in re.findall(r"^%s\[\d+\]: (\d+)$" % m, txt, re.M))
    if n > 1000 + 1:
        sys.exit("%s: %d" % (m, n))
PY
	done
	# their list: an index past the table skipped, an entry listed
	# many times taken once, so no map holds more than was called
	bt -v -c "$SAGG_FORGE klist 1000" -e "$prog" > "$TMP/out" \
	    2> "$TMP/err" || fail "klist: $(cat "$TMP/err")"
	kill -0 "$DTDPID" || fail "klist: dtd died"
	grep -qx "forged klist" "$TMP/out" || fail "klist: $(cat "$TMP/out")"
	for m in @t @c; do
		n=$(sed -n "s/^$m\[[0-9]*\]: \([0-9]*\)$/\1/p" "$TMP/out" |
		    awk '{ s += $1 } END { print s + 0 }')
		echo "klist: $m $n"
		# (one more, as the checks above allow)
		[ "$n" -le 1001 ] || fail "klist: $m holds $n of 1000 calls"
	done
	# a name not its own, on an entry of its live thread: judged as a
	# record's, it goes under the thread's real name (its 3 calls with
	# the 3 of a second entry, a plausible claim), never under "sshd"
	bt -v -c "$SAGG_FORGE kcomm 1000" \
	    -e 'syscall:getppid:return { @[comm] = count(); }' > "$TMP/out" \
	    2> "$TMP/err" || fail "kcomm: $(cat "$TMP/err")"
	kill -0 "$DTDPID" || fail "kcomm: dtd died"
	grep -qx "forged kcomm" "$TMP/out" || fail "kcomm: $(cat "$TMP/out")"
	grep -q 'aggregated in dtd' "$TMP/err" || fail "kcomm: not folded"
	cat "$TMP/out"
	grep -q '^@\[sshd\]' "$TMP/out" && fail "kcomm: a name not its own"
	n=$(sed -n 's/^@\[sagg_forge\]: \([0-9]*\)$/\1/p' "$TMP/out")
	[ "${n:-0}" -ge 1000 ] && [ "${n:-0}" -le 1006 ] ||
	    fail "kcomm: sagg_forge counted ${n:-0} of 1000 calls"
	# and the next tracee is folded as ever
	bt -v -c "$AGG_CALLS 20000" -e "$prog" > "$TMP/out" 2> "$TMP/err" ||
	    fail "after: $(cat "$TMP/err")"
	grep -q '^@t\[[0-9]*\]: 20000$' "$TMP/out" || fail "after: $(cat "$TMP/out")"
	;;
tracee-reuse)
	# one long-lived traced process, btrace -p on it run after run with
	# other keyed rules, 300 keys a run, 1800 in all for a table of 512:
	# the entries of the runs gone are claimed over (udt_sagg.h), so
	# every run's keys are folded, none recorded for want of an entry,
	# each exact, an old run's key counting nothing for a new one
	mkfifo "$TMP/tin" "$TMP/tout" "$TMP/bo" || exit 2
	exec 5<>"$TMP/tin" 6<>"$TMP/tout"
	# its own ends of the fifos read-only and write-only, none of ours:
	# EOF when ours closes
	LD_PRELOAD=$USERDT_PRELOAD "$SAGG_FORGE" serve 2 < "$TMP/tin" \
	    > "$TMP/tout" 5>&- 6>&- &
	TPID=$!
	trap 'kill "$TPID" 2> /dev/null; dtd_cleanup' EXIT
	for run in 1 2 3 4 5 6; do
		# run 3 has run 1's keys again
		base=$((300000 + (run == 3 ? 1 : run) * 1000))
		if [ $((run % 2)) -eq 1 ]; then
			prog='syscall:close:entry { @k[arg0] = count(); }'
		else
			prog='syscall:close:entry { @k[arg0] = max(arg0); }'
		fi
		reuse_round "$run" "$prog" "$base" 300
		echo "run $run: $REUSE_RECORDS records, $(grep -c '^@k' \
		    "$TMP/out.$run") keys"
		[ $REUSE_RECORDS -le 8 ] ||
		    fail "run $run: $REUSE_RECORDS records: entries not reclaimed"
		python3 - "$TMP/out.$run" "$base" "$run" <<'PY' || fail "run $run: $(cat "$TMP/err.$run")"
import re, sys
txt, base, run = open(sys.argv[1]).read(), int(sys.argv[2]), int(sys.argv[3])
# the library's own closes of low descriptors are no run's keys
got = dict((int(k), int(v)) for k, v in
           re.findall(r"^@k\[(\d+)\]: (-?\d+)$", txt, re.M)
           if int(k) >= 300000)
want = dict((base + k, 2 if run % 2 else base + k) for k in range(300))
if got != want:
    bad = sorted(set(got.items()) ^ set(want.items()))[:5]
    sys.exit("%d keys, not the 300 wanted: %s" % (len(got), bad))
PY
	done
	exec 5>&-
	wait "$TPID" || fail "the traced process"
	kill -0 "$DTDPID" || fail "dtd died"
	;;
forks)
	# a command whose calls are all made by short children, forked while
	# btrace reads dtd's table a hundred times a second (print() merges
	# it first): a child forked after btrace took in the tree's forks
	# but before its read, its calls already folded, is the tree's all
	# the same, and a read empties the table, so a child judged an
	# outsider there lost its calls for good.  Each run's count exact:
	# KIDS * CALLS and the -c shell's one getppid.
	kids=${FORKS_KIDS:-1500} calls=${FORKS_CALLS:-20}
	want=$((kids * calls + 1))
	prog='syscall:getppid:entry { @n = count(); }
	    interval:hz:1000 { print(@n); }'
	# every run, then how many lost: the rate is the measure
	runs=${FORKS_RUNS:-8} bad=0
	for run in $(seq "$runs"); do
		bt -v -c "$AGG_FORKS $kids $calls 4" -e "$prog" > "$TMP/out" \
		    2> "$TMP/err" || fail "run $run: $(cat "$TMP/err")"
		grep -q 'aggregated in dtd' "$TMP/err" ||
		    fail "run $run: not folded: $(cat "$TMP/err")"
		grep -q '^0 events dropped$' "$TMP/err" ||
		    fail "run $run: dropped: $(cat "$TMP/err")"
		got=$(sed -n 's/^@n: //p' "$TMP/out" | tail -1)
		echo "run $run: $got of $want, $(grep -c '^@n' "$TMP/out")" \
		    "prints, $(grep 'events filtered$' "$TMP/err")"
		[ "$got" = "$want" ] || bad=$((bad + 1))
	done
	[ $bad -eq 0 ] || fail "$bad of $runs runs lost calls of the tree"
	;;
*)
	fail "unknown case $CASE"
	;;
esac
exit 0
