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

/* Aggregations in the hooks: the syscall provider's part (dt_sys_agg.c). */
#ifndef DT_SYS_AGG_H
#define DT_SYS_AGG_H

#include <stdbool.h>
#include <stdint.h>

struct dt_pcb;

/*
 * Slots of the tracees' tables for every aggregation of dp, a pcb being
 * started, when hooks can fold them all: the mask of them, to give back
 * with dt_ingest_sagg_give() when dp stops; 0 when dp's events are to
 * be recorded.  Under the provider's lock.
 */
uint32_t	dt_sys_agg_take(struct dt_pcb *dp);

/* Whether an aggregation of dp folds a call's duration (DTF_LAT). */
bool		dt_sys_agg_lat(const struct dt_pcb *dp);

#endif /* DT_SYS_AGG_H */
