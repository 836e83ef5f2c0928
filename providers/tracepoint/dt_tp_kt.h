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
 * Between the two halves of a tree's kernel feed of syscall probes
 * (DTEVT_TREE, dt_ksys.h): dt_tp_ksystree.c's feed (the callback that
 * judges each exec's image and hands the calls no hook records to their
 * pcbs) and dt_tp_ksysarm.c's feeds of a hooked root's tree
 * (DTTR_F_HOOKED), one per statically linked image a launcher's helper
 * holds at its exec; and dt_tp_ktelf.c's reading of an image's file,
 * which both judge by.  Nothing outside the provider includes it.
 */
#ifndef DT_TP_KT_H
#define DT_TP_KT_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dt_pcb;
struct dt_tp_sample;
struct dt_kt_feed;

/* An image of the tree: what a process's exec decided, by its file. */
enum dt_kt_kind {
	DT_KT_UNKNOWN = 0,	/* no file mapped yet: the library's say */
	DT_KT_STATIC,		/* no PT_INTERP: no hook sees its calls */
	DT_KT_DYNAMIC,		/* a loader: the library's, if it loads */
	DT_KT_BYMAP,		/* file unreadable: by a second file mapped */
	DT_KT_FOREIGN,		/* not x86-64's: its call numbers are not */
};

/*
 * A feed's callback state, for direction dir (0 entry, 1 return) of the
 * tree of root, reaching no pcb yet: NULL without memory.  Until it is
 * handed to dt_tpev_open_task() (dt_kt_feed_cb, dt_kt_feed_release) it
 * is the caller's alone.
 */
struct dt_kt_feed *dt_kt_feed_new(unsigned int dir, pid_t root);

/*
 * Before the hand-over: pid runs an image no hook sees (statically
 * linked, or exec'd in secure mode: its loader ignores LD_PRELOAD)
 * named comm from ns (CLOCK_REALTIME) on, exec'd before the feed was
 * opened, so no exec record of it (nor its name) will come; comm as
 * read at cns, a rename recorded after that wins.  False without
 * memory.
 */
bool	dt_kt_feed_static(struct dt_kt_feed *, pid_t pid, uint64_t ns,
	    const char *comm, uint64_t cns);

/*
 * After the hand-over, while the feed is open: pid, held at an exec
 * this feed's events followed (inherited), runs an image no hook sees
 * from ns (CLOCK_REALTIME, taken while it is held: no call of the
 * image before it) until its next exec.  One caller at a time (the
 * arm's lock); the reader takes it before its next record.  False when
 * the reader has not taken DT_KT_HELD earlier words: the caller opens
 * a feed of its own instead.
 */
bool	dt_kt_feed_held(struct dt_kt_feed *, pid_t pid, uint64_t ns);

/*
 * The started pcb of Linux call lin, NULL: none.  Any time; a caller
 * that clears one does so before the core's grace period, as a stop.
 */
void	dt_kt_feed_pcb(struct dt_kt_feed *, unsigned int lin,
	    struct dt_pcb *dp);

/* dt_tpev_fn and release of such a state.  [R] */
void	dt_kt_feed_cb(void *arg, const struct dt_tp_sample *);
void	dt_kt_feed_release(void *arg);

/*
 * dt_tp_ktelf.c: what the image pid runs is, read from the file it
 * runs (/proc/PID/exe, never from a path anyone gave) once path, the
 * one a record names, is still that file's (else DT_KT_BYMAP).  Any
 * thread: the reader's, at an exec of a tree's record.
 */
enum dt_kt_kind	dt_kt_elf(pid_t pid, const char *path);
/*
 * Whether the image pid runs asks for no loader (PT_INTERP), by
 * dt_kt_elf().  Any thread.
 */
bool	dt_kt_exe_static(pid_t pid);
/*
 * The kernel filter of a feed keeping the Linux call numbers set in
 * bits (SYSTAB_LINUX_MAX of them): "id == N || ...", or "" (every call)
 * past DT_KT_MAXIDS numbers or len bytes.  Any thread, no lock.
 */
#define DT_KT_MAXIDS	64
void	dt_kt_idfilter(const uint8_t *bits, char *buf, size_t len);

/* Calls every feed gave a pcb, and those it dropped as a hook's.  [a] */
void	dt_kt_counts(uint64_t *taken, uint64_t *hooked);

/*
 * dt_tp_ksysarm.c: dt_ksys_tree_fn for an open that named its tree with
 * DTTR_F_HOOKED (under [K]); the registration of dt_ksys_arm_fn (from
 * dt_tp_ksystree_init()); its counters said at dtd's exit (the
 * provider's fini, once every open is closed).
 */
void	dt_ka_set(unsigned int p, struct dt_pcb *dp, bool on);
/*
 * A return of the kernel's for pcb dp, on cpu: counted as dropped for
 * an aggregation of the call's duration, which only a hook measures
 * (DTF_LAT: the fold skips it, where the script's own pairing would
 * not have).  [R]
 */
void	dt_ka_lat_said(struct dt_pcb *dp, unsigned int cpu);
void	dt_ka_init(void);
void	dt_ka_fini(void);

#endif /* DT_TP_KT_H */
