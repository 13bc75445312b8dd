/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The port contract: the one header a board implements. A port fills one
 * struct mota_port (flash, system, transport, loader memory, inference) and
 * hands it to the agent in struct mota_agent_config; nothing else of the
 * board reaches mota. Each member is a config struct of callbacks with an
 * opaque context, littlefs style; zeroed optional members mean "not
 * provided". Callbacks return MOTA_OK (0) or a negative enum mota_err code
 * (mota/err.h) unless stated otherwise. docs/porting.md walks through it;
 * ports/ holds the ports to copy (posix: the simulator; arm: what every
 * Cortex-M port shares; mps: the QEMU boards, one folder per board under
 * the family's common layer).
 *
 * Three parts, all a board provides: struct mota_port (what the agent is
 * given); where the rest of struct mota_agent_config comes from (the
 * device's identity, profile, layout and trust); and the functions the
 * firmware's shared main (ports/firmware/main.c) calls, "A board's
 * firmware" at the end.
 *
 * Only agent/ and the ports include this header.
 */
#ifndef MOTA_PORT_H
#define MOTA_PORT_H

#include "mota/err.h"
#include "mota/loader.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Flash as the part has it (one device or partition, offsets from its start): sectors of different
 * sizes (an STM32F401's 16/64/128 KiB), the program unit and whether it may be programmed once or
 * again, and how long the part takes. docs/porting.md "The flash" gives each field's source.
 * - read: any offset and length inside the device. On a part with ECC a unit torn by a power cut (a
 *   program or erase cut short) reads as MOTA_ERR_FLASH_ECC, never as a fault: the port catches
 *   the part's ECC error for reads made through read.
 * - prog: off and len multiples of prog_size (len may cover several units: the port splits it at
 *   page boundaries); every byte programmed must be erased (erased_value) before: bits only go from
 *   1 to 0. With MOTA_FLASH_PROGRAM_ONCE a unit is programmed once per erase, even with erased bytes.
 * - erase: the one sector that starts at off (mota_flash_sector).
 * - map: a pointer to the memory-mapped contents of [off, off+len), and xip_base its CPU address.
 *   Required: stored manifests are decoded in place and models execute in place (XIP) or are
 *   copied from there. On ECC flash the agent maps only units whose program completed: read back
 *   through read since (digests are checked through read there), or programmed in this boot. A mapped
 *   read of a torn unit is the part's ECC fault (NMI, bus fault): a fault of the firmware, which the
 *   port handles as any other (a reset, MOTA_RESET_FAULT); a port may refuse (NULL) a range it knows
 *   holds a torn unit.
 * - regions: the sectors from offset 0 on, n_regions entries; their sizes add up to size.
 * - erase and program times (microseconds; 0: not stated): the agent holds the update link's host
 *   for an operation longer than the link absorbs, and keeps the watchdog fed around one.
 */
#define MOTA_FLASH_MAX_REGIONS 4

struct mota_flash_region {
    uint32_t count;                      /* sectors */
    uint32_t sector_size;                /* bytes, a multiple of prog_size */
    uint32_t erase_typ_us, erase_max_us; /* one sector */
};

enum mota_flash_flags {
    /* ECC flash (STM32U5, H7): a program unit takes one program per erase, and a torn unit reads as an ECC
     * error (MOTA_ERR_FLASH_ECC through read). Without it: NOR, a unit re-programmable from 1 to 0. */
    MOTA_FLASH_PROGRAM_ONCE = 1u << 0,
    /* Single bank (STM32F4): while the flash erases or programs, no code runs from it, so an interrupt
     * handler in flash waits and a UART without DMA loses what arrives. */
    MOTA_FLASH_STALLS_CPU = 1u << 1,
};

struct mota_flash {
    int (*read)(void *ctx, uint32_t off, void *buf, size_t len);
    int (*prog)(void *ctx, uint32_t off, const void *buf, size_t len);
    int (*erase)(void *ctx, uint32_t off);
    const uint8_t *(*map)(void *ctx, uint32_t off, size_t len);
    uint32_t xip_base;
    uint32_t size;
    uint32_t prog_size; /* the program unit: ECC word, or the smallest program the port takes */
    uint8_t erased_value;
    uint8_t flags; /* enum mota_flash_flags */
    uint8_t n_regions;
    struct mota_flash_region regions[MOTA_FLASH_MAX_REGIONS];
    uint32_t prog_block;               /* bytes one program operation takes at most (a NOR page, an ECC word) */
    uint32_t prog_typ_us, prog_max_us; /* one prog_block */
    void *ctx;
};

/* The sector holding off: its start and size; MOTA_ERR_FLASH_BOUNDS outside the regions. */
static inline int mota_flash_sector(const struct mota_flash *f, uint32_t off, uint32_t *start, uint32_t *size)
{
    uint32_t at = 0;
    for (unsigned i = 0; i < f->n_regions && i < MOTA_FLASH_MAX_REGIONS; i++) {
        const struct mota_flash_region *r = &f->regions[i];
        if (r->sector_size != 0 && off - at < (uint64_t)r->count * r->sector_size) {
            *start = at + (off - at) / r->sector_size * r->sector_size;
            *size = r->sector_size;
            return 0;
        }
        at += r->count * r->sector_size;
    }
    return MOTA_ERR_FLASH_BOUNDS;
}

/* The sector's longest erase, in microseconds (0: not stated). */
static inline uint32_t mota_flash_erase_max_us(const struct mota_flash *f, uint32_t off)
{
    uint32_t at = 0;
    for (unsigned i = 0; i < f->n_regions && i < MOTA_FLASH_MAX_REGIONS; i++) {
        at += f->regions[i].count * f->regions[i].sector_size;
        if (off < at)
            return f->regions[i].erase_max_us;
    }
    return 0;
}

/*
 * Byte stream (UART, USB CDC, pty, TCP, stdio).
 * - read: up to len bytes, waiting at most timeout_ms; returns the count
 *   (0 on timeout) or a negative code (MOTA_ERR_TRANSPORT when closed).
 * - write: all len bytes; MOTA_OK or a negative code. The buffer is the
 *   caller's again when write returns (the link reuses it for the next
 *   frame): a DMA or interrupt-driven port copies it or waits.
 */
struct mota_transport {
    int (*read)(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms);
    int (*write)(void *ctx, const uint8_t *buf, size_t len);
    void *ctx;
    /* Optional: the bytes the port holds while the agent does not read (its RX ring); the link's window
     * never asks the host for more in flight. 0: as the build sets it (MOTA_LINK_WINDOW frames). */
    uint32_t rx_capacity;
};

enum mota_reset_cause {
    MOTA_RESET_POWER_ON = 0,
    MOTA_RESET_SOFTWARE = 1, /* the firmware asked (a REBOOT request, the application) */
    MOTA_RESET_WATCHDOG = 2, /* the main loop stopped kicking */
    MOTA_RESET_FAULT = 3,    /* a CPU fault handler reset the device */
};

/*
 * Time, reset and watchdog. now_us, reset and reset_cause are required: a
 * model on trial is reverted after a watchdog or fault reset, which only a
 * port that reports the cause makes possible.
 * - now_us: monotonic microseconds since boot.
 * - reset: a system reset; does not return on a device (a host port may
 *   return, and the caller then boots again).
 * - reset_cause: why this boot happened (read once, at agent start).
 * - watchdog_kick (optional): the agent kicks between flash sectors, every
 *   4 KiB hashed and around a self-test; the main loop kicks every step.
 */
struct mota_system {
    uint64_t (*now_us)(void *ctx);
    void (*reset)(void *ctx);
    enum mota_reset_cause (*reset_cause)(void *ctx);
    void (*watchdog_kick)(void *ctx);
    void *ctx;
};

/* What a model says of itself, where its runtime can say it (an X-CUBE-AI legacy model's report). */
struct mota_model_about {
    char name[32];
    char compiled[32];     /* compile date and time */
    char tool[24];         /* tool revision text */
    uint32_t tool_version; /* major << 16 | minor << 8 | micro */
    uint32_t acts_size, weights_size;
};

/*
 * Inference, run by the port because only the port knows how to guard a
 * model (MPU regions, time budget, fault handlers): run the installed model
 * on `in` and write out_len bytes to `out`; report the inference time in
 * microseconds. MOTA_OK or a negative code. The agent compares the output
 * digest and the latency with the manifest. On entry *latency_us holds the
 * call's time budget (the manifest's latency limit; 0: the device's own
 * limit): a port that runs models under guard stops them there
 * (MOTA_ERR_SELFTEST_TIMEOUT), as it stops a faulting one
 * (MOTA_ERR_SELFTEST_FAULT). Those codes reach the host as the verdict.
 */
typedef int (*mota_port_infer_fn)(void *ctx, const struct mota_installed *model, const uint8_t *in, size_t in_len,
                                  uint8_t *out, size_t out_len, uint64_t *latency_us);

/* A model's inputs and outputs, where its runtime says them (STATUS model key 18): what invoke and a
 * self-test must give it and get back. */
#define MOTA_MODEL_IO_MAX 4u /* inputs and outputs each */
struct mota_model_tensor {
    uint32_t format; /* X-CUBE-AI's ai_buffer_format (type and bits); 0: not said (raw bytes) */
    uint32_t bytes;
};
struct mota_model_io {
    uint8_t n_in, n_out;
    struct mota_model_tensor in[MOTA_MODEL_IO_MAX], out[MOTA_MODEL_IO_MAX];
};

/*
 * The memory models are installed into (the loader reaches memory only through it).
 * - map: a host pointer for device range [addr, addr+len) the model may use (its exec RAM, external
 *   RAM), or NULL for any other: the installer writes nothing outside what map grants. `write` tells
 *   whether it will be written.
 * - clean_dcache / invalidate_icache: run after an install on parts with caches (an NPU reads its
 *   pools from memory; the CPU fetches the copied code); NULL where none is needed.
 * - crc_acquire / crc_release: legacy models whose rt_ctx has ST's CRC-unit callbacks
 *   (mota_nbin_info.crc_callbacks): device addresses (Thumb bit set) of the port's
 *   `uint32_t acquire(void)`, which returns the CRC unit's base (0x40023000 or its secure alias
 *   0x50023000) so the model's licence check uses it without probing, and `void release(uint32_t)`,
 *   given that value back. The model calls them from its own context (on a guarded board:
 *   unprivileged, under the MPU), so they must be code it may run (docs/porting.md "The STM32 CRC
 *   unit"). 0: none, the model probes the unit itself.
 */
struct mota_loader_mem {
    void *(*map)(void *ctx, uint32_t addr, uint32_t len, bool write);
    void (*clean_dcache)(void *ctx, uint32_t addr, uint32_t len);
    void (*invalidate_icache)(void *ctx, uint32_t addr, uint32_t len);
    void *ctx;
    uint32_t crc_acquire, crc_release;
};

/*
 * Everything a board provides, checked by mota_agent_init (MOTA_ERR_PORT
 * when a required member is missing).
 */
struct mota_port {
    /* Required: the flash holding the journal and the model slots (read, prog, erase, map). */
    const struct mota_flash *flash;

    /* Required: clock, reset and its cause; the watchdog kick is optional. */
    const struct mota_system *sys;

    /* Required by mota_device_start: the update link's byte stream. An agent driven without the link
     * (mota_agent_write from the application) may leave it NULL. */
    const struct mota_transport *transport;

    /* Required for installs: the memory models are installed into (struct mota_loader_mem above). */
    const struct mota_loader_mem *mem;

    /* Optional: runs models (self-tests, the link's INVOKE). NULL: self-tests cannot run, so a
     * container with one is refused. */
    mota_port_infer_fn infer;

    /* Optional: where the last stopped call faulted ("MemManage at pc 0x.., address 0x.."), the detail
     * of a MOTA_ERR_SELFTEST_FAULT / _TIMEOUT verdict. Returns the text's length (at most cap). */
    size_t (*infer_detail)(void *ctx, char *out, size_t cap);

    /* Optional: the model's own description (STATUS model key 13); MOTA_OK when it has one. */
    int (*model_about)(void *ctx, const struct mota_installed *model, struct mota_model_about *out);

    /* Optional: the model's inputs and outputs (STATUS model key 18); MOTA_OK when it knows them. */
    int (*model_io)(void *ctx, const struct mota_installed *model, struct mota_model_io *out);

    /* The context of infer, infer_detail, model_about and model_io. */
    void *infer_ctx;
};

/*
 * The rest of the device, in struct mota_agent_config (mota/agent.h), which the board fills before
 * mota_agent_init (mota_board_init below does it for the shared firmware):
 * - port: its struct mota_port;
 * - profile (struct mota_device_profile, mota/compat.h): read from the hardware where the hardware says
 *   it (the Arm layer's mota_arm_profile: CPU part, FPU, float ABI, secure state), the rest from what
 *   the firmware was built with (model families, install modes, NPU runtime, the profile's name);
 * - device_id / device_id_len: the part's unique id (an STM32's 96-bit UID at UID_BASE); where the
 *   part has none, the provisioning record's (mota_provision_apply: given at provisioning, or derived
 *   from the device key);
 * - journal_offset, models (slots, exec RAM): the board's flash layout, the same as its device profile
 *   for `mota sim` (docs/device-profiles.md), the number of models from the provisioning record;
 * - keys, vendor and class ids, enc: the provisioning record (mota/provision.h);
 * - selftest_buf: where a model's input and output go (on a guarded board, the guard's I/O area);
 *   scratch: the application's.
 */

/* ---- A board's firmware: what ports/firmware/main.c, the main() every board shares, needs ---- */

struct mota_agent_config;

/* Why the board (re)started, and the fault that caused it, if one did. */
struct mota_board_boot {
    enum mota_reset_cause cause;
    uint32_t fault_pc, fault_addr, fault_cfsr;
};

/* What mota_board_init tells the firmware. */
struct mota_board_status {
    struct mota_board_boot boot;
    int provision_status; /* MOTA_OK, MOTA_ERR_NOT_PROVISIONED or MOTA_ERR_PROVISION */
    const char *name;     /* the device's name (HELLO), from provisioning */
    bool hang_on_trial;   /* test builds: the application hangs while a model is on trial */
    bool measure_stack;   /* the application reports its stack high-water mark per phase */
};

/*
 * Bring the board up (clock, console, the update link's transport, the flash, the watchdog's clock),
 * read the provisioning record and the hardware profile into cfg and point cfg at the board's port. The
 * caller's cfg supplies the scratch buffer and its own policy (max_trial_boots); the board lends the
 * self-test buffer. MOTA_OK or a negative code (the firmware then stops).
 */
int mota_board_init(struct mota_agent_config *cfg, struct mota_board_status *st);

/* Start the watchdog (timeout in ms); the agent and the main loop kick it. */
void mota_board_watchdog_start(uint32_t timeout_ms);

/* A line on the board's console (diagnostics, not the update link). Every line the firmware logs starts
 * with MOTA_BOARD_TAG ("mota-an505: "), which launchers and people read; the board's build defines
 * MOTA_BOARD_NAME. */
#ifdef MOTA_BOARD_NAME
#define MOTA_BOARD_TAG "mota-" MOTA_BOARD_NAME ": "
#endif
void mota_board_log(const char *s);
void mota_board_log_hex(const char *label, uint32_t v);

/* The main stack, painted at reset: bytes never touched since (its high-water mark); repaint paints
 * again below the caller's frame, so that the next mark is per phase. */
uint32_t mota_board_stack_unused(void);
uint32_t mota_board_stack_size(void);
void mota_board_stack_repaint(void);

#endif /* MOTA_PORT_H */
