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
 * btrace: probes that cannot fire for what was asked, said once on
 * stderr before tracing starts.  On OpenBSD a probe that is enabled
 * fires; here the syscall and the timer fallback of profile need the
 * preload library in the traced process and the right dtd at the end of
 * its socket, and the kernel's probes need a dtd that runs as root.
 * Without a word, each of these ends in an empty map and exit status 0,
 * which looks like "nothing happened".  Only stderr is written: the
 * output of a correct script stays OpenBSD's.
 */
#include <sys/socket.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "btrace.h"
#include "udt_mapsq.h"

/* perf's kprobe PMU, through which dtd reads kernel functions. */
#define KPROBE_PMU	"/sys/bus/event_source/devices/kprobe"

/*
 * Calls that glibc on x86-64 Linux never makes under that name, and the
 * call it makes instead: a program that asks for open(2) makes openat.
 * A rule on the first alone sees only programs that make the raw call.
 */
static const struct {
	const char	*lc_name;	/* as -l shows it */
	const char	*lc_instead;
} linux_calls[] = {
	{ "open",	"openat" },
	{ "creat",	"openat" },
	{ "stat",	"fstatat" },
	{ "lstat",	"fstatat" },
	{ "fork",	"clone" },
};

static const char *
where(void)
{
	return g_filename != NULL ? g_filename : g_progname;
}

static int
prov_is(const struct dtioc_probe_info *pi, const char *prov)
{
	return strncmp(pi->dtpi_prov, prov, DTNAMESIZE) == 0;
}

/* Is the call named func enabled by some rule, under its name? */
static int
func_enabled(const char *func, const char *name)
{
	struct bt_rule *r;
	struct bt_probe *bp;
	const struct dtioc_probe_info *pi;

	for (r = g_rules; r != NULL; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE || bp->bp_pbn == 0 ||
			    bp->bp_pbn > dt_ndtpi)
				continue;
			pi = &dt_dtpis[bp->bp_pbn - 1];
			if (prov_is(pi, "syscall") &&
			    strcmp(dtpi_func(pi), func) == 0 &&
			    strncmp(pi->dtpi_name, name, DTNAMESIZE) == 0)
				return 1;
		}
	return 0;
}

/* syscall:open:entry without syscall:openat:entry, and the like. */
static void
check_linux_calls(void)
{
	struct bt_rule *r;
	struct bt_probe *bp;
	const struct dtioc_probe_info *pi;
	char func[DTNAMESIZE + 1], name[DTNAMESIZE + 1];
	unsigned int said = 0;
	size_t i;

	for (r = g_rules; r != NULL; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE || bp->bp_wild ||
			    bp->bp_pbn == 0 || bp->bp_pbn > dt_ndtpi)
				continue;
			pi = &dt_dtpis[bp->bp_pbn - 1];
			if (!prov_is(pi, "syscall"))
				continue;
			snprintf(func, sizeof(func), "%s", dtpi_func(pi));
			snprintf(name, sizeof(name), "%.16s", pi->dtpi_name);
			for (i = 0; i < sizeof(linux_calls) /
			    sizeof(linux_calls[0]); i++) {
				if (strcmp(func, linux_calls[i].lc_name) != 0 ||
				    (said & (1u << i)) ||
				    func_enabled(linux_calls[i].lc_instead,
				    name))
					continue;
				said |= 1u << i;
				fflush(stdout);
				fprintf(stderr, "%s:%d:%d: syscall:%s:%s "
				    "sees only programs that make the raw "
				    "call: glibc on Linux makes %s() as %s "
				    "(syscall:%s:%s)\n", where(),
				    bp->bp_pos.p_line, bp->bp_pos.p_col, func,
				    name, func, linux_calls[i].lc_instead,
				    linux_calls[i].lc_instead, name);
			}
		}
}

/*
 * The dtd at the other end of the ingest socket sock: its pid from the
 * socket's credentials, after an exchange dtd answers at once (a
 * statistics hello), so that the connection is an ordinary one for it.
 * 0 and *pid, or -1 with errno.
 */
static int
sock_peer(const char *sock, pid_t *pid)
{
	struct udt_hello h;
	struct udt_stats st;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	int fd, error;

	if ((fd = udt_mapsq_dial(sock)) == -1)
		return -1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) == -1)
		goto fail;
	memset(&h, 0, sizeof(h));
	h.uh_magic = UDT_MAGIC;
	h.uh_version = UDT_VERSION;
	h.uh_flags = UDT_HELLO_STATS;
	if (write(fd, &h, sizeof(h)) == (ssize_t)sizeof(h))
		(void)!read(fd, &st, sizeof(st));
	close(fd);
	*pid = cr.pid;
	return 0;
fail:
	error = errno;
	close(fd);
	errno = error;
	return -1;
}

/* Do two paths name one file, as far as their names resolve? */
static int
same_path(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (realpath(a, ra) == NULL)
		snprintf(ra, sizeof(ra), "%s", a);
	if (realpath(b, rb) == NULL)
		snprintf(rb, sizeof(rb), "%s", b);
	return strcmp(ra, rb) == 0;
}

/*
 * Does dtd process pid serve the device?  1 yes, 0 no, -1 unknown (its
 * /proc is not ours to read).  The FUSE-file front end holds the file it
 * is mounted over open for its whole life, whose name is the device's;
 * the CUSE front end holds nothing of the name, so its command line
 * (--device PATH, else /dev/dt) says; so does its --device-socket when
 * the device is that socket's (USERDT_DEVICE_SOCKET, libuserdt-dev.so).
 */
static int
dtd_serves(pid_t pid, const char *dev)
{
	char path[64], link[PATH_MAX], cmd[8192], *a, *end, *d = "/dev/dt";
	const char *ds = getenv("USERDT_DEVICE_SOCKET");
	struct dirent *de;
	DIR *dir;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((dir = opendir(path)) == NULL)
		goto cmdline;
	while ((de = readdir(dir)) != NULL) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%.16s", (int)pid,
		    de->d_name);
		if ((n = readlink(path, link, sizeof(link) - 1)) <= 0)
			continue;
		link[n] = '\0';
		if (link[0] == '/' && same_path(link, dev)) {
			closedir(dir);
			return 1;
		}
	}
	closedir(dir);
cmdline:
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, cmd, sizeof(cmd) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	cmd[n] = '\0';
	end = cmd + n;
	for (a = cmd; a < end; a += strlen(a) + 1) {
		if (strcmp(a, "--device") == 0 && a + strlen(a) + 1 < end)
			d = a + strlen(a) + 1;
		else if (strncmp(a, "--device=", 9) == 0)
			d = a + 9;
		/* The device served from its socket (libuserdt-dev.so). */
		else if (ds != NULL && strcmp(a, "--device-socket") == 0 &&
		    a + strlen(a) + 1 < end &&
		    same_path(a + strlen(a) + 1, ds))
			return 1;
	}
	return same_path(d, dev);
}

/*
 * -c: the command's events go to the dtd at $USERDT_SOCKET (btrace has
 * set it for a device of our own user's), else at root's default socket.
 * When that is not the dtd that serves the device, they never reach it.
 */
static void
check_socket(void)
{
	const char *sock = getenv(UDT_SOCKET_ENV), *set = "USERDT_SOCKET";
	pid_t pid;
	int serves;

	if (sock == NULL || *sock == '\0') {
		sock = UDT_SOCKET_DEFAULT;
		set = "the default socket";
	}
	if (sock_peer(sock, &pid) == -1) {
		fprintf(stderr, "%s: -c: no dtd answers at %s (%s, %s): the "
		    "command's events cannot reach %s; set USERDT_SOCKET to "
		    "the ingest socket of the dtd that serves %s\n",
		    g_progname, sock, set, strerror(errno), g_devpath,
		    g_devpath);
		return;
	}
	if ((serves = dtd_serves(pid, g_devpath)) != 0)
		return;
	fprintf(stderr, "%s: -c: the dtd at %s (%s, pid %d) does not serve "
	    "%s: the command's events go to that dtd, not to this device; "
	    "set USERDT_SOCKET to the ingest socket of the dtd that serves "
	    "%s\n", g_progname, sock, set, (int)pid, g_devpath, g_devpath);
}

/*
 * -p: the syscall provider (and the timer fallback of profile) sees a
 * process only when the preload library is in it: started by dtrun or
 * btrace -c, or with LD_PRELOAD.  Its mappings say.
 */
static void
check_pid_preload(const char *what)
{
	char path[64], line[4096], lib[PATH_MAX];
	const char *env = getenv("USERDT_PRELOAD"), *base = NULL;
	FILE *fp;
	int found = 0;

	if (env != NULL && *env != '\0') {
		snprintf(lib, sizeof(lib), "%s", env);
		base = strrchr(lib, '/') != NULL ? strrchr(lib, '/') + 1 : lib;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)g_pidfilter);
	if ((fp = fopen(path, "re")) == NULL)
		return;		/* not ours to read: nothing known */
	while (!found && fgets(line, sizeof(line), fp) != NULL)
		if (strstr(line, "/libuserdt-preload") != NULL ||
		    (base != NULL && *base != '\0' && strstr(line, base)))
			found = 1;
	fclose(fp);
	if (found)
		return;
	fprintf(stderr, "%s: -p %d: the process was not started under "
	    "userdt's launcher (btrace -c, dtrun): without its library, %s "
	    "probes see nothing of it\n", g_progname, (int)g_pidfilter, what);
}

/*
 * A dtd that runs without root gives the device its own user; it has no
 * kernel probes: no tracepoints, no kernel stacks, and profile samples
 * only the processes started under its launcher.
 */
static uid_t
dev_owner(void)
{
	struct stat st;

	if (stat(g_devpath, &st) == -1)
		return 0;
	return st.st_uid;
}

int
dev_unprivileged(void)
{
	return dev_owner() != 0;
}

/*
 * Why the device lists no kprobe: a dtd without root, a kernel without
 * perf's kprobe PMU (what dtd reads them through: CONFIG_KPROBES and
 * CONFIG_KPROBE_EVENTS; the machine's, as dtd runs beside us), or a dtd
 * refused the list of kernel functions.
 */
static const char *
kprobe_missing(void)
{
	static char why[320];
	struct stat st;

	if (dev_unprivileged())
		snprintf(why, sizeof(why), " (the dtd that serves %s runs "
		    "without root, as uid %d: kernel function probes need a "
		    "dtd running as root)", g_devpath, (int)dev_owner());
	else if (stat(KPROBE_PMU, &st) == -1)
		snprintf(why, sizeof(why), " (kprobes are unavailable on this "
		    "kernel: it has no %s, which needs CONFIG_KPROBES and "
		    "CONFIG_KPROBE_EVENTS; trace system calls or kernel "
		    "tracepoints instead)", KPROBE_PMU);
	else
		snprintf(why, sizeof(why), " (the dtd that serves %s offers "
		    "no kernel function probes: perf's kprobe PMU or the list "
		    "of kernel functions was refused to it)", g_devpath);
	return why;
}

/* What a probe that is not found lacks: said after probe_notfound's. */
const char *
check_missing_prov(const char *prov)
{
	static char why[256];

	if (strcmp(prov, "kprobe") == 0)
		return kprobe_missing();
	if (strcmp(prov, "tracepoint") != 0)
		return "";
	if (dev_unprivileged())
		snprintf(why, sizeof(why), " (the dtd that serves %s runs "
		    "without root, as uid %d: kernel tracepoints need a dtd "
		    "running as root)", g_devpath, (int)dev_owner());
	else
		snprintf(why, sizeof(why), " (the dtd that serves %s offers "
		    "no kernel tracepoints: perf events or tracefs were "
		    "refused to it)", g_devpath);
	return why;
}

/*
 * Once the probes are known and before any is enabled: say what will
 * stay silent.
 */
void
check_probes(void)
{
	struct bt_rule *r;
	struct bt_probe *bp;
	const struct dtioc_probe_info *pi;
	int sys = 0, prof = 0, kstack = 0, unpriv = dev_unprivileged();

	for (r = g_rules; r != NULL; r = r->br_next)
		for (bp = r->br_probes; bp != NULL; bp = bp->bp_next) {
			if (bp->bp_type != P_PROBE || bp->bp_pbn == 0 ||
			    bp->bp_pbn > dt_ndtpi)
				continue;
			pi = &dt_dtpis[bp->bp_pbn - 1];
			if (prov_is(pi, "syscall"))
				sys = 1;
			else if (prov_is(pi, "profile")) {
				prof = 1;
				if (r->br_evtflags & DTEVT_KSTACK)
					kstack = 1;
			}
		}
	fflush(stdout);
	check_linux_calls();
	if (g_command != NULL && (sys || (prof && unpriv)))
		check_socket();
	if (g_pidfilter > 0 && (sys || (prof && unpriv)))
		check_pid_preload(sys ? "syscall" : "profile");
	if (unpriv && kstack)
		fprintf(stderr, "%s: the dtd that serves %s runs without "
		    "root, as uid %d: profile samples carry no kernel stack "
		    "(kstack is empty, shown as userland)\n", g_progname,
		    g_devpath, (int)dev_owner());
	/* Root's dtd adds the kernel's view of every other process. */
	if (unpriv && sys && g_command == NULL && g_pidfilter <= 0)
		fprintf(stderr, "%s: the dtd that serves %s runs without "
		    "root, as uid %d: syscall probes see only the processes "
		    "started under its launcher (btrace -c, dtrun), not the "
		    "whole system\n", g_progname, g_devpath,
		    (int)dev_owner());
	if (unpriv && prof && g_command == NULL && g_pidfilter <= 0)
		fprintf(stderr, "%s: the dtd that serves %s runs without "
		    "root, as uid %d: profile samples only the processes "
		    "started under its launcher (btrace -c, dtrun), not the "
		    "whole system\n", g_progname, g_devpath,
		    (int)dev_owner());
}
