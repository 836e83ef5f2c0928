/*
 * Copyright (c) 2026 The userdt authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * The rewrite-plan cache (issue 20): what the constructor's pass of the
 * rewriter concluded about each loaded object (its windows, trapped
 * sites, the loader's r_brk hook, what it left to dispatch), kept in a
 * file per user so that later execs apply it instead of decoding libc
 * with Capstone, 40 ms of CPU an exec.
 *
 * Trust: a plan only says where the decoder proved it safe to patch.  It
 * is used for an object only when the object's identity matches (its
 * build-id, and its file's size, mtime, ctime, inode and device, or for
 * a small object the hash of its read-only bytes in memory), the file
 * was written by this very build of the library (its own build-id), is
 * whole (a checksum), and is the user's own (a regular file, owned by
 * the effective user, written by nobody else, one link, not a symlink);
 * then every offset must lie inside its segment, every call number be
 * one the decoder could have given, and every byte it would replace,
 * and every byte copied into a trampoline, must equal the bytes the
 * plan recorded, or nothing of the plan is used for that object: it is
 * decoded as without a cache.  Windows must be sorted and apart, traps
 * sorted and apart and each off every window (none in a window's bytes
 * or the byte before: an int3 inside a jump).  The windows are not
 * copied: they are read from the plan's mapping again as they are
 * committed, and checked again as read (udt_rw_plan_win()), each
 * trampoline and its jump made from one read, each window taken only
 * past the end of the last and off the traps taken (udt_rw_commit());
 * the counts and offsets that bound those reads are the checking pass's
 * copies (udt_plan_fit()), never read again.  So a plan file whose
 * bytes change in place meanwhile (its length unchanged) still never
 * sends a read past the plan, a patch or a copy outside the segment or
 * over other bytes, nor two patches over the same bytes: a window or a
 * trap that no longer fits is left to dispatch.  A plan file cut short
 * in place is another matter: the mapping's pages past its new end
 * fault (SIGBUS) as these reads touch them, and the program dies in
 * the constructor.  That is accepted, not handled: the library only
 * ever renames a new file over the old (udt_plan_write()), so only the
 * user, or someone who can write the user's files and so could forge a
 * plan anyway, can cut it; doing so kills the starts reading it, and
 * can make no patch.  (Copying the plan out of the mapping first
 * would cost a fault a page, and a handler for SIGBUS in the
 * constructor is more code to prove than the risk is worth.)
 *
 * What that guarantees: no plan makes the library read or write outside
 * the object's executable segments, or patch anything but a `syscall`
 * and the bytes around it the plan recorded.  It does not re-prove the
 * rest of the decoder's proof, which rests on bytes outside the windows
 * too (udt_rw_far()'s rel32 jumps and calls anywhere in the object that
 * land in a window, the unwind table's function starts).  Those are
 * covered only by the key: a small object's hash covers them; a large
 * one's file changed through the file system changes its ctime, which
 * cannot be set back, so its plan no longer matches.  A file changed
 * without its ctime changing (written through its block device, the
 * clock set back), or a plan forged by someone who can write the user's
 * own files, may still be applied, and then a patch may be one the
 * decoder would not make for those bytes.  Set-id programs neither read
 * nor write the cache.
 *
 * One file holds the plans of the objects of a program's start, named
 * by their build-ids and the library's: reading it is three system calls
 * whatever the number of objects (four where the launcher did not judge
 * the cache's mount, udt_cachefs.h), and a large object is stat'd once.
 * Objects loaded later by dlopen() are decoded as before.
 *
 * Concurrency: the constructor's pass only [w]; raw system calls, errno
 * untouched, every descriptor closed before it returns.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include <userdt/udt_cachefs.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw.h"
#include "udt_rw_obj.h"
#include "udt_rw_plan.h"
#include "udt_cat.h"

/* Counts for USERDT_PLAN_CACHE=debug and the tests. */
size_t	udt_rw_plan_used, udt_rw_plan_refused;

/* The object's NT_GNU_BUILD_ID, at most 32 bytes: its length, or 0. */
static uint32_t
udt_plan_bid(const struct dl_phdr_info *info, uint8_t *bid)
{
	const ElfW(Phdr) *ph;
	const uint8_t *p, *end;
	const ElfW(Nhdr) *nh;
	size_t sz;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(*nh)) {
			nh = (const ElfW(Nhdr) *)(const void *)p;
			sz = sizeof(*nh) + ((nh->n_namesz + 3) & ~3U) +
			    ((nh->n_descsz + 3) & ~3U);
			if (sz > (size_t)(end - p))
				break;
			if (nh->n_type == NT_GNU_BUILD_ID &&
			    nh->n_namesz == 4 &&
			    memcmp(p + sizeof(*nh), "GNU", 4) == 0 &&
			    nh->n_descsz > 0 && nh->n_descsz <= 32) {
				memcpy(bid, p + sizeof(*nh) + 4, nh->n_descsz);
				return nh->n_descsz;
			}
			p += sz;
		}
	}
	return 0;
}

/* Whether the object holds this library's code. */
static int
udt_plan_self(const struct dl_phdr_info *info)
{
	uintptr_t self = (uintptr_t)udt_plan_self, lo;
	const ElfW(Phdr) *ph;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && self >= lo && self < lo +
		    ph->p_memsz)
			return 1;
	}
	return 0;
}

/* Bytes of the object's read-only segments: what the decoder reads. */
static size_t
udt_plan_rosize(const struct dl_phdr_info *info, uint64_t *hash)
{
	const ElfW(Phdr) *ph;
	size_t n = 0;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		n += ph->p_memsz;
		if (hash != NULL)
			*hash = udt_plan_hash(*hash, (const void *)
			    (info->dlpi_addr + ph->p_vaddr), ph->p_filesz);
	}
	return n;
}

/*
 * The identity of the file an object's text was mapped from as dtd
 * stat'd it at the handshake (udt_tab.tb_xfiles): the very file mapped,
 * where the path's stat could find another renamed over it.  0, or -1
 * when dtd did not say (the library then stats the path).  The
 * constructor's pass: nothing was mapped or unmapped since dtd looked.
 */
static int
udt_plan_xfile(const struct dl_phdr_info *info, struct udt_plan_key *k)
{
	const struct udt_tab *tab = __atomic_load_n(&udt_tab, __ATOMIC_ACQUIRE);
	const struct udt_xfile *xf;
	uintptr_t at = 0;
	uint32_t i, n;
	size_t h;

	for (h = 0; h < info->dlpi_phnum; h++)
		if (info->dlpi_phdr[h].p_type == PT_LOAD &&
		    (info->dlpi_phdr[h].p_flags & PF_X)) {
			at = info->dlpi_addr + info->dlpi_phdr[h].p_vaddr;
			break;
		}
	if (at == 0 || tab == NULL || !udt_proc_status_dtd() ||
	    (n = tab->tb_xfiles_n) > UDT_XFILES_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		xf = &tab->tb_xfiles[i];
		if (xf->xf_lo > at || at >= xf->xf_hi)
			continue;
		k->pk_size = xf->xf_size;
		k->pk_mtime = (uint64_t)xf->xf_mtime;
		k->pk_mtimens = (uint64_t)xf->xf_mtimens;
		k->pk_ino = xf->xf_ino;
		k->pk_dev = xf->xf_dev;
		k->pk_ctime = (uint64_t)xf->xf_ctime;
		k->pk_ctimens = (uint64_t)xf->xf_ctimens;
		return 0;
	}
	return -1;
}

/*
 * The object's key into udt_plan.pl_key: 0, or -1 when it has none (no
 * build-id, no file to stat, this library).  A large object is named by
 * its file (dtd's stat of it, else one of ours), a small one by its
 * bytes (the vdso has no file; hashing a program's 20 kB costs less than
 * a system call).
 */
static int
udt_plan_keyof(const struct dl_phdr_info *info, int first)
{
	struct udt_plan_key *k = &udt_plan.pl_key;
	const char *path = info->dlpi_name;
	struct stat st;

	memset(k, 0, sizeof(*k));
	udt_plan.pl_keyok = 0;
	if (udt_plan_self(info) ||
	    (k->pk_bidlen = udt_plan_bid(info, k->pk_bid)) == 0)
		return -1;
	if (udt_plan_rosize(info, NULL) <= UDT_PLAN_SMALL) {
		k->pk_kind = UDT_PLAN_HASH;
		k->pk_hash = 0x6a09e667f3bcc908ULL;
		k->pk_size = udt_plan_rosize(info, &k->pk_hash);
	} else if (udt_plan_xfile(info, k) == 0) {
		k->pk_kind = UDT_PLAN_STAT;
	} else {
		if (path == NULL || *path == '\0')
			path = first ? "/proc/self/exe" : NULL;
		if (path == NULL || *path != '/' || udt_sys4(SYS_newfstatat,
		    AT_FDCWD, path, &st, 0) != 0 || !S_ISREG(st.st_mode))
			return -1;
		k->pk_kind = UDT_PLAN_STAT;
		k->pk_size = (uint64_t)st.st_size;
		k->pk_mtime = (uint64_t)st.st_mtim.tv_sec;
		k->pk_mtimens = (uint64_t)st.st_mtim.tv_nsec;
		k->pk_ino = (uint64_t)st.st_ino;
		k->pk_dev = (uint64_t)st.st_dev;
		k->pk_ctime = (uint64_t)st.st_ctim.tv_sec;
		k->pk_ctimens = (uint64_t)st.st_ctim.tv_nsec;
	}
	udt_plan.pl_keyok = 1;
	return 0;
}

/* The file's name: the build-ids of this start's objects, ours first. */
static int
udt_plan_names(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *h = arg;
	uint8_t bid[32];
	uint32_t n;

	(void)size;
	if (!udt_plan_self(info) && (n = udt_plan_bid(info, bid)) > 0)
		*h = udt_plan_hash(*h, bid, n);
	return 0;
}

/*
 * Before the constructor's pass: whether the cache is on, where it is,
 * and the plan of this start's objects if there is one.
 */
void
udt_rw_plan_open(struct udt_rw_obj *o)
{
	const char *env = getenv(UDT_RW_PLAN_ENV), *xdg, *home;
	struct dl_phdr_info me;
	char path[600];
	uint64_t h = 0x243f6a8885a308d3ULL;
	char hex[17];
	size_t n;
	int i;

	memset(&udt_plan, 0, sizeof(udt_plan));
	o->ro_plan = 0;
	if ((env != NULL && strcmp(env, "0") == 0) || getauxval(AT_SECURE))
		return;
	udt_plan.pl_debug = env != NULL && strcmp(env, "debug") == 0;
	udt_plan.pl_euid = (uint32_t)getauxval(AT_EUID);
	/* A number, all of it, or no word (set-id execs return above). */
	if ((env = getenv(UDT_CACHEFS_ENV)) != NULL) {
		const char *c;
		uint64_t id = 0;

		for (c = env; *c >= '0' && *c <= '9' &&
		    id < UINT64_MAX / 10 - 9; c++)
			id = id * 10 + (uint64_t)(*c - '0');
		udt_plan.pl_cachefs = *c == '\0' ? id : 0;
	}
	/* This build's own build-id: a new library never reads old plans. */
	memset(&me, 0, sizeof(me));
	{
		extern const ElfW(Ehdr) __ehdr_start
		    __attribute__((visibility("hidden")));
		const ElfW(Ehdr) *eh = &__ehdr_start;

		me.dlpi_addr = (uintptr_t)eh;
		me.dlpi_phdr = (const ElfW(Phdr) *)(const void *)
		    ((const uint8_t *)eh + eh->e_phoff);
		me.dlpi_phnum = eh->e_phnum;
		/* A shared object's first segment is at vaddr 0. */
		for (i = 0; i < me.dlpi_phnum; i++)
			if (me.dlpi_phdr[i].p_type == PT_LOAD) {
				me.dlpi_addr -= me.dlpi_phdr[i].p_vaddr &
				    ~(uintptr_t)4095;
				break;
			}
	}
	if ((udt_plan.pl_selflen = udt_plan_bid(&me, udt_plan.pl_self)) == 0)
		return;
	xdg = getenv("XDG_CACHE_HOME");
	home = getenv("HOME");
	n = 0;
	if (xdg != NULL && *xdg == '/') {
		udt_plan.pl_xdg = 1;
		n = udt_cat(udt_plan.pl_base, 0, sizeof(udt_plan.pl_base),
		    xdg);
		n = udt_cat(udt_plan.pl_dir, 0, sizeof(udt_plan.pl_dir),
		    xdg);
	} else if (home != NULL && *home == '/' && home[1] != '\0') {
		/* HOME=/ (a daemon's): no /.cache made at the root. */
		n = udt_cat(udt_plan.pl_base, 0, sizeof(udt_plan.pl_base),
		    home);
		n = udt_cat(udt_plan.pl_dir, 0, sizeof(udt_plan.pl_dir),
		    home);
		n = udt_cat(udt_plan.pl_dir, n, sizeof(udt_plan.pl_dir),
		    "/.cache");
	} else
		return;
	n = udt_cat(udt_plan.pl_dir, n, sizeof(udt_plan.pl_dir),
	    "/userdt/plans");
	if (n == (size_t)-1 || n == 0)
		return;
	h = udt_plan_hash(h ^ udt_plan_kind(), udt_plan.pl_self,
	    udt_plan.pl_selflen);
	dl_iterate_phdr(udt_plan_names, &h);
	for (i = 0; i < 16; i++)
		hex[i] = "0123456789abcdef"[(h >> (60 - 4 * i)) & 15];
	hex[16] = '\0';
	n = udt_cat(udt_plan.pl_name, 0, sizeof(udt_plan.pl_name), hex);
	n = udt_cat(udt_plan.pl_name, n, sizeof(udt_plan.pl_name),
	    ".plan");
	n = udt_cat(path, 0, sizeof(path), udt_plan.pl_dir);
	n = udt_cat(path, n, sizeof(path), "/");
	n = udt_cat(path, n, sizeof(path), udt_plan.pl_name);
	if (n == (size_t)-1)
		return;
	udt_plan.pl_outlen = sizeof(struct udt_plan_hdr);
	o->ro_plan = 1;
	udt_plan_read(path);
}

/* The segments of info that hold code, in order: the n-th's index. */
static int
udt_plan_xseg(const struct dl_phdr_info *info, uint32_t n)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
		    (info->dlpi_phdr[i].p_flags & PF_X) && n-- == 0)
			return i;
	return -1;
}

static int
udt_plan_brkseg(uintptr_t lo, uintptr_t hi, const struct udt_rw_obj *o)
{
	return o->ro_want == NULL && _r_debug.r_brk >= lo &&
	    _r_debug.r_brk + 5 <= hi;
}

/*
 * Whether window pw's call number is one the decoder could have given
 * it: the decoder takes the immediate of a mov to %eax/%rax in the
 * window before the call, and traps rather than patches rt_sigreturn
 * (it must run on the program's signal frame).  The number is pushed as
 * the return probe's of a call made in place, so a plan may not invent
 * one: it is -1 (unknown, the slow path's) or the non-negative
 * immediate of such a mov among the window's recorded bytes, which the
 * caller has checked against memory.  The bytes are scanned, not
 * decoded: a mov's bytes inside another instruction pass too (a forged
 * plan could then misname that return, nothing more), a mov the scan
 * does not know costs a decode, and rt_sigreturn's anywhere refuses.
 */
static int
udt_plan_nrok(const struct udt_plan_win *pw)
{
	const uint8_t *b = pw->pw_b;
	size_t n = pw->pw_sys - pw->pw_start, i, op;
	int32_t imm;
	int found = 0;

	for (i = 0; i < n; i++) {
		/* mov $imm32,%eax: b8; c7 c0; 48 c7 c0 (%rax). */
		if (b[i] == 0xb8)
			op = 1;
		else if (b[i] == 0xc7 && i + 1 < n && b[i + 1] == 0xc0)
			op = 2;
		else
			continue;
		if (n - i < op + 4)
			continue;
		memcpy(&imm, b + i + op, 4);
		if (imm == SYS_rt_sigreturn)
			return 0;
		if (imm == pw->pw_nr)
			found = 1;
	}
	if (pw->pw_nr == -1)
		return 1;
	return found && pw->pw_nr >= 0 && pw->pw_nr != SYS_rt_sigreturn;
}

/*
 * Window pw of a segment at lo, memsz bytes, against memory: NULL, or
 * why it does not fit.
 */
static const char *
udt_plan_win_check(const struct udt_plan_win *pw, uintptr_t lo, size_t memsz)
{
	/*
	 * No sums of the plan's numbers: a forged offset near 2^64 would
	 * wrap one past these checks and send the reads below, and the
	 * trampoline's copy, anywhere.
	 */
	if (pw->pw_end > memsz || pw->pw_start > pw->pw_end ||
	    pw->pw_end - pw->pw_start < 5 ||
	    pw->pw_end - pw->pw_start > UDT_PLAN_WINB ||
	    pw->pw_sys < pw->pw_start || pw->pw_sys > pw->pw_end - 2)
		return "malformed window";
	if (!udt_plan_nrok(pw))
		return "a window's call number unproved";
	if (memcmp((const void *)(lo + pw->pw_start), pw->pw_b,
	    pw->pw_end - pw->pw_start) != 0 ||
	    memcmp((const void *)(lo + pw->pw_sys), "\x0f\x05", 2) != 0)
		return "the bytes of a window differ";
	return NULL;
}

/*
 * Window i of the segment being committed, read from the plan where
 * udt_plan_fit() left it (ro_wplan) into w, and checked again as it is
 * read, as udt_plan_fit() checked it, since the plan is a mapping of
 * its file: 0, or -1 if it no longer fits (then it is neither patched
 * nor trapped).  Its order among the others, and against the traps, is
 * udt_rw_commit()'s to check.
 */
int
udt_rw_plan_win(const struct udt_rw_obj *o, size_t i, struct udt_rw_win *w)
{
	struct udt_plan_win pw;
	size_t at = (size_t)(o->ro_wplan - udt_plan_in);

	/*
	 * ro_nwin is the checking pass's count, bounded so (udt_plan_fit());
	 * bounded again here, where a read past it would fault.
	 */
	if (i >= UDT_RW_MAXSITE || at > udt_plan.pl_inlen ||
	    (udt_plan.pl_inlen - at) / sizeof(pw) <= i)
		return -1;
	memcpy(&pw, o->ro_wplan + i * sizeof(pw), sizeof(pw));
	if (udt_plan_win_check(&pw, o->ro_lo, o->ro_wmemsz) != NULL)
		return -1;
	memset(w, 0, sizeof(*w));
	w->rw_start = o->ro_lo + pw.pw_start;
	w->rw_sys = o->ro_lo + pw.pw_sys;
	w->rw_end = o->ro_lo + pw.pw_end;
	w->rw_nr = (long)pw.pw_nr;
	w->rw_bad = pw.pw_bad != 0;
	return 0;
}

/*
 * Whether a trap at offset at keeps off the windows of the segment
 * whose first is at udt_plan_in + w, nwin of them, sorted and apart
 * (checked before): NULL, or why not.  The traps come in order, so *pn,
 * the first window that could still meet one, only moves on.  A
 * window's bytes meet the trap's two when at + 2 > pw_start and at <
 * pw_end; at + 1 does not wrap (at is inside the segment).
 */
static const char *
udt_plan_trap_apart(size_t w, size_t nwin, size_t *pn, uint64_t at)
{
	struct udt_plan_win pw;

	for (; *pn < nwin; ++*pn) {
		memcpy(&pw, udt_plan_in + w + *pn * sizeof(pw), sizeof(pw));
		if (pw.pw_end > at)
			return at + 1 >= pw.pw_start ? "malformed trap" : NULL;
	}
	return NULL;
}

/*
 * What the checking pass of udt_plan_fit() read of an entry: the
 * applying pass takes its counts from here, not from the plan again.
 * The plan is a mapping of its file: counts read again there could
 * have changed since they were checked, and would then walk the
 * applying pass's reads past the entry, or the mapping, and its
 * windows past the scratch's UDT_RW_MAXSITE.
 */
struct udt_plan_seen {
	struct udt_plan_obj	po;
	struct udt_plan_seg	ps[UDT_PLAN_MAXSEG];
};

/*
 * Check entry at (at udt_plan_in + at) against the object in memory,
 * every byte it would have written or copied, and keep what was read
 * of it in *sn; then, if apply, put its sites where the decoder would
 * have and commit them, from *sn.  Returns 0, or why it does not fit.
 */
static const char *
udt_plan_fit(struct udt_rw_obj *o, struct dl_phdr_info *info, size_t at,
    struct udt_plan_seen *sn, int apply)
{
	struct udt_plan_obj *po = &sn->po;
	struct udt_plan_seg *ps;
	struct udt_plan_win pw;
	struct udt_plan_trap pt;
	const ElfW(Phdr) *ph;
	uintptr_t lo, hi, prev;
	size_t s, k, p, w, end, pn;
	const char *why;
	int i;

	if (!apply) {
		/* Bounded again as read: udt_plan_valid() read it before. */
		if (udt_plan.pl_inlen - at < sizeof(*po))
			return "malformed";
		memcpy(po, udt_plan_in + at, sizeof(*po));
		if (po->po_len < sizeof(*po) || po->po_len >
		    udt_plan.pl_inlen - at || po->po_nseg > UDT_PLAN_MAXSEG ||
		    memcmp(&po->po_key, &udt_plan.pl_key, sizeof(po->po_key))
		    != 0)
			return "malformed";
	}
	p = at + sizeof(*po);
	end = at + po->po_len;
	if (po->po_unknown) {
		if (po->po_nseg != 0)
			return "malformed";
		if (apply)
			udt_rw_nleft += po->po_dnleft;
		return NULL;
	}
	if (udt_plan_xseg(info, po->po_nseg) >= 0)
		return "more segments than planned";
	for (s = 0; s < po->po_nseg; s++) {
		ps = &sn->ps[s];
		if (!apply) {
			if (end - p < sizeof(*ps))
				return "malformed";
			memcpy(ps, udt_plan_in + p, sizeof(*ps));
			/* Each count at most UDT_RW_MAXSITE: no wrap. */
			if (ps->ps_nwin > UDT_RW_MAXSITE ||
			    ps->ps_ntrap > UDT_RW_MAXSITE ||
			    end - p - sizeof(*ps) < ps->ps_nwin * sizeof(pw) +
			    ps->ps_ntrap * sizeof(pt))
				return "malformed";
		}
		p += sizeof(*ps);
		if ((i = udt_plan_xseg(info, (uint32_t)s)) < 0)
			return "fewer segments than planned";
		ph = &info->dlpi_phdr[i];
		lo = info->dlpi_addr + ph->p_vaddr;
		hi = lo + ph->p_memsz;
		if (ps->ps_lo != ph->p_vaddr || ps->ps_hi != ph->p_vaddr +
		    ph->p_memsz)
			return "another segment";
		if (!!(ps->ps_flags & UDT_PLAN_BRKSEG) !=
		    udt_plan_brkseg(lo, hi, o))
			return "r_brk elsewhere";
		if (!apply && (ps->ps_flags & UDT_PLAN_BRKHOOK) &&
		    (!(ps->ps_flags & UDT_PLAN_BRKSEG) ||
		    info->dlpi_addr + ps->ps_brk != _r_debug.r_brk ||
		    memcmp((const void *)_r_debug.r_brk, ps->ps_brkb, 5) != 0))
			return "the bytes of r_brk differ";
		/*
		 * The windows: checked here first, committed from the plan,
		 * each read and checked again there instead of copied
		 * (udt_rw_commit()).
		 */
		w = p;
		prev = 0;
		for (k = 0; !apply && k < ps->ps_nwin; k++, p += sizeof(pw)) {
			memcpy(&pw, udt_plan_in + p, sizeof(pw));
			if ((why = udt_plan_win_check(&pw, lo, ph->p_memsz)) !=
			    NULL)
				return why;
			/* Sorted, apart: as the decoder leaves them. */
			if (pw.pw_start < prev)
				return "malformed window";
			prev = pw.pw_end;
		}
		p = w + ps->ps_nwin * sizeof(pw);
		if (apply) {
			o->ro_lo = lo;
			o->ro_hi = hi;
			(void)udt_rw_segment(o, info, i);
			o->ro_ntrap = 0;
		}
		/*
		 * The traps: sorted and apart, and apart from every window
		 * (a trap's two bytes in a window's [pw_start-1, pw_end)
		 * would be patched twice, an int3 inside a jump), checked
		 * against the windows as this pass read them, walking both
		 * in order.  Applying, only the order is checked again:
		 * udt_rw_commit() keeps the windows, read again there, off
		 * the traps taken (udt_rw_win_next()).
		 */
		prev = 0;
		pn = 0;
		for (k = 0; k < ps->ps_ntrap; k++, p += sizeof(pt)) {
			memcpy(&pt, udt_plan_in + p, sizeof(pt));
			why = NULL;
			if (ph->p_memsz < 2 || pt.pt_at > ph->p_memsz - 2 ||
			    pt.pt_at < prev)
				why = "malformed trap";
			else if (!apply && (why = udt_plan_trap_apart(w,
			    ps->ps_nwin, &pn, pt.pt_at)) != NULL)
				;
			else if (memcmp((const void *)(lo + pt.pt_at), pt.pt_b,
			    2) != 0 || memcmp((const void *)(lo + pt.pt_at),
			    "\x0f\x05", 2) != 0)
				why = "the bytes of a trapped site differ";
			if (!apply && why != NULL)
				return why;
			/*
			 * Applying, a site that no longer fits (the plan
			 * changed since) is left to dispatch: some of the
			 * object's sites are staged already.
			 */
			if (apply && (why != NULL ||
			    udt_rw_trap_room(o) != 0))
				udt_rw_nleft++;
			else if (apply)
				o->ro_trap[o->ro_ntrap++] = lo + pt.pt_at;
			/* The next at or past its end (no wrap: in range). */
			if (pt.pt_at >= prev && ph->p_memsz >= 2 &&
			    pt.pt_at <= ph->p_memsz - 2)
				prev = pt.pt_at + 2;
		}
		if (!apply)
			continue;
		/*
		 * Set only past every return: nothing leaves them to the
		 * next object.  Before the image's region is sized by them.
		 */
		o->ro_wplan = udt_plan_in + w;
		o->ro_wmemsz = ph->p_memsz;
		o->ro_nwin = ps->ps_nwin;
		udt_rw_image_seg(o, info, i);
		udt_rw_nsys += ps->ps_dnsys;
		udt_rw_nwin += ps->ps_dnwin;
		udt_rw_nleft += ps->ps_dnleft;
		if (ps->ps_flags & UDT_PLAN_BRKHOOK)
			(void)udt_rw_hook_stage(o, _r_debug.r_brk);
		udt_rw_nleft += udt_rw_commit(o);
		o->ro_wplan = NULL;
		o->ro_nwin = 0;
	}
	return NULL;
}

/*
 * An object of the constructor's pass: its plan applied (0), or -1, to
 * be decoded (udt_rw_plan_begin() then says whether to record it).
 */
int
udt_rw_plan_apply(struct udt_rw_obj *o, struct dl_phdr_info *info,
    int first)
{
	struct udt_plan_hdr h;
	struct udt_plan_obj po;
	struct udt_plan_seen sn;
	const char *why = "no plan";
	size_t at, k;

	udt_plan.pl_rec = 0;
	if (!o->ro_plan || udt_plan_keyof(info, first) != 0)
		return -1;
	if (udt_plan.pl_inlen == 0)
		return -1;
	memcpy(&h, udt_plan_in, sizeof(h));
	/*
	 * Bounded again as read (udt_plan_valid() read it before): the
	 * plan is a mapping of its file.
	 */
	for (at = sizeof(h), k = 0; k < h.ph_nobj && k < UDT_PLAN_MAXOBJ;
	    k++, at += po.po_len) {
		why = "malformed";
		if (udt_plan.pl_inlen - at < sizeof(po))
			break;
		memcpy(&po, udt_plan_in + at, sizeof(po));
		if (po.po_len < sizeof(po) || po.po_len >
		    udt_plan.pl_inlen - at)
			break;
		why = "no plan";
		if (memcmp(&po.po_key, &udt_plan.pl_key, sizeof(po.po_key))
		    != 0)
			continue;
		/*
		 * Everything checked before anything is staged, and staged
		 * from what was checked (sn).
		 */
		if ((why = udt_plan_fit(o, info, at, &sn, 0)) != NULL)
			break;
		(void)udt_plan_fit(o, info, at, &sn, 1);
		po = sn.po;
		udt_rw_plan_used++;
		udt_plan_say(info->dlpi_name[0] ? info->dlpi_name :
		    "(the program)", ": used", NULL);
		if (udt_plan.pl_nused < UDT_PLAN_MAXOBJ) {
			udt_plan.pl_used[udt_plan.pl_nused][0] = (uint32_t)at;
			udt_plan.pl_used[udt_plan.pl_nused++][1] = po.po_len;
		}
		return 0;
	}
	if (k < h.ph_nobj) {
		udt_rw_plan_refused++;
		udt_plan_say(info->dlpi_name[0] ? info->dlpi_name :
		    "(the program)", ": refused: ", why);
	} else
		/* Its key matched none: a new object, or its file changed. */
		udt_plan_say(info->dlpi_name[0] ? info->dlpi_name :
		    "(the program)", ": ", why);
	return -1;
}
