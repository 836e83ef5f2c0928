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
 * The library's half of the launcher's handover (udt_lrec.h): the calls
 * the dynamic loader (and the constructors that ran before ours) made
 * before this library could see anything, which the launcher kept while
 * it traced the image with ptrace.  They are taken first thing in the
 * constructor, so that every call after that is the library's own or
 * the program's and none is seen twice, and recorded once the library
 * is attached, when the enable table says which are wanted.
 *
 * Everything here runs in the constructor, with one thread.
 */
#include <sys/mman.h>
#include <sys/prctl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "systab.h"
#include "udt_lrec.h"
#include "udt_preload.h"
#include "udt_sys.h"

static struct udt_lbuf	*udt_lbuf;	/* [I] the launcher's, or NULL */
static size_t		 udt_lbuf_len;	/* [I] its mapping's length */

/*
 * Whether the launcher's helper follows this image: it renamed the
 * variable that names it (udt_lrec.h).  The name goes back, in place,
 * so the program and its children see the environment they were given.
 */
static int
udt_loader_followed(void)
{
	static const char mark[] = UDT_LFOLLOW_MARK "=";
	char **e;

	for (e = environ; e != NULL && *e != NULL; e++)
		if (strncmp(*e, mark, sizeof(mark) - 1) == 0) {
			memcpy(*e, UDT_LFOLLOW_ENV, sizeof(UDT_LFOLLOW_ENV) - 1);
			return 1;
		}
	return 0;
}

void
udt_loader_take(void)
{
	struct udt_lbuf *b;
	long len;
	void *p;

	/*
	 * Only the image the launcher traces asks: it alone has the
	 * variable, which goes now, before any child could inherit it (a
	 * child has no tracer, and an unknown prctl() is a system call a
	 * strict seccomp policy might punish).  No getpid() to compare: the
	 * tracer would take it for the loader's.
	 */
	if (getenv(UDT_LREC_ENV) != NULL)
		(void)unsetenv(UDT_LREC_ENV);
	else if (!udt_loader_followed())
		return;
	/* No launcher: the kernel's EINVAL, a negative length. */
	len = udt_sys5(SYS_prctl, UDT_LREC_PRCTL, 0, 0, 0, 0);
	if (len < 0)
		return;
	p = (void *)-1L;
	if (len >= (long)sizeof(*b) && len <= (long)(sizeof(*b) +
	    UDT_LREC_MAX * sizeof(struct udt_lrec)))
		p = (void *)udt_sys6(SYS_mmap, 0, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if ((unsigned long)p > -4096UL) {
		/* Let the launcher go all the same: no room, nothing kept. */
		(void)udt_sys5(SYS_prctl, UDT_LREC_PRCTL, 1, 0, 0, 0);
		return;
	}
	/* The launcher writes p and detaches; the call itself fails. */
	(void)udt_sys5(SYS_prctl, UDT_LREC_PRCTL, (long)p, len, 0, 0);
	b = p;
	if (b->lb_magic != UDT_LREC_MAGIC || b->lb_count > UDT_LREC_MAX ||
	    sizeof(*b) + b->lb_count * sizeof(struct udt_lrec) >
	    (size_t)len) {
		udt_sys2(SYS_munmap, p, len);
		return;
	}
	udt_lbuf = b;
	udt_lbuf_len = (size_t)len;
}

void
udt_loader_replay(int rec)
{
	const struct udt_lrec *lr;
	unsigned int i, probe, en;

	if (udt_lbuf == NULL)
		return;
	for (i = 0; rec && i < udt_lbuf->lb_count; i++) {
		lr = &udt_lbuf->lb_rec[i];
		if (lr->lr_idx >= SYSTAB_COUNT || lr->lr_tid <= 0)
			continue;
		probe = 2u * lr->lr_idx + ((lr->lr_flags & UDT_LR_RET) ? 1 : 0);
		en = __atomic_load_n(&udt_enab[probe], __ATOMIC_RELAXED);
		if (en != 0)
			udt_emit_lrec(lr, probe, en);
	}
	udt_sys2(SYS_munmap, udt_lbuf, udt_lbuf_len);
	udt_lbuf = NULL;
}
