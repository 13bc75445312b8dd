/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test firmware: mota's cipher modes (crypto/src/cipher.c on mbed TLS's AES block) on QEMU's Cortex-M55,
 * with the SUIT working group's encrypted-payload examples (draft-ietf-suit-firmware-encryption): kid-1's
 * content keys unwrap, the CTR and GCM payloads decrypt to their firmware text; a wrong key-encryption key
 * is MOTA_ERR_ENC_UNWRAP, a changed bit MOTA_ERR_DECRYPT_TAG; the ES-DH example's key agreement (p256-m), KDF
 * and unwrap give its content key, and a point off the curve is MOTA_ERR_ENC_EPK. Prints one line per check and the
 * instructions per byte of CTR and GCM over 4 KiB (SysTick under -icount shift=0); the exit code is the
 * failures.
 */
#include "board.h"

#include "mota/cipher.h"
#include "mota/err.h"

#include <string.h>

static uint8_t big[4096];

static void per_byte(const char *what, uint64_t ticks)
{
    uart_puts(what);
    uart_dec((uint32_t)(ticks * 3125u / 100u / sizeof(big))); /* 31.25 instructions per tick */
    uart_puts(" instructions/byte\n");
}

/* the ES-DH example: kid-2's key and the ephemeral point, the KDF, the unwrap (and the ECDH's instructions) */
static void es_dh(void)
{
    uint8_t d[32], epk[65], z[32], ctx[42], kek[16], wrapped[24], cek[16], want[16];
    unhex("60FE6DD6D85D5740A5349B6F91267EEAC5BA81B8CB53EE249E4B4EB102C476B3", d, 32);
    epk[0] = 0x04;
    unhex("ee0718f6b019c29cc611c18cede2214066ddcedc2f0dbef873cb224c715c1174"
          "279f2a88e4ab9e2ed30c0fcb69515b31b5d36725bfdb9ae02032ed4d5ab52cb8",
          epk + 1, 64);
    ticks_start();
    uint64_t t0 = ticks_now();
    check("the ES-DH example's shared secret", mota_p256_ecdh(d, epk, z), MOTA_OK);
    uint64_t t = ticks_now() - t0;
    unhex("842283f6f6f683f6f6f683188044a101381c5753554954205061796c6f616420456e6372797074696f6e", ctx, 42);
    mota_hkdf_sha256(NULL, 0, z, sizeof(z), ctx, sizeof(ctx), kek, sizeof(kek));
    unhex("e28b4502e4f5151884a995405579006e9465c3e94e3e0808", wrapped, 24);
    check("its content key unwraps", mota_kw_unwrap(kek, wrapped, 24, cek), MOTA_OK);
    unhex("261de6165070fb8951ec5d7b92a065fe", want, 16);
    check("and is the CTR example's", memcmp(cek, want, 16), 0);
    epk[40] ^= 1;
    check("a point off the curve", mota_p256_ecdh(d, epk, z), MOTA_ERR_ENC_EPK);
    uart_puts("ECDH P-256: ");
    uart_dec((uint32_t)(t * 3125u / 100u));
    uart_puts(" instructions\n");
}

int main(void)
{
    static const char text[] = "This is a real firmware image.";
    struct mota_aes128 aes;
    struct mota_ctr ctr;
    struct mota_gcm gcm;
    uint8_t kek[16], wrapped[24], cek[16], iv[16], aad[14], ct[46], pt[30];
    memset(kek, 'a', sizeof(kek)); /* kid-1 */
    unhex("CE34035CE5C2E2666E46D4C131FC561DD190A6D26CFA1990", wrapped, 24);
    check("the CTR example's content key unwraps with kid-1", mota_kw_unwrap(kek, wrapped, 24, cek), MOTA_OK);
    unhex("DAE613B2E0DC55F4322BE38BDBA9DC68", iv, 16);
    unhex("2BB8DB522AE978246CC775C3B0241BD4B0333FFDD2DB70C7EE7A4966E3B7", ct, 30);
    mota_aes128_setkey(&aes, cek, false);
    mota_ctr_start(&ctr, &aes, iv, 0);
    mota_ctr_xor(&ctr, ct, pt, 30);
    check("the CTR example decrypts to its firmware text", memcmp(pt, text, 30), 0);
    unhex("75603FFC9518D794713C8CA8A115A7FB32565A6D59534D62", wrapped, 24);
    check("the GCM example's content key unwraps", mota_kw_unwrap(kek, wrapped, 24, cek), MOTA_OK);
    unhex("F14AAB9D81D51F7AD943FE87", iv, 12);
    unhex("8367456e637279707443a1010140", aad, 14);
    unhex("758C4B7BBAE2C4C1D462423E0F0DC3164FFA7B85BB94D4BD6D7ED26AB32FEB063385D4D3465927EC82CB5E198A59", ct, 46);
    mota_aes128_setkey(&aes, cek, false);
    mota_gcm_start(&gcm, &aes, iv, true, aad, sizeof(aad));
    mota_gcm_update(&gcm, ct, pt, 30);
    check("the GCM example's tag matches", mota_gcm_finish(&gcm, ct + 30), MOTA_OK);
    check("the GCM example decrypts to its firmware text", memcmp(pt, text, 30), 0);
    ct[3] ^= 0x10;
    mota_gcm_start(&gcm, &aes, iv, true, aad, sizeof(aad));
    mota_gcm_update(&gcm, ct, pt, 30);
    check("a changed bit", mota_gcm_finish(&gcm, ct + 30), MOTA_ERR_DECRYPT_TAG);
    kek[0] = 'b';
    check("a wrong key-encryption key", mota_kw_unwrap(kek, wrapped, 24, cek), MOTA_ERR_ENC_UNWRAP);
    es_dh();
    ticks_start();
    uint64_t t0 = ticks_now();
    mota_ctr_start(&ctr, &aes, iv, 0);
    mota_ctr_xor(&ctr, big, big, sizeof(big));
    uint64_t t1 = ticks_now();
    mota_gcm_start(&gcm, &aes, iv, true, aad, sizeof(aad));
    mota_gcm_update(&gcm, big, big, sizeof(big));
    uint64_t t2 = ticks_now();
    per_byte("AES-CTR decryption: ", t1 - t0);
    per_byte("AES-GCM decryption: ", t2 - t1);
    board_exit((int)check_failures);
}
