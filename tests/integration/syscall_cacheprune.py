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
syscall_cacheprune.py DTD DTRUN BTRACE: the launchers keep the preload
library's cache of plans and images bounded (udt_lcache.c).

A cache under a temporary XDG_CACHE_HOME is planted with plans, image
directories and a writer's leftovers of known ages and sizes, then
dtrun (and btrace -c, with its own dtd) runs /bin/true over it:
  - what was unused for more than USERDT_CACHE_DAYS (30) days goes, plan
    files and image directories alike, and a writer's .tmp. file older
    than a day; what is recent stays, and so does a fresh .tmp. file;
  - a file that is not the user's (as root), and what a symbolic link
    in the cache points to, are never removed; a plan written long ago
    but read recently (its access time) stays;
  - the walk happens once a day (a stamp file), unless
    USERDT_CACHE_PRUNE=now; USERDT_PLAN_CACHE=0 removes nothing;
  - over USERDT_CACHE_MAX megabytes, the least recently used go first,
    until the rest fits;
  - btrace -c prunes as dtrun does.
The program runs in every case.
Prints one line a check and `N passed, N failed`.
"""
import os
import subprocess
import sys
import tempfile
import time

from dttpy import check, done, start_dtd, stop_dtd

DAY = 86400


def plant(path, size, age_days, uid=None):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "wb") as f:
        f.write(os.urandom(size))
    t = time.time() - age_days * DAY
    os.utime(path, (t, t))
    if uid is not None:
        os.chown(path, uid, uid)


def run(cmd, cache, **extra):
    env = dict(os.environ)
    env.update({"XDG_CACHE_HOME": cache, "USERDT_IMAGES": "0",
                "USERDT_SOCKET": cache + "/no.sock"})
    env.update(extra)
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return r.returncode


def main():
    work = tempfile.mkdtemp(prefix="cacheprune.")
    try:
        body(work, *sys.argv[1:4])
    finally:
        subprocess.run(["rm", "-rf", work])
    return done()


def body(work, dtd, dtrun, btrace):
    cache = work + "/cache"
    u = cache + "/userdt"
    plans, images = u + "/plans", u + "/images"
    os.makedirs(plans, mode=0o700)
    os.makedirs(images, mode=0o700)
    os.chmod(cache, 0o700)
    os.chmod(u, 0o700)

    # ages
    plant(plans + "/old.plan", 50000, 40)
    plant(plans + "/recent.plan", 50000, 2)
    plant(images + "/old0000/libc.so.6", 50000, 40)
    plant(images + "/recent00/libc.so.6", 50000, 2)
    # an image directory used recently through one of its files
    plant(images + "/mixed000/ld.so", 50000, 40)
    plant(images + "/mixed000/libc.so.6", 50000, 1)
    plant(plans + "/.tmp.0000000000000001", 1000, 3)
    plant(plans + "/.tmp.0000000000000002", 1000, 0)
    # used yesterday (a start mapped it), written 40 days ago
    plant(plans + "/mapped.plan", 50000, 40)
    st = os.stat(plans + "/mapped.plan")
    os.utime(plans + "/mapped.plan", (time.time() - DAY, st.st_mtime))
    root = os.geteuid() == 0
    if root:
        plant(plans + "/foreign.plan", 1000, 40, uid=65534)
    outside = work + "/outside.plan"
    plant(outside, 1000, 40)
    os.symlink(outside, plans + "/link.plan")
    os.symlink(outside, images + "/linkdir")

    check(run([dtrun, "/bin/true"], cache) == 0, "dtrun runs the program")
    ex = os.path.exists
    check(not ex(plans + "/old.plan"), "a plan unused 40 days removed")
    check(ex(plans + "/recent.plan"), "a plan used 2 days ago kept")
    check(ex(plans + "/mapped.plan"),
          "a plan written 40 days ago, read yesterday, kept")
    check(not ex(images + "/old0000"), "an image unused 40 days removed")
    check(ex(images + "/recent00/libc.so.6"), "a recent image kept")
    check(ex(images + "/mixed000/ld.so") and
          ex(images + "/mixed000/libc.so.6"),
          "an image directory with a file used yesterday kept whole")
    check(not ex(plans + "/.tmp.0000000000000001"),
          "a writer's leftover 3 days old removed")
    check(ex(plans + "/.tmp.0000000000000002"), "a fresh .tmp. file kept")
    if root:
        check(ex(plans + "/foreign.plan"), "another user's file kept")
    check(ex(outside) and os.path.islink(plans + "/link.plan") and
          os.path.islink(images + "/linkdir"),
          "a symbolic link's target kept, the link left alone")
    check(ex(u + "/.pruned"), "the walk stamped")

    # once a day, unless asked
    plant(plans + "/old2.plan", 50000, 40)
    run([dtrun, "/bin/true"], cache)
    check(ex(plans + "/old2.plan"), "no second walk the same day")
    run([dtrun, "/bin/true"], cache, USERDT_CACHE_PRUNE="now",
        USERDT_PLAN_CACHE="0")
    check(ex(plans + "/old2.plan"), "USERDT_PLAN_CACHE=0: nothing removed")
    run([dtrun, "/bin/true"], cache, USERDT_CACHE_PRUNE="now")
    check(not ex(plans + "/old2.plan"), "USERDT_CACHE_PRUNE=now walks")

    # the size cap: oldest use first
    mb = 1 << 20
    plant(images + "/cap1/libc.so.6", 600 * 1024, 5)
    plant(images + "/cap2/libc.so.6", 600 * 1024, 4)
    plant(images + "/cap3/libc.so.6", 600 * 1024, 0.5)
    check(run([dtrun, "/bin/true"], cache, USERDT_CACHE_PRUNE="now",
              USERDT_CACHE_MAX="1") == 0, "the program runs")
    check(not ex(images + "/cap1") and not ex(images + "/cap2"),
          "over 1 MB: the two least recently used images removed")
    check(ex(images + "/cap3/libc.so.6"), "the most recent kept")
    total = 0
    for d, _, fs in os.walk(u):
        for f in fs:
            p = os.path.join(d, f)
            if not os.path.islink(p):
                total += os.lstat(p).st_blocks * 512
    # what the library wrote after the walk may add to it: a plan or so
    check(total <= 2 * mb, "the cache about its cap (%d bytes)" % total)

    # btrace -c prunes too
    d, ready = start_dtd(dtd, work)
    try:
        check(ready, "dtd serves")
        plant(plans + "/old3.plan", 50000, 40)
        env = dict(os.environ)
        env.update({"XDG_CACHE_HOME": cache, "USERDT_IMAGES": "0",
                    "USERDT_CACHE_PRUNE": "now"})
        r = subprocess.run([btrace, "-d", work + "/dt", "-c", "/bin/true",
                            "-e", "syscall:getppid:entry { @n = count(); }"],
                           env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        check(r.returncode == 0, "btrace -c ran")
        check(not ex(plans + "/old3.plan"), "btrace -c prunes as dtrun")
    finally:
        stop_dtd(d)


sys.exit(main())
