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
 * A traced program for aggregations keyed by user stacks at the source
 * (userdt/udt_sagg.h's UDT_SK_USTACK), whose stacks and counts are known:
 *
 *   sites N	N getppid() from site_a(), 2N from site_b(), then N close()
 *		of descriptors 100000 + i % 37 (not open: EBADF) from
 *		site_c(): two stacks of getppid, counts N and 2N.
 *   threads N	three more threads and the main one, N getppid() each from
 *		site_a() at the same time: one stack, 4N calls, N a thread.
 *   many N	N getppid(), call i through a path of three levels of eight
 *		functions chosen by i % 512: 512 distinct stacks, more
 *		than the tracee's stack table holds.
 *   serve N	a long-lived process: for each line "BASE K" read, N
 *		getppid() through each of the paths BASE .. BASE + K - 1
 *		(as many's, BASE + K at most 512), then "done" on its
 *		output; until EOF.
 *   forge-M N	N getppid() from site_a() (folded), then the tracee
 *		rewrites its own table of stacks as mode M says (once dtd
 *		took the extremes: a rule's max(retval) keyed by ustack)
 *		and moves the counts so that dtd reads it again; it
 *		prints "forged M E P": E entries forged, P its parent.
 *		M: depth (a frame count past any record's), index (entries
 *		naming a stack past the table), busy (every stack being
 *		written, and left so), owner (stacks tagged for another
 *		user).  dtd must fold none of what was added.
 *   hold N	a long-lived process: at a line read, rounds of N
 *		getppid() from site_a(), then every stack in use held as
 *		a hook claiming it over holds it (us_state 1), one
 *		getppid() from site_b() (a stack of its own), and a wait
 *		for dtd to take site_b's extremes: a look that found
 *		site_a's entries moved and their stacks not ready, which
 *		their extremes still there show (else another round).
 *		Then the stacks ready again, "held A B" (the calls from
 *		each site) on its output, and no call more until EOF:
 *		dtd must fold site_a's last steps all the same (a rule
 *		keyed by ustack that takes sum(retval) or max(retval)).
 *
 * Never sanitized, frame pointers kept, no inlining: the stacks are the
 * program's own.
 *
 * usage: ustk_calls MODE N
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_sagg.h>

#define UC_NOINLINE	__attribute__((noinline))

static long	uc_n;

/* A barrier against a tail call: each frame stays on the stack. */
#define UC_KEEP()	__asm__ volatile("" ::: "memory")

static void UC_NOINLINE
site_a(void)
{
	(void)getppid();
	UC_KEEP();
}

static void UC_NOINLINE
site_b(void)
{
	(void)getppid();
	UC_KEEP();
}

static void UC_NOINLINE
site_c(long i)
{
	(void)close((int)(100000 + i % 37));
	UC_KEEP();
}

static void	uc_walk(unsigned int, int);

/* Eight functions a level: which one is three bits of the path. */
#define UC_STEP(k)							\
static void UC_NOINLINE							\
uc_step##k(unsigned int path, int depth)				\
{									\
	uc_walk(path, depth);						\
	UC_KEEP();							\
}
UC_STEP(0) UC_STEP(1) UC_STEP(2) UC_STEP(3)
UC_STEP(4) UC_STEP(5) UC_STEP(6) UC_STEP(7)

static void (*const uc_steps[8])(unsigned int, int) = {
	uc_step0, uc_step1, uc_step2, uc_step3,
	uc_step4, uc_step5, uc_step6, uc_step7,
};

static void UC_NOINLINE
uc_walk(unsigned int path, int depth)
{
	if (depth == 0)
		site_a();
	else
		uc_steps[path & 7](path >> 3, depth - 1);
	UC_KEEP();
}

static void *
uc_thread(void *arg)
{
	long i;

	for (i = 0; i < uc_n; i++)
		site_a();
	return arg;
}

/* The ring's mapping (the memfd dtd sent), as sagg_forge finds it. */
static struct udt_ring_hdr *
uc_ring(void)
{
	char line[512];
	unsigned long lo, hi;
	FILE *f;
	struct udt_ring_hdr *rh = NULL;

	if ((f = fopen("/proc/self/maps", "r")) == NULL)
		return NULL;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, UDT_RING_MEMFD) == NULL ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		rh = (struct udt_ring_hdr *)lo;
		if (rh->rh_magic == UDT_MAGIC &&
		    UDT_RING_SIZE(rh->rh_nslots) == hi - lo)
			break;
		rh = NULL;
	}
	fclose(f);
	return rh;
}

/*
 * The forgery, once dtd took every extreme the hooks folded (it reads
 * the entries, their stacks with them, 10 s at most): every stack in
 * use rewritten as mode says, 3 more events on every entry that names
 * one, and every slot's count moved, so that dtd reads the entries
 * again.  0, with the entries forged in *nentp, or 1 when nothing was
 * there to forge.
 */
static int
uc_forge(const char *mode, unsigned int *nentp)
{
	struct udt_ring_hdr *rh;
	struct udt_sagg_acc *acc;
	struct udt_sagg_kent *ke;
	struct udt_sagg_stk *st;
	unsigned int i, nstk = 0, nent = 0;
	struct timespec ts = { 0, 1000000 };
	int waited;

	if ((rh = uc_ring()) == NULL)
		return 1;
	acc = (struct udt_sagg_acc *)(void *)((char *)rh +
	    UDT_SAGG_ACC_OFF(rh->rh_nslots));
	ke = (struct udt_sagg_kent *)(void *)((char *)rh +
	    UDT_SAGG_KENT_OFF(rh->rh_nslots));
	st = (struct udt_sagg_stk *)(void *)((char *)rh +
	    UDT_SAGG_STK_OFF(rh->rh_nslots));
	/* dtd's pace, in memory it shares: nothing to block on */
	for (waited = 0, i = 0; i < UDT_SAGG_NKENT && waited < 10000; i++)
		while (__atomic_load_n(&ke[i].ke_max, __ATOMIC_ACQUIRE) != 0 &&
		    waited++ < 10000)
			nanosleep(&ts, NULL);
	for (i = 0; i < UDT_SAGG_NSTK; i++) {
		if (st[i].us_state != 2)
			continue;
		nstk++;
		if (strcmp(mode, "depth") == 0)
			st[i].us_nframes = 1000;
		else if (strcmp(mode, "busy") == 0)
			__atomic_store_n(&st[i].us_state, 1, __ATOMIC_RELEASE);
		else if (strcmp(mode, "owner") == 0)
			st[i].us_seq += 2;
	}
	for (i = 0; i < UDT_SAGG_NKENT; i++) {
		if (ke[i].ke_state != 2 || ke[i].ke_stk == 0)
			continue;
		nent++;
		if (strcmp(mode, "index") == 0)
			ke[i].ke_stk = 60000;
		__atomic_add_fetch(&ke[i].ke_count, 3, __ATOMIC_RELEASE);
	}
	for (i = 0; i < UDT_SAGG_NSPEC; i++)
		__atomic_add_fetch(&acc[i].sa_count, 1, __ATOMIC_RELEASE);
	*nentp = nent;
	return nstk == 0 || nent == 0;
}

/* The parent's pid from /proc: not a getppid() the rules would count. */
static long
uc_ppid(void)
{
	long ppid = -1;
	FILE *f;

	if ((f = fopen("/proc/self/stat", "r")) == NULL)
		return -1;
	/* "pid (comm) state ppid": our comm has no ')' */
	if (fscanf(f, "%*d (%*[^)]) %*c %ld", &ppid) != 1)
		ppid = -1;
	fclose(f);
	return ppid;
}

/*
 * Wait (10 s at most, at dtd's pace, in memory it shares: nothing to
 * block on) until dtd took the extremes of every entry naming a stack
 * that held[] does not mark.  0, or -1 on the bound.
 */
static int
uc_took_others(const struct udt_sagg_kent *ke, const char *held)
{
	struct timespec ts = { 0, 1000000 };
	unsigned int i, x;
	int waited = 0;

	for (i = 0; i < UDT_SAGG_NKENT; i++) {
		x = ke[i].ke_stk;
		if (__atomic_load_n(&ke[i].ke_state, __ATOMIC_ACQUIRE) != 2 ||
		    x == 0 || x > UDT_SAGG_NSTK || held[x - 1])
			continue;
		while (__atomic_load_n(&ke[i].ke_max, __ATOMIC_ACQUIRE) != 0)
			if (waited++ == 10000)
				return -1;
			else
				nanosleep(&ts, NULL);
	}
	return 0;
}

/*
 * One round of hold's: site_a's calls, its stacks held across a look of
 * dtd's, site_b's call.  1 when that look left an entry of a held stack
 * (its extremes untaken), 0 when dtd took them all before the hold, -1
 * on error.  The stacks are ready again on return.
 */
static int
uc_hold_round(struct udt_ring_hdr *rh, char *held)
{
	struct udt_sagg_kent *ke;
	struct udt_sagg_stk *st;
	unsigned int i, x;
	uint32_t two;
	long k;
	int left = 0, rc;

	ke = (struct udt_sagg_kent *)(void *)((char *)rh +
	    UDT_SAGG_KENT_OFF(rh->rh_nslots));
	st = (struct udt_sagg_stk *)(void *)((char *)rh +
	    UDT_SAGG_STK_OFF(rh->rh_nslots));
	for (k = 0; k < uc_n; k++)
		site_a();
	memset(held, 0, UDT_SAGG_NSTK);
	for (i = 0; i < UDT_SAGG_NSTK; i++) {
		two = 2;
		held[i] = __atomic_compare_exchange_n(&st[i].us_state, &two,
		    1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
	site_b();
	rc = uc_took_others(ke, held);
	for (i = 0; rc == 0 && i < UDT_SAGG_NKENT; i++) {
		x = ke[i].ke_stk;
		if (ke[i].ke_state == 2 && x != 0 && x <= UDT_SAGG_NSTK &&
		    held[x - 1] &&
		    __atomic_load_n(&ke[i].ke_max, __ATOMIC_ACQUIRE) != 0)
			left = 1;
	}
	for (i = 0; i < UDT_SAGG_NSTK; i++)
		if (held[i])
			__atomic_store_n(&st[i].us_state, 2, __ATOMIC_RELEASE);
	return rc < 0 ? -1 : left;
}

static int
uc_hold(void)
{
	char line[64], held[UDT_SAGG_NSTK];
	struct udt_ring_hdr *rh;
	int round, rc = 0;

	if (fgets(line, sizeof(line), stdin) == NULL ||
	    (rh = uc_ring()) == NULL)
		return 1;
	for (round = 1; round <= 100; round++)
		if ((rc = uc_hold_round(rh, held)) != 0)
			break;
	if (rc != 1) {
		fprintf(stderr, "ustk_calls: no look of dtd's held\n");
		return 1;
	}
	printf("held %ld %d\n", round * uc_n, round);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL)
		continue;
	return 0;
}

int
main(int argc, char *argv[])
{
	pthread_t t[3];
	unsigned int nent;
	long i;
	int k;

	if (argc != 3 || (uc_n = strtol(argv[2], NULL, 10)) <= 0)
		return 2;
	if (strcmp(argv[1], "sites") == 0) {
		for (i = 0; i < uc_n; i++)
			site_a();
		for (i = 0; i < 2 * uc_n; i++)
			site_b();
		for (i = 0; i < uc_n; i++)
			site_c(i);
	} else if (strcmp(argv[1], "threads") == 0) {
		for (k = 0; k < 3; k++)
			if (pthread_create(&t[k], NULL, uc_thread, NULL) != 0)
				return 1;
		(void)uc_thread(NULL);
		for (k = 0; k < 3; k++)
			(void)pthread_join(t[k], NULL);
	} else if (strcmp(argv[1], "many") == 0) {
		for (i = 0; i < uc_n; i++)
			uc_walk((unsigned int)(i % 512), 3);
	} else if (strcmp(argv[1], "serve") == 0) {
		char line[64];
		long base, nk, j;

		while (fgets(line, sizeof(line), stdin) != NULL) {
			if (sscanf(line, "%ld %ld", &base, &nk) != 2 ||
			    base < 0 || nk < 0 || base + nk > 512)
				return 2;
			for (j = 0; j < nk; j++)
				for (i = 0; i < uc_n; i++)
					uc_walk((unsigned int)(base + j), 3);
			printf("done\n");
			fflush(stdout);
		}
	} else if (strcmp(argv[1], "hold") == 0) {
		return uc_hold();
	} else if (strncmp(argv[1], "forge-", 6) == 0) {
		for (i = 0; i < uc_n; i++)
			site_a();
		if (uc_forge(argv[1] + 6, &nent) != 0) {
			fprintf(stderr, "ustk_calls: nothing to forge\n");
			return 1;
		}
		printf("forged %s %u %ld\n", argv[1] + 6, nent, uc_ppid());
	} else
		return 2;
	return 0;
}
