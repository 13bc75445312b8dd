/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ST runtime-loadable model files ("NBIN", network_rel.bin): header reader.
 *
 * mota_nbin_parse() decodes and bounds-checks the header, the runtime
 * context and the memory-pool descriptors of both families straight from a
 * caller-provided image of explicit length. Every offset it follows is
 * checked against that length first; it never reads outside [img, img+len).
 * The variant (24/26-word NPU header, 16/17-word rt_ctx, legacy 25-word
 * header) is detected from the data. Layout facts: docs/model-abi.md and
 * ../shared/research/st-reloc-format.md.
 *
 * All strings are slices into the image (not NUL-terminated copies).
 */
#ifndef MOTA_NBIN_H
#define MOTA_NBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_NBIN_MAGIC 0x4E49424Eu /* "NBIN" little-endian */
#define MOTA_NBIN_MAX_POOLS 9u      /* ST's loader scans at most 10 records incl. terminator */
#define MOTA_NBIN_MAX_NAME 64u      /* longest c_name / pool name we accept */
#define MOTA_NBIN_MAX_DESC 128u     /* longest runtime description we accept */

/*
 * Size limits (docs/model-abi.md, "Limits"). A size above its limit is
 * MOTA_ERR_NBIN_SIZE_LIMIT, whatever the file length.
 * - RO (header, code, rodata): ST's linker script gives the flash segment 16 MiB.
 * - RW (data, GOT, .bss), and legacy activations, which mota's installer
 *   places after it: exec RAM. The targeted STM32 have at most a few MB of
 *   internal RAM (N6: 4.2 MB, H7: 1.4 MB, U5: 3 MB); 8 MiB leaves room.
 * - Everything that lives in external memory (params, NPU activations,
 *   external RAM, each memory pool): ST's linker script gives each params
 *   segment (params_0, params_1) 128 MiB.
 */
#define MOTA_NBIN_MAX_RO (16u << 20)
#define MOTA_NBIN_MAX_RW (8u << 20)
#define MOTA_NBIN_MAX_EXTERNAL (128u << 20)

enum mota_nbin_family {
    MOTA_NBIN_FAMILY_LEGACY = 2, /* X-CUBE-AI reloc v2.x, ai_reloc_network */
    MOTA_NBIN_FAMILY_NPU = 8,    /* Neural-ART reloc v8.x, ll_aton_reloc_network */
};

enum mota_nbin_float_abi { MOTA_NBIN_ABI_SOFT = 0, MOTA_NBIN_ABI_SOFTFP = 1, MOTA_NBIN_ABI_HARD = 2 };

struct mota_nbin_pool {
    const char *name;
    size_t name_len;
    uint32_t flags; /* <type:8><dtype:8><attr:8><id:8> */
    uint32_t foff;
    uint32_t dst;
    uint32_t size;
};

struct mota_nbin_info {
    enum mota_nbin_family family;
    unsigned header_words; /* 24 or 26 (NPU), 25 (legacy) */
    unsigned rtctx_words;  /* 16 or 17 (NPU), 8 meaningful words (legacy) */
    bool crc_callbacks;    /* legacy: rt_ctx has ST's CRC-unit callback words (13, 14: acquire, release) */
    uint32_t flags;        /* raw flags word */

    /* decoded flags */
    unsigned reloc_major, reloc_minor;
    uint16_t cpu_part; /* SCB CPUID part number, e.g. 0xD22 = Cortex-M55 */
    bool fpu;
    unsigned float_abi; /* enum mota_nbin_float_abi */
    bool secure, dbg_info, async;
    unsigned toolchain; /* 8 GCC, 9 LLVM clang, 10 ST clang */

    /* section geometry (file offsets / RW-segment offsets) */
    uint32_t ro_size;   /* header + text + rodata = file offset of the data image */
    uint32_t data_copy; /* bytes of the data image copied to RAM: up to .bss or the REL table */
    uint32_t rw_size;   /* off(bss_end) */
    uint32_t got_off, got_end;
    uint32_t rel_off, rel_count;
    uint32_t rtctx_file_off;
    uint32_t params_offset; /* file offset of the appended params blob; 0 if none/split */
    uint32_t image_len;     /* bytes of the file that belong to the model code image (also set when the
                             * parse refuses bytes after it: MOTA_ERR_NBIN_TRAILING) */

    /* runtime context */
    const char *c_name;
    size_t c_name_len;
    const char *rt_desc; /* NPU only */
    size_t rt_desc_len;
    uint32_t rt_version; /* NPU: major<<24|minor<<16|micro<<8 of LL_ATON */
    uint32_t rt_version_extra;
    uint32_t acts_size;
    uint32_t params_size;  /* NPU params_sz / legacy weights_size */
    uint32_t ext_ram_size; /* round8 as ST's get_info reports it */
    uint32_t params_bin_size;
    uint32_t params_bin_crc32;
    uint32_t struct_sizes; /* rt_c_struct_sizes (17-word rt_ctx), else 0 */

    /* exec RAM needed by each install mode */
    uint32_t exec_ram_xip;
    uint32_t exec_ram_copy;

    /* params placement */
    bool has_params;     /* model expects a params blob (NPU params_bin_sz > 0, legacy weights) */
    bool split;          /* params live in a separate file */
    uint32_t params_len; /* length of the blob expected in that file / in the image */

    unsigned n_pools;
    struct mota_nbin_pool pools[MOTA_NBIN_MAX_POOLS];
    uint32_t params0_off; /* where tag-8 (params_0) values of an NPU model start in the blob: the offset of
                           * its one RELOC PARAM pool (0 without one) */

    uint32_t ctx_off;          /* rt_ctx offset in the RW segment */
    unsigned n_entries;        /* entry points (10 or 12 NPU, 11 legacy) */
    uint32_t entries[12];      /* tagged Thumb addresses, header order */
    uint32_t rel_code_entries; /* REL entries that patch code (COPY mode only); set by validate */
    uint16_t value_tags;       /* bit t: a GOT word or REL target carries tag t; set by validate */
};

/* Decode and bounds-check an NBIN image of len bytes (the whole file). */
int mota_nbin_parse(const uint8_t *img, size_t len, struct mota_nbin_info *info);

/*
 * Everything parse checks, plus the proof the installer relies on: every
 * GOT word and every REL target carries an allowed tag (0, 2, 4, 8, 9; 0, 2,
 * 8 for the legacy family) and an offset inside its segment, the reserved
 * GOT words are zero, REL entries are aligned, strictly ascending, inside the
 * initialised RW data and outside the GOT, and every pool initialiser lies
 * inside the params blob.
 */
int mota_nbin_validate(const uint8_t *img, size_t len, struct mota_nbin_info *info);

/*
 * Check the params blob against the header: for a split model, params is
 * the separate file; otherwise params is the whole image and the appended
 * blob is checked. Size, and for the NPU family the CRC-32 of the mem-pool
 * blob (which must end the params). Host-side: it reads every byte.
 */
int mota_nbin_check_params(const struct mota_nbin_info *info, const uint8_t *params, size_t len);

/*
 * What mota_nbin_check_params checks, for a caller that computes the CRC-32
 * itself as it streams the bytes (mota pack, while it writes them): the span
 * [*off, *off + *n) of params (len bytes, taken as mota_nbin_check_params
 * takes them) whose CRC-32 must equal info->params_bin_crc32; *n = 0 when
 * no CRC is to be checked. MOTA_OK or MOTA_ERR_NBIN_PARAMS_SIZE (_ARG).
 */
int mota_nbin_params_crc_span(const struct mota_nbin_info *info, size_t len, size_t *off, size_t *n);


/*
 * A model's inputs and outputs, as far as the file describes them
 * (docs/model-abi.md, "Inputs and outputs"):
 * - a Neural-ART model (LL_ATON): the input and output buffer-info tables its
 *   entries 21 and 20 return: each buffer's name, bytes (offset_end -
 *   offset_start), data type and shape in memory (mem_shape, else shape);
 * - a mota CPU model (runtime description MOTA_NBIN_CPU_ABI...): rt_ctx's
 *   itf_network, relocated to the struct mota_model_info in the RW data:
 *   one input and one output of the sizes it was built with, no name, type
 *   or shape;
 * - a legacy X-CUBE-AI model: nothing in the file (MOTA_NBIN_IO_RUN_TIME):
 *   the model's own report gives them when it runs.
 */
#define MOTA_NBIN_CPU_ABI "mota-cpu-abi-1 " /* how a mota CPU model's runtime description starts */
#define MOTA_NBIN_IO_MAX 16u                /* tensors read per direction; a model with more is refused */
#define MOTA_NBIN_IO_MAX_DIMS 8u
#define MOTA_NBIN_IO_MAX_NAME 255u

enum mota_nbin_io_source {
    MOTA_NBIN_IO_TABLES = 1, /* LL_ATON buffer-info tables */
    MOTA_NBIN_IO_CPU_ABI,    /* mota's CPU ABI: struct mota_model_info */
    MOTA_NBIN_IO_RUN_TIME,   /* legacy: reported by the model when it runs */
    MOTA_NBIN_IO_NONE,       /* the file describes none: no tables, and not mota's CPU ABI */
};

struct mota_nbin_tensor {
    const char *name; /* slice into the image; NULL: unnamed */
    size_t name_len;
    uint32_t bytes;
    const char *format; /* "uint8", "int8", "float32"... (mota_nbin_format_name); NULL: unknown */
    unsigned ndims;     /* 0: shape unknown */
    uint32_t dims[MOTA_NBIN_IO_MAX_DIMS];
};

struct mota_nbin_io {
    unsigned source; /* enum mota_nbin_io_source: where they were (or would have been) read */
    unsigned n_in, n_out;
    uint64_t in_bytes, out_bytes;
    struct mota_nbin_tensor in[MOTA_NBIN_IO_MAX], out[MOTA_NBIN_IO_MAX];
};

/*
 * Read the inputs and outputs of a model mota_nbin_validate accepted (info,
 * over the same img and len: this relies on its REL and GOT proofs). Pure and
 * bounded: every word it reads lies in the image, every table it walks ends
 * inside the RW data, every pointer it follows is named by a REL entry.
 * MOTA_OK with io->source TABLES or CPU_ABI (tensors filled), RUN_TIME or
 * NONE (no tensors); or the reason the description cannot be read, io->source
 * saying which one (no tensors): MOTA_ERR_NBIN_EPOCH_GETTER (a table getter
 * of another shape), _EPOCH_POINTER (a table or field pointer not relocated
 * or outside its segment), _EPOCH_UNTERMINATED, _EPOCH_TOO_MANY (more than
 * MOTA_NBIN_IO_MAX), _EPOCH_BUFFER (a record mota cannot read: its size per
 * rt_c_struct_sizes, offsets, dimensions, name), MOTA_ERR_NBIN_RTCTX
 * (itf_network or the struct it points to not where the CPU ABI puts them),
 * MOTA_ERR_NBIN_STRING, MOTA_ERR_NBIN_SIZE_LIMIT.
 */
int mota_nbin_io(const uint8_t *img, size_t len, const struct mota_nbin_info *info, struct mota_nbin_io *io);

/* A Buffer_DataType_TypeDef of the model's LL_ATON (renumbered after 1.1.0) as a lower-case element
 * format with its width ("uint8", "float32", "fxp"); NULL for UNDEFINED and unknown values. */
const char *mota_nbin_format_name(unsigned type, uint32_t rt_version);

/* The compatibility requirements of a parsed model (container compat data). */
struct mota_compat;
void mota_nbin_compat(const struct mota_nbin_info *info, uint32_t install_mode, struct mota_compat *compat);

/* Names of the decoded fields, for reports. */
const char *mota_nbin_cpu_name(uint16_t part);
const char *mota_nbin_toolchain_name(unsigned toolchain);
const char *mota_nbin_float_abi_name(unsigned abi);

#endif /* MOTA_NBIN_H */
