/* The candidates of a fusion (trecqr/fusion/pool.py): number the distinct (topic, docno) pairs
 * of the runs' rows, topic by topic, each topic's in order of first appearance.
 *
 * numpy and Arrow can only hash all the docnos at once, in one table of every distinct docno:
 * a cache miss per row (Arrow's dictionary_encode, then a sort or a second hash for the
 * topic). A topic's candidates are a few thousand at most, so a table per topic, emptied
 * between topics, stays in the cache: one pass over the rows, a few ns each.
 *
 * candidates(offsets, data, rows, bounds) -> (cand, heads)
 *   offsets: int32 (n + 1) and data: bytes, an Arrow string array's buffers (the rows' docnos);
 *   rows: int32, the rows in topic order; bounds: int64 (topics + 1), each topic's first place
 *   in rows. cand: int32 bytes, each row's candidate; heads: int32 bytes, each candidate's
 *   first row.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t hash_bytes(const unsigned char *p, int32_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a, then a final mix */
    for (int32_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    return h;
}

/* The numbering itself; returns the number of candidates, or -1 for a row out of range. */
static int64_t number(const int32_t *off, Py_ssize_t n_strings, const unsigned char *data,
                      Py_ssize_t data_len, const int32_t *rows, Py_ssize_t n,
                      const int64_t *bounds, Py_ssize_t n_topics, int32_t *cand, int32_t *heads,
                      int32_t *table, uint64_t *hashes) {
    int64_t n_cand = 0;
    for (Py_ssize_t t = 0; t < n_topics; t++) {
        int64_t lo = bounds[t], hi = bounds[t + 1];
        if (lo < 0 || hi > n || hi < lo) return -1;
        uint64_t cap = 8;
        while (cap < (uint64_t)(2 * (hi - lo))) cap <<= 1;
        for (uint64_t k = 0; k < cap; k++) table[k] = -1;
        int64_t base = n_cand;
        for (int64_t i = lo; i < hi; i++) {
            int32_t r = rows[i];
            if (r < 0 || r >= n_strings || off[r] < 0 || off[r + 1] < off[r] || off[r + 1] > data_len)
                return -1;
            const unsigned char *s = data + off[r];
            int32_t len = off[r + 1] - off[r];
            uint64_t h = hash_bytes(s, len);
            uint64_t slot = h & (cap - 1);
            int32_t found = -1;
            while (table[slot] != -1) {
                int32_t c = table[slot];
                if (hashes[c - base] == h) {
                    int32_t hr = heads[c];
                    if (off[hr + 1] - off[hr] == len && memcmp(data + off[hr], s, len) == 0) {
                        found = c;
                        break;
                    }
                }
                slot = (slot + 1) & (cap - 1);
            }
            if (found < 0) {
                found = (int32_t)n_cand++;
                table[slot] = found;
                hashes[found - base] = h;
                heads[found] = r;
            }
            cand[r] = found;
        }
    }
    return n_cand;
}

static PyObject *candidates(PyObject *self, PyObject *args) {
    Py_buffer off, data, rows, bounds;
    PyObject *result = NULL, *cand_obj = NULL;
    int32_t *heads = NULL, *table = NULL;
    uint64_t *hashes = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &off, &data, &rows, &bounds)) return NULL;
    Py_ssize_t n_strings = off.len / 4 - 1, n = rows.len / 4, n_topics = bounds.len / 8 - 1;
    if (n_strings < 0 || n_topics < 0 || n > n_strings) {
        PyErr_SetString(PyExc_ValueError, "candidates: bad buffer sizes");
        goto done;
    }
    int64_t widest = 0;
    const int64_t *b = (const int64_t *)bounds.buf;
    for (Py_ssize_t t = 0; t < n_topics; t++)
        if (b[t + 1] - b[t] > widest) widest = b[t + 1] - b[t];
    uint64_t cap = 8;
    while (cap < (uint64_t)(2 * widest)) cap <<= 1;
    cand_obj = PyBytes_FromStringAndSize(NULL, n_strings * 4);
    heads = malloc((n ? n : 1) * sizeof(int32_t));
    table = malloc(cap * sizeof(int32_t));
    hashes = malloc((widest ? widest : 1) * sizeof(uint64_t));
    if (!cand_obj || !heads || !table || !hashes) {
        PyErr_NoMemory();
        goto done;
    }
    int32_t *cand = (int32_t *)PyBytes_AS_STRING(cand_obj);
    memset(cand, 0xff, n_strings * 4);
    int64_t n_cand;
    Py_BEGIN_ALLOW_THREADS
    n_cand = number(off.buf, n_strings, data.buf, data.len, rows.buf, n, b, n_topics, cand,
                    heads, table, hashes);
    Py_END_ALLOW_THREADS
    if (n_cand < 0) {
        PyErr_SetString(PyExc_ValueError, "candidates: a row or offset out of range");
        goto done;
    }
    PyObject *heads_obj = PyBytes_FromStringAndSize((const char *)heads, n_cand * 4);
    if (heads_obj) {
        result = PyTuple_Pack(2, cand_obj, heads_obj);
        Py_DECREF(heads_obj);
    }
done:
    Py_XDECREF(cand_obj);
    free(heads);
    free(table);
    free(hashes);
    PyBuffer_Release(&off);
    PyBuffer_Release(&data);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&bounds);
    return result;
}

static PyMethodDef methods[] = {
    {"candidates", candidates, METH_VARARGS,
     "candidates(offsets, data, rows, bounds) -> (cand, heads): the fusion's candidates"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pool",
                                    "The fusion's candidates, topic by topic (see _pool.c).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__pool(void) { return PyModule_Create(&module); }
