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

#define BLOCK (8u << 20)
#define MAX_TOKEN 64

/* C isspace but the newline: the field separators. */
static const unsigned char BLANK[256] = {[' '] = 1, ['\t'] = 1, ['\r'] = 1, ['\v'] = 1, ['\f'] = 1};

static inline int is_blank(unsigned char c) { return BLANK[c]; }

/* The bytes of a field: printable ASCII but the space (0x21..0x7e). Scanning stops at any other
   byte, which must then be white space; a control or non-ASCII byte sends the file to the
   Python readers. With SSE2, 16 bytes are tested at once (the block buffer is padded so that
   reading past a line's newline stays inside it). */
#ifdef __SSE2__
#include <emmintrin.h>
static inline unsigned char *field_end(unsigned char *p) {
    const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);
    for (;;) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        /* signed compare: bytes >= 0x80 are negative, so not > 0x20 */
        __m128i ok = _mm_and_si128(_mm_cmpgt_epi8(v, space), _mm_cmplt_epi8(v, del));
        unsigned mask = ~(unsigned)_mm_movemask_epi8(ok) & 0xffffu;
        if (mask) return p + __builtin_ctz(mask);
        p += 16;
    }
}
#else
static inline unsigned char *field_end(unsigned char *p) {
    while (*p > ' ' && *p < 0x7f) p++;
    return p;
}
#endif
#define PAD_BYTES 32

/* 8 bytes at a time, multiply-xorshift mixing: docnos are short, so one or two rounds. */
static inline uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (n * 0xff51afd7ed558ccdULL);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, s, n);
        h = (h ^ w) * 0x94d049bb133111ebULL;
        h ^= h >> 29;
    }
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
}

/* Ask for transparent huge pages on a large output buffer: the first touch of fresh memory is
   a page fault per 4 KiB, which on virtual machines costs more than filling it. */
static void want_huge_pages(void *p, size_t len) {
#ifdef MADV_HUGEPAGE
    uintptr_t start = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
    uintptr_t end = ((uintptr_t)p + len) & ~(uintptr_t)((2u << 20) - 1);
    if (end > start) madvise((void *)start, end - start, MADV_HUGEPAGE);
#endif
}

/* hash_bytes for a field inside the padded block buffer: the tail is one masked 8-byte load
   (bytes past the field are readable there), which gives the same value as the memcpy on a
   little-endian machine; elsewhere hash_bytes itself is used. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
static inline uint64_t hash_field(const unsigned char *s, size_t n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (n * 0xff51afd7ed558ccdULL);
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
        s += 8;
        n -= 8;
    }
    if (n) {
        uint64_t w;
        memcpy(&w, s, 8);
        w &= ~0ULL >> (64 - 8 * n); /* little-endian: keep the field's n bytes */
        h = (h ^ w) * 0x94d049bb133111ebULL;
        h ^= h >> 29;
    }
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
}
#else
#define hash_field hash_bytes
#endif

/* ------------------------------------------------------------------ exact decimal parsing */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static locale_t c_locale(void) {
    static locale_t loc = (locale_t)0;
    if (!loc) loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    return loc;
}

/* [+-]?([0-9]+.?[0-9]*|.[0-9]+)([eE][+-]?[0-9]+)? and finite, else return 0. */
static int parse_score(const unsigned char *s, size_t n, double *out) {
    size_t i = 0;
    int neg = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    uint64_t mant = 0;
    int digits = 0, int_digits = 0, frac_digits = 0, dropped = 0;
    long exp10 = 0;
    /* up to 19 digits (leading zeros included) fit a uint64 exactly; beyond, strtod decides */
    while (i < n && (unsigned)(s[i] - '0') < 10) {
        if (digits < 19) {
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
        while (i < n && (unsigned)(s[i] - '0') < 10) {
            if (digits < 19) {
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
    if (mant == 0 && !dropped) {
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
        v = strtod_l(buf, &end, c_locale()); /* correctly rounded (glibc); runs without the GIL */
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

/* ------------------------------------------------------------------ the scan */
typedef struct {
    /* options */
    int comments, full, float32;
    /* outputs */
    double *score;
    int32_t *qcode;          /* full mode: topic code per line */
    unsigned char *ddata;    /* full mode: all docnos; fast mode: this topic's docnos */
    int32_t *doff;           /* offsets into ddata (full: by row; fast: by row - topic start) */
    size_t dcap, ocap;       /* fast mode capacities */
    ivec_t block_topic, block_start, hit_row, hit_idx, tie_dst, tie_src, tie_tmp;
    /* state */
    topics_t tp;
    topics_t *judged;
    dupset_t dset;
    size_t n, dlen, topic_start, group_start;
    int64_t cur_topic, dup_row;
    int grouped, ordered32, ordered64, ties32, ties64, group_misordered;
    double prev_score;
    char runid[256];
    const unsigned char *runid_at; /* the last line's runid, in the current block */
    size_t runid_len;
} scan_t;

/* Sort the rows of a tie group [g0, g1) of the current topic by docno descending (fast mode). */
static int sort_group(scan_t *S, size_t g0, size_t g1);

static inline int close_group(scan_t *S, size_t g0, size_t g1) {
    if (S->full || g1 - g0 < 2 || !S->group_misordered) return 0;
    return sort_group(S, g0, g1);
}

static int sort_group(scan_t *S, size_t g0, size_t g1) {
    size_t len = g1 - g0;
    S->tie_tmp.n = 0;
    for (size_t r = g0; r < g1; r++)
        if (ivec_push(&S->tie_tmp, (int32_t)(r - S->topic_start)) < 0) return -1;
    sortctx_t ctx = {S->ddata, S->doff};
    qsort_r(S->tie_tmp.v, len, sizeof(int32_t), by_docno_desc, &ctx);
    for (size_t k = 0; k < len; k++) {
        int32_t src = S->tie_tmp.v[k] + (int32_t)S->topic_start, dst = (int32_t)(g0 + k);
        if (src != dst && (ivec_push(&S->tie_dst, dst) < 0 || ivec_push(&S->tie_src, src) < 0))
            return -1;
    }
    return 0;
}

/* One data line with fields fs/fl (at least 6). 0 ok, 1 needs the general readers, 2 memory. */
static int take_line(scan_t *S, const unsigned char **fs, const size_t *fl) {
    size_t n = S->n;
    if (!parse_score(fs[4], fl[4], &S->score[n])) return 1;
    double sc = S->score[n];
    /* topic */
    int is_new = 0;
    int64_t code = S->cur_topic;
    const topics_t *tp = &S->tp;
    if (code < 0 || (size_t)(tp->koff[code + 1] - tp->koff[code]) != fl[0] ||
        memcmp(tp->keys + tp->koff[code], fs[0], fl[0]) != 0) {
        if (!S->full && S->cur_topic >= 0 && close_group(S, S->group_start, n) < 0) return 2;
        code = topics_code(&S->tp, fs[0], fl[0], &is_new);
        if (code < 0) return 2;
        if (!is_new) {
            S->grouped = 0;
            if (!S->full) return 1; /* interleaved topics: the general path */
        }
        S->cur_topic = code;
        S->topic_start = S->group_start = n;
        S->group_misordered = 0;
        if (S->grouped) table_clear(&S->dset.tab);
        if (!S->full) {
            S->dlen = 0;
            if (ivec_push(&S->block_topic, (int32_t)code) < 0 ||
                ivec_push(&S->block_start, (int32_t)n) < 0)
                return 2;
        }
    }
    if (S->full) S->qcode[n] = (int32_t)code;
    /* docno: all of them (full), or this topic's (fast) */
    size_t local = S->full ? n : n - S->topic_start;
    int32_t *offs = S->full ? S->doff : S->doff; /* fast: indexed by local row */
    if (!S->full) {
        while (S->dlen + fl[2] > S->dcap) {
            S->dcap *= 2;
            unsigned char *d = (unsigned char *)realloc(S->ddata, S->dcap);
            if (!d) return 2;
            S->ddata = d;
        }
        if (local + 2 > S->ocap) {
            S->ocap *= 2;
            int32_t *o = (int32_t *)realloc(S->doff, S->ocap * sizeof(int32_t));
            if (!o) return 2;
            S->doff = offs = o;
        }
        if (local == 0) offs[0] = 0;
    }
    memcpy(S->ddata + S->dlen, fs[2], fl[2]);
    S->dlen += fl[2];
    offs[local + 1] = (int32_t)S->dlen;
    uint64_t h = hash_field(fs[2], fl[2]);
    if (S->grouped) {
        const int32_t *topic_offs = S->full ? S->doff + S->topic_start : S->doff;
        int64_t r = dup_insert(&S->dset, S->ddata, topic_offs, n - S->topic_start, h);
        if (r == -1) return 2;
        if (r >= 0 && S->dup_row < 0) S->dup_row = (int64_t)n;
    }
    if (S->judged) {
        int32_t j = topics_find(S->judged, fs[2], fl[2], h);
        if (j >= 0 && (ivec_push(&S->hit_row, (int32_t)n) < 0 || ivec_push(&S->hit_idx, j) < 0))
            return 2;
    }
    /* trec_eval's order: score descending, ties by docno descending */
    if (n > S->topic_start) {
        double prev = S->prev_score;
        int cmp = 0;
        if (sc == prev || (float)sc == (float)prev) {
            const int32_t *o = S->full ? S->doff : S->doff;
            size_t a = S->full ? n - 1 : local - 1, b = S->full ? n : local;
            cmp = docno_cmp(S->ddata + o[a], (size_t)(o[a + 1] - o[a]), S->ddata + o[b],
                            (size_t)(o[b + 1] - o[b]));
        }
        if (sc > prev) S->ordered64 = 0;
        else if (sc == prev && cmp <= 0) S->ties64 = 1;
        if ((float)sc > (float)prev) S->ordered32 = 0;
        else if ((float)sc == (float)prev && cmp <= 0) S->ties32 = 1;
        if (!S->full) {
            if (!(S->float32 ? S->ordered32 : S->ordered64)) return 1; /* needs a real sort */
            int tied = S->float32 ? (float)sc == (float)prev : sc == prev;
            if (!tied) {
                if (close_group(S, S->group_start, n) < 0) return 2;
                S->group_start = n;
                S->group_misordered = 0;
            } else if (cmp <= 0) {
                S->group_misordered = 1;
            }
        }
    }
    S->prev_score = sc;
    if (fl[5] >= sizeof(S->runid)) return 1;
    S->runid_at = fs[5];  /* copied once per block, before the buffer is reused */
    S->runid_len = fl[5];
    S->n = n + 1;
    return 0;
}

static void scan_free(scan_t *S) {
    topics_free(&S->tp);
    free(S->dset.tab.slots);
    free(S->dset.hashes);
    free(S->block_topic.v);
    free(S->block_start.v);
    free(S->hit_row.v);
    free(S->hit_idx.v);
    free(S->tie_dst.v);
    free(S->tie_src.v);
    free(S->tie_tmp.v);
    if (!S->full) {
        free(S->ddata);
        free(S->doff);
    }
}

/* Read the file in blocks and feed every data line to take_line. 0 ok, 1 general, 2 memory. */
static int scan_file(scan_t *S, int fd, size_t from, size_t to) {
    /* a range shorter than a block gets a buffer of its size: every read is the same, and a
       small file is not charged for zeroing 8 MiB (glibc serves a reused 8 MiB calloc from
       the heap, zeroed by memset: 0.4 ms a call) */
    size_t cap = to - from < BLOCK ? to - from : BLOCK;
    unsigned char *buf = (unsigned char *)calloc(cap + 1 + PAD_BYTES, 1);
    if (!buf) return 2;
    size_t have = 0, pos = from;
    int eof = 0, first_block = from == 0, status = 0;
    while (!status) {
        if (!eof) {
            size_t want = cap - have;
            if (want > to - pos) want = to - pos;
            ssize_t got = want ? pread(fd, buf + have, want, (off_t)pos) : 0;
            if (got < 0) {
                status = 1;
                break;
            }
            if (got == 0) eof = 1;
            pos += (size_t)got;
            have += (size_t)got;
            if (first_block && have >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
                status = 1; /* gzip: the Python reader decompresses */
                break;
            }
            if (first_block && have >= 3 && buf[0] == 0xef && buf[1] == 0xbb && buf[2] == 0xbf) {
                memmove(buf, buf + 3, have - 3); /* UTF-8 byte order mark */
                have -= 3;
            }
            first_block = 0;
        }
        if (have == 0 && eof) break;
        /* complete lines; at EOF the last line may lack its newline */
        unsigned char *end = buf + have;
        unsigned char *last_nl = (unsigned char *)memrchr(buf, '\n', have);
        unsigned char *limit;
        if (eof && (!last_nl || last_nl + 1 < end)) {
            buf[have] = '\n';
            limit = end + 1;
        } else if (last_nl) {
            limit = last_nl + 1;
        } else {
            status = 1; /* a line longer than a block */
            break;
        }
        unsigned char *p = buf;
        while (p < limit && !status) {
            while (is_blank(*p)) p++;
            if (*p == '\n') {
                p++;
                continue;
            }
            if (S->comments && *p == '#') {
                p = (unsigned char *)memchr(p, '\n', (size_t)(limit - p)) + 1;
                continue;
            }
            const unsigned char *fs[6];
            size_t fl[6];
            int nf = 0;
            while (*p != '\n') {
                const unsigned char *start = p;
                p = field_end(p);
                if (!(is_blank(*p) || *p == '\n')) { /* control, non-ASCII: Python path */
                    status = 1;
                    break;
                }
                if (nf < 6) {
                    fs[nf] = start;
                    fl[nf] = (size_t)(p - start);
                }
                nf++;
                while (is_blank(*p)) p++;
            }
            if (status) break;
            p++; /* the newline */
            status = nf < 6 ? 1 : take_line(S, fs, fl);
        }
        if (status) break;
        if (S->runid_at) {
            memcpy(S->runid, S->runid_at, S->runid_len);
            S->runid_at = NULL;
        }
        if (limit > end) {
            have = 0;
        } else {
            have = (size_t)(end - limit);
            memmove(buf, limit, have);
        }
        if (eof && have == 0) break;
    }
    free(buf);
    if (!status && !S->full && S->n && close_group(S, S->group_start, S->n) < 0) status = 2;
    return status;
}


/* ------------------------------------------------------------------ two halves in parallel */
#include <pthread.h>

typedef struct {
    scan_t *S;
    int fd, status;
    size_t from, to;
} job_t;

static void *run_job(void *arg) {
    job_t *j = (job_t *)arg;
    j->status = scan_file(j->S, j->fd, j->from, j->to);
    return NULL;
}

/* The start of the first line at or after `mid` whose topic differs from the line before it,
   or 0 when none is found in a window: a split point between two topics. */
static size_t topic_boundary(int fd, size_t mid, size_t size) {
    size_t win = 1u << 20;
    if (mid + win > size) win = size - mid;
    unsigned char *buf = (unsigned char *)malloc(win + 1);
    if (!buf) return 0;
    ssize_t got = pread(fd, buf, win, (off_t)mid);
    size_t result = 0;
    if (got > 0) {
        unsigned char *end = buf + got, *p = (unsigned char *)memchr(buf, '\n', (size_t)got);
        const unsigned char *prev = NULL;
        size_t prev_len = 0;
        while (p && ++p < end) {
            unsigned char *nl = (unsigned char *)memchr(p, '\n', (size_t)(end - p));
            if (!nl) break;
            unsigned char *q = p;
            while (q < nl && is_blank(*q)) q++;
            if (q < nl && *q != '#') { /* a data line (comments only matter at line start) */
                const unsigned char *t = q;
                while (q < nl && !is_blank(*q)) q++;
                if (prev && ((size_t)(q - t) != prev_len || memcmp(prev, t, prev_len) != 0)) {
                    result = mid + (size_t)(p - buf);
                    break;
                }
                prev = t;
                prev_len = (size_t)(q - t);
            }
            p = nl;
        }
    }
    free(buf);
    return result;
}

/* Append S2's results (rows rebased by n1) to S1's; 0 ok, 1 a topic is in both halves. */
static int merge_halves(scan_t *S1, scan_t *S2) {
    int32_t n1 = (int32_t)S1->n;
    int32_t *remap = (int32_t *)malloc((S2->tp.n + 1) * sizeof(int32_t));
    if (!remap) return 2;
    for (size_t i = 0; i < S2->tp.n; i++) {
        const unsigned char *k = S2->tp.keys + S2->tp.koff[i];
        size_t len = S2->tp.koff[i + 1] - S2->tp.koff[i];
        int is_new = 0;
        int64_t code = topics_code(&S1->tp, k, len, &is_new);
        if (code < 0) { free(remap); return 2; }
        if (!is_new) { free(remap); return 1; }
        remap[i] = (int32_t)code;
    }
    int st = 0;
    for (size_t i = 0; !st && i < S2->block_topic.n; i++)
        st = ivec_push(&S1->block_topic, remap[S2->block_topic.v[i]]) ||
             ivec_push(&S1->block_start, S2->block_start.v[i] + n1);
    free(remap);
    for (size_t i = 0; !st && i < S2->hit_row.n; i++)
        st = ivec_push(&S1->hit_row, S2->hit_row.v[i] + n1) ||
             ivec_push(&S1->hit_idx, S2->hit_idx.v[i]);
    for (size_t i = 0; !st && i < S2->tie_dst.n; i++)
        st = ivec_push(&S1->tie_dst, S2->tie_dst.v[i] + n1) ||
             ivec_push(&S1->tie_src, S2->tie_src.v[i] + n1);
    if (st) return 2;
    memmove(S1->score + S1->n, S2->score, S2->n * sizeof(double));
    if (S1->dup_row < 0 && S2->dup_row >= 0) S1->dup_row = S2->dup_row + n1;
    S1->ordered32 &= S2->ordered32;
    S1->ordered64 &= S2->ordered64;
    S1->ties32 |= S2->ties32;
    S1->ties64 |= S2->ties64;
    S1->grouped &= S2->grouped;
    if (S2->n) {
        memcpy(S1->runid, S2->runid, S2->runid_len);
        S1->runid_len = S2->runid_len;
    }
    S1->n += S2->n;
    return 0;
}

static int scan_state_init(scan_t *S, int comments, int full, int float32) {
    memset(S, 0, sizeof(*S));
    S->comments = comments;
    S->full = full;
    S->float32 = float32;
    S->cur_topic = -1;
    S->dup_row = -1;
    S->grouped = S->ordered32 = S->ordered64 = 1;
    S->dset.hcap = 2048;
    S->dset.hashes = (uint64_t *)malloc(S->dset.hcap * sizeof(uint64_t));
    if (!S->dset.hashes || topics_init(&S->tp) < 0 || table_init(&S->dset.tab, 4096) < 0) return -1;
    if (!full) {
        S->dcap = 1 << 16;
        S->ocap = 1 << 12;
        S->ddata = (unsigned char *)malloc(S->dcap);
        S->doff = (int32_t *)malloc(S->ocap * sizeof(int32_t));
        if (!S->ddata || !S->doff) return -1;
    }
    return 0;
}

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
        unsigned char *end = buf + have;
        unsigned char *last_nl = (unsigned char *)memrchr(buf, '\n', have);
        unsigned char *limit;
        if (eof && (!last_nl || last_nl + 1 < end)) {
            buf[have] = '\n';
            limit = end + 1;
        } else if (last_nl) {
            limit = last_nl + 1;
        } else {
            status = 1;
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
        if (limit > end) {
            have = 0;
        } else {
            have = (size_t)(end - limit);
            memmove(buf, limit, have);
        }
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
