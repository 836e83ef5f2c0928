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
 * The core's private state: one softc per open, as dt(4)'s dt_softc.
 * Shared by dt_dev.c (open, close, ioctl, read) and dt_probe.c (the event
 * path); nothing outside the core sees it.
 *
 * Locks used to protect struct members in this file:
 *	[I]	immutable after dt_dev_open()
 *	[K]	dt_dev_lock, the configuration lock
 *	[m]	ds_mtx, the softc's read lock
 *	[w]	dt_wakeup_mtx, the deferred wakeup queue
 *	[a]	atomic operations
 */
#ifndef DT_SOFTC_H
#define DT_SOFTC_H

#include <sys/queue.h>

#include <pthread.h>
#include <stddef.h>

#include "dt_abi.h"
#include "dt_dev.h"
#include "dt_inject.h"
#include "dt_prov.h"
#include "dt_ring.h"

/* A read(2) waiting for events: the front end's token and its size. */
struct dt_parked {
	struct dt_parked	*dpk_next;	/* [m] FIFO */
	void			*dpk_token;	/* [m] */
	size_t			 dpk_resid;	/* [m] */
};

struct dt_softc {
	TAILQ_ENTRY(dt_softc)	 ds_entry;	/* [K] list of opens */
	struct dt_pcb		*ds_pcbs;	/* [K] enabled pcbs */
	int			 ds_recording;	/* [K] DTIOCRECORD state */
	struct dt_cred		 ds_cred;	/* [I] who opened */
	pid_t			 ds_tracer;	/* [I] its process (--abi 1.14
						   leaves its events out) */
	struct dt_inj_open	 ds_inj;	/* fault injection, see there */
	/*
	 * Aggregations at the source (dt_agg.h): made under [K] by the
	 * first DTIOCPRBAGG, published for DTIOCAGGREAD's lock-free look,
	 * freed at close.
	 */
	struct dt_aggtab	*_Atomic ds_agg;
	pid_t			 ds_tree;	/* [K] DTIOCTREE's root, or 0 */
	uint32_t		 ds_treeflags;	/* [K] its DTTR_F_* */

	pthread_mutex_t		 ds_mtx;
	struct dt_parked	*ds_parked;	/* [m] waiting reads, FIFO */
	struct dt_parked	**ds_parkedtail; /* [m] */
	unsigned int		 ds_lastcpu;	/* [m] first for equal times */
	char			*ds_buf;	/* [m] DT_READ_MAX staging, made
						   by the first read */
	int			 ds_closing;	/* [m] no more parking */
	void			*ds_pollh;	/* [m] poller to wake, or NULL */

	_Atomic int		 ds_sleeping;	/* [a] reads are parked, or a
						   poller waits */
	_Atomic int		 ds_wakeup;	/* [a] on the wakeup queue */
	struct dt_softc		*ds_wnext;	/* [w] wakeup queue link */

	unsigned int		 ds_nrings;	/* [I] */
	struct dt_ring		 ds_rings[];	/* [I] one per CPU */
};

/*
 * Ask the wakeup thread to serve sc's parked reads: dt(4) defers its
 * wakeup through a soft interrupt so a producer never replies to a
 * reader itself.  Called by producers after a put, inside their RCU
 * read-side section (close relies on that to know no producer can still
 * queue sc once a grace period has passed).
 */
void	dt_wakeup_schedule(struct dt_softc *);

/*
 * Take sc off the wakeup queue and wait until no serve of it runs.
 * dt_dev_close() only, after sc can no longer be queued.
 */
void	dt_wakeup_forget(struct dt_softc *);

/*
 * Start the wakeup thread, which calls serve(sc) for every softc queued
 * (dt_dev_init(), once; 0 or an errno), and stop it once no open is left
 * (dt_dev_fini()).
 */
int	dt_wakeup_start(void (*serve)(struct dt_softc *));
void	dt_wakeup_end(void);

/*
 * The core's mode, set by dt_dev_init() from dt_dev_conf and immutable
 * after ([I]): read by the event path without a lock.
 */
extern bool		dt_strict;	/* --openbsd-strict */
extern enum dt_abi	dt_abi;		/* --abi */
/* The front end's configuration, its completion callbacks among it. */
extern struct dt_dev_conf dt_conf;

/*
 * The read side (dt_dev_read.c).  dt_softc_serve(): complete sc's parked
 * reads, oldest first, while events last, then wake its poller; under
 * sc->ds_mtx (the wakeup thread's dt_softc_wakeup(), a read, a close).
 */
void	dt_softc_serve(struct dt_softc *);

/*
 * Make the wakeup thread look again at the sequencer: it holds events
 * now (wait with a deadline), or a source went idle (release).  Any
 * thread, no lock of the core held but [K].
 */
void	dt_wakeup_kick(void);

/*
 * The sequencer's side of the wakeup thread (dt_seq.c): how long until
 * D frees the oldest held event (0: now or a release is pending;
 * UINT64_MAX: nothing held), lock-free; and the release itself, from
 * the wakeup thread (registered with liburcu), no lock held.
 */
uint64_t	dt_seq_wait_ns(void);
void		dt_seq_tick(void);

/*
 * Whether the calling thread is putting an event the sequencer lets
 * through late (for the rings' dr_lateevt).  Any thread: a thread-local
 * flag, true only inside the sequencer's late delivery.
 */
bool		dt_seq_putting_late(void);

/*
 * The stop path (dt_record_stop(), under [K]): dt_seq_detach() puts into
 * sc's rings, in order, what the sequencer holds for it and runs unlink
 * under the sequencer's lock, so no later release reaches sc's pcbs;
 * after the grace period dt_seq_flush() puts what producers that still
 * saw a pcb put meanwhile, so no held event names a pcb that close frees.
 */
void	dt_seq_detach(struct dt_softc *, void (*unlink)(struct dt_softc *));
void	dt_seq_flush(struct dt_softc *);

/*
 * Every event stamped before the time returned has been put (released
 * by the sequencer, or put unordered): the oldest mark of the active
 * sources, now with none active, and before the oldest event still
 * held.  DTIOCAGGREAD's dtgr_done.  Any thread.
 */
uint64_t	dt_seq_done_ns(void);

/* dt_dev_fini(), no open left: log the late events, free the heap. */
void	dt_seq_fini(void);

/* Copy a string truncated to size - 1 bytes, NUL-padding the rest. */
void	dt_strncpy0(char *dst, const char *src, size_t size);

/*
 * dt_dev.c's, for the ioctls (dt_dev_ioctl.c): the configuration lock
 * [K], and a softc's recording started or stopped under it.
 */
extern pthread_mutex_t	dt_dev_lock;
void	dt_record_start(struct dt_softc *);
void	dt_record_stop(struct dt_softc *);
/* Whether an open but sc holds a duration's aggregation (DTF_LAT).  [K] */
bool	dt_dev_lat_other(const struct dt_softc *sc);

/*
 * Limits on opens (dt_dev_limit.c): dt_limit_init() once from
 * dt_dev_init() (maxmem 0: the RAM; maxopens 0: the default).
 * dt_limit_open() admits an open of cr whose rings take mem bytes: 0,
 * ENOMEM (the memory cap) or EMFILE (cr's user, not root, holds
 * dcf_maxopens), logged.  dt_limit_close() gives it back.  Any thread.
 */
#define DT_OPENS_DEFAULT	256	/* opens of one user, root aside */
void		dt_limit_init(uint64_t maxmem, unsigned int maxopens);
int		dt_limit_open(const struct dt_cred *cr, uint64_t mem);
void		dt_limit_close(const struct dt_cred *cr, uint64_t mem);
/* dt_limit_charge(), dt_limit_uncharge(): dt_prov.h, for providers. */
uint64_t	dt_limit_mem_used(void);
uint64_t	dt_limit_maxmem_get(void);

/*
 * Whether the reader would see comm as a script spells it: btrace shows
 * a byte outside printable ASCII, or a backslash, escaped, and an empty
 * comm as whatever it learns of the pid elsewhere.  What filters compare
 * and aggregations key by only then.  Any thread.
 */
bool	dt_comm_plain(const char *comm);

/*
 * Whether filter f compares comm: only such a filter can leave an event
 * unjudged (dt_pcb_folds()).  Checked filters only; any thread.
 */
bool	dt_filter_hascomm(const struct dtioc_filter *f);

/*
 * An integer field of src (DTF_*, not DTF_COMM) as dp's reader sees it
 * in ring cpu: the tid with --openbsd-strict's offset, arguments, retval
 * and errno 0 unless dp records them, the low 32 bits signed with
 * DTF_F_INT32.  field checked by the caller.  Any thread, lock-free.
 */
int64_t	dt_evt_field(const struct dt_pcb *dp, unsigned int cpu,
	    unsigned int field, unsigned int flags, const struct dt_evt *src);

/*
 * Whether f is a program dt_pcb_ring_put() can run (dtvar.h,
 * DTIOCPRBFILTER): 0 or EINVAL.  Any thread.
 */
int	dt_filter_check(const struct dtioc_filter *f);

/*
 * Before the sequencer holds src: whether any open recording dtp, or dp,
 * keeps it.  When none does, each rejecting filter has counted it (as
 * dt_pcb_ring_put() would have), and the caller drops it: an event every
 * filter rejects costs no heap slot, no lock of the sequencer.  A kept
 * event is evaluated again at its release, exactly as before, and
 * counted there.  A registered thread, any; dt_pcb_wanted() inside
 * rcu_read_lock() on a pcb found on dtp_pcbs.
 */
bool	dt_probe_wanted(struct dt_probe *, unsigned int cpu,
	    const struct dt_evt *);
bool	dt_pcb_wanted(struct dt_pcb *, unsigned int cpu,
	    const struct dt_evt *);

/* Free every registered probe: dt_dev_fini() only, no open left. */
void	dt_probe_free_all(void);

/*
 * DTIOCRDVNODE's data part: fill dtrv_start, dtrv_offset and dtrv_len of
 * the executable file mapping that holds dtrv_va in process dtrv_pid,
 * alive or, for a traced process that exited, as dtd kept it
 * (dt_pidmaps.h).  Returns 0, ESRCH, ENOENT or ENOMEM.  Any thread, no
 * lock held (it may read /proc).
 */
int	dt_rdvn_lookup(struct dtioc_rdvn *);

#endif /* DT_SOFTC_H */
