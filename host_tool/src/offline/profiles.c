/* SPDX-License-Identifier: Apache-2.0 */
/* Device profiles: values and sources in docs/device-profiles.md. */
#include "profiles.h"

#include "mota/b_u585i_iot02a_layout.h"
#include "mota/err.h"
#include "mota/mps_layout.h"
#include "mota/nbin.h"
#include "mota/nucleo_f401re_layout.h"
#include "mota/stm32h747i_disco_layout.h"
#include "mota/stm32n6570_dk_layout.h"

#include <string.h>

#define KIB 1024u
#define MIB (1024u * 1024u)
#define XIP_COPY ((1u << MOTA_INSTALL_XIP) | (1u << MOTA_INSTALL_COPY))
#define NPU (1u << MOTA_NBIN_FAMILY_NPU)
#define LEGACY (1u << MOTA_NBIN_FAMILY_LEGACY)

/* The flash of each part: sources and what is approximate (~) in docs/device-profiles.md "Flash". */
/* MX66UW1G45G octal NOR: 4 KiB sectors, 25 ms (~) / 400 ms; 256-byte pages, 0.15 ms (~) / 0.75 ms (~) */
#define N6_NOR(bytes)                                                                                                  \
    {                                                                                                                  \
        .prog_size = 16, .n_regions = 1, .regions = {{(bytes) / (4 * KIB), 4 * KIB, 25000, 400000}},                   \
        .prog_block = 256, .prog_typ_us = 150, .prog_max_us = 750                                                      \
    }
/* STM32H747, both banks: 16 sectors of 128 KiB, 1.1 s (~) / 4 s; 32-byte ECC words, programmed once */
#define H7_FLASH                                                                                                       \
    {                                                                                                                  \
        .prog_size = 32, .flags = MOTA_FLASH_PROGRAM_ONCE, .n_regions = 1,                                             \
        .regions = {{16, 128 * KIB, 1100000, 4000000}}, .prog_block = 32, .prog_typ_us = 130, .prog_max_us = 130       \
    }
/* STM32U585 bank 2: 128 pages of 8 KiB, 1.5 ms (~) / 5 ms; 16-byte ECC words, programmed once */
#define U5_BANK2                                                                                                       \
    {                                                                                                                  \
        .prog_size = 16, .flags = MOTA_FLASH_PROGRAM_ONCE, .n_regions = 1, .regions = {{128, 8 * KIB, 1500, 5000}},    \
        .prog_block = 16                                                                                               \
    }
/* STM32F401RE, the whole single bank: 4 x 16, 64, 3 x 128 KiB; words of 4 bytes, 16 us (~) / 100 us (~) */
#define F401_FLASH                                                                                                     \
    {                                                                                                                  \
        .prog_size = 4, .flags = MOTA_FLASH_STALLS_CPU, .n_regions = 3,                                                \
        .regions = {{4, 16 * KIB, 250000, 500000}, {1, 64 * KIB, 550000, 1100000}, {3, 128 * KIB, 1000000, 4000000}},  \
        .prog_block = 4, .prog_typ_us = 16, .prog_max_us = 100                                                         \
    }
/* The NUCLEO-F401RE port's memory (mota/nucleo_f401re_layout.h), on the part and on QEMU's F405: the whole
 * flash the agent's, its journal in sectors 1 and 2, slots A and B in sectors 5 and 6, the record in 7 */
#define F401_LAYOUT                                                                                                    \
    .exec_ram = MOTA_NUCLEO_F401RE_EXEC_SIZE, .flash = MOTA_NUCLEO_F401RE_FLASH_SIZE,                                  \
    .update_area = MOTA_NUCLEO_F401RE_FLASH_SIZE, .part = F401_FLASH, .journal_offset = MOTA_NUCLEO_F401RE_JOURNAL,    \
    .slots_offset = MOTA_NUCLEO_F401RE_SLOTS, .slot_size = MOTA_NUCLEO_F401RE_SLOT_SIZE
#define F401_BOARD_FLASH(uid)                                                                                          \
    {                                                                                                                  \
        MOTA_NUCLEO_F401RE_FLASH_BASE, MOTA_NUCLEO_F401RE_FLASH_SIZE, MOTA_NUCLEO_F401RE_PROVISION, uid,               \
            MOTA_NUCLEO_F401RE_MODELS                                                                                  \
    }
/* Cortex-M4 with FPv4-SP, non-secure (Armv7E-M), the legacy runtime and NBIN CPU models */
#define M4_DEV                                                                                                         \
    {                                                                                                                  \
        .cpu_part = 0xC24, .fpu_enabled = true, .float_abi = 2, .secure = false, .reloc_families = LEGACY | NPU,       \
        .install_modes = XIP_COPY                                                                                      \
    }

static const struct tool_profile profiles[] = {
    {.name = "stm32n6570-dk",
     .board = "STM32N6570-DK: STM32N657X0H3Q, Cortex-M55 and Neural-ART NPU",
     .dev = {.cpu_part = 0xD22,
             .fpu_enabled = true,
             .float_abi = 2,
             .secure = true,
             .dbg_info = true,
             .async = true,
             .reloc_families = NPU,
             .has_ll_aton = true,
             .ll_aton_major = 1,
             .ll_aton_minor = 1,
             .ll_aton_micro = 1,
             .struct_sizes = 0x3038,
             .install_modes = XIP_COPY},
     .internal_ram = 4224 * KIB,               /* AXISRAM1..6, CACHEAXI, VENCRAM */
     .exec_ram = MOTA_STM32N6570_DK_EXEC_SIZE, /* AXISRAM1 (the firmware runs in AXISRAM2) */
     .ext_ram = 32 * MIB,
     .ext_base = 0x90000000u, /* hexadeca-SPI PSRAM on XSPI1 */
     .flash = 128 * MIB,      /* octo-SPI NOR on XSPI2 */
     /* 16 MiB of the NOR from 1 MiB (mota/stm32n6570_dk_layout.h): the journal, slots A and B, the record */
     .update_area = MOTA_STM32N6570_DK_FLASH_SIZE,
     .part = N6_NOR(MOTA_STM32N6570_DK_FLASH_SIZE),
     .journal_offset = MOTA_STM32N6570_DK_JOURNAL,
     .slots_offset = MOTA_STM32N6570_DK_SLOTS,
     .slot_size = MOTA_STM32N6570_DK_SLOT_SIZE,
     .rx_ring = 8 * KIB,
     .board_flash = {MOTA_STM32N6570_DK_FLASH_BASE, MOTA_STM32N6570_DK_FLASH_SIZE, MOTA_STM32N6570_DK_PROVISION, true,
                     MOTA_STM32N6570_DK_MODELS},
     .n_regions = 4, /* AXISRAM3..6: the NPU's activation RAMs */
     .regions =
         {{0x34200000u, 448 * KIB}, {0x34270000u, 448 * KIB}, {0x342E0000u, 448 * KIB}, {0x34350000u, 448 * KIB}}},
    {.name = "stm32h747i-disco",
     .board = "STM32H747I-DISCO: STM32H747XIH6, Cortex-M7 (the M4 core not used)",
     .dev = {.cpu_part = 0xC27,
             .fpu_enabled = true,
             .float_abi = 2,
             .secure = false,
             .reloc_families = LEGACY | NPU,
             .install_modes = XIP_COPY},
     .internal_ram = 1060 * KIB,                  /* TCM, AXI SRAM, SRAM1..4, backup SRAM */
     .exec_ram = MOTA_STM32H747I_DISCO_EXEC_SIZE, /* AXI SRAM */
     .ext_ram = 32 * MIB,
     .ext_base = 0xD0000000u, /* SDRAM on FMC bank 2 */
     .flash = 2 * MIB,
     /* the whole array, both banks (mota/stm32h747i_disco_layout.h): the firmware and the record in bank 1, the
      * journal and slots A and B in bank 2 (the firmware runs on while bank 2 erases: no stall) */
     .update_area = MOTA_STM32H747I_DISCO_FLASH_SIZE,
     .part = H7_FLASH,
     .journal_offset = MOTA_STM32H747I_DISCO_JOURNAL,
     .slots_offset = MOTA_STM32H747I_DISCO_SLOTS,
     .slot_size = MOTA_STM32H747I_DISCO_SLOT_SIZE,
     .rx_ring = 64 * KIB, /* the port's (board.cmake): what arrives during a 4 s erase while bank 1 runs on */
     .board_flash = {MOTA_STM32H747I_DISCO_FLASH_BASE, MOTA_STM32H747I_DISCO_FLASH_SIZE,
                     MOTA_STM32H747I_DISCO_PROVISION, true, MOTA_STM32H747I_DISCO_MODELS}},
    {.name = "b-u585i-iot02a",
     .board = "B-U585I-IOT02A: STM32U585AII6Q, Cortex-M33",
     .dev = {.cpu_part = 0xD21,
             .fpu_enabled = true,
             .float_abi = 2,
             .secure = false,
             .reloc_families = LEGACY | NPU,
             .install_modes = XIP_COPY},
     .internal_ram = 784 * KIB,                 /* SRAM1..4 */
     .exec_ram = MOTA_B_U585I_IOT02A_EXEC_SIZE, /* SRAM3 */
     .ext_ram = 8 * MIB,
     .ext_base = 0x90000000u, /* octo-SPI PSRAM on OCTOSPI1 */
     .flash = 2 * MIB,
     /* flash bank 2 (mota/b_u585i_iot02a_layout.h): the journal, slots A and B, the record in its last page */
     .update_area = MOTA_B_U585I_IOT02A_FLASH_SIZE,
     .part = U5_BANK2,
     .journal_offset = MOTA_B_U585I_IOT02A_JOURNAL,
     .slots_offset = MOTA_B_U585I_IOT02A_SLOTS,
     .slot_size = MOTA_B_U585I_IOT02A_SLOT_SIZE,
     .rx_ring = 8 * KIB,
     .board_flash = {MOTA_B_U585I_IOT02A_FLASH_BASE, MOTA_B_U585I_IOT02A_FLASH_SIZE, MOTA_B_U585I_IOT02A_PROVISION,
                     true, MOTA_B_U585I_IOT02A_MODELS}},
    {.name = "nucleo-f401re",
     .board = "NUCLEO-F401RE: STM32F401RET6, Cortex-M4",
     .dev = M4_DEV,
     .internal_ram = 96 * KIB, /* exec RAM: its upper 32 KiB; the rest is the firmware's */
     F401_LAYOUT,
     .rx_ring = 4 * KIB,
     .board_flash = F401_BOARD_FLASH(true)},
    /* QEMU's STM32F405 machine running the NUCLEO-F401RE port: the F401's memory and layout; QEMU models no
     * unique id, so the record's device id is the board's */
    {.name = "netduinoplus2",
     .board = "QEMU netduinoplus2: STM32F405RG running the NUCLEO-F401RE port (its memory), Cortex-M4",
     .dev = M4_DEV,
     .internal_ram = 96 * KIB, /* the F401's, as the port uses it */
     F401_LAYOUT,
     .rx_ring = 4 * KIB,
     .board_flash = F401_BOARD_FLASH(false)},
    {.name = "an547",
     .board = "QEMU mps3-an547: Arm MPS3 AN547 (SSE-300), Cortex-M55, no NPU",
     .dev = {.cpu_part = 0xD22,
             .fpu_enabled = true,
             .float_abi = 2,
             .secure = true,
             .reloc_families = LEGACY | NPU,
             .install_modes = XIP_COPY},
     .internal_ram = 3 * MIB, /* ITCM, DTCM, SRAM */
     .exec_ram = 2 * MIB,     /* SRAM: ports/mps/an547/board_config.h */
     .flash = MOTA_MPS_FLASH_SIZE,
     .update_area = MOTA_MPS_PROVISION, /* the board's journal and slots, without its provisioning sector */
     .rx_ring = 8 * KIB},               /* its emulated flash: an ideal NOR (ports/mps/common/src/flash.c) */
    {.name = "an505",
     .board = "QEMU mps2-an505: Arm MPS2 AN505 (IoT Kit), Cortex-M33",
     .dev = {.cpu_part = 0xD21,
             .fpu_enabled = true,
             .float_abi = 2,
             .secure = true,
             .reloc_families = LEGACY | NPU,
             .install_modes = XIP_COPY},
     .internal_ram = 8 * MIB, /* SSRAM1..3 */
     .exec_ram = 2 * MIB,     /* SSRAM3: ports/mps/an505/board_config.h */
     .flash = MOTA_MPS_FLASH_SIZE,
     .update_area = MOTA_MPS_PROVISION,
     .rx_ring = 8 * KIB},
    /* Armv7-M: no Security Extension; the PMSAv7 MPU wants each region a power of two aligned to its size, so
     * the firmware lays out the slots and the exec RAM so (pow2_regions: 4 MiB slots for one model, 2 MiB
     * for two) */
    {.name = "an386",
     .board = "QEMU mps2-an386: Arm MPS2 AN386, Cortex-M4",
     .dev = {.cpu_part = 0xC24,
             .fpu_enabled = true, /* FPv4-SP, single precision */
             .float_abi = 2,
             .secure = false,
             .reloc_families = LEGACY | NPU,
             .install_modes = XIP_COPY},
     .internal_ram = 8 * MIB + 16 * KIB, /* SSRAM1, SSRAM2/3, block RAM */
     .exec_ram = 2 * MIB,                /* SSRAM2/3's upper half: ports/mps/an386/board_config.h */
     .flash = MOTA_MPS_FLASH_SIZE,       /* PSRAM at 0x21000000, the emulated NOR */
     .update_area = MOTA_MPS_PROVISION,
     .pow2_regions = true,
     .rx_ring = 8 * KIB},
    {.name = "an500",
     .board = "QEMU mps2-an500: Arm MPS2 AN500, Cortex-M7",
     .dev = {.cpu_part = 0xC27,
             .fpu_enabled = true, /* FPv5, double precision */
             .float_abi = 2,
             .secure = false,
             .reloc_families = LEGACY | NPU,
             .install_modes = XIP_COPY},
     .internal_ram = 8 * MIB,      /* SSRAM1, SSRAM2/3 */
     .exec_ram = 2 * MIB,          /* SSRAM2/3's upper half: ports/mps/an500/board_config.h */
     .flash = MOTA_MPS_FLASH_SIZE, /* PSRAM at 0x60000000, the emulated NOR */
     .update_area = MOTA_MPS_PROVISION,
     .pow2_regions = true,
     .rx_ring = 8 * KIB},
};

const struct tool_profile *tool_profile_find(const char *name)
{
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
        if (strcmp(profiles[i].name, name) == 0)
            return &profiles[i];
    return NULL;
}

void tool_profile_list(FILE *f)
{
    for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
        char d[256];
        tool_profile_describe(&profiles[i].dev, d, sizeof(d));
        fprintf(f, "%-17s %s\n%17s %s; exec RAM %u KiB, external RAM %u KiB\n", profiles[i].name, profiles[i].board, "",
                d, profiles[i].exec_ram / KIB, profiles[i].ext_ram / KIB);
    }
}

void tool_profile_describe(const struct mota_device_profile *p, char *out, size_t cap)
{
    static const char *const abi[] = {"soft float", "softfp", "hard float"};
    const char *cpu = mota_nbin_cpu_name((uint16_t)p->cpu_part);
    char npu[128] = "", sizes[32] = "";
    if (p->struct_sizes)
        snprintf(sizes, sizeof(sizes), ", struct sizes 0x%X", p->struct_sizes);
    if ((p->reloc_families & NPU) && p->has_ll_aton)
        snprintf(npu, sizeof(npu), "NBIN v8 (Neural-ART NPU, LL_ATON %u.%u.%u, dbg-info %s, async %s%s)",
                 p->ll_aton_major, p->ll_aton_minor, p->ll_aton_micro, p->dbg_info ? "on" : "off",
                 p->async ? "on" : "off", sizes);
    else if (p->reloc_families & NPU)
        snprintf(npu, sizeof(npu), "NBIN v8 (CPU models, no NPU)");
    snprintf(out, cap, "%s (0x%X), %s, %s, %s; runs %s%s%s", cpu ? cpu : "unknown CPU", p->cpu_part,
             p->fpu_enabled ? "FPU" : "no FPU", p->float_abi < 3 ? abi[p->float_abi] : "unknown ABI",
             p->secure ? "secure" : "non-secure", npu, npu[0] && (p->reloc_families & LEGACY) ? ", " : "",
             (p->reloc_families & LEGACY) ? "X-CUBE-AI legacy v2"
             : npu[0]                     ? ""
                                          : "no model family");
}

static uint32_t round8(uint32_t v)
{
    return (v + 7u) & ~7u;
}

/* What the model's compatibility data asks of a device: its CPU, FPU, float ABI, secure state, family,
 * and for an NPU model its runtime. */
static void like_compat(const struct mota_compat *c, struct tool_profile *out)
{
    memset(out, 0, sizeof(*out));
    out->name = "like";
    out->board = "the profile of one model (--like)";
    struct mota_device_profile *p = &out->dev;
    p->cpu_part = c->cpu_part;
    p->fpu_enabled = c->fpu;
    p->float_abi = c->float_abi;
    p->secure = c->secure;
    p->reloc_families = c->reloc_major <= 15 ? 1u << c->reloc_major : 0;
    p->reloc_minor_max = c->reloc_minor;
    bool cpu_model = c->rt_desc_len >= sizeof(MOTA_CPU_ABI_PREFIX) - 1 &&
                     memcmp(c->rt_desc, MOTA_CPU_ABI_PREFIX, sizeof(MOTA_CPU_ABI_PREFIX) - 1) == 0;
    if (c->reloc_major == MOTA_NBIN_FAMILY_NPU && !cpu_model) {
        p->has_ll_aton = true;
        p->ll_aton_major = c->rt_major;
        p->ll_aton_minor = c->rt_minor;
        p->ll_aton_micro = c->rt_micro;
        p->dbg_info = c->dbg_info;
        p->async = c->async;
        p->struct_sizes = c->has_struct_sizes ? c->struct_sizes : 0;
    }
    p->install_modes = XIP_COPY;
}

/* The memories the model needs: exec and external RAM, and an update area for two copies of it
 * (payload_len: the model and its params). */
static void like_memories(const struct mota_compat *c, uint64_t payload_len, struct tool_profile *out)
{
    out->exec_ram = round8(c->exec_ram_xip > c->exec_ram_copy ? c->exec_ram_xip : c->exec_ram_copy);
    if (out->exec_ram < 4 * KIB) /* the simulator's smallest exec RAM */
        out->exec_ram = 4 * KIB;
    out->ext_ram = round8((uint32_t)c->ext_ram_size);
    out->internal_ram = out->exec_ram;
    /* room for two copies of the container (model, params, a head) in A/B slots, and the journal */
    uint64_t need = 2ull * (payload_len + 64 * KIB) + 64 * KIB;
    out->update_area = need < 8 * MIB ? 8 * MIB : (uint32_t)((need + MIB - 1) / MIB * MIB);
    out->flash = out->update_area;
}

/* The pools that land at fixed addresses (COPY and RESET pools), as [lo, hi) ranges; their number. */
static unsigned fixed_pools(const struct mota_nbin_info *in, uint64_t *lo, uint64_t *hi)
{
    unsigned n = 0;
    for (unsigned i = 0; i < in->n_pools; i++) {
        uint32_t type = in->pools[i].flags >> 24;
        if ((type == 2 || type == 3) && in->pools[i].size > 0 && n < MOTA_NBIN_MAX_POOLS) {
            lo[n] = in->pools[i].dst;
            hi[n++] = (uint64_t)in->pools[i].dst + round8(in->pools[i].size);
        }
    }
    return n;
}

/* pools sharing a RAM share its region: merge until no two touch */
static void merge_touching(uint64_t *lo, uint64_t *hi, unsigned *n)
{
    for (bool merged = true; merged;) {
        merged = false;
        for (unsigned a = 0; a < *n && !merged; a++)
            for (unsigned b = a + 1; b < *n && !merged; b++)
                if (lo[a] <= hi[b] && lo[b] <= hi[a]) {
                    lo[a] = lo[a] < lo[b] ? lo[a] : lo[b];
                    hi[a] = hi[a] > hi[b] ? hi[a] : hi[b];
                    lo[b] = lo[--*n];
                    hi[b] = hi[*n];
                    merged = true;
                }
    }
}

/* The regions as the profile's RAM, clear of the simulator's exec RAM. */
static int claim_regions(const uint64_t *lo, const uint64_t *hi, unsigned n, struct tool_profile *out)
{
    if (n > MOTA_POSIX_MAX_REGIONS)
        return MOTA_ERR_NBIN_DESC_TOO_MANY;
    for (unsigned r = 0; r < n; r++) {
        if (hi[r] > 0x100000000ull)
            return MOTA_ERR_NBIN_DESC_RANGE;
        /* the simulator's exec RAM sits at MOTA_POSIX_EXEC_BASE */
        if (lo[r] < (uint64_t)MOTA_POSIX_EXEC_BASE + out->exec_ram && MOTA_POSIX_EXEC_BASE < hi[r])
            return MOTA_ERR_UNSUPPORTED;
        out->regions[r] = (struct mota_posix_region){(uint32_t)lo[r], (uint32_t)(hi[r] - lo[r])};
        out->internal_ram += hi[r] - lo[r];
    }
    out->n_regions = n;
    return MOTA_OK;
}

/* the external RAM where no pool is (an N6's XSPI1 window first) */
static int place_ext_ram(const uint64_t *lo, const uint64_t *hi, unsigned n, struct tool_profile *out)
{
    static const uint32_t bases[] = {0x90000000u, 0x70000000u, 0xC0000000u, 0x60000000u, 0xA0000000u};
    out->ext_base = 0;
    for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]) && out->ext_base == 0; b++) {
        bool clear = true;
        for (unsigned r = 0; r < n; r++)
            clear &= !(lo[r] < (uint64_t)bases[b] + out->ext_ram && bases[b] < hi[r]);
        if (clear)
            out->ext_base = bases[b];
    }
    if (out->ext_base == 0)
        return MOTA_ERR_UNSUPPORTED;
    return MOTA_OK;
}

int tool_profile_like(const uint8_t *img, size_t len, const uint8_t *params, size_t params_len,
                      struct tool_profile *out)
{
    static struct mota_nbin_info in;
    struct mota_compat c;
    uint64_t lo[MOTA_NBIN_MAX_POOLS], hi[MOTA_NBIN_MAX_POOLS];
    int ret = mota_nbin_validate(img, len, &in);
    if (ret != MOTA_OK)
        return ret;
    if (in.split != (params != NULL)) /* a split model without its params, or params for one that has its own */
        return MOTA_ERR_NBIN_SPLIT;
    if ((ret = mota_nbin_check_params(&in, in.split ? params : img, in.split ? params_len : len)) != MOTA_OK)
        return ret;
    mota_nbin_compat(&in, MOTA_INSTALL_XIP, &c);
    like_compat(&c, out);
    like_memories(&c, (uint64_t)len + (in.split ? params_len : 0), out);
    unsigned n = fixed_pools(&in, lo, hi);
    merge_touching(lo, hi, &n);
    if ((ret = claim_regions(lo, hi, n, out)) != MOTA_OK)
        return ret;
    return place_ext_ram(lo, hi, n, out);
}
