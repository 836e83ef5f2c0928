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
 * dtd: publishes OpenBSD's dt(4) device on Linux.  Parses the options,
 * brings up the device core and the providers' services, serves the
 * device through CUSE or the FUSE-file front end until SIGTERM, SIGINT
 * or SIGHUP, then takes everything down in reverse order.
 *
 * Signals: dtd blocks SIGTERM, SIGINT and SIGHUP before it creates any
 * thread, so every thread inherits the mask and the front end's loop
 * alone takes them, from a signalfd (dt_fe.c): no handler runs, no
 * thread is interrupted at a bad moment, and no signal is lost between
 * a check and a blocking read.
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dt_abi.h"
#include "dt_dev.h"
#include "dt_fe.h"
#include "dt_fesock.h"
#include "dt_inject.h"
#include "dt_ksys.h"
#include "dt_pidmaps.h"
#include "dt_prov_replay.h"
#include "dt_sockfile.h"
#include "dtd.h"

struct dtd_conf dtd_conf = {
	.dcf_device	= "/dev/dt",
	.dcf_frontend	= DTD_FE_AUTO,
	.dcf_group_set	= false,
	.dcf_foreground	= false,
	.dcf_ringsize	= 0,
	.dcf_ready_fd	= -1,
	.dcf_ingest	= "/run/userdt/ingest.sock",
	.dcf_ksyms	= "/dev/ksyms",
	.dcf_profile	= DTD_PROFILE_AUTO,
};

/* Main thread only. */
static int	dtd_daemon_fd = -1;	/* to the waiting parent */
static bool	dtd_core_up;		/* dt_dev_init() succeeded */
static size_t	dtd_nstarted;		/* services started */
static bool	dtd_torn_down;
static bool	dtd_served;		/* dtd_ready() ran */

static const char dtd_usage[] =
    "usage: dtd [--foreground] [--frontend cuse|fuse|socket|auto]\n"
    "           [--device path] [--device-socket path]\n"
    "           [--group group] [--ring-size n] [--ready-fd fd]\n"
    "           [--ingest path] [--ksyms path | --no-ksyms]\n"
    "           [--syscall-scope all|launched]\n"
    "           [--profile auto|perf|timer] [--max-memory size]\n"
    "           [--max-opens n] [--inject rules] [--inject-file path]\n"
    "           [--openbsd-strict] [--abi 1.14|1.48]\n"
    "           [--maps-memory size] [--maps-user-memory size]\n"
    "           [--replay file [--replay-pace fast|real|step]\n"
    "           [--replay-strict]]\n"
    "\n"
    "  --device PATH     where to publish dt(4) (default /dev/dt; needed\n"
    "                    without root, e.g. ~/dt)\n"
    "  --frontend MODE   cuse, fuse (a FUSE mount over a regular file)\n"
    "                    or auto: cuse if /dev/cuse exists (default);\n"
    "                    socket: --device-socket alone, no FUSE or CUSE\n"
    "  --device-socket PATH  also serve the device on a unix socket, for\n"
    "                    libuserdt-dev.so (no /dev/fuse needed)\n"
    "  --group GROUP     open the device to GROUP (mode 0660); default\n"
    "                    root only (0600)\n"
    "  --foreground      do not daemonise\n"
    "  --ring-size N     events per CPU ring per open (16: OpenBSD's)\n"
    "  --ready-fd FD     write \"ready\\n\" to FD once the device is served\n"
    "  --ingest PATH     tracees' socket (default /run/userdt/ingest.sock;\n"
    "                    without root $XDG_RUNTIME_DIR/userdt/ingest.sock)\n"
    "  --ksyms PATH      kernel symbols (default /dev/ksyms)\n"
    "  --no-ksyms        no kernel symbols\n"
    "  --syscall-scope S syscall probes see all processes (as root, the\n"
    "                    default) or only those under dtrun, btrace -c\n"
    "                    (launched, always without root)\n"
    "  --profile MODE    profile sampling: perf, timer or auto (default)\n"
    "  --max-memory SIZE all opens' rings together, bytes (K, M, G\n"
    "                    suffixes); default the machine's RAM\n"
    "  --max-opens N     opens one user but root may hold (default 256)\n"
    "  --inject RULES    fail opens, ioctls, reads, lose events: see dtd(8)\n"
    "  --inject-file PATH  more rules, re-read at every open(2)\n"
    "  --openbsd-strict  dt(4) exactly: per-CPU reads, 16-slot rings,\n"
    "                    tid + 100000, 1.48's counters\n"
    "  --abi REV         serve dt_dev.c REV's ABI: 1.48 (default) or 1.14\n"
    "  --maps-memory SIZE\n"
    "                    mappings kept for exited tracees, bytes; default\n"
    "                    a 64th of --max-memory, 32M to 1G\n"
    "  --maps-user-memory SIZE\n"
    "                    of those, one user's; default an eighth, at\n"
    "                    least 4M (without root: all)\n"
    "  --replay FILE     serve a dtrecord(1) file's probes and events\n"
    "                    instead of tracing\n"
    "  --replay-pace P   fast (default), real (recorded intervals) or\n"
    "                    step (one record a read)\n"
    "  --replay-strict   an enable or disable the file did not list\n"
    "                    fails with EINVAL\n";

static void __attribute__((noreturn))
usage(int status)
{
	fputs(dtd_usage, status == 0 ? stdout : stderr);
	exit(status);
}

void
dtd_fatal(const char *fmt, ...)
{
	va_list ap;

	fputs("dtd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static unsigned long
dtd_number(const char *opt, const char *s, unsigned long max)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 ||
	    n > max)
		dtd_fatal("%s: bad number '%s'", opt, s);
	return n;
}

/* A size in bytes, with an optional K, M or G (powers of 1024). */
static uint64_t
dtd_size(const char *opt, const char *s)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift != 0)
		end++;
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 ||
	    n == 0 || n > (~0ULL >> shift))
		dtd_fatal("%s: bad size '%s'", opt, s);
	return (uint64_t)n << shift;
}

static gid_t
dtd_group(const char *s)
{
	struct group *gr;

	if (s[0] >= '0' && s[0] <= '9')
		return (gid_t)dtd_number("--group", s, (gid_t)-2);
	errno = 0;
	gr = getgrnam(s);
	if (gr == NULL)
		dtd_fatal("--group: no group '%s'%s%s", s, errno ? ": " : "",
		    errno ? strerror(errno) : "");
	return gr->gr_gid;
}

enum {
	OPT_DEVICE = 256,
	OPT_FRONTEND,
	OPT_GROUP,
	OPT_FOREGROUND,
	OPT_RINGSIZE,
	OPT_READYFD,
	OPT_INGEST,
	OPT_KSYMS,
	OPT_NOKSYMS,
	OPT_SYSSCOPE,
	OPT_PROFILE,
	OPT_MAXMEM,
	OPT_MAXOPENS,
	OPT_INJECT,
	OPT_INJECTFILE,
	OPT_STRICT,
	OPT_ABI,
	OPT_MAPSMEM,
	OPT_MAPSUMEM,
	OPT_REPLAY,
	OPT_REPLAYPACE,
	OPT_REPLAYSTRICT,
	OPT_DEVSOCK,
	OPT_HELP,
};

static const struct option dtd_options[] = {
	{ "device",	required_argument,	NULL,	OPT_DEVICE },
	{ "frontend",	required_argument,	NULL,	OPT_FRONTEND },
	{ "group",	required_argument,	NULL,	OPT_GROUP },
	{ "foreground",	no_argument,		NULL,	OPT_FOREGROUND },
	{ "ring-size",	required_argument,	NULL,	OPT_RINGSIZE },
	{ "ready-fd",	required_argument,	NULL,	OPT_READYFD },
	{ "ingest",	required_argument,	NULL,	OPT_INGEST },
	{ "ksyms",	required_argument,	NULL,	OPT_KSYMS },
	{ "no-ksyms",	no_argument,		NULL,	OPT_NOKSYMS },
	{ "syscall-scope", required_argument,	NULL,	OPT_SYSSCOPE },
	{ "profile",	required_argument,	NULL,	OPT_PROFILE },
	{ "max-memory",	required_argument,	NULL,	OPT_MAXMEM },
	{ "max-opens",	required_argument,	NULL,	OPT_MAXOPENS },
	{ "inject",	required_argument,	NULL,	OPT_INJECT },
	{ "inject-file", required_argument,	NULL,	OPT_INJECTFILE },
	{ "openbsd-strict", no_argument,	NULL,	OPT_STRICT },
	{ "abi",	required_argument,	NULL,	OPT_ABI },
	{ "maps-memory", required_argument,	NULL,	OPT_MAPSMEM },
	{ "maps-user-memory", required_argument, NULL,	OPT_MAPSUMEM },
	{ "replay",	required_argument,	NULL,	OPT_REPLAY },
	{ "replay-pace", required_argument,	NULL,	OPT_REPLAYPACE },
	{ "replay-strict", no_argument,		NULL,	OPT_REPLAYSTRICT },
	{ "device-socket", required_argument,	NULL,	OPT_DEVSOCK },
	{ "help",	no_argument,		NULL,	OPT_HELP },
	{ NULL,		0,			NULL,	0 },
};

static bool	dtd_device_set;		/* --device given */
static const char *dtd_replay;		/* --replay FILE, or NULL */
static enum dt_replay_pace dtd_replay_pace = DT_REPLAY_FAST;
static bool	dtd_replay_strict;	/* --replay-strict */
static char	dtd_inject_buf[4096];	/* --inject and step's rule */
static bool	dtd_ingest_set;		/* --ingest given */

/*
 * --replay: read the file now, so a mistake in it stops dtd before it
 * serves anything; step pacing is a short-read rule after the user's
 * own (the first rule that matches wins, so theirs still fire).
 */
static void
dtd_replay_setup(void)
{
	char err[512];
	int n;

	/* Relative to where dtd was started: it moves to / as a daemon. */
	if (dt_replay_load(dtd_replay, dtd_replay_strict, dtd_replay_pace,
	    err, sizeof(err)) != 0)
		dtd_fatal("--replay: %s", err);
	if (dtd_replay_pace != DT_REPLAY_STEP)
		return;
	n = snprintf(dtd_inject_buf, sizeof(dtd_inject_buf),
	    "%s%sread * short %zu", dtd_conf.dcf_inject ?
	    dtd_conf.dcf_inject : "", dtd_conf.dcf_inject ? "\n" : "",
	    dtd_conf.dcf_abi == DT_ABI_1_14 ? sizeof(struct dt14_evt) :
	    sizeof(struct dt_evt));
	if (n < 0 || (size_t)n >= sizeof(dtd_inject_buf))
		dtd_fatal("--inject: too long with --replay-pace step");
	dtd_conf.dcf_inject = dtd_inject_buf;
}

static void
dtd_parse(int argc, char *argv[])
{
	char err[256];
	bool ringsize_set = false;
	int ch;

	while ((ch = getopt_long(argc, argv, "h", dtd_options, NULL)) != -1) {
		switch (ch) {
		case OPT_DEVICE:
			if (optarg[0] == '\0')
				dtd_fatal("--device: empty path");
			dtd_conf.dcf_device = optarg;
			dtd_device_set = true;
			break;
		case OPT_FRONTEND:
			if (strcmp(optarg, "cuse") == 0)
				dtd_conf.dcf_frontend = DTD_FE_CUSE;
			else if (strcmp(optarg, "fuse") == 0)
				dtd_conf.dcf_frontend = DTD_FE_FUSE;
			else if (strcmp(optarg, "socket") == 0)
				dtd_conf.dcf_frontend = DTD_FE_SOCKET;
			else if (strcmp(optarg, "auto") == 0)
				dtd_conf.dcf_frontend = DTD_FE_AUTO;
			else
				dtd_fatal("--frontend: '%s' is not cuse, fuse, "
				    "socket or auto", optarg);
			break;
		case OPT_GROUP:
			dtd_conf.dcf_gid = dtd_group(optarg);
			dtd_conf.dcf_group_set = true;
			break;
		case OPT_FOREGROUND:
			dtd_conf.dcf_foreground = true;
			break;
		case OPT_RINGSIZE:
			dtd_conf.dcf_ringsize = (unsigned int)dtd_number(
			    "--ring-size", optarg, 1U << 24);
			if (dtd_conf.dcf_ringsize < 2)
				dtd_fatal("--ring-size: at least 2 slots");
			ringsize_set = true;
			break;
		case OPT_READYFD:
			dtd_conf.dcf_ready_fd = (int)dtd_number("--ready-fd",
			    optarg, INT_MAX);
			if (fcntl(dtd_conf.dcf_ready_fd, F_GETFD) == -1)
				dtd_fatal("--ready-fd: %d is not open",
				    dtd_conf.dcf_ready_fd);
			break;
		case OPT_INGEST:
			dtd_conf.dcf_ingest = optarg;
			dtd_ingest_set = true;
			break;
		case OPT_KSYMS:
			dtd_conf.dcf_ksyms = optarg;
			dtd_conf.dcf_ksyms_set = true;
			break;
		case OPT_NOKSYMS:
			dtd_conf.dcf_ksyms = NULL;
			break;
		case OPT_SYSSCOPE:
			/* Read by the kernel feed's init, in dt_dev_init(). */
			if (strcmp(optarg, "all") == 0)
				dt_ksys_scope(true);
			else if (strcmp(optarg, "launched") == 0)
				dt_ksys_scope(false);
			else
				dtd_fatal("--syscall-scope: '%s' is not all or "
				    "launched", optarg);
			break;
		case OPT_PROFILE:
			if (strcmp(optarg, "auto") == 0)
				dtd_conf.dcf_profile = DTD_PROFILE_AUTO;
			else if (strcmp(optarg, "perf") == 0)
				dtd_conf.dcf_profile = DTD_PROFILE_PERF;
			else if (strcmp(optarg, "timer") == 0)
				dtd_conf.dcf_profile = DTD_PROFILE_TIMER;
			else
				dtd_fatal("--profile: '%s' is not auto, perf "
				    "or timer", optarg);
			break;
		case OPT_MAXMEM:
			dtd_conf.dcf_maxmem = dtd_size("--max-memory", optarg);
			break;
		case OPT_MAXOPENS:
			dtd_conf.dcf_maxopens = (unsigned int)dtd_number(
			    "--max-opens", optarg, UINT_MAX);
			if (dtd_conf.dcf_maxopens == 0)
				dtd_fatal("--max-opens: at least 1");
			break;
		case OPT_INJECT:
			if (dt_inject_check(optarg, err, sizeof(err)) != 0)
				dtd_fatal("%s", err);
			dtd_conf.dcf_inject = optarg;
			break;
		case OPT_INJECTFILE:
			/*
			 * Absolute: dtd changes its directory to / when it
			 * becomes a daemon, and reads the file at each open.
			 */
			if (optarg[0] != '/')
				dtd_fatal("--inject-file: '%s' is not an "
				    "absolute path", optarg);
			dtd_conf.dcf_inject_file = optarg;
			break;
		case OPT_STRICT:
			dtd_conf.dcf_strict = true;
			break;
		case OPT_ABI:
			if (strcmp(optarg, "1.48") == 0)
				dtd_conf.dcf_abi = DT_ABI_1_48;
			else if (strcmp(optarg, "1.14") == 0)
				dtd_conf.dcf_abi = DT_ABI_1_14;
			else
				dtd_fatal("--abi: '%s' is not 1.14 or 1.48",
				    optarg);
			break;
		case OPT_MAPSMEM:
			dtd_conf.dcf_mapsmem = dtd_size("--maps-memory",
			    optarg);
			if (dtd_conf.dcf_mapsmem == 0)
				dtd_fatal("--maps-memory: at least 1 byte");
			break;
		case OPT_MAPSUMEM:
			dtd_conf.dcf_mapsumem = dtd_size("--maps-user-memory",
			    optarg);
			if (dtd_conf.dcf_mapsumem == 0)
				dtd_fatal("--maps-user-memory: at least 1 "
				    "byte");
			break;
		case OPT_REPLAY:
			dtd_replay = optarg;
			break;
		case OPT_REPLAYPACE:
			if (strcmp(optarg, "fast") == 0)
				dtd_replay_pace = DT_REPLAY_FAST;
			else if (strcmp(optarg, "real") == 0)
				dtd_replay_pace = DT_REPLAY_REAL;
			else if (strcmp(optarg, "step") == 0)
				dtd_replay_pace = DT_REPLAY_STEP;
			else
				dtd_fatal("--replay-pace: '%s' is not fast, "
				    "real or step", optarg);
			break;
		case OPT_REPLAYSTRICT:
			dtd_replay_strict = true;
			break;
		case OPT_DEVSOCK:
			if (optarg[0] == '\0')
				dtd_fatal("--device-socket: empty path");
			dtd_conf.dcf_devsock = optarg;
			break;
		case OPT_HELP:
		case 'h':
			usage(0);
		default:
			usage(2);
		}
	}
	if (optind != argc) {
		fprintf(stderr, "dtd: unexpected argument '%s'\n",
		    argv[optind]);
		usage(2);
	}
	if (dtd_replay == NULL &&
	    (dtd_replay_strict || dtd_replay_pace != DT_REPLAY_FAST))
		dtd_fatal("--replay-pace and --replay-strict need --replay");
	if (dtd_replay != NULL)
		dtd_replay_setup();
	/* OpenBSD's 16 slots (dt-abi 4.4), unless told otherwise. */
	if (dtd_conf.dcf_strict && !ringsize_set)
		dtd_conf.dcf_ringsize = DT_RINGSIZE_OPENBSD;
	/* A container without FUSE still has the socket. */
	if (dtd_conf.dcf_frontend == DTD_FE_AUTO &&
	    dtd_conf.dcf_devsock != NULL && access("/dev/cuse", F_OK) != 0 &&
	    access("/dev/fuse", R_OK | W_OK) != 0) {
		fprintf(stderr, "dtd: no /dev/cuse nor /dev/fuse: serving the "
		    "device on %s alone\n", dtd_conf.dcf_devsock);
		dtd_conf.dcf_frontend = DTD_FE_SOCKET;
	}
	/* Without root, FUSE-file alone; said there. */
	dtd_unpriv_setup(dtd_device_set, dtd_ingest_set);
	if (dtd_conf.dcf_frontend == DTD_FE_SOCKET &&
	    dtd_conf.dcf_devsock == NULL)
		dtd_fatal("--frontend socket needs --device-socket");
	if (dtd_conf.dcf_frontend == DTD_FE_AUTO)
		dtd_conf.dcf_frontend = access("/dev/cuse", F_OK) == 0 ?
		    DTD_FE_CUSE : DTD_FE_FUSE;
}

/*
 * Fork before any thread exists; the parent stays until the child is
 * ready (exit 0) or gave up (its status), so whoever started dtd learns
 * whether the device is there.
 */
static void
dtd_daemonize(void)
{
	int fds[2], status, fd;
	ssize_t n;
	pid_t pid;
	char c;

	if (pipe2(fds, O_CLOEXEC) == -1)
		dtd_fatal("pipe: %s", strerror(errno));
	pid = fork();
	if (pid == -1)
		dtd_fatal("fork: %s", strerror(errno));
	if (pid > 0) {
		close(fds[1]);
		do
			n = read(fds[0], &c, 1);
		while (n == -1 && errno == EINTR);
		if (n == 1)
			_exit(0);
		while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
			continue;
		_exit(WIFEXITED(status) && WEXITSTATUS(status) != 0 ?
		    WEXITSTATUS(status) : 1);
	}
	close(fds[0]);
	dtd_daemon_fd = fds[1];
	if (setsid() == -1)
		dtd_fatal("setsid: %s", strerror(errno));
	if (chdir("/") == -1)
		dtd_fatal("chdir /: %s", strerror(errno));
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd != -1) {
		(void)dup2(fd, STDIN_FILENO);
		(void)dup2(fd, STDOUT_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
}

/*
 * Tell the service manager about our state (sd_notify(3)'s protocol): one
 * datagram, such as "READY=1", to the AF_UNIX socket $NOTIFY_SOCKET names;
 * a leading '@' names an abstract socket.  Without the variable, nothing:
 * dtd was not started as a Type=notify service.  Failures are reported
 * and otherwise ignored, since the device is served either way.
 */
static void
dtd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun;
	size_t plen;
	int fd;

	if (path == NULL || (path[0] != '/' && path[0] != '@'))
		return;
	plen = strlen(path);
	if (plen < 2 || plen >= sizeof(sun.sun_path)) {
		fprintf(stderr, "dtd: NOTIFY_SOCKET: bad address\n");
		return;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, plen);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1 ||
	    sendto(fd, state, strlen(state), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen)) == -1)
		fprintf(stderr, "dtd: NOTIFY_SOCKET %s: %s\n", path,
		    strerror(errno));
	if (fd != -1)
		close(fd);
}

void
dtd_ready(void)
{
	static const char msg[] = "ready\n";
	int fd;

	dtd_served = true;
	dtd_notify("READY=1");
	if (dtd_conf.dcf_ready_fd != -1) {
		/* A reader that went away must not kill us: SIGPIPE is off. */
		if (write(dtd_conf.dcf_ready_fd, msg, sizeof(msg) - 1) !=
		    (ssize_t)sizeof(msg) - 1)
			fprintf(stderr, "dtd: --ready-fd %d: %s\n",
			    dtd_conf.dcf_ready_fd, strerror(errno));
		close(dtd_conf.dcf_ready_fd);
		dtd_conf.dcf_ready_fd = -1;
	}
	if (dtd_daemon_fd != -1) {
		(void)write(dtd_daemon_fd, "r", 1);
		close(dtd_daemon_fd);
		dtd_daemon_fd = -1;
		/* Startup errors went to the terminal; nothing else will. */
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd != -1) {
			(void)dup2(fd, STDERR_FILENO);
			close(fd);
		}
	}
}

void
dtd_teardown(void)
{
	if (dtd_torn_down)
		return;
	dtd_torn_down = true;
	if (dtd_served)
		dtd_notify("STOPPING=1");
	/* Its opens go before the core does. */
	dt_fesock_stop();
	/* Producers first, so nothing feeds a core going away. */
	while (dtd_nstarted > 0) {
		dtd_nstarted--;
		if (dtd_services[dtd_nstarted]->ds_stop != NULL)
			dtd_services[dtd_nstarted]->ds_stop();
	}
	if (dtd_core_up) {
		dt_dev_fini();
		dtd_core_up = false;
		if (dtd_replay != NULL)
			dt_replay_unload();
	}
}

/*
 * Refuse to start while another dtd serves what this one would take: its
 * device, its device socket, its tracees' socket.  Asked before the core
 * and the services start, since a refused dtd that had started them
 * would have put its /dev/ksyms over the live one's and removed it on
 * the way out.  Looks only; two dtds started at the same instant are
 * sorted out by the claims themselves (the mount, the device, bind).
 * Main thread; 0 or an errno, said on stderr.
 */
static int
dtd_claim_check(void)
{
	const char *sock = dtd_conf.dcf_devsock;
	int error = 0;

	if (dtd_conf.dcf_frontend == DTD_FE_CUSE)
		error = dt_cuse_check(dtd_conf.dcf_device);
	else if (dtd_conf.dcf_frontend == DTD_FE_FUSE)
		error = dt_fusefile_check(dtd_conf.dcf_device);
	if (error == 0 && sock != NULL && dt_sockfile_answers(sock)) {
		fprintf(stderr, "dtd: another dtd serves %s\n", sock);
		error = EADDRINUSE;
	}
	sock = dtd_conf.dcf_ingest;
	if (error == 0 && dtd_replay == NULL && sock != NULL &&
	    dt_sockfile_answers(sock)) {
		fprintf(stderr, "dtd: another dtd serves %s (--ingest)\n",
		    sock);
		error = EADDRINUSE;
	}
	return error;
}

/*
 * Every tracee holds a descriptor in dtd while it is attached: take all
 * the descriptors the hard limit allows.  The ingest path caps what one
 * user may hold (dt_ingest.c).
 */
static void
dtd_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
		fprintf(stderr, "dtd: cannot raise RLIMIT_NOFILE to %llu: %s\n",
		    (unsigned long long)rl.rlim_max, strerror(errno));
}

/*
 * The budget of the mappings kept for exited tracees (dt_pidmaps.h), from
 * the options or --max-memory (the machine's RAM by default).  Without
 * root dtd serves one user, who may have all of it.  Main thread, before
 * the ingest starts.
 */
static void
dtd_maps_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t maxmem = dtd_conf.dcf_maxmem, user = dtd_conf.dcf_mapsumem;

	if (maxmem == 0 && pages > 0 && psize > 0)
		maxmem = (uint64_t)pages * (uint64_t)psize;
	if (user == 0 && dtd_conf.dcf_unpriv)
		user = UINT64_MAX;
	dt_pm_budget(dtd_conf.dcf_mapsmem, user, maxmem, NULL, NULL);
}

int
main(int argc, char *argv[])
{
	struct dt_dev_conf dcf;
	sigset_t set;
	int error;

	dtd_parse(argc, argv);

	if (!dtd_conf.dcf_foreground)
		dtd_daemonize();

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		dtd_fatal("sigprocmask: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	dtd_nofile();
	/*
	 * Every file dtd makes names its mode, and the ingest socket can
	 * only get its mode before bind() (dt_ingest_sock.c), where the
	 * umask still applies: none, so modes are exactly as written.
	 */
	umask(0);

	memset(&dcf, 0, sizeof(dcf));
	dcf.dcf_ringsize = dtd_conf.dcf_ringsize;
	dcf.dcf_read_done = dt_fe_read_done;
	dcf.dcf_read_iov = dt_fe_read_iov;
	dcf.dcf_poll_done = dt_fe_poll_done;
	dcf.dcf_maxmem = dtd_conf.dcf_maxmem;
	dcf.dcf_maxopens = dtd_conf.dcf_maxopens;
	dcf.dcf_owner = dtd_conf.dcf_uid;
	dcf.dcf_inject = dtd_conf.dcf_inject;
	dcf.dcf_inject_file = dtd_conf.dcf_inject_file;
	dcf.dcf_strict = dtd_conf.dcf_strict;
	dcf.dcf_abi = dtd_conf.dcf_abi;
	if (dtd_replay != NULL) {
		long ncpus = sysconf(_SC_NPROCESSORS_CONF);

		/* A ring for every recorded CPU, so dtev_cpu stays as is. */
		dcf.dcf_providers = dt_prov_replay_init;
		dcf.dcf_ncpus = ncpus > 0 ? (unsigned int)ncpus : 1;
		if (dcf.dcf_ncpus < dt_replay_ncpus())
			dcf.dcf_ncpus = dt_replay_ncpus();
	}
	if (dtd_claim_check() != 0)
		return 1;
	if ((error = dt_dev_init(&dcf)) != 0)
		dtd_fatal("cannot start the device core: %s",
		    strerror(error));
	dtd_core_up = true;
	dtd_maps_budget();

	/* A replay has no tracee and no sampler: none of the services. */
	for (; dtd_replay == NULL && dtd_services[dtd_nstarted] != NULL;
	    dtd_nstarted++) {
		const struct dtd_service *ds = dtd_services[dtd_nstarted];

		if (ds->ds_start == NULL)
			continue;
		if ((error = ds->ds_start()) != 0) {
			fprintf(stderr, "dtd: cannot start %s: %s\n",
			    ds->ds_name, strerror(error));
			dtd_teardown();
			return 1;
		}
	}

	/* Listening before any front end says the device is ready. */
	if (dtd_conf.dcf_devsock != NULL &&
	    (error = dt_fesock_start(dtd_conf.dcf_devsock)) != 0) {
		dtd_teardown();
		return 1;
	}
	if (dtd_conf.dcf_frontend == DTD_FE_SOCKET)
		error = dt_fesock_main();
	else if (dtd_conf.dcf_frontend == DTD_FE_CUSE)
		error = dt_cuse_main();
	else
		error = dt_fusefile_main();
	dtd_teardown();
	if (error != 0) {
		/* Startup failures were explained where they happened. */
		if (dtd_served)
			fprintf(stderr, "dtd: stopped: %s\n",
			    strerror(error));
		return 1;
	}
	return 0;
}
