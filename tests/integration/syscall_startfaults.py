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
syscall_startfaults.py DTD DTRUN: what a traced start costs in minor page
faults (issue 20), plans and images cached, as start_bench counts them: a
copy of /bin/true run RUNS times by a process, untraced, then by the same
under dtrun (its children traced, as a shell's or make's are), each
child's faults from its rusage, from its fork to its exit.  The fewest
of each are compared: the library may add at most EXTRA (47 measured
here, Debian 12 on Linux 6.18, against 75 before the pass that brought
them down; doc/benchmarks.md says where they are).  Counts, never times.
The children of each are shown traced or not: a copy of cat run by the
same spawner prints its maps, the library in them only under dtrun (an
untraced count, or a bound met by a start the library never joined,
would prove nothing).

The bound holds for the kernel's default fault-around (64 kB: a read
fault of a file's page maps up to 16 of its pages already in the page
cache), which the library's layout is made for (udt_layout.c): a kernel
whose fault_around_bytes is smaller (debugfs), or an architecture whose
page is not 4 kB, counts more faults on both sides, the library's most.
Starts its own dtd on a temporary path and stops it by pid.  Prints one
line a check and `N passed, N failed`.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from dttpy import check, done, start_dtd, stop_dtd

EXTRA = 55
RUNS = 20

# The spawner: RUNS children, the fewest faults any of them took, then
# whether a child of its own has the library mapped.
SPAWN = r"""
import os, subprocess, sys
least = None
for _ in range(int(sys.argv[2])):
    p = subprocess.Popen([sys.argv[1]], close_fds=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    _, st, ru = os.wait4(p.pid, 0)
    if not os.WIFEXITED(st) or os.WEXITSTATUS(st) != 0:
        print("failed")
        sys.exit(1)
    least = ru.ru_minflt if least is None else min(least, ru.ru_minflt)
maps = subprocess.run([sys.argv[3], "/proc/self/maps"], close_fds=True,
                      stdin=subprocess.DEVNULL, capture_output=True,
                      text=True).stdout
print("traced" if "libuserdt-preload" in maps else "untraced")
print(least)
"""


def least(argv, env):
    """The spawner's answer (its fewest faults, whether its child was
    traced), or (None, None)."""
    r = subprocess.run(argv, env=env, capture_output=True, text=True,
                       timeout=120)
    try:
        lines = r.stdout.strip().splitlines()
        return int(lines[-1]), lines[-2] == "traced"
    except (ValueError, IndexError):
        return None, None


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    dtd, dtrun = sys.argv[1:]
    work = tempfile.mkdtemp(prefix="udt-startfaults.")
    d, ok = start_dtd(dtd, work, "--syscall-scope", "launched")
    env = dict(os.environ, USERDT_SOCKET=work + "/ingest.sock",
               XDG_CACHE_HOME=work + "/cache")
    for v in ("LD_PRELOAD", "LD_LIBRARY_PATH", "USERDT_REWRITE",
              "USERDT_PLAN_CACHE", "USERDT_IMAGES"):
        env.pop(v, None)
    prog = os.path.join(work, "udtfault")
    shutil.copy("/bin/true", prog)
    cat = os.path.join(work, "udtmaps")
    shutil.copy("/bin/cat", cat)
    spawn = [sys.executable, "-c", SPAWN, prog, str(RUNS), cat]
    try:
        if not check(ok, "dtd ready"):
            return done()
        # Plans and images written by the first, used by the second.
        for _ in range(2):
            subprocess.run([dtrun, prog], env=env, timeout=60)
        images = os.path.join(work, "cache", "userdt", "images")
        check(os.path.isdir(images) and len(os.listdir(images)) > 0,
              "images written (%s)" % (
                  os.listdir(images) if os.path.isdir(images) else "none"))
        nu, tu = least(spawn, env)
        nt, tt = least([dtrun] + spawn, env)
        check(tu is False and tt is True,
              "the library in a child's maps under dtrun only (untraced: "
              "%s, under dtrun: %s)" % (tu, tt))
        check(nu is not None and nt is not None and nt - nu <= EXTRA,
              "a traced start: %s minor faults untraced, %s traced: %s "
              "more (at most %d)" % (nu, nt, nt - nu if nu is not None
                                     and nt is not None else "?", EXTRA))
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
