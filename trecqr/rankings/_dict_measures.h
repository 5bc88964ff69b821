/* The per-topic values of dict_values (_dicts.c): trec_eval's loops for every measure
 * pytrec_eval computes (trec_eval's all_trec set), on one topic's ranking.
 *
 * Each value is computed with the same operations, in the same order, as trecqr's numpy
 * kernel of that measure (trecqr/measures/), which follow trec_eval's m_<measure>.c: so the
 * doubles are bit for bit the same, and a call of a few topics costs what pytrec_eval's does
 * (no arrays). Only what the plan allows reaches here (engine/plan.py, _c_specs): a relevance
 * level >= 1, no -M, trec_eval 9.0.8's recall points (11pt_avg's in increasing order), the
 * ndcg family and G without gain parameters (the gain of a grade is the grade).
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
    C_BING = 26, C_G = 27, C_NDCG_REL = 28, C_RNDCG = 29, C_INFAP = 30, C_11PT_AVG = 31,
    C_UTILITY = 32,
};

#define MIN_GEO_MEAN 0.00001  /* trec_eval's floor before the log of gm_map and gm_bpref */
#define INFAP_EPSILON 0.00001
#define UNJUDGED_GRADE (-2)   /* _dicts.c's UNJUDGED: a negative grade in the qrels */

/* one value asked for: its key, code, integer cutoff k (utility: the collection size, -N),
   double parameter x (a recall point, a multiple of R, set_F's beta), relevance level and
   -J; xs: a measure's list of doubles (11pt_avg's recall points, utility's coefficients) */
typedef struct {
    PyObject *key;
    int code;
    long long k, level;
    int judged_only;
    double x;
    double *xs;
    Py_ssize_t nxs;
} Spec;

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
    long long cutoff = (long long)(x * (double)num_rel + 0.9);  /* numpy's int64 */
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

/* The ndcg family's gain of a ranked grade with no gain parameters: the grade itself, 0 for a
   document not in the qrels or unjudged */
static double gain_of(int64_t grade) { return grade > 0 ? (double)grade : 0.0; }

/* m_binG.c: over the relevant retrieved, 1 / log2(2 + nonrelevant retrieved before) */
static double bin_g(const Topic *t, long long level, long long num_rel) {
    double total = 0.0;
    long long rel_so_far = 0;
    for (Py_ssize_t i = 0; i < t->num_ret; i++) {
        if (t->grades[i] >= level) {
            rel_so_far++;
            total += 1.0 / log2((double)(3 + i - rel_so_far));
        }
    }
    return rel_so_far > 0 ? total / (double)num_rel : 0.0;
}

/* m_G.c: each document with a gain earns gain / log2(2 + ideal cost so far - gain so far),
   the cost of a rank its ideal gain, at least 1; over the ideal ranking's total gain */
static double normalized_g(const Topic *t) {
    double sum_cost = 0.0, sum_results = 0.0, total = 0.0, ideal_total = 0.0;
    for (Py_ssize_t i = 0; i < t->num_ret; i++) {
        double ideal = i < t->num_ideal ? (double)t->ideal[i] : 0.0;
        double gain = gain_of(t->grades[i]);
        sum_cost += ideal >= 1.0 ? ideal : 1.0;
        sum_results += gain;
        if (gain != 0.0) total += gain / log2((2.0 + sum_cost) - sum_results);
    }
    for (Py_ssize_t i = 0; i < t->num_ideal; i++) ideal_total += (double)t->ideal[i];
    return ideal_total > 0.0 ? total / ideal_total : 0.0;
}

/* the ideal ranking's DCG over its first `upto` ranks, continued from *idcg at *done ranks */
static void ideal_dcg_to(const Topic *t, Py_ssize_t upto, Py_ssize_t *done, double *idcg) {
    for (; *done < upto; (*done)++) *idcg += (double)t->ideal[*done] / log2((double)(*done + 2));
}

/* m_ndcg_rel.c: nDCG at the rank of each relevant retrieved document, and of the whole
   ranking for each relevant one not retrieved, averaged over the relevant documents */
static double ndcg_rel(const Topic *t) {
    Py_ssize_t length = t->num_ideal, found = 0, done = 0;
    double dcg = 0.0, idcg = 0.0, total = 0.0;
    for (Py_ssize_t r = 0; r < t->num_ret; r++) {
        double gain = gain_of(t->grades[r]);
        dcg += gain / log2((double)(r + 2));
        if (gain > 0.0) {
            ideal_dcg_to(t, r + 1 < length ? r + 1 : length, &done, &idcg);
            total += dcg / idcg;
            found++;
        }
    }
    ideal_dcg_to(t, length, &done, &idcg);
    total = total + (double)(length - found) * dcg / idcg;
    return total > 0.0 ? total / (double)length : 0.0;
}

/* m_Rndcg.c: nDCG averaged at the ranks where the ideal ranking's gain changes, and at the end
   of a ranking longer than the ideal one by more than one */
static double rndcg(const Topic *t, long long num_rel) {
    Py_ssize_t length = t->num_ideal, n = t->num_ret, r = 0, done = 0;
    double dcg = 0.0, idcg = 0.0, total = 0.0;
    long long count = 0;
    for (Py_ssize_t i = 1; i <= length; i++) {
        ideal_dcg_to(t, i, &done, &idcg);
        for (; r < (i < n ? i : n); r++) dcg += gain_of(t->grades[r]) / log2((double)(r + 2));
        int change = i == length || t->ideal[i] != t->ideal[i - 1];
        if (change && idcg > 0.0) {
            total += dcg / idcg;
            count++;
        }
    }
    for (; r < n; r++) dcg += gain_of(t->grades[r]) / log2((double)(r + 2));
    if (n > length + 1 && idcg > 0.0) {
        total = total + dcg / idcg;
        count++;
    }
    return num_rel == 0 ? 0.0 : total / (double)count;
}

/* m_infap.c: precision at each judged relevant document estimated from the judged documents
   above it (the expression as trec_eval evaluates it), over R */
static double inf_ap(const Topic *t, long long level, long long num_rel) {
    long long rel_so_far = 0, nonrel_so_far = 0, unjudged_so_far = 0;
    double total = 0.0;
    for (Py_ssize_t r = 0; r < t->num_ret; r++) {
        int64_t g = t->grades[r];
        if (g == UNJUDGED_GRADE) { unjudged_so_far++; continue; }
        if (g < 0) continue;
        if (g < level) { nonrel_so_far++; continue; }
        rel_so_far++;
        if (r == 0) { total += 1.0; continue; }
        double fj = (double)r;
        long long rel_before = rel_so_far - 1;
        total += 1.0 / (fj + 1.0)
                 + (fj / (fj + 1.0))
                   * ((double)(rel_before + nonrel_so_far + unjudged_so_far) / fj)
                   * (((double)rel_before + INFAP_EPSILON)
                      / ((double)(rel_before + nonrel_so_far) + 2 * INFAP_EPSILON));
    }
    return num_rel > 0 ? total / (double)num_rel : total;
}

/* m_utility.c: p1 * relevant retrieved + p2 * nonrelevant retrieved + p3 * relevant not
   retrieved + p4 * nonrelevant not retrieved (of a collection of k documents, -N) */
static double utility(const Spec *sp, long long ret, long long rel, long long rel_ret) {
    const double *p = sp->xs;
    int64_t rest = (int64_t)((uint64_t)sp->k + (uint64_t)rel_ret - (uint64_t)ret - (uint64_t)rel);
    return p[0] * (double)rel_ret + p[1] * (double)(ret - rel_ret) + p[2] * (double)(rel - rel_ret)
           + p[3] * (double)rest;
}

static double ratio(double num, double den, int ok) { return ok ? num / den : 0.0; }

/* log(max(v, MIN_GEO_MEAN)), numpy's maximum (a NaN stays NaN) and libm's log */
static double geo_term(double v) { return log(v < MIN_GEO_MEAN ? MIN_GEO_MEAN : v); }

/* one value of one topic; num_rel: the topic's relevant judgments at sp->level (counted once
   a topic by the caller, for the specs of one level) */
static double spec_value(const Spec *sp, const Topic *t, long long num_rel) {
    long long level = sp->level, k = sp->k;
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
        long long cutoff = (long long)(sp->x * (double)num_rel + 0.9);
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
    case C_11PT_AVG: {  /* the recall points' values added from the last point to the first */
        long long rel_ret = count_relevant(t->grades, n, level);
        double sum = 0.0;
        for (Py_ssize_t j = sp->nxs - 1; j >= 0; j--)
            sum += iprec_at_recall(t, level, sp->xs[j], num_rel, rel_ret);
        return sum / (double)sp->nxs;
    }
    case C_BING:
        return bin_g(t, level, num_rel);
    case C_G:
        return normalized_g(t);
    case C_NDCG_REL:
        return ndcg_rel(t);
    case C_RNDCG:
        return rndcg(t, num_rel);
    case C_INFAP:
        return inf_ap(t, level, num_rel);
    case C_UTILITY:
        return utility(sp, n, num_rel, count_relevant(t->grades, n, level));
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
