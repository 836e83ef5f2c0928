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
 * A hostile traced process for aggregations in the tracee
 * (userdt/udt_sagg.h): it makes getppid() calls its hooks fold, then
 * writes what it likes into every slot of its accumulators, and exits
 * (a hook's next fold would write over a forged extreme).  dtd must take none of the forgery (counts of wild steps, a min
 * above the max, buckets nobody described), count it as forged, and
 * go on serving.
 * MODE keys: no forgery, N close() calls of N distinct descriptors
 * that are not open, N keys for @[arg0].  The k modes forge the keyed
 * entries (udt_sagg_kent): a tid of another process (init's), a CPU
 * past the machine's, a wild step; klist forges their list
 * (udt_sagg_klist): a count past the table, indexes past it, the first
 * entry listed again and again; kcomm adds an entry of its own thread
 * under a name that is not its own ("sshd"), then one more, and lives
 * until dtd took the second (its max, which dtd takes away), so that
 * dtd judged the first while the thread lived.  MODE serve: no
 * forgery either, a
 * long-lived process: for each line "BASE K" read, N rounds of close()
 * of BASE .. BASE + K - 1, then "done" on its output; until EOF.
 * usage: sagg_forge MODE N	(MODE: wild, minmax, buckets, noise, keys,
 *			 ktid, kcpu, kwild, klist, kcomm, serve)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <userdt/udt_sagg.h>

/* The ring's mapping (the memfd dtd sent): its header, then its end. */
static struct udt_ring_hdr *
sf_ring(void)
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
 * kcomm: two entries copied from the first the hooks made (its slot,
 * tag and thread), named "sshd" and this program, 3 calls each, listed
 * after the rest; the slots' counts moved so that dtd reads them.  Then
 * wait, 10 s at most, until dtd took the second's max: it judged the
 * first before, this thread alive.
 */
static int
sf_kcomm(struct udt_sagg_kent *ke, struct udt_sagg_klist *kl,
    struct udt_sagg_acc *acc)
{
	static const char *names[2] = { "sshd", "sagg_forge" };
	struct timespec ts = { 0, 1000000 };
	struct udt_sagg_kent *src = NULL, *f[2] = { NULL, NULL };
	unsigned int i, j, idx[2] = { 0, 0 }, n;
	int waited;

	for (i = 0; i < UDT_SAGG_NKENT && src == NULL; i++)
		if (ke[i].ke_state == 2)
			src = &ke[i];
	for (i = 0, j = 0; i < UDT_SAGG_NKENT && j < 2; i++)
		if (ke[i].ke_state == 0) {
			idx[j] = i;
			f[j++] = &ke[i];
		}
	if (src == NULL || j < 2)
		return 1;
	for (j = 0; j < 2; j++) {
		/* all but ke_state: the tag, the slot, the thread */
		memcpy((char *)f[j] + 4, (const char *)src + 4,
		    sizeof(*src) - 4);
		memset(f[j]->ke_comm, 0, sizeof(f[j]->ke_comm));
		strncpy(f[j]->ke_comm, names[j], sizeof(f[j]->ke_comm) - 1);
		f[j]->ke_count = 3;
		f[j]->ke_sum = 0;
		f[j]->ke_min = UDT_SAGG_MINV(0);
		f[j]->ke_max = UDT_SAGG_MAXV(0);
		__atomic_store_n(&f[j]->ke_state, 2, __ATOMIC_RELEASE);
		n = __atomic_load_n(&kl->kl_n, __ATOMIC_RELAXED);
		if (n >= UDT_SAGG_NKENT)
			return 1;
		kl->kl_idx[n] = (uint16_t)(idx[j] + 1);
		__atomic_store_n(&kl->kl_n, n + 1, __ATOMIC_RELEASE);
	}
	for (i = 0; i < UDT_SAGG_NSPEC; i++)
		__atomic_add_fetch(&acc[i].sa_count, 1, __ATOMIC_RELEASE);
	for (waited = 0; waited < 10000 &&
	    __atomic_load_n(&f[1]->ke_max, __ATOMIC_ACQUIRE) != 0; waited++)
		nanosleep(&ts, NULL);
	return 0;
}

int
main(int argc, char *argv[])
{
	struct udt_sagg_acc *acc;
	struct udt_ring_hdr *rh;
	unsigned int s, i;
	long n, k;

	struct udt_sagg_kent *ke;
	struct udt_sagg_klist *kl;
	uint16_t first;

	if (argc != 3 || (n = strtol(argv[2], NULL, 10)) <= 0)
		return 2;
	if (strcmp(argv[1], "keys") == 0) {
		for (k = 0; k < n; k++)
			(void)close((int)(200000 + k));
		return 0;
	}
	if (strcmp(argv[1], "serve") == 0) {
		long base, nk, r;
		char line[64];

		while (fgets(line, sizeof(line), stdin) != NULL) {
			if (sscanf(line, "%ld %ld", &base, &nk) != 2)
				return 2;
			for (r = 0; r < n; r++)
				for (k = 0; k < nk; k++)
					(void)close((int)(base + k));
			printf("done\n");
			fflush(stdout);
		}
		return 0;
	}
	for (k = 0; k < n; k++)
		(void)getppid();
	if ((rh = sf_ring()) == NULL) {
		fprintf(stderr, "sagg_forge: no ring mapped\n");
		return 1;
	}
	acc = (struct udt_sagg_acc *)(void *)((char *)rh +
	    UDT_SAGG_ACC_OFF(rh->rh_nslots));
	ke = (struct udt_sagg_kent *)(void *)((char *)rh +
	    UDT_SAGG_KENT_OFF(rh->rh_nslots));
	kl = (struct udt_sagg_klist *)(void *)((char *)rh +
	    UDT_SAGG_KLIST_OFF(rh->rh_nslots));
	if (strcmp(argv[1], "klist") == 0) {
		first = kl->kl_idx[0];
		kl->kl_n = UINT32_MAX;
		for (i = 0; i < UDT_SAGG_NKENT; i++)
			kl->kl_idx[i] = i % 2 ? (uint16_t)(UINT16_MAX - i) :
			    first;
	}
	if (strcmp(argv[1], "kcomm") == 0 && sf_kcomm(ke, kl, acc) != 0)
		return 1;
	for (i = 0; i < UDT_SAGG_NKENT; i++) {
		if (ke[i].ke_state != 2)
			continue;
		if (strcmp(argv[1], "ktid") == 0) {
			ke[i].ke_tid = 1;
			ke[i].ke_count += 3;
		} else if (strcmp(argv[1], "kcpu") == 0) {
			ke[i].ke_cpu = 1u << 30;
			ke[i].ke_count += 3;
		} else if (strcmp(argv[1], "kwild") == 0)
			ke[i].ke_count += 1ULL << 40;
	}
	for (s = 0; s < UDT_SAGG_NSPEC; s++) {
		if (argv[1][0] == 'k') {
			/* the slot's count: dtd reads its entries */
			acc[s].sa_count += 1;
			continue;
		}
		if (strcmp(argv[1], "wild") == 0) {
			acc[s].sa_count += 1ULL << 40;
			acc[s].sa_sum += 1ULL << 50;
		} else if (strcmp(argv[1], "minmax") == 0) {
			/* a min far above the max, counted plausibly */
			acc[s].sa_count += 5;
			acc[s].sa_min = UDT_SAGG_MINV(INT64_MAX - 1);
			acc[s].sa_max = UDT_SAGG_MAXV(INT64_MIN + 1);
		} else if (strcmp(argv[1], "buckets") == 0) {
			acc[s].sa_count += 1;
			for (i = 0; i < UDT_SAGG_NBUCKETS; i++)
				acc[s].sa_bucket[i] += 1ULL << 40;
		} else if (strcmp(argv[1], "noise") == 0)
			memset(&acc[s], 0xa5, sizeof(acc[s]));
		else
			return 2;
	}
	/* nothing after: the next look finds the forgery as written */
	printf("forged %s\n", argv[1]);
	return 0;
}
