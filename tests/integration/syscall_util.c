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

#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "syscall_util.h"

unsigned int	st_nfail, st_npass;

bool
st_check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		st_npass++;
	else
		st_nfail++;
	return ok;
}

int
st_setup(struct st_dtd *sd)
{
	memset(sd, 0, sizeof(*sd));
	snprintf(sd->sd_dir, sizeof(sd->sd_dir), "/tmp/udt-syscall.XXXXXX");
	if (mkdtemp(sd->sd_dir) == NULL) {
		perror("mkdtemp");
		return -1;
	}
	snprintf(sd->sd_sock, sizeof(sd->sd_sock), "%s/ingest.sock",
	    sd->sd_dir);
	return 0;
}

int
st_dtd_start(struct st_dtd *sd, const char *dtd, const char *devname,
    const char *extra)
{
	char fdarg[16], buf[16];
	char *argv[16];
	int p[2], n = 0, fd;
	ssize_t len;
	pid_t pid;

	snprintf(sd->sd_dev, sizeof(sd->sd_dev), "%s/%s", sd->sd_dir, devname);
	if ((fd = open(sd->sd_dev, O_CREAT | O_WRONLY, 0600)) >= 0)
		close(fd);
	if (pipe(p) != 0)
		return -1;
	snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
	argv[n++] = (char *)dtd;
	argv[n++] = "--foreground";
	argv[n++] = "--frontend";
	argv[n++] = "fuse";
	argv[n++] = "--device";
	argv[n++] = sd->sd_dev;
	argv[n++] = "--ingest";
	argv[n++] = sd->sd_sock;
	argv[n++] = "--ready-fd";
	argv[n++] = fdarg;
	if (extra != NULL) {
		argv[n++] = "--ring-size";
		argv[n++] = (char *)extra;
	}
	argv[n] = NULL;
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		close(p[0]);
		execv(dtd, argv);
		_exit(127);
	}
	close(p[1]);
	len = read(p[0], buf, sizeof(buf));
	close(p[0]);
	if (len != 6 || memcmp(buf, "ready\n", 6) != 0) {
		fprintf(stderr, "dtd did not become ready\n");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	sd->sd_pid = pid;
	return 0;
}

int
st_dtd_stop(struct st_dtd *sd, int sig)
{
	int status = -1;

	if (sd->sd_pid <= 0)
		return -1;
	kill(sd->sd_pid, sig);
	while (waitpid(sd->sd_pid, &status, 0) == -1 && errno == EINTR)
		continue;
	sd->sd_pid = 0;
	return status;
}

void
st_cleanup(struct st_dtd *sd)
{
	char cmd[256];

	if (sd->sd_pid > 0)
		st_dtd_stop(sd, SIGTERM);
	if (sd->sd_dir[0] == '\0')
		return;
	/* A dtd killed with SIGKILL leaves its FUSE mount behind. */
	snprintf(cmd, sizeof(cmd), "%s/dt", sd->sd_dir);
	umount2(cmd, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "%s/dt2", sd->sd_dir);
	umount2(cmd, MNT_DETACH);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sd->sd_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", sd->sd_dir);
}

struct dtioc_probe_info *
st_plist(int fd, size_t *n)
{
	struct dtioc_probe pr = { 0, NULL };
	struct dtioc_probe_info *pi;

	if (ioctl(fd, DTIOCGPLIST, &pr) != 0) {
		perror("DTIOCGPLIST");
		return NULL;
	}
	if ((pi = calloc(1, pr.dtpr_size)) == NULL)
		return NULL;
	pr.dtpr_probes = pi;
	if (ioctl(fd, DTIOCGPLIST, &pr) != 0) {
		perror("DTIOCGPLIST");
		free(pi);
		return NULL;
	}
	*n = pr.dtpr_size / sizeof(*pi);
	return pi;
}

uint32_t
st_pbn(const struct dtioc_probe_info *pi, size_t n, const char *prov,
    const char *func, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(pi[i].dtpi_prov, prov) == 0 &&
		    strcmp(pi[i].dtpi_func, func) == 0 &&
		    strcmp(pi[i].dtpi_name, name) == 0)
			return pi[i].dtpi_pbn;
	return 0;
}

int
st_enable(int fd, uint32_t pbn, uint64_t flags)
{
	struct dtioc_req rq;

	memset(&rq, 0, sizeof(rq));
	rq.dtrq_pbn = pbn;
	rq.dtrq_evtflags = flags;
	if (ioctl(fd, DTIOCPRBENABLE, &rq) != 0) {
		fprintf(stderr, "DTIOCPRBENABLE %u: %s\n", pbn,
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
st_record(int fd, int on)
{
	if (ioctl(fd, DTIOCRECORD, &on) != 0) {
		perror("DTIOCRECORD");
		return -1;
	}
	return 0;
}

int
st_stats(int fd, struct dtioc_stat *st)
{
	memset(st, 0, sizeof(*st));
	if (ioctl(fd, DTIOCGSTATS, st) != 0) {
		perror("DTIOCGSTATS");
		return -1;
	}
	return 0;
}

int
st_ingest_stats(const char *sock, struct udt_stats *st)
{
	struct udt_hello h = { UDT_MAGIC, UDT_VERSION, 0, UDT_HELLO_STATS };
	struct sockaddr_un sun;
	int fd, rc = -1;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 &&
	    send(fd, &h, sizeof(h), MSG_NOSIGNAL) == (ssize_t)sizeof(h) &&
	    recv(fd, st, sizeof(*st), MSG_WAITALL) == (ssize_t)sizeof(*st) &&
	    st->us_magic == UDT_MAGIC)
		rc = 0;
	close(fd);
	return rc;
}

static void
st_alarm(int sig)
{
	(void)sig;
}

long
st_read(int fd, struct dt_evt *evs, size_t max, unsigned int ms)
{
	struct sigaction sa;
	struct itimerval it;
	ssize_t len;
	int error;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = st_alarm;	/* no SA_RESTART: read ends, EINTR */
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_usec = (ms % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	len = read(fd, evs, max * sizeof(*evs));
	error = errno;
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	if (len < 0) {
		fprintf(stderr, "read: %s\n", error == EINTR ? "timed out" :
		    strerror(error));
		return -1;
	}
	if (len % sizeof(*evs) != 0) {
		fprintf(stderr, "read: %zd bytes, not whole records\n", len);
		return -1;
	}
	return len / (long)sizeof(*evs);
}

pid_t
st_spawn(char *const argv[], int in, int out)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (in >= 0 && dup2(in, 0) < 0)
		_exit(126);
	if (out >= 0 && dup2(out, 1) < 0)
		_exit(126);
	execv(argv[0], argv);
	_exit(127);
}
