/* SPDX-License-Identifier: Apache-2.0 */
/* The integrated payloads of a container, as the host reads them: wire bytes and images. */
#ifndef MOTA_TOOL_PAYLOADS_H
#define MOTA_TOOL_PAYLOADS_H

#include "mota/container.h"

#include <stddef.h>
#include <stdint.h>

/* The payload of the component with `role` in a container whose envelope and manifest r holds and
 * whose payloads were checked (mota_container_check_payloads or _verify): MOTA_OK, its component and
 * its bytes as sent, or MOTA_ERR_PAYLOAD_MISSING. */
int tool_payload_find(const uint8_t *buf, size_t len, const struct mota_verify_result *r, enum mota_component_role role,
                      const struct mota_component **comp, const uint8_t **wire, size_t *wire_len);

/* A component's image: its payload itself, or the payload decompressed into a malloc'd *owned (the
 * caller frees it; NULL when nothing was allocated) and checked against the image's signed digest.
 * MOTA_ERR_ENC_NO_KEY for an encrypted one. */
int tool_payload_image(const struct mota_component *c, const uint8_t *wire, size_t wire_len, const uint8_t **img,
                       size_t *img_len, uint8_t **owned);

/* After mota_container_verify: every compressed payload decodes to its signed image (size and digest).
 * MOTA_OK, or the first refusal, with the component in *failed. */
int tool_verify_images(const uint8_t *buf, size_t len, const struct mota_verify_result *r,
                       const struct mota_component **failed);

#endif
