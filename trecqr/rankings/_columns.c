/* Run columns to trec_eval rankings, in one pass: the columns ranker.
 *
 * rank_columns(topic, topic_pos, score, float32, doc_offsets, doc_data,
 *              q_pos, q_offsets, q_data, q_grade, max_docs, judged_only, rel, counts)
 *   topic:      int32[n], each row's run topic (0 .. R-1, R = len(topic_pos))
 *   topic_pos:  int32[R], each run topic's place among the evaluated topics, -1 if it is not
 *               evaluated (its rows are only checked for duplicates)
 *   score:      float64[n]
 *   doc_*:      the run's docnos as an Arrow string column: offsets (int32 or int64, n + 1)
 *               into the bytes of doc_data
 *   q_pos:      int32[m], each judgment's evaluated topic, -1 if none
 *   q_*:        the judgments' docnos (as doc_*) and grades (int64[m]); no (topic, docno)
 *               twice (the caller checked)
 *   rel:        writable int32[n] or int64[n] (its size says which): the grades in ranked
 *               order, evaluated topic after evaluated topic; -1 (NONPOOL) for a document not
 *               in the topic's qrels, -2 (UNJUDGED) for a negative grade
 *   counts:     writable int64[E], zeroed: each evaluated topic's ranking length
 * returns the number of grades written, or (row, row) for the first docno a topic retrieves
 * twice (the first topic in topic-code order that does, the pair whose second row comes
 * first).
 *
 * The order is trec_eval's (_trec_order.h): score descending (rounded to a C float when
 * float32, as trec_eval 9.0.8 stores it), ties by docno descending, byte-wise as strcmp; the
 * first max_docs documents are kept (-M), then unjudged ones dropped when judged_only (-J).
 * Rows are grouped by topic with a counting sort; each topic's docnos go into a hash set, which
 * finds a repeated docno and, looked up with the topic's judged docnos, each judged
 * document's row. Everything runs without the GIL.
 *
 * Two parts are included once below: _columns_strings.h (Arrow string columns read in place)
 * and _columns_topics.h (topic_codes).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_trec_order.h"
#include "_columns_strings.h"

#define NONPOOL (-1)
#define UNJUDGED (-2)

typedef struct {
    uint64_t key;  /* ascending key == trec_eval's order of scores */
    uint32_t idx;  /* the document's index within its topic */
} Row;

/* a before b among equal keys: docno descending */
#define ROW_BEFORE(ctx, a, b) (doc_cmp(((const Doc *)(ctx))[(a)->idx], \
                                       ((const Doc *)(ctx))[(b)->idx]) > 0)
TREC_ORDER_SORT(sort_rows, Row, ROW_BEFORE)

/* The ascending 32-bit key of a C float: trec_eval 9.0.8's order of scores. */
static inline uint32_t order_key32(float f) {
    uint32_t bits;
    if (f == 0.0f) f = 0.0f;  /* -0.0 ties with 0.0 */
    memcpy(&bits, &f, sizeof bits);
    bits = (bits & 0x80000000U) ? ~bits : (bits | 0x80000000U);
    return ~bits;
}

/* Under 9.0.8 (float keys) a document is one uint64: key << 32 | index, sorted by an LSD
 * radix sort on the key's four bytes (the index bytes start ascending: stable), the four
 * histograms counted in one pass; then ties by docno descending. Half the bytes of Row. */
static void sort_packed(uint64_t *v, uint64_t *tmp, Py_ssize_t n, const Doc *docs) {
    if (n < 2) return;
    if (n <= 32) {
        for (Py_ssize_t i = 1; i < n; i++) {
            uint64_t x = v[i];
            Py_ssize_t j = i - 1;
            while (j >= 0 && ((x >> 32) < (v[j] >> 32) || ((x >> 32) == (v[j] >> 32)
                       && doc_cmp(docs[(uint32_t)x], docs[(uint32_t)v[j]]) > 0))) {
                v[j + 1] = v[j];
                j--;
            }
            v[j + 1] = x;
        }
        return;
    }
    uint32_t count[4][256];
    memset(count, 0, sizeof count);
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t k = v[i] >> 32;
        count[0][k & 0xFF]++;
        count[1][(k >> 8) & 0xFF]++;
        count[2][(k >> 16) & 0xFF]++;
        count[3][k >> 24]++;
    }
    uint64_t *src = v, *dst = tmp;
    for (int b = 0; b < 4; b++) {
        int shift = 32 + 8 * b;
        if (count[b][(src[0] >> shift) & 0xFF] == (uint32_t)n) continue;  /* one byte value */
        uint32_t at[256], sum = 0;
        for (int c = 0; c < 256; c++) { at[c] = sum; sum += count[b][c]; }
        for (Py_ssize_t i = 0; i < n; i++) dst[at[(src[i] >> shift) & 0xFF]++] = src[i];
        uint64_t *t = src; src = dst; dst = t;
    }
    if (src != v) memcpy(v, src, n * sizeof(uint64_t));
    Py_ssize_t i = 0;  /* ties: runs of equal keys, docno descending */
    while (i < n) {
        Py_ssize_t j = i + 1;
        while (j < n && (v[j] >> 32) == (v[i] >> 32)) j++;
        for (Py_ssize_t a = i + 1; a < j; a++) {
            uint64_t x = v[a];
            Py_ssize_t b = a - 1;
            while (b >= i && doc_cmp(docs[(uint32_t)x], docs[(uint32_t)v[b]]) > 0) {
                v[b + 1] = v[b];
                b--;
            }
            v[b + 1] = x;
        }
        i = j;
    }
}

/* Rows (indices) grouped by a code in [0, k): a stable counting sort. start: k + 1. */
static void group_rows(const int32_t *code, Py_ssize_t n, Py_ssize_t k, int64_t *start,
                       uint32_t *rows) {
    memset(start, 0, (k + 1) * sizeof(int64_t));
    for (Py_ssize_t i = 0; i < n; i++) start[code[i] + 1]++;
    for (Py_ssize_t t = 0; t < k; t++) start[t + 1] += start[t];
    for (Py_ssize_t i = 0; i < n; i++) rows[start[code[i]]++] = (uint32_t)i;
    for (Py_ssize_t t = k; t > 0; t--) start[t] = start[t - 1];
    start[0] = 0;
}

typedef struct {  /* the scratch of one topic, sized for the longest */
    Doc *docs;
    uint64_t *hashes;
    uint32_t *slots;  /* hash set of the topic's docnos: 1 + index, 0 empty */
    Row *sorted, *tmp;        /* 10.0: double keys */
    uint64_t *packed, *ptmp;  /* 9.0.8: float keys */
    int64_t *grades;
} Scratch;

static void scratch_free(Scratch *s) {
    free(s->docs); free(s->hashes); free(s->slots); free(s->sorted); free(s->tmp);
    free(s->packed); free(s->ptmp); free(s->grades);
}

static int scratch_alloc(Scratch *s, Py_ssize_t longest, size_t nslots, int float32) {
    size_t n = longest ? (size_t)longest : 1;
    s->docs = malloc(n * sizeof(Doc));
    s->hashes = malloc(n * sizeof(uint64_t));
    s->slots = malloc(nslots * sizeof(uint32_t));
    s->grades = malloc(n * sizeof(int64_t));
    if (float32) {
        s->packed = malloc(n * sizeof(uint64_t));
        s->ptmp = malloc(n * sizeof(uint64_t));
    } else {
        s->sorted = malloc(n * sizeof(Row));
        s->tmp = malloc(n * sizeof(Row));
    }
    return s->docs && s->hashes && s->slots && s->grades
        && (float32 ? s->packed && s->ptmp : s->sorted && s->tmp) ? 0 : -1;
}

/* The index of docno d in the topic's hash set, or -1. */
static inline Py_ssize_t find(const Scratch *s, size_t mask, Doc d, uint64_t h) {
    for (size_t at = h & mask; s->slots[at]; at = (at + 1) & mask) {
        uint32_t j = s->slots[at] - 1;
        if (s->hashes[j] == h && doc_eq(s->docs[j], d)) return j;
    }
    return -1;
}

typedef struct {
    Py_ssize_t n, m, ntopics, nevaluated;
    const int32_t *topic, *topic_pos, *q_pos;
    const double *score;
    const int64_t *q_grade;
    Strings docs, qdocs;
    int float32, judged_only, wide;
    long long max_docs;
    void *rel;
    int64_t *counts;
} Job;

/* The rankings of every evaluated topic into job->rel. Returns the grades written, -1 when
 * out of memory, -2 on a repeated docno (its rows in dup[0], dup[1]). */
static int64_t rank_all(const Job *job, Py_ssize_t dup[2]) {
    Py_ssize_t n = job->n, R = job->ntopics, E = job->nevaluated;
    int64_t *start = malloc((R + 1) * sizeof(int64_t));
    int64_t *qstart = malloc((E + 2) * sizeof(int64_t));
    int64_t *out_at = malloc((E + 1) * sizeof(int64_t));
    uint32_t *qrows = malloc((job->m ? job->m : 1) * sizeof(uint32_t));
    int32_t *qcode = calloc(job->m ? job->m : 1, sizeof(int32_t));
    uint32_t *rows = NULL;  /* rows by topic; NULL: the topics are in blocks, in code order */
    Scratch s = {0};
    int64_t result = -1;
    if (!start || !qstart || !out_at || !qrows || !qcode) goto done;

    int grouped = 1;
    for (Py_ssize_t i = 1; i < n && grouped; i++) grouped = job->topic[i] >= job->topic[i - 1];
    if (grouped) {
        memset(start, 0, (R + 1) * sizeof(int64_t));
        for (Py_ssize_t i = 0; i < n; i++) start[job->topic[i] + 1]++;
        for (Py_ssize_t t = 0; t < R; t++) start[t + 1] += start[t];
    } else {
        rows = malloc((n ? n : 1) * sizeof(uint32_t));
        if (!rows) goto done;
        group_rows(job->topic, n, R, start, rows);
    }
    /* judgments of topics not evaluated go to an extra group E, never read */
    for (Py_ssize_t i = 0; i < job->m; i++)
        qcode[i] = job->q_pos[i] < 0 ? (int32_t)E : job->q_pos[i];
    group_rows(qcode, job->m, E + 1, qstart, qrows);

    /* where each evaluated topic's ranking goes (before -J), and the longest topic */
    Py_ssize_t longest = 0;
    memset(out_at, 0, (E + 1) * sizeof(int64_t));
    for (Py_ssize_t t = 0; t < R; t++) {
        int64_t len = start[t + 1] - start[t];
        if (len > longest) longest = len;
        int32_t p = job->topic_pos[t];
        if (p >= 0) out_at[p + 1] = len < job->max_docs ? len : job->max_docs;
    }
    for (Py_ssize_t p = 0; p < E; p++) out_at[p + 1] += out_at[p];
    size_t nslots = 16;
    while (nslots < 2 * (size_t)longest) nslots *= 2;
    if (scratch_alloc(&s, longest, nslots, job->float32) < 0) goto done;

    for (Py_ssize_t t = 0; t < R; t++) {
        Py_ssize_t len = start[t + 1] - start[t];
        const uint32_t *trows = rows ? rows + start[t] : NULL;
        uint32_t first = (uint32_t)start[t];
        size_t cap = 16;
        while (cap < 2 * (size_t)len) cap *= 2;
        size_t mask = cap - 1;
        memset(s.slots, 0, cap * sizeof(uint32_t));
        for (Py_ssize_t i = 0; i < len; i++) {
            Doc d = doc_at(&job->docs, trows ? trows[i] : first + i);
            s.docs[i] = d;
            s.hashes[i] = doc_hash(d, job->docs.end);
        }
        for (Py_ssize_t i = 0; i < len; i++) {
            uint64_t h = s.hashes[i];
            size_t at = h & mask;
            for (; s.slots[at]; at = (at + 1) & mask) {
                uint32_t j = s.slots[at] - 1;
                if (s.hashes[j] == h && doc_eq(s.docs[j], s.docs[i])) {
                    dup[0] = trows ? trows[j] : first + j;
                    dup[1] = trows ? trows[i] : first + i;
                    result = -2;
                    goto done;
                }
            }
            s.slots[at] = (uint32_t)i + 1;
        }
        int32_t p = job->topic_pos[t];
        if (p < 0) continue;
        const double *score = job->score + (trows ? 0 : first);
        if (job->float32) {
            for (Py_ssize_t i = 0; i < len; i++)
                s.packed[i] = (uint64_t)order_key32((float)score[trows ? trows[i] : i]) << 32
                              | (uint32_t)i;
            sort_packed(s.packed, s.ptmp, len, s.docs);
        } else {
            for (Py_ssize_t i = 0; i < len; i++) {
                s.sorted[i].key = order_key(score[trows ? trows[i] : i]);
                s.sorted[i].idx = (uint32_t)i;
            }
            sort_rows(s.sorted, s.tmp, len, s.docs);
        }
        for (Py_ssize_t i = 0; i < len; i++) s.grades[i] = NONPOOL;
        for (int64_t k = qstart[p]; k < qstart[p + 1]; k++) {
            Doc d = doc_at(&job->qdocs, qrows[k]);
            Py_ssize_t j = find(&s, mask, d, doc_hash(d, job->qdocs.end));
            if (j >= 0) {
                int64_t g = job->q_grade[qrows[k]];
                s.grades[j] = g < 0 ? UNJUDGED : g;
            }
        }
        int64_t keep = out_at[p + 1] - out_at[p], w = 0;
        for (int64_t r = 0; r < keep; r++) {
            int64_t g = s.grades[job->float32 ? (uint32_t)s.packed[r] : s.sorted[r].idx];
            if (job->judged_only && g < 0) continue;
            if (job->wide) ((int64_t *)job->rel)[out_at[p] + w] = g;
            else ((int32_t *)job->rel)[out_at[p] + w] = (int32_t)g;
            w++;
        }
        job->counts[p] = w;
    }
    /* -J may have left gaps: close them, topic after topic */
    size_t item = job->wide ? sizeof(int64_t) : sizeof(int32_t);
    int64_t written = 0;
    for (Py_ssize_t p = 0; p < E; p++) {
        if (written != out_at[p])
            memmove((char *)job->rel + written * item, (char *)job->rel + out_at[p] * item,
                    job->counts[p] * item);
        written += job->counts[p];
    }
    result = written;
done:
    free(start); free(qstart); free(out_at); free(rows); free(qrows); free(qcode);
    scratch_free(&s);
    return result;
}

/* The number of items of a buffer of `width`-byte items, or -1 with ValueError set. */
static Py_ssize_t items(const Py_buffer *b, Py_ssize_t width, const char *what) {
    if (b->len % width) {
        PyErr_Format(PyExc_ValueError, "rank_columns: %s is not of %zd-byte items", what, width);
        return -1;
    }
    return b->len / width;
}

static int offsets_width(const Py_buffer *b, Py_ssize_t n, int *wide) {
    if (b->len == 4 * (n + 1)) { *wide = 0; return 0; }
    if (b->len == 8 * (n + 1)) { *wide = 1; return 0; }
    PyErr_SetString(PyExc_ValueError, "rank_columns: offsets are not n + 1 int32 or int64");
    return -1;
}

static PyObject *rank_columns(PyObject *self, PyObject *args) {
    Py_buffer topic, topic_pos, score, doffs, ddata, qpos, qoffs, qdata, qgrade, rel, counts;
    Job job = {0};
    if (!PyArg_ParseTuple(args, "y*y*y*py*y*y*y*y*y*Lpw*w*", &topic, &topic_pos, &score,
                          &job.float32, &doffs, &ddata, &qpos, &qoffs, &qdata, &qgrade,
                          &job.max_docs, &job.judged_only, &rel, &counts))
        return NULL;
    PyObject *out = NULL;
    job.n = items(&score, 8, "score");
    job.m = items(&qgrade, 8, "q_grade");
    job.ntopics = items(&topic_pos, 4, "topic_pos");
    job.nevaluated = items(&counts, 8, "counts");
    if (job.n < 0 || job.m < 0 || job.ntopics < 0 || job.nevaluated < 0) goto release;
    if (job.n >= (Py_ssize_t)UINT32_MAX || items(&topic, 4, "topic") != job.n
            || items(&qpos, 4, "q_pos") != job.m) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "rank_columns: columns of different lengths");
        goto release;
    }
    if (offsets_width(&doffs, job.n, &job.docs.wide) < 0
            || offsets_width(&qoffs, job.m, &job.qdocs.wide) < 0)
        goto release;
    if (rel.len == 8 * job.n && job.n) job.wide = 1;
    else if (rel.len != 4 * job.n) {
        PyErr_SetString(PyExc_ValueError, "rank_columns: rel is not n int32 or int64");
        goto release;
    }
    job.topic = topic.buf;
    job.topic_pos = topic_pos.buf;
    job.q_pos = qpos.buf;
    job.score = score.buf;
    job.q_grade = qgrade.buf;
    job.docs.data = ddata.buf;
    job.docs.end = (const char *)ddata.buf + ddata.len;
    job.docs.offsets = doffs.buf;
    job.qdocs.data = qdata.buf;
    job.qdocs.end = (const char *)qdata.buf + qdata.len;
    job.qdocs.offsets = qoffs.buf;
    job.rel = rel.buf;
    job.counts = counts.buf;
    if (job.max_docs < 0) job.max_docs = 0;
    for (Py_ssize_t i = 0; i < job.n; i++)
        if (job.topic[i] < 0 || job.topic[i] >= job.ntopics) {
            PyErr_SetString(PyExc_ValueError, "rank_columns: a topic code out of range");
            goto release;
        }
    for (Py_ssize_t t = 0; t < job.ntopics; t++)
        if (job.topic_pos[t] >= job.nevaluated) {
            PyErr_SetString(PyExc_ValueError, "rank_columns: a topic position out of range");
            goto release;
        }
    for (Py_ssize_t i = 0; i < job.m; i++)
        if (job.q_pos[i] >= job.nevaluated) {
            PyErr_SetString(PyExc_ValueError, "rank_columns: a judgment's topic out of range");
            goto release;
        }
    memset(job.counts, 0, job.nevaluated * sizeof(int64_t));
    Py_ssize_t dup[2] = {0, 0};
    int64_t written;
    Py_BEGIN_ALLOW_THREADS
    written = rank_all(&job, dup);
    Py_END_ALLOW_THREADS
    if (written == -1) PyErr_NoMemory();
    else if (written == -2) out = Py_BuildValue("(nn)", dup[0], dup[1]);
    else out = PyLong_FromLongLong(written);
release:
    PyBuffer_Release(&topic); PyBuffer_Release(&topic_pos); PyBuffer_Release(&score);
    PyBuffer_Release(&doffs); PyBuffer_Release(&ddata); PyBuffer_Release(&qpos);
    PyBuffer_Release(&qoffs); PyBuffer_Release(&qdata); PyBuffer_Release(&qgrade);
    PyBuffer_Release(&rel); PyBuffer_Release(&counts);
    return out;
}

#include "_columns_topics.h"

static PyMethodDef methods[] = {
    {"rank_columns", rank_columns, METH_VARARGS,
     "rank_columns(topic, topic_pos, score, float32, doc_offsets, doc_data, q_pos, q_offsets, "
     "q_data, q_grade, max_docs, judged_only, rel, counts) -> written or (row, row)"},
    {"topic_codes", topic_codes, METH_VARARGS,
     "topic_codes(offsets, data, codes) -> the distinct qids, codes filled"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_columns",
                                    "run columns to trec_eval rankings", -1, methods};

PyMODINIT_FUNC PyInit__columns(void) { return PyModule_Create(&module); }
