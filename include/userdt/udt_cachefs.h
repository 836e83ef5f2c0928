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
 * Which file systems the preload library's caches may be mapped from,
 * and the launcher's word on the cache's own.  A file mapped from a
 * network file system may be removed or replaced by another host, one
 * of a FUSE daemon's whenever it likes: the mapping's next fault is then
 * a SIGBUS in whatever runs there, so plans are read and images not
 * used from them (udt_rw_image.c).  Header-only: the library (raw calls,
 * no libc there) and the launchers share it.
 */
#ifndef USERDT_UDT_CACHEFS_H
#define USERDT_UDT_CACHEFS_H

#include <stdint.h>

/*
 * Set by a launcher to the unique id of the mount its user's cache
 * (<cache>/userdt) lies on, when statfs(2) found it neither a network
 * nor a FUSE file system; unset otherwise.  Such an id (statx(2)'s
 * STATX_MNT_ID_UNIQUE, Linux 6.8) is never given to another mount while
 * the system runs, and a mount's super block, so its type, does not
 * change: a cache file whose statx names that mount is on a file
 * system already judged, and the library skips its own fstatfs (one a
 * start).  A device number could not say as much: an anonymous one (a
 * tmpfs's, FUSE's) is reused by the next mount, and a FUSE file system
 * on a block device (fuseblk: ntfs-3g, exfat) or a cluster one (GFS2,
 * OCFS2) has the disk's.
 */
#define UDT_CACHEFS_ENV		"USERDT_CACHEFS"

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE	0x4000U
#endif

/* Whether statfs(2)'s f_type is a network or FUSE file system's.  Pure. */
static inline int
udt_fs_remote_type(uint32_t type)
{
	static const uint32_t magic[] = {
		0x6969,		/* NFS_SUPER_MAGIC */
		0x517b,		/* SMB_SUPER_MAGIC */
		0xff534d42,	/* CIFS_SUPER_MAGIC */
		0xfe534d42,	/* SMB2_SUPER_MAGIC */
		0x65735546,	/* FUSE_SUPER_MAGIC, fuseblk's too */
		0x01021997,	/* V9FS_MAGIC */
		0x00c36400,	/* CEPH_SUPER_MAGIC */
		0x5346414f,	/* AFS_SUPER_MAGIC */
		0x6b414653,	/* AFS_FS_MAGIC */
		0x73757245,	/* CODA_SUPER_MAGIC */
		0x7461636f,	/* OCFS2_SUPER_MAGIC */
		0x01161970,	/* GFS2_MAGIC */
		0x20030528,	/* ORANGEFS_DEVREQ_MAGIC */
		0x0bd00bd0,	/* Lustre's */
		0x47504653,	/* GPFS' */
		0xbeefdead,	/* SNFS' (StorNext) */
	};
	size_t i;

	for (i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if (type == magic[i])
			return 1;
	return 0;
}

#endif /* USERDT_UDT_CACHEFS_H */
