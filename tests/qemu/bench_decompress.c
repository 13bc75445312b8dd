/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark firmware: the compressed-payload decoders on the Cortex-M55, as
 * the agent runs it (a 256-byte program buffer, matches read back from the
 * "flash" written so far), timed with SysTick under -icount (31.25
 * instructions per tick), beside memcpy and SHA-256 of the same bytes (the
 * agent hashes every byte it receives); a delta job (regions and a source
 * image) is decoded with the patcher in the sink, as the agent's, and again
 * without it, the difference being the patcher's. Jobs come from the harness at
 * 0x60000000 (tests/qemu/bench_decompress.py); one line per job, exit code = failures.
 */
#include "board.h"

#include "mota/crypto.h"
#include "mota/err.h"
#include "mota/decompress.h"
#include "mota/delta.h"

#include <string.h>

#define JOB_TABLE 0x60000000u
#define JOB_MAGIC 0x345A4C4Du /* "MLZ4" */

struct job {
    char name[20];
    uint32_t alg; /* MOTA_DECOMP_LZ4, _DEFLATE or _LZMA */
    uint32_t frame_addr, frame_len;
    uint32_t out_addr, plain_len, block; /* the decoded image goes to out_addr */
    uint32_t ref_addr;                   /* the image it must equal */
    uint32_t src_addr, src_len;          /* a delta's source image (0: not a delta) */
    uint32_t regions_addr, regions_len;  /* its regions, as its manifest has them */
};

struct job_table {
    uint32_t magic, n_jobs;
    struct job jobs[];
};

/* the agent's sink (agent/src/upload.c z_write, z_copy, z_peek): whole 256-byte units "programmed" */
struct unit_sink {
    uint8_t *flash; /* where the image goes */
    uint32_t off;   /* bytes programmed */
    uint8_t unit[256];
    uint32_t fill;
    struct mota_delta *patcher; /* a delta job's, as the agent's sink runs it (upload.c z_delta); NULL: none */
    struct mota_delta_source source;
};

/* the sink's calls in two builds, as the agent's (z_write_as...): a plain payload's, and a delta's */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE void patch(struct unit_sink *s, bool delta, uint32_t at, uint8_t *p, size_t n, bool to_image)
{
    if (delta)
        (void)mota_delta_apply(s->patcher, at, p, n, to_image, &s->source);
}

static void prog(struct unit_sink *s)
{
    memcpy(s->flash + s->off, s->unit, s->fill);
    s->off += s->fill;
    s->fill = 0;
}

ALWAYS_INLINE int u_write_as(struct unit_sink *s, const uint8_t *p, size_t n, bool delta)
{
    while (n > 0) {
        uint32_t k = sizeof(s->unit) - s->fill;
        k = k < n ? k : (uint32_t)n;
        memcpy(s->unit + s->fill, p, k);
        patch(s, delta, s->off + s->fill, s->unit + s->fill, k, true);
        s->fill += k;
        p += k;
        n -= k;
        if (s->fill == sizeof(s->unit))
            prog(s);
    }
    return MOTA_OK;
}

/* as z_copy: a run longer than its distance reads its period once and repeats it in the unit */
ALWAYS_INLINE int u_copy_as(struct unit_sink *s, uint32_t dist, uint32_t n, bool delta)
{
    while (n > 0) {
        uint32_t src = s->off + s->fill - dist, k = sizeof(s->unit) - s->fill, m;
        uint8_t *to = s->unit + s->fill;
        k = k < n ? k : n;
        m = k < dist ? k : dist;
        if (src >= s->off) {
            memcpy(to, s->unit + (src - s->off), m);
        } else {
            m = m < s->off - src ? m : s->off - src;
            memcpy(to, s->flash + src, m);
        }
        patch(s, delta, src, to, m, false); /* a delta: read back in the stream's terms, written in the image's */
        if (m < dist)
            k = m;
        for (uint32_t have = m; have < k; have *= 2)
            memcpy(to + have, to, have < k - have ? have : k - have);
        patch(s, delta, s->off + s->fill, to, k, true);
        s->fill += k;
        n -= k;
        if (s->fill == sizeof(s->unit))
            prog(s);
    }
    return MOTA_OK;
}

/* an LZMA matched literal's byte: from the unit while it is there, else from the image programmed */
ALWAYS_INLINE int u_peek_as(struct unit_sink *s, uint32_t dist, uint8_t *b, bool delta)
{
    uint32_t src = s->off + s->fill - dist;
    *b = src >= s->off ? s->unit[src - s->off] : s->flash[src];
    patch(s, delta, src, b, 1, false);
    return MOTA_OK;
}

static int u_write(void *ctx, const uint8_t *p, size_t n)
{
    return u_write_as(ctx, p, n, false);
}

static int u_copy(void *ctx, uint32_t dist, uint32_t n)
{
    return u_copy_as(ctx, dist, n, false);
}

static int u_peek(void *ctx, uint32_t dist, uint8_t *b)
{
    return u_peek_as(ctx, dist, b, false);
}

static int d_write(void *ctx, const uint8_t *p, size_t n)
{
    return u_write_as(ctx, p, n, true);
}

static int d_copy(void *ctx, uint32_t dist, uint32_t n)
{
    return u_copy_as(ctx, dist, n, true);
}

static int d_peek(void *ctx, uint32_t dist, uint8_t *b)
{
    return u_peek_as(ctx, dist, b, true);
}

static const char *alg_name(uint32_t alg)
{
    return alg == MOTA_DECOMP_LZ4 ? "lz4" : alg == MOTA_DECOMP_DEFLATE ? "deflate" : "lzma";
}

/* with_patch: a delta job's patcher on (else its stream is decoded alone) */
static int decode(const struct job *j, bool with_patch)
{
    static struct unit_sink s;
    static struct mota_delta d;
    static struct mota_decompress z;
    const struct mota_decomp_sink plain = {u_write, u_copy, &s, u_peek}, patched = {d_write, d_copy, &s, d_peek};
    const uint8_t *in = (const uint8_t *)(uintptr_t)j->frame_addr;
    size_t left = j->frame_len;
    s.flash = (uint8_t *)(uintptr_t)j->out_addr;
    s.off = s.fill = 0;
    s.patcher = NULL;
    s.source = (struct mota_delta_source){(const uint8_t *)(uintptr_t)j->src_addr, NULL, NULL};
    if (with_patch && j->regions_len > 0) {
        int ret =
            mota_delta_load(&d, (const uint8_t *)(uintptr_t)j->regions_addr, j->regions_len, j->plain_len, j->src_len);
        if (ret != MOTA_OK)
            return ret;
        s.patcher = &d;
    }
    mota_decompress_start(&z, j->alg, j->plain_len, j->block, 0);
    while (left > 0) {
        size_t used = 0;
        int ret = mota_decompress_feed(&z, in, left, s.patcher != NULL ? &patched : &plain, &used);
        if (ret != MOTA_OK)
            return ret;
        in += used;
        left -= used;
    }
    if (s.fill > 0)
        prog(&s);
    return mota_decompress_finish(&z);
}

static int run_job(const struct job *j)
{
    struct mota_sha256 sha;
    uint8_t md[MOTA_SHA256_LEN];
    uart_puts("decode ");
    uart_puts(j->name);
    uart_puts(" ");
    uart_puts(alg_name(j->alg));
    ticks_start();
    uint64_t t0 = ticks_now();
    int ret = decode(j, true);
    uint64_t dec = ticks_now() - t0, alone = 0;
    if (j->regions_len > 0) { /* the stream alone: what the patcher adds is the difference */
        uint64_t u0 = ticks_now();
        int r2 = decode(j, false);
        alone = ticks_now() - u0;
        ret = ret != MOTA_OK ? ret : r2;
    }
    uint64_t t1 = ticks_now();
    memcpy((void *)(uintptr_t)j->out_addr, (const void *)(uintptr_t)j->ref_addr, j->plain_len);
    uint64_t t2 = ticks_now();
    mota_sha256_init(&sha);
    mota_sha256_update(&sha, (const void *)(uintptr_t)j->frame_addr, j->frame_len);
    mota_sha256_finish(&sha, md);
    uint64_t t3 = ticks_now();
    uart_puts(" plain ");
    uart_dec(j->plain_len);
    uart_puts(" frame ");
    uart_dec(j->frame_len);
    uart_puts(" decode ticks ");
    uart_dec((uint32_t)dec);
    uart_puts(" memcpy ticks ");
    uart_dec((uint32_t)(t2 - t1));
    uart_puts(" sha256 ticks ");
    uart_dec((uint32_t)(t3 - t2));
    if (j->regions_len > 0) {
        uart_puts(" unpatched ticks ");
        uart_dec((uint32_t)alone);
    }
    if (ret != MOTA_OK) {
        uart_puts(": FAILED ");
        uart_puts(mota_err_name(ret));
        uart_puts("\r\n");
        return 1;
    }
    uart_puts(": PASS\r\n");
    return 0;
}

/* the decode is checked against the reference before the timing of memcpy overwrites it: run twice */
static int check_job(const struct job *j)
{
    if (decode(j, true) != MOTA_OK ||
        memcmp((const void *)(uintptr_t)j->out_addr, (const void *)(uintptr_t)j->ref_addr, j->plain_len) != 0) {
        uart_puts("decode ");
        uart_puts(j->name);
        uart_puts(": FAILED the image differs from the reference\r\n");
        return 1;
    }
    return 0;
}

int main(void)
{
    const struct job_table *t = (const struct job_table *)(uintptr_t)JOB_TABLE;
    uart_puts("mota decoder bench on mps3-an547: decoder state lz4 ");
    uart_dec((uint32_t)sizeof(struct mota_lz4));
    uart_puts(" deflate ");
    uart_dec((uint32_t)sizeof(struct mota_inflate));
    uart_puts(" bytes lzma ");
    uart_dec((uint32_t)sizeof(struct mota_lzma));
    uart_puts(" bytes patcher ");
    uart_dec((uint32_t)(sizeof(struct mota_delta) + sizeof(struct mota_delta_source) + 2 * sizeof(uint32_t)));
    uart_puts(" bytes\r\n");
    if (t->magic != JOB_MAGIC || t->n_jobs == 0 || t->n_jobs > 16) {
        uart_puts("no job table\r\n");
        return 98;
    }
    int failures = 0;
    for (uint32_t i = 0; i < t->n_jobs; i++) {
        int bad = check_job(&t->jobs[i]);
        failures += bad ? bad : run_job(&t->jobs[i]);
    }
    uart_puts("summary: ");
    uart_dec(t->n_jobs - (uint32_t)failures);
    uart_puts(" passed, ");
    uart_dec((uint32_t)failures);
    uart_puts(" failed\r\n");
    return failures;
}
