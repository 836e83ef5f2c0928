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
 * syscall_strings DTD DTRUN TRACEE
 *
 * Strings in syscall events (DTEVT_STRINGS, include/dev/dt/dtvar.h):
 * strings_tracee makes open, openat and rename calls with good paths, a
 * bad pointer, a path too long for an event, and strings at the end of
 * a page before an unmapped one.  Two opens of the device record the
 * same probes: one asks for strings, and gets each path in the string
 * area of its entry events, with truncation and unreadable bytes marked;
 * the other asks as OpenBSD's btrace does and reads zeros there, as
 * before.  The tracee gets EFAULT for its bad pointers, as untraced.
 */
#include <sys/stat.h>
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define SYS_WRITE	4
#define SYS_OPEN	5
#define SYS_RENAME	128
#define SYS_OPENAT	321
#define NEV		32

/* The entry events of one open, in the order the tracee made them. */
struct seen {
	struct dt_evt	ev[NEV];
	int		n;
};

static int
by_time(const void *a, const void *b)
{
	const struct dt_evt *x = a, *y = b;

	if (x->dtev_tsp.tv_sec != y->dtev_tsp.tv_sec)
		return x->dtev_tsp.tv_sec < y->dtev_tsp.tv_sec ? -1 : 1;
	if (x->dtev_tsp.tv_nsec != y->dtev_tsp.tv_nsec)
		return x->dtev_tsp.tv_nsec < y->dtev_tsp.tv_nsec ? -1 : 1;
	return 0;
}

/*
 * Read fd until the tracee's marker write, its last call: its events
 * reach the rings in the order it made them, so the others are in by
 * then.  Keep its other entries, in the order of their time stamps (a
 * read takes the per-CPU rings one after the other).
 */
static int
collect(int fd, pid_t pid, uint32_t pbn_write, struct seen *s)
{
	static struct dt_evt evs[256];
	long n, k;
	int done = 0;

	s->n = 0;
	while (!done && (n = dtt_read(fd, evs, 256, 10000)) > 0)
		for (k = 0; k < n; k++) {
			if (evs[k].dtev_pid != pid)
				continue;
			if (evs[k].dtev_pbn == pbn_write &&
			    evs[k].dtev_args[0] == 1)
				done = 1;
			else if (s->n < NEV)
				s->ev[s->n++] = evs[k];
		}
	qsort(s->ev, (size_t)s->n, sizeof(s->ev[0]), by_time);
	return dtt_check(done, "the tracee's last event arrived") ? 0 : -1;
}

/* Entry i of an event's string area: header, length, bytes. */
static const unsigned char *
str_ent(const struct dt_evt *ev, int i)
{
	const unsigned char *a = DTEV_STR_AREA(ev);
	size_t off = 0;

	for (; i > 0 && off < DTEV_STR_SIZE && a[off] != 0; i--)
		off += DTEV_STR_HDR + a[off + 1] + 1;
	return off < DTEV_STR_SIZE && a[off] != 0 ? a + off : NULL;
}

/* Whether entry i is argument arg with flags and exactly bytes s[0..len). */
static int
str_is(const struct dt_evt *ev, int i, unsigned int arg, unsigned int fl,
    const char *s, size_t len)
{
	const unsigned char *e = str_ent(ev, i);

	return e != NULL && e[0] == ((arg + 1) | fl) && e[1] == len &&
	    memcmp(e + DTEV_STR_HDR, s, len) == 0 &&
	    e[DTEV_STR_HDR + len] == '\0';
}

static int
zero(const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n-- > 0)
		if (*b++ != 0)
			return 0;
	return 1;
}

int
main(int argc, char *argv[])
{
	static struct seen s1, s2;
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	const struct dt_evt *ev;
	char path[512], line[128], longp[512];
	char *targv[6];
	uint32_t pbn[4];
	const char *fn[4] = { "sys%5", "sys%321", "sys%128", "sys%4" };
	FILE *out;
	pid_t tpid;
	size_t npi;
	int fd = -1, fd2 = -1, tfd, i, ok, n;

	if (argc != 4) {
		fprintf(stderr, "usage: syscall_strings DTD DTRUN TRACEE\n");
		return 2;
	}
	if (st_setup(&dd, "udt-strings", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	fd2 = dtt_open(dd.dd_dev);
	if (!dtt_check(fd2 >= 0, "second open of the device"))
		goto out;
	snprintf(path, sizeof(path), "%s/known", dd.dd_dir);
	if ((tfd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) == -1)
		goto out;
	close(tfd);
	snprintf(path, sizeof(path), "%s/r1", dd.dd_dir);
	if ((tfd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) == -1)
		goto out;
	close(tfd);
	for (i = 0; i < 4; i++) {
		pbn[i] = dtt_pbn(pi, npi, "syscall", fn[i], "entry");
		if (!dtt_check(pbn[i] != 0, "probe %s", fn[i]) ||
		    dtt_enable(fd, pbn[i], DTEVT_FUNCARGS | DTEVT_STRINGS, 0) ||
		    dtt_enable(fd2, pbn[i], DTEVT_FUNCARGS | DTEVT_KSTACK, 0))
			goto out;
	}
	if (dtt_record(fd, 1) || dtt_record(fd2, 1))
		goto out;

	targv[0] = argv[2];
	targv[1] = "-s";
	targv[2] = dd.dd_sock;
	targv[3] = argv[3];
	targv[4] = dd.dd_dir;
	targv[5] = NULL;
	if ((out = st_spawn_out(targv, &tpid)) == NULL)
		goto out;
	line[0] = '\0';
	if (fgets(line, sizeof(line), out) == NULL)
		line[0] = '\0';
	fclose(out);
	dtt_check(dtt_exited0(dtt_stop(tpid, 0, DTT_EXIT_MS)) &&
	    strcmp(line, "S efault-ok efault-ok\n") == 0,
	    "bad pointers fail with EFAULT as untraced: %s", line);
	if (collect(fd, tpid, pbn[3], &s1) != 0 ||
	    collect(fd2, tpid, pbn[3], &s2) != 0)
		goto out;

	/* open, openat, open, open, rename, open, open */
	dtt_check(s1.n == 7 && s2.n == 7, "7 entries each (%d, %d)", s1.n,
	    s2.n);
	if (s1.n != 7 || s2.n != 7)
		goto out;
	snprintf(path, sizeof(path), "%s/known", dd.dd_dir);
	ev = &s1.ev[0];
	dtt_check(ev->dtev_pbn == pbn[0] && ev->dtev_kstack.st_count == 0 &&
	    str_is(ev, 0, 0, 0, path, strlen(path)) && str_ent(ev, 1) == NULL,
	    "open: its path");
	snprintf(path, sizeof(path), "%s/missing", dd.dd_dir);
	ev = &s1.ev[1];
	dtt_check(ev->dtev_pbn == pbn[1] &&
	    str_is(ev, 0, 1, 0, path, strlen(path)) && str_ent(ev, 1) == NULL,
	    "openat: its second argument");
	ev = &s1.ev[2];
	dtt_check(ev->dtev_pbn == pbn[0] && ev->dtev_args[0] == 1 &&
	    str_is(ev, 0, 0, DTEV_STR_FAULT, "", 0),
	    "bad pointer: marked unreadable");
	n = snprintf(longp, sizeof(longp), "%s/", dd.dd_dir);
	memset(longp + n, 'a', 300);
	longp[n + 300] = '\0';
	ev = &s1.ev[3];
	dtt_check(ev->dtev_pbn == pbn[0] &&
	    str_is(ev, 0, 0, DTEV_STR_TRUNC, longp, DTEV_STR_SIZE - 3),
	    "long path: its first %d bytes, marked truncated",
	    DTEV_STR_SIZE - 3);
	ev = &s1.ev[4];
	snprintf(path, sizeof(path), "%s/r1", dd.dd_dir);
	ok = ev->dtev_pbn == pbn[2] && str_is(ev, 0, 0, 0, path, strlen(path));
	snprintf(path, sizeof(path), "%s/r2", dd.dd_dir);
	dtt_check(ok && str_is(ev, 1, 1, 0, path, strlen(path)),
	    "rename: both paths");
	dtt_check(str_is(&s1.ev[5], 0, 0, 0, "edge", 4),
	    "a string ending before an unmapped page: whole");
	dtt_check(str_is(&s1.ev[6], 0, 0, DTEV_STR_FAULT, "0123456789", 10),
	    "a string running into an unmapped page: its bytes, unreadable");

	/* The OpenBSD-style open: the same events, zeros where strings go. */
	ok = 1;
	for (i = 0; i < 7; i++) {
		ok &= s2.ev[i].dtev_pbn == (i == 1 ? pbn[1] : i == 4 ?
		    pbn[2] : pbn[0]);
		ok &= zero(&s2.ev[i].dtev_kstack, sizeof(s2.ev[i].dtev_kstack));
		ok &= memcmp(s2.ev[i].dtev_args, s1.ev[i].dtev_args,
		    sizeof(s1.ev[i].dtev_args)) == 0;
	}
	dtt_check(ok, "without DTEVT_STRINGS: same events, kstack area zero");
out:
	if (fd2 >= 0)
		close(fd2);
	st_teardown(&dd, fd);
	free(pi);
	return dtt_done() || dtt_npass < 12;
}
