/* SPDX-License-Identifier: Apache-2.0 */
/* The host's delta diff: regions of the old image that predict the new one, found as bsdiff finds them
 * (C. Percival, "Naive differences of executable code", 2003: a suffix array of OLD, the longest exact
 * match of each place of NEW, extended approximately both ways), then priced and bounded in number. */
#include "delta_diff.h"

#include "mota/err.h"

#include <divsufsort.h>
#include <stdlib.h>
#include <string.h>

/* Longest match searched for: a stretch the current alignment covers this far is kept without looking
 * for a longer one elsewhere, so long runs (zeros, padding) do not cost a long search per byte. */
#define MATCH_CAP 1024
/* Exact bytes by which a new alignment must beat the current one before the diff leaves it (bsdiff's). */
#define SWITCH_MARGIN 8
/* Bytes without an exact match on the current alignment after which a return to it starts a new
 * region: the forward extension alone would not cross a long bad stretch, and would lose what follows
 * (the merge below joins the two again when the gap is cheap). */
#define SPLIT_GAP 64
/* A region's price in the units of span_gain (nonzero bytes of T): its three numbers in the patch. */
#define REGION_COST 8
/* Same-offset neighbours further apart are never merged: the gap is read to price it. */
#define MERGE_GAP_MAX 65536
#define NONE UINT32_MAX

/* ---- suffix array of OLD, with a table of its two-byte prefixes to start each search near the end ---- */

struct sa_index {
    const uint8_t *old;
    size_t n;
    saidx_t *sa;
    uint32_t *bucket; /* 65537 entries: the first suffix whose first two bytes are >= k */
};

static int sa_index_build(struct sa_index *ix, const uint8_t *old, size_t n)
{
    ix->old = old;
    ix->n = n;
    ix->sa = malloc(n * sizeof(*ix->sa));
    ix->bucket = calloc(65537, sizeof(*ix->bucket));
    if (ix->sa == NULL || ix->bucket == NULL || divsufsort(old, ix->sa, (saidx_t)n) != 0)
        return MOTA_ERR_IO; /* divsufsort fails only when it cannot allocate */
    /* a one-byte suffix "x" sorts first among those starting "x\0", so it shares their key */
    for (size_t i = 0; i < n; i++)
        ix->bucket[((uint32_t)old[i] << 8 | (i + 1 < n ? old[i + 1] : 0)) + 1]++;
    for (uint32_t k = 1; k <= 65536; k++)
        ix->bucket[k] += ix->bucket[k - 1];
    return MOTA_OK;
}

static uint32_t common_prefix(const uint8_t *a, const uint8_t *b, uint32_t n)
{
    uint32_t i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* <= 0 when OLD's suffix at p sorts before the query or starts with all of it, > 0 after it. */
static int suffix_cmp(const struct sa_index *ix, saidx_t p, const uint8_t *q, uint32_t qn)
{
    size_t sn = ix->n - (size_t)p;
    int c = memcmp(ix->old + p, q, sn < qn ? sn : qn);
    return c != 0 ? c : (sn < qn ? -1 : 0);
}

/* Length of the longest prefix of q[0..qn) found in OLD (at most MATCH_CAP), and where (*pos). */
static int64_t longest_match(const struct sa_index *ix, const uint8_t *q, size_t qn, int64_t *pos)
{
    uint32_t n = qn < MATCH_CAP ? (uint32_t)qn : MATCH_CAP, k = (uint32_t)q[0] << 8, l, r;
    uint32_t lo = ix->bucket[k], hi = ix->bucket[k + 256], best = 0;
    if (n >= 2 && ix->bucket[k | q[1]] < ix->bucket[(k | q[1]) + 1]) {
        lo = ix->bucket[k | q[1]];
        hi = ix->bucket[(k | q[1]) + 1];
    }
    *pos = 0;
    for (l = lo, r = hi; l < r;) { /* l: the first suffix sorting after the query */
        uint32_t m = l + (r - l) / 2;
        if (suffix_cmp(ix, ix->sa[m], q, n) <= 0)
            l = m + 1;
        else
            r = m;
    }
    /* the longest match sorts next to the query: just before it or just after it */
    for (uint32_t c = l > lo ? l - 1 : l; c < hi && c <= l; c++) {
        size_t sn = ix->n - (size_t)ix->sa[c];
        uint32_t len = common_prefix(ix->old + ix->sa[c], q, sn < n ? (uint32_t)sn : n);
        if (len > best) {
            best = len;
            *pos = ix->sa[c];
        }
    }
    return best;
}

/* ---- bsdiff's scan: one pending region at a time, closed when a better alignment starts ---- */

struct regions {
    struct tool_delta_region *r;
    size_t n, cap;
};

static int regions_push(struct regions *v, int64_t start, int64_t len, int64_t src)
{
    if (v->n == v->cap) {
        size_t cap = v->cap != 0 ? 2 * v->cap : 64;
        struct tool_delta_region *p = realloc(v->r, cap * sizeof(*p));
        if (p == NULL)
            return MOTA_ERR_IO;
        v->r = p;
        v->cap = cap;
    }
    v->r[v->n++] = (struct tool_delta_region){(uint32_t)start, (uint32_t)len, (uint32_t)src};
    return MOTA_OK;
}

struct differ {
    const uint8_t *old, *nw;
    int64_t old_n, new_n;
    struct sa_index ix;
    struct regions out;
    int64_t last_scan, last_pos, last_off; /* the pending region's start in NEW, in OLD, pos - scan */
    int64_t confirmed;                     /* end of the last exact match on the pending alignment */
};

/* NEW[i] == OLD[i + off], OLD's bounds checked. */
static int agrees(const struct differ *d, int64_t i, int64_t off)
{
    int64_t o = i + off;
    return o >= 0 && o < d->old_n && d->old[o] == d->nw[i];
}

/* How far the pending region grows forwards: the length with the most matches over mismatches (its
 * bytes match at least half the time), the shortest of equals. */
static int64_t extend_forward(const struct differ *d, int64_t scan)
{
    int64_t s = 0, best = 0, len = 0;
    for (int64_t i = 0; d->last_scan + i < scan && d->last_pos + i < d->old_n; i++) {
        s += d->old[d->last_pos + i] == d->nw[d->last_scan + i] ? 1 : -1;
        if (s > best) {
            best = s;
            len = i + 1;
        }
    }
    return len;
}

/* The same backwards from the match at scan (NEW) and pos (OLD), not before floor. */
static int64_t extend_backward(const struct differ *d, int64_t scan, int64_t pos, int64_t floor)
{
    int64_t s = 0, best = 0, len = 0;
    for (int64_t i = 1; scan - i >= floor && pos - i >= 0; i++) {
        s += d->old[pos - i] == d->nw[scan - i] ? 1 : -1;
        if (s > best) {
            best = s;
            len = i;
        }
    }
    return len;
}

/* Where the two extensions overlap, hand over at the byte that leaves the most bytes matching. */
static void split_overlap(const struct differ *d, int64_t scan, int64_t pos, int64_t *lenf, int64_t *lenb)
{
    int64_t from = scan - *lenb, overlap = d->last_scan + *lenf - from;
    int64_t s = 0, best = 0, keep = 0; /* keep: bytes of the overlap the pending region keeps */
    for (int64_t i = 0; i < overlap; i++) {
        s += agrees(d, from + i, d->last_off) - agrees(d, from + i, pos - scan);
        if (s > best) {
            best = s;
            keep = i + 1;
        }
    }
    *lenf -= overlap - keep;
    *lenb -= keep;
}

/* Close the pending region (it ends where its forward extension does) and open the one at scan/pos.
 * Back on the pending alignment (resume), the new region may not reach back into the old one: both
 * predict alike there, and the bad stretch between them would join them again. */
static int emit(struct differ *d, int64_t scan, int64_t pos, int resume)
{
    int ret = MOTA_OK;
    int64_t lenf = extend_forward(d, scan), lenb = 0;
    if (scan < d->new_n)
        lenb = extend_backward(d, scan, pos, resume ? d->last_scan + lenf : d->last_scan);
    if (d->last_scan + lenf > scan - lenb)
        split_overlap(d, scan, pos, &lenf, &lenb);
    if (lenf > 0)
        ret = regions_push(&d->out, d->last_scan, lenf, d->last_pos);
    d->last_scan = scan - lenb;
    d->last_pos = pos - lenb;
    d->last_off = pos - scan;
    return ret;
}

enum stop { STOP_END, STOP_SAME, STOP_NEW };

/* From scan on, the first place whose longest exact match lies on the pending alignment (STOP_SAME) or
 * beats it by more than SWITCH_MARGIN bytes (STOP_NEW); *len and *pos describe that match. */
static enum stop next_alignment(const struct differ *d, int64_t *scan_io, int64_t *len, int64_t *pos)
{
    int64_t scan = *scan_io, probe = scan, score = 0; /* score: bytes of [scan, probe) agreeing at last_off */
    enum stop ret = STOP_END;
    for (; scan < d->new_n; scan++) {
        if (probe < scan)
            probe = scan;
        *len = longest_match(&d->ix, d->nw + scan, (size_t)(d->new_n - scan), pos);
        for (; probe < scan + *len; probe++)
            score += agrees(d, probe, d->last_off);
        if (*len == score && *len != 0) {
            ret = STOP_SAME;
            break;
        }
        if (*len > score + SWITCH_MARGIN) {
            ret = STOP_NEW;
            break;
        }
        if (probe > scan)
            score -= agrees(d, scan, d->last_off);
    }
    *scan_io = scan;
    return ret;
}

static int diff_scan(struct differ *d)
{
    int ret = MOTA_OK;
    int64_t scan = 0, len = 0, pos = 0;
    while (ret == MOTA_OK && scan < d->new_n) {
        scan += len;
        enum stop s = next_alignment(d, &scan, &len, &pos);
        int real = len > SWITCH_MARGIN; /* not a chance agreement of a byte or two */
        if (s == STOP_SAME && real && scan - d->confirmed > SPLIT_GAP && agrees(d, scan, d->last_off))
            ret = emit(d, scan, scan + d->last_off, 1); /* back on the alignment after a long bad stretch */
        else if (s != STOP_SAME)
            ret = emit(d, scan, pos, 0);
        if (s != STOP_SAME || real)
            d->confirmed = scan + len;
    }
    return ret;
}

/* ---- pricing and bounding the regions ---- */

/* What predicting NEW[start..) from OLD[src..) is worth against sending NEW itself (P = 0), in nonzero
 * bytes of T: an exact byte that was not zero already saves one, a wrong one costs one (a mismatch
 * seldom compresses better than the literal, and breaks the literal's own runs). */
static int64_t span_gain(const uint8_t *old, const uint8_t *nw, int64_t start, int64_t len, int64_t src)
{
    int64_t g = 0;
    for (int64_t i = 0; i < len; i++) {
        uint8_t b = nw[start + i];
        g += b == old[src + i] ? (b != 0) : -1;
    }
    return g;
}

/* A drop (b == NONE) or a merge of b into a, and what it loses in saving; valid while the stamps hold. */
struct event {
    int64_t loss;
    uint32_t a, b, stamp_a, stamp_b;
};

struct reducer {
    const uint8_t *old, *nw;
    struct tool_delta_region *r;
    uint32_t n, alive;
    int64_t *saving;               /* span_gain - REGION_COST */
    uint32_t *prev, *next, *stamp; /* the living regions' list; a stamp changes with its region */
    struct event *heap;
    size_t heap_n, heap_cap;
};

static int event_before(const struct event *x, const struct event *y)
{
    if (x->loss != y->loss)
        return x->loss < y->loss;
    return x->a != y->a ? x->a < y->a : x->b < y->b; /* ties in a fixed order: deterministic */
}

static int heap_push(struct reducer *z, struct event e)
{
    size_t i = z->heap_n;
    if (z->heap_n == z->heap_cap) {
        size_t cap = z->heap_cap != 0 ? 2 * z->heap_cap : 256;
        struct event *h = realloc(z->heap, cap * sizeof(*h));
        if (h == NULL)
            return MOTA_ERR_IO;
        z->heap = h;
        z->heap_cap = cap;
    }
    for (z->heap_n++; i > 0 && event_before(&e, &z->heap[(i - 1) / 2]); i = (i - 1) / 2)
        z->heap[i] = z->heap[(i - 1) / 2];
    z->heap[i] = e;
    return MOTA_OK;
}

static void heap_pop(struct reducer *z)
{
    struct event last = z->heap[--z->heap_n];
    size_t i = 0, c;
    while ((c = 2 * i + 1) < z->heap_n) {
        if (c + 1 < z->heap_n && event_before(&z->heap[c + 1], &z->heap[c]))
            c++;
        if (!event_before(&z->heap[c], &last))
            break;
        z->heap[i] = z->heap[c];
        i = c;
    }
    z->heap[i] = last;
}

static int push_drop(struct reducer *z, uint32_t a)
{
    return heap_push(z, (struct event){z->saving[a], a, NONE, z->stamp[a], 0});
}

/* Merging is possible between neighbours with the same offset (start - src) and a short gap. */
static int push_merge(struct reducer *z, uint32_t a, uint32_t b)
{
    const struct tool_delta_region *x, *y;
    if (a == NONE || b == NONE)
        return MOTA_OK;
    x = &z->r[a];
    y = &z->r[b];
    int64_t gap = (int64_t)y->start - (x->start + x->len);
    if ((int64_t)x->start - x->src != (int64_t)y->start - y->src || gap > MERGE_GAP_MAX)
        return MOTA_OK;
    int64_t gain = span_gain(z->old, z->nw, x->start + x->len, gap, (int64_t)x->src + x->len);
    return heap_push(z, (struct event){-(gain + REGION_COST), a, b, z->stamp[a], z->stamp[b]});
}

/* Apply one event (its region's bytes become literal, or b's gap and bytes join a), queue what it opens. */
static int apply(struct reducer *z, const struct event *e)
{
    uint32_t a = e->a, gone = e->b == NONE ? a : e->b;
    uint32_t p = z->prev[gone], q = z->next[gone];
    z->stamp[gone] = NONE; /* invalidates its events; a living region's stamp never gets there */
    z->alive--;
    if (p != NONE)
        z->next[p] = q;
    if (q != NONE)
        z->prev[q] = p;
    if (e->b == NONE)
        return push_merge(z, p, q);
    z->r[a].len = z->r[e->b].start + z->r[e->b].len - z->r[a].start;
    z->saving[a] += z->saving[e->b] - e->loss;
    z->stamp[a]++;
    int ret = push_drop(z, a);
    if (ret == MOTA_OK)
        ret = push_merge(z, z->prev[a], a);
    return ret == MOTA_OK ? push_merge(z, a, z->next[a]) : ret;
}

static int valid(const struct reducer *z, const struct event *e)
{
    return z->stamp[e->a] == e->stamp_a && (e->b == NONE || z->stamp[e->b] == e->stamp_b);
}

/* Events cheapest first: every one that loses nothing, then, while more than max regions live, the
 * others (the regions that save the fewest bytes, or the cheapest same-offset merges). */
static int reduce_events(struct reducer *z, uint32_t max)
{
    int ret = MOTA_OK;
    for (uint32_t i = 0; i < z->n && ret == MOTA_OK; i++) {
        const struct tool_delta_region *x = &z->r[i];
        z->saving[i] = span_gain(z->old, z->nw, x->start, x->len, x->src) - REGION_COST;
        z->prev[i] = i > 0 ? i - 1 : NONE;
        z->next[i] = i + 1 < z->n ? i + 1 : NONE;
        ret = push_drop(z, i);
        if (ret == MOTA_OK && i > 0)
            ret = push_merge(z, i - 1, i);
    }
    while (ret == MOTA_OK && z->heap_n > 0) {
        struct event e = z->heap[0];
        if (valid(z, &e) && e.loss > 0 && z->alive <= max)
            break;
        heap_pop(z);
        if (valid(z, &e))
            ret = apply(z, &e);
    }
    return ret;
}

/* The living regions, in order (a merge keeps the earlier index, so index order is NEW's order). */
static int reduce(const uint8_t *old, const uint8_t *nw, struct regions *v, uint32_t max)
{
    int ret = MOTA_ERR_IO;
    struct reducer z = {.old = old, .nw = nw, .r = v->r, .n = (uint32_t)v->n, .alive = (uint32_t)v->n};
    size_t kept = 0;
    z.saving = malloc(v->n * sizeof(*z.saving));
    z.prev = malloc(v->n * sizeof(*z.prev));
    z.next = malloc(v->n * sizeof(*z.next));
    z.stamp = calloc(v->n, sizeof(*z.stamp));
    if (v->n == 0)
        ret = MOTA_OK;
    else if (z.saving != NULL && z.prev != NULL && z.next != NULL && z.stamp != NULL)
        ret = reduce_events(&z, max);
    for (uint32_t i = 0; ret == MOTA_OK && i < z.n; i++)
        if (z.stamp[i] != NONE)
            v->r[kept++] = v->r[i];
    if (ret == MOTA_OK)
        v->n = kept;
    free(z.saving);
    free(z.prev);
    free(z.next);
    free(z.stamp);
    free(z.heap);
    return ret;
}

int tool_delta_diff(const uint8_t *old, size_t old_n, const uint8_t *new_, size_t new_n, uint32_t max_regions,
                    struct tool_delta_region **out, size_t *count)
{
    int ret = MOTA_ERR_ARG;
    struct differ d;
    if (out == NULL || count == NULL || max_regions == 0 || old_n > INT32_MAX || new_n > INT32_MAX ||
        (old == NULL && old_n != 0) || (new_ == NULL && new_n != 0))
        return ret;
    *out = NULL;
    *count = 0;
    if (old_n == 0 || new_n == 0)
        return MOTA_OK; /* nothing to predict from, or nothing to predict: all literal */
    memset(&d, 0, sizeof(d));
    d.old = old;
    d.nw = new_;
    d.old_n = (int64_t)old_n;
    d.new_n = (int64_t)new_n;
    ret = sa_index_build(&d.ix, old, old_n);
    if (ret == MOTA_OK)
        ret = diff_scan(&d);
    if (ret == MOTA_OK)
        ret = reduce(old, new_, &d.out, max_regions);
    free(d.ix.sa);
    free(d.ix.bucket);
    if (ret != MOTA_OK || d.out.n == 0) {
        free(d.out.r);
        return ret;
    }
    *out = d.out.r;
    *count = d.out.n;
    return MOTA_OK;
}

void tool_delta_transform(const uint8_t *old, const uint8_t *new_, size_t new_n, const struct tool_delta_region *r,
                          size_t count, uint8_t *t)
{
    size_t i = 0;
    for (size_t k = 0; k < count; k++) {
        for (; i < r[k].start; i++)
            t[i] = new_[i];
        for (uint32_t j = 0; j < r[k].len; j++, i++)
            t[i] = (uint8_t)(new_[i] - old[r[k].src + j]);
    }
    for (; i < new_n; i++)
        t[i] = new_[i];
}
