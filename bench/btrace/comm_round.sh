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
# What commsw_bench.sh and commkey_bench.sh share, sourced by them: one
# round of btrace, or of bpftrace, on $PROG while x runs (their run_x),
# its line "count tracer-CPU x-CPU" appended to $TMP/r.CONF.  $BTRACE,
# $BPF, $TMP, $X and $PROG are the caller's.

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
	got=$(sed -n "$got_re" <&6)
	exec 6<&-
	d1=$(cpu_of "$dpid")
	echo "${got:-0} $(echo "$d0 $d1 $b1" |
	    awk '{ printf("%.3f", $2 - $1 + $3) }') $XCPU" >> "$TMP/r.$c"
}

# comm_bpf NAME GOT: bpftrace on $PROG; no row when it never attaches
comm_bpf() {
	local name=$1 got_re=$2 bpid got l

	[ -n "$BPF" ] || return 0
	rm -f "$TMP/bpf.fifo"
	mkfifo "$TMP/bpf.fifo"
	"$BPF" -e "$PROG" > "$TMP/bpf.fifo" 2> "$TMP/bpf.err" &
	bpid=$!
	BTPID=$bpid
	exec 7< "$TMP/bpf.fifo"
	# bounded: a bpftrace that never attaches loses its row
	while read -r -t 60 l <&7; do
		case $l in Attaching*) break ;; esac
	done
	case ${l:-} in Attaching*) ;; *)
		kill -KILL "$bpid"; wait "$bpid"; BTPID=; exec 7<&-
		echo "$name: bpftrace did not attach" >&2
		return 0 ;;
	esac
	run_x
	b1=$(cpu_of "$bpid")
	kill -INT "$bpid"
	got=$(sed -n "$got_re" <&7)
	wait "$bpid"
	BTPID=
	exec 7<&-
	echo "${got:-0} $b1 $XCPU" >> "$TMP/r.bpf"
}
