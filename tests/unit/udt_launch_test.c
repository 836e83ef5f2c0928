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
 * udt_launch_test BUILT INSTALLED BINDIR LIBREL
 *
 * How dtrun and btrace -c find the preload library and hand it on
 * (providers/syscall/launch/udt_launch.h).  BUILT and INSTALLED are the paths
 * meson configured: this program runs from the build tree, so without
 * USERDT_PRELOAD it must get BUILT; a copy of it run from a temporary
 * directory (outside the tree) must get INSTALLED; a copy run from
 * ROOT/BINDIR, with a library at ROOT/LIBREL (BINDIR and LIBREL relative
 * to the prefix, as meson configured them), must get that library, as an
 * installed tree moved under a DESTDIR does.
 */
#include <errno.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtt.h"
#include "udt_launch.h"

/* Whether variable name holds want; want NULL: it is unset. */
static bool
env_is(const char *name, const char *want)
{
	const char *v = getenv(name);

	return want == NULL ? v == NULL : v != NULL && strcmp(v, want) == 0;
}

/*
 * The launcher's word on the socket's directory (UDT_SOCKDIR_ENV): said
 * for a path whose every directory is ours or root's and written by
 * nobody else, and for no other; a word inherited for another path is
 * not passed on.
 */
static void
sockdir_word(void)
{
	char dir[] = "/tmp/udt-launch-sd.XXXXXX", sub[64], sock[96];
	char want[128];
	struct stat st;
	int fixedtmp;

	if (!dtt_check(mkdtemp(dir) != NULL && chmod(dir, 0755) == 0,
	    "a directory %s", dir))
		return;
	snprintf(sub, sizeof(sub), "%s/fixed", dir);
	fixedtmp = lstat("/tmp", &st) == 0 &&
	    (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
	(void)mkdir(sub, 0700);

	/* / is root's, 0755: a socket right under it is vouched for. */
	setenv("USERDT_SOCKDIR", "1:/elsewhere", 1);
	(void)udt_launch_env("/a.so", "/s.sock");
	snprintf(want, sizeof(want), "%u:/s.sock", (unsigned int)geteuid());
	dtt_check(lstat("/", &st) != 0 || (st.st_mode & 022) != 0 ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    env_is("USERDT_SOCKDIR", want),
	    "a socket in /: the word is said for it (%s)",
	    getenv("USERDT_SOCKDIR") ? getenv("USERDT_SOCKDIR") : "unset");

	/* Below the sticky /tmp, which anyone may write: not vouched for. */
	snprintf(sock, sizeof(sock), "%s/ingest.sock", sub);
	(void)udt_launch_env("/a.so", sock);
	dtt_check(fixedtmp || env_is("USERDT_SOCKDIR", NULL),
	    "a socket below /tmp: no word, the one inherited not passed on");

	/* A directory others may write, a link, a relative or odd name. */
	setenv("USERDT_SOCKDIR", "1:/elsewhere", 1);
	(void)udt_launch_env("/a.so", "s.sock");
	dtt_check(env_is("USERDT_SOCKDIR", NULL), "a relative name: no word");
	setenv("USERDT_SOCKDIR", "1:/elsewhere", 1);
	(void)udt_launch_env("/a.so", "/tmp/../s.sock");
	dtt_check(env_is("USERDT_SOCKDIR", NULL), "a name with ..: no word");
	setenv("USERDT_SOCKDIR", "1:/elsewhere", 1);
	(void)udt_launch_env("/a.so", "/proc/self/cwd/s.sock");
	dtt_check(env_is("USERDT_SOCKDIR", NULL), "a name through a "
	    "symbolic link: no word");
	rmdir(sub);
	rmdir(dir);
	unsetenv("USERDT_SOCKDIR");
	unsetenv("USERDT_SOCKET");
}

/*
 * The launcher's word on the cache's mount (UDT_CACHEFS_ENV): its
 * unique id when the cache is there (and on no network or FUSE file
 * system), no word without a cache or with the cache off.
 */
static void
cachefs_word(void)
{
	char dir[] = "/tmp/udt-launch-cf.XXXXXX", sub[64], want[32];
	struct statx sx;
	struct statfs sf;
	int local;

	if (!dtt_check(mkdtemp(dir) != NULL, "a directory %s", dir))
		return;
	snprintf(sub, sizeof(sub), "%s/userdt", dir);
	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("USERDT_PLAN_CACHE");
	setenv("USERDT_CACHEFS", "1", 1);
	(void)udt_launch_env("/a.so", NULL);
	dtt_check(env_is("USERDT_CACHEFS", NULL),
	    "no cache yet: no word, the one inherited not passed on");
	(void)mkdir(sub, 0700);
	local = statfs(sub, &sf) == 0 && sf.f_type != 0x65735546 &&
	    sf.f_type != 0x6969;
	want[0] = '\0';
	if (statx(AT_FDCWD, sub, AT_SYMLINK_NOFOLLOW, 0x4000U, &sx) == 0 &&
	    (sx.stx_mask & 0x4000U))
		snprintf(want, sizeof(want), "%llu",
		    (unsigned long long)sx.stx_mnt_id);
	(void)udt_launch_env("/a.so", NULL);
	dtt_check(!local || want[0] == '\0' ||
	    env_is("USERDT_CACHEFS", want), "a cache on a local file system: "
	    "its mount's unique id (%s, want %s)", getenv("USERDT_CACHEFS") ?
	    getenv("USERDT_CACHEFS") : "unset", want);
	setenv("USERDT_PLAN_CACHE", "0", 1);
	(void)udt_launch_env("/a.so", NULL);
	dtt_check(env_is("USERDT_CACHEFS", NULL), "the cache off: no word");
	unsetenv("USERDT_PLAN_CACHE");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("USERDT_CACHEFS");
	rmdir(sub);
	rmdir(dir);
}

/*
 * The same word below fixed parents, which only root can make here (/
 * and /run are root's, 0755; /tmp is anyone's): a directory others may
 * write, not sticky, gets no word, though every directory above it is
 * fixed; a 0755 directory inside a 0700 one of root's gets one, for
 * that path (a socket deeper than /s.sock).  What it makes it removes.
 */
static void
sockdir_parents(void)
{
	char top[] = "/run/udt-launch-sd.XXXXXX", open_[64], shut[64];
	char sub[80], sock[128], want[160];
	struct stat st;

	if (geteuid() != 0 || lstat("/run", &st) != 0 || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0) {
		dtt_check(true, "a word below fixed parents: not tried (root "
		    "only, with a root 0755 /run)");
		return;
	}
	if (!dtt_check(mkdtemp(top) != NULL && chmod(top, 0755) == 0,
	    "a directory %s", top))
		return;
	snprintf(open_, sizeof(open_), "%s/open", top);
	snprintf(shut, sizeof(shut), "%s/shut", top);
	snprintf(sub, sizeof(sub), "%s/shut/sub", top);

	/* chmod, not mkdir's mode alone: the umask would take the bits. */
	if (dtt_check(mkdir(open_, 0777) == 0 && chmod(open_, 0777) == 0,
	    "a directory anyone may write, not sticky: %s", open_)) {
		snprintf(sock, sizeof(sock), "%s/s.sock", open_);
		setenv("USERDT_SOCKDIR", "1:/elsewhere", 1);
		(void)udt_launch_env("/a.so", sock);
		dtt_check(env_is("USERDT_SOCKDIR", NULL), "a socket in a 0777 "
		    "directory under fixed parents: no word (%s)",
		    getenv("USERDT_SOCKDIR") ? getenv("USERDT_SOCKDIR") :
		    "unset");
	}
	if (dtt_check(mkdir(shut, 0700) == 0 && chmod(shut, 0700) == 0 &&
	    mkdir(sub, 0755) == 0 && chmod(sub, 0755) == 0,
	    "a 0755 directory in a 0700 one: %s", sub)) {
		snprintf(sock, sizeof(sock), "%s/s.sock", sub);
		snprintf(want, sizeof(want), "0:%s", sock);
		unsetenv("USERDT_SOCKDIR");
		(void)udt_launch_env("/a.so", sock);
		dtt_check(env_is("USERDT_SOCKDIR", want), "a socket in a 0755 "
		    "child of a 0700 directory of root's: the word %s (%s)",
		    want, getenv("USERDT_SOCKDIR") ?
		    getenv("USERDT_SOCKDIR") : "unset");
	}
	rmdir(sub);
	rmdir(shut);
	rmdir(open_);
	rmdir(top);
	unsetenv("USERDT_SOCKDIR");
	unsetenv("USERDT_SOCKET");
}

/* Copy our executable to the path to; 0 or -1. */
static int
copy_self(const char *to)
{
	char buf[65536];
	ssize_t n;
	int in, out, rc = 0;

	if ((in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	if ((out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0700)) == -1) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			rc = -1;
			break;
		}
	if (n < 0 || close(out) != 0)
		rc = -1;
	close(in);
	return rc;
}

/* mkdir -p of path's directory; 0 or -1. */
static int
mkdirs(const char *path)
{
	char buf[PATH_MAX], *s;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", path) >= sizeof(buf))
		return -1;
	for (s = buf + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		if (mkdir(buf, 0700) == -1 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return 0;
}

/*
 * What a copy outside the build tree finds: its stdout, 0 or -1.  The
 * copy lies at ROOT/bindir/copy (ROOT/copy when bindir is NULL); with
 * librel, an empty file stands at ROOT/librel, whose path goes to lib.
 */
static int
found_outside(char *buf, size_t len, const char *bindir, const char *librel,
    char *lib, size_t liblen)
{
	char dir[] = "/tmp/udt-launch.XXXXXX", path[PATH_MAX];
	char *argv[] = { path, "--where", NULL };
	int p[2], fd, status = -1;
	ssize_t n = -1;
	pid_t pid;

	if (mkdtemp(dir) == NULL)
		return -1;
	if (bindir != NULL)
		snprintf(path, sizeof(path), "%s/%s/copy", dir, bindir);
	else
		snprintf(path, sizeof(path), "%s/copy", dir);
	if (librel != NULL) {
		snprintf(lib, liblen, "%s/%s", dir, librel);
		if (mkdirs(lib) == -1 || (fd = open(lib,
		    O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == -1)
			goto out;
		close(fd);
	}
	if (mkdirs(path) == 0 && copy_self(path) == 0 &&
	    pipe2(p, O_CLOEXEC) == 0) {
		pid = dtt_spawn(argv, NULL, -1, p[1], -1, -1);
		close(p[1]);
		if (pid != -1) {
			n = read(p[0], buf, len - 1);
			status = dtt_stop(pid, 0, DTT_EXIT_MS);
		}
		close(p[0]);
	}
out:
	/* Whatever was made under dir: a test's own temporary tree. */
	{
		char *rm[] = { "/bin/rm", "-rf", dir, NULL };

		if ((pid = dtt_spawn(rm, NULL, -1, -1, -1, -1)) != -1)
			(void)dtt_stop(pid, 0, DTT_EXIT_MS);
	}
	if (n < 0 || !dtt_exited0(status))
		return -1;
	buf[n] = '\0';
	return 0;
}

int
main(int argc, char *argv[])
{
	char lib[PATH_MAX], out[PATH_MAX + 8], want[PATH_MAX + 8];
	char made[PATH_MAX];
	char tiny[8];
	int r, e;

	if (argc == 2 && strcmp(argv[1], "--where") == 0) {
		unsetenv(UDT_LAUNCH_ENV);
		udt_launch_lib(lib, sizeof(lib));
		printf("%s\n", lib);
		return 0;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: udt_launch_test BUILT INSTALLED "
		    "BINDIR LIBREL\n");
		return 2;
	}

	unsetenv(UDT_LAUNCH_ENV);
	r = udt_launch_lib(lib, sizeof(lib));
	dtt_check(r == 0 && strcmp(lib, argv[1]) == 0,
	    "from the build tree: the library built there, %s", argv[1]);
	setenv(UDT_LAUNCH_ENV, "", 1);
	r = udt_launch_lib(lib, sizeof(lib));
	dtt_check(r == 0 && strcmp(lib, argv[1]) == 0,
	    "an empty USERDT_PRELOAD counts as unset");
	setenv(UDT_LAUNCH_ENV, "/proc/self/exe", 1);
	r = udt_launch_lib(lib, sizeof(lib));
	dtt_check(r == 0 && strcmp(lib, "/proc/self/exe") == 0,
	    "USERDT_PRELOAD overrides the build tree");
	setenv(UDT_LAUNCH_ENV, "/nonexistent/lib.so", 1);
	r = udt_launch_lib(lib, sizeof(lib));
	e = errno;
	dtt_check(r == -1 && e == ENOENT &&
	    strcmp(lib, "/nonexistent/lib.so") == 0,
	    "a missing library fails with ENOENT and is named");
	r = udt_launch_lib(tiny, sizeof(tiny));
	e = errno;
	dtt_check(r == -1 && e == ENAMETOOLONG,
	    "a path longer than the buffer fails with ENAMETOOLONG");
	unsetenv(UDT_LAUNCH_ENV);
	snprintf(want, sizeof(want), "%s\n", argv[2]);
	r = found_outside(out, sizeof(out), NULL, NULL, NULL, 0);
	dtt_check(r == 0 && strcmp(out, want) == 0,
	    "a copy outside the build tree: the installed library, %s",
	    argv[2]);
	r = found_outside(out, sizeof(out), argv[3], NULL, NULL, 0);
	dtt_check(r == 0 && strcmp(out, want) == 0,
	    "a copy in ROOT/%s with no library beside it: %s", argv[3],
	    argv[2]);
	r = found_outside(out, sizeof(out), argv[3], argv[4], made,
	    sizeof(made));
	snprintf(want, sizeof(want), "%s\n", made);
	dtt_check(r == 0 && strcmp(out, want) == 0,
	    "a copy in ROOT/%s: the library at ROOT/%s", argv[3], argv[4]);

	unsetenv("LD_PRELOAD");
	unsetenv("USERDT_SOCKET");
	r = udt_launch_env("/a.so", NULL);
	dtt_check(r == 0 && env_is("LD_PRELOAD", "/a.so") &&
	    env_is("USERDT_SOCKET", NULL),
	    "no LD_PRELOAD: the library alone, no socket set");
	setenv("LD_PRELOAD", "", 1);
	r = udt_launch_env("/a.so", "/s.sock");
	dtt_check(r == 0 && env_is("LD_PRELOAD", "/a.so") &&
	    env_is("USERDT_SOCKET", "/s.sock"),
	    "empty LD_PRELOAD: the library alone; the socket set");
	setenv("LD_PRELOAD", "/b.so /c.so", 1);
	r = udt_launch_env("/a.so", NULL);
	dtt_check(r == 0 && env_is("LD_PRELOAD", "/a.so:/b.so /c.so") &&
	    env_is("USERDT_SOCKET", "/s.sock"),
	    "LD_PRELOAD kept after the library; a NULL socket leaves it");
	sockdir_word();
	sockdir_parents();
	cachefs_word();
	return dtt_done();
}
