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
 * syscall_test DTD DTRUN TRACEE [RINGSIZE]
 *
 * The syscall provider end to end: a private dtd, a client on its real
 * device file enabling syscall probes, and syscall_tracee run under dtrun
 * making known calls (see syscall_tracee.c), syscall(3) and vfork
 * included.  Every event read must match
 * a line of the tracee's manifest exactly (probe, pid, tid, comm, args or
 * retval and errno), every manifest event must arrive or be counted as
 * dropped, and DTIOCGSTATS must agree: generated == read + dropped.  With
 * RINGSIZE 16 the device rings overflow and the sum must still hold.
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"

#define NKEYS		64
#define FILE_BYTES	1234

struct want {
	char	w_key[256];
	long	w_count;
};

static struct want	wants[NKEYS];
static int		nwants;
static long		ngenerated;

/* Probes the tracee exercises, all enabled with comm and args. */
static const unsigned int sysnums[] = { 2, 3, 4, 6, 20, 39, 66, 321 };

static unsigned long	text_lo, text_hi;	/* tracee's code */
static long long	open_lo, open_hi;	/* around the first openat */
static int		open_key[2] = { -1, -1 };	/* its E and R keys */
static int		open_next;	/* keys still to take after "T" */
static long		nopen_timed;
/*
 * Stamps are TSC readings dtd converts to CLOCK_REALTIME, which may be a
 * few microseconds off the tracee's own clock_gettime() pair around the
 * call; a wrong clock or unit is off by far more.
 */
#define STAMP_SLACK_NS	20000LL

static int
manifest_add(const char *line)
{
	char kind, rest[128], comm[32];
	int num, pid, tid, n;
	long count;

	if (sscanf(line, "X %lu %lu", &text_lo, &text_hi) == 2)
		return 0;
	if (sscanf(line, "T %lld %lld", &open_lo, &open_hi) == 2) {
		open_next = 2;		/* the openat's E and R lines follow */
		return 0;
	}

	if (sscanf(line, "%c %d %d %d %31s %ld %n", &kind, &num, &pid, &tid,
	    comm, &count, &n) != 6 || nwants == NKEYS)
		return -1;
	snprintf(rest, sizeof(rest), "%s", line + n);
	rest[strcspn(rest, "\n")] = '\0';
	snprintf(wants[nwants].w_key, sizeof(wants[0].w_key),
	    "%c %d %d %d %s %s", kind, num, pid, tid, comm, rest);
	/* Keys without arguments end in a blank: make them canonical. */
	n = (int)strlen(wants[nwants].w_key);
	while (n > 0 && wants[nwants].w_key[n - 1] == ' ')
		wants[nwants].w_key[--n] = '\0';
	ngenerated += count;
	for (n = 0; n < nwants; n++)
		if (strcmp(wants[n].w_key, wants[nwants].w_key) == 0)
			break;
	if (open_next > 0)
		open_key[2 - open_next--] = n;
	if (n < nwants) {
		wants[n].w_count += count;
		return 0;
	}
	wants[nwants].w_count = count;
	nwants++;
	return 0;
}

/* The manifest key of an event, built only from what the device said. */
static void
event_key(const struct dt_evt *ev, const struct dtioc_probe_info *pi,
    char *key, size_t len)
{
	const struct dtioc_probe_info *p = &pi[ev->dtev_pbn - 1];
	unsigned int num = (unsigned int)atoi(p->dtpi_func + 4);
	int off, i;

	if (strcmp(p->dtpi_name, "entry") == 0) {
		off = snprintf(key, len, "E %u %d %d %s", num, ev->dtev_pid,
		    ev->dtev_tid, ev->dtev_comm);
		/*
		 * Pointers are below 2^63: %ld prints them as %lu does.  The
		 * upper half of an int argument's register is unspecified
		 * (the hook records registers, as dt(4) does), so the int
		 * arguments of these calls compare as int.
		 */
		for (i = 0; i < p->dtpi_nargs; i++) {
			long v = (long)ev->dtev_args[i];

			if (i == 0 || (num == 321 && i >= 2))
				v = (int)v;
			off += snprintf(key + off, len - (size_t)off, " %ld",
			    v);
		}
	} else
		snprintf(key, len, "R %u %d %d %s %ld %d", num, ev->dtev_pid,
		    ev->dtev_tid, ev->dtev_comm, (long)ev->dtev_retval[0],
		    ev->dtev_error);
}

static void
check_plist(const struct dtioc_probe_info *pi, size_t n)
{
	unsigned int last = 0, num, bad = 0, nsys = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (pi[i].dtpi_pbn != i + 1)
			bad++;
		if (strcmp(pi[i].dtpi_prov, "syscall") != 0)
			continue;
		nsys++;
		num = (unsigned int)atoi(pi[i].dtpi_func + 4);
		if (strncmp(pi[i].dtpi_func, "sys%", 4) != 0 || num == 0)
			bad++;
		/* entry then return for each N, N strictly ascending. */
		if ((nsys % 2 == 1 && (num <= last ||
		    strcmp(pi[i].dtpi_name, "entry") != 0)) ||
		    (nsys % 2 == 0 && (num != last ||
		    strcmp(pi[i].dtpi_name, "return") != 0 ||
		    pi[i].dtpi_nargs != 0)))
			bad++;
		last = num;
	}
	dtt_check(bad == 0 && nsys > 400,
	    "%u syscall probes, numbered in order, entry/return pairs", nsys);
	dtt_check(pi[dtt_pbn(pi, n, "syscall", "sys%321", "entry") - 1]
	    .dtpi_nargs == 4 &&
	    pi[dtt_pbn(pi, n, "syscall", "sys%3", "entry") - 1]
	    .dtpi_nargs == 3 &&
	    dtt_pbn(pi, n, "syscall", "sys%1", "entry") != 0 &&
	    dtt_pbn(pi, n, "syscall", "sys%1258", "entry") != 0,
	    "openat 4 args, read 3 args, exit and Linux-only tgkill (1024+234)"
	    " listed");
}

int
main(int argc, char *argv[])
{
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct dtioc_stat st;
	struct udt_stats us;
	struct dt_evt *evs = NULL;
	size_t npi = 0;
	char path[128], numbuf[16], func[16], line[256], key[160];
	char *targv[8];
	FILE *out;
	long got = 0, n, unexpected = 0, missing = 0, nstacks = 0;
	long badstacks = 0;
	int64_t ns0, ns1, tns;
	struct timespec t0, t1;
	unsigned int i;
	int fd = -1, status, k, fail = 1, ncpu;
	pid_t tpid;

	if (argc < 4) {
		fprintf(stderr,
		    "usage: syscall_test DTD DTRUN TRACEE [RING]\n");
		return 2;
	}
	if (st_setup(&dd, "udt-syscall", argv[1], argc > 4 ?
	    (char *[]){ "--ring-size", argv[4], NULL } : NULL, &fd, &pi,
	    &npi) != 0)
		goto out;
	check_plist(pi, npi);
	for (i = 0; i < sizeof(sysnums) / sizeof(sysnums[0]); i++) {
		snprintf(func, sizeof(func), "sys%%%u", sysnums[i]);
		/* getpid's entry also wants the user stack. */
		if ((k = dtt_enable(fd, dtt_pbn(pi, npi, "syscall", func,
		    "entry"), DTEVT_FUNCARGS | DTEVT_EXECNAME |
		    (sysnums[i] == 20 ? DTEVT_USTACK : 0), 0)) != 0 ||
		    (k = dtt_enable(fd, dtt_pbn(pi, npi, "syscall", func,
		    "return"), DTEVT_EXECNAME, 0)) != 0) {
			warnx("enable %s: %s", func, strerror(k));
			goto out;
		}
	}
	if ((k = dtt_record(fd, 1)) != 0) {
		warnx("DTIOCRECORD: %s", strerror(k));
		goto out;
	}

	/* The file the tracee opens and reads, with a name nobody else has. */
	snprintf(path, sizeof(path), "%s/data.%d", dd.dd_dir, getpid());
	if ((k = open(path, O_CREAT | O_WRONLY, 0644)) < 0)
		goto out;
	memset(line, 'x', sizeof(line));
	for (n = 0; n < FILE_BYTES; n += (long)sizeof(line))
		if (write(k, line, sizeof(line)) != (ssize_t)sizeof(line))
			goto out;
	close(k);

	clock_gettime(CLOCK_REALTIME, &t0);
	snprintf(numbuf, sizeof(numbuf), "%d", FILE_BYTES);
	targv[0] = argv[2];
	targv[1] = "-s";
	targv[2] = dd.dd_sock;
	targv[3] = argv[3];
	targv[4] = "calls";
	targv[5] = path;
	targv[6] = numbuf;
	targv[7] = NULL;
	if ((out = st_spawn_out(targv, &tpid)) == NULL)
		goto out;
	while (out != NULL && fgets(line, sizeof(line), out) != NULL)
		if (manifest_add(line) != 0)
			dtt_check(0, "manifest line: %s", line);
	if (out != NULL)
		fclose(out);
	/* Its stdout closed: it exits.  Signal 0 waits, SIGKILL past that. */
	status = dtt_stop(tpid, 0, DTT_EXIT_MS);
	clock_gettime(CLOCK_REALTIME, &t1);
	if (!dtt_check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "tracee ran its calls (status %#x), %ld events expected", status,
	    ngenerated))
		goto out;

	/* Every event happened while the tracee ran: check to the ns. */
	ns0 = (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec;
	ns1 = (int64_t)t1.tv_sec * 1000000000 + t1.tv_nsec;

	/* Read until every event arrived or was counted as dropped. */
	ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
	if ((evs = calloc(4096, sizeof(*evs))) == NULL)
		goto out;
	for (;;) {
		if (dtt_stats(fd, &st) != 0)
			goto out;
		if (got + (long)st.dtst_dropevt >= ngenerated)
			break;
		if ((n = dtt_read(fd, evs, 4096, 10000)) < 0) {
			warn("read");
			break;
		}
		for (k = 0; k < n; k++) {
			const struct dt_evt *ev = &evs[k];
			int j;

			if (ev->dtev_pbn == 0 || ev->dtev_pbn > npi) {
				unexpected++;
				continue;
			}
			event_key(ev, pi, key, sizeof(key));
			for (j = 0; j < nwants; j++)
				if (strcmp(wants[j].w_key, key) == 0)
					break;
			if (j == nwants || wants[j].w_count == 0) {
				if (unexpected++ < 10)
					printf("unexpected event: %s\n", key);
				continue;
			}
			wants[j].w_count--;
			tns = (int64_t)ev->dtev_tsp.tv_sec * 1000000000 +
			    ev->dtev_tsp.tv_nsec;
			if (ev->dtev_cpu >= (unsigned int)ncpu ||
			    ev->dtev_tsp.tv_nsec < 0 ||
			    ev->dtev_tsp.tv_nsec >= 1000000000 ||
			    tns < ns0 || tns > ns1 ||
			    ev->dtev_kstack.st_count != 0) {
				if (unexpected++ < 10)
					printf("bad cpu/time/stack: %s\n", key);
			}
			/* The first openat, its path in our directory. */
			if ((j == open_key[0] || j == open_key[1]) &&
			    tns >= open_lo - STAMP_SLACK_NS &&
			    tns <= open_hi + STAMP_SLACK_NS)
				nopen_timed++;
			if (strncmp(key, "E 20 ", 5) == 0) {
				/* Innermost first, in the caller of getpid. */
				nstacks++;
				if (ev->dtev_ustack.st_count < 2 ||
				    ev->dtev_ustack.st_count > STACKTRACE_MAX ||
				    ev->dtev_ustack.st_pc[0] < text_lo ||
				    ev->dtev_ustack.st_pc[0] >= text_hi) {
					if (badstacks++ < 5)
						printf("bad ustack (%u, %#lx):"
						    " %s\n",
						    ev->dtev_ustack.st_count,
						    ev->dtev_ustack.st_pc[0],
						    key);
				}
			} else if (ev->dtev_ustack.st_count != 0) {
				if (unexpected++ < 10)
					printf("unwanted ustack: %s\n", key);
			}
		}
		got += n;
	}
	dtt_stats(fd, &st);
	for (k = 0; k < nwants; k++)
		if (wants[k].w_count != 0) {
			missing += wants[k].w_count;
			if (st.dtst_dropevt == 0)
				printf("missing %ld x %s\n", wants[k].w_count,
				    wants[k].w_key);
		}
	dtt_check(unexpected == 0, "%ld events read, each matches the manifest"
	    " (%ld did not)", got, unexpected);
	dtt_check((long)st.dtst_readevt == got &&
	    got + (long)st.dtst_dropevt == ngenerated,
	    "generated %ld == read %llu + dropped %llu", ngenerated,
	    (unsigned long long)st.dtst_readevt,
	    (unsigned long long)st.dtst_dropevt);
	dtt_check(missing == (long)st.dtst_dropevt,
	    "every event not read was counted as dropped (%ld)", missing);
	if (st.dtst_dropevt == 0)
		dtt_check(nopen_timed == 2, "the first openat's entry and "
		    "return are stamped within the %lld ns around the call "
		    "(+- %lld ns)", open_hi - open_lo, STAMP_SLACK_NS);
	dtt_check(badstacks == 0 && (nstacks > 0 || st.dtst_dropevt > 0) &&
	    text_hi > text_lo, "%ld getpid ustacks start in the program's code"
	    " [%#lx, %#lx)", nstacks, text_lo, text_hi);
	if (argc > 4)
		dtt_check(st.dtst_dropevt > 0,
		    "ring of %s slots overflowed and counted it", argv[4]);
	if (st_ingest_stats(dd.dd_sock, &us) == 0)
		dtt_check(us.us_garbage == 0 && us.us_lost == 0 &&
		    us.us_attached >= 2,
		    "ingest: %llu attached, %llu records, %llu garbage, "
		    "%llu lost", (unsigned long long)us.us_attached,
		    (unsigned long long)us.us_records,
		    (unsigned long long)us.us_garbage,
		    (unsigned long long)us.us_lost);
	else
		dtt_check(0, "ingest stats");
	fail = 0;
out:
	st_teardown(&dd, fd);
	free(pi);
	free(evs);
	k = dtt_done();
	return k || fail;
}
