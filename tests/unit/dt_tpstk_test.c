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
 * The switch-out stacks on__cpu gets (dt_tp_stk.c): each thread its own
 * once, none another's, and threads of one hash keep theirs while few
 * enough of them are off a CPU at once.
 */
#include <stdio.h>
#include <string.h>

#include <dev/dt/dtvar.h>

#include "dt_tp_stk.h"
#include "unit_check.h"


/* tid switches out with a kernel stack of one PC, pc. */
static void
off(pid_t tid, unsigned long pc)
{
	struct stacktrace k, u;
	struct dt_tp_sample s;

	memset(&k, 0, sizeof(k));
	memset(&u, 0, sizeof(u));
	memset(&s, 0, sizeof(s));
	k.st_pc[0] = pc;
	k.st_count = 1;
	s.ts_kstack = &k;
	s.ts_ustack = &u;
	dt_tp_stk_off(tid, &s);
}

/* The PC of tid's on__cpu stack, 0 for none. */
static unsigned long
on(pid_t tid)
{
	struct dt_evt ev;

	memset(&ev, 0xff, sizeof(ev));
	dt_tp_stk_on(tid, &ev);
	return ev.dtev_kstack.st_count > 0 ? ev.dtev_kstack.st_pc[0] : 0;
}

int
main(void)
{
	/* a sleeper, and busy threads of its hash switching meanwhile */
	off(100, 0x1000);
	off(100 + 4096, 0x2000);
	CHECK(on(100 + 4096) == 0x2000);
	off(100 + 4096, 0x2001);
	off(100 + 2 * 4096, 0x3000);
	off(100 + 3 * 4096, 0x4000);
	CHECK(on(100) == 0x1000);
	/* once */
	CHECK(on(100) == 0);
	/* never another's: a tid that never switched out gets none */
	CHECK(on(100 + 5 * 4096) == 0);
	CHECK(on(100 + 4096) == 0x2001);
	CHECK(on(100 + 2 * 4096) == 0x3000);
	/* more of one hash off at once than it has ways: one loses */
	off(7, 1);
	off(7 + 4096, 2);
	off(7 + 2 * 4096, 3);
	off(7 + 3 * 4096, 4);
	off(7 + 4 * 4096, 5);
	CHECK((on(7) == 0) + (on(7 + 4096) == 0) + (on(7 + 2 * 4096) == 0) +
	    (on(7 + 3 * 4096) == 0) == 1);
	CHECK(on(7 + 4 * 4096) == 5);
	dt_tp_stk_fini();

	return unit_done();
}
