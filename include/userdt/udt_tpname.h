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
 * The names dtd publishes Linux tracepoints under, where dt(4)'s names
 * have 15 characters: one rule, shared by dtd (which registers the
 * probes) and btrace (which finds an event's fields in tracefs by the
 * probe's name), so the two can never disagree.  Drop the event's
 * "SUBSYSTEM_" prefix; if still too long, cut the words before the last
 * one, left to right, to their first 3 letters until it fits; as a last
 * resort, cut at 15.  Names that fit are left alone, so most read as in
 * bpftrace.  No state: any thread.
 */
#ifndef UDT_TPNAME_H
#define UDT_TPNAME_H

#include <stdio.h>
#include <string.h>

#include <dev/dt/dtvar.h>

/* event of subsystem sys as a probe name, into out (DTNAMESIZE bytes). */
static inline void
udt_tp_shorten(const char *sys, const char *event, char *out)
{
	char buf[256], *w, *last, *us;
	size_t n = strlen(sys), len;

	snprintf(buf, sizeof(buf), "%s", event);
	if (strlen(buf) >= DTNAMESIZE && strncmp(buf, sys, n) == 0 &&
	    buf[n] == '_' && buf[n + 1] != '\0')
		memmove(buf, buf + n + 1, strlen(buf + n + 1) + 1);
	last = strrchr(buf, '_');
	for (w = buf; strlen(buf) >= DTNAMESIZE && last != NULL && w < last;) {
		us = strchr(w, '_');
		len = (size_t)(us - w);
		if (len > 3) {
			memmove(w + 3, us, strlen(us) + 1);
			last = strrchr(buf, '_');
			us = w + 3;
		}
		w = us + 1;
	}
	snprintf(out, DTNAMESIZE, "%s", buf);
}

#endif /* UDT_TPNAME_H */
