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
 * dtd's ingest service: the syscall provider's socket, configured by
 * --ingest.  Kept apart from dt_ingest.c because it reads dtd_conf, which
 * only dtd defines: unit tests that link the core never pull it in.
 */
#include <stddef.h>

#include "dt_ingest.h"
#include "dtd.h"

static int
dt_ingest_svc_start(void)
{
	return dt_ingest_begin(dtd_conf.dcf_ingest);
}

const struct dtd_service dt_ingest_service = {
	.ds_name	= "ingest",
	.ds_start	= dt_ingest_svc_start,
	.ds_stop	= dt_ingest_end,
};
