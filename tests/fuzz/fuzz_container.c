/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the container decoder, from envelope to payload heads.
 * Input: [fix] [container]: fix says which of fuzz_sign.h's fixes the container gets (bits 0-2),
 * so mutants are validly signed by the trusted key again and mota_container_verify runs to the
 * payload digests; without them, the refusals of a wrong digest or signature.
 * After the envelope decodes, the manifest decoder and profile check run on it regardless, as
 * they would for a container signed by a trusted (or compromised) key. */
#include "fuzz_sign.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct mota_verify_result r;
    static struct mota_trusted_key key;
    if (key.pub[0] == 0)
        mota_trusted_key_set(&key, fuzz_pub);
    if (size < 1)
        return 0;
    unsigned fix = data[0];
    data++;
    size--;
    struct mota_envelope env;
    struct mota_manifest m;

    /* a copy of exactly `size` bytes, so ASan sees any over-read */
    uint8_t *buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    fuzz_resign(buf, size, fix & FUZZ_FIX_ALL);
    int ret = mota_container_verify(buf, size, &key, 1, &r);
    if (mota_err_name(ret) == NULL)
        abort(); /* every result must be a known reason code */
    if (mota_envelope_decode(buf, size, &env) == MOTA_OK && mota_manifest_decode(&env, &m) == MOTA_OK) {
        (void)mota_manifest_check_profile(&m);
        size_t pos = env.head_len;
        for (size_t i = 0; i < env.n_payloads && pos < size; i++) {
            const char *name;
            size_t name_len, hl;
            uint64_t psize;
            if (mota_payload_head(buf + pos, size - pos, &name, &name_len, &psize, &hl) != MOTA_OK)
                break;
            (void)mota_manifest_find_payload(&m, name, name_len);
            if (psize > size - pos - hl)
                break;
            pos += hl + (size_t)psize;
        }
    }
    free(buf);
    return 0;
}
