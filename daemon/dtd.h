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
 * dtd's configuration, filled from the command line by dtd.c before
 * anything starts and read-only afterwards ([I] for every member).
 */
#ifndef DTD_H
#define DTD_H

#include <sys/types.h>
#include <stdbool.h>
#include <stdint.h>

enum dtd_frontend {
	DTD_FE_AUTO,		/* CUSE if /dev/cuse exists, else FUSE-file */
	DTD_FE_CUSE,
	DTD_FE_FUSE,
	DTD_FE_SOCKET,		/* --device-socket alone */
};

enum dtd_profile_mode {
	DTD_PROFILE_AUTO,	/* perf, timer fallback if perf is refused */
	DTD_PROFILE_PERF,
	DTD_PROFILE_TIMER,
};

struct dtd_conf {
	const char		*dcf_device;	/* --device, "/dev/dt" */
	const char		*dcf_devsock;	/* --device-socket, or NULL */
	enum dtd_frontend	 dcf_frontend;	/* --frontend */
	bool			 dcf_group_set;	/* --group given */
	gid_t			 dcf_gid;	/* --group */
	bool			 dcf_foreground; /* --foreground */
	unsigned int		 dcf_ringsize;	/* --ring-size, 0: default */
	int			 dcf_ready_fd;	/* --ready-fd, -1: none */
	const char		*dcf_ingest;	/* --ingest socket path */
	const char		*dcf_ksyms;	/* --ksyms, NULL: none */
	bool			 dcf_ksyms_set;	/* --ksyms given */
	enum dtd_profile_mode	 dcf_profile;	/* --profile */
	uint64_t		 dcf_maxmem;	/* --max-memory, 0: RAM */
	unsigned int		 dcf_maxopens;	/* --max-opens, 0: default */
	uint64_t		 dcf_mapsmem;	/* --maps-memory, 0: default */
	uint64_t		 dcf_mapsumem;	/* --maps-user-memory, 0: default */
	bool			 dcf_unpriv;	/* not root: see dtd_unpriv.c */
	uid_t			 dcf_uid;	/* dtd's euid, 0 as root */
	gid_t			 dcf_ugid;	/* dtd's egid when !root */
	const char		*dcf_inject;	/* --inject rules, or NULL */
	const char		*dcf_inject_file; /* --inject-file, or NULL */
	bool			 dcf_strict;	/* --openbsd-strict */
	unsigned int		 dcf_abi;	/* --abi: enum dt_abi */
};

extern struct dtd_conf dtd_conf;

/*
 * Who may use the device: root, and with --group that group; without
 * root, dtd's own user alone.  Everything dtd publishes that only the
 * device's users may see (the device node, the kernel symbol image)
 * takes exactly this owner, group and mode.
 */
static inline uid_t
dtd_dev_uid(void)
{
	return dtd_conf.dcf_uid;
}

static inline gid_t
dtd_dev_gid(void)
{
	if (dtd_conf.dcf_unpriv)
		return dtd_conf.dcf_ugid;
	return dtd_conf.dcf_group_set ? dtd_conf.dcf_gid : 0;
}

static inline mode_t
dtd_dev_mode(void)
{
	return dtd_conf.dcf_group_set ? 0660 : 0600;
}

/*
 * A provider's daemon-side service.  ds_start runs once, on dtd's main
 * thread, after dt_dev_init() and before the device is published; it
 * returns 0 or an errno (dtd then exits with a message).  ds_stop runs
 * once at shutdown, after the front end stopped, in reverse order.
 */
struct dtd_service {
	const char	*ds_name;
	int		(*ds_start)(void);
	void		(*ds_stop)(void);
};

/* NULL-terminated, in start order; defined in dtd_services.c. */
extern const struct dtd_service *const dtd_services[];

/*
 * Front ends: serve the device until SIGTERM, SIGINT or SIGHUP, then tear
 * down (dtd_teardown(), see dt_fe.h).  Main thread; 0 or an errno.
 */
int	dt_fusefile_main(void);
int	dt_cuse_main(void);

/*
 * Whether the front end can take path, by looks alone (no file made): a
 * live dtd's device, or what the front end would refuse as it stands.  dtd_claim_check() asks before anything
 * starts; the front end's own claim decides a race.  Main thread; 0 or
 * an errno, said on stderr.
 */
int	dt_fusefile_check(const char *path);
int	dt_cuse_check(const char *path);

/*
 * Without root (dtd_unpriv.c): check the options against what an
 * ordinary user can have, pick the per-user defaults, and say once what
 * is unavailable.  Main thread, after the options are parsed, before
 * anything starts; exits with a message on options that cannot work.
 */
void	dtd_unpriv_setup(bool device_set, bool ingest_set);

/* "dtd: " and the message on stderr, then exit 1.  Main thread, at start. */
void	dtd_fatal(const char *fmt, ...)
	    __attribute__((noreturn, format(printf, 1, 2)));

#endif /* DTD_H */
