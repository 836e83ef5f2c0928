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
ptree_storm.py DTD BTRACE FORK_STORM: btrace -c keeps every process of
its command's tree while the rest of the machine forks as fast as it
can (bt_ptree_cn.c).

A fork storm beside it (one fork_storm a core, started here, stopped by
pid) fills the process connector's buffer with announcements of other
processes' forks.  The command waits first (a sleep: btrace has no
event to read, so it blocks in the device), then starts NKIDS short
children at once, each of which makes one exit_group(2) under its own
name.  Checks: each child's call is printed once, under its own pid; and
whatever btrace had to drop, it said.  A last round stops btrace
(SIGSTOP) until the kernel drops announcements, and the children run
and go meanwhile: the overflow is said at once, and at the end every
child is placed all the same, by the parent dtd noted at its hello
(UDT_HELLO_KIN): none is left out.  Before dtd kept parents, all of
them were left out, and counted.

Before the drain thread and the event mask, btrace read the socket only
between batches of events: the sleep let the storm fill the buffer, the
kernel dropped the children's forks with the storm's, and the children,
gone before /proc was read, were left out: 122 to 144 of the 150 a run
on two cores.
"""
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from dttpy import check, done, start_dtd, stop_dtd

NKIDS = 150
ROUNDS = 2
# long enough for the storm to fill the buffer that btrace had without
# the drain thread (16 MB for root, 20164 announcements: about a second
# of two fork_storms on two cores)
WAIT = 2
# each round's limit, s; the stopped round's for all its waits, the
# mask checks' for each of two runs: 2 * 20 + 30 + 2 * 10 = 90, well
# under meson's 120
ROUND_TIMEOUT = 20
STOPPED_TIMEOUT = 30
MASK_TIMEOUT = 10
OVERFLOW_NOW = "dropped fork announcements (its buffer was full)"

CMD = ("sleep %d; i=0; while [ $i -lt %d ]; do /bin/true & i=$((i + 1)); "
       "done; wait" % (WAIT, NKIDS))
PROG = 'syscall:exit_group:entry /comm == "true"/ { printf("kid %d\\n", pid); }'


def storm_start(prog, n, storms):
    """n fork storms, each listed as soon as it starts; once each forks.

    In the test's own process group, so that a runner's kill of the
    group takes them, and each dies with the test besides (fork_storm.c):
    a killed test runs no finally."""
    for _ in range(n):
        storms.append(subprocess.Popen([prog, str(os.getpid())],
                                       stdout=subprocess.PIPE))
    for p in storms:
        check(p.stdout.readline() == b"go\n", "fork storm %d forks" % p.pid)


def storm_stop(storms):
    for p in storms:
        p.kill()
        p.wait()
        p.stdout.close()


def kids(r, k):
    check(r.returncode == 0, "round %s: btrace -c exits 0 (%d: %s)" %
          (k, r.returncode, r.stderr.strip()[-300:]))
    for l in r.stderr.splitlines():
        if "fork announcements" in l:
            print("# " + l)
    return [int(l.split()[1]) for l in r.stdout.splitlines()
            if l.startswith("kid ")]


def one(btrace, env, k):
    r = subprocess.run([btrace, "-e", PROG, "-c", CMD], env=env,
                       capture_output=True, text=True, timeout=ROUND_TIMEOUT)
    pids = kids(r, k)
    check(len(pids) == NKIDS and len(set(pids)) == NKIDS,
          "round %d: %d exit_group calls of %d distinct children, %d "
          "expected" % (k, len(pids), len(set(pids)), NKIDS))
    # dropped announcements are said at once, and what they cost at the end
    said = OVERFLOW_NOW in r.stderr
    check(said == (" time: " in r.stderr or " times: " in r.stderr),
          "round %d: an overflow is said at once and at the end" % k)


def cn_drops(pid):
    """The drops counted on pid's process connector socket, or None."""
    inodes = set()
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            l = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if l.startswith("socket:["):
            inodes.add(l[8:-1])
    with open("/proc/net/netlink") as f:
        for l in f.readlines()[1:]:
            w = l.split()
            if w[1] == "11" and w[9] in inodes:	# NETLINK_CONNECTOR
                return int(w[8])
    return None


def left(end):
    """What is left of a deadline, s, never below 0."""
    return max(end - time.monotonic(), 0)


def stopped(btrace, env, work):
    """btrace kept off the CPU (SIGSTOP) until the kernel drops what the
    storm announces, and while the command's children come and go: the
    overflow is said at once, and every child, gone with the shell
    before /proc could place it, is placed by its parent as dtd noted it
    at its hello: printed once, none left out."""
    end = time.monotonic() + STOPPED_TIMEOUT
    fifo = work + "/shell"
    os.mkfifo(fifo)
    # opened before btrace: the shell's open for writing never blocks
    rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    go = work + "/go"
    os.mkfifo(go)
    # a buffer of about 150 announcements: the storm fills 16 MB in a
    # second where a fork takes 50 us, in 28 s where it takes 750 us
    p = subprocess.Popen([btrace, "-e", PROG, "-c",
                          "echo $$ > %s; read x < %s; %s" % (fifo, go, CMD)],
                         env=dict(env, BTRACE_CN_RCVBUF=str(64 << 10)), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        r, _, _ = select.select([rd], [], [], left(end))
        check(r == [rd], "round stopped: the shell says its pid")
        shell = int(os.read(rd, 64))
        os.kill(p.pid, signal.SIGSTOP)
        # nothing to wait on: the kernel's count of drops, looked at
        while not cn_drops(p.pid) and left(end) > 0:
            time.sleep(0.05)
        check(cn_drops(p.pid), "round stopped: the kernel drops "
              "announcements (%s)" % cn_drops(p.pid))
        with open(go, "w") as f:
            f.write("go\n")
        # the shell waits for its children: they are all gone once it is
        fd = os.pidfd_open(shell)
        r, _, _ = select.select([fd], [], [], left(end))
        os.close(fd)
        check(r == [fd], "round stopped: the command ends")
        os.kill(p.pid, signal.SIGCONT)
        out, err = p.communicate(timeout=max(left(end), 0.1))
    finally:
        os.close(rd)
        p.kill()
        p.wait()
        p.stdout.close()
        p.stderr.close()
    pids = kids(subprocess.CompletedProcess(p.args, p.returncode, out, err),
                "stopped")
    check(len(pids) == NKIDS and len(set(pids)) == NKIDS,
          "round stopped: %d children printed (%d pids), %d expected" %
          (len(pids), len(set(pids)), NKIDS))
    check(OVERFLOW_NOW in err, "round stopped: the overflow is said")
    # the kernel may drop again while btrace catches up: N time(s)
    end = r"\d+ times?: 0 events of 0 processes"
    check(re.search(end, err) is not None,
          "round stopped: the end says %r" % end)


def mask(btrace, env):
    """The connector is asked for forks and execs alone from Linux 6.6,
    for everything before, or with BTRACE_CN_NOMASK."""
    rel = tuple(int(x) for x in os.uname().release.split(".")[:2])
    for nomask in (False, True):
        e = dict(env, BTRACE_CN_NOMASK="1") if nomask else env
        r = subprocess.run([btrace, "-vv", "-e", PROG, "-c", "true"], env=e,
                           capture_output=True, text=True,
                           timeout=MASK_TIMEOUT)
        want = ("forks and execs" if rel >= (6, 6) and not nomask else
                "every event")
        check("debug: process connector: " + want in r.stderr,
              "BTRACE_CN_NOMASK %s: the connector asked for %s" %
              ("set" if nomask else "unset", want))


def main():
    dtd, btrace, storm = sys.argv[1:4]
    work = tempfile.mkdtemp(prefix="ptree_storm.")
    d, ok = start_dtd(dtd, work)
    check(ok, "dtd serves %s/dt" % work)
    env = dict(os.environ, DT_DEVICE=work + "/dt",
               USERDT_SOCKET=work + "/ingest.sock")
    storms = []
    try:
        mask(btrace, env)
        storm_start(storm, max(2, os.cpu_count() or 2), storms)
        for k in range(ROUNDS):
            one(btrace, env, k)
        stopped(btrace, env, work)
    finally:
        storm_stop(storms)
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
