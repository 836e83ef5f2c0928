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
 * The rewrite-plan cache's files (udt_rw_plan.h): read one whole and
 * checked, the user's own and nobody else's; write one atomically.  Raw
 * system calls, errno untouched, every descriptor closed.
 *
 * Locks used to protect the globals below:
 *	[w]	the constructor's pass of the rewriter
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/platform/x86.h>

#include <userdt/udt_cachefs.h>

#include "udt_preload.h"
#include "udt_sys.h"
#include "udt_rw_obj.h"
#include "udt_rw_plan.h"
#include "udt_cat.h"

/* In the bss: a page is the process's only once it is touched. */
struct udt_plan_state udt_plan;				/* [w] */
/*
 * The plan read: the file mapped privately, not read into the bss.  A
 * read copied its 40-odd KB into as many fresh pages, a fault each; a
 * mapping takes them from the page cache, the kernel's fault-around
 * mapping up to 16 at a fault, and shares them between processes.  It
 * is mapped read-only: the check hashes its sum's field as 0 from a
 * copy, where writing the field cost a private copy of the page.  It
 * stays mapped: unmapping is a call more at every start.  A writer
 * renames a new file over the old (udt_plan_write()), never writes the
 * one mapped; one who truncates it could already run code as the user
 * (doc/threat-model.md).  On a network or FUSE file system, where the
 * file may go from under a mapping without anyone truncating it, it is
 * read into memory of its own.  NULL until read.  [w]
 */
uint8_t	*udt_plan_in;
UDT_LBSS uint8_t	udt_plan_out[UDT_PLAN_MAX] __attribute__((aligned(64)));	/* [w] */

void
udt_rw_cache_say(const char *what, const char *a, const char *b,
    const char *c)
{
	char buf[700];
	size_t n = 0;
	const char *s[7] = { "userdt: ", what, program_invocation_short_name,
	    ": ", a, b, c };
	int i;

	for (i = 0; i < 7; i++)
		if (s[i] != NULL)
			while (*s[i] != '\0' && n < sizeof(buf) - 2)
				buf[n++] = *s[i]++;
	buf[n++] = '\n';
	udt_sys3(SYS_write, 2, buf, n);
}

int
udt_plan_tmpname(char *tmp, size_t max, const char *dir)
{
	uint64_t t;
	size_t at;
	int i;

	at = udt_cat(tmp, 0, max, dir);
	at = udt_cat(tmp, at, max, "/.tmp.");
	if (at == (size_t)-1 || at + 17 > max)
		return -1;
	t = __builtin_ia32_rdtsc();
	for (i = 0; i < 16; i++)
		tmp[at + (size_t)i] = "0123456789abcdef"[(t >> (60 - 4 * i)) &
		    15];
	tmp[at + 16] = '\0';
	return 0;
}

void
udt_plan_say(const char *a, const char *b, const char *c)
{
	if (udt_plan.pl_debug)
		udt_rw_cache_say("plan: ", a, b, c);
}

/*
 * Not a defence against an adversary (the file's owner is): a check.
 * Every start hashes the small objects' text (the loader's 190 kB among
 * them) and the plan it reads, about 270 kB, once a fifth of the
 * library's own time in a start.  Blocks of 32 bytes go to four lanes,
 * one per word, so that the lanes' steps overlap instead of waiting on
 * each other; the lanes are then folded into h; the tail a word, then a
 * byte, at a time.  No lanes for less than a block: the build-ids
 * chained into a plan's name (20 bytes) are hashed by the tail alone.
 *
 * A lane's step is the CPU's CRC-32C instruction where glibc found
 * SSE4.2 (one a cycle, against a multiply chain's five), else a
 * multiply and a shift; udt_plan_kind() says which, and the plan's
 * name carries it, so that a cache shared by two machines never reads
 * one kind's sums with the other.
 */
static int
udt_plan_crc(void)
{
	static int crc = -1;		/* [w] */

	if (crc < 0)
		crc = CPU_FEATURE_ACTIVE(SSE4_2) ? 1 : 0;
	return crc;
}

uint64_t
udt_plan_kind(void)
{
	return udt_plan_crc() ? 0x6372633332630000ULL : 0;
}

__attribute__((target("sse4.2"))) static void
udt_plan_lanes_crc(uint64_t l[4], const uint8_t *b, size_t n)
{
	uint64_t w;
	int i;

	for (; n >= 32; n -= 32, b += 32)
		for (i = 0; i < 4; i++) {
			memcpy(&w, b + 8 * i, 8);
			l[i] = __builtin_ia32_crc32di(l[i], w);
		}
}

static void
udt_plan_lanes_mul(uint64_t l[4], const uint8_t *b, size_t n)
{
	uint64_t w;
	int i;

	for (; n >= 32; n -= 32, b += 32)
		for (i = 0; i < 4; i++) {
			memcpy(&w, b + 8 * i, 8);
			l[i] = (l[i] ^ w) * 0x9e3779b97f4a7c15ULL;
			l[i] ^= l[i] >> 29;
		}
}

/*
 * The hash of a's na bytes (a multiple of a block) then p's n, as of
 * one buffer holding both: the plan's check hashes a copy of its first
 * block, the sum's field zeroed, and the rest in place, so that its
 * mapping's first page is read, not copied.
 */
static uint64_t
udt_plan_hash2(uint64_t h, const uint8_t *a, size_t na, const void *p,
    size_t n)
{
	const uint8_t *b = p;
	uint64_t l[4] = { h, h ^ 0x243f6a8885a308d3ULL,
	    h ^ 0x13198a2e03707344ULL, h ^ 0xa4093822299f31d0ULL }, w;
	size_t nb = n & ~(size_t)31;
	int i;

	if (na + nb > 0) {
		if (udt_plan_crc()) {
			/* 32-bit lanes: h itself goes into the fold. */
			udt_plan_lanes_crc(l, a, na);
			udt_plan_lanes_crc(l, b, nb);
			for (i = 0; i < 4; i++) {
				h = (h ^ l[i]) * 0x9e3779b97f4a7c15ULL;
				h ^= h >> 29;
			}
		} else {
			udt_plan_lanes_mul(l, a, na);
			udt_plan_lanes_mul(l, b, nb);
			h = l[0];
			for (i = 1; i < 4; i++) {
				h = (h ^ l[i]) * 0x9e3779b97f4a7c15ULL;
				h ^= h >> 29;
			}
		}
		b += nb;
		n -= nb;
	}
	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	for (; n > 0; n--, b++) {
		h = (h ^ *b) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h;
}

uint64_t
udt_plan_hash(uint64_t h, const void *p, size_t n)
{
	return udt_plan_hash2(h, NULL, 0, p, n);
}

/* The header, and every entry within bounds: the plan read is whole. */
static int
udt_plan_valid(size_t len)
{
	struct udt_plan_hdr h;
	struct udt_plan_obj po;
	struct udt_plan_seg ps;
	size_t at, k, s, need;
	uint64_t sum;
	uint8_t head[32];

	_Static_assert(offsetof(struct udt_plan_hdr, ph_sum) + 8 <=
	    sizeof(head) && sizeof(head) <= sizeof(h), "the sum's block");
	if (len < sizeof(h))
		return -1;
	memcpy(&h, udt_plan_in, sizeof(h));
	if (memcmp(h.ph_magic, "UDTPLAN", 8) != 0 ||
	    h.ph_version != UDT_PLAN_VERSION || h.ph_len != len ||
	    h.ph_selflen != udt_plan.pl_selflen ||
	    memcmp(h.ph_self, udt_plan.pl_self, sizeof(h.ph_self)) != 0)
		return -1;
	/* As written: its sum's field 0, in a copy of the first block. */
	memcpy(head, udt_plan_in, sizeof(head));
	memset(head + offsetof(struct udt_plan_hdr, ph_sum), 0, 8);
	sum = udt_plan_hash2(0, head, sizeof(head), udt_plan_in +
	    sizeof(head), len - sizeof(head));
	if (sum != h.ph_sum)
		return -1;
	for (at = sizeof(h), k = 0; k < h.ph_nobj; k++) {
		if (len - at < sizeof(po))
			return -1;
		memcpy(&po, udt_plan_in + at, sizeof(po));
		/*
		 * At least its own header: below, po_len - need must not
		 * wrap, nor the copies read past the file's end.
		 */
		if (po.po_len < sizeof(po) || po.po_len > len - at ||
		    po.po_nseg > UDT_PLAN_MAXSEG || k >= UDT_PLAN_MAXOBJ)
			return -1;
		need = sizeof(po);
		for (s = 0; s < po.po_nseg; s++) {
			if (po.po_len - need < sizeof(ps))
				return -1;
			memcpy(&ps, udt_plan_in + at + need, sizeof(ps));
			if (ps.ps_nwin > UDT_RW_MAXSITE ||
			    ps.ps_ntrap > UDT_RW_MAXSITE)
				return -1;
			/*
			 * need <= po_len <= UDT_PLAN_MAX here, and each
			 * count at most UDT_RW_MAXSITE: the sum is a few
			 * MB, no wrap.
			 */
			need += sizeof(ps) + ps.ps_nwin *
			    sizeof(struct udt_plan_win) + ps.ps_ntrap *
			    sizeof(struct udt_plan_trap);
			if (need > po.po_len)
				return -1;
		}
		if (need != po.po_len)
			return -1;
		at += po.po_len;
	}
	return at == len ? 0 : -1;
}

/* What udt_plan_read() checks of the plan file, by fstat or statx. */
struct udt_plan_look {
	uint64_t	pk_size;
	uint64_t	pk_dev;		/* as st_dev */
	uint64_t	pk_mnt;		/* the unique mount id, or 0 */
	uint32_t	pk_mode;
	uint32_t	pk_uid;
	uint32_t	pk_nlink;
};

/*
 * The fields of STATX_BASIC_STATS the plan's checks read: a file system
 * that fills fewer (FUSE's statx may) keeps its plan, one that does not
 * say these is not taken.
 */
#define UDT_PLAN_STATX	(STATX_TYPE | STATX_MODE | STATX_NLINK | \
	STATX_UID | STATX_SIZE)

/*
 * Look at the plan file fd: 0, or a negative errno.  A statx only where
 * the launcher named a judged mount (pl_cachefs): its mount id is then
 * worth having, the fstatfs it spares costs as much as the statx.
 * Otherwise, or where statx fails or answers short (a seccomp filter
 * that knows fstat but not statx: ENOSYS, EPERM or EACCES; a file
 * system that fills fewer fields), the fstat of before, so that such a
 * filter never costs the plan.
 */
static long
udt_plan_look(long fd, struct udt_plan_look *pk)
{
	struct statx sx;
	struct stat st;
	long rc;

	memset(pk, 0, sizeof(*pk));
	if (udt_plan.pl_cachefs != 0) {
		rc = udt_sys5(SYS_statx, fd, (long)"", AT_EMPTY_PATH,
		    UDT_PLAN_STATX | STATX_MNT_ID_UNIQUE, &sx);
		if (rc == 0 &&
		    (sx.stx_mask & UDT_PLAN_STATX) == UDT_PLAN_STATX) {
			pk->pk_size = sx.stx_size;
			/* As the kernel encodes st_dev (the images' fstat). */
			pk->pk_dev = (sx.stx_dev_minor & 0xff) |
			    ((uint64_t)sx.stx_dev_major << 8) |
			    ((uint64_t)(sx.stx_dev_minor & ~0xffU) << 12);
			if (sx.stx_mask & STATX_MNT_ID_UNIQUE)
				pk->pk_mnt = sx.stx_mnt_id;
			pk->pk_mode = sx.stx_mode;
			pk->pk_uid = sx.stx_uid;
			pk->pk_nlink = sx.stx_nlink;
			return 0;
		}
		/*
		 * Refused (ENOSYS, EPERM, EACCES: a filter's answer) or
		 * short of a field the checks read: the fstat, which
		 * says a bad descriptor as well as statx would.
		 */
	}
	if ((rc = udt_sys2(SYS_fstat, fd, &st)) != 0)
		return rc;
	pk->pk_size = st.st_size < 0 ? 0 : (uint64_t)st.st_size;
	pk->pk_dev = (uint64_t)st.st_dev;
	pk->pk_mode = st.st_mode;
	pk->pk_uid = st.st_uid;
	pk->pk_nlink = (uint32_t)st.st_nlink;
	return 0;
}

/* Map the plan file, the user's own, at udt_plan_in. */
void
udt_plan_read(const char *path)
{
	struct udt_plan_look pk;
	size_t got = 0, len;
	long fd, p, n;
	int remote;

	fd = udt_sys3(SYS_open, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NOCTTY | O_NONBLOCK, 0);
	if (fd < 0) {
		if (fd != -ENOENT)
			udt_plan_say("ignored ", path, ": cannot be opened "
			    "(a symlink?)");
		return;
	}
	if (udt_plan_look(fd, &pk) != 0 || !S_ISREG(pk.pk_mode) ||
	    pk.pk_uid != udt_plan.pl_euid || (pk.pk_mode & 022) != 0 ||
	    pk.pk_nlink != 1 || pk.pk_size < sizeof(struct udt_plan_hdr) ||
	    pk.pk_size > UDT_PLAN_MAX) {
		udt_plan_say("ignored ", path, ": not a regular file of "
		    "ours, or written by others");
		goto out;
	}
	len = (size_t)pk.pk_size;
	/*
	 * Where the file may go from under a mapping (a network or FUSE
	 * file system), read into memory of its own, as a plan was before.
	 */
	remote = udt_rw_fs_remote(fd, pk.pk_dev, pk.pk_mnt);
	if (remote)
		p = udt_sys6(SYS_mmap, 0, (long)len, PROT_READ |
		    PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	else
		p = udt_sys6(SYS_mmap, 0, (long)len, PROT_READ,
		    MAP_PRIVATE, fd, 0);
	if (udt_sys_failed(p)) {
		udt_plan_say("ignored ", path, ": cannot be mapped");
		goto out;
	}
	while (remote && got < len) {
		n = udt_sys3(SYS_read, fd, (uint8_t *)p + got,
		    len - got);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (remote && got != len) {
		udt_plan_say("ignored ", path, ": cannot be read");
		(void)udt_sys2(SYS_munmap, p, (long)len);
		goto out;
	}
	udt_plan_in = (uint8_t *)p;
	if (udt_plan_valid(len) != 0) {
		udt_plan_say("ignored ", path, ": malformed");
		(void)udt_sys2(SYS_munmap, p, (long)len);
		udt_plan_in = NULL;
		goto out;
	}
	udt_plan.pl_inlen = len;
out:
	/* With the handshake's, at the constructor's end, if it can be. */
	if (udt_close_defer((int)fd, (int)fd) != 0)
		udt_sys1(SYS_close, fd);
}

/* Whether path is a directory of ours that nobody else may write. */
static int
udt_plan_ourdir(const char *path)
{
	struct stat st;

	return udt_sys4(SYS_newfstatat, AT_FDCWD, path, &st,
	    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	    st.st_uid == udt_plan.pl_euid && (st.st_mode & 022) == 0;
}

/*
 * The directory path (under the cache's base): the user's, written by
 * nobody else.  Made where missing, each part past the base (HOME, or
 * XDG_CACHE_HOME, made too) mode 0700, only in a base of the user's
 * own: root's plans never land in a home it was lent.  0, or -1.
 */
int
udt_plan_mkdirs(const char *path)
{
	struct stat st;
	char dir[600], c;
	size_t n, at;

	if (udt_plan_ourdir(path))
		return 0;
	/* XDG_CACHE_HOME may be made; a missing HOME is not. */
	if (udt_plan.pl_xdg)
		(void)udt_sys2(SYS_mkdir, udt_plan.pl_base, 0700);
	if (udt_sys4(SYS_newfstatat, AT_FDCWD, udt_plan.pl_base, &st,
	    0) != 0 || st.st_uid != udt_plan.pl_euid) {
		udt_plan_say("not written: ", udt_plan.pl_base,
		    " is not the user's");
		return -1;
	}
	n = strlen(udt_plan.pl_base);
	if (strlen(path) >= sizeof(dir) || strncmp(path, udt_plan.pl_base, n)
	    != 0)
		return -1;
	memcpy(dir, path, strlen(path) + 1);
	for (at = n + 1; dir[at - 1] != '\0'; at++) {
		if (dir[at] != '/' && dir[at] != '\0')
			continue;
		c = dir[at];
		dir[at] = '\0';
		(void)udt_sys2(SYS_mkdir, dir, 0700);
		dir[at] = c;
	}
	if (!udt_plan_ourdir(path)) {
		udt_plan_say("not written: ", path,
		    " is not a directory of the user's alone");
		return -1;
	}
	return 0;
}

/*
 * The plan in udt_plan_out written to a new file renamed over the old,
 * so a reader sees one or the other whole.  Nothing happens where the
 * cache's directory is not the user's, or cannot be made: the next exec
 * decodes again.
 */
void
udt_plan_write(void)
{
	char tmp[600], path[600];
	size_t n, at;
	long fd, w;

	if (udt_plan_mkdirs(udt_plan.pl_dir) != 0)
		return;
	/* A name no other writer has: the time stamp counter's. */
	n = udt_cat(path, 0, sizeof(path), udt_plan.pl_dir);
	n = udt_cat(path, n, sizeof(path), "/");
	n = udt_cat(path, n, sizeof(path), udt_plan.pl_name);
	if (n == (size_t)-1 || udt_plan_tmpname(tmp, sizeof(tmp),
	    udt_plan.pl_dir) != 0)
		return;
	fd = udt_sys3(SYS_open, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0)
		return;
	for (at = 0; at < udt_plan.pl_outlen; at += (size_t)w) {
		w = udt_sys3(SYS_write, fd, udt_plan_out + at,
		    udt_plan.pl_outlen - at);
		if (w == -EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0)
			break;
	}
	udt_sys1(SYS_close, fd);
	if (at != udt_plan.pl_outlen ||
	    udt_sys2(SYS_rename, tmp, path) != 0) {
		(void)udt_sys1(SYS_unlink, tmp);
		return;
	}
	udt_plan_say("written ", path, NULL);
}
