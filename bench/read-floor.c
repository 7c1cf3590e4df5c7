/*
 * read-floor: the least a program can do to read a dataset's blobs, as a
 * floor under blobbench's own reads of the same dataset (bench/read-floor.sh
 * prints blobbench's time over this one's).
 *
 *   read-floor dir   FOLDER COUNT ORDER        open, fstat, read, close
 *   read-floor sql   DB     COUNT ORDER TXN    prepared SELECT v FROM kv WHERE k=?1
 *   read-floor blob  DB     COUNT ORDER TXN    sqlite3_blob_reopen + sqlite3_blob_read
 *
 * ORDER is "random" (kvtest's own draws: the first key, then randInt() %
 * count + 1, as blobbench run --random-draws) or "asc". TXN is "batched"
 * (every read of the pass in one read transaction, as kvtest's default and
 * blobbench's) or "per-read" (each read its own transaction: autocommit,
 * as kvtest --multitrans and blobbench run --multitrans).
 *
 * The timer holds the reads only: the database is opened and the statement
 * prepared before it, closed after it. Prints one line:
 *   floor MODE ORDER TXN: N reads, B bytes, X.XXX us per read
 * Exit 2 on bad arguments, 1 when a read fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sqlite3.h"

/* kvtest.c's randInt(), seeded as kvtest seeds it. */
static uint32_t rx = 0x333a13cd, ry = 0xecb2adea;
static uint32_t rand_int(void) {
    rx = (rx >> 1) ^ ((1 + ~(rx & 1)) & 0xd0000001);
    ry = ry * 1103515245 + 12345;
    return rx ^ ry;
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void usage(const char *why) {
    fprintf(stderr, "read-floor: %s\nusage: read-floor dir FOLDER COUNT random|asc\n"
                    "       read-floor sql|blob DB COUNT random|asc batched|per-read\n", why);
    exit(2);
}

static int64_t *keys_of(long count, int random) {
    int64_t *keys = malloc(sizeof *keys * count);
    if (!keys) { perror("read-floor"); exit(1); }
    for (long i = 0; i < count; i++)
        keys[i] = (!random || i == 0) ? i + 1 : (int64_t)(rand_int() % (uint32_t)count) + 1;
    return keys;
}

/* Files: the fewest calls that read a whole file of unknown size. */
static double read_dir(const char *folder, const int64_t *keys, long count, long long *bytes) {
    size_t cap = 1 << 16;
    char *buf = malloc(cap), path[4096];
    int prefix = snprintf(path, sizeof path, "%s/", folder);
    double t0 = now_us();
    for (long i = 0; i < count; i++) {
        snprintf(path + prefix, sizeof path - prefix, "%06lld", (long long)keys[i]);
        int fd = open(path, O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0) { perror(path); exit(1); }
        if ((size_t)st.st_size > cap) { cap = st.st_size; buf = realloc(buf, cap); }
        ssize_t n = read(fd, buf, st.st_size);
        if (n != st.st_size) { fprintf(stderr, "%s: short read\n", path); exit(1); }
        close(fd);
        *bytes += n;
    }
    double t = now_us() - t0;
    free(buf);
    return t;
}

static void check(sqlite3 *db, int rc, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
        fprintf(stderr, "read-floor: %s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

static double read_db(const char *file, int blob_api, int batched, const int64_t *keys, long count,
                      long long *bytes) {
    sqlite3 *db;
    check(db, sqlite3_open_v2(file, &db, SQLITE_OPEN_READONLY, 0), "open");
    sqlite3_stmt *select = 0;
    sqlite3_blob *blob = 0;
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    if (!blob_api)
        check(db, sqlite3_prepare_v2(db, "SELECT v FROM kv WHERE k=?1", -1, &select, 0), "prepare");
    double t0 = now_us();
    if (batched) check(db, sqlite3_exec(db, "BEGIN", 0, 0, 0), "BEGIN");
    for (long i = 0; i < count; i++) {
        if (blob_api) {
            /* Per-read: the handle is closed after each read, which ends the
             * implicit transaction it holds (as kvtest --multitrans). */
            if (!blob) check(db, sqlite3_blob_open(db, "main", "kv", "v", keys[i], 0, &blob), "blob_open");
            else check(db, sqlite3_blob_reopen(blob, keys[i]), "blob_reopen");
            int n = sqlite3_blob_bytes(blob);
            if ((size_t)n > cap) { cap = n; buf = realloc(buf, cap); }
            check(db, sqlite3_blob_read(blob, buf, n, 0), "blob_read");
            *bytes += n;
            if (!batched) { sqlite3_blob_close(blob); blob = 0; }
        } else {
            sqlite3_bind_int64(select, 1, keys[i]);
            check(db, sqlite3_step(select), "step");
            /* The bytes as SQLite hands them over, uncopied (as blobbench's
             * SQL read hands its sink SQLite's own buffer). */
            if (!sqlite3_column_blob(select, 0)) { fprintf(stderr, "key %lld: no blob\n", (long long)keys[i]); exit(1); }
            *bytes += sqlite3_column_bytes(select, 0);
            sqlite3_reset(select);
        }
    }
    if (blob) sqlite3_blob_close(blob);
    if (batched) check(db, sqlite3_exec(db, "COMMIT", 0, 0, 0), "COMMIT");
    double t = now_us() - t0;
    sqlite3_finalize(select);
    sqlite3_close(db);
    free(buf);
    return t;
}

int main(int argc, char **argv) {
    if (argc < 5) usage("too few arguments");
    const char *mode = argv[1], *target = argv[2], *order = argv[4];
    char *end;
    long count = strtol(argv[3], &end, 10);
    if (*end || count < 1) usage("COUNT must be a whole number of 1 or more");
    if (strcmp(order, "random") && strcmp(order, "asc")) usage("ORDER must be random or asc");
    int64_t *keys = keys_of(count, !strcmp(order, "random"));
    long long bytes = 0;
    double us;
    const char *txn = "-";
    if (!strcmp(mode, "dir")) {
        us = read_dir(target, keys, count, &bytes);
    } else if (!strcmp(mode, "sql") || !strcmp(mode, "blob")) {
        if (argc < 6 || (strcmp(argv[5], "batched") && strcmp(argv[5], "per-read")))
            usage("TXN must be batched or per-read");
        txn = argv[5];
        us = read_db(target, !strcmp(mode, "blob"), !strcmp(txn, "batched"), keys, count, &bytes);
    } else {
        usage("MODE must be dir, sql or blob");
    }
    printf("floor %s %s %s: %ld reads, %lld bytes, %.3f us per read\n", mode, order, txn, count, bytes,
           us / count);
    free(keys);
    return 0;
}
