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
 * The device core: what open(2), close(2), read(2) and ioctl(2) on /dev/dt
 * mean, with no knowledge of how requests arrive.  The CUSE and FUSE-file
 * front ends, the unit tests and the fuzzer all drive this interface.
 *
 * Concurrency contract, for every function below unless it says otherwise:
 * callable from any thread; the core serialises configuration changes
 * (open, close, ioctl) behind one lock, and the event path (providers
 * putting events, readers taking them) behind per-ring locks, so a busy
 * producer never waits for an ioctl.
 */
#ifndef DT_DEV_H
#define DT_DEV_H

#include <sys/types.h>
#include <sys/uio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dev/dt/dtvar.h>

struct dt_softc;

/* Who made a request, from the transport's own view of the caller. */
struct dt_cred {
	uid_t		dc_uid;		/* effective uid of the caller */
	gid_t		dc_gid;
	pid_t		dc_pid;		/* calling thread, 0 if unknown */
};

/*
 * Access to the caller's memory for the pointers embedded in ioctl
 * arguments (dtpr_probes, dtar_args).  Both return 0 or an errno (EFAULT
 * for an address the caller cannot write).  The CUSE front end stages the
 * bytes for its retry round, the FUSE-file front end uses
 * process_vm_writev, tests write into their own memory.
 */
struct dt_uaccess {
	int	(*ua_copyout)(void *ua_arg, uint64_t uaddr, const void *src,
		    size_t len);
	void	 *ua_arg;
};

/*
 * Completion of a read.  Called exactly once per dt_dev_read() token:
 * with the records (len > 0, error 0), with len 0 and error 0 (an empty
 * read(2), or one dt_dev_read_cancel() ended without an error while no
 * record was ready), or with len 0 and an errno (EINTR when cancelled,
 * EIO when the device goes away).  buf is valid only
 * during the call.  May run on the caller of dt_dev_read(), on the core's
 * wakeup thread, or on the thread that closes or cancels; it must not
 * call back into the core for the same softc.
 */
typedef void dt_read_done_t(void *token, const void *buf, size_t len,
    int error);

/*
 * dt_read_done_t's records as niov runs, len bytes in all, straight from
 * the rings: the front end must be done with them when it returns.
 * false: it cannot take this token's records so (nothing was done), and
 * the core stages them for dt_read_done_t.
 */
typedef bool dt_read_iov_t(void *token, const struct iovec *iov,
    unsigned int niov, size_t len);

/*
 * The end of a poller's wait that dt_dev_poll() kept: ready when a
 * record arrived (wake the poller), false when the handle is only let go
 * (replaced by a newer poll, or the open closes).  Called once per kept
 * handle, on the same threads and under the same rules as
 * dt_read_done_t.
 */
typedef void dt_poll_done_t(void *ph, bool ready);

struct dt_dev_conf {
	unsigned int	 dcf_ncpus;	/* rings per open; 0: configured CPUs */
	unsigned int	 dcf_ringsize;	/* slots per ring; 0: default */
	dt_read_done_t	*dcf_read_done;
	dt_read_iov_t	*dcf_read_iov;	/* NULL: every read staged */
	dt_poll_done_t	*dcf_poll_done;	/* NULL: pollers are not told */
	uint64_t	 dcf_maxmem;	/* all opens' rings, bytes; 0: RAM */
	unsigned int	 dcf_maxopens;	/* one user's opens, root aside;
					   0: default */
	uid_t		 dcf_owner;	/* may change tracing besides root:
					   dtd's user when it is not root */
	const char	*dcf_inject;	/* --inject rules, or NULL */
	const char	*dcf_inject_file; /* --inject-file, or NULL */
	bool		 dcf_strict;	/* --openbsd-strict: dt(4) exactly */
	unsigned int	 dcf_abi;	/* --abi: enum dt_abi (dt_abi.h) */
	/*
	 * NULL: dt(4)'s providers (dt_prov.h's inits, in pbn order).
	 * Otherwise the only provider init, registering every probe
	 * (dtd --replay: a recording's probe table).
	 */
	int		(*dcf_providers)(void);
};

#define DT_RINGSIZE_DEFAULT	65536	/* bench/btrace: 1M events/s, no loss */
#define DT_RINGSIZE_OPENBSD	16
#define DT_TID_OFFSET_OPENBSD	100000	/* THREAD_PID_OFFSET: strict mode */
#define DT_READ_MAX		(1024 * 1024)	/* bytes per read request */

/*
 * Bring the core up: register every provider's probes (pbn 1..N in
 * registration order), load the fault injection rules and start the
 * wakeup thread.  Call once, before anything else, from one thread.
 * Returns 0 or an errno (EINVAL: bad rules, said on stderr).
 */
int	dt_dev_init(const struct dt_dev_conf *);

/* Release every open (pending reads complete with EIO), stop threads. */
void	dt_dev_fini(void);

/* Number of rings per open and slots per ring, as configured. */
unsigned int	dt_dev_ncpus(void);
unsigned int	dt_dev_ringsize(void);

/*
 * The free slots of the fullest ring a lossless open has put into
 * (dt_ring_room()); UINT_MAX when there is none, or when the device's
 * configuration lock is busy (an ioctl may hold it for milliseconds:
 * the caller does not wait).  Any thread holding no lock of the core.
 */
unsigned int	dt_dev_lossless_room(void);

/*
 * Whether some open records and every open that records has a pressed
 * ring (dt_ring_is_pressed()): all of them lossless readers that are
 * behind, so that no open could take what the ingest drain's pass
 * through would bring but into a ring that drops it.  false when the
 * configuration lock is busy, as for dt_dev_lossless_room().  Same
 * callers.
 */
bool		dt_dev_all_pressed(void);

/*
 * open(2): a new independent softc.  0, ENOMEM (no memory, or its rings
 * would pass dcf_maxmem), EMFILE (the caller's user, not root, holds
 * dcf_maxopens), or what fault injection says (EPERM for "allowdt 0").
 */
int	dt_dev_open(const struct dt_cred *, struct dt_softc **);

/*
 * close(2): stop recording, detach and free every pcb of the softc, and
 * complete its pending reads with EIO.  sc is gone on return.
 */
void	dt_dev_close(struct dt_softc *);

/* Room for the argument of any command dt_ioctl_argsize() knows. */
union dt_ioctl_arg {
	struct dtioc_probe	 dtpr;
	struct dtioc_arg	 dtar;
	struct dtioc_req	 dtrq;
	struct dtioc_stat	 dtst;
	struct dtioc_rdvn	 dtrv;
	struct dtioc_filter	 dtfl;		/* userdt's extensions */
	struct dtioc_statx	 dtsx;
	struct dtioc_aggspec	 dtas;
	struct dtioc_aggread	 dtgr;
	struct dtioc_aggstkread	 dtsr;
	int			 on;
	unsigned char		 raw[64];	/* --abi 1.14's too */
};

/*
 * Size of the argument of an ioctl command given in either encoding, and
 * its canonical (Linux-encoded) number through *canon.  Returns -1 for a
 * command the device does not know: the caller answers ENOTTY.
 */
int	dt_ioctl_argsize(unsigned long cmd, unsigned long *canon);

/*
 * Bytes of one record as read(2) gives it: 456, or 296 under --abi 1.14.
 * Any thread, after dt_dev_init().
 */
size_t	dt_dev_recsize(void);

/*
 * Whether a canonical command writes through a pointer embedded in its
 * argument, and where: sets *uaddr and *len from the argument (already
 * copied in) so a transport that must pre-arrange its copy-out (CUSE) can
 * do so.  Returns false for commands without one, or when len is 0.
 */
bool	dt_ioctl_outbuf(unsigned long canon, const void *arg, uint64_t *uaddr,
	    size_t *len);

/*
 * ioctl(2).  cmd in either encoding; arg points to dt_ioctl_argsize()
 * bytes holding what the caller passed (zeroes for a command that only
 * returns data).  On 0 the core has updated arg and the transport copies
 * it back out; on an errno it must not (dt(4) semantics).
 */
int	dt_dev_ioctl(struct dt_softc *, const struct dt_cred *,
	    unsigned long cmd, void *arg, const struct dt_uaccess *);

/*
 * read(2) of up to resid bytes.  If an event is readable, completes token
 * at once (before returning) with whole records, the last possibly
 * truncated to fit resid as dt(4) does.  Otherwise parks the token until
 * an event arrives, dt_dev_read_cancel() or close: the read blocks
 * whatever O_NONBLOCK says, as on OpenBSD, and no thread waits for it.
 */
void	dt_dev_read(struct dt_softc *, size_t resid, void *token);

/*
 * poll(2): whether a record is ready, so that a read would not block.
 * When none is and ph is not NULL, keeps ph, the front end's handle of
 * the waiting poller, for dcf_poll_done(ph, true) at the next record;
 * any other ph it is given goes to dcf_poll_done(ph, false) at once or
 * later.  dt(4) has no poll; this is userdt's.
 */
bool	dt_dev_poll(struct dt_softc *, void *ph);

/*
 * A signal interrupted the read behind token: complete it if it is
 * still parked, with error (EINTR) or, for error 0, with the records
 * ready now, perhaps none (a stop must let the reader go without an
 * error).  Returns false when it had already completed, which is not an
 * error: the reply simply won the race.
 */
bool	dt_dev_read_cancel(struct dt_softc *, void *token, int error);

#endif /* DT_DEV_H */
