/* Part of trecqr.formats._scan, included once by _scan.c: one translation unit, so the compiler
   inlines across the parts. Bytes to fields, hashes and numbers: the field separators, the SIMD
   field scan, the docno hash, and the exact decimal parser of scores. */

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

/* The end of the complete lines of a block buffer holding `have` bytes: past its last newline,
   or at EOF past a last line without one (which gets its newline: the buffer has a byte to
   spare). NULL when no line ends in it: a line longer than a block. */
static inline unsigned char *block_limit(unsigned char *buf, size_t have, int eof) {
    unsigned char *end = buf + have;
    unsigned char *last_nl = (unsigned char *)memrchr(buf, '\n', have);
    if (eof && (!last_nl || last_nl + 1 < end)) {
        buf[have] = '\n';
        return end + 1;
    }
    return last_nl ? last_nl + 1 : NULL;
}

/* After a block's lines: its incomplete last line moved to the front of the buffer, and its
   length returned (0 when the block ended with a line, or at EOF). */
static inline size_t block_carry(unsigned char *buf, const unsigned char *limit, size_t have) {
    const unsigned char *end = buf + have;
    if (limit > end) return 0;
    size_t rest = (size_t)(end - limit);
    memmove(buf, limit, rest);
    return rest;
}

/* 8 bytes at a time, multiply-xorshift mixing: docnos are short, so one or two rounds. */
static inline uint64_t hash_words(const unsigned char **s, size_t *n) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (*n * 0xff51afd7ed558ccdULL);
    while (*n >= 8) {
        uint64_t w;
        memcpy(&w, *s, 8);
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
        *s += 8;
        *n -= 8;
    }
    return h;
}

/* The last word (w: the n < 8 tail bytes, zero above them; nothing when n is 0) and the
   final mixing. */
static inline uint64_t hash_end(uint64_t h, uint64_t w, size_t n) {
    if (n) {
        h = (h ^ w) * 0x94d049bb133111ebULL;
        h ^= h >> 29;
    }
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
}

static inline uint64_t hash_bytes(const unsigned char *s, size_t n) {
    uint64_t h = hash_words(&s, &n), w = 0;
    memcpy(&w, s, n);
    return hash_end(h, w, n);
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
    uint64_t h = hash_words(&s, &n), w = 0;
    if (n) {
        memcpy(&w, s, 8);
        w &= ~0ULL >> (64 - 8 * n); /* little-endian: keep the field's n bytes */
    }
    return hash_end(h, w, n);
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
