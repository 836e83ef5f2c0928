#!/usr/bin/env python3
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
"""
syscall_xstack.py DTD BTRACE TRACEE: a traced program whose stack is
executable (xstack_tracee.c, linked with -z execstack) has code that no
object holds from before the library's start; the library's coverage
check at its start must find it, from dtd's look at its mappings
(udt_tab.tb_xmaps) or its own, and leave dispatch on, so that the
getppid() calls the program makes from its stack are all counted: its
thread has dispatch on from the library's start, getppid() being on
then, though it makes no traced call from a rewritten site (where a
thread turned it on before, udt_rw_arm()).

Starts its own dtd on a temporary path and stops it by pid.  Prints one
line a check and `N passed, N failed`.
"""
import os
import re
import subprocess
import sys
import tempfile
import shutil

from dttpy import check, done, start_dtd, stop_dtd

N = 1000


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    dtd, btrace, prog = sys.argv[1:]
    work = tempfile.mkdtemp(prefix="udt-xstack.")
    d, ok = start_dtd(dtd, work)
    env = dict(os.environ, DT_DEVICE=work + "/dt",
               USERDT_SOCKET=work + "/ingest.sock",
               XDG_CACHE_HOME=work + "/cache")
    env.pop("LD_PRELOAD", None)
    try:
        if not check(ok, "dtd ready"):
            return done()
        r = subprocess.run([prog, "1"], capture_output=True, text=True,
                           timeout=60)
        check(r.returncode == 0, "the tracee runs untraced")
        # Twice: the first start decodes and writes the caches, the
        # second takes them (the coverage check runs in both).
        for run in ("first", "cached"):
            r = subprocess.run(
                [btrace, "-c", "%s %d" % (prog, N), "-e",
                 'syscall:getppid:entry /comm == "%s"/ { @n = count(); }' %
                 os.path.basename(prog)],
                env=env, capture_output=True, text=True, timeout=120)
            m = re.search(r"^@n: (\d+)$", r.stdout, re.M)
            got = int(m.group(1)) if m else -1
            check(r.returncode == 0 and got == 2 * N,
                  "%s start: %d of the %d getppid() calls made from the "
                  "stacks of the first thread and a later one counted "
                  "(%s)" % (run, got, 2 * N,
                                          r.stderr.strip()[-200:]))
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
