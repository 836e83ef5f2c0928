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
 * libFuzzer target for the device core: the input is a program of
 * operations on dt_dev.h, run the way a front end would run them (opens
 * with root or user credentials, ioctls with any command and argument,
 * reads of any size, cancels, closes), plus what providers do (events
 * put into recording pcbs, skipped-tick and recursion counts).
 *
 * Beside the core the target keeps a model of what dt(4) promises (dt-abi
 * section 4) and checks it after every operation; a violation aborts, so
 * libFuzzer keeps the input like any sanitizer report.  The caller's
 * address space is emulated by a sandbox buffer: copy-outs inside it
 * succeed, anything else is EFAULT, and every byte outside what the core
 * copied out through the transport must stay as it was.
 *
 * Input format (missing bytes read as zero): a sequence of operations,
 * each an opcode byte (mod FZ_NOP) followed by its operands, see
 * fz_run_op().  Setting DT_FUZZ_SEEDS=dir writes the hand-made seed
 * programs (the btrace sequences) into dir and exits.
 */
#include <sys/types.h>
#include <sys/ioctl.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dt_ksys.h"
#include "dt_softc.h"

#define FZ_NCPUS	3	/* rings per open: rotation wraps unevenly */
#define FZ_RINGSIZE	5	/* 4 events per ring: overflow is near */
#define FZ_NSC		4	/* opens at a time */
#define FZ_NTOK		16	/* read tokens */
#define FZ_MAXOPS	256	/* operations per input: keeps runs short */
#define FZ_SBSIZE	65536	/* the caller's writable memory */
#define FZ_GUARD	4096	/* unwritable memory either side of it */
#define FZ_MAXSLEEP	1500	/* us of WAIT per input: a few ticks */
#define FZ_LIVENESS	5	/* s a parked read may wait for data */

/*
 * An interval period this long never fires while one input runs (the
 * per-input timeout is far shorter), so an open recording only such a
 * clock is fed by the fuzzer alone and its counters are exact.
 */
#define FZ_QUIET_NSECS	60000000000ULL

/* Tags in injected events, above any real pid, so reads can check them. */
#define FZ_TIDTAG	0x7a000000	/* | slot << 16: dt_pcb_ring_put */
#define FZ_EMITTID	0x7b000000	/* dt_probe_emit */
#define FZ_PIDBASE	0x5a0000	/* + cpu the event was put on */

#define FZ_EVTSZ	sizeof(struct dt_evt)
#define FZ_PISZ		sizeof(struct dtioc_probe_info)
#define FZ_AISZ		sizeof(struct dtioc_arg_info)

/*
 * Checkers that walk every byte or probe need no coverage feedback: the
 * comparisons in them would only slow libFuzzer down.
 */
#define FZ_NOCOV	__attribute__((no_sanitize("coverage")))

#define FZ_CHECK(cond) do {						\
	if (!(cond))							\
		fz_fail(__LINE__, #cond);				\
} while (0)

/*
 * Opcodes.  Zero bytes are the commonest in mutated inputs, so zero is the
 * cheapest operation (a WAIT of nothing); an open costs the most (the
 * core's 1 MB read buffer, poisoned and unpoisoned by ASan).
 */
enum {
	OP_WAIT, OP_OPEN, OP_CLOSE, OP_READ, OP_CANCEL, OP_PLIST, OP_GARGS,
	OP_STATS, OP_RECORD, OP_ENABLE, OP_DISABLE, OP_RDVN, OP_RAW, OP_INJECT,
	OP_EMIT, OP_COUNT, OP_AGG, OP_AGGREAD, OP_AGGSTK, FZ_NOP
};

/* Operand selectors shared by the decoder and the seed encoder. */
enum { CR_OPENER, CR_ROOT, CR_USER, CR_NOBODY };
#define ENC_OPENBSD	0x01	/* OpenBSD encoding of the command */
#define ENC_HIGHBITS	0x02	/* garbage above the int-sized request */
#define ENC_EFAULT	0x04	/* the transport fails every copy-out */
#define ENC_EIO		0x08	/* ... with EIO (caller went away) */
enum { PB_ZERO, PB_PAST, PB_RAW, PB_MAX, PB_INDEX };	/* PB_INDEX + */
enum { PT_NULL, PT_IN, PT_TAIL, PT_BEFORE, PT_RAW, PT_WRAP, PT_BASE,
    PT_AFTER };
enum { SZ_ZERO, SZ_NEED, SZ_SHORT, SZ_LONG, SZ_RAW16, SZ_RAW, SZ_MAX,
    SZ_UNITS };
enum { RD_ZERO, RD_SHORT, RD_RECORDS, RD_RECPART, RD_MAXREAD, RD_HUGE,
    RD_SIZEMAX, RD_RAW };
enum { NS_ZERO, NS_BELOW, NS_MIN, NS_SHORT, NS_SECOND, NS_MAX, NS_ABOVE,
    NS_RAW };
enum { PID_SELF, PID_ZERO, PID_NEG, PID_RAW, PID_INIT };
enum { VA_TEXT, VA_STACK, VA_RAW, VA_SANDBOX, VA_NULL };
#define WAIT_SYNC	0x80	/* wait for parked reads that have data */

struct fz_in {
	const uint8_t	*fi_p;
	size_t		 fi_n;
};

enum { TK_IDLE, TK_PENDING, TK_DONE };

/*
 * Locks used to protect the model:
 *	[f]	fz_mtx: read completions may run on the core's wakeup thread
 *	[F]	the fuzzer thread only
 * Never call into the core holding fz_mtx: the core holds its own locks
 * while it completes a read.
 */
struct fz_tok {
	int		 tk_state;	/* [f] */
	int		 tk_slot;	/* [f] open it was issued on */
	uint64_t	 tk_seq;	/* [f] issue order */
	size_t		 tk_resid;	/* [f] as requested */
	int		 tk_error;	/* [f] */
	size_t		 tk_len;	/* [f] */
};

struct fz_sc {
	struct dt_softc	*fs_sc;		/* [F] NULL: slot free */
	struct dt_cred	 fs_cred;	/* [F] who opened */
	int		 fs_recording;	/* [F] */
	int		 fs_async;	/* [F] a clock fed it: counts inexact */
	unsigned int	 fs_nen;	/* [F] probes enabled */
	uint8_t		*fs_en;		/* [f] by pbn: enabled */
	uint64_t	*fs_flags;	/* [f] by pbn: evtflags asked for */
	uint64_t	*fs_nsecs;	/* [F] by pbn: period asked for */
	struct dtioc_stat fs_last;	/* [F] counters last seen */
	uint64_t	 fs_delivered;	/* [f] records completions carried */
	uint64_t	 fs_attempts;	/* [F] events put into its rings */
	uint64_t	 fs_skip;	/* [F] skipped ticks counted */
	uint64_t	 fs_recur;	/* [F] recursive events counted */
	unsigned int	 fs_npend;	/* [f] tokens parked or running */
};

/* What the transport saw of one ioctl's copy-outs. */
struct fz_call {
	int		 fc_haswin;	/* dt_ioctl_outbuf() said where */
	uint64_t	 fc_wlo;
	size_t		 fc_wlen;
	int		 fc_fail;	/* fail every copy-out with this */
	int		 fc_ncopy;
	int		 fc_cerr;	/* last copy-out error */
};

static pthread_mutex_t	 fz_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 fz_cv = PTHREAD_COND_INITIALIZER;
static struct fz_tok	 fz_toks[FZ_NTOK];
static struct fz_sc	 fz_scs[FZ_NSC];
static uint64_t		 fz_seq;		/* [F] */
static uint32_t		 fz_nprobes;		/* after init */
static unsigned int	 fz_opno;		/* [F] for failure reports */
static unsigned int	 fz_slept;		/* [F] us this input */

/* The caller's memory: guard, sandbox, guard; and what it must hold. */
static unsigned char	 fz_space[FZ_GUARD + FZ_SBSIZE + FZ_GUARD];
static unsigned char	*const fz_sb = fz_space + FZ_GUARD;
static unsigned char	 fz_shadow[FZ_SBSIZE];
static unsigned char	 fz_guardpat[FZ_GUARD];
static uint32_t		*fz_cnt;		/* fz_check_probes() scratch */
static uint64_t		*fz_fl;
static uint8_t		*fz_touched;		/* [F] by pbn: ever enabled */
static uint32_t		*fz_tlist;		/* [F] those pbns */
static uint32_t		 fz_ntouched;		/* [F] */

static const struct dt_cred fz_root = { 0, 0, 1 };
static const struct dt_cred fz_user = { 1000, 1000, 2 };
static const struct dt_cred fz_nobody = { 65534, 65534, 3 };

static const unsigned long fz_cmds[] = {
	DTIOCGPLIST, DTIOCGSTATS, DTIOCRECORD, DTIOCPRBENABLE,
	DTIOCPRBDISABLE, DTIOCGARGS, DTIOCRDVNODE,
	/* userdt's aggregations at the source (dtvar.h) */
	DTIOCPRBAGG, DTIOCAGGREAD, DTIOCAGGSTACKS
};
#define FZ_NCMDS	(sizeof(fz_cmds) / sizeof(fz_cmds[0]))

static void
fz_fail(int line, const char *what)
{
	fprintf(stderr, "dt_dev_fuzz.c:%d: invariant violated in operation "
	    "%u: %s\n", line, fz_opno, what);
	abort();
}

static uint64_t
fz_get(struct fz_in *in, size_t len)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len && in->fi_n > 0; i++, in->fi_n--)
		v |= (uint64_t)*in->fi_p++ << (8 * i);
	return v;
}

#define fz_u8(in)	((uint8_t)fz_get(in, 1))
#define fz_u16(in)	((uint16_t)fz_get(in, 2))
#define fz_u32(in)	((uint32_t)fz_get(in, 4))
#define fz_u64(in)	fz_get(in, 8)

FZ_NOCOV static int
fz_allzero(const void *p, size_t len)
{
	const unsigned char *c = p;

	while (len-- > 0)
		if (*c++ != 0)
			return 0;
	return 1;
}

static const struct dt_cred *
fz_cred(const struct fz_sc *fs, uint8_t sel)
{
	switch (sel % 4) {
	case CR_ROOT:
		return &fz_root;
	case CR_USER:
		return &fz_user;
	case CR_NOBODY:
		return &fz_nobody;
	default:
		return &fs->fs_cred;
	}
}

static unsigned long
fz_encode(unsigned long cmd, uint8_t enc)
{
	if (enc & ENC_OPENBSD)
		cmd = DTIOC_OPENBSD(cmd);
	/* Linux passes an int-sized request: the rest must not matter. */
	if (enc & ENC_HIGHBITS)
		cmd |= 0xdead000000000000UL;
	return cmd;
}

static int
fz_copyerr(uint8_t enc)
{
	if (enc & ENC_EIO)
		return EIO;
	if (enc & ENC_EFAULT)
		return EFAULT;
	return 0;
}

static uint32_t
fz_pbn(uint8_t sel, uint32_t p)
{
	switch (sel % (PB_INDEX + 1)) {
	case PB_ZERO:
		return 0;
	case PB_PAST:
		return fz_nprobes + 1;
	case PB_RAW:
		return p;
	case PB_MAX:
		return UINT32_MAX;
	default:
		return 1 + p % fz_nprobes;
	}
}

static uint64_t
fz_ptr(uint8_t sel, uint64_t p)
{
	uint64_t sb = (uint64_t)(uintptr_t)fz_sb;

	switch (sel % 8) {
	case PT_NULL:
		return 0;
	case PT_IN:
		return sb + p % FZ_SBSIZE;
	case PT_TAIL:		/* partly outside for most sizes */
		return sb + FZ_SBSIZE - p % 512;
	case PT_BEFORE:		/* starts in the front guard */
		return sb - 1 - p % FZ_GUARD;
	case PT_RAW:
		return p;
	case PT_WRAP:		/* uaddr + len overflows */
		return UINT64_MAX - p % 4096;
	case PT_BASE:
		return sb;
	default:		/* the back guard */
		return sb + FZ_SBSIZE + p % FZ_GUARD;
	}
}

static uint64_t
fz_size(uint8_t sel, uint64_t p, size_t need, size_t unit)
{
	switch (sel % 8) {
	case SZ_ZERO:
		return 0;
	case SZ_NEED:
		return need;
	case SZ_SHORT:
		return need > 0 ? need - 1 - p % need : 0;
	case SZ_LONG:
		return need + 1 + p % 1000;
	case SZ_RAW16:
		return (uint16_t)p;
	case SZ_RAW:
		return p;
	case SZ_MAX:
		return SIZE_MAX;
	default:
		return unit * (p % 8);
	}
}

static size_t
fz_readsize(uint8_t sel, uint64_t p)
{
	switch (sel % 8) {
	case RD_ZERO:
		return 0;
	case RD_SHORT:
		return 1 + p % (FZ_EVTSZ - 1);
	case RD_RECORDS:
		return FZ_EVTSZ * (1 + p % 70);
	case RD_RECPART:
		return FZ_EVTSZ * (p % 70) + 1 + (p >> 8) % (FZ_EVTSZ - 1);
	case RD_MAXREAD:
		return DT_READ_MAX;
	case RD_HUGE:
		return DT_READ_MAX + 1 + (uint32_t)p;
	case RD_SIZEMAX:
		return SIZE_MAX - p % 4096;
	default:
		return (uint32_t)p;
	}
}

static uint64_t
fz_nsecs(uint8_t sel, uint64_t p)
{
	switch (sel % 8) {
	case NS_ZERO:
		return 0;
	case NS_BELOW:
		return DT_TIMER_NSECS_MIN - 1;
	case NS_MIN:
		return DT_TIMER_NSECS_MIN;
	case NS_SHORT:
		return DT_TIMER_NSECS_MIN + p % 1000000;
	case NS_SECOND:
		return 1000000000ULL;
	case NS_MAX:
		return DT_TIMER_NSECS_MAX;
	case NS_ABOVE:
		return DT_TIMER_NSECS_MAX + 1;
	default:
		return p;
	}
}

/* The sandbox holds only what copy-outs put there; guards are intact. */
FZ_NOCOV static void
fz_check_memory(void)
{
	FZ_CHECK(memcmp(fz_sb, fz_shadow, FZ_SBSIZE) == 0);
	FZ_CHECK(memcmp(fz_space, fz_guardpat, FZ_GUARD) == 0);
	FZ_CHECK(memcmp(fz_sb + FZ_SBSIZE, fz_guardpat, FZ_GUARD) == 0);
}

/*
 * The transport's copy-out, emulating the caller: only the sandbox is
 * writable, and the address arithmetic must not overflow.  The window
 * check is CUSE's: it can only deliver what dt_ioctl_outbuf() announced.
 */
static int
fz_copyout(void *arg, uint64_t uaddr, const void *src, size_t len)
{
	struct fz_call *fc = arg;
	uint64_t lo = (uint64_t)(uintptr_t)fz_sb, off;

	fc->fc_ncopy++;
	if (len == 0)
		return 0;
	FZ_CHECK(src != NULL);
	FZ_CHECK(fc->fc_haswin);
	FZ_CHECK(uaddr >= fc->fc_wlo && uaddr - fc->fc_wlo <= fc->fc_wlen &&
	    len <= fc->fc_wlen - (uaddr - fc->fc_wlo));
	if (fc->fc_fail)
		return fc->fc_cerr = fc->fc_fail;
	if (uaddr < lo || uaddr - lo > FZ_SBSIZE ||
	    len > FZ_SBSIZE - (uaddr - lo))
		return fc->fc_cerr = EFAULT;
	off = uaddr - lo;
	memcpy(fz_sb + off, src, len);
	memcpy(fz_shadow + off, src, len);
	return 0;
}

/* Records a completion carried: dt-abi 4.4, 4.5 and the fuzzer's tags. */
FZ_NOCOV static void
fz_check_records(const struct fz_sc *fs, int slot, const char *buf,
    size_t len)
{
	const struct dt_probe *dtp;
	struct dt_evt ev;
	uint64_t flags;
	size_t off, n, i;
	uint32_t tid;

	for (off = 0; off < len; off += n) {
		n = len - off < FZ_EVTSZ ? len - off : FZ_EVTSZ;
		memset(&ev, 0, sizeof(ev));
		memcpy(&ev, buf + off, n);
		if (n < sizeof(ev.dtev_pbn))
			break;
		/*
		 * A deep stack's continuation (dtvar.h, DTEV_PBN_MORE): only
		 * for a probe this open enabled with DTEVT_DEEPSTACK; its
		 * frames are the event's, checked no further here.
		 */
		if (ev.dtev_pbn & DTEV_PBN_MORE) {
			ev.dtev_pbn &= ~DTEV_PBN_MORE;
			FZ_CHECK(ev.dtev_pbn >= 1 &&
			    ev.dtev_pbn <= fz_nprobes);
			FZ_CHECK(fs->fs_en[ev.dtev_pbn]);
			FZ_CHECK(fs->fs_flags[ev.dtev_pbn] & DTEVT_DEEPSTACK);
			continue;
		}
		/* Only probes this open enabled: no event crosses opens. */
		FZ_CHECK(ev.dtev_pbn >= 1 && ev.dtev_pbn <= fz_nprobes);
		FZ_CHECK(fs->fs_en[ev.dtev_pbn]);
		if (n < FZ_EVTSZ)
			break;		/* truncated: the rest is cut */
		FZ_CHECK(ev.dtev_cpu < FZ_NCPUS);
		flags = fs->fs_flags[ev.dtev_pbn];
		dtp = dt_dev_probe(ev.dtev_pbn);
		/*
		 * userdt's strings (DTEVT_STRINGS, probes that carry them:
		 * syscall, some tracepoints) ride in the kstack area: its
		 * bytes pass, never a frame count.  Elsewhere the flag
		 * means nothing: no kernel stack passes as strings.
		 */
		if ((flags & DTEVT_STRINGS) && dtp->dtp_strings)
			FZ_CHECK(ev.dtev_kstack.st_count == 0);
		else if (!(flags & DTEVT_KSTACK))
			FZ_CHECK(fz_allzero(&ev.dtev_kstack,
			    sizeof(ev.dtev_kstack)));
		if (!(flags & DTEVT_USTACK))
			FZ_CHECK(fz_allzero(&ev.dtev_ustack,
			    sizeof(ev.dtev_ustack)));
		/* Deeper than a record holds only for those who asked. */
		FZ_CHECK(ev.dtev_ustack.st_count <= ((flags &
		    DTEVT_DEEPSTACK) ? DTEV_DEEP_MAX : STACKTRACE_MAX));
		if (!(flags & DTEVT_EXECNAME))
			FZ_CHECK(fz_allzero(ev.dtev_comm, DTMAXCOMLEN));
		else {
			/* strlcpy into a zeroed record: NUL, then zeroes. */
			i = strnlen(ev.dtev_comm, DTMAXCOMLEN);
			FZ_CHECK(i < DTMAXCOMLEN);
			FZ_CHECK(fz_allzero(ev.dtev_comm + i,
			    DTMAXCOMLEN - i));
		}
		if (dtp->dtp_argsflag & ~flags)
			FZ_CHECK(fz_allzero(&ev._args, sizeof(ev._args)));
		tid = (uint32_t)ev.dtev_tid;
		if ((tid & 0xff000000) == FZ_TIDTAG) {
			FZ_CHECK(((tid >> 16) & 0xff) == (uint32_t)slot);
			FZ_CHECK(ev.dtev_cpu ==
			    (uint32_t)(ev.dtev_pid - FZ_PIDBASE));
		} else if (tid == FZ_EMITTID)
			FZ_CHECK(ev.dtev_cpu ==
			    (uint32_t)(ev.dtev_pid - FZ_PIDBASE));
	}
}

/* The core's read completion: exactly once per token, in FIFO order. */
static void
fz_read_done(void *token, const void *buf, size_t len, int error)
{
	struct fz_tok *tk = token, *o;
	struct fz_sc *fs;
	size_t lim;

	FZ_CHECK(tk >= fz_toks && tk < fz_toks + FZ_NTOK);
	pthread_mutex_lock(&fz_mtx);
	FZ_CHECK(tk->tk_state == TK_PENDING);
	fs = &fz_scs[tk->tk_slot];
	lim = tk->tk_resid < DT_READ_MAX ? tk->tk_resid : DT_READ_MAX;
	FZ_CHECK(len <= lim);
	if (error != 0) {
		FZ_CHECK(len == 0);
		FZ_CHECK(error == EIO || error == EINTR ||
		    error == ECANCELED || error == ENOMEM);
	} else
		FZ_CHECK(len > 0 || tk->tk_resid == 0);
	if (len > 0) {
		FZ_CHECK(buf != NULL);
		/* Earlier readers of the open go first (dt_dev_read()). */
		for (o = fz_toks; o < fz_toks + FZ_NTOK; o++)
			FZ_CHECK(o->tk_state != TK_PENDING ||
			    o->tk_slot != tk->tk_slot ||
			    o->tk_seq >= tk->tk_seq);
		fz_check_records(fs, tk->tk_slot, buf, len);
		fs->fs_delivered += (len + FZ_EVTSZ - 1) / FZ_EVTSZ;
	}
	tk->tk_state = TK_DONE;
	tk->tk_error = error;
	tk->tk_len = len;
	FZ_CHECK(fs->fs_npend > 0);
	fs->fs_npend--;
	pthread_cond_broadcast(&fz_cv);
	pthread_mutex_unlock(&fz_mtx);
}

/* The counters of an open against the model (dt-abi 4.3 DTIOCGSTATS). */
static void
fz_check_stats(struct fz_sc *fs, const struct dtioc_stat *st,
    uint64_t delivered, unsigned int npend)
{
	uint64_t gone;

	/* Cumulative since open, never reset. */
	FZ_CHECK(st->dtst_readevt >= fs->fs_last.dtst_readevt);
	FZ_CHECK(st->dtst_dropevt >= fs->fs_last.dtst_dropevt);
	FZ_CHECK(st->dtst_skiptick >= fs->fs_last.dtst_skiptick);
	FZ_CHECK(st->dtst_recurevt >= fs->fs_last.dtst_recurevt);
	fs->fs_last = *st;

	/*
	 * A record counts as read when it is taken, before its completion
	 * runs; with no read outstanding every take has been delivered.
	 */
	FZ_CHECK(st->dtst_readevt >= delivered);
	if (npend == 0)
		FZ_CHECK(st->dtst_readevt == delivered);

	FZ_CHECK(st->dtst_skiptick >= fs->fs_skip);
	FZ_CHECK(st->dtst_recurevt >= fs->fs_recur);
	if (fs->fs_async)
		return;
	/* Fed by the fuzzer alone: every put is read, dropped or waiting. */
	FZ_CHECK(st->dtst_skiptick == fs->fs_skip);
	FZ_CHECK(st->dtst_recurevt == fs->fs_recur);
	gone = st->dtst_readevt + st->dtst_dropevt;
	FZ_CHECK(gone >= st->dtst_readevt);
	FZ_CHECK(gone <= fs->fs_attempts);
	FZ_CHECK(fs->fs_attempts - gone <= FZ_NCPUS * (FZ_RINGSIZE - 1));
}

/* GSTATS for the fuzzer's own bookkeeping, checked like any other. */
static void
fz_stats(struct fz_sc *fs, struct dtioc_stat *st)
{
	struct dt_uaccess ua = { fz_copyout, NULL };
	struct fz_call fc;
	uint64_t delivered;
	unsigned int npend;

	memset(&fc, 0, sizeof(fc));
	ua.ua_arg = &fc;
	pthread_mutex_lock(&fz_mtx);
	delivered = fs->fs_delivered;
	npend = fs->fs_npend;
	pthread_mutex_unlock(&fz_mtx);
	memset(st, 0xa5, sizeof(*st));
	FZ_CHECK(dt_dev_ioctl(fs->fs_sc, &fz_user, DTIOCGSTATS, st, &ua) == 0);
	FZ_CHECK(fc.fc_ncopy == 0);
	fz_check_stats(fs, st, delivered, npend);
}

/* Events waiting in the rings of an open fed by the fuzzer alone. */
static uint64_t
fz_inring(struct fz_sc *fs)
{
	struct dtioc_stat st;

	fz_stats(fs, &st);
	return fs->fs_attempts - st.dtst_readevt - st.dtst_dropevt;
}

/*
 * The probes' recording state is the sum of the opens': dtp_recording
 * counts recording pcbs, dtp_evtflags is their union, dtp_pcbs lists them.
 * With hundreds of syscall probes, only those ever enabled (and their
 * neighbours, where an off-by-one would land) are checked after each
 * operation; all of them once per input.
 */
FZ_NOCOV static void
fz_check_probe(uint32_t pbn)
{
	struct dt_probe *dtp;

	if (pbn < 1 || pbn > fz_nprobes)
		return;
	dtp = dt_dev_probe(pbn);
	FZ_CHECK(dtp->dtp_pbn == pbn);
	FZ_CHECK(dtp->dtp_recording >= 0 &&
	    (uint32_t)dtp->dtp_recording == fz_cnt[pbn]);
	FZ_CHECK(dtp->dtp_evtflags == fz_fl[pbn]);
	FZ_CHECK(cds_list_empty(&dtp->dtp_pcbs) == (fz_cnt[pbn] == 0));
}

FZ_NOCOV static void
fz_check_probes(int all)
{
	struct dt_pcb *dp;
	uint32_t pbn, t;
	int i;

	for (t = 0; t < fz_ntouched; t++) {
		pbn = fz_tlist[t];
		fz_cnt[pbn] = 0;
		fz_fl[pbn] = 0;
	}
	for (i = 0; i < FZ_NSC; i++) {
		if (fz_scs[i].fs_sc == NULL)
			continue;
		FZ_CHECK(fz_scs[i].fs_sc->ds_recording ==
		    fz_scs[i].fs_recording);
		for (dp = fz_scs[i].fs_sc->ds_pcbs; dp != NULL;
		    dp = dp->dp_snext) {
			pbn = dp->dp_dtp->dtp_pbn;
			FZ_CHECK(dp->dp_sc == fz_scs[i].fs_sc);
			FZ_CHECK(pbn >= 1 && pbn <= fz_nprobes);
			FZ_CHECK(fz_scs[i].fs_en[pbn]);
			FZ_CHECK((dp->dp_evtflags &
			    ~fz_scs[i].fs_flags[pbn]) == 0);
			if (!fz_scs[i].fs_recording)
				continue;
			fz_cnt[pbn]++;
			fz_fl[pbn] |= dp->dp_evtflags;
		}
	}
	if (all) {
		for (pbn = 1; pbn <= fz_nprobes; pbn++)
			fz_check_probe(pbn);
		return;
	}
	for (t = 0; t < fz_ntouched; t++) {
		fz_check_probe(fz_tlist[t] - 1);
		fz_check_probe(fz_tlist[t]);
		fz_check_probe(fz_tlist[t] + 1);
	}
}

/* dt_ioctl_argsize(): both encodings of fz_cmds, nothing else. */
static void
fz_check_argsize(unsigned long cmd, int size, unsigned long canon)
{
	unsigned long c = cmd & 0xffffffffUL;
	size_t i;

	for (i = 0; i < FZ_NCMDS; i++)
		if (c == fz_cmds[i] || c == DTIOC_OPENBSD(fz_cmds[i]))
			break;
	if (i == FZ_NCMDS) {
		FZ_CHECK(size < 0);
		return;
	}
	FZ_CHECK(size >= 0 && canon == fz_cmds[i]);
	FZ_CHECK((size_t)size == _IOC_SIZE(canon));
}

static int
fz_is_timer(const struct dt_probe *dtp)
{
	return strcmp(dtp->dtp_prov->dtpv_name, "interval") == 0 ||
	    strcmp(dtp->dtp_prov->dtpv_name, "profile") == 0;
}

/*
 * Whether recording fs lets anything but the fuzzer feed its rings: a
 * provider that starts something (a clock, perf) unless that cannot
 * fire during an input.  The syscall provider's events come from dtd's
 * ingest service, which the fuzzer does not run.
 */
static int
fz_fed_async(const struct fz_sc *fs)
{
	const struct dt_probe *dtp;
	const char *name;
	uint32_t pbn;

	for (pbn = 1; pbn <= fz_nprobes; pbn++) {
		if (!fs->fs_en[pbn])
			continue;
		dtp = dt_dev_probe(pbn);
		name = dtp->dtp_prov->dtpv_name;
		if (dtp->dtp_prov->dtpv_start == NULL ||
		    strcmp(name, "syscall") == 0)
			continue;
		if (strcmp(name, "interval") == 0 &&
		    fs->fs_nsecs[pbn] >= FZ_QUIET_NSECS)
			continue;
		return 1;
	}
	return 0;
}

/* DTIOCGPLIST as dt-abi 4.3 describes it, to the byte. */
FZ_NOCOV static void
fz_check_plist(const struct dtioc_probe *in, const struct dtioc_probe *out,
    const struct fz_call *fc, int error)
{
	struct dtioc_probe_info pi, *dtpi = &pi;
	const struct dt_probe *dtp;
	size_t room = in->dtpr_size, need, n, i, k;
	uint64_t base;
	int expect;

	need = (size_t)fz_nprobes * FZ_PISZ;
	FZ_CHECK(out->dtpr_size == need);
	FZ_CHECK(out->dtpr_probes == in->dtpr_probes);
	n = room / FZ_PISZ < fz_nprobes ? room / FZ_PISZ : fz_nprobes;
	if (room == 0 || n == 0) {
		FZ_CHECK(fc->fc_ncopy == 0);
		expect = room == 0 ? 0 : ENOSPC;
	} else {
		FZ_CHECK(fc->fc_ncopy > 0);
		expect = fc->fc_cerr ? fc->fc_cerr : n < fz_nprobes ? ENOSPC : 0;
	}
	FZ_CHECK(error == expect);
	if (n == 0 || fc->fc_cerr != 0)
		return;
	/* It all went into the sandbox: entry i is probe i + 1. */
	base = (uint64_t)(uintptr_t)in->dtpr_probes - (uintptr_t)fz_sb;
	FZ_CHECK(base <= FZ_SBSIZE && n * FZ_PISZ <= FZ_SBSIZE - base);
	for (i = 0; i < n; i++) {
		/* The caller's pointer need not be aligned. */
		memcpy(&pi, fz_sb + base + i * FZ_PISZ, sizeof(pi));
		dtp = dt_dev_probe((uint32_t)i + 1);
		FZ_CHECK(dtpi->dtpi_pbn == i + 1);
		FZ_CHECK(dtpi->dtpi_nargs == dtp->dtp_nargs);
		FZ_CHECK(strncmp(dtpi->dtpi_prov, dtp->dtp_prov->dtpv_name,
		    DTNAMESIZE - 1) == 0);
		FZ_CHECK(strncmp(dtpi->dtpi_func, dtp->dtp_func,
		    DTNAMESIZE - 1) == 0);
		FZ_CHECK(strncmp(dtpi->dtpi_name, dtp->dtp_name,
		    DTNAMESIZE - 1) == 0);
		/* strlcpy'd into a zeroed entry: NULs, zero padding. */
		k = strnlen(dtpi->dtpi_prov, DTNAMESIZE);
		FZ_CHECK(k < DTNAMESIZE &&
		    fz_allzero(dtpi->dtpi_prov + k, DTNAMESIZE - k));
		k = strnlen(dtpi->dtpi_func, DTNAMESIZE);
		FZ_CHECK(k < DTNAMESIZE &&
		    fz_allzero(dtpi->dtpi_func + k, DTNAMESIZE - k));
		k = strnlen(dtpi->dtpi_name, DTNAMESIZE);
		FZ_CHECK(k < DTNAMESIZE &&
		    fz_allzero(dtpi->dtpi_name + k, DTNAMESIZE - k));
		FZ_CHECK(fz_allzero((const char *)dtpi +
		    offsetof(struct dtioc_probe_info, dtpi_name) + DTNAMESIZE,
		    FZ_PISZ - offsetof(struct dtioc_probe_info, dtpi_name) -
		    DTNAMESIZE));
	}
}

static void
fz_check_gargs(const struct dtioc_arg *in, const struct dtioc_arg *out,
    const struct fz_call *fc, int error)
{
	const struct dt_probe *dtp;
	size_t nargs;

	dtp = dt_dev_probe(in->dtar_pbn);
	if (dtp == NULL) {
		FZ_CHECK(error == EINVAL && fc->fc_ncopy == 0);
		return;
	}
	/* Only tracepoints describe their arguments. */
	if (dtp->dtp_argtype[0] == NULL) {
		FZ_CHECK(error == 0 && out->dtar_size == 0 &&
		    fc->fc_ncopy == 0);
		return;
	}
	/*
	 * A type for each of dtpi_nargs, up to DTMAXFUNCARGS: a Linux
	 * tracepoint may have more arguments than OpenBSD's five
	 * (DTMAXARGTYPES), and OpenBSD's btrace asks for and prints nargs.
	 */
	nargs = dtp->dtp_nargs < DTMAXFUNCARGS ? dtp->dtp_nargs :
	    DTMAXFUNCARGS;
	if (in->dtar_size == 0) {
		FZ_CHECK(error == 0 && fc->fc_ncopy == 0 &&
		    out->dtar_size == nargs * sizeof(struct dtioc_arg));
		return;
	}
	if (fc->fc_cerr != 0)
		FZ_CHECK(error == fc->fc_cerr);
	else
		FZ_CHECK(error == 0 || error == ENOSPC);
	if (error == 0 || error == ENOSPC)
		FZ_CHECK(out->dtar_size <= nargs * sizeof(struct dtioc_arg) &&
		    out->dtar_size <= in->dtar_size);
}

static void
fz_check_enable(struct fz_sc *fs, const struct dtioc_req *rq, int error)
{
	const struct dt_probe *dtp = dt_dev_probe(rq->dtrq_pbn);

	/* dt_dev.c 1.48's order: recording, pbn, duplicate, provider. */
	if (fs->fs_recording)
		FZ_CHECK(error == EBUSY);
	else if (dtp == NULL)
		FZ_CHECK(error == ENOENT);
	else if (fs->fs_en[rq->dtrq_pbn])
		FZ_CHECK(error == EEXIST);
	else if (fz_is_timer(dtp))
		FZ_CHECK(error == ((rq->dtrq_nsecs < DT_TIMER_NSECS_MIN ||
		    rq->dtrq_nsecs > DT_TIMER_NSECS_MAX) ? EINVAL : 0));
	else
		FZ_CHECK(error == 0 || error == EINVAL || error == ENOMEM);
	if (error != 0)
		return;
	if (!fz_touched[rq->dtrq_pbn]) {
		fz_touched[rq->dtrq_pbn] = 1;
		fz_tlist[fz_ntouched++] = rq->dtrq_pbn;
	}
	pthread_mutex_lock(&fz_mtx);
	fs->fs_en[rq->dtrq_pbn] = 1;
	fs->fs_flags[rq->dtrq_pbn] = rq->dtrq_evtflags;
	pthread_mutex_unlock(&fz_mtx);
	fs->fs_nsecs[rq->dtrq_pbn] = rq->dtrq_nsecs;
	fs->fs_nen++;
}

/*
 * One ioctl as a transport makes it: the argument in a heap block of
 * exactly dt_ioctl_argsize() bytes (ASan sees any access past it), the
 * copy-out window from dt_ioctl_outbuf().  Checks the result against the
 * model and updates it.  Returns the core's answer; on 0 the argument as
 * the core left it is in out (when not NULL).
 */
static int
fz_ioctl(int slot, const struct dt_cred *cr, unsigned long cmd,
    const void *in, size_t inlen, int copyfail, void *out)
{
	struct fz_sc *fs = &fz_scs[slot];
	struct dt_uaccess ua = { fz_copyout, NULL };
	union {
		struct dtioc_probe	pr;
		struct dtioc_arg	ar;
		struct dtioc_stat	st;
		struct dtioc_req	rq;
		struct dtioc_rdvn	rv;
		struct dtioc_aggspec	as;
		struct dtioc_aggread	gr;
		struct dtioc_aggstkread	sr;
		int			on;
		unsigned char		raw[64];
	} a0, a1;
	struct fz_call fc;
	unsigned long canon = 0;
	uint64_t delivered;
	unsigned int npend;
	void *arg;
	int size, error;

	memset(&fc, 0, sizeof(fc));
	fc.fc_fail = copyfail;
	ua.ua_arg = &fc;
	size = dt_ioctl_argsize(cmd, &canon);
	fz_check_argsize(cmd, size, canon);
	if (size < 0) {
		/* An empty block: the core must not touch it. */
		arg = malloc(0);
		FZ_CHECK(dt_dev_ioctl(fs->fs_sc, cr, cmd, arg, &ua) == ENOTTY);
		free(arg);
		FZ_CHECK(fc.fc_ncopy == 0);
		return ENOTTY;
	}
	FZ_CHECK((size_t)size <= sizeof(a0));
	memset(&a0, 0, sizeof(a0));
	memcpy(&a0, in, inlen < (size_t)size ? inlen : (size_t)size);
	if ((arg = malloc(size)) == NULL)
		abort();
	memcpy(arg, &a0, size);
	fc.fc_haswin = dt_ioctl_outbuf(canon, &a0, &fc.fc_wlo, &fc.fc_wlen);
	if (canon != DTIOCGPLIST && canon != DTIOCGARGS &&
	    canon != DTIOCAGGREAD && canon != DTIOCAGGSTACKS)
		FZ_CHECK(!fc.fc_haswin);

	pthread_mutex_lock(&fz_mtx);
	delivered = fs->fs_delivered;
	npend = fs->fs_npend;
	pthread_mutex_unlock(&fz_mtx);
	error = dt_dev_ioctl(fs->fs_sc, cr, cmd, arg, &ua);
	memset(&a1, 0, sizeof(a1));
	memcpy(&a1, arg, size);
	free(arg);
	fz_check_memory();
	if (canon != DTIOCGPLIST && canon != DTIOCGARGS &&
	    canon != DTIOCAGGREAD && canon != DTIOCAGGSTACKS)
		FZ_CHECK(fc.fc_ncopy == 0);

	/* Tracing changes are root's, checked before anything else. */
	if ((canon == DTIOCRECORD || canon == DTIOCPRBENABLE ||
	    canon == DTIOCPRBDISABLE || canon == DTIOCRDVNODE ||
	    canon == DTIOCPRBAGG) && cr->dc_uid != 0) {
		FZ_CHECK(error == EPERM);
		return error;
	}

	switch (canon) {
	case DTIOCGPLIST:
		fz_check_plist(&a0.pr, &a1.pr, &fc, error);
		break;
	case DTIOCGARGS:
		fz_check_gargs(&a0.ar, &a1.ar, &fc, error);
		break;
	case DTIOCGSTATS:
		FZ_CHECK(error == 0);
		fz_check_stats(fs, &a1.st, delivered, npend);
		break;
	case DTIOCRECORD:
		if (a0.on == 0) {
			FZ_CHECK(error == 0);
			fs->fs_recording = 0;
		} else if (fs->fs_recording)
			FZ_CHECK(error == EBUSY);
		else if (fs->fs_nen == 0)
			FZ_CHECK(error == ENOENT);
		else {
			FZ_CHECK(error == 0);
			fs->fs_recording = 1;
			if (fz_fed_async(fs))
				fs->fs_async = 1;
		}
		fz_check_probes(0);
		break;
	case DTIOCPRBENABLE:
		fz_check_enable(fs, &a0.rq, error);
		fz_check_probes(0);
		break;
	case DTIOCPRBDISABLE:
		if (fs->fs_recording)
			FZ_CHECK(error == EBUSY);
		else if (dt_dev_probe(a0.rq.dtrq_pbn) == NULL)
			FZ_CHECK(error == ENOENT);
		else if (dt_dev_probe(a0.rq.dtrq_pbn)->dtp_prov->dtpv_dealloc ==
		    NULL)
			FZ_CHECK(error == 0);
		break;
	case DTIOCRDVNODE:
		if (a0.rv.dtrv_pid <= 0)
			FZ_CHECK(error == ESRCH);
		else
			FZ_CHECK(error == 0 || error == ESRCH ||
			    error == ENOENT);
		if (error == 0) {
			FZ_CHECK(a1.rv.dtrv_pid == a0.rv.dtrv_pid &&
			    a1.rv.dtrv_va == a0.rv.dtrv_va);
			FZ_CHECK((uintptr_t)a1.rv.dtrv_start <=
			    (uintptr_t)a0.rv.dtrv_va);
			FZ_CHECK(a1.rv.dtrv_fd == -1);
		}
		break;
	case DTIOCPRBAGG:
		/* checked before the spec: no aggregation while recording */
		if (fs->fs_recording)
			FZ_CHECK(error == EBUSY);
		else
			FZ_CHECK(error == 0 || error == EINVAL ||
			    error == ENOENT || error == ENOSPC ||
			    error == ENOMEM);
		if (error == 0)
			FZ_CHECK(a1.as.dtas_id > 0 && a1.as.dtas_aggsize > 0 &&
			    a1.as.dtas_aggsize <= DTA_AGGSIZE_MAX &&
			    a1.as.dtas_stksize <= DTA_STKSIZE_MAX);
		break;
	case DTIOCAGGREAD:
		/* dtgr_kcount is output only: whatever it held, no EINVAL */
		if ((a0.gr.dtgr_flags & ~DTA_RD_CLEAR) != 0)
			FZ_CHECK(error == EINVAL);
		else
			FZ_CHECK(error == 0 || error == ENOSPC ||
			    error == EFAULT || error == ENOMEM);
		if (error == 0 && a0.gr.dtgr_size != 0)
			FZ_CHECK(a1.gr.dtgr_size == (size_t)a1.gr.dtgr_nents *
			    sizeof(struct dtioc_aggent) &&
			    a1.gr.dtgr_size <= a0.gr.dtgr_size &&
			    fc.fc_ncopy <= 1);
		if (error == 0 && a0.gr.dtgr_size == 0)
			FZ_CHECK(fc.fc_ncopy == 0 && a1.gr.dtgr_nents == 0);
		if (error != 0)
			FZ_CHECK(error == EFAULT || fc.fc_ncopy == 0);
		/* a part of the folds, whatever the input said */
		if (error == 0 || error == ENOSPC)
			FZ_CHECK(a1.gr.dtgr_kcount <= a1.gr.dtgr_aggevt);
		break;
	case DTIOCAGGSTACKS:
		if (a0.sr.dtsr_first == 0 || a0.sr.dtsr_pad != 0 ||
		    a0.sr.dtsr_spare != 0)
			FZ_CHECK(error == EINVAL);
		else
			FZ_CHECK(error == 0 || error == EFAULT ||
			    error == ENOMEM);
		/* never more than asked for, nor than the table holds */
		if (error == 0)
			FZ_CHECK(a1.sr.dtsr_size == (size_t)a1.sr.dtsr_nstks *
			    sizeof(struct dtioc_aggstack) &&
			    a1.sr.dtsr_size <= a0.sr.dtsr_size &&
			    a1.sr.dtsr_nstks <= a1.sr.dtsr_total &&
			    a1.sr.dtsr_total <= DTA_STKSIZE_MAX &&
			    fc.fc_ncopy <= 1);
		if (error != 0)
			FZ_CHECK(error == EFAULT || fc.fc_ncopy == 0);
		break;
	default:
		FZ_CHECK(0);
	}
	if (error == 0 && out != NULL)
		memcpy(out, &a1, size);
	return error;
}

static struct fz_sc *
fz_slot(struct fz_in *in, int *slotp)
{
	int slot = fz_u8(in) % FZ_NSC;

	*slotp = slot;
	return fz_scs[slot].fs_sc != NULL ? &fz_scs[slot] : NULL;
}

/* The pcb at index sel (mod count) of an open's list, NULL if none. */
static struct dt_pcb *
fz_pcb(const struct fz_sc *fs, uint8_t sel)
{
	struct dt_pcb *dp;
	unsigned int n = 0;

	for (dp = fs->fs_sc->ds_pcbs; dp != NULL; dp = dp->dp_snext)
		n++;
	if (n == 0)
		return NULL;
	n = sel % n;
	for (dp = fs->fs_sc->ds_pcbs; n > 0; dp = dp->dp_snext)
		n--;
	return dp;
}

static void
fz_open(struct fz_in *in)
{
	uint8_t sel = fz_u8(in);
	struct fz_sc *fs;
	int slot;

	for (slot = 0; slot < FZ_NSC && fz_scs[slot].fs_sc != NULL; slot++)
		continue;
	if (slot == FZ_NSC)
		return;
	fs = &fz_scs[slot];
	fs->fs_cred = (sel & 0x80) ? fz_user : fz_root;
	if (sel & 0x80)
		fs->fs_cred.dc_uid += sel & 0x7f;
	FZ_CHECK(dt_dev_open(&fs->fs_cred, &fs->fs_sc) == 0);
	FZ_CHECK(fs->fs_sc != NULL);
}

static void
fz_close(int slot)
{
	struct fz_sc *fs = &fz_scs[slot];
	struct fz_tok *tk;

	dt_dev_close(fs->fs_sc);
	/* Every parked read of the open has completed (with EIO). */
	pthread_mutex_lock(&fz_mtx);
	FZ_CHECK(fs->fs_npend == 0);
	for (tk = fz_toks; tk < fz_toks + FZ_NTOK; tk++)
		FZ_CHECK(tk->tk_state != TK_PENDING || tk->tk_slot != slot);
	fs->fs_sc = NULL;
	memset(fs->fs_en, 0, fz_nprobes + 1);
	memset(fs->fs_flags, 0, (fz_nprobes + 1) * sizeof(*fs->fs_flags));
	fs->fs_delivered = 0;
	pthread_mutex_unlock(&fz_mtx);
	memset(fs->fs_nsecs, 0, (fz_nprobes + 1) * sizeof(*fs->fs_nsecs));
	fs->fs_recording = fs->fs_async = 0;
	fs->fs_nen = 0;
	memset(&fs->fs_last, 0, sizeof(fs->fs_last));
	fs->fs_attempts = fs->fs_skip = fs->fs_recur = 0;
	fz_check_probes(0);
}

static void
fz_read(struct fz_in *in)
{
	struct fz_sc *fs;
	struct fz_tok *tk;
	uint64_t inring = 0, expect = 0, lim;
	size_t resid;
	int slot, exact;
	uint8_t sel;

	fs = fz_slot(in, &slot);
	sel = fz_u8(in);
	resid = fz_readsize(sel, fz_u64(in));
	if (fs == NULL)
		return;
	pthread_mutex_lock(&fz_mtx);
	for (tk = fz_toks; tk < fz_toks + FZ_NTOK; tk++)
		if (tk->tk_state != TK_PENDING)
			break;
	exact = !fs->fs_async && fs->fs_npend == 0 && resid > 0;
	pthread_mutex_unlock(&fz_mtx);
	if (tk == fz_toks + FZ_NTOK)
		return;
	/*
	 * Fed by the fuzzer alone and nobody reading: how much it gets is
	 * known, and whether it parks (dt-abi 4.4).
	 */
	if (exact) {
		inring = fz_inring(fs);
		lim = resid < DT_READ_MAX ? resid : DT_READ_MAX;
		expect = inring * FZ_EVTSZ < lim ? inring * FZ_EVTSZ : lim;
	}
	pthread_mutex_lock(&fz_mtx);
	tk->tk_state = TK_PENDING;
	tk->tk_slot = slot;
	tk->tk_seq = ++fz_seq;
	tk->tk_resid = resid;
	tk->tk_error = 0;
	tk->tk_len = 0;
	fs->fs_npend++;
	pthread_mutex_unlock(&fz_mtx);

	dt_dev_read(fs->fs_sc, resid, tk);

	pthread_mutex_lock(&fz_mtx);
	if (resid == 0)
		FZ_CHECK(tk->tk_state == TK_DONE && tk->tk_len == 0 &&
		    tk->tk_error == 0);
	else if (exact && inring > 0)
		FZ_CHECK(tk->tk_state == TK_DONE && tk->tk_error == 0 &&
		    tk->tk_len == expect);
	else if (exact)
		FZ_CHECK(tk->tk_state == TK_PENDING);
	pthread_mutex_unlock(&fz_mtx);
}

static void
fz_cancel(struct fz_in *in)
{
	static const int errs[] = { EINTR, EIO, ECANCELED };
	struct fz_sc *fs;
	struct fz_tok *tk;
	int slot, err, here;
	bool found;

	fs = fz_slot(in, &slot);
	tk = &fz_toks[fz_u8(in) % FZ_NTOK];
	err = errs[fz_u8(in) % 3];
	if (fs == NULL)
		return;
	pthread_mutex_lock(&fz_mtx);
	here = tk->tk_state == TK_PENDING && tk->tk_slot == slot;
	pthread_mutex_unlock(&fz_mtx);
	found = dt_dev_read_cancel(fs->fs_sc, tk, err);
	pthread_mutex_lock(&fz_mtx);
	if (!here)
		FZ_CHECK(!found);
	else if (found)
		FZ_CHECK(tk->tk_state == TK_DONE && tk->tk_error == err &&
		    tk->tk_len == 0);
	else	/* the wakeup thread won the race */
		FZ_CHECK(tk->tk_state == TK_DONE);
	pthread_mutex_unlock(&fz_mtx);
}

/* Fill an event as a provider would, tagged for fz_check_records(). */
static void
fz_event(struct dt_evt *ev, uint8_t fill, uint32_t cpu, uint32_t tid)
{
	memset(ev, fill, sizeof(*ev));
	ev->dtev_pid = FZ_PIDBASE + (pid_t)(cpu % FZ_NCPUS);
	ev->dtev_tid = (pid_t)tid;
	/* A NUL somewhere in comm (or none), garbage after it. */
	if (fill & 0x20)
		ev->dtev_comm[fill % DTMAXCOMLEN] = '\0';
}

/*
 * Events put into one pcb; with the count byte's high bit, as the ingest
 * puts a deep user stack of ustack.st_count frames (dt_pcb_ring_put_deep(),
 * the core cuts more than DTEV_DEEP_MAX): an open that asked for
 * DTEVT_DEEPSTACK takes its continuation records with it, in one go or
 * one drop.
 */
static void
fz_inject(struct fz_in *in)
{
	static struct dt_deepstack u;
	struct fz_sc *fs;
	struct dt_pcb *dp;
	struct dt_evt ev;
	uint32_t cpu;
	unsigned int count, i, nmore;
	uint8_t psel, fill, cb;
	int slot, error;

	fs = fz_slot(in, &slot);
	psel = fz_u8(in);
	cpu = fz_u32(in);
	cb = fz_u8(in);
	count = cb % 33;
	fill = fz_u8(in);
	fz_event(&ev, fill, cpu, FZ_TIDTAG | (uint32_t)slot << 16);
	ev.dtev_kstack.st_count = fz_u32(in);
	ev.dtev_ustack.st_count = fz_u32(in);
	/* A producer may only put into a pcb it found on dtp_pcbs. */
	if (fs == NULL || !fs->fs_recording || (dp = fz_pcb(fs, psel)) == NULL)
		return;
	u.ds_count = ev.dtev_ustack.st_count;
	for (i = 0; i < DTEV_DEEP_MAX; i++)
		u.ds_pc[i] = 0x1000 + i;
	nmore = 0;
	if ((cb & 0x80) && (dp->dp_evtflags & (DTEVT_DEEPSTACK |
	    DTEVT_USTACK)) == (DTEVT_DEEPSTACK | DTEVT_USTACK))
		nmore = DTEV_MORE_RECS(0, u.ds_count < DTEV_DEEP_MAX ?
		    u.ds_count : DTEV_DEEP_MAX);
	for (i = 0; i < count; i++) {
		rcu_read_lock();
		error = (cb & 0x80) ? dt_pcb_ring_put_deep(dp, cpu, &ev, NULL,
		    &u) : dt_pcb_ring_put(dp, cpu, &ev);
		rcu_read_unlock();
		FZ_CHECK(error == 0 || error == ENOBUFS);
		/* folded into the open's table (DTIOCPRBAGG): no ring slot */
		if (dp->dp_agg == NULL)
			fs->fs_attempts += error == 0 ? 1 + nmore : 1;
	}
}

static void
fz_emit(struct fz_in *in)
{
	struct dt_probe *dtp;
	struct dt_pcb *dp;
	struct dt_evt ev;
	uint32_t pbn, cpu;
	unsigned int count, i, drops, npcb;
	uint8_t sel, fill;
	int s;

	sel = fz_u8(in);
	pbn = fz_pbn(sel, fz_u32(in));
	cpu = fz_u32(in);
	count = fz_u8(in) % 17;
	fill = fz_u8(in);
	if ((dtp = dt_dev_probe(pbn)) == NULL)
		return;
	fz_event(&ev, fill, cpu, FZ_EMITTID);
	/* Every recording pcb of the probe gets one per call. */
	npcb = 0;
	for (s = 0; s < FZ_NSC; s++) {
		if (fz_scs[s].fs_sc == NULL || !fz_scs[s].fs_recording)
			continue;
		for (dp = fz_scs[s].fs_sc->ds_pcbs; dp != NULL;
		    dp = dp->dp_snext) {
			if (dp->dp_dtp != dtp)
				continue;
			if (dp->dp_agg == NULL)
				fz_scs[s].fs_attempts += count;
			npcb++;
		}
	}
	for (i = 0; i < count; i++) {
		drops = dt_probe_emit(dtp, cpu, &ev);
		FZ_CHECK(drops <= npcb);
	}
}

static void
fz_count(struct fz_in *in)
{
	struct fz_sc *fs;
	struct dt_pcb *dp;
	uint32_t cpu;
	uint16_t nskip, nrecur;
	uint8_t psel;
	int slot;

	fs = fz_slot(in, &slot);
	psel = fz_u8(in);
	cpu = fz_u32(in);
	nskip = fz_u16(in);
	nrecur = fz_u16(in);
	if (fs == NULL || (dp = fz_pcb(fs, psel)) == NULL)
		return;
	dt_pcb_count_skiptick(dp, cpu, nskip);
	dt_pcb_count_recurevt(dp, cpu, nrecur);
	fs->fs_skip += nskip;
	fs->fs_recur += nrecur;
}

/*
 * Liveness: a parked read of an open that has events waiting completes
 * (the deferred wakeup was not lost).  Only for opens fed by the fuzzer,
 * where "waiting" is known.
 */
static void
fz_sync(void)
{
	struct fz_tok *tk, *oldest;
	struct timespec ts;
	int slot;

	for (slot = 0; slot < FZ_NSC; slot++) {
		if (fz_scs[slot].fs_sc == NULL || fz_scs[slot].fs_async)
			continue;
		pthread_mutex_lock(&fz_mtx);
		oldest = NULL;
		for (tk = fz_toks; tk < fz_toks + FZ_NTOK; tk++)
			if (tk->tk_state == TK_PENDING &&
			    tk->tk_slot == slot &&
			    (oldest == NULL || tk->tk_seq < oldest->tk_seq))
				oldest = tk;
		pthread_mutex_unlock(&fz_mtx);
		if (oldest == NULL || fz_inring(&fz_scs[slot]) == 0)
			continue;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += FZ_LIVENESS;
		pthread_mutex_lock(&fz_mtx);
		while (oldest->tk_state == TK_PENDING)
			if (pthread_cond_timedwait(&fz_cv, &fz_mtx, &ts) ==
			    ETIMEDOUT)
				break;
		FZ_CHECK(oldest->tk_state != TK_PENDING);
		pthread_mutex_unlock(&fz_mtx);
	}
}

static void
fz_wait(struct fz_in *in)
{
	struct timespec ts;
	uint8_t how = fz_u8(in);
	unsigned int us;

	if (how & WAIT_SYNC) {
		fz_sync();
		return;
	}
	/*
	 * Let the clock and the wakeup thread run, within a budget.  Zero
	 * (padding, mostly) does nothing: even a yield costs a time slice
	 * when the clock thread is busy.
	 */
	us = how * 4;
	if (fz_slept + us > FZ_MAXSLEEP)
		us = FZ_MAXSLEEP - fz_slept;
	if (us == 0)
		return;
	fz_slept += us;
	ts.tv_sec = 0;
	ts.tv_nsec = (long)us * 1000;
	nanosleep(&ts, NULL);
}

/* The argument of a structured ioctl op, built from selectors. */
static void
fz_op_ioctl(struct fz_in *in, int op)
{
	union {
		struct dtioc_probe	pr;
		struct dtioc_arg	ar;
		struct dtioc_stat	st;
		struct dtioc_req	rq;
		struct dtioc_rdvn	rv;
		struct dtioc_aggspec	as;
		struct dtioc_aggread	gr;
		struct dtioc_aggstkread	sr;
		int			on;
	} a;
	const struct dt_cred *cr;
	const struct dt_probe *dtp;
	struct fz_sc *fs;
	unsigned long cmd = 0;
	size_t need;
	uint8_t csel, enc, s1, s2;
	uint64_t p1, p2;
	int slot, local = 0;

	fs = fz_slot(in, &slot);
	csel = fz_u8(in);
	enc = fz_u8(in);
	memset(&a, 0, sizeof(a));
	switch (op) {
	case OP_PLIST:
		cmd = DTIOCGPLIST;
		s1 = fz_u8(in);
		p1 = fz_u64(in);
		s2 = fz_u8(in);
		p2 = fz_u64(in);
		need = (size_t)fz_nprobes * FZ_PISZ;
		a.pr.dtpr_probes = (void *)(uintptr_t)fz_ptr(s1, p1);
		a.pr.dtpr_size = fz_size(s2, p2, need, FZ_PISZ);
		break;
	case OP_GARGS:
		cmd = DTIOCGARGS;
		s1 = fz_u8(in);
		a.ar.dtar_pbn = fz_pbn(s1, fz_u32(in));
		s1 = fz_u8(in);
		p1 = fz_u64(in);
		s2 = fz_u8(in);
		p2 = fz_u64(in);
		dtp = dt_dev_probe(a.ar.dtar_pbn);
		need = dtp != NULL ? dtp->dtp_nargs * FZ_AISZ : 0;
		a.ar.dtar_args = (void *)(uintptr_t)fz_ptr(s1, p1);
		a.ar.dtar_size = fz_size(s2, p2, need, FZ_AISZ);
		break;
	case OP_STATS:
		cmd = DTIOCGSTATS;
		memset(&a.st, 0xa5, sizeof(a.st));
		break;
	case OP_RECORD:
		cmd = DTIOCRECORD;
		a.on = (int)fz_u32(in);
		break;
	case OP_ENABLE:
	case OP_DISABLE:
		cmd = op == OP_ENABLE ? DTIOCPRBENABLE : DTIOCPRBDISABLE;
		s1 = fz_u8(in);
		a.rq.dtrq_pbn = fz_pbn(s1, fz_u32(in));
		a.rq.dtrq_evtflags = fz_u64(in);
		s1 = fz_u8(in);
		a.rq.dtrq_nsecs = fz_nsecs(s1, fz_u64(in));
		break;
	case OP_AGG:
		/* mostly sane, one field at a time off, as btrace would */
		cmd = DTIOCPRBAGG;
		s1 = fz_u8(in);
		a.as.dtas_pbn = fz_pbn(s1, fz_u32(in));
		a.as.dtas_func = fz_u8(in) % 9;
		a.as.dtas_nkeys = fz_u8(in) % 6;
		for (s2 = 0; s2 < DTA_MAXKEYS; s2++)
			a.as.dtas_keys[s2] = fz_u8(in) % 28;
		a.as.dtas_vfield = fz_u8(in) % 28;
		a.as.dtas_vflags = fz_u8(in) & 0x81;
		a.as.dtas_aggsize = fz_u32(in) % 600;
		/* mostly the default, else a small stack table */
		s2 = fz_u8(in);
		a.as.dtas_stksize = s2 >= 0xf0 ? s2 - 0xf0 : 0;
		a.as.dtas_lmin = (int64_t)fz_u64(in);
		a.as.dtas_lmax = (int64_t)fz_u64(in);
		a.as.dtas_lstep = (int64_t)fz_u64(in);
		break;
	case OP_AGGREAD:
		cmd = DTIOCAGGREAD;
		s1 = fz_u8(in);
		p1 = fz_u64(in);
		s2 = fz_u8(in);
		p2 = fz_u64(in);
		a.gr.dtgr_ents = (void *)(uintptr_t)fz_ptr(s1, p1);
		a.gr.dtgr_size = fz_size(s2, p2, 8 * sizeof(struct dtioc_aggent),
		    sizeof(struct dtioc_aggent));
		a.gr.dtgr_flags = fz_u8(in) % 3;
		/* ignored on input: as a size query's answer passed back */
		a.gr.dtgr_kcount = fz_u8(in);
		break;
	case OP_AGGSTK:
		cmd = DTIOCAGGSTACKS;
		s1 = fz_u8(in);
		p1 = fz_u64(in);
		s2 = fz_u8(in);
		p2 = fz_u64(in);
		a.sr.dtsr_stks = (void *)(uintptr_t)fz_ptr(s1, p1);
		a.sr.dtsr_size = fz_size(s2, p2, 4 * sizeof(struct dtioc_aggstack),
		    sizeof(struct dtioc_aggstack));
		a.sr.dtsr_first = fz_u8(in) % 6;
		a.sr.dtsr_spare = fz_u8(in) == 0xff;
		break;
	case OP_RDVN:
		cmd = DTIOCRDVNODE;
		s1 = fz_u8(in);
		p1 = fz_u32(in);
		switch (s1 % 5) {
		case PID_SELF:
			a.rv.dtrv_pid = getpid();
			break;
		case PID_ZERO:
			a.rv.dtrv_pid = 0;
			break;
		case PID_NEG:
			a.rv.dtrv_pid = -1;
			break;
		case PID_RAW:
			a.rv.dtrv_pid = (pid_t)p1;
			break;
		default:
			a.rv.dtrv_pid = 1;
			break;
		}
		s1 = fz_u8(in);
		p1 = fz_u64(in);
		switch (s1 % 5) {
		case VA_TEXT:
			a.rv.dtrv_va = (caddr_t)(uintptr_t)fz_open;
			break;
		case VA_STACK:
			a.rv.dtrv_va = (caddr_t)&local;
			break;
		case VA_RAW:
			a.rv.dtrv_va = (caddr_t)(uintptr_t)p1;
			break;
		case VA_SANDBOX:
			a.rv.dtrv_va = (caddr_t)fz_sb;
			break;
		default:
			a.rv.dtrv_va = NULL;
			break;
		}
		a.rv.dtrv_fd = (int)p1;
		break;
	}
	if (fs == NULL)
		return;
	cr = fz_cred(fs, csel);
	fz_ioctl(slot, cr, fz_encode(cmd, enc), &a, sizeof(a),
	    fz_copyerr(enc), NULL);
}

/* Any command number, raw argument bytes, maybe a sane pointer. */
static void
fz_op_raw(struct fz_in *in)
{
	union {
		struct dtioc_probe	pr;
		struct dtioc_arg	ar;
		unsigned char		b[64];
	} arg;
	const struct dt_cred *cr;
	struct fz_sc *fs;
	unsigned long cmd, canon = 0;
	uint64_t p;
	size_t i;
	int slot, size;
	uint8_t csel, sel, patch, s1, s2;
	uint64_t p1, p2;

	fs = fz_slot(in, &slot);
	csel = fz_u8(in);
	sel = fz_u8(in);
	p = fz_u64(in);
	if (sel < 64) {
		/* A real one, maybe re-encoded or with a wrong size. */
		cmd = fz_cmds[sel % FZ_NCMDS];
		if (sel & 0x08)
			cmd = DTIOC_OPENBSD(cmd);
		if (sel & 0x10)
			cmd |= (unsigned long)p << 32;
		if (sel & 0x20)
			cmd ^= (unsigned long)(p & _IOC_SIZEMASK) <<
			    _IOC_SIZESHIFT;
	} else if (sel < 128)
		cmd = _IOC(p & 3, 'D', (p >> 2) & 0xff, (p >> 10) & 0x3fff);
	else
		cmd = p;
	memset(&arg, 0, sizeof(arg));
	size = dt_ioctl_argsize(cmd, &canon);
	for (i = 0; size > 0 && i < (size_t)size && i < sizeof(arg.b); i++)
		arg.b[i] = fz_u8(in);
	patch = fz_u8(in);
	if (patch & 1) {
		s1 = fz_u8(in);
		p1 = fz_u64(in);
		s2 = fz_u8(in);
		p2 = fz_u64(in);
		if (canon == DTIOCGPLIST) {
			arg.pr.dtpr_probes = (void *)(uintptr_t)fz_ptr(s1, p1);
			arg.pr.dtpr_size = fz_size(s2, p2,
			    (size_t)fz_nprobes * FZ_PISZ, FZ_PISZ);
		} else if (canon == DTIOCGARGS) {
			arg.ar.dtar_args = (void *)(uintptr_t)fz_ptr(s1, p1);
			arg.ar.dtar_size = fz_size(s2, p2, 0, FZ_AISZ);
		}
	}
	if (fs == NULL)
		return;
	cr = fz_cred(fs, csel);
	fz_ioctl(slot, cr, cmd, &arg, sizeof(arg), fz_copyerr(patch >> 1),
	    NULL);
}

static void
fz_run_op(struct fz_in *in)
{
	struct fz_sc *fs;
	int op, slot;

	op = fz_u8(in) % FZ_NOP;
	switch (op) {
	case OP_OPEN:
		fz_open(in);
		break;
	case OP_CLOSE:
		if ((fs = fz_slot(in, &slot)) != NULL)
			fz_close(slot);
		break;
	case OP_READ:
		fz_read(in);
		break;
	case OP_CANCEL:
		fz_cancel(in);
		break;
	case OP_PLIST:
	case OP_GARGS:
	case OP_STATS:
	case OP_RECORD:
	case OP_ENABLE:
	case OP_DISABLE:
	case OP_RDVN:
	case OP_AGG:
	case OP_AGGREAD:
	case OP_AGGSTK:
		fz_op_ioctl(in, op);
		break;
	case OP_RAW:
		fz_op_raw(in);
		break;
	case OP_INJECT:
		fz_inject(in);
		break;
	case OP_EMIT:
		fz_emit(in);
		break;
	case OP_COUNT:
		fz_count(in);
		break;
	case OP_WAIT:
		fz_wait(in);
		break;
	}
}

/* ---- seeds: the btrace sequences of dt-abi 6.1, in this format ---- */

struct fz_out {
	uint8_t	fo_buf[1024];
	size_t	fo_len;
};

static void
put(struct fz_out *o, uint64_t v, size_t len)
{
	size_t i;

	for (i = 0; i < len && o->fo_len < sizeof(o->fo_buf); i++)
		o->fo_buf[o->fo_len++] = (uint8_t)(v >> (8 * i));
}

static void
s_open(struct fz_out *o, int user)
{
	put(o, OP_OPEN, 1);
	put(o, user ? 0x80 : 0, 1);
}

static void
s_close(struct fz_out *o, int slot)
{
	put(o, OP_CLOSE, 1);
	put(o, slot, 1);
}

/* DTIOCGPLIST of size (SZ_*) at the sandbox base. */
static void
s_plist(struct fz_out *o, int slot, int szsel)
{
	put(o, OP_PLIST, 1);
	put(o, slot, 1);
	put(o, CR_OPENER, 1);
	put(o, 0, 1);
	put(o, PT_BASE, 1);
	put(o, 0, 8);
	put(o, szsel, 1);
	put(o, 0, 8);
}

static void
s_gargs(struct fz_out *o, int slot, uint32_t pbn)
{
	put(o, OP_GARGS, 1);
	put(o, slot, 1);
	put(o, CR_OPENER, 1);
	put(o, 0, 1);
	put(o, PB_INDEX, 1);
	put(o, pbn - 1, 4);
	put(o, PT_IN, 1);
	put(o, 4096, 8);
	put(o, SZ_LONG, 1);
	put(o, 100, 8);
}

static void
s_req(struct fz_out *o, int op, int slot, uint32_t pbn, uint64_t flags,
    uint64_t nsecs)
{
	put(o, op, 1);
	put(o, slot, 1);
	put(o, CR_OPENER, 1);
	put(o, 0, 1);
	put(o, PB_INDEX, 1);
	put(o, pbn - 1, 4);
	put(o, flags, 8);
	put(o, NS_RAW, 1);
	put(o, nsecs, 8);
}

static void
s_record(struct fz_out *o, int slot, int on)
{
	put(o, OP_RECORD, 1);
	put(o, slot, 1);
	put(o, CR_OPENER, 1);
	put(o, 0, 1);
	put(o, on, 4);
}

static void
s_stats(struct fz_out *o, int slot)
{
	put(o, OP_STATS, 1);
	put(o, slot, 1);
	put(o, CR_OPENER, 1);
	put(o, ENC_OPENBSD, 1);
}

/* read(2) of nrec records plus extra bytes. */
static void
s_read(struct fz_out *o, int slot, unsigned int nrec, unsigned int extra)
{
	put(o, OP_READ, 1);
	put(o, slot, 1);
	if (extra == 0) {
		put(o, RD_RECORDS, 1);
		put(o, nrec - 1, 8);
	} else {
		put(o, RD_RECPART, 1);
		put(o, nrec | (uint64_t)(extra - 1) << 8, 8);
	}
}

static void
s_cancel(struct fz_out *o, int slot, int tok)
{
	put(o, OP_CANCEL, 1);
	put(o, slot, 1);
	put(o, tok, 1);
	put(o, 0, 1);		/* EINTR */
}

static void
s_inject(struct fz_out *o, int slot, uint32_t cpu, int count, uint8_t fill)
{
	put(o, OP_INJECT, 1);
	put(o, slot, 1);
	put(o, 0, 1);
	put(o, cpu, 4);
	put(o, count, 1);
	put(o, fill, 1);
	put(o, 3, 4);
	put(o, 2, 4);
}

static void
s_wait(struct fz_out *o, int how)
{
	put(o, OP_WAIT, 1);
	put(o, how, 1);
}

static void
s_write(const char *dir, const char *name, const struct fz_out *o)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/seed-%s", dir, name);
	if ((fp = fopen(path, "w")) == NULL ||
	    fwrite(o->fo_buf, 1, o->fo_len, fp) != o->fo_len ||
	    fclose(fp) != 0) {
		perror(path);
		exit(1);
	}
}

static void
fz_write_seeds(const char *dir)
{
	struct fz_out o;
	uint32_t pbn;

	/* btrace -l: list twice (size, then exactly that), args of each. */
	memset(&o, 0, sizeof(o));
	s_open(&o, 1);
	s_plist(&o, 0, SZ_ZERO);
	s_plist(&o, 0, SZ_NEED);
	for (pbn = 1; pbn <= fz_nprobes && pbn <= 16; pbn++)
		s_gargs(&o, 0, pbn);
	s_close(&o, 0);
	s_write(dir, "btrace-l", &o);

	/* btrace 'interval:hz:1 { printf(comm) }' until ^C, then -v. */
	memset(&o, 0, sizeof(o));
	s_open(&o, 0);
	s_plist(&o, 0, SZ_ZERO);
	s_plist(&o, 0, SZ_NEED);
	s_req(&o, OP_ENABLE, 0, 2, DTEVT_EXECNAME, DT_TIMER_NSECS_MIN);
	s_record(&o, 0, 1);
	s_read(&o, 0, 64, 0);
	s_wait(&o, 127);
	s_wait(&o, 127);
	s_read(&o, 0, 64, 0);
	s_cancel(&o, 0, 1);
	s_record(&o, 0, 0);
	s_req(&o, OP_DISABLE, 0, 2, 0, 0);
	s_gargs(&o, 0, 2);
	s_stats(&o, 0);
	s_close(&o, 0);
	s_write(dir, "btrace-interval", &o);

	/* btrace 'profile:hz:97 { @[kstack] = count() }'. */
	memset(&o, 0, sizeof(o));
	s_open(&o, 0);
	s_plist(&o, 0, SZ_ZERO);
	s_plist(&o, 0, SZ_NEED);
	s_req(&o, OP_ENABLE, 0, 1, DTEVT_KSTACK | DTEVT_USTACK,
	    1000000000ULL / 97);
	s_record(&o, 0, 1);
	s_read(&o, 0, 64, 0);
	s_wait(&o, 127);
	s_wait(&o, 127);
	s_cancel(&o, 0, 0);
	s_record(&o, 0, 0);
	s_req(&o, OP_DISABLE, 0, 1, 0, 0);
	s_stats(&o, 0);
	s_close(&o, 0);
	s_write(dir, "btrace-profile", &o);

	/*
	 * A quiet clock and events put by hand: overflow, a short read that
	 * truncates, a parked read woken by a put, the exact counters.
	 */
	memset(&o, 0, sizeof(o));
	s_open(&o, 0);
	s_req(&o, OP_ENABLE, 0, 2, DTEVT_EXECNAME | DTEVT_USTACK,
	    100000000000ULL);
	s_record(&o, 0, 1);
	s_inject(&o, 0, 0, 7, 0x41);
	s_inject(&o, 0, 4, 2, 0x62);
	s_stats(&o, 0);
	s_read(&o, 0, 2, 100);
	s_read(&o, 0, 64, 0);
	s_read(&o, 0, 64, 0);
	s_inject(&o, 0, 2, 1, 0x27);
	s_wait(&o, WAIT_SYNC);
	s_stats(&o, 0);
	s_read(&o, 0, 1, 0);
	s_read(&o, 0, 1, 0);
	s_cancel(&o, 0, 2);
	s_close(&o, 0);
	s_write(dir, "inject", &o);

	/* Two opens: a user's tries everything, closes cross over. */
	memset(&o, 0, sizeof(o));
	s_open(&o, 0);
	s_open(&o, 1);
	s_req(&o, OP_ENABLE, 1, 2, 0, 1000000);
	s_record(&o, 1, 1);
	s_req(&o, OP_ENABLE, 0, 2, DTEVT_EXECNAME, 100000000000ULL);
	s_req(&o, OP_ENABLE, 0, 2, DTEVT_EXECNAME, 100000000000ULL);
	s_record(&o, 0, 1);
	s_record(&o, 0, 1);
	s_inject(&o, 0, 1, 3, 0);
	s_read(&o, 1, 1, 0);
	s_read(&o, 0, 1, 0);
	s_stats(&o, 1);
	s_close(&o, 0);
	s_read(&o, 1, 1, 0);
	s_close(&o, 1);
	s_write(dir, "two-opens", &o);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct dt_dev_conf conf = { .dcf_ncpus = FZ_NCPUS,
	    .dcf_ringsize = FZ_RINGSIZE, .dcf_read_done = fz_read_done };
	const char *seeds;
	int i;

	(void)argc;
	(void)argv;
	/*
	 * Syscall probes are the fuzzer's alone to feed (no tracee attaches
	 * here): not also the kernel's, whose events of the whole machine a
	 * root dtd would add to them by default.
	 */
	dt_ksys_scope(false);
	if (dt_dev_init(&conf) != 0) {
		fprintf(stderr, "dt_dev_fuzz: dt_dev_init failed\n");
		exit(1);
	}
	/* This thread puts events, as a provider's thread would. */
	rcu_register_thread();
	fz_nprobes = dt_dev_nprobes();
	if (fz_nprobes == 0) {
		fprintf(stderr, "dt_dev_fuzz: no probes\n");
		exit(1);
	}
	for (i = 0; i < FZ_NSC; i++) {
		fz_scs[i].fs_en = calloc(fz_nprobes + 1, 1);
		fz_scs[i].fs_flags = calloc(fz_nprobes + 1, sizeof(uint64_t));
		fz_scs[i].fs_nsecs = calloc(fz_nprobes + 1, sizeof(uint64_t));
		if (fz_scs[i].fs_en == NULL || fz_scs[i].fs_flags == NULL ||
		    fz_scs[i].fs_nsecs == NULL)
			abort();
	}
	fz_cnt = calloc(fz_nprobes + 2, sizeof(*fz_cnt));
	fz_fl = calloc(fz_nprobes + 2, sizeof(*fz_fl));
	fz_touched = calloc(fz_nprobes + 1, sizeof(*fz_touched));
	fz_tlist = calloc(fz_nprobes + 1, sizeof(*fz_tlist));
	if (fz_cnt == NULL || fz_fl == NULL || fz_touched == NULL ||
	    fz_tlist == NULL)
		abort();
	memset(fz_guardpat, 0xdb, sizeof(fz_guardpat));
	memset(fz_space, 0xdb, sizeof(fz_space));
	memset(fz_shadow, 0xdb, sizeof(fz_shadow));

	if ((seeds = getenv("DT_FUZZ_SEEDS")) != NULL) {
		fz_write_seeds(seeds);
		exit(0);
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct fz_tok *tk;
	int slot;

	fz_slept = 0;
	for (fz_opno = 0; in.fi_n > 0 && fz_opno < FZ_MAXOPS; fz_opno++)
		fz_run_op(&in);
	/* Whatever the program left: waiting data is delivered, then close. */
	fz_sync();
	for (slot = 0; slot < FZ_NSC; slot++)
		if (fz_scs[slot].fs_sc != NULL)
			fz_close(slot);
	fz_check_memory();
	fz_check_probes(1);
	pthread_mutex_lock(&fz_mtx);
	for (tk = fz_toks; tk < fz_toks + FZ_NTOK; tk++) {
		FZ_CHECK(tk->tk_state != TK_PENDING);
		tk->tk_state = TK_IDLE;
	}
	pthread_mutex_unlock(&fz_mtx);
	return 0;
}
