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
syscall_linkmap.py DTD BTRACE DTRUN TRACEE: the tracer loads nothing into
a traced program that the program could find (issue 20).

  - TRACEE (linkmap_tracee.c) under btrace -c, with the user stacks of
    its write(2) asked for: neither its link map (dl_iterate_phdr) nor
    /proc/self/maps holds libunwind or liblzma, at its start nor after
    the stack was taken, and the stack reads poke, main, without a frame
    of the library.  Again with every object decoded: the library's
    disassembler module is in its maps, and not in its link map.
  - python3 loading liblzma, then libunwind, through ctypes, traced
    (dtrun -L, nothing enabled) and untraced under strace: the same file
    calls for the library after the program's marker, and none of it in
    /proc/self/maps before (libunwind, once opened by the library,
    brought liblzma and left the program's dlopen nothing to open).

Starts its own dtd on a temporary path and stops it by pid.  Prints one
line a check and `N passed, N failed`; without strace or python3 it
fails, and it fails if it can load neither library.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from dttpy import check, done, start_dtd, stop_dtd

MARKER = "/udt-linkmap-marker"
# What the library once loaded into every traced program: libunwind, and
# liblzma through it.
LIBS = (("liblzma.so.5", "lzma"), ("libunwind.so.8", "unwind"))


def pycode(lib, tag):
    return ("import os, ctypes\n"
            "print('before', %r in open('/proc/self/maps').read())\n"
            "os.access(%r, os.F_OK)\n"
            "ctypes.CDLL(%r)\n" % (tag, MARKER, lib))


def tracee(work, env, btrace, prog, decode=False):
    out = work + "/linkmap.out"
    if decode:
        # Every object decoded: the disassembler's module is mapped.
        env = dict(env, USERDT_PLAN_CACHE="0")
    r = subprocess.run([btrace, "-c", "%s %s" % (prog, out), "-e",
                        'syscall:write:entry /comm == "linkmap_tracee"/ '
                        '{ @[ustack] = count(); }'],
                       env=env, capture_output=True, text=True, timeout=120)
    if not check(r.returncode == 0 and os.path.exists(out),
                 "linkmap_tracee ran under btrace -c (%s)" %
                 r.stderr.strip()[:300]):
        return
    lines = open(out).read().splitlines()
    for phase in ("start", "after"):
        got = [ln for ln in lines if ln.startswith(phase + " linkmap")]
        check(got == [phase + " linkmap 0 maps 0"],
              "%s: no libunwind, no liblzma in the link map or maps (%s)" %
              (phase, got))
    if decode:
        # Mapped (so the check means something), in no link map.
        got = [ln for ln in lines if ln.startswith("start cs ")]
        m = re.match(r"start cs linkmap (\d+) maps (\d+)$",
                     got[0] if got else "")
        check(m is not None and m.group(1) == "0" and
              int(m.group(2)) > 0,
              "decoding: the disassembler's module mapped, not in the "
              "link map (%s)" % got)
    objs = [ln for ln in lines if ln.startswith("object ")]
    check(len(objs) >= 3, "the link map listed (%d objects)" % len(objs))
    frames = [ln.strip() for ln in r.stdout.splitlines()]
    check(any(re.match(r"^poke\+0x", f) for f in frames) and
          any(re.match(r"^main\+0x", f) for f in frames) and
          not any("udt_" in f for f in frames),
          "the write's user stack was taken: poke, main, no udt_ frame%s" %
          ("" if frames else " (no output)") +
          "".join("\n    " + f for f in frames[:12]))


def lib_calls(path, tag):
    """The file calls naming tag after the marker."""
    calls, seen = [], False
    for line in open(path):
        line = line.split(None, 1)[1] if line[:1].isdigit() else line
        if MARKER in line:
            seen = True
            continue
        if seen and tag in line and not line.startswith("<..."):
            calls.append(line.strip())
    return calls


def python(work, env, dtrun):
    # Debian's python, whose start maps no liblzma (a python built
    # with lzma linked in cannot show the difference).
    py = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) \
        else shutil.which("python3")
    if shutil.which("strace") is None or py is None or subprocess.run(
            ["strace", "-qq", "-o", "/dev/null", "true"]).returncode != 0:
        # Not a skip: scripts/deps.sh installs strace and python3.
        check(False, "python's dlopen: strace and python3 are there")
        return
    tried = 0
    for lib, tag in LIBS:
        code = pycode(lib, tag)
        r = subprocess.run([py, "-c", code], capture_output=True, text=True)
        if r.returncode != 0 or "before False" not in r.stdout:
            print("skip - python's dlopen of %s: cannot load it, or "
                  "mapped untraced already" % lib)
            continue
        tried += 1
        got = {}
        for name, pre in (("untraced", []), ("traced", [dtrun, "-L"])):
            out = "%s/strace.%s" % (work, name)
            r = subprocess.run(["strace", "-f", "-qq", "-e", "trace=%file",
                                "-o", out, "--"] + pre + [py, "-c", code],
                               env=env, capture_output=True, text=True,
                               timeout=120)
            if not check(r.returncode == 0 and "before False" in r.stdout,
                         "python %s: %s not mapped before its dlopen "
                         "(%s%s)" % (name, lib, r.stdout.strip(),
                                     r.stderr.strip()[:300])):
                return
            got[name] = lib_calls(out, tag)
        u, t = got["untraced"], got["traced"]

        # results are file descriptors: compare the calls and paths
        def key(c):
            return re.sub(r"\) += .*$", ")", c)
        check(u and [key(c) for c in u] == [key(c) for c in t],
              "python's dlopen of %s: the same %d calls traced as "
              "untraced%s" % (lib, len(u), "".join(
                  "\n    %s | %s" % (a, b) for a, b in
                  zip(u + [""] * len(t), t + [""] * len(u)))))
    check(tried > 0, "python's dlopen: at least one library tried")


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    dtd, btrace, dtrun, prog = sys.argv[1:]
    work = tempfile.mkdtemp(prefix="udt-linkmap.")
    d, ok = start_dtd(dtd, work)
    env = dict(os.environ, DT_DEVICE=work + "/dt",
               USERDT_SOCKET=work + "/ingest.sock")
    env.pop("LD_PRELOAD", None)
    try:
        if check(ok, "dtd ready"):
            tracee(work, env, btrace, prog)
            tracee(work, env, btrace, prog, decode=True)
            python(work, env, dtrun)
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
