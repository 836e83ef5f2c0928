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
syscall_fidelity.py WHAT DTD DTRUN ...: a traced program runs as it would
untraced (design decision 17), seen from the kernel by strace.

  calls DTD DTRUN
      The system calls a traced image makes, from its execve on, against
      the same image untraced: `/bin/true` alone, and `/bin/true` three
      times from a shell (four images).  The library's own calls (the
      loader mapping it, the attach to dtd, the rewriter's mappings and
      protections, its look at /proc) may add at most EXTRA_PER_IMAGE an
      image.  dtrun -L: the launcher's ptrace is refused under strace.

  vfork DTD BTRACE
      A vfork child's events carry its own pid, from its vfork to its exec
      or exit, and its parent's are its parent's again after: dash runs
      each simple command through vfork (and make, where there is one,
      through posix_spawn, a clone with CLONE_VFORK); the return of an
      exec that failed is the child's too.  Every process here has one
      thread, so the kernel's pid is the tid that dtd checks against
      /proc: every execve entry and return and wait4 return has pid == tid,
      and the execs are of as many processes as the commands make.

Starts its own dtd on a temporary path and stops it by pid.  Prints one
line a check and `N passed, N failed`; fails without strace
or where strace cannot trace.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from dttpy import check, done, start_dtd, stop_dtd

# What the library may add to an image's calls, beyond the program's: the
# loader's mapping of it (7), the attach to dtd (14),
# /proc/self/status (3), the plan cache (4), the trampolines (3), the
# text of each object made writable once (8), dispatch's handler (2), and
# under strace, a tracer, /proc/self/mem opened to take back int3 sites
# (2).  44 measured with the plan cache warm, 52 cold, when the plan is
# written (Debian 12, glibc 2.36; 55 warm before issue 20's second pass,
# 76 while libunwind was opened at every start); the rest is room for
# another object.  A call per site, or a loop over every signal, is
# hundreds.
EXTRA_PER_IMAGE = 58



def strace_calls(out):
    """
    Calls per process image in strace -f output: from each successful
    execve (counted) to the next.  A call strace shows in two pieces
    (unfinished, resumed) is one.  Returns [(pid, path, count)].
    """
    images, cur = [], {}
    for line in open(out):
        m = re.match(r"^(\d+) +(<\.\.\. )?(\w+)(\(| resumed>)", line)
        if not m or m.group(2):
            continue
        pid, name = int(m.group(1)), m.group(3)
        if name == "execve":
            x = re.search(r'execve\("([^"]*)".*\) = 0$', line)
            if x or "<unfinished" in line:
                path = x.group(1) if x else "?"
                images.append([pid, path, 0])
                cur[pid] = len(images) - 1
        if pid in cur:
            images[cur[pid]][2] += 1
    return [tuple(i) for i in images]


def run_strace(work, name, argv, env):
    out = os.path.join(work, name)
    r = subprocess.run(["strace", "-f", "-qq", "-o", out, "--"] + argv,
                       env=env, capture_output=True, text=True,
                       timeout=120)
    return r, out


def calls(dtd, dtrun):
    work = tempfile.mkdtemp(prefix="udt-fidelity.")
    d, ok = start_dtd(dtd, work, "--syscall-scope", "launched")
    env = dict(os.environ, USERDT_SOCKET=work + "/ingest.sock")
    # The loader's search of a library path would count, traced or not.
    for v in ("LD_PRELOAD", "LD_LIBRARY_PATH"):
        env.pop(v, None)
    try:
        if not check(ok, "dtd ready"):
            return
        for what, argv, nimg in [
                ("/bin/true", ["/bin/true"], 1),
                ("sh -c '/bin/true; /bin/true; /bin/true'",
                 ["/bin/sh", "-c", "/bin/true; /bin/true; /bin/true"], 4)]:
            ru, fu = run_strace(work, "untraced", argv, env)
            rt, ft = run_strace(work, "traced", [dtrun, "-L"] + argv, env)
            if not check(ru.returncode == 0 and rt.returncode == 0,
                         "%s: ran untraced and traced under strace (%s)" %
                         (what, rt.stderr.strip()[:200])):
                continue
            u = strace_calls(fu)
            # The traced run's first image is dtrun's: leave it out.
            t = strace_calls(ft)[1:]
            nu = sum(c for _, _, c in u)
            nt = sum(c for _, _, c in t)
            check(len(u) == nimg and len(t) == nimg and
                  nt - nu <= EXTRA_PER_IMAGE * nimg,
                  "%s: %d images, %d calls untraced, %d traced: %d more, "
                  "%.1f an image (at most %d)" % (
                      what, len(t), nu, nt, nt - nu,
                      (nt - nu) / max(len(t), 1), EXTRA_PER_IMAGE))
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)


def vfork(dtd, btrace):
    work = tempfile.mkdtemp(prefix="udt-fidelity.")
    d, ok = start_dtd(dtd, work, "--syscall-scope", "launched")
    env = dict(os.environ, DT_DEVICE=work + "/dt",
               USERDT_SOCKET=work + "/ingest.sock")
    script = ('syscall:execve:entry, syscall:execve:return, '
              'syscall:wait4:return '
              '{ printf("%s %d %d\\n", probe, pid, tid); }')
    # The failed exec: its return and the child's exit come after it,
    # still in the vfork child.
    cmds = [("dash: true; /bin/true; ls; a failed exec",
             'dash -c "true; /bin/true; ls >/dev/null; '
             '/nonexistent/udt 2>/dev/null; true"', 5)]
    if shutil.which("make"):
        with open(work + "/mk", "w") as f:
            f.write("all:\n\t/bin/true\n\t/bin/true\n")
        cmds.append(("make: posix_spawn", "make -s -f %s/mk" % work, 4))
    try:
        if not check(ok, "dtd ready"):
            return
        for what, cmd, nexec in cmds:
            r = subprocess.run([btrace, "-c", cmd, "-e", script], env=env,
                               capture_output=True, text=True, timeout=120)
            ev = [ln.split() for ln in r.stdout.splitlines()
                  if ln.startswith("syscall:")]
            bad = [" ".join(e) for e in ev if len(e) != 3 or e[1] != e[2]]
            execs = {e[1] for e in ev if e[0] == "syscall:execve:entry"}
            waits = [e for e in ev if e[0] == "syscall:wait4:return"]
            check(r.returncode == 0 and not bad and waits and
                  len(execs) == nexec,
                  "%s: %d events, %d processes exec'd (want %d), every "
                  "pid its tid%s%s" % (
                      what, len(ev), len(execs), nexec,
                      "".join("\n    " + b for b in bad[:10]),
                      "" if r.returncode == 0 else
                      "\n    " + r.stderr.strip()[:300]))
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    if shutil.which("strace") is None or subprocess.run(
            ["strace", "-qq", "-o", "/dev/null", "true"]).returncode != 0:
        # Not a skip: scripts/deps.sh installs strace.
        print("FAIL - strace missing or refused (scripts/deps.sh installs it)")
        return 1
    what, args = sys.argv[1], sys.argv[2:]
    if what == "calls" and len(args) == 2:
        calls(*args)
    elif what == "vfork" and len(args) == 2:
        vfork(*args)
    else:
        print(__doc__)
        return 2
    return done()


if __name__ == "__main__":
    sys.exit(main())
