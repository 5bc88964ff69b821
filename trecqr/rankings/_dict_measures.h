/* The per-topic values of dict_values (_dicts.c): trec_eval's loops for the measures
 * pytrec_eval's callers ask for most, on one topic's ranking.
 *
 * Each value is computed with the same operations, in the same order, as trecqr's numpy
 * kernel of that measure (trecqr/measures/), which follow trec_eval's m_<measure>.c: so the
 * doubles are bit for bit the same, and a call of a few topics costs what pytrec_eval's does
 * (no arrays). Only what the plan allows reaches here (engine/plan.py, _c_specs): a relevance
 * level >= 1, no -M, trec_eval 9.0.8's recall points, ndcg without gain parameters.
 *
 * A topic is given as its ranking's grades (the kept documents only: with -J the unjudged
 * ones are already left out), NONPOOL (-1) for a document the qrels do not judge, UNJUDGED
 * (-2) for a negative grade; and its judgments: every grade, and the positive ones sorted
 * from the highest (the ideal ranking).
 */
#include <math.h>
#include <limits.h>
#include <stdint.h>

/* the codes engine/plan.py's _C_CODES gives each measure */
enum {
    C_P = 0, C_RECALL = 1, C_RECIP_RANK = 2, C_NDCG_CUT = 3, C_MAP = 4, C_MAP_CUT = 5,
    C_SUCCESS = 6, C_NDCG = 7, C_RPREC = 8, C_NUM_RET = 9, C_NUM_REL = 10, C_NUM_REL_RET = 11,
    C_NUM_NONREL_JUDGED_RET = 12, C_ONE = 13, C_ZERO = 14, C_BPREF = 15, C_GM_BPREF = 16,
    C_GM_MAP = 17, C_IPREC_AT_RECALL = 18, C_SET_P = 19, C_SET_RECALL = 20,
    C_SET_RELATIVE_P = 21, C_SET_MAP = 22, C_SET_F = 23, C_RELATIVE_P = 24, C_RPREC_MULT = 25,
};

#define MIN_GEO_MEAN 0.00001  /* trec_eval's floor before the log of gm_map and gm_bpref */

/* one value asked for: its key, code, integer cutoff k, double parameter x (a recall point,
   set_F's beta), relevance level and -J */
typedef struct { PyObject *key; int code; long long k, level; int judged_only; double x; } Spec;

/* one topic: the kept ranking's grades; the judgments' grades and the ideal ranking */
typedef struct {
    const int64_t *grades;
    Py_ssize_t num_ret;
    const int64_t *judged, *ideal;
    Py_ssize_t num_judged, num_ideal;
} Topic;

static long long count_relevant(const int64_t *g, Py_ssize_t n, long long level) {
    long long c = 0;
    for (Py_ssize_t r = 0; r < n; r++) c += g[r] >= level;
    return c;
}

/* average precision over the top k (k < 0: the whole ranking), over num_rel */
static double average_precision(const Topic *t, long long level, long long k, long long num_rel) {
    double total = 0.0;
    long long seen = 0;
    for (Py_ssize_t r = 0; r < t->num_ret; r++) {
        if (t->grades[r] >= level) {
            seen++;
            if (k < 0 || r < k) total += (double)seen / ((double)r + 1.0);
        }
    }
    if (k < 0) return seen > 0 ? total / (double)num_rel : 0.0;
    return num_rel > 0 ? total / (double)num_rel : 0.0;
}

/* DCG of the grades as gains over the top k, and of the ideal ranking over its top k */
static void dcg_pair(const Topic *t, long long k, double *dcg, double *ideal) {
    double num = 0.0, den = 0.0;
    for (Py_ssize_t r = 0; r < t->num_ret && r < k; r++)
        if (t->grades[r] > 0) num += (double)t->grades[r] / log2((double)(r + 2));
    for (Py_ssize_t r = 0; r < t->num_ideal && r < k; r++)
        den += (double)t->ideal[r] / log2((double)(r + 2));
    *dcg = num;
    *ideal = den;
}

/* m_bpref.c: each judged relevant document adds the fraction of the top R judged nonrelevant
   ones ranked after it */
static double bpref(const Topic *t, long long level, long long num_rel) {
    long long num_nonrel = 0, nonrel_so_far = 0;
    for (Py_ssize_t j = 0; j < t->num_judged; j++)
        num_nonrel += t->judged[j] >= 0 && t->judged[j] < level;
    double total = 0.0;
    for (Py_ssize_t r = 0; r < t->num_ret; r++) {
        int64_t g = t->grades[r];
        if (g < 0) continue;  /* not in the pool, or unjudged */
        if (g < level) { nonrel_so_far++; continue; }
        if (nonrel_so_far > 0)
            total += 1.0 - ((double)(nonrel_so_far < num_rel ? nonrel_so_far : num_rel) /
                            (double)(num_nonrel < num_rel ? num_nonrel : num_rel));
        else
            total += 1.0;
    }
    return num_rel ? total / (double)num_rel : total;
}

/* m_iprec_at_recall.c for one recall point x: the best precision at or after the rank where
   (long)(x * R + 0.9) relevant documents are retrieved (that cutoff past the relevant
   retrieved: 0; at most 0: the best precision from the first relevant document on) */
static double iprec_at_recall(const Topic *t, long long level, double x, long long num_rel,
                              long long num_rel_ret) {
    long cutoff = (long)(x * (double)num_rel + 0.9);
    if (cutoff > num_rel_ret) return 0.0;
    double precis = (double)num_rel_ret / (double)t->num_ret;  /* 0/0: trec_eval's -nan */
    double int_precis = precis;
    long long rel_so_far = num_rel_ret;
    for (Py_ssize_t i = t->num_ret; i > 0 && rel_so_far > 0; i--) {
        precis = (double)rel_so_far / (double)i;
        if (int_precis < precis) int_precis = precis;
        if (t->grades[i - 1] >= level) {
            if (rel_so_far == cutoff) return int_precis;
            rel_so_far--;
        }
    }
    return int_precis;
}

static double ratio(double num, double den, int ok) { return ok ? num / den : 0.0; }

/* log(max(v, MIN_GEO_MEAN)), numpy's maximum (a NaN stays NaN) and libm's log */
static double geo_term(double v) { return log(v < MIN_GEO_MEAN ? MIN_GEO_MEAN : v); }

static double spec_value(const Spec *sp, const Topic *t) {
    long long level = sp->level, k = sp->k;
    long long num_rel = count_relevant(t->judged, t->num_judged, level);
    Py_ssize_t n = t->num_ret, top = n < k ? n : (Py_ssize_t)k;
    double dcg, ideal;
    switch (sp->code) {
    case C_P:
        return (double)count_relevant(t->grades, top, level) / (double)k;
    case C_RECALL:
        return num_rel > 0 ? (double)count_relevant(t->grades, top, level) / (double)num_rel
                           : 0.0;
    case C_SUCCESS:
        return count_relevant(t->grades, top, level) > 0 ? 1.0 : 0.0;
    case C_RELATIVE_P:  /* relevant in the top k over the most there can be, min(k, R) */
        return num_rel > 0 ? (double)count_relevant(t->grades, top, level) /
                                 (double)(k < num_rel ? k : num_rel) : 0.0;
    case C_RPREC_MULT: {  /* precision at the cutoff (long)(x * R + 0.9), past the ranking too */
        long cutoff = (long)(sp->x * (double)num_rel + 0.9);
        if (cutoff <= 0) return 0.0;
        Py_ssize_t look = n < cutoff ? n : (Py_ssize_t)cutoff;
        return (double)count_relevant(t->grades, look, level) / (double)cutoff;
    }
    case C_RECIP_RANK:
        for (Py_ssize_t r = 0; r < n; r++)
            if (t->grades[r] >= level) return 1.0 / ((double)r + 1.0);
        return 0.0;
    case C_NDCG_CUT:  /* the grades as gains; level plays no part */
        dcg_pair(t, k, &dcg, &ideal);
        return ideal > 0.0 ? dcg / ideal : dcg;
    case C_NDCG:
        dcg_pair(t, LLONG_MAX, &dcg, &ideal);
        return ideal > 0.0 ? dcg / ideal : 0.0;
    case C_MAP:
        return average_precision(t, level, -1, num_rel);
    case C_MAP_CUT:
        return average_precision(t, level, k, num_rel);
    case C_GM_MAP:
        return geo_term(average_precision(t, level, -1, num_rel));
    case C_RPREC: {
        Py_ssize_t look = n < num_rel ? n : (Py_ssize_t)num_rel;
        return look > 0 ? (double)count_relevant(t->grades, look, level) / (double)num_rel
                        : 0.0;
    }
    case C_BPREF:
        return bpref(t, level, num_rel);
    case C_GM_BPREF:
        return geo_term(bpref(t, level, num_rel));
    case C_IPREC_AT_RECALL:
        return iprec_at_recall(t, level, sp->x, num_rel, count_relevant(t->grades, n, level));
    case C_NUM_RET:
        return (double)n;
    case C_NUM_REL:
        return (double)num_rel;
    case C_ONE:
        return 1.0;
    case C_ZERO:
        return 0.0;
    }
    double ret = (double)n, rel = (double)num_rel;
    double rel_ret = (double)count_relevant(t->grades, n, level);
    switch (sp->code) {
    case C_NUM_REL_RET:
        return rel_ret;
    case C_NUM_NONREL_JUDGED_RET: {
        long long c = 0;
        for (Py_ssize_t r = 0; r < n; r++) c += t->grades[r] >= 0 && t->grades[r] < level;
        return (double)c;
    }
    case C_SET_P:
        return ratio(rel_ret, ret, n > 0);
    case C_SET_RECALL:
        return ratio(rel_ret, rel, num_rel > 0);
    case C_SET_RELATIVE_P:
        return ratio(rel_ret, n < num_rel ? ret : rel, n > 0 && num_rel > 0);
    case C_SET_MAP:
        return ratio(rel_ret * rel_ret, ret * rel, n > 0 && num_rel > 0);
    default: {  /* C_SET_F */
        if (rel_ret <= 0.0) return 0.0;
        double prec = rel_ret / ret, rec = rel_ret / rel, x = sp->x;
        return (x + 1.0) * prec * rec / (x * prec + rec);
    }
    }
}
