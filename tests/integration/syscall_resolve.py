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
syscall_resolve.py PRELOAD INTERPOSER AUDIT: the preload library finds its
hooks' real functions without dlsym() (udt_resolve.c); with
USERDT_RESOLVE=check it asks dlsym(RTLD_NEXT) of each as well and says
where the two differ.  Programs with few and many libraries, and one
with a library preloaded after ours that defines getpid and write, whose
definitions must be the ones found, must show no difference, and leave
to dlsym() only what it alone may answer (libc's indirect functions);
with LD_DYNAMIC_WEAK, or an audit module loaded, it must leave every
name to dlsym(), which knows what those change.
No dtd: the resolution comes before any handshake.
"""
import os
import subprocess
import sys

failed = 0


def check(ok, what):
    global failed
    print("%s - %s" % ("ok" if ok else "not ok", what))
    if not ok:
        failed += 1


# Indirect functions in glibc 2.36 among the hooks' names: their
# resolvers run as the loader runs them, through dlsym().
IFUNCS = {"gettimeofday", "time"}


def run(preload, argv, what, extra=None, tables=True):
    """argv under the preload library in check mode: no pointer other
    than dlsym's; with tables, the tables answered every name but the
    indirect functions, else (a loader that may answer otherwise) they
    answered none."""
    env = dict(os.environ, LD_PRELOAD=preload, USERDT_RESOLVE="check",
               USERDT_SOCKET="/nonexistent/userdt-resolve.sock",
               USERDT_REWRITE="0")
    env.update(extra or {})
    p = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    said = [ln for ln in p.stderr.splitlines()
            if ln.startswith("userdt: resolve: ")]
    wrong = [ln for ln in said if ln.endswith(": not dlsym's")]
    left = {ln.split(": ")[2] for ln in said
            if ": left to dlsym" in ln and not ln.startswith(
                "userdt: resolve: (")}
    gave_up = any("(the objects after ours)" in ln for ln in said)
    counts = [int(ln.rsplit(": ", 1)[1]) for ln in said
              if "(names answered by the tables)" in ln]
    # The first process's word only: a child (python's) says its own.
    answered = counts[0] if counts else -1
    check(p.returncode == 0, "%s: runs (rc %d)" % (what, p.returncode))
    check(not wrong, "%s: every pointer is dlsym's %s" % (what, wrong))
    if tables:
        check(not gave_up and answered >= 300,
              "%s: the tables answered %d names" % (what, answered))
        check(left <= IFUNCS, "%s: only indirect functions left to "
              "dlsym (%s)" % (what, sorted(left)))
    else:
        check(gave_up and answered == 0,
              "%s: every name left to dlsym (%d answered)" %
              (what, answered))


def main():
    lib, interposer, audit = sys.argv[1], sys.argv[2], sys.argv[3]
    run(lib, ["/bin/true"], "true")
    run(lib, [sys.executable, "-c", "import ssl, json"], "python3")
    cc1 = subprocess.run(["gcc", "-print-prog-name=cc1"],
                         capture_output=True, text=True).stdout.strip()
    if os.path.isabs(cc1):
        run(lib, [cc1, "--version"], "cc1 (a dozen libraries)")
    run(lib + " " + interposer, ["/bin/true"],
        "a library after ours defining getpid and write")
    # Ours after the interposer: libc's are the next definitions.
    run(interposer + " " + lib, ["/bin/true"],
        "a library before ours defining getpid and write")
    # Weak definitions passed over, an audit module: the loader's word.
    run(lib + " " + interposer, ["/bin/true"],
        "LD_DYNAMIC_WEAK and a weak fsync after ours",
        {"LD_DYNAMIC_WEAK": "1"}, tables=False)
    run(lib, ["/bin/true"], "an audit module", {"LD_AUDIT": audit},
        tables=False)
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
