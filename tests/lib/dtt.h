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
 * dtt: what the integration tests share.  Counted checks, a private dtd
 * on a temporary directory (FUSE-file front end, own device, ingest
 * socket and ksyms paths, started and stopped by pid), children with
 * chosen descriptors, bounded waits, and the device's ioctls and read(2)
 * under a watchdog.
 *
 * Conventions: helpers print nothing except dtt_check(), dtt_done() and
 * the one line dtt_dtd_start() writes to stderr when dtd does not come
 * up, so the caller's check line says what was expected.  Process
 * helpers return -1 with errno set; device helpers return 0 or an errno
 * value, so a test can check for a particular error.  Every wait is
 * bounded.  The check counters and dtt_tag() are for one thread; the
 * other helpers may be called from any thread unless said otherwise.
 */
#ifndef DTT_H
#define DTT_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <dev/dt/dtvar.h>

#define DTT_READY_MS	20000	/* dtd start-up: it writes a 6 MB ksyms */
#define DTT_EXIT_MS	20000	/* a child's exit after a signal */

/* Checks passed and failed so far. */
extern unsigned int	dtt_npass, dtt_nfail;

/*
 * Lines read "ok - TAG: text" or "FAIL - TAG: text"; NULL (the default)
 * leaves out "TAG: ".  Any caller, before or between checks.
 */
void	dtt_tag(const char *);
/* Print and count one check; returns ok so a caller can branch on it. */
bool	dtt_check(bool ok, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/*
 * Print "N passed, N failed"; the exit status for main(): 0 only when
 * something passed and nothing failed.  main(), once, at the end.
 */
int	dtt_done(void);

/*
 * A private dtd.  dtt_dtd_init() makes the directory and names the
 * paths in it; a caller may change them (say, a second device file)
 * before dtt_dtd_start().  dd_pid is 0 while no dtd runs.
 */
struct dtt_dtd {
	char	 dd_dir[64];		/* /tmp/NAME.XXXXXX, mode 0755 */
	char	 dd_dev[128];		/* --device: DIR/dt */
	char	 dd_sock[128];		/* --ingest: DIR/ingest.sock */
	char	 dd_ksyms[128];		/* --ksyms: DIR/ksyms */
	char	 dd_err[128];		/* dtd's stderr when captured */
	pid_t	 dd_pid;		/* running dtd, or 0 */
};

/* Make a fresh directory /tmp/NAME.XXXXXX; 0 or -1 (errno). */
int	dtt_dtd_init(struct dtt_dtd *, const char *name);
/*
 * Start dtd --foreground --frontend fuse with dd's paths, then extra
 * (NULL-terminated, may be NULL; later options override earlier ones, so
 * "--no-ksyms" works), and wait up to DTT_READY_MS for "ready\n" on its
 * --ready-fd pipe.  With errbuf, dtd's stderr goes to dd_err (appended)
 * and, when dtd fails, errbuf gets what it wrote; without, dtd shares our
 * stderr.  Returns dtd's pid (also in dd_pid) or -1: dtd was killed and
 * reaped, and one line on stderr says why.
 */
pid_t	dtt_dtd_start(struct dtt_dtd *, const char *dtd, char *const extra[],
	    char *errbuf, size_t errlen);
/* dtt_stop() on dd_pid, then dd_pid = 0; -1 if none ran. */
int	dtt_dtd_stop(struct dtt_dtd *, int sig);
/*
 * Remove the directory.  Stops a dtd still running; removes dd_err.
 * With all, first detaches a mount a killed dtd left on dd_dev and
 * removes every file in the directory; without, anything dtd left
 * behind makes it fail with ENOTEMPTY, which a test can check.
 * 0 or -1 (errno).
 */
int	dtt_dtd_fini(struct dtt_dtd *, bool all);
/*
 * Whether a line dtd wrote to dd_err (dtt_dtd_start() with errbuf)
 * holds what; false when there is no such file.  Lines are read 511
 * bytes at a time: what should be short.
 */
bool	dtt_dtd_logsays(const struct dtt_dtd *, const char *what);

/*
 * fork and exec argv[0] with environment env (NULL: ours), and in, out,
 * err on descriptors 0, 1, 2 (-1: inherit).  keep (-1: none) is left
 * open across exec, at the same number; every other descriptor of ours
 * should be close-on-exec.  The child's pid, or -1.  An exec failure
 * exits the child 127.
 */
pid_t	dtt_spawn(char *const argv[], char *const env[], int in, int out,
	    int err, int keep);
/*
 * An environment for dtt_spawn(): ours with LD_PRELOAD replaced by
 * preload (NULL: none), behind the sanitizer's runtime when we run under
 * AddressSanitizer (it must come first).  The array to free, and in *pre
 * the one string made for it, to free too; NULL on ENOMEM.
 */
char	**dtt_preload_env(const char *preload, char **pre);
/*
 * Wait up to ms for our child pid to exit and reap it: its wait status,
 * or -1 (ETIMEDOUT: still running, not reaped).
 */
int	dtt_wait(pid_t, int ms);
/*
 * Send sig, wait up to ms; if pid outlives that, SIGKILL, reap, and -1
 * (ETIMEDOUT).  Otherwise its wait status.
 */
int	dtt_stop(pid_t, int sig, int ms);
/* exited with status 0 */
bool	dtt_exited0(int status);
/*
 * Run argv to its end, at most ms (then SIGTERM), its standard output,
 * and its error too with errs, into file, which is then read into out
 * (len bytes, NUL-terminated) and removed.  Its wait status, or -1 (not
 * started, or stopped at ms).
 */
int	dtt_run_capture(char *const argv[], int ms, const char *file,
	    bool errs, char *out, size_t len);

/* open(2) the device read-only and close-on-exec: fd or -1 (errno). */
int	dtt_open(const char *dev);
/*
 * DTIOCGPLIST in its two steps (size, then copy; again if probes came
 * meanwhile).  A malloc'ed array the caller frees, *n entries; NULL with
 * errno on failure.
 */
struct dtioc_probe_info *dtt_plist(int fd, size_t *n);
/* pbn of prov:func:name in the list, or 0. */
uint32_t	dtt_pbn(const struct dtioc_probe_info *, size_t n,
		    const char *prov, const char *func, const char *name);
/*
 * How many probes of the syscall provider the list has (what a tracee
 * says in its hello); with first, the pbn of the first of them (0 if
 * none): a provider-local probe index, as in a ring's record, is a pbn
 * less that.
 */
uint32_t	dtt_nsys(const struct dtioc_probe_info *, size_t n,
		    uint32_t *first);
/* dtt_plist() then dtt_pbn(): the pbn, or 0 (absent or error). */
uint32_t	dtt_probe(int fd, const char *prov, const char *func,
		    const char *name);
/* A comparison term of a pushed filter (DTIOCPRBFILTER); str may be NULL. */
struct dtioc_filter_term dtt_term(uint8_t op, uint8_t field, int64_t val,
	    const char *str);

/* The ioctls; 0 or an errno value. */
int	dtt_enable(int fd, uint32_t pbn, uint64_t evtflags, uint64_t nsecs);
int	dtt_disable(int fd, uint32_t pbn);
int	dtt_record(int fd, int on);
int	dtt_stats(int fd, struct dtioc_stat *);

/*
 * One read(2) of up to max records, ended after ms by a signal to the
 * calling thread (read(2) on dt blocks whatever O_NONBLOCK says).  Records read (>= 0), or -1 with errno:
 * ETIMEDOUT, EPROTO (not whole records) or read's own.  Installs a
 * handler for SIGALRM without SA_RESTART; callers must not use SIGALRM
 * themselves.
 */
long	dtt_read(int fd, struct dt_evt *, size_t max, unsigned int ms);

/* clk as one count of nanoseconds.  Any thread. */
uint64_t	dtt_clock_ns(clockid_t clk);

struct udt_welcome;
struct udt_ring_hdr;

/*
 * A stream connection to the unix socket at path (dtd's ingest socket),
 * close-on-exec: the descriptor, or -1 with errno.  Any thread.
 */
int	dtt_connect(const char *path);
/*
 * The number after key at the start of a line of out (a btrace's output,
 * a dtd's log), or -1 when no line starts so.
 */
long	dtt_line_value(const char *out, const char *key);

/*
 * A traced process's handshake done by hand, for tests that play a
 * tracee, hostile or not: connect to dtd's ingest socket, say hello for
 * nprobes probes, take the welcome and its two descriptors (fds[0] the
 * ring, fds[1] the read-only table, -1 where none came; close-on-exec).
 * Returns the connected socket, or -1 (a refusal in w->uw_error counts
 * as a failure; no descriptor is left open then).
 */
int	dtt_tracee_hello(const char *sock, uint32_t nprobes,
	    struct udt_welcome *w, int fds[2]);
/*
 * The same on fd, a connection made already (perhaps by another process
 * that shares it): fd is closed on failure.
 */
int	dtt_tracee_greet(int fd, uint32_t nprobes, struct udt_welcome *w,
	    int fds[2]);
/*
 * The ring of a welcome, mapped read-write as the library maps it and
 * with its address published (rh_self) as the library does, so that dtd
 * takes the caller's records as its own: NULL with errno if mmap fails.
 */
struct udt_ring_hdr *dtt_ring_map(int ringfd, const struct udt_welcome *w);

/*
 * CPU time of every thread of pid so far, in ns, from schedstat (no tick
 * rounding); 0 once pid is gone.
 */
uint64_t	dtt_cpu_ns(pid_t);

/*
 * A known load: one child per CPU 0..ncpu-1, pinned there, spinning, its
 * comm set to name.  Returns once every child runs: 0, or -1 (children
 * already started are left in pids for dtt_busy_stop()).  Main thread.
 */
int	dtt_busy_start(pid_t *pids, int ncpu, const char *name);
/*
 * dtt_busy_start() at SCHED_IDLE: the CPUs never idle, yet anything else
 * that wants one (dtd's readers) runs at once, as on a quiet machine.
 */
int	dtt_busy_start_idle(pid_t *pids, int ncpu, const char *name);
void	dtt_busy_stop(pid_t *pids, int ncpu);
/*
 * A child making getppid() flat out, its count in *calls (shared memory
 * the caller mapped; zeroed first), returned once it made min of them:
 * the machine's other calls.  Its pid (stop it with dtt_stop()), or -1.
 */
pid_t	dtt_noise(volatile uint64_t *calls, uint64_t min);

/*
 * A throwaway ordinary user (dtt_user.c), for attacks that must not run
 * as root: dtt_user_add() makes one with a random name and its own
 * group, dtt_user_del() removes both (a no-op when none was made).
 * dtt_user_become() drops the calling process to it for good (in a
 * child); 0 or -1 (errno).  dtt_user_run() runs fn(arg) in a child that
 * became the user: what fn returns (an errno value, 0 for success; 0 to
 * 254) comes back as the exit status; -1 if the child could not drop
 * root or died.
 */
struct dtt_user {
	char	du_name[16];
	uid_t	du_uid;
	gid_t	du_gid;
};

int	dtt_user_add(struct dtt_user *);
void	dtt_user_del(struct dtt_user *);
int	dtt_user_become(const struct dtt_user *);
int	dtt_user_run(const struct dtt_user *, int (*fn)(void *), void *arg);

#endif /* DTT_H */
