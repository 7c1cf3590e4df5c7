/*
 * The database both page-send-floor.c and page-send-server.c read: opened,
 * mapped, and its page geometry taken from the header. Included after the
 * program's globals file_fd, map, page_size, pages, runs_per_blob and
 * blob_bytes, and its fail().
 */

/* Opens and maps the SQLite database at `path` and sets the globals for a
 * blob of blob_bytes; returns the file's size. Exits 2 with a line saying
 * why when the file is no database or too small for one such blob. */
static size_t open_database(const char *path) {
    struct stat st;
    file_fd = open(path, O_RDONLY);
    if (file_fd < 0 || fstat(file_fd, &st) != 0) fail(path);
    if (st.st_size < 100) {
        fprintf(stderr, "%s: not a SQLite database\n", path);
        exit(2);
    }
    map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, file_fd, 0);
    if (map == MAP_FAILED) fail("mmap");
    page_size = (map[16] << 8) | map[17];
    if (page_size == 1) page_size = 65536;
    pages = st.st_size / page_size;
    runs_per_blob = (blob_bytes + page_size - 5) / (page_size - 4);
    if (page_size < 512 || pages < runs_per_blob + 2) {
        fprintf(stderr, "%s: too small for a blob of %zu bytes\n", path, blob_bytes);
        exit(2);
    }
    return st.st_size;
}
