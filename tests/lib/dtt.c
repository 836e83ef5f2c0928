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

/* The integration tests' shared helpers: see dtt.h. */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <dirent.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"

extern char	**environ;

/* glibc before 2.35 names the field only by its union member. */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id	_sigev_un._tid
#endif

#define DTT_ARGMAX	64	/* dtd's argv, ours and extra */
#define DTT_REARM_MS	10	/* watchdog period after its first expiry */

unsigned int		 dtt_npass, dtt_nfail;
static const char	*dtt_tagstr;

void
dtt_tag(const char *tag)
{
	dtt_tagstr = tag;
}

bool
dtt_check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", ok ? "ok" : "FAIL");
	if (dtt_tagstr != NULL)
		printf("%s: ", dtt_tagstr);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	/* Children share our stdout: keep the lines in order. */
	fflush(stdout);
	if (ok)
		dtt_npass++;
	else
		dtt_nfail++;
	return ok;
}

int
dtt_done(void)
{
	printf("%u passed, %u failed\n", dtt_npass, dtt_nfail);
	fflush(stdout);
	return dtt_nfail == 0 && dtt_npass > 0 ? 0 : 1;
}

uint64_t
dtt_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t
dtt_now_ms(void)
{
	return dtt_clock_ns(CLOCK_MONOTONIC) / 1000000;
}

/* Milliseconds left until deadline, for poll(2); 0 once it passed. */
static int
dtt_left_ms(uint64_t deadline)
{
	uint64_t now = dtt_now_ms();

	return now >= deadline ? 0 : (int)(deadline - now);
}

/*
 * The watchdog: SIGALRM to the calling thread after ms, then every
 * DTT_REARM_MS, so a signal that lands just before the blocking call
 * starts is followed by one that lands inside it.  The handler does
 * nothing: its only job is to make the call fail with EINTR, hence no
 * SA_RESTART.  Callers: dtt_read() and dtt_wait(), around one blocking
 * call each.
 */
static void
dtt_watch_handler(int sig)
{
	(void)sig;
}

static int
dtt_watch_arm(timer_t *tp, sigset_t *oset, unsigned int ms)
{
	struct itimerspec its;
	struct sigaction sa;
	struct sigevent sev;
	sigset_t set;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = dtt_watch_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) == -1)
		return -1;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev.sigev_notify_thread_id = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, tp) == -1)
		return -1;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = ms / 1000;
	its.it_value.tv_nsec = (long)(ms % 1000) * 1000000 + 1;
	its.it_interval.tv_nsec = DTT_REARM_MS * 1000000L;
	if (timer_settime(*tp, 0, &its, NULL) == -1) {
		timer_delete(*tp);
		return -1;
	}
	/* A thread that blocks SIGALRM would sleep through it. */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &set, oset);
	return 0;
}

static void
dtt_watch_disarm(timer_t t, const sigset_t *oset)
{
	int saved = errno;

	timer_delete(t);
	pthread_sigmask(SIG_SETMASK, oset, NULL);
	errno = saved;
}

/* dl_iterate_phdr(): the path of the loaded libasan, if any. */
static int
dtt_asan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (info->dlpi_name == NULL ||
	    strstr(info->dlpi_name, "libasan.so") == NULL)
		return 0;
	snprintf(arg, PATH_MAX, "%s", info->dlpi_name);
	return 1;
}

char **
dtt_preload_env(const char *preload, char **pre)
{
	char asan[PATH_MAX] = "", **env;
	size_t n, i, j;
	int rc;

	*pre = NULL;
	for (n = 0; environ[n] != NULL; n++)
		continue;
	if ((env = calloc(n + 2, sizeof(*env))) == NULL)
		return NULL;
	for (i = j = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			env[j++] = environ[i];
	if (preload != NULL) {
		dl_iterate_phdr(dtt_asan_cb, asan);
		if (asan[0] != '\0')
			rc = asprintf(pre, "LD_PRELOAD=%s:%s", asan, preload);
		else
			rc = asprintf(pre, "LD_PRELOAD=%s", preload);
		if (rc == -1) {
			*pre = NULL;
			free(env);
			return NULL;
		}
		env[j++] = *pre;
	}
	env[j] = NULL;
	return env;
}

pid_t
dtt_spawn(char *const argv[], char *const env[], int in, int out, int err,
    int keep)
{
	static const char msg[] = ": exec failed\n";
	const int from[3] = { in, out, err };
	pid_t pid;
	int i;

	/* Unwritten output would be written twice, once by the child. */
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) != 0)
		return pid;

	/* The child: async-signal-safe calls only, we may have threads. */
	for (i = 0; i < 3; i++) {
		if (from[i] < 0)
			continue;
		if (from[i] == i)
			fcntl(i, F_SETFD, 0);
		else if (dup2(from[i], i) == -1)
			_exit(126);
	}
	if (keep >= 0)
		fcntl(keep, F_SETFD, 0);
	if (env != NULL)
		execve(argv[0], argv, env);
	else
		execv(argv[0], argv);
	(void)!write(STDERR_FILENO, argv[0], strlen(argv[0]));
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(127);
}

int
dtt_wait(pid_t pid, int ms)
{
	uint64_t deadline = dtt_now_ms() + (uint64_t)(ms > 0 ? ms : 0);
	struct pollfd pfd;
	sigset_t oset;
	timer_t t;
	int pidfd, status, n;
	pid_t r;

	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) != -1) {
		pfd.fd = pidfd;
		pfd.events = POLLIN;
		do
			n = poll(&pfd, 1, dtt_left_ms(deadline));
		while (n == -1 && errno == EINTR);
		close(pidfd);
		if (n != 1) {
			errno = ETIMEDOUT;
			return -1;
		}
		do
			r = waitpid(pid, &status, 0);
		while (r == -1 && errno == EINTR);
		return r == pid ? status : -1;
	}
	if (errno != ENOSYS)
		return -1;

	/* No pidfd (Linux < 5.3): a blocking waitpid under the watchdog. */
	if (dtt_watch_arm(&t, &oset, (unsigned int)dtt_left_ms(deadline)) ==
	    -1)
		return -1;
	for (;;) {
		if ((r = waitpid(pid, &status, 0)) == pid)
			break;
		if (r == -1 && errno == EINTR && dtt_left_ms(deadline) > 0)
			continue;
		if (r == -1 && errno == EINTR)
			errno = ETIMEDOUT;
		break;
	}
	dtt_watch_disarm(t, &oset);
	return r == pid ? status : -1;
}

int
dtt_run_capture(char *const argv[], int ms, const char *file, bool errs,
    char *out, size_t len)
{
	size_t got = 0;
	ssize_t r;
	pid_t pid;
	int fd, status;

	out[0] = '\0';
	if ((fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		return -1;
	pid = dtt_spawn(argv, NULL, -1, fd, errs ? fd : -1, -1);
	status = pid == -1 ? -1 : dtt_wait(pid, ms);
	if (pid != -1 && status == -1)
		dtt_stop(pid, SIGTERM, DTT_EXIT_MS);
	while (got < len - 1 && (r = pread(fd, out + got, len - 1 - got,
	    (off_t)got)) > 0)
		got += (size_t)r;
	out[got] = '\0';
	close(fd);
	unlink(file);
	return status;
}

int
dtt_stop(pid_t pid, int sig, int ms)
{
	int status;

	if (pid <= 0) {
		errno = ESRCH;
		return -1;
	}
	kill(pid, sig);
	if ((status = dtt_wait(pid, ms)) != -1)
		return status;
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		continue;
	errno = ETIMEDOUT;
	return -1;
}

bool
dtt_exited0(int status)
{
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int
dtt_dtd_init(struct dtt_dtd *dd, const char *name)
{
	memset(dd, 0, sizeof(*dd));
	if ((size_t)snprintf(dd->dd_dir, sizeof(dd->dd_dir), "/tmp/%s.XXXXXX",
	    name) >= sizeof(dd->dd_dir)) {
		dd->dd_dir[0] = '\0';
		errno = ENAMETOOLONG;
		return -1;
	}
	/* 0755: dtd's clients, and the tracees, may run as anyone. */
	if (mkdtemp(dd->dd_dir) == NULL || chmod(dd->dd_dir, 0755) == -1) {
		dd->dd_dir[0] = '\0';
		return -1;
	}
	snprintf(dd->dd_dev, sizeof(dd->dd_dev), "%s/dt", dd->dd_dir);
	snprintf(dd->dd_sock, sizeof(dd->dd_sock), "%s/ingest.sock",
	    dd->dd_dir);
	snprintf(dd->dd_ksyms, sizeof(dd->dd_ksyms), "%s/ksyms", dd->dd_dir);
	snprintf(dd->dd_err, sizeof(dd->dd_err), "%s/dtd.err", dd->dd_dir);
	return 0;
}

struct dtioc_filter_term
dtt_term(uint8_t op, uint8_t field, int64_t val, const char *str)
{
	struct dtioc_filter_term t;

	memset(&t, 0, sizeof(t));
	t.dtft_op = op;
	t.dtft_field = field;
	t.dtft_val = val;
	if (str != NULL)
		snprintf(t.dtft_str, sizeof(t.dtft_str), "%s", str);
	return t;
}

/*
 * Read dtd's ready pipe until a newline, EOF or the deadline: true for
 * exactly "ready\n".  What came, if anything, is left in buf.
 */
static bool
dtt_ready(int fd, char *buf, size_t len, uint64_t deadline, bool *timedout)
{
	struct pollfd pfd;
	size_t got = 0;
	ssize_t n;

	*timedout = false;
	buf[0] = '\0';
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (got < len - 1 && memchr(buf, '\n', got) == NULL) {
		n = poll(&pfd, 1, dtt_left_ms(deadline));
		if (n == -1 && errno == EINTR)
			continue;
		if (n != 1) {
			*timedout = n == 0;
			break;
		}
		if ((n = read(fd, buf + got, len - 1 - got)) == -1 &&
		    errno == EINTR)
			continue;
		if (n <= 0)
			break;		/* EOF: dtd exited or closed it */
		got += (size_t)n;
		buf[got] = '\0';
	}
	return strcmp(buf, "ready\n") == 0;
}

pid_t
dtt_dtd_start(struct dtt_dtd *dd, const char *dtd, char *const extra[],
    char *errbuf, size_t errlen)
{
	char fdarg[16], buf[64];
	char *argv[DTT_ARGMAX];
	int rfd[2], efd = -1, n = 0, i, status;
	bool timedout;
	off_t eoff = 0;
	ssize_t m;
	pid_t pid;

	if (errbuf != NULL && errlen > 0)
		errbuf[0] = '\0';
	if (errbuf != NULL) {
		/* A file, not a pipe: dtd may write after we stop reading. */
		efd = open(dd->dd_err, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC,
		    0600);
		if (efd == -1 || (eoff = lseek(efd, 0, SEEK_END)) == -1)
			goto fail;
	}
	if (pipe2(rfd, O_CLOEXEC) == -1)
		goto fail;
	snprintf(fdarg, sizeof(fdarg), "%d", rfd[1]);
	argv[n++] = (char *)dtd;
	argv[n++] = "--foreground";
	argv[n++] = "--frontend";
	argv[n++] = "fuse";
	argv[n++] = "--device";
	argv[n++] = dd->dd_dev;
	argv[n++] = "--ingest";
	argv[n++] = dd->dd_sock;
	argv[n++] = "--ksyms";
	argv[n++] = dd->dd_ksyms;
	argv[n++] = "--ready-fd";
	argv[n++] = fdarg;
	/*
	 * dtd's own default scope (all, as root): a test runs what users
	 * run.  One whose comparison is about the library alone asks for
	 * --syscall-scope launched in extra.
	 */
	for (i = 0; extra != NULL && extra[i] != NULL; i++) {
		if (n == DTT_ARGMAX - 1) {
			close(rfd[0]);
			close(rfd[1]);
			errno = E2BIG;
			goto fail;
		}
		argv[n++] = extra[i];
	}
	argv[n] = NULL;

	pid = dtt_spawn(argv, NULL, -1, -1, efd, rfd[1]);
	close(rfd[1]);
	if (pid == -1) {
		close(rfd[0]);
		goto fail;
	}
	if (dtt_ready(rfd[0], buf, sizeof(buf), dtt_now_ms() + DTT_READY_MS,
	    &timedout)) {
		close(rfd[0]);
		if (efd != -1)
			close(efd);
		dd->dd_pid = pid;
		return pid;
	}
	close(rfd[0]);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		continue;
	buf[strcspn(buf, "\n")] = '\0';
	if (timedout)
		fprintf(stderr, "dtt: dtd %d: no ready line within %d ms\n",
		    (int)pid, DTT_READY_MS);
	else
		fprintf(stderr, "dtt: dtd %d: not ready (it wrote \"%s\"; "
		    "wait status %#x)\n", (int)pid, buf, status);
	if (efd != -1 && errlen > 1) {
		if ((m = pread(efd, errbuf, errlen - 1, eoff)) < 0)
			m = 0;
		errbuf[m] = '\0';
		if (m > 0 && errbuf[m - 1] == '\n')
			errbuf[m - 1] = '\0';
	}
	close(efd);
	errno = timedout ? ETIMEDOUT : ECHILD;
	return -1;

fail:
	i = errno;
	fprintf(stderr, "dtt: cannot start %s: %s\n", dtd, strerror(i));
	if (efd != -1)
		close(efd);
	errno = i;
	return -1;
}

int
dtt_dtd_stop(struct dtt_dtd *dd, int sig)
{
	int status;

	if (dd->dd_pid <= 0) {
		errno = ESRCH;
		return -1;
	}
	status = dtt_stop(dd->dd_pid, sig, DTT_EXIT_MS);
	dd->dd_pid = 0;
	return status;
}

int
dtt_dtd_fini(struct dtt_dtd *dd, bool all)
{
	char path[sizeof(dd->dd_dir) + 256 + 1];
	struct dirent *de;
	DIR *dir;

	if (dd->dd_pid > 0)
		dtt_dtd_stop(dd, SIGTERM);
	if (dd->dd_dir[0] == '\0')
		return 0;
	if (unlink(dd->dd_err) == -1 && errno != ENOENT)
		return -1;
	if (all && (dir = opendir(dd->dd_dir)) != NULL) {
		while ((de = readdir(dir)) != NULL) {
			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dd->dd_dir,
			    de->d_name);
			/*
			 * A killed dtd's mount stays (ENOTCONN to all); it
			 * must go before its file can.  EINVAL if none.
			 */
			(void)umount2(path, MNT_DETACH);
			if (unlink(path) == -1 && errno == EISDIR)
				(void)rmdir(path);
		}
		closedir(dir);
	}
	if (rmdir(dd->dd_dir) == -1)
		return -1;
	dd->dd_dir[0] = '\0';
	return 0;
}

bool
dtt_dtd_logsays(const struct dtt_dtd *dd, const char *what)
{
	char line[512];
	bool found = false;
	FILE *f;

	if ((f = fopen(dd->dd_err, "r")) == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

int
dtt_open(const char *dev)
{
	return open(dev, O_RDONLY | O_CLOEXEC);
}

struct dtioc_probe_info *
dtt_plist(int fd, size_t *n)
{
	struct dtioc_probe_info *pi;
	struct dtioc_probe pr;
	int tries;

	for (tries = 0; tries < 4; tries++) {
		memset(&pr, 0, sizeof(pr));
		if (ioctl(fd, DTIOCGPLIST, &pr) == -1)
			return NULL;
		/* One spare entry: never malloc(0), never NULL for none. */
		if ((pi = calloc(pr.dtpr_size / sizeof(*pi) + 1,
		    sizeof(*pi))) == NULL)
			return NULL;
		pr.dtpr_probes = pi;
		if (ioctl(fd, DTIOCGPLIST, &pr) == 0) {
			*n = pr.dtpr_size / sizeof(*pi);
			return pi;
		}
		free(pi);
		/* ENOSPC: a provider registered probes in between. */
		if (errno != ENOSPC)
			return NULL;
	}
	return NULL;
}

uint32_t
dtt_pbn(const struct dtioc_probe_info *pi, size_t n, const char *prov,
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

uint32_t
dtt_nsys(const struct dtioc_probe_info *pi, size_t n, uint32_t *first)
{
	uint32_t nsys = 0;
	size_t i;

	if (first != NULL)
		*first = 0;
	for (i = 0; i < n; i++) {
		if (strcmp(pi[i].dtpi_prov, "syscall") != 0)
			continue;
		if (first != NULL && nsys == 0)
			*first = pi[i].dtpi_pbn;
		nsys++;
	}
	return nsys;
}

uint32_t
dtt_probe(int fd, const char *prov, const char *func, const char *name)
{
	struct dtioc_probe_info *pi;
	uint32_t pbn;
	size_t n;

	if ((pi = dtt_plist(fd, &n)) == NULL)
		return 0;
	pbn = dtt_pbn(pi, n, prov, func, name);
	free(pi);
	return pbn;
}

int
dtt_enable(int fd, uint32_t pbn, uint64_t evtflags, uint64_t nsecs)
{
	struct dtioc_req rq;

	memset(&rq, 0, sizeof(rq));
	rq.dtrq_pbn = pbn;
	rq.dtrq_evtflags = evtflags;
	rq.dtrq_nsecs = nsecs;
	return ioctl(fd, DTIOCPRBENABLE, &rq) == -1 ? errno : 0;
}

int
dtt_disable(int fd, uint32_t pbn)
{
	struct dtioc_req rq;

	memset(&rq, 0, sizeof(rq));
	rq.dtrq_pbn = pbn;
	return ioctl(fd, DTIOCPRBDISABLE, &rq) == -1 ? errno : 0;
}

int
dtt_record(int fd, int on)
{
	return ioctl(fd, DTIOCRECORD, &on) == -1 ? errno : 0;
}

int
dtt_stats(int fd, struct dtioc_stat *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(fd, DTIOCGSTATS, st) == -1 ? errno : 0;
}

long
dtt_read(int fd, struct dt_evt *evs, size_t max, unsigned int ms)
{
	uint64_t deadline = dtt_now_ms() + ms;
	sigset_t oset;
	ssize_t len;
	timer_t t;

	if (dtt_watch_arm(&t, &oset, ms) == -1)
		return -1;
	for (;;) {
		len = read(fd, evs, max * sizeof(*evs));
		if (len >= 0 || errno != EINTR)
			break;
		/* Someone else's signal before our time: read on. */
		if (dtt_left_ms(deadline) == 0) {
			errno = ETIMEDOUT;
			break;
		}
	}
	dtt_watch_disarm(t, &oset);
	if (len < 0)
		return -1;
	if (len % (ssize_t)sizeof(*evs) != 0) {
		errno = EPROTO;
		return -1;
	}
	return (long)(len / (ssize_t)sizeof(*evs));
}

uint64_t
dtt_cpu_ns(pid_t pid)
{
	char path[320], buf[128];
	struct dirent *de;
	uint64_t sum = 0;
	DIR *d;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/schedstat",
		    (int)pid, de->d_name);
		if ((fp = fopen(path, "re")) == NULL)
			continue;
		if (fgets(buf, sizeof(buf), fp) != NULL)
			sum += strtoull(buf, NULL, 10);
		fclose(fp);
	}
	closedir(d);
	return sum;
}

static int
dtt_busy(pid_t *pids, int ncpu, const char *name, bool idle)
{
	struct sched_param sp = { .sched_priority = 0 };
	cpu_set_t set;
	int p[2], i;
	char c;

	for (i = 0; i < ncpu; i++)
		pids[i] = -1;
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	for (i = 0; i < ncpu; i++) {
		if ((pids[i] = fork()) == 0) {
			volatile unsigned long x = 0;

			CPU_ZERO(&set);
			CPU_SET(i, &set);
			sched_setaffinity(0, sizeof(set), &set);
			/* a word either way: a child that dies says nothing */
			if (idle && sched_setscheduler(0, SCHED_IDLE,
			    &sp) == -1) {
				(void)write(p[1], "e", 1);
				_exit(1);
			}
			prctl(PR_SET_NAME, name);
			if (write(p[1], "x", 1) != 1)
				_exit(1);
			for (;;)
				x++;
		}
	}
	close(p[1]);
	/* Each child says it runs where it should before the load counts. */
	for (i = 0; i < ncpu; i++)
		if (pids[i] == -1 || read(p[0], &c, 1) != 1 || c != 'x')
			break;
	close(p[0]);
	return i == ncpu ? 0 : -1;
}

int
dtt_busy_start(pid_t *pids, int ncpu, const char *name)
{
	return dtt_busy(pids, ncpu, name, false);
}

int
dtt_busy_start_idle(pid_t *pids, int ncpu, const char *name)
{
	return dtt_busy(pids, ncpu, name, true);
}

pid_t
dtt_noise(volatile uint64_t *calls, uint64_t min)
{
	pid_t pid;

	*calls = 0;
	if ((pid = fork()) == 0) {
		for (;;) {
			(void)syscall(SYS_getppid);
			(*calls)++;
		}
	}
	while (pid > 0 && *calls < min)
		sched_yield();
	return pid;
}

void
dtt_busy_stop(pid_t *pids, int ncpu)
{
	int i;

	for (i = 0; i < ncpu; i++)
		if (pids[i] > 0)
			dtt_stop(pids[i], SIGKILL, DTT_EXIT_MS);
}

int
dtt_connect(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		int error = errno;

		close(fd);
		errno = error;
		return -1;
	}
	return fd;
}

long
dtt_line_value(const char *out, const char *key)
{
	const char *p = out;
	size_t n = strlen(key);

	while ((p = strstr(p, key)) != NULL) {
		if (p == out || p[-1] == '\n')
			return atol(p + n);
		p += n;
	}
	return -1;
}

int
dtt_tracee_hello(const char *sock, uint32_t nprobes, struct udt_welcome *w,
    int fds[2])
{
	int fd;

	fds[0] = fds[1] = -1;
	if ((fd = dtt_connect(sock)) == -1)
		return -1;
	return dtt_tracee_greet(fd, nprobes, w, fds);
}

struct udt_ring_hdr *
dtt_ring_map(int ringfd, const struct udt_welcome *w)
{
	struct udt_ring_hdr *rh;

	rh = mmap(NULL, w->uw_ringsize, PROT_READ | PROT_WRITE, MAP_SHARED,
	    ringfd, 0);
	if (rh == MAP_FAILED)
		return NULL;
	__atomic_store_n(&rh->rh_self, (uint64_t)(uintptr_t)rh,
	    __ATOMIC_RELEASE);
	return rh;
}

int
dtt_tracee_greet(int fd, uint32_t nprobes, struct udt_welcome *w,
    int fds[2])
{
	struct udt_hello h = { UDT_MAGIC, UDT_VERSION, nprobes,
	    UDT_HELLO_TRACEE };
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(2 * sizeof(int))];
	} cm;
	struct iovec iov = { w, sizeof(*w) };
	struct msghdr msg;
	struct cmsghdr *c;
	ssize_t n;

	fds[0] = fds[1] = -1;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h) ||
	    (n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC)) < 0)
		goto fail;
	/* Take what came before judging the reply: nothing may leak. */
	for (c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len == CMSG_LEN(2 * sizeof(int)))
			memcpy(fds, CMSG_DATA(c), 2 * sizeof(int));
	if (n == (ssize_t)sizeof(*w) && w->uw_error == 0)
		return fd;
fail:
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	fds[0] = fds[1] = -1;
	close(fd);
	return -1;
}
