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
 * The kernel's tracepoints as tracefs describes them: where tracefs is
 * (mounted by us when nobody did), an event's perf id and the layout of
 * its record (the "format" file), and reading a field out of a record
 * perf delivered (PERF_SAMPLE_RAW).
 *
 * Everything here works on caller-owned data: callable from any thread.
 */
#ifndef DT_TRACEFS_H
#define DT_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

#define DT_TP_MAXFIELDS	16	/* fields kept per event, in order */
#define DT_TP_NAMELEN	32
#define DT_TP_TYPELEN	16	/* DTNAMESIZE: DTIOCGARGS's type */

enum dt_tp_kind {
	DT_TPF_NUM,		/* integer, pointer: sign- or zero-extended */
	DT_TPF_CHARS,		/* char name[N]: NUL-terminated in place */
	DT_TPF_DATALOC,		/* __data_loc char[]: u32 len << 16 | offset */
	DT_TPF_RELLOC,		/* __rel_loc char[]: offset from field end */
};

struct dt_tp_field {
	char		dtf_name[DT_TP_NAMELEN];
	char		dtf_type[DT_TP_TYPELEN];	/* published type */
	uint16_t	dtf_off;
	uint16_t	dtf_size;		/* a NUM array: one element */
	uint8_t		dtf_signed;
	uint8_t		dtf_kind;		/* enum dt_tp_kind */
};

struct dt_tp_format {
	int			dtfm_id;	/* perf config */
	unsigned int		dtfm_nfields;	/* common_* left out */
	/*
	 * The record's bytes, common_* and every field included (those
	 * past DT_TP_MAXFIELDS too); 0 where a __data_loc or __rel_loc
	 * field makes its size vary from record to record.
	 */
	uint16_t		dtfm_fixsize;
	struct dt_tp_field	dtfm_fields[DT_TP_MAXFIELDS];
};

/*
 * Find tracefs (/sys/kernel/tracing, then the debugfs copy) and mount it
 * on /sys/kernel/tracing when neither has events.  Returns 0 or an
 * errno; remembers the place for dt_tracefs_format().  Call once, from
 * dt_dev_init(); later calls return the first answer.
 */
int	dt_tracefs_init(void);

/* Where dt_tracefs_init() found tracefs, or NULL.  Any thread, after it. */
const char	*dt_tracefs_dir(void);

/*
 * Read SYSTEM/EVENT's id and format into fm.  0, ENOENT when this kernel
 * has no such event, or another errno (tracefs unreadable, a format we
 * cannot parse).  After dt_tracefs_init() succeeded.
 */
int	dt_tracefs_format(const char *sys, const char *event,
	    struct dt_tp_format *fm);

/*
 * Parse the text of a format file (fields only; the id is separate).
 * 0 or EINVAL.  Fields past DT_TP_MAXFIELDS are dropped.
 */
int	dt_tracefs_parse(const char *text, struct dt_tp_format *fm);

/* The field called name, or NULL. */
const struct dt_tp_field *dt_tp_field(const struct dt_tp_format *,
	    const char *name);

/*
 * A NUM field of a raw record of len bytes, extended to 64 bits as its
 * sign says; 0 when the record is too short (it came from the kernel,
 * but its size is only as good as the format we read).
 */
uint64_t	dt_tp_num(const struct dt_tp_field *, const void *raw,
		    size_t len);

/*
 * A string field: sets *s to its bytes inside raw and returns their
 * length up to the first NUL; 0 (and *s "") when absent or out of
 * bounds.
 */
size_t	dt_tp_str(const struct dt_tp_field *, const void *raw, size_t len,
	    const char **s);

#endif /* DT_TRACEFS_H */
