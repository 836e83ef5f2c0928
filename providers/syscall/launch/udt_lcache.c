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
 * The launchers keep the preload library's cache bounded
 * (udt_launch_prune(), udt_launch.h).  Plans and images are named by the
 * library's build-id and each object's identity, so every rebuild of the
 * library, and every upgrade of libc, leaves the old ones behind for
 * good: some 2 MB an image.  The library itself writes them only in a
 * start that decoded, with raw system calls, where a walk of the
 * directories would be a cost the traced program pays; the launcher runs
 * before the program exists, with libc, and pays a stat a launch.
 *
 * An entry is a plan file, or an image directory with the file(s) in it.
 * Its last use is the latest access or modification time of its files:
 * the library maps what it uses, and a mapping updates the access time
 * (under relatime, once a day, which is all the resolution this needs;
 * under noatime an entry looks unused from its writing on, and is
 * written again after it is removed: a decode, never a wrong result).
 * Removing a file a process has mapped leaves its mapping whole; a start
 * that finds a name gone decodes and writes it again.
 *
 * Only what is the user's own is touched, through descriptors of
 * directories opened without following links: a symbolic link planted in
 * the cache removes nothing outside it.
 *
 * The launchers also say, once for the tree, which mount the cache is
 * on when it is no network or FUSE one (udt_launch_cachefs(),
 * udt_cachefs.h): a look every traced start made for itself.
 */
#include <sys/stat.h>
#include <sys/statfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_cachefs.h>

#include "udt_launch.h"

#define UDT_LC_STAMP	".pruned"	/* in <cache>/userdt: the last walk */
#define UDT_LC_EVERY	86400		/* seconds between walks */
#define UDT_LC_TMPAGE	86400		/* a writer's leftover after this */
#define UDT_LC_DAYS	30		/* unused this long: removed */
#define UDT_LC_MAXMB	256		/* the cache's size, at most */
#define UDT_LC_MAXENT	65536		/* entries looked at, at most */
#define UDT_LC_MAXDAYS	36500		/* what the knobs are clamped to */
#define UDT_LC_MAXCAP	(1L << 30)	/* megabytes */

struct udt_lc_ent {
	int		 le_isdir;	/* an image's directory, in images/ */
	ino_t		 le_ino;	/* a plan's, as scanned */
	time_t		 le_used;	/* latest atime or mtime, as scanned */
	uint64_t	 le_bytes;
	char		 le_name[NAME_MAX + 1];
};

struct udt_lc {
	struct udt_lc_ent *lc_ents;
	size_t		 lc_n, lc_max;
	uint64_t	 lc_bytes;	/* of every entry kept so far */
	int		 lc_dfd[2];	/* plans/, images/; -1: none */
	time_t		 lc_now;
	uid_t		 lc_uid;
	int		 lc_removed;
};

static long
udt_lc_env(const char *name, long dflt, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (v == NULL || *v == '\0')
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < 0)
		return dflt;
	return n > max ? max : n;
}

static time_t
udt_lc_used(const struct stat *st)
{
	return st->st_atime > st->st_mtime ? st->st_atime : st->st_mtime;
}

/*
 * What a file costs: its size in pages, not its blocks, which some file
 * systems count late (ZFS, until a commit) or compressed.
 */
static uint64_t
udt_lc_bytes(const struct stat *st)
{
	return ((uint64_t)st->st_size + 4095) & ~(uint64_t)4095;
}

/* A plain file of ours: what the library writes. */
static int
udt_lc_ours(const struct stat *st, uid_t uid)
{
	return S_ISREG(st->st_mode) && st->st_uid == uid;
}

/* A directory of ours that nobody else may write, as the library's. */
static int
udt_lc_ourdir(const struct stat *st, uid_t uid)
{
	return S_ISDIR(st->st_mode) && st->st_uid == uid &&
	    (st->st_mode & 022) == 0;
}

static int
udt_lc_istmp(const char *name)
{
	return strncmp(name, ".tmp.", 5) == 0;
}

/*
 * A writer's temporary name (udt_plan_tmpname()): removed when old
 * enough that its writer is surely gone, never counted as an entry.
 */
static int
udt_lc_tmp(struct udt_lc *lc, int dfd, const char *name,
    const struct stat *st)
{
	if (!udt_lc_istmp(name))
		return 0;
	if (udt_lc_ours(st, lc->lc_uid) &&
	    lc->lc_now - st->st_mtime > UDT_LC_TMPAGE &&
	    unlinkat(dfd, name, 0) == 0)
		lc->lc_removed++;
	return 1;
}

/*
 * An image's directory: its files' sizes and last use (0: none).  -1
 * when something in it is not a file of ours: it is left alone.
 */
static int
udt_lc_imgdir(struct udt_lc *lc, int pfd, const char *name,
    struct udt_lc_ent *e)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, r = 0;

	if ((fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return -1;
	}
	e->le_used = 0;
	e->le_bytes = 0;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			r = -1;
			break;
		}
		if (udt_lc_tmp(lc, fd, de->d_name, &st))
			continue;
		if (!udt_lc_ours(&st, lc->lc_uid)) {
			r = -1;
			break;
		}
		e->le_bytes += udt_lc_bytes(&st);
		if (udt_lc_used(&st) > e->le_used)
			e->le_used = udt_lc_used(&st);
	}
	closedir(d);
	return r;
}

/* Every entry of the directory sub of base (plans or images). */
static void
udt_lc_scan(struct udt_lc *lc, int base, const char *sub, int isdir)
{
	struct udt_lc_ent *e;
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, dfd;

	if ((fd = openat(base, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return;
	if (fstat(fd, &st) == -1 || !udt_lc_ourdir(&st, lc->lc_uid) ||
	    (dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) == -1) {
		close(fd);
		return;
	}
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		close(fd);
		return;
	}
	/* kept open: the entries' removal goes through it */
	lc->lc_dfd[isdir] = fd;
	while ((de = readdir(d)) != NULL && lc->lc_n < UDT_LC_MAXENT) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (udt_lc_tmp(lc, fd, de->d_name, &st))
			continue;
		if (lc->lc_n == lc->lc_max) {
			size_t nmax = lc->lc_max ? 2 * lc->lc_max : 64;
			void *p = realloc(lc->lc_ents, nmax * sizeof(*e));

			if (p == NULL)
				break;
			lc->lc_ents = p;
			lc->lc_max = nmax;
		}
		e = &lc->lc_ents[lc->lc_n];
		memset(e, 0, sizeof(*e));
		if (isdir) {
			if (!udt_lc_ourdir(&st, lc->lc_uid) ||
			    udt_lc_imgdir(lc, fd, de->d_name, e) == -1)
				continue;
			/*
			 * An empty one (a writer's that failed, or whose
			 * leftovers went just now): its modification time,
			 * which the walks' reads do not move.
			 */
			if (e->le_used == 0)
				e->le_used = st.st_mtime;
		} else {
			if (!udt_lc_ours(&st, lc->lc_uid))
				continue;
			e->le_used = udt_lc_used(&st);
			e->le_bytes = udt_lc_bytes(&st);
			e->le_ino = st.st_ino;
		}
		e->le_isdir = isdir;
		snprintf(e->le_name, sizeof(e->le_name), "%s", de->d_name);
		lc->lc_n++;
	}
	closedir(d);
}

/*
 * Whether a file found at removal is still what the scan judged: ours,
 * no newer use, the same file (ino != 0), not a writer's at work.
 */
static int
udt_lc_still(const struct udt_lc *lc, const char *name,
    const struct stat *st, const struct udt_lc_ent *e, ino_t ino)
{
	if (!udt_lc_ours(st, lc->lc_uid) || udt_lc_used(st) > e->le_used ||
	    (ino != 0 && st->st_ino != ino))
		return 0;
	return !udt_lc_istmp(name) || lc->lc_now - st->st_mtime >
	    UDT_LC_TMPAGE;
}

/*
 * A plan file, or an image directory's files then itself, each only if
 * still as scanned: a start that wrote or used one since keeps it.
 * Whether the entry went.
 */
static int
udt_lc_remove(struct udt_lc *lc, const struct udt_lc_ent *e)
{
	int dfd = lc->lc_dfd[e->le_isdir], fd;
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (!e->le_isdir) {
		if (fstatat(dfd, e->le_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !udt_lc_still(lc, e->le_name, &st, e, e->le_ino) ||
		    unlinkat(dfd, e->le_name, 0) == -1)
			return 0;
		lc->lc_removed++;
		return 1;
	}
	if ((fd = openat(dfd, e->le_name, O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1)
		return 0;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    udt_lc_still(lc, de->d_name, &st, e, 0))
			(void)unlinkat(fd, de->d_name, 0);
	}
	closedir(d);
	/* what stayed (a writer's file since) keeps the directory */
	if (unlinkat(dfd, e->le_name, AT_REMOVEDIR) == -1)
		return 0;
	lc->lc_removed++;
	return 1;
}

/* Oldest use first. */
static int
udt_lc_cmp(const void *a, const void *b)
{
	const struct udt_lc_ent *x = a, *y = b;

	return (x->le_used > y->le_used) - (x->le_used < y->le_used);
}

/*
 * The directory base/userdt, under a base of the user's own (the
 * library's rule, udt_plan_mkdirs(): root lent another user's HOME
 * walks nothing there), written by nobody else.  Its stamp says when
 * it was last walked.
 */
static int
udt_lc_open(uid_t uid, time_t now, int force)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char path[PATH_MAX], base[PATH_MAX];
	struct stat st;
	int fd, sfd;

	if (xdg != NULL && *xdg == '/') {
		snprintf(base, sizeof(base), "%s", xdg);
		snprintf(path, sizeof(path), "%s/userdt", xdg);
	} else if (home != NULL && *home == '/' && home[1] != '\0') {
		snprintf(base, sizeof(base), "%s", home);
		snprintf(path, sizeof(path), "%s/.cache/userdt", home);
	} else
		return -1;
	if (stat(base, &st) == -1 || st.st_uid != uid)
		return -1;
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !udt_lc_ourdir(&st, uid)) {
		close(fd);
		return -1;
	}
	if (!force && fstatat(fd, UDT_LC_STAMP, &st, AT_SYMLINK_NOFOLLOW) ==
	    0 && S_ISREG(st.st_mode) && now - st.st_mtime < UDT_LC_EVERY &&
	    st.st_mtime <= now) {
		close(fd);
		return -1;
	}
	/* stamped before the walk: two launchers at once mostly walk once */
	if ((sfd = openat(fd, UDT_LC_STAMP, O_WRONLY | O_CREAT | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC, 0600)) == -1) {
		close(fd);
		return -1;
	}
	(void)futimens(sfd, NULL);
	close(sfd);
	return fd;
}

int
udt_launch_prune(void)
{
	const char *env = getenv("USERDT_PLAN_CACHE"),
	    *now = getenv("USERDT_CACHE_PRUNE");
	struct udt_lc lc;
	long days, maxmb;
	time_t cut;
	uint64_t cap;
	size_t i;
	int base;

	/* the library would not use the cache either */
	if ((env != NULL && strcmp(env, "0") == 0) || getauxval(AT_SECURE))
		return 0;
	memset(&lc, 0, sizeof(lc));
	lc.lc_dfd[0] = lc.lc_dfd[1] = -1;
	lc.lc_now = time(NULL);
	lc.lc_uid = geteuid();
	if ((base = udt_lc_open(lc.lc_uid, lc.lc_now, now != NULL &&
	    strcmp(now, "now") == 0)) == -1)
		return 0;
	days = udt_lc_env("USERDT_CACHE_DAYS", UDT_LC_DAYS, UDT_LC_MAXDAYS);
	maxmb = udt_lc_env("USERDT_CACHE_MAX", UDT_LC_MAXMB, UDT_LC_MAXCAP);
	cut = lc.lc_now - (time_t)days * 86400;
	cap = (uint64_t)maxmb << 20;
	udt_lc_scan(&lc, base, "plans", 0);
	udt_lc_scan(&lc, base, "images", 1);
	if (lc.lc_n > 1)
		qsort(lc.lc_ents, lc.lc_n, sizeof(lc.lc_ents[0]), udt_lc_cmp);
	for (i = 0; i < lc.lc_n; i++)
		lc.lc_bytes += lc.lc_ents[i].le_bytes;
	/* oldest first: the unused too long, then what is over the cap */
	for (i = 0; i < lc.lc_n; i++) {
		if (lc.lc_ents[i].le_used >= cut && lc.lc_bytes <= cap)
			break;
		if (udt_lc_remove(&lc, &lc.lc_ents[i]))
			lc.lc_bytes -= lc.lc_ents[i].le_bytes;
	}
	for (i = 0; i < 2; i++)
		if (lc.lc_dfd[i] != -1)
			close(lc.lc_dfd[i]);
	free(lc.lc_ents);
	close(base);
	return lc.lc_removed;
}

/*
 * The cache's directory opened without following a link, and both looks
 * made through that descriptor: the mount named is the one whose type
 * was judged, whatever the path names meanwhile.  Unset rather than
 * kept on any doubt: the library then makes its fstatfs, as without.
 */
int
udt_launch_cachefs(void)
{
	const char *env = getenv("USERDT_PLAN_CACHE"),
	    *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char path[PATH_MAX], val[32];
	struct statx sx;
	struct statfs sf;
	int fd, n;

	if (env != NULL && strcmp(env, "0") == 0)
		return unsetenv(UDT_CACHEFS_ENV);
	/* Where the library puts it (udt_rw_plan_open()). */
	if (xdg != NULL && *xdg == '/')
		n = snprintf(path, sizeof(path), "%s/userdt", xdg);
	else if (home != NULL && *home == '/' && home[1] != '\0')
		n = snprintf(path, sizeof(path), "%s/.cache/userdt", home);
	else
		return unsetenv(UDT_CACHEFS_ENV);
	if (n < 0 || (size_t)n >= sizeof(path))
		return unsetenv(UDT_CACHEFS_ENV);
	/* One descriptor for both looks: the same directory, the same mount. */
	if ((fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return unsetenv(UDT_CACHEFS_ENV);
	n = fstatfs(fd, &sf) == 0 && !udt_fs_remote_type((uint32_t)sf.f_type) &&
	    statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID_UNIQUE, &sx) == 0 &&
	    (sx.stx_mask & STATX_MNT_ID_UNIQUE) != 0;
	close(fd);
	if (!n)
		return unsetenv(UDT_CACHEFS_ENV);
	snprintf(val, sizeof(val), "%llu", (unsigned long long)sx.stx_mnt_id);
	return setenv(UDT_CACHEFS_ENV, val, 1);
}
