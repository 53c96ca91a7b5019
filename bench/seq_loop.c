/* bench/seq_loop.c: the floor under fslab's sequential-write case (bench/seqwrite.sh): the same
 * system calls in a bare loop. Creates FILE (O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644)
 * and writes SIZE bytes into it with pwrite() calls of BS bytes each, one after another from
 * offset 0, from a buffer of pseudo-random bytes filled (and so faulted in) before the clock
 * starts. The clock runs from the first pwrite() to the end of the last, as fslab and fio time
 * their jobs; the open before it and the close after it are outside. Prints one line of JSON:
 * {"bytes", "calls", "secs", "mib_per_sec"}.
 *
 *   cc -O2 -o seq_loop bench/seq_loop.c
 *   seq_loop FILE SIZE BS        (SIZE and BS in bytes; SIZE a multiple of BS)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s FILE SIZE BS\n", argv[0]);
		return 2;
	}
	long long size = atoll(argv[2]);
	long long bs = atoll(argv[3]);
	if (size < 1 || bs < 1 || size % bs) {
		fprintf(stderr, "SIZE and BS must be at least 1, and SIZE a multiple of BS\n");
		return 2;
	}
	uint64_t *buf = aligned_alloc(4096, (size_t)((bs + 4095) / 4096 * 4096));
	if (!buf) {
		perror("aligned_alloc");
		return 1;
	}
	/* xorshift64, as fslab fills its buffers: every page touched now, not inside the clock. */
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (long long i = 0; i < bs / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = x;
	}
	int fd = open(argv[1], O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	struct timespec t0, t1;
	long long calls = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long long off = 0; off < size; off += bs) {
		ssize_t n = pwrite(fd, buf, (size_t)bs, off);
		calls++;
		if (n != bs) {
			fprintf(stderr, "pwrite at %lld: %s\n", off, n < 0 ? strerror(errno) : "short write");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (close(fd)) {
		perror("close");
		return 1;
	}
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("{\"bytes\": %lld, \"calls\": %lld, \"secs\": %.6f, \"mib_per_sec\": %.1f}\n", size, calls, secs,
	       (double)size / 1048576.0 / secs);
	return 0;
}
