/* SPDX-License-Identifier: Apache-2.0 */
/* NBIN header, runtime-context and descriptor reader: every offset bounded. */
#include "mota/nbin.h"

#include "mota/crc32.h"
#include "mota/err.h"

#include "tags.h"
#include "thumb.h"

#include <string.h>

#define TAG_NULL 0x0u
#define TAG_FLASH 0x2u
#define TAG_RAM_NPU 0x4u
#define TAG_RAM_LEGACY 0x8u

/* Header word indices shared by both families. */
enum {
    H_MAGIC = 0,
    H_FLAGS,
    H_DATA_START,
    H_DATA_END,
    H_DATA_DATA,
    H_BSS_START,
    H_BSS_END,
    H_GOT_START,
    H_GOT_END,
    H_REL_START,
    H_REL_END,
    H_PARAMS_START = 11,
    H_PARAMS_OFFSET = 12, /* NPU */
    H_WEIGHTS_START = 11,
    H_WEIGHTS_END = 12, /* legacy */
    H_ENTRIES = 13,     /* first entry point; the ctx word ends the header */
};

static uint32_t round_up(uint32_t v, uint32_t a)
{
    return (v + (a - 1)) & ~(a - 1);
}

/* Cortex-M cores by SCB CPUID part number (Arm's technical reference
 * manuals; ST's reloc headers name 0xC60, 0xC23, 0xC24, 0xC27, 0xD21, 0xD22).
 * A model for any other part is refused, and reports name these. */
static const struct {
    uint16_t part;
    const char *name;
} cpus[] = {
    {0xC20, "Cortex-M0"},  {0xC60, "Cortex-M0+"}, {0xC23, "Cortex-M3"},   {0xC24, "Cortex-M4"},  {0xC27, "Cortex-M7"},
    {0xD20, "Cortex-M23"}, {0xD21, "Cortex-M33"}, {0xD31, "Cortex-M35P"}, {0xD22, "Cortex-M55"}, {0xD23, "Cortex-M85"},
};

/* Toolchain ids of the flags word (ST's AI_RELOC_TOOLCHAIN_*). */
static const struct {
    unsigned id;
    const char *name;
} toolchains[] = {{8, "GCC Arm embedded"}, {9, "LLVM clang"}, {10, "ST clang"}};

static const char *cpu_lookup(uint16_t part)
{
    for (size_t i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++)
        if (cpus[i].part == part)
            return cpus[i].name;
    return NULL;
}

static const char *toolchain_lookup(unsigned id)
{
    for (size_t i = 0; i < sizeof(toolchains) / sizeof(toolchains[0]); i++)
        if (toolchains[i].id == id)
            return toolchains[i].name;
    return NULL;
}

/* n bytes at p are all zero (packer padding, which may hide nothing). */
static bool all_zero(const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

/* A NUL-terminated string at file offset off, entirely below limit. */
static int get_string(const uint8_t *img, uint32_t limit, uint32_t ptr, size_t max, const char **s, size_t *n)
{
    uint32_t off = OFF(ptr);
    if (TAG(ptr) != TAG_FLASH || off >= limit)
        return MOTA_ERR_NBIN_STRING;
    size_t room = limit - off;
    if (room > max + 1)
        room = max + 1;
    const uint8_t *nul = memchr(img + off, 0, room);
    if (nul == NULL)
        return MOTA_ERR_NBIN_STRING;
    *s = (const char *)(img + off);
    *n = (size_t)(nul - (img + off));
    return MOTA_OK;
}

static void decode_flags(struct mota_nbin_info *in)
{
    uint32_t f = in->flags;
    in->reloc_major = (f >> 28) & 0xf;
    in->reloc_minor = (f >> 24) & 0xf;
    in->secure = (f >> 20) & 1;
    in->dbg_info = (f >> 21) & 1;
    in->async = (f >> 22) & 1;
    in->toolchain = (f >> 16) & 0xf;
    in->float_abi = (f >> 13) & 0x3;
    in->fpu = (f >> 12) & 1;
    in->cpu_part = (uint16_t)(f & 0xfff);
}

/* Geometry checks common to both families. ram_tag differs; align is the
 * family's packing alignment (NPU 8, legacy 4: RO size and REL start). */
static int check_geometry(const uint8_t *img, size_t len, const uint32_t *h, unsigned hdr_words, uint32_t ram_tag,
                          uint32_t align, struct mota_nbin_info *in)
{
    static const int ram_words[] = {H_DATA_END, H_BSS_START, H_BSS_END, H_GOT_START, H_GOT_END};
    (void)img;
    if (h[H_DATA_START] != ram_tag << 28)
        return MOTA_ERR_NBIN_DATA_START;
    for (size_t i = 0; i < sizeof(ram_words) / sizeof(ram_words[0]); i++) {
        if (TAG(h[ram_words[i]]) != ram_tag)
            return MOTA_ERR_NBIN_TAG;
        if (OFF(h[ram_words[i]]) % 4 != 0)
            return MOTA_ERR_NBIN_ALIGN;
    }
    if (TAG(h[H_DATA_DATA]) != TAG_FLASH || TAG(h[H_REL_START]) != TAG_FLASH || TAG(h[H_REL_END]) != TAG_FLASH)
        return MOTA_ERR_NBIN_TAG;

    uint32_t ro = OFF(h[H_DATA_DATA]);
    uint32_t data_end = OFF(h[H_DATA_END]);
    uint32_t got_s = OFF(h[H_GOT_START]), got_e = OFF(h[H_GOT_END]);
    uint32_t bss_s = OFF(h[H_BSS_START]), bss_e = OFF(h[H_BSS_END]);
    uint32_t rel_s = OFF(h[H_REL_START]), rel_e = OFF(h[H_REL_END]);

    if (ro % align != 0 || rel_s % 4 != 0 || (rel_e - rel_s) % 4 != 0)
        return MOTA_ERR_NBIN_ALIGN;
    if (ro < hdr_words * 4u || ro > len)
        return MOTA_ERR_NBIN_HEADER;
    /* RW segment order: data, (init/fini), GOT, bss. */
    if (!(data_end <= got_s && got_s <= got_e && got_e <= bss_s && bss_s <= bss_e))
        return MOTA_ERR_NBIN_OVERLAP;
    if (ro > MOTA_NBIN_MAX_RO || bss_e > MOTA_NBIN_MAX_RW)
        return MOTA_ERR_NBIN_SIZE_LIMIT;
    if ((uint64_t)ro + got_e > len)
        return MOTA_ERR_NBIN_TRUNCATED;
    if (rel_e < rel_s || rel_s < ro + got_e)
        return MOTA_ERR_NBIN_OVERLAP;
    if (rel_e > len)
        return MOTA_ERR_NBIN_TRUNCATED;
    /* ST's post-processor writes the REL table right after the data image,
     * which ends with the GOT, padded to 8 in the NPU family (st-reloc-format
     * 7.5, 9.3). Its start follows from the header: one taken on trust could
     * skip entries. (The end is proved by what follows the table.) */
    if (rel_s != round_up(ro + got_e, align))
        return MOTA_ERR_NBIN_REL_POSITION;

    in->ro_size = ro;
    /* the data image is what the file holds before the REL table, up to .bss: a legacy .bss aligned
     * beyond the GOT starts after a gap the file does not hold, zeroed with it */
    in->data_copy = bss_s < rel_s - ro ? bss_s : rel_s - ro;
    in->rw_size = bss_e;
    in->got_off = got_s;
    in->got_end = got_e;
    in->rel_off = rel_s;
    in->rel_count = (rel_e - rel_s) / 4;
    return MOTA_OK;
}

static int parse_pools(const uint8_t *img, struct mota_nbin_info *in, uint32_t params_start, uint32_t data_end)
{
    uint32_t off = OFF(params_start);
    if (TAG(params_start) != TAG_RAM_NPU)
        return MOTA_ERR_NBIN_TAG;
    if (off % 4 != 0)
        return MOTA_ERR_NBIN_ALIGN;
    /* ST's linker script puts .params_desc right after .network_rt_ctx and
     * ends .data proper (data_end) with it (st-reloc-format 4.1, 7.4): a
     * pointer moved inside the data would read other words as records. */
    if (off != in->ctx_off + 4u * in->rtctx_words)
        return MOTA_ERR_NBIN_DESC_POSITION;
    for (unsigned i = 0; i <= MOTA_NBIN_MAX_POOLS; i++) {
        uint64_t rec = (uint64_t)off + 20u * i;
        if (rec + 20 > data_end)
            return MOTA_ERR_NBIN_DESC_UNTERMINATED;
        const uint8_t *p = img + in->ro_size + rec;
        uint32_t name = mota_get32(p), flags = mota_get32(p + 4);
        if (name == 0 || flags == 0) {
            in->n_pools = i;
            return MOTA_OK;
        }
        if (i == MOTA_NBIN_MAX_POOLS)
            return MOTA_ERR_NBIN_DESC_TOO_MANY; /* ten records without a terminator */
        struct mota_nbin_pool *pool = &in->pools[i];
        int ret = get_string(img, in->ro_size, name, MOTA_NBIN_MAX_NAME, &pool->name, &pool->name_len);
        if (ret != MOTA_OK)
            return ret;
        pool->flags = flags;
        pool->foff = mota_get32(p + 8);
        pool->dst = mota_get32(p + 12);
        pool->size = mota_get32(p + 16);
        if (pool->size > MOTA_NBIN_MAX_EXTERNAL)
            return MOTA_ERR_NBIN_SIZE_LIMIT; /* and round8(size) cannot wrap */
        uint32_t type = flags >> 24, dtype = (flags >> 16) & 0xff, attr = (flags >> 8) & 0xff, id = flags & 0xff;
        if (type < 1 || type > 3 || dtype < 1 || dtype > 3 || attr > 7)
            return MOTA_ERR_NBIN_DESC;
        /* RELOC pools: id 0 is the read-only param pool, id 1 the R/W external one, one of each (a second
         * is a generator error to ST; to an installer, a second base for the same values) */
        if (type == 1 && (id > 1 || (id == 0 && (dtype != 1 || (attr & 2)))))
            return MOTA_ERR_NBIN_DESC;
        for (unsigned k = 0; type == 1 && k < i; k++)
            if (in->pools[k].flags >> 24 == 1 && (in->pools[k].flags & 0xff) == id)
                return MOTA_ERR_NBIN_DESC;
        if (type == 1 && id == 0)
            in->params0_off = pool->foff;
    }
    return MOTA_ERR_NBIN_DESC_TOO_MANY;
}

/* The first n header words; the file must hold them all. */
static int read_header(const uint8_t *img, size_t len, uint32_t *h, unsigned n)
{
    if (len < n * 4u)
        return MOTA_ERR_NBIN_TRUNCATED;
    for (unsigned i = 0; i < n; i++)
        h[i] = mota_get32(img + 4 * i);
    return MOTA_OK;
}

/* 24-word header: word 23 is ctx (RAM tag); 26-word: word 23 is a
 * function (flash tag, Thumb bit) and word 25 is ctx. */
static int npu_header_words(const uint32_t *h, struct mota_nbin_info *in)
{
    if (TAG(h[23]) == TAG_RAM_NPU)
        in->header_words = 24;
    else if (TAG(h[23]) == TAG_FLASH && (h[23] & 1) && TAG(h[25]) == TAG_RAM_NPU)
        in->header_words = 26;
    else
        return MOTA_ERR_NBIN_VARIANT;
    return MOTA_OK;
}

/* Entry points, from word 13 up to the ctx word that ends the header:
 * Thumb functions past the header, inside the code (ro_size: check_geometry). */
static int read_entries(const uint32_t *h, struct mota_nbin_info *in)
{
    for (unsigned i = H_ENTRIES; i < in->header_words - 1; i++) {
        if (TAG(h[i]) != TAG_FLASH || !(h[i] & 1) || OFF(h[i]) >= in->ro_size || OFF(h[i]) < in->header_words * 4u)
            return MOTA_ERR_NBIN_ENTRY;
        in->entries[i - H_ENTRIES] = h[i];
    }
    in->n_entries = in->header_words - 1 - H_ENTRIES;
    return MOTA_OK;
}

/* Runtime context: in .data, read from the file image. Its first min_words
 * words must lie in the data image the file holds; *rc points at them. */
static int locate_rtctx(const uint8_t *img, uint32_t ctx, unsigned min_words, struct mota_nbin_info *in,
                        const uint8_t **rc)
{
    uint32_t ctx_off = OFF(ctx);
    in->ctx_off = ctx_off;
    if (ctx_off % 4 != 0)
        return MOTA_ERR_NBIN_ALIGN;
    if ((uint64_t)ctx_off + min_words * 4u > in->data_copy)
        return MOTA_ERR_NBIN_RTCTX;
    *rc = img + in->ro_size + ctx_off;
    in->rtctx_file_off = in->ro_size + ctx_off;
    return MOTA_OK;
}

/* The model's C name (rt_ctx word 5, inside the words locate_rtctx bounded):
 * a non-empty string in the code. */
static int read_c_name(const uint8_t *img, const uint8_t *rc, struct mota_nbin_info *in)
{
    int ret = get_string(img, in->ro_size, mota_get32(rc + 20), MOTA_NBIN_MAX_NAME, &in->c_name, &in->c_name_len);
    if (ret != MOTA_OK)
        return ret;
    return in->c_name_len == 0 ? MOTA_ERR_NBIN_STRING : MOTA_OK;
}

/* The NPU runtime context (LL_ATON): version, names, external memory sizes. */
static int read_npu_rtctx(const uint8_t *img, uint32_t ctx, struct mota_nbin_info *in)
{
    const uint8_t *rc = NULL;
    int ret = locate_rtctx(img, ctx, 16, in, &rc);
    if (ret != MOTA_OK)
        return ret; /* past here rc's first 16 words are in the data image */
    in->rt_version = mota_get32(rc + 40);
    in->rt_version_extra = mota_get32(rc + 44);
    if ((in->rt_version >> 24) != 1)
        return MOTA_ERR_NBIN_RTCTX;
    /* LL_ATON 1.1.0 has 16 words; 1.1.1 and later add rt_c_struct_sizes. */
    in->rtctx_words = (in->rt_version & 0xFFFFFF00u) >= 0x01010100u ? 17 : 16;
    if (in->header_words == 26 && in->rtctx_words != 17)
        return MOTA_ERR_NBIN_RTCTX;
    if ((uint64_t)in->ctx_off + in->rtctx_words * 4u > in->data_copy)
        return MOTA_ERR_NBIN_RTCTX;
    if ((ret = read_c_name(img, rc, in)) != MOTA_OK)
        return ret;
    ret = get_string(img, in->ro_size, mota_get32(rc + 36), MOTA_NBIN_MAX_DESC, &in->rt_desc, &in->rt_desc_len);
    if (ret != MOTA_OK)
        return ret;
    in->acts_size = mota_get32(rc + 24);
    in->params_size = mota_get32(rc + 28);
    in->params_bin_size = mota_get32(rc + 48);
    in->params_bin_crc32 = mota_get32(rc + 52);
    in->struct_sizes = in->rtctx_words == 17 ? mota_get32(rc + 56) : 0; /* word 16 bounded just above */
    uint32_t ext_ram = mota_get32(rc + 32);
    if (in->acts_size > MOTA_NBIN_MAX_EXTERNAL || in->params_size > MOTA_NBIN_MAX_EXTERNAL ||
        ext_ram > MOTA_NBIN_MAX_EXTERNAL || in->params_bin_size > MOTA_NBIN_MAX_EXTERNAL)
        return MOTA_ERR_NBIN_SIZE_LIMIT;
    in->ext_ram_size = round_up(ext_ram, 8);
    return MOTA_OK;
}

/* ST's generator gives every param initialiser a pool that loads it
 * (RELOC or COPY, PARAM or MIXED): declared params without one are
 * never put where the code reads them. */
static int check_params_carried(const struct mota_nbin_info *in)
{
    if (in->params_size == 0 && in->params_bin_size == 0)
        return MOTA_OK;
    bool carried = false;
    for (unsigned i = 0; i < in->n_pools; i++) {
        uint32_t type = in->pools[i].flags >> 24, dtype = (in->pools[i].flags >> 16) & 0xff;
        carried |= (type == 1 || type == 2) && (dtype == 1 || dtype == 3);
    }
    return carried ? MOTA_OK : MOTA_ERR_NBIN_DESC_PARAMS;
}

/* Params blob: appended at params_offset (untagged), or a split file.
 * The REL table ends where the file (split) or the params blob begins,
 * after zero padding to 8: an end moved back leaves entries in the pad. */
static int place_npu_params(const uint8_t *img, size_t len, uint32_t poff, struct mota_nbin_info *in)
{
    uint32_t rel_end = in->rel_off + 4 * in->rel_count; /* <= len: check_geometry */
    in->has_params = in->params_bin_size > 0;
    in->params_len = in->params_bin_size;
    if (poff == 0) {
        in->split = in->has_params;
        in->image_len = round_up(rel_end, 8);
        if (in->image_len > len)
            in->image_len = (uint32_t)len; /* padding may be absent in a split file */
        if (len != in->image_len)
            return MOTA_ERR_NBIN_TRAILING; /* unknown bytes after the image */
        if (!all_zero(img + rel_end, in->image_len - rel_end))
            return MOTA_ERR_NBIN_REL_POSITION;
        return MOTA_OK;
    }
    if (poff % 8 != 0)
        return MOTA_ERR_NBIN_ALIGN;
    if (poff < rel_end)
        return MOTA_ERR_NBIN_OVERLAP;
    if (poff != round_up(rel_end, 8))
        return MOTA_ERR_NBIN_REL_POSITION;
    if (poff > len || len - poff < in->params_bin_size)
        return MOTA_ERR_NBIN_PARAMS_SIZE;
    if (!all_zero(img + rel_end, poff - rel_end))
        return MOTA_ERR_NBIN_REL_POSITION;
    in->params_offset = poff;
    in->params_len = (uint32_t)(len - poff); /* may include EC blobs */
    in->image_len = (uint32_t)len;
    in->split = false;
    in->has_params = true;
    return MOTA_OK;
}

static int parse_npu(const uint8_t *img, size_t len, struct mota_nbin_info *in)
{
    uint32_t h[26];
    int ret = MOTA_ERR_NBIN_TRUNCATED;

    if ((ret = read_header(img, len, h, 26)) != MOTA_OK)
        return ret;
    if ((ret = npu_header_words(h, in)) != MOTA_OK)
        return ret;
    if ((ret = check_geometry(img, len, h, in->header_words, TAG_RAM_NPU, 8, in)) != MOTA_OK)
        return ret;
    if ((ret = read_entries(h, in)) != MOTA_OK)
        return ret;
    if ((ret = read_npu_rtctx(img, h[in->header_words - 1], in)) != MOTA_OK)
        return ret;
    if ((ret = parse_pools(img, in, h[H_PARAMS_START], OFF(h[H_DATA_END]))) != MOTA_OK)
        return ret;
    if ((ret = check_params_carried(in)) != MOTA_OK)
        return ret;
    in->exec_ram_xip = round_up(in->rw_size, 8);
    in->exec_ram_copy = in->exec_ram_xip + round_up(in->ro_size, 8);
    return place_npu_params(img, len, h[H_PARAMS_OFFSET], in);
}

/* Whether a legacy rt_ctx has ST's CRC-unit callback words (acquire_crc_cb, release_crc_cb: words 13
 * and 14, X-CUBE-AI 7.2's 60-byte rt_ctx; an older runtime's 52 bytes end before them). ST's link puts
 * rt_ctx last in .data and mota's builder first, whole: words that lie before data_end and are NULL in
 * the file are those slots. Bounded: data_end <= got_start, inside the data image. */
static bool legacy_crc_slots(const uint8_t *rc, uint32_t ctx_off, uint32_t data_end)
{
    return (uint64_t)ctx_off + 60u <= data_end && mota_get32(rc + 52) == 0 && mota_get32(rc + 56) == 0;
}

/* The legacy runtime context: its C name and the sizes of activations and weights. */
static int read_legacy_rtctx(const uint8_t *img, uint32_t ctx, uint32_t data_end, struct mota_nbin_info *in)
{
    const uint8_t *rc = NULL;
    int ret = locate_rtctx(img, ctx, 8, in, &rc);
    if (ret != MOTA_OK)
        return ret; /* past here rc's first 8 words are in the data image */
    in->rtctx_words = 8;
    in->crc_callbacks = legacy_crc_slots(rc, in->ctx_off, OFF(data_end));
    if ((ret = read_c_name(img, rc, in)) != MOTA_OK)
        return ret;
    in->acts_size = mota_get32(rc + 24);
    in->params_size = mota_get32(rc + 28);
    /* the activations go to exec RAM after the RW segment; weights to flash */
    if (in->acts_size > MOTA_NBIN_MAX_RW || in->params_size > MOTA_NBIN_MAX_EXTERNAL)
        return MOTA_ERR_NBIN_SIZE_LIMIT;
    return MOTA_OK;
}

/* Weights: appended between weights_start and weights_end, or a split file.
 * The file ends with them, or with the REL table. */
static int place_legacy_weights(size_t len, uint32_t ws, uint32_t we, struct mota_nbin_info *in)
{
    uint32_t rel_end = in->rel_off + 4 * in->rel_count;
    in->has_params = in->params_size > 0;
    in->params_len = in->params_size;
    if (ws == 0) {
        /* weights not in the file (ST's loader ignores weights_end then; an
         * end without a start is no file ST's post-processor writes) */
        if (we != 0)
            return MOTA_ERR_NBIN_WEIGHTS;
        in->split = in->has_params;
        in->image_len = rel_end;
    } else {
        if (TAG(ws) != TAG_FLASH || TAG(we) != TAG_FLASH)
            return MOTA_ERR_NBIN_TAG;
        if (OFF(ws) % 4 != 0)
            return MOTA_ERR_NBIN_ALIGN;
        if (OFF(we) < OFF(ws) || OFF(ws) < rel_end)
            return MOTA_ERR_NBIN_OVERLAP;
        /* the weights follow the REL table without padding (st-reloc-format 9.3) */
        if (OFF(ws) != rel_end)
            return MOTA_ERR_NBIN_REL_POSITION;
        if (OFF(we) > len)
            return MOTA_ERR_NBIN_TRUNCATED;
        if (ws == we) {
            /* ST's loader: equal bounds mean the weights are not in the file */
            in->split = in->has_params;
            in->image_len = rel_end;
        } else {
            if (OFF(we) - OFF(ws) != in->params_size)
                return MOTA_ERR_NBIN_PARAMS_SIZE;
            in->params_offset = OFF(ws);
            in->params_len = OFF(we) - OFF(ws);
            in->image_len = OFF(we);
            in->split = false;
        }
    }
    if (len != in->image_len)
        return len < in->image_len ? MOTA_ERR_NBIN_TRUNCATED : MOTA_ERR_NBIN_TRAILING;
    return MOTA_OK;
}

static int parse_legacy(const uint8_t *img, size_t len, struct mota_nbin_info *in)
{
    uint32_t h[25];
    int ret = MOTA_ERR_NBIN_TRUNCATED;

    if ((ret = read_header(img, len, h, 25)) != MOTA_OK)
        return ret;
    in->header_words = 25;
    if (TAG(h[24]) != TAG_RAM_LEGACY)
        return MOTA_ERR_NBIN_VARIANT;
    if ((ret = check_geometry(img, len, h, 25, TAG_RAM_LEGACY, 4, in)) != MOTA_OK)
        return ret;
    if ((ret = read_entries(h, in)) != MOTA_OK)
        return ret;
    if ((ret = read_legacy_rtctx(img, h[24], h[H_DATA_END], in)) != MOTA_OK)
        return ret;
    /* ST's figures (rt_ram_xip/copy) round to 4 and leave the activations to
     * the application; mota's installer rounds each part to 8 and gives the
     * model its activations after its RW segment, so the device needs this */
    in->exec_ram_xip = round_up(in->rw_size, 8) + round_up(in->acts_size, 8);
    in->exec_ram_copy = in->exec_ram_xip + round_up(in->ro_size, 8);
    return place_legacy_weights(len, h[H_WEIGHTS_START], h[H_WEIGHTS_END], in);
}

int mota_nbin_parse(const uint8_t *img, size_t len, struct mota_nbin_info *info)
{
    int ret = MOTA_ERR_NBIN_MAGIC;

    if (img == NULL || info == NULL)
        return MOTA_ERR_ARG;
    memset(info, 0, sizeof(*info));
    if (len < 8)
        return len >= 4 && mota_get32(img) == MOTA_NBIN_MAGIC ? MOTA_ERR_NBIN_TRUNCATED : MOTA_ERR_NBIN_MAGIC;
    if (mota_get32(img) != MOTA_NBIN_MAGIC)
        return MOTA_ERR_NBIN_MAGIC;
    if (len > 0x0FFFFFFFu) /* offsets are 28-bit */
        return MOTA_ERR_NBIN_HEADER;
    info->flags = mota_get32(img + 4);
    decode_flags(info);
    if (info->reloc_major == MOTA_NBIN_FAMILY_NPU && info->reloc_minor == 0) {
        info->family = MOTA_NBIN_FAMILY_NPU;
        if ((info->flags >> 23) & 1) /* reserved */
            return MOTA_ERR_NBIN_FLAGS;
    } else if (info->reloc_major == MOTA_NBIN_FAMILY_LEGACY && info->reloc_minor == 0) {
        info->family = MOTA_NBIN_FAMILY_LEGACY;
        if ((info->flags >> 20) & 0xf) /* reserved for the post-processor */
            return MOTA_ERR_NBIN_FLAGS;
    } else {
        return MOTA_ERR_NBIN_VERSION;
    }
    /* a core or toolchain outside the known tables: no code we can vouch for */
    if (cpu_lookup(info->cpu_part) == NULL)
        return MOTA_ERR_NBIN_CPU;
    if (toolchain_lookup(info->toolchain) == NULL)
        return MOTA_ERR_NBIN_TOOLCHAIN;
    if (info->family == MOTA_NBIN_FAMILY_NPU)
        ret = parse_npu(img, len, info);
    else
        ret = parse_legacy(img, len, info);
    if (ret == MOTA_OK && (info->float_abi > 2 || (info->flags >> 15) & 1))
        ret = MOTA_ERR_NBIN_FLAGS;
    return ret;
}

int mota_nbin_params_crc_span(const struct mota_nbin_info *info, size_t len, size_t *off, size_t *n)
{
    size_t blob_off = 0;
    *off = *n = 0;
    if (info == NULL)
        return MOTA_ERR_ARG;
    if (info->family == MOTA_NBIN_FAMILY_LEGACY) {
        if (!info->split)
            return MOTA_OK; /* weights_start/end already bound the appended weights */
        return len == info->params_size ? MOTA_OK : MOTA_ERR_NBIN_PARAMS_SIZE;
    }
    if (!info->split && info->params_offset == 0)
        return MOTA_OK; /* no params at all */
    if (!info->split) {
        /* params is the whole image; the blob is what follows params_offset */
        if (len < info->params_offset)
            return MOTA_ERR_ARG;
        blob_off = info->params_offset;
    }
    /* EC blobs (--ecblob-in-params) may precede the pools; the CRC covers the
     * last params_bin_size bytes, which therefore must end the blob. */
    if (len - blob_off < info->params_bin_size)
        return MOTA_ERR_NBIN_PARAMS_SIZE;
    *off = len - info->params_bin_size;
    *n = info->params_bin_size;
    return MOTA_OK;
}

int mota_nbin_check_params(const struct mota_nbin_info *info, const uint8_t *params, size_t len)
{
    size_t off, n;
    if (info == NULL || (params == NULL && len > 0))
        return MOTA_ERR_ARG;
    int ret = mota_nbin_params_crc_span(info, len, &off, &n);
    if (ret != MOTA_OK || n == 0)
        return ret;
    return mota_crc32(0, params + off, n) == info->params_bin_crc32 ? MOTA_OK : MOTA_ERR_NBIN_PARAMS_CRC;
}

/* A tagged value (GOT word or REL target) must point into a segment the
 * installer gives the model, at an offset inside that segment. */
static int check_value(struct mota_nbin_info *in, uint32_t v, int tag_err, int range_err)
{
    uint32_t off = OFF(v), limit;
    if (v == 0)
        return MOTA_OK;
    in->value_tags |= (uint16_t)(1u << TAG(v)); /* the installer's base table needs these tags only */
    switch (TAG(v)) {
    case TAG_FLASH: limit = in->ro_size; break;
    case TAG_RAM_NPU:
        if (in->family != MOTA_NBIN_FAMILY_NPU)
            return tag_err;
        limit = in->rw_size;
        break;
    case 0x8u: /* legacy RAM, NPU params_0: the blob from its RELOC PARAM pool on (whose offset
                * check_pool_ranges bounds) */
        if (in->family != MOTA_NBIN_FAMILY_NPU)
            limit = in->rw_size;
        else
            limit = in->params0_off <= in->params_len ? in->params_len - in->params0_off : 0;
        break;
    case 0x9u: /* NPU params_1: external RAM */
        if (in->family != MOTA_NBIN_FAMILY_NPU)
            return tag_err;
        limit = in->ext_ram_size;
        break;
    default: /* 0 with an offset, 0xA (params_2: no loader supports it), anything else */ return tag_err;
    }
    return off <= limit ? MOTA_OK : range_err;
}

/* GOT: every word relocatable; the three .got.plt words reserved zero.
 * The GOT lies in the data image the file holds (check_geometry). */
static int check_got(const uint8_t *img, struct mota_nbin_info *in)
{
    int ret = MOTA_ERR_NBIN_GOT;
    uint32_t ngot = (in->got_end - in->got_off) / 4;
    const uint8_t *got = img + in->ro_size + in->got_off;
    for (uint32_t i = 0; i < ngot; i++) {
        uint32_t v = mota_get32(got + 4 * i);
        if (ngot >= 3 && i >= ngot - 3) {
            if (v != 0)
                return MOTA_ERR_NBIN_GOT_PLT;
            continue;
        }
        if ((ret = check_value(in, v, MOTA_ERR_NBIN_GOT, MOTA_ERR_NBIN_GOT_RANGE)) != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* REL: strictly ascending words of initialised data (never the GOT,
 * which its own pass relocates), or of code for clang's COPY-only flow.
 * The table itself lies in the file (check_geometry); each word it names
 * is bounded here before it is read. */
static int check_rel(const uint8_t *img, struct mota_nbin_info *in)
{
    int ret = MOTA_ERR_NBIN_REL_ENTRY;
    const uint32_t ram_tag = in->family == MOTA_NBIN_FAMILY_NPU ? TAG_RAM_NPU : TAG_RAM_LEGACY;
    uint32_t prev_ram = 0, prev_rom = 0;
    bool any_ram = false, any_rom = false;
    in->rel_code_entries = 0;
    for (uint32_t i = 0; i < in->rel_count; i++) {
        uint32_t e = mota_get32(img + in->rel_off + 4 * i), off = OFF(e), v;
        if (off % 4 != 0)
            return MOTA_ERR_NBIN_REL_ENTRY;
        if (TAG(e) == ram_tag) {
            if ((uint64_t)off + 4 > in->data_copy || (off + 4 > in->got_off && off < in->got_end) ||
                (any_ram && off <= prev_ram))
                return MOTA_ERR_NBIN_REL_ENTRY;
            prev_ram = off;
            any_ram = true;
            v = mota_get32(img + in->ro_size + off);
        } else if (TAG(e) == TAG_FLASH && in->family == MOTA_NBIN_FAMILY_NPU && in->rtctx_words == 17) {
            if ((uint64_t)off + 4 > in->ro_size || off < in->header_words * 4u || (any_rom && off <= prev_rom))
                return MOTA_ERR_NBIN_REL_ENTRY;
            prev_rom = off;
            any_rom = true;
            in->rel_code_entries++;
            v = mota_get32(img + off);
        } else {
            return MOTA_ERR_NBIN_REL_ENTRY;
        }
        if ((ret = check_value(in, v, MOTA_ERR_NBIN_REL_TARGET, MOTA_ERR_NBIN_REL_TARGET)) != MOTA_OK)
            return ret;
    }
    return MOTA_OK;
}

/* Pool initialisers come from the params blob and must lie inside it. */
static int check_pool_ranges(const struct mota_nbin_info *in)
{
    for (unsigned i = 0; i < in->n_pools; i++) {
        const struct mota_nbin_pool *p = &in->pools[i];
        uint32_t type = p->flags >> 24, dtype = (p->flags >> 16) & 0xff;
        uint64_t need = (uint64_t)p->foff + round_up(p->size, 8);
        bool reads_blob = type == 2 || (type == 1 && dtype == 3); /* COPY, or RELOC MIXED */
        if ((reads_blob && need > in->params_len) || (type == 1 && dtype == 1 && p->foff > in->params_len))
            return MOTA_ERR_NBIN_DESC_RANGE;
    }
    return MOTA_OK;
}

int mota_nbin_validate(const uint8_t *img, size_t len, struct mota_nbin_info *in)
{
    int ret = mota_nbin_parse(img, len, in);
    if (ret != MOTA_OK)
        return ret;
    if ((ret = check_got(img, in)) != MOTA_OK)
        return ret;
    if ((ret = check_rel(img, in)) != MOTA_OK)
        return ret;
    return check_pool_ranges(in);
}

/* ---- inputs and outputs (docs/model-abi.md, "Inputs and outputs") ---- */

#define IO_ENTRY_OUTPUTS 7u  /* header word 20: the output buffer-info table's getter */
#define IO_ENTRY_INPUTS 8u   /* header word 21: the input one's */
#define IO_BUFFER_RECORD 56u /* sizeof(LL_Buffer_InfoTypeDef), one-byte enums (rt_c_struct_sizes 0x..38) */
#define IO_RTCTX_ITF 64u     /* rt_ctx word 16 of the 17-word context: itf_network */
#define IO_MODEL_INFO 16u    /* struct mota_model_info: name, input_size, output_size, activations_size */
#define IO_LL_ATON_1_1_1 0x01010100u

struct io_walk {
    const uint8_t *img;
    const struct mota_nbin_info *in;
    uint32_t rel; /* REL cursor: each run of queries comes in ascending RW offsets */
};

/* The RW word at off is patched by the loader: a REL entry names it (check_rel proved the table in the
 * file, its RAM entries strictly ascending). */
static bool io_relocated(struct io_walk *w, uint32_t off)
{
    const struct mota_nbin_info *in = w->in;
    for (; w->rel < in->rel_count; w->rel++) {
        uint32_t e = mota_get32(w->img + in->rel_off + 4 * w->rel);
        if (TAG(e) == TAG_RAM_NPU && OFF(e) >= off)
            return OFF(e) == off;
    }
    return false;
}

/* The RW offset of the table a getter entry returns (through its GOT slot); *present false for NULL. */
static int io_table(const struct io_walk *w, unsigned entry, uint32_t *table, bool *present)
{
    const struct mota_nbin_info *in = w->in;
    const struct mota_thumb_code code = {w->img, in->header_words * 4u, in->ro_size};
    uint32_t lit = 0;
    bool null = false;
    if (!mota_thumb_getter(&code, OFF(in->entries[entry]) - 1, &lit, &null))
        return MOTA_ERR_NBIN_EPOCH_GETTER;
    *present = !null;
    if (null)
        return MOTA_OK;
    if (lit % 4 != 0 || lit < in->got_off || lit >= in->got_end)
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    uint32_t v = mota_get32(w->img + in->ro_size + lit); /* the GOT lies in the file: check_geometry */
    if (TAG(v) != TAG_RAM_NPU || OFF(v) % 4 != 0 || OFF(v) >= in->got_off)
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    *table = OFF(v);
    return MOTA_OK;
}

/* n dimensions at v (the field at RW offset off): words in the code or in the RW data image. */
static int io_dims(struct io_walk *w, uint32_t off, uint32_t v, unsigned n, uint32_t *dims)
{
    const struct mota_nbin_info *in = w->in;
    const uint8_t *at = NULL;
    if (n > MOTA_NBIN_IO_MAX_DIMS)
        return MOTA_ERR_NBIN_EPOCH_BUFFER;
    if (n == 0)
        return MOTA_OK;
    if (v == 0 || !io_relocated(w, off))
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    if (TAG(v) == TAG_FLASH && OFF(v) >= in->header_words * 4u && (uint64_t)OFF(v) + 4u * n <= in->ro_size)
        at = w->img + OFF(v);
    else if (TAG(v) == TAG_RAM_NPU && (uint64_t)OFF(v) + 4u * n <= in->data_copy)
        at = w->img + in->ro_size + OFF(v);
    else
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    for (unsigned i = 0; i < n; i++)
        dims[i] = mota_get32(at + 4 * i);
    return MOTA_OK;
}

/* One LL_Buffer_InfoTypeDef at RW offset off (inside the data below the GOT): name at 0, offset_start
 * at 8, offset_end at 12, mem_shape at 28, mem_ndims at 32 (u16), type at 35, ndims at 39, shape at 44. */
static int io_record(struct io_walk *w, uint32_t off, struct mota_nbin_tensor *t)
{
    const uint8_t *p = w->img + w->in->ro_size + off;
    uint32_t start = mota_get32(p + 8), end = mota_get32(p + 12), shape[MOTA_NBIN_IO_MAX_DIMS];
    unsigned mem_ndims = mota_get16(p + 32), ndims = p[39];
    int ret = MOTA_ERR_NBIN_EPOCH_BUFFER;
    if (!io_relocated(w, off))
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    if ((ret = get_string(w->img, w->in->ro_size, mota_get32(p), MOTA_NBIN_IO_MAX_NAME, &t->name, &t->name_len)) !=
        MOTA_OK)
        return ret;
    if (t->name_len == 0)
        t->name = NULL;
    if (end < start)
        return MOTA_ERR_NBIN_EPOCH_BUFFER;
    if (end - start > MOTA_NBIN_MAX_EXTERNAL)
        return MOTA_ERR_NBIN_SIZE_LIMIT;
    t->bytes = end - start;
    t->format = mota_nbin_format_name(p[35], w->in->rt_version);
    /* the shape as the user sees it in memory (mem_shape), else the buffer's */
    if ((ret = io_dims(w, off + 28, mota_get32(p + 28), mem_ndims, t->dims)) != MOTA_OK ||
        (ret = io_dims(w, off + 44, mota_get32(p + 44), ndims, shape)) != MOTA_OK)
        return ret;
    t->ndims = mem_ndims;
    if (mem_ndims == 0) {
        memcpy(t->dims, shape, 4u * ndims);
        t->ndims = ndims;
    }
    return MOTA_OK;
}

/* One buffer-info table at RW offset table, up to its NULL name. */
static int io_walk_table(struct io_walk *w, uint32_t table, struct mota_nbin_tensor *ts, unsigned *n, uint64_t *bytes)
{
    w->rel = 0;
    for (uint32_t off = table;; off += IO_BUFFER_RECORD) {
        int ret = MOTA_ERR_NBIN_EPOCH_UNTERMINATED;
        if ((uint64_t)off + IO_BUFFER_RECORD > w->in->got_off)
            return MOTA_ERR_NBIN_EPOCH_UNTERMINATED;
        if (mota_get32(w->img + w->in->ro_size + off) == 0)
            return MOTA_OK;
        if (*n >= MOTA_NBIN_IO_MAX)
            return MOTA_ERR_NBIN_EPOCH_TOO_MANY;
        if ((ret = io_record(w, off, &ts[*n])) != MOTA_OK)
            return ret;
        *bytes += ts[(*n)++].bytes;
    }
}

/* LL_ATON: the input (entry 21) and output (entry 20) buffer-info tables. */
static int io_tables(struct io_walk *w, struct mota_nbin_io *io)
{
    uint32_t tin = 0, tout = 0;
    bool pin = false, pout = false;
    int ret = io_table(w, IO_ENTRY_INPUTS, &tin, &pin);
    if (ret != MOTA_OK || (ret = io_table(w, IO_ENTRY_OUTPUTS, &tout, &pout)) != MOTA_OK)
        return ret;
    if (!pin && !pout) {
        io->source = MOTA_NBIN_IO_NONE; /* e.g. a CPU model of another ABI: no tables to read */
        return MOTA_OK;
    }
    /* the one LL_Buffer_InfoTypeDef layout mota reads (1.1.0 has no rt_c_struct_sizes to confirm it) */
    if (w->in->rtctx_words == 17 && (w->in->struct_sizes & 0xFF) != IO_BUFFER_RECORD)
        return MOTA_ERR_NBIN_EPOCH_BUFFER;
    if (pin && (ret = io_walk_table(w, tin, io->in, &io->n_in, &io->in_bytes)) != MOTA_OK)
        return ret;
    return pout ? io_walk_table(w, tout, io->out, &io->n_out, &io->out_bytes) : MOTA_OK;
}

/* mota's CPU ABI: rt_ctx's itf_network, relocated, points to struct mota_model_info in the RW data:
 * its name relocated, its three sizes plain numbers (where ST's NN_Interface_TypeDef, which itf_network
 * points to in an LL_ATON model, holds relocated function pointers), the name and activations rt_ctx's. */
static int io_cpu_abi(struct io_walk *w, struct mota_nbin_io *io)
{
    const struct mota_nbin_info *in = w->in;
    const char *name = NULL;
    size_t name_len = 0;
    if (in->rtctx_words != 17)
        return MOTA_ERR_NBIN_RTCTX;
    uint32_t itf = mota_get32(w->img + in->rtctx_file_off + IO_RTCTX_ITF), off = OFF(itf); /* word 16: parsed */
    w->rel = 0;
    if (TAG(itf) != TAG_RAM_NPU || !io_relocated(w, in->ctx_off + IO_RTCTX_ITF) || off % 4 != 0 ||
        (uint64_t)off + IO_MODEL_INFO > in->got_off)
        return MOTA_ERR_NBIN_RTCTX;
    const uint8_t *p = w->img + in->ro_size + off;
    w->rel = 0;
    if (!io_relocated(w, off) || io_relocated(w, off + 4) || io_relocated(w, off + 8) || io_relocated(w, off + 12))
        return MOTA_ERR_NBIN_RTCTX;
    int ret = get_string(w->img, in->ro_size, mota_get32(p), MOTA_NBIN_MAX_NAME, &name, &name_len);
    if (ret != MOTA_OK)
        return ret;
    if (name_len != in->c_name_len || memcmp(name, in->c_name, name_len) != 0 || mota_get32(p + 12) != in->acts_size)
        return MOTA_ERR_NBIN_RTCTX;
    io->in[0].bytes = mota_get32(p + 4);
    io->out[0].bytes = mota_get32(p + 8);
    if (io->in[0].bytes > MOTA_NBIN_MAX_EXTERNAL || io->out[0].bytes > MOTA_NBIN_MAX_EXTERNAL)
        return MOTA_ERR_NBIN_SIZE_LIMIT;
    io->n_in = io->n_out = 1;
    io->in_bytes = io->in[0].bytes;
    io->out_bytes = io->out[0].bytes;
    return MOTA_OK;
}

int mota_nbin_io(const uint8_t *img, size_t len, const struct mota_nbin_info *info, struct mota_nbin_io *io)
{
    static const char abi[] = MOTA_NBIN_CPU_ABI;
    int ret = MOTA_ERR_ARG;
    if (img == NULL || info == NULL || io == NULL || len < info->image_len || info->ro_size > len)
        return MOTA_ERR_ARG;
    memset(io, 0, sizeof(*io));
    if (info->family != MOTA_NBIN_FAMILY_NPU) {
        io->source = MOTA_NBIN_IO_RUN_TIME; /* the model's report (ai_rel_network_get_report) gives them */
        return MOTA_OK;
    }
    struct io_walk w = {img, info, 0};
    if (info->rt_desc_len >= sizeof(abi) - 1 && memcmp(info->rt_desc, abi, sizeof(abi) - 1) == 0) {
        io->source = MOTA_NBIN_IO_CPU_ABI;
        ret = io_cpu_abi(&w, io);
    } else {
        io->source = MOTA_NBIN_IO_TABLES;
        ret = io_tables(&w, io);
    }
    if (ret != MOTA_OK) { /* nothing half read */
        unsigned source = io->source;
        memset(io, 0, sizeof(*io));
        io->source = source;
    }
    return ret;
}

const char *mota_nbin_format_name(unsigned type, uint32_t rt_version)
{
    /* Buffer_DataType_TypeDef of LL_ATON 1.1.1 and later; 1.1.0 lacks the 2- and 4-bit types (2..5) */
    static const char *const names[] = {NULL,        "float32",    "uint2",   "int2",    "uint4",  "int4",
                                        "uint8",     "int8",       "uint16",  "int16",   "int32",  "int64",
                                        "string",    "bool",       "float16", "float64", "uint32", "uint64",
                                        "complex64", "complex128", "bfloat16"};
    if (type == 100)
        return "fxp";
    if (rt_version < IO_LL_ATON_1_1_1 && type >= 2)
        type += 4;
    return type < sizeof(names) / sizeof(names[0]) ? names[type] : NULL;
}

const char *mota_nbin_cpu_name(uint16_t part)
{
    const char *name = cpu_lookup(part);
    return name != NULL ? name : "unknown";
}

const char *mota_nbin_toolchain_name(unsigned toolchain)
{
    const char *name = toolchain_lookup(toolchain);
    return name != NULL ? name : "unknown";
}

const char *mota_nbin_float_abi_name(unsigned abi)
{
    switch (abi) {
    case 0: return "soft";
    case 1: return "softfp";
    case 2: return "hard";
    default: return "invalid";
    }
}
