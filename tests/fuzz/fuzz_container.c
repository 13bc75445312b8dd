/* libFuzzer target: the container decoder, from envelope to payload heads.
 * The trusted key is the SUIT draft's example key, so seeding with
 * example0.suit reaches past the signature.
 * The signature normally stops random input early, so after the envelope
 * decodes, the manifest decoder and profile check run on it regardless, as
 * they would for a container signed by a trusted (or compromised) key. */
#include "mota/container.h"
#include "mota/err.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct mota_verify_result r;
    static const struct mota_trusted_key key = {
        .pub = {0x04, 0x84, 0x96, 0x81, 0x1a, 0xae, 0x0b, 0xaa, 0xab, 0xd2, 0x61, 0x57, 0x18, 0x9e,
                0xec, 0xda, 0x26, 0xbe, 0xaa, 0x8b, 0xf1, 0x1b, 0x6f, 0x3f, 0xe6, 0xe2, 0xb5, 0x65,
                0x9c, 0x85, 0xdb, 0xc0, 0xad, 0x3b, 0x1f, 0x2a, 0x4b, 0x6c, 0x09, 0x81, 0x31, 0xc0,
                0xa3, 0x6d, 0xac, 0xd1, 0xd7, 0x8b, 0xd3, 0x81, 0xdc, 0xdf, 0xb0, 0x9c, 0x05, 0x2d,
                0xb3, 0x39, 0x91, 0xdb, 0x73, 0x38, 0xb4, 0xa8, 0x96},
    };
    struct mota_envelope env;
    struct mota_manifest m;

    /* a copy of exactly `size` bytes, so ASan sees any over-read */
    uint8_t *buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
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
