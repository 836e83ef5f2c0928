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
syscall_plan.py DTD BTRACE TRACEE: the rewrite-plan cache (issue 20,
providers/syscall/preload/udt_rw_plan.c), through the device.

TRACEE (plan_tracee.c) runs under btrace -c, its getppid and getpid
entries printed, with XDG_CACHE_HOME a temporary directory and
USERDT_PLAN_CACHE=debug (the library says on stderr, for each object,
whether its plan was used, refused or ignored; the program's lines are
told from its shell's by the name they start with):
  - a first run decodes and writes one plan file (mode 0600); a second
    uses it, for the program, libc and the loader, with the same events;
  - a plan flipped in one byte, cut short, group-writable, owned by
    someone else, or a symlink to a good one is ignored: the program
    runs traced, same events, and the plan written again is used next;
  - a plan forged with a valid checksum (an entry shorter than its own
    header; a window whose offset wraps past 2^64; a window's call
    number made rt_sigreturn's; a segment's count of windows past
    UDT_RW_MAXSITE, or past what its entry holds; two windows over the
    same bytes; a trap on a window's `syscall`, or a byte before a
    window) is ignored, or that object's plan refused, the same way;
  - the program's bytes changed in place (getppid's site made getpid,
    same size, build-id, inode and mtime set back) has no plan (its
    ctime, in the key, changed), is decoded, and getpid is seen;
  - under a seccomp filter that refuses statx (ENOSYS, then EPERM) but
    lets fstat through, put on by a wrapper the program is exec'd from
    (so the launcher's word on the cache's mount, USERDT_CACHEFS, is
    given where the kernel has one), the plan is used all the same,
    and not written again;
  - USERDT_PLAN_CACHE=0 writes nothing.

Starts its own dtd on a temporary path and stops it by pid.  Prints one
line a check and `N passed, N failed`.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from dttpy import check, done, start_dtd, stop_dtd, udt_plan_hash

SCRIPT = ('syscall:getppid:entry, syscall:getpid:entry '
          '/comm == "plan_tracee"/ { printf("%s\\n", probe); }')
SITE = bytes([0xb8, 0x6e, 0, 0, 0, 0x0f, 0x05])    # mov $110,%eax; syscall

# python3 -c NOSTATX ERRNO PROG ARGS...: statx refused with ERRNO from
# here on (a seccomp filter, as a sandbox written before statx has),
# fstat let through; then exec PROG.
NOSTATX = r"""
import ctypes, os, struct, sys
e = int(sys.argv[1])
f = b"".join(struct.pack("<HBBI", *i) for i in [
    (0x20, 0, 0, 0),                    # ld [nr]
    (0x15, 0, 1, 332),                  # jeq SYS_statx
    (0x06, 0, 0, 0x00050000 | e),       # ret SECCOMP_RET_ERRNO | e
    (0x06, 0, 0, 0x7fff0000)])          # ret SECCOMP_RET_ALLOW
buf = ctypes.create_string_buffer(f)
prog = struct.pack("<HxxxxxxQ", len(f) // 8, ctypes.addressof(buf))
libc = ctypes.CDLL(None, use_errno=True)
if (libc.prctl(38, 1, 0, 0, 0) != 0 or
        libc.prctl(22, 2, ctypes.c_char_p(prog), 0, 0) != 0):
    sys.exit("seccomp: %s" % os.strerror(ctypes.get_errno()))
os.execv(sys.argv[2], sys.argv[2:])
"""


class Run:
    def __init__(self, btrace, prog, work, env, wrap=""):
        out = work + "/tracee.out"
        if os.path.exists(out):
            os.unlink(out)
        r = subprocess.run([btrace, "-c", "%s%s %s" % (wrap, prog, out), "-e",
                            SCRIPT], env=env, capture_output=True,
                           text=True, timeout=120)
        self.rc = r.returncode
        self.events = [ln.strip() for ln in r.stdout.splitlines()
                       if ln.startswith("syscall:")]
        me = "userdt: plan: plan_tracee: "
        self.plan = ["userdt: plan: " + ln[len(me):]
                     for ln in r.stderr.splitlines() if ln.startswith(me)]
        self.err = r.stderr.strip()[-400:]
        self.out = open(out).read().split() if os.path.exists(out) else []

    def used(self, what):
        return any(ln.startswith("userdt: plan: " + what) and
                   ln.endswith(": used") for ln in self.plan)

    def said(self, text):
        return any(text in ln for ln in self.plan)

    def ret(self):
        """What the program's own site returned: ppid or pid."""
        if len(self.out) != 6:
            return None
        r, pid, ppid = int(self.out[1]), int(self.out[3]), int(self.out[5])
        return "ppid" if r == ppid else "pid" if r == pid else None

    def show(self):
        return "rc %d, events %s, ret %s%s" % (
            self.rc, self.events, self.ret(),
            "".join("\n    " + ln for ln in self.plan) +
            ("\n    " + self.err if self.rc != 0 else ""))


def plans(pdir, bid=None):
    """The plan files, or those that hold an object with build-id bid."""
    try:
        names = sorted(f for f in os.listdir(pdir) if f.endswith(".plan"))
    except FileNotFoundError:
        return []
    return [f for f in names if bid is None or
            bid in open(pdir + "/" + f, "rb").read()]


def build_id(path):
    """The NT_GNU_BUILD_ID of an ELF file, found by its note's header."""
    data = open(path, "rb").read()
    at = data.find(struct.pack("<III", 4, 20, 3) + b"GNU\0")
    return data[at + 16:at + 36] if at >= 0 else None


# The plan file's layout (udt_rw_plan.h, UDT_PLAN_VERSION 4), to forge
# entries the checksum still covers.
HDR = 72            # struct udt_plan_hdr; ph_sum at 24
KEY = 104           # struct udt_plan_key; pk_bid at 8
OBJ = KEY + 24      # struct udt_plan_obj; po_len, po_nseg after the key
SEG = 72            # struct udt_plan_seg; ps_nwin, ps_ntrap at 16
WIN = 72            # struct udt_plan_win; pw_start, pw_sys, pw_end, pw_nr
TRAP = 16


# The library's lanes run the CPU's CRC-32C where glibc finds SSE4.2
# (CPU_FEATURE_ACTIVE, which tunables can turn off): which one wrote a
# plan, its own checksum says (plan_kind()).
CRC = True


def plan_hash(b):
    """udt_plan_hash(0, b): the file's checksum."""
    return udt_plan_hash(0, b, CRC)


def plan_kind(data):
    """Set CRC to the kind of hash whose sum the plan's header holds."""
    global CRC
    d = bytearray(data)
    want = struct.unpack_from("<Q", d, 24)[0]
    d[24:32] = bytes(8)
    for kind in (True, False):
        CRC = kind
        if plan_hash(bytes(d)) == want:
            return
    raise SystemExit("a plan whose checksum is neither kind's")


def forge(p, bid, edit):
    """edit(data, at) on the entry whose key holds build-id bid, at its
    offset (bid None: on each entry until edit returns True); the
    checksum made again.  Whether there was such an entry."""
    data = bytearray(open(p, "rb").read())
    plan_kind(data)
    nobj = struct.unpack_from("<I", data, 12)[0]
    at = HDR
    for _ in range(nobj):
        polen = struct.unpack_from("<I", data, at + KEY)[0]
        if bid is None and edit(data, at):
            break
        if bid is not None and data[at + 8:at + 8 + len(bid)] == bid:
            edit(data, at)
            break
        at += polen
    else:
        return False
    data[24:32] = bytes(8)
    data[24:32] = struct.pack("<Q", plan_hash(bytes(data)))
    with open(p, "r+b") as f:
        f.write(data)
    return True


def first_win(data, at):
    """The offset of the first window of entry at, or None."""
    nseg = struct.unpack_from("<I", data, at + KEY + 4)[0]
    p = at + OBJ
    for _ in range(nseg):
        nwin, ntrap = struct.unpack_from("<II", data, p + 16)
        if nwin > 0:
            return p + SEG
        p += SEG + nwin * WIN + ntrap * TRAP
    return None


def win_pair(data, at):
    """The offset of the first window of a segment of entry at with two
    or more, or None."""
    nseg = struct.unpack_from("<I", data, at + KEY + 4)[0]
    p = at + OBJ
    for _ in range(nseg):
        nwin, ntrap = struct.unpack_from("<II", data, p + 16)
        if nwin > 1:
            return p + SEG
        p += SEG + nwin * WIN + ntrap * TRAP
    return None


def overlap_win(data, at):
    """A segment's second window made its first: two windows over the
    same bytes, each one right on its own."""
    w = win_pair(data, at)
    if w is None:
        return False
    data[w + WIN:w + 2 * WIN] = data[w:w + WIN]
    return True


def big_nwin(data, at):
    """The first segment's count of windows past UDT_RW_MAXSITE."""
    struct.pack_into("<I", data, at + OBJ + 16, 1 << 20)


def more_nwin(data, at):
    """The first segment's count of windows one more than it holds."""
    n = struct.unpack_from("<I", data, at + OBJ + 16)[0]
    struct.pack_into("<I", data, at + OBJ + 16, n + 1)


def short_entry(data, at):
    struct.pack_into("<I", data, at + KEY, 8)


def wrap_win(data, at):
    w = first_win(data, at)
    struct.pack_into("<Q", data, w + 8, (1 << 64) - 2)      # pw_sys


def sigreturn_win(data, at):
    w = first_win(data, at)
    struct.pack_into("<q", data, w + 24, 15)                 # pw_nr


def add_trap(data, at, where):
    """A trap added to the first segment of entry at with a window, at
    where(pw_start, pw_sys) of its first window, among the segment's
    traps in order, its bytes memory's where they are a `syscall` (so
    only its place among the windows can refuse it); the lengths made
    again."""
    nseg = struct.unpack_from("<I", data, at + KEY + 4)[0]
    p = at + OBJ
    for _ in range(nseg):
        nwin, ntrap = struct.unpack_from("<II", data, p + 16)
        if nwin > 0:
            break
        p += SEG + nwin * WIN + ntrap * TRAP
    else:
        return False
    w = p + SEG
    start, sys_ = struct.unpack_from("<QQ", data, w)
    off = where(start, sys_)
    b = bytes(data[w + 40 + off - start:w + 42 + off - start]) \
        if start <= off else b"\xcc\xcc"
    t = w + nwin * WIN
    k = 0
    while k < ntrap and struct.unpack_from("<Q", data, t + k * TRAP)[0] < off:
        k += 1
    data[t + k * TRAP:t + k * TRAP] = struct.pack("<Q", off) + b + bytes(6)
    struct.pack_into("<I", data, p + 20, ntrap + 1)
    polen = struct.unpack_from("<I", data, at + KEY)[0]
    struct.pack_into("<I", data, at + KEY, polen + TRAP)
    struct.pack_into("<Q", data, 16, len(data))             # ph_len
    return True


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    dtd, btrace, tracee = sys.argv[1:]
    work = tempfile.mkdtemp(prefix="udt-plan.")
    d, ok = start_dtd(dtd, work, "--syscall-scope", "launched")
    env = dict(os.environ, DT_DEVICE=work + "/dt",
               USERDT_SOCKET=work + "/ingest.sock",
               XDG_CACHE_HOME=work + "/cache", USERDT_PLAN_CACHE="debug")
    env.pop("LD_PRELOAD", None)
    env.pop("USERDT_REWRITE", None)
    pdir = work + "/cache/userdt/plans"
    prog = work + "/plan_tracee"
    shutil.copy2(tracee, prog)
    want = ["syscall:getpid:entry", "syscall:getppid:entry",
            "syscall:getppid:entry"]
    wantpid = want[:2] + ["syscall:getpid:entry"]
    bid = build_id(prog)
    try:
        if not check(ok, "dtd ready"):
            return 1
        # 1: the second run uses what the first wrote.
        if not check(bid is not None, "the program has a build-id"):
            return 1
        a = Run(btrace, prog, work, env)
        files = plans(pdir, bid)
        check(a.rc == 0 and a.events == want and a.ret() == "ppid" and
              not a.used("") and a.said("written") and len(files) == 1,
              "a first run decodes, its events right, its plan written "
              "(%s; %s)" % (files, a.show()))
        if len(files) != 1:
            return 1
        plan = pdir + "/" + files[0]
        st = os.lstat(plan)
        check(st.st_mode & 0o777 == 0o600 and st.st_uid == os.geteuid(),
              "the plan is the user's, mode 0600 (%o)" % st.st_mode)
        b = Run(btrace, prog, work, env)
        check(b.rc == 0 and b.events == want and b.ret() == "ppid" and
              b.used("(the program)") and b.used("/") and
              any("libc.so" in ln and ln.endswith(": used")
                  for ln in b.plan) and not b.said("written"),
              "a second run uses the plan, the program's, libc's, the "
              "loader's, same events (%s)" % b.show())

        # 1b: statx refused, fstat allowed: the plan is read all the
        # same (a statx in every start lost it: every start decoded).
        script = work + "/nostatx.py"
        with open(script, "w") as f:
            f.write(NOSTATX)
        for e, name in ((38, "ENOSYS"), (1, "EPERM")):
            r = Run(btrace, prog, work, env,
                    "%s %s %d " % (sys.executable, script, e))
            check(r.rc == 0 and r.events == want and r.ret() == "ppid" and
                  r.used("(the program)") and not r.said("written"),
                  "statx refused with %s, fstat allowed: the plan used, "
                  "not written again (%s)" % (name, r.show()))

        # 2: a plan that is not whole, or not the user's own, is ignored.
        def flip(p):
            with open(p, "r+b") as f:
                f.seek(os.path.getsize(p) // 2)
                c = f.read(1)
                f.seek(-1, 1)
                f.write(bytes([c[0] ^ 0x5a]))

        def cut(p):
            os.truncate(p, os.path.getsize(p) // 2)

        def link(p):
            os.rename(p, p + ".real")
            os.symlink(p + ".real", p)

        for what, spoil, why in [
                ("a byte flipped", flip, "malformed"),
                ("cut short", cut, "malformed"),
                ("group- and other-writable",
                 lambda p: os.chmod(p, 0o666), "written by others"),
                ("owned by nobody", lambda p: os.chown(p, 65534, 65534),
                 "written by others"),
                ("a symlink to a good plan", link, "a symlink")]:
            if os.path.lexists(plan + ".real"):
                os.unlink(plan + ".real")
            r = Run(btrace, prog, work, env)       # a good plan first
            if not r.used("(the program)"):
                check(False, "%s: a good plan to spoil (%s)" %
                      (what, r.show()))
                continue
            spoil(plan)
            r = Run(btrace, prog, work, env)
            check(r.rc == 0 and r.events == want and r.ret() == "ppid" and
                  r.said(why) and not r.used("") and r.said("written"),
                  "%s: ignored (%s), traced, same events, written again "
                  "(%s)" % (what, why, r.show()))
            r = Run(btrace, prog, work, env)
            check(r.used("(the program)") and r.events == want,
                  "%s: the plan written again is used (%s)" %
                  (what, r.show()))

        # 2b: forged entries, the checksum right: nothing of them used.
        for what, edit, why in [
                ("an entry shorter than its header", short_entry,
                 "malformed"),
                ("a window's offset wrapping", wrap_win,
                 "(the program): refused: malformed window"),
                ("a window's call number rt_sigreturn", sigreturn_win,
                 "(the program): refused: a window's call number"),
                ("a segment's windows past UDT_RW_MAXSITE", big_nwin,
                 "malformed"),
                ("a segment's windows one more than it holds", more_nwin,
                 "malformed"),
                ("two windows over the same bytes", overlap_win,
                 ": refused: malformed window"),
                ("a trap on a window's `syscall`",
                 lambda d, a: add_trap(d, a, lambda s, y: y),
                 "(the program): refused: malformed trap"),
                ("a trap a byte before a window",
                 lambda d, a: add_trap(d, a, lambda s, y: s - 1),
                 "(the program): refused: malformed trap")]:
            r = Run(btrace, prog, work, env)       # a good plan first
            if not r.used("(the program)"):
                check(False, "%s: a good plan to forge (%s)" %
                      (what, r.show()))
                continue
            # Two windows in one segment: libc's, if not the program's.
            which = None if edit is overlap_win else bid
            if not check(forge(plan, which, edit), "%s: forged" % what):
                continue
            r = Run(btrace, prog, work, env)
            check(r.rc == 0 and r.events == want and r.ret() == "ppid" and
                  r.said(why) and (which is None or
                                   not r.used("(the program)")) and
                  r.said("written"),
                  "%s: %s, traced, same events, written again (%s)" %
                  (what, why, r.show()))

        # 3: the file changed in place, its mtime set back.
        r = Run(btrace, prog, work, env)
        before = os.stat(prog)
        data = open(prog, "rb").read()
        if not check(r.used("(the program)") and data.count(SITE) == 1,
                     "the program's plan in use, its site found once"):
            return 1
        with open(prog, "r+b") as f:
            f.seek(data.index(SITE) + 1)
            f.write(bytes([39]))                   # getpid
        os.utime(prog, ns=(before.st_atime_ns, before.st_mtime_ns))
        after = os.stat(prog)
        check((after.st_ino, after.st_size, after.st_mtime_ns) ==
              (before.st_ino, before.st_size, before.st_mtime_ns),
              "the program changed in place: same inode, size, mtime")
        r = Run(btrace, prog, work, env)
        check(r.rc == 0 and r.said("(the program): no plan") and
              not r.used("(the program)") and r.ret() == "pid" and
              r.events == wantpid,
              "the program edited, its mtime set back: no plan (its "
              "ctime changed), getpid seen (%s)" % r.show())
        r = Run(btrace, prog, work, env)
        check(r.used("(the program)") and r.ret() == "pid" and
              r.events == wantpid,
              "the new bytes' plan is used next (%s)" % r.show())

        # USERDT_PLAN_CACHE=0: nothing read, nothing written.
        shutil.rmtree(pdir)
        r = Run(btrace, prog, work, dict(env, USERDT_PLAN_CACHE="0"))
        check(r.rc == 0 and r.events == wantpid and plans(pdir) == [],
              "USERDT_PLAN_CACHE=0: no plan written (%s)" % r.show())
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
