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


/* dt_os.h on Linux, against userdt's <dev/dt/dtvar.h>. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* gettid(2): Linux only */
#endif
#include <sys/types.h>
#include <unistd.h>

#include <dev/dt/dtvar.h>

#include "dt_os.h"

const char *
dt_os_name(void)
{
	return "linux";
}

unsigned long
dt_os_cmd_openbsd(unsigned long native)
{
	return DTIOC_OPENBSD(native);
}

unsigned long
dt_os_cmd_linux(unsigned long native)
{
	return native;
}

long
dt_os_tid(void)
{
	return (long)gettid();
}
