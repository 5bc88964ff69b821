/* Part of trecqr.formats._scan, included once by _scan.c: one translation unit, so the compiler
   inlines across the parts. split_topics: the external pass that appends each topic's lines to one
   of several files, for runs whose topics are interleaved. */

/* ------------------------------------------------------------------ topic partitions */
/* split_topics(path, start, stop, comments, fds) -> (lines, last data line) or None.
   Appends every data line of bytes [start, stop) of the file to fds[hash(topic) % len(fds)]
   (blank lines and, with comments, '#' lines are left out; a last line without its newline
   gets one), so that each output file holds whole topics: the external pass for runs whose
   topics are interleaved. None: a line longer than a block, or an I/O error. */
#define SPLIT_BLOCK (4u << 20)
#define SPLIT_BUF (256u << 10)

typedef struct {
    unsigned char *v;
    size_t n;
} obuf_t;

static int obuf_flush(obuf_t *b, int fd) {
    size_t off = 0;
    while (off < b->n) {
        ssize_t w = write(fd, b->v + off, b->n - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        off += (size_t)w;
    }
    b->n = 0;
    return 0;
}

static int split_range(int in, long long start, long long stop, int comments, const int *fds,
                       obuf_t *bufs, size_t nb, long long *lines, unsigned char *last,
                       size_t *last_len) {
    unsigned char *buf = (unsigned char *)malloc(SPLIT_BLOCK + 1);
    if (!buf) return 2;
    size_t have = 0;
    long long pos = start;
    int eof = 0, status = 0;
    while (!status) {
        if (!eof) {
            size_t want = SPLIT_BLOCK - have;
            if ((long long)want > stop - pos) want = (size_t)(stop - pos);
            ssize_t got = want ? pread(in, buf + have, want, (off_t)pos) : 0;
            if (got < 0) { status = 1; break; }
            if (got == 0) eof = 1;
            pos += got;
            have += (size_t)got;
        }
        if (have == 0 && eof) break;
        unsigned char *limit = block_limit(buf, have, eof);
        if (!limit) {
            status = 1; /* a line longer than a block */
            break;
        }
        unsigned char *p = buf;
        while (p < limit) {
            unsigned char *line = p;
            unsigned char *nl = (unsigned char *)memchr(p, '\n', (size_t)(limit - p));
            while (is_blank(*p)) p++;
            if (*p == '\n' || (comments && *p == '#')) {
                p = nl + 1;
                continue;
            }
            unsigned char *t = p;
            while (p < nl && !is_blank(*p)) p++;
            size_t b = (size_t)(hash_bytes(t, (size_t)(p - t)) % nb);
            size_t len = (size_t)(nl + 1 - line);
            if (bufs[b].n + len > SPLIT_BUF && obuf_flush(&bufs[b], fds[b]) < 0) { status = 1; break; }
            if (len > SPLIT_BUF) {
                ssize_t w = write(fds[b], line, len);
                if (w < 0 || (size_t)w != len) { status = 1; break; }
            } else {
                memcpy(bufs[b].v + bufs[b].n, line, len);
                bufs[b].n += len;
            }
            size_t keep = len - 1 < 4096 ? len - 1 : 4096;
            memcpy(last, line, keep);
            *last_len = keep;
            (*lines)++;
            p = nl + 1;
        }
        if (status) break;
        have = block_carry(buf, limit, have);
        if (eof && have == 0) break;
    }
    free(buf);
    return status;
}

static PyObject *split_topics(PyObject *self, PyObject *args) {
    const char *path;
    long long start, stop;
    int comments;
    PyObject *fd_list;
    if (!PyArg_ParseTuple(args, "sLLpO!", &path, &start, &stop, &comments, &PyList_Type, &fd_list))
        return NULL;
    size_t nb = (size_t)PyList_GET_SIZE(fd_list);
    if (nb == 0) {
        PyErr_SetString(PyExc_ValueError, "no output files");
        return NULL;
    }
    int *fds = (int *)malloc(nb * sizeof(int));
    obuf_t *bufs = (obuf_t *)calloc(nb, sizeof(obuf_t));
    unsigned char *last = (unsigned char *)malloc(4097);
    int status = (!fds || !bufs || !last) ? 2 : 0;
    for (size_t i = 0; !status && i < nb; i++) {
        fds[i] = (int)PyLong_AsLong(PyList_GET_ITEM(fd_list, (Py_ssize_t)i));
        bufs[i].v = (unsigned char *)malloc(SPLIT_BUF);
        if (!bufs[i].v) status = 2;
    }
    if (PyErr_Occurred()) status = 3;
    long long lines = 0;
    size_t last_len = 0;
    int in = status ? -1 : open(path, O_RDONLY);
    if (!status && in < 0) status = 1;
    if (!status) {
        struct stat st;
        if (fstat(in, &st) == 0 && (stop < 0 || stop > (long long)st.st_size)) stop = st.st_size;
        Py_BEGIN_ALLOW_THREADS
        status = split_range(in, start, stop, comments, fds, bufs, nb, &lines, last, &last_len);
        for (size_t i = 0; !status && i < nb; i++)
            if (obuf_flush(&bufs[i], fds[i]) < 0) status = 1;
        Py_END_ALLOW_THREADS
    }
    if (in >= 0) close(in);
    for (size_t i = 0; bufs && i < nb; i++) free(bufs[i].v);
    free(bufs);
    free(fds);
    PyObject *res = NULL;
    if (status == 0)
        res = Py_BuildValue("(Ly#)", lines, (const char *)last, (Py_ssize_t)last_len);
    free(last);
    if (status == 3) return NULL;
    if (status == 2) return PyErr_NoMemory();
    if (status == 1) Py_RETURN_NONE;
    return res;
