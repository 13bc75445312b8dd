/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the agent's two halves share, private to agent/: agent.c (boot, the head's checks, install and
 * activation, an upload's verdict, confirm, rollback, queries) defines these, and upload.c (the upload
 * stream) calls them; the last section is the other way round.
 */
#ifndef MOTA_AGENT_INT_H
#define MOTA_AGENT_INT_H

#include "journal.h"
#include "mota/agent.h"
#include "mota/features.h"

#include <stdbool.h>
#include <stdint.h>

/* A build that transforms payloads (decodes, decrypts, patches). Without any of those a transport component is
 * a plain copy of its image (the head check refused every other kind): its bytes take the plain path. */
#define MOTA_AGENT_TRANSFORMS                                                                                          \
    (MOTA_FEATURE_LZ4 || MOTA_FEATURE_DEFLATE || MOTA_FEATURE_LZMA || MOTA_FEATURE_DECRYPT || MOTA_FEATURE_DELTA)

#define MOTA_AGENT_NOT_RECEIVING (-1) /* struct mota_agent_upload model: no upload under way */

/* ---- the port, the slots, the state ---- */

const struct mota_agent_model_config *mota_agent_model_cfg(const struct mota_agent *a, unsigned m);
uint32_t mota_agent_align_up(uint32_t v, uint32_t a);
uint32_t mota_agent_chunk_size(const struct mota_agent *a);
uint32_t mota_agent_slot_base(const struct mota_agent *a, unsigned m, unsigned slot);
uint32_t mota_agent_now_us(const struct mota_agent *a);
void mota_agent_kick(const struct mota_agent *a);
void mota_agent_model_error(struct mota_agent *a, unsigned m, int reason);
/* A journal record of type for model m (with a reason), appended and applied. */
int mota_agent_journal(struct mota_agent *a, enum jrec_type type, unsigned m, int reason);

/* ---- a container head's checks (before erase, and at boot) ---- */

struct mota_agent_head_check {
    int model;                     /* model index the container is for */
    struct mota_agent_layout lay;  /* where its parts go, how it installs */
    struct mota_agent_refusal why; /* the facts behind a refusal (a compatibility rule, a revoked key) */
};

enum mota_agent_head_auth {
    MOTA_AGENT_AUTH_NEW_UPLOAD, /* signature by a trusted, unrevoked key */
    MOTA_AGENT_AUTH_STORED,     /* signature by a trusted key (revoked after it was installed is fine) */
};

/*
 * Everything that can be decided from the head: signature, manifest,
 * profile, which model, vendor and class, compatibility, the layout of the
 * stream and of the slot, and whether it fits.
 */
int mota_agent_check_head(const struct mota_agent *a, const struct mota_envelope *env, struct mota_manifest *man,
                          struct mota_agent_head_check *hc, enum mota_agent_head_auth auth);
int mota_agent_check_sequence(const struct mota_agent *a, unsigned m, uint64_t seq,
                              const uint8_t digest[MOTA_SHA256_LEN]);

/* ---- from the slot to a running model ---- */

/* A delta component's source image, the active model's (MOTA_ERR_DELTA_SOURCE: not the one named). */
int mota_agent_delta_source(const struct mota_agent *a, unsigned m, const struct mota_component *c, uint32_t *src_off);

int mota_agent_map_head(const struct mota_agent *a, unsigned m, unsigned slot, struct mota_envelope *env);
int mota_agent_hash_flash(const struct mota_agent *a, uint32_t off, uint32_t len, struct mota_sha256 *ctx);
int mota_agent_verify_components(const struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                                 const struct mota_agent_layout *lay);
int mota_agent_validate_code(struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                             const struct mota_agent_layout *lay);
int mota_agent_install_slot(struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                            const struct mota_agent_layout *lay, struct mota_installed *out);
int mota_agent_run_selftest(struct mota_agent *a, unsigned m, unsigned slot, const struct mota_manifest *man,
                            const struct mota_agent_layout *lay, const struct mota_installed *inst);
int mota_agent_activate(struct mota_agent *a, unsigned m);

/*
 * Every byte of the upload is in (or on flash already, after a reset): the digests from flash, install,
 * self-test, the trial journaled; timed (struct mota_agent_timing verdict_us). Returns the container's
 * length, or the reason it was refused (the active model is installed again).
 */
int mota_agent_finish_upload(struct mota_agent *a);

/* ---- the upload's end, defined by upload.c ---- */

/* An upload's secrets (the content key, the cipher states, the program buffer) wiped: it has ended. */
void mota_agent_upload_wipe(struct mota_agent *a);
/* The upload of model m refused with reason (returned): wiped, and journaled once something was erased. */
int mota_agent_fail_upload(struct mota_agent *a, unsigned m, int reason);

#endif /* MOTA_AGENT_INT_H */
