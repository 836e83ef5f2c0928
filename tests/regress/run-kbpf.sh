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
# Counts by key in a kernel eBPF program (issue 22, dt_tp_kbpf.c).
# Cases:
#   kbpf     beside a dd flat out on the other core, @[comm, tid] under
#            a comm filter and @[comm] system-wide are exact (strace's
#            count of the same run), nothing dropped, and no record of
#            the counted calls went through perf's buffers; on a quiet
#            machine the output is byte for byte USERDT_KBPF=0's.
#   kbpfrefused  where the verifier refuses the program
#            (USERDT_TEST_KBPF=refuse), dtd says so once, with the
#            verifier's word, and the rule is sampled, its output the
#            program's.
#   kbpfovf  a table too small for the keys (BTRACE_AGGSIZE) says so on
#            stderr, and what it holds plus what it says it could not
#            is every event a large table counts.
#   kbpfwait  a read of an open with four programs waits one grace
#            period (membarrier), not one each: dtd under strace, its
#            MEMBARRIER_CMD_GLOBAL calls at least one, at most a
#            read's one and a stop's four.
#   kbpfpidns  a dtd in a pid namespace of its own samples (the
#            program reads the initial namespace's ids): it says why,
#            and nothing is counted by the kernel.
#   kbpfcomm  system-wide sched_wakeup by comm, counted by the program
#            (@k) and sampled (@s, a max() beside it) on the same run:
#            the sampled path names some worker with its work
#            ("kworker/1:1-events"), the program names some worker, and
#            no worker the program names bare is one the sampled path
#            named only with its work.  The names themselves may differ:
#            /proc's is read at drain time for the one, at record time
#            for the other, and a worker's work changes in between.
#   kbpfargs  a filter of a Linux-named tracepoint's fields
#            (signal_generate's sig, a string's slot, the pid) is the
#            program's: exact, USERDT_KBPF=0's output.
#   kbpfshare  a sampled rule of another open on the same tracepoint
#            gets every event while a kernel program counts there (the
#            program's return must let perf deliver): exact, strace's.
# Root: root always has bpf(2), so a dtd that samples instead fails
# the case, never skips it.
#
# usage: run-kbpf.sh btrace dtd case
set -u
[ $# -eq 3 ] || { echo "usage: $0 btrace dtd case" >&2; exit 2; }
BTRACE=$1
DTD=$2

. "$(dirname "$0")/lib.sh"

# fail where dtd said it samples instead: the program is the subject
kbpf_refused() {
	if grep -q "no count in the kernel" "${1:-$TMP/dtd.log}"; then
		fail "sampled: $(grep "no count in the kernel" "${1:-$TMP/dtd.log}")"
	fi
}

# the events of btrace $1 all counted by the kernel: the program took it
kbpf_took() {
	local n

	n=$(sed -n 's/^\([0-9]*\) events aggregated by dtd$/\1/p' \
	    "$TMP/$1.err")
	[ "${n:-0}" -gt 0 ] &&
	    grep -qx "$n of them counted by the kernel" "$TMP/$1.err" ||
	    fail "$1: not the kernel's: $(cat "$TMP/$1.err")"
}

# kbpf_pair NAME PROG CMD...: PROG over CMD once with the program
# ($TMP/NAME1.*) and once with USERDT_KBPF=0 (NAME0), on a quiet
# machine: nothing dropped, the second's events none the kernel's, the
# two outputs byte for byte the same
kbpf_pair() {
	local name=$1 prog=$2 k

	shift 2
	for k in 1 0; do
		USERDT_KBPF=$k dtd_serve "$DTD"
		bt_go "$name$k" "$prog"
		"$@" 2> "$TMP/$name.cmd" ||
		    fail "$1: $(cat "$TMP/$name.cmd")"
		bt_end "$name$k"
		kill -TERM "$DTDPID"
		wait "$DTDPID"
		DTDPID=
		[ $k = 0 ] || kbpf_refused
		grep -qx '0 events dropped' "$TMP/$name$k.err" ||
		    fail "$name$k: lost: $(cat "$TMP/$name$k.err" "$TMP/dtd.log")"
	done
	grep -qx "0 of them counted by the kernel" "$TMP/${name}0.err" ||
	    fail "USERDT_KBPF=0 counted in the kernel: $(cat "$TMP/${name}0.err")"
	[ -s "$TMP/${name}1.out" ] || fail "no output"
	diff -u "$TMP/${name}0.out" "$TMP/${name}1.out" ||
	    fail "not USERDT_KBPF=0's output"
}

dtd_start
case $3 in
kbpf)
	cp /bin/dd "$TMP/uq_kbx" && cp /bin/dd "$TMP/uq_kbn" || exit 2
	setsid "$TMP/uq_kbn" if=/dev/zero of=/dev/null bs=1 2> /dev/null &
	NOISE=$!
	PY=
	trap 'kill -- -$NOISE 2> /dev/null; [ -n "$PY" ] && kill $PY
	    dtd_cleanup' EXIT
	bt_go ka 'tracepoint:raw_syscalls:sys_enter /comm == "uq_kbx"/ {
	    @[comm, tid] = count(); }'
	bt_park
	bt_go kb 'tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }'
	strace -f -qq -c -U calls -o "$TMP/x.strace" "$TMP/uq_kbx" \
	    if=/dev/zero of=/dev/null bs=1 count=40000 2> /dev/null ||
	    fail "strace"
	bt_end kb
	bt_unpark
	bt_end ka
	kbpf_refused
	cx=$(awk '$NF == "total" { print $1 }' "$TMP/x.strace")
	[ -n "$cx" ] || fail "no strace count"
	# one thread: one entry, the strace count
	[ "$(wc -l < "$TMP/ka.out")" -eq 1 ] &&
	    grep -qx "@\[uq_kbx, [0-9]*\]: $cx" "$TMP/ka.out" ||
	    fail "comm, tid: strace $cx: $(cat "$TMP/ka.out" "$TMP/ka.err")"
	grep -qx "@\[uq_kbx\]: $cx" "$TMP/kb.out" ||
	    fail "comm: strace $cx: $(grep uq_kb "$TMP/kb.out") $(cat "$TMP/kb.err")"
	for p in ka kb; do
		grep -qx '0 events dropped' "$TMP/$p.err" &&
		    grep -qx "0 events dtd's table could not hold" \
		    "$TMP/$p.err" || fail "$p: lost: $(cat "$TMP/$p.err")"
		kbpf_took $p
	done
	kill -- -$NOISE 2> /dev/null
	wait $NOISE 2> /dev/null
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	rec=$(sed -n 's/^dtd: tracepoint: \([0-9]*\) records.*/\1/p' \
	    "$TMP/dtd.log")
	[ "${rec:-0}" -lt $((cx / 10)) ] ||
	    fail "x's calls went through perf's buffers: $(cat "$TMP/dtd.log")"
	# quiet: the program's output is the sampled path's, byte for byte
	kbpf_pair q 'tracepoint:raw_syscalls:sys_enter /comm == "uq_kbx"/ {
	    @[comm] = count(); @n = count(); }' \
	    "$TMP/uq_kbx" if=/dev/zero of=/dev/null bs=1 count=500
	;;
kbpfargs)
	# a Linux-named tracepoint's fields as arguments in the filter: sig
	# (an int), the comm (a string: 0), the pid; 300 SIGUSR1 and 300
	# SIGUSR2 a shell sends itself, ignored
	cp /bin/bash "$TMP/uq_kbs" || exit 2
	# kbpf_pair starts its own two
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	kbpf_pair a 'tracepoint:signal:signal_generate /comm == "uq_kbs" &&
	    arg0 == 10 && arg3 == 0 && arg4 > 0/ { @[comm] = count(); }' \
	    "$TMP/uq_kbs" -c 'trap "" USR1 USR2; i=0
	    while [ $i -lt 300 ]; do kill -USR1 $$; kill -USR2 $$
	    i=$((i + 1)); done'
	kbpf_took a1
	grep -qx '@\[uq_kbs\]: 300' "$TMP/a1.out" ||
	    fail "not 300 SIGUSR1: $(cat "$TMP/a1.out" "$TMP/a1.err")"
	;;
kbpfrefused)
	cp /bin/dd "$TMP/uq_kbx" || exit 2
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	for k in ok refuse; do
		USERDT_TEST_KBPF=$k dtd_serve "$DTD"
		# two rules: two pcbs refused, said once
		bt_go r$k 'tracepoint:raw_syscalls:sys_enter /comm == "uq_kbx"/ {
		    @[comm] = count(); }
		    tracepoint:raw_syscalls:sys_exit /comm == "uq_kbx"/ {
		    @x[comm] = count(); }'
		"$TMP/uq_kbx" if=/dev/zero of=/dev/null bs=1 count=500 \
		    2> /dev/null || fail "uq_kbx"
		bt_end r$k
		kill -TERM "$DTDPID"
		wait "$DTDPID"
		DTDPID=
		cp "$TMP/dtd.log" "$TMP/dtd.$k.log"
		grep -qx '0 events dropped' "$TMP/r$k.err" ||
		    fail "r$k: lost: $(cat "$TMP/r$k.err")"
	done
	kbpf_refused "$TMP/dtd.ok.log"
	kbpf_took rok
	n=$(grep -c "no count in the kernel (program: .*R8" \
	    "$TMP/dtd.refuse.log")
	[ "$n" -eq 1 ] ||
	    fail "refusal said $n times: $(cat "$TMP/dtd.refuse.log")"
	grep -qx "0 of them counted by the kernel" "$TMP/rrefuse.err" ||
	    fail "refused, yet counted by the kernel: $(cat "$TMP/rrefuse.err")"
	[ -s "$TMP/rok.out" ] || fail "no output"
	diff -u "$TMP/rok.out" "$TMP/rrefuse.out" ||
	    fail "the sampled fallback counted otherwise"
	;;
kbpfwait)
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	command -v strace > /dev/null || fail "no strace"
	printf '#!/bin/sh\nexec strace -f -qq -e trace=membarrier -o "%s" "%s" "$@"\n' \
	    "$TMP/mb" "$DTD" > "$TMP/dtd-strace" &&
	    chmod +x "$TMP/dtd-strace" || exit 2
	# strace does not end on a TERM; its child dtd does, and so it
	trap '[ -n "$DTDPID" ] && d=$(ps -o pid= --ppid "$DTDPID") &&
	    kill -TERM $d; dtd_cleanup' EXIT
	dtd_serve "$TMP/dtd-strace"
	# 10 reads a second (each print() reads) for 20 of them
	bt_go w 'tracepoint:raw_syscalls:sys_enter { @a[comm] = count(); }
	    tracepoint:raw_syscalls:sys_exit { @b[comm] = count(); }
	    tracepoint:sched:sched_switch { @c[comm] = count(); }
	    tracepoint:sched:sched_wakeup { @d[comm] = count(); }
	    interval:hz:10 { @t = count(); print(@t); }'
	p=0
	while [ $p -lt 20 ] && read -r -t 30 l <&6; do
		case $l in @t:*) p=$((p + 1));; esac
	done
	[ $p -eq 20 ] || fail "w: $p prints of 20 in time: $(cat "$TMP/w.err")"
	bt_end w
	grep -q "^[1-9][0-9]* of them counted by the kernel" "$TMP/w.err" ||
	    fail "w: not the kernel's: $(cat "$TMP/w.err")"
	# strace's child is dtd: stopped, strace ends with it
	d=$(ps -o pid= --ppid "$DTDPID") && [ -n "$d" ] || fail "no dtd"
	kill -TERM $d
	wait "$DTDPID"
	DTDPID=
	kbpf_refused
	n=$(grep -c "MEMBARRIER_CMD_GLOBAL" "$TMP/mb")
	# 20 reads and a few more, the stop's 4; four each would be 80+;
	# none would say strace named the command otherwise, checking nothing
	[ "$n" -ge 1 ] || fail "no MEMBARRIER_CMD_GLOBAL: $(head -5 "$TMP/mb")"
	[ "$n" -le 40 ] || fail "$n grace periods for about 20 reads"
	;;
kbpfpidns)
	# the whole case in a pid namespace (and its /proc) of its own:
	# dtd reads its callers there
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	unshare --pid --fork --mount-proc bash "$0" "$BTRACE" "$DTD" \
	    kbpfpidns-in || exit $?
	;;
kbpfpidns-in)
	cp /bin/dd "$TMP/uq_kbp" || exit 2
	bt_go ns 'tracepoint:raw_syscalls:sys_enter /comm == "uq_kbp"/ {
	    @[comm, pid] = count(); }'
	kcount_pidns uq_kbp
	;;
kbpfcomm)
	PY=
	trap '[ -n "$PY" ] && kill $PY; dtd_cleanup' EXIT
	# Whether a kernel worker wakes anything while both record is the
	# machine's to decide (under a busy suite the sampled path saw
	# none in one run): up to five rounds until one did; a worker the
	# two name differently fails at once.
	for round in 1 2 3 4 5; do
		rm -f "$TMP/c" "$TMP/s"
		bt_go c 'tracepoint:sched:sched_wakeup { @k[comm] = count(); }'
		bt_park
		bt_go s 'tracepoint:sched:sched_wakeup { @s[comm] = count();
		    @x = max(0); }'
		# work for the kernel's workers: a file written back
		i=0
		while [ $i -lt 20 ]; do
			dd if=/dev/zero of="$TMP/wb" bs=64k count=4 \
			    conv=fsync 2> /dev/null || fail "dd"
			i=$((i + 1))
		done
		bt_end s
		bt_unpark
		bt_end c
		kbpf_took c
		cat "$TMP/s.out" >> "$TMP/c.out"
		sed -n 's/^@k\[\(kworker\/[^]]*\)\]: .*/\1/p' "$TMP/c.out" |
		    sort -u > "$TMP/k.w"
		sed -n 's/^@s\[\(kworker\/[^]]*\)\]: .*/\1/p' "$TMP/c.out" |
		    sort -u > "$TMP/s.w"
		# a worker the sampled path named with its work, the
		# program too
		while read -r w; do
			case $w in *-*|*+*) continue;; esac
			grep -q "^$w[-+]" "$TMP/s.w" &&
			    ! grep -qx "$w" "$TMP/s.w" &&
			    fail "program: $w, sampled: $(grep "^$w[-+]" \
			    "$TMP/s.w")"
		done < "$TMP/k.w"
		grep -q '[-+]' "$TMP/s.w" && break
	done
	grep -q '[-+]' "$TMP/s.w" ||
	    fail "no worker named with its work in $round rounds: $(cat \
	    "$TMP/c.out")"
	[ -s "$TMP/k.w" ] || fail "the program named no worker"
	;;
kbpfshare)
	cp /bin/dd "$TMP/uq_kbs" || exit 2
	PY=
	trap '[ -n "$PY" ] && kill $PY; dtd_cleanup' EXIT
	# sampled: arg0 is no key the program reads
	bt_go sa 'tracepoint:raw_syscalls:sys_enter /comm == "uq_kbs"/ {
	    @s[arg0] = count(); @n = count(); }'
	bt_park
	bt_go sb 'tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }'
	strace -f -qq -c -U calls -o "$TMP/s.strace" "$TMP/uq_kbs" \
	    if=/dev/zero of=/dev/null bs=1 count=3000 2> /dev/null ||
	    fail "strace"
	bt_end sb
	bt_unpark
	bt_end sa
	kbpf_refused
	cs=$(awk '$NF == "total" { print $1 }' "$TMP/s.strace")
	[ -n "$cs" ] || fail "no strace count"
	kbpf_took sb
	grep -qx '0 events dropped' "$TMP/sa.err" ||
	    fail "sa: lost: $(cat "$TMP/sa.err")"
	grep -qx "@n: $cs" "$TMP/sa.out" ||
	    fail "the sampled open beside the program: strace $cs: $(grep @n "$TMP/sa.out")"
	grep -qx "@\[uq_kbs\]: $cs" "$TMP/sb.out" ||
	    fail "the program's: strace $cs: $(grep uq_kbs "$TMP/sb.out")"
	;;
kbpfovf)
	# a renamed true, run again and again: a new tid each time
	cp /bin/true "$TMP/uq_kbo" || exit 2
	# both tables on the same run, so what each holds is comparable
	PY=
	trap '[ -n "$PY" ] && kill $PY; dtd_cleanup' EXIT
	bt_go o4096 'tracepoint:raw_syscalls:sys_enter /comm == "uq_kbo"/ {
	    @[tid] = count(); }' "BTRACE_AGGSIZE=4096"
	bt_park
	bt_go o16 'tracepoint:raw_syscalls:sys_enter /comm == "uq_kbo"/ {
	    @[tid] = count(); }' "BTRACE_AGGSIZE=16"
	i=0
	while [ $i -lt 100 ]; do
		"$TMP/uq_kbo" || fail "uq_kbo"
		i=$((i + 1))
	done
	bt_end o16
	bt_unpark
	bt_end o4096
	kbpf_took o4096
	kbpf_took o16
	kbpf_refused
	all=$(awk '{ s += $2 } END { print s + 0 }' "$TMP/o4096.out")
	[ "$(wc -l < "$TMP/o4096.out")" -eq 100 ] ||
	    fail "large table: not 100 tids: $(cat "$TMP/o4096.out")"
	grep -qx "0 events dtd's table could not hold" "$TMP/o4096.err" ||
	    fail "large table overflowed: $(cat "$TMP/o4096.err")"
	held=$(awk '{ s += $2 } END { print s + 0 }' "$TMP/o16.out")
	[ "$(wc -l < "$TMP/o16.out")" -le 16 ] ||
	    fail "more entries than the table: $(cat "$TMP/o16.out")"
	said=$(sed -n "s/^\([0-9]*\) events not aggregated: dtd's table is full.*/\1/p" \
	    "$TMP/o16.err" | awk '{ s += $1 } END { print s + 0 }')
	[ "$said" -gt 0 ] || fail "a full table, silent: $(cat "$TMP/o16.err")"
	[ $((held + said)) -eq "$all" ] ||
	    fail "held $held + said $said != $all: $(cat "$TMP/o16.err")"
	;;
*)
	echo "run-kbpf.sh: no case $3" >&2
	exit 2
	;;
esac
exit 0
