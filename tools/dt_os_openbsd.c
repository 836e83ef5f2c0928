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


/* dt_os.h on OpenBSD, against the system's own <dev/dt/dtvar.h>. */
#include <sys/types.h>
#include <unistd.h>

#include "dt_os.h"

const char *
dt_os_name(void)
{
	return "openbsd";
}

unsigned long
dt_os_cmd_openbsd(unsigned long native)
{
	return native;
}

/* Linux has IOC_IN and IOC_OUT the other way round: swap the two bits. */
unsigned long
dt_os_cmd_linux(unsigned long native)
{
	return (native & ~0xc0000000UL) | ((native & 0x80000000UL) >> 1) |
	    ((native & 0x40000000UL) << 1);
}

/* getthrid(2) numbers threads as dt(4) does (THREAD_PID_OFFSET). */
long
dt_os_tid(void)
{
	return (long)getthrid();
}
