/* SPDX-License-Identifier: Apache-2.0 */
/* The agent's state journal (private to agent/). Format: docs/agent.md. */
#ifndef MOTA_AGENT_JOURNAL_H
#define MOTA_AGENT_JOURNAL_H

#include "mota/journal.h"

#include <stdint.h>

#define JREC_SIZE 64u
#define JREC_MAGIC 0x4A52u /* "RJ" */

enum jrec_type {
    J_HEADER = 1,          /* first record of a sector: value = epoch */
    J_SNAPSHOT_END = 2,    /* the sector's snapshot is complete: value = epoch */
    J_UPLOAD_BEGIN = 3,    /* slot, seq, digest, value = container length, value2 = head length */
    J_UPLOAD_ERASED = 4,   /* flags 1: the slot is erased up to value (flags 0: all of it) */
    J_UPLOAD_PROGRESS = 5, /* value = stream offset durably written */
    J_UPLOAD_VERIFIED = 6, /* every payload re-read from flash and matched */
    J_UPLOAD_ABORT = 7,    /* reason */
    J_TRIAL = 8,           /* slot, seq, digest: the new model runs on trial */
    J_BOOT = 9,            /* value = trial boots so far */
    J_CONFIRM = 10,        /* the model on trial is committed */
    J_ROLLBACK = 11,       /* back to the previous model; reason */
    J_REVOKE = 12,         /* value = key index floor */
    J_ERROR = 13,          /* reason, for diagnostics */
    J_SET_ACTIVE = 14,     /* snapshot: slot, seq, digest, flags bit0 testing, value = trial boots */
    J_SET_PREVIOUS = 15,   /* snapshot: slot, seq, digest */
    J_SET_COMMITTED = 16,  /* snapshot: seq, digest */
    J_SET_UPLOAD = 17,     /* snapshot: slot, seq, digest, flags = state, value = length, value2 = head length */
    J_UPLOAD_GHASH = 18,   /* value = stream offset, digest[0..15] = a GCM payload's GHASH state there: the PROGRESS
                            * record for that offset follows it (a cut between the two leaves the older pair) */
};

/* One record as stored: 64 bytes, little-endian, CRC-32 over the first 60. */
struct jrec {
    uint16_t magic;
    uint8_t type;
    uint8_t model;
    uint32_t jseq;
    uint64_t seq;
    uint32_t value;
    uint32_t value2;
    uint8_t slot;
    uint8_t flags;
    int16_t reason;
    uint8_t digest[MOTA_SHA256_LEN];
    uint32_t crc;
};

/* The journal of the state st[n_models] and *key_floor, in the two flash sectors at offset. */
void mota_journal_setup(struct mota_journal *j, const struct mota_flash *flash, const struct mota_system *sys,
                        uint32_t offset, unsigned n_models, struct mota_agent_model_state *st, uint32_t *key_floor);
int mota_journal_load(struct mota_journal *j);
int mota_journal_append(struct mota_journal *j, struct jrec *r); /* appends and applies */
/* Erase the sector the next compaction writes, ahead of time (at a calm moment: on a part with 128 KiB
 * sectors an erase takes seconds, and a compaction then never waits for one in the middle of an update). */
int mota_journal_tidy(struct mota_journal *j);
void mota_journal_rec(struct jrec *r, enum jrec_type type, unsigned model);

#endif
