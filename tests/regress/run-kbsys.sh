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
# System-wide syscall probes counted in a kernel eBPF program (issue 22,
# dt_tp_ksysbpf.c).  Cases:
#   kbsys     a process started before btrace, not launched, makes a
#             known number of openat calls beside a dd flat out on the
#             other core: syscall:openat:entry { @[comm] = count(); }
#             system-wide counts them exactly, nothing dropped, every
#             event the kernel's, none through perf's buffers; bpftrace
#             counts as many.
#   kbsyslaunched  the same while a dtrun'd process makes openat calls:
#             its own are counted once (the program skips the library's
#             processes), and none of its start (the library's, hidden
#             from its exec on; the loader's, under dtrun -L), where
#             bpftrace counts those too.
#   kbsysoff  quiet: USERDT_KBPF=0's output is the program's, byte for
#             byte, for two probes of one rule keyed by the probe, of a
#             process started after btrace (the sampled path has no
#             name for one from before).
#   kbsysargs  as kbsysoff, with filters of the record's values on four
#             probes (arguments, one past openat's own, return values,
#             errno, the CPU; <, >=, ==), over calls that succeed and
#             calls that fail: the program's counts are USERDT_KBPF=0's,
#             every one of them the kernel's.
#   kbsysforkname  the sampled feed (a sum is no count): a shell's
#             child's execve entry carries the shell's name, as the
#             kernel names the call (its fork record gives the child its
#             maker's name until the exec), not the program's, which
#             /proc says by the time the record is read.
#   kbsysfork  a launched process forks N children that _exit: its
#             clone returns count 2N, the children's once though the
#             kernel reports each before the child's hooks attach.
#   kbsysspawn  a launched process posix_spawns /bin/true N times: the
#             children's execve entries, made through the parent's ring
#             by children that never attach, count N.
#   kbsysforkp, kbsysspawnp  the same keyed by pid alone, a count the
#             hooks could keep in their rings' headers (UDT_EN_COUNT),
#             which no drop of the program's calls would see: each
#             child's key 1, a fork parent's N.
#             (A rule with no key takes the same path in the hooks, but
#             counts every process's calls: 6 to 180 more seen beside.)
#   kbsysforkx, kbsysspawnx  kbsysfork and kbsysspawn with the tracee in
#             a pid namespace of its own (unshare(1), which must work):
#             dtd cannot tell its children's records, so the program
#             counts all of its calls.
#   kbsysstart  dtrun -L, dtrun and LD_PRELOAD starts (these under
#             strace, slowed) of 3 openat each while btrace reads at 100
#             Hz: 3 each, the loader's too under dtrun (strace's count
#             untraced); a read during a start holds the process's
#             counts until its attach.
#   kbsysexec  untraced shells that run a child and exec a sleep,
#             started while btrace reads at 100 Hz: each name's openat
#             and execve counts are bpftrace's (every image young until
#             a read decides it is the program's; the shell's calls an
#             earlier image's by the time a read comes).
#   kbsysself  dtd's own drains (bpf(2), membarrier(2)), seen by a
#             print at 10 Hz, are never counted: dtd's pid is no key.
#   kbsysshare  a sampled rule of another open on the same probe gets
#             every event while the program counts there (the program
#             must return 1 for perf to deliver them).
#   kbsyspidns  a dtd in a pid namespace of its own samples (the program
#             reads the initial namespace's tgids, the tracee hash and
#             the records hold dtd's): it says why, nothing is counted
#             by the kernel, the pid is as dtd's namespace sees it.
# Root: root always has bpf(2), so a dtd that samples instead fails
# the case, never skips it.
#
# usage: run-kbsys.sh btrace dtd case
#     (env OPENAT_WAIT, OPENAT_N, FORK_SPAWN, DTRUN)
set -u
[ $# -eq 3 ] || { echo "usage: $0 btrace dtd case" >&2; exit 2; }
BTRACE=$1
DTD=$2
N=20000

. "$(dirname "$0")/lib.sh"
# the syscall groups' program, on unless USERDT_KSYSBPF=0 (dt_tp_ksysbpf.c)
export USERDT_KSYSBPF=1

# bpftrace counting the openat calls of the names $@ by name; returns
# once it counts (its BEGIN runs after its probes are attached)
bpf_go() {
	local pred="" n l

	for n in "$@"; do
		pred="$pred${pred:+ || }comm == \"$n\""
	done
	mkfifo "$TMP/bpf" || exit 2
	bpftrace -e "BEGIN { printf(\"go\\n\"); }
	    ${BPF_PROBES:-tracepoint:syscalls:sys_enter_openat} /$pred/ {
		@[${BPF_KEY:-comm}] = count(); }" \
	    > "$TMP/bpf" 2> "$TMP/bpf.err" &
	BPFPID=$!
	exec 5< "$TMP/bpf"
	# "Attaching N probes..." first
	while read -r -t 60 l <&5 && [ "$l" != go ]; do
		:
	done
	[ "$l" = go ] || fail "bpftrace: $l $(cat "$TMP/bpf.err")"
}

bpf_end() {
	int_stop "$BPFPID"
	wait "$BPFPID" || fail "bpftrace: exit $?: $(cat "$TMP/bpf.err")"
	BPFPID=
	sed -n "/^@/p" <&5 > "$TMP/bpf.out"
	exec 5<&-
}

# the helper, started now and running, blocked until w_go
w_start() {
	local l

	rm -f "$TMP/w" "$TMP/wr"
	mkfifo "$TMP/w" "$TMP/wr" || exit 2
	"$TMP/uq_ksw" $N ${W_FAIL:+fail} < "$TMP/w" > "$TMP/wr" &
	WPID=$!
	exec 8> "$TMP/w" 9< "$TMP/wr"
	read -r -t 30 l <&9 && [ "$l" = ready ] || fail "uq_ksw: $l"
	exec 9<&-
}

w_go() {
	echo x >&8
	exec 8>&-
	wait "$WPID" || fail "uq_ksw: exit $?"
	WPID=
}

# fail where dtd said it samples instead: the program is the subject
kbsys_refused() {
	if grep -q "no count in the kernel" "$TMP/dtd.log"; then
		fail "sampled: $(grep "no count in the kernel" "$TMP/dtd.log")"
	fi
}

# the events of btrace $1 counted by the kernel, some: the program took it
kbsys_took() {
	local n

	n=$(sed -n 's/^\([0-9]*\) of them counted by the kernel$/\1/p' \
	    "$TMP/$1.err")
	[ "${n:-0}" -gt 0 ] || fail "$1: none the kernel's: $(cat "$TMP/$1.err")"
}

# stop dtd, started by dtd_serve
dtd_end() {
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
}

# $1's events all counted by the kernel, none dropped
all_kernel() {
	local n

	grep -qx '0 events dropped' "$TMP/$1.err" &&
	    grep -qx "0 events dtd's table could not hold" "$TMP/$1.err" ||
	    fail "$1: lost: $(cat "$TMP/$1.err")"
	n=$(sed -n 's/^\([0-9]*\) events aggregated by dtd$/\1/p' \
	    "$TMP/$1.err")
	grep -qx "${n:-x} of them counted by the kernel" "$TMP/$1.err" ||
	    fail "$1: not the kernel's: $(cat "$TMP/$1.err")"
}

# kbsys_pair NAME PROG: PROG over uq_ksw's N calls, uq_ksw started after
# btrace (the sampled path names a process by the exec it read; one from
# before is "[pid]" to it), once with the program ($TMP/NAME1.*) and
# once with USERDT_KBPF=0 (NAME0): nothing dropped, the first's events
# all the kernel's, none of the second's
kbsys_pair() {
	local name=$1 prog=$2 k

	for k in 1 0; do
		USERDT_KBPF=$k dtd_serve "$DTD"
		bt_go "$name$k" "$prog"
		w_start
		w_go
		bt_end "$name$k"
		dtd_end
		[ $k = 0 ] || kbsys_refused
		grep -qx '0 events dropped' "$TMP/$name$k.err" ||
		    fail "$name$k: lost: $(cat "$TMP/$name$k.err" "$TMP/dtd.log")"
	done
	all_kernel "${name}1"
	grep -qx "0 of them counted by the kernel" "$TMP/${name}0.err" ||
	    fail "USERDT_KBPF=0 counted in the kernel: $(cat "$TMP/${name}0.err")"
}

# kbsys_same NAME: kbsys_pair's two outputs byte for byte; the difference
# in the failure's line (a test log may keep no more)
kbsys_same() {
	diff -u "$TMP/${1}0.out" "$TMP/${1}1.out" > "$TMP/$1.diff" ||
	    fail "not USERDT_KBPF=0's output: $(tail -n +3 "$TMP/$1.diff" |
	    tr '\n' ' ') ${1}0: $(tr '\n' ' ' < "$TMP/${1}0.err") dtd: $(grep -v \
	    '^dtd: \(kprobe\|profile\)' "$TMP/dtd.log" | tr '\n' ' ')"
}

command -v bpftrace > /dev/null || fail "bpftrace is not installed"
dtd_tmp
dtd_need "kbsys"
cp "$OPENAT_WAIT" "$TMP/uq_ksw" && cp "$OPENAT_N" "$TMP/uq_ksl" &&
    cp "$FORK_SPAWN" "$TMP/uq_ksf" && cp /bin/dd "$TMP/uq_ksn" &&
    cp /bin/bash "$TMP/uq_ksh" || exit 2
NOISE=
BPFPID=
WPID=
trap '[ -n "$NOISE" ] && kill -- -$NOISE 2> /dev/null
    [ -n "$BPFPID" ] && kill $BPFPID 2> /dev/null
    [ -n "$WPID" ] && kill $WPID 2> /dev/null
    dtd_cleanup' EXIT
case $3 in
kbsys|kbsyslaunched)
	dtd_serve "$DTD"
	setsid "$TMP/uq_ksn" if=/dev/zero of=/dev/null bs=1 2> /dev/null &
	NOISE=$!
	w_start
	bpf_go uq_ksw uq_ksl
	# The launched tracee's records wait for room rather than drop
	# (btrace -c's default): a loaded machine must not fail the count.
	[ "$3" = kbsys ] || BT_FLAGS=--lossless
	bt_go ks 'syscall:openat:entry { @[comm] = count(); }'
	BT_FLAGS=
	if [ "$3" = kbsyslaunched ]; then
		"$DTRUN" -L -s "$TMP/ingest.sock" "$TMP/uq_ksl" $N ||
		    fail "dtrun uq_ksl"
	fi
	w_go
	bt_end ks
	bpf_end
	kill -- -$NOISE 2> /dev/null
	wait $NOISE 2> /dev/null
	NOISE=
	kbsys_refused
	grep -qx "@\[uq_ksw\]: $N" "$TMP/ks.out" ||
	    fail "uq_ksw: $N calls: $(grep uq_ks "$TMP/ks.out") $(cat "$TMP/ks.err")"
	grep -qx "@\[uq_ksw\]: $N" "$TMP/bpf.out" ||
	    fail "bpftrace: $(cat "$TMP/bpf.out")"
	grep -qx '0 events dropped' "$TMP/ks.err" &&
	    grep -qx "0 events dtd's table could not hold" "$TMP/ks.err" ||
	    fail "lost: $(cat "$TMP/ks.err")"
	if [ "$3" = kbsys ]; then
		all_kernel ks
	else
		# once (twice would be 2N), and none of its start's: not
		# the library's (the program saw the exec and hid them),
		# nor, under -L, the loader's; bpftrace counts all of them
		b=$(sed -n 's/^@\[uq_ksl\]: //p' "$TMP/bpf.out")
		[ -n "$b" ] && [ "$b" -gt $N ] && [ "$b" -lt $((N + 100)) ] ||
		    fail "bpftrace: $(cat "$TMP/bpf.out") btrace: $(cat "$TMP/ks.out" "$TMP/ks.err")"
		grep -qx "@\[uq_ksl\]: $N" "$TMP/ks.out" ||
		    fail "uq_ksl: $N (bpftrace $b): $(grep uq_ks "$TMP/ks.out") $(cat "$TMP/ks.err")"
		# the tracee's from its hooks, not the kernel's
		n=$(sed -n 's/^\([0-9]*\) of them counted by the kernel$/\1/p' \
		    "$TMP/ks.err")
		t=$(sed -n 's/^\([0-9]*\) events aggregated by dtd$/\1/p' \
		    "$TMP/ks.err")
		[ $((t - n)) -ge $N ] ||
		    fail "the hooks' events: $(cat "$TMP/ks.err")"
	fi
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	rec=$(sed -n 's/^dtd: tracepoint: \([0-9]*\) records.*/\1/p' \
	    "$TMP/dtd.log")
	[ "${rec:-0}" -lt $((N / 10)) ] ||
	    fail "the calls went through perf's buffers: $(cat "$TMP/dtd.log")"
	;;
kbsysstart)
	# reads at 100 Hz while launched processes start: never a count
	# of the library's start.  Under dtrun -L, 3 a start; under
	# dtrun, the loader's opens too, handed over as records: as many
	# as strace sees of the program untraced.  The dtrun'd ones attach
	# within a read's period; the two LD_PRELOAD'd ones start under
	# strace, each openat delayed 10 ms (a read's period; with 30 ms
	# a start under a loaded machine once passed the 5 s a hold may
	# last), so that reads come before their attach and hold their
	# counts until it.
	strace -qq -e trace=openat -o "$TMP/uq_ksl.st" "$TMP/uq_ksl" 3 ||
	    fail "strace uq_ksl"
	U=$(grep -c "^openat(" "$TMP/uq_ksl.st")
	dtd_serve "$DTD"
	bt_go st 'syscall:openat:entry /comm == "uq_ksl"/ { @ = count(); }
	    interval:hz:100 { print(@); }'
	for i in 1 2 3 4 5 6 7 8; do
		"$DTRUN" -L -s "$TMP/ingest.sock" "$TMP/uq_ksl" 3 ||
		    fail "dtrun -L uq_ksl"
	done
	for i in 1 2 3 4; do
		"$DTRUN" -s "$TMP/ingest.sock" "$TMP/uq_ksl" 3 ||
		    fail "dtrun uq_ksl"
	done
	for i in 1 2; do
		strace -f -qq -o /dev/null -e trace=openat \
		    -e inject=openat:delay_enter=10000 env \
		    LD_PRELOAD="$USERDT_PRELOAD" \
		    USERDT_SOCKET="$TMP/ingest.sock" USERDT_LOADER=0 \
		    "$TMP/uq_ksl" 3 || fail "strace uq_ksl"
	done
	# and one not launched, all of whose calls are the program's,
	# its loader's too
	"$TMP/uq_ksl" 3 || fail "uq_ksl"
	bt_end st
	dtd_end
	kbsys_refused
	kbsys_took st
	want=$((8 * 3 + 4 * U + 2 * 3 + U))
	[ "$(tail -n 1 "$TMP/st.out")" = "@: $want" ] ||
	    fail "$want calls: $(tail -n 1 "$TMP/st.out")"
	;;
kbsysexec)
	# untraced processes exec'd while btrace reads at 100 Hz, in
	# chains (a shell that runs a child, then execs a sleep that
	# outlives a read): each name's openat and execve counts are
	# bpftrace's, though each image's calls are young until a read
	# finds it will not attach, and the shell's are an earlier
	# image's when the read comes during the sleep
	cp /bin/dash "$TMP/uq_kesh" && cp "$OPENAT_N" "$TMP/uq_ke1" &&
	    cp /bin/sleep "$TMP/uq_ke2" || exit 2
	dtd_serve "$DTD"
	BPF_PROBES='tracepoint:syscalls:sys_enter_openat,
	    tracepoint:syscalls:sys_enter_execve' BPF_KEY='comm, probe' \
	    bpf_go uq_kesh uq_ke1 uq_ke2
	bt_go ex 'syscall:openat:entry, syscall:execve:entry
	    /comm == "uq_kesh" || comm == "uq_ke1" || comm == "uq_ke2"/ {
		@[comm, probe] = count(); }
	    interval:hz:100 { print(@); }
	    END { printf("end\n"); }'
	for i in 1 2 3 4 5 6 7 8 9 10; do
		"$TMP/uq_kesh" -c "$TMP/uq_ke1 $i; exec $TMP/uq_ke2 0.03" ||
		    fail "uq_kesh"
	done
	kill -TERM "$BTPID"
	wait "$BTPID" || fail "ex: exit $?: $(cat "$TMP/ex.err")"
	BTPID=
	sed -n '/^end$/,$p' <&6 | grep '^@' > "$TMP/ex.out"
	exec 6<&-
	bpf_end
	dtd_end
	kbsys_refused
	kbsys_took ex
	sed -n 's/^@\[\([a-z0-9_]*\), syscall:\([a-z]*\):entry\]: /\1 \2 /p' \
	    "$TMP/ex.out" | sort > "$TMP/ex.n"
	sed -n 's/^@\[\([a-z0-9_]*\), tracepoint:syscalls:sys_enter_\([a-z]*\)\]: /\1 \2 /p' \
	    "$TMP/bpf.out" | sort > "$TMP/bpf.n"
	[ -s "$TMP/bpf.n" ] || fail "bpftrace: $(cat "$TMP/bpf.out")"
	diff -u "$TMP/bpf.n" "$TMP/ex.n" ||
	    fail "not bpftrace's counts: $(cat "$TMP/ex.err")"
	;;
kbsyspidns)
	# the whole case in a pid namespace (and its /proc) of its own
	unshare --pid --fork --mount-proc bash "$0" "$BTRACE" "$DTD" \
	    kbsyspidns-in || exit $?
	;;
kbsyspidns-in)
	dtd_serve "$DTD"
	bt_go ns 'syscall:read:entry /comm == "uq_ksn"/ {
	    @[comm, pid] = count(); }'
	kcount_pidns uq_ksn
	;;
kbsysoff)
	# few enough calls for perf's buffers to hold them all
	N=500
	kbsys_pair q 'syscall:openat:entry, syscall:close:entry
	    /comm == "uq_ksw"/ { @[comm, probe] = count(); }'
	# and the loader's (its library path's misses among them)
	n=$(sed -n 's/^@\[uq_ksw, syscall:openat:entry\]: //p' "$TMP/q1.out")
	[ -n "$n" ] && [ "$n" -ge $N ] && [ "$n" -lt $((N + 100)) ] ||
	    fail "no output: $(cat "$TMP/q1.out")"
	kbsys_same q
	;;
kbsysargs)
	N=500
	W_FAIL=1
	kbsys_pair a 'syscall:close:entry /comm == "uq_ksw" &&
	    arg0 >= 3/ { @[comm, probe] = count(); }
	    syscall:close:return /comm == "uq_ksw" && retval < 0 &&
	    errno == 9/ { @[comm, probe] = count(); }
	    syscall:openat:entry /comm == "uq_ksw" && arg5 == 0 &&
	    arg2 == 0 && cpu >= 0/ { @[comm, probe] = count(); }
	    syscall:openat:return /comm == "uq_ksw" &&
	    (errno == 2 || retval >= 3)/ { @[comm, probe] = count(); }'
	# each rule its N at least: the failing calls were made and kept
	for p in close:entry close:return openat:entry openat:return; do
		n=$(sed -n "s/^@\[uq_ksw, syscall:$p\]: //p" "$TMP/a1.out")
		[ -n "$n" ] && [ "$n" -ge $N ] && [ "$n" -lt $((N * 2 + 100)) ] ||
		    fail "$p: $(cat "$TMP/a1.out")"
	done
	kbsys_same a
	;;
kbsysforkname)
	dtd_serve "$DTD"
	bt_go fn 'syscall:execve:entry /comm == "uq_ksh" || comm == "uq_ksl"/ {
	    printf("%s\n", comm); }'
	# "; true": the shell forks for the first command, not execs.  It
	# execs on CPU 1 and forks on CPU 0 (taskset moves it between):
	# its fork, in CPU 0's buffer, is read after its exec's rename in
	# CPU 1's, or its child takes the name it had before that exec.
	taskset -c 1 "$TMP/uq_ksh" -c "taskset -p -c 0 \$\$ > /dev/null
	    \"$TMP/uq_ksl\" 1; true" || fail "uq_ksh"
	# the two calls' lines (taskset's execve, uq_ksl's), read as dtd
	# hands them over
	l1=
	l2=
	read -r -t 30 l1 <&6 && read -r -t 30 l2 <&6
	bt_end fn
	dtd_end
	[ "$l1 $l2" = "uq_ksh uq_ksh" ] ||
	    fail "not the shell's name: '$l1' '$l2' $(cat "$TMP/fn.err")"
	;;
kbsysfork|kbsysspawn|kbsysfork[px]|kbsysspawn[px])
	N=50
	what=${3#kbsys}
	mode=${what%[px]}
	key=${what#"$mode"}
	if [ "$mode" = fork ]; then
		# glibc's fork() is clone(2); the parent's N and the
		# children's N returns
		probe=syscall:clone:return
		want=$((2 * N))
	else
		probe=syscall:execve:entry
		want=$N
	fi
	case $key in
	p)	agg='@[pid] = count();' ;;	# the hooks' count alone
	# one pcb of both (btrace shares a probe's rules): the keyless
	# count is the pid-keyed one's sum, which the machine's other
	# processes, beside, would leave no exact bound for
	*)	agg='@[comm] = count();' ;;
	esac
	run=$DTRUN
	if [ "$key" = x ]; then
		# the tracee in a pid namespace of its own, dtd in ours
		unshare --pid --fork --mount-proc true ||
		    fail "unshare --pid --fork --mount-proc: unavailable"
		printf '#!/bin/sh\nexec unshare --pid --fork --mount-proc %s "$@"\n' \
		    "$DTRUN" > "$TMP/dtrun_ns" && chmod +x "$TMP/dtrun_ns" ||
		    exit 2
		run=$TMP/dtrun_ns
	fi
	dtd_serve "$DTD"
	bt_go f "$probe { $agg }"
	"$run" -s "$TMP/ingest.sock" "$TMP/uq_ksf" $mode $N "$TMP/f.pids" ||
	    fail "dtrun uq_ksf $mode"
	bt_end f
	dtd_end
	kbsys_refused
	kbsys_took f
	case $key in
	p)
		# each child's key once; the parent's its N returns (fork)
		# or none (spawn), with the few dtrun made as that pid
		# before it exec'd (its children's 50 more were the bug)
		p=$(sed -n 's/^p //p' "$TMP/f.pids")
		[ -n "$p" ] || fail "no pids: $(cat "$TMP/f.pids")"
		v=$(sed -n "s/^@\[$p\]: //p" "$TMP/f.out")
		# spawn: dtrun's execve of uq_ksf, the program's (the
		# launcher's image, not the young tracee's start)
		[ "$mode" = fork ] && lo=$N || lo=1
		[ "${v:-0}" -ge $lo ] && [ "${v:-0}" -lt $((lo + 5)) ] ||
		    fail "parent $p: $lo and dtrun's few: ${v:-none}"
		bad=0
		for c in $(sed -n 's/^c //p' "$TMP/f.pids"); do
			v=$(sed -n "s/^@\[$c\]: //p" "$TMP/f.out")
			if [ "$v" != 1 ]; then
				echo "child $c: ${v:-none}, not 1" >&2
				bad=$((bad + 1))
			fi
		done
		[ $bad -eq 0 ] || fail "$bad children counted other than once"
		;;
	*)
		grep -qx "@\[uq_ksf\]: $want" "$TMP/f.out" ||
		    fail "uq_ksf: $want calls: $(cat "$TMP/f.out" "$TMP/f.err")"
		;;
	esac
	;;
kbsysself)
	dtd_serve "$DTD"
	# each print drains the program's counts: bpf(2), membarrier(2);
	# an untraced program's openat, counted there too, shows that the
	# program ran at all (else no key of dtd's would prove nothing)
	bt_go s 'syscall:bpf:entry, syscall:membarrier:entry,
	    syscall:openat:entry { @[pid] = count(); }
	    interval:hz:10 { printf("tick\n"); print(@); }'
	n=0
	while [ $n -lt 10 ] && read -r -t 30 l <&6; do
		if [ "$l" = tick ]; then
			n=$((n + 1))
			[ $n -eq 1 ] && { "$OPENAT_N" 5 || fail "openat_n"; }
		fi
		echo "$l" >> "$TMP/s.ticks"
	done
	[ $n -eq 10 ] || fail "10 ticks: $n: $(cat "$TMP/s.err")"
	bt_end s
	cat "$TMP/s.ticks" >> "$TMP/s.out"
	kill -0 "$DTDPID" || fail "dtd died"
	dpid=$DTDPID
	dtd_end
	kbsys_refused
	kbsys_took s
	if grep -q "^@\[$dpid\]" "$TMP/s.out"; then
		fail "dtd's own calls counted: $(grep "^@\[$dpid\]" "$TMP/s.out" | tail -1)"
	fi
	;;
kbsysshare)
	N=500
	dtd_serve "$DTD"
	# sampled: arg1 is no key the program reads
	bt_go sa 'syscall:openat:entry /comm == "uq_ksw"/ {
	    @s[arg1 > 0] = count(); @n = count(); }'
	SA=$BTPID
	exec 7<&6
	bt_go sb 'syscall:openat:entry { @[comm] = count(); }'
	w_start
	w_go
	bt_end sb
	BTPID=$SA
	exec 6<&7 7<&-
	bt_end sa
	dtd_end
	kbsys_refused
	all_kernel sb
	! grep -q "^[1-9][0-9]* of them counted by the kernel$" "$TMP/sa.err" ||
	    fail "sa: not sampled: $(cat "$TMP/sa.err")"
	n=$(sed -n 's/^@\[uq_ksw\]: //p' "$TMP/sb.out")
	[ -n "$n" ] && [ "$n" -ge $N ] ||
	    fail "sb: $N calls: $(cat "$TMP/sb.out")"
	# the sampled path names a process by the exec it read: its count
	# takes the shell child's redirections too, so at least N, not n
	m=$(sed -n 's/^@n: //p' "$TMP/sa.out")
	[ -n "$m" ] && [ "$m" -ge $N ] && [ "$m" -lt $((n + 10)) ] ||
	    fail "the sampled open: $N calls: $(cat "$TMP/sa.out" "$TMP/sa.err")"
	;;
*)
	fail "unknown case $3"
	;;
esac
exit 0
