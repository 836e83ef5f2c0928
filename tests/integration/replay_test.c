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
 * replay_test DTD DTRECORD BTRACE
 *
 * dtd --replay and dtrecord(1) through real device files of private
 * dtds (FUSE-file, temporary paths, stopped by pid):
 *
 *   1. A live dtd's interval events are recorded with dtrecord while
 *	btrace counts the same probe by probe and comm.
 *   2. dtd --replay of that recording: two opens read byte-identical
 *	records; dtrecord on the replay writes the recording again
 *	(round trip); btrace prints what it printed live.
 *   3. --replay-pace step: each read gets one record.  --replay-strict:
 *	an enable the file did not list fails with EINVAL.
 *   4. A file written by hand (syscall, tracepoint and interval probes)
 *	drives btrace to the expected output.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"

#define NEV	30	/* events recorded */
#define NBT	20	/* events btrace counts */

static const char	*dtd_path, *dtrecord_path, *btrace_path;
static struct dtt_dtd	 dd;

static const char count_bt[] =
    "interval:hz:200 { @[probe, comm] = count(); @n = count();\n"
    "    if (@n == " "20" ") { exit(); } }\n";

static const char hand_rec[] =
    "# by hand: two writes, a return, a wakeup, then a tick to stop\n"
    "dtrecord 1\n"
    "probe 1 profile hz 97 0\n"
    "probe 2 interval hz 1 0\n"
    "probe 3 syscall sys%4 entry 3\n"
    "probe 4 syscall sys%4 return 0\n"
    "probe 5 tracepoint sched wakeup 3\n"
    "argtypes 5 pid_t, pid_t, int\n"
    "event 3 cpu=0 pid=42 tid=100042 tsp=10.0000001 comm=\"writer one\" "
    "args=1,4096,12\n"
    "event 4 cpu=0 pid=42 tid=100042 tsp=10.0000002 comm=\"writer one\" "
    "retval=12\n"
    "event 5 cpu=1 pid=7 tid=100007 tsp=10.0000003 comm=\"kworker\" "
    "args=42,100042,3\n"
    "event 3 cpu=1 pid=43 tid=100043 tsp=10.0000004 comm=\"two\" "
    "args=2,8192,-1\n"
    "event 2 cpu=0 pid=1 tid=100001 tsp=10.0000005\n";

static const char hand_bt[] =
    "syscall:write:entry { printf(\"%s %d fd=%d len=%d\\n\", comm, pid, "
    "arg0, arg2); }\n"
    "syscall:write:return { printf(\"ret %d\\n\", retval); }\n"
    "tracepoint:sched:wakeup { printf(\"wakeup %d %d cpu %d\\n\", arg0, "
    "arg2, cpu); }\n"
    "interval:hz:1 { exit(); }\n";

static const char hand_out[] =
    "writer one 42 fd=1 len=12\n"
    "ret 12\n"
    "wakeup 42 3 cpu 1\n"
    "two 43 fd=2 len=-1\n";

static char *
path(const char *name)
{
	static char buf[8][256];
	static int i;
	char *p = buf[i++ % 8];

	snprintf(p, sizeof(buf[0]), "%s/%s", dd.dd_dir, name);
	return p;
}

static bool
put_file(const char *p, const char *text)
{
	FILE *fp = fopen(p, "w");

	if (fp == NULL)
		return false;
	fputs(text, fp);
	return fclose(fp) == 0;
}

/* The whole file, NUL-terminated, or NULL.  Caller frees. */
static char *
get_file(const char *p)
{
	FILE *fp = fopen(p, "r");
	char *buf;
	long n;

	if (fp == NULL)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)n + 1);
	if (buf != NULL && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	return buf;
}

/* Run argv with stdout to out (a path), 20 s at most: exit status 0? */
static bool
run(char *const argv[], const char *out)
{
	int fd = -1, status;
	pid_t pid;

	if (out != NULL &&
	    (fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) ==
	    -1)
		return false;
	pid = dtt_spawn(argv, NULL, -1, fd, -1, -1);
	if (fd != -1)
		close(fd);
	if (pid == -1)
		return false;
	status = dtt_wait(pid, 20000);
	if (status == -1)
		dtt_stop(pid, SIGKILL, 5000);
	return status != -1 && dtt_exited0(status);
}

static bool
start(char *const extra[])
{
	char err[256];

	if (dtt_dtd_start(&dd, dtd_path, extra, err, sizeof(err)) <= 0) {
		dtt_check(false, "dtd starts: %s", err);
		return false;
	}
	return true;
}

/* The file without its "source" line (it names the device path). */
static char *
recording(const char *p)
{
	char *s = get_file(p), *l, *e;

	if (s != NULL && (l = strstr(s, "\nsource ")) != NULL &&
	    (e = strchr(l + 1, '\n')) != NULL)
		memmove(l, e, strlen(e) + 1);
	return s;
}

/* Enable interval (pbn 2) with flags, record, read n records into ev. */
static long
read_replay(uint32_t pbn, uint64_t flags, struct dt_evt *ev, size_t n,
    size_t *nreads)
{
	long got, total = 0;
	int fd, error;

	*nreads = 0;
	if ((fd = dtt_open(dd.dd_dev)) == -1)
		return -1;
	if ((error = dtt_enable(fd, pbn, flags, 5000000)) != 0 ||
	    (error = dtt_record(fd, 1)) != 0) {
		close(fd);
		errno = error;
		return -1;
	}
	while ((size_t)total < n) {
		got = dtt_read(fd, ev + total, n - (size_t)total, 5000);
		if (got <= 0)
			break;
		total += got;
		(*nreads)++;
	}
	close(fd);
	return total;
}

int
main(int argc, char *argv[])
{
	static struct dt_evt a[NEV], b[NEV];
	char *live, *again, *out_live, *out_replay, *out;
	size_t nreads;
	long na, nb;
	int fd, error;

	if (argc != 4) {
		fprintf(stderr, "usage: replay_test DTD DTRECORD BTRACE\n");
		return 2;
	}
	dtd_path = argv[1];
	dtrecord_path = argv[2];
	btrace_path = argv[3];
	if (geteuid() != 0) {
		printf("SKIP: needs root (FUSE mounts, probes)\n");
		return 77;
	}
	if (dtt_dtd_init(&dd, "replay") != 0)
		return 1;

	/* 1. Live. */
	dtt_tag("live");
	if (!start(NULL))
		goto out;
	{
		char *rec[] = { (char *)dtrecord_path, "-f", dd.dd_dev, "-o",
		    path("live.rec"), "-n", "30", "-F", "execname",
		    "interval:hz:200", NULL };
		char *bt[] = { (char *)btrace_path, "-d", dd.dd_dev,
		    path("count.bt"), NULL };

		dtt_check(run(rec, NULL), "dtrecord records %d events", NEV);
		dtt_check(put_file(path("count.bt"), count_bt), "script");
		dtt_check(run(bt, path("live.out")), "btrace runs live");
	}
	dtt_dtd_stop(&dd, SIGTERM);

	/* 2. Replay, twice, and through dtrecord and btrace. */
	dtt_tag("replay");
	{
		char *extra[] = { "--replay", path("live.rec"), NULL };
		char *rec[] = { (char *)dtrecord_path, "-f", dd.dd_dev, "-o",
		    path("again.rec"), "-n", "30", "-F", "execname",
		    "interval:hz:200", NULL };
		char *bt[] = { (char *)btrace_path, "-d", dd.dd_dev,
		    path("count.bt"), NULL };

		if (!start(extra))
			goto out;
		na = read_replay(2, DTEVT_EXECNAME, a, NEV, &nreads);
		nb = read_replay(2, DTEVT_EXECNAME, b, NEV, &nreads);
		dtt_check(na == NEV && nb == NEV, "two opens read %d "
		    "records each: %ld, %ld", NEV, na, nb);
		dtt_check(memcmp(a, b, sizeof(a)) == 0,
		    "the two replays are byte-identical");
		dtt_check(a[0].dtev_pbn == 2 && strcmp(a[0].dtev_comm, "dtd") ==
		    0, "recorded probe and comm: %u %s", a[0].dtev_pbn,
		    a[0].dtev_comm);
		/* evtflags not asked for are zeroed, as the core does. */
		nb = read_replay(2, 0, b, NEV, &nreads);
		dtt_check(nb == NEV && b[0].dtev_comm[0] == '\0' &&
		    b[0].dtev_tsp.tv_sec == a[0].dtev_tsp.tv_sec &&
		    b[NEV - 1].dtev_tsp.tv_nsec == a[NEV - 1].dtev_tsp.tv_nsec,
		    "without EXECNAME comm is empty, the rest as recorded");

		dtt_check(run(rec, NULL), "dtrecord on the replay");
		live = recording(path("live.rec"));
		again = recording(path("again.rec"));
		dtt_check(live != NULL && again != NULL &&
		    strcmp(live, again) == 0,
		    "recording the replay gives the recording back");
		free(live);
		free(again);

		dtt_check(run(bt, path("replay.out")), "btrace on the replay");
		out_live = get_file(path("live.out"));
		out_replay = get_file(path("replay.out"));
		dtt_check(out_live != NULL && out_replay != NULL &&
		    strstr(out_live, ", dtd]: 20") != NULL &&
		    strcmp(out_live, out_replay) == 0,
		    "btrace's output on the replay is the live one:\n%s---\n%s",
		    out_live ? out_live : "(none)",
		    out_replay ? out_replay : "(none)");
		free(out_live);
		free(out_replay);
		dtt_dtd_stop(&dd, SIGTERM);
	}

	/* 3. Pacing by steps; strict. */
	dtt_tag("step");
	{
		char *extra[] = { "--replay", path("live.rec"),
		    "--replay-pace", "step", NULL };

		if (!start(extra))
			goto out;
		na = read_replay(2, DTEVT_EXECNAME, b, 5, &nreads);
		dtt_check(na == 5 && nreads == 5, "one record a read: %ld "
		    "in %zu reads", na, nreads);
		dtt_check(memcmp(a, b, 5 * sizeof(b[0])) == 0,
		    "the same records as fast");
		dtt_dtd_stop(&dd, SIGTERM);
	}
	dtt_tag("strict");
	{
		char *extra[] = { "--replay", path("live.rec"),
		    "--replay-strict", NULL };

		if (!start(extra))
			goto out;
		na = read_replay(2, DTEVT_EXECNAME | DTEVT_USTACK, b, 1,
		    &nreads);
		error = errno;
		dtt_check(na == -1 && error == EINVAL,
		    "an enable the file did not list: EINVAL (%d)", error);
		fd = dtt_open(dd.dd_dev);
		dtt_check(fd != -1 && dtt_enable(fd, 2, DTEVT_EXECNAME,
		    5000000) == 0, "the recorded enable is accepted");
		if (fd != -1)
			close(fd);
		dtt_dtd_stop(&dd, SIGTERM);
		out = get_file(dd.dd_err);
		dtt_check(out != NULL && strstr(out, "unexpected "
		    "DTIOCPRBENABLE pbn 2 evtflags 0x3") != NULL,
		    "dtd says which ioctl it did not expect");
		free(out);
	}

	/* 4. By hand. */
	dtt_tag("hand");
	{
		char *extra[] = { "--replay", path("hand.rec"), NULL };
		char *bt[] = { (char *)btrace_path, "-d", dd.dd_dev,
		    path("hand.bt"), NULL };

		dtt_check(put_file(path("hand.rec"), hand_rec) &&
		    put_file(path("hand.bt"), hand_bt), "files");
		if (!start(extra))
			goto out;
		dtt_check(run(bt, path("hand.out")), "btrace on the file");
		out = get_file(path("hand.out"));
		dtt_check(out != NULL && strcmp(out, hand_out) == 0,
		    "btrace prints the written events:\n%s",
		    out ? out : "(none)");
		free(out);
		dtt_dtd_stop(&dd, SIGTERM);
	}
out:
	dtt_dtd_fini(&dd, true);
	return dtt_done();
}
