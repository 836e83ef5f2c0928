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
check, the closing count, a dtd of the test's own on a temporary
directory, started and stopped by pid, and the preload library's cache
checksum (udt_plan_hash()) for the tests that forge its files."""
import os
import struct
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


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    return t


_CRC_T = _crc32c_table()


def udt_plan_hash(h, b, crc):
    """udt_plan_hash(h, b) of the preload library (udt_rw_plan_file.c),
    its lanes the crc32 instruction's (crc: where glibc finds SSE4.2) or
    multiplies: the plans' and images' checksum."""
    m, k = (1 << 64) - 1, 0x9e3779b97f4a7c15
    lanes = [h, h ^ 0x243f6a8885a308d3, h ^ 0x13198a2e03707344,
             h ^ 0xa4093822299f31d0]
    n = len(b) - len(b) % 32
    for i in range(0, n, 32):
        for j in range(4):
            w = b[i + 8 * j:i + 8 * j + 8]
            if crc:
                c = lanes[j] & 0xffffffff
                for x in w:
                    c = _CRC_T[(c ^ x) & 0xff] ^ (c >> 8)
                lanes[j] = c
            else:
                lanes[j] = ((lanes[j] ^ struct.unpack("<Q", w)[0]) * k) & m
                lanes[j] ^= lanes[j] >> 29
    if n > 0:
        if not crc:
            h = lanes[0]
        for j in range(0 if crc else 1, 4):
            h = ((h ^ lanes[j]) * k) & m
            h ^= h >> 29
    for i in range(n, len(b) - len(b) % 8, 8):
        h = ((h ^ struct.unpack_from("<Q", b, i)[0]) * k) & m
        h ^= h >> 29
    for c in b[len(b) - len(b) % 8:]:
        h = ((h ^ c) * 0x100000001b3) & m
        h ^= h >> 29
    return h
