/* Part of trecqr.formats._scan, included once by _scan.c: one translation unit, so the compiler
   inlines across the parts. The scan itself: its state, one data line into the columns, a byte
   range of the file read in blocks, and a large file read as two halves in parallel. */

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
        unsigned char *limit = block_limit(buf, have, eof);
        if (!limit) {
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
        have = block_carry(buf, limit, have);
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
