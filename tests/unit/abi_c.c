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
 * The public header on its own, compiled as strict C11 and as C++ (this
 * same file): its static assertions check every size, offset and ioctl
 * number at build time; at run time check what a client computes from
 * it, the OpenBSD encoding of each command.
 */
#include <dev/dt/dtvar.h>

#include <stdio.h>

int
main(void)
{
	static const struct {
		unsigned long	linux_cmd;
		unsigned long	openbsd_cmd;
	} cmds[] = {
		{ DTIOCGPLIST,		0xC0104401UL },
		{ DTIOCGSTATS,		0x40204402UL },
		{ DTIOCRECORD,		0x80044403UL },
		{ DTIOCPRBENABLE,	0x80184404UL },
		{ DTIOCPRBDISABLE,	0x80184405UL },
		{ DTIOCGARGS,		0xC0184406UL },
		{ DTIOCRDVNODE,		0xC0284408UL },
	};
	struct dt_evt ev;
	unsigned int i, n = 0, bad = 0;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		n++;
		if (DTIOC_OPENBSD(cmds[i].linux_cmd) != cmds[i].openbsd_cmd ||
		    DTIOC_OPENBSD(cmds[i].openbsd_cmd) != cmds[i].linux_cmd) {
			printf("FAIL: %#lx <-> %#lx\n", cmds[i].linux_cmd,
			    cmds[i].openbsd_cmd);
			bad++;
		}
	}
	/* The return overlay sits on the first args, as in dt(4). */
	n++;
	ev.dtev_args[0] = 5;
	ev.dtev_args[2] = 0;
	ev.dtev_error = 9;
	if (ev.dtev_retval[0] != 5 || (ev.dtev_args[2] & 0xffffffff) != 9) {
		printf("FAIL: retval/error overlay\n");
		bad++;
	}
	printf("%u passed, %u failed\n", n - bad, bad);
	return bad != 0;
}
