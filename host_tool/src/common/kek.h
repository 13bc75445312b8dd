/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A key-encryption key file (docs/host-tool.md, "Keys for encrypted payloads"): a JSON Web Key (RFC 7517)
 * of an AES-128 key-wrap key with its key id,
 *   {"kty":"oct","alg":"A128KW","kid":"<1..32 bytes of text>","k":"<16 bytes, base64url, no padding>"}
 * written by `mota keygen --kek` (mode 0600), read by `mota pack --encrypt-kek`, `mota provision --kek`
 * and `mota sim --kek`. Members may come in any order; other members with text values are ignored;
 * strings hold no escapes. The kid is what a container's recipient names (its UTF-8 bytes).
 */
#ifndef MOTA_TOOL_KEK_H
#define MOTA_TOOL_KEK_H

#include "mota/encinfo.h"

#include <stddef.h>

#define TOOL_KEK_FILE_MAX 512u /* bytes of a key file at the most */

/* Decode a key file's text: MOTA_OK or MOTA_ERR_KEK_INVALID. */
int tool_kek_parse(const char *text, size_t len, struct mota_kek *k);

/* Read and decode the key file at path: MOTA_OK, MOTA_ERR_IO or MOTA_ERR_KEK_INVALID. */
int tool_kek_read(const char *path, struct mota_kek *k);

/* The key file's text for k (one line and a newline), NUL-terminated in out: MOTA_OK, or MOTA_ERR_NOSPC,
 * MOTA_ERR_KEK_INVALID for a kid that is not 1..32 bytes of printable text. */
int tool_kek_format(const struct mota_kek *k, char *out, size_t cap);

#endif /* MOTA_TOOL_KEK_H */
