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
#
# notify_test.py dtd path|abstract
#
# dtd as a Type=notify service: started with NOTIFY_SOCKET naming a
# datagram socket this test holds (a path, or an abstract name written
# with '@'), it must send READY=1 from its own pid once the device is
# served (the device file is a mount by then), and STOPPING=1 on SIGTERM
# before it exits 0.  A private dtd on temporary paths, stopped by pid.
import os
import signal
import socket
import subprocess
import sys
import tempfile

TIMEOUT = 30


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("path", "abstract"):
        print("usage: notify_test.py dtd path|abstract", file=sys.stderr)
        sys.exit(2)
    dtd, kind = sys.argv[1], sys.argv[2]
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
        fail("dtd needs root and /dev/fuse")

    with tempfile.TemporaryDirectory() as tmp:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if kind == "path":
            addr = os.path.join(tmp, "notify")
            sock.bind(addr)
            env_addr = addr
        else:
            name = "userdt-notify-%d" % os.getpid()
            sock.bind("\0" + name)
            env_addr = "@" + name
        # Whose datagram it is: the sender's credentials ride along.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        sock.settimeout(TIMEOUT)

        dev = os.path.join(tmp, "dt")
        env = dict(os.environ, NOTIFY_SOCKET=env_addr)
        log = open(os.path.join(tmp, "dtd.log"), "w+")
        proc = subprocess.Popen(
            [dtd, "--foreground", "--frontend", "fuse", "--device", dev,
             "--ingest", os.path.join(tmp, "ingest.sock"),
             "--ksyms", os.path.join(tmp, "ksyms")],
            env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            def recv():
                try:
                    msg, anc, _, _ = sock.recvmsg(
                        4096, socket.CMSG_SPACE(12))
                except socket.timeout:
                    log.seek(0)
                    fail("no notification within %d s; dtd said: %s"
                         % (TIMEOUT, log.read()))
                pid = None
                for level, typ, data in anc:
                    if level == socket.SOL_SOCKET and \
                            typ == socket.SCM_CREDENTIALS:
                        pid = int.from_bytes(data[0:4], "little")
                return msg.decode(), pid

            msg, pid = recv()
            if msg != "READY=1":
                fail("first notification %r, not READY=1" % msg)
            if pid != proc.pid:
                fail("READY=1 from pid %s, dtd is %d" % (pid, proc.pid))
            if not os.path.ismount(dev):
                fail("READY=1 before the device is mounted at " + dev)
            print("ok - READY=1 from dtd's pid once %s is served" % dev)

            proc.send_signal(signal.SIGTERM)
            msg, pid = recv()
            if msg != "STOPPING=1":
                fail("notification on SIGTERM %r, not STOPPING=1" % msg)
            print("ok - STOPPING=1 on SIGTERM")
            rc = proc.wait(timeout=TIMEOUT)
            if rc != 0:
                fail("dtd exited %d" % rc)
            print("ok - dtd exited 0")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.close()


main()
