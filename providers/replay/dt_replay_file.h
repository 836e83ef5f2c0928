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
 * dtrecord(1)'s text format, as dtd --replay reads it: what a file holds
 * once parsed.  The format itself is described in dtrecord(1).
 */
#ifndef DT_REPLAY_FILE_H
#define DT_REPLAY_FILE_H

#include <stdint.h>
#include <stdio.h>

#include <dev/dt/dtvar.h>

struct rp_probe {
	uint32_t	 rpp_pbn;
	uint8_t		 rpp_nargs;
	char		 rpp_prov[DTNAMESIZE];
	char		 rpp_func[DTNAMESIZE];
	char		 rpp_name[DTNAMESIZE];
	unsigned int	 rpp_ntypes;		/* argtypes given */
	char		*rpp_types[DTMAXFUNCARGS];
};

/* What the recorder asked for: strict mode's list of expected requests. */
struct rp_enable {
	uint32_t	 rpe_pbn;
	uint64_t	 rpe_evtflags;
	uint64_t	 rpe_nsecs;
};

enum rp_kind {
	RP_EVENT,
	RP_STATS,	/* counters the recording's device reported */
};

struct rp_item {
	enum rp_kind	 rpi_kind;
	struct dt_evt	 rpi_ev;		/* RP_EVENT */
	uint64_t	 rpi_dropevt;		/* RP_STATS */
	uint64_t	 rpi_skiptick;
	uint64_t	 rpi_recurevt;
};

struct rp_file {
	struct rp_probe		*rpf_probes;	/* pbn i + 1 at [i] */
	uint32_t		 rpf_nprobes;
	struct rp_enable	*rpf_enables;
	size_t			 rpf_nenables;
	struct rp_item		*rpf_items;	/* in file order */
	size_t			 rpf_nitems;
	unsigned int		 rpf_maxcpu;
};

/*
 * Parse fp (named name in messages) into *rf.  Returns 0, or EINVAL or
 * ENOMEM with "name:line: why" in err (rf then empty).  Any thread.
 */
int	rp_file_parse(FILE *fp, const char *name, struct rp_file *rf,
	    char *err, size_t errlen);
void	rp_file_free(struct rp_file *rf);

#endif /* DT_REPLAY_FILE_H */
