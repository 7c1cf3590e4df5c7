/*
 * The fastest an HTTP server of SQLite blobs can be on this machine: a
 * server that does nothing but the kernel calls a reply needs, run under
 * the same wrk as nginx (bench/http-vs-nginx.sh, FLOOR_SERVER=1). Where
 * page-send-floor.c measures the CPU of handing one blob to a pipe, this
 * measures the throughput that is left once the socket, the HTTP round
 * trips and wrk's own share of the cores are counted too.
 *
 * GET /anything/N answers 200 with BYTES bytes of FILE (a SQLite database;
 * its page size is read from the header), starting at a page picked from N:
 *   range  the bytes of consecutive pages, by sendfile (a blob of its own
 *          file, as nginx sends it)
 *   runs   a run of each page after its 4-byte link (an overflow chain, as
 *          SQLite lays a blob out), by vmsplice of the mapped runs into a
 *          pipe and splice from the pipe into the socket: page references,
 *          no copy, pages left mapped (the cheapest uncopied send of
 *          SQLite's layout)
 * It reads no header but the request line, answers every request with the
 * same length and keeps every connection open: no checks, no errors, no
 * logging. One thread per connection.
 *
 * Usage: page-send-server FILE BYTES PORT range|runs
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <signal.h>
#include <unistd.h>

#define PIPE_BYTES (1 << 20)
#define MAX_IOV 1024

static int file_fd, use_runs;
static const unsigned char *map;
static size_t page_size, pages, runs_per_blob, blob_bytes;
static char head[128];
static size_t head_len;

static void fail(const char *what) {
    perror(what);
    exit(1);
}

#include "sqlite-pages.h"

/* The first page of the blob of key `key`: spread over the file. */
static size_t first_page(unsigned long key) {
    return 1 + (key * 2654435761u) % (pages - runs_per_blob - 1);
}

/* Splices `bytes` from the pipe into the socket; 0 when the peer left.
 * `last`: the reply ends with these bytes, so the socket sends them at once
 * (with SPLICE_F_MORE it would hold the tail back for more). */
static int pipe_to_socket(int pipe_out, int sock, size_t bytes, int last) {
    while (bytes > 0) {
        ssize_t n = splice(pipe_out, NULL, sock, NULL, bytes, last ? 0 : SPLICE_F_MORE);
        if (n <= 0) return 0;
        bytes -= n;
    }
    return 1;
}

/* The body as runs of the mapped pages; 0 when the peer left. */
static int send_runs(int sock, int pipe_fds[2], struct iovec *runs, size_t first) {
    size_t left = blob_bytes;
    for (size_t i = 0; i < runs_per_blob; i++) {
        size_t take = left < page_size - 4 ? left : page_size - 4;
        runs[i].iov_base = (void *)(map + (first + i) * page_size + 4);
        runs[i].iov_len = take;
        left -= take;
    }
    size_t at = 0;
    while (at < runs_per_blob) {
        size_t count = 0, bytes = 0;
        while (at + count < runs_per_blob && count < MAX_IOV &&
               bytes + runs[at + count].iov_len <= PIPE_BYTES)
            bytes += runs[at + count++].iov_len;
        ssize_t n = vmsplice(pipe_fds[1], runs + at, count, 0);
        if (n != (ssize_t)bytes) fail("vmsplice");
        at += count;
        if (!pipe_to_socket(pipe_fds[0], sock, bytes, at == runs_per_blob)) return 0;
    }
    return 1;
}

/* The body as one file range; 0 when the peer left. */
static int send_range(int sock, size_t first) {
    off_t off = (off_t)first * page_size;
    size_t left = blob_bytes;
    while (left > 0) {
        ssize_t n = sendfile(sock, file_fd, &off, left);
        if (n <= 0) return 0;
        left -= n;
    }
    return 1;
}

/* Serves one connection until the client closes it. */
static void *serve(void *arg) {
    int sock = (int)(long)arg, pipe_fds[2] = {-1, -1};
    struct iovec *runs = calloc(runs_per_blob, sizeof *runs);
    if (use_runs) {
        if (pipe(pipe_fds) != 0) fail("pipe");
        if (fcntl(pipe_fds[1], F_SETPIPE_SZ, PIPE_BYTES) < PIPE_BYTES) fail("F_SETPIPE_SZ");
    }
    char buf[4096];
    size_t have = 0;
    for (;;) {
        char *end;
        while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
            ssize_t n = have < sizeof buf ? read(sock, buf + have, sizeof buf - have) : 0;
            if (n <= 0) goto done;
            have += n;
        }
        /* "GET /blobs/N HTTP/1.1": N after the path's last slash. */
        char *sp1 = memchr(buf, ' ', end - buf);
        char *sp2 = sp1 ? memchr(sp1 + 1, ' ', end - sp1 - 1) : NULL;
        char *slash = sp2 ? memrchr(sp1, '/', sp2 - sp1) : NULL;
        unsigned long key = slash ? strtoul(slash + 1, NULL, 10) : 0;
        size_t used = end + 4 - buf;
        memmove(buf, buf + used, have - used);
        have -= used;
        if (send(sock, head, head_len, MSG_MORE) != (ssize_t)head_len) goto done;
        size_t first = first_page(key);
        if (!(use_runs ? send_runs(sock, pipe_fds, runs, first) : send_range(sock, first))) goto done;
    }
done:
    close(sock);
    if (use_runs) {
        close(pipe_fds[0]);
        close(pipe_fds[1]);
    }
    free(runs);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5 || atol(argv[2]) <= 0 || atoi(argv[3]) <= 0 ||
        (strcmp(argv[4], "range") && strcmp(argv[4], "runs"))) {
        fprintf(stderr, "usage: %s FILE BYTES PORT range|runs\n", argv[0]);
        return 2;
    }
    /* A client that leaves mid-reply must not end the server. */
    signal(SIGPIPE, SIG_IGN);
    blob_bytes = atol(argv[2]);
    use_runs = !strcmp(argv[4], "runs");
    open_database(argv[1]);
    if (!use_runs) runs_per_blob = (blob_bytes + page_size - 1) / page_size;
    head_len = snprintf(head, sizeof head,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                        "Content-Length: %zu\r\n\r\n",
                        blob_bytes);
    int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[3])),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0) fail("bind");
    if (listen(listener, 512) != 0) fail("listen");
    for (;;) {
        int sock = accept(listener, NULL, NULL);
        if (sock < 0) continue;
        setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pthread_t t;
        if (pthread_create(&t, NULL, serve, (void *)(long)sock) != 0) fail("pthread_create");
        pthread_detach(t);
    }
}
