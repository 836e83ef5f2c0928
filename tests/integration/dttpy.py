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
"""The python tests' own dtt (tests/lib/dtt.h's counterpart): a line a
check, the closing count, and a dtd of the test's own on a temporary
directory, started and stopped by pid."""
import os
import subprocess

npass = nfail = 0


def check(ok, what):
    """Print one check's line; count it; return ok."""
    global npass, nfail
    print("%s - %s" % ("ok" if ok else "not ok", what))
    if ok:
        npass += 1
    else:
        nfail += 1
    return ok


def done():
    """Print `N passed, N failed`; the exit status the checks say."""
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


def start_dtd(dtd, work, *extra):
    """dtd on work/dt, work/ingest.sock and work/ksyms, with extra
    options; (its Popen, whether it said it serves)."""
    r, w = os.pipe()
    d = subprocess.Popen([dtd, "--foreground", "--device", work + "/dt",
                          "--ingest", work + "/ingest.sock",
                          "--ksyms", work + "/ksyms",
                          "--ready-fd", str(w)] + list(extra),
                         pass_fds=(w,))
    os.close(w)
    ready = os.read(r, 16)
    os.close(r)
    return d, ready.startswith(b"ready")


def stop_dtd(d):
    """Stop a dtd of start_dtd() by its pid, and reap it."""
    d.terminate()
    d.wait()
