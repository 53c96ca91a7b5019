/* bench/meta_loop.c: the floor under fslab's metadata case (bench/meta.sh): the same system
 * calls in a bare loop. Each of THREADS threads works in its own directory DIR/t<k> on the files
 * f0 .. f<FILES-1>:
 *   create  openat(O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644), then close
 *   stat    fstatat(0), which follows a link, as fslab's stat op (and fio's filestat) does
 *   unlink  unlinkat
 * The clock runs from just before the barrier that starts the threads to the end of the last
 * thread, as fslab times its threads. Prints one line of JSON: {"op", "threads", "files", "ops",
 * "secs", "ops_per_sec"}.
 *
 *   cc -O2 -pthread -o meta_loop bench/meta_loop.c
 *   meta_loop create|stat|unlink DIR THREADS FILES
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum op { CREATE, STAT, UNLINK };

static enum op op;
static long files;
static pthread_barrier_t start;

struct worker {
	pthread_t tid;
	int dir;
	struct timespec end;
	int err;
};

/* "f<i>" into buf, as fslab names its files. */
static void name(char *buf, long i)
{
	char digits[24];
	int n = 0;
	do {
		digits[n++] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	buf[0] = 'f';
	for (int k = 0; k < n; k++)
		buf[1 + k] = digits[n - 1 - k];
	buf[1 + n] = 0;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char buf[32];
	struct stat st;

	pthread_barrier_wait(&start);
	for (long i = 0; i < files; i++) {
		name(buf, i);
		int r;
		switch (op) {
		case CREATE:
			r = openat(w->dir, buf, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
			if (r >= 0)
				r = close(r);
			break;
		case STAT:
			r = fstatat(w->dir, buf, &st, 0);
			break;
		default:
			r = unlinkat(w->dir, buf, 0);
			break;
		}
		if (r < 0) {
			w->err = errno;
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &w->end);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s create|stat|unlink DIR THREADS FILES\n", argv[0]);
		return 2;
	}
	const char *ops[] = {"create", "stat", "unlink"};
	op = !strcmp(argv[1], "create") ? CREATE : !strcmp(argv[1], "stat") ? STAT : UNLINK;
	if (op == UNLINK && strcmp(argv[1], "unlink")) {
		fprintf(stderr, "unknown operation %s\n", argv[1]);
		return 2;
	}
	int threads = atoi(argv[3]);
	files = atol(argv[4]);
	if (threads < 1 || files < 1) {
		fprintf(stderr, "THREADS and FILES must be at least 1\n");
		return 2;
	}
	struct worker *w = calloc(threads, sizeof *w);
	pthread_barrier_init(&start, NULL, threads + 1);
	for (int k = 0; k < threads; k++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/t%d", argv[2], k);
		mkdir(path, 0755);
		w[k].dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (w[k].dir < 0) {
			perror(path);
			return 1;
		}
		pthread_create(&w[k].tid, NULL, work, &w[k]);
	}
	/* Read before the barrier, as fslab's monitor does: no thread starts before it. */
	struct timespec t0, t1 = {0, 0};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_barrier_wait(&start);
	int err = 0;
	for (int k = 0; k < threads; k++) {
		pthread_join(w[k].tid, NULL);
		if (w[k].err)
			err = w[k].err;
		if (w[k].end.tv_sec > t1.tv_sec || (w[k].end.tv_sec == t1.tv_sec && w[k].end.tv_nsec > t1.tv_nsec))
			t1 = w[k].end;
	}
	if (err) {
		fprintf(stderr, "%s: %s\n", ops[op], strerror(err));
		return 1;
	}
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	long total = files * threads;
	printf("{\"op\": \"%s\", \"threads\": %d, \"files\": %ld, \"ops\": %ld, \"secs\": %.6f, \"ops_per_sec\": %.1f}\n",
	       ops[op], threads, files, total, secs, (double)total / secs);
	return 0;
}
