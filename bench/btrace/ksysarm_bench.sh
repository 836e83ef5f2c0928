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
# Issue 22's static images under a dynamic btrace -c (DTTR_F_HOOKED,
# providers/tracepoint/dt_tp_ksysarm.c), against the tree before
# (BTRACE_HOOKEDTREE=0: no feed for them, their calls unseen), the two
# taking turns in each of REPS rounds under one dtd, medians:
#   exec	a shell loop of N execs of a static program making one
#		getppid() each: the wall a exec (the helper's question to
#		dtd and the events opened and closed)
#   dexec	the same loop of a dynamic program: nothing new to pay
#   call	a dynamic getppid() loop of M calls: the wall a call
#		(the hooks' count, no kernel event in either)
#   dafter	dexec right after each mode's static loop
# always with `syscall:getppid:entry { @n = count(); }`, and the count
# each gave of the static loop; then, as the baseline this design
# avoids, the same dynamic loop under `syscall:*:entry { @n = count(); }`
# with the feed on the tree's root instead (BTRACE_HOOKEDTREE=root:
# every call of the hooked loop through perf, dropped in dtd) against
# the hooked tree's.  Root; run from the build tree:
#   bench/btrace/ksysarm_bench.sh BUILDDIR [REPS] [N] [M]
set -eu
B=${1:?build dir}
REPS=${2:-5}
N=${3:-200}
M=${4:-2000000}

# dtd on a temporary device, served before anything runs (lib.sh): $TMP
. "$(dirname "$0")/../../tests/regress/lib.sh"
dtd_need "ksysarm_bench"
dtd_tmp
dtd_serve "$B/daemon/dtd" --no-ksyms
T=$TMP
export USERDT_SOCKET="$T/ingest.sock"
ST="$B/tests/integration/tp_static"
DY="$B/tests/integration/tp_target"
S='syscall:getppid:entry { @n = count(); }'

# run MODE CMD: the wall in ns and btrace's count, "NS COUNT"
run() {
	local t0 t1 out
	t0=$(date +%s%N)
	out=$(BTRACE_HOOKEDTREE=$1 "$B/client/btrace" -d "$T/dt" -c "$2" \
	    -e "$S" 2>/dev/null)
	t1=$(date +%s%N)
	echo "$((t1 - t0)) $(echo "$out" | sed -n 's/^@n: //p')"
}
med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for r in $(seq "$REPS"); do
	# each pair in both orders, alternately: what one run leaves (dtd
	# draining a baseline's records, the kernel's perf hooks left on
	# after a static loop's events close) falls on either side
	if [ $((r % 2)) -eq 1 ]; then o="1 0"; b="1 root"; else o="0 1"; b="root 1"; fi
	for m in $o; do
		run $m "sh -c 'for i in \$(seq $N); do $DY getppid 1; done'" \
		    >> "$T/dexec.$m"
		run $m "$DY getppid $M" >> "$T/call.$m"
	done
	for m in $o; do
		run $m "sh -c 'for i in \$(seq $N); do $ST 1; done'" \
		    >> "$T/exec.$m"
		# a dynamic loop right after: that while
		run $m "sh -c 'for i in \$(seq $N); do $DY getppid 1; done'" \
		    >> "$T/dafter.$m"
	done
	S2=$S
	S='syscall:*:entry { @n = count(); }'
	for m in $b; do
		run $m "$DY getppid $M" >> "$T/all.$m"
	done
	S=$S2
done
for m in 1 root; do
	ns=$(cut -d' ' -f1 < "$T/all.$m" | med)
	echo "all hooked=$m: median wall ${ns} ns, $((ns / M)) ns a call;" \
	    "counts: $(cut -d' ' -f2 < "$T/all.$m" | tr '\n' ' ')"
done
for w in exec dexec call dafter; do
	for m in 1 0; do
		ns=$(cut -d' ' -f1 < "$T/$w.$m" | med)
		cnt=$(cut -d' ' -f2 < "$T/$w.$m" | tr '\n' ' ')
		case $w in
		call) per=$((ns / M)) ;;
		*) per=$((ns / N)) ;;
		esac
		echo "$w hooked=$m: median wall ${ns} ns, ${per} ns a" \
		    "$([ $w = call ] && echo call || echo exec); counts: $cnt"
	done
done
kill "$DTDPID"; wait "$DTDPID" 2>/dev/null || true; DTDPID=
tail -1 "$T/dtd.log" | grep -v tracepoint || true
grep 'hooked trees' "$T/dtd.log" || true
