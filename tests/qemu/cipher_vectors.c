/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test firmware: mota's cipher modes (crypto/src/cipher.c on mbed TLS's AES block) on QEMU's Cortex-M55,
 * with the SUIT working group's encrypted-payload examples (draft-ietf-suit-firmware-encryption): kid-1's
 * content keys unwrap, the CTR and GCM payloads decrypt to their firmware text; a wrong key-encryption key
 * is MOTA_ERR_ENC_UNWRAP, a changed bit MOTA_ERR_DECRYPT_TAG; the ES-DH example's key agreement (p256-m), KDF
 * and unwrap give its content key, and a point off the curve is MOTA_ERR_ENC_EPK. Prints one line per check and the
 * instructions per byte (SysTick under -icount shift=0) of the AES block alone, CTR and GCM: the steady state,
 * the update calls over 4 KiB without their start; GHASH is GCM's figure less CTR's. The exit code is the
 * failures.
 */
#include "board.h"

#include "mota/cipher.h"
#include "mota/err.h"

#include <string.h>

static uint8_t big[4096];

/* tenths of an instruction per byte of big, from SysTick ticks (31.25 instructions each) */
static uint32_t per_byte_x10(uint64_t ticks)
{
    return (uint32_t)((ticks * 3125u / 10u + sizeof(big) / 2u) / sizeof(big));
}

static void per_byte(const char *what, uint32_t x10)
{
    uart_puts(what);
    uart_dec(x10 / 10u);
    uart_puts(".");
    uart_dec(x10 % 10u);
    uart_puts(" instructions/byte\n");
}

/* the steady state over big (zeros at first): the AES block alone, then CTR and GCM without their start, with the
 * GCM example's key, IV and additional data; what they made checked against Python's cryptography (OpenSSL) */
static void bench(struct mota_aes128 *aes, const uint8_t iv[12], const uint8_t aad[14])
{
    struct mota_ctr ctr;
    struct mota_gcm gcm;
    uint8_t iv16[16] = {0}, want[16];
    memcpy(iv16, iv, 12);
    ticks_start();
    uint64_t t0 = ticks_now();
    for (size_t i = 0; i < sizeof(big); i += MOTA_AES_BLOCK)
        mota_aes128_block(aes, big + i, big + i);
    uint64_t t1 = ticks_now();
    mota_ctr_start(&ctr, aes, iv16, 0);
    uint64_t t2 = ticks_now();
    mota_ctr_xor(&ctr, big, big, sizeof(big));
    uint64_t t3 = ticks_now();
    mota_gcm_start(&gcm, aes, iv, true, aad, 14);
    uint64_t t4 = ticks_now();
    mota_gcm_update(&gcm, big, big, sizeof(big));
    uint64_t t5 = ticks_now();
    unhex("fa2b405032ec852e4acdc4ec47db9161", want, 16);
    check("GCM over 4 KiB, of CTR over 4 KiB of E(K, 0): its tag", mota_gcm_finish(&gcm, want), MOTA_OK);
    unhex("8eee3eca8b4045ee62cfae28f84ebd24", want, 16);
    check("and its last block", memcmp(big + sizeof(big) - 16, want, 16), 0);
    /* the agent's way: decrypted ahead by the stream, authenticated behind by absorb, 128 bytes at a time */
    mota_gcm_start(&gcm, aes, iv, true, aad, 14);
    uint64_t t6 = ticks_now();
    for (size_t i = 0; i < sizeof(big); i += 128) {
        uint8_t piece[128];
        mota_gcm_stream(&gcm, big + i, piece, sizeof(piece));
        mota_gcm_absorb(&gcm, big + i, sizeof(piece));
    }
    uint64_t t7 = ticks_now();
    uint32_t ctr_x10 = per_byte_x10(t3 - t2), gcm_x10 = per_byte_x10(t5 - t4);
    per_byte("AES-128 block alone: ", per_byte_x10(t1 - t0));
    per_byte("AES-CTR decryption: ", ctr_x10);
    per_byte("AES-GCM decryption: ", gcm_x10);
    per_byte("GHASH (GCM less CTR): ", gcm_x10 > ctr_x10 ? gcm_x10 - ctr_x10 : 0);
    per_byte("AES-GCM decryption in two halves (the agent's: stream ahead, absorb behind): ", per_byte_x10(t7 - t6));
    uart_puts("AES-GCM start (H, its table, 14 bytes of additional data): ");
    uart_dec((uint32_t)((t4 - t3) * 3125u / 100u));
    uart_puts(" instructions; context ");
    uart_dec((uint32_t)sizeof(gcm));
    uart_puts(" bytes\n");
    mota_cipher_wipe(&gcm, sizeof(gcm));
    mota_cipher_wipe(&ctr, sizeof(ctr));
}

/* CTR across a carry out of the counter's low 32 bits, from a byte offset (the GCM example's key; the expected
 * stream from Python's cryptography) */
static void ctr_carry(struct mota_aes128 *aes, const uint8_t iv[12])
{
    struct mota_ctr ctr;
    uint8_t iv16[16], s[64] = {0}, want[16];
    memcpy(iv16, iv, 12);
    unhex("fffffffe", iv16 + 12, 4);
    mota_ctr_start(&ctr, aes, iv16, 5);
    mota_ctr_xor(&ctr, s + 5, s + 5, sizeof(s) - 5);
    unhex("67d7bf88d1c2703aa5bb6d4aae89ab93", want, 16);
    check("CTR across the carry out of the counter's low word", memcmp(s + 48, want, 16), 0);
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
    t0 = ticks_now();
    for (int i = 0; i < 10; i++) /* ten: a SysTick tick is 31 instructions */
        (void)mota_kw_unwrap(kek, wrapped, 24, cek);
    t = ticks_now() - t0;
    uart_puts("AES key unwrap (A128KW, a 16-byte key): ");
    uart_dec((uint32_t)(t * 3125u / 1000u));
    uart_puts(" instructions\n");
    t0 = ticks_now();
    mota_hkdf_sha256(NULL, 0, z, sizeof(z), ctx, sizeof(ctx), kek, sizeof(kek));
    t = ticks_now() - t0;
    uart_puts("HKDF-SHA256 of the KDF context: ");
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
    ctr_carry(&aes, iv);
    bench(&aes, iv, aad);
    board_exit((int)check_failures);
}
