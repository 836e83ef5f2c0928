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
 * ksysarm_test setid (ksysarm_test.c says what it checks): the set-gid
 * copy of SPAWN it makes, and what a signal that ends the test must
 * not leave behind.
 */
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "ksysarm.h"

#define KA_SETGID	65533	/* the copy's group: no user's own */

/*
 * What a signal that ends the test (meson's SIGTERM at its timeout)
 * must not leave behind: the set-gid copy and its directory, the
 * sysctl changed, dtd.  Set before the handler can need them; the
 * handler does only what is async-signal-safe.
 */
static char		 ka_setid[PATH_MAX + 48];
static char		 ka_setdir[PATH_MAX + 32];
static char		 ka_dumpold[8];		/* "" while unchanged */
static volatile sig_atomic_t ka_dumpset;

static void
ka_dumpable(const char *v)
{
	int fd;

	if ((fd = open("/proc/sys/fs/suid_dumpable", O_WRONLY)) == -1)
		return;
	(void)write(fd, v, strlen(v));
	close(fd);
}

static void
ka_onsig(int sig)
{
	if (ka_dumpset)
		ka_dumpable(ka_dumpold);
	if (ka_setid[0] != '\0')
		(void)unlink(ka_setid);
	if (ka_setdir[0] != '\0')
		(void)rmdir(ka_setdir);
	if (ka_dd.dd_pid > 0)
		(void)kill(ka_dd.dd_pid, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * A copy of src at dst, set-gid to gid: 0, or -1 with why in why.  The
 * group first: a chown clears the set-gid bit.
 */
static int
ka_setgid_copy(const char *src, const char *dst, gid_t gid, char *why,
    size_t len)
{
	char buf[65536];
	ssize_t n;
	int in, out, rv = -1;

	if ((in = open(src, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(why, len, "%s: %s", src, strerror(errno));
		return -1;
	}
	if ((out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0700)) == -1) {
		snprintf(why, len, "%s: %s", dst, strerror(errno));
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (n != 0)
		snprintf(why, len, "copying to %s: %s", dst, strerror(errno));
	else if (fchown(out, (uid_t)-1, gid) == -1 ||
	    fchmod(out, 02710) == -1)
		snprintf(why, len, "%s: set-gid: %s", dst, strerror(errno));
	else
		rv = 0;
	close(in);
	if (close(out) == -1 && rv == 0) {
		snprintf(why, len, "%s: %s", dst, strerror(errno));
		rv = -1;
	}
	return rv;
}

void
run_setid(const char *btrace, const char *spawn, const char *dyn,
    const char *lib, const char *st)
{
	static char out[65536];
	char tmp[PATH_MAX], *dir = ka_setdir, *setid = ka_setid;
	char cmd[4 * PATH_MAX], why[2 * PATH_MAX], sdump[8];
	struct statvfs vfs;
	gid_t gid = KA_SETGID;
	long v, c;
	int status, e1 = -2, e2 = -2, sig, fd;
	const char *p;
	char *nl;

	/*
	 * Every signal that ends a test by default removes what is made
	 * here; the paths are empty until each exists.
	 */
	for (sig = 1; sig < NSIG; sig++)
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP ||
		    sig == SIGQUIT)
			signal(sig, ka_onsig);
	/* beside SPAWN: the build's directory, where set-gid bits work */
	snprintf(tmp, sizeof(tmp), "%s", spawn);
	snprintf(dir, sizeof(ka_setdir), "%s/ksysarm_setid.XXXXXX",
	    dirname(tmp));
	if (mkdtemp(dir) == NULL || chmod(dir, 0755) == -1) {
		dtt_check(false, "a directory for the set-gid copy: %s",
		    strerror(errno));
		(void)rmdir(dir);
		dir[0] = '\0';
		return;
	}
	snprintf(setid, sizeof(ka_setid), "%s/kt_setid", dir);
	if (statvfs(dir, &vfs) == -1 || (vfs.f_flag & ST_NOSUID)) {
		dtt_check(false, "%s: set-id bits are ignored there (nosuid) "
		    "or it cannot be told", dir);
		goto out;
	}
	why[0] = '\0';
	if (!dtt_check(ka_setgid_copy(spawn, setid, gid, why,
	    sizeof(why)) == 0, "a set-gid copy of SPAWN%s%s",
	    why[0] != '\0' ? ": " : "", why))
		goto out;

	/* started later by a shell: exactly, with its group */
	snprintf(cmd, sizeof(cmd), "sh -c '%s getppid 10; %s %d egid; true'",
	    dyn, setid, KA_NCALLS);
	status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
	v = dtt_line_value(out, "@[kt_setid]: ");
	if (!dtt_check(dtt_exited0(status) && v == KA_NCALLS &&
	    dtt_line_value(out, "@[tp_target]: ") == 10 &&
	    dtt_line_value(out, "egid ") == (long)gid &&
	    ka_lines(out, "set-id: its system calls are read from the "
	    "kernel") == 1 && strstr(out, "\n0 events dropped\n") != NULL,
	    "a set-gid program started by a shell: %ld getppid(), want %d; "
	    "egid %ld, want %ld; said read from the kernel, nothing dropped",
	    v, KA_NCALLS, dtt_line_value(out, "egid "), (long)gid))
		fprintf(stderr, "%s", out);

	/*
	 * Its dynamic child, its own ids again (an exec with ids that
	 * still differ would be a secure one, whose feed the kernel
	 * drops and no helper holds: dt.4): no LD_PRELOAD left, the same
	 * feed's.
	 */
	snprintf(cmd, sizeof(cmd), "sh -c '%s 100 spawnr %s getppid 50; "
	    "true'", setid, dyn);
	status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
	v = dtt_line_value(out, "@[kt_setid]: ");
	c = dtt_line_value(out, "@[tp_target]: ");
	if (!dtt_check(dtt_exited0(status) && v == 100 && c == 50 &&
	    strstr(out, "\n0 events dropped\n") != NULL, "its dynamic "
	    "child, without the library: %ld and %ld getppid(), want 100 "
	    "and 50", v, c))
		fprintf(stderr, "%s", out);

	/* a child that gets the library back: the hooks', once */
	snprintf(cmd, sizeof(cmd), "sh -c '%s 100 spawnr /usr/bin/env "
	    "LD_PRELOAD=%s %s getppid 50; true'", setid, lib, dyn);
	status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
	v = dtt_line_value(out, "@[kt_setid]: ");
	c = dtt_line_value(out, "@[tp_target]: ");
	if (!dtt_check(dtt_exited0(status) && v == 100 && c == 50 &&
	    strstr(out, "\n0 events dropped\n") != NULL, "its child that "
	    "loads the library again: %ld and %ld getppid(), want 100 and "
	    "50 (not twice)", v, c))
		fprintf(stderr, "%s", out);

	/*
	 * Under a static image's feed: its dynamic child (hooked: the
	 * static image kept LD_PRELOAD) starts the set-gid program, whose
	 * exec drops the feed it inherited: a feed of its own counts it,
	 * once.
	 */
	snprintf(cmd, sizeof(cmd), "sh -c '%s 200 spawn 1 %s 100 spawn %s "
	    "300 egid; true'", st, spawn, setid);
	status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
	if (!dtt_check(dtt_exited0(status) &&
	    dtt_line_value(out, "@[tp_static]: ") == 200 &&
	    dtt_line_value(out, "@[kt_spawn]: ") == 100 &&
	    dtt_line_value(out, "@[kt_setid]: ") == 300 &&
	    strstr(out, "\n0 events dropped\n") != NULL, "a set-gid "
	    "program where a static image's feed covered its branch: %ld, "
	    "%ld, %ld getppid() of STATIC, SPAWN, it; want 200, 100, 300",
	    dtt_line_value(out, "@[tp_static]: "),
	    dtt_line_value(out, "@[kt_spawn]: "),
	    dtt_line_value(out, "@[kt_setid]: ")))
		fprintf(stderr, "%s", out);

	/*
	 * The same with fs.suid_dumpable 1: the exec leaves the set-gid
	 * image dumpable, so the kernel keeps the static ancestor's feed
	 * on it, which counts it: no second feed, not twice.  The old
	 * value back before anything is checked, and from ka_onsig().
	 */
	memset(sdump, 0, sizeof(sdump));
	if ((fd = open("/proc/sys/fs/suid_dumpable", O_RDONLY)) != -1) {
		(void)read(fd, sdump, sizeof(sdump) - 1);
		close(fd);
	}
	if ((nl = strchr(sdump, '\n')) != NULL)
		*nl = '\0';
	if (!dtt_check(sdump[0] >= '0' && sdump[0] <= '2' &&
	    sdump[1] == '\0', "fs.suid_dumpable read: \"%s\"", sdump))
		goto out;
	memcpy(ka_dumpold, sdump, sizeof(sdump));
	ka_dumpset = 1;
	ka_dumpable("1");
	status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
	ka_dumpable(ka_dumpold);
	ka_dumpset = 0;
	if (!dtt_check(dtt_exited0(status) &&
	    dtt_line_value(out, "@[tp_static]: ") == 200 &&
	    dtt_line_value(out, "@[kt_spawn]: ") == 100 &&
	    dtt_line_value(out, "@[kt_setid]: ") == 300 &&
	    strstr(out, "\n0 events dropped\n") != NULL, "the same with "
	    "fs.suid_dumpable 1, which keeps the feed: %ld, %ld, %ld "
	    "getppid(); want 200, 100, 300 (not 600)",
	    dtt_line_value(out, "@[tp_static]: "),
	    dtt_line_value(out, "@[kt_spawn]: "),
	    dtt_line_value(out, "@[kt_setid]: ")))
		fprintf(stderr, "%s", out);

	/*
	 * dtd's word to a non-root asker: none, whoever holds it, though
	 * only the set-id group tells them apart
	 */
	snprintf(cmd, sizeof(cmd), "%s 10 askid %s %d", spawn, setid,
	    (int)gid);
	status = ka_btrace(btrace, cmd, ka_count, out, sizeof(out));
	if ((p = strstr(out, "asked ")) != NULL)
		(void)sscanf(p, "asked %d %d", &e1, &e2);
	if (!dtt_check(dtt_exited0(status) && e1 == EPERM && e2 == 0 &&
	    dtt_line_value(out, "@[kt_setid]: ") == 30 &&
	    dtt_line_value(out, "egid ") == (long)gid, "UDT_HELLO_KARM for "
	    "a held set-gid image of the tree, as uid 65534 then as root: "
	    "%d, %d, want EPERM (%d), 0; its calls %ld, want 30", e1, e2,
	    EPERM, dtt_line_value(out, "@[kt_setid]: ")))
		fprintf(stderr, "%s", out);
out:
	if (ka_dumpset) {
		ka_dumpable(ka_dumpold);
		ka_dumpset = 0;
	}
	(void)unlink(setid);
	(void)rmdir(dir);
	setid[0] = '\0';
	dir[0] = '\0';
}
