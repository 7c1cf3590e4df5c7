/*
 * The machine's own cost of the read a SQLite lookup cannot avoid: one
 * random 4 KiB page of a warm database file, read with pread(2), as SQLite's
 * pager reads a page its cache lacks. bench/scale.sh runs it on each scale's
 * database: how this grows from 10k to 1M blobs (the file from about 10 MB,
 * within the CPU's caches, to about 1 GB, far beyond them) is a floor under
 * the growth of any SQLite reader's time per blob, blobbench's and kvtest's.
 *
 * Usage: page-read-floor FILE READS
 * Reads every page once (warm), then READS random pages three times; prints
 * the median of the three, in microseconds per read.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 3 || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: %s FILE READS\n", argv[0]);
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    if (st.st_size < 4096) {
        fprintf(stderr, "%s: shorter than a page (4096 bytes)\n", argv[1]);
        return 1;
    }
    long pages = st.st_size / 4096, reads = atol(argv[2]);
    static char page[4096];
    for (long i = 0; i < pages; i++) {
        if (pread(fd, page, sizeof page, i * 4096) != (ssize_t)sizeof page) {
            perror("pread");
            return 1;
        }
    }
    /* xorshift64: cheap, and the same sequence every run. */
    unsigned long long x = 88172645463325252ULL;
    double us[3];
    for (int r = 0; r < 3; r++) {
        double t0 = seconds();
        for (long i = 0; i < reads; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if (pread(fd, page, sizeof page, (long)(x % pages) * 4096) != (ssize_t)sizeof page) {
                perror("pread");
                return 1;
            }
        }
        us[r] = (seconds() - t0) * 1e6 / reads;
    }
    qsort(us, 3, sizeof us[0], by_value);
    printf("%.3f\n", us[1]);
    return 0;
}
