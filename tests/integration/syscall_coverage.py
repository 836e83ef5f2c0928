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
syscall_coverage.py DTD BTRACE PRELOAD SYSCALLS.TSV: the default mode's
entry events, per thread and system call, against strace's count of the
same run.  btrace -c runs strace untraced, and strace runs `env
LD_PRELOAD=PRELOAD sh -c CMD`: the commands run once, seen by both.  Every
call strace sees must arrive exactly once, but for two kinds, each named:

  loader   what a process image does before the preload library starts
           (the dynamic loader's opens and maps, and the constructors of
           the libraries initialised before ours): the calls strace sees
           in an image before the first one made from the library's
           constructor (udt_init in the stack).  Here they cannot arrive:
           the launcher catches them by tracing the image with ptrace,
           and a process has one tracer, strace.  So a second check runs
           each command again under btrace -c alone and asks for them.
  ours     the loader's work for the library itself, which an untraced
           run never does and the launcher leaves out (opening its
           file, the calls on that descriptor, the maps and mprotects
           at the addresses it was mapped at); and
           the library's own calls (its constructor, attaching a fork
           child to dtd, taking the loader's calls from the launcher):
           innermost frame in libuserdt-preload.so, in a function that
           is not one making a call of the program; and the rt_sigreturn
           that ends each SIGSYS of Syscall User Dispatch and each
           SIGTRAP of a trapped site (strace shows the signal; the
           program's own calls it caught are counted as the program's).

strace is a ptrace tracer: under it the library traps no site (a
debugger would take the SIGTRAP) and leaves dispatch off unless asked
by name, which the strace run does (USERDT_DISPATCH=1), so that the
sites neither rewritten nor trapped are dispatch's.
The second check, per command: the launcher covers the image btrace -c
starts, the shell, and its helper every image a process of the tree
execs later.  So the loaders strace saw in the first run, from each
execve to its library's constructor, must all arrive in the second:
  - the shell's: each path its loader opened, as often, and for each
    call at least as many entries as the loader made (the shell's own
    calls add to them), of the launcher's pid, identified by its execve
    entry, which carries the launcher's comm;
  - every image's: as many successful execve returns as images started
    the library (the library cannot see the return of its own exec: the
    tracer of the new image records it), each path some loader opened
    at least as often as the loaders did, summed over the tree, and the
    library's own file opened by none (ours, above).
A loader left out fails both.

Prints one line a check and `N passed, N failed`.
"""
import os
import re
import subprocess
import sys
import tempfile

from dttpy import check, done

# Functions of the library that make the program's own calls for it.
PROGRAM_FUNCS = {"udt_rw_entry", "udt_rw_slow", "udt_sud_call",
                 "udt_sud_handler", "udt_sud_stub", "udt_sud_restorer",
                 "udt_sud_sigaction", "udt_sud_guard", "udt_sig_progmask"}

COMMANDS = [
    ("ls -l of a big directory", "ls -l /usr/bin > /dev/null"),
    ("cat of a file", "cat /etc/services > /dev/null"),
    ("sh with a pipeline and command substitution",
     "echo $(ls /usr | wc -l) | cat | tr 0-9 a-j > /dev/null"),
    ("python3 with threads and a subprocess",
     "python3 -c 'import threading, subprocess\n"
     "t = [threading.Thread(target=sum, args=(range(50000),)) "
     "for i in range(4)]\n"
     "[x.start() for x in t]; [x.join() for x in t]\n"
     "subprocess.run([\"true\"])'"),
    ("make of a small C program", "make -s -B -C {work}/mk > /dev/null"),
    ("git status in a fresh repository",
     "cd {work}/repo && git status --short > /dev/null"),
    ("tar of a directory", "tar cf - -C /usr/include linux > /dev/null"),
]



def probe_names(tsv):
    """Linux name -> the probe name btrace prints."""
    names = {}
    with open(tsv) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            col = line.rstrip("\n").split("\t")
            if len(col) < 6:
                continue
            names[col[1]] = col[5] if col[5] != "-" else col[1]
    return names


LINE = re.compile(r"^([a-z_0-9]+)\(")
FRAME = re.compile(r"^ > (\S*?)\((\w*)")


class LibLoad:
    """The loader's work for the preload library in one thread's
    calls, told as the launcher's tracer tells it (udt_ltrace.c)."""
    NUM = r"(0x[0-9a-f]+|-?\d+|NULL)"

    def __init__(self, lib):
        self.lib = lib
        self.fd = None
        self.lo = self.hi = 0

    def inside(self, a, n):
        return self.lo < self.hi and self.lo <= a and a + n <= self.hi

    def own(self, name, line):
        """Whether this strace line is the library's loading."""
        m = re.match(r'^\w+\(([^,)]*)', line)
        first = m.group(1) if m else ""
        res = re.search(r"\) += (0x[0-9a-f]+|-?\d+)", line)
        res = int(res.group(1), 0) if res else -1
        if name in ("openat", "open"):
            if ('"%s"' % self.lib) in line and res >= 0:
                self.fd = res
                return True
            return False
        if name in ("read", "pread64", "fstat", "newfstatat", "close"):
            if self.fd is not None and first == str(self.fd):
                if name == "close":
                    self.fd = None
                return True
            return False
        m = re.match(r"^\w+\(%s, (\d+)" % self.NUM, line)
        if not m:
            return False
        a = 0 if m.group(1) == "NULL" else int(m.group(1), 0)
        n = int(m.group(2))
        if name == "mmap":
            f = re.match(r"^mmap\([^,]*, \d+, [^,]*, ([^,]*), (-?\d+),",
                         line)
            if not f:
                return False
            mine = ("MAP_ANONYMOUS" not in f.group(1) and
                    self.fd is not None and int(f.group(2)) == self.fd) or \
                ("MAP_FIXED" in f.group(1) and self.inside(a, n))
            if mine and res > 0:
                if self.lo >= self.hi:
                    self.lo, self.hi = res, res + n
                else:
                    self.lo, self.hi = min(self.lo, res), \
                        max(self.hi, res + n)
            return mine
        if name in ("mprotect", "munmap", "madvise"):
            return self.inside(a, n)
        return False


def strace_counts(files, lib):
    """{tid: {linux name: count}} of the program's calls, and the
    loader's and ours, from strace -ff -k output files (one a thread);
    and for each thread the loader segments of images that started the
    library: [({linux name: count}, {opened path: count})], in order."""
    prog, loader, ours, segs = {}, {}, {}, {}
    top = None
    for path in files:
        pid = int(path.rsplit(".", 1)[1])
        calls = []			# [name, result, frames]
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith(" > "):
                    if calls:
                        m = FRAME.match(line)
                        calls[-1][2].append((m.group(1), m.group(2))
                                            if m else ("", ""))
                    continue
                m = LINE.match(line)
                if m:
                    calls.append([m.group(1), line, []])
                # Dispatch's signal, or a trapped site's int3: its
                # handler returns by an rt_sigreturn of the library's
                # own, the thread's next.
                elif (line.startswith("--- SIGSYS") and
                      "SYS_USER_DISPATCH" in line) or \
                        (line.startswith("--- SIGTRAP") and
                         "SI_KERNEL" in line):
                    calls.append(["", "", [("dispatch", "")]])
        # The first thread strace starts: its first lines are strace's
        # own exec of the command (over $PATH), before any image of ours.
        state = "launch" if calls and calls[0][0] == "execve" else "prog"
        # strace's own exec of env, which execs the shell.
        if state == "launch" and calls[0][1].startswith('execve("/usr/bin/env"'):
            top = pid
        pend = 0
        seg = None			# the image's loader so far
        libload = LibLoad(lib)
        for name, line, frames in calls:
            if name == "":
                pend += 1
                continue
            if state == "launch" and name != "execve":
                state = "loader"
            in_init = any(fn == "udt_init" for _, fn in frames)
            inner = frames[0] if frames else ("", "")
            mine = "libuserdt-preload" in inner[0] and \
                inner[1] not in PROGRAM_FUNCS
            if name == "rt_sigreturn" and pend > 0:
                pend -= 1
                mine = True
            if state in ("launch", "loader") and not in_init and \
                    libload.own(name, line):
                mine = True
            if in_init:
                state = "prog"
                if seg is not None:
                    segs.setdefault(pid, []).append(seg)
                    seg = None
            if seg is not None and not mine:
                seg[0][name] = seg[0].get(name, 0) + 1
                m = re.match(r'^openat\([^,]*, "([^"]*)"', line)
                if m:
                    seg[1][m.group(1)] = seg[1].get(m.group(1), 0) + 1
            if in_init or mine:
                kind = ours
            elif state in ("launch", "loader"):
                kind = loader
            else:
                kind = prog
            d = kind.setdefault(pid, {})
            d[name] = d.get(name, 0) + 1
            # A new image: its loader runs before the library starts.
            if name in ("execve", "execveat") and re.search(r"\) += 0$",
                                                            line.rstrip()):
                state = "loader"
                seg = ({name: 1}, {})
                libload = LibLoad(lib)
    every = [x for pid in segs for x in segs[pid]]
    return prog, loader, ours, segs.get(top, []), every


def loader_check(btrace, env, work, what, cmd, shseg, every, lib):
    """The second check (see above): the shell's loader, as strace saw
    it in shseg[0], and every image's, in every, under btrace -c
    alone; and no openat of lib, the library, from any of them."""
    if not check(len(shseg) > 0, "%s: strace saw the shell's loader" % what):
        return
    calls, paths = shseg[0]
    bt = subprocess.run([btrace, "-c", cmd, work + "/loader.bt"], env=env,
                        capture_output=True, text=True, timeout=300)
    if not check(bt.returncode == 0 and "cannot trace" not in bt.stderr,
                 "%s: btrace -c alone ran, the launcher traced (%s)" %
                 (what, bt.stderr.strip()[:200])):
        return
    got, opened, launched, execs = {}, {}, None, 0
    for line in bt.stdout.splitlines():
        m = re.match(r"^@e: (\d+)$", line)
        if m:
            execs = int(m.group(1))
        m = re.match(r"^@\[(\d+), syscall:(\w+):entry\]: (\d+)$", line)
        if m:
            got.setdefault(int(m.group(1)), {})[m.group(2)] = \
                int(m.group(3))
        m = re.match(r"^@o\[(\d+), (.*)\]: (\d+)$", line)
        if m:
            opened.setdefault(int(m.group(1)), {})[m.group(2)] = \
                int(m.group(3))
        # The launcher's execve entry, in -c's shell.
        m = re.match(r"^@x\[(\d+)\]: \d+$", line)
        if m:
            launched = int(m.group(1))
    if not check(launched is not None, "%s: the shell's execve arrived, "
                 "from the launcher" % what):
        return
    names = probe_names.cache
    diffs = []
    for name, n in sorted(calls.items()):
        pn = names.get(name, name)
        have = got.get(launched, {}).get(pn, 0)
        if have < n:
            diffs.append("%s: loader %d, btrace %d" % (pn, n, have))
    for path, n in sorted(paths.items()):
        have = opened.get(launched, {}).get(path, 0)
        if have != n:
            diffs.append("openat %s: loader %d, btrace %d" % (path, n, have))
    check(not diffs, "%s: the shell's loader, %d calls, %d paths opened, "
          "all seen%s" % (what, sum(calls.values()), len(paths),
                          "".join("\n    " + x for x in diffs[:20])))
    # Every image's loader, the shell's and those of what it ran.
    want = {}
    for _, p in every:
        for path, n in p.items():
            want[path] = want.get(path, 0) + n
    diffs = []
    ours = sum(o.get(lib, 0) for o in opened.values())
    if ours != 0:
        diffs.append("openat %s: the library's own, btrace %d" % (lib, ours))
    if execs != len(every):
        diffs.append("execve returning 0: %d images, btrace %d" %
                     (len(every), execs))
    for path, n in sorted(want.items()):
        have = sum(o.get(path, 0) for o in opened.values())
        if have < n:
            diffs.append("openat %s: loaders %d, btrace %d" % (path, n, have))
    check(not diffs, "%s: the loaders of %d images, %d opens, all seen%s" %
          (what, len(every), sum(want.values()),
           "".join("\n    " + x for x in diffs[:20])))


def main():
    if len(sys.argv) != 5:
        print("usage: syscall_coverage.py DTD BTRACE PRELOAD SYSCALLS.TSV")
        return 2
    dtd, btrace, preload, tsv = sys.argv[1:]
    preload = os.path.abspath(preload)
    names = probe_names(tsv)
    probe_names.cache = names
    work = tempfile.mkdtemp(prefix="udt-coverage.")
    dev, sock = work + "/dt", work + "/ingest.sock"

    os.makedirs(work + "/mk")
    with open(work + "/mk/hello.c", "w") as f:
        f.write("#include <stdio.h>\nint main(void) { puts(\"hi\"); "
                "return 0; }\n")
    with open(work + "/mk/Makefile", "w") as f:
        f.write("hello: hello.c\n\tcc -o hello hello.c\n")
    subprocess.run(["git", "init", "-q", work + "/repo"], check=True)

    r, w = os.pipe()
    d = subprocess.Popen([dtd, "--foreground", "--device", dev,
                          "--ingest", sock, "--ksyms", work + "/ksyms",
                          "--ready-fd", str(w),
                          # the library's calls alone: no kernel feed
                          "--syscall-scope", "launched"], pass_fds=(w,))
    os.close(w)
    ready = os.read(r, 16)
    os.close(r)
    env = dict(os.environ, DT_DEVICE=dev, USERDT_SOCKET=sock)
    try:
        if not check(ready.startswith(b"ready"), "dtd ready"):
            return 1
        lst = subprocess.run([btrace, "-l"], env=env, capture_output=True,
                             text=True).stdout.split()
        seen, script = set(), []
        for p in lst:
            parts = p.split(":")
            # dt(4)'s names are 16 bytes: two names alike there are one.
            if len(parts) != 3 or parts[0] != "syscall" or \
                    parts[2] != "entry" or parts[1][:15] in seen:
                continue
            seen.add(parts[1][:15])
            script.append("%s { @[tid, probe] = count(); }" % p)
        with open(work + "/all.bt", "w") as f:
            f.write("\n".join(script) + "\n")
        # One rule a probe: the paths and -c's shell (cpid) join in.
        extra = {"syscall:openat:entry": " @o[pid, str(arg1)] = count();",
                 "syscall:execve:entry":
                 " if (pid == cpid) { @x[pid] = count(); }"}
        with open(work + "/loader.bt", "w") as f:
            for line in script:
                p = line.split(" ", 1)[0]
                f.write(line.replace(" }", extra.get(p, "") + " }", 1)
                        if p in extra else line)
                f.write("\n")
            f.write("syscall:execve:return /retval == 0/ { @e = count(); }\n")
        for what, cmd in COMMANDS:
            cmd = cmd.format(work=work)
            sdir = tempfile.mkdtemp(dir=work)
            run = ("exec env -u LD_PRELOAD strace -ff -qq -k -o %s/t -- "
                   "env LD_PRELOAD=%s USERDT_DISPATCH=1 sh -c %s" % (
                       sdir, preload, "'" + cmd.replace("'", "'\\''") +
                       "'"))
            bt = subprocess.run([btrace, "-c", run, work + "/all.bt"],
                                env=env, capture_output=True, text=True,
                                timeout=300)
            if not check(bt.returncode == 0, "%s: btrace ran (%s)" %
                         (what, bt.stderr.strip()[:200])):
                continue
            got = {}
            for line in bt.stdout.splitlines():
                m = re.match(r"^@\[(\d+), syscall:(\w+):entry\]: (\d+)$",
                             line)
                if m:
                    got.setdefault(int(m.group(1)), {})[m.group(2)] = \
                        int(m.group(3))
            files = [os.path.join(sdir, f) for f in os.listdir(sdir)]
            prog, loader, ours, shseg, every = strace_counts(files, preload)
            diffs, total, nload, nours = [], 0, 0, 0
            for pid in prog:
                want = {}
                for name, n in prog[pid].items():
                    pn = names.get(name, name)
                    want[pn] = want.get(pn, 0) + n
                    total += n
                have = got.get(pid, {})
                for pn in sorted(set(want) | set(have)):
                    if want.get(pn, 0) != have.get(pn, 0):
                        diffs.append("%d %s: strace %d, btrace %d" % (
                            pid, pn, want.get(pn, 0), have.get(pn, 0)))
            for pid in loader:
                nload += sum(loader[pid].values())
            for pid in ours:
                nours += sum(ours[pid].values())
            check(not diffs and total > 0,
                  "%s: %d calls in %d processes, each seen once (apart: "
                  "%d the loader's, %d the library's own)%s" % (
                      what, total, len(prog), nload, nours,
                      "".join("\n    " + x for x in diffs[:20])))
            loader_check(btrace, env, work, what, cmd, shseg, every,
                         preload)
    finally:
        d.terminate()
        d.wait()
        subprocess.run(["rm", "-rf", work])
    return done()


if __name__ == "__main__":
    sys.exit(main())
