/* SPDX-License-Identifier: Apache-2.0 */
/* Integrated payloads on the host: located by the container's own decoder, images decoded by the
 * device's decoder (mota_payload_reconstruct), so the host reads them as a device does. */
#include "payloads.h"

#include "mota/err.h"

#include <stdlib.h>

int tool_payload_find(const uint8_t *buf, size_t len, const struct mota_verify_result *r, enum mota_component_role role,
                      const struct mota_component **comp, const uint8_t **wire, size_t *wire_len)
{
    size_t pos = r->env.head_len;
    for (size_t i = 0; i < r->env.n_payloads && pos <= len; i++) {
        const char *name;
        size_t name_len, hl;
        uint64_t size;
        int ret = mota_payload_head(buf + pos, len - pos, &name, &name_len, &size, &hl);
        if (ret != MOTA_OK)
            return ret;
        if (size > len - pos - hl)
            return MOTA_ERR_CBOR_TRUNCATED;
        const struct mota_component *c = mota_manifest_find_payload(&r->manifest, name, name_len);
        if (c != NULL && c->role == role) {
            *comp = c;
            *wire = buf + pos + hl;
            *wire_len = (size_t)size;
            return MOTA_OK;
        }
        pos += hl + (size_t)size;
    }
    return MOTA_ERR_PAYLOAD_MISSING;
}

int tool_payload_image(const struct mota_component *c, const uint8_t *wire, size_t wire_len, const uint8_t **img,
                       size_t *img_len, uint8_t **owned)
{
    *owned = NULL;
    if (c->encrypted)
        return MOTA_ERR_ENC_NO_KEY; /* the host holds no content key */
    if (!c->compressed) {
        *img = wire;
        *img_len = wire_len;
        return MOTA_OK;
    }
    uint8_t *out = malloc(c->size > 0 ? (size_t)c->size : 1);
    if (out == NULL)
        return MOTA_ERR_IO;
    int ret = mota_payload_reconstruct(c, wire, wire_len, NULL, out, (size_t)c->size);
    if (ret != MOTA_OK) {
        free(out);
        return ret;
    }
    *owned = out;
    *img = out;
    *img_len = (size_t)c->size;
    return MOTA_OK;
}

int tool_verify_images(const uint8_t *buf, size_t len, const struct mota_verify_result *r,
                       const struct mota_component **failed)
{
    for (size_t c = 0; c < r->manifest.n_components; c++) {
        const struct mota_component *comp;
        const uint8_t *wire, *img;
        size_t wire_len, img_len;
        uint8_t *owned = NULL;
        if (!r->manifest.comp[c].compressed || r->manifest.comp[c].encrypted)
            continue; /* an encrypted image is checked where its key is: on the device */
        *failed = &r->manifest.comp[c];
        int ret = tool_payload_find(buf, len, r, r->manifest.comp[c].role, &comp, &wire, &wire_len);
        if (ret == MOTA_OK)
            ret = tool_payload_image(comp, wire, wire_len, &img, &img_len, &owned);
        free(owned);
        if (ret != MOTA_OK)
            return ret;
    }
    *failed = NULL;
    return MOTA_OK;
}
