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
# What commsw_bench.sh, commkey_bench.sh and kbsys_bench.sh share,
# sourced by them: the second dtd and the tools (comm_setup), and one
# round of btrace, or of bpftrace, on $PROG while x runs (their run_x),
# its line "count tracer-CPU x-CPU" appended to $TMP/r.CONF.  $BTRACE,
# $DTD, $BPF, $TMP, $X and $PROG are the caller's.

# comm_setup NAME VAR: after lib.sh's dtd_start, a second dtd with VAR=0
# in its environment (the path the bench compares against: its own
# device, sockets and image, pid $SDTDPID, stopped at exit), and $BPF,
# bpftrace or empty (its row left out).  NAME: the bench's, for what it
# says.
comm_setup() {
	local name=$1 var=$2 l

	mkdir "$TMP/s" && mkfifo "$TMP/s/ready" || exit 2
	exec 4<>"$TMP/s/ready"
	env "$var=0" "$DTD" --foreground --frontend fuse --device "$TMP/s/dt" \
	    --ready-fd 4 --ingest "$TMP/s/ingest.sock" \
	    --ksyms "$TMP/s/ksyms" > "$TMP/s/dtd.log" 2>&1 4>&4 &
	SDTDPID=$!
	read -r -t 30 l <&4 && [ "$l" = ready ] ||
	    { echo "$name: the second dtd: $(cat "$TMP/s/dtd.log")" >&2
	    kill "$SDTDPID"; exit 1; }
	exec 4<&-
	trap 'kill "$SDTDPID" 2> /dev/null; wait "$SDTDPID" 2> /dev/null
	    dtd_cleanup' EXIT
	BPF=$(command -v bpftrace)
	[ -n "$BPF" ] || echo "$name: no bpftrace: its row is left out"
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# CPU seconds processes $@ have used so far (utime + stime)
cpu_of() {
	local p s=0

	for p; do
		s=$(awk -v s="$s" -v hz="$(getconf CLK_TCK)" \
		    '{ printf("%.3f\n", s + ($14 + $15) / hz) }' "/proc/$p/stat")
	done
	echo "$s"
}

# the CPU seconds this shell's children have used so far, from times
# run in this shell (not a subshell, whose children are its own): file
children_cpu() {
	awk 'NR == 2 { for (i = 1; i <= 2; i++) {
		split($i, t, /[ms]/); s += t[1] * 60 + t[2] } }
	    END { printf("%.3f\n", s) }' "$1"
}
# run x (dd under the name $X, $NREAD bytes a byte at a time), its CPU
# seconds into $XCPU
run_x() {
	times > "$TMP/times0"
	"$TMP/$X" if=/dev/zero of=/dev/null bs=1 count="$NREAD" 2> /dev/null
	times > "$TMP/times1"
	XCPU=$(echo "$(children_cpu "$TMP/times0") $(children_cpu "$TMP/times1")" |
	    awk '{ printf("%.3f", $2 - $1) }')
}

# the sum of the numbers the sed expression $1 takes from stdin: x's
# count, one key's or the sum of several
comm_got() {
	sed -n "$1" | awk '{ s += $1 } END { print s + 0 }'
}

# comm_bt NAME CONF DEV DTDPID GOT [ENV]: btrace on dtd DTDPID's device
# DEV, its count read from its output by the sed expression GOT
comm_bt() {
	local name=$1 c=$2 dev=$3 dpid=$4 got_re=$5 e=${6:-} d0 d1 b1 bpid \
	    got l

	d0=$(cpu_of "$dpid")
	rm -f "$TMP/bt.fifo"
	mkfifo "$TMP/bt.fifo"
	env ${e:+"$e"} "$BTRACE" -d "$dev" \
	    -e "BEGIN { printf(\"go\\n\"); } $PROG" \
	    > "$TMP/bt.fifo" 2> "$TMP/bt.err" &
	bpid=$!
	BTPID=$bpid
	exec 6< "$TMP/bt.fifo"
	read -r -t 60 l <&6 || { echo "$name: btrace did not start: $(cat "$TMP/bt.err")" >&2; exit 1; }
	run_x
	b1=$(cpu_of "$bpid")
	kill -TERM "$bpid"
	wait "$bpid"
	BTPID=
	got=$(comm_got "$got_re" <&6)
	exec 6<&-
	d1=$(cpu_of "$dpid")
	echo "${got:-0} $(echo "$d0 $d1 $b1" |
	    awk '{ printf("%.3f", $2 - $1 + $3) }') $XCPU" >> "$TMP/r.$c"
}

# comm_bpf NAME GOT: bpftrace on $BPROG (default $PROG), its CPU from
# once its probes are attached (its BEGIN runs then: not its compile);
# no row when it never attaches
comm_bpf() {
	local name=$1 got_re=$2 bpid got l b0 b1

	[ -n "$BPF" ] || return 0
	rm -f "$TMP/bpf.fifo"
	mkfifo "$TMP/bpf.fifo"
	"$BPF" -e "BEGIN { printf(\"go\\n\"); } ${BPROG:-$PROG}" \
	    > "$TMP/bpf.fifo" 2> "$TMP/bpf.err" &
	bpid=$!
	BTPID=$bpid
	exec 7< "$TMP/bpf.fifo"
	# bounded: a bpftrace that never attaches loses its row
	while read -r -t 60 l <&7; do
		case $l in go) break ;; esac
	done
	case ${l:-} in go) ;; *)
		kill -KILL "$bpid"; wait "$bpid"; BTPID=; exec 7<&-
		echo "$name: bpftrace did not attach" >&2
		return 0 ;;
	esac
	b0=$(cpu_of "$bpid")
	run_x
	b1=$(echo "$b0 $(cpu_of "$bpid")" | awk '{ printf("%.3f", $2 - $1) }')
	int_stop "$bpid"
	got=$(comm_got "$got_re" <&7)
	wait "$bpid"
	BTPID=
	exec 7<&-
	echo "${got:-0} $b1 $XCPU" >> "$TMP/r.bpf"
}

# comm_want: $want, the calls x makes, by strace.  strace counts x's
# execve, which the kernel's tracepoint sees under the shell's name, and
# leaves out its exit_group, which never returns: the two cancel
comm_want() {
	strace -f -qq -c -U calls -o "$TMP/x.strace" "$TMP/$X" \
	    if=/dev/zero of=/dev/null bs=1 count="$NREAD" 2> /dev/null
	want=$(awk '$NF == "total" { print $1 }' "$TMP/x.strace")
}

# comm_noise ON: unless ON is 0, the other work: a second reader on the
# other core, all rounds long, stopped at exit with the second dtd and
# lib.sh's own cleanup (dtd, $BTPID, $TMP)
comm_noise() {
	[ "$1" != 0 ] || return 0
	cp /bin/dd "$TMP/commnoise" || exit 2
	setsid "$TMP/commnoise" if=/dev/zero of=/dev/null bs=1 2> /dev/null &
	NOISE=$!
	trap 'kill -- -$NOISE 2> /dev/null; kill "$SDTDPID" 2> /dev/null
	    wait "$SDTDPID" 2> /dev/null; dtd_cleanup' EXIT
}

# comm_rounds NAME RE CONF...: $REPS rounds of each CONF in turn (none:
# x alone; count, sampled, nopush: btrace on this dtd, on the second, or
# with BTRACE_NOPUSH=1; bpf: bpftrace), RE the sed expression of x's count
comm_rounds() {
	local name=$1 re=$2 i c e dpid dev

	shift 2
	for i in $(seq "$REPS"); do
		for c; do
			case $c in
			none)
				run_x
				echo "0 0 $XCPU" >> "$TMP/r.$c"
				;;
			count|sampled|nopush)
				[ $c = nopush ] && e=BTRACE_NOPUSH=1 || e=
				[ $c = sampled ] && dpid=$SDTDPID dev=$TMP/s/dt ||
				    dpid=$DTDPID dev=$DEV
				comm_bt "$name" $c "$dev" "$dpid" "$re" $e
				;;
			bpf)
				comm_bpf "$name" "$re"
				;;
			esac
		done
	done
}
