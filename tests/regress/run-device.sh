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
# btrace against a real device: start a private dtd on a temporary device
# path (FUSE-file front end), run one case, stop dtd by its pid.
#
# usage: run-device.sh btrace dtd case
set -u

[ $# -eq 3 ] || { echo "usage: $0 btrace dtd case" >&2; exit 2; }
BTRACE=$1
DTD=$2
CASE=$3

. "$(dirname "$0")/lib.sh"
dtd_start

case $CASE in
list)
	bt -l > "$TMP/out" 2>&1 || fail "btrace -l: $(cat "$TMP/out")"
	# OpenBSD's registration order: profile, then interval
	head -2 "$TMP/out" > "$TMP/head"
	printf 'profile:hz:97\ninterval:hz:1\n' | diff -u - "$TMP/head" ||
	    fail "probe list"
	# no raw sys%N when the name is known
	if grep -q '^syscall:sys%[0-9]*:' "$TMP/out"; then
		grep '^syscall:sys%' "$TMP/out" | head -3
		fail "untranslated syscall names"
	fi
	;;
env)
	DT_DEVICE=$DEV "$BTRACE" -l > "$TMP/out" 2>&1 || fail "DT_DEVICE"
	grep -qx 'interval:hz:1' "$TMP/out" || fail "DT_DEVICE list"
	;;
exit)
	bt -e 'interval:hz:100 { @n = count(); if (@n == 5) { exit(); } }
	    END { printf("end %d\n", @n); }' > "$TMP/out" 2>&1
	rc=$?
	printf 'end 5\n@n: 5\n' | diff -u - "$TMP/out" || fail "output"
	[ $rc -eq 0 ] || fail "exit code $rc"
	;;
stats)
	# BEGIN and END go through filters too: two events filtered
	bt -v -e 'BEGIN /0/ { } END /@n == 0/ { printf("never\n"); }
	    interval:hz:100 { @n = count(); if (@n == 5) { exit(); } }' \
	    > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc"
	printf '@n: 5\n' | diff -u - "$TMP/out" || fail "stdout"
	# A dtd clock thread kept off the CPU by a loaded machine skips
	# ticks, as dt(4)'s does; the count is dt(4)'s, not ours to fix.
	sed -e 1d -e 's/^[0-9][0-9]* clock ticks skipped$/N clock ticks skipped/' \
	    "$TMP/err" > "$TMP/err2"
	printf '%s\n' '0 events dropped' '2 events filtered' \
	    'N clock ticks skipped' '0 recursive events dropped' |
	    diff -u - "$TMP/err2" || fail "-v statistics"
	read -r n rest < "$TMP/err"
	[ "$rest" = "events read" ] && [ "$n" -ge 5 ] ||
	    fail "events read: $n $rest"
	;;
sigint)
	# A string given to %d (known only when it runs) warns at once on
	# unbuffered stderr: the first event has been processed, so the loop
	# is running.
	mkfifo "$TMP/err" || exit 2
	exec 5<>"$TMP/err"
	"$BTRACE" -d "$DEV" -e 'BEGIN { printf("begin\n"); }
	    interval:hz:50 { @n = count(); $s = "up";
		if (@n == 1) { printf("%d\n", $s); } }
	    END { printf("end\n"); }' > "$TMP/out" 2>&5 &
	BTPID=$!
	read -r -t 30 line <&5 || fail "btrace did not start"
	[ "$line" = "btrace:3:34: up: expected numeric value" ] ||
	    fail "unexpected: $line"
	kill -INT "$BTPID"
	wait "$BTPID"
	rc=$?
	BTPID=
	[ $rc -eq 0 ] || fail "exit code $rc after SIGINT"
	# "\n" when the signal ended read(2), none when it came between
	# two reads, as OpenBSD's btrace
	grep -v '^$' "$TMP/out" | sed -n 1,3p > "$TMP/head"
	printf 'begin\n0\nend\n' | diff -u - "$TMP/head" || fail "output"
	grep -q '^@n: [1-9][0-9]*$' "$TMP/out" || fail "map not printed"
	;;
notfound)
	bt -e 'syscall:nonexistent:entry { }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "exit code $rc"
	echo "btrace: probe 'syscall:nonexistent:entry' not found" |
	    diff -u - "$TMP/out" || fail "message"
	# a probe of the device's list close to the name: suggested, by
	# Linux's names of system calls too
	for p in 'syscall:raed:entry syscall:read:entry' \
	    'syscall:brkk:entry syscall:brk:entry' \
	    'syscall:openat:entyr syscall:openat:entry' \
	    'tracepoint:sched:sched_swtich tracepoint:sched:sched_switch'; do
		set -- $p
		bt -e "$1 { }" > "$TMP/out" 2>&1
		[ $? -eq 1 ] || fail "$1: exit code"
		echo "btrace: probe '$1' not found, did you mean '$2'?" |
		    diff -u - "$TMP/out" || fail "$1"
	done
	;;
sametype)
	bt -e 'interval:hz:10 { } interval:hz:20 { }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "exit code $rc"
	echo "btrace: Cannot register multiple probes of the same type: 'interval:hz:20'" |
	    diff -u - "$TMP/out" || fail "message"
	;;
samerule)
	# Several rules on one probe (an extension: OpenBSD's btrace stops
	# at dt(4)'s EEXIST): enabled once, each rule run in script order
	# on every event, each filter on its own.
	bt -e 'interval:hz:100 { @a = count(); printf("a%d\n", @a); }
	    interval:hz:100 /@a == 3/ { printf("b%d\n", @a); exit(); }
	    interval:hz:100 { printf("c%d\n", @a); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	printf 'a1\nc1\na2\nc2\na3\nb3\n@a: 3\n' | diff -u - "$TMP/out" ||
	    fail "timer rules"
	# the union of the rules' needs: one wants comm, the other the
	# arguments and the path string (DTEVT_STRINGS), one enabling
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	bt -vv -c "$OPENAT_N 5" -e 'syscall:openat:entry { @c[comm] = count(); }
	    syscall:openat:entry /comm == "openat_n"/ {
		@p[str(arg1)] = count(); }' > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/err")"
	printf '@c[openat_n]: 5\n@p[/dev/null]: 5\n' |
	    diff -u - "$TMP/out" || fail "syscall rules"
	# (a dynamic command's tree may add its own line: not counted)
	n=$(grep -c "^debug: probe 'syscall:openat:entry' pbn" "$TMP/err")
	[ "$n" = 2 ] || fail "debug lines: $(cat "$TMP/err")"
	;;
profile)
	bt -e 'profile:hz:997 { @[cpu] = count(); @k[kstack] = count(); }
	    interval:ms:200 { exit(); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -q '^@\[[0-9]*\]: [0-9]*$' "$TMP/out" || fail "no samples"
	grep -qx 'kernel\|userland' "$TMP/out" || fail "no stacks"
	;;
command)
	# -c runs the command with the preload library and ends with it
	export USERDT_SOCKET=$TMP/ingest.sock
	bt -c 'echo child; exit 3' -e 'BEGIN { printf("begin\n"); }
	    interval:hz:100 { @n = count(); } END { printf("end\n"); }' \
	    > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -v '^@n: [0-9]*$' "$TMP/out" > "$TMP/rest"
	printf 'begin\nchild\nend\n' | diff -u - "$TMP/rest" || fail "output"
	;;
syscall)
	# syscall probes by name, arguments and retval, through the preload
	export USERDT_SOCKET=$TMP/ingest.sock
	bt -c 'echo hi' -e 'syscall:write:entry /arg0 == 1/ {
		printf("%s %s fd=%d len=%d\n", probe, comm, arg0, arg2); }
	    syscall:write:return /retval == 3/ { @r[comm] = count(); }' \
	    > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -qx 'hi' "$TMP/out" || fail "no command output"
	grep -qx 'syscall:write:entry sh fd=1 len=3' "$TMP/out" ||
	    fail "no write event: $(cat "$TMP/out")"
	grep -qx '@r\[sh\]: [1-9][0-9]*' "$TMP/out" || fail "no retval"
	;;
count)
	# every call the command makes through the wrapper, no more (the
	# shell's loader, which -c traces too, is syscall-loader's)
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	bt -c "$OPENAT_N 57" -e 'syscall:openat:entry { @[comm] = count(); }' \
	    > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	printf '@[openat_n]: 57\n' | diff -u - "$TMP/out" || fail "count"
	;;
ustack)
	# A traced process gone before btrace reads its events: its user
	# stacks still resolve (dtd kept its mappings).  The command stops
	# btrace, runs openat_n to its end (reaped by sh), then lets btrace
	# read: no /proc/PID of openat_n is left by then.  The shell's
	# parent is -c's supervisor, whose parent is btrace.  The loader's
	# calls (no user stack: ptrace saw them) are syscall-loader's.
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	bpid='$(awk "{ print \$4 }" /proc/$PPID/stat)'
	bt -c "kill -STOP $bpid; $OPENAT_N 3; kill -CONT $bpid" \
	    -e 'syscall:openat:entry { @[comm, ustack] = count(); }' \
	    > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -q '^@\[openat_n, $' "$TMP/out" || fail "no stack: $(cat "$TMP/out")"
	# innermost first: the system call instruction in libc's openat
	# (dt(4)'s first entry is the PC of the call), openat_n's main,
	# then libc's start code
	sed -n 2p "$TMP/out" | grep -q '^openat64+0x[0-9a-f]*$' ||
	    fail "system call not first: $(cat "$TMP/out")"
	sed -n 3p "$TMP/out" | grep -q '^main+0x[0-9a-f]*$' ||
	    fail "main not resolved: $(cat "$TMP/out")"
	grep -q '^__libc_start_main' "$TMP/out" ||
	    fail "libc not resolved: $(cat "$TMP/out")"
	;;
alias)
	# Linux names resolve to the probes they map to, OpenBSD-named
	# where OpenBSD has the call; calls without a wrapper have probes
	# too (futex, clone3, through syscall(3)); each made once by the
	# program's code (its loader's calls are syscall-loader's)
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	bt -c "$ALIAS_CALLS" -e 'syscall:pread64:entry, syscall:newfstatat:entry,
	    syscall:getdents64:entry, syscall:rt_sigaction:entry,
	    syscall:brk:entry, syscall:gettid:entry, syscall:futex:entry,
	    syscall:exit_group:entry
	    /comm == "alias_calls"/ { @[probe] = count(); }
	    syscall:clone3:return /comm == "alias_calls"/ {
		printf("clone3 %d\n", retval); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	for p in pread:entry fstatat:entry getdents:entry sigaction:entry \
	    getthrid:entry futex:entry exit:entry; do
		grep -qx "@\[syscall:$p\]: 1" "$TMP/out" ||
		    fail "no $p: $(cat "$TMP/out")"
	done
	# brk(sbrk(0)) is two: nothing malloc()ed before main, so sbrk(0)
	# asks the kernel for the break first, as strace shows untraced
	# (it was one while the tracer's start still called malloc())
	grep -qx "@\[syscall:break:entry\]: 2" "$TMP/out" ||
	    fail "break:entry: $(cat "$TMP/out")"
	grep -qx 'clone3 -1' "$TMP/out" || fail "clone3: $(cat "$TMP/out")"
	# the list names OpenBSD's calls as OpenBSD's btrace does, each once
	bt -l > "$TMP/list" 2>&1 || fail "btrace -l"
	for p in exit __threxit sigreturn futex getdents linux_getdents \
	    clone3 io_uring_enter; do
		[ "$(grep -cx "syscall:$p:entry" "$TMP/list")" = 1 ] ||
		    fail "listed: $p"
	done
	if grep -q '^syscall:\(exit_group\|pread64\|getdents64\|rt_sigaction\|newfstatat\|brk\|gettid\):' "$TMP/list"; then
		fail "Linux names listed for OpenBSD's calls"
	fi
	;;
opensnoop)
	# str(argN) of a syscall probe prints the path the program gave
	export USERDT_SOCKET=$TMP/ingest.sock
	bt -vv -c "$OPENAT_N 3" -e 'syscall:openat:entry /comm == "openat_n"/ {
		printf("%s %s\n", comm, str(arg1)); }
	    syscall:openat:return /comm == "openat_n"/ { @[str(retval)] = count(); }
	    syscall:close:entry { @c = count(); }' > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out" "$TMP/err")"
	[ "$(grep -c '^openat_n /dev/null$' "$TMP/out")" = 3 ] ||
	    fail "paths: $(cat "$TMP/out")"
	# only the entry rule with str(argN) asks for strings; -c asks
	# every syscall probe for lossless (DTEVT_LOSSLESS, 0x10000000)
	# and for its command's events alone (DTEVT_LAUNCHED, 0x4000000)
	grep -q "^debug: probe 'syscall:openat:entry' pbn [0-9]* evtflags 0x15000009 " \
	    "$TMP/err" || fail "entry flags: $(grep '^debug: probe' "$TMP/err")"
	grep -q "^debug: probe 'syscall:openat:return' pbn [0-9]* evtflags 0x14000001 " \
	    "$TMP/err" || fail "return flags: $(grep '^debug: probe' "$TMP/err")"
	grep -q "^debug: probe 'syscall:close:entry' pbn [0-9]* evtflags 0x14000000 " \
	    "$TMP/err" || fail "close flags: $(grep '^debug: probe' "$TMP/err")"
	;;
pidfilter)
	# the command's calls are not pid 1's: all of them are filtered
	# (interval events belong to no process: -p keeps them)
	export USERDT_SOCKET=$TMP/ingest.sock
	# Folded in dtd (aggregation at the source): nothing of it printed.
	bt -p 1 -c "$OPENAT_N 5" -e 'syscall:openat:entry { @n = count(); }' \
	    > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/err")"
	[ -s "$TMP/out" ] && fail "unfiltered, folded: $(cat "$TMP/out")"
	# Every event read: btrace's own filter takes them all.
	(export BTRACE_NOPUSH=1; bt -v -p 1 -c "$OPENAT_N 5" \
	    -e 'syscall:openat:entry { @n = count(); }') \
	    > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/err")"
	[ -s "$TMP/out" ] && fail "unfiltered: $(cat "$TMP/out")"
	read -r nread rest < "$TMP/err"
	nfilt=$(sed -n 's/ events filtered$//p' "$TMP/err")
	[ "$nread" -gt 0 ] || fail "nothing read: $(cat "$TMP/err")"
	[ "$nfilt" = "$nread" ] || fail "read $nread, filtered $nfilt"
	;;
json)
	bt -f json -e 'interval:hz:100 { @n = count(); if (@n == 3) { exit(); } }
	    END { printf("done\n"); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc"
	printf '%s\n' '{"type": "printf", "data": "done\n"}' \
	    '{"type": "map", "data": {"@n": 3}}' | diff -u - "$TMP/out" ||
	    fail "json"
	;;
cmdexit|cmdint|cmdterm|cmdkill)
	# The run ends before the command: everything the command's shell
	# started ends too (its own process group), and a btrace killed
	# outright takes the command with it (parent-death signal).  btrace
	# and every process of the command hold fd 9, the write end of
	# alive: its end of file says that they have all exited (whoever
	# reaps them, and however slowly).
	export USERDT_SOCKET=$TMP/ingest.sock
	mkfifo "$TMP/pids" "$TMP/alive" || exit 2
	exec 6<>"$TMP/pids"
	if [ "$CASE" = cmdkill ]; then
		cmd="echo \$\$ >&6; exec sleep 1000"
	else
		cmd="sleep 1000 & echo \$! >&6; wait"
	fi
	prog='interval:hz:100 { @n = count(); }'
	[ "$CASE" = cmdexit ] && prog='interval:hz:100 { @n = count(); }
	    syscall:wait4:entry { exit(); }'
	"$BTRACE" -d "$DEV" -c "$cmd" -e "$prog" > "$TMP/out" 2>&1 6>&6 \
	    9> "$TMP/alive" &
	BTPID=$!
	exec 9< "$TMP/alive"
	read -r -t 30 cpid <&6 || fail "command did not start"
	case $CASE in
	cmdint)  kill -INT "$BTPID" ;;
	cmdterm) kill -TERM "$BTPID" ;;
	cmdkill) kill -KILL "$BTPID" ;;
	esac
	wait "$BTPID"
	rc=$?
	BTPID=
	case $CASE in
	cmdkill) [ $rc -eq 137 ] || fail "exit code $rc" ;;
	*) [ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")" ;;
	esac
	if ! timeout 10 cat <&9 > /dev/null; then
		kill "$cpid" 2>/dev/null
		fail "command $cpid outlived btrace"
	fi
	;;
cmdbegin)
	# BEGIN and END only: the command runs, btrace waits for it
	export USERDT_SOCKET=$TMP/ingest.sock
	bt -c 'echo child' -e 'BEGIN { printf("begin\n"); }
	    END { printf("end\n"); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	printf 'begin\nchild\nend\n' | diff -u - "$TMP/out" || fail "output"
	;;
cmdshort)
	# A command that exits before btrace has noted its pid or started
	# reading: btrace still ends.  The race is narrow; try it often.
	export USERDT_SOCKET=$TMP/ingest.sock
	for i in $(seq 30); do
		timeout 20 "$BTRACE" -d "$DEV" -c /bin/true \
		    -e 'syscall:openat:entry { @ = count(); }' \
		    > "$TMP/out" 2>&1
		rc=$?
		[ $rc -eq 0 ] || fail "run $i: exit code $rc: $(cat "$TMP/out")"
	done
	;;
foldedclean)
	# -f folded keeps its stream for flame graph tools: the command's
	# output goes to stderr, a histogram is left out with a note there
	# (the program's own opens: its loader's are syscall-loader's)
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	bt -f folded -c "echo busy: 884 rounds; $OPENAT_N 5" \
	    -e 'syscall:openat:entry /comm == "openat_n"/ {
		@[comm] = count(); @h = hist(5); }' > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/err")"
	echo 'openat_n 5' | diff -u - "$TMP/out" || fail "folded stream"
	printf '%s\n' 'busy: 884 rounds' "btrace: -f folded: @h is a histogram, not printed (folded output holds stack counts; -f text or json shows it)" |
	    diff -u - "$TMP/err" || fail "stderr"
	# -o: the stream in the file, the command keeps stdout
	bt -f folded -o "$TMP/file" -c "echo busy: 884 rounds; $OPENAT_N 5" \
	    -e 'syscall:openat:entry /comm == "openat_n"/ {
		@[comm] = count(); }' > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ $rc -eq 0 ] || fail "-o: exit code $rc: $(cat "$TMP/err")"
	echo 'openat_n 5' | diff -u - "$TMP/file" || fail "-o: file"
	echo 'busy: 884 rounds' | diff -u - "$TMP/out" || fail "-o: stdout"
	;;
foldedstack)
	# -f folded: flamegraph.pl's lines, one frame per function (no
	# +0xNN offsets, so one call site or many make the same frames), no
	# empty frame, the counts of entries that fold alike summed
	export USERDT_SOCKET=$TMP/ingest.sock
	bt -f folded -c "$OPENAT_N 40" \
	    -e 'syscall:openat:entry /comm == "openat_n"/ {
		@[comm, ustack] = count(); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -q '+0x' "$TMP/out" && fail "offsets kept: $(cat "$TMP/out")"
	grep -q ';;\|; \|^;\|^ ' "$TMP/out" && fail "empty frame: $(cat "$TMP/out")"
	grep -qv '^[^ ;][^;]*\(;[^;]\+\)* [0-9]\+$' "$TMP/out" &&
	    fail "not folded: $(cat "$TMP/out")"
	grep -q '^openat_n;.*;main;openat64 40$' "$TMP/out" ||
	    fail "no stack: $(cat "$TMP/out")"
	;;
foldedint)
	# -f folded ended by SIGINT: no empty line first (flamegraph.pl
	# rejects it); readiness as in the sigint case
	mkfifo "$TMP/err" || exit 2
	exec 5<>"$TMP/err"
	"$BTRACE" -d "$DEV" -f folded -e 'interval:hz:50 { @[probe] = count();
	    $s = "up"; if (@[probe] == 1) { printf("%d", $s); } }' \
	    > "$TMP/out" 2>&5 &
	BTPID=$!
	read -r -t 30 line <&5 || fail "btrace did not start"
	kill -INT "$BTPID"
	wait "$BTPID"
	rc=$?
	BTPID=
	[ $rc -eq 0 ] || fail "exit code $rc after SIGINT"
	# the printf's 0, then the map
	grep -qx '0interval:hz:[0-9]* [1-9][0-9]*' "$TMP/out" ||
	    fail "output: $(od -c "$TMP/out" | head)"
	;;
dtdgone)
	# dtd stops under a running btrace: END still runs, the maps are
	# printed, stderr says what happened, the exit status is not 0
	mkfifo "$TMP/err" || exit 2
	exec 5<>"$TMP/err"
	"$BTRACE" -d "$DEV" -e 'interval:hz:100 { @n = count(); $s = "up";
	    if (@n == 1) { printf("%d", $s); } }
	    END { printf("end\n"); }' > "$TMP/out" 2>&5 &
	BTPID=$!
	read -r -t 30 line <&5 || fail "btrace did not start"
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	wait "$BTPID"
	rc=$?
	BTPID=
	# btrace has exited: what it wrote is in the FIFO, read to the end
	# of file that closing our own writing end (5) leaves
	exec 7< "$TMP/err" 5<&-
	cat <&7 > "$TMP/err2"
	exec 7<&-
	grep -q 'did dtd stop' "$TMP/err2" || fail "stderr: $(cat "$TMP/err2")"
	[ $rc -ne 0 ] || fail "exit code 0 after dtd stopped"
	grep -q '^0end$' "$TMP/out" || fail "no END: $(cat "$TMP/out")"
	grep -qx '@n: [1-9][0-9]*' "$TMP/out" || fail "no map: $(cat "$TMP/out")"
	;;
provider)
	# a provider the device does not offer is named, with the closest
	bt -e 'intervl:hz:1 { }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "exit code $rc"
	echo "btrace: unknown provider 'intervl' in probe 'intervl:hz:1', did you mean 'interval'?" |
	    diff -u - "$TMP/out" || fail "message"
	# kprobes, OpenBSD's and bpftrace's spellings: on a kernel without
	# them, once, why; on one with them, found (the vm suite reads them)
	kpmu=/sys/bus/event_source/devices/kprobe
	if [ -e "$kpmu" ]; then
		bt -l 'kprobe:vfs_read:*' > "$TMP/out" 2>&1
		printf 'kprobe:vfs_read:entry\nkprobe:vfs_read:return\n' |
		    diff -u - "$TMP/out" || fail "kprobes on a kernel with $kpmu"
	else
		bt -e 'kprobe:vfs_read:entry { } kretprobe:vfs_read { }
		    kprobe:vfs_write { }' > "$TMP/out" 2>&1
		rc=$?
		[ $rc -eq 1 ] || fail "kprobe: exit code $rc"
		echo "btrace: unknown provider 'kprobe' in probe 'kprobe:vfs_read:entry' (kprobes are unavailable on this kernel: it has no $kpmu, which needs CONFIG_KPROBES and CONFIG_KPROBE_EVENTS; trace system calls or kernel tracepoints instead)" |
		    diff -u - "$TMP/out" || fail "kprobe message"
		# bpftrace's kretprobe:FUNC is OpenBSD's kprobe:FUNC:return
		bt -e 'kretprobe:vfs_read { }' > "$TMP/out" 2>&1
		grep -q "in probe 'kprobe:vfs_read:return' (kprobes are unavailable on this kernel" \
		    "$TMP/out" || fail "kretprobe: $(cat "$TMP/out")"
		# a listing of kprobes says why it is empty, on stderr
		bt -l 'kprobe:*' > "$TMP/out" 2> "$TMP/err"
		[ ! -s "$TMP/out" ] || fail "-l kprobe:* listed: $(cat "$TMP/out")"
		echo "btrace: no probe matches 'kprobe:*' (kprobes are unavailable on this kernel: it has no $kpmu, which needs CONFIG_KPROBES and CONFIG_KPROBE_EVENTS; trace system calls or kernel tracepoints instead)" |
		    diff -u - "$TMP/err" || fail "-l kprobe:* message"
	fi
	# the device is root's (0600): another user is told why
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	    "$BTRACE" -d "$DEV" -e 'interval:hz:1 { }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "exit code $rc as nobody"
	grep -q "needs root" "$TMP/out" || fail "as nobody: $(cat "$TMP/out")"
	;;
errno)
	# errno at a system call's return: the event's dtev_error
	export USERDT_SOCKET=$TMP/ingest.sock
	bt -c 'cat /nonexistent/file 2>/dev/null; true' \
	    -e 'syscall:openat:return /comm == "cat"/ {
		if (retval == -1) { @[errno] = count(); }
		else { @ok[errno] = count(); } }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -qx '@\[2\]: [1-9][0-9]*' "$TMP/out" || fail "no ENOENT: $(cat "$TMP/out")"
	grep -q '^@ok\[[1-9]' "$TMP/out" && fail "errno on success: $(cat "$TMP/out")"
	;;
comm)
	# Profile samples of a process gone before dtd read its name come
	# with an empty comm: btrace fills it in, never empty while the pid
	# is known (perf reports pid 0 for a task already unhashed).  dtd is
	# stopped while a short-lived subshell runs and exits, so that it
	# drains the samples only once the process is gone.
	mkfifo "$TMP/err" || exit 2
	exec 5<>"$TMP/err"
	"$BTRACE" -d "$DEV" -e 'profile:hz:997 /pid > 0/ { @[comm] = count(); }
	    interval:hz:50 { $s = "up"; @n = count();
		if (@n == 1) { printf("%d", $s); } }' > "$TMP/out" 2>&5 &
	BTPID=$!
	read -r -t 30 line <&5 || fail "btrace did not start"
	kill -STOP "$DTDPID"
	( i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done )
	kill -CONT "$DTDPID"
	# samples read after the CONT: wait for the next interval event
	bt -e 'interval:hz:100 { exit(); }' > /dev/null 2>&1
	kill -INT "$BTPID"
	wait "$BTPID"
	rc=$?
	BTPID=
	[ $rc -eq 0 ] || fail "exit code $rc"
	grep -q '^@\[[^]]' "$TMP/out" || fail "no samples: $(cat "$TMP/out")"
	grep -q '^@\[\]' "$TMP/out" && fail "empty comm: $(cat "$TMP/out")"
	;;
*)
	fail "unknown case $CASE"
	;;
esac
exit 0
