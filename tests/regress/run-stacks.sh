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
# User stacks of traced programs show the program's frames only (design
# decision 17): no frame of the preload library, its trampolines or its
# entry, whoever took the stack, and the same frames perf records for
# the program untraced.  Each case starts a private dtd on a temporary
# device path (FUSE-file front end) and stops it by pid.
#
# usage: run-stacks.sh btrace dtd tracee case
#   profile	profile:hz samples of a write loop (stacks_tracee write)
#   offcpu	sched:off__cpu stacks of a sleeper (stacks_tracee sleep)
#   decode	profile samples while the library decodes (its disassembler
#		module's frames cut too; USERDT_CSMOD names the module)
#   nohelper	btrace -c's helper and btrace itself appear in no result
set -u

[ $# -eq 4 ] || { echo "usage: $0 btrace dtd tracee case" >&2; exit 2; }
BTRACE=$1
DTD=$2
TRACEE=$3
CASE=$4

. "$(dirname "$0")/lib.sh"
command -v perf > /dev/null || fail "perf is needed"
dtd_start
export USERDT_SOCKET=$TMP/ingest.sock

# run [btrace flags...]: folded output in $TMP/out
run() {
	"$BTRACE" -d "$DEV" -f folded "$@" > "$TMP/out" 2> "$TMP/err" &
	BTPID=$!
	wait "$BTPID"
	rc=$?
	BTPID=
	[ $rc -eq 0 ] || fail "btrace: exit code $rc: $(cat "$TMP/err")"
}

# A function's name as both symbolizers give it: perf reads .symtab
# (__GI___libc_write, clock_nanosleep@GLIBC_2.2.5), btrace the dynamic
# symbols (__write).
NORM='
import re, sys
def norm(f):
    f = re.sub(r"\+0x[0-9a-f]+$", "", f.split("@")[0])
    while True:
        g = re.sub(r"^(_+|GI_|libc_)", "", f)
        if g == f:
            return f
        f = g
'

# The stacks of btrace's folded output, from main to the leaf, with
# their counts: "count frame;frame..." by count.  Fails on a tracer frame.
bt_stacks() {
	python3 -c "$NORM"'
from collections import Counter
c = Counter()
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if not line or line.startswith("Lost"):
        continue
    st, n = line.rsplit(" ", 1)
    fr = st.split(";")
    for f in fr:
        if f.startswith("udt_") or f.startswith("userdt"):
            sys.exit("a tracer frame: " + line)
    if "main" not in fr:
        continue
    c[";".join(norm(f) for f in fr[fr.index("main"):])] += int(n)
for k, v in c.most_common():
    print(v, k)' "$1"
}

# The same of perf script's output (user frames, leaf first), for comm.
perf_stacks() {
	python3 -c "$NORM"'
from collections import Counter
c = Counter()
for blk in open(sys.argv[1]).read().split("\n\n"):
    lines = blk.strip().split("\n")
    if len(lines) < 2 or lines[0].split()[0] != sys.argv[2]:
        continue
    fr = []
    for l in lines[1:]:
        a = l.split(None, 1)
        if len(a) == 2 and not a[0].startswith("ffffffff"):
            fr.append(a[1].split()[0])
    fr.reverse()
    if "main" in fr:
        c[";".join(norm(f) for f in fr[fr.index("main"):])] += 1
for k, v in c.most_common():
    print(v, k)' "$1" "$2"
}

# same BTSTACKS PERFSTACKS: the most frequent stack is the same, and
# it is at least half of btrace's samples from main.
same() {
	local b p bn btot
	b=$(head -1 "$1" | cut -d' ' -f2)
	bn=$(head -1 "$1" | cut -d' ' -f1)
	btot=$(awk '{ s += $1 } END { print s + 0 }' "$1")
	p=$(head -1 "$2" | cut -d' ' -f2)
	[ -n "$b" ] || fail "no btrace stack from main: $(cat "$TMP/out")"
	[ "$b" = "$p" ] || fail "btrace's stack $b, perf's $p
btrace: $(head -5 "$1")
perf: $(head -5 "$2")"
	[ $((bn * 2)) -ge "$btot" ] || fail "$b in $bn of $btot samples: $(head -5 "$1")"
}

case $CASE in
profile)
	# A profile of a syscall-heavy loop: mostly write, called (through
	# stk_writer, which a frame-pointer walk from a leaf without one
	# skips) from main.
	run -c "$TRACEE write 3000000 > /dev/null" \
	    -e 'profile:hz:499 /comm == "stacks_tracee"/ { @[ustack] = count(); }'
	bt_stacks "$TMP/out" > "$TMP/bt" 2> "$TMP/bterr" ||
	    fail "$(cat "$TMP/bterr")"
	perf record -q -F 499 -g -o "$TMP/perf.data" \
	    "$TRACEE" write 3000000 > /dev/null 2> "$TMP/perf.err" ||
	    fail "perf record: $(cat "$TMP/perf.err")"
	perf script -i "$TMP/perf.data" -F comm,ip,sym > "$TMP/perf.txt" \
	    2> /dev/null || fail "perf script"
	perf_stacks "$TMP/perf.txt" stacks_tracee > "$TMP/perf"
	same "$TMP/bt" "$TMP/perf"
	;;
offcpu)
	# Off-CPU stacks of a sleeper: clock_nanosleep (nanosleep's call,
	# from stk_sleeper) down to main.
	run -c "$TRACEE sleep 25" \
	    -e 'tracepoint:sched:off__cpu /comm == "stacks_tracee"/ { @[ustack] = count(); }'
	bt_stacks "$TMP/out" > "$TMP/bt" 2> "$TMP/bterr" ||
	    fail "$(cat "$TMP/bterr")"
	perf record -q -e sched:sched_switch -g -o "$TMP/perf.data" \
	    "$TRACEE" sleep 25 2> "$TMP/perf.err" ||
	    fail "perf record: $(cat "$TMP/perf.err")"
	perf script -i "$TMP/perf.data" -F comm,ip,sym > "$TMP/perf.txt" \
	    2> /dev/null || fail "perf script"
	perf_stacks "$TMP/perf.txt" stacks_tracee > "$TMP/perf"
	same "$TMP/bt" "$TMP/perf"
	;;
decode)
	# Samples while the library decodes the program's objects (no
	# plans: USERDT_REWRITE=debug), in its disassembler's module, mapped
	# after dtd's snapshot of the process: none of the module's
	# functions (its own symbols, by nm) in any stack.  (A sample in
	# libc called by the library keeps the library's frames under it:
	# the cut goes from the leaf, and stops at libc's frame.)
	[ -n "${USERDT_CSMOD:-}" ] || fail "USERDT_CSMOD is not set"
	# Less the names libc and the loader define too: the module's own
	# memset or strcmp, hidden, and theirs look alike in a stack.
	for l in $(ldd "$TRACEE" | awk '$1 ~ /^\// { print $1 } $3 ~ /^\// { print $3 }'); do
		nm -D --defined-only "$l" 2> /dev/null
	done | awk '{ print $NF }' | sed 's/@.*//' | sort -u > "$TMP/libcfns"
	[ -s "$TMP/libcfns" ] || fail "no names from the tracee's libraries"
	nm --defined-only "$USERDT_CSMOD" 2> /dev/null |
	    awk '$2 ~ /^[tT]$/ { print $3 }' | sort -u |
	    comm -23 - "$TMP/libcfns" > "$TMP/csfns"
	[ -s "$TMP/csfns" ] || fail "no function names in $USERDT_CSMOD"
	for r in 1 2 3 4 5 6; do
		# debug: no plan is used, and the pass says what it decoded.
		USERDT_REWRITE=debug run -c "$TRACEE write 200000 > /dev/null" \
		    -e 'profile:hz:4999 /comm == "stacks_tracee"/ { @[ustack] = count(); }'
		grep -Eq '[1-9][0-9]* rewritten' "$TMP/err" ||
		    fail "round $r: nothing decoded: $(tail -3 "$TMP/err")"
		# Where the module's text went in the tracee (the shell
		# decodes too): a frame there btrace could not name is one
		# of its frames as well.
		text=$(sed -n 's/.* stacks_tracee: disassembler text at \(0x[0-9a-f]*-0x[0-9a-f]*\).*/\1/p' \
		    "$TMP/err" | head -1)
		[ -n "$text" ] || fail "round $r: the module's text not said"
		python3 -c '
import re, sys
fns = set(open(sys.argv[2]).read().split())
lo, hi = (int(x, 16) for x in sys.argv[3].split("-"))
for line in open(sys.argv[1]):
    st = line.rstrip("\n").rsplit(" ", 1)[0]
    for f in st.split(";"):
        g = f.split("+")[0]
        a = int(g, 16) if re.fullmatch(r"0x[0-9a-f]+", g) else None
        if g in fns or "preload-cs" in f or (a is not None and lo <= a < hi):
            sys.exit("a frame of the tracer: " + line.strip())' \
		    "$TMP/out" "$TMP/csfns" "$text" || fail "round $r"
	done
	;;
nohelper)
	# Off-CPU time of -c's tree by comm: the command's, nothing of the
	# launcher's helper or of btrace.
	run -c "$TRACEE sleep 10" \
	    -e 'tracepoint:sched:off__cpu { @off[comm] = count(); }'
	grep -q '^stacks_tracee ' "$TMP/out" || fail "no tracee: $(cat "$TMP/out")"
	if grep -v '^stacks_tracee \|^sh \|^Lost ' "$TMP/out"; then
		fail "not of the command: $(cat "$TMP/out")"
	fi
	;;
*)
	fail "no case $CASE"
	;;
esac
exit 0
