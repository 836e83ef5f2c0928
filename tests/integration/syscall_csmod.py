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
syscall_csmod.py DTD DTRUN LIB MODULE: the preload library's disassembler
module (libuserdt-preload-cs.so), which the library maps itself when a
pass decodes (udt_rw_csload.c).

  - The module as built: only relative relocations, no library needed,
    no constructor, nothing undefined, and no system call instruction in
    its text (the library counts that text as gone through).
  - Copied beside a copy of the library, every object decoded
    (USERDT_PLAN_CACHE=0): the program's sites are rewritten.
  - Missing, cut short, a relocation aimed at its text, its dynamic
    section outside its segments, a segment writable and executable: the
    program still runs and exits 0, the module is refused with a word
    under USERDT_REWRITE=debug, and the sites are dispatched.

Starts its own dtd on a temporary path and stops it by pid.  Prints one
line a check and `N passed, N failed`.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from dttpy import check, done, start_dtd, stop_dtd

NAME = "libuserdt-preload-cs.so"


def tool(args):
    r = subprocess.run(args, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def as_built(mod):
    rel = tool(["readelf", "-rW", mod])
    dyn = tool(["readelf", "-dW", mod])
    und = tool(["nm", "-D", "--undefined-only", mod])
    dis = tool(["objdump", "-d", "--no-show-raw-insn", mod])
    if not check(None not in (rel, dyn, und, dis),
                 "readelf, nm and objdump read the module"):
        return
    kinds = set(re.findall(r"\bR_X86_64_\w+", rel))
    check(kinds == {"R_X86_64_RELATIVE"},
          "its relocations are all relative (%s)" % sorted(kinds))
    bad = [t for t in ("NEEDED", "INIT", "INIT_ARRAY", "PREINIT_ARRAY",
                       "TEXTREL") if re.search(r"\(%s\)" % t, dyn)]
    check(not bad, "no library needed, no constructor (%s)" % bad)
    check(und.strip() == "", "nothing undefined (%s)" % und.strip()[:200])
    calls = [ln for ln in dis.splitlines()
             if re.search(r"\t(syscall|sysenter|int\s+\$0x80)\b", ln)]
    check(not calls, "no system call instruction in its text (%s)" %
          calls[:3])


def elf(data):
    """(phoff, phnum, [(type, flags, off, vaddr, filesz, memsz)])"""
    phoff, = struct.unpack_from("<Q", data, 32)
    phent, phnum = struct.unpack_from("<HH", data, 54)
    phs = []
    for i in range(phnum):
        t, f, off, va, pa, fs, ms, al = struct.unpack_from(
            "<IIQQQQQQ", data, phoff + i * phent)
        phs.append((t, f, off, va, fs, ms))
    return phoff, phent, phs


def va2off(phs, va):
    for t, f, off, v, fs, ms in phs:
        if t == 1 and v <= va < v + fs:
            return off + va - v
    return None


def spoil_reloc(data):
    """The first relocation's target moved to the start of the text."""
    _, _, phs = elf(data)
    dyn = [p for p in phs if p[0] == 2][0]
    at = dyn[2]
    rela = None
    while at < dyn[2] + dyn[4]:
        tag, val = struct.unpack_from("<qQ", data, at)
        if tag == 7:            # DT_RELA
            rela = val
        at += 16
    off = va2off(phs, rela)
    text = [p for p in phs if p[0] == 1 and p[1] & 1][0]
    struct.pack_into("<Q", data, off, text[3] + 0x100)
    return data


def spoil_dynamic(data):
    """PT_DYNAMIC's address past every segment."""
    phoff, phent, phs = elf(data)
    for i, p in enumerate(phs):
        if p[0] == 2:
            struct.pack_into("<Q", data, phoff + i * phent + 16,
                             0x40000000)
    return data


def spoil_wx(data):
    """The writable segment made executable too."""
    phoff, phent, phs = elf(data)
    for i, p in enumerate(phs):
        if p[0] == 1 and p[1] & 2:
            struct.pack_into("<I", data, phoff + i * phent + 4, 7)
    return data


def spoil_robss(data):
    """The text segment given memory past its file's part."""
    phoff, phent, phs = elf(data)
    for i, p in enumerate(phs):
        if p[0] == 1 and p[1] & 1:
            struct.pack_into("<Q", data, phoff + i * phent + 40,
                             p[5] + 0x100)
    return data


def run(work, env, dtrun, lib, prog):
    e = dict(env, USERDT_PRELOAD=lib, USERDT_PLAN_CACHE="0",
             USERDT_REWRITE="debug")
    return subprocess.run([dtrun, "-L", prog], env=e, capture_output=True,
                          text=True, timeout=120)


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    dtd, dtrun, lib, mod = sys.argv[1:]
    as_built(mod)
    work = tempfile.mkdtemp(prefix="udt-csmod.")
    d, ok = start_dtd(dtd, work)
    env = dict(os.environ, DT_DEVICE=work + "/dt",
               USERDT_SOCKET=work + "/ingest.sock",
               XDG_CACHE_HOME=work + "/cache")
    env.pop("LD_PRELOAD", None)
    good = open(mod, "rb").read()
    cases = (("as built", lambda b: b),
             ("missing", None),
             ("cut short", lambda b: b[:len(b) // 3]),
             ("a relocation aimed at its text", spoil_reloc),
             ("its dynamic section outside its segments", spoil_dynamic),
             ("a segment writable and executable", spoil_wx),
             ("a read-only segment with memory past its file", spoil_robss))
    try:
        if not check(ok, "dtd ready"):
            return done()
        for what, spoil in cases:
            cdir = tempfile.mkdtemp(dir=work)
            clib = os.path.join(cdir, os.path.basename(lib))
            shutil.copy(lib, clib)
            if spoil is not None:
                with open(os.path.join(cdir, NAME), "wb") as f:
                    f.write(spoil(bytearray(good)))
            r = run(work, env, dtrun, clib, "/bin/true")
            m = re.search(r"(\d+) rewritten, \d+ trapped, (\d+) left to "
                          r"dispatch", r.stderr)
            if what == "as built":
                check(r.returncode == 0 and m is not None and
                      int(m.group(1)) > 0,
                      "%s: the sites rewritten (%s)" %
                      (what, m.group(0) if m else r.stderr[-300:]))
                continue
            check(r.returncode == 0 and "no disassembler" in r.stderr and
                  m is not None and int(m.group(1)) == 0 and
                  int(m.group(2)) > 0,
                  "%s: refused, the program ran, its sites dispatched "
                  "(rc %d: %s)" % (what, r.returncode, r.stderr.strip()[-400:]))
    finally:
        stop_dtd(d)
        shutil.rmtree(work, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
