/* Part of trecqr.rankings._columns, included once by _columns.c: one translation unit, so the
   compiler inlines across the parts. Arrow string columns read in place: a docno's bytes, strcmp's
   order, equality and the hash the per-topic sets use. */

typedef struct { const char *p; int64_t len; } Doc;

typedef struct {  /* an Arrow string column: offsets of 4 or 8 bytes into data */
    const char *data, *end;  /* end: past the last byte of the buffer */
    const void *offsets;
    int wide;
} Strings;

static inline Doc doc_at(const Strings *s, Py_ssize_t i) {
    int64_t a, b;
    if (s->wide) {
        a = ((const int64_t *)s->offsets)[i];
        b = ((const int64_t *)s->offsets)[i + 1];
    } else {
        a = ((const int32_t *)s->offsets)[i];
        b = ((const int32_t *)s->offsets)[i + 1];
    }
    Doc d = {s->data + a, b - a};
    return d;
}

/* strcmp's order of byte strings (unsigned bytes; a prefix first) */
static inline int doc_cmp(Doc a, Doc b) {
    int c = memcmp(a.p, b.p, (size_t)(a.len < b.len ? a.len : b.len));
    if (c) return c;
    return a.len < b.len ? -1 : a.len > b.len;
}

static inline int doc_eq(Doc a, Doc b) {
    return a.len == b.len && memcmp(a.p, b.p, (size_t)a.len) == 0;
}

#if defined(_WIN32) || (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
#define WHOLE_WORDS 1  /* a docno's first bytes are the low bytes of a word loaded from it */
#else
#define WHOLE_WORDS 0
#endif

/* A hash of a docno's bytes; end: past the buffer's last byte (words are read whole, and
 * masked, while they stay inside it: no byte loop for a short docno). */
static inline uint64_t doc_hash(Doc d, const char *end) {
    const char *p = d.p;
    int64_t n = d.len;
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)n * 0xD6E8FEB86659FD93ULL), w;
    while (n > 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 31;
        p += 8;
        n -= 8;
    }
    if (WHOLE_WORDS && n && end - p >= 8) {
        memcpy(&w, p, 8);
        w &= ~0ULL >> (64 - 8 * n);
    } else {
        w = 0;
        memcpy(&w, p, (size_t)n);
    }
    h = (h ^ w) * 0x94D049BB133111EBULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 32);
}
