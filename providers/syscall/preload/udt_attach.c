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
 * Start-up, fork and (re)connection of the preload library.
 *
 * The constructor resolves every hook, then attaches: it connects to
 * dtd's ingest socket and maps the ring and enable table dtd hands back.
 * When dtd is absent it maps a private placeholder table instead, all
 * zero, named UDT_TAB_MEMFD so that a dtd started later finds it in
 * /proc/PID/maps, sets its bytes and tb_reconnect, and so pulls the
 * process into the slow path, which attaches again.  The same happens
 * when dtd dies and a new one starts: the old table is an orphan the new
 * dtd adopts.  A fork child never writes into its parent's ring: it
 * lets go of it in the fork handler and attaches on its own when it
 * first has something to record (udt_fork_child()).
 *
 * Everything after the constructor uses raw system calls only (udt_sys.h):
 * attach runs in fork children and in signal handlers.
 */
#include <linux/futex.h>
#include <sys/types.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <userdt/udt_userdir.h>

#include "udt_preload.h"
#include "udt_hello.h"
#include "udt_rw_cs.h"
#include "udt_unw.h"
#include "udt_sys.h"
#include "systab.h"
#include "udt_rw.h"
#include "udt_rw_plan.h"
#include "udt_cat.h"

/* Before the first attach the hooks read this: nothing enabled. */
static struct udt_tab udt_zero_tab __attribute__((aligned(64)));
/*
 * A fork child's table until it attaches: only its tb_reconnect, set,
 * is read (its enable bytes stay its parent's: udt_fork_child()).
 */
static struct udt_tab udt_pend_tab __attribute__((aligned(64)));

const uint8_t		*udt_enab = udt_zero_tab.tb_enab;
struct udt_tab		*udt_tab = &udt_zero_tab;
struct udt_ring_hdr	*udt_ring;
struct udt_ring_hdr	*udt_pring;
int			 udt_use_tsc;
int32_t			 udt_dtd_pid;
int			 udt_use_ptimer;
static int		 udt_use_eager;		/* [a] UDT_W_EAGER */
int			 udt_use_xdrain;

static int		 udt_attaching;		/* [a] attach in progress */
static int		 udt_replayed;		/* [a] the constructor's loader
						   records are in (rh_ready) */
/*
 * Descriptors the constructor closes at its end, udt_defer_lo..hi (-1:
 * none), in one call: the handshake's and the rewriter's images', which
 * come right after them, would otherwise take one each.  Only while
 * udt_defer_on, set when the process has no other thread: no code of
 * the program's runs before that end, and every descriptor is
 * close-on-exec.  The constructor's thread.  [w]
 */
int			 udt_defer_on;
static int		 udt_defer_lo = -1, udt_defer_hi = -1;

/* Stands in for a wrapper this libc lacks. */
static long
udt_enosys(long a0, ...)
{
	(void)a0;
	errno = ENOSYS;
	return -1;
}

udt_fn_t
udt_resolve(udt_fn_t *slot, const char *name)
{
	udt_fn_t fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	void *sym;

	if (fn != NULL)
		return fn;
	sym = dlsym(RTLD_NEXT, name);
	fn = sym != NULL ? (udt_fn_t)sym : udt_enosys;
	__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	return fn;
}

void
udt_close(int fd)
{
	if (fd >= 0)
		udt_sys1(SYS_close, fd);
}

int
udt_close_defer(int lo, int hi)
{
	if (!udt_defer_on || lo < 0 || hi < lo)
		return -1;
	if (udt_defer_lo < 0)
		udt_defer_lo = lo;
	else if (lo != udt_defer_hi + 1)
		return -1;
	udt_defer_hi = hi;
	return 0;
}

/* The constructor's end: what it left, closed; no more left. */
static void
udt_close_deferred(void)
{
	int fd;

	udt_defer_on = 0;
	if (udt_defer_lo < 0)
		return;
	if (udt_sys3(SYS_close_range, udt_defer_lo, udt_defer_hi, 0) != 0)
		for (fd = udt_defer_lo; fd <= udt_defer_hi; fd++)
			udt_close(fd);
	udt_defer_lo = udt_defer_hi = -1;
}

void *
udt_map(int fd, size_t len, int prot)
{
	long p = udt_sys6(SYS_mmap, 0, (long)len, prot, MAP_SHARED, fd, 0);

	return p < 0 && p > -4096 ? NULL : (void *)p;
}

/* A table of our own for a future dtd to adopt; NULL if memfd fails. */
static struct udt_tab *
udt_placeholder(void)
{
	struct udt_tab *tab;
	long fd;

	fd = udt_sys2(SYS_memfd_create, UDT_TAB_MEMFD,
	    MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return NULL;
	/* dtd only adopts a table whose size nobody can change under it. */
	if (udt_sys2(SYS_ftruncate, fd, UDT_TAB_SIZE) != 0 ||
	    udt_sys3(SYS_fcntl, fd, F_ADD_SEALS,
	    F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		udt_close(fd);
		return NULL;
	}
	tab = udt_map(fd, UDT_TAB_SIZE, PROT_READ | PROT_WRITE);
	udt_close(fd);
	if (tab == NULL)
		return NULL;
	tab->tb_magic = UDT_MAGIC;
	tab->tb_nprobes = 2 * SYSTAB_COUNT;
	memcpy(tab->tb_sock, udt_sun.sun_path, sizeof(tab->tb_sock));
	return tab;
}

/*
 * Switch to a fresh ring and table.  In a fork child (child != 0) no
 * other thread can be using the old ones, so the old ring may be
 * unmapped, unless this very thread is in the middle of a record: a fork
 * from a signal handler that interrupted udt_emit() returns, in the
 * child, into code that still writes to the old ring.  The old table is
 * never unmapped in a child: the hooks' lock-free read of it (pointer,
 * then byte) may be the code the handler interrupted, and ut_nest does
 * not cover it; one table per fork generation stays mapped.  From the
 * slow path both stay mapped for good, since another thread may still
 * be writing a record into the old ring.  Reconnections are rare (one
 * per dtd restart), so the leak is bounded in practice.
 */
/*
 * Let go of a dead dtd's ring or table (or a placeholder table a new dtd
 * adopted).  Another thread may still be in the middle of a record or a
 * hook in it, so it cannot simply be unmapped: the memory is replaced by
 * private anonymous memory, in one step, which a straggler writes or
 * reads harmlessly, and which costs nothing until it does.  The shared
 * pages are freed once dtd closed them too.
 */
static void
udt_retire(void *p, size_t len)
{
	(void)udt_sys6(SYS_mmap, (long)p, (long)len, PROT_READ | PROT_WRITE,
	    MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
}

static void
udt_attach_locked(void)
{
	struct udt_tab *otab = udt_tab, *tab = NULL;
	struct udt_ring_hdr *oring = udt_ring, *ring = NULL;
	uint32_t flags = 0;
	int32_t pid = 0;

	if (udt_connect_dtd(&tab, &ring, &flags, &pid) != 0) {
		ring = NULL;
		tab = udt_placeholder();
		if (tab == NULL)
			tab = &udt_zero_tab;
	}
	/* Each record says which clock it used: no ordering needed here. */
	__atomic_store_n(&udt_use_tsc, (flags & UDT_W_TSC) != 0,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&udt_use_ptimer, (flags & UDT_W_PTIMER) != 0,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&udt_use_eager, (flags & UDT_W_EAGER) != 0,
	    __ATOMIC_RELAXED);
	__atomic_store_n(&udt_use_xdrain, (flags & UDT_W_XDRAIN) != 0,
	    __ATOMIC_RELAXED);
	/*
	 * An attach after the constructor's (a fork child's, a new dtd's
	 * adoption) has no loader records to hand over: ready at once, so
	 * that no exec hold dtd passed to this ring waits for them.
	 */
	if (ring != NULL && __atomic_load_n(&udt_replayed, __ATOMIC_RELAXED))
		__atomic_store_n(&ring->rh_ready, 1, __ATOMIC_RELEASE);
	/* Before the ring: the filter's pid goes with its records. */
	__atomic_store_n(&udt_dtd_pid, pid, __ATOMIC_RELAXED);
	__atomic_store_n(&udt_ring, ring, __ATOMIC_RELEASE);
	/*
	 * Code of ours dtd's snapshot of us lacks (a fork child's, or the
	 * module mapped meanwhile: fenced against its announce).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	udt_rw_cs_announce(ring);
	__atomic_store_n(&udt_tab, tab, __ATOMIC_RELEASE);
	__atomic_store_n(&udt_enab, tab->tb_enab, __ATOMIC_RELEASE);
	/*
	 * A profile watcher may sleep on the old table's word: wake it to
	 * look at the new one (it also wakes on its own every few seconds,
	 * for the wake that comes before it sleeps).  Not a fork child's
	 * first attach: no thread of it sleeps yet, and its enable bytes
	 * are in its parent's table, whose watcher is not ours to wake.
	 */
	if (otab != tab && otab != &udt_zero_tab && otab != &udt_pend_tab)
		udt_sys6(SYS_futex, (long)&otab->tb_prof_gen, FUTEX_WAKE,
		    INT_MAX, 0, 0, 0);
	if (oring != NULL && oring != ring)
		udt_retire(oring, UDT_RING_SIZE(oring->rh_nslots));
	if (otab != tab && otab != &udt_zero_tab && otab != &udt_pend_tab)
		udt_retire(otab, UDT_TAB_SIZE);
	/* A fork child's parent's ring: its own announces its execs now. */
	if ((oring = udt_pring) != NULL && ring != NULL) {
		__atomic_store_n(&udt_pring, NULL, __ATOMIC_RELEASE);
		udt_retire(oring, UDT_RING_SIZE(oring->rh_nslots));
	}
}

/* Any thread, any context: one load. */
int
udt_attach_pending(void)
{
	return __atomic_load_n(&udt_tab, __ATOMIC_RELAXED) == &udt_pend_tab;
}

void
udt_attach(void)
{
	int expect = 0;

	if (!__atomic_compare_exchange_n(&udt_attaching, &expect, 1, 0,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	udt_attach_locked();
	__atomic_store_n(&udt_attaching, 0, __ATOMIC_RELEASE);
	/* A debugger attached since the last time: udt_rw_untrap(). */
	udt_rw_tracer_check();
}

/*
 * The process whose ring this is.  A child can be told of twice, by
 * the system call that made it (a rewritten site) and by a hook or the
 * atfork handler: it is set up once.
 */
static pid_t		 udt_attached_pid;

/*
 * Fork child, its one thread: forget the cached tid, never write into
 * the parent's ring.  Runs inside fork() as an atfork handler, and after
 * _Fork() and a fork made through syscall(3), which run no handlers.
 * It does not attach (unless UDT_W_EAGER): most children exec soon, and
 * a handshake (a dozen calls here, two memfds and a read of /proc in
 * dtd) would be thrown away with the image.  It keeps the parent's ring
 * for its exec announces only, keeps reading the parent's enable bytes,
 * which dtd keeps current while the parent's image lives and turns all
 * on when it retires it (dt_ingest_drain.c), and takes udt_pend_tab, whose
 * tb_reconnect sends the first call that finds a probe on to
 * udt_emit(), which attaches.  Nothing enabled, nothing recorded: the
 * child is never dtd's.
 */
void
udt_fork_child(void)
{
	pid_t pid = (pid_t)udt_sys0(SYS_getpid);
	struct udt_ring_hdr *oring = udt_ring, *pring;

	if (pid == udt_attached_pid)
		return;
	udt_attached_pid = pid;
	/* A lock a parent's thread held at the fork is no one's here. */
	udt_sud_forked();
	/*
	 * A fork (_Fork(), a raw one) by another thread during the
	 * constructor's attach: the child's attaches are not the
	 * constructor's, and nothing closes descriptors it would defer.
	 */
	udt_ctor_status = 0;
	udt_defer_on = 0;
	udt_thread.ut_tid = 0;
	/*
	 * A stamp the parent's thread took (a fork from a handler that
	 * interrupted a timed call), or a vfork parent's it waits on: the
	 * child's tid never entered them.
	 */
	memset(udt_thread.ut_lat, 0, sizeof(udt_thread.ut_lat));
	/* A slot in the parent's ring is the parent's to commit or give up. */
	udt_thread.ut_rec = NULL;
	udt_attaching = 0;
	udt_host_fork_child();
	udt_pend_tab.tb_magic = UDT_MAGIC;
	udt_pend_tab.tb_reconnect = 1;
	__atomic_store_n(&udt_ring, NULL, __ATOMIC_RELEASE);
	__atomic_store_n(&udt_tab, &udt_pend_tab, __ATOMIC_RELEASE);
	/*
	 * The parent's ring stays mapped, for one use: a child that execs
	 * before it attached announces the exec there (udt_exec_mark()),
	 * in its own name, so that dtd holds the other sources for the new
	 * image's loader.  A grandchild keeps its grandparent's.  The
	 * child never records into it; its attach lets it go.
	 */
	if (oring != NULL) {
		if ((pring = udt_pring) != NULL && udt_thread.ut_nest == 0)
			udt_sys2(SYS_munmap, pring,
			    UDT_RING_SIZE(pring->rh_nslots));
		__atomic_store_n(&udt_pring, oring, __ATOMIC_RELEASE);
	}
	/*
	 * Where dtd samples a process by its attach (timer mode, or perf
	 * events per thread: a dtd without root), a child that waited for
	 * a record to attach was never sampled: it attaches now.
	 */
	if (__atomic_load_n(&udt_use_eager, __ATOMIC_RELAXED))
		udt_attach_locked();
	/* Dispatch is not inherited: on again where the parent had it. */
	if (udt_thread.ut_armed) {
		udt_thread.ut_armed = 0;
		udt_sud_thread();
	} else
		udt_sud_start();
}

static int
udt_find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t base = (uintptr_t)arg;
	int i;

	(void)size;
	if (info->dlpi_addr != base)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			udt_text_lo = base + ph->p_vaddr;
			udt_text_hi = udt_text_lo + ph->p_memsz;
		}
	}
	return 1;
}

static int
udt_env_is(const char *name, const char *val)
{
	const char *env = getenv(name);

	return env != NULL && strcmp(env, val) == 0;
}

__attribute__((constructor)) static void
udt_init(void)
{
	const char *path, *said;
	Dl_info dli;
	unsigned long euid;
	size_t n;
	int serr;

	/*
	 * First: the launcher traced what ran before us and lets go here;
	 * every call after this one is ours or the program's.
	 */
	udt_loader_take();

	path = getenv(UDT_SOCKET_ENV);
	if (path == NULL || *path == '\0')
		path = UDT_SOCKET_DEFAULT;
	if (strlen(path) < sizeof(udt_sun.sun_path)) {
		udt_sun.sun_family = AF_UNIX;
		memcpy(udt_sun.sun_path, path, strlen(path) + 1);
		udt_sun_ok = 1;
	}
	/*
	 * UDT_TRACEE_FMT spelled out: snprintf() faulted in printf's pages
	 * of libc at every start, and a fault is dear on some guests.
	 * dtd makes the same test (dt_ingest_listen()).
	 */
	n = udt_cat(udt_sunt.sun_path, 0, sizeof(udt_sunt.sun_path),
	    path);
	n = udt_cat(udt_sunt.sun_path, n, sizeof(udt_sunt.sun_path),
	    ".t");
	n = udt_catu(udt_sunt.sun_path, n, sizeof(udt_sunt.sun_path),
	    UDT_VERSION);
	n = udt_cat(udt_sunt.sun_path, n, sizeof(udt_sunt.sun_path),
	    ".");
	n = udt_catu(udt_sunt.sun_path, n, sizeof(udt_sunt.sun_path),
	    2 * SYSTAB_COUNT);
	if (udt_sun_ok && n != (size_t)-1) {
		udt_sunt.sun_family = AF_UNIX;
		udt_sunt_ok = 1;
	}
	udt_sun_fixed_init();
	said = getenv(UDT_UNTRACED_ENV);
	udt_dtd_slow = said != NULL && (strcmp(said, "stopped") == 0 ||
	    strcmp(said, "noanswer") == 0);
	/*
	 * The euid the exec gave, which the kernel's auxiliary vector says
	 * without a call: only a constructor before ours could have
	 * changed it since.  Later attaches (a fork child's, a new dtd's)
	 * ask the kernel.
	 */
	serr = errno;
	errno = 0;
	euid = getauxval(AT_EUID);
	udt_ctor_euid = errno == 0 ? (uid_t)euid : (uid_t)-1;
	/* A set-id or capability-gaining exec: the kernel's word now. */
	if (getauxval(AT_SECURE) != 0)
		udt_ctor_euid = (uid_t)-1;
	errno = serr;
	/*
	 * dtd makes our welcome while we do what needs no word of it
	 * (udt_hello_begin(): nothing executable mapped, no text written,
	 * no thread started until we take it); a traced start waited for
	 * it doing nothing, 0.4-0.5 ms a start on a 2-CPU guest.
	 */
	udt_hello_begin();
	udt_resolve_all();
	/*
	 * The unwinder loads nothing (udt_unw.h): it only finds the
	 * vDSO's tables, before any thread but this one exists.
	 */
	(void)udt_unw_load();
	if (dladdr((void *)udt_init, &dli) != 0) {
		dl_iterate_phdr(udt_find_text, dli.dli_fbase);
		/* The disassembler's module lies beside us. */
		udt_rw_cswhere(dli.dli_fname);
	}
	udt_unw_ours(udt_text_lo, udt_text_hi, udt_rw_site_of);
	udt_unw_self(udt_gettid);
	/* For comparisons: every event recorded, none folded here. */
	udt_sagg_off = udt_env_is(UDT_SAGG_ENV, "0");
	/*
	 * dtd's welcome says what /proc/self/status would, for the
	 * rewriter and dispatch (udt_proc_status_told()), and whether the
	 * constructor is alone to keep its descriptors to its end
	 * (udt_defer_on).  Hooks mode needs neither, and maps no image.
	 */
	udt_ctor_status = !udt_env_is(UDT_HOOKS_ENV, "1");
	udt_attaching = 1;
	/* Nothing old to unmap yet. */
	udt_attach_locked();
	udt_attaching = 0;
	udt_ctor_status = 0;
	udt_ctor_euid = (uid_t)-1;
	if ((udt_attached_pid = udt_proc_pid()) <= 0)
		udt_attached_pid = (pid_t)udt_sys0(SYS_getpid);
	udt_tell_untraced(said, udt_attached_pid);
	/* Hooks mode records what the program asks of libc, no more. */
	udt_loader_replay(!udt_env_is(UDT_HOOKS_ENV, "1"));
	/* dtd holds the other sources until now (rh_exec). */
	if (udt_ring != NULL)
		__atomic_store_n(&udt_ring->rh_ready, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&udt_replayed, 1, __ATOMIC_RELAXED);
	pthread_atfork(NULL, NULL, udt_fork_child);
	/*
	 * Rewrite the system call sites that can be (udt_rw.c), then let
	 * dispatch catch the rest (udt_sud.c).  USERDT_ALLCALLS=1 leaves
	 * every call to dispatch; USERDT_HOOKS=1 keeps to the libc
	 * wrappers' hooks alone, as userdt did before it could see every
	 * call.
	 */
	udt_rw_setup();
	if (!udt_env_is(UDT_HOOKS_ENV, "1")) {
		if (!udt_env_is(UDT_SUD_ENV, "1"))
			udt_rw_init();
		/*
		 * Nothing rewritten (the process already had threads, or
		 * USERDT_REWRITE=0): dispatch sees every call from the
		 * start.
		 */
		udt_sud_init(udt_env_is(UDT_SUD_ENV, "1") || !udt_rw_active);
	}
	/*
	 * The entry's plain add (udt_rw_mt) trusts that every clone that
	 * may start a thread is seen: glibc's clone() leaves
	 * __libc_single_threaded set, and udt_rw_mt_note() sees only the
	 * clones made at rewritten or trapped sites or caught by
	 * dispatch.  Unless every site is one of those, or dispatch
	 * catches this, the only, thread's calls from the start (its
	 * children's then go through it), a raw clone could pass unseen
	 * and two threads add plainly: the locked add from the start.
	 */
	if (!udt_rw_complete && !udt_thread.ut_armed)
		udt_rw_mt = 1;
	/* Before any thread, and the program, may see them. */
	udt_close_deferred();
	/*
	 * Last, the profile watcher of timer mode (a dtd without root, or
	 * where perf is refused): it is a thread, and the rewriter works
	 * only in a process that has one, so started earlier it left every
	 * such tracee to dispatch, a signal per call, where vfork from a
	 * shell lost its way back.  After udt_fork_child too: its atfork
	 * child handler runs later.
	 */
	udt_host_attached();
}
