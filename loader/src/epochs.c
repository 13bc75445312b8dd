/* SPDX-License-Identifier: Apache-2.0 */
/* Epoch report of a Neural-ART model, read statically: docs/model-abi.md, "Epoch blocks". */
#include "mota/epochs.h"

#include "mota/err.h"

#include "tags.h"
#include "thumb.h"

#include <string.h>

#define TAG_FLASH 0x2u
#define TAG_RAM 0x4u
#define TAG_PARAMS 0x8u

/* entry points, counted from header word 13 */
#define ENTRY_EPOCHS 6u   /* word 19: get_epoch_items */
#define ENTRY_OUTPUTS 7u  /* word 20: output buffers info */
#define ENTRY_INPUTS 8u   /* word 21: input buffers info */
#define ENTRY_INTERNAL 9u /* word 22: internal buffers info */

#define LL_ATON_1_1_1 0x01010100u
#define RECORD_DBG 48u    /* sizeof(EpochBlock_ItemTypeDef) with LL_ATON_EB_DBG_INFO */
#define RECORD_PLAIN 20u  /* without */
#define BUFFER_RECORD 56u /* sizeof(LL_Buffer_InfoTypeDef), 1-byte enums (rt_c_struct_sizes 0x..38) */
#define MAX_NAME 256u
#define FIRST_OP_SLOT 7u /* callback slots 0..6: assert, error, cache maintenance */
#define SW_NODE_GELU 83  /* the last NodeType, from LL_ATON 1.1.3 on */
#define MAX_CALLS 16u

#define KIND_BITS (MOTA_EPOCH_F_HW | MOTA_EPOCH_F_SW | MOTA_EPOCH_F_HYBRID)

struct ctx {
    const uint8_t *img;
    const struct mota_nbin_info *in;
    struct mota_thumb_code code;
    uint32_t limit; /* records lie in the RW data below the GOT */
    uint32_t rel;   /* REL cursor: queries come in ascending RW offsets per table */
};

/* The RW word at off is patched by the loader (a REL entry names it). */
static bool relocated(struct ctx *c, uint32_t off)
{
    const struct mota_nbin_info *in = c->in;
    for (; c->rel < in->rel_count; c->rel++) {
        uint32_t e = mota_get32(c->img + in->rel_off + 4 * c->rel);
        if (TAG(e) == TAG_RAM && OFF(e) >= off)
            return OFF(e) == off;
    }
    return false;
}

/* A pointer word of a table in RW data: 0, or relocated with an allowed tag. */
static int pointer(struct ctx *c, uint32_t off, uint32_t v)
{
    if (v == 0)
        return MOTA_OK;
    return relocated(c, off) ? MOTA_OK : MOTA_ERR_NBIN_EPOCH_POINTER;
}

/* A function pointer: Thumb code past the header. *fn its file offset (0: none). */
static int function(struct ctx *c, uint32_t off, uint32_t v, uint32_t *fn)
{
    *fn = 0;
    if (v == 0)
        return MOTA_OK;
    if (pointer(c, off, v) != MOTA_OK || TAG(v) != TAG_FLASH || !(v & 1) || OFF(v) - 1 < c->code.lo ||
        OFF(v) >= c->code.hi)
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    *fn = OFF(v) - 1;
    return MOTA_OK;
}

/* The table a getter entry returns: *table its RW offset, *present false for NULL. */
static int table_of(struct ctx *c, unsigned entry, uint32_t *table, bool *present)
{
    const struct mota_nbin_info *in = c->in;
    uint32_t lit = 0;
    bool null = false;
    if (!mota_thumb_getter(&c->code, OFF(in->entries[entry]) - 1, &lit, &null))
        return MOTA_ERR_NBIN_EPOCH_GETTER;
    *present = !null;
    if (null)
        return MOTA_OK;
    /* the literal is a GOT slot (check_got proved every GOT word's tag and range) */
    if (lit % 4 != 0 || lit < in->got_off || lit >= in->got_end)
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    uint32_t v = mota_get32(c->img + in->ro_size + lit);
    if (TAG(v) != TAG_RAM || OFF(v) % 4 != 0 || OFF(v) >= c->limit)
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    *table = OFF(v);
    return MOTA_OK;
}

/* Record size: rt_c_struct_sizes where the context has it, and the debug-info flag, agreeing. */
static int record_size(const struct mota_nbin_info *in, uint16_t *rs)
{
    *rs = in->dbg_info ? RECORD_DBG : RECORD_PLAIN;
    if (in->rtctx_words == 17 && ((in->struct_sizes >> 8) & 0xFF) != *rs)
        return MOTA_ERR_NBIN_EPOCH_RECORD_SIZE;
    return MOTA_OK;
}

static int check_blob(struct ctx *c, uint32_t off, uint32_t v)
{
    const struct mota_nbin_info *in = c->in;
    if (pointer(c, off, v) != MOTA_OK)
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    switch (TAG(v)) {
    case TAG_FLASH: return OFF(v) >= c->code.lo && OFF(v) < in->ro_size ? MOTA_OK : MOTA_ERR_NBIN_EPOCH_POINTER;
    case TAG_RAM: return OFF(v) < in->rw_size ? MOTA_OK : MOTA_ERR_NBIN_EPOCH_POINTER;
    case TAG_PARAMS: return OFF(v) < in->params_len ? MOTA_OK : MOTA_ERR_NBIN_EPOCH_POINTER;
    default: return MOTA_ERR_NBIN_EPOCH_POINTER;
    }
}

/* Flags: known bits only, one kind, a blob flag with an address and a hardware kind. */
static int check_flags(const struct mota_nbin_info *in, uint16_t f, uint32_t blob, uint8_t *kind)
{
    uint16_t known = in->rt_version >= LL_ATON_1_1_1 ? 0x1FF : 0xFF;
    uint16_t k = f & KIND_BITS;
    if ((f & ~known) || (f & MOTA_EPOCH_F_LAST) || (k & (k - 1)) || k == 0)
        return MOTA_ERR_NBIN_EPOCH_FLAGS;
    if (((f & MOTA_EPOCH_F_BLOB) != 0) != (blob != 0) || ((f & MOTA_EPOCH_F_BLOB) && k != MOTA_EPOCH_F_HW) ||
        ((f & MOTA_EPOCH_F_ENCRYPTED) && !(f & MOTA_EPOCH_F_BLOB)))
        return MOTA_ERR_NBIN_EPOCH_FLAGS;
    *kind = (f & MOTA_EPOCH_F_BLOB)    ? MOTA_EPOCH_BLOB
            : k == MOTA_EPOCH_F_HW     ? MOTA_EPOCH_HW
            : k == MOTA_EPOCH_F_HYBRID ? MOTA_EPOCH_HYBRID
                                       : MOTA_EPOCH_SW;
    return MOTA_OK;
}

/* Hybrid: the library operations its functions call through the callback stubs. */
static void name_hybrid(const struct ctx *c, struct mota_epoch_block *b)
{
    const struct mota_nbin_info *in = c->in;
    uint32_t fns[2] = {b->start_fn, b->end_fn}, targets[MAX_CALLS];
    for (unsigned f = 0; f < 2; f++) {
        unsigned n = fns[f] ? mota_thumb_calls(&c->code, fns[f], targets, MAX_CALLS) : 0;
        for (unsigned i = 0; i < n && b->n_ops < MOTA_EPOCH_MAX_OPS; i++) {
            uint32_t got = 0;
            unsigned slot = 0;
            if (!mota_thumb_callback_stub(&c->code, targets[i], &got, &slot) || got % 4 != 0 || got < in->got_off ||
                got >= in->got_end)
                continue;
            /* the stub reads the callback table of the model's own rt_ctx */
            if (mota_get32(c->img + in->ro_size + got) != (TAG_RAM << 28 | in->ctx_off))
                continue;
            if (slot >= FIRST_OP_SLOT && mota_epochs_callback_name(slot, in->rt_version) != NULL)
                b->ops[b->n_ops++] = (uint8_t)slot;
        }
    }
}

/* SW: the kernel's NodeType, the first byte its function stores into the kernel's info struct. */
static void name_sw(const struct ctx *c, struct mota_epoch_block *b)
{
    uint32_t fns[2] = {b->end_fn, b->start_fn};
    b->sw_node = MOTA_EPOCH_SW_UNKNOWN;
    for (unsigned f = 0; f < 2 && b->sw_node == MOTA_EPOCH_SW_UNKNOWN; f++) {
        uint8_t v = 0;
        if (fns[f] && mota_thumb_first_struct_byte(&c->code, fns[f], &v) &&
            mota_epochs_sw_name(v, c->in->rt_version) != NULL)
            b->sw_node = v;
    }
}

static int decode_block(struct ctx *c, uint32_t off, uint16_t rs, struct mota_epoch_block *b)
{
    const uint8_t *p = c->img + c->in->ro_size + off;
    int ret = MOTA_ERR_NBIN_EPOCH_FLAGS;
    b->flags = mota_get16(p + 16);
    b->blob = mota_get32(p + 8);
    b->wait_mask = mota_get32(p + 12);
    if ((ret = check_flags(c->in, b->flags, b->blob, &b->kind)) != MOTA_OK)
        return ret;
    if ((ret = function(c, off, mota_get32(p), &b->start_fn)) != MOTA_OK ||
        (ret = function(c, off + 4, mota_get32(p + 4), &b->end_fn)) != MOTA_OK)
        return ret;
    if (b->blob != 0 && (ret = check_blob(c, off + 8, b->blob)) != MOTA_OK)
        return ret;
    if (rs == RECORD_DBG) {
        b->first = (int16_t)mota_get16(p + 18);
        b->last = (int16_t)mota_get16(p + 20);
        b->in_mask = mota_get32(p + 24);
        b->out_mask = mota_get32(p + 28);
        b->est_npu_cycles = (uint64_t)mota_get32(p + 36) << 32 | mota_get32(p + 32);
        b->est_total_cycles = (uint64_t)mota_get32(p + 44) << 32 | mota_get32(p + 40);
        if (b->first < 0 || b->last < b->first || (b->kind != MOTA_EPOCH_BLOB && b->last != b->first))
            return MOTA_ERR_NBIN_EPOCH_NUMBERS;
    }
    if (b->kind == MOTA_EPOCH_SW) {
        name_sw(c, b);
        return MOTA_OK;
    }
    name_hybrid(c, b);
    /* a hardware block that calls a runtime-library operation runs it on the CPU: its flags lie */
    return b->kind != MOTA_EPOCH_HYBRID && b->n_ops > 0 ? MOTA_ERR_NBIN_EPOCH_FLAGS : MOTA_OK;
}

/* Epochs: a group of blocks from one with epoch_start to one with epoch_end. */
struct groups {
    bool open, blob, hybrid, sw, hw;
    int32_t first, last, prev_last;
};

static int group_block(struct groups *g, const struct mota_epoch_block *b, bool dbg)
{
    if (b->flags & MOTA_EPOCH_F_START) {
        if (g->open)
            return MOTA_ERR_NBIN_EPOCH_FLAGS;
        *g = (struct groups){.open = true, .first = b->first, .last = b->last, .prev_last = g->prev_last};
        if (dbg && g->first <= g->prev_last)
            return MOTA_ERR_NBIN_EPOCH_NUMBERS; /* epochs ascend */
    } else if (!g->open) {
        return MOTA_ERR_NBIN_EPOCH_FLAGS; /* a block outside any epoch */
    } else if (dbg && (b->first < g->first || (b->kind != MOTA_EPOCH_BLOB && b->first != g->last))) {
        return MOTA_ERR_NBIN_EPOCH_NUMBERS;
    }
    g->blob |= b->kind == MOTA_EPOCH_BLOB;
    g->hw |= b->kind == MOTA_EPOCH_HW;
    g->hybrid |= b->kind == MOTA_EPOCH_HYBRID;
    g->sw |= b->kind == MOTA_EPOCH_SW;
    /* a blob's epochs are the epoch controller's alone: CPU work in its group would be counted
     * in epochs the report cannot tell apart (and, without debug info, not at all) */
    if (g->blob && (g->hw || g->hybrid || g->sw))
        return MOTA_ERR_NBIN_EPOCH_FLAGS;
    if (b->last > g->last)
        g->last = b->last;
    return MOTA_OK;
}

static int group_close(struct groups *g, bool dbg, struct mota_epoch_summary *s)
{
    uint32_t n = 1;
    g->open = false;
    if (g->blob) {
        if (!dbg)
            s->epochs_known = false;
        n = dbg ? (uint32_t)(g->last - g->first + 1) : 0;
    } else if (dbg && g->last != g->first) {
        return MOTA_ERR_NBIN_EPOCH_NUMBERS;
    }
    g->prev_last = g->last;
    s->epochs += n;
    if (g->sw && !g->hybrid && !g->hw && !g->blob)
        s->sw_epochs += n;
    else if (g->sw || g->hybrid)
        s->hybrid_epochs += n;
    else
        s->npu_epochs += n;
    return MOTA_OK;
}

static void count_kind(struct mota_epoch_summary *s, uint8_t kind)
{
    s->blocks++;
    switch (kind) {
    case MOTA_EPOCH_BLOB: s->blob++; break;
    case MOTA_EPOCH_HW: s->hw++; break;
    case MOTA_EPOCH_HYBRID: s->hybrid++; break;
    default: s->sw++; break;
    }
}

/* The terminator: flags last_eb, every other byte zero. */
static bool terminator(const uint8_t *p, uint16_t rs)
{
    for (uint16_t i = 0; i < rs; i++)
        if (p[i] != (i == 16 ? MOTA_EPOCH_F_LAST : 0))
            return false;
    return true;
}

static int walk_blocks(struct ctx *c, struct mota_epoch_block *blocks, size_t max, struct mota_epoch_report *r)
{
    struct groups g = {.prev_last = -1};
    struct mota_epoch_summary *s = &r->sum;
    uint32_t off = r->table_off - c->in->ro_size;
    s->epochs_known = true;
    c->rel = 0;
    for (uint32_t i = 0;; i++, off += r->record_size) {
        struct mota_epoch_block b = {0};
        int ret = MOTA_ERR_NBIN_EPOCH_UNTERMINATED;
        if ((uint64_t)off + r->record_size > c->limit)
            return MOTA_ERR_NBIN_EPOCH_UNTERMINATED;
        const uint8_t *p = c->img + c->in->ro_size + off;
        if (mota_get16(p + 16) & MOTA_EPOCH_F_LAST) {
            if (!terminator(p, r->record_size))
                return MOTA_ERR_NBIN_EPOCH_FLAGS;
            break;
        }
        if (i >= MOTA_EPOCH_MAX_BLOCKS || (blocks != NULL && i >= max))
            return MOTA_ERR_NBIN_EPOCH_TOO_MANY;
        b.index = (uint16_t)i;
        if ((ret = decode_block(c, off, r->record_size, &b)) != MOTA_OK)
            return ret;
        if ((ret = group_block(&g, &b, r->dbg)) != MOTA_OK)
            return ret;
        if ((b.flags & MOTA_EPOCH_F_END) && (ret = group_close(&g, r->dbg, s)) != MOTA_OK)
            return ret;
        count_kind(s, b.kind);
        if (blocks != NULL)
            blocks[i] = b;
        r->n_blocks = i + 1;
    }
    if (g.open)
        return MOTA_ERR_NBIN_EPOCH_FLAGS; /* an epoch never ended */
    if (!s->epochs_known)
        s->epochs = s->npu_epochs = 0;
    return MOTA_OK;
}

/* A shape array: n words in the code or in the RW data image. */
static int shape(struct ctx *c, uint32_t off, uint32_t v, unsigned n, uint32_t *out)
{
    const struct mota_nbin_info *in = c->in;
    const uint8_t *at = NULL;
    if (n > MOTA_EPOCH_MAX_DIMS)
        return MOTA_ERR_NBIN_EPOCH_BUFFER;
    if (n == 0)
        return MOTA_OK;
    if (v == 0 || pointer(c, off, v) != MOTA_OK)
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    if (TAG(v) == TAG_FLASH && OFF(v) >= c->code.lo && (uint64_t)OFF(v) + 4u * n <= in->ro_size)
        at = c->img + OFF(v);
    else if (TAG(v) == TAG_RAM && (uint64_t)OFF(v) + 4u * n <= in->data_copy)
        at = c->img + in->ro_size + OFF(v);
    else
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    for (unsigned i = 0; i < n; i++)
        out[i] = mota_get32(at + 4 * i);
    return MOTA_OK;
}

/* A NUL-terminated name in the code. */
static int name(struct ctx *c, uint32_t off, uint32_t v, struct mota_epoch_buffer *b)
{
    if (pointer(c, off, v) != MOTA_OK || TAG(v) != TAG_FLASH || OFF(v) < c->code.lo || OFF(v) >= c->in->ro_size)
        return MOTA_ERR_NBIN_EPOCH_POINTER;
    size_t room = c->in->ro_size - OFF(v);
    const uint8_t *s = c->img + OFF(v), *nul = memchr(s, 0, room < MAX_NAME + 1 ? room : MAX_NAME + 1);
    if (nul == NULL)
        return MOTA_ERR_NBIN_EPOCH_BUFFER;
    b->name = (const char *)s;
    b->name_len = (size_t)(nul - s);
    return MOTA_OK;
}

static int decode_buffer(struct ctx *c, uint32_t off, struct mota_epoch_buffer *b)
{
    const uint8_t *p = c->img + c->in->ro_size + off;
    int ret = MOTA_ERR_NBIN_EPOCH_BUFFER;
    if ((ret = name(c, off, mota_get32(p), b)) != MOTA_OK)
        return ret;
    b->epoch = mota_get16(p + 22);
    b->mem_ndims = (uint8_t)(mota_get16(p + 32) > 0xFF ? 0xFF : mota_get16(p + 32));
    b->type = p[35];
    b->ndims = p[39];
    if ((ret = shape(c, off + 28, mota_get32(p + 28), b->mem_ndims, b->mem_shape)) != MOTA_OK)
        return ret;
    return shape(c, off + 44, mota_get32(p + 44), b->ndims, b->shape);
}

/* One buffer table (name NULL ends it); appends to bufs. */
static int walk_buffers(struct ctx *c, uint32_t table, uint8_t io, struct mota_epoch_buffer *bufs, size_t max,
                        struct mota_epoch_report *r)
{
    c->rel = 0;
    for (uint32_t off = table;; off += BUFFER_RECORD) {
        struct mota_epoch_buffer b = {.io = io, .block = -1};
        int ret = MOTA_ERR_NBIN_EPOCH_BUFFER;
        if ((uint64_t)off + BUFFER_RECORD > c->limit)
            return MOTA_ERR_NBIN_EPOCH_UNTERMINATED;
        if (mota_get32(c->img + c->in->ro_size + off) == 0)
            return MOTA_OK;
        if (r->n_buffers >= MOTA_EPOCH_MAX_BUFFERS || (bufs != NULL && r->n_buffers >= max))
            return MOTA_ERR_NBIN_EPOCH_TOO_MANY;
        if ((ret = decode_buffer(c, off, &b)) != MOTA_OK)
            return ret;
        if (bufs != NULL)
            bufs[r->n_buffers] = b;
        r->n_buffers++;
    }
}

/* Inputs, outputs, internal buffers, with the block each one's epoch falls in. */
static int decode_buffers(struct ctx *c, const struct mota_epoch_block *blocks, struct mota_epoch_buffer *bufs,
                          size_t max, struct mota_epoch_report *r)
{
    static const struct {
        unsigned entry;
        uint8_t io;
    } tables[] = {
        {ENTRY_INPUTS, MOTA_EPOCH_INPUT}, {ENTRY_OUTPUTS, MOTA_EPOCH_OUTPUT}, {ENTRY_INTERNAL, MOTA_EPOCH_INTERNAL}};
    /* the one LL_Buffer_InfoTypeDef layout (the same in LL_ATON 1.1.0, 1.1.1 and 1.1.3; 1.1.0 has no
     * rt_c_struct_sizes to confirm it): another size leaves the buffers unknown */
    if (c->in->rtctx_words == 17 && (c->in->struct_sizes & 0xFF) != BUFFER_RECORD)
        return MOTA_OK;
    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
        uint32_t table = 0;
        bool present = false;
        int ret = table_of(c, tables[t].entry, &table, &present);
        if (ret == MOTA_ERR_NBIN_EPOCH_GETTER) {
            r->n_buffers = 0; /* a getter of another shape: buffers unknown, not wrong */
            r->internal_table = false;
            return MOTA_OK;
        }
        if (ret != MOTA_OK)
            return ret;
        if (present && (ret = walk_buffers(c, table, tables[t].io, bufs, max, r)) != MOTA_OK)
            return ret;
        r->internal_table |= present && tables[t].io == MOTA_EPOCH_INTERNAL;
    }
    r->buffers_known = true;
    for (size_t i = 0; bufs != NULL && blocks != NULL && r->dbg && i < r->n_buffers; i++)
        for (size_t k = 0; k < r->n_blocks && bufs[i].block < 0; k++)
            if (blocks[k].first <= bufs[i].epoch && bufs[i].epoch <= blocks[k].last)
                bufs[i].block = (int32_t)k;
    return MOTA_OK;
}

int mota_epochs_decode(const uint8_t *img, size_t len, const struct mota_nbin_info *info,
                       struct mota_epoch_block *blocks, size_t max_blocks, struct mota_epoch_buffer *bufs,
                       size_t max_bufs, struct mota_epoch_report *rep)
{
    int ret = MOTA_ERR_ARG;
    uint32_t table = 0;
    if (img == NULL || info == NULL || rep == NULL || len < info->image_len || info->ro_size > len)
        return MOTA_ERR_ARG;
    memset(rep, 0, sizeof(*rep));
    if (info->family != MOTA_NBIN_FAMILY_NPU)
        return MOTA_ERR_NBIN_EPOCH_FAMILY;
    struct ctx c = {
        .img = img, .in = info, .code = {img, info->header_words * 4u, info->ro_size}, .limit = info->got_off};
    rep->dbg = info->dbg_info;
    rep->rt_version = info->rt_version;
    if ((ret = table_of(&c, ENTRY_EPOCHS, &table, &rep->present)) != MOTA_OK)
        return ret;
    if (!rep->present)
        return MOTA_OK; /* mota's CPU models: no table, and no struct sizes to agree with one */
    if ((ret = record_size(info, &rep->record_size)) != MOTA_OK)
        return ret;
    rep->table_off = info->ro_size + table;
    if ((ret = walk_blocks(&c, blocks, max_blocks, rep)) != MOTA_OK)
        return ret;
    return bufs != NULL ? decode_buffers(&c, blocks, bufs, max_bufs, rep) : MOTA_OK;
}

const char *mota_epochs_kind_name(unsigned kind)
{
    static const char *const names[] = {"", "blob", "hw", "hybrid", "sw"};
    return kind >= 1 && kind <= 4 ? names[kind] : "unknown";
}

const char *mota_epochs_runs_on(unsigned kind)
{
    return kind == MOTA_EPOCH_HYBRID ? "npu+cpu" : kind == MOTA_EPOCH_SW ? "cpu" : "npu";
}

const char *mota_epochs_flag_name(unsigned bit)
{
    static const char *const names[] = {"epoch_start", "epoch_end", "blob",     "last_eb",       "pure_hw",
                                        "pure_sw",     "hybrid",    "internal", "blob_encrypted"};
    return bit < sizeof(names) / sizeof(names[0]) ? names[bit] : NULL;
}

/* struct ll_aton_reloc_callback (ll_aton_reloc_network.h): the operation slots */
const char *mota_epochs_callback_name(unsigned slot, uint32_t rt_version)
{
    /* clang-format off */ /* a table packed by hand */
    static const char *const names[] = {
        "Concat", "Cast", "Softmax", "DMA_ImageToRow", "DMA_SpaceToDepth", "DMA_RowToImage", "DMA_DepthToSpace",
        "DMA_Outputs_Flat_Copy", "DMA_Outputs_Slice_SplitLike", "DMA_Outputs_Channel_Split_Aton",
        "DMA_Outputs_Channel_Split_Batched", "DMA_Pad_Memset", "DMA_Pad_Filling", "DMA_Transpose",
        "Async_Memcpy", "DMA_Pad_4Loop_Filling"}; /* slots 21, 22: LL_ATON 1.1.3 */
    unsigned last = (rt_version & 0xFFFFFF00u) >= 0x01010300u ? 22 : 20;
    return slot >= FIRST_OP_SLOT && slot <= last ? names[slot - FIRST_OP_SLOT] : NULL;
}

/* NodeType (ll_sw.h), suffixes of LL_SW_*, first letter upper case; LL_SW_GELU (83) appended in 1.1.3 */
const char *mota_epochs_sw_name(int node, uint32_t rt_version)
{
    static const char *const names[] = {
        "Conv", "Relu", "Prelu", "Thresholdedrelu", "Elu", "Selu", "Maxpool", "Minpool", "Avgpool", "Softmax",
        "Batchnorm", "Lrn", "Arithadd", "Arithsum", "Arithsub", "Arithmul", "Arithdiv", "Concat", "Split",
        "Slice", "Sigmoid", "Atan", "Atanh", "Acos", "Acosh", "Asin", "Asinh", "Tan", "Tanh", "Cos", "Cosh",
        "Sin", "Sinh", "Sqrt", "Ceil", "Gather", "Floor", "Exp", "Log", "Qlinearconv", "Quantizelinear",
        "Requantizelinear", "Dequantizelinear", "Qlinearmatmul", "Gemm", "Resize", "Erf", "Pow", "And", "Or",
        "Xor", "Equal", "Greater", "Less", "Greaterorequal", "Lessorequal", "Clip", "Hardsigmoid", "Hardmax",
        "Hardswish", "Swish", "Abs", "Instancenorm", "Reducesum", "Reducemin", "Reducemean", "Reducemax",
        "Reduceprod", "Softsign", "Softplus", "Lpnorm", "Argmin", "Argmax", "Matmul", "Min", "Max", "Neg",
        "Reciprocal", "Mod", "Round", "Reducelogsumexp", "Sign", "Tile", "Gelu"};
    /* clang-format on */
    int last = (rt_version & 0xFFFFFF00u) >= 0x01010300u ? SW_NODE_GELU : SW_NODE_GELU - 1;
    return node >= 0 && node <= last ? names[node] : NULL;
}

/* Buffer_DataType_TypeDef: LL_ATON 1.1.1 renumbered the enum of 1.1.0 */
const char *mota_epochs_type_name(unsigned type, uint32_t rt_version)
{
    static const char *const v111[] = {"UNDEFINED", "FLOAT",      "UINT2",   "INT2",   "UINT4",  "INT4",
                                       "UINT8",     "INT8",       "UINT16",  "INT16",  "INT32",  "INT64",
                                       "STRING",    "BOOL",       "FLOAT16", "DOUBLE", "UINT32", "UINT64",
                                       "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    static const char *const v110[] = {"UNDEFINED", "FLOAT",  "UINT8",     "INT8",       "UINT16",  "INT16",
                                       "INT32",     "INT64",  "STRING",    "BOOL",       "FLOAT16", "DOUBLE",
                                       "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    if (type == 100)
        return "FXP";
    if (rt_version >= LL_ATON_1_1_1)
        return type < sizeof(v111) / sizeof(v111[0]) ? v111[type] : "unknown";
    return type < sizeof(v110) / sizeof(v110[0]) ? v110[type] : "unknown";
}
