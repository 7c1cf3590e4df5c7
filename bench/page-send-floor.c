/*
 * The machine's own cost of handing one large blob's bytes to the kernel
 * for sending, as a SQLite database lays them out (a run of each overflow
 * page's bytes after its 4-byte link to the next) against one contiguous
 * file range (a blob of its own file, as nginx's sendfile sends it).
 * bench/http-vs-nginx.sh runs it on its database: it is the floor under the
 * CPU a server of SQLite blobs adds per reply over nginx's, whatever the
 * server does besides.
 *
 * Each way puts BYTES into a pipe and splices the pipe into /dev/null (the
 * socket's own cost is the same for every way, and left out):
 *   copy       writev of the mapped runs: every byte copied (a server that
 *              writes from a map or a buffer)
 *   vmsplice   vmsplice of the mapped runs: page references, no copy, but
 *              each page looked up and pinned through the page tables
 *              (pages left mapped: the cheapest a mapped send can be)
 *   splice     splice from the file at each run's offset: no map, one
 *              system call per page
 *   one range  splice of BYTES contiguous bytes of the file (sendfile's way)
 *
 * Usage: page-send-floor FILE BYTES BLOBS
 * FILE is a SQLite database (its page size is read from the header); each
 * blob starts at a random page. Every page is read once first (warm), then
 * each way sends BLOBS blobs, three times, in turn; prints each way's median
 * in microseconds per blob, its ratio to one range and what it adds to it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PIPE_BYTES (1 << 20)
#define MAX_IOV 1024

static int file_fd, pipe_fds[2], null_fd;
static const unsigned char *map;
static size_t page_size, pages, runs_per_blob;
static size_t blob_bytes;
static struct iovec *runs;

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void fail(const char *what) {
    perror(what);
    exit(1);
}

#include "sqlite-pages.h"

/* Empties the pipe of `bytes` into /dev/null. */
static void drain(size_t bytes) {
    while (bytes > 0) {
        ssize_t n = splice(pipe_fds[0], NULL, null_fd, NULL, bytes, 0);
        if (n <= 0) fail("splice to /dev/null");
        bytes -= n;
    }
}

/* The runs of a blob whose first overflow page is `first`. */
static void blob_runs(size_t first) {
    size_t left = blob_bytes;
    for (size_t i = 0; i < runs_per_blob; i++) {
        size_t take = left < page_size - 4 ? left : page_size - 4;
        runs[i].iov_base = (void *)(map + (first + i) * page_size + 4);
        runs[i].iov_len = take;
        left -= take;
    }
}

/* Sends the runs with writev (copy = 1) or vmsplice (copy = 0), at most
 * a pipe's worth at a time. */
static void send_mapped(int copy) {
    size_t at = 0;
    while (at < runs_per_blob) {
        size_t count = 0, bytes = 0;
        while (at + count < runs_per_blob && count < MAX_IOV &&
               bytes + runs[at + count].iov_len <= PIPE_BYTES)
            bytes += runs[at + count++].iov_len;
        ssize_t n = copy ? writev(pipe_fds[1], runs + at, count)
                         : vmsplice(pipe_fds[1], runs + at, count, 0);
        if (n != (ssize_t)bytes) fail(copy ? "writev" : "vmsplice");
        drain(bytes);
        at += count;
    }
}

/* Sends the runs with one splice from the file each. */
static void send_spliced_runs(void) {
    size_t at = 0;
    while (at < runs_per_blob) {
        size_t bytes = 0, slots = 0;
        for (; at < runs_per_blob; at++) {
            loff_t off = (const unsigned char *)runs[at].iov_base - map;
            /* A run takes a pipe slot per 4 KiB page it touches, and a
             * 1 MiB pipe has 256: a full pipe would block. */
            size_t needs = (off % 4096 + runs[at].iov_len + 4095) / 4096;
            if (slots + needs > PIPE_BYTES / 4096) break;
            slots += needs;
            ssize_t n = splice(file_fd, &off, pipe_fds[1], NULL, runs[at].iov_len, 0);
            if (n != (ssize_t)runs[at].iov_len) fail("splice from the file");
            bytes += n;
        }
        drain(bytes);
    }
}

/* Sends blob_bytes contiguous bytes from page `first`. */
static void send_range(size_t first) {
    loff_t off = first * page_size;
    size_t left = blob_bytes;
    while (left > 0) {
        size_t want = left < PIPE_BYTES ? left : PIPE_BYTES;
        ssize_t n = splice(file_fd, &off, pipe_fds[1], NULL, want, 0);
        if (n <= 0) fail("splice of a range");
        drain(n);
        left -= n;
    }
}

int main(int argc, char **argv) {
    if (argc != 4 || atol(argv[2]) <= 0 || atol(argv[3]) <= 0) {
        fprintf(stderr, "usage: %s FILE BYTES BLOBS\n", argv[0]);
        return 2;
    }
    blob_bytes = atol(argv[2]);
    long blobs = atol(argv[3]);
    size_t file_bytes = open_database(argv[1]);
    runs = calloc(runs_per_blob, sizeof *runs);
    if (pipe(pipe_fds) != 0) fail("pipe");
    if (fcntl(pipe_fds[1], F_SETPIPE_SZ, PIPE_BYTES) < PIPE_BYTES) fail("F_SETPIPE_SZ");
    null_fd = open("/dev/null", O_WRONLY);
    if (null_fd < 0) fail("/dev/null");
    volatile unsigned char sink = 0;
    for (size_t at = 0; at < file_bytes; at += 4096) sink ^= map[at];

    const char *names[] = {"copy", "vmsplice", "splice", "one range"};
    double times[4][3];
    for (int round = 0; round < 3; round++) {
        for (int way = 0; way < 4; way++) {
            srand(round + 1);
            double t0 = seconds();
            for (long b = 0; b < blobs; b++) {
                size_t first = 1 + rand() % (pages - runs_per_blob - 1);
                blob_runs(first);
                if (way <= 1) send_mapped(way == 0);
                else if (way == 2) send_spliced_runs();
                else send_range(first);
            }
            times[way][round] = (seconds() - t0) / blobs * 1e6;
        }
    }
    double median[4];
    for (int way = 0; way < 4; way++) {
        qsort(times[way], 3, sizeof(double), by_value);
        median[way] = times[way][1];
    }
    printf("blob of %zu bytes over %zu pages of %zu bytes, %ld blobs x 3 rounds\n", blob_bytes,
           runs_per_blob, page_size, blobs);
    for (int way = 0; way < 4; way++)
        printf("%-10s %8.1f us per blob  %5.2fx one range  %+8.1f us\n", names[way], median[way],
               median[way] / median[3], median[way] - median[3]);
    return 0;
}
