/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device agent: receives a container from a byte stream, verifies it
 * before erasing anything, writes the model to the inactive slot of its A/B
 * pair, installs it, runs the self-test, then commits or rolls back, and
 * keeps a valid model across a power loss at any instant.
 *
 * No heap. The caller owns struct mota_agent and a scratch buffer for the
 * container head; the platform comes in through the port (mota/port.h). One
 * thread: call the agent from the application's main loop, not while a
 * model is running. State machine and on-flash formats: docs/agent.md.
 */
#ifndef MOTA_AGENT_H
#define MOTA_AGENT_H

#include "mota/compat.h"
#include "mota/container.h"
#include "mota/decompress.h"
#include "mota/delta.h"
#include "mota/encinfo.h"
#include "mota/features.h"
#include "mota/journal.h"
#include "mota/loader.h"
#include "mota/port.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef MOTA_AGENT_MAX_MODELS
#define MOTA_AGENT_MAX_MODELS 4u /* a board may set fewer for its build: each costs about 0.9 KiB of RAM */
#endif
#define MOTA_AGENT_MAX_KEYS 4u
#define MOTA_AGENT_DEVICE_ID_MAX 16u /* bytes of a device's unique id (an STM32's UID: 12) */
/*
 * The container head (authentication wrapper and manifest) is held whole in
 * the scratch buffer while it is checked, before anything is erased.
 * SCRATCH_ANY takes every head the format allows; a device may give less
 * (at least SCRATCH_MIN): a head that does not fit is refused with
 * MOTA_ERR_ENV_TOO_LARGE, and HELLO tells the host the size, so `mota push`
 * refuses such a container before sending it. Heads `mota pack` writes are
 * about 0.6 KiB, at most about 1.7 KiB with every text field at its limit.
 */
#define MOTA_AGENT_SCRATCH_ANY (MOTA_CONTAINER_MAX_AUTH + MOTA_CONTAINER_MAX_MANIFEST + 64u)
#define MOTA_AGENT_SCRATCH_MIN 512u
/* Upload progress is journaled every this many bytes: an interrupted
 * transfer resends at most this much (plus the head). */
#ifndef MOTA_AGENT_PROGRESS_STEP
#define MOTA_AGENT_PROGRESS_STEP (16u * 1024u)
#endif

/* One model pair: two slots of equal size in the flash, named by c_name. */
struct mota_agent_model_config {
    const char *c_name;
    uint32_t slot_offset[2]; /* sector-aligned */
    uint32_t slot_size;      /* each slot from a sector start; the sectors it reaches into (of any sizes) are its own */
    uint32_t exec_ram_addr, exec_ram_size; /* where the model runs */
    uint32_t ext_ram_addr, ext_ram_size;   /* external RAM (NPU tag 9 pool), 0 if none */
};

/* A trusted signing key; keys whose index is below the revocation floor are refused. */
struct mota_agent_key {
    uint8_t pub[MOTA_P256_PUB_LEN];
    uint32_t index;
};

/*
 * What the device brings: its port (mota/port.h, checked by
 * mota_agent_init: MOTA_ERR_PORT without a required member), its layout and
 * its trust. n_keys == 0 is an unprovisioned device: it boots and reports,
 * and refuses every upload with MOTA_ERR_NOT_PROVISIONED.
 */
struct mota_agent_config {
    const struct mota_port *port;
    uint32_t journal_offset; /* two sectors for the state journal */
    unsigned n_models;
    struct mota_agent_model_config models[MOTA_AGENT_MAX_MODELS];
    unsigned n_keys;
    struct mota_agent_key keys[MOTA_AGENT_MAX_KEYS];
    uint8_t vendor_id[16], class_id[16];
    /* optional: the names the ids are UUID5s of (the vendor's domain, the class's name), NUL-terminated,
     * shown beside the ids (HELLO key 15); NULL or "": not known here */
    const char *vendor_name, *class_name;
    /* this device's unique id, sent in HELLO (key 14) so a host tells devices apart: on an STM32 the 12
     * bytes at UID_BASE; at most MOTA_AGENT_DEVICE_ID_MAX (mota_agent_init: MOTA_ERR_CONFIG); 0: none */
    uint8_t device_id[MOTA_AGENT_DEVICE_ID_MAX];
    uint8_t device_id_len;
    struct mota_device_profile profile;
    uint32_t max_trial_boots; /* boots allowed before an unconfirmed model is reverted (default 3) */
    uint8_t *selftest_buf;    /* for the self-test input and output */
    size_t selftest_buf_size;
    uint8_t *scratch; /* the container head: MOTA_AGENT_SCRATCH_ANY, at least _MIN bytes */
    size_t scratch_size;
    /* the keys of encrypted payloads (mota/encinfo.h): key-encryption keys and this device's P-256 key for
     * ECDH, pointing into storage that outlives the agent (the provisioning record's decoded view); all
     * NULL/0: none. They never leave the device: no answer, log or journal record carries them. */
    struct mota_enc_keys enc;
};

/*
 * The facts behind the last refusal, for the host's detail text (docs/protocol.md, "Refusal details"):
 * what the device has, trusts or measured, and what the container says or needs. Which values a reason
 * carries: a compatibility rule (field names it), MOTA_ERR_KEY_REVOKED (revocation floor, the signing
 * key's index), MOTA_ERR_ROLLBACK and _SAME_SEQ (committed, offered sequence number),
 * MOTA_ERR_SELFTEST_SLOW (measured, budget in us), MOTA_ERR_SELFTEST_OUTPUT (the first 8 bytes of the
 * output's SHA-256, big-endian: the device's, the manifest's). Vendor, class and unknown-key refusals
 * carry none here: their ids are read from the configuration and the container head.
 */
struct mota_agent_refusal {
    int reason;        /* the refusal these facts belong to; 0: none */
    const char *field; /* a compatibility rule's name ("cpu_part"), else NULL */
    uint64_t device, model;
};

/* The steps after the last byte of an upload, announced before each runs (the link's event frames). */
enum mota_agent_phase {
    MOTA_PHASE_VERIFY = 1,   /* every component read back from flash and hashed */
    MOTA_PHASE_INSTALL = 2,  /* the loader: copy, relocation */
    MOTA_PHASE_SELFTEST = 3, /* the manifest's self-test inference */
    MOTA_PHASE_COMMIT = 4,   /* the trial journaled */
    /* not a step but a wait, during the upload: the flash is busy for up to the event's milliseconds (a
     * sector erase), and the device reads nothing meanwhile; the host holds its data and its timers */
    MOTA_PHASE_FLASH_BUSY = 5,
};

/* The model a rollback would bring back (mota_agent_previous). */
struct mota_agent_previous {
    uint64_t seq;
    uint8_t digest[MOTA_SHA256_LEN]; /* manifest digest */
    uint8_t slot;
    const char *version; /* the manifest's version text, in the mapped slot; may be NULL */
    size_t version_len;
};

/* What the application sees of the active model. */
struct mota_agent_model_info {
    const char *c_name;
    size_t c_name_len;
    const char *version; /* from the manifest text, may be NULL */
    size_t version_len;
    uint64_t seq;
    uint8_t digest[MOTA_SHA256_LEN];
    uint32_t install_mode;
    uint8_t slot;
    bool testing;
    uint32_t trial_boots;
    const struct mota_installed *instance;   /* entry points, RW base (r9), code address */
    uint32_t exec_ram_addr, exec_ram_size;   /* where it runs (its configured region) */
    uint64_t activations_size;               /* from the compatibility data */
    uint32_t exec_ram_used;                  /* bytes of exec RAM its install mode needs */
    const struct mota_epoch_summary *epochs; /* where its work runs (its manifest's npu-epochs); NULL: none */
};


/*
 * Where the last update's time went, from the port's clock (us; 0 = did not
 * run). Reported by STATUS; under QEMU -icount shift=0 one microsecond is
 * exactly 1000 instructions (scripts/bench-board.sh).
 */
struct mota_agent_timing {
    uint32_t check_us;     /* the complete head: signature, manifest, compatibility, sequence */
    uint32_t erase_us;     /* erasing the inactive slot (sector by sector, between programs) */
    uint32_t digest_us;    /* every component's digest, read back from flash, and the code's validation */
    uint32_t install_us;   /* the loader: copy, GOT and REL patching, clearing */
    uint32_t selftest_us;  /* the self-test run, as the port's inference measured it */
    uint32_t verdict_us;   /* from the last byte received to the verdict */
    uint32_t digest_bytes; /* bytes hashed by digest_us */
};

/* Where an upload's parts go and how it installs: decided from its verified head, before any erase. */
struct mota_agent_layout {
    uint32_t install_mode;                               /* chosen by the compatibility rules */
    uint32_t comp_stream[MOTA_CONTAINER_MAX_COMPONENTS]; /* stream offset of each payload head */
    uint32_t comp_phl[MOTA_CONTAINER_MAX_COMPONENTS];    /* payload head length */
    uint32_t comp_slot[MOTA_CONTAINER_MAX_COMPONENTS];   /* slot offset of each component */
    uint32_t container_len, slot_used;                   /* bytes of the stream, of the slot it occupies */
};

/*
 * The upload being received, the RAM part (its durable part is the model's state in the journal): what
 * mota_agent_write keeps between calls, held in struct mota_agent by value.
 */
struct mota_agent_upload {
    int model;         /* -1: none */
    bool ready;        /* head verified and decoded into env/man */
    uint32_t expected; /* next stream offset */
    struct mota_envelope env;
    struct mota_manifest man;
    struct mota_agent_layout layout; /* decided once, from the verified head */
    struct mota_sha256 sha;
    int sha_comp;             /* component being hashed, -1 none */
    uint8_t payload_head[32]; /* a payload head being received (tstr key and bstr head: 26 bytes at most) */
    uint32_t payload_head_fill;
    uint8_t unit[256]; /* partial program unit */
    uint32_t unit_fill, unit_slot_off;
    uint32_t unit_at; /* slot offset of the last unit programmed (or torn) */
    uint32_t redo_at; /* 1 + the unit whose sectors were last erased again (0: none this upload) */
    /* a compressed payload: its decoder (its tables: 1.2 KiB), its image as mapped (matches are read back
     * from it; NULL: through read()), stream bytes to hash but not decode after a resume, a sink's flash
     * error */
    struct mota_decompress z;
    const uint8_t *img;
    uint32_t z_skip;
    int z_err;
    bool z_resumed;
#if MOTA_FEATURE_DELTA
    /* a delta payload (mota/delta.h): the decoder's stream is the difference from the source, the active
     * model's image of the same role (on flash at src_base; mapped in dsrc, or read through it) */
    bool delta_on;
    struct mota_delta delta;
    struct mota_delta_source dsrc;
    uint32_t src_base;
#endif
    uint32_t x_plain; /* an encrypted payload that is not compressed: image bytes given to the program unit */
    /* an encrypted payload's decoder refusal, told only once its bytes proved authentic (transport digest, GCM
     * tag): its plaintext is not authenticated while it is decoded, and a reason per bit flipped would make the
     * device an oracle on it; decoding stops, the bytes are still hashed to the end. 0: none */
    int x_err;
#if MOTA_FEATURE_DECRYPT
    /* an encrypted payload: the container's content key (unwrapped from the head before any erase, never
     * journaled, wiped when the upload ends), the component's cipher (GCM: decrypting ahead of what the
     * decoder consumed, authenticating what it consumed), its tag as received, the GHASH state at the last
     * 64-byte boundary of that (what a resume point journals), and a few decrypted bytes for the decoder */
    bool cek_ok;
    uint8_t cek[MOTA_AES128_KEY_LEN];
    int enc_alg; /* MOTA_ENC_A128GCM, _A128CTR, or 0: the payload is not encrypted */
    struct mota_aes128 aes;
    struct mota_gcm gcm;
    struct mota_ctr ctr;
    uint8_t tag[MOTA_GCM_TAG_LEN];
    uint8_t y64[MOTA_GCM_STATE_LEN];
    uint8_t x[128];
#endif
    uint32_t last_persist; /* where the stream was when its progress was last journaled */
    bool resumed;          /* units past the resume point may already be on flash */
    bool active;           /* a container has started and has neither ended nor been refused */
};

/* The agent's state: caller-allocated, opaque in use. */
struct mota_agent {
    const struct mota_agent_config *cfg;
    /* the durable state: replayed from the journal at boot and changed by appending journal records (a
     * refusal before any erase only notes the model's last error, unjournaled); the journal points at it,
     * so a struct mota_agent is not moved once started */
    struct mota_journal journal;
    struct mota_agent_model_state st[MOTA_AGENT_MAX_MODELS];
    uint32_t key_floor;
    /* installed instances */
    bool installed[MOTA_AGENT_MAX_MODELS];
    struct mota_installed inst[MOTA_AGENT_MAX_MODELS];
    struct mota_manifest active_manifest[MOTA_AGENT_MAX_MODELS];
    /* the code about to be installed, validated once its digest is checked (the loader's bounds) */
    struct mota_nbin_info code_info;
    struct mota_agent_upload up; /* the upload being received (RAM part) */
    int verdict_model;           /* the model the current or last upload is for, once its head said (-1: not known) */
    /* install even the container the model runs already, into the other slot, on trial (the link sets it
     * from BEGIN's flag, mota push --reinstall); otherwise that container is MOTA_ERR_ALREADY_ACTIVE */
    bool reinstall;
    int last_error;
    struct mota_agent_refusal refusal; /* the facts behind the last refusal of an upload */
    /* optional, set after mota_agent_init (the link does): told before each phase after the last byte;
     * offset is the container's length */
    void (*on_phase)(void *ctx, enum mota_agent_phase phase, uint32_t offset);
    /* optional, same context: told before a flash operation that may take max_us (a sector erase) */
    void (*on_busy)(void *ctx, uint32_t max_us);
    void *phase_ctx;
    enum mota_reset_cause reset_cause;            /* why this boot happened, as the port said */
    struct mota_agent_timing timing;              /* of the last update */
    uint32_t model_faults[MOTA_AGENT_MAX_MODELS]; /* faults and overruns of each model since boot */
};

/*
 * Start the agent at boot: read the journal (formatting a blank one), apply
 * trial-boot accounting (revert a model not confirmed within max_trial_boots
 * boots, or after a watchdog reset), re-validate each active model from
 * flash (signature and every digest) and install it.
 */
int mota_agent_init(struct mota_agent *a, const struct mota_agent_config *cfg);

/*
 * Container bytes at stream offset `offset` (the first call of an upload at
 * 0). Returns the next expected offset (>= 0): after the head is verified
 * and an interrupted upload of the same container exists, this jumps to
 * where that upload stopped. When the last byte arrives the model is
 * verified from flash, installed and self-tested: the result is MOTA_OK
 * plus the container length, or the reason it was refused (the active
 * model is untouched). Checks before any erase: signature and manifest,
 * anti-rollback, vendor/class, compatibility, size.
 */
int mota_agent_write(struct mota_agent *a, uint32_t offset, const uint8_t *data, size_t len);

/* Offset the sender should continue from (0 when no upload is in progress). */
uint32_t mota_agent_upload_offset(const struct mota_agent *a);

/* An upload is under way: the container has started and not yet ended (or been refused). */
bool mota_agent_receiving(const struct mota_agent *a);

/* Drop an upload in progress. */
int mota_agent_abort(struct mota_agent *a);

/* The application confirms the model on trial (by c_name index). */
int mota_agent_confirm(struct mota_agent *a, unsigned model);

/*
 * Revert a model on trial to the previous confirmed one; a first model on
 * trial (nothing before it) is removed, as its trial's expiry would. A confirmed model
 * can be rolled back too, once it has faulted or overrun in the
 * application's inference since boot (mota_agent_model_fault): it is
 * retired, the previous model comes back if its slot still verifies, and
 * the anti-rollback floor stays at the retired model's sequence number (the
 * same container is refused, MOTA_ERR_ROLLBACK_SAME_SEQ; a fix needs a
 * higher number). Otherwise a confirmed model gives MOTA_ERR_NOT_TESTING.
 */
int mota_agent_rollback(struct mota_agent *a, unsigned model);

/* Refuse keys whose index is below floor from now on (monotonic). */
int mota_agent_revoke_keys(struct mota_agent *a, uint32_t floor);

/* Run the active model's self-test again. */
int mota_agent_selftest(struct mota_agent *a, unsigned model);

int mota_agent_model_info(const struct mota_agent *a, unsigned model, struct mota_agent_model_info *info);

/*
 * The application's own inference of a model faulted or ran over its time
 * (a guarding port's MOTA_ERR_SELFTEST_FAULT or _TIMEOUT, from `mota invoke`
 * or from the product's inference loop): counted per model since boot and
 * shown by STATUS with the reason as the model's last error. The
 * application may then roll the model back (mota_agent_rollback), on trial
 * or confirmed.
 */
int mota_agent_model_fault(struct mota_agent *a, unsigned model, int reason);

/* Last error (reason code) for a model, kept across reboots; a later install, confirm or rollback
 * of the model clears it. When it happened: struct mota_agent_model_state last_error_this_boot, _ms. */
int mota_agent_last_error(const struct mota_agent *a, unsigned model);

/*
 * The model a rollback would bring back: MOTA_OK and *out when the other slot
 * still holds it (its head decodes and matches the journaled digest), else
 * MOTA_ERR_NO_PREVIOUS. Reads the mapped flash; no signature check.
 */
/*
 * A quiet moment (no request being handled; mota_device_step calls it): with no upload under way, the
 * journal's spare sector is erased ahead of its compaction, so that no append in the middle of an
 * update waits for an erase of a large sector (seconds on an STM32H7). MOTA_OK or the flash's error.
 */
int mota_agent_idle(struct mota_agent *a);

int mota_agent_previous(const struct mota_agent *a, unsigned model, struct mota_agent_previous *out);

/* Model index for a c_name, or -1. */
int mota_agent_find_model(const struct mota_agent *a, const char *c_name, size_t len);

#endif /* MOTA_AGENT_H */
