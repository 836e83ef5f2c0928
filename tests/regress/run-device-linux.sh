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
# btrace against a real device, what Linux users expect of it: -c's
# process tree and cpid, probe wildcards, -p's end and its filter in the
# kernel, lost events, -o and
# prompt output, the command's terminal.  Each case starts a private dtd
# on a temporary device path (FUSE-file front end) and stops it by pid.
#
# usage: run-device-linux.sh btrace dtd case
set -u

[ $# -eq 3 ] || { echo "usage: $0 btrace dtd case" >&2; exit 2; }
BTRACE=$1
DTD=$2
CASE=$3

. "$(dirname "$0")/lib.sh"
# deepest(file): the most "recurse" frames and the most frames of any
# one stack key in a map's dump (the deepstack and deepsys cases)
deepest() {
	awk '/^@\[$/ { n = 0; r = 0; next }
	    /^\]: [0-9]+$/ { if (r > mr) mr = r; if (n > mn) mn = n; next }
	    /^recurse\+0x/ { r++ }
	    /^userland$/ { next }
	    { n++ }
	    END { print mr + 0, mn + 0 }' "$1"
}

# the lost-events case wants OpenBSD's small rings, which overflow;
# latpairs a ring smaller than a tracee's (8192 records)
case $CASE in
lost|lostjson)	dtd_start --ring-size 16 ;;
latpairs)	dtd_start --ring-size 4096 ;;
*)		dtd_start ;;
esac

case $CASE in
cmdtree)
	# Two concurrent -c runs each count only their own command's
	# processes.  Each command waits at a FIFO until both btraces trace,
	# and at another until both have run, so that each one's openat_n
	# runs while the other records.
	# the program's own opens: its loader's are syscall-loader's
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	for x in A B; do mkfifo "$TMP/go$x" "$TMP/end$x" || exit 2; done
	prog='syscall:openat:entry /comm == "openat_n"/ { @ = count(); }'
	"$BTRACE" -d "$DEV" -c "read l < $TMP/goA; $OPENAT_N 57; read l < $TMP/endA" \
	    -e "$prog" > "$TMP/outA" 2>&1 &
	PA=$!
	"$BTRACE" -d "$DEV" -c "read l < $TMP/goB; sh -c '$OPENAT_N 20 & $OPENAT_N 3; wait'; read l < $TMP/endB" \
	    -e "$prog" > "$TMP/outB" 2>&1 &
	PB=$!
	# opening a FIFO waits for its reader: both commands run, both trace
	exec 7> "$TMP/goA" 8> "$TMP/goB"
	exec 7>&- 8>&-
	exec 7> "$TMP/endA" 8> "$TMP/endB"
	exec 7>&- 8>&-
	wait $PA; ra=$?
	wait $PB; rb=$?
	[ $ra -eq 0 ] && [ $rb -eq 0 ] || fail "exit codes $ra $rb"
	echo '@: 57' | diff -u - "$TMP/outA" || fail "A counted others"
	echo '@: 23' | diff -u - "$TMP/outB" || fail "B counted others"
	# -A keeps every process's events: the command's 5 and the 3 of an
	# outsider run while the command waits at a FIFO
	mkfifo "$TMP/goC" || exit 2
	"$BTRACE" -d "$DEV" -A -c "read l < $TMP/goC; $OPENAT_N 5" \
	    -e "$prog" > "$TMP/outC" 2>&1 &
	BTPID=$!
	exec 7> "$TMP/goC"
	LD_PRELOAD=$USERDT_PRELOAD "$OPENAT_N" 3 || fail "outsider"
	exec 7>&-
	wait "$BTPID" || fail "-A exit code"
	BTPID=
	echo '@: 8' | diff -u - "$TMP/outC" || fail "-A left the outsider out"
	;;
cpid)
	# cpid is the pid of -c's shell, known in BEGIN; the shell execs a
	# lone simple command, so cpid is that command's pid then
	# the program's own opens: its loader's are syscall-loader's
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	bt -c "echo \$\$ > $TMP/pid; exec $OPENAT_N 7" -e '
	    BEGIN { printf("cpid %d\n", cpid); }
	    syscall:openat:entry /pid == cpid && comm == "openat_n"/ {
		@ = count(); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	printf 'cpid %s\n@: 7\n' "$(cat "$TMP/pid")" | diff -u - "$TMP/out" ||
	    fail "cpid"
	# without -c, cpid is an error before tracing
	bt -e 'BEGIN { printf("%d\n", cpid); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -ne 0 ] || fail "cpid without -c: exit code 0"
	grep -q "^btrace:1:.*cpid builtin needs a command (-c)" "$TMP/out" ||
	    fail "cpid without -c: $(cat "$TMP/out")"
	;;
wildcard)
	# a pattern enables every probe it matches, probe names each; a
	# probe that another rule names too is enabled once, both rules run
	# the program's own opens: its loader's are syscall-loader's
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	bt -c "$OPENAT_N 9" -e 'syscall:*open*:entry /comm == "openat_n"/ {
		@[probe] = count(); }
	    syscall:openat:entry /comm == "openat_n"/ { @o = count(); }
	    syscall:*:return /comm == "openat_n" && retval == 3/ {
		@r[probe] = count(); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -qx '@\[syscall:openat:entry\]: 9' "$TMP/out" || fail "pattern: $(cat "$TMP/out")"
	grep -qx '@o: 9' "$TMP/out" || fail "shared probe: $(cat "$TMP/out")"
	grep -qx '@r\[syscall:openat:return\]: 9' "$TMP/out" ||
	    fail "syscall:*:return: $(cat "$TMP/out")"
	# a pattern that matches nothing is an error before tracing
	bt -e 'syscall:*nosuchcall*:entry { }' > "$TMP/out" 2>&1
	[ $? -eq 1 ] || fail "no match: exit code"
	echo "btrace: no probe matches 'syscall:*nosuchcall*:entry'" |
	    diff -u - "$TMP/out" || fail "no match message"
	;;
listpattern)
	# -l PATTERN lists the probes that match, as -l shows them
	bt -l > "$TMP/all" 2>&1 || fail "btrace -l"
	bt -l 'syscall:*open*:entry' > "$TMP/out" 2>&1 || fail "-l pattern"
	grep ':entry$' "$TMP/all" | grep '^syscall:[^:]*open[^:]*:' |
	    diff -u - "$TMP/out" || fail "-l syscall:*open*:entry"
	grep -qx 'syscall:openat:entry' "$TMP/out" || fail "no openat"
	bt -l 'interval' > "$TMP/out" 2>&1 || fail "-l provider"
	grep '^interval:' "$TMP/all" | diff -u - "$TMP/out" || fail "-l interval"
	bt -l 'profile:hz:*' > "$TMP/out" 2>&1 || fail "-l profile:hz:*"
	echo 'profile:hz:97' | diff -u - "$TMP/out" || fail "-l profile:hz:*"
	;;
names)
	# -l PATTERN finds a syscall by Linux's name too, and says it
	bt -l 'syscall:brk:entry' > "$TMP/out" 2>&1 || fail "-l brk"
	echo 'syscall:break:entry (Linux: brk)' | diff -u - "$TMP/out" ||
	    fail "-l syscall:brk:entry"
	bt -l 'syscall:exit*:entry' > "$TMP/out" 2>&1 || fail "-l exit*"
	printf '%s\n' 'syscall:exit:entry (Linux: exit_group)' \
	    'syscall:__threxit:entry (Linux: exit)' | diff -u - "$TMP/out" ||
	    fail "-l syscall:exit*:entry"
	# a script naming one call by both names runs both rules, with a
	# word on stderr at the second name; probe is the listed name
	export USERDT_SOCKET=$TMP/ingest.sock
	bt -c true -e 'syscall:exit:entry { printf("%s\n", probe); }
syscall:exit_group:entry { printf("%s\n", probe); }' \
	    > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/err")"
	printf '%s\n' syscall:exit:entry syscall:exit:entry |
	    diff -u - "$TMP/out" || fail "both rules"
	grep -q "^btrace:2:7: 'syscall:exit_group:entry' and 'syscall:exit:entry' (line 1) are one probe" \
	    "$TMP/err" || fail "alias warning: $(cat "$TMP/err")"
	# one name twice (OpenBSD's error, our extension): both rules run,
	# in order, with no word on stderr
	bt -c true -e 'syscall:exit:entry { printf("a\n"); }
	    syscall:exit:entry { printf("b\n"); }' > "$TMP/out" 2> "$TMP/err"
	[ $? -eq 0 ] || fail "same probe twice: exit code: $(cat "$TMP/err")"
	printf 'a\nb\n' | diff -u - "$TMP/out" || fail "same probe twice"
	[ -s "$TMP/err" ] && fail "same probe twice: $(cat "$TMP/err")"
	;;
silent)
	# Where a probe cannot fire for what was asked, btrace says so once
	# on stderr, and stdout stays what it was.
	# the program's own opens: its loader's are syscall-loader's
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	# open alone: glibc makes it as openat
	bt -c "$OPENAT_N 3" -e 'syscall:open:entry { @ = count(); }' \
	    > "$TMP/out" 2> "$TMP/err"
	rc=$?
	[ $rc -eq 0 ] || fail "open: exit code $rc: $(cat "$TMP/err")"
	[ -s "$TMP/out" ] && fail "open: stdout: $(cat "$TMP/out")"
	echo 'btrace:1:7: syscall:open:entry sees only programs that make the raw call: glibc on Linux makes open() as openat (syscall:openat:entry)' |
	    diff -u - "$TMP/err" || fail "open alone"
	# with openat too, nothing to say
	bt -c "$OPENAT_N 3" -e 'syscall:open:entry, syscall:openat:entry
	    /comm == "openat_n"/ { @ = count(); }' > "$TMP/out" 2> "$TMP/err"
	[ -s "$TMP/err" ] && fail "open and openat: $(cat "$TMP/err")"
	echo '@: 3' | diff -u - "$TMP/out" || fail "open and openat: output"
	# -c with a socket no dtd answers at: the events cannot arrive
	USERDT_SOCKET=$TMP/nosuch.sock bt -c "$OPENAT_N 3" \
	    -e 'syscall:openat:entry { @ = count(); }' > "$TMP/out" 2> "$TMP/err"
	[ $? -eq 0 ] || fail "no socket: exit code"
	echo "btrace: -c: no dtd answers at $TMP/nosuch.sock (USERDT_SOCKET, No such file or directory): the command's events cannot reach $DEV; set USERDT_SOCKET to the ingest socket of the dtd that serves $DEV" |
	    diff -u - "$TMP/err" || fail "no socket"
	# -c with the socket of another dtd than the device's
	D1=$DTDPID
	DEV1=$DEV
	T1=$TMP
	mkdir "$TMP/b" || exit 2
	TMP=$T1/b
	dtd_serve "$DTD"
	D2=$DTDPID
	TMP=$T1
	DTDPID=$D1
	USERDT_SOCKET=$TMP/b/ingest.sock "$BTRACE" -d "$DEV1" -c "$OPENAT_N 3" \
	    -e 'syscall:openat:entry { @ = count(); }' > "$TMP/out" 2> "$TMP/err"
	rc=$?
	kill -TERM "$D2"
	wait "$D2"
	DEV=$DEV1
	[ $rc -eq 0 ] || fail "other dtd: exit code $rc"
	echo "btrace: -c: the dtd at $TMP/b/ingest.sock (USERDT_SOCKET, pid $D2) does not serve $DEV: the command's events go to that dtd, not to this device; set USERDT_SOCKET to the ingest socket of the dtd that serves $DEV" |
	    diff -u - "$TMP/err" || fail "other dtd"
	# the right dtd: nothing said
	bt -c "$OPENAT_N 3" -e 'syscall:openat:entry { @ = count(); }' \
	    > "$TMP/out" 2> "$TMP/err"
	[ -s "$TMP/err" ] && fail "right dtd: $(cat "$TMP/err")"
	# -p of a process without the preload library
	mkfifo "$TMP/gate" || exit 2
	exec 5<>"$TMP/gate"
	( read -r l <&5 ) &
	TPID=$!
	timeout 30 "$BTRACE" -d "$DEV" -p "$TPID" -e 'syscall:read:entry { }
	    interval:ms:50 { exit(); }' > "$TMP/out" 2> "$TMP/err"
	rc=$?
	echo >&5
	wait "$TPID"
	[ $rc -eq 0 ] || fail "-p: exit code $rc: $(cat "$TMP/err")"
	echo "btrace: -p $TPID: the process was not started under userdt's launcher (btrace -c, dtrun): without its library, syscall probes see nothing of it" |
	    diff -u - "$TMP/err" || fail "-p untraced"
	# and of one with it: nothing said
	mkfifo "$TMP/up" || exit 2
	exec 6<>"$TMP/up"
	LD_PRELOAD=$USERDT_PRELOAD sh -c 'echo up >&6; read -r l' <&5 6>&6 &
	TPID=$!
	# the library is in once the shell runs its first command
	read -r -t 30 l <&6 || fail "the traced shell did not start"
	timeout 30 "$BTRACE" -d "$DEV" -p "$TPID" -e 'syscall:read:entry { }
	    interval:ms:50 { exit(); }' > "$TMP/out" 2> "$TMP/err"
	rc=$?
	echo >&5
	wait "$TPID"
	[ $rc -eq 0 ] || fail "-p traced: exit code $rc: $(cat "$TMP/err")"
	[ -s "$TMP/err" ] && fail "-p traced: $(cat "$TMP/err")"
	;;
cmdtty)
	# run from a terminal, the command gets the terminal's foreground
	# and can read it (in the background it would stop on SIGTTIN);
	# btrace takes the terminal back and ends normally
	export USERDT_SOCKET=$TMP/ingest.sock
	timeout 30 "$PTY_RUN" hello "$BTRACE" -d "$DEV" \
	    -c 'read x; echo "got $x"' \
	    -e 'syscall:read:entry /comm == "sh"/ { @ = count(); }
		END { printf("end\n"); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	tr -d '\r' < "$TMP/out" | grep -v '^@: [1-9][0-9]*$' > "$TMP/out2"
	printf 'got hello\nend\n' | diff -u - "$TMP/out2" || fail "output"
	;;
cmdsigint)
	# Ctrl-C on the terminal ends the run whatever the command does
	# with SIGINT: the command's group has the terminal's foreground,
	# and what it ignores (here INT, then INT and TERM) must still stop
	# btrace, which ends the command's group.  The command says ready
	# once its trap is set; the run would otherwise last 30 s.
	export USERDT_SOCKET=$TMP/ingest.sock
	for traps in INT 'INT TERM'; do
		timeout 20 "$PTY_RUN" -u ready "$(printf '\003')" \
		    "$BTRACE" -d "$DEV" \
		    -c "trap '' $traps; echo ready; exec sleep 30" \
		    -e 'interval:hz:10 { } END { printf("end\n"); }' \
		    > "$TMP/out" 2>&1
		rc=$?
		[ $rc -eq 0 ] || fail "trap '' $traps: exit code $rc: $(cat "$TMP/out")"
		# The blank line is OpenBSD's: printed when the signal ends a
		# read(2), not when it lands while an event is handled.
		tr -d '\r' < "$TMP/out" | sed '2{/^$/d;}' > "$TMP/out2"
		printf 'ready\nend\n' | diff -u - "$TMP/out2" ||
		    fail "trap '' $traps: output"
	done
	;;
cmdgroup)
	# btrace killed outright: a compound command's every process dies
	# (the supervisor's parent-death signal ends the group), not only
	# the shell that PR_SET_PDEATHSIG alone would reach.  All of them
	# hold fd 9, the write end of alive: its end of file says that they
	# have all exited (whoever reaps them, and however slowly).
	export USERDT_SOCKET=$TMP/ingest.sock
	mkfifo "$TMP/pids" "$TMP/alive" || exit 2
	exec 6<>"$TMP/pids"
	"$BTRACE" -d "$DEV" -c 'sleep 1000 & echo $! >&6; sleep 1001; true' \
	    -e 'interval:hz:10 { }' > "$TMP/out" 2>&1 6>&6 9> "$TMP/alive" &
	BTPID=$!
	exec 9< "$TMP/alive"
	read -r -t 30 cpid <&6 || fail "command did not start"
	kill -KILL "$BTPID"
	wait "$BTPID"
	BTPID=
	if ! timeout 10 cat <&9 > /dev/null; then
		kill "$cpid" 2>/dev/null
		fail "background child $cpid outlived a killed btrace"
	fi
	;;
pidend)
	# -p: a pid that does not exist is an error; the run ends when the
	# process exits, END runs
	bt -p 999999999 -e 'interval:hz:1 { }' > "$TMP/out" 2>&1
	[ $? -eq 1 ] || fail "no such pid: exit code"
	echo 'btrace: -p 999999999: no such process' | diff -u - "$TMP/out" ||
	    fail "no such pid: message"
	mkfifo "$TMP/gate" || exit 2
	exec 5<>"$TMP/gate"
	# the process ends when the test writes a line
	( read -r l <&5 ) &
	TPID=$!
	mkfifo "$TMP/err" || exit 2
	exec 6<>"$TMP/err"
	"$BTRACE" -d "$DEV" -p "$TPID" -e 'BEGIN { $s = "up"; printf("%d", $s); }
	    interval:hz:50 { } END { printf("end\n"); }' > "$TMP/out" 2>&6 &
	BTPID=$!
	# BEGIN has run (its warning): the pid is held since the start
	read -r -t 30 line <&6 || fail "btrace did not start"
	kill -0 "$BTPID" || fail "btrace ended before the process"
	echo >&5
	wait "$TPID"
	wait "$BTPID"
	rc=$?
	BTPID=
	[ $rc -eq 0 ] || fail "exit code $rc"
	grep -q 'end$' "$TMP/out" || fail "no END: $(cat "$TMP/out")"
	;;
pidinterval)
	# -p keeps interval events, which belong to no process: the timer
	# ends the run while the watched process still waits
	mkfifo "$TMP/gate" || exit 2
	exec 5<>"$TMP/gate"
	( read -r l <&5 ) &
	TPID=$!
	timeout 30 "$BTRACE" -d "$DEV" -p "$TPID" -e '
	    interval:ms:100 { printf("tick\n"); exit(); }
	    END { printf("end\n"); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	printf 'tick\nend\n' | diff -u - "$TMP/out" || fail "output"
	# -p's process is pushed to dtd with the probes (pid ==), so that
	# the machine's other calls stop at dtd, or in their own process's
	# hooks, instead of crossing to btrace to be thrown away here
	# (a rule of events: a count is the hooks', which want no filter)
	timeout 30 "$BTRACE" -d "$DEV" -v -p "$TPID" -e '
	    syscall:read:entry { printf("read %d\n", pid); }
	    interval:ms:100 { exit(); }' > "$TMP/out" 2> "$TMP/err"
	rc=$?
	echo >&5
	wait "$TPID"
	[ $rc -eq 0 ] || fail "-p read: exit code $rc: $(cat "$TMP/err")"
	[ -s "$TMP/out" ] && fail "-p read: another's read: $(cat "$TMP/out")"
	# (btrace's own reads of the device, at least, are not -p's)
	f=$(sed -n 's/ events filtered by dtd$//p' "$TMP/err")
	[ "${f:-0}" -gt 0 ] ||
	    fail "-p read: nothing filtered by dtd: $(cat "$TMP/err")"
	;;
lost|lostjson)
	# Events the device drops are announced on stderr while tracing
	# runs, not only by -v at exit.  The command stops btrace (its
	# supervisor's parent) while openat_n fills the 16-event rings,
	# then waits at a FIFO until the test has seen the announcement.
	# With -f json it is a lost_events object in the output, as
	# bpftrace's.  Counted where it happens, the count would take no
	# ring slot to lose: BTRACE_NOPUSH keeps the events coming.  Lossy
	# (--no-lossless): lossless, dtd keeps the events in the tracee's
	# ring for a reader stopped this briefly, and none is lost.
	export USERDT_SOCKET=$TMP/ingest.sock BTRACE_NOPUSH=1
	mkfifo "$TMP/gate" "$TMP/err" || exit 2
	exec 6<>"$TMP/err"
	bpid='$(awk "{ print \$4 }" /proc/$PPID/stat)'
	if [ "$CASE" = lost ]; then
		"$BTRACE" -d "$DEV" --no-lossless -c "kill -STOP $bpid; $OPENAT_N 500;
		    kill -CONT $bpid; read l < $TMP/gate" \
		    -e 'syscall:openat:entry { @ = count(); } interval:hz:100 { }' \
		    > "$TMP/out" 2>&6 &
	else
		"$BTRACE" -d "$DEV" -f json --no-lossless \
		    -c "kill -STOP $bpid; $OPENAT_N 500;
		    kill -CONT $bpid; read l < $TMP/gate" \
		    -e 'syscall:openat:entry { @ = count(); } interval:hz:100 { }' \
		    >&6 2> "$TMP/out" &
	fi
	BTPID=$!
	read -r -t 30 line <&6 || fail "no announcement"
	case $CASE:$line in
	"lost:Lost "[1-9]*" events") ;;
	'lostjson:{"type": "lost_events", "data": {"events": '[1-9]*'}}') ;;
	*) fail "announced: $line" ;;
	esac
	# still tracing: the command waits for the gate
	kill -0 "$BTPID" || fail "btrace ended before announcing"
	exec 7> "$TMP/gate"
	exec 7>&-
	wait "$BTPID"
	rc=$?
	BTPID=
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	if [ "$CASE" = lost ]; then
		grep -qx '@: [0-9]*' "$TMP/out" || fail "stdout: $(cat "$TMP/out")"
	else
		# the map after it, in the same stream; stderr says nothing
		[ -s "$TMP/out" ] && fail "stderr: $(cat "$TMP/out")"
		timeout 10 grep -m1 -qx '{"type": "map", "data": {"@": [0-9]*}}' <&6 ||
		    fail "no map after lost_events"
	fi
	;;
push)
	# Filters at the source (dtvar.h, DTIOCPRBFILTER): the output is
	# the same with pushing on and off (BTRACE_NOPUSH=1), for a filter
	# dtd takes whole, one it takes in part, one it cannot take, and
	# several rules on one probe, in the traced processes' hooks, and
	# one the kernel's tracepoint filter takes in part (comm; openat's
	# number is dtd's); and what dtd filtered is reported.
	export USERDT_SOCKET=$TMP/ingest.sock
	n=0
	for prog in \
	    'syscall:openat:entry /comm == "openat_n"/ { @ = count(); }' \
	    'syscall:openat:entry /comm == "openat_n" && nsecs > 0 && !(arg2 == 12345 || tid < 0)/ { @ = count(); }' \
	    'syscall:openat:entry /comm == "openat_n" || nsecs == 0/ { @ = count(); }' \
	    'syscall:openat:entry /comm == "openat_n"/ { @a = count(); } syscall:openat:entry /pid == 1 && probe == "syscall:openat:entry"/ { @b = count(); }' \
	    'syscall:openat:return /comm != "openat_n" || retval < 0 || errno != 0/ { @[comm] = count(); }' \
	    'tracepoint:raw_syscalls:sys_enter /comm == "openat_n" && arg0 == 321/ { @ = count(); }'; do
		n=$((n + 1))
		bt -v -c "$OPENAT_N 20; $OPENAT_N 5" -e "$prog" \
		    > "$TMP/on.$n" 2> "$TMP/on.err.$n" ||
		    fail "pushed $n: $(cat "$TMP/on.err.$n")"
		BTRACE_NOPUSH=1 bt -v -c "$OPENAT_N 20; $OPENAT_N 5" -e "$prog" \
		    > "$TMP/off.$n" 2> "$TMP/off.err.$n" ||
		    fail "not pushed $n: $(cat "$TMP/off.err.$n")"
		diff -u "$TMP/off.$n" "$TMP/on.$n" || fail "output $n differs"
		[ -s "$TMP/on.$n" ] || fail "no output $n"
		grep -q 'events filtered by dtd' "$TMP/off.err.$n" &&
		    fail "BTRACE_NOPUSH=1 pushed $n"
		echo "$n: $(tr '\n' ' ' < "$TMP/on.$n")"
		echo "   pushed:     $(tr '\n' ' ' < "$TMP/on.err.$n")"
		echo "   not pushed: $(tr '\n' ' ' < "$TMP/off.err.$n")"
	done
	# 1, 2 and 4 push; 3 (an || with nsecs) cannot
	for i in 1 2 4; do
		f=$(sed -n 's/ events filtered by dtd$//p' "$TMP/on.err.$i")
		[ -n "$f" ] && [ "$f" -gt 0 ] || fail "$i: dtd filtered '$f'"
	done
	grep -q 'events filtered by dtd' "$TMP/on.err.3" &&
	    fail "3 pushed an unpushable filter"
	# what dtd filtered never reached btrace
	on=$(sed -n 's/ events read$//p' "$TMP/on.err.1")
	off=$(sed -n 's/ events read$//p' "$TMP/off.err.1")
	[ "$on" -lt "$off" ] || fail "read $on pushed, $off not"
	# A count under a comm filter folds in dtd, and an event whose
	# comm dtd cannot judge as btrace would (a backslash in it, which
	# btrace prints escaped) still reaches btrace as a record, whose
	# filter decides: the same output as read whole, the fold and the
	# records adding up.  Such a filter once kept the whole rule out
	# of dtd, every event read.
	ln -s "$OPENAT_N" "$TMP/b\\x" || exit 2
	export USERDT_LOADER=0
	cmd="$OPENAT_N 5; '$TMP/b\\x' 7"
	prog='syscall:openat:entry /comm != "zzz"/ { @[comm] = count(); }'
	bt -v -c "$cmd" -e "$prog" > "$TMP/on.bs" 2> "$TMP/on.err.bs" ||
	    fail "pushed bs: $(cat "$TMP/on.err.bs")"
	BTRACE_NOPUSH=1 bt -v -c "$cmd" -e "$prog" > "$TMP/off.bs" \
	    2> "$TMP/off.err.bs" || fail "not pushed bs: $(cat "$TMP/off.err.bs")"
	diff -u "$TMP/off.bs" "$TMP/on.bs" || fail "output bs differs"
	printf '@[b\\\\x]: 7\n@[openat_n]: 5\n' | diff -u - "$TMP/on.bs" ||
	    fail "bs: counts"
	grep -qx '1 rules aggregated in dtd' "$TMP/on.err.bs" ||
	    fail "bs: not folded: $(cat "$TMP/on.err.bs")"
	grep -qx '5 events aggregated by dtd' "$TMP/on.err.bs" ||
	    fail "bs: folded: $(cat "$TMP/on.err.bs")"
	grep -qx '7 events read' "$TMP/on.err.bs" ||
	    fail "bs: records: $(cat "$TMP/on.err.bs")"
	# System wide, a kernel tracepoint's count under a comm filter is
	# folded in dtd and exact, whatever else the machine does: the
	# kernel's filter passes the program's calls alone, and none waits
	# in a ring for btrace.  strace counts the calls of the same run
	# (arg0 is the call's number in OpenBSD's table: openat 321).
	ln -s "$OPENAT_N" "$TMP/uq_opn" || exit 2
	mkfifo "$TMP/swout" || exit 2
	"$BTRACE" -d "$DEV" -v -e 'BEGIN { printf("go\n"); }
	    tracepoint:raw_syscalls:sys_enter /comm == "uq_opn" && arg0 == 321/ { @ = count(); }' \
	    > "$TMP/swout" 2> "$TMP/sw.err" &
	BTPID=$!
	exec 6< "$TMP/swout"
	read -r -t 30 l <&6 && [ "$l" = go ] || fail "system wide: $l $(cat "$TMP/sw.err")"
	strace -f -qq -c -U calls -e trace=openat -o "$TMP/sw.strace" \
	    "$TMP/uq_opn" 300 || fail "strace"
	calls=$(awk '$NF == "openat" { print $1 }' "$TMP/sw.strace")
	kill -TERM "$BTPID"
	wait "$BTPID" || fail "system wide: exit $?: $(cat "$TMP/sw.err")"
	BTPID=
	got=$(sed -n "/^@/p" <&6)
	exec 6<&-
	[ -n "$calls" ] && [ "$got" = "@: $calls" ] ||
	    fail "system wide: '$got', strace $calls: $(cat "$TMP/sw.err")"
	grep -qx '1 rules aggregated in dtd' "$TMP/sw.err" ||
	    fail "system wide: not folded: $(cat "$TMP/sw.err")"
	;;
dtdself)
	# dtd stands for the kernel: no syscall probe shows its calls,
	# whichever of its threads makes them (the kernel filter names a
	# thread, the main one; a reader naming the processes of these
	# very events opens /proc in another).  New processes make it
	# look: a score of short ones while btrace counts by pid.
	mkfifo "$TMP/selfout" || exit 2
	"$BTRACE" -d "$DEV" -e 'BEGIN { printf("go\n"); }
	    syscall:openat:entry { @[pid] = count(); }' \
	    > "$TMP/selfout" 2> "$TMP/self.err" &
	BTPID=$!
	exec 6< "$TMP/selfout"
	read -r -t 30 l <&6 && [ "$l" = go ] ||
	    fail "dtdself: $l $(cat "$TMP/self.err")"
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		"$OPENAT_N" 2 || fail "openat_n"
	done
	kill -TERM "$BTPID"
	wait "$BTPID" || fail "dtdself: exit $?: $(cat "$TMP/self.err")"
	BTPID=
	cat <&6 > "$TMP/self.out"
	exec 6<&-
	grep -q '^@\[' "$TMP/self.out" || fail "dtdself: no count"
	grep "^@\[$DTDPID\]:" "$TMP/self.out" &&
	    fail "dtdself: dtd's own calls counted"
	;;
pidpush)
	# -p on a kernel tracepoint, a rule with no filter: the pid btrace
	# pushes is the kernel's (events of dtd's own on the process's
	# threads, providers/tracepoint/dt_tp_pid.c): btrace counts exactly
	# the process's getppid() calls, those of a thread started before
	# btrace and of one started after it began among them, nothing
	# dropped, while another process makes system calls flat out; and
	# no other process's event reached dtd (it filtered none, and its
	# log at exit says it read the process's records alone).  Two
	# btraces at once, -p and a tid filter (the shared event's kernel
	# filter: the main thread's calls), each count their own.
	cp /bin/dd "$TMP/uq_ppn" || exit 2
	setsid "$TMP/uq_ppn" if=/dev/zero of=/dev/null bs=1 2> /dev/null &
	NOISE=$!
	PY=
	trap 'kill -- -$NOISE 2> /dev/null; [ -n "$PY" ] && kill $PY
	    dtd_cleanup' EXIT
	mkfifo "$TMP/tin" "$TMP/tout" "$TMP/bp" "$TMP/bc" || exit 2
	exec 5<>"$TMP/tin"
	"$PID_TARGET" 500 300 200 <&5 > "$TMP/tout" &
	TP=$!
	exec 6< "$TMP/tout"
	read -r -t 30 l <&6 && [ "$l" = ready ] || fail "target: $l"
	"$BTRACE" -d "$DEV" -v -p "$TP" -e 'BEGIN { printf("go\n"); }
	    tracepoint:raw_syscalls:sys_enter { @[arg0] = count(); }' \
	    > "$TMP/bp" 2> "$TMP/bp.err" &
	BTPID=$!
	exec 7< "$TMP/bp"
	read -r -t 30 l <&7 && [ "$l" = go ] || fail "-p: $l $(cat "$TMP/bp.err")"
	"$BTRACE" -d "$DEV" -e 'BEGIN { printf("go\n"); }
	    tracepoint:raw_syscalls:sys_enter /tid == '"$TP"' &&
	    arg0 == 39/ { @ = count(); }' > "$TMP/bc" 2> "$TMP/bc.err" &
	PY=$!
	exec 8< "$TMP/bc"
	read -r -t 30 l <&8 && [ "$l" = go ] || fail "tid: $l $(cat "$TMP/bc.err")"
	echo >&5
	wait "$TP" || fail "target: exit $?"
	# -p's run ends with the process
	wait "$BTPID" || fail "-p: exit $?: $(cat "$TMP/bp.err")"
	BTPID=
	kill -TERM "$PY"
	wait "$PY" || fail "tid: exit $?: $(cat "$TMP/bc.err")"
	PY=
	sed -n "/^@/p" <&7 > "$TMP/bp.out"
	sed -n "/^@/p" <&8 > "$TMP/bc.out"
	exec 5>&- 6<&- 7<&- 8<&-
	# getppid() is OpenBSD's 39
	grep -qx '@\[39\]: 1000' "$TMP/bp.out" ||
	    fail "-p: $(cat "$TMP/bp.out" "$TMP/bp.err")"
	grep -qx '0 events filtered by dtd' "$TMP/bp.err" ||
	    fail "-p: dtd filtered: $(cat "$TMP/bp.err")"
	echo '@: 500' | diff -u - "$TMP/bc.out" ||
	    fail "tid: $(cat "$TMP/bc.err")"
	grep -qx '0 events dropped' "$TMP/bp.err" ||
	    fail "-p: dropped: $(cat "$TMP/bp.err")"
	kill -- -"$NOISE"
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	grep -q 'cannot follow' "$TMP/dtd.log" &&
	    fail "dtd filtered the pid itself: $(cat "$TMP/dtd.log")"
	# both runs' records of the target, and a few more calls of its
	recs=$(sed -n 's/^dtd: tracepoint: \([0-9]*\) records.*/\1/p' \
	    "$TMP/dtd.log")
	echo "dtd read ${recs:-?} perf records"
	[ -n "$recs" ] && [ "$recs" -lt 5000 ] ||
	    fail "dtd read ${recs:-no} records: $(cat "$TMP/dtd.log")"
	;;
pidprofile)
	# -p with the profile provider: each CPU samples the process's
	# threads alone (per-task events, dt_perf_task.c), never the
	# machine's, while another process spins beside it: every sample
	# dtd read is the process's (it filtered none, and its log's count
	# is btrace's).
	cp /bin/dd "$TMP/uq_pps" && cp /bin/dd "$TMP/uq_ppn" || exit 2
	setsid "$TMP/uq_ppn" if=/dev/zero of=/dev/null bs=1M 2> /dev/null &
	NOISE=$!
	trap 'kill -- -$NOISE 2> /dev/null; dtd_cleanup' EXIT
	"$TMP/uq_pps" if=/dev/zero of=/dev/null bs=1M 2> /dev/null &
	SP=$!
	bt -v -p "$SP" -e 'profile:hz:97 { @[pid, comm] = count(); }
	    interval:ms:500 { exit(); }' > "$TMP/out" 2> "$TMP/err" ||
	    fail "exit code $?: $(cat "$TMP/err")"
	kill "$SP" && kill -- -"$NOISE"
	n=$(sed -n "s/^@\[$SP, uq_pps\]: //p" "$TMP/out")
	[ -n "$n" ] && [ "$n" -gt 0 ] && [ "$(grep -c '^@' "$TMP/out")" = 1 ] ||
	    fail "samples: $(cat "$TMP/out" "$TMP/err")"
	grep -qx '0 events filtered by dtd' "$TMP/err" ||
	    fail "dtd filtered: $(cat "$TMP/err")"
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	grep -q 'cannot follow' "$TMP/dtd.log" &&
	    fail "dtd filtered the pid itself: $(cat "$TMP/dtd.log")"
	grep -q "^dtd: profile: $n samples" "$TMP/dtd.log" ||
	    fail "dtd read more than $n samples: $(cat "$TMP/dtd.log")"
	echo "$n samples of $SP"
	;;
kcount)
	# A count of a kernel tracepoint keyed by nothing but the CPU and
	# the probe, under a filter the kernel takes whole, is a counter in
	# the kernel: no record of it reaches dtd, so none can be dropped
	# (a sampled event's buffer dropped a tenth to a quarter of such a
	# count beside other work: commsw_bench).  It counts exactly while
	# another process makes system calls flat out, and two opens of
	# one probe with other filters each count their own.  strace
	# counts the same runs (its execve, which the tracepoint sees under
	# strace's name, and the exit_group it leaves out cancel).
	cp /bin/dd "$TMP/uq_kcx" && cp /bin/dd "$TMP/uq_kcy" &&
	    cp /bin/dd "$TMP/uq_kcn" && cp /bin/sh "$TMP/uq_kcw" || exit 2
	setsid "$TMP/uq_kcn" if=/dev/zero of=/dev/null bs=1 2> /dev/null &
	NOISE=$!
	PY=
	trap 'kill -- -$NOISE 2> /dev/null; [ -n "$PY" ] && kill $PY
	    dtd_cleanup' EXIT
	mkfifo "$TMP/kx" "$TMP/ky" || exit 2
	"$BTRACE" -d "$DEV" -v -e 'BEGIN { printf("go\n"); }
	    tracepoint:raw_syscalls:sys_enter /comm == "uq_kcx"/ {
		@ = count(); @c[cpu] = count(); @p[probe] = count(); }' \
	    > "$TMP/kx" 2> "$TMP/kx.err" &
	BTPID=$!
	exec 6< "$TMP/kx"
	read -r -t 30 l <&6 && [ "$l" = go ] || fail "x: $l $(cat "$TMP/kx.err")"
	"$BTRACE" -d "$DEV" -e 'BEGIN { printf("go\n"); }
	    tracepoint:raw_syscalls:sys_enter /comm == "uq_kcy" && tid > 1/ {
		@ = count(); }' > "$TMP/ky" 2> "$TMP/ky.err" &
	PY=$!
	exec 7< "$TMP/ky"
	read -r -t 30 l <&7 && [ "$l" = go ] || fail "y: $l $(cat "$TMP/ky.err")"
	for p in x y; do
		[ $p = x ] && n=40000 || n=7000
		strace -f -qq -c -U calls -o "$TMP/$p.strace" "$TMP/uq_kc$p" \
		    if=/dev/zero of=/dev/null bs=1 count=$n 2> /dev/null ||
		    fail "strace $p"
	done
	kill -TERM "$BTPID" "$PY"
	wait "$BTPID" || fail "x: exit $?: $(cat "$TMP/kx.err")"
	wait "$PY" || fail "y: exit $?: $(cat "$TMP/ky.err")"
	BTPID=
	PY=
	sed -n "/^@/p" <&6 > "$TMP/kx.out"
	sed -n "/^@/p" <&7 > "$TMP/ky.out"
	exec 6<&- 7<&-
	cx=$(awk '$NF == "total" { print $1 }' "$TMP/x.strace")
	cy=$(awk '$NF == "total" { print $1 }' "$TMP/y.strace")
	[ -n "$cx" ] && [ -n "$cy" ] || fail "no strace counts"
	grep -qx "@: $cx" "$TMP/kx.out" ||
	    fail "x: strace $cx: $(cat "$TMP/kx.out" "$TMP/kx.err")"
	grep -qx "@p\[tracepoint:raw_syscalls:sys_enter\]: $cx" "$TMP/kx.out" ||
	    fail "x by probe: strace $cx: $(cat "$TMP/kx.out")"
	sum=$(awk '/^@c\[/ { s += $2 } END { print s + 0 }' "$TMP/kx.out")
	[ "$sum" -eq "$cx" ] || fail "x by cpu: $sum of $cx: $(cat "$TMP/kx.out")"
	echo "@: $cy" | diff -u - "$TMP/ky.out" || fail "y: strace $cy"
	grep -qx '0 events dropped' "$TMP/kx.err" ||
	    fail "x: dropped: $(cat "$TMP/kx.err")"
	# counted in the kernel: no record of x's calls reached dtd
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	rec=$(sed -n 's/^dtd: tracepoint: \([0-9]*\) records.*/\1/p' \
	    "$TMP/dtd.log")
	[ "${rec:-0}" -lt $((cx / 10)) ] ||
	    fail "x's calls went through perf's buffers: $(cat "$TMP/dtd.log")"
	# sched_wakeup has a comm field of its own, the woken task's,
	# which is what ftrace's "comm" names there: the rule counts the
	# wakeups the current thread makes, as dtd reads comm, not those
	# of uq_kcw (two a child here, 79-80 in all), which it once counted.
	# The current thread's are some 40 with dash (bpftrace counts 45):
	# each vfork child wakes its parent in its execve, before it takes
	# the new program's name (dt_tp_task_fork()); fewer with a shell
	# that forks.
	# The kernel program (dt_tp_kbpf.c) would take the rule, and read
	# the current thread's name itself: the ftrace filter's translation
	# is what is checked, on a dtd without it.
	USERDT_KBPF=0 dtd_serve "$DTD"
	mkfifo "$TMP/kw" || exit 2
	"$BTRACE" -d "$DEV" -e 'BEGIN { printf("go\n"); }
	    tracepoint:sched:sched_wakeup /comm == "uq_kcw"/ { @ = count(); }' \
	    > "$TMP/kw" 2> "$TMP/kw.err" &
	BTPID=$!
	exec 6< "$TMP/kw"
	read -r -t 30 l <&6 && [ "$l" = go ] || fail "w: $l $(cat "$TMP/kw.err")"
	"$TMP/uq_kcw" -c 'i=0; while [ $i -lt 40 ]; do /bin/sleep 0.001
	    i=$((i + 1)); done' || fail "uq_kcw"
	kill -TERM "$BTPID"
	wait "$BTPID" || fail "w: exit $?: $(cat "$TMP/kw.err")"
	BTPID=
	w=$(sed -n 's/^@: //p' <&6)
	exec 6<&-
	[ "${w:-0}" -lt 60 ] || fail "w: $w wakeups of uq_kcw counted as its own"
	;;
kcounttree|ksamptree)
	# btrace -c's aggregations of a tracepoint are the command's tree's
	# alone, exact beside another copy of the program making the same
	# calls flat out (the noise has the command's name, so only the
	# tree tells them apart):
	#   kcounttree: a plain count, the kernel's (DTIOCTREE, DTF_F_TREE:
	#     a counter the tree inherits);
	#   ksamptree: a count keyed by an argument, which no counter keeps,
	#     folded by dtd from the records the kernel selects for the tree
	#     (DTEVT_TREE), so the noise never fills the perf buffers they
	#     go through; the command's calls fit in one, however late dtd
	#     drains it.
	# Both once read the whole machine's records, to be thrown away by
	# the tree filter (BTRACE_NOPUSH=1: 60% counted, "Lost" printed).
	# The program's own start makes the same calls every run: the
	# difference of two runs is the loop's calls, exactly.
	export USERDT_SOCKET=$TMP/ingest.sock
	mkdir "$TMP/noise" && cp "$GETPPID_STATIC" "$TMP/noise/" || exit 2
	"$TMP/noise/getppid_static" 4000000000 &
	NOISE=$!
	trap 'kill $NOISE 2> /dev/null; dtd_cleanup' EXIT
	if [ "$CASE" = kcounttree ]; then
		key= calls=250000
	else
		# OpenBSD's getppid is 39
		key='[arg0]' calls=3000
	fi
	prog="tracepoint:raw_syscalls:sys_enter /comm == \"getppid_static\"/ {
	    @$key = count(); }"
	for n in 0 0 $calls; do
		"$BTRACE" -d "$DEV" -v -c "$GETPPID_STATIC $n" -e "$prog" \
		    > "$TMP/kt.out" 2> "$TMP/kt.err" ||
		    fail "$n: exit $?: $(cat "$TMP/kt.err")"
		grep -qx '1 rules aggregated in dtd' "$TMP/kt.err" ||
		    fail "$n: not aggregated in dtd: $(cat "$TMP/kt.err")"
		grep -qx '0 events dropped' "$TMP/kt.err" ||
		    fail "$n: dropped: $(cat "$TMP/kt.err")"
		c=$(sed -n 's/^@\(\[39\]\)\{0,1\}: //p' "$TMP/kt.out")
		base=${base:-${c:-0}}
		[ "${c:-0}" -eq $((base + n)) ] ||
		    fail "$n: counted ${c:-0}, want $base + $n: $(cat "$TMP/kt.out" "$TMP/kt.err")"
	done
	;;
sigend)
	# A signal ends a run whose count dtd folds, while the last events
	# are still on their way: those dtd folds are waited for, and those
	# it puts into the ring as records (a comm with a byte btrace
	# escapes, which dtd cannot judge) are read, so that the count holds
	# every call before the signal.  The records once stayed unread
	# (32 to 2507 of 3000 counted).  The command signals btrace right
	# after its last open (its pid through a FIFO), then waits to be
	# stopped with the run.
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	ln -s "$OPENAT_N" "$TMP/b\\x" || exit 2
	mkfifo "$TMP/btpid" || exit 2
	for r in 1 2 3; do
		"$BTRACE" -d "$DEV" -v -c "read p < $TMP/btpid; '$TMP/b\\x' 3000; kill -TERM \$p; sleep 30" \
		    -e 'syscall:openat:entry /comm != "zzz"/ { @[comm] = count(); }' \
		    > "$TMP/sg.out" 2> "$TMP/sg.err" &
		BTPID=$!
		echo $BTPID > "$TMP/btpid"
		# its status is the command's, ended with the run (143)
		wait $BTPID
		BTPID=
		grep -qxF '@[b\\x]: 3000' "$TMP/sg.out" ||
		    fail "$r: $(cat "$TMP/sg.out" "$TMP/sg.err")"
		grep -qx '1 rules aggregated in dtd' "$TMP/sg.err" ||
		    fail "$r: not folded: $(cat "$TMP/sg.err")"
	done
	;;
output)
	# -o: btrace's output in the file, the command's on stdout
	export USERDT_SOCKET=$TMP/ingest.sock
	bt -o "$TMP/file" -f json -c 'echo from-command' \
	    -e 'syscall:write:entry /comm == "sh"/ { @ = count(); }' \
	    > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	echo from-command | diff -u - "$TMP/out" || fail "stdout"
	echo '{"type": "map", "data": {"@": 1}}' | diff -u - "$TMP/file" ||
	    fail "-o file"
	;;
pipeflush)
	# Into a pipe, each event's output arrives as it happens: the
	# first line is read while btrace still runs (exit() comes only
	# once the test has read it and released the gate).
	export USERDT_SOCKET=$TMP/ingest.sock
	mkfifo "$TMP/gate" "$TMP/pipe" || exit 2
	exec 6<>"$TMP/pipe"
	"$BTRACE" -d "$DEV" -c "read l < $TMP/gate" -e '
	    BEGIN { printf("begin\n"); }
	    syscall:openat:entry /comm == "sh"/ { printf("open\n"); }
	    syscall:read:entry /comm == "sh"/ { printf("read\n"); }' \
	    >&6 2> "$TMP/err" &
	BTPID=$!
	read -r -t 30 l1 <&6 || fail "BEGIN's output did not arrive"
	[ "$l1" = begin ] || fail "first line: $l1"
	# the shell opens the gate before reading it
	read -r -t 30 l2 <&6 || fail "an event's output did not arrive"
	[ "$l2" = open ] || fail "second line: $l2"
	exec 7> "$TMP/gate"
	exec 7>&-
	wait "$BTPID"
	rc=$?
	BTPID=
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/err")"
	;;
deepstack)
	# A profile of a 40-deep recursion: ustack(127) asks for userdt's
	# deep stacks (DTEVT_DEEPSTACK) and shows every frame; plain ustack
	# shows dt(4)'s 19, as OpenBSD's btrace would.
	export USERDT_SOCKET=$TMP/ingest.sock
	# each run ends with its command, 2 s at depth 40
	bt -c "$DEEP_SPIN 40 2" -e 'profile:hz:199 { @[ustack(127)] = count(); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	set -- $(deepest "$TMP/out")
	[ "$1" = 40 ] || fail "deep: $1 recurse frames: $(cat "$TMP/out")"
	grep -qx 'main+0x[0-9a-f]*' "$TMP/out" || fail "deep: no main"
	bt -c "$DEEP_SPIN 40 2" -e 'profile:hz:199 { @[ustack] = count(); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	set -- $(deepest "$TMP/out")
	[ "$2" = 19 ] || fail "plain: $2 frames: $(cat "$TMP/out")"
	# ustack(N) cuts at N, below dt(4)'s depth too
	bt -c "$DEEP_SPIN 40 1" -e 'profile:hz:199 { @[ustack(5)] = count(); }' > "$TMP/out" 2>&1
	set -- $(deepest "$TMP/out")
	[ "$2" = 5 ] || fail "ustack(5): $2 frames: $(cat "$TMP/out")"
	;;
deepsys)
	# The syscall provider's user stacks of a 40-deep recursion that
	# calls getppid at the bottom: ustack(64) asks for deep stacks and
	# shows all 40 levels, main and libc's start; plain ustack shows
	# dt(4)'s 19, as OpenBSD's btrace would.
	export USERDT_SOCKET=$TMP/ingest.sock
	prog='syscall:getppid:entry { @[ustack(64)] = count(); }'
	bt -c "$DEEP_GETPPID 40 3" -e "$prog" > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	set -- $(deepest "$TMP/out")
	[ "$1" = 40 ] || fail "deep: $1 recurse frames: $(cat "$TMP/out")"
	[ "$2" -ge 42 ] || fail "deep: $2 frames: $(cat "$TMP/out")"
	grep -qx 'main+0x[0-9a-f]*' "$TMP/out" || fail "deep: no main"
	grep -q '^@\[$' "$TMP/out" && grep -qx ']: 3' "$TMP/out" ||
	    fail "deep: not one stack seen 3 times: $(cat "$TMP/out")"
	# all calls mode walks from the SIGSYS context: as deep
	USERDT_ALLCALLS=1 bt -c "$DEEP_GETPPID 40 3" -e "$prog" > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "allcalls: exit code $rc: $(cat "$TMP/out")"
	set -- $(deepest "$TMP/out")
	[ "$1" = 40 ] || fail "allcalls: $1 recurse frames: $(cat "$TMP/out")"
	bt -c "$DEEP_GETPPID 40 3" -e 'syscall:getppid:entry { @[ustack] = count(); }' > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "plain: exit code $rc: $(cat "$TMP/out")"
	set -- $(deepest "$TMP/out")
	[ "$2" = 19 ] || fail "plain: $2 frames: $(cat "$TMP/out")"
	;;
debugsyms)
	# libc's static functions are named from libc6-dbg's separate
	# debug file (by build id), as perf and gdb name them: a qsort
	# callback's caller is msort_with_tmp, which libc's own .dynsym
	# does not have.
	export USERDT_SOCKET=$TMP/ingest.sock
	# the run ends with the command, after 2 s of sorting: however
	# long the preload library's start took
	prog='profile:hz:199 { @[ustack(2)] = count(); }'
	bt -c "$QSORT_SPIN 2" -e "$prog" > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -A1 '^cmp+0x[0-9a-f]*$' "$TMP/out" |
	    grep -q '^msort_with_tmp[.a-z0-9]*+0x[0-9a-f]*$' ||
	    fail "no msort_with_tmp under cmp: $(cat "$TMP/out")"
	# An address no symbol covers: the module and the offset in the
	# file, the same in every process.  The stripped twin has the
	# same layout: its cmp is where the unstripped one says.
	bt -c "$QSORT_SPIN_S 2" -e "$prog" > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	read -r lo size <<-EOF
	$(nm -S "$QSORT_SPIN" | awk '$4 == "cmp" { print $1, $2 }')
	EOF
	# the text segment's file offset minus its address
	delta=$(readelf -lW "$QSORT_SPIN" | awk '$1 == "LOAD" && $7 == "E" {
	    print strtonum($2) - strtonum($3) }')
	found=0
	for f in $(sed -n 's/^qsort_spin_s+0x\([0-9a-f]*\)$/\1/p' "$TMP/out"); do
		o=$((16#$f)); l=$((16#$lo + delta)); h=$((l + 16#$size))
		[ $o -ge $l ] && [ $o -lt $h ] && found=1
	done
	[ $found = 1 ] || fail "no qsort_spin_s+OFF in cmp: $(cat "$TMP/out")"
	;;
procids)
	# uid, gid and cgroup of a traced process, as /proc says (the
	# command inherits this shell's ids and cgroup); a Linux
	# tracepoint's fields by name, args.NAME and args->NAME
	export USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0
	cg=$(stat -c %i "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)")
	# (read from /proc when btrace handles the event: sleep is alive
	# then, a process already gone would give -1)
	bt -c "$OPENAT_N 1; sleep 1" -e 'syscall:*sleep*:entry /comm == "sleep"/ {
		printf("ids %d %d %d\n", uid, gid, cgroup); }
	    tracepoint:sched:process_exec /args->pid == pid && comm == "openat_n"/ {
		printf("exec %s %d\n", str(args.filename), args.pid == pid); }' \
	    > "$TMP/out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -qx "ids $(id -u) $(id -g) $cg" "$TMP/out" ||
	    fail "ids (want $(id -u) $(id -g) $cg): $(cat "$TMP/out")"
	grep -qx "exec $OPENAT_N 1" "$TMP/out" ||
	    fail "exec: $(cat "$TMP/out")"
	# -lv: one argument a line, type and name
	bt -lv 'tracepoint:sched:sched_switch' > "$TMP/out" 2>&1
	sed -n 1,3p "$TMP/out" > "$TMP/head"
	printf '%s\n' 'tracepoint:sched:sched_switch' '    char * prev_comm' \
	    '    pid_t prev_pid' | diff -u - "$TMP/head" || fail "-lv"
	# a name the probe has not
	bt -e 'tracepoint:sched:sched_switch { printf("%d\n", args.nope); }' \
	    > "$TMP/out" 2>&1
	[ $? -eq 1 ] || fail "args.nope: exit code"
	head -1 "$TMP/out" | grep -q "probe 'tracepoint:sched:sched_switch' has no argument named 'nope'" ||
	    fail "args.nope: $(cat "$TMP/out")"
	;;
latpairs)
	# A read() latency histogram, entry and return paired by a map
	# keyed by tid, over four dd's at once that outrun btrace:
	# lossless (-c), nothing dropped.  dtd once drained each tracee's
	# ring whole into the reader's once that was under half full, and
	# lost most of the events here, and the pairs with them.  dd reads
	# its input on fd 0: 4 x n reads, every one paired.  And in time
	# order, which dtd's log says at its exit: a pass the budget cut
	# took the rings one after another, and the sequencer's bound let
	# the young records it took out before the old ones it left, which
	# came late (17 to 30% of the 8 x n events), and a late event could
	# be read after the same thread's next one, from another CPU's
	# ring: a few pairs missed.  Now each pass takes the oldest first,
	# and the sequencer waits for the drain's records while the reader
	# holds them back, up to 150 ms: on a loaded machine none or a few
	# late.  On a quiet one about half the runs still had 12-28% late:
	# held events filled the reader's room, younger than records still
	# in the tracees' rings, and the reserve meant for those was cut to
	# what was left of the room, nothing, or took only what let the
	# oldest held event go; the drain took a record a pass or none for
	# 130 ms, until the sequencer's patient bound let the held events
	# out first.  Now the reserve takes the oldest records whatever is
	# held, and the sequencer lets into the rings only what they have
	# room for: none late, or a very few.  Four runs, as about half
	# ran into it.
	export USERDT_SOCKET=$TMP/ingest.sock
	n=20000
	for r in 1 2 3 4; do
		bt -v -c "for i in 1 2 3 4; do dd if=/dev/zero of=/dev/null \
		    bs=4k count=$n 2> /dev/null & done; wait" \
		    -e 'syscall:read:entry /arg0 == 0/ { @s[tid] = nsecs; }
		    syscall:read:return /@s[tid]/ {
			@h = hist(nsecs - @s[tid]); delete(@s[tid]); }' \
		    > "$TMP/out" 2> "$TMP/err" ||
		    fail "run $r: exit: $(cat "$TMP/err")"
		got=$(awk '/^\[/ { sub(/^[^)]*\)[ \t]*/, ""); s += $1 }
		    END { print s + 0 }' "$TMP/out")
		grep -qx '0 events dropped' "$TMP/err" ||
		    fail "run $r: dropped: $(cat "$TMP/err")"
		[ "$got" -eq $((4 * n)) ] ||
		    fail "run $r: $got reads in the histogram of $((4 * n)): $(cat "$TMP/out" "$TMP/err")"
		# what came late to this open, at most 1% of its events
		late=$(sed -n 's/^[^:]*: \([0-9]*\) events came out of time order.*/\1/p' \
		    "$TMP/err")
		[ "${late:-0}" -lt $((8 * n / 100)) ] ||
		    fail "run $r: $late events late: $(cat "$TMP/err")"
	done
	# and dtd's count over the four, said as it stops
	kill -TERM "$DTDPID"
	wait "$DTDPID"
	DTDPID=
	late=$(sed -n 's/^dtd: order: \([0-9]*\) of .*came late.*/\1/p' \
	    "$TMP/dtd.log")
	[ "${late:-0}" -lt $((4 * 8 * n / 100)) ] ||
	    fail "$late events late: $(cat "$TMP/dtd.log")"
	;;
second)
	# A second dtd on what a live one serves refuses at once, and the
	# live one keeps everything: its device, its sockets and its symbol
	# image.  A refused dtd once started its services before the front
	# end looked, put its own image over the live one's and removed it
	# on the way out.  timeout bounds a refusal that would hang instead.
	ino=$(stat -c %i "$TMP/ksyms") || fail "no $TMP/ksyms"
	refused() {	# what, expected message, dtd option ...
		local what=$1 msg=$2 rc
		shift 2
		timeout 30 "$DTD" --foreground --frontend fuse \
		    --ksyms "$TMP/ksyms" "$@" > "$TMP/second" 2>&1
		rc=$?
		[ $rc -eq 1 ] || fail "$what: status $rc: $(cat "$TMP/second")"
		echo "dtd: $msg" | diff -u - "$TMP/second" || fail "$what"
		[ "$(stat -c %i "$TMP/ksyms" 2>&1)" = "$ino" ] ||
		    fail "$what: the live dtd's $TMP/ksyms was replaced or removed"
	}
	refused "same device" "$DEV is already served (a mount point): is another dtd running?" \
	    --device "$DEV" --ingest "$TMP/second.sock"
	[ ! -e "$TMP/second.sock" ] || fail "same device: its ingest socket was made"
	refused "same ingest socket" "another dtd serves $TMP/ingest.sock (--ingest)" \
	    --device "$TMP/dt2" --ingest "$TMP/ingest.sock"
	[ ! -e "$TMP/dt2" ] || fail "same ingest socket: its device was made"
	# what the front end would refuse anyway (here a fifo; a CUSE dtd's
	# device node is the case met in life) is refused before too
	mkfifo "$TMP/dt3" || exit 2
	refused "not a file" "$TMP/dt3 exists and is not a regular file; the FUSE-file front end mounts over a regular file" \
	    --device "$TMP/dt3" --ingest "$TMP/third.sock"
	# the live one still serves its device and its tracees
	USERDT_SOCKET=$TMP/ingest.sock USERDT_LOADER=0 bt -c "$OPENAT_N 2" \
	    -e 'syscall:openat:entry /comm == "openat_n"/ { @ = count(); }' \
	    > "$TMP/out" 2> "$TMP/err" || fail "after: $(cat "$TMP/err")"
	echo '@: 2' | diff -u - "$TMP/out" || fail "after: $(cat "$TMP/err")"
	;;
*)
	fail "unknown case $CASE"
	;;
esac
exit 0
