/* SPDX-License-Identifier: Apache-2.0 */
/* Key-encryption key files: a JWK of one A128KW key, read strictly (a key file that is not exactly what
 * it claims is refused, never guessed at) and written the same way every time. */
#include "kek.h"

#include "files.h"
#include "mota/cbor.h"
#include "mota/err.h"

#include <stdio.h>
#include <string.h>

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* A JSON string at *p (no escapes): its content, and *p after the closing quote. */
static bool get_string(const char **p, const char *end, const char **s, size_t *n)
{
    if (*p >= end || **p != '"')
        return false;
    const char *q = *p + 1;
    while (q < end && *q != '"') {
        if (*q == '\\' || (unsigned char)*q < 0x20)
            return false;
        q++;
    }
    if (q >= end)
        return false;
    *s = *p + 1;
    *n = (size_t)(q - *s);
    *p = q + 1;
    return true;
}

static void skip_ws(const char **p, const char *end)
{
    while (*p < end && (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r'))
        (*p)++;
}

/* 16 bytes from 22 base64url characters without padding (the last carrying 2 zero bits) */
static bool decode_k(const char *s, size_t n, uint8_t out[MOTA_AES128_KEY_LEN])
{
    uint32_t acc = 0;
    size_t bits = 0, o = 0;
    if (n != 22)
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *c = s[i] != '\0' ? memchr(b64url, s[i], 64) : NULL;
        if (c == NULL)
            return false;
        acc = acc << 6 | (uint32_t)(c - b64url);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o < MOTA_AES128_KEY_LEN)
                out[o++] = (uint8_t)(acc >> bits);
        }
    }
    return o == MOTA_AES128_KEY_LEN && (acc & ((1u << bits) - 1)) == 0;
}

static bool is(const char *s, size_t n, const char *want)
{
    return n == strlen(want) && memcmp(s, want, n) == 0;
}

/* One member, name and value: the four the key needs are checked, others skipped. *seen: bits of those. */
static bool member(const char *name, size_t nl, const char *v, size_t vl, struct mota_kek *k, unsigned *seen)
{
    unsigned bit = is(name, nl, "kty")   ? 1u
                   : is(name, nl, "alg") ? 2u
                   : is(name, nl, "kid") ? 4u
                   : is(name, nl, "k")   ? 8u
                                         : 0u;
    if (bit != 0 && (*seen & bit) != 0)
        return false; /* a member twice */
    *seen |= bit;
    switch (bit) {
    case 1u: return is(v, vl, "oct");
    case 2u: return is(v, vl, "A128KW");
    case 4u:
        if (vl == 0 || vl > MOTA_ENC_MAX_KID || !mota_utf8_valid((const uint8_t *)v, vl))
            return false;
        memcpy(k->kid, v, vl);
        k->kid_len = vl;
        return true;
    case 8u: return decode_k(v, vl, k->k);
    default: return true;
    }
}

int tool_kek_parse(const char *text, size_t len, struct mota_kek *k)
{
    int ret = MOTA_ERR_KEK_INVALID;
    const char *p = text, *end = text + len, *name, *v;
    size_t nl, vl;
    unsigned seen = 0;
    struct mota_kek got;
    memset(&got, 0, sizeof(got));
    skip_ws(&p, end);
    if (p >= end || *p++ != '{')
        goto out;
    for (bool first = true;; first = false) {
        skip_ws(&p, end);
        if (p < end && *p == '}' && first)
            break;
        if (!get_string(&p, end, &name, &nl))
            goto out;
        skip_ws(&p, end);
        if (p >= end || *p++ != ':')
            goto out;
        skip_ws(&p, end);
        if (!get_string(&p, end, &v, &vl) || !member(name, nl, v, vl, &got, &seen))
            goto out;
        skip_ws(&p, end);
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        break;
    }
    if (p >= end || *p++ != '}')
        goto out;
    skip_ws(&p, end);
    if (p != end || seen != 15u)
        goto out;
    *k = got;
    ret = MOTA_OK;
out:
    memset(&got, 0, sizeof(got)); /* the key does not stay behind on the stack */
    return ret;
}

int tool_kek_read(const char *path, struct mota_kek *k)
{
    struct mapped m;
    int ret = tool_map(path, &m); /* it says why a file cannot be read */
    if (ret != MOTA_OK)
        return ret;
    ret = m.len > TOOL_KEK_FILE_MAX ? MOTA_ERR_KEK_INVALID : tool_kek_parse((const char *)m.data, m.len, k);
    if (m.map != NULL) /* the file was read into memory of our own: the key does not outlive it there */
        memset(m.map, 0, m.map_len);
    tool_unmap(&m);
    return ret;
}

int tool_kek_format(const struct mota_kek *k, char *out, size_t cap)
{
    char kb[23];
    uint32_t acc = 0;
    size_t bits = 0, o = 0;
    if (k->kid_len == 0 || k->kid_len > MOTA_ENC_MAX_KID || !mota_utf8_valid(k->kid, k->kid_len))
        return MOTA_ERR_KEK_INVALID;
    for (size_t i = 0; i < k->kid_len; i++) {
        if (k->kid[i] < 0x20 || k->kid[i] == '"' || k->kid[i] == '\\' || k->kid[i] == 0x7F)
            return MOTA_ERR_KEK_INVALID; /* written without escapes, as it is read */
    }
    for (size_t i = 0; i < MOTA_AES128_KEY_LEN; i++) {
        acc = acc << 8 | k->k[i];
        for (bits += 8; bits >= 6; bits -= 6)
            kb[o++] = b64url[(acc >> (bits - 6)) & 63];
    }
    kb[o++] = b64url[(acc << (6 - bits)) & 63];
    kb[o] = '\0';
    static const char head[] = "{\"kty\":\"oct\",\"alg\":\"A128KW\",\"kid\":\"";
    size_t need = sizeof(head) - 1 + k->kid_len + strlen("\",\"k\":\"") + o + strlen("\"}\n") + 1;
    if (need > cap)
        return MOTA_ERR_NOSPC;
    memcpy(out, head, sizeof(head) - 1);
    size_t at = sizeof(head) - 1;
    memcpy(out + at, k->kid, k->kid_len);
    at += k->kid_len;
    at += (size_t)snprintf(out + at, cap - at, "\",\"k\":\"%s\"}\n", kb);
    memset(kb, 0, sizeof(kb));
    return MOTA_OK;
}
