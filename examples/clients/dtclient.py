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

"""dtclient.py: a small client of dt(4) in Python 3, from dt(4) alone.

The same steps as dtclient.c, with no C header: the ioctl numbers are
computed from Linux's _IOC encoding and the structures packed with
struct at the sizes dt(4) gives.

    open(2)             the device
    DTIOCGPLIST         list the probes (ask the size, then fill)
    DTIOCPRBENABLE      each probe named on the command line
    DTIOCRECORD 1       start recording
    read(2)             whole 456-byte records, until a signal
    DTIOCRECORD 0       stop
    DTIOCGSTATS         this open's counters
    close(2)            disables everything this open enabled

usage: dtclient.py [-d device] -l
       dtclient.py [-d device] [-t seconds] probe ...

A probe is provider:function:name as -l prints it; the timers take a
unit and a number, as in btrace(8): profile:hz:100, interval:ms:250.
Each event prints one line,

    pbn=3 probe=interval:hz:100 pid=812 tid=815 comm=dtd time=1764151234.001002003

and, at the end, the counters:

    stats: read=100 dropped=0 skipped=0 recursive=0
"""

import ctypes
import errno
import fcntl
import getopt
import os
import signal
import struct
import sys

# --- ioctl numbers: Linux's _IOC(dir, type, nr, size) ----------------------
#
# bits 0-7 the number, 8-15 the type ('D'), 16-29 the argument's size,
# 30-31 the direction: 1 the caller writes (_IOW), 2 it reads (_IOR),
# 3 both (_IOWR).  dt(4)'s table gives the results, to check against.

_IOC_WRITE = 1
_IOC_READ = 2


def _ioc(direction, nr, size):
    return (direction << 30) | (size << 16) | (ord("D") << 8) | nr


# The structures, little-endian amd64 with C's alignment spelled out
# ("=" means no implicit padding: every pad byte is an "x").
DTIOC_PROBE = struct.Struct("=QQ")            # dtpr_size, dtpr_probes
PROBE_INFO = struct.Struct("=IB16s16s16s3x")  # pbn, nargs, prov, func, name
DTIOC_REQ = struct.Struct("=IIQQ")            # pbn, unused, evtflags, nsecs
DTIOC_STAT = struct.Struct("=QQQQ")           # read, drop, skiptick, recur
RECORD_ON = struct.Struct("=i")
# struct dt_evt: pbn, cpu, pid, tid, tv_sec, tv_nsec, the two stacks
# (160 bytes each, skipped), comm, the arguments (80 bytes, skipped).
DT_EVT = struct.Struct("=IIiiqq160x160x24s80x")

assert PROBE_INFO.size == 56 and DTIOC_REQ.size == 24
assert DTIOC_STAT.size == 32 and DT_EVT.size == 456

DTIOCGPLIST = _ioc(_IOC_READ | _IOC_WRITE, 1, DTIOC_PROBE.size)
DTIOCGSTATS = _ioc(_IOC_READ, 2, DTIOC_STAT.size)
DTIOCRECORD = _ioc(_IOC_WRITE, 3, RECORD_ON.size)
DTIOCPRBENABLE = _ioc(_IOC_WRITE, 4, DTIOC_REQ.size)

assert DTIOCGPLIST == 0xC0104401 and DTIOCGSTATS == 0x80204402
assert DTIOCRECORD == 0x40044403 and DTIOCPRBENABLE == 0x40184404

DTEVT_EXECNAME = 0x1
NREAD = 64                      # records per read(2), as btrace(8)
TIMERS = ("profile", "interval")
UNITS = {"hz": None, "s": 1000000000, "ms": 1000000, "us": 1000}


def cstr(b):
    """A fixed-size C string field as text."""
    return b.split(b"\0", 1)[0].decode("ascii", "replace")


def probe_list(fd):
    """DTIOCGPLIST's two rounds: the size of the list, then the list.

    dtpr_probes is a pointer into our memory, so the buffer is one whose
    address we know (ctypes); the device writes the entries there.
    """
    while True:
        arg = bytearray(DTIOC_PROBE.pack(0, 0))
        fcntl.ioctl(fd, DTIOCGPLIST, arg)
        size, _ = DTIOC_PROBE.unpack(arg)
        buf = ctypes.create_string_buffer(max(size, 1))
        arg = bytearray(DTIOC_PROBE.pack(size, ctypes.addressof(buf)))
        try:
            fcntl.ioctl(fd, DTIOCGPLIST, arg)
        except OSError as e:
            if e.errno == errno.ENOSPC:     # the list grew: again
                continue
            raise
        size, _ = DTIOC_PROBE.unpack(arg)
        break
    probes = []
    for off in range(0, size, PROBE_INFO.size):
        pbn, nargs, prov, func, name = PROBE_INFO.unpack_from(buf.raw, off)
        probes.append((pbn, "%s:%s:%s" % (cstr(prov), cstr(func), cstr(name))))
    return probes


def probe_request(probes, spec):
    """The DTIOCPRBENABLE request for a command-line probe, or None."""
    parts = spec.split(":")
    if len(parts) != 3:
        return None
    prov, func, name = parts
    nsecs = 0
    if prov in TIMERS:
        # Timers match on the provider; unit and number give the period.
        if func not in UNITS or not name.isdigit() or int(name) == 0:
            return None
        n = int(name)
        nsecs = 1000000000 // n if func == "hz" else n * UNITS[func]
    for pbn, full in probes:
        p, f, nm = full.split(":")
        if p == prov and (prov in TIMERS or (f == func and nm == name)):
            return DTIOC_REQ.pack(pbn, 0, DTEVT_EXECNAME, nsecs)
    return None


def usage():
    sys.stderr.write("usage: dtclient.py [-d device] -l\n"
                     "       dtclient.py [-d device] [-t seconds] probe ...\n")
    sys.exit(2)


def main():
    device = "/dev/dt"
    listing = False
    seconds = 0
    try:
        opts, args = getopt.getopt(sys.argv[1:], "d:lt:")
    except getopt.GetoptError:
        usage()
    for o, v in opts:
        if o == "-d":
            device = v
        elif o == "-l":
            listing = True
        elif o == "-t":
            if not v.isdigit() or int(v) == 0:
                usage()
            seconds = int(v)
    if (len(args) != 0) if listing else (len(args) == 0):
        usage()

    fd = os.open(device, os.O_RDONLY)
    probes = probe_list(fd)
    if listing:
        for pbn, name in probes:
            print(pbn, name)
        os.close(fd)
        return 0
    names = dict(probes)

    for spec in args:
        req = probe_request(probes, spec)
        if req is None:
            sys.exit("dtclient.py: probe '%s' not found" % spec)
        try:
            fcntl.ioctl(fd, DTIOCPRBENABLE, req)
        except OSError as e:
            sys.exit("dtclient.py: %s: %s" % (spec, e.strerror))

    # A signal ends a blocked read(2) with EINTR, as dt(4) says: Python
    # installs its handlers without SA_RESTART.  But os.read() retries on
    # EINTR (PEP 475) unless the handler raises, and an exception raised
    # just after a read returned would lose the records it returned.  So
    # the handler only sets a flag, and read(2) is called through libc,
    # which hands EINTR back as C does.
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
        signal.signal(sig, lambda signum, frame: stop.append(signum))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.read.restype = ctypes.c_ssize_t
    libc.read.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t)
    buf = ctypes.create_string_buffer(NREAD * DT_EVT.size)

    fcntl.ioctl(fd, DTIOCRECORD, RECORD_ON.pack(1))
    if seconds:
        signal.alarm(seconds)

    nevents = 0
    while not stop:
        n = libc.read(fd, buf, len(buf))
        if n == -1:
            err = ctypes.get_errno()
            # Only our handlers' signals interrupt, and they all mean
            # stop.  (Python runs the handler itself a little later, at
            # its next check, so do not wait for `stop' to be set.)
            if err == errno.EINTR:
                break
            sys.exit("dtclient.py: read: %s" % os.strerror(err))
        # 0: a stop signal (SIGTSTP...) woke the read; read again.
        if n % DT_EVT.size != 0:
            sys.exit("dtclient.py: read %d bytes, not whole records" % n)
        data = buf.raw[:n]
        for off in range(0, n, DT_EVT.size):
            pbn, _cpu, pid, tid, sec, nsec, comm = DT_EVT.unpack_from(data, off)
            print("pbn=%u probe=%s pid=%d tid=%d comm=%s time=%d.%09d" %
                  (pbn, names.get(pbn, "?"), pid, tid, cstr(comm) or "-",
                   sec, nsec))
            nevents += 1
        sys.stdout.flush()

    fcntl.ioctl(fd, DTIOCRECORD, RECORD_ON.pack(0))
    st = bytearray(DTIOC_STAT.size)
    fcntl.ioctl(fd, DTIOCGSTATS, st)
    print("stats: read=%d dropped=%d skipped=%d recursive=%d" %
          DTIOC_STAT.unpack(st))
    sys.stderr.write("dtclient.py: %d events printed\n" % nevents)
    os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
