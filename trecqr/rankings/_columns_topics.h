/* Part of trecqr.rankings._columns, included once by _columns.c: one translation unit, so the
   compiler inlines across the parts. topic_codes: a qid column numbered in first-seen order. */

/* ---------------------------------------------------------------------------------------
 * topic_codes(offsets, data, codes) -> [qid, ...]
 *   offsets, data: a qid column as an Arrow string column (offsets int32 or int64, n + 1)
 *   codes:         writable int32[n]: each row's topic, numbering the distinct qids in
 *                  first-seen order
 * returns those qids (str). A row with its predecessor's qid (runs are written topic after
 * topic) costs one comparison; another qid is looked up in a hash table of the qids seen.
 */
typedef struct { Doc doc; uint64_t hash; } Seen;

static Py_ssize_t number_topics(const Strings *col, Py_ssize_t n, int32_t *codes, Seen **seen_out) {
    size_t cap = 64, mask = cap - 1;
    Py_ssize_t count = 0;
    int32_t *slots = malloc(cap * sizeof(int32_t));  /* 1 + index into seen, 0 empty */
    Seen *seen = malloc((cap / 2) * sizeof(Seen));
    if (!slots || !seen) { free(slots); free(seen); return -1; }
    memset(slots, 0, cap * sizeof(int32_t));
    Doc prev = {NULL, -1};
    int32_t prev_code = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Doc d = doc_at(col, i);
        if (prev_code >= 0 && doc_eq(d, prev)) { codes[i] = prev_code; continue; }
        uint64_t h = doc_hash(d, col->end);
        size_t at = h & mask;
        int32_t code = -1;
        for (; slots[at]; at = (at + 1) & mask) {
            const Seen *e = &seen[slots[at] - 1];
            if (e->hash == h && doc_eq(e->doc, d)) { code = slots[at] - 1; break; }
        }
        if (code < 0) {
            if ((size_t)(count + 1) * 2 > cap) {  /* keep the table at most half full */
                size_t ncap = cap * 2;
                int32_t *ns = calloc(ncap, sizeof(int32_t));
                Seen *nseen = realloc(seen, (ncap / 2) * sizeof(Seen));
                if (!ns || !nseen) { free(ns); free(nseen ? nseen : seen); free(slots); return -1; }
                seen = nseen;
                for (Py_ssize_t k = 0; k < count; k++) {
                    size_t b = seen[k].hash & (ncap - 1);
                    while (ns[b]) b = (b + 1) & (ncap - 1);
                    ns[b] = (int32_t)k + 1;
                }
                free(slots);
                slots = ns;
                cap = ncap;
                mask = cap - 1;
                for (at = h & mask; slots[at]; at = (at + 1) & mask) {}
            }
            seen[count].doc = d;
            seen[count].hash = h;
            code = (int32_t)count++;
            slots[at] = code + 1;
        }
        codes[i] = prev_code = code;
        prev = d;
    }
    free(slots);
    *seen_out = seen;
    return count;
}

static PyObject *topic_codes(PyObject *self, PyObject *args) {
    Py_buffer offs, data, codes;
    if (!PyArg_ParseTuple(args, "y*y*w*", &offs, &data, &codes)) return NULL;
    PyObject *out = NULL;
    Strings col;
    Py_ssize_t n = codes.len / 4;
    if (codes.len % 4 || offsets_width(&offs, n, &col.wide) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "topic_codes: codes is not int32");
        goto release;
    }
    col.data = data.buf;
    col.end = (const char *)data.buf + data.len;
    col.offsets = offs.buf;
    Seen *seen = NULL;
    Py_ssize_t count;
    Py_BEGIN_ALLOW_THREADS
    count = number_topics(&col, n, codes.buf, &seen);
    Py_END_ALLOW_THREADS
    if (count < 0) { PyErr_NoMemory(); goto release; }
    out = PyList_New(count);
    for (Py_ssize_t k = 0; out && k < count; k++) {
        PyObject *q = PyUnicode_DecodeUTF8(seen[k].doc.p, seen[k].doc.len, "strict");
        if (q == NULL) { Py_CLEAR(out); break; }
        PyList_SET_ITEM(out, k, q);
    }
    free(seen);
release:
    PyBuffer_Release(&offs); PyBuffer_Release(&data); PyBuffer_Release(&codes);
    return out;
}
