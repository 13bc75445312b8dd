/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test firmware: mota's cipher modes (crypto/src/cipher.c on mbed TLS's AES block) on QEMU's Cortex-M55,
 * with the SUIT working group's encrypted-payload examples (draft-ietf-suit-firmware-encryption): kid-1's
 * content keys unwrap, the CTR and GCM payloads decrypt to their firmware text; a wrong key-encryption key
 * is MOTA_ERR_ENC_UNWRAP, a changed bit MOTA_ERR_DECRYPT_TAG. Prints one line per check and the
 * instructions per byte of CTR and GCM over 4 KiB (SysTick under -icount shift=0); the exit code is the
 * failures.
 */
#include "board.h"

#include "mota/cipher.h"
#include "mota/err.h"

#include <string.h>

static unsigned failures;
static uint8_t big[4096];

static void unhex(const char *h, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t v = 0;
        for (int k = 0; k < 2; k++) {
            char c = h[2 * i + k];
            v = (uint8_t)(v << 4 | (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10));
        }
        out[i] = v;
    }
}

static void check(const char *what, int got, int want)
{
    uart_puts(got == want ? "ok   " : "FAIL ");
    uart_puts(what);
    uart_puts(": ");
    uart_int(got);
    uart_puts("\n");
    failures += got != want;
}

static void per_byte(const char *what, uint64_t ticks)
{
    uart_puts(what);
    uart_dec((uint32_t)(ticks * 3125u / 100u / sizeof(big))); /* 31.25 instructions per tick */
    uart_puts(" instructions/byte\n");
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
    board_exit((int)failures);
}
