/* SPDX-License-Identifier: Apache-2.0 */
/* The small simulated device the agent-level fuzz targets run against: the
 * posix port's device with 4 KiB sectors, a two-sector journal, two models
 * ("dense" and "conv", the test models' names) of two 32 KiB slots each,
 * 64 KiB of exec RAM per model, the identity `mota sim` has by default
 * (example.com / mota-sim) and two keys: the fuzz signer's (tests/fuzz/fuzz_sign.h, index 1)
 * and another; for encrypted payloads one KEK (kid "fuzz-kek", k 16 x 0x42) and a fixed
 * P-256 device key pair, so seeds packed for either reach the decryption. The fuzz build's
 * signature check accepts what fuzz_sign.h signs, so the
 * inputs reach everything after the signature: compatibility, slot layout,
 * streaming, digests, install, self-test, trial, confirm and rollback. */
#ifndef MOTA_FUZZ_DEVICE_H
#define MOTA_FUZZ_DEVICE_H

#include "fuzz_sign.h"

#include "mota/agent.h"
#include "mota/err.h"
#include "mota/posix_device.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_SECTOR 4096u
#define FUZZ_JOURNAL (2 * FUZZ_SECTOR)
#define FUZZ_SLOT (32u * 1024u)
#define FUZZ_MODELS 2u

/* The fuzz device's keys of encrypted payloads. A KEK file for seeds:
 * {"kty":"oct","alg":"A128KW","kid":"fuzz-kek","k":"QkJCQkJCQkJCQkJCQkJCQg"}. The device key: d is
 * SHA-256("mota fuzz device key"), pub = d.G from python3-cryptography (ec.derive_private_key(d, SECP256R1()),
 * X962 uncompressed); its key id (pack --encrypt-to names it) is 80500db7a4086753e1dcc32862e24a9a. */
static const struct mota_kek fuzz_kek = {
    .kid = "fuzz-kek",
    .kid_len = 8,
    .k = {0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42, 0x42}};
static const uint8_t fuzz_device_d[32] = {
    0x19, 0x15, 0x06, 0x05, 0x41, 0xb6, 0x09, 0xbe, 0xe5, 0x08, 0x92, 0x0c, 0xd2, 0x95, 0x14, 0x08,
    0x27, 0x8a, 0xe7, 0x88, 0x9b, 0xb6, 0xf9, 0xb5, 0xeb, 0xca, 0x25, 0xe0, 0xa0, 0x65, 0x1d, 0xc2,
};
static const uint8_t fuzz_device_pub[MOTA_P256_PUB_LEN] = {
    0x04, 0xf8, 0x3c, 0x1f, 0x85, 0x95, 0x6d, 0x49, 0xcf, 0xa7, 0x69, 0x25, 0xcc, 0xbd, 0xdd, 0x27, 0x78,
    0xcd, 0x73, 0x89, 0xb8, 0xa5, 0xfc, 0x6e, 0x3d, 0xe5, 0x42, 0x24, 0x63, 0xc2, 0x6f, 0x83, 0xda, 0x84,
    0x8e, 0x37, 0x9e, 0x73, 0x42, 0xbd, 0x45, 0xfe, 0x19, 0x75, 0xe5, 0x85, 0x6c, 0xff, 0xca, 0x4b, 0xe6,
    0xe6, 0x5f, 0x38, 0x84, 0xd5, 0xa3, 0xa9, 0x4e, 0xee, 0x4d, 0xc5, 0x68, 0xfe, 0x29,
};

/* Once per process: the device and the agent's configuration. */
static void fuzz_device_setup(struct mota_posix_device *d)
{
    if (d->pf.mem != NULL)
        return;
    struct mota_posix_device_options o = {.flash_size = FUZZ_JOURNAL + 2 * FUZZ_MODELS * FUZZ_SLOT,
                                          .sector_size = FUZZ_SECTOR,
                                          .prog_size = 16,
                                          .n_models = FUZZ_MODELS,
                                          .models = {"dense", "conv"},
                                          .slot_size = FUZZ_SLOT,
                                          .exec_ram_size = 64 * 1024,
                                          .clock_at_zero = true};
    if (mota_posix_device_open(d, &o) != MOTA_OK)
        abort();
    d->cfg.n_keys = 2;
    memcpy(d->cfg.keys[0].pub, fuzz_pub, MOTA_P256_PUB_LEN);
    d->cfg.keys[0].index = 1;
    memset(d->cfg.keys[1].pub, 0x04, MOTA_P256_PUB_LEN);
    d->cfg.keys[1].index = 2;
    static uint8_t kid[MOTA_KEY_ID_LEN];
    mota_key_id(fuzz_device_pub, kid);
    d->cfg.enc = (struct mota_enc_keys){.keks = &fuzz_kek,
                                        .n_keks = 1,
                                        .device_d = fuzz_device_d,
                                        .device_pub = fuzz_device_pub,
                                        .device_kid = kid,
                                        .device_kid_len = sizeof(kid)};
}

/* A powered, blank device for the next input: erased flash, no armed cut, the default simulation. */
static void fuzz_device_reset(struct mota_posix_device *d)
{
    memset(d->pf.mem, 0xFF, d->pf.size);
    mota_posix_flash_cut(&d->pf, 0, false);
    mota_posix_flash_power_on(&d->pf);
    d->cause = MOTA_RESET_POWER_ON;
    d->sim.mode = MOTA_SIM_PASS;
    d->sim.latency_us = 2000;
}

/* A script of operations on two containers, what fuzz_agent and fuzz_link read:
 * [fix] [n] [n op bytes] [u16 LE length of A] [container A] [container B]. */
#define FUZZ_MAX_OPS 16u
#define FUZZ_MAX_CONTAINER 32768u
struct fuzz_script {
    unsigned fix, n_ops;
    const uint8_t *ops;
    uint8_t cont[2][FUZZ_MAX_CONTAINER];
    size_t cont_len[2];
};

/* false when the input is shorter than its own header says */
static bool fuzz_script_read(struct fuzz_script *s, const uint8_t *data, size_t size)
{
    if (size < 4)
        return false;
    s->fix = data[0];
    s->n_ops = data[1] % (FUZZ_MAX_OPS + 1);
    if (size < 2u + s->n_ops + 2u)
        return false;
    s->ops = data + 2;
    size_t pos = 2u + s->n_ops;
    size_t la = (size_t)data[pos] | (size_t)data[pos + 1] << 8;
    pos += 2;
    if (la > size - pos)
        la = size - pos;
    size_t lb = size - pos - la;
    s->cont_len[0] = la < FUZZ_MAX_CONTAINER ? la : FUZZ_MAX_CONTAINER;
    s->cont_len[1] = lb < FUZZ_MAX_CONTAINER ? lb : FUZZ_MAX_CONTAINER;
    memcpy(s->cont[0], data + pos, s->cont_len[0]);
    memcpy(s->cont[1], data + pos + la, s->cont_len[1]);
    return true;
}

/* A power cut's flash operation from an op's argument (bit 0: torn): 1, 5, 17, 37, ... 197 operations
 * on, from the first erase of an upload to deep inside its payload and the install after it. */
static uint64_t fuzz_cut_op(unsigned arg)
{
    uint64_t k = arg >> 1;
    return 1u + 4u * k * k;
}

/* The promises the device keeps whatever it was sent (floor: each model's anti-rollback floor so far). */
static void fuzz_device_check(const struct mota_agent *a, uint64_t floor[FUZZ_MODELS])
{
    for (unsigned m = 0; m < FUZZ_MODELS; m++) {
        const struct mota_agent_model_state *s = &a->st[m];
        if (s->committed_seq < floor[m])
            abort(); /* the anti-rollback floor went down */
        floor[m] = s->committed_seq;
        if (s->active.slot != MOTA_AGENT_NO_SLOT && !a->installed[m])
            abort(); /* an active model that does not run */
    }
}

#endif
