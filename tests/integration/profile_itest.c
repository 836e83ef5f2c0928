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

/* The harness side of the profile tests: see profile_itest.h. */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profile_itest.h"

#define READY_MS	20000	/* dtd writes a 6 MB ksyms image first */
#define EXIT_MS		20000

const char	*pt_dtd;
char		 pt_dir[PT_PATHMAX - 16] = "/tmp/profile_itest.XXXXXX";
char		 pt_dev[PT_PATHMAX];
char		 pt_ksyms[PT_PATHMAX];

static unsigned int	pt_npass, pt_nfail;

bool
check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (ok)
		pt_npass++;
	else
		pt_nfail++;
	return ok;
}

int
pt_done(void)
{
	printf("%u passed, %u failed\n", pt_npass, pt_nfail);
	return pt_nfail != 0 || pt_npass == 0;
}

uint64_t
pt_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t
pt_evt_ns(const struct dt_evt *ev)
{
	return (uint64_t)ev->dtev_tsp.tv_sec * NSEC_PER_SEC +
	    (uint64_t)ev->dtev_tsp.tv_nsec;
}

/* Wait up to ms for pid to exit: its status, or -1 on timeout. */
static int
wait_exit(pid_t pid, int ms)
{
	struct pollfd pfd;
	int pidfd, status;

	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) != -1) {
		pfd.fd = pidfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, ms) != 1) {
			close(pidfd);
			return -1;
		}
		close(pidfd);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

pid_t
pt_start_dtd(const char *extra, char *errbuf, size_t errlen)
{
	char fdarg[16], errpath[PT_PATHMAX + 16], ingest[PT_PATHMAX + 16];
	char *argv[16];
	struct pollfd pfd;
	char buf[16];
	int rfd[2], efd, n = 0;
	ssize_t len = 0, m = 0;
	pid_t pid;

	if (errlen > 0)
		errbuf[0] = '\0';
	/* A file, not a pipe: dtd may still write when we stopped reading. */
	snprintf(errpath, sizeof(errpath), "%s/dtd.err", pt_dir);
	efd = open(errpath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (efd == -1 || pipe2(rfd, O_CLOEXEC) == -1)
		return -1;
	snprintf(fdarg, sizeof(fdarg), "%d", rfd[1]);
	argv[n++] = (char *)pt_dtd;
	argv[n++] = "--foreground";
	argv[n++] = "--frontend";
	argv[n++] = "fuse";
	argv[n++] = "--device";
	argv[n++] = pt_dev;
	argv[n++] = "--ksyms";
	argv[n++] = pt_ksyms;
	argv[n++] = "--ready-fd";
	argv[n++] = fdarg;
	/* Our own tracee socket too: another dtd may serve the default. */
	snprintf(ingest, sizeof(ingest), "%s/ingest.sock", pt_dir);
	argv[n++] = "--ingest";
	argv[n++] = ingest;
	if (extra != NULL)
		argv[n++] = (char *)extra;
	argv[n] = NULL;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		fcntl(rfd[1], F_SETFD, 0);
		dup2(efd, STDERR_FILENO);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(rfd[1]);
	pfd.fd = rfd[0];
	pfd.events = POLLIN;
	/* EOF (dtd exited) also ends the poll. */
	if (pid != -1 && poll(&pfd, 1, READY_MS) == 1)
		len = read(rfd[0], buf, sizeof(buf));
	close(rfd[0]);
	if (pid != -1 && len == 6 && memcmp(buf, "ready\n", 6) == 0) {
		close(efd);
		return pid;
	}
	if (pid != -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (errlen > 1 && lseek(efd, 0, SEEK_SET) == 0 &&
	    (m = read(efd, errbuf, errlen - 1)) < 0)
		m = 0;
	if (errlen > 0)
		errbuf[m] = '\0';
	close(efd);
	return -1;
}

bool
pt_stop_dtd(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	if ((status = wait_exit(pid, EXIT_MS)) == -1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return false;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int
pt_open(void)
{
	int fd;

	if ((fd = open(pt_dev, O_RDONLY | O_CLOEXEC)) == -1)
		check(false, "open %s: %s", pt_dev, strerror(errno));
	return fd;
}

uint32_t
pt_profile_pbn(int fd)
{
	struct dtioc_probe pr;
	struct dtioc_probe_info *pi;
	uint32_t pbn = 0;
	size_t i;

	memset(&pr, 0, sizeof(pr));
	if (ioctl(fd, DTIOCGPLIST, &pr) == -1 || pr.dtpr_size == 0)
		return 0;
	if ((pi = malloc(pr.dtpr_size)) == NULL)
		return 0;
	pr.dtpr_probes = pi;
	if (ioctl(fd, DTIOCGPLIST, &pr) == 0) {
		for (i = 0; i < pr.dtpr_size / sizeof(*pi); i++)
			if (strcmp(pi[i].dtpi_prov, "profile") == 0 &&
			    strcmp(pi[i].dtpi_func, "hz") == 0 &&
			    strcmp(pi[i].dtpi_name, "97") == 0)
				pbn = pi[i].dtpi_pbn;
	}
	free(pi);
	return pbn;
}

int
pt_enable(int fd, uint32_t pbn, uint64_t flags, uint64_t nsecs)
{
	struct dtioc_req rq;

	memset(&rq, 0, sizeof(rq));
	rq.dtrq_pbn = pbn;
	rq.dtrq_evtflags = flags;
	rq.dtrq_nsecs = nsecs;
	return ioctl(fd, DTIOCPRBENABLE, &rq) == -1 ? errno : 0;
}

int
pt_record(int fd, int on)
{
	return ioctl(fd, DTIOCRECORD, &on) == -1 ? errno : 0;
}

struct pt_reader {
	int		 pr_fd;
	struct pt_evs	*pr_out;
	uint64_t	 pr_deadline;
	int		 pr_error;
};

static void *
pt_reader(void *arg)
{
	struct pt_reader *r = arg;
	struct pt_evs *o = r->pr_out;
	struct dt_evt *n;
	ssize_t len;

	while (pt_realtime() < r->pr_deadline) {
		if (o->pe_cap - o->pe_n < 4096) {
			n = reallocarray(o->pe_evs, o->pe_cap + 65536,
			    sizeof(*n));
			if (n == NULL) {
				r->pr_error = ENOMEM;
				break;
			}
			o->pe_evs = n;
			o->pe_cap += 65536;
		}
		len = read(r->pr_fd, o->pe_evs + o->pe_n,
		    4096 * sizeof(struct dt_evt));
		if (len == -1) {
			r->pr_error = errno;
			break;
		}
		if (len % (ssize_t)sizeof(struct dt_evt) != 0) {
			r->pr_error = EPROTO;
			break;
		}
		o->pe_n += (size_t)len / sizeof(struct dt_evt);
	}
	return NULL;
}

int
pt_collect(const int *fds, struct pt_evs *out, int n, uint64_t deadline)
{
	struct pt_reader r[8];
	pthread_t t[8];
	int i, error = 0;

	if (n > 8)
		return EINVAL;
	for (i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		r[i].pr_fd = fds[i];
		r[i].pr_out = &out[i];
		r[i].pr_deadline = deadline;
		r[i].pr_error = 0;
		if (pthread_create(&t[i], NULL, pt_reader, &r[i]) != 0)
			return EAGAIN;
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		if (r[i].pr_error != 0)
			error = r[i].pr_error;
	}
	return error;
}

static int
ksym_cmp(const void *a, const void *b)
{
	const struct pt_ksym *x = a, *y = b;

	return (x->pk_addr > y->pk_addr) - (x->pk_addr < y->pk_addr);
}

struct pt_ksym *
pt_kallsyms(size_t *np)
{
	struct pt_ksym *ks = NULL, *nk;
	size_t n = 0, cap = 0;
	char line[512], name[256], type;
	unsigned long long addr;
	FILE *fp;

	if ((fp = fopen("/proc/kallsyms", "re")) == NULL)
		return NULL;
	while (fgets(line, sizeof(line), fp) != NULL) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    strchr("tTwW", type) == NULL)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			if ((nk = reallocarray(ks, cap, sizeof(*ks))) == NULL)
				break;
			ks = nk;
		}
		ks[n].pk_addr = addr;
		ks[n].pk_name = strdup(name);
		ks[n].pk_module = strchr(line, '[') != NULL;
		n++;
	}
	fclose(fp);
	qsort(ks, n, sizeof(*ks), ksym_cmp);
	*np = n;
	return ks;
}

const struct pt_ksym *
pt_ksym_lookup(const struct pt_ksym *ks, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks[mid].pk_addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? NULL : &ks[lo - 1];
}

pid_t
pt_spawn(char *const argv[], int *outfd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	fflush(stdout);
	if ((pid = fork()) == 0) {
		dup2(p[1], STDOUT_FILENO);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	*outfd = p[0];
	return pid;
}

uint64_t
pt_cpu_ns(pid_t pid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	if (fscanf(fp, "%llu", &ns) != 1)
		ns = 0;
	fclose(fp);
	return ns;
}
