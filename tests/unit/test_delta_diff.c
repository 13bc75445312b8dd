/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The host's delta diff (host_tool/src/offline/delta_diff.c): on old and new images made for each case
 * (identical, a rewritten tail, an insertion, scattered small changes, a replaced middle block,
 * unrelated bytes, many small copies), the regions it finds, the stream T they give, and that T with
 * the regions always gives the new image back; T's size under xz (liblzma) against the new image's.
 */
#include "delta_diff.h"
#include "mota/err.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#define OLD_N (256u * 1024u)
#define MAX_REGIONS 64u

static uint32_t rng_state;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13; /* xorshift32: the same images on every run */
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(rng() >> 24);
}

/* A pair of images and what the diff made of them. */
struct delta_case {
    uint8_t *old, *nw, *t;
    size_t old_n, new_n;
    struct tool_delta_region *r;
    size_t count;
};

/* The list is a valid one: sorted, disjoint, non-empty regions inside both images, at most max. */
static void check_regions(const struct delta_case *c, uint32_t max)
{
    uint64_t end = 0;
    assert_true(c->count <= max);
    for (size_t k = 0; k < c->count; k++) {
        const struct tool_delta_region *x = &c->r[k];
        assert_true(x->len >= 1);
        assert_true(x->start >= end);
        assert_true((uint64_t)x->start + x->len <= c->new_n);
        assert_true((uint64_t)x->src + x->len <= c->old_n);
        end = (uint64_t)x->start + x->len;
    }
}

/* The device's side: NEW[i] = T[i] + P[i]. */
static void check_inverse(const struct delta_case *c)
{
    uint8_t *back = malloc(c->new_n + 1);
    size_t i = 0;
    assert_non_null(back);
    for (size_t k = 0; k < c->count; k++) {
        for (; i < c->r[k].start; i++)
            back[i] = c->t[i];
        for (uint32_t j = 0; j < c->r[k].len; j++, i++)
            back[i] = (uint8_t)(c->t[i] + c->old[c->r[k].src + j]);
    }
    for (; i < c->new_n; i++)
        back[i] = c->t[i];
    assert_memory_equal(back, c->nw, c->new_n);
    free(back);
}

/* Diff, transform, and the checks every case must pass. */
static void run_diff(struct delta_case *c, uint32_t max)
{
    free(c->r);
    free(c->t);
    assert_int_equal(tool_delta_diff(c->old, c->old_n, c->nw, c->new_n, max, &c->r, &c->count), MOTA_OK);
    check_regions(c, max); /* first: the transform trusts the list */
    c->t = malloc(c->new_n + 1);
    assert_non_null(c->t);
    tool_delta_transform(c->old, c->nw, c->new_n, c->r, c->count, c->t);
    check_inverse(c);
}

static void case_free(struct delta_case *c)
{
    free(c->old);
    free(c->nw);
    free(c->t);
    free(c->r);
    memset(c, 0, sizeof(*c));
}

/* OLD: random bytes with a few runs of zeros (a model's padding); NEW starts as a copy of it. */
static void case_base(struct delta_case *c, size_t new_n, uint32_t seed)
{
    memset(c, 0, sizeof(*c));
    rng_state = seed;
    c->old_n = OLD_N;
    c->new_n = new_n;
    c->old = malloc(OLD_N);
    c->nw = malloc(new_n);
    assert_non_null(c->old);
    assert_non_null(c->nw);
    fill_random(c->old, OLD_N);
    for (int k = 0; k < 4; k++)
        memset(c->old + rng() % (OLD_N - 2000), 0, 1000);
    memcpy(c->nw, c->old, new_n < OLD_N ? new_n : OLD_N);
}

static void case_identical(struct delta_case *c)
{
    case_base(c, OLD_N, 1);
}

static void case_tail(struct delta_case *c) /* the last 5% rewritten */
{
    case_base(c, OLD_N, 2);
    fill_random(c->nw + OLD_N - OLD_N / 20, OLD_N / 20);
}

static void case_insert(struct delta_case *c) /* 1000 new bytes in the middle, the rest shifted */
{
    case_base(c, OLD_N + 1000, 3);
    fill_random(c->nw + OLD_N / 2, 1000);
    memcpy(c->nw + OLD_N / 2 + 1000, c->old + OLD_N / 2, OLD_N / 2);
}

static void case_scattered(struct delta_case *c) /* 1% of the bytes moved by -3..-1 or 1..3 */
{
    case_base(c, OLD_N, 4);
    for (size_t k = 0; k < OLD_N / 100; k++) { /* one in each 100 bytes, anywhere in them */
        int d = (int)(rng() % 3) + 1;
        c->nw[k * 100 + rng() % 100] += (uint8_t)(rng() & 1 ? d : -d);
    }
}

static void case_block(struct delta_case *c) /* 40% to 80% rewritten, nothing shifted */
{
    case_base(c, OLD_N, 5);
    fill_random(c->nw + OLD_N / 10 * 4, OLD_N / 10 * 4);
}

static void case_unrelated(struct delta_case *c)
{
    case_base(c, OLD_N, 6);
    fill_random(c->nw, OLD_N);
}

/* 3000 copies of 24 to 63 bytes from anywhere in OLD, each after 1 to 8 random bytes. */
static void case_copies(struct delta_case *c)
{
    size_t at = 0;
    case_base(c, OLD_N, 7);
    while (at < OLD_N) {
        size_t gap = 1 + rng() % 8, len = 24 + rng() % 40, src = rng() % (OLD_N - len);
        for (size_t i = 0; i < gap && at < OLD_N; i++)
            c->nw[at++] = (uint8_t)(rng() >> 24);
        for (size_t i = 0; i < len && at < OLD_N; i++)
            c->nw[at++] = c->old[src + i];
    }
}

/* OLD holds a stretch W twice, each copy with another tenth of its bytes changed, and NEW has W between
 * what comes before the first copy and what follows the second: both alignments predict W well. */
#define W_AT 2000u
#define W_N 200u
static void case_two_sources(struct delta_case *c)
{
    uint8_t w[W_N];
    case_base(c, 2 * W_AT + W_N, 8);
    fill_random(w, W_N);
    memcpy(c->nw + W_AT, w, W_N);
    fill_random(c->nw + W_AT + W_N, W_AT);
    memcpy(c->old + W_AT, w, W_N);
    memcpy(c->old + 2 * W_AT + W_N, w, W_N);
    memcpy(c->old + 2 * W_AT + 2 * W_N, c->nw + W_AT + W_N, W_AT);
    for (size_t i = 0; i < W_N; i += 10) {
        c->old[W_AT + i + 3] ^= 0x5a;
        c->old[2 * W_AT + W_N + i + 7] ^= 0xa5;
    }
}

static size_t zeros(const uint8_t *p, size_t n)
{
    size_t z = 0;
    for (size_t i = 0; i < n; i++)
        z += p[i] == 0;
    return z;
}

static size_t xz_size(const uint8_t *p, size_t n)
{
    size_t cap = n + n / 2 + 4096, pos = 0;
    uint8_t *out = malloc(cap);
    assert_non_null(out);
    assert_int_equal(lzma_easy_buffer_encode(9 | LZMA_PRESET_EXTREME, LZMA_CHECK_NONE, NULL, p, n, out, &pos, cap),
                     LZMA_OK);
    free(out);
    return pos;
}

static void test_identical_images_give_one_region_covering_everything_and_t_all_zero(void **state)
{
    struct delta_case c;
    (void)state;
    case_identical(&c);
    run_diff(&c, MAX_REGIONS);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.r[0].start, 0);
    assert_int_equal(c.r[0].src, 0);
    assert_int_equal(c.r[0].len, OLD_N);
    assert_int_equal(zeros(c.t, c.new_n), c.new_n);
    case_free(&c);
}

static void test_a_rewritten_tail_leaves_t_zero_everywhere_before_it(void **state)
{
    struct delta_case c;
    size_t head = OLD_N - OLD_N / 20;
    (void)state;
    case_tail(&c);
    run_diff(&c, MAX_REGIONS);
    assert_int_equal(zeros(c.t, head), head);
    assert_true(zeros(c.t + head, OLD_N / 20) < OLD_N / 20 / 64); /* the tail is sent as it is */
    assert_int_equal(c.count, 1);
    case_free(&c);
}

static void test_an_insertion_in_the_middle_is_found_as_two_regions_around_it(void **state)
{
    struct delta_case c;
    (void)state;
    case_insert(&c);
    run_diff(&c, MAX_REGIONS);
    assert_int_equal(c.count, 2);
    assert_int_equal(c.r[0].start, c.r[0].src);                 /* before: in place */
    assert_int_equal((int64_t)c.r[1].start - c.r[1].src, 1000); /* after: shifted by the insertion */
    assert_true(c.r[0].len >= OLD_N / 2 - 4 && c.r[0].start + c.r[0].len <= OLD_N / 2 + 4);
    assert_true(c.r[1].start <= OLD_N / 2 + 1004 && c.r[1].start + c.r[1].len == c.new_n);
    assert_true(zeros(c.t, c.new_n) >= c.new_n - 1000);
    case_free(&c);
}

static void test_one_percent_scattered_small_changes_leave_t_99_percent_zero(void **state)
{
    struct delta_case c;
    (void)state;
    case_scattered(&c);
    run_diff(&c, MAX_REGIONS);
    assert_true(zeros(c.t, c.new_n) >= c.new_n - c.new_n / 100);
    for (size_t i = 0; i < c.new_n; i++) /* and what is not zero is the small change itself */
        assert_true(c.t[i] <= 3 || c.t[i] >= 253);
    case_free(&c);
}

static void test_one_percent_changed_t_compresses_to_under_5_percent_of_new(void **state)
{
    struct delta_case c;
    (void)state;
    case_scattered(&c);
    run_diff(&c, MAX_REGIONS);
    size_t t_xz = xz_size(c.t, c.new_n), new_xz = xz_size(c.nw, c.new_n);
    print_message("xz: T %zu bytes, NEW %zu bytes\n", t_xz, new_xz);
    assert_true(t_xz * 20 < new_xz);
    case_free(&c);
}

static void test_a_replaced_middle_block_keeps_the_bytes_after_it_predicted(void **state)
{
    struct delta_case c;
    size_t from = OLD_N / 10 * 4, to = OLD_N / 10 * 8;
    (void)state;
    case_block(&c);
    run_diff(&c, MAX_REGIONS);
    assert_int_equal(zeros(c.t, from), from);
    assert_int_equal(zeros(c.t + to, OLD_N - to), OLD_N - to);
    assert_true(zeros(c.t + from, to - from) < (to - from) / 64);
    case_free(&c);
}

static void test_a_stretch_both_alignments_predict_goes_to_one_of_them_at_the_best_point(void **state)
{
    struct delta_case c;
    (void)state;
    case_two_sources(&c);
    run_diff(&c, MAX_REGIONS); /* checks that the two regions do not overlap */
    assert_int_equal(c.count, 2);
    assert_int_equal(c.r[0].start - c.r[0].src, 0);
    assert_int_equal((int64_t)c.r[1].src - c.r[1].start, W_AT + W_N);
    assert_int_equal(c.r[1].start, c.r[0].start + c.r[0].len); /* handed over inside W */
    assert_true(c.r[1].start >= W_AT && c.r[1].start <= W_AT + W_N);
    assert_true(zeros(c.t + W_AT, W_N) >= W_N - W_N / 10); /* W's mismatches: one copy's at most */
    assert_int_equal(zeros(c.t, c.new_n) + W_N - zeros(c.t + W_AT, W_N), c.new_n);
    case_free(&c);
}

static void test_at_one_region_same_offset_halves_merge_across_their_gap_rather_than_drop(void **state)
{
    struct delta_case c;
    (void)state;
    case_base(&c, OLD_N, 9);
    fill_random(c.nw + OLD_N / 2, 100); /* 100 bytes rewritten in place: long enough to split there */
    run_diff(&c, MAX_REGIONS);
    assert_int_equal(c.count, 2);
    run_diff(&c, 1);
    assert_int_equal(c.count, 1);
    assert_int_equal(c.r[0].len, OLD_N);
    assert_int_equal(zeros(c.t, OLD_N / 2), OLD_N / 2);
    assert_int_equal(zeros(c.t + OLD_N / 2 + 100, OLD_N / 2 - 100), OLD_N / 2 - 100);
    case_free(&c);
}

static void test_unrelated_random_new_gives_no_region(void **state)
{
    struct delta_case c;
    (void)state;
    case_unrelated(&c);
    run_diff(&c, MAX_REGIONS);
    assert_int_equal(c.count, 0);
    assert_null(c.r);
    assert_memory_equal(c.t, c.nw, c.new_n);
    case_free(&c);
}

static void test_many_small_copies_keep_to_max_regions_and_the_best_of_them(void **state)
{
    struct delta_case c;
    size_t z_all, z_64;
    (void)state;
    case_copies(&c);
    run_diff(&c, 1u << 20);
    assert_true(c.count > 2000); /* every copy found when the bound allows */
    z_all = zeros(c.t, c.new_n);
    assert_true(z_all > c.new_n * 3 / 4);
    run_diff(&c, MAX_REGIONS);
    assert_int_equal(c.count, MAX_REGIONS);
    z_64 = zeros(c.t, c.new_n); /* 64 of about 6000 copies: the longest ones, so more than 64 bytes each */
    assert_true(z_64 >= (size_t)MAX_REGIONS * 50);
    run_diff(&c, 1);
    assert_int_equal(c.count, 1);
    case_free(&c);
}

static void test_every_case_and_bound_keeps_valid_regions_that_invert_to_new(void **state)
{
    void (*cases[])(struct delta_case *) = {case_identical, case_tail,      case_insert, case_scattered,
                                            case_block,     case_unrelated, case_copies};
    const uint32_t bounds[] = {1, 2, 3, 64, 100000};
    (void)state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct delta_case c;
        cases[k](&c);
        for (size_t b = 0; b < sizeof(bounds) / sizeof(bounds[0]); b++)
            run_diff(&c, bounds[b]); /* checks the bounds and the inverse */
        case_free(&c);
    }
}

static void test_the_diff_is_deterministic(void **state)
{
    struct delta_case c;
    struct tool_delta_region *again = NULL;
    size_t n = 0;
    (void)state;
    case_copies(&c);
    run_diff(&c, 200);
    assert_int_equal(tool_delta_diff(c.old, c.old_n, c.nw, c.new_n, 200, &again, &n), MOTA_OK);
    assert_int_equal(n, c.count);
    assert_memory_equal(again, c.r, n * sizeof(*again));
    free(again);
    case_free(&c);
}

static void test_bad_arguments_are_refused_and_empty_images_give_no_region(void **state)
{
    static const uint8_t b[4] = {1, 2, 3, 4};
    struct tool_delta_region *r = (void *)b;
    size_t n = 7;
    (void)state;
    assert_int_equal(tool_delta_diff(b, 4, b, 4, 0, &r, &n), MOTA_ERR_ARG);
    assert_int_equal(tool_delta_diff(b, 4, b, 4, 1, NULL, &n), MOTA_ERR_ARG);
    assert_int_equal(tool_delta_diff(b, 4, b, 4, 1, &r, NULL), MOTA_ERR_ARG);
    assert_int_equal(tool_delta_diff(NULL, 4, b, 4, 1, &r, &n), MOTA_ERR_ARG);
    assert_int_equal(tool_delta_diff(b, (size_t)INT32_MAX + 1, b, 4, 1, &r, &n), MOTA_ERR_ARG);
    assert_int_equal(tool_delta_diff(b, 4, b, (size_t)INT32_MAX + 1, 1, &r, &n), MOTA_ERR_ARG);
    assert_int_equal(tool_delta_diff(NULL, 0, b, 4, 1, &r, &n), MOTA_OK);
    assert_null(r);
    assert_int_equal(n, 0);
    assert_int_equal(tool_delta_diff(b, 4, NULL, 0, 1, &r, &n), MOTA_OK);
    assert_int_equal(n, 0);
    assert_int_equal(tool_delta_diff(b, 4, b, 4, 1, &r, &n), MOTA_OK);
    assert_int_equal(n, 0); /* four matching bytes do not pay for a region */
    assert_null(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_images_give_one_region_covering_everything_and_t_all_zero),
        cmocka_unit_test(test_a_rewritten_tail_leaves_t_zero_everywhere_before_it),
        cmocka_unit_test(test_an_insertion_in_the_middle_is_found_as_two_regions_around_it),
        cmocka_unit_test(test_one_percent_scattered_small_changes_leave_t_99_percent_zero),
        cmocka_unit_test(test_one_percent_changed_t_compresses_to_under_5_percent_of_new),
        cmocka_unit_test(test_a_replaced_middle_block_keeps_the_bytes_after_it_predicted),
        cmocka_unit_test(test_a_stretch_both_alignments_predict_goes_to_one_of_them_at_the_best_point),
        cmocka_unit_test(test_at_one_region_same_offset_halves_merge_across_their_gap_rather_than_drop),
        cmocka_unit_test(test_unrelated_random_new_gives_no_region),
        cmocka_unit_test(test_many_small_copies_keep_to_max_regions_and_the_best_of_them),
        cmocka_unit_test(test_every_case_and_bound_keeps_valid_regions_that_invert_to_new),
        cmocka_unit_test(test_the_diff_is_deterministic),
        cmocka_unit_test(test_bad_arguments_are_refused_and_empty_images_give_no_region),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
