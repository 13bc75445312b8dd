/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The epoch report of a Neural-ART model: what runs on the NPU and what on
 * the CPU, read statically from a validated NBIN image.
 *
 * Entry point 19 (get_epoch_items) returns ST's table of epoch blocks
 * (EpochBlock_ItemTypeDef, 20 bytes, or 48 with LL_ATON_EB_DBG_INFO), ended
 * by a record whose flags are last_eb alone. mota_epochs_decode() finds the
 * table through the getter's GOT load, checks every record against the RW
 * data image the file holds and every pointer in it against the REL table
 * (a pointer the loader would not relocate is no pointer), then names the
 * CPU work: the runtime-library operation a hybrid block calls through the
 * host callback table, and the software kernel's operator type of a pure SW
 * block. Entries 20..22 give the input, output and internal buffer tables
 * (LL_Buffer_InfoTypeDef): names, shapes, types and the epoch of each.
 *
 * Naming the CPU work reads Thumb code: a hybrid block's calls into the
 * callback stubs, a SW block's first byte stored into its kernel's info
 * struct. Code of another shape is reported as unknown, never guessed.
 * Layouts, flags and sources: docs/model-abi.md, "Epoch blocks".
 */
#ifndef MOTA_EPOCHS_H
#define MOTA_EPOCHS_H

#include "mota/compat.h"
#include "mota/nbin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_EPOCH_MAX_BUFFERS 1024u
#define MOTA_EPOCH_MAX_OPS 8u  /* library operations named per hybrid block (more are not named) */
#define MOTA_EPOCH_MAX_DIMS 8u /* dimensions of a buffer's shape */
#define MOTA_EPOCH_SW_UNKNOWN (-1)

/* EpochBlock_Flags_t (ll_aton_NN_interface.h; blob_encrypted from LL_ATON 1.1.1) */
enum mota_epoch_flag {
    MOTA_EPOCH_F_START = 0x1,
    MOTA_EPOCH_F_END = 0x2,
    MOTA_EPOCH_F_BLOB = 0x4,
    MOTA_EPOCH_F_LAST = 0x8,
    MOTA_EPOCH_F_HW = 0x10,
    MOTA_EPOCH_F_SW = 0x20,
    MOTA_EPOCH_F_HYBRID = 0x40,
    MOTA_EPOCH_F_INTERNAL = 0x80,
    MOTA_EPOCH_F_ENCRYPTED = 0x100,
};

enum mota_epoch_kind {
    MOTA_EPOCH_BLOB = 1, /* an epoch-controller blob: the NPU runs its epochs unattended */
    MOTA_EPOCH_HW,       /* pure hardware, started by the CPU */
    MOTA_EPOCH_HYBRID,   /* the NPU and a runtime-library operation on the CPU */
    MOTA_EPOCH_SW,       /* a software kernel on the CPU */
};

struct mota_epoch_block {
    uint16_t index;
    uint16_t flags;
    uint8_t kind;              /* enum mota_epoch_kind */
    int16_t first, last;       /* epoch numbers (debug info) */
    uint32_t start_fn, end_fn; /* file offsets of the functions (Thumb bit cleared); 0: none */
    uint32_t blob;             /* the tagged blob address; 0: none */
    uint32_t wait_mask;
    uint32_t in_mask, out_mask;                /* debug info */
    uint64_t est_npu_cycles, est_total_cycles; /* debug info */
    uint8_t n_ops;                             /* hybrid: library operations called, in call order */
    uint8_t ops[MOTA_EPOCH_MAX_OPS];           /* their callback slots (mota_epochs_callback_name) */
    int16_t sw_node;                           /* SW: the kernel's NodeType, or MOTA_EPOCH_SW_UNKNOWN */
};

enum mota_epoch_io { MOTA_EPOCH_INPUT = 0, MOTA_EPOCH_OUTPUT = 1, MOTA_EPOCH_INTERNAL = 2 };

struct mota_epoch_buffer {
    const char *name; /* slice into the image */
    size_t name_len;
    uint8_t io; /* enum mota_epoch_io */
    uint16_t epoch;
    uint8_t type; /* Buffer_DataType_TypeDef of the model's LL_ATON (mota_epochs_type_name) */
    uint8_t ndims, mem_ndims;
    uint32_t shape[MOTA_EPOCH_MAX_DIMS], mem_shape[MOTA_EPOCH_MAX_DIMS];
    int32_t block; /* the block whose epochs hold .epoch; -1: none (or no debug info) */
};

struct mota_epoch_report {
    bool present;         /* false: get_epoch_items returns NULL (no NPU work: a CPU model) */
    uint32_t table_off;   /* file offset of the first record */
    uint16_t record_size; /* 20, or 48 with debug info */
    bool dbg;
    uint32_t rt_version;
    size_t n_blocks, n_buffers;
    bool buffers_known;  /* the buffer tables were decoded (LL_Buffer_InfoTypeDef of 56 bytes) */
    bool internal_table; /* the model carries an internal-buffer table (entry 22 is not NULL) */
    struct mota_epoch_summary sum;
};

/*
 * Decode the epoch table of info (filled by mota_nbin_validate over the same
 * img and len: the decoder relies on its REL and GOT proofs). blocks may be
 * NULL (then only the summary and counts are filled); bufs NULL leaves the
 * buffer tables unread. Otherwise they hold max_blocks and max_bufs entries,
 * and a model with more is refused.
 * A legacy model has no table: MOTA_ERR_NBIN_EPOCH_FAMILY.
 */
int mota_epochs_decode(const uint8_t *img, size_t len, const struct mota_nbin_info *info,
                       struct mota_epoch_block *blocks, size_t max_blocks, struct mota_epoch_buffer *bufs,
                       size_t max_bufs, struct mota_epoch_report *rep);

const char *mota_epochs_kind_name(unsigned kind); /* "blob", "hw", "hybrid", "sw" */
const char *mota_epochs_runs_on(unsigned kind);   /* "npu", "npu+cpu", "cpu" */
const char *mota_epochs_flag_name(unsigned bit);  /* bit 0..8: "epoch_start"... */
/* LL_ATON_LIB_* operation behind a host-callback slot, or NULL */
const char *mota_epochs_callback_name(unsigned slot, uint32_t rt_version);
/* LL_SW_* node type of the model's LL_ATON ("Softmax"), or NULL */
const char *mota_epochs_sw_name(int node, uint32_t rt_version);
/* Buffer_DataType_TypeDef name ("UINT8"), or "unknown"; renumbered after LL_ATON 1.1.0 */
const char *mota_epochs_type_name(unsigned type, uint32_t rt_version);

#endif /* MOTA_EPOCHS_H */
