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
 *
 * The parts, each included once below: _scan_bytes.h (fields, hashes, scores), _scan_tables.h
 * (topic codes, the duplicate set), _scan_lines.h (the scan, two halves in parallel) and
 * _scan_split.h (split_topics). This file holds the Python entry points.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>

#include <errno.h>
#include <locale.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "_scan_bytes.h"
#include "_scan_tables.h"
#include "_scan_lines.h"

static PyObject *scan_run(PyObject *self, PyObject *args) {
    const char *path;
    int comments, full = 1, float32 = 1;
    PyObject *judged_list = Py_None;
    long long start = 0, stop = -1; /* a byte range of the file (stop -1: its end) */
    if (!PyArg_ParseTuple(args, "sp|OppLL", &path, &comments, &judged_list, &full, &float32,
                          &start, &stop))
        return NULL;
    if (judged_list != Py_None && !PyList_Check(judged_list)) {
        PyErr_SetString(PyExc_TypeError, "judged must be a list of str");
        return NULL;
    }
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && (stop < 0 || stop > (long long)st.st_size))
        stop = (long long)st.st_size;
    /* rows and docno offsets are int32 within a range: ranges stay under 2 GiB (the stream
       reader cuts larger files into ranges); offsets into the file are 64-bit */
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || start < 0 || stop <= start ||
        (size_t)(stop - start) >= (1ULL << 31) - 16) {
        if (fd >= 0) close(fd);
        Py_RETURN_NONE;
    }
    size_t from = (size_t)start, size = (size_t)stop;
    size_t max_rows = (size - from) / 12 + 8; /* a data line has >= 6 one-byte fields */

    scan_t S, S2;
    int two = 0; /* a second thread scans the second half (block mode, large files) */
    size_t split = 0;
    topics_t judged;
    PyObject *score_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(max_rows * 8));
    PyObject *qcode_b = NULL, *doff_b = NULL, *ddata_b = NULL;
    int ok = score_b != NULL && scan_state_init(&S, comments, full, float32) == 0;
    c_locale(); /* created once, with the GIL held */
    if (ok && !full && size - from >= (8u << 20)) { /* worth a second thread */
        split = topic_boundary(fd, from + (size - from) / 2, size);
        two = split > 0;
        if (two) ok = scan_state_init(&S2, comments, full, float32) == 0;
    }
    if (ok && full) {
        qcode_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(max_rows * 4));
        doff_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)((max_rows + 1) * 4));
        ddata_b = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(size - from));
        ok = qcode_b && doff_b && ddata_b;
        if (ok) {
            S.qcode = (int32_t *)PyBytes_AS_STRING(qcode_b);
            S.doff = (int32_t *)PyBytes_AS_STRING(doff_b);
            S.ddata = (unsigned char *)PyBytes_AS_STRING(ddata_b);
            S.doff[0] = 0;
        }
    }
    if (ok && judged_list != Py_None) {
        ok = topics_init(&judged) == 0;
        S.judged = ok ? &judged : NULL;
        S2.judged = S.judged;
        for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(judged_list); i++) {
            Py_ssize_t len;
            const char *u = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(judged_list, i), &len);
            int is_new;
            ok = u && topics_code(&judged, (const unsigned char *)u, (size_t)len, &is_new) >= 0;
        }
    }
    if (ok) {
        S.score = (double *)PyBytes_AS_STRING(score_b);
        want_huge_pages(S.score, max_rows * 8);
        if (full) {
            want_huge_pages(S.qcode, max_rows * 4);
            want_huge_pages(S.doff, (max_rows + 1) * 4);
            want_huge_pages(S.ddata, size - from);
        }
    }
    int status = 2;
    if (ok && two) {
        S2.score = S.score + ((split - from) / 12 + 2); /* rows of the second half, moved after */
        job_t job = {&S2, fd, 0, split, size};
        pthread_t th;
        Py_BEGIN_ALLOW_THREADS
        if (pthread_create(&th, NULL, run_job, &job) == 0) {
            status = scan_file(&S, fd, from, split);
            pthread_join(th, NULL);
            if (!status) status = job.status;
            if (!status) status = merge_halves(&S, &S2);
        } else {
            status = scan_file(&S, fd, from, size);
            two = 0;
        }
        Py_END_ALLOW_THREADS
    } else if (ok) {
        Py_BEGIN_ALLOW_THREADS
        status = scan_file(&S, fd, from, size);
        Py_END_ALLOW_THREADS
    }
    if (two) {
        S2.judged = NULL;
        scan_free(&S2);
    }
    close(fd);
    if (S.judged) topics_free(&judged);
    if (status == 0 && S.n == 0) status = 1;
    if (status) {
        scan_free(&S);
        Py_XDECREF(score_b);
        Py_XDECREF(qcode_b);
        Py_XDECREF(doff_b);
        Py_XDECREF(ddata_b);
        if (PyErr_Occurred()) return NULL;
        if (status == 2) return PyErr_NoMemory();
        if (!full) return PyUnicode_FromString("full"); /* retry with the general outputs */
        Py_RETURN_NONE;
    }
    size_t n = S.n;
    PyObject *topics = PyList_New((Py_ssize_t)S.tp.n);
    for (size_t i = 0; topics && i < S.tp.n; i++) {
        PyObject *t = PyUnicode_DecodeASCII((const char *)S.tp.keys + S.tp.koff[i],
                                            (Py_ssize_t)(S.tp.koff[i + 1] - S.tp.koff[i]), "strict");
        if (!t) {
            Py_CLEAR(topics);
            break;
        }
        PyList_SET_ITEM(topics, (Py_ssize_t)i, t);
    }
    int order32 = S.ordered32 ? (S.ties32 ? 1 : 2) : 0;
    int order64 = S.ordered64 ? (S.ties64 ? 1 : 2) : 0;
    if (!S.grouped) order32 = order64 = 0;
    int fail = !topics || _PyBytes_Resize(&score_b, (Py_ssize_t)(n * 8)) < 0;
    if (!fail && full)
        fail = _PyBytes_Resize(&qcode_b, (Py_ssize_t)(n * 4)) < 0 ||
               _PyBytes_Resize(&doff_b, (Py_ssize_t)((n + 1) * 4)) < 0 ||
               _PyBytes_Resize(&ddata_b, (Py_ssize_t)(S.dlen ? S.dlen : 1)) < 0;
    PyObject *blocks_t = NULL, *blocks_s = NULL, *ties_d = NULL, *ties_s = NULL;
    if (!fail && !full) {
        blocks_t = ivec_bytes(&S.block_topic);
        blocks_s = ivec_bytes(&S.block_start);
        ties_d = ivec_bytes(&S.tie_dst);
        ties_s = ivec_bytes(&S.tie_src);
        fail = !blocks_t || !blocks_s || !ties_d || !ties_s;
    }
    PyObject *hits_r = fail ? NULL : ivec_bytes(&S.hit_row);
    PyObject *hits_i = fail ? NULL : ivec_bytes(&S.hit_idx);
    PyObject *runid = fail ? NULL : PyUnicode_DecodeASCII(S.runid, (Py_ssize_t)S.runid_len, "strict");
    scan_free(&S);
    if (fail || !hits_r || !hits_i || !runid) {
        Py_XDECREF(topics);
        Py_XDECREF(score_b);
        Py_XDECREF(qcode_b);
        Py_XDECREF(doff_b);
        Py_XDECREF(ddata_b);
        Py_XDECREF(blocks_t);
        Py_XDECREF(blocks_s);
        Py_XDECREF(ties_d);
        Py_XDECREF(ties_s);
        Py_XDECREF(hits_r);
        Py_XDECREF(hits_i);
        Py_XDECREF(runid);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
#define OR_NONE(x) ((x) ? (x) : (Py_INCREF(Py_None), Py_None))
    return Py_BuildValue("{s:n,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:n,s:i,s:i,s:N,s:N,s:N,s:N,s:N,s:N,s:i}",
                         "n", (Py_ssize_t)n, "topics", topics, "score", score_b, "runid", runid,
                         "qcode", OR_NONE(qcode_b), "docno_data", OR_NONE(ddata_b),
                         "docno_offsets", OR_NONE(doff_b), "grouped", PyBool_FromLong(S.grouped),
                         "duplicate_row", (Py_ssize_t)(S.grouped ? S.dup_row : -2),
                         "order32", order32, "order64", order64,
                         "block_topic", OR_NONE(blocks_t), "block_start", OR_NONE(blocks_s),
                         "tie_dst", OR_NONE(ties_d), "tie_src", OR_NONE(ties_s),
                         "hit_row", hits_r, "hit_index", hits_i, "threads", two ? 2 : 1);
}

#include "_scan_split.h"

}

static PyMethodDef methods[] = {
    {"scan_run", scan_run, METH_VARARGS,
     "scan_run(path, comments, judged=None, full=True, float32=True) -> dict, 'full' or None.\n"
     "None: the file needs the general readers. full=True returns every column (qcode per "
     "line, docno_data/docno_offsets); full=False (for files grouped by topic with "
     "non-increasing scores; else it returns 'full') returns topic blocks (block_topic, "
     "block_start) and tie fix-ups (tie_dst, tie_src: rows to move so ties are in docno-"
     "descending order, for float32 or double scores) instead. Always: score, runid, topics, "
     "duplicate_row (-1 none, -2 not checked, else a row repeating an earlier docno of its "
     "topic), order32/order64 (0 a sort is needed, 1 non-increasing with ties to reorder, 2 in "
     "trec_eval's order), hit_row/hit_index (lines whose docno is in `judged`, and which). "
     "start, stop: scan only that byte range of the file (64-bit offsets; the range itself "
     "must stay under 2 GiB)."},
    {"split_topics", split_topics, METH_VARARGS,
     "split_topics(path, start, stop, comments, fds) -> (lines, last data line) or None: "
     "append every data line of bytes [start, stop) to fds[hash(topic) % len(fds)]."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan",
                                    "One-pass scanner for TREC run files.", -1, methods};

PyMODINIT_FUNC PyInit__scan(void) { return PyModule_Create(&module); }
