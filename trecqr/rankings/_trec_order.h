/* trec_eval's order of one topic's documents, shared by the C rankers (_dicts.c: run dicts;
 * _columns.c: run columns): scores descending, ties broken by docno descending (strcmp).
 *
 * Each document carries a 64-bit key, ascending in trec_eval's score order (order_key), so a
 * stable LSD radix sort on the keys orders the scores; each run of equal keys (tied scores) is
 * then put in docno-descending order by an insertion sort (ties are rare and short). The two
 * rankers keep their documents differently (a str object; offsets into an Arrow buffer), so
 * the sort is written once here as a macro over the entry type and its full comparison.
 */
#ifndef TRECQR_TREC_ORDER_H
#define TRECQR_TREC_ORDER_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

/* The ascending key of a score: descending scores, -0.0 tied with 0.0 (C's comparisons). */
static inline uint64_t order_key(double s) {
    uint64_t bits;
    if (s == 0.0) s = 0.0;
    memcpy(&bits, &s, sizeof bits);
    bits = (bits & 0x8000000000000000ULL) ? ~bits : (bits | 0x8000000000000000ULL);
    return ~bits;
}

/* trec_eval 9.0.8 keeps scores in a C float: rounded there, near-ties below float32
 * precision tie. */
static inline double rounded(double s, int float32) {
    return float32 ? (double)(float)s : s;
}

/* TREC_ORDER_SORT(NAME, ENTRY, BEFORE) defines
 *     static void NAME(ENTRY *v, ENTRY *tmp, Py_ssize_t n, const void *ctx)
 * which sorts v[0..n) (tmp: scratch of n entries) by .key ascending, entries of equal keys by
 * BEFORE(ctx, a, b) (pointers to entries: a goes first), i.e. docno descending. Radix passes
 * where every key has the same byte are skipped (scores of one topic share their high bytes,
 * float32-rounded ones their low ones); up to 32 entries are insertion-sorted at once. */
#define TREC_ORDER_SORT(NAME, ENTRY, BEFORE)                                                   \
static void NAME##_ties(ENTRY *v, Py_ssize_t n, const void *ctx) {                             \
    (void)ctx;                                                                                 \
    Py_ssize_t i = 0;                                                                          \
    while (i < n) {                                                                            \
        Py_ssize_t j = i + 1;                                                                  \
        while (j < n && v[j].key == v[i].key) j++;                                             \
        for (Py_ssize_t a = i + 1; a < j; a++) {                                               \
            ENTRY x = v[a];                                                                    \
            Py_ssize_t b = a - 1;                                                              \
            while (b >= i && BEFORE(ctx, &x, &v[b])) { v[b + 1] = v[b]; b--; }                 \
            v[b + 1] = x;                                                                      \
        }                                                                                      \
        i = j;                                                                                 \
    }                                                                                          \
}                                                                                              \
static void NAME(ENTRY *v, ENTRY *tmp, Py_ssize_t n, const void *ctx) {                        \
    (void)ctx;                                                                                 \
    if (n < 2) return;                                                                         \
    if (n <= 32) {                                                                             \
        for (Py_ssize_t i = 1; i < n; i++) {                                                   \
            ENTRY x = v[i];                                                                    \
            Py_ssize_t j = i - 1;                                                              \
            while (j >= 0 && (x.key < v[j].key                                                 \
                              || (x.key == v[j].key && BEFORE(ctx, &x, &v[j])))) {             \
                v[j + 1] = v[j];                                                               \
                j--;                                                                           \
            }                                                                                  \
            v[j + 1] = x;                                                                      \
        }                                                                                      \
        return;                                                                                \
    }                                                                                          \
    uint64_t diff = 0;                                                                         \
    for (Py_ssize_t i = 1; i < n; i++) diff |= v[i].key ^ v[0].key;                            \
    ENTRY *src = v, *dst = tmp;                                                                \
    for (int shift = 0; shift < 64; shift += 8) {                                              \
        if (((diff >> shift) & 0xFF) == 0) continue;                                           \
        Py_ssize_t count[257] = {0};                                                           \
        for (Py_ssize_t i = 0; i < n; i++) count[((src[i].key >> shift) & 0xFF) + 1]++;        \
        for (int b = 0; b < 256; b++) count[b + 1] += count[b];                                \
        for (Py_ssize_t i = 0; i < n; i++) dst[count[(src[i].key >> shift) & 0xFF]++] = src[i];\
        ENTRY *t = src; src = dst; dst = t;                                                    \
    }                                                                                          \
    if (src != v) memcpy(v, src, n * sizeof(ENTRY));                                           \
    NAME##_ties(v, n, ctx);                                                                    \
}

#endif
