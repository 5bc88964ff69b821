/* Part of trecqr.formats._scan, included once by _scan.c: one translation unit, so the compiler
   inlines across the parts. The scanner's growable tables: topic codes (a hash of strings), the
   per-topic set that finds a repeated docno, int32 vectors, and the docno order trec_eval breaks
   ties by. */

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

/* Code of key if present, else -1 (no insertion). */
static int32_t topics_find(const topics_t *tp, const unsigned char *s, size_t len, uint64_t h) {
    size_t mask = tp->tab.cap - 1, j = h & mask;
    while (tp->tab.slots[j] >= 0) {
        int32_t k = tp->tab.slots[j];
        if (tp->hashes[k] == h && tp->koff[k + 1] - tp->koff[k] == len &&
            memcmp(tp->keys + tp->koff[k], s, len) == 0)
            return k;
        j = (j + 1) & mask;
    }
    return -1;
}

/* ------------------------------------------------------------------ per-topic duplicate set */
typedef struct {
    table_t tab;
    uint64_t *hashes; /* by local row (row - topic start) */
    size_t hcap;
} dupset_t;

/* Insert local row `local` (docno data + offs[local]..offs[local+1]); returns -1 on memory error,
   else the local row it repeats, or -2 when new. */
static int64_t dup_insert(dupset_t *d, const unsigned char *data, const int32_t *offs, size_t local,
                          uint64_t h) {
    const unsigned char *s = data + offs[local];
    size_t len = (size_t)(offs[local + 1] - offs[local]);
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
    d->hashes[local] = h;
    size_t mask = d->tab.cap - 1, j = h & mask;
    while (d->tab.slots[j] >= 0) {
        int32_t k = d->tab.slots[j];
        if (d->hashes[k] == h && (size_t)(offs[k + 1] - offs[k]) == len &&
            memcmp(data + offs[k], s, len) == 0)
            return k;
        j = (j + 1) & mask;
    }
    d->tab.slots[j] = (int32_t)local;
    d->tab.count++;
    return -2;
}

/* ------------------------------------------------------------------ growable int32 vectors */
typedef struct {
    int32_t *v;
    size_t n, cap;
} ivec_t;

static int ivec_push(ivec_t *a, int32_t x) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 1024;
        int32_t *v = (int32_t *)realloc(a->v, cap * sizeof(int32_t));
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

static PyObject *ivec_bytes(ivec_t *a) {
    PyObject *b = PyBytes_FromStringAndSize((const char *)a->v, (Py_ssize_t)(a->n * 4));
    free(a->v);
    a->v = NULL;
    return b;
}

/* strcmp(a, b) on (pointer, length) docnos */
static inline int docno_cmp(const unsigned char *a, size_t la, const unsigned char *b, size_t lb) {
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

typedef struct {
    const unsigned char *data;
    const int32_t *offs;
} sortctx_t;

static int by_docno_desc(const void *x, const void *y, void *ctx) {
    const sortctx_t *c = (const sortctx_t *)ctx;
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return docno_cmp(c->data + c->offs[b], (size_t)(c->offs[b + 1] - c->offs[b]),
                     c->data + c->offs[a], (size_t)(c->offs[a + 1] - c->offs[a]));
}
