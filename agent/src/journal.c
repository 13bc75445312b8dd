/* SPDX-License-Identifier: Apache-2.0 */
/*
 * State journal: two flash sectors of 64-byte records. A record is written
 * with one program operation and carries a CRC, so a transition either
 * happened or did not; a torn record fails its CRC and is skipped. When the
 * current sector is full, the state is written as a snapshot to the other
 * sector (header, records, end marker with the next epoch); until the end
 * marker is on flash the old sector stays the valid one.
 */
#include "journal.h"

#include "mota/crc32.h"
#include "mota/err.h"
#include "mota/features.h"
#include "mota/le.h"
#include "mota/ms.h"

#include <string.h>

static void encode(const struct jrec *r, uint8_t b[JREC_SIZE])
{
    mota_put16(b, r->magic);
    b[2] = r->type;
    b[3] = r->model;
    mota_put32(b + 4, r->jseq);
    mota_put32(b + 8, (uint32_t)r->seq);
    mota_put32(b + 12, (uint32_t)(r->seq >> 32));
    mota_put32(b + 16, r->value);
    mota_put32(b + 20, r->value2);
    b[24] = r->slot;
    b[25] = r->flags;
    mota_put16(b + 26, (uint16_t)r->reason);
    memcpy(b + 28, r->digest, MOTA_SHA256_LEN);
    mota_put32(b + 60, mota_crc32(0, b, 60));
}

static bool decode(const uint8_t b[JREC_SIZE], struct jrec *r)
{
    if (mota_get16(b) != JREC_MAGIC || mota_get32(b + 60) != mota_crc32(0, b, 60))
        return false;
    r->magic = JREC_MAGIC;
    r->type = b[2];
    r->model = b[3];
    r->jseq = mota_get32(b + 4);
    r->seq = (uint64_t)mota_get32(b + 8) | (uint64_t)mota_get32(b + 12) << 32;
    r->value = mota_get32(b + 16);
    r->value2 = mota_get32(b + 20);
    r->slot = b[24];
    r->flags = b[25];
    r->reason = (int16_t)mota_get16(b + 26);
    memcpy(r->digest, b + 28, MOTA_SHA256_LEN);
    r->crc = mota_get32(b + 60);
    return true;
}

void mota_journal_rec(struct jrec *r, enum jrec_type type, unsigned model)
{
    memset(r, 0, sizeof(*r));
    r->magic = JREC_MAGIC;
    r->type = (uint8_t)type;
    r->model = (uint8_t)model;
    r->slot = MOTA_AGENT_NO_SLOT;
}

void mota_journal_setup(struct mota_journal *j, const struct mota_flash *flash, const struct mota_system *sys,
                        uint32_t offset, unsigned n_models, struct mota_agent_model_state *st, uint32_t *key_floor)
{
    memset(j, 0, sizeof(*j));
    j->flash = flash;
    j->sys = sys;
    j->offset = offset;
    j->n_models = n_models;
    j->st = st;
    j->key_floor = key_floor;
    uint32_t start = 0;
    if (mota_flash_sector(flash, offset, &start, &j->sector_size) != MOTA_OK)
        j->sector_size = 0; /* mota_agent_init checked the layout: not reached */
}

static uint32_t per_sector(const struct mota_journal *j)
{
    return j->sector_size / JREC_SIZE;
}

static uint32_t sector_off(const struct mota_journal *j, unsigned s)
{
    return j->offset + s * j->sector_size;
}

static void ref_set(struct mota_agent_slot_ref *ref, const struct jrec *r)
{
    ref->slot = r->slot;
    ref->seq = r->seq;
    memcpy(ref->digest, r->digest, MOTA_SHA256_LEN);
}

static void ref_clear(struct mota_agent_slot_ref *ref)
{
    memset(ref, 0, sizeof(*ref));
    ref->slot = MOTA_AGENT_NO_SLOT;
}

/* A record's last error: when, if it is being written now (live); one replayed at boot is of an earlier
 * boot, whose clock is gone (no flash write per boot to keep it). */
static void set_error(const struct mota_journal *j, struct mota_agent_model_state *s, int reason, bool live)
{
    s->last_error = reason;
    s->last_error_this_boot = live && reason != 0;
    s->last_error_ms = s->last_error_this_boot ? (uint32_t)mota_ms_of_us(j->sys->now_us(j->sys->ctx)) : 0;
}

/* An upload into r's slot, in the given state, from its start. */
static void set_upload(struct mota_agent_model_state *s, const struct jrec *r, uint8_t state)
{
    ref_set(&s->upload, r);
    s->upload_state = state;
    s->upload_len = r->value;
    s->upload_head_len = r->value2;
    s->upload_offset = 0;
    s->upload_plain = 0;
    s->upload_skip = 0;
    s->upload_ghash_at = s->upload_ghash_next_at = s->upload_base_ghash_at = MOTA_JOURNAL_NO_GHASH;
    s->upload_erased = s->upload_erased_prev = 0;
}

/* The slot erased up to r's value (flags 1; flags 0, as journals before progressive erase wrote it: all
 * of it), from the resume point the state has now. */
static void set_erased(struct mota_agent_model_state *s, const struct jrec *r)
{
    if (s->upload_state < MOTA_UPLOAD_ERASED) /* a snapshot of a verified upload replays its erases too */
        s->upload_state = MOTA_UPLOAD_ERASED;
    s->upload_erased_prev = s->upload_erased;
    s->upload_erased = r->flags == 1 ? r->value : 0xFFFFFFFFu;
    s->upload_base_offset = s->upload_offset;
    s->upload_base_plain = s->upload_plain;
    s->upload_base_skip = s->upload_skip;
    memcpy(s->upload_base_mid, s->upload_mid, sizeof(s->upload_mid));
    memcpy(s->upload_base_ghash, s->upload_ghash, sizeof(s->upload_ghash));
    s->upload_base_ghash_at = s->upload_ghash_at;
}

/* A resume point: the stream offset, the compressed payload's image bytes and skip, the hash's state, and
 * the GHASH state when the GHASH record just before it was for the same offset. */
static void set_progress(struct mota_agent_model_state *s, const struct jrec *r)
{
    s->upload_offset = r->value;
    s->upload_plain = r->value2; /* compressed payloads: see struct mota_agent_model_state */
    s->upload_skip = r->flags;
    memcpy(s->upload_mid, r->digest, sizeof(s->upload_mid));
    s->upload_ghash_at = s->upload_ghash_next_at == r->value ? r->value : MOTA_JOURNAL_NO_GHASH;
    memcpy(s->upload_ghash, s->upload_ghash_next, sizeof(s->upload_ghash));
    s->upload_ghash_next_at = MOTA_JOURNAL_NO_GHASH;
}

/* An upload's records: begun, erased, progress, verified, aborted. */
static void apply_upload(const struct mota_journal *j, struct mota_agent_model_state *s, const struct jrec *r,
                         bool live)
{
    switch (r->type) {
    case J_UPLOAD_BEGIN:
        /* the slot of the model a rollback would bring back is about to be erased: no going back to it */
        if (s->previous.slot == r->slot)
            ref_clear(&s->previous);
        set_upload(s, r, MOTA_UPLOAD_RECEIVING);
        break;
    case J_UPLOAD_ERASED: set_erased(s, r); break;
    case J_UPLOAD_PROGRESS: set_progress(s, r); break;
    case J_UPLOAD_GHASH:
        s->upload_ghash_next_at = r->value;
        memcpy(s->upload_ghash_next, r->digest, sizeof(s->upload_ghash_next));
        break;
    case J_UPLOAD_VERIFIED:
        s->upload_state = MOTA_UPLOAD_VERIFIED;
        s->upload_offset = s->upload_len;
        break;
    default: /* J_UPLOAD_ABORT */
        s->upload_state = MOTA_UPLOAD_NONE;
        ref_clear(&s->upload);
        set_error(j, s, r->reason, live);
        break;
    }
}

/* The active model's life: on trial, its boots, confirmed, rolled back. */
static void apply_model(const struct mota_journal *j, struct mota_agent_model_state *s, const struct jrec *r, bool live)
{
    switch (r->type) {
    case J_TRIAL:
        if (!s->testing && s->active.slot != MOTA_AGENT_NO_SLOT)
            s->previous = s->active;
        ref_set(&s->active, r);
        s->testing = true;
        s->trial_boots = 0;
        s->upload_state = MOTA_UPLOAD_NONE;
        ref_clear(&s->upload);
        set_error(j, s, 0, live); /* installed: an earlier failure is history (the link's ERRORS ring) */
        break;
    case J_BOOT: s->trial_boots = r->value; break;
    case J_CONFIRM:
        s->testing = false;
        s->trial_boots = 0;
        s->committed_seq = s->active.seq;
        memcpy(s->committed_digest, s->active.digest, MOTA_SHA256_LEN);
        s->has_committed = true;
        set_error(j, s, 0, live);
        break;
    default: /* J_ROLLBACK */
        /* a confirmed model retired (it faulted): its sequence number stays the floor and not even
         * the same container may come back at it (ROLLBACK_SAME_SEQ); a fix needs a higher one */
        if (!s->testing && s->has_committed)
            memset(s->committed_digest, 0, sizeof(s->committed_digest));
        s->active = s->previous;
        ref_clear(&s->previous);
        s->testing = false;
        s->trial_boots = 0;
        set_error(j, s, r->reason, live); /* 0 for a rollback asked for: a success */
        break;
    }
}

/* A snapshot's "set" records: the state as it was when the sector was compacted. */
static void apply_snapshot(struct mota_agent_model_state *s, const struct jrec *r)
{
    switch (r->type) {
    case J_SET_ACTIVE:
        ref_set(&s->active, r);
        s->testing = (r->flags & 1) != 0;
        s->trial_boots = r->value;
        break;
    case J_SET_PREVIOUS: ref_set(&s->previous, r); break;
    case J_SET_COMMITTED:
        s->committed_seq = r->seq;
        memcpy(s->committed_digest, r->digest, MOTA_SHA256_LEN);
        s->has_committed = true;
        break;
    default: /* J_SET_UPLOAD */
        set_upload(s, r, r->flags);
        /* the whole slot erased, as a journal before progressive erase means it (it kept no ERASED record in
         * its snapshots); a snapshot of this one says how far with the ERASED records that follow */
        if (s->upload_state >= MOTA_UPLOAD_ERASED)
            s->upload_erased = 0xFFFFFFFFu;
        break;
    }
}

/* The single definition of what each record means. */
static void apply(struct mota_journal *j, const struct jrec *r, bool live)
{
    if (r->model >= j->n_models)
        return;
    struct mota_agent_model_state *s = &j->st[r->model];
    switch (r->type) {
    case J_UPLOAD_BEGIN:
    case J_UPLOAD_ERASED:
    case J_UPLOAD_PROGRESS:
    case J_UPLOAD_GHASH:
    case J_UPLOAD_VERIFIED:
    case J_UPLOAD_ABORT: apply_upload(j, s, r, live); break;
    case J_TRIAL:
    case J_BOOT:
    case J_CONFIRM:
    case J_ROLLBACK: apply_model(j, s, r, live); break;
    case J_SET_ACTIVE:
    case J_SET_PREVIOUS:
    case J_SET_COMMITTED:
    case J_SET_UPLOAD: apply_snapshot(s, r); break;
    case J_REVOKE:
        if (r->value > *j->key_floor)
            *j->key_floor = r->value;
        break;
    case J_ERROR: set_error(j, s, r->reason, live); break;
    default: break; /* header, end: no state */
    }
}

static int write_rec(struct mota_journal *j, unsigned sector, uint32_t index, struct jrec *r)
{
    uint8_t b[JREC_SIZE];
    if (index >= per_sector(j))
        return MOTA_ERR_JOURNAL; /* not reached: mota_agent_init sizes the sector for a whole snapshot */
    r->jseq = ++j->seq;
    encode(r, b);
    return j->flash->prog(j->flash->ctx, sector_off(j, sector) + index * JREC_SIZE, b, JREC_SIZE);
}

/* The whole state as "set" records, for a fresh sector. */
/* An upload in a snapshot: its SET_UPLOAD record, then where it stands (the PROGRESS record). */
static void set_upload_rec(const struct mota_agent_model_state *s, unsigned m, struct jrec *r)
{
    mota_journal_rec(r, J_SET_UPLOAD, m);
    r->slot = s->upload.slot;
    r->seq = s->upload.seq;
    memcpy(r->digest, s->upload.digest, MOTA_SHA256_LEN);
    r->flags = s->upload_state;
    r->value = s->upload_len;
    r->value2 = s->upload_head_len;
}

static void progress_rec(const struct mota_agent_model_state *s, unsigned m, struct jrec *r)
{
    mota_journal_rec(r, J_UPLOAD_PROGRESS, m);
    r->value = s->upload_offset;
    r->value2 = s->upload_plain;
    r->flags = s->upload_skip;
    memcpy(r->digest, s->upload_mid, sizeof(s->upload_mid));
}

/* The resume point the last erase left (a PROGRESS record of upload_base_*). */
static void base_rec(const struct mota_agent_model_state *s, unsigned m, struct jrec *r)
{
    mota_journal_rec(r, J_UPLOAD_PROGRESS, m);
    r->value = s->upload_base_offset;
    r->value2 = s->upload_base_plain;
    r->flags = s->upload_base_skip;
    memcpy(r->digest, s->upload_base_mid, sizeof(s->upload_base_mid));
}

/* The GHASH record a resume point at offset needs (a GCM payload's), before its PROGRESS record. */
static bool ghash_rec(const uint8_t ghash[16], uint32_t at, uint32_t offset, unsigned m, struct jrec *r)
{
    if (at != offset || at == MOTA_JOURNAL_NO_GHASH)
        return false;
    mota_journal_rec(r, J_UPLOAD_GHASH, m);
    r->value = at;
    memcpy(r->digest, ghash, 16);
    return true;
}

static void erased_rec(unsigned m, uint32_t upto, struct jrec *r)
{
    mota_journal_rec(r, J_UPLOAD_ERASED, m);
    r->value = upto;
    r->flags = upto == 0xFFFFFFFFu ? 0 : 1;
}

/* An upload: SET_UPLOAD; once erasing, the resume point below the last erase and the two erases that
 * leave it there; then where it stands. */
static int snapshot_upload(struct mota_journal *j, unsigned sector, uint32_t *index,
                           const struct mota_agent_model_state *s, unsigned m)
{
    struct jrec r[8];
    unsigned n = 0;
    set_upload_rec(s, m, &r[n++]);
    if (s->upload_state >= MOTA_UPLOAD_ERASED) {
        n += ghash_rec(s->upload_base_ghash, s->upload_base_ghash_at, s->upload_base_offset, m, &r[n]);
        base_rec(s, m, &r[n++]);
        erased_rec(m, s->upload_erased_prev, &r[n++]);
        erased_rec(m, s->upload_erased, &r[n++]);
    }
    n += ghash_rec(s->upload_ghash, s->upload_ghash_at, s->upload_offset, m, &r[n]);
    progress_rec(s, m, &r[n++]);
    /* a GHASH record whose PROGRESS record is being appended (this compaction is for it): kept pending */
    n += ghash_rec(s->upload_ghash_next, s->upload_ghash_next_at, s->upload_ghash_next_at, m, &r[n]);
    for (unsigned i = 0; i < n; i++) {
        int ret = write_rec(j, sector, (*index)++, &r[i]);
        if (ret != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

static int snapshot(struct mota_journal *j, unsigned sector, uint32_t *index)
{
    struct jrec r;
    int ret;
#define EMIT()                                                                                                         \
    do {                                                                                                               \
        if ((ret = write_rec(j, sector, (*index)++, &r)) != 0)                                                         \
            return ret;                                                                                                \
    } while (0)
    if (*j->key_floor != 0) {
        mota_journal_rec(&r, J_REVOKE, 0);
        r.value = *j->key_floor;
        EMIT();
    }
    for (unsigned m = 0; m < j->n_models; m++) {
        const struct mota_agent_model_state *s = &j->st[m];
        if (s->has_committed) {
            mota_journal_rec(&r, J_SET_COMMITTED, m);
            r.seq = s->committed_seq;
            memcpy(r.digest, s->committed_digest, MOTA_SHA256_LEN);
            EMIT();
        }
        if (s->previous.slot != MOTA_AGENT_NO_SLOT) {
            mota_journal_rec(&r, J_SET_PREVIOUS, m);
            r.slot = s->previous.slot;
            r.seq = s->previous.seq;
            memcpy(r.digest, s->previous.digest, MOTA_SHA256_LEN);
            EMIT();
        }
        if (s->active.slot != MOTA_AGENT_NO_SLOT) {
            mota_journal_rec(&r, J_SET_ACTIVE, m);
            r.slot = s->active.slot;
            r.seq = s->active.seq;
            memcpy(r.digest, s->active.digest, MOTA_SHA256_LEN);
            r.flags = s->testing ? 1 : 0;
            r.value = s->trial_boots;
            EMIT();
        }
        if (s->upload_state != MOTA_UPLOAD_NONE && (ret = snapshot_upload(j, sector, index, s, m)) != MOTA_OK)
            return ret;
        if (MOTA_FEATURE_HISTORY && s->last_error != 0) { /* diagnostics only: recovery needs none */
            mota_journal_rec(&r, J_ERROR, m);
            r.reason = (int16_t)s->last_error;
            EMIT();
        }
    }
#undef EMIT
    return MOTA_OK;
}

/* Write the state to the other sector with the next epoch; switch to it. */
static int compact(struct mota_journal *j)
{
    unsigned other = j->sector ^ 1u;
    uint32_t index = 0;
    struct jrec r;
    int ret = j->spare_erased ? MOTA_OK : j->flash->erase(j->flash->ctx, sector_off(j, other));
    j->spare_erased = false; /* programmed from here on, or torn */
    if (ret != MOTA_OK)
        return ret;
    mota_journal_rec(&r, J_HEADER, 0);
    r.value = j->epoch + 1;
    if ((ret = write_rec(j, other, index++, &r)) != MOTA_OK)
        return ret;
    if ((ret = snapshot(j, other, &index)) != MOTA_OK)
        return ret;
    mota_journal_rec(&r, J_SNAPSHOT_END, 0);
    r.value = j->epoch + 1;
    if ((ret = write_rec(j, other, index++, &r)) != MOTA_OK)
        return ret;
    j->sector = (uint8_t)other;
    j->epoch++;
    j->next = index;
    return MOTA_OK;
}

int mota_journal_append(struct mota_journal *j, struct jrec *r)
{
    int ret;
    if (j->next >= per_sector(j) && (ret = compact(j)) != MOTA_OK)
        return ret;
    ret = write_rec(j, j->sector, j->next, r);
    j->next++; /* even a failed program may have left bytes: never reuse the place */
    if (ret != MOTA_OK)
        return ret;
    apply(j, r, true);
    return MOTA_OK;
}

/* Scan a sector: epoch if it has a valid header and a snapshot end. */
static bool sector_valid(const struct mota_journal *j, unsigned s, uint32_t *epoch)
{
    uint8_t b[JREC_SIZE];
    struct jrec r;
    bool header = false;
    for (uint32_t i = 0; i < per_sector(j); i++) {
        /* an unreadable record (ECC: torn by a power cut) is skipped like one whose CRC fails */
        bool readable = j->flash->read(j->flash->ctx, sector_off(j, s) + i * JREC_SIZE, b, JREC_SIZE) == MOTA_OK;
        if (!readable || !decode(b, &r)) {
            if (i == 0)
                return false;
            continue;
        }
        if (i == 0 && r.type == J_HEADER) {
            header = true;
            *epoch = r.value;
        } else if (header && r.type == J_SNAPSHOT_END && r.value == *epoch) {
            return true;
        }
        if (i == 0 && !header)
            return false;
    }
    return false;
}

static bool erased(const struct mota_journal *j, const uint8_t *b)
{
    for (unsigned i = 0; i < JREC_SIZE; i++)
        if (b[i] != j->flash->erased_value)
            return false;
    return true;
}

/* Whether sector s reads erased throughout (unreadable: not). */
static bool sector_blank(const struct mota_journal *j, unsigned s)
{
    uint8_t b[JREC_SIZE];
    for (uint32_t i = 0; i < per_sector(j); i++)
        if (j->flash->read(j->flash->ctx, sector_off(j, s) + i * JREC_SIZE, b, JREC_SIZE) != MOTA_OK || !erased(j, b))
            return false;
    return true;
}

int mota_journal_load(struct mota_journal *j)
{
    uint32_t e0 = 0, e1 = 0;
    bool v0 = sector_valid(j, 0, &e0), v1 = sector_valid(j, 1, &e1);
    uint8_t b[JREC_SIZE];
    struct jrec r;
    int ret;

    j->seq = 0;
    if (!v0 && !v1) {
        /* blank (or unreadable) journal: a fresh device, state empty */
        j->sector = 1;
        j->epoch = 0;
        ret = compact(j);
        j->spare_erased = ret == MOTA_OK && sector_blank(j, j->sector ^ 1u); /* a new device's: never written */
        return ret;
    }
    j->sector = (uint8_t)((v1 && (!v0 || e1 > e0)) ? 1 : 0);
    j->epoch = j->sector ? e1 : e0;
    j->next = 0;
    /* Replay every valid record in place order; erased places (a program
     * that never happened) and torn ones (bad CRC) are skipped, and new
     * records go after the last place that holds anything. */
    for (uint32_t i = 0; i < per_sector(j); i++) {
        ret = j->flash->read(j->flash->ctx, sector_off(j, j->sector) + i * JREC_SIZE, b, JREC_SIZE);
        if (ret == MOTA_OK && erased(j, b))
            continue;
        j->next = i + 1; /* an unreadable (ECC) place is torn: skipped, never programmed again */
        if (ret != MOTA_OK || !decode(b, &r))
            continue;
        if (r.jseq > j->seq)
            j->seq = r.jseq;
        apply(j, &r, false);
    }
    j->spare_erased = sector_blank(j, j->sector ^ 1u);
    return MOTA_OK;
}

int mota_journal_tidy(struct mota_journal *j)
{
    if (j->spare_erased)
        return MOTA_OK;
    int ret = j->flash->erase(j->flash->ctx, sector_off(j, j->sector ^ 1u));
    j->spare_erased = ret == MOTA_OK;
    return ret;
}
