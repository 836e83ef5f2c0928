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
 * What differs between the systems the test bench tools (dtrecord,
 * dtconform) build on: everything else in them is POSIX and
 * <dev/dt/dtvar.h>.  One file per system implements this:
 * dt_os_linux.c (userdt's dtd), dt_os_openbsd.c (dt(4) itself).
 */
#ifndef DT_OS_H
#define DT_OS_H

/* The system's name as a word: "linux", "openbsd". */
const char	*dt_os_name(void);

/*
 * An ioctl number in OpenBSD's encoding and in Linux's, from the number
 * <dev/dt/dtvar.h> gives on this system (the two differ in the
 * direction bits of _IOR and _IOW only).
 */
unsigned long	 dt_os_cmd_openbsd(unsigned long native);
unsigned long	 dt_os_cmd_linux(unsigned long native);

/* The calling thread's id as dtev_tid spells it on this system. */
long		 dt_os_tid(void);

#endif /* DT_OS_H */
