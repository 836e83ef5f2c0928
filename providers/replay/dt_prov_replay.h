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
 * The replay provider (dtd --replay FILE): serves the probe table and the
 * events of a recording in dtrecord(1)'s text format instead of dt(4)'s
 * providers, so that a client can be tested against what a device once
 * answered, or against events written by hand.
 *
 * dt_replay_load() reads the file once, before the core starts;
 * dt_prov_replay_init() is then the core's only provider init (through
 * dt_dev_conf's dcf_providers), registering the recorded probes in the
 * recorded order, so probe numbers are the recording's own.
 */
#ifndef DT_PROV_REPLAY_H
#define DT_PROV_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

enum dt_replay_pace {
	DT_REPLAY_FAST,		/* every event at DTIOCRECORD 1 */
	DT_REPLAY_REAL,		/* at the recorded intervals */
	DT_REPLAY_STEP,		/* as fast, one record a read (dtd's rule) */
};

/*
 * Load path; strict: DTIOCPRBENABLE and DTIOCPRBDISABLE of a request the
 * file did not list (its enable lines) fail with EINVAL and a line on
 * stderr.  Returns 0, or an errno with a message (file:line) in err.
 * Main thread, before dt_dev_init().
 */
int		dt_replay_load(const char *path, bool strict,
		    enum dt_replay_pace pace, char *err, size_t errlen);

/* Rings the file's events need: its largest CPU + 1 (at least 1). */
unsigned int	dt_replay_ncpus(void);

/* dt_dev_conf.dcf_providers: register the file's probes. */
int		dt_prov_replay_init(void);

/* Free what dt_replay_load() read.  After dt_dev_fini(). */
void		dt_replay_unload(void);

#endif /* DT_PROV_REPLAY_H */
