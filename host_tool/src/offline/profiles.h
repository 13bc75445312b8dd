/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device profiles for `mota sim --profile NAME`: the boards ST models ship
 * on and the QEMU boards, each as the agent's compatibility profile plus the
 * memories a simulated device needs to install that board's models. Every
 * value and its source: docs/device-profiles.md.
 */
#ifndef MOTA_TOOL_PROFILES_H
#define MOTA_TOOL_PROFILES_H

#include "mota/compat.h"
#include "mota/posix_device.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct tool_profile {
    const char *name;               /* the board name in lower case */
    const char *board;              /* board, MCU, core */
    struct mota_device_profile dev; /* the compatibility fields; exec/ext RAM below */
    uint64_t internal_ram;          /* all internal SRAM of the MCU (reported) */
    uint32_t exec_ram;              /* what a model gets for code and data (--exec-ram), shared by the models */
    uint32_t ext_ram, ext_base;     /* external RAM a model may use (--ext-ram), at ext_base */
    uint64_t flash;                 /* the board's flash for code and models (reported) */
    uint32_t update_area;           /* the simulated flash: journal and A/B slots (--flash-size) */
    /* the flash that holds the journal and the slots, as the part has it (sectors, ECC, times; n_regions
     * 0: an ideal 4 KiB-sector NOR of update_area bytes), and where in it the journal and the slots
     * start (0: the journal at its start, the slots after it); the rest is the firmware's */
    struct mota_posix_flash_part part;
    uint32_t journal_offset, slots_offset;
    uint32_t slot_size; /* each slot, as the board's firmware has it (0: the flash after slots_offset shared out) */
    /* the firmware makes each model's A and B slots and its exec RAM a power of two aligned to its size (an
     * Armv7-M MPU region each): the largest that fit, the slots from the first such boundary after the
     * journal (ports/mps/common/src/board.c) */
    bool pow2_regions;
    uint32_t rx_ring;   /* the UART RX ring the firmware gives the link, bytes (0: 32 KiB) */
    unsigned n_regions; /* internal RAM a model's pools claim by address (NPU RAMs) */
    struct mota_posix_region regions[MOTA_POSIX_MAX_REGIONS];
    /* a board of the registry (ports/boards.txt) outside the MPS family, whose one layout is
     * mota/mps_layout.h: the agent's flash as `mota provision --target` and `mota sim --target` see it, from
     * its port's layout header (size 0: none, not a board of the registry) */
    struct tool_board_flash {
        uint32_t base;      /* the CPU address of the agent's offset 0 */
        uint32_t size;      /* the agent's flash: a QEMU board's flash file */
        uint32_t provision; /* the provisioning record's offset in it */
        bool uid;           /* the device id is the part's 96-bit unique id (the record's is ignored) */
        unsigned models;    /* the model slot pairs its firmware lays out (a record naming more is refused) */
    } board_flash;
};

/* The named profile, or NULL. */
const struct tool_profile *tool_profile_find(const char *name);
/* One line per profile. */
void tool_profile_list(FILE *f);
/*
 * A profile that accepts exactly this model (mota sim --like): its CPU, FPU,
 * float ABI, secure state, family and runtime, and the memory it needs,
 * including the fixed-address RAM its pools claim. MOTA_OK, the model's
 * reason code (it must validate), or MOTA_ERR_UNSUPPORTED when its pools
 * claim the simulator's exec RAM window (MOTA_POSIX_EXEC_BASE) or leave no
 * room for its external RAM.
 */
int tool_profile_like(const uint8_t *img, size_t len, const uint8_t *params, size_t params_len,
                      struct tool_profile *out);
/* "Cortex-M55 (0xD22), FPU, hard float, secure; runtimes ...": the profile in one line. */
void tool_profile_describe(const struct mota_device_profile *p, char *out, size_t cap);

#endif
