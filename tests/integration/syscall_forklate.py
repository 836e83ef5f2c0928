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
syscall_forklate.py DTD DTRUN BTRACE: a fork child attaches to dtd only
when it first has something to record (udt_fork_child()), so a probe
enabled after the fork must still see every call of the child, under
the child's pid: with its parent alive (the child reads the parent's
enable bytes, which dtd keeps current), and with its parent gone (dtd
turns the bytes of a table it stops keeping current on, which sends the
child to attach).

A traced python forks with nothing enabled; the child blocks reading a
pipe.  Then btrace enables syscall:getppid:entry and says so (BEGIN);
the pipe is written; the child makes 50 getppid and exits; btrace is
ends at the child's exit_group and its count for the child's pid must
be 50.

Starts its own dtd on a temporary path and stops it by pid.  Prints one
line a check and `N passed, N failed`.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from dttpy import check, done, start_dtd, stop_dtd

# The traced program: fork, say the child's pid, then wait for the child
# ("wait") or exit at once ("exit"); the child waits for a byte on fd
# 3, makes 50 getppid(2) and exits.
PROG = r"""
import os, sys
pid = os.fork()
if pid == 0:
    os.read(3, 1)
    for i in range(50):
        os.getppid()
    os._exit(0)
print(pid, flush=True)
if sys.argv[1] == "wait":
    os.waitpid(pid, 0)
"""


def one(mode, work, dtrun, btrace, env):
    rd, wr = os.pipe()
    p = subprocess.Popen([dtrun, sys.executable, "-c", PROG, mode],
                         env=env, stdout=subprocess.PIPE, text=True,
                         pass_fds=(rd,),
                         preexec_fn=lambda: os.dup2(rd, 3))
    child = int(p.stdout.readline() or "0")
    if mode == "exit":
        p.wait()
    # The child's exit_group comes after its getppid in its ring: once
    # btrace sees it, it has seen them all, and exits on its own.
    b = subprocess.Popen([btrace, "-e",
                          'BEGIN { printf("go\\n"); } '
                          'syscall:getppid:entry { @[pid] = count(); } '
                          'syscall:exit_group:entry /pid == %d/ '
                          '{ exit(); }' % child],
                         env=env, stdout=subprocess.PIPE, text=True)
    go = b.stdout.readline().strip() == "go"
    os.write(wr, b"x")
    os.close(wr)
    os.close(rd)
    try:
        out = b.communicate(timeout=60)[0]
    except subprocess.TimeoutExpired:
        b.kill()
        out = b.communicate()[0]
    p.wait()
    n = 0
    for ln in out.splitlines():
        if ln.startswith("@[%d]:" % child):
            n = int(ln.split(":")[1])
    check(go and child > 0 and n == 50,
          "%s: the child (%d) forked with nothing enabled, 50 getppid "
          "seen after the enable: %d%s" % (
              "parent waits" if mode == "wait" else "parent gone",
              child, n, "" if go else " (btrace did not start)"))


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    dtd, dtrun, btrace = sys.argv[1:]
    work = tempfile.mkdtemp(prefix="udt-forklate.")
    d, ok = start_dtd(dtd, work)
    env = dict(os.environ, DT_DEVICE=work + "/dt",
               USERDT_SOCKET=work + "/ingest.sock")
    try:
        if check(ok, "dtd ready"):
            for mode in ("wait", "exit"):
                one(mode, work, dtrun, btrace, env)
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
