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
syscall_image.py DTD BTRACE TRACEE: images of patched objects (issue 20,
providers/syscall/preload/udt_rw_image.c), through the device.

TRACEE (image_tracee.c) calls getppid() through libc N times under
btrace -c, each entry printed, with XDG_CACHE_HOME a temporary
directory and USERDT_IMAGES=debug (the library says on stderr which
image it used, refused or wrote; btrace's shell has them off); it writes where the jump in libc's
getppid leads, and its /proc/self/smaps:
  - a first run writes an image of libc (images/<hex>/libc.so.6, mode
    0400, the user's); a second maps libc's text from it, not from
    libc.so.6 and not anonymous, none of its pages copied; getppid's
    jump leads into a mapping of the same file (the trampolines), of
    which one page at most was copied (the region's constants); every
    call is recorded; the program finds no descriptor of the library's
    (the handshake's, the images', pagemap's: the constructor closes
    them together at its end);
  - an image made group-writable, owned by someone else, or whose
    footer names another object (its checksum made again) is not used:
    libc's text is libc.so.6's, the calls are all recorded;
  - a save whose write fails (USERDT_IMAGES=debug-failsave) leaves
    no image and no temporary file, and the program runs;
  - USERDT_IMAGES=0 maps no image.

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

N = 100
SCRIPT = ('syscall:getppid:entry /comm == "image_tracee"/ '
          '{ printf("%s\\n", probe); }')


class Run:
    def __init__(self, btrace, prog, work, env, images="debug"):
        out = work + "/tracee.out"
        if os.path.exists(out):
            os.unlink(out)
        # A file just written has dirty page-cache pages, which smaps
        # counts as the mapping's: written back first.
        os.sync()
        # btrace's shell starts first: images off for it, so that the
        # tracee is the one that finds, refuses or writes them.
        r = subprocess.run([btrace, "-c", "USERDT_IMAGES=%s %s %s %d" %
                            (images, prog, out, N), "-e", SCRIPT],
                           env=dict(env, USERDT_IMAGES="0"),
                           capture_output=True, text=True, timeout=120)
        self.rc = r.returncode
        self.nev = sum(1 for ln in r.stdout.splitlines()
                       if ln.strip() == "syscall:getppid:entry")
        me = "userdt: image: image_tracee: "
        self.said = [ln[len(me):] for ln in r.stderr.splitlines()
                     if ln.startswith(me)]
        self.err = r.stderr.strip()[-400:]
        self.jump = self.site = 0
        self.maps = []          # (lo, hi, perms, offset, path, dirty kB)
        self.fds = []           # descriptors past 2 it started with
        if os.path.exists(out):
            self.parse(open(out).read())

    def parse(self, text):
        for ln in text.splitlines():
            f = ln.split()
            if not f:
                continue
            if f[0] == "fd":
                self.fds.append(" ".join(f[1:]))
            elif f[0] == "jump":
                self.jump = int(f[1], 16)
            elif f[0] == "site":
                self.site = int(f[1], 16)
            elif "-" in f[0] and len(f) >= 5:
                lo, hi = (int(x, 16) for x in f[0].split("-"))
                self.maps.append([lo, hi, f[1], int(f[2], 16),
                                  f[5] if len(f) > 5 else "", 0])
            elif f[0] == "Private_Dirty:" and self.maps:
                self.maps[-1][5] = int(f[1])

    def at(self, addr):
        for m in self.maps:
            if m[0] <= addr < m[1]:
                return m
        return None

    def text_path(self):
        m = self.at(self.site)
        return m[4] if m else None

    def show(self):
        t, j = self.at(self.site), self.at(self.jump)
        return "rc %d, %d events, text %s, jump into %s%s" % (
            self.rc, self.nev, t, j,
            "".join("\n    " + ln for ln in self.said) +
            ("\n    " + self.err if self.rc != 0 else ""))


def image_of(r, images):
    """The image file libc's text is mapped from, or None."""
    p = r.text_path()
    return p if p and p.startswith(images + "/") and \
        os.path.basename(p).startswith("libc.so") else None


def from_image(r, images):
    """libc's text and getppid's trampoline both the image's, neither
    copied but the region's first page."""
    p = image_of(r, images)
    t, j = r.at(r.site), r.at(r.jump)
    return (p is not None and j is not None and j[4] == p and
            "x" in t[2] and t[5] == 0 and j[5] <= 4 and j is not t)


# The image's footer (udt_rw_image.c, struct udt_img_foot), at the
# start of its region's second page, the first after the object's pages
# that begins with its magic: the key's pk_mtime, its checksum.
FOOT_MTIME = 48 + 48
FOOT_SUM = 224
FOOT_LEN = 232
SEED = 0x3c6ef372fe94f82b


def forge_key(p):
    """The footer's key made another object's, its checksum made again
    with the kind of lanes that made it.  Whether it could be."""
    with open(p, "rb") as f:
        data = f.read()
    at = next((o for o in range(0, len(data), 4096)
               if data[o:o + 6] == b"UDTIMG"), None)
    if at is None:
        return False
    os.chmod(p, 0o600)
    with open(p, "r+b") as f:
        f.seek(at)
        foot = bytearray(f.read(FOOT_LEN))
        want = struct.unpack_from("<Q", foot, FOOT_SUM)[0]
        foot[FOOT_SUM:FOOT_SUM + 8] = bytes(8)
        kind = [c for c in (True, False)
                if udt_plan_hash(SEED, bytes(foot), c) == want]
        if not kind:
            return False
        mt = struct.unpack_from("<Q", foot, FOOT_MTIME)[0]
        struct.pack_into("<Q", foot, FOOT_MTIME, mt + 1)
        struct.pack_into("<Q", foot, FOOT_SUM,
                         udt_plan_hash(SEED, bytes(foot), kind[0]))
        f.seek(at)
        f.write(foot)
    os.chmod(p, 0o400)
    return True


def noexec(btrace, prog, work, env):
    """A cache remounted noexec once its images are made: the images'
    regions cannot be made executable, so they are copied; libc's text
    patched in place, its site rewritten, every call recorded."""
    mnt = work + "/noexec"
    os.mkdir(mnt)
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "tmpfs", mnt],
            capture_output=True).returncode != 0:
        print("# no tmpfs mount here: a cache remounted noexec not tried")
        return
    try:
        e = dict(env, XDG_CACHE_HOME=mnt)
        a = Run(btrace, prog, work, e)
        ok = subprocess.run(["mount", "-o", "remount,noexec", mnt],
                            capture_output=True).returncode == 0
        r = Run(btrace, prog, work, e)
        check(ok and a.rc == 0 and r.rc == 0 and r.nev == N and
              any("cannot be executable" in s for s in r.said) and
              (r.text_path() or "").endswith("/libc.so.6") and
              r.at(r.jump) is not None,
              "a cache remounted noexec: the images' regions copied, "
              "libc's own text, its site rewritten, every call recorded "
              "(%s)" % r.show())
    finally:
        subprocess.run(["umount", mnt], capture_output=True)


def failsave(btrace, prog, work, env):
    """A save whose write of the patches fails (ENOSPC on a reflinked
    copy, say; USERDT_IMAGES=debug-failsave): the program runs, every
    call recorded, and no image nor temporary file is left."""
    cache = work + "/cache-failsave"
    r = Run(btrace, prog, work, dict(env, XDG_CACHE_HOME=cache),
            "debug-failsave")
    left = []
    for dp, _, fs in os.walk(cache + "/userdt/images"):
        left += [os.path.join(dp, f) for f in fs]
    check(r.rc == 0 and r.nev == N and
          any("could not be written" in s for s in r.said) and
          not any(s.startswith("written ") for s in r.said) and not left,
          "a save whose write fails: the program runs, every call "
          "recorded, no image or temporary file left (%s; left %s)" %
          (r.show(), left))


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    dtd, btrace, prog = sys.argv[1:]
    work = tempfile.mkdtemp(prefix="udt-image.")
    d, ok = start_dtd(dtd, work, "--syscall-scope", "launched")
    env = dict(os.environ, DT_DEVICE=work + "/dt",
               USERDT_SOCKET=work + "/ingest.sock",
               XDG_CACHE_HOME=work + "/cache")
    for k in ("LD_PRELOAD", "USERDT_REWRITE", "USERDT_PLAN_CACHE"):
        env.pop(k, None)
    images = work + "/cache/userdt/images"
    try:
        if not check(ok, "dtd ready"):
            return 1
        a = Run(btrace, prog, work, env)
        check(a.rc == 0 and a.nev == N and
              any("libc.so" in s and s.startswith("written ")
                  for s in a.said),
              "a first run writes libc's image, every call recorded (%s)"
              % a.show())
        b = Run(btrace, prog, work, env)
        img = image_of(b, images)
        check(b.rc == 0 and b.nev == N and from_image(b, images) and
              any("libc.so" in s and s.endswith(": used")
                  for s in b.said),
              "a second maps libc's text and trampolines from the image, "
              "no page of them copied but the constants', every call "
              "recorded (%s)" % b.show())
        ours = [x for x in b.fds if "userdt" in x or "pagemap" in x or
                "socket:" in x or "memfd:" in x]
        check(b.rc == 0 and b.site != 0 and not ours,
              "no descriptor of the library's left to the program (%s)" %
              (", ".join(b.fds) or "none past 2"))
        if img is None:
            return 1
        st = os.lstat(img)
        check(st.st_mode & 0o777 == 0o400 and st.st_uid == os.geteuid(),
              "the image is the user's, mode 0400 (%o)" % st.st_mode)

        def writable(p):
            os.chmod(p, 0o420)

        def others(p):
            os.chown(p, 65534, -1)

        spoils = [("group-writable", writable, "written by others"),
                  ("for another object", forge_key,
                   "made for another object")]
        # Only root can give the file away (the suite runs as root).
        if os.geteuid() == 0:
            spoils.insert(1, ("someone else's", others, "written by others"))
        else:
            print("# not root: an image someone else's not tried")
        for what, spoil, why in spoils:
            if spoil(img) is False:
                check(False, "the image's footer could be forged")
                continue
            r = Run(btrace, prog, work, env)
            check(r.rc == 0 and r.nev == N and image_of(r, images) is None
                  and any(why in s for s in r.said) and
                  (r.text_path() or "").endswith("/libc.so.6") and
                  r.at(r.jump) is not None,
                  "an image %s is not used: libc's own text, its site "
                  "rewritten, every call recorded (%s)" % (what, r.show()))
            # Written anew by that run: the next one uses it.
            r = Run(btrace, prog, work, env)
            check(r.rc == 0 and r.nev == N and from_image(r, images) and
                  image_of(r, images) == img,
                  "then the image written again is used (%s)" % r.show())
        # A pass that flushes early (every 100 patches here) seals the
        # images' regions halfway: nothing may be stored there after.
        r = Run(btrace, prog, work, env, "debug-flush")
        check(r.rc == 0 and r.nev == N and r.at(r.jump) is not None,
              "a pass that flushes early runs, its site rewritten, every "
              "call recorded (%s)" % r.show())
        noexec(btrace, prog, work, env)
        failsave(btrace, prog, work, env)
        r = Run(btrace, prog, work, env, "0")
        check(r.rc == 0 and r.nev == N and image_of(r, images) is None and
              not r.said and (r.text_path() or "").endswith("/libc.so.6"),
              "USERDT_IMAGES=0 maps no image (%s)" % r.show())
    finally:
        stop_dtd(d)
        # The images are mode 0400 and the noexec mount is gone by now:
        # nothing stops the removal.
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
