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
 * udt_launch: what dtrun and btrace -c share to start a program under the
 * syscall provider.  They find the preload library the same way and put
 * it, with dtd's ingest socket, into the environment the program (and its
 * children) inherit.
 */
#ifndef UDT_LAUNCH_H
#define UDT_LAUNCH_H

#include <stddef.h>

/* Names the library to use, overriding the search. */
#define UDT_LAUNCH_ENV	"USERDT_PRELOAD"
/* "0": the launchers leave the loader's calls alone (dtrun -L). */
#define UDT_LAUNCH_LOADER_ENV	"USERDT_LOADER"

/*
 * What the preload library cannot enter of the file execvp(3) would run
 * for file (a name looked up along $PATH, or a path):
 * UDT_LAUNCH_STATIC, a statically linked ELF file (no loader to
 * preload it); UDT_LAUNCH_SETID, a set-id file or one with file
 * capabilities (its loader ignores LD_PRELOAD; set-id comes first); 0
 * otherwise, or when there is no such file or it cannot be read.  Any
 * caller.
 */
#define UDT_LAUNCH_STATIC	1
#define UDT_LAUNCH_SETID	2
int	udt_launch_image(const char *file);

/*
 * Whether the launcher's helper lets a set-id exec happen under its
 * ptrace and holds it at its stop for dtd (in a hooked tree, after
 * udt_launch_ktree(UDT_LAUNCH_KTREE_EXEC)): we are root, whose tracee
 * gets its new credentials, and no LSM restricts a traced domain
 * change (SELinux enforcing, an AppArmor profile on this process),
 * which could fail an exec that succeeds untraced.  Otherwise the
 * helper lets go before the exec, and the program runs untraced with
 * its credentials.  The launcher's main thread, or the helper's.
 */
int	udt_launch_setid_held(void);

/*
 * The preload library's path into buf: $USERDT_PRELOAD when set and not
 * empty; else, when the running executable lies in the build tree this
 * was built in, the library built there; else, when it runs from an
 * installed tree's bindir (wherever that tree now lies), that tree's
 * library if it is readable; else the configured installed path.  0 when
 * that file is readable; -1 with errno otherwise, buf still naming it so
 * the caller can say which.  Any caller.
 */
int	udt_launch_lib(char *buf, size_t len);

/*
 * Prepend lib to LD_PRELOAD, keeping what it held, and set USERDT_SOCKET
 * to sock unless sock is NULL; then the launcher's words for the tree,
 * each set or unset: on the socket's directory (UDT_SOCKDIR_ENV,
 * udt_userdir.h) and the cache's mount (udt_launch_cachefs()).  0 or -1
 * (errno).  It changes this process's environment: call it in the
 * process about to exec the program, after fork(2) if there is one.
 */
int	udt_launch_env(const char *lib, const char *sock);

/*
 * UDT_CACHEFS_ENV (udt_cachefs.h) for the tree: the unique id of the
 * mount the user's cache lies on, when it is neither a network nor a
 * FUSE file system and exists; else unset, so that a word inherited for
 * another cache is not passed on.  0 or -1 (errno).  Called by
 * udt_launch_env(); the process about to exec the program.
 */
int	udt_launch_cachefs(void);

/*
 * The ingest socket to hand a program when nothing names one, for a dtd
 * that runs without root (dtd(8)): NULL when $USERDT_SOCKET is set or
 * root's default (UDT_SOCKET_DEFAULT) applies; else, in buf, our own
 * user's default (udt_userdir.h).  dev is the device the caller traces
 * through: one of our user's (not root's) is served by our user's dtd.
 * Without a device (dtrun), our user's default when we are not root and
 * a socket is there.  When that socket or its directory is not ours
 * (udt_user_distrust(): someone else made the name in /tmp first), says
 * why on stderr, once for the process tree (UDT_UNTRACED_ENV, which it
 * sets), and still returns it: the preload library refuses it as well,
 * so the program runs untraced rather than under another user's dtd.
 * Main thread of a launcher, before it starts the program.
 */
const char *udt_launch_sock(const char *dev, char *buf, size_t len);

/*
 * Have the loader's calls of the image this process is about to exec
 * (file, as execvp(3) takes it) recorded (udt_lhelp.c, udt_ltrace.c,
 * udt_lrec.h): a helper process follows it with ptrace from the execve
 * to the preload library's start and hands them to the library, when
 * dtd has a syscall probe on; it then stays, as long as this process
 * lives, to do the same for every image a process of its tree execs.
 * Call it last before execve(2), after udt_launch_env() and with the
 * signal dispositions and mask the program gets.  0 when the helper is
 * in place; -1 when ptrace is refused as it follows, said once on
 * stderr with prog's name: the program then runs as it would without;
 * -1 too, silently, when UDT_LAUNCH_LOADER_ENV is "0" or when there is
 * nothing to follow and no socket to ask on later.  With nothing to
 * follow, a static or set-id file is said on stderr
 * (udt_lt_precheck()).  Sets or clears UDT_LREC_ENV and UDT_LFOLLOW_ENV
 * in this process's environment.
 */
int	udt_launch_trace(const char *prog, const char *file);

/*
 * on: dtd reads the system calls of this process tree that no hook
 * records from the kernel (DTEVT_TREE in dtvar.h), so udt_launch_trace()
 * and its helper say a statically linked image is seen that way, not
 * untraced.  UDT_LAUNCH_KTREE_ROOT: from the root's exec on (btrace -c
 * of a static command, with a dtd that has no UDT_HELLO_KARM);
 * UDT_LAUNCH_KTREE_EXEC: from each static image's exec, which the helper
 * holds until dtd has opened its feed (udt_karmq()), wherever in the
 * tree it comes (DTTR_F_HOOKED), and, when udt_launch_setid_held()
 * says so, from each secure (set-id) image's, which it then lets exec
 * under ptrace: root's tracee gets its new credentials where no LSM
 * restricts a traced domain change (SELinux enforcing, an AppArmor
 * profile refuse or change what such an exec gets; there the helper
 * lets go before it, and the program runs untraced with its
 * credentials).  A flag of this process, not of its environment: the
 * helper is forked and never execs, so it has it, and
 * nothing a launcher inherits can claim a feed no one asked for.  Off
 * (0) until set.  Before udt_launch_trace().
 */
#define UDT_LAUNCH_KTREE_ROOT	1
#define UDT_LAUNCH_KTREE_EXEC	2
void	udt_launch_ktree(int on);

/*
 * Ask the dtd at $USERDT_SOCKET (else UDT_SOCKET_DEFAULT) for the
 * kernel's copy of the calls of pid, which this process holds at the
 * exec of a statically linked image, or of a secure one when this
 * process is root's (UDT_HELLO_KARM, udt_wire.h), and
 * wait for its answer: 0 once dtd has it (or wants none), -1 with errno
 * (EPROTO: a dtd without it; what the socket said).  About two seconds
 * at most.  The helper's thread.
 */
int	udt_karmq(pid_t pid);

/*
 * Whether pid, held at its exec stop, runs an image exec'd in secure
 * mode (AT_SECURE in /proc/PID/auxv: set-id, file capabilities), whose
 * loader ignores LD_PRELOAD: 1, 0, or -1 when it cannot be read or told
 * (not a 64-bit process's: udt_auxv_secure()).  The helper's thread.
 */
int	udt_karmq_secure(pid_t pid);

/*
 * Keep the preload library's cache of plans and images (dtrun(1), FILES)
 * bounded: at most once a day (USERDT_CACHE_PRUNE=now: this time), the
 * user's entries unused for USERDT_CACHE_DAYS days (30) are removed, then
 * the least recently used until the cache holds USERDT_CACHE_MAX
 * megabytes (256) at most.  Nothing when USERDT_PLAN_CACHE is 0 or the
 * process is set-id.  Returns how many files and directories it removed.
 * Any single thread of a launcher, before it starts the program: what it
 * removes, a program starting meanwhile decodes again.
 */
int	udt_launch_prune(void);

#endif /* UDT_LAUNCH_H */
