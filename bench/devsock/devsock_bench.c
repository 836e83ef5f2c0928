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
 * usage: devsock_bench DTD LIBDEV [reps [calls]]
 *
 * One dtd serves its FUSE-file device and its device socket.  Each rep
 * runs this program twice as the client, once on the FUSE device and
 * once on the socket through libuserdt-dev.so (the order alternating),
 * timing an ioctl's round trip (DTIOCGSTATS) and the whole probe list
 * (DTIOCGPLIST's two steps, the array coming back through the socket).
 * Prints the medians and their ratio socket / FUSE, measured in this run;
 * no absolute number is a goal.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtt.h"

#define REPS_MAX	64

static int
child(const char *dev, long calls)
{
	struct dtioc_probe_info *pi;
	struct dtioc_stat st;
	uint64_t t0, t1, t2;
	size_t n;
	long i, lists = calls / 20 > 0 ? calls / 20 : 1;
	int fd;

	if ((fd = dtt_open(dev)) == -1) {
		perror(dev);
		return 1;
	}
	for (i = 0; i < 100; i++)	/* warm: workers, caches */
		(void)dtt_stats(fd, &st);
	t0 = dtt_clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < calls; i++)
		if (dtt_stats(fd, &st) != 0)
			return 1;
	t1 = dtt_clock_ns(CLOCK_MONOTONIC);
	for (i = 0; i < lists; i++) {
		if ((pi = dtt_plist(fd, &n)) == NULL)
			return 1;
		free(pi);
	}
	t2 = dtt_clock_ns(CLOCK_MONOTONIC);
	printf("%llu %llu %zu\n", (unsigned long long)((t1 - t0) / calls),
	    (unsigned long long)((t2 - t1) / lists), n);
	close(fd);
	return 0;
}

/* One client run: its two numbers, or false. */
static bool
measure(const char *self, const char *dev, char *const env[], long calls,
    uint64_t *gstats, uint64_t *plist, size_t *nprobes)
{
	char cbuf[32], out[256];
	char *argv[] = { (char *)self, "--child", (char *)dev, cbuf, NULL };
	unsigned long long a, b;
	size_t len = 0;
	ssize_t n;
	int p[2], status;
	pid_t pid;

	snprintf(cbuf, sizeof(cbuf), "%ld", calls);
	if (pipe2(p, O_CLOEXEC) == -1)
		return false;
	pid = dtt_spawn(argv, env, -1, p[1], -1, -1);
	close(p[1]);
	while (pid != -1 && len < sizeof(out) - 1 &&
	    (n = read(p[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(p[0]);
	if (pid == -1 || (status = dtt_wait(pid, 120000)) == -1 ||
	    !dtt_exited0(status))
		return false;
	if (sscanf(out, "%llu %llu %zu", &a, &b, nprobes) != 3)
		return false;
	*gstats = a;
	*plist = b;
	return true;
}

static int
cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp64);
	return v[n / 2];
}

int
main(int argc, char *argv[])
{
	static uint64_t fg[REPS_MAX], fp[REPS_MAX], sg[REPS_MAX], sp[REPS_MAX];
	struct dtt_dtd dd;
	char sock[192], nodev[192], ev1[256], ev2[256], *pre, **env;
	char *extra[] = { "--device-socket", sock, "--no-ksyms", NULL };
	char **base;
	size_t nprobes = 0, i, nb;
	long calls = 20000;
	int reps = 5, r;
	bool ok = true;

	if (argc == 4 && strcmp(argv[1], "--child") == 0)
		return child(argv[2], atol(argv[3]));
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: devsock_bench dtd libuserdt-dev.so "
		    "[reps [calls]]\n");
		return 2;
	}
	if (argc > 3)
		reps = atoi(argv[3]);
	if (argc > 4)
		calls = atol(argv[4]);
	if (reps < 1 || reps > REPS_MAX || calls < 1) {
		fprintf(stderr, "devsock_bench: reps 1..%d, calls >= 1\n",
		    REPS_MAX);
		return 2;
	}
	if (dtt_dtd_init(&dd, "devsock-bench") == -1) {
		perror("devsock_bench: temporary directory");
		return 1;
	}
	snprintf(sock, sizeof(sock), "%s/dt.sock", dd.dd_dir);
	snprintf(nodev, sizeof(nodev), "%s/nodev", dd.dd_dir);
	if (dtt_dtd_start(&dd, argv[1], extra, NULL, 0) == -1) {
		dtt_dtd_fini(&dd, true);
		return 1;
	}
	/* The library's environment: ours, preloaded, told the paths. */
	if ((base = dtt_preload_env(argv[2], &pre)) == NULL)
		return 1;
	for (nb = 0; base[nb] != NULL; nb++)
		continue;
	if ((env = calloc(nb + 3, sizeof(*env))) == NULL)
		return 1;
	memcpy(env, base, nb * sizeof(*env));
	snprintf(ev1, sizeof(ev1), "USERDT_DEVICE=%s", nodev);
	snprintf(ev2, sizeof(ev2), "USERDT_DEVICE_SOCKET=%s", sock);
	env[nb] = ev1;
	env[nb + 1] = ev2;

	for (r = 0; r < reps && ok; r++) {
		/* Alternate who goes first, so a drift hits both alike. */
		for (i = 0; i < 2 && ok; i++) {
			if ((i == 0) == (r % 2 == 0))
				ok = measure("/proc/self/exe", dd.dd_dev, NULL,
				    calls, &fg[r], &fp[r], &nprobes);
			else
				ok = measure("/proc/self/exe", nodev, env,
				    calls, &sg[r], &sp[r], &nprobes);
		}
	}
	dtt_dtd_stop(&dd, SIGTERM);
	dtt_dtd_fini(&dd, true);
	free(env);
	free(base);
	free(pre);
	if (!ok) {
		fprintf(stderr, "devsock_bench: a client run failed\n");
		return 1;
	}
	{
		uint64_t mfg = median(fg, reps), mfp = median(fp, reps);
		uint64_t msg = median(sg, reps), msp = median(sp, reps);

		printf("devsock_bench: %d reps, %ld calls each, %zu probes\n",
		    reps, calls, nprobes);
		printf("%-28s %12s %12s %8s\n", "median ns per call", "FUSE",
		    "socket", "socket/FUSE");
		printf("%-28s %12llu %12llu %8.2f\n", "DTIOCGSTATS",
		    (unsigned long long)mfg, (unsigned long long)msg,
		    mfg ? (double)msg / (double)mfg : 0.0);
		printf("%-28s %12llu %12llu %8.2f\n", "DTIOCGPLIST (whole list)",
		    (unsigned long long)mfp, (unsigned long long)msp,
		    mfp ? (double)msp / (double)mfp : 0.0);
	}
	return 0;
}
