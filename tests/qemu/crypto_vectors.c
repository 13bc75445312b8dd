/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test firmware: the device's ECDSA P-256 verify (crypto/src/ecdsa_p256m.c, p256-m) on QEMU's
 * Cortex-M55 against RFC 6979 A.2.5 (P-256, SHA-256, "sample"): the signature verifies; any changed bit of
 * the signature or of the hash is MOTA_ERR_SIGNATURE, r or s of 0 or not below the order too; a point off
 * the curve and a compressed one are MOTA_ERR_KEY_INVALID. Prints one line per check and the instructions
 * of one verify (SysTick under -icount shift=0); the exit code is the failures.
 */
#include "board.h"

#include "mota/crypto.h"
#include "mota/err.h"

#include <string.h>

int main(void)
{
    uint8_t pub[MOTA_P256_PUB_LEN], sig[MOTA_P256_SIG_LEN], h[MOTA_SHA256_LEN];
    pub[0] = 0x04;
    unhex("60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6", pub + 1, 32);
    unhex("7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299", pub + 33, 32);
    unhex("EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716"
          "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8",
          sig, 64);
    mota_sha256("sample", 6, h);
    ticks_start();
    uint64_t t0 = ticks_now();
    check("RFC 6979 A.2.5 verifies", mota_ecdsa_p256_verify(pub, h, sig), MOTA_OK);
    uint64_t t = ticks_now() - t0;
    int wrong = 0;
    for (int bit = 0; bit < 512; bit += 7) { /* every 7th bit of r and s */
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        wrong += mota_ecdsa_p256_verify(pub, h, sig) != MOTA_ERR_SIGNATURE;
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    check("74 signatures with one bit changed, each MOTA_ERR_SIGNATURE (count of others)", wrong, 0);
    h[5] ^= 0x40;
    check("a changed hash", mota_ecdsa_p256_verify(pub, h, sig), MOTA_ERR_SIGNATURE);
    h[5] ^= 0x40;
    uint8_t bad[MOTA_P256_SIG_LEN];
    memset(bad, 0, sizeof(bad));
    memcpy(bad + 32, sig + 32, 32);
    check("r = 0", mota_ecdsa_p256_verify(pub, h, bad), MOTA_ERR_SIGNATURE);
    memcpy(bad, sig, 32);
    memset(bad + 32, 0xFF, 32); /* s above the order */
    check("s >= n", mota_ecdsa_p256_verify(pub, h, bad), MOTA_ERR_SIGNATURE);
    pub[64] ^= 1;
    check("a point off the curve", mota_ecdsa_p256_verify(pub, h, sig), MOTA_ERR_KEY_INVALID);
    pub[64] ^= 1;
    pub[0] = 0x02;
    check("a compressed point", mota_ecdsa_p256_verify(pub, h, sig), MOTA_ERR_KEY_INVALID);
    pub[0] = 0x04;
    check("NULL", mota_ecdsa_p256_verify(NULL, h, sig), MOTA_ERR_ARG);
    uart_puts("verify: ");
    uart_dec((uint32_t)(t * 3125u / 100u)); /* 31.25 instructions per tick */
    uart_puts(" instructions\n");
    board_exit((int)check_failures);
}
