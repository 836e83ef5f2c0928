#!/bin/sh
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
# Run one regress case as OpenBSD's regress does (2>&1 into one stream)
# and compare it with NAME.ok; the exit code must be NAME.rc's (default 0).
# NAME.flags holds options placed before the script, NAME.args its
# arguments, one per line; NAME.stdin is piped to it.  Without NAME.bt
# the flags are the whole command line (for -e and usage cases).  With
# -f json every line of the output must also parse as JSON on its own.
#
# usage: run-regress.sh btrace srcdir name
set -u

[ $# -eq 3 ] || { echo "usage: $0 btrace srcdir name" >&2; exit 2; }
btrace=$1
case $btrace in
/*)	;;
*)	btrace=$PWD/$btrace ;;
esac
cd "$2" || exit 2
name=$3
. ./lib.sh

set --
json=0
if [ -f "$name.flags" ]; then
	prev=
	while IFS= read -r a; do
		set -- "$@" "$a"
		[ "$prev" = -f ] && [ "$a" = json ] && json=1
		prev=$a
	done < "$name.flags"
fi
[ -f "$name.bt" ] && set -- "$@" "$name.bt"
if [ -f "$name.args" ]; then
	while IFS= read -r a; do set -- "$@" "$a"; done < "$name.args"
fi

out=$(mktemp) || exit 2
if [ -f "$name.stdin" ]; then
	# through a pipe, which has no size to go by
	cat "$name.stdin" | "$btrace" "$@" > "$out" 2>&1
	rc=$?
else
	"$btrace" "$@" > "$out" 2>&1
	rc=$?
fi
want=0
[ -f "$name.rc" ] && want=$(cat "$name.rc")
diff -u "$name.ok" "$out"
d=$?
if [ $json = 1 ] && ! json_check "$out"; then
	d=1
fi
rm -f "$out"
if [ "$rc" -ne "$want" ]; then
	echo "$name: exit code $rc, expected $want"
	exit 1
fi
exit $d
