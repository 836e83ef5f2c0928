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
 * The continuation slots of a deep user stack (udt_rec_more, udt_wire.h)
 * in a tracee's ring: read after the record they follow, each copied out
 * of shared memory before any of its bytes is believed, and taken only
 * when every one the record's depth calls for is there as the hook
 * writes it.
 */
#include <string.h>

#include <dev/dt/dtvar.h>
#include <userdt/udt_wire.h>

#include "dt_prov.h"
#include "dt_ingest.h"
#include "dt_ingest_var.h"

unsigned int
dti_deep_take(const char *slots, uint64_t mask, uint64_t *tail,
    struct udt_rec *r, struct dti_deep *dd, unsigned int nb)
{
	struct udt_rec_more m;
	unsigned int nslots, extra, k, i, n, got = 0;
	uint64_t t = *tail;

	dd->dd_n[nb] = 0;
	dd->dd_off[nb] = 0;
	if (r->ur_nframes <= UDT_STACK_MAX)
		return 0;
	extra = r->ur_nframes - UDT_STACK_MAX;
	/* From here on the record says UDT_STACK_MAX, whatever follows. */
	r->ur_nframes = UDT_STACK_MAX;
	/* dt_ingest_valid() bounds it; a ring smaller than that aliases. */
	nslots = UDT_MORE_SLOTS(UDT_STACK_MAX + extra);
	if (extra > DTI_DEEP_EXTRA || nslots > mask ||
	    !DTI_DEEP_ROOM(dd) || (r->ur_flags & UDT_R_PROF))
		return 0;
	for (k = 0; k < nslots; k++) {
		const struct udt_rec_more *s = (const void *)(slots +
		    ((t + k) & mask) * UDT_SLOT_SIZE);

		/* Committed before the record: there now, or never. */
		if (__atomic_load_n(&s->um_seq, __ATOMIC_ACQUIRE) != t + k + 1)
			return 0;
		memcpy(&m, s, sizeof(m));
		if (m.um_flags != UDT_R_STKDATA || m.um_probe != r->ur_probe ||
		    m.um_idx != k)
			return 0;
		n = extra - got < UDT_MORE_NPC ? extra - got : UDT_MORE_NPC;
		for (i = 0; i < n; i++)
			dd->dd_pc[dd->dd_used + got + i] = m.um_pc[i];
		got += n;
	}
	dd->dd_off[nb] = (uint16_t)dd->dd_used;
	dd->dd_n[nb] = (uint8_t)got;
	dd->dd_used += got;
	*tail = t + nslots;
	return nslots;
}

bool
dti_deep_pad(const struct udt_rec *r)
{
	/* The head a udt_rec_more shares with a record: um_idx is ur_nframes. */
	return r->ur_flags == UDT_R_STKPAD && r->ur_probe < DT_SYS_NPROBES &&
	    r->ur_nframes < UDT_MORE_MAXSLOTS;
}
