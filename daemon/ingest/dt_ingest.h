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
 * The ingest transport: the socket traced processes attach to, their
 * rings and enable tables, and the drain that validates their records.
 * Providers use it (the syscall provider's enables, the profile timer
 * fallback's period, the list of tracees) and take what it delivers
 * through the sinks they register; it calls no provider by name.  The
 * wire's probe indexes are the syscall table's (systab.h).
 */
#ifndef DT_INGEST_H
#define DT_INGEST_H

#include <sys/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "systab.h"

#define DT_SYS_NPROBES	(2 * SYSTAB_COUNT)	/* entry, return per call */

struct dt_probe;
struct dt_evt;

/*
 * Who takes what the tracees send.  The transport validates a record,
 * stamps it with its pid and hands it to whoever registered for its
 * kind; a kind nobody registered for is refused as invalid.  Each is
 * registered once, on dtd's main thread, before dt_ingest_begin() (from
 * a provider's init function or its service's start), and never changed.
 *
 * dt_ingest_sink_probes(): the probe of wire index p (2i entry, 2i + 1
 * return of systab[i]), or NULL; the transport emits the records of p
 * to it with dt_probe_emit() and charges p's losses to its pcbs.  Called
 * on the drain thread.
 * dt_ingest_sink_samples(): profile samples of the timer fallback: put
 * one validated sample (ev complete but its probe; it stands for
 * 1 + missed periods of period ns), count n lost or recursive ones.
 * Registering also tells every tracee to sample (UDT_W_PTIMER).  Called
 * on the drain thread.
 * dt_ingest_sink_attach(): a process attached (foreign: in a pid
 * namespace not dtd's, whose tids the ingest cannot judge, dti_who()),
 * before it is listed and welcomed, so that the threads it starts after it was told are its own
 * and so that its exit (below) is always told after.  Up to
 * DT_INGEST_MAXSINKS may register, each called in turn.  Called on the
 * accept thread; must not wait for the tracee.
 * dt_ingest_sink_exit(): a listed process left the list, at ns
 * (CLOCK_REALTIME, read when it was unlinked, so no later than any of
 * its records and no earlier than its end): it exited, it exec'd an
 * image that attached again (told after that image's attach), or its
 * ring was retired.  Every attach is followed by one exit, but for the
 * tracees still listed at dt_ingest_end().  Up to DT_INGEST_MAXSINKS.
 * Called on the drain thread; must not wait for a tracee.
 */
#define DT_INGEST_MAXSINKS	4
void	dt_ingest_sink_probes(struct dt_probe *(*probe)(unsigned int p));
void	dt_ingest_sink_samples(void (*put)(unsigned int cpu,
	    const struct dt_evt *ev, uint64_t missed, uint64_t period),
	    void (*lost)(uint64_t n, bool recursive));
void	dt_ingest_sink_attach(void (*attach)(pid_t, bool foreign));
/*
 * The attach sink above needs every process, fork children that never
 * record among them (per-thread sampling): tracees attach those at once
 * (UDT_W_EAGER).  Before dt_ingest_begin().
 */
void	dt_ingest_sink_eager(void);
void	dt_ingest_sink_exit(void (*leave)(pid_t, uint64_t ns));
/*
 * dt_ingest_sink_kcopied(): kall: whether every open recording probe p
 * (wire index) has its calls counted by a kernel program (dt_ksys.h);
 * only then is a record of p asked about, and dropped when the program
 * counted its call too: any of a tracee in another pid namespace (the
 * program counts all of its calls), one the program sees whatever the
 * time, as the ingest knows from the record (dt_ingest_kseen()), or,
 * before: one of probe p of process pid made at ns (CLOCK_REALTIME)
 * that the program counted before pid attached.  Both called on the drain thread, kall for each record but
 * profile samples: it must be quick.
 */
void	dt_ingest_sink_kcopied(bool (*kall)(unsigned int p),
	    bool (*before)(pid_t pid, uint64_t ns, unsigned int p));

/*
 * Set the timer fallback's period (ns, 0: off) in dtd's master copy and
 * in the table of every attached tracee, then wake their watchers.
 * Called from the profile provider's dtpv_start/dtpv_stop under the
 * core's lock; takes the ingest lock, never waits for a tracee.
 */
void	dt_ingest_ptimer_set(uint64_t nsecs);

/*
 * The pids of up to max attached tracees into pids; returns how many are
 * attached (more than max when some did not fit).  Any thread; takes the
 * ingest lock.
 */
size_t	dt_ingest_tracees(pid_t *pids, size_t max);

/*
 * Set enable byte p (0, or UDT_EN_ON | DTEVT_* flags) in dtd's master
 * copy and in the table of every attached tracee, which see it at once.
 * Called from dtpv_start/dtpv_stop under the core's lock; takes the
 * ingest lock, which is never held while waiting for producers.
 */
void	dt_ingest_enable(unsigned int p, uint8_t en);

/*
 * Lossless mode (DTEVT_LOSSLESS) on or off in every tracee's table
 * (tb_lossless) and in those attaching later: on while any recording
 * open asked for it.  Same contract as dt_ingest_enable().
 */
void	dt_ingest_lossless(bool on);

/*
 * The filter tracees evaluate before they record probe p (userdt/
 * udt_filt.h), NULL or an invalid program for none, in dtd's master
 * copy and every tracee's table (those attaching later too).  The
 * caller hands only a program that keeps at least what every open
 * recording p keeps.  Same contract as dt_ingest_enable().
 */
struct udt_fprog;
void	dt_ingest_filter(unsigned int p, const struct udt_fprog *prog);

/*
 * Aggregations folded in the tracees (userdt/udt_sagg.h,
 * dt_ingest_sagg.c).  dt_ingest_sagg_take(): a slot for aggregation as
 * of pcb dp, described by spec (checked by the caller: one a hook folds
 * as dtd folds the record), emptied in every tracee and written into
 * every table; its number, or -1 when all are taken.  No probe names it
 * yet.  dt_ingest_sagg_probe(): the slots probe p's events fold into
 * (0: none, the hooks record), in every table.  dt_ingest_sagg_give():
 * the slots of mask back, after a last merge of every tracee's
 * accumulators; no probe may name them any more.  Under the provider's
 * lock, as dt_ingest_enable(); from dtpv_start and dtpv_stop.
 */
struct udt_sagg_spec;
struct dt_pcb;
struct dt_aggspec;
int	dt_ingest_sagg_take(struct dt_pcb *dp, const struct dt_aggspec *as,
	    const struct udt_sagg_spec *spec);
void	dt_ingest_sagg_probe(unsigned int p, uint32_t mask);
void	dt_ingest_sagg_give(uint32_t mask);
/*
 * Mark (flags UDT_SST_*) or unmark (0) the entry probe of systab index
 * call for the stamps of its return's durations, in every table, with a
 * new sg_latgen[call] when newgen (else the stamps of calls in flight
 * stay good) and the current TSC rate.  Under the provider's lock.
 */
void	dt_ingest_sagg_stamp(unsigned int call, uint8_t flags, bool newgen);
/*
 * The TSC rate (dt_tsc_mult()) written anew into every table while a call
 * is marked: the hooks' durations follow each recalibration, as records'
 * times do, and do not drift from nsecs by the clock's slew.  The drain
 * thread, after dt_tsc_ref() moved the rate; no lock held.
 */
void	dt_ingest_sagg_rate(void);

/*
 * A record copied out of a tracee's ring (dt_ingest_rec.c): whether every
 * field is one a tracee could have meant, and, for one that is, its
 * dt_evt emitted to the opens recording its probe (or a profile sample
 * to the timer mode), stamped with pid.  strs: the string area of its
 * udt_rec_str (UDT_R_STR), NULL when it has none; checked entry by entry
 * (dt_ingest_strings()) before it goes into the event.  deep: the
 * ndeep frames of its user stack past the record's ur_stack (its
 * udt_rec_more slots, checked by the drain; ur_nframes then is
 * UDT_STACK_MAX), or NULL.  The drain thread.
 */
struct udt_rec;
struct dt_evt;
#define DT_INGEST_DELTA_MAX	(1u << 24)	/* largest step believed */
int	dt_ingest_valid(const struct udt_rec *);
void	dt_ingest_emit(pid_t pid, pid_t owner, bool foreign,
	    const struct udt_rec *,
	    const uint8_t *strs, const uint64_t *deep, unsigned int ndeep);
int	dt_ingest_strings(const struct udt_rec *, const uint8_t *,
	    struct dt_evt *);

/*
 * Serve the ingest socket at path (NULL: UDT_SOCKET_DEFAULT) and drain
 * the tracees' rings into the core, in two threads, and adopt orphaned
 * tracees in a third, detached, that ends once it has looked.  Call
 * once from one thread after dt_dev_init(); returns 0 or an errno, with
 * a message on stderr.  dt_ingest_end() stops the first two, removes
 * the socket and frees every ring; tracees run on untraced.
 */
int	dt_ingest_begin(const char *path);
void	dt_ingest_end(void);

/*
 * The socket's path, as dt_ingest_begin() set it ("" before): what a
 * tracee names in USERDT_SOCKET to attach to this dtd.  Any thread once
 * dt_ingest_begin() returned.
 */
const char	*dt_ingest_sockpath(void);

/*
 * The socket's file (dt_ingest_sock.c): dt_ingest_listen() checks or
 * makes path's directory and puts a listening socket, mode 0666, at
 * path, and the tracees' beside it (UDT_TRACEE_FMT); 0 and the
 * descriptors in *fdp and *tfdp (-1 where the tracees' name would not
 * fit), or an errno with a message and neither.  dt_ingest_unlisten()
 * removes the files if they are still ours.  Main thread, at start and
 * stop.
 */
int	dt_ingest_listen(const char *path, int *fdp, int *tfdp);
void	dt_ingest_unlisten(void);

/*
 * Pull every tracee whose table names sock (orphaned by a dead dtd, or a
 * placeholder) into reconnecting.  Scans /proc once; returns how many it
 * found.  Called by dt_ingest_begin() once the socket listens.
 */
unsigned int	dt_ingest_adopt(const char *sock);

/*
 * Tell the tracee's profile watcher that tab changed (period,
 * reconnect): a new generation of tb_prof_gen, after the stores it
 * covers (release), then a futex wake of every waiter on it.  Any
 * thread; a system call, never blocks.
 */
struct udt_tab;
void	dt_ingest_tab_announce(struct udt_tab *);

/*
 * Answer a UDT_HELLO_MAPS query rq on connection fd from a peer with uid
 * (dt_ingest_maps.c).  A serve worker (dt_ingest_dispatch()), no lock held.
 */
struct udt_maps_req;
void	dt_ingest_maps(int fd, uid_t uid, const struct udt_maps_req *rq);

/*
 * Answer a UDT_HELLO_KARM request rq of hello hp on connection fd from
 * peer cr, once the kernel's feed of its pid is open (dt_ksys_arm());
 * EINVAL when hp also asks for maps (UDT_HELLO_MAPS): one question a
 * hello, filed on the asker's queue.  A serve worker, no lock held.
 */
struct ucred;
struct udt_hello;
void	dt_ingest_karm(int fd, const struct ucred *cr,
	    const struct udt_hello *hp, const struct udt_maps_req *rq);

/*
 * Answer a UDT_HELLO_STATS on connection fd: dtd's counters (udt_stats),
 * sent without waiting.  Any thread, no lock held.
 */
void	dt_ingest_stats(int fd);

/*
 * Parents kept past their exits (dt_ingest_kin.c).  dt_ingest_kin_note():
 * tracee pid of user uid said its hello, ps its stat read then: note its
 * parent.  dt_ingest_kin_above(): note the parents above it, from ppid
 * up, that dtd never heard from, from /proc while they live (a few
 * reads, once a chain): after the welcome, off the tracee's wait.
 * dt_ingest_kin(): answer a UDT_HELLO_KIN request rq on connection fd
 * from peer cr, from memory, without waiting.  Any thread; a lock of
 * their own, never held across a system call.
 */
struct dt_proc_stat;
void	dt_ingest_kin_note(pid_t pid, uid_t uid, const struct dt_proc_stat *ps);
void	dt_ingest_kin_above(pid_t ppid);
void	dt_ingest_kin(int fd, const struct ucred *cr,
	    const struct udt_maps_req *rq);

/*
 * The accept loop (dt_ingest_accept.c): accept on lfd and gather each
 * connection's first message without blocking, and on tfd (the tracee
 * socket, or -1) serve each connection as a tracee's hello at once,
 * until wakefd is readable.  The accept thread only.
 */
void	dt_ingest_accept(int lfd, int tfd, int wakefd);

/*
 * Serve one connection whose first message, hello h with UDT_MAGIC (and,
 * for a maps query, its request rq), has been read whole, from the peer
 * cr (its SO_PEERCRED) and pidfd (SO_PEERPIDFD, or -1; serve takes
 * it): answer it, for a tracee create and hand over its ring.  Sends
 * with a 1 s timeout; reads nothing more.  The accept thread
 * (dt_ingest_accept.c, which checked the magic).
 */
struct ucred;
struct udt_hello;
/*
 * The accept loop closed cr's connection before its hello was whole:
 * counted (udt_stats.us_refused) and logged, the log rate-limited per
 * kind of refusal (why's text).  Any thread.
 */
void	dt_ingest_refused(const struct ucred *cr, const char *why);
/*
 * Have a whole first message served (dt_ingest_serve()) by a worker of
 * its user (dt_worker.h), taking fd and pidfd (rq is read only for a
 * maps query or a helper's question, and may be NULL else): serving a
 * tracee opens its /proc/PID/mem and reads its maps, which wait while it is inside an
 * exec (on its user's FUSE mount, say) or its mmap lock is held, and a
 * maps query reads the maps of the pid it names (served by a worker of
 * that process's owner).  One user's stall, or flood of heavy hellos,
 * then delays only that user.  A user with DTI_SERVE_UID messages
 * waiting is refused (a burst of a program's children fits), and one
 * that waited DTI_SERVE_STALE_MS (its tracee gave up at 2 s) is closed
 * unserved.  The accept thread.
 */
#define DTI_SERVE_UID		1024
#define DTI_SERVE_STALE_MS	2000
void	dt_ingest_dispatch(int fd, const struct ucred *cr, int pidfd,
	    const struct udt_hello *h, const struct udt_maps_req *rq);
void	dt_ingest_serve(int fd, const struct ucred *cr, int pidfd,
	    const struct udt_hello *h, const struct udt_maps_req *rq);

/*
 * Tracees' TSC stamps (dt_ingest_tsc.c).  dt_tsc_calibrate(): once, in
 * dt_ingest_begin() before the threads exist; it sleeps 20 ms where the
 * kernel's clock source is the TSC, else leaves TSC stamps off.
 * dt_tsc_ok(): whether tracees may send them (any thread, after that).
 * The drain thread only: dt_tsc_ref() at the start of a pass takes a
 * fresh reference; dt_tsc_near() says whether a stamp lies within 10 s
 * of it (a stamp further off is garbage); dt_tsc_realtime() converts.
 */
void	dt_tsc_calibrate(void);
int	dt_tsc_ok(void);
void	dt_tsc_ref(void);
int	dt_tsc_near(uint64_t tsc);
int64_t	dt_tsc_realtime(uint64_t tsc);
/* The rate in ns a tick, 32.32 fixed point (0: no TSC).  Any thread. */
uint64_t dt_tsc_mult(void);

#endif /* DT_INGEST_H */
