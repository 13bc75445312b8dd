/* SPDX-License-Identifier: Apache-2.0 */
/* Host-only crypto: key files, key generation, random bytes, RFC 6979 signing (mbed TLS 2.28). */
#include "mota/crypto_sign.h"

#include "mota/err.h"

#include <mbedtls/asn1.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecdsa.h>
#include <mbedtls/ecp.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/sha1.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct rng {
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
};

static int rng_setup(struct rng *r)
{
    static const char pers[] = "mota host rng";
    mbedtls_entropy_init(&r->entropy);
    mbedtls_ctr_drbg_init(&r->drbg);
    if (mbedtls_ctr_drbg_seed(&r->drbg, mbedtls_entropy_func, &r->entropy, (const unsigned char *)pers,
                              sizeof(pers) - 1) != 0)
        return MOTA_ERR_RANDOM;
    return MOTA_OK;
}

static void rng_free(struct rng *r)
{
    mbedtls_ctr_drbg_free(&r->drbg);
    mbedtls_entropy_free(&r->entropy);
}

/* Copy an mbed TLS EC key pair into our flat representation. */
static int from_keypair(const mbedtls_ecp_keypair *kp, int has_private, struct mota_p256_key *key)
{
    size_t olen = 0;
    if (kp->grp.id != MBEDTLS_ECP_DP_SECP256R1)
        return MOTA_ERR_KEY_INVALID;
    memset(key, 0, sizeof(*key));
    if (mbedtls_ecp_point_write_binary(&kp->grp, &kp->Q, MBEDTLS_ECP_PF_UNCOMPRESSED, &olen, key->pub,
                                       sizeof(key->pub)) != 0 ||
        olen != MOTA_P256_PUB_LEN)
        return MOTA_ERR_KEY_INVALID;
    if (has_private) {
        if (mbedtls_mpi_write_binary(&kp->d, key->d, sizeof(key->d)) != 0)
            return MOTA_ERR_KEY_INVALID;
        key->has_private = 1;
    }
    return MOTA_OK;
}

int mota_key_parse(const uint8_t *buf, size_t len, struct mota_p256_key *key)
{
    int ret = MOTA_ERR_KEY_INVALID;
    mbedtls_pk_context pk;
    unsigned char *copy = NULL;
    int is_private = 0;

    mbedtls_pk_init(&pk);
    if (buf == NULL || key == NULL || len == 0 || len > (1u << 20)) {
        ret = MOTA_ERR_ARG;
        goto out;
    }
    /* mbed TLS wants PEM NUL-terminated, with the NUL counted in the length. */
    copy = malloc(len + 1);
    if (copy == NULL) {
        ret = MOTA_ERR_NOSPC;
        goto out;
    }
    memcpy(copy, buf, len);
    copy[len] = 0;
    /* PEM (text with a BEGIN line) is parsed with its NUL; DER as it is,
     * since a trailing byte would make the DER invalid. */
    static const char begin[] = "-----BEGIN ";
    bool pem = false;
    for (size_t i = 0; i + sizeof(begin) - 1 <= len && !pem; i++)
        pem = memcmp(buf + i, begin, sizeof(begin) - 1) == 0;
    size_t plen = pem ? len + 1 : len;

    if (mbedtls_pk_parse_key(&pk, copy, plen, NULL, 0) == 0) {
        is_private = 1;
    } else {
        mbedtls_pk_free(&pk);
        mbedtls_pk_init(&pk);
        if (mbedtls_pk_parse_public_key(&pk, copy, plen) != 0)
            goto out;
    }
    if (mbedtls_pk_get_type(&pk) != MBEDTLS_PK_ECKEY && mbedtls_pk_get_type(&pk) != MBEDTLS_PK_ECDSA)
        goto out;
    ret = from_keypair(mbedtls_pk_ec(pk), is_private, key);
    if (ret == MOTA_OK && is_private) {
        /* Reject a private key whose public half does not match (corrupt file). */
        mbedtls_ecp_keypair *kp = mbedtls_pk_ec(pk);
        if (mbedtls_ecp_check_privkey(&kp->grp, &kp->d) != 0)
            ret = MOTA_ERR_KEY_INVALID;
    }
out:
    if (copy != NULL) {
        mbedtls_platform_zeroize(copy, len + 1);
        free(copy);
    }
    mbedtls_pk_free(&pk);
    return ret;
}

int mota_random(uint8_t *out, size_t n)
{
    int ret = MOTA_ERR_RANDOM;
    struct rng r;
    if (out == NULL && n > 0)
        return MOTA_ERR_ARG;
    if (rng_setup(&r) == MOTA_OK) {
        ret = MOTA_OK;
        /* a CTR-DRBG request is bounded (MBEDTLS_CTR_DRBG_MAX_REQUEST) */
        for (size_t at = 0; at < n && ret == MOTA_OK; at += MBEDTLS_CTR_DRBG_MAX_REQUEST) {
            size_t k = n - at < MBEDTLS_CTR_DRBG_MAX_REQUEST ? n - at : MBEDTLS_CTR_DRBG_MAX_REQUEST;
            if (mbedtls_ctr_drbg_random(&r.drbg, out + at, k) != 0)
                ret = MOTA_ERR_RANDOM;
        }
    }
    rng_free(&r);
    if (ret != MOTA_OK && n > 0)
        mbedtls_platform_zeroize(out, n); /* never half a key */
    return ret;
}

int mota_key_generate(struct mota_p256_key *key)
{
    int ret = MOTA_ERR_RANDOM;
    struct rng r;
    mbedtls_ecp_keypair kp;

    mbedtls_ecp_keypair_init(&kp);
    if (rng_setup(&r) != MOTA_OK)
        goto out;
    if (mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, &kp, mbedtls_ctr_drbg_random, &r.drbg) != 0)
        goto out;
    ret = from_keypair(&kp, 1, key);
out:
    mbedtls_ecp_keypair_free(&kp);
    rng_free(&r);
    return ret;
}

/* Build an mbed TLS pk context from our key (private part only if present). */
static int to_pk(const struct mota_p256_key *key, mbedtls_pk_context *pk)
{
    mbedtls_ecp_keypair *kp;
    if (mbedtls_pk_setup(pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) != 0)
        return MOTA_ERR_CRYPTO;
    kp = mbedtls_pk_ec(*pk);
    if (mbedtls_ecp_group_load(&kp->grp, MBEDTLS_ECP_DP_SECP256R1) != 0)
        return MOTA_ERR_CRYPTO;
    if (mbedtls_ecp_point_read_binary(&kp->grp, &kp->Q, key->pub, MOTA_P256_PUB_LEN) != 0)
        return MOTA_ERR_KEY_INVALID;
    if (key->has_private && mbedtls_mpi_read_binary(&kp->d, key->d, sizeof(key->d)) != 0)
        return MOTA_ERR_KEY_INVALID;
    return MOTA_OK;
}

static int write_pem(const struct mota_p256_key *key, char *out, size_t cap, int private_part)
{
    int ret = MOTA_ERR_ARG;
    mbedtls_pk_context pk;

    mbedtls_pk_init(&pk);
    if (key == NULL || out == NULL || (private_part && !key->has_private))
        goto out;
    ret = to_pk(key, &pk);
    if (ret != MOTA_OK)
        goto out;
    if (private_part)
        ret = mbedtls_pk_write_key_pem(&pk, (unsigned char *)out, cap);
    else
        ret = mbedtls_pk_write_pubkey_pem(&pk, (unsigned char *)out, cap);
    ret = ret == 0 ? MOTA_OK : MOTA_ERR_NOSPC;
out:
    mbedtls_pk_free(&pk);
    return ret;
}

int mota_key_write_private_pem(const struct mota_p256_key *key, char *out, size_t cap)
{
    return write_pem(key, out, cap, 1);
}

int mota_key_write_public_pem(const struct mota_p256_key *key, char *out, size_t cap)
{
    return write_pem(key, out, cap, 0);
}

int mota_ecdsa_p256_sign(const struct mota_p256_key *key, const uint8_t hash[MOTA_SHA256_LEN],
                         uint8_t sig[MOTA_P256_SIG_LEN])
{
    int ret = MOTA_ERR_CRYPTO;
    mbedtls_ecp_group grp;
    mbedtls_mpi d, r, s;
    struct rng rng;

    mbedtls_ecp_group_init(&grp);
    mbedtls_mpi_init(&d);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    if (rng_setup(&rng) != MOTA_OK) {
        ret = MOTA_ERR_RANDOM;
        goto out;
    }
    if (key == NULL || !key->has_private || hash == NULL || sig == NULL) {
        ret = MOTA_ERR_ARG;
        goto out;
    }
    if (mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1) != 0 ||
        mbedtls_mpi_read_binary(&d, key->d, sizeof(key->d)) != 0)
        goto out;
    /* The RNG only blinds the computation; r,s depend on d and hash alone. */
    if (mbedtls_ecdsa_sign_det_ext(&grp, &r, &s, &d, hash, MOTA_SHA256_LEN, MBEDTLS_MD_SHA256, mbedtls_ctr_drbg_random,
                                   &rng.drbg) != 0)
        goto out;
    if (mbedtls_mpi_write_binary(&r, sig, 32) != 0 || mbedtls_mpi_write_binary(&s, sig + 32, 32) != 0)
        goto out;
    ret = MOTA_OK;
out:
    rng_free(&rng);
    mbedtls_mpi_free(&s);
    mbedtls_mpi_free(&r);
    mbedtls_mpi_free(&d);
    mbedtls_ecp_group_free(&grp);
    return ret;
}

int mota_ecdsa_sig_from_der(const uint8_t *der, size_t len, uint8_t sig[MOTA_P256_SIG_LEN])
{
    int ret = MOTA_ERR_ARG;
    unsigned char *p = (unsigned char *)der, *end;
    size_t seq_len;
    mbedtls_mpi r, s;

    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    if (der == NULL || sig == NULL)
        goto out;
    end = p + len;
    /* ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }, nothing before or after */
    if (mbedtls_asn1_get_tag(&p, end, &seq_len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE) != 0 ||
        p + seq_len != end)
        goto out;
    if (mbedtls_asn1_get_mpi(&p, end, &r) != 0 || mbedtls_asn1_get_mpi(&p, end, &s) != 0 || p != end)
        goto out;
    if (mbedtls_mpi_cmp_int(&r, 0) <= 0 || mbedtls_mpi_cmp_int(&s, 0) <= 0)
        goto out;
    /* more than 32 bytes is no P-256 scalar */
    if (mbedtls_mpi_write_binary(&r, sig, 32) != 0 || mbedtls_mpi_write_binary(&s, sig + 32, 32) != 0)
        goto out;
    ret = MOTA_OK;
out:
    mbedtls_mpi_free(&s);
    mbedtls_mpi_free(&r);
    return ret;
}

void mota_sha1(const void *data, size_t len, uint8_t out[20])
{
    (void)mbedtls_sha1_ret(data, len, out);
}
