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
# usage: lint.sh page
#
# mandoc -Tlint on one manual page, every level (style included): any
# message fails, but for one kind.  Whether a page that .Xr refers to is
# "found" depends on which manuals this machine has installed and indexed
# (our own pages are not installed while the build is tested, and Debian
# ships no mandoc.db for its pages), not on the page under test; those
# messages and mandoc's notes about its database are left out.
set -u
[ $# -eq 1 ] || { echo "usage: $0 page" >&2; exit 2; }
command -v mandoc >/dev/null ||
	{ echo "FAIL: mandoc is not installed (scripts/deps.sh)"; exit 1; }

out=$(mandoc -Tlint "$1" 2>&1)
left=$(printf '%s\n' "$out" | grep -v -e 'STYLE: referenced manual not found' \
    -e 'outdated mandoc.db' -e '^$')
if [ -n "$left" ]; then
	printf '%s\n' "$left"
	echo "FAIL: mandoc -Tlint $1"
	exit 1
fi
echo "ok: $1"
