#!/bin/bash
# Filters at the source, measured (issue 22): count one process's
# system calls through tracepoint:raw_syscalls:sys_enter while dd makes
# many, with pushing on and off; prints btrace's -v counters of each.
#
# usage: push-bench.sh btrace dtd [seconds]
set -u
BTRACE=$1
DTD=$2
SECS=${3:-3}
. "$(dirname "$0")/lib.sh"
dtd_start
prog='tracepoint:raw_syscalls:sys_enter /comm == "nosuchcomm"/ { @ = count(); }'
for mode in on off; do
	dd if=/dev/zero of=/dev/null bs=1 count=100000000 2>/dev/null &
	ddpid=$!
	if [ $mode = off ]; then export BTRACE_NOPUSH=1; fi
	timeout -s INT "$SECS" "$BTRACE" -d "$DEV" -v -e "$prog" \
	    > "$TMP/out.$mode" 2> "$TMP/err.$mode"
	kill "$ddpid"; wait "$ddpid" 2>/dev/null
	echo "pushing $mode: $(grep -v '^$' "$TMP/err.$mode" | tr '\n' ';')"
done
