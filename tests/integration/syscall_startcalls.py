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
syscall_startcalls.py DTD DTRUN: what a traced start costs in system
calls as the kernel counts them (issue 20), caches warm and images in
use, which strace cannot show (a traced process maps no image).

A copy of /bin/true runs once untraced and three times under dtrun (the
fewest counted), each under a name of its own, while bpftrace counts
every system call of those names by number (the launcher's own calls,
before its exec, carry its name and are not counted).  The library may
add at most EXTRA calls in all (31 measured here, one of margin; Debian
12 on Linux 6.18; doc/benchmarks.md lists them), one more where dtd's
socket lies below a directory others may write (the sticky /tmp: when
not root) and one where the kernel has no unique mount ids (before
6.8), and of the classes earlier passes cut, no more than they cost
now: one close_range for the descriptors of the start; no fstatfs
of the cache's file system, which the launcher judged (USERDT_CACHEFS,
required wherever the kernel's own statx gives the cache's mount a
unique id on a local file system), and one in a start given a word for
a mount no mount can be; no look at the
socket's directory, which the launcher vouched for (USERDT_SOCKDIR; dtd
runs under /run when root, as root's /run/userdt does); and OPENS opens
(the plan and the two images: /proc/self/status, /proc/self/maps and
/proc/self/pagemap are dtd's to read, told in the welcome and the table,
and the large objects' stats).  The handshake connects to dtd's tracee
socket and sends nothing; with that socket gone (a dtd of another
build), a start says its hello on the ingest socket and is served all
the same.  Counts, never times.  Starts its own dtd
on a temporary path and stops it and bpftrace by pid.  Prints one line a
check and `N passed, N failed`.
"""
import ctypes
import glob
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile

from dttpy import check, done, start_dtd, stop_dtd

EXTRA = 32
OPENS = 3
SYS_OPEN, SYS_CLOSE, SYS_FSTATFS, SYS_CLOSE_RANGE = 2, 3, 138, 436
SYS_NEWFSTATAT = 262
SYS_CONNECT, SYS_SENDTO, SYS_RECVMSG = 42, 44, 47
STATX_MNT_ID_UNIQUE = 0x4000
# A mount id no mount has: unique ids are far below (a counter).
OTHER_MOUNT = 1 << 62
# Network and FUSE file systems' f_type (udt_fs_remote_type()).
REMOTE_FS = (0x6969, 0x517b, 0xff534d42, 0xfe534d42, 0x65735546,
             0x01021997, 0x00c36400, 0x5346414f, 0x6b414653, 0x73757245,
             0x7461636f, 0x01161970, 0x20030528, 0x0bd00bd0, 0x47504653,
             0xbeefdead)


def cache_mount(path):
    """The unique id of path's mount when the kernel gives one (statx
    STATX_MNT_ID_UNIQUE, 6.8) and its file system is neither a network
    nor a FUSE one: the word the launcher must say; else None.  Asked of
    the kernel here, not of the launcher, so that a launcher that stops
    saying it cannot be allowed the fstatfs it spares."""
    libc = ctypes.CDLL(None, use_errno=True)
    sf = ctypes.create_string_buffer(120)   # struct statfs, f_type first
    sx = ctypes.create_string_buffer(256)   # struct statx
    if libc.statfs(path.encode(), sf) != 0:
        return None
    if (int.from_bytes(sf.raw[0:8], "little") & 0xffffffff) in REMOTE_FS:
        return None
    if libc.statx(-100, path.encode(), 0x100, STATX_MNT_ID_UNIQUE,
                  sx) != 0:    # AT_FDCWD, AT_SYMLINK_NOFOLLOW
        return None
    if not int.from_bytes(sx.raw[0:4], "little") & STATX_MNT_ID_UNIQUE:
        return None
    return int.from_bytes(sx.raw[144:152], "little")    # stx_mnt_id


def fixed(path):
    """Whether every directory from / to path is root's or ours and
    nobody else may write it (udt_user_fixed(), udt_userdir.h)."""
    parts = os.path.abspath(path).split("/")[1:]
    for i in range(len(parts) + 1):
        st = os.lstat("/" + "/".join(parts[:i]))
        if (not stat.S_ISDIR(st.st_mode) or
                st.st_uid not in (0, os.geteuid()) or st.st_mode & 0o022):
            return False
    return True


def count(work, names, runs, env):
    """Runs each argv of runs while bpftrace counts the calls of the
    processes named in names: {(name, number): count}, or None.  It
    says it attaches before it has: a marker (yes(1) under a name of its
    own, writing until stopped) runs until the one probe sees it, and
    what that probe counts is counted from then on."""
    marker = os.path.join(work, "udtsm" + names[0][5:10])
    shutil.copy(shutil.which("yes"), marker)
    pred = " || ".join('comm == "%s"' % n for n in names)
    prog = ('tracepoint:raw_syscalls:sys_enter { '
            'if (comm == "%s") { if (@seen == 0) { @seen = 1; '
            'printf("seen\\n"); } } '
            'else if (%s) { @[comm, args->id] = count(); } }' % (
                os.path.basename(marker), pred))
    out = open(work + "/bpf.out", "w+")
    b = subprocess.Popen(["bpftrace", "-e", prog], stdout=subprocess.PIPE,
                         stderr=out, text=True)
    m = subprocess.Popen([marker], stdout=subprocess.DEVNULL)
    try:
        for line in b.stdout:
            if line.strip() == "seen":
                break
        else:
            return None
        m.terminate()
        m.wait()
        for argv in runs:
            # No descriptor of ours past 2 for the counted to close.
            subprocess.run(argv, env=env, close_fds=True, timeout=60,
                           stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL)
    finally:
        if m.poll() is None:
            m.terminate()
            m.wait()
        b.send_signal(signal.SIGINT)
        text = b.communicate(timeout=60)[0]
    counts = {}
    for line in text.splitlines():
        # @[udtst12345, 17]: 2
        if not line.startswith("@[") or "]:" not in line:
            continue
        key, n = line[2:].split("]:")
        name, nr = key.split(",")
        counts[(name.strip(), int(nr))] = int(n)
    return counts


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    dtd, dtrun = sys.argv[1:]
    if shutil.which("bpftrace") is None:
        check(False, "bpftrace installed (scripts/deps.sh)")
        return done()
    work = tempfile.mkdtemp(prefix="udt-startcalls.")
    # dtd's socket where the launcher can vouch for its directory, as
    # for /run/userdt (root's dtd) or $XDG_RUNTIME_DIR/userdt: under
    # /run, not the sticky /tmp, when we may.
    run = work
    if os.geteuid() == 0 and fixed("/run"):
        run = tempfile.mkdtemp(prefix="udt-startcalls.", dir="/run")
    d, ok = start_dtd(dtd, run, "--syscall-scope", "launched")
    env = dict(os.environ, USERDT_SOCKET=run + "/ingest.sock",
               XDG_CACHE_HOME=work + "/cache")
    sockdir = 0 if fixed(run) else 1
    for v in ("LD_PRELOAD", "LD_LIBRARY_PATH", "USERDT_REWRITE",
              "USERDT_PLAN_CACHE", "USERDT_IMAGES", "USERDT_SOCKDIR",
              "USERDT_CACHEFS"):
        env.pop(v, None)
    # Names of this run's own: bpftrace sees every process's calls.
    tag = "%05d" % (os.getpid() % 100000)
    # Traced three times, the fewest counted: a dtd slow to answer once
    # (a loaded machine) costs that start a second wait and a look at
    # its state, which is not what is measured here.
    u, ts = "udtsu" + tag, ["udtst%s%d" % (tag, i) for i in range(3)]
    # Started in the tree with a word on the cache's mount that is not
    # its mount's (UDT_CACHEFS_ENV): the library looks itself.
    w = "udtsw" + tag
    for n in [u, w] + ts:
        shutil.copy("/bin/true", os.path.join(work, n))
    try:
        if not check(ok, "dtd ready"):
            return done()
        # Plans and images written by the first, used by the second.
        for _ in range(2):
            subprocess.run([dtrun, os.path.join(work, ts[0])], env=env,
                           timeout=60)
        subprocess.run([dtrun, os.path.join(work, w)], env=env, timeout=60)
        # The word the launcher must say, by the kernel's own answer;
        # none on a kernel before 6.8 or a network or FUSE cache.
        mnt = cache_mount(work + "/cache/userdt")
        said = mnt is not None
        words = [ln for ln in subprocess.run(
            [dtrun, "/usr/bin/env"], env=env, timeout=60,
            capture_output=True, text=True).stdout.splitlines()
            if ln.startswith("USERDT_CACHEFS=")]
        check(words == (["USERDT_CACHEFS=%d" % mnt] if said else []),
              "the launcher names the cache's mount where the kernel "
              "gives a unique id on a local file system: %s (the "
              "kernel: %s)" % (words or "no word", mnt))
        c = count(work, [u, w] + ts, [[os.path.join(work, u)]] +
                  [[dtrun, os.path.join(work, t)] for t in ts] +
                  [[dtrun, "/usr/bin/env", "USERDT_CACHEFS=%d" %
                    OTHER_MOUNT, os.path.join(work, w)]], env)
        if not check(c is not None, "bpftrace counts%s" % (
                "" if c is not None else " (%s)" %
                open(work + "/bpf.out").read().strip()[-300:])):
            return done()
        nu = sum(n for (name, _), n in c.items() if name == u)
        t = min(ts, key=lambda t: sum(n for (name, _), n in c.items()
                                      if name == t))
        nt = sum(n for (name, _), n in c.items() if name == t)
        most = EXTRA + sockdir + (0 if said else 1)
        check(nu > 0 and nt - nu <= most,
              "a traced start: %d calls untraced, %d traced: %d more "
              "(at most %d)" % (nu, nt, nt - nu, most))

        def extra(nr):
            return c.get((t, nr), 0) - c.get((u, nr), 0)
        check(extra(SYS_CLOSE_RANGE) <= 1 and extra(SYS_CLOSE) <= 1,
              "the start's descriptors closed at once: %d close_range, "
              "%d close more than untraced" % (extra(SYS_CLOSE_RANGE),
                                               extra(SYS_CLOSE)))
        # The cache's mount judged by the launcher (/tmp's here: a
        # disk's, tmpfs' or overlayfs', never a network or FUSE one).
        check(extra(SYS_FSTATFS) == (0 if said else 1) and
              c.get((w, SYS_FSTATFS), 0) - c.get((u, SYS_FSTATFS), 0) == 1,
              "no fstatfs of the cache's file system, which the launcher "
              "judged%s: %d more; one under a word for another mount: %d" % (
                  "" if said else " (no word: an older kernel, one)",
                  extra(SYS_FSTATFS), c.get((w, SYS_FSTATFS), 0) -
                  c.get((u, SYS_FSTATFS), 0)))
        check(extra(SYS_OPEN) <= OPENS,
              "no open of /proc/self's status, maps or pagemap: %d opens "
              "more (at most %d)" % (extra(SYS_OPEN), OPENS))
        # The loader's fstat of the library is one.
        check(extra(SYS_NEWFSTATAT) <= 1 + sockdir,
              "the socket's directory looked at by the launcher, not the "
              "start, where no one else can change it: %d newfstatat more "
              "(at most %d)" % (extra(SYS_NEWFSTATAT), 1 + sockdir))
        check((extra(SYS_CONNECT), extra(SYS_SENDTO), extra(SYS_RECVMSG))
              == (1, 0, 1),
              "one connect, to the tracee socket, no hello sent, a "
              "welcome received: %d, %d, %d" % (
                  extra(SYS_CONNECT), extra(SYS_SENDTO),
                  extra(SYS_RECVMSG)))
        # Without the tracee socket: the hello on the ingest socket.
        # ingest.sock.tVERSION.PROBES (UDT_TRACEE_FMT)
        for f in glob.glob(run + "/ingest.sock.t*"):
            os.unlink(f)
        h = "udtsh" + tag
        shutil.copy("/bin/true", os.path.join(work, h))
        c = count(work, [h], [[dtrun, os.path.join(work, h)]], env)
        if check(c is not None, "bpftrace counts again"):
            # /bin/true itself makes none of the three.
            got = tuple(c.get((h, nr), 0)
                        for nr in (SYS_CONNECT, SYS_SENDTO, SYS_RECVMSG))
            check(got == (2, 1, 1),
                  "no tracee socket: a failed connect there, then the "
                  "hello on the ingest socket, welcomed: connect, sendto, "
                  "recvmsg %s" % (got,))
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)
        if run != work:
            shutil.rmtree(run, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
