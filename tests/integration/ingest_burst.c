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
 * ingest_burst DTD DTRUN TRACEE [N]
 *
 * A traced program forks N children (default 256) at once, each of
 * which attaches to dtd from the fork and calls getpid() once: every
 * child's getpid must arrive through the device, none of the
 * handshakes refused although they all came at the same moment.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define NKIDS_DEFAULT	256

static int
pid_cmp(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct udt_stats us;
	struct dt_evt *evs = NULL;
	char nbuf[16], line[128];
	char *targv[] = { argc > 2 ? argv[2] : NULL, "-s", NULL,
	    argc > 3 ? argv[3] : NULL, "burst", nbuf, NULL };
	pid_t *kids = NULL, tpid, pid, *hit;
	unsigned char *seen = NULL;
	long nkids, made = 0, done = -1, nseen = 0, n, k;
	uint32_t pbn;
	size_t npi;
	FILE *out;
	int fd = -1, status;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: ingest_burst DTD DTRUN TRACEE [N]\n");
		return 2;
	}
	nkids = argc == 5 ? strtol(argv[4], NULL, 10) : NKIDS_DEFAULT;
	if (nkids <= 0 || nkids > 4096)
		return 2;
	snprintf(nbuf, sizeof(nbuf), "%ld", nkids);
	if (st_setup(&dd, "udt-burst", argv[1], NULL, &fd, &pi, &npi) != 0 ||
	    (evs = calloc(4096, sizeof(*evs))) == NULL ||
	    (kids = calloc((size_t)nkids, sizeof(*kids))) == NULL ||
	    (seen = calloc((size_t)nkids, 1)) == NULL)
		goto out;
	pbn = dtt_pbn(pi, npi, "syscall", "sys%20", "entry");
	if (!dtt_check(pbn != 0 && dtt_enable(fd, pbn, DTEVT_EXECNAME, 0) ==
	    0 && dtt_record(fd, 1) == 0, "getpid's entry recorded"))
		goto out;

	targv[2] = dd.dd_sock;
	if ((out = st_spawn_out(targv, &tpid)) == NULL)
		goto out;
	while (fgets(line, sizeof(line), out) != NULL) {
		if (sscanf(line, "C %d", &pid) == 1 && made < nkids)
			kids[made++] = pid;
		else
			sscanf(line, "S %ld", &done);
	}
	fclose(out);
	status = dtt_stop(tpid, 0, DTT_EXIT_MS);
	if (!dtt_check(dtt_exited0(status) && done == nkids && made == nkids,
	    "the tracee forked %ld children at once, all exited 0", made))
		goto out;
	qsort(kids, (size_t)nkids, sizeof(*kids), pid_cmp);

	/* Every child's event is in dtd by now or in a ring it drains. */
	while (nseen < nkids) {
		if ((n = dtt_read(fd, evs, 4096, 3000)) <= 0)
			break;
		for (k = 0; k < n; k++) {
			hit = bsearch(&evs[k].dtev_pid, kids, (size_t)nkids,
			    sizeof(*kids), pid_cmp);
			if (hit == NULL || evs[k].dtev_pbn != pbn ||
			    seen[hit - kids])
				continue;
			seen[hit - kids] = 1;
			nseen++;
		}
	}
	dtt_check(nseen == nkids, "getpid of %ld of the %ld children read "
	    "through the device", nseen, nkids);
	if (dtt_check(st_ingest_stats(dd.dd_sock, &us) == 0, "ingest stats"))
		dtt_check(us.us_refused == 0 && us.us_attached >= (uint64_t)
		    nkids, "dtd attached %llu, refused %llu handshakes",
		    (unsigned long long)us.us_attached,
		    (unsigned long long)us.us_refused);
out:
	st_teardown(&dd, fd);
	free(pi);
	free(evs);
	free(kids);
	free(seen);
	status = dtt_done();
	return status || dtt_npass < 5;
}
