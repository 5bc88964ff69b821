/*
 * trecqr.formats._scan: one pass over a TREC run file, straight into columns.
 *
 * Why C: reading a 7M-line run is what trec_eval, pytrec_eval and ir_measures spend most of their
 * time on. This scanner reads the file in blocks (never the whole file in memory), splits each line
 * on C isspace like trec_eval, and writes four columns directly: a topic code per line (topics are
 * hashed, so no sort of all lines is needed), the docnos packed into one buffer with offsets (an
 * Arrow string array without copying), the score as a double parsed exactly (Clinger's fast path,
 * else CPython's correctly rounded PyOS_string_to_double), and the runid of the last line. While the
 * file is grouped by topic it also checks each topic for a repeated docno with a small hash set.
 *
 * It accepts only what the other readers accept and returns None for anything else (a line with
 * fewer than 6 fields, a score that is not a finite decimal number, bytes outside printable ASCII,
 * gzip, ...): the Python readers then take over and report errors with their line numbers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK (8u << 20)
#define MAX_TOKEN 64

static inline int is_blank(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static inline uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

/* ------------------------------------------------------------------ exact decimal parsing */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* [+-]?([0-9]+.?[0-9]*|.[0-9]+)([eE][+-]?[0-9]+)? and finite, else return 0. */
static int parse_score(const unsigned char *s, size_t n, double *out) {
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    uint64_t mant = 0;
    int digits = 0, int_digits = 0, frac_digits = 0, dropped = 0;
    long exp10 = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (mant == 0 && s[i] == '0') { /* leading zeros are not significant */
        } else if (digits < 19) {
            mant = mant * 10 + (uint64_t)(s[i] - '0');
            digits++;
        } else {
            dropped = 1;
            exp10++;
        }
        int_digits++;
        i++;
    }
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (mant == 0 && s[i] == '0') {
                exp10--;
            } else if (digits < 19) {
                mant = mant * 10 + (uint64_t)(s[i] - '0');
                digits++;
                exp10--;
            } else {
                dropped = 1;
            }
            frac_digits++;
            i++;
        }
    }
    if (int_digits + frac_digits == 0) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        if (i >= n || s[i] < '0' || s[i] > '9') return 0;
        long e = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (e < 100000) e = e * 10 + (s[i] - '0');
            i++;
        }
        exp10 += eneg ? -e : e;
    }
    if (i != n) return 0;
    double v;
    if (mant == 0) {
        v = 0.0;
    } else if (!dropped && mant < (1ULL << 53) && exp10 >= -22 && exp10 <= 22) {
        v = (double)mant; /* exact; one correctly rounded operation below */
        v = exp10 < 0 ? v / POW10[-exp10] : v * POW10[exp10];
    } else {
        char buf[MAX_TOKEN + 1];
        if (n > MAX_TOKEN) return 0;
        memcpy(buf, s, n);
        buf[n] = '\0';
        char *end = NULL;
        v = PyOS_string_to_double(buf, &end, NULL);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        if (end != buf + n) return 0;
        if (!isfinite(v)) return 0;
        *out = v;
        return 1;
    }
    if (!isfinite(v)) return 0;
    *out = neg ? -v : v;
    return 1;
}

/* ------------------------------------------------------------------ growable hash of strings */
typedef struct {
    int32_t *slots; /* index into entries, -1 empty */
    size_t cap;     /* power of two */
    size_t count;
} table_t;

static int table_init(table_t *t, size_t cap) {
    t->cap = cap;
    t->count = 0;
    t->slots = (int32_t *)malloc(cap * sizeof(int32_t));
    if (!t->slots) return -1;
    memset(t->slots, 0xff, cap * sizeof(int32_t));
    return 0;
}

static void table_clear(table_t *t) {
    memset(t->slots, 0xff, t->cap * sizeof(int32_t));
    t->count = 0;
}

/* Topics: key bytes live in the docno-independent buffer `keys` at offsets koff. */
typedef struct {
    table_t tab;
    unsigned char *keys;
    size_t keys_len, keys_cap;
    size_t *koff; /* n+1 offsets */
    uint64_t *hashes;
    size_t n, cap;
} topics_t;

static int topics_init(topics_t *tp) {
    if (table_init(&tp->tab, 1024) < 0) return -1;
    tp->keys_cap = 1 << 16;
    tp->keys = (unsigned char *)malloc(tp->keys_cap);
    tp->cap = 512;
    tp->koff = (size_t *)malloc((tp->cap + 1) * sizeof(size_t));
    tp->hashes = (uint64_t *)malloc(tp->cap * sizeof(uint64_t));
    tp->keys_len = 0;
    tp->n = 0;
    if (!tp->keys || !tp->koff || !tp->hashes) return -1;
    tp->koff[0] = 0;
    return 0;
}

static void topics_free(topics_t *tp) {
    free(tp->tab.slots);
    free(tp->keys);
    free(tp->koff);
    free(tp->hashes);
}

static int topics_rehash(topics_t *tp) {
    size_t cap = tp->tab.cap * 2;
    int32_t *slots = (int32_t *)malloc(cap * sizeof(int32_t));
    if (!slots) return -1;
    memset(slots, 0xff, cap * sizeof(int32_t));
    for (size_t i = 0; i < tp->n; i++) {
        size_t j = tp->hashes[i] & (cap - 1);
        while (slots[j] >= 0) j = (j + 1) & (cap - 1);
        slots[j] = (int32_t)i;
    }
    free(tp->tab.slots);
    tp->tab.slots = slots;
    tp->tab.cap = cap;
    return 0;
}

/* Code of topic key; *is_new set when added. Returns -1 on memory error. */
static int64_t topics_code(topics_t *tp, const unsigned char *s, size_t len, int *is_new) {
    uint64_t h = hash_bytes(s, len);
    size_t mask = tp->tab.cap - 1, j = h & mask;
    while (tp->tab.slots[j] >= 0) {
        int32_t k = tp->tab.slots[j];
        if (tp->hashes[k] == h && tp->koff[k + 1] - tp->koff[k] == len &&
            memcmp(tp->keys + tp->koff[k], s, len) == 0) {
            *is_new = 0;
            return k;
        }
        j = (j + 1) & mask;
    }
    if (tp->n == tp->cap) {
        tp->cap *= 2;
        size_t *ko = (size_t *)realloc(tp->koff, (tp->cap + 1) * sizeof(size_t));
        uint64_t *hs = (uint64_t *)realloc(tp->hashes, tp->cap * sizeof(uint64_t));
        if (!ko || !hs) return -1;
        tp->koff = ko;
        tp->hashes = hs;
    }
    while (tp->keys_len + len > tp->keys_cap) {
        tp->keys_cap *= 2;
        unsigned char *k = (unsigned char *)realloc(tp->keys, tp->keys_cap);
        if (!k) return -1;
        tp->keys = k;
    }
    memcpy(tp->keys + tp->keys_len, s, len);
    tp->keys_len += len;
    size_t code = tp->n++;
    tp->koff[tp->n] = tp->keys_len;
    tp->hashes[code] = h;
    tp->tab.slots[j] = (int32_t)code;
    if (++tp->tab.count * 2 > tp->tab.cap && topics_rehash(tp) < 0) return -1;
    *is_new = 1;
    return (int64_t)code;
}

/* ------------------------------------------------------------------ per-topic duplicate set */
typedef struct {
    table_t tab;
    uint64_t *hashes; /* by row - topic_start */
    size_t hcap;
} dupset_t;

static int dup_insert(dupset_t *d, const unsigned char *ddata, const int32_t *doff, size_t topic_start,
                      size_t row, int64_t *dup_row) {
    size_t local = row - topic_start;
    const unsigned char *s = ddata + doff[row];
    size_t len = (size_t)(doff[row + 1] - doff[row]);
    if (local >= d->hcap) {
        size_t cap = d->hcap * 2;
        while (cap <= local) cap *= 2;
        uint64_t *hs = (uint64_t *)realloc(d->hashes, cap * sizeof(uint64_t));
        if (!hs) return -1;
        d->hashes = hs;
        d->hcap = cap;
    }
    if ((d->tab.count + 1) * 2 > d->tab.cap) { /* grow and reinsert this topic's rows */
        size_t cap = d->tab.cap * 2;
        free(d->tab.slots);
        if (table_init(&d->tab, cap) < 0) return -1;
        for (size_t k = 0; k < local; k++) {
            size_t j = d->hashes[k] & (cap - 1);
            while (d->tab.slots[j] >= 0) j = (j + 1) & (cap - 1);
            d->tab.slots[j] = (int32_t)k;
            d->tab.count++;
        }
    }
    uint64_t h = hash_bytes(s, len);
    size_t mask = d->tab.cap - 1, j = h & mask;
    while (d->tab.slots[j] >= 0) {
        int32_t k = d->tab.slots[j];
        size_t r = topic_start + (size_t)k;
        if (d->hashes[k] == h && (size_t)(doff[r + 1] - doff[r]) == len &&
            memcmp(ddata + doff[r], s, len) == 0) {
            if (*dup_row < 0) *dup_row = (int64_t)row;
            break;
        }
        j = (j + 1) & mask;
    }
    d->hashes[local] = h;
    if (d->tab.slots[j] < 0) {
        d->tab.slots[j] = (int32_t)local;
        d->tab.count++;
    }
    return 0;
}

/* ------------------------------------------------------------------ the scan */
static PyObject *scan_run(PyObject *self, PyObject *args) {
    const char *path;
    int comments;
    if (!PyArg_ParseTuple(args, "sp", &path, &comments)) return NULL;

    int fd = open(path, O_RDONLY);
    if (fd < 0) Py_RETURN_NONE;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        Py_RETURN_NONE;
    }
    size_t size = (size_t)st.st_size;
    size_t max_rows = size / 12 + 2; /* a data line has >= 6 one-byte fields: >= 12 bytes */
    if (size >= (1ULL << 31) - 16) { /* docno offsets are int32 */
        close(fd);
        Py_RETURN_NONE;
    }

    PyObject *qcode_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(max_rows * 4));
    PyObject *score_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(max_rows * 8));
    PyObject *doff_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((max_rows + 1) * 4));
    PyObject *ddata_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
    unsigned char *buf = (unsigned char *)malloc(BLOCK + 1);
    topics_t tp;
    dupset_t dset = {{NULL, 0, 0}, NULL, 0};
    int ok = qcode_b && score_b && doff_b && ddata_b && buf && topics_init(&tp) == 0 &&
             table_init(&dset.tab, 4096) == 0;
    dset.hcap = 2048;
    dset.hashes = (uint64_t *)malloc(dset.hcap * sizeof(uint64_t));
    ok = ok && dset.hashes;
    if (!ok) {
        close(fd);
        Py_XDECREF(qcode_b);
        Py_XDECREF(score_b);
        Py_XDECREF(doff_b);
        Py_XDECREF(ddata_b);
        free(buf);
        return PyErr_NoMemory();
    }
    int32_t *qcode = (int32_t *)PyBytes_AS_STRING(qcode_b);
    double *score = (double *)PyBytes_AS_STRING(score_b);
    int32_t *doff = (int32_t *)PyBytes_AS_STRING(doff_b);
    unsigned char *ddata = (unsigned char *)PyBytes_AS_STRING(ddata_b);

    size_t n = 0, dlen = 0, have = 0, topic_start = 0;
    int64_t cur_topic = -1, dup_row = -1;
    int grouped = 1, failed = 0, eof = 0, first_block = 1;
    char runid[256];
    size_t runid_len = 0;
    doff[0] = 0;

    Py_BEGIN_ALLOW_THREADS
    while (!failed) {
        if (!eof) {
            ssize_t got = read(fd, buf + have, BLOCK - have);
            if (got < 0) {
                failed = 1;
                break;
            }
            if (got == 0) eof = 1;
            have += (size_t)got;
            if (first_block && have >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
                failed = 1; /* gzip: the Python reader decompresses */
                break;
            }
            if (first_block && have >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf) {
                memmove(buf, buf + 3, have - 3); /* UTF-8 byte order mark */
                have -= 3;
            }
            first_block = 0;
        }
        if (have == 0 && eof) break;
        /* process complete lines; at EOF the last line may lack its newline */
        unsigned char *end = buf + have;
        unsigned char *last_nl = (unsigned char *)memrchr(buf, '\n', have);
        unsigned char *limit;
        if (last_nl) {
            limit = last_nl + 1;
        } else if (eof) {
            buf[have] = '\n';
            limit = end + 1;
        } else {
            failed = 1; /* a line longer than a block */
            break;
        }
        if (eof && last_nl && last_nl + 1 < end) { /* trailing piece without newline */
            buf[have] = '\n';
            limit = end + 1;
        }
        unsigned char *p = buf;
        while (p < limit && !failed) {
            while (is_blank(*p)) p++;
            if (*p == '\n') {
                p++;
                continue;
            }
            if (comments && *p == '#') {
                p = (unsigned char *)memchr(p, '\n', (size_t)(limit - p)) + 1;
                continue;
            }
            const unsigned char *fs[6];
            size_t fl[6];
            int nf = 0;
            while (*p != '\n') {
                const unsigned char *start = p;
                while (*p > ' ' && *p < 0x7f) p++;
                if (!(is_blank(*p) || *p == '\n')) { /* control, non-ASCII: Python path */
                    failed = 1;
                    break;
                }
                if (nf < 6) {
                    fs[nf] = start;
                    fl[nf] = (size_t)(p - start);
                }
                nf++;
                while (is_blank(*p)) p++;
            }
            if (failed) break;
            p++; /* the newline */
            if (nf < 6 || !parse_score(fs[4], fl[4], &score[n])) {
                failed = 1;
                break;
            }
            /* topic */
            int is_new = 0;
            int64_t code;
            if (cur_topic >= 0 && (size_t)(tp.koff[cur_topic + 1] - tp.koff[cur_topic]) == fl[0] &&
                memcmp(tp.keys + tp.koff[cur_topic], fs[0], fl[0]) == 0) {
                code = cur_topic;
            } else {
                code = topics_code(&tp, fs[0], fl[0], &is_new);
                if (code < 0) {
                    failed = 2;
                    break;
                }
                if (!is_new) grouped = 0;
                cur_topic = code;
                topic_start = n;
                if (grouped) table_clear(&dset.tab);
            }
            qcode[n] = (int32_t)code;
            memcpy(ddata + dlen, fs[2], fl[2]);
            dlen += fl[2];
            doff[n + 1] = (int32_t)dlen;
            if (grouped && dup_insert(&dset, ddata, doff, topic_start, n, &dup_row) < 0) {
                failed = 2;
                break;
            }
            if (fl[5] < sizeof(runid)) {
                memcpy(runid, fs[5], fl[5]);
                runid_len = fl[5];
            } else {
                failed = 1;
                break;
            }
            n++;
        }
        if (failed) break;
        if (limit > end) { /* consumed the synthetic final newline */
            have = 0;
        } else {
            have = (size_t)(end - limit);
            memmove(buf, limit, have);
        }
        if (eof && have == 0) break;
    }
    Py_END_ALLOW_THREADS

    close(fd);
    free(buf);
    free(dset.tab.slots);
    free(dset.hashes);
    if (failed || n == 0) {
        topics_free(&tp);
        Py_DECREF(qcode_b);
        Py_DECREF(score_b);
        Py_DECREF(doff_b);
        Py_DECREF(ddata_b);
        if (failed == 2) return PyErr_NoMemory();
        Py_RETURN_NONE;
    }
    PyObject *topics = PyList_New((Py_ssize_t)tp.n);
    for (size_t i = 0; topics && i < tp.n; i++) {
        PyObject *s = PyUnicode_DecodeASCII((const char *)tp.keys + tp.koff[i],
                                            (Py_ssize_t)(tp.koff[i + 1] - tp.koff[i]), "strict");
        if (!s) {
            Py_CLEAR(topics);
            break;
        }
        PyList_SET_ITEM(topics, (Py_ssize_t)i, s);
    }
    topics_free(&tp);
    if (!topics || _PyBytes_Resize(&qcode_b, (Py_ssize_t)(n * 4)) < 0 ||
        _PyBytes_Resize(&score_b, (Py_ssize_t)(n * 8)) < 0 ||
        _PyBytes_Resize(&doff_b, (Py_ssize_t)((n + 1) * 4)) < 0 ||
        _PyBytes_Resize(&ddata_b, (Py_ssize_t)(dlen ? dlen : 1)) < 0) {
        Py_XDECREF(topics);
        Py_XDECREF(qcode_b);
        Py_XDECREF(score_b);
        Py_XDECREF(doff_b);
        Py_XDECREF(ddata_b);
        return NULL;
    }
    return Py_BuildValue("(nNNNNNs#Nn)", (Py_ssize_t)n, topics, qcode_b, ddata_b, doff_b, score_b,
                         runid, (Py_ssize_t)runid_len, PyBool_FromLong(grouped),
                         (Py_ssize_t)(grouped ? dup_row : -2));
}

static PyMethodDef methods[] = {
    {"scan_run", scan_run, METH_VARARGS,
     "scan_run(path, comments) -> (n, topics, qcode, docno_data, docno_offsets, score, runid, "
     "grouped, duplicate_row) or None when the file needs the general readers.\n"
     "duplicate_row: -1 none, -2 not checked (file not grouped by topic), else a row repeating "
     "an earlier (topic, docno)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan",
                                    "One-pass scanner for TREC run files.", -1, methods};

PyMODINIT_FUNC PyInit__scan(void) { return PyModule_Create(&module); }
