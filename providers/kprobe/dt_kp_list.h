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
 * The kernel functions the running kernel lets a kprobe on, as the
 * kprobe provider publishes them: read once at dt_dev_init(), sorted by
 * name, each once.  What the kernel reads of a name at perf_event_open()
 * is its full spelling, kept here; the probe carries dt(4)'s 15
 * characters.
 */
#ifndef DT_KP_LIST_H
#define DT_KP_LIST_H

#include <stddef.h>

struct dt_kp_list {
	char		*kl_buf;	/* the names, NUL-ended, one block */
	const char	**kl_names;	/* sorted, each once */
	size_t		 kl_n;
	size_t		 kl_ambiguous;	/* left out: 15 chars not unique */
	const char	*kl_from;	/* the file they came from */
};

/*
 * Read the list: tracefs' available_filter_functions (the functions
 * ftrace, and so an ftrace-based kprobe, can attach to), or where that
 * is missing /proc/kallsyms' text symbols less the kprobe blacklist.
 * Names longer than DTNAMESIZE - 1 stay when their first 15 characters
 * name no other function (then the cut name finds them), and are left
 * out, counted, when they do.  0 or an errno.  dt_dev_init() only.
 */
int	dt_kp_list_read(struct dt_kp_list *);
void	dt_kp_list_free(struct dt_kp_list *);

#endif /* DT_KP_LIST_H */
