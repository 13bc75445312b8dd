/* SPDX-License-Identifier: Apache-2.0 */
/* The fuzz targets' signer: makes a mutated container validly signed again, in place, so the
 * fuzzers reach the code after the signature (docs/architecture.md, "Fuzzing past the signature").
 * The fuzz build's ES256 verify accepts mota_fuzz_sign's signatures (crypto/src/crypto.c). Each fix is
 * chosen by a bit of the input, so that the refusals of a wrong digest or signature stay reachable:
 *   FUZZ_FIX_PAYLOADS   every integrated payload's digest (a compressed one's, and its image's) in the
 *                       manifest, where the manifest still decodes and the digest is found in it;
 *   FUZZ_FIX_MANIFEST   the manifest digest the authentication wrapper carries;
 *   FUZZ_FIX_SIGNATURE  every COSE_Sign1 signature (and a 16-byte kid) for the fuzz device's key.
 * Lengths are never changed: a fix overwrites bytes of the same size, found by the project's decoder. */
#ifndef MOTA_FUZZ_SIGN_H
#define MOTA_FUZZ_SIGN_H

#include "mota/container.h"
#include "mota/crypto.h"
#include "mota/decompress.h"
#include "mota/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FUZZ_FIX_PAYLOADS 1u
#define FUZZ_FIX_MANIFEST 2u
#define FUZZ_FIX_SIGNATURE 4u
#define FUZZ_FIX_ALL 7u
#define FUZZ_MAX_IMAGE (64u * 1024u) /* images larger than the fuzz device's slots keep their digest */

/* The fuzz device's signing key: any 0x04-prefixed 65 bytes verify in the fuzz build. */
static const uint8_t fuzz_pub[MOTA_P256_PUB_LEN] = {0x04, 0x6d, 0x6f, 0x74, 0x61, 0x20, 0x66, 0x75, 0x7a, 0x7a};

/* Overwrite the first copy of old[32] in the manifest by new[32]. */
static void fuzz_patch_digest(const struct mota_envelope *env, const uint8_t old[MOTA_SHA256_LEN],
                              const uint8_t new_[MOTA_SHA256_LEN])
{
    uint8_t *m = (uint8_t *)(uintptr_t)env->manifest;
    for (size_t i = 0; i + MOTA_SHA256_LEN <= env->manifest_len; i++) {
        if (memcmp(m + i, old, MOTA_SHA256_LEN) == 0) {
            memcpy(m + i, new_, MOTA_SHA256_LEN);
            return;
        }
    }
}

/* Each payload's digest as it now is, into the manifest. */
static void fuzz_fix_payloads(uint8_t *buf, size_t len, const struct mota_envelope *env)
{
    static struct mota_manifest m;
    static uint8_t image[FUZZ_MAX_IMAGE];
    static struct mota_decompress z;
    uint8_t md[MOTA_SHA256_LEN];
    if (mota_manifest_decode(env, &m) != MOTA_OK)
        return;
    size_t pos = env->head_len;
    for (size_t i = 0; i < env->n_payloads && pos < len; i++) {
        const char *name;
        size_t name_len, hl;
        uint64_t size;
        if (mota_payload_head(buf + pos, len - pos, &name, &name_len, &size, &hl) != MOTA_OK || size > len - pos - hl)
            return;
        const uint8_t *content = buf + pos + hl;
        const struct mota_component *c = mota_manifest_find_payload(&m, name, name_len);
        if (c != NULL && c->has_digest) {
            mota_sha256(content, (size_t)size, md);
            if (!c->transport) {
                fuzz_patch_digest(env, c->digest, md);
            } else {
                fuzz_patch_digest(env, c->wire_digest, md);
                if (c->compressed && !c->encrypted && c->size <= sizeof(image) &&
                    mota_decompress_buffer(&z, c->z_alg, content, (size_t)size, image, (uint32_t)c->size, c->z_block) ==
                        MOTA_OK) {
                    mota_sha256(image, (size_t)c->size, md);
                    fuzz_patch_digest(env, c->digest, md);
                }
            }
        }
        pos += hl + (size_t)size;
    }
}

/* Make buf (len bytes, a container or its head) validly signed again, as far as `fix` asks. */
static void fuzz_resign(uint8_t *buf, size_t len, unsigned fix)
{
    struct mota_envelope env;
    uint8_t md[MOTA_SHA256_LEN], kid[MOTA_KEY_ID_LEN], sigs[MOTA_SIG_STRUCTURE_MAX];
    size_t sl;
    if (mota_envelope_decode(buf, len, &env) != MOTA_OK)
        return;
    if (fix & FUZZ_FIX_PAYLOADS)
        fuzz_fix_payloads(buf, len, &env);
    if ((fix & FUZZ_FIX_MANIFEST) && env.digest_enc_len >= MOTA_SHA256_LEN) {
        uint8_t *d = (uint8_t *)(uintptr_t)env.digest_enc + env.digest_enc_len - MOTA_SHA256_LEN;
        if (memcmp(d, env.digest, MOTA_SHA256_LEN) == 0) { /* the digest's bytes end the SUIT_Digest */
            mota_sha256(env.manifest_wrapped, env.manifest_wrapped_len, md);
            memcpy(d, md, MOTA_SHA256_LEN);
        }
    }
    if (!(fix & FUZZ_FIX_SIGNATURE))
        return;
    mota_key_id(fuzz_pub, kid);
    for (size_t b = 0; b < env.n_blocks; b++) {
        if (env.blocks[b].kid != NULL && env.blocks[b].kid_len == MOTA_KEY_ID_LEN)
            memcpy((uint8_t *)(uintptr_t)env.blocks[b].kid, kid, MOTA_KEY_ID_LEN);
    }
    if (mota_envelope_decode(buf, len, &env) != MOTA_OK) /* a kid in the protected header is signed too */
        return;
    for (size_t b = 0; b < env.n_blocks; b++) {
        const struct mota_auth_block *blk = &env.blocks[b];
        if (blk->no_sig || blk->sig == NULL || mota_sig_structure(&env, blk, sigs, sizeof(sigs), &sl) != MOTA_OK)
            continue;
        mota_sha256(sigs, sl, md);
        mota_fuzz_sign(fuzz_pub, md, (uint8_t *)(uintptr_t)blk->sig);
    }
}

#endif
