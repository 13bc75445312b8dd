/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The upload stream (mota_agent_write): the container head collected and checked before anything is
 * erased, the inactive slot erased, each payload (compressed ones through mota/decompress.h) hashed and
 * programmed a unit at a time with its progress journaled, and a resume after a reset. The verdict after
 * the last byte (verify from flash, install, self-test, trial) is agent.c's: mota_agent_finish_upload.
 */
#include "agent_int.h"

#include "mota/decompress.h"
#include "mota/err.h"

#include <string.h>

/* The content key and every cipher state: when the upload ends, whichever way. */
void mota_agent_upload_wipe(struct mota_agent *a)
{
    mota_cipher_wipe(a->up.unit, sizeof(a->up.unit));
#if MOTA_FEATURE_DECRYPT
    mota_cipher_wipe(a->up.cek, sizeof(a->up.cek));
    mota_cipher_wipe(&a->up.aes, sizeof(a->up.aes));
    mota_cipher_wipe(&a->up.gcm, sizeof(a->up.gcm));
    mota_cipher_wipe(&a->up.ctr, sizeof(a->up.ctr));
    mota_cipher_wipe(a->up.x, sizeof(a->up.x));
    a->up.cek_ok = false;
    a->up.enc_alg = 0;
#else
    (void)a;
#endif
}

/* The upload refused: its secrets wiped, the reason noted (journaled once something was erased). */
int mota_agent_fail_upload(struct mota_agent *a, unsigned m, int reason)
{
    mota_agent_upload_wipe(a);
    a->last_error = reason;
    a->up.model = MOTA_AGENT_NOT_RECEIVING;
    a->up.ready = false;
    if (a->st[m].upload_state != MOTA_UPLOAD_NONE)
        (void)mota_agent_journal(a, J_UPLOAD_ABORT, m, reason); /* the reason stands even if the journal write fails */
    else
        mota_agent_model_error(a, m, reason);
    return reason;
}

/*
 * Progressive erase: the slot's sectors up to slot offset end are erased from where this upload's
 * erasing stopped, each just before its first program, and journaled (docs/agent.md "Progressive
 * erase"): reception goes on between sectors, and a resume knows what is erased.
 */
static int erase_to(struct mota_agent *a, unsigned m, uint32_t end)
{
    struct mota_agent_model_state *s = &a->st[m];
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t base = mota_agent_slot_base(a, m, s->upload.slot), at = s->upload_erased, t0 = mota_agent_now_us(a);
    struct jrec r;
    int ret = MOTA_ERR_FLASH_BOUNDS;
    if (end <= at)
        return MOTA_OK;
    while (at < end) {
        uint32_t start = 0, size = 0;
        if ((ret = mota_flash_sector(fl, base + at, &start, &size)) != MOTA_OK)
            return ret;
        if (a->on_busy != NULL) /* the link holds its host through an erase it cannot absorb */
            a->on_busy(a->phase_ctx, mota_flash_erase_max_us(fl, start));
        mota_agent_kick(a);
        ret = fl->erase(fl->ctx, start);
        mota_agent_kick(a); /* the port's watchdog outlasts the longest erase: docs/porting.md */
        if (ret != MOTA_OK)
            return ret;
        at = start + size - base;
    }
    a->timing.erase_us += mota_agent_now_us(a) - t0;
    mota_journal_rec(&r, J_UPLOAD_ERASED, m);
    r.value = at;
    r.flags = 1;
    return mota_journal_append(&a->journal, &r);
}

/*
 * After a reset, units past the resume point may already be on flash: each identical one is kept, an
 * erased one programmed (a unit whose bytes are all erased is never programmed: on ECC flash it may
 * have been, once), anything else is a unit torn by the reset (MOTA_ERR_FLASH_NOT_ERASED, or the
 * read's MOTA_ERR_FLASH_ECC).
 */
static int prog_again(struct mota_agent *a, unsigned m, uint32_t at, uint32_t k, uint32_t len)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t p = fl->prog_size, base = mota_agent_slot_base(a, m, a->st[m].upload.slot);
    uint8_t cur[64]; /* prog_size <= 64: mota_agent_init */
    for (uint32_t i = 0; i < len; i += p) {
        const uint8_t *want = a->up.unit + k + i;
        a->up.unit_at = at + i; /* where a torn unit is, for redo_sectors */
        int ret = fl->read(fl->ctx, base + at + i, cur, p);
        if (ret != MOTA_OK)
            return ret;
        if (memcmp(cur, want, p) == 0)
            continue;
        for (uint32_t b = 0; b < p; b++)
            if (cur[b] != fl->erased_value)
                return MOTA_ERR_FLASH_NOT_ERASED;
        if ((ret = fl->prog(fl->ctx, base + at + i, want, p)) != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* Program n bytes of the unit buffer, from its byte k, at slot offset at (after a resume: unit by unit). */
static int prog_span(struct mota_agent *a, unsigned m, uint32_t at, uint32_t k, uint32_t n)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t abs = mota_agent_slot_base(a, m, a->st[m].upload.slot) + at;
    if (n == 0)
        return MOTA_OK;
    a->up.unit_at = at;
    if (a->up.resumed && at >= a->st[m].upload_erased)
        a->up.resumed = false; /* programs are sequential: from the sectors not yet erased on, nothing is there */
    int ret = erase_to(a, m, at + n);
    if (ret == MOTA_OK)
        ret = a->up.resumed ? prog_again(a, m, at, k, n) : fl->prog(fl->ctx, abs, a->up.unit + k, n);
    return ret;
}

/*
 * Program the buffered bytes (padded to whole units with the erased value), their sectors erased first.
 * A buffer that reaches past the erased sectors is programmed in two: up to them, then the rest once
 * they are erased, so that a program torn by a reset lies in the sectors the last erase journaled.
 */
static int prog_unit(struct mota_agent *a)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    unsigned m = (unsigned)a->up.model;
    uint32_t at = a->up.unit_slot_off, len = mota_agent_align_up(a->up.unit_fill, fl->prog_size);
    uint32_t erased = a->st[m].upload_erased, first = erased > at && erased < at + len ? erased - at : len;
    memset(a->up.unit + a->up.unit_fill, fl->erased_value, len - a->up.unit_fill);
    int ret = prog_span(a, m, at, 0, first);
    if (ret == MOTA_OK)
        ret = prog_span(a, m, at + first, first, len - first);
    a->up.unit_slot_off += len;
    a->up.unit_fill = 0;
    return ret;
}

/* ---- compressed payloads: the decoder writes the image through the program unit ---- */

/* A full unit from the decoder's sink: a flash error is kept for the caller, which may restart the
 * upload (a unit torn before a reset) once the decoder has returned. */
static int z_prog(struct mota_agent *a)
{
    a->up.z_resumed = a->up.resumed;
    int ret = prog_unit(a);
    a->up.z_err = ret;
    return ret;
}

/* Image offset of the next byte the decoder's sink gives the program unit. */
static uint32_t z_pos(const struct mota_agent *a)
{
    return a->up.unit_slot_off - a->up.layout.comp_slot[a->up.sha_comp] + a->up.unit_fill;
}

/* n bytes at image offset at, of a delta: its stream's bytes become image bytes (to_image), or image bytes
 * read back become the stream's again (the decoder's history is the stream's). */
static int z_delta(struct mota_agent *a, uint32_t at, uint8_t *p, size_t n, bool to_image)
{
#if MOTA_FEATURE_DELTA
    return mota_delta_apply(&a->up.delta, at, p, n, to_image, &a->up.dsrc); /* a source's error, not a torn unit */
#else
    (void)a, (void)at, (void)p, (void)n, (void)to_image;
    return MOTA_OK;
#endif
}

/* The sink's three calls, each in two builds: for a payload, and for a delta's (delta: the patcher on), so
 * that the patcher costs a plain payload's bytes nothing (ALWAYS_INLINE: one body, constant delta). */
#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE int z_write_as(struct mota_agent *a, const uint8_t *p, size_t n, bool delta)
{
    while (n > 0) {
        uint32_t k = mota_agent_chunk_size(a) - a->up.unit_fill;
        if (k > n)
            k = (uint32_t)n;
        memcpy(a->up.unit + a->up.unit_fill, p, k);
        int ret = delta ? z_delta(a, z_pos(a), a->up.unit + a->up.unit_fill, k, true) : MOTA_OK;
        a->up.unit_fill += k;
        p += k;
        n -= k;
        if (ret == MOTA_OK && a->up.unit_fill == mota_agent_chunk_size(a))
            ret = z_prog(a);
        if (ret != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* A match: bytes dist back in the image, from the unit when they are still there, else from the
 * flash they were programmed to (the decoder checked dist against what was written). A run longer than
 * its distance repeats its first dist bytes: read once, then repeated in the unit (for a delta, in the
 * stream's terms: a run of zeros there is dist 1, and its bytes are converted once a piece, not each). */
ALWAYS_INLINE int z_copy_as(struct mota_agent *a, uint32_t dist, uint32_t n, bool delta)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t img_off = a->up.layout.comp_slot[a->up.sha_comp];
    while (n > 0) {
        uint32_t ubase = a->up.unit_slot_off - img_off, src = ubase + a->up.unit_fill - dist;
        uint32_t k = mota_agent_chunk_size(a) - a->up.unit_fill, m;
        uint8_t *to = a->up.unit + a->up.unit_fill;
        k = k < n ? k : n;
        m = k < dist ? k : dist; /* what is read: a run that does not overlap what it writes */
        int ret = MOTA_OK;
        if (src >= ubase) {
            memcpy(to, a->up.unit + (src - ubase), m);
        } else {
            m = m < ubase - src ? m : ubase - src;
            if (a->up.img != NULL)
                memcpy(to, a->up.img + src, m);
            else
                ret = fl->read(fl->ctx,
                               mota_agent_slot_base(a, (unsigned)a->up.model, a->st[a->up.model].upload.slot) +
                                   img_off + src,
                               to, m);
        }
        if (ret != MOTA_OK)
            return a->up.z_err = ret; /* the slot's read: a unit torn before a reset, maybe */
        if (delta && (ret = z_delta(a, src, to, m, false)) != MOTA_OK) /* a delta: read back in the stream's terms */
            return ret;
        if (m < dist)
            k = m;
        for (uint32_t have = m; have < k; have *= 2) /* the period repeated: doubled, whole periods each time */
            memcpy(to + have, to, have < k - have ? have : k - have);
        if (delta && (ret = z_delta(a, z_pos(a), to, k, true)) != MOTA_OK) /* ... and the image's here */
            return ret;
        a->up.unit_fill += k;
        n -= k;
        if (a->up.unit_fill == mota_agent_chunk_size(a) && (ret = z_prog(a)) != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* One image byte dist back (an LZMA matched literal's context), wherever it is, as for z_copy. */
ALWAYS_INLINE int z_peek_as(struct mota_agent *a, uint32_t dist, uint8_t *b, bool delta)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t img_off = a->up.layout.comp_slot[a->up.sha_comp];
    uint32_t ubase = a->up.unit_slot_off - img_off, src = ubase + a->up.unit_fill - dist;
    int ret = MOTA_OK;
    if (src >= ubase)
        *b = a->up.unit[src - ubase];
    else if (a->up.img != NULL)
        *b = a->up.img[src];
    else
        ret = fl->read(fl->ctx,
                       mota_agent_slot_base(a, (unsigned)a->up.model, a->st[a->up.model].upload.slot) + img_off + src,
                       b, 1);
    if (ret != MOTA_OK)
        return a->up.z_err = ret;
    return delta ? z_delta(a, src, b, 1, false) : MOTA_OK;
}

static int z_write(void *ctx, const uint8_t *p, size_t n)
{
    return z_write_as(ctx, p, n, false);
}

static int z_copy(void *ctx, uint32_t dist, uint32_t n)
{
    return z_copy_as(ctx, dist, n, false);
}

static int z_peek(void *ctx, uint32_t dist, uint8_t *b)
{
    return z_peek_as(ctx, dist, b, false);
}

#if MOTA_FEATURE_DELTA
static int zd_write(void *ctx, const uint8_t *p, size_t n)
{
    return z_write_as(ctx, p, n, true);
}

static int zd_copy(void *ctx, uint32_t dist, uint32_t n)
{
    return z_copy_as(ctx, dist, n, true);
}

static int zd_peek(void *ctx, uint32_t dist, uint8_t *b)
{
    return z_peek_as(ctx, dist, b, true);
}
#endif

/* The decoder's sink for the component being received: the patcher's when it is a delta. */
static struct mota_decomp_sink z_sink(struct mota_agent *a)
{
#if MOTA_FEATURE_DELTA
    if (a->up.delta_on)
        return (struct mota_decomp_sink){zd_write, zd_copy, a, zd_peek};
#endif
    return (struct mota_decomp_sink){z_write, z_copy, a, z_peek};
}

#if MOTA_FEATURE_DELTA
static int src_read(void *ctx, uint32_t off, uint8_t *buf, size_t n)
{
    struct mota_agent *a = ctx;
    return a->cfg->port->flash->read(a->cfg->port->flash->ctx, a->up.src_base + off, buf, n);
}
#endif

/* A delta component's patcher: its regions, and the active model's image of its role as the source (read,
 * not mapped, on ECC flash: a mapped read of a torn unit faults, mota/port.h). */
static int z_start_delta(struct mota_agent *a, unsigned m, const struct mota_component *comp)
{
#if MOTA_FEATURE_DELTA
    const struct mota_flash *fl = a->cfg->port->flash;
    int ret = MOTA_OK;
    a->up.delta_on = comp->delta;
    if (!comp->delta)
        return MOTA_OK;
    if ((ret = mota_agent_delta_source(a, m, comp, &a->up.src_base)) != MOTA_OK ||
        (ret = mota_delta_load(&a->up.delta, comp->regions, comp->regions_len, (uint32_t)comp->size, comp->src_size)) !=
            MOTA_OK)
        return ret;
    a->up.dsrc.map = (fl->flags & MOTA_FLASH_PROGRAM_ONCE) ? NULL : fl->map(fl->ctx, a->up.src_base, comp->src_size);
    a->up.dsrc.read = src_read;
    a->up.dsrc.ctx = a;
    return MOTA_OK;
#else
    (void)a, (void)m;
    return comp->delta ? MOTA_ERR_DELTA_OFF : MOTA_OK;
#endif
}

/* Component c's decoder, at `plain` bytes of its image (0: a new frame, else a block boundary). */
static int z_start(struct mota_agent *a, unsigned m, int c, uint32_t plain)
{
    const struct mota_flash *fl = a->cfg->port->flash;
    const struct mota_component *comp = &a->up.man.comp[c];
    uint32_t at = mota_agent_slot_base(a, m, a->st[m].upload.slot) + a->up.layout.comp_slot[c];
    a->up.img = fl->map(fl->ctx, at, (size_t)comp->size);
    int ret = z_start_delta(a, m, comp);
    return ret != MOTA_OK ? ret
                          : mota_decompress_start(&a->up.z, comp->z_alg, (uint32_t)comp->size, comp->z_block, plain);
}

/* ---- transformed payloads (docs/agent.md "Transformed payloads"): the bytes sent are hashed (and, with
 * AES-GCM, authenticated) as they are consumed; decrypted, then decoded or given to the program unit ---- */

static uint32_t content_start(const struct mota_agent *a, int c)
{
    return a->up.layout.comp_stream[c] + a->up.layout.comp_phl[c];
}

/* Bytes of component c's payload that are its text: a GCM tag follows them. */
static uint32_t x_body(const struct mota_agent *a, int c)
{
    uint32_t n = (uint32_t)a->up.man.comp[c].wire_size;
#if MOTA_FEATURE_DECRYPT
    if (a->up.enc_alg == MOTA_ENC_A128GCM)
        n -= MOTA_GCM_TAG_LEN; /* the profile made sure it is there */
#endif
    return n;
}

/* Image bytes component c's payload has given the program unit so far. */
static uint32_t x_out(struct mota_agent *a, int c)
{
    return a->up.man.comp[c].compressed ? mota_decompress_out(&a->up.z) : a->up.x_plain;
}

#if MOTA_FEATURE_DECRYPT
/* Component c's cipher, its text decrypted from byte `at` on and authenticated from byte `auth` on (a
 * multiple of 64: 0, or a resume point's, with its GHASH state). */
static int x_cipher(struct mota_agent *a, int c, uint32_t auth, const uint8_t *ghash, uint32_t at)
{
    const struct mota_component *comp = &a->up.man.comp[c];
    struct mota_enc_info ei;
    uint8_t aad[MOTA_ENC_AAD_MAX];
    size_t aad_len = 0;
    a->up.enc_alg = 0;
    if (!comp->encrypted)
        return MOTA_OK;
    int ret = a->up.cek_ok ? mota_enc_info_decode(comp->enc_info, comp->enc_len, &ei) : MOTA_ERR_INTERNAL;
    if (ret != MOTA_OK)
        return ret;
    mota_aes128_setkey(&a->up.aes, a->up.cek, false);
    a->up.enc_alg = ei.alg;
    if (ei.alg == MOTA_ENC_A128CTR) {
        mota_ctr_start(&a->up.ctr, &a->up.aes, ei.iv, at);
        return MOTA_OK;
    }
    if (auth != 0 && ghash == NULL)
        return MOTA_ERR_JOURNAL; /* a resume point without its GHASH state */
    if ((ret = mota_enc_aad(&ei, aad, sizeof(aad), &aad_len)) != MOTA_OK)
        return ret;
    mota_gcm_start(&a->up.gcm, &a->up.aes, ei.iv, true, aad, aad_len);
    if (ghash != NULL && (ret = mota_gcm_resume(&a->up.gcm, ghash, auth)) != MOTA_OK)
        return ret;
    (void)mota_gcm_state(&a->up.gcm, a->up.y64);
    mota_gcm_stream_at(&a->up.gcm, at);
    return MOTA_OK;
}
#endif

/* n bytes of text consumed: hashed, and authenticated with AES-GCM; the GHASH state is kept at each multiple
 * of 64 bytes, where the hash's whole blocks end, for a resume point there. */
static void x_absorb(struct mota_agent *a, const uint8_t *ct, uint32_t n)
{
    mota_sha256_update(&a->up.sha, ct, n);
#if MOTA_FEATURE_DECRYPT
    if (a->up.enc_alg != MOTA_ENC_A128GCM || n == 0)
        return;
    uint64_t at = a->up.gcm.len, cut = (at + n) & ~(uint64_t)63u;
    if (cut > at) {
        mota_gcm_absorb(&a->up.gcm, ct, (size_t)(cut - at));
        (void)mota_gcm_state(&a->up.gcm, a->up.y64);
        ct += cut - at;
        n -= (uint32_t)(cut - at);
    }
    mota_gcm_absorb(&a->up.gcm, ct, n);
#endif
}

/* Component c's transform from image byte `plain` on (0: its start). */
static int x_start(struct mota_agent *a, unsigned m, int c, uint32_t plain)
{
    a->up.z_skip = 0;
    a->up.x_err = MOTA_OK;
    a->up.x_plain = plain;
#if MOTA_FEATURE_DELTA
    a->up.delta_on = false; /* an earlier component's patcher never touches this one's bytes */
#endif
    return a->up.man.comp[c].compressed ? z_start(a, m, c, plain) : MOTA_OK;
}

/* The cipher of a resumed component: the key stream at its boundary b, GHASH at the resume point o */
static int x_resume_cipher(struct mota_agent *a, unsigned m, int c, uint32_t o, uint32_t done)
{
#if MOTA_FEATURE_DECRYPT
    const struct mota_agent_model_state *s = &a->st[m];
    const uint8_t *gh = s->upload_ghash_at == o ? s->upload_ghash : NULL;
    if (x_cipher(a, c, done, gh, done + s->upload_skip) != MOTA_OK || done + s->upload_skip > x_body(a, c))
        return MOTA_ERR_JOURNAL;
#else
    (void)a, (void)m, (void)c, (void)o, (void)done;
#endif
    return MOTA_OK;
}

/*
 * Resume a transformed payload at stream offset o, `done` bytes into it: the journal holds the
 * transported hash's state there (o is where the hash's whole blocks end; with AES-GCM also GHASH's),
 * how many bytes on the boundary is (a decoder's block, or a program unit's end), and the image bytes
 * written up to it. MOTA_ERR_JOURNAL if they disagree.
 */
static int x_resume_at(struct mota_agent *a, unsigned m, int c, uint32_t o, uint32_t done)
{
    const struct mota_agent_model_state *s = &a->st[m];
    const struct mota_component *comp = &a->up.man.comp[c];
    uint32_t unit = comp->compressed ? comp->z_block : mota_agent_chunk_size(a);
    bool at_block = s->upload_plain % unit == 0 || s->upload_plain == comp->size;
    if (done % 64u != 0 || s->upload_skip >= 64u || s->upload_plain > comp->size || !at_block ||
        (uint64_t)done + s->upload_skip > comp->wire_size ||
        (!comp->compressed && s->upload_plain != done + s->upload_skip))
        return MOTA_ERR_JOURNAL;
    if (x_resume_cipher(a, m, c, o, done) != MOTA_OK)
        return MOTA_ERR_JOURNAL;
    (void)mota_sha256_resume(&a->up.sha, s->upload_mid, done); /* done is a multiple of 64 */
    a->up.sha_comp = c;
    a->up.unit_slot_off = a->up.layout.comp_slot[c] + s->upload_plain;
    a->up.expected = o;
    if (x_start(a, m, c, s->upload_plain) != MOTA_OK)
        return MOTA_ERR_JOURNAL;
    a->up.z_skip = s->upload_skip;
    return MOTA_OK;
}

/* Record how far the stream is durably on flash, now and then. */
static int maybe_persist(struct mota_agent *a, uint32_t stream_off, bool force)
{
    if (!MOTA_FEATURE_RESUME) /* no resume point to keep: an interrupted upload starts again */
        return MOTA_OK;
    if (!force && stream_off - a->up.last_persist < MOTA_AGENT_PROGRESS_STEP)
        return MOTA_OK;
    struct jrec r;
    mota_journal_rec(&r, J_UPLOAD_PROGRESS, (unsigned)a->up.model);
    r.value = stream_off;
    a->up.last_persist = stream_off;
    return mota_journal_append(&a->journal, &r);
}

/* Where in the stream is offset o: component index and whether in its payload head. */
static int locate(const struct mota_agent *a, uint32_t o, bool *in_head)
{
    for (int c = (int)a->up.man.n_components - 1; c >= 0; c--) {
        if (o >= a->up.layout.comp_stream[c]) {
            *in_head = o < a->up.layout.comp_stream[c] + a->up.layout.comp_phl[c];
            return c;
        }
    }
    return -1;
}

/* Set up hashing and programming to continue at stream offset o (a resume). */
static int resume_at(struct mota_agent *a, uint32_t o)
{
    bool in_head = false;
    int c = locate(a, o, &in_head);
    unsigned m = (unsigned)a->up.model;
    a->up.unit_fill = 0;
    a->up.sha_comp = -1;
    a->up.resumed = true;
    if (c < 0 || in_head) {
        a->up.expected = o;
        return MOTA_OK;
    }
    uint32_t done = o - (a->up.layout.comp_stream[c] + a->up.layout.comp_phl[c]);
    if (MOTA_AGENT_TRANSFORMS && a->up.man.comp[c].transport)
        return x_resume_at(a, m, c, o, done);
    mota_sha256_init(&a->up.sha);
    a->up.sha_comp = c;
    a->up.unit_slot_off = a->up.layout.comp_slot[c] + done;
    a->up.expected = o;
    return mota_agent_hash_flash(a, mota_agent_slot_base(a, m, a->st[m].upload.slot) + a->up.layout.comp_slot[c], done,
                                 &a->up.sha);
}

/* A new upload into the inactive slot: journal, erase, the head. Returns the head length. */
static int begin_upload(struct mota_agent *a, uint32_t container_len)
{
    unsigned m = (unsigned)a->up.model;
    struct mota_agent_model_state *s = &a->st[m];
    unsigned slot = s->active.slot == 1 ? 0 : (s->active.slot == 0 ? 1 : 0);
    struct jrec r;
    int ret;
    a->up.resumed = false;
    a->up.redo_at = 0;
    mota_journal_rec(&r, J_UPLOAD_BEGIN, m);
    r.slot = (uint8_t)slot;
    r.seq = a->up.man.seq;
    memcpy(r.digest, a->up.env.digest, MOTA_SHA256_LEN);
    r.value = container_len;
    r.value2 = (uint32_t)a->up.env.head_len;
    if ((ret = mota_journal_append(&a->journal, &r)) != MOTA_OK)
        return ret;
    const struct mota_flash *fl = a->cfg->port->flash;
    uint32_t base = mota_agent_slot_base(a, m, slot);
    /* the head goes to the slot too: the stored model carries its manifest */
    uint32_t hl = (uint32_t)a->up.env.head_len, whole = hl / fl->prog_size * fl->prog_size;
    if ((ret = erase_to(a, m, whole)) != MOTA_OK ||
        (whole > 0 && (ret = fl->prog(fl->ctx, base, a->cfg->scratch, whole)) != MOTA_OK))
        return mota_agent_fail_upload(a, m, ret);
    a->up.unit_slot_off = whole;
    a->up.unit_fill = hl - whole;
    memcpy(a->up.unit, a->cfg->scratch + whole, a->up.unit_fill);
    if (a->up.unit_fill > 0 && (ret = prog_unit(a)) != MOTA_OK)
        return mota_agent_fail_upload(a, m, ret);
    if ((ret = maybe_persist(a, hl, true)) != MOTA_OK)
        return ret;
    a->up.sha_comp = -1;
    a->up.expected = hl;
    return (int)hl;
}

#if MOTA_FEATURE_DECRYPT
/* The recipients of two encrypted components are the same (the same keys wrapped the same way). */
static bool same_recipients(const struct mota_enc_info *x, const struct mota_enc_info *y)
{
    if (x->n_recipients != y->n_recipients)
        return false;
    for (size_t i = 0; i < x->n_recipients; i++) {
        const struct mota_enc_recipient *p = &x->r[i], *q = &y->r[i];
        if (p->alg != q->alg || p->kid_len != q->kid_len || (p->kid_len && memcmp(p->kid, q->kid, p->kid_len)) ||
            memcmp(p->wrapped, q->wrapped, MOTA_ENC_WRAPPED_LEN) != 0 ||
            (p->alg == MOTA_ENC_ECDH_ES_A128KW && memcmp(p->epk_x, q->epk_x, 32) != 0))
            return false;
    }
    return true;
}
#endif

/*
 * An encrypted container's content key, from the head, before anything is erased: a wrong or missing key
 * is refused here with its reason. One key a container: the recipients of every encrypted component give
 * the same one (unwrapped again only where they differ from the first's), or MOTA_ERR_ENC_INFO.
 */
static int take_cek(struct mota_agent *a)
{
    int ret = MOTA_OK;
#if MOTA_FEATURE_DECRYPT
    struct mota_enc_info first, ei;
    uint8_t k[MOTA_AES128_KEY_LEN];
    memset(&first, 0, sizeof(first));
    mota_agent_upload_wipe(a);
    for (size_t c = 0; c < a->up.man.n_components && ret == MOTA_OK; c++) {
        const struct mota_component *comp = &a->up.man.comp[c];
        if (!comp->encrypted)
            continue;
        if ((ret = mota_enc_info_decode(comp->enc_info, comp->enc_len, &ei)) != MOTA_OK ||
            (a->up.cek_ok && same_recipients(&first, &ei)))
            continue;
        if ((ret = mota_enc_cek(&ei, &a->cfg->enc, k)) == MOTA_OK && a->up.cek_ok &&
            mota_ct_memcmp(k, a->up.cek, sizeof(k)) != 0)
            ret = MOTA_ERR_ENC_INFO;
        if (ret == MOTA_OK && !a->up.cek_ok) {
            memcpy(a->up.cek, k, sizeof(k));
            a->up.cek_ok = true;
            first = ei;
        }
    }
    mota_cipher_wipe(k, sizeof(k));
    if (ret != MOTA_OK)
        mota_agent_upload_wipe(a);
#else
    for (size_t c = 0; c < a->up.man.n_components; c++)
        if (a->up.man.comp[c].encrypted)
            ret = MOTA_ERR_DECRYPT_OFF; /* this build has no decryption */
#endif
    return ret;
}

/* The head is complete in scratch: decide, then erase and start writing. */
/* Every delta component predicts from the image the model runs in its role: else refused before any erase
 * (the sender is told to send the full container). */
static int delta_sources(const struct mota_agent *a, unsigned m)
{
    for (size_t c = 0; c < a->up.man.n_components; c++) {
        uint32_t off = 0;
        int ret = a->up.man.comp[c].delta ? mota_agent_delta_source(a, m, &a->up.man.comp[c], &off) : MOTA_OK;
        if (ret != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

static int head_complete(struct mota_agent *a)
{
    struct mota_agent_head_check hc;
    uint32_t t0 = mota_agent_now_us(a);
    memset(&a->timing, 0, sizeof(a->timing)); /* a new update */
    int ret = mota_agent_check_head(a, &a->up.env, &a->up.man, &hc, MOTA_AGENT_AUTH_NEW_UPLOAD);
    a->verdict_model = hc.model; /* the errors ring names it, whatever the verdict */
    if (ret == MOTA_OK) {
        unsigned m = (unsigned)hc.model;
        const struct mota_agent_model_state *s = &a->st[m];
        if (s->active.slot != MOTA_AGENT_NO_SLOT && memcmp(s->active.digest, a->up.env.digest, MOTA_SHA256_LEN) == 0 &&
            !a->reinstall)
            ret = MOTA_ERR_ALREADY_ACTIVE; /* the same container again (a host that retries): no second install */
        else if (s->testing)
            ret = MOTA_ERR_TRIAL_PENDING; /* one trial at a time: its verdict decides what "previous" is */
        else if ((ret = mota_agent_check_sequence(a, m, a->up.man.seq, a->up.env.digest)) != MOTA_OK)
            hc.why = (struct mota_agent_refusal){ret, NULL, a->st[m].committed_seq, a->up.man.seq};
        else if ((ret = delta_sources(a, m)) == MOTA_OK)
            ret = take_cek(a); /* last: an ECDH recipient costs a key agreement */
    }
    a->timing.check_us = mota_agent_now_us(a) - t0;
    if (ret != MOTA_OK) {
        a->refusal = hc.why;
        a->refusal.reason = ret; /* vendor, class, unknown key: the ids are read where they are kept */
        a->up.model = MOTA_AGENT_NOT_RECEIVING;
        if (ret == MOTA_ERR_ALREADY_ACTIVE)
            return ret; /* not an error of the model: its state stays as it is */
        a->last_error = ret;
        if (hc.model >= 0)
            mota_agent_model_error(a, (unsigned)hc.model, ret);
        return ret; /* refused before any erase */
    }
    unsigned m = (unsigned)hc.model;
    struct mota_agent_model_state *s = &a->st[m];
    a->up.model = (int)m;
    a->up.layout = hc.lay;
    a->up.ready = true;

    /* the same container interrupted earlier: continue where it stopped */
    if (MOTA_FEATURE_RESUME && (s->upload_state == MOTA_UPLOAD_ERASED || s->upload_state == MOTA_UPLOAD_VERIFIED) &&
        memcmp(s->upload.digest, a->up.env.digest, MOTA_SHA256_LEN) == 0 && s->upload_offset >= a->up.env.head_len &&
        s->upload_len == hc.lay.container_len) {
        a->up.last_persist = s->upload_offset;
        if (s->upload_state == MOTA_UPLOAD_VERIFIED || s->upload_offset == s->upload_len)
            return mota_agent_finish_upload(a); /* every byte is on flash already */
        ret = resume_at(a, s->upload_offset);
        if (ret == MOTA_ERR_JOURNAL) /* a resume point that does not fit this container: start over */
            return begin_upload(a, hc.lay.container_len);
        if (ret != MOTA_OK)
            return ret;
        return (int)a->up.expected;
    }

    return begin_upload(a, hc.lay.container_len);
}

/*
 * The steps of stream_bytes return MOTA_OK to go on with the next bytes, or what stream_bytes returns:
 * a refusal, or the new stream position after a restart or the verdict.
 */

/*
 * A unit torn before the reset, found after a resume: it lies in the sectors the last erase journaled,
 * above the resume point the journal kept then. Those sectors are erased again and the stream resumes
 * there: a torn unit costs one erase, not the upload. Returns where the stream goes on.
 */
static int redo_sectors(struct mota_agent *a, unsigned m)
{
    struct mota_agent_model_state *s = &a->st[m];
    uint32_t from = s->upload_erased_prev, to = s->upload_erased;
    struct jrec r;
    int ret;
    if (a->up.redo_at == a->up.unit_at + 1u) /* erased again, and still not programmable: the flash is bad */
        return mota_agent_fail_upload(a, m, MOTA_ERR_FLASH_IO);
    a->up.redo_at = a->up.unit_at + 1u;
    if (to == 0xFFFFFFFFu || a->up.unit_at < from || a->up.unit_at >= to || s->upload_base_offset < s->upload_head_len)
        return begin_upload(a, s->upload_len);              /* not where a torn unit can be: start over */
    if (s->upload_base_ghash_at == s->upload_base_offset) { /* its GHASH state first, as at the resume point */
        mota_journal_rec(&r, J_UPLOAD_GHASH, m);
        r.value = s->upload_base_offset;
        memcpy(r.digest, s->upload_base_ghash, sizeof(s->upload_base_ghash));
        if ((ret = mota_journal_append(&a->journal, &r)) != MOTA_OK)
            return ret;
    }
    mota_journal_rec(&r, J_UPLOAD_PROGRESS, m);
    r.value = s->upload_base_offset;
    r.value2 = s->upload_base_plain;
    r.flags = s->upload_base_skip;
    memcpy(r.digest, s->upload_base_mid, sizeof(r.digest));
    if ((ret = mota_journal_append(&a->journal, &r)) != MOTA_OK)
        return ret;
    mota_journal_rec(&r, J_UPLOAD_ERASED, m); /* back to what was erased before them */
    r.value = from;
    r.flags = 1;
    if ((ret = mota_journal_append(&a->journal, &r)) != MOTA_OK)
        return ret;
    if ((ret = erase_to(a, m, to)) != MOTA_OK)
        return mota_agent_fail_upload(a, m, ret);
    a->up.last_persist = s->upload_offset;
    ret = resume_at(a, s->upload_offset);
    if (ret == MOTA_ERR_JOURNAL)
        return begin_upload(a, s->upload_len);
    return ret != MOTA_OK ? mota_agent_fail_upload(a, m, ret) : (int)a->up.expected;
}

/* A program that fails after a resume on a unit torn before the reset (not erased; on ECC flash,
 * unreadable or programmed already): its sectors again. Any other failure ends the upload. */
static int unit_failed(struct mota_agent *a, unsigned m, int ret, bool was_resumed)
{
    bool torn = ret == MOTA_ERR_FLASH_NOT_ERASED || ret == MOTA_ERR_FLASH_ECC || ret == MOTA_ERR_FLASH_PROGRAMMED;
    if (MOTA_FEATURE_RESUME && torn && was_resumed)
        return redo_sectors(a, m);
    return mota_agent_fail_upload(a, m, ret);
}

/* With AES-GCM, the GHASH state at the resume point r is journaled just before r. */
static int x_persist_ghash(struct mota_agent *a, unsigned m, int c, const struct jrec *r)
{
#if MOTA_FEATURE_DECRYPT
    if (a->up.enc_alg != MOTA_ENC_A128GCM)
        return MOTA_OK;
    struct jrec g;
    if ((a->up.gcm.len & ~(uint64_t)63u) != r->value - content_start(a, c))
        return MOTA_ERR_INTERNAL; /* the hash and GHASH consumed the same bytes: not reached */
    mota_journal_rec(&g, J_UPLOAD_GHASH, m);
    g.value = r->value;
    memcpy(g.digest, a->up.y64, sizeof(a->up.y64));
    return mota_journal_append(&a->journal, &g);
#else
    (void)a, (void)m, (void)c, (void)r;
    return MOTA_OK;
#endif
}

/*
 * At a boundary of a transformed payload (stream offset b, the unit empty), now and then: the resume
 * point. The transported hash's state covers its whole 64-byte blocks only, so the record names the
 * stream offset where they end; the sender resumes there and the few bytes up to b are hashed again, not
 * decrypted or decoded.
 */
static int x_persist(struct mota_agent *a, unsigned m, int c, uint32_t b)
{
    /* not right after an LZ4 frame's header (no image byte yet): a resume there would start a new frame */
    if (!MOTA_FEATURE_RESUME || b - a->up.last_persist < MOTA_AGENT_PROGRESS_STEP || a->up.unit_fill != 0 ||
        x_out(a, c) == 0)
        return MOTA_OK;
    struct jrec r;
    mota_journal_rec(&r, J_UPLOAD_PROGRESS, m);
    r.value = content_start(a, c) + (uint32_t)mota_sha256_midstate(&a->up.sha, r.digest);
    r.flags = (uint8_t)(b - r.value);
    r.value2 = x_out(a, c);
    int ret = x_persist_ghash(a, m, c, &r);
    if (ret != MOTA_OK)
        return ret;
    a->up.last_persist = b;
    return mota_journal_append(&a->journal, &r);
}

/*
 * k bytes of text at stream offset o, ct as received and pt decrypted (the same bytes when not encrypted):
 * through the decoder, or straight into the program unit; hashed (and authenticated) as they are
 * consumed, so that a boundary's record has the state of the bytes before it.
 */
static int x_feed(struct mota_agent *a, unsigned m, int c, const uint8_t *ct, const uint8_t *pt, uint32_t k, uint32_t o)
{
    const struct mota_decomp_sink sink = z_sink(a);
    bool z = a->up.man.comp[c].compressed;
    for (uint32_t q = 0; q < k;) {
        size_t used = k - q;
        int ret;
        a->up.z_err = MOTA_OK;
        if (z) {
            ret = mota_decompress_feed(&a->up.z, pt + q, k - q, &sink, &used);
        } else {
            uint32_t room = mota_agent_chunk_size(a) - a->up.unit_fill; /* a unit's end is a boundary */
            used = used < room ? used : room;
            ret = z_write(a, pt + q, used);
            a->up.x_plain += ret == MOTA_OK ? (uint32_t)used : 0u;
        }
        if (ret != MOTA_OK && a->up.z_err == MOTA_OK && a->up.man.comp[c].encrypted) {
            a->up.x_err = ret; /* told once the bytes are authentic: the rest is hashed, not decoded */
            x_absorb(a, ct + q, k - q);
            return MOTA_OK;
        }
        if (ret != MOTA_OK)
            return a->up.z_err != MOTA_OK ? unit_failed(a, m, ret, a->up.z_resumed) : mota_agent_fail_upload(a, m, ret);
        x_absorb(a, ct + q, (uint32_t)used);
        q += (uint32_t)used;
        bool boundary = z ? mota_decompress_at_boundary(&a->up.z) : a->up.unit_fill == 0;
        if (boundary && (ret = x_persist(a, m, c, o + q)) != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* The text of an encrypted payload, decrypted a bounce buffer at a time. */
static int x_decrypt_feed(struct mota_agent *a, unsigned m, int c, const uint8_t *ct, uint32_t n, uint32_t o)
{
#if MOTA_FEATURE_DECRYPT
    int ret = MOTA_OK;
    for (uint32_t p = 0; p < n && ret == MOTA_OK;) {
        uint32_t k = n - p < sizeof(a->up.x) ? n - p : (uint32_t)sizeof(a->up.x);
        if (a->up.x_err != MOTA_OK) { /* refused by the decoder in this piece: the rest hashed only */
            x_absorb(a, ct + p, n - p);
            break;
        }
        if (a->up.enc_alg == MOTA_ENC_A128CTR)
            mota_ctr_xor(&a->up.ctr, ct + p, a->up.x, k);
        else
            mota_gcm_stream(&a->up.gcm, ct + p, a->up.x, k);
        ret = x_feed(a, m, c, ct + p, a->up.x, k, o + p);
        p += k;
    }
    return ret;
#else
    (void)a, (void)m, (void)c, (void)ct, (void)n, (void)o;
    return MOTA_ERR_INTERNAL; /* refused at the head: not reached */
#endif
}

/* n bytes of transformed component c at a->up.expected: after a resume, up to the boundary, hashed only;
 * the text; with AES-GCM its tag, hashed and kept (never decrypted). */
static int x_content_bytes(struct mota_agent *a, unsigned m, int c, const uint8_t *data, uint32_t n)
{
    uint32_t o = a->up.expected, at = o - content_start(a, c), body = x_body(a, c);
    uint32_t skip = a->up.z_skip < n ? a->up.z_skip : n;
    uint32_t text = body > at ? (body - at < n ? body - at : n) : 0;
    int ret = MOTA_OK;
    x_absorb(a, data, skip);
    a->up.z_skip -= skip;
    if (skip < text && a->up.x_err != MOTA_OK) {
        x_absorb(a, data + skip, text - skip); /* a decoder refused: hashed to the end, no more decoded */
    } else if (skip < text) {
        bool enc = a->up.man.comp[c].encrypted;
        ret = enc ? x_decrypt_feed(a, m, c, data + skip, text - skip, o + skip)
                  : x_feed(a, m, c, data + skip, data + skip, text - skip, o + skip);
    }
#if MOTA_FEATURE_DECRYPT
    uint32_t from = text > skip ? text : skip;
    if (ret == MOTA_OK && from < n) {
        memcpy(a->up.tag + (at + from - body), data + from, n - from);
        mota_sha256_update(&a->up.sha, data + from, n - from);
    }
#endif
    return ret;
}

/* Bytes of a payload head: gathered, then checked against the manifest (not stored). */
static int payload_head_bytes(struct mota_agent *a, unsigned m, int c, const uint8_t **data, size_t *len)
{
    const struct mota_component *comp = &a->up.man.comp[c];
    const struct mota_agent_layout *lay = &a->up.layout;
    uint32_t at = a->up.expected - lay->comp_stream[c], n = lay->comp_phl[c] - at;
    if (n > *len)
        n = (uint32_t)*len;
    if (at == 0)
        a->up.payload_head_fill = 0;
    /* comp_phl fits payload_head: mota_agent_check_head */
    memcpy(a->up.payload_head + a->up.payload_head_fill, *data, n);
    a->up.payload_head_fill += n;
    *data += n;
    *len -= n;
    a->up.expected += n;
    if (a->up.payload_head_fill < lay->comp_phl[c])
        return MOTA_OK;
    const char *name;
    size_t name_len, hl;
    uint64_t size;
    int ret = mota_payload_head(a->up.payload_head, a->up.payload_head_fill, &name, &name_len, &size, &hl);
    if (ret != MOTA_OK)
        return mota_agent_fail_upload(a, m, ret);
    if (hl != a->up.payload_head_fill || name_len != comp->uri_len || memcmp(name, comp->uri, name_len) != 0)
        return mota_agent_fail_upload(a, m, MOTA_ERR_PAYLOAD_ORDER);
    if (size != mota_component_wire_size(comp))
        return mota_agent_fail_upload(a, m, MOTA_ERR_PAYLOAD_SIZE);
    mota_sha256_init(&a->up.sha);
    a->up.sha_comp = c;
    a->up.unit_slot_off = lay->comp_slot[c];
    a->up.unit_fill = 0;
    if (!MOTA_AGENT_TRANSFORMS || !comp->transport)
        return MOTA_OK;
#if MOTA_FEATURE_DECRYPT
    /* the key was taken and the info checked with the head: not reached */
    if ((ret = x_cipher(a, c, 0, NULL, 0)) != MOTA_OK)
        return mota_agent_fail_upload(a, m, ret);
#endif
    if ((ret = x_start(a, m, c, 0)) != MOTA_OK) /* the profile checked the parameters; a delta's source may be gone */
        return mota_agent_fail_upload(a, m, ret == MOTA_ERR_ARG ? MOTA_ERR_COMPRESSION_INFO : ret);
    return MOTA_OK;
}

/* n content bytes at stream offset o into program units; each full unit is programmed, the offset made
 * durable now and then. */
static int program_bytes(struct mota_agent *a, unsigned m, uint32_t o, const uint8_t *data, uint32_t n)
{
    const uint8_t *p = data;
    while (p < data + n) {
        uint32_t k = mota_agent_chunk_size(a) - a->up.unit_fill, left = (uint32_t)(data + n - p);
        if (k > left)
            k = left;
        memcpy(a->up.unit + a->up.unit_fill, p, k);
        a->up.unit_fill += k;
        p += k;
        if (a->up.unit_fill < mota_agent_chunk_size(a))
            continue;
        bool was_resumed = a->up.resumed;
        int ret = prog_unit(a);
        if (ret != MOTA_OK)
            return unit_failed(a, m, ret, was_resumed);
        if ((ret = maybe_persist(a, o + (uint32_t)(p - data), false)) != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* A component is complete: its last partial unit, then its digest; after the last one, the verdict. */
static int component_done(struct mota_agent *a, unsigned m, int c, uint32_t end, size_t extra)
{
    uint8_t md[MOTA_SHA256_LEN];
    const struct mota_component *comp = &a->up.man.comp[c];
    bool was_resumed = a->up.resumed;
    int ret;
    if (comp->compressed && a->up.x_err == MOTA_OK && (ret = mota_decompress_finish(&a->up.z)) != MOTA_OK) {
        if (!comp->encrypted)
            return mota_agent_fail_upload(a, m, ret); /* the payload ends before its frame does */
        a->up.x_err = ret;                            /* encrypted: said once the bytes are authentic */
    }
    if (a->up.x_err == MOTA_OK && a->up.unit_fill > 0 && (ret = prog_unit(a)) != MOTA_OK)
        return unit_failed(a, m, ret, was_resumed);
    mota_sha256_finish(&a->up.sha, md);
    a->up.sha_comp = -1;
    /* the bytes sent; a transformed image's own digest is checked from flash with the others */
    if (mota_ct_memcmp(md, comp->transport ? comp->wire_digest : comp->digest, MOTA_SHA256_LEN) != 0)
        return mota_agent_fail_upload(a, m, MOTA_ERR_PAYLOAD_DIGEST);
#if MOTA_FEATURE_DECRYPT
    /* the tag, before anything is installed: the image's digest is still checked from flash after it */
    if (a->up.enc_alg == MOTA_ENC_A128GCM && (ret = mota_gcm_finish(&a->up.gcm, a->up.tag)) != MOTA_OK)
        return mota_agent_fail_upload(a, m, ret);
    a->up.enc_alg = 0;
#endif
    if (a->up.x_err != MOTA_OK) /* authentic bytes that do not decode: a signed stream that is broken */
        return mota_agent_fail_upload(a, m, a->up.x_err);
    if ((ret = maybe_persist(a, end, true)) != MOTA_OK)
        return ret;
    if (end != a->st[m].upload_len)
        return MOTA_OK;
    return extra > 0 ? mota_agent_fail_upload(a, m, MOTA_ERR_UPLOAD_TOO_LONG) : mota_agent_finish_upload(a);
}

/* Content bytes of component c: hashed and programmed. */
static int content_bytes(struct mota_agent *a, unsigned m, int c, const uint8_t **data, size_t *len)
{
    const struct mota_agent_layout *lay = &a->up.layout;
    uint32_t o = a->up.expected;
    uint32_t end = lay->comp_stream[c] + lay->comp_phl[c] + (uint32_t)mota_component_wire_size(&a->up.man.comp[c]);
    uint32_t n = end - o;
    if (n > *len)
        n = (uint32_t)*len;
    if (a->up.sha_comp != c)
        return mota_agent_fail_upload(a, m, MOTA_ERR_INTERNAL);
    int ret;
    if (MOTA_AGENT_TRANSFORMS && a->up.man.comp[c].transport) {
        ret = x_content_bytes(a, m, c, *data, n);
    } else {
        mota_sha256_update(&a->up.sha, *data, n);
        ret = program_bytes(a, m, o, *data, n);
    }
    if (ret != MOTA_OK)
        return ret;
    *data += n;
    *len -= n;
    a->up.expected += n;
    return a->up.expected == end ? component_done(a, m, c, end, *len) : MOTA_OK;
}

static int stream_bytes(struct mota_agent *a, const uint8_t *data, size_t len)
{
    unsigned m = (unsigned)a->up.model;
    while (len > 0) {
        if (a->up.expected >= a->st[m].upload_len)
            return mota_agent_fail_upload(a, m, MOTA_ERR_UPLOAD_TOO_LONG);
        bool in_head = false;
        int c = locate(a, a->up.expected, &in_head);
        if (c < 0)
            return mota_agent_fail_upload(a, m, MOTA_ERR_INTERNAL);
        int ret = in_head ? payload_head_bytes(a, m, c, &data, &len) : content_bytes(a, m, c, &data, &len);
        if (ret != MOTA_OK)
            return ret;
    }
    return (int)a->up.expected;
}

static int write_stream(struct mota_agent *a, uint32_t offset, const uint8_t *data, size_t len);

int mota_agent_write(struct mota_agent *a, uint32_t offset, const uint8_t *data, size_t len)
{
    if (a == NULL || a->cfg == NULL || (data == NULL && len > 0))
        return MOTA_ERR_ARG;
    if (offset == 0)
        a->up.active = true;
    int ret = write_stream(a, offset, data, len);
    if (ret < 0 && ret != MOTA_ERR_UPLOAD_OFFSET)
        a->up.active = false; /* refused: the container is over */
    return ret;
}

static int write_stream(struct mota_agent *a, uint32_t offset, const uint8_t *data, size_t len)
{
    if (offset == 0) {
        /* a (re)start: the head is collected again and decides what follows */
        memset(&a->refusal, 0, sizeof(a->refusal));
        mota_agent_upload_wipe(a); /* nothing of an earlier container stays */
        if (a->cfg->n_keys == 0) {
            a->last_error = MOTA_ERR_NOT_PROVISIONED;
            return MOTA_ERR_NOT_PROVISIONED; /* nothing can be authenticated */
        }
        a->up.ready = false;
        a->up.model = MOTA_AGENT_NOT_RECEIVING;
        a->verdict_model = -1;
        a->up.expected = 0;
    } else if (offset != a->up.expected || (!a->up.ready && !a->up.active)) {
        return MOTA_ERR_UPLOAD_OFFSET; /* a head is collected from offset 0 on, over as many writes as it takes */
    }
    if (len > 0xFFFFFFFFu - offset)
        return MOTA_ERR_UPLOAD_TOO_LONG;
    while (len > 0 && !a->up.ready) {
        size_t room = a->cfg->scratch_size - a->up.expected;
        size_t n = len < room ? len : room;
        memcpy(a->cfg->scratch + a->up.expected, data, n);
        uint32_t before = a->up.expected;
        a->up.expected += (uint32_t)n;
        int ret = mota_envelope_decode(a->cfg->scratch, a->up.expected, &a->up.env);
        if (ret == MOTA_ERR_CBOR_TRUNCATED) {
            if (a->up.expected == a->cfg->scratch_size) {
                a->up.expected = 0;
                return MOTA_ERR_ENV_TOO_LARGE;
            }
            data += n;
            len -= n;
            continue;
        }
        if (ret != MOTA_OK) {
            a->up.expected = 0;
            a->last_error = ret;
            return ret;
        }
        /* bytes past the head belong to the payloads */
        size_t used = a->up.env.head_len - before;
        data += used;
        len -= used;
        a->up.expected = (uint32_t)a->up.env.head_len;
        ret = head_complete(a);
        if (ret < 0)
            return ret;
        if ((uint32_t)ret != a->up.env.head_len) {
            /* resumed (or finished): the sender continues at ret */
            return ret;
        }
    }
    if (len == 0)
        return (int)a->up.expected;
    return stream_bytes(a, data, len);
}
