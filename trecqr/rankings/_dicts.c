/* pytrec_eval-style dicts to trec_eval rankings, in one pass over the dicts.
 *
 * rank_run(run, qrels, float32, judged_only, max_docs, wide[, finite])
 *   run:   {qid: {docno: score}}  (score: float, int, or any number with __float__)
 *   qrels: {qid: {docno: grade}}  (already validated; only topics with judgments)
 * returns (topics, offsets, rel):
 *   topics:  the run's qids that are in qrels, in the run dict's order
 *   offsets: bytearray of int64, len(topics) + 1, into rel
 *   rel:     bytearray of int32 (int64 when wide) grades in trec_eval's ranked order:
 *            -1 (NONPOOL) for a document not in the topic's qrels, -2 (UNJUDGED) for a
 *            negative grade
 *
 * The order is trec_eval's: score descending (rounded to a C float when float32, as
 * trec_eval 9.0.8 stores it), ties broken by docno descending (strcmp's order of the UTF-8
 * bytes, compared whole, as _columns.c compares them); the first max_docs
 * documents are kept (-M), then unjudged ones are dropped when judged_only (-J).
 *
 * Every topic of the run is validated as pytrec_eval validates it, judged or not: keys must be
 * str, values dicts of str to numbers; anything else raises TypeError("Unable to extract
 * query/object scores."). A NaN score raises ValueError (its rank would be undefined); so
 * does an infinite one when finite is true (trecqr.evaluate's rule for runs), and so does a
 * qid or docno that has no UTF-8 form (a lone surrogate; pytrec_eval 0.5 crashes on it):
 * the columns cannot hold it, so no route gives it a value.
 *
 * Grades are found from the smaller side: a topic with fewer judgments than retrieved
 * documents looks each judged docno up in the run's dict and binary-searches its rank; a topic
 * with more looks each retrieved docno up in the qrels' dict.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#include "_trec_order.h"
#include "_dict_measures.h"

#define NONPOOL (-1)
#define UNJUDGED (-2)

typedef struct {
    uint64_t key;      /* ascending key == trec_eval's order of scores */
    PyObject *doc;     /* borrowed: the run dict holds it */
} Entry;

/* strcmp's order of two docnos' UTF-8 bytes (cached in the str objects; ASCII: their data),
   compared whole, as _columns.c compares them: a docno with a NUL is not cut there, so the
   dicts and the columns rank it alike */
static int doc_cmp(PyObject *a, PyObject *b) {
    Py_ssize_t la, lb;
    const char *pa = PyUnicode_AsUTF8AndSize(a, &la), *pb = PyUnicode_AsUTF8AndSize(b, &lb);
    int c = memcmp(pa, pb, (size_t)(la < lb ? la : lb));
    return c ? c : (la > lb) - (la < lb);
}

static inline int entry_cmp(const Entry *a, const Entry *b) {
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return -doc_cmp(a->doc, b->doc);  /* docno descending */
}

/* a before b among equal keys: docno descending */
#define DOC_BEFORE(ctx, a, b) (doc_cmp((a)->doc, (b)->doc) > 0)
TREC_ORDER_SORT(sort_entries, Entry, DOC_BEFORE)

static int score_of(PyObject *value, double *out) {
    if (PyFloat_CheckExact(value) || PyFloat_Check(value)) {
        *out = PyFloat_AS_DOUBLE(value);
        return 0;
    }
    if (PyLong_Check(value)) {
        *out = PyLong_AsDouble(value);
        return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
    }
    PyNumberMethods *nb = Py_TYPE(value)->tp_as_number;
    if (nb != NULL && nb->nb_float != NULL && !PyUnicode_Check(value)) {  /* numpy scalars */
        *out = PyFloat_AsDouble(value);
        return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
    }
    return -1;
}

static PyObject *bad_run(void) {
    PyErr_Clear();
    PyErr_SetString(PyExc_TypeError, "Unable to extract query/object scores.");
    return NULL;
}

/* A growable byte buffer (rel grades, offsets). */
typedef struct { char *data; size_t len, cap; } Buf;

/* The per-topic buffers (entries, their sort's scratch, grades) for n documents: -1 when
   memory runs out. Shared by rank_run and dict_values. */
static int grow(Entry **entries, Entry **tmp, int64_t **grades, Py_ssize_t *cap, Py_ssize_t n) {
    *cap = n;
    PyMem_Free(*entries); PyMem_Free(*tmp); PyMem_Free(*grades);
    *entries = PyMem_Malloc(n * sizeof(Entry));
    *tmp = PyMem_Malloc(n * sizeof(Entry));
    *grades = PyMem_Malloc(n * sizeof(int64_t));
    return (*entries && *tmp && *grades) ? 0 : -1;
}

/* Validate every document of one topic's run dict (a str docno, a finite number); when
   entries is not NULL (the topic is judged), keep each document with its order key there.
   -1 with an exception set on a bad document. Shared by rank_run and dict_values. */
static int read_topic(PyObject *qid, PyObject *docs, Entry *entries, int float32, int finite) {
    Py_ssize_t ipos = 0, i = 0;
    PyObject *doc, *value;
    double s;
    if (PyUnicode_AsUTF8AndSize(qid, NULL) == NULL) {  /* as a docno below */
        PyErr_Format(PyExc_ValueError,
                     "query %R: the query id is not valid Unicode text (a lone surrogate); "
                     "give query ids that encode as UTF-8", qid);
        return -1;
    }
    while (PyDict_Next(docs, &ipos, &doc, &value)) {
        if (!PyUnicode_Check(doc) || score_of(value, &s) < 0) { bad_run(); return -1; }
        if (PyUnicode_AsUTF8AndSize(doc, NULL) == NULL) {  /* doc_cmp reads the UTF-8 */
            PyErr_Format(PyExc_ValueError,
                         "query %R doc %R: the docno is not valid Unicode text (a lone "
                         "surrogate); give docnos that encode as UTF-8", qid, doc);
            return -1;
        }
        if (isnan(s)) {
            PyErr_Format(PyExc_ValueError,
                         "query %R doc %R: score is NaN (pytrec_eval's ranking of NaN "
                         "scores is undefined)", qid, doc);
            return -1;
        }
        if (finite && isinf(s)) {
            PyErr_Format(PyExc_ValueError, "query %R doc %R: score is infinite", qid, doc);
            return -1;
        }
        if (entries != NULL) {
            entries[i].key = order_key(rounded(s, float32));
            entries[i].doc = doc;
            i++;
        }
    }
    return 0;
}

static int buf_reserve(Buf *b, size_t more) {
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    char *d = PyMem_Realloc(b->data, cap);
    if (d == NULL) return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

/* A judgment's grade as a 64-bit integer, as every other route reads it (a C long would be
   32 bits on Windows); one out of that range is named (pytrec_eval fails with a SystemError). */
static int read_grade(PyObject *qid, PyObject *doc, PyObject *grade, int64_t *out) {
    long long g = PyLong_AsLongLong(grade);
    if (g == -1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "query %R doc %R: grade %R is out of the 64-bit "
                         "integer range", qid, doc, grade);
        }
        return -1;
    }
    *out = g;
    return 0;
}

static int grade_at(PyObject *qid, PyObject *doc, PyObject *grade, int64_t *out) {
    if (read_grade(qid, doc, grade, out) < 0) return -1;
    if (*out < 0) *out = UNJUDGED;
    return 0;
}

/* grades[0..keep) of a judged topic whose n retrieved documents are sorted in entries: each
   document's grade (grade_at), NONPOOL where the topic's qrels do not judge it. Found from
   the smaller side: with fewer judgments than kept documents, each judged docno is looked up
   in the run's dict and its rank binary-searched; else each kept document is looked up in
   the qrels' dict. Shared by rank_run and dict_values. */
static int grade_ranking(PyObject *qid, PyObject *docs, PyObject *judged, const Entry *entries,
                         Py_ssize_t n, Py_ssize_t keep, int float32, int64_t *grades) {
    for (Py_ssize_t r = 0; r < keep; r++) grades[r] = NONPOOL;
    PyObject *doc, *grade;
    if (PyDict_GET_SIZE(judged) < keep) {
        Py_ssize_t jpos = 0;
        while (PyDict_Next(judged, &jpos, &doc, &grade)) {
            PyObject *v = PyDict_GetItemWithError(docs, doc);
            if (v == NULL) {
                if (PyErr_Occurred()) return -1;
                continue;
            }
            double s;
            score_of(v, &s);  /* read_topic checked it */
            Entry probe = {order_key(rounded(s, float32)), doc};
            Py_ssize_t lo = 0, hi = n;  /* the entry equal to probe */
            while (lo < hi) {
                Py_ssize_t m = (lo + hi) / 2;
                if (entry_cmp(&entries[m], &probe) < 0) lo = m + 1; else hi = m;
            }
            if (lo < keep && grade_at(qid, doc, grade, &grades[lo]) < 0) return -1;
        }
        return 0;
    }
    for (Py_ssize_t r = 0; r < keep; r++) {
        grade = PyDict_GetItemWithError(judged, entries[r].doc);
        if (grade == NULL) {
            if (PyErr_Occurred()) return -1;
            continue;
        }
        if (grade_at(qid, entries[r].doc, grade, &grades[r]) < 0) return -1;
    }
    return 0;
}

static PyObject *rank_run(PyObject *self, PyObject *args) {
    PyObject *run, *qrels;
    int float32, judged_only, wide, finite = 0;
    long long max_docs;
    if (!PyArg_ParseTuple(args, "O!O!ppLp|p", &PyDict_Type, &run, &PyDict_Type, &qrels,
                          &float32, &judged_only, &max_docs, &wide, &finite))
        return NULL;
    if (max_docs < 0) max_docs = 0;
    size_t item = wide ? sizeof(int64_t) : sizeof(int32_t);

    PyObject *topics = PyList_New(0);
    Buf rel = {0}, off = {0};
    Entry *entries = NULL, *tmp = NULL;
    int64_t *grades = NULL;
    Py_ssize_t cap = 0;
    int64_t written = 0;
    if (topics == NULL || buf_reserve(&off, sizeof(int64_t)) < 0) goto nomem;
    ((int64_t *)off.data)[0] = 0;
    off.len = sizeof(int64_t);

    Py_ssize_t pos = 0;
    PyObject *qid, *docs;
    while (PyDict_Next(run, &pos, &qid, &docs)) {
        if (!PyUnicode_Check(qid) || !PyDict_Check(docs)) { bad_run(); goto fail; }
        PyObject *judged = PyDict_GetItemWithError(qrels, qid);
        if (judged == NULL && PyErr_Occurred()) goto fail;
        Py_ssize_t n = PyDict_GET_SIZE(docs);
        if (judged != NULL && n > cap && grow(&entries, &tmp, &grades, &cap, n) < 0) goto nomem;
        if (read_topic(qid, docs, judged != NULL ? entries : NULL, float32, finite) < 0)
            goto fail;
        if (judged == NULL) continue;
        if (PyList_Append(topics, qid) < 0) goto fail;
        sort_entries(entries, tmp, n, NULL);
        Py_ssize_t keep = n < max_docs ? n : (Py_ssize_t)max_docs;
        if (grade_ranking(qid, docs, judged, entries, n, keep, float32, grades) < 0) goto fail;
        if (buf_reserve(&rel, keep * item) < 0 || buf_reserve(&off, sizeof(int64_t)) < 0)
            goto nomem;
        for (Py_ssize_t r = 0; r < keep; r++) {
            if (judged_only && grades[r] < 0) continue;
            if (wide) ((int64_t *)rel.data)[written] = grades[r];
            else ((int32_t *)rel.data)[written] = (int32_t)grades[r];
            written++;
        }
        rel.len = written * item;
        ((int64_t *)off.data)[off.len / sizeof(int64_t)] = written;
        off.len += sizeof(int64_t);
    }
    PyMem_Free(entries); PyMem_Free(tmp); PyMem_Free(grades);
    PyObject *offsets = PyByteArray_FromStringAndSize(off.data, off.len);
    PyObject *ranked = PyByteArray_FromStringAndSize(rel.data, rel.len);
    PyMem_Free(off.data); PyMem_Free(rel.data);
    if (offsets == NULL || ranked == NULL) {
        Py_XDECREF(offsets); Py_XDECREF(ranked); Py_DECREF(topics);
        return NULL;
    }
    return Py_BuildValue("(NNN)", topics, offsets, ranked);

nomem:
    PyErr_NoMemory();
fail:
    PyMem_Free(entries); PyMem_Free(tmp); PyMem_Free(grades);
    PyMem_Free(off.data); PyMem_Free(rel.data);
    Py_XDECREF(topics);
    return NULL;
}

/* ---------------------------------------------------------------------------------------
 * dict_values(run, qrels, float32, specs[, finite]) -> {qid: {key: value}}
 *
 * pytrec_eval's evaluate for the measures most runs ask for, in C: each topic ranked once, as
 * rank_run ranks it, then per spec (key, code, k, level, judged_only, x, xs) one value, computed
 * by _dict_measures.h with trec_eval's loops (the same operations, in the same order, as
 * trecqr's numpy measures, so bit for bit the same doubles). level: the relevance level
 * (>= 1); judged_only: -J (the unjudged documents left out of the ranking). Topics: the run's
 * topics that have judgments, in the run dict's order (an empty dict is an empty ranking). No
 * arrays, no numpy: what makes small inputs as fast as pytrec_eval.
 */
static int cmp_desc_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? 1 : (x > y ? -1 : 0);
}

static void free_specs(Spec *sp, Py_ssize_t nspec) {
    if (sp == NULL) return;
    for (Py_ssize_t j = 0; j < nspec; j++) PyMem_Free(sp[j].xs);
    PyMem_Free(sp);
}

static PyObject *dict_values(PyObject *self, PyObject *args) {
    PyObject *run, *qrels, *specs;
    int float32, finite = 0;
    if (!PyArg_ParseTuple(args, "O!O!pO!|p", &PyDict_Type, &run, &PyDict_Type, &qrels,
                          &float32, &PyTuple_Type, &specs, &finite))
        return NULL;
    Py_ssize_t nspec = PyTuple_GET_SIZE(specs);
    Spec *sp = PyMem_Malloc((nspec + 1) * sizeof(Spec));
    PyObject *out = PyDict_New();
    Entry *entries = NULL, *tmp = NULL;
    int64_t *grades = NULL, *ideal = NULL, *jgrades = NULL, *judged_ranked = NULL;
    Py_ssize_t cap = 0, icap = 0;
    int any_judged_only = 0;
    for (Py_ssize_t j = 0; sp != NULL && j < nspec; j++) sp[j].xs = NULL;
    if (!sp || !out) goto nomem;
    for (Py_ssize_t j = 0; j < nspec; j++) {
        PyObject *xs;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(specs, j), "UiLLpdO!", &sp[j].key, &sp[j].code,
                              &sp[j].k, &sp[j].level, &sp[j].judged_only, &sp[j].x,
                              &PyTuple_Type, &xs))
            goto fail;
        any_judged_only |= sp[j].judged_only;
        sp[j].nxs = PyTuple_GET_SIZE(xs);
        if ((sp[j].xs = PyMem_Malloc((sp[j].nxs + 1) * sizeof(double))) == NULL) goto nomem;
        for (Py_ssize_t i = 0; i < sp[j].nxs; i++) {
            sp[j].xs[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(xs, i));
            if (sp[j].xs[i] == -1.0 && PyErr_Occurred()) goto fail;
        }
    }
    Py_ssize_t pos = 0;
    PyObject *qid, *docs;
    while (PyDict_Next(run, &pos, &qid, &docs)) {
        if (!PyUnicode_Check(qid) || !PyDict_Check(docs)) { bad_run(); goto fail; }
        PyObject *judged = PyDict_GetItemWithError(qrels, qid);
        if (judged == NULL && PyErr_Occurred()) goto fail;
        Py_ssize_t n = PyDict_GET_SIZE(docs);
        if (judged != NULL && n > cap) {
            PyMem_Free(judged_ranked);
            judged_ranked = NULL;
            if (grow(&entries, &tmp, &grades, &cap, n) < 0 ||
                (judged_ranked = PyMem_Malloc(n * sizeof(int64_t))) == NULL)
                goto nomem;
        }
        if (read_topic(qid, docs, judged != NULL ? entries : NULL, float32, finite) < 0)
            goto fail;
        if (judged == NULL) continue;
        sort_entries(entries, tmp, n, NULL);
        if (grade_ranking(qid, docs, judged, entries, n, n, float32, grades) < 0) goto fail;
        /* -J's ranking, when a spec asks for it: the judged documents only */
        Py_ssize_t n_judged_ranked = 0;
        for (Py_ssize_t r = 0; any_judged_only && r < n; r++)
            if (grades[r] >= 0) judged_ranked[n_judged_ranked++] = grades[r];
        /* the topic's judgments: grades, and the positive ones (the ideal ranking) */
        Py_ssize_t nj = PyDict_GET_SIZE(judged), npos = 0, jn = 0;
        if (nj > icap) {
            icap = nj;
            PyMem_Free(ideal); PyMem_Free(jgrades);
            ideal = PyMem_Malloc(icap * sizeof(int64_t));
            jgrades = PyMem_Malloc(icap * sizeof(int64_t));
            if (!ideal || !jgrades) goto nomem;
        }
        Py_ssize_t jpos = 0;
        PyObject *jdoc, *jgrade;
        while (PyDict_Next(judged, &jpos, &jdoc, &jgrade)) {
            int64_t g;
            if (read_grade(qid, jdoc, jgrade, &g) < 0) goto fail;
            jgrades[jn++] = g;
            if (g > 0) ideal[npos++] = g;
        }
        qsort(ideal, npos, sizeof(int64_t), cmp_desc_i64);
        Topic all = {grades, n, jgrades, ideal, jn, npos};
        Topic judged_only = {judged_ranked, n_judged_ranked, jgrades, ideal, jn, npos};
        PyObject *row = PyDict_New();
        if (row == NULL || PyDict_SetItem(out, qid, row) < 0) { Py_XDECREF(row); goto fail; }
        Py_DECREF(row);
        long long counted_level = 0, num_rel = 0;  /* levels are >= 1: 0 is none yet */
        for (Py_ssize_t j = 0; j < nspec; j++) {
            if (sp[j].level != counted_level) {
                counted_level = sp[j].level;
                num_rel = count_relevant(jgrades, jn, counted_level);
            }
            PyObject *f = PyFloat_FromDouble(
                spec_value(&sp[j], sp[j].judged_only ? &judged_only : &all, num_rel));
            if (f == NULL || PyDict_SetItem(row, sp[j].key, f) < 0) { Py_XDECREF(f); goto fail; }
            Py_DECREF(f);
        }
    }
    PyMem_Free(entries); PyMem_Free(tmp); PyMem_Free(grades); PyMem_Free(ideal);
    PyMem_Free(jgrades); PyMem_Free(judged_ranked); free_specs(sp, nspec);
    return out;

nomem:
    PyErr_NoMemory();
fail:
    PyMem_Free(entries); PyMem_Free(tmp); PyMem_Free(grades); PyMem_Free(ideal);
    PyMem_Free(jgrades); PyMem_Free(judged_ranked); free_specs(sp, nspec);
    Py_XDECREF(out);
    return NULL;
}

static PyMethodDef methods[] = {
    {"rank_run", rank_run, METH_VARARGS,
     "rank_run(run, qrels, float32, judged_only, max_docs, wide) -> (topics, offsets, rel)"},
    {"dict_values", dict_values, METH_VARARGS,
     "dict_values(run, qrels, float32, specs) -> {qid: {key: value}}"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_dicts",
                                    "pytrec_eval-style dicts to trec_eval rankings", -1, methods};

PyMODINIT_FUNC PyInit__dicts(void) { return PyModule_Create(&module); }
