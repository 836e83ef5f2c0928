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
# The example scripts of examples/, unchanged, against real commands
# whose doings are known: what each prints must be what the command did.
# Each case starts a private dtd on a temporary device path (FUSE-file
# front end) and stops it by pid.
#
# usage: run-examples.sh btrace dtd examples-dir case
set -u

[ $# -eq 4 ] || { echo "usage: $0 btrace dtd examples-dir case" >&2; exit 2; }
BTRACE=$1
DTD=$2
EX=$3
CASE=$4

. "$(dirname "$0")/lib.sh"
dtd_start
export USERDT_SOCKET=$TMP/ingest.sock

# run SCRIPT [btrace flags and script arguments...]: output in $TMP/out
run() {
	local script=$1
	shift
	"$BTRACE" -d "$DEV" "$@" > "$TMP/out" 2>&1 &
	BTPID=$!
	wait "$BTPID"
	rc=$?
	BTPID=
	[ $rc -eq 0 ] || fail "$script: exit code $rc: $(cat "$TMP/out")"
}

# Sum of a histogram's counts, by map: "@name total" lines.
hist_sums() {
	awk '/^@/ { m = $1 } /^[[(]/ { sub(/^[^])]*[])] */, ""); s[m] += $1 }
	    END { for (k in s) print k, s[k] }' "$1"
}

case $CASE in
opensnoop)
	# A file cat opens and one it cannot: pid, fd or -1, errno, path.
	# cat's output goes to a file of its own: cat copies with
	# copy_file_range, which takes no lock on a shared file offset, so
	# btrace's lines written meanwhile to a shared file could land on it.
	echo known > "$TMP/known"
	run opensnoop -c "echo \$\$ > $TMP/pid; exec cat $TMP/known $TMP/missing > $TMP/catout" \
	    "$EX/opensnoop.bt"
	pid=$(cat "$TMP/pid")
	head -1 "$TMP/out" | grep -q '^PID  *COMM  *FD  *ERR  *PATH$' ||
	    fail "header: $(cat "$TMP/out")"
	grep -qx "$pid  *cat  *3  *0  *$TMP/known" "$TMP/out" ||
	    fail "the file opened: $(cat "$TMP/out")"
	grep -qx "$pid  *cat  *-1  *2  *$TMP/missing" "$TMP/out" ||
	    fail "the file missing: $(cat "$TMP/out")"
	[ "$(cat "$TMP/catout")" = known ] ||
	    fail "cat's own output: $(cat "$TMP/catout")"
	;;
syscalls)
	# opens per program: openat_n's 5 (glibc's open() is openat), and
	# nothing said on stderr
	USERDT_LOADER=0 "$BTRACE" -d "$DEV" -c "$OPENAT_N 5" "$EX/syscalls.bt" \
	    > "$TMP/out" 2> "$TMP/err" || fail "exit code: $(cat "$TMP/err")"
	[ -s "$TMP/err" ] && fail "stderr: $(cat "$TMP/err")"
	grep -qx '@opens\[openat_n\]: 5' "$TMP/out" ||
	    fail "@opens: $(cat "$TMP/out")"
	;;
execsnoop)
	# The shell's own exec and a child's exec that fails with ENOENT
	run execsnoop -c "echo \$\$ > $TMP/pid; $TMP/nonexistent 2>/dev/null; exec /bin/true" \
	    "$EX/execsnoop.bt"
	pid=$(cat "$TMP/pid")
	grep -q '^TIME(ms)  *PID  *COMM  *PATH$' "$TMP/out" ||
	    fail "header: $(cat "$TMP/out")"
	grep -qx "[0-9]*  *$pid  *sh  */bin/true" "$TMP/out" ||
	    fail "exec of /bin/true: $(cat "$TMP/out")"
	child=$(sed -n "s|^[0-9]*  *\([0-9]*\)  *sh  *$TMP/nonexistent$|\1|p" "$TMP/out")
	[ -n "$child" ] || fail "failed exec not shown: $(cat "$TMP/out")"
	grep -qx "[0-9]*  *$child  *sh  *failed, errno 2" "$TMP/out" ||
	    fail "ENOENT: $(cat "$TMP/out")"
	# a successful exec is never reported as failed
	if grep -q "failed, errno 0" "$TMP/out"; then
		fail "success shown as failure: $(cat "$TMP/out")"
	fi
	;;
syscount)
	# openat_n N opens and closes /dev/null N times: from N = 20 to
	# N = 120 the counts of openat and close by name, and the total of
	# the shell's pid (exec'd into openat_n), grow by exactly 100, 100
	# and 200; the shell's own calls (its redirection) are the same in
	# both runs, the loader's are left out
	export USERDT_LOADER=0
	for n in 20 120; do
		run syscount -c "echo \$\$ > $TMP/pid; exec $OPENAT_N $n" \
		    "$EX/syscount.bt"
		pid=$(cat "$TMP/pid")
		o=$(sed -n 's/^@syscall\[syscall:openat:entry\]: //p' "$TMP/out")
		c=$(sed -n 's/^@syscall\[syscall:close:entry\]: //p' "$TMP/out")
		[ -n "$o" ] && [ "$o" -ge $n ] && [ -n "$c" ] && [ "$c" -ge $n ] ||
		    fail "openat, close, $n: $(cat "$TMP/out")"
		[ "$(grep -c '^@syscall\[' "$TMP/out")" -le 10 ] ||
		    fail "more than the top 10: $(cat "$TMP/out")"
		# its comm is sh's before the exec, openat_n's after
		t=$(awk -v p="@process[$pid," '
		    index($0, p) == 1 { s += $NF; n++ } END { if (n) print s }' "$TMP/out")
		[ -n "$t" ] || fail "process $pid: $(cat "$TMP/out")"
		eval "open_$n=$o close_$n=$c total_$n=$t"
	done
	# shellcheck disable=SC2154
	[ $((open_120 - open_20)) = 100 ] && [ $((close_120 - close_20)) = 100 ] &&
	    [ $((total_120 - total_20)) = 200 ] ||
	    fail "openat $open_20 $open_120, close $close_20 $close_120, process $total_20 $total_120"
	;;
rwlatency)
	# dd bs=1 count=500: 500 writes of a byte, at least 500 reads
	export USERDT_LOADER=0
	run rwlatency -c "dd if=/dev/zero of=/dev/null bs=1 count=500 status=none" \
	    "$EX/rwlatency.bt"
	hist_sums "$TMP/out" > "$TMP/sums"
	grep -qx '@write_ns: 500' "$TMP/sums" ||
	    fail "writes: $(cat "$TMP/sums" "$TMP/out")"
	r=$(sed -n 's/^@read_ns: //p' "$TMP/sums")
	[ -n "$r" ] && [ "$r" -ge 500 ] || fail "reads: $(cat "$TMP/out")"
	# times from entry to return: never negative
	if grep -q '^(\.\.\., 0)' "$TMP/out"; then
		fail "negative latency: $(cat "$TMP/out")"
	fi
	# the same as bpftrace's JSON: bucket lists whose counts add up
	run rwlatency -f json -o "$TMP/json" \
	    -c "dd if=/dev/zero of=/dev/null bs=1 count=500 status=none" \
	    "$EX/rwlatency.bt"
	json_check "$TMP/json" '
h = {k: v for o in objs if o["type"] == "hist" for k, v in o["data"].items()}
w = sum(b["count"] for b in h["@write_ns"])
r = sum(b["count"] for b in h["@read_ns"])
if w != 500 or r < 500 or any("min" not in b for b in h["@write_ns"]):
    sys.exit("json hists: %r" % h)' || fail "json: $(cat "$TMP/json")"
	;;
kprofile)
	# dd from /dev/zero spends its time in the kernel's read of it
	run kprofile -c "dd if=/dev/zero of=/dev/null bs=64k count=100000 status=none" \
	    "$EX/kprofile.bt"
	grep -q '^read_\(iter_\)\{0,1\}zero+0x[0-9a-f]*$' "$TMP/out" ||
	    fail "no /dev/zero read: $(cat "$TMP/out")"
	grep -q '^entry_SYSCALL_64' "$TMP/out" ||
	    fail "no system call entry: $(cat "$TMP/out")"
	grep -qx '\]: [1-9][0-9]*' "$TMP/out" || fail "no count"
	;;
uprofile)
	# busy's own functions, innermost first, in its user stacks;
	# -p ends the run when busy ends
	"$BUSY" 1 > /dev/null &
	BTPID=$!
	bpid=$BTPID
	"$BTRACE" -d "$DEV" -p "$bpid" "$EX/uprofile.bt" "$bpid" \
	    > "$TMP/out" 2>&1
	rc=$?
	wait "$bpid"
	BTPID=
	[ $rc -eq 0 ] || fail "exit code $rc: $(cat "$TMP/out")"
	grep -A2 -x 'is_prime+0x[0-9a-f]*' "$TMP/out" > "$TMP/prime"
	grep -qx 'count_primes+0x[0-9a-f]*' "$TMP/prime" ||
	    fail "is_prime's caller: $(cat "$TMP/out")"
	grep -qx 'main+0x[0-9a-f]*' "$TMP/prime" ||
	    fail "main: $(cat "$TMP/out")"
	grep -qx 'userland' "$TMP/out" || fail "no userland trailer"
	# -f json: the stacks are the keys of one map, counts its values
	"$BUSY" 1 > /dev/null &
	BTPID=$!
	bpid=$BTPID
	"$BTRACE" -d "$DEV" -f json -p "$bpid" "$EX/uprofile.bt" "$bpid" \
	    > "$TMP/json" 2>&1
	rc=$?
	wait "$bpid"
	BTPID=
	[ $rc -eq 0 ] || fail "json: exit code $rc: $(cat "$TMP/json")"
	json_check "$TMP/json" '
m = [o["data"]["@"] for o in objs if o["type"] == "map"]
if len(m) != 1 or not any("\nis_prime+0x" in k and "\ncount_primes+0x" in k
    for k in m[0]) or not all(v > 0 for v in m[0].values()):
    sys.exit("json map: %r" % m)' || fail "json: $(cat "$TMP/json")"
	;;
demo)
	# The README's first command (scripts/demo.sh): its syscall script
	# (demo.bt) over its command, lossless as -c is by default.  Nothing
	# lost, every write timed, and btrace merges dtd's folds at its pace,
	# not at every delete(@start[tid]): a round trip to dtd per event
	# left btrace behind its ring, the lossless drain held the
	# command's threads back for it, and they gave up and dropped
	# (60k events in some runs of a one-second busy).
	command -v strace > /dev/null || fail "strace is needed"
	# LeakSanitizer cannot run under ptrace: btrace's leaks are
	# checked by every other test
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	    strace -o "$TMP/strace" -e trace=ioctl "$BTRACE" -d "$DEV" -v \
	    -c "sh -c 'cat /etc/os-release | wc -l; $BUSY 1'" "$EX/demo.bt" \
	    > "$TMP/out" 2> "$TMP/err" || fail "exit code: $(cat "$TMP/err")"
	grep -q '^Lost ' "$TMP/err" && fail "lost: $(cat "$TMP/err")"
	grep -qx '0 events dropped' "$TMP/err" ||
	    fail "dropped: $(cat "$TMP/err")"
	grep -qx 'traced run finished' "$TMP/out" || fail "END: $(cat "$TMP/out")"
	writes=$(hist_sums "$TMP/out" | awk '$1 == "@write_ns:" { print $2 }')
	[ "${writes:-0}" -ge 2000 ] || fail "writes timed: ${writes:-0}"
	# busy's writes, one delete each: merges a tick, not an event
	merges=$(grep -c '0x44, 0x43,' "$TMP/strace")
	# the end's merge at least: else strace spelt the ioctl otherwise
	[ "$merges" -ge 1 ] || fail "no DTIOCAGGREAD seen: $(head -3 "$TMP/strace")"
	[ "$merges" -lt $((writes / 10)) ] ||
	    fail "$merges merges (DTIOCAGGREAD) for $writes writes"
	echo "$writes writes timed, $merges merges"
	;;
*)
	fail "unknown case $CASE"
	;;
esac
exit 0
