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
 * pidmaps_itest DTD DTRUN TRACEE LIBDTSHIM
 *
 * The mappings of a traced process after it exited (design decision 9):
 * a private dtd, write(2) entries recorded with user stacks, the tracee
 * (syscall_tracee loop) run under dtrun, made to write, quit and reaped.
 * Only then are its events read, and DTIOCRDVNODE on a frame of its stack
 * must answer from what dtd kept (start, offset, file size; ENOENT where
 * nothing is mapped), and so must the ingest socket's maps query, which
 * names the files (the tracee's own executable among them), for root
 * only.  Then this program runs again as a client with the client shim
 * preloaded (pidmaps_itest --client DEV PID VA), whose DTIOCRDVNODE must
 * come back with a descriptor of the file, named by dtd.  Like
 * shim_test, it is built as the shim is, sanitized or not.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "syscall_util.h"
#include "udt_mapsq.h"


struct qmap {
	struct udt_maps_ent	e;
	char			path[UDT_MAPS_PATHMAX];
};

struct qmaps {
	struct qmap	*qm_q;
	int		 qm_n, qm_max;
};

static int
maps_one(void *arg, const struct udt_maps_ent *e, const char *path)
{
	struct qmaps *qm = arg;

	if (qm->qm_n == qm->qm_max)
		return 1;
	qm->qm_q[qm->qm_n].e = *e;
	snprintf(qm->qm_q[qm->qm_n].path, sizeof(qm->qm_q[0].path), "%s",
	    path);
	qm->qm_n++;
	return 0;
}

/*
 * The maps query for pid on sock, through the client btrace and the shim
 * use: entries (up to max) or -1 with the refusal's errno in *error.
 */
static int
maps_query(const char *sock, pid_t pid, struct qmap *q, int max, int *error)
{
	struct qmaps qm = { q, 0, max };

	if (udt_mapsq(sock, pid, maps_one, &qm) == -1) {
		*error = errno;
		return -1;
	}
	*error = 0;
	return qm.qm_n;
}

/* The maps query from a child that gave up root: the errno refused. */
static int
maps_query_unprivileged(const char *sock, pid_t pid)
{
	struct qmap q;
	pid_t kid;
	int error, status;

	if ((kid = fork()) == -1)
		return -1;
	if (kid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(255);
		if (maps_query(sock, pid, &q, 1, &error) >= 0)
			_exit(0);
		_exit(error & 0xff);
	}
	status = dtt_wait(kid, DTT_EXIT_MS);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The parent query from a child that gave up root: the errno, or 0. */
static int
kin_query_unprivileged(const char *sock, pid_t pid)
{
	uint64_t start;
	pid_t kid, ppid;
	int status;

	if ((kid = fork()) == -1)
		return -1;
	if (kid == 0) {
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(255);
		if (udt_kinq(sock, pid, &ppid, &start) == 0)
			_exit(0);
		_exit(errno & 0xff);
	}
	status = dtt_wait(kid, DTT_EXIT_MS);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int
rdvn(int fd, pid_t pid, unsigned long va, struct dtioc_rdvn *dtrv)
{
	memset(dtrv, 0, sizeof(*dtrv));
	dtrv->dtrv_pid = pid;
	dtrv->dtrv_va = (caddr_t)va;
	return ioctl(fd, DTIOCRDVNODE, dtrv) == 0 ? 0 : errno;
}

/* With the shim preloaded: RDVNODE gives a descriptor of the file. */
static int
shim_client(const char *dev, pid_t pid, unsigned long va)
{
	struct dtioc_rdvn dtrv;
	struct stat st;
	char magic[4];
	int fd, r;

	dtt_tag("shim");
	if ((fd = dtt_open(dev)) == -1)
		return 1;
	r = rdvn(fd, pid, va, &dtrv);
	dtt_check(r == 0 && dtrv.dtrv_fd >= 0, "RDVNODE of the exited pid "
	    "through the shim: a descriptor (%s, fd %d)", strerror(r),
	    dtrv.dtrv_fd);
	if (r == 0 && dtrv.dtrv_fd >= 0)
		dtt_check(fstat(dtrv.dtrv_fd, &st) == 0 &&
		    (uint64_t)st.st_size == dtrv.dtrv_len &&
		    pread(dtrv.dtrv_fd, magic, 4, 0) == 4 &&
		    memcmp(magic, "\177ELF", 4) == 0,
		    "of an ELF file of dtrv_len bytes");
	close(fd);
	return dtt_done();
}

/* Run ourselves as the shim's client; 0 when all its checks passed. */
static int
shim_run(const char *self, const char *shim, struct dtt_dtd *dd, pid_t pid,
    unsigned long va)
{
	char spid[16], sva[32], **cenv, *cargv[6], *pre;
	pid_t kid;
	int status = -1;

	/* Ours (sanitizer options too), with the shim and this dtd. */
	if (setenv(UDT_SOCKET_ENV, dd->dd_sock, 1) != 0 ||
	    (cenv = dtt_preload_env(shim, &pre)) == NULL)
		return -1;
	snprintf(spid, sizeof(spid), "%d", (int)pid);
	snprintf(sva, sizeof(sva), "%#lx", va);
	cargv[0] = (char *)self;
	cargv[1] = "--client";
	cargv[2] = dd->dd_dev;
	cargv[3] = spid;
	cargv[4] = sva;
	cargv[5] = NULL;
	if ((kid = dtt_spawn(cargv, cenv, -1, -1, -1, -1)) != -1 &&
	    (status = dtt_wait(kid, 60000)) == -1)
		dtt_stop(kid, SIGKILL, DTT_EXIT_MS);
	free(pre);
	free(cenv);
	return status != -1 && dtt_exited0(status) ? 0 : -1;
}

int
main(int argc, char *argv[])
{
	static struct qmap q[256];
	static struct dt_evt evs[1024];
	struct dtt_dtd dd;
	struct dtioc_probe_info *pi = NULL;
	struct dtioc_rdvn dtrv, none;
	struct stat st;
	size_t npi;
	char line[128], exe[PATH_MAX], *targv[7];
	unsigned long pc = 0;
	pid_t tpid = -1, epid = 0;
	uint32_t pbn;
	long n, k;
	int fd = -1, in[2], out[2], status, r, nq, i, error, found, self;
	struct timespec now;
	uint64_t kstart;
	pid_t kppid;
	int kr;
	FILE *tin = NULL, *tout = NULL;

	if (argc == 5 && strcmp(argv[1], "--client") == 0)
		return shim_client(argv[2], (pid_t)atoi(argv[3]),
		    strtoul(argv[4], NULL, 0));
	if (argc != 5) {
		fprintf(stderr,
		    "usage: pidmaps_itest DTD DTRUN TRACEE LIBDTSHIM\n");
		return 2;
	}
	if (realpath(argv[3], exe) == NULL)
		err(2, "%s", argv[3]);
	if (st_setup(&dd, "udt-pidmaps", argv[1], NULL, &fd, &pi, &npi) != 0)
		goto out;
	if ((pbn = dtt_pbn(pi, npi, "syscall", "sys%4", "entry")) == 0 ||
	    dtt_enable(fd, pbn, DTEVT_USTACK | DTEVT_EXECNAME, 0) != 0 ||
	    dtt_record(fd, 1) != 0) {
		dtt_check(0, "device set up: write entries with user stacks");
		goto out;
	}

	/* The tracee writes, quits and is reaped before any event is read. */
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		goto out;
	targv[0] = argv[2];
	targv[1] = "-s";
	targv[2] = dd.dd_sock;
	targv[3] = argv[3];
	targv[4] = "loop";
	targv[5] = "0";
	targv[6] = NULL;
	tpid = dtt_spawn(targv, NULL, in[0], out[1], -1, -1);
	close(in[0]);
	close(out[1]);
	tin = fdopen(in[1], "w");
	tout = fdopen(out[0], "r");
	if (tpid == -1 || tin == NULL || tout == NULL)
		goto out;
	r = fgets(line, sizeof(line), tout) != NULL &&
	    strcmp(line, "ready\n") == 0;
	fprintf(tin, "w 3\nq\n");
	fflush(tin);
	status = dtt_wait(tpid, DTT_EXIT_MS);
	tpid = -1;
	if (!dtt_check(r && status != -1 && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 10, "tracee wrote and exited (%#x)", status))
		goto out;

	/* Its events: take a user stack frame of its own. */
	while (pc == 0 && (n = dtt_read(fd, evs, 1024, 5000)) > 0)
		for (k = 0; k < n; k++)
			if (strcmp(evs[k].dtev_comm, "syscall_tracee") == 0 &&
			    evs[k].dtev_ustack.st_count > 0 &&
			    evs[k].dtev_ustack.st_pc[0] != 0) {
				epid = evs[k].dtev_pid;
				pc = evs[k].dtev_ustack.st_pc[0];
				break;
			}
	if (!dtt_check(pc != 0, "a write with a user stack from pid %d",
	    (int)epid))
		goto out;
	dtt_check(kill(epid, 0) == -1 && errno == ESRCH,
	    "pid %d is gone", (int)epid);

	r = rdvn(fd, epid, pc, &dtrv);
	dtt_check(r == 0, "RDVNODE of an exited tracee's frame %#lx: %s", pc,
	    strerror(r));
	if (r == 0)
		dtt_check((unsigned long)dtrv.dtrv_start <= pc &&
		    dtrv.dtrv_len > 0 && dtrv.dtrv_fd == -1 &&
		    (unsigned long)dtrv.dtrv_offset + pc -
		    (unsigned long)dtrv.dtrv_start < dtrv.dtrv_len,
		    "start %p <= va, offset %p + (va - start) in the file "
		    "(%zu bytes), fd -1", dtrv.dtrv_start, dtrv.dtrv_offset,
		    dtrv.dtrv_len);
	r = rdvn(fd, epid, 4096, &none);
	dtt_check(r == ENOENT, "RDVNODE of nothing mapped: ENOENT (%s)",
	    strerror(r));

	nq = maps_query(dd.dd_sock, epid, q, 256, &error);
	dtt_check(nq > 0, "maps query: %d file mappings (%s)", nq,
	    strerror(error));
	found = self = 0;
	for (i = 0; i < nq; i++) {
		if (strcmp(q[i].path, exe) == 0)
			self = 1;
		if (pc >= q[i].e.ume_start && pc < q[i].e.ume_end &&
		    stat(q[i].path, &st) == 0 &&
		    (uint64_t)st.st_size == q[i].e.ume_size &&
		    (uint64_t)st.st_size == dtrv.dtrv_len &&
		    q[i].e.ume_start == (uint64_t)(uintptr_t)dtrv.dtrv_start)
			found = 1;
	}
	dtt_check(found, "the frame's mapping named, same start and size as "
	    "RDVNODE's");
	dtt_check(self, "the tracee's executable among them (%s)", exe);
	nq = maps_query(dd.dd_sock, 0x3ffffff, q, 1, &error);
	dtt_check(nq == -1 && error == ESRCH, "maps query, no such pid: ESRCH "
	    "(%s)", strerror(error));
	r = maps_query_unprivileged(dd.dd_sock, epid);
	dtt_check(r == EPERM, "maps query from uid 65534: EPERM (%d)", r);

	/* Its parent, as dtd noted it at its hello (UDT_HELLO_KIN). */
	kr = udt_kinq(dd.dd_sock, epid, &kppid, &kstart);
	clock_gettime(CLOCK_REALTIME, &now);
	dtt_check(kr == 0 && kppid == getpid() && kstart > 0 &&
	    kstart <= (uint64_t)now.tv_sec * 1000000000ULL +
	    (uint64_t)now.tv_nsec, "parent query of the exited tracee: this "
	    "test, %d (%d, started %llu)", (int)getpid(),
	    kr == 0 ? (int)kppid : -errno, (unsigned long long)kstart);
	kr = udt_kinq(dd.dd_sock, 0x3ffffff, &kppid, &kstart);
	dtt_check(kr == -1 && errno == ENOENT, "parent query, no such pid: "
	    "ENOENT (%s)", kr == 0 ? "answered" : strerror(errno));
	kr = udt_kinq(dd.dd_sock, -5, &kppid, &kstart);
	dtt_check(kr == -1 && errno == EINVAL, "parent query of pid -5: "
	    "EINVAL (%s)", kr == 0 ? "answered" : strerror(errno));
	r = kin_query_unprivileged(dd.dd_sock, epid);
	dtt_check(r == ENOENT, "parent query of root's tracee from uid "
	    "65534: ENOENT (%d)", r);
	fflush(stdout);
	dtt_check(shim_run(argv[0], argv[4], &dd, epid, pc) == 0,
	    "the shim's client passed");
out:
	if (tin != NULL)
		fclose(tin);
	if (tout != NULL)
		fclose(tout);
	if (tpid > 0)
		dtt_stop(tpid, SIGKILL, DTT_EXIT_MS);
	st_teardown(&dd, fd);
	free(pi);
	return dtt_done();
}
