/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's durable state, as the state journal keeps it on flash (agent/src/journal.c, format in
 * docs/agent.md). Apart from mota/agent.h so that the journal needs neither the agent nor its configuration.
 */
#ifndef MOTA_JOURNAL_H
#define MOTA_JOURNAL_H

#define MOTA_JOURNAL_NO_GHASH 0xFFFFFFFFu /* upload_ghash_at: no GHASH state kept */

#include "mota/crypto.h"
#include "mota/port.h"

#include <stdbool.h>
#include <stdint.h>

#define MOTA_AGENT_NO_SLOT 0xFFu

enum mota_upload_state { MOTA_UPLOAD_NONE = 0, MOTA_UPLOAD_RECEIVING, MOTA_UPLOAD_ERASED, MOTA_UPLOAD_VERIFIED };

struct mota_agent_slot_ref {
    uint8_t slot; /* 0, 1 or MOTA_AGENT_NO_SLOT */
    uint64_t seq;
    uint8_t digest[MOTA_SHA256_LEN]; /* manifest digest */
};

/* Per model, as the journal says (and in RAM). */
struct mota_agent_model_state {
    struct mota_agent_slot_ref active; /* the model the device runs */
    bool testing;                      /* active is on trial, not confirmed */
    uint32_t trial_boots;
    struct mota_agent_slot_ref previous; /* last confirmed model, for rollback */
    uint64_t committed_seq;              /* anti-rollback floor */
    uint8_t committed_digest[MOTA_SHA256_LEN];
    bool has_committed;
    /* upload in progress */
    uint8_t upload_state; /* enum mota_upload_state */
    struct mota_agent_slot_ref upload;
    uint32_t upload_len, upload_head_len, upload_offset;
    /* where a compressed payload resumes (docs/agent.md "Resuming a compressed payload"): the
     * image bytes on flash, the stream bytes from upload_offset to hash but not decode (the block
     * boundary is that far on), and the transported hash's state at upload_offset */
    uint32_t upload_plain;
    uint8_t upload_skip;
    uint8_t upload_mid[MOTA_SHA256_STATE_LEN];
    /* inside an AES-GCM payload also its GHASH state at upload_offset (upload_ghash_at == upload_offset; else
     * none), and the one a GHASH record brought for the PROGRESS record that follows it */
    uint8_t upload_ghash[16], upload_ghash_next[16];
    uint32_t upload_ghash_at, upload_ghash_next_at;
    /* progressive erase: the slot is erased (by this upload) up to upload_erased, and was up to
     * upload_erased_prev before the last sectors; the resume point at that moment (upload_base_*, as
     * above) lies below them, so a unit torn in them costs their erase and a resume from there */
    uint32_t upload_erased, upload_erased_prev;
    uint32_t upload_base_offset, upload_base_plain;
    uint8_t upload_base_skip;
    uint8_t upload_base_mid[MOTA_SHA256_STATE_LEN];
    uint8_t upload_base_ghash[16];
    uint32_t upload_base_ghash_at;
    int last_error; /* cleared by a later install, confirm or rollback */
    /* when: false for an error read from the journal at boot (an earlier boot: time is not journaled) */
    bool last_error_this_boot;
    uint32_t last_error_ms; /* ms since this boot, when last_error_this_boot */
};

/*
 * The state journal (agent/src/journal.c, format in docs/agent.md): two
 * flash sectors of records. It knows the state it keeps (the models' states
 * and the key floor) only through these pointers, and changes it only by
 * applying a record it has written, or replayed at boot.
 */
struct mota_journal {
    const struct mota_flash *flash;
    const struct mota_system *sys; /* the clock: when a live error happened */
    uint32_t offset;               /* its two sectors, of sector_size each */
    uint32_t sector_size;
    bool spare_erased; /* the other sector is erased: a compaction starts without waiting for an erase */
    unsigned n_models;
    struct mota_agent_model_state *st; /* [n_models] */
    uint32_t *key_floor;
    uint8_t sector; /* 0 or 1: the current one */
    uint32_t next;  /* index of the next free record in it */
    uint32_t epoch, seq;
};

#endif /* MOTA_JOURNAL_H */
