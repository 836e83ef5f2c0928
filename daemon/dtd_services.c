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
 * The daemon-side services of providers (the tracees' ingest socket, perf
 * sampling, /dev/ksyms), started by dtd after the core is up and before
 * the device is published, stopped in reverse order at shutdown.  Kept
 * apart from the core so unit tests and the fuzzer run without them.
 */
#include <stddef.h>

#include "dtd.h"

extern const struct dtd_service dt_profile_service;	/* dt_profile_svc.c */
extern const struct dtd_service dt_ingest_service;	/* dt_ingest_svc.c */

const struct dtd_service *const dtd_services[] = {
	&dt_profile_service,	/* perf sampling mode, /dev/ksyms */
	&dt_ingest_service,	/* syscall provider: tracees' rings */
	NULL
};
