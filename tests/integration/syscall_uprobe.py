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
syscall_uprobe.py DTD DTRUN TRACEE: a uprobe in libc (bpftrace's, perf's)
fires in a traced process as in an untraced one (issue 20).  The kernel
writes a uprobe's breakpoint into a private copy of the page at the
loader's mmap, before the library starts; an image of libc's patched
text mapped over that page would remove it.  dtd reads the tracee's
pagemap at the handshake and tells the library which text mappings have
no private page (udt_tab.tb_xclean), so that it reads none itself: the
page with the breakpoint must keep the image off libc's text.

TRACEE (uprobe_tracee.c) says where getppid() is in libc; with plans and
images cached (libc's image said used), a uprobe there, enabled in a
tracefs instance of this test's own, must be seen by the program (its
first byte cc), traced and untraced, and hit once a call of each, by
the program's name in that instance's buffer; the library says libc's
text not mapped.  Root only (tracefs).  Starts its own dtd on a temporary
path and stops it by pid.  Prints one line a check and `N passed, N
failed`.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from dttpy import check, done, start_dtd, stop_dtd

TRACEFS = "/sys/kernel/tracing"
CALLS = 100


def tracefs_add(line):
    """Append a line to uprobe_events (a plain write: Python's append mode
    seeks, which tracefs refuses)."""
    fd = os.open(TRACEFS + "/uprobe_events", os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def run(argv, env):
    r = subprocess.run(argv, env=env, capture_output=True, text=True,
                       timeout=60, stdin=subprocess.DEVNULL)
    return r.returncode, r.stdout.split(), r.stderr


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    dtd, dtrun, tracee = sys.argv[1:]
    if not check(os.geteuid() == 0, "root (uprobes through tracefs)"):
        return done()
    if not check(os.path.exists(TRACEFS + "/uprobe_events"),
                 "tracefs with uprobes at " + TRACEFS):
        return done()
    work = tempfile.mkdtemp(prefix="udt-uprobe.")
    tag = "%05d" % (os.getpid() % 100000)
    # A name of this run's own: the probe's hits are counted by it.
    prog = os.path.join(work, "udtup" + tag)
    shutil.copy(tracee, prog)
    group, inst = "udtup" + tag, TRACEFS + "/instances/udtup" + tag
    d, ok = start_dtd(dtd, work, "--syscall-scope", "launched")
    env = dict(os.environ, USERDT_SOCKET=work + "/ingest.sock",
               XDG_CACHE_HOME=work + "/cache", USERDT_IMAGES="debug")
    for v in ("LD_PRELOAD", "LD_LIBRARY_PATH", "USERDT_REWRITE",
              "USERDT_PLAN_CACHE"):
        env.pop(v, None)
    plain = dict(env)
    plain.pop("USERDT_IMAGES")
    probes = []
    name = os.path.basename(prog)[:15]
    try:
        if not check(ok, "dtd ready"):
            return done()
        # Plans, then images, written; the third start maps libc's.
        for _ in range(2):
            run([dtrun, prog, "run", "ffs", "1"], env)
        rc, out, err = run([dtrun, prog, "run", "ffs", "1"], env)
        used = [ln for ln in err.splitlines() if ln.endswith(": used")]
        if not check(rc == 0 and len(used) >= 1 and
                     any("/libc" in ln for ln in used),
                     "without a uprobe, libc's image is used (%s)" %
                     (used or err.strip()[-300:])):
            return done()
        for fn, why in (("ffs", "changed already"), ("getppid", None)):
            rc, out, _ = run([prog, "where", fn], plain)
            if not check(rc == 0 and len(out) == 2,
                         "%s() found in libc: %s" % (fn, " ".join(out))):
                continue
            libc, off = out
            tracefs_add("p:%s/%s %s:%s\n" % (group, fn, libc, off))
            probes.append(fn)
            if not os.path.isdir(inst):
                os.mkdir(inst)
            # The program's hits alone in this buffer: other processes
            # of the machine call these too.
            with open("%s/events/%s/%s/filter" % (inst, group, fn),
                      "w") as f:
                f.write('comm == "%s"\n' % name)
            with open("%s/events/%s/%s/enable" % (inst, group, fn),
                      "w") as f:
                f.write("1\n")
            rc, out, _ = run([prog, "run", fn, str(CALLS)], plain)
            check(rc == 0 and out == ["cc", "done"],
                  "%s untraced: the program sees the uprobe's breakpoint: "
                  "%s" % (fn, out))
            rc, out, err = run([dtrun, prog, "run", fn, str(CALLS)], env)
            check(rc == 0 and out == ["cc", "done"],
                  "%s traced: the program sees the uprobe's breakpoint: "
                  "%s" % (fn, out))
            lines = [ln for ln in err.splitlines()
                     if os.path.basename(libc) + ":" in ln]
            # ffs() is no site: only the look at the pages finds it.
            check(lines and all("text not mapped" in ln and
                                (why is None or why in ln)
                                for ln in lines),
                  "%s: libc's image kept off its text%s: %s" % (
                      fn, " (%s)" % why if why else "",
                      lines or err.strip()[-300:]))
            with open("%s/events/%s/%s/enable" % (inst, group, fn),
                      "w") as f:
                f.write("0\n")
            with open(inst + "/trace") as f:
                hits = sum(1 for ln in f
                           if ln.lstrip().startswith(name + "-") and
                           " %s:" % fn in ln)
            check(hits == 2 * CALLS,
                  "%s: the uprobe hit once a call, traced and untraced: "
                  "%d of %d" % (fn, hits, 2 * CALLS))
    finally:
        # Each step on its own: a leftover must not keep dtd running or
        # the machine's libc probed.
        stop_dtd(d)
        for fn in probes:
            try:
                with open("%s/events/%s/%s/enable" % (inst, group, fn),
                          "w") as f:
                    f.write("0\n")
            except OSError:
                pass
        try:
            if os.path.isdir(inst):
                os.rmdir(inst)
        except OSError as e:
            check(False, "the tracefs instance removed (%s)" % e)
        for fn in probes:
            try:
                tracefs_add("-:%s/%s\n" % (group, fn))
            except OSError as e:
                check(False, "the uprobe %s removed (%s)" % (fn, e))
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
