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
 * sec_test MODE DTD
 *
 * Attacks on dtd by an ordinary user (a throwaway one, made and removed
 * here), each against a private dtd:
 *
 *   ksyms	the kernel symbol image takes the device's owner, group and
 *		mode: root only by default, the --group group with it
 *   device	a symlink planted at the --device path is refused and its
 *		target left alone; so is a path in a directory the user owns
 *   ingest	a directory the user owns is refused for the ingest socket,
 *		so the chmod race on it has nothing to win
 *   enable	the enable table a tracee gets cannot be made writable
 *   opens	root opens and closes the device 100000 times in seconds;
 *		a member of the --group group is capped (EMFILE)
 *   memory	opens beyond --max-memory fail with ENOMEM, logged, while
 *		the existing opens keep working
 *   setuid	a tracee that got a ring starts a helper keeping it mapped
 *		(forked, then again as a CLONE_VM child, which keeps the old
 *		memory alive) and execs a set-uid root program: nothing the
 *		helper writes after the exec reaches root's reader as that
 *		program's
 *   exec	the same with a program of the user's own (not set-id):
 *		the image that attached is gone, so are its helper's records;
 *		and a tracee that execs between connecting and the hello (its
 *		helper says it): the new image never maps the ring, so none
 *		of the helper's records are taken as its
 *   names	a tracee's records as tid 1 (init's) are discarded and
 *		counted; a comm it claims ("systemd") is replaced by its own
 *   pidreuse	a tracee exits and is reaped while dtd is stopped, and its
 *		pid goes to a process of root's: the records it wrote
 *		before it exited all reach the reader (sec_test5.c)
 *   readers	two threads reading one descriptor both sleep
 *		interruptibly and both end with EINTR on a signal (a regular
 *		file's position lock would leave one in D state)
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <userdt/udt_wire.h>

#include "dtt.h"
#include "sec_test.h"

struct dtt_user		sec_user;
const char		*sec_dtd;

/* fn(arg) as sec_user (dtt_user_run()). */
int
as_user(int (*fn)(void *), void *arg)
{
	return dtt_user_run(&sec_user, fn, arg);
}

/* open(path, O_RDONLY): 0 or the errno. */
static int
try_read(void *arg)
{
	int fd;

	if ((fd = open(arg, O_RDONLY | O_CLOEXEC)) == -1)
		return errno;
	close(fd);
	return 0;
}

/* Same owner, group and mode; says which in the check line. */
static void
same_perm(const char *what, const char *a, const char *b)
{
	struct stat sa, sb;

	if (!dtt_check(stat(a, &sa) == 0 && stat(b, &sb) == 0, "%s: stat "
	    "%s and %s", what, a, b))
		return;
	dtt_check(sa.st_uid == sb.st_uid && sa.st_gid == sb.st_gid &&
	    (sa.st_mode & 07777) == (sb.st_mode & 07777),
	    "%s: image %d:%d %04o, device %d:%d %04o", what, (int)sa.st_uid,
	    (int)sa.st_gid, (unsigned)(sa.st_mode & 07777), (int)sb.st_uid,
	    (int)sb.st_gid, (unsigned)(sb.st_mode & 07777));
}

static void
run_ksyms(void)
{
	struct dtt_dtd dd;
	struct stat st;
	char gid[16];
	char *grp[] = { "--group", gid, NULL };
	int e;

	if (!dtt_check(dtt_dtd_init(&dd, "udt-sec") == 0 &&
	    dtt_dtd_start(&dd, sec_dtd, NULL, NULL, 0) != -1,
	    "a private dtd, root only"))
		goto out;
	same_perm("root only", dd.dd_ksyms, dd.dd_dev);
	dtt_check(stat(dd.dd_ksyms, &st) == 0 && st.st_uid == 0 &&
	    st.st_gid == 0 && (st.st_mode & 07777) == 0600,
	    "root only: the image is root's, 0600");
	e = as_user(try_read, dd.dd_ksyms);
	dtt_check(e == EACCES, "root only: %s cannot read the image (%s)",
	    sec_user.du_name, e > 0 ? strerror(e) : "it could");
	dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)), "dtd stopped");

	snprintf(gid, sizeof(gid), "%d", (int)sec_user.du_gid);
	if (!dtt_check(dtt_dtd_start(&dd, sec_dtd, grp, NULL, 0) != -1,
	    "a private dtd, --group %s", gid))
		goto out;
	same_perm("--group", dd.dd_ksyms, dd.dd_dev);
	dtt_check(stat(dd.dd_ksyms, &st) == 0 && st.st_uid == 0 &&
	    st.st_gid == sec_user.du_gid && (st.st_mode & 07777) == 0660,
	    "--group: the image is root's and the group's, 0660");
	e = as_user(try_read, dd.dd_ksyms);
	dtt_check(e == 0, "--group: a member reads the image (%s)",
	    e ? strerror(e) : "yes");
	dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)), "dtd stopped");
out:
	dtt_dtd_fini(&dd, true);
}

/* As the user: plant a symbolic link at the device path. */
static int
plant_link(void *arg)
{
	char **pair = arg;

	return symlink(pair[0], pair[1]) == -1 ? errno : 0;
}

/* As the user: make a directory of their own. */
static int
make_dir(void *arg)
{
	return mkdir(arg, 0777) == -1 ? errno : 0;
}

/* The victim's content is still what we wrote, and it is no mount. */
static bool
victim_intact(const char *victim, const char *content, dev_t dev)
{
	char buf[64];
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(victim, O_RDONLY | O_CLOEXEC)) == -1)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0 || stat(victim, &st) == -1)
		return false;
	buf[n] = '\0';
	return strcmp(buf, content) == 0 && st.st_dev == dev;
}

static void
run_device(void)
{
	static const char content[] = "root's secret\n";
	struct dtt_dtd dd;
	struct stat st;
	char victim[160], link[64], udir[64], err[512];
	char *pair[2] = { victim, link };
	int fd, e;

	link[0] = udir[0] = '\0';
	if (!dtt_check(dtt_dtd_init(&dd, "udt-sec") == 0, "a directory"))
		return;
	/* Root's file the attacker wants hidden (as /etc/shadow). */
	snprintf(victim, sizeof(victim), "%s/victim", dd.dd_dir);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (!dtt_check(fd != -1 && write(fd, content, sizeof(content) - 1) ==
	    (ssize_t)sizeof(content) - 1 && stat(victim, &st) == 0,
	    "root's victim file"))
		goto out;
	close(fd);

	/* /tmp is sticky and root's: names there are anyone's to plant. */
	snprintf(link, sizeof(link), "/tmp/udt-sec-dt.%s", sec_user.du_name);
	e = as_user(plant_link, pair);
	if (!dtt_check(e == 0, "%s plants %s -> %s (%s)", sec_user.du_name,
	    link, victim, e ? strerror(e) : "done"))
		goto out;
	snprintf(dd.dd_dev, sizeof(dd.dd_dev), "%s", link);
	dtt_check(dtt_dtd_start(&dd, sec_dtd, NULL, err, sizeof(err)) == -1 &&
	    strstr(err, "symbolic link") != NULL,
	    "dtd --device on the planted link refuses: \"%s\"", err);
	dtt_check(victim_intact(victim, content, st.st_dev),
	    "the link's target is untouched and not mounted over");
	dtt_check(lstat(link, &st) == 0 && S_ISLNK(st.st_mode),
	    "the planted link is left as it was");
	unlink(link);

	/* A directory the user owns: they could swap names under dtd. */
	snprintf(udir, sizeof(udir), "/tmp/udt-sec-dir.%s", sec_user.du_name);
	e = as_user(make_dir, udir);
	if (!dtt_check(e == 0, "%s makes %s", sec_user.du_name, udir))
		goto out;
	snprintf(dd.dd_dev, sizeof(dd.dd_dev), "%s/dt", udir);
	dtt_check(dtt_dtd_start(&dd, sec_dtd, NULL, err, sizeof(err)) == -1 &&
	    strstr(err, "others can write") != NULL,
	    "dtd --device in the user's directory refuses: \"%s\"", err);
	dtt_check(access(dd.dd_dev, F_OK) == -1 && errno == ENOENT,
	    "and created nothing there");

	/* A fresh name in /tmp itself is still fine. */
	snprintf(dd.dd_dev, sizeof(dd.dd_dev), "/tmp/udt-sec-ok.%s",
	    sec_user.du_name);
	if (dtt_check(dtt_dtd_start(&dd, sec_dtd, NULL, err, sizeof(err)) !=
	    -1, "dtd --device %s serves (%s)", dd.dd_dev, err)) {
		fd = dtt_open(dd.dd_dev);
		dtt_check(fd != -1, "the device opens");
		if (fd != -1)
			close(fd);
		dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)),
		    "dtd stopped");
		dtt_check(access(dd.dd_dev, F_OK) == -1 && errno == ENOENT,
		    "and removed the file it created");
	}
out:
	if (link[0] != '\0')
		unlink(link);
	if (udir[0] != '\0')
		rmdir(udir);
	unlink(victim);
	dtt_dtd_fini(&dd, true);
}

/*
 * As the user, until killed: keep replacing the socket's name in their
 * directory by a link to root's victim, the old chmod race's move.
 */
static int
swap_loop(void *arg)
{
	char **pair = arg;

	for (;;) {
		(void)unlink(pair[1]);
		(void)symlink(pair[0], pair[1]);
	}
	return 0;
}

uint32_t	sec_nsys;	/* syscall probes, as a tracee says */

/* As the user: a tracee's handshake on the socket (0 when welcomed). */
static int
user_hello(void *arg)
{
	struct udt_welcome w;
	int fds[2], fd;

	if ((fd = dtt_tracee_hello(arg, sec_nsys, &w, fds)) == -1)
		return errno ? errno : EPROTO;
	close(fds[0]);
	close(fds[1]);
	close(fd);
	return 0;
}

/* A tracee's hello as the user, on the socket of dtd dd. */
int
user_hello_fork(const struct dtt_dtd *dd, const char *sock)
{
	struct dtioc_probe_info *pi;
	size_t n;
	int fd;

	sec_nsys = 0;
	if ((fd = dtt_open(dd->dd_dev)) == -1)
		return errno;
	pi = dtt_plist(fd, &n);
	close(fd);
	if (pi == NULL)
		return EIO;
	sec_nsys = dtt_nsys(pi, n, NULL);
	free(pi);
	return as_user(user_hello, (void *)sock);
}

static void
run_ingest(void)
{
	struct dtt_dtd dd;
	struct stat st;
	char victim[160], udir[64], sock[128], link[64], err[512];
	char *pair[2] = { victim, sock };
	char *args[] = { "--no-ksyms", "--ingest", sock, NULL };
	pid_t swapper = -1;
	int fd, i, refused, e;

	udir[0] = link[0] = '\0';
	if (!dtt_check(dtt_dtd_init(&dd, "udt-sec") == 0, "a directory"))
		return;
	snprintf(victim, sizeof(victim), "%s/victim", dd.dd_dir);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (!dtt_check(fd != -1, "root's victim file, 0600"))
		goto out;
	close(fd);

	/* The race, 100 times, in a directory the user owns. */
	snprintf(udir, sizeof(udir), "/tmp/udt-sec-ing.%s", sec_user.du_name);
	if (!dtt_check(as_user(make_dir, udir) == 0, "%s makes %s",
	    sec_user.du_name, udir))
		goto out;
	snprintf(sock, sizeof(sock), "%s/ingest.sock", udir);
	fflush(stdout);
	if ((swapper = fork()) == 0) {
		if (dtt_user_become(&sec_user) == -1)
			_exit(255);
		_exit(swap_loop(pair));
	}
	for (i = refused = 0; i < 100 && swapper > 0; i++) {
		if (dtt_dtd_start(&dd, sec_dtd, args, err, sizeof(err)) ==
		    -1) {
			if (strstr(err, "refusing it for the ingest socket") !=
			    NULL)
				refused++;
		} else
			dtt_dtd_stop(&dd, SIGTERM);
		if (stat(victim, &st) == -1 || (st.st_mode & 07777) != 0600)
			break;
	}
	dtt_check(refused == 100, "dtd refused the user's directory %d "
	    "times of 100 (%s)", refused, err);
	dtt_check(i == 100 && stat(victim, &st) == 0 &&
	    (st.st_mode & 07777) == 0600 && st.st_uid == 0,
	    "the victim is still root's 0600 after %d starts", i);
	if (swapper > 0)
		dtt_stop(swapper, SIGKILL, DTT_EXIT_MS);
	swapper = -1;

	/* A link to a root directory in its place is refused too. */
	snprintf(link, sizeof(link), "/tmp/udt-sec-lnk.%s", sec_user.du_name);
	pair[0] = dd.dd_dir;
	pair[1] = link;
	if (dtt_check(as_user(plant_link, pair) == 0, "%s plants %s -> %s",
	    sec_user.du_name, link, dd.dd_dir)) {
		snprintf(sock, sizeof(sock), "%s/ingest.sock", link);
		dtt_check(dtt_dtd_start(&dd, sec_dtd, args, err, sizeof(err)) ==
		    -1 && strstr(err, "symbolic link") != NULL,
		    "dtd refuses the linked directory: \"%s\"", err);
	}

	/* A missing directory: dtd makes it, root's 0755. */
	snprintf(sock, sizeof(sock), "%s/run/ingest.sock", dd.dd_dir);
	if (dtt_check(dtt_dtd_start(&dd, sec_dtd, args, err, sizeof(err)) !=
	    -1, "dtd --ingest in a missing directory starts (%s)", err)) {
		dtt_check(stat(sock, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    st.st_uid == 0 && (st.st_mode & 07777) == 0666,
		    "the socket is root's, 0666 (%04o)",
		    (unsigned)(st.st_mode & 07777));
		e = user_hello_fork(&dd, sock);
		dtt_check(e == 0, "%s's tracee is welcomed (%s)",
		    sec_user.du_name, e ? strerror(e) : "yes");
		*strrchr(sock, '/') = '\0';
		dtt_check(stat(sock, &st) == 0 && st.st_uid == 0 &&
		    (st.st_mode & 07777) == 0755, "%s is root's, 0755", sock);
		strcat(sock, "/ingest.sock");
		dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)),
		    "dtd stopped");
		dtt_check(access(sock, F_OK) == -1 && errno == ENOENT,
		    "and removed its socket");
		*strrchr(sock, '/') = '\0';
		dtt_check(access(sock, F_OK) == -1 && errno == ENOENT,
		    "and the directory it made, %s", sock);
		rmdir(sock);
	}

	/* Sticky and root's, like /tmp: fine. */
	snprintf(sock, sizeof(sock), "%s/sticky", dd.dd_dir);
	if (mkdir(sock, 0700) == 0 && chmod(sock, 01777) == 0) {
		strcat(sock, "/ingest.sock");
		if (dtt_check(dtt_dtd_start(&dd, sec_dtd, args, err,
		    sizeof(err)) != -1, "dtd --ingest in a sticky directory "
		    "of root's (%s)", err)) {
			e = user_hello_fork(&dd, sock);
			dtt_check(e == 0, "%s's tracee is welcomed there (%s)",
			    sec_user.du_name, e ? strerror(e) : "yes");
			dtt_dtd_stop(&dd, SIGTERM);
		}
		*strrchr(sock, '/') = '\0';
		rmdir(sock);
	}
out:
	if (swapper > 0)
		dtt_stop(swapper, SIGKILL, DTT_EXIT_MS);
	if (udir[0] != '\0') {
		snprintf(sock, sizeof(sock), "%s/ingest.sock", udir);
		unlink(sock);
		rmdir(udir);
	}
	if (link[0] != '\0')
		unlink(link);
	unlink(victim);
	dtt_dtd_fini(&dd, true);
}

/*
 * As the user, a tracee that wants to write its enable table: every way
 * must fail.  Returns a bit per way that worked, 0 when none did.
 */
static int
write_table(void *arg)
{
	struct udt_welcome w;
	char path[64];
	void *p;
	int fds[2], fd, rw, won = 0;

	if ((fd = dtt_tracee_hello(arg, sec_nsys, &w, fds)) == -1)
		return 0x80;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[1]);
	if ((rw = open(path, O_RDWR | O_CLOEXEC)) != -1) {
		won |= 1;
		close(rw);
	}
	p = mmap(NULL, w.uw_tabsize, PROT_READ | PROT_WRITE, MAP_SHARED,
	    fds[1], 0);
	if (p != MAP_FAILED) {
		won |= 2;
		munmap(p, w.uw_tabsize);
	}
	p = mmap(NULL, w.uw_tabsize, PROT_READ, MAP_SHARED, fds[1], 0);
	if (p == MAP_FAILED)
		won |= 0x40;		/* not even readable: broken */
	else {
		if (mprotect(p, w.uw_tabsize, PROT_READ | PROT_WRITE) == 0)
			won |= 4;
		munmap(p, w.uw_tabsize);
	}
	if (fchmod(fds[1], 0666) == 0)
		won |= 8;
	if (write(fds[1], "x", 1) != -1)
		won |= 0x10;
	close(fds[0]);
	close(fds[1]);
	close(fd);
	return won;
}

static void
run_enable(void)
{
	struct dtt_dtd dd;
	char *args[] = { "--no-ksyms", NULL };
	int won;

	if (!dtt_check(dtt_dtd_init(&dd, "udt-sec") == 0 &&
	    dtt_dtd_start(&dd, sec_dtd, args, NULL, 0) != -1, "a private dtd"))
		goto out;
	/* sec_nsys, and the hello itself as root, through the helper. */
	if (!dtt_check(user_hello_fork(&dd, dd.dd_sock) == 0,
	    "%s's tracee is welcomed", sec_user.du_name))
		goto out;
	won = as_user(write_table, dd.dd_sock);
	dtt_check(won == 0, "%s's tracee cannot write its table: reopen "
	    "O_RDWR %s, mmap PROT_WRITE %s, mprotect PROT_WRITE %s, fchmod "
	    "%s, write %s%s", sec_user.du_name, won & 1 ? "WORKED" : "fails",
	    won & 2 ? "WORKED" : "fails", won & 4 ? "WORKED" : "fails",
	    won & 8 ? "WORKED" : "fails", won & 0x10 ? "WORKED" : "fails",
	    won & 0xc0 ? " (but the handshake or read mapping failed)" : "");
	dtt_check(dtt_exited0(dtt_dtd_stop(&dd, SIGTERM)), "dtd stopped");
out:
	dtt_dtd_fini(&dd, true);
}

int
main(int argc, char *argv[])
{
	int status;

	if (argc != 3) {
		fprintf(stderr, "usage: sec_test ksyms|device|ingest|enable|"
		    "opens|memory|readers|setuid|exec|names|mapsmem|pidreuse "
		    "DTD\n");
		return 2;
	}
	sec_dtd = argv[2];
	if (!dtt_check(dtt_user_add(&sec_user) == 0, "a throwaway user %s",
	    sec_user.du_name))
		return dtt_done();
	if (strcmp(argv[1], "ksyms") == 0)
		run_ksyms();
	else if (strcmp(argv[1], "device") == 0)
		run_device();
	else if (strcmp(argv[1], "ingest") == 0)
		run_ingest();
	else if (strcmp(argv[1], "enable") == 0)
		run_enable();
	else if (strcmp(argv[1], "opens") == 0)
		run_opens();
	else if (strcmp(argv[1], "memory") == 0)
		run_memory();
	else if (strcmp(argv[1], "readers") == 0)
		run_readers();
	else if (strcmp(argv[1], "setuid") == 0)
		run_setuid();
	else if (strcmp(argv[1], "exec") == 0)
		run_exec();
	else if (strcmp(argv[1], "names") == 0)
		run_names();
	else if (strcmp(argv[1], "mapsmem") == 0)
		run_mapsmem();
	else if (strcmp(argv[1], "pidreuse") == 0)
		run_pidreuse();
	else
		dtt_check(false, "no test mode '%s'", argv[1]);
	dtt_user_del(&sec_user);
	status = dtt_done();
	return status || dtt_npass < 2;
}
