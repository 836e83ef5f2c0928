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
order_exec.py DTD BTRACE: the events of a shell script that execs come
in time order, the loaders' among them (dt(4): the order a reader gets).

The launcher's helper stamps a new image's loader calls as they happen
but hands them over only once the image's library attached, a few
milliseconds on; dtd holds the other processes' events until they are in
(the exec's announce in the ring, dt_ingest_exec.c).  Without that, each
exec put a score of the loader's events behind younger ones of the
shell and its other children (about 55 for three execs).

btrace -c prints every system call entry and return of a script that
runs NEXEC commands (pipelines, vfork'd simple commands, an exec of the
shell itself) with their time stamps; then only the loaders' openat and
mmap entries, which a fork child does not make before its exec, so that
it announces the exec in its parent's ring.  Checks: each loader's
execve return is there, once per command; the stamps never go back by more
than the events dtd itself counted late (a thread preempted between its
stamp and its record: a few at most on a busy machine); and that count
stays under LATE_MAX, against a score an exec before.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from dttpy import check, done, start_dtd, stop_dtd

NEXEC = 30
LATE_MAX = 12

SCRIPT = """
i=0
while [ $i -lt 6 ]; do
    /bin/true
    cat /etc/hostname | wc -c >/dev/null
    env true
    i=$((i + 1))
done
exec /bin/true
"""


def one(btrace, env, probes, execs_seen):
    """btrace -c the script printing probes' events; the checks."""
    prog = probes + ' { printf("%d %d %s\\n", nsecs, pid, probe); }'
    r = subprocess.run([btrace, "-e", prog, "-c", "sh -c '%s'" % SCRIPT],
                       env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "%s: btrace -c exits 0 (%d: %s)" %
          (probes, r.returncode, r.stderr.strip()[-300:]))
    late = 0
    for line in r.stderr.splitlines():
        if "came out of time order" in line:
            late = int(line.split()[1])
    stamps, lines, execs = [], [], 0
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) != 3 or not f[0].isdigit():
            continue
        stamps.append(int(f[0]))
        lines.append(line)
        if f[2] == "syscall:execve:return":
            execs += 1
    steps = [i for i in range(1, len(stamps)) if stamps[i] < stamps[i - 1]]
    back = len(steps)
    for i in steps[:5]:
        print("# %.3f ms back: %s after %s" %
              ((stamps[i - 1] - stamps[i]) / 1e6, lines[i], lines[i - 1]))
    if execs_seen:
        # The script's own exec, each command's, and those of env's true.
        check(execs >= NEXEC, "%d execve returns, at least %d" %
              (execs, NEXEC))
    check(len(stamps) > 300, "%d events printed" % len(stamps))
    check(back <= late, "%d steps back in time, no more than the %d "
          "events dtd counted late" % (back, late))
    check(late <= LATE_MAX, "%d events late, at most %d (a loader's "
          "events came after younger ones: ~18 an exec)" % (late, LATE_MAX))


def main():
    dtd, btrace = sys.argv[1:3]
    work = tempfile.mkdtemp(prefix="order_exec.")
    d, ok = start_dtd(dtd, work)
    check(ok, "dtd serves %s/dt" % work)
    env = dict(os.environ, DT_DEVICE=work + "/dt",
               USERDT_SOCKET=work + "/ingest.sock")
    try:
        # Every call (each child records, so attaches, before its exec),
        # and the loaders' calls alone (a fork child makes none of them
        # before its exec, so announces it in its parent's ring).
        one(btrace, env, "syscall:*:entry, syscall:*:return", True)
        one(btrace, env, "syscall:openat:entry, syscall:mmap:entry", False)
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
