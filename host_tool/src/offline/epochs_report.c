/* SPDX-License-Identifier: Apache-2.0 */
/* mota info/inspect --epochs: which parts of a model run on the CPU, what they are, and whether an update made it worse. */
#include "epochs_report.h"
#include "payloads.h"

#include "common/files.h"
#include "common/json.h"
#include "common/util.h"

#include "mota/container.h"
#include "mota/err.h"
#include "mota/le.h"

#include <stdlib.h>
#include <string.h>

#define MAX_OP_NAMES 64u

int epochs_view_decode(struct epochs_view *v, const uint8_t *img, size_t len)
{
    int ret = mota_nbin_validate(img, len, &v->in);
    if (ret != MOTA_OK)
        return ret;
    if (v->blocks == NULL)
        v->blocks = calloc(MOTA_EPOCH_MAX_BLOCKS, sizeof(*v->blocks));
    if (v->bufs == NULL)
        v->bufs = calloc(MOTA_EPOCH_MAX_BUFFERS, sizeof(*v->bufs));
    if (v->blocks == NULL || v->bufs == NULL)
        return tool_fail(MOTA_ERR_IO, "out of memory"); /* printed: the caller exits EXIT_IO */
    ret = mota_epochs_decode(img, len, &v->in, v->blocks, MOTA_EPOCH_MAX_BLOCKS, v->bufs, MOTA_EPOCH_MAX_BUFFERS,
                             &v->rep);
    return ret == MOTA_ERR_NBIN_EPOCH_FAMILY ? MOTA_OK : ret; /* a legacy model: no table, all on the CPU */
}

void epochs_view_free(struct epochs_view *v)
{
    free(v->blocks);
    free(v->bufs);
    free(v->image);
    v->blocks = NULL;
    v->bufs = NULL;
    v->image = NULL;
}

int epochs_container_code(const uint8_t *buf, size_t len, const struct mota_enc_keys *keys, const uint8_t **code,
                          size_t *code_len, uint8_t **owned)
{
    static struct mota_verify_result r;
    const struct mota_component *c = NULL;
    const uint8_t *wire = NULL;
    size_t wire_len = 0;
    *owned = NULL;
    int ret = mota_envelope_decode(buf, len, &r.env);
    if (ret == MOTA_OK)
        ret = mota_manifest_decode(&r.env, &r.manifest);
    if (ret == MOTA_OK)
        ret = mota_container_check_payloads(buf, len, &r);
    if (ret == MOTA_OK)
        ret = tool_payload_find(buf, len, &r, MOTA_COMPONENT_CODE, &c, &wire, &wire_len);
    if (ret == MOTA_OK)
        ret = tool_payload_image(c, wire, wire_len, keys, code, code_len, owned);
    return ret;
}

int epochs_view_load(struct epochs_view *v, const char *path, struct mapped *m)
{
    const uint8_t *code = NULL;
    size_t code_len = 0;
    int ret = tool_map(path, m);
    if (ret != MOTA_OK)
        return ret;
    v->path = path;
    v->container = !(m->len >= 4 && mota_get32(m->data) == MOTA_NBIN_MAGIC);
    if (!v->container)
        return epochs_view_decode(v, m->data, m->len);
    if ((ret = epochs_container_code(m->data, m->len, NULL, &code, &code_len, &v->image)) != MOTA_OK)
        return ret;
    return epochs_view_decode(v, code, code_len);
}

/* ---- what the CPU does ---- */

struct opcount {
    const char *name;
    bool kernel; /* a software kernel (else a runtime-library operation) */
    unsigned n;
};

static void add_op(struct opcount *ops, size_t *n, const char *name, bool kernel)
{
    for (size_t i = 0; i < *n; i++) {
        if (strcmp(ops[i].name, name) == 0 && ops[i].kernel == kernel) {
            ops[i].n++;
            return;
        }
    }
    if (*n < MAX_OP_NAMES)
        ops[(*n)++] = (struct opcount){name, kernel, 1};
}

/* Every named CPU operation with its count, the most frequent first; unnamed ones count as "unknown". */
static size_t count_ops(const struct epochs_view *v, struct opcount *ops)
{
    size_t n = 0;
    for (size_t i = 0; i < v->rep.n_blocks; i++) {
        const struct mota_epoch_block *b = &v->blocks[i];
        if (b->kind == MOTA_EPOCH_HYBRID) {
            for (unsigned k = 0; k < b->n_ops; k++)
                add_op(ops, &n, mota_epochs_callback_name(b->ops[k], v->rep.rt_version), false);
            if (b->n_ops == 0)
                add_op(ops, &n, "unknown", false);
        } else if (b->kind == MOTA_EPOCH_SW) {
            const char *s = mota_epochs_sw_name(b->sw_node, v->rep.rt_version);
            add_op(ops, &n, s != NULL ? s : "unknown", true);
        }
    }
    for (size_t i = 1; i < n; i++) /* stable: ties keep their first appearance */
        for (size_t k = i; k > 0 && ops[k].n > ops[k - 1].n; k--) {
            struct opcount t = ops[k];
            ops[k] = ops[k - 1];
            ops[k - 1] = t;
        }
    return n;
}

static bool cpu_known(const struct mota_epoch_block *b)
{
    return b->kind == MOTA_EPOCH_HYBRID ? b->n_ops > 0 : b->kind == MOTA_EPOCH_SW ? b->sw_node >= 0 : true;
}

/* ---- text ---- */

static void epochs_range(char *out, size_t cap, const struct epochs_view *v, const struct mota_epoch_block *b)
{
    if (!v->rep.dbg)
        snprintf(out, cap, "%s", b->kind == MOTA_EPOCH_BLOB ? "?" : "1 epoch");
    else if (b->first == b->last)
        snprintf(out, cap, "%d", b->first);
    else
        snprintf(out, cap, "%d-%d", b->first, b->last);
}

static void cpu_work_text(FILE *f, const struct epochs_view *v, const struct mota_epoch_block *b)
{
    if (b->kind == MOTA_EPOCH_HYBRID) {
        for (unsigned k = 0; k < b->n_ops; k++)
            fprintf(f, "%s%s (runtime library, callback %u)", k ? ", " : "",
                    mota_epochs_callback_name(b->ops[k], v->rep.rt_version), b->ops[k]);
        if (b->n_ops == 0)
            fprintf(f, "unknown (no call into the runtime library recognised)");
    } else if (b->kind == MOTA_EPOCH_SW) {
        if (b->sw_node >= 0)
            fprintf(f, "%s (software kernel, LL_SW node type %d)", mota_epochs_sw_name(b->sw_node, v->rep.rt_version),
                    b->sw_node);
        else
            fprintf(f, "unknown software kernel (its code has a shape mota does not read)");
    } else {
        fprintf(f, "-");
    }
}

static void shape_text(char *out, size_t cap, const uint32_t *s, unsigned n)
{
    size_t at = 0;
    out[0] = 0;
    for (unsigned i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%s%u", i ? "x" : "", s[i]);
    if (n == 0)
        snprintf(out, cap, "-");
}

static void buffers_text(FILE *f, const struct epochs_view *v)
{
    static const char *const io[] = {"input", "output", "internal"};
    if (!v->rep.buffers_known) {
        fprintf(f, "buffers:       not decoded (the buffer-info tables of this LL_ATON version are not read)\n");
        return;
    }
    unsigned n[3] = {0, 0, 0};
    for (size_t i = 0; i < v->rep.n_buffers; i++)
        n[v->bufs[i].io]++;
    fprintf(f, "buffers:       %u input(s), %u output(s), %s\n", n[0], n[1],
            v->rep.internal_table ? "and the internal ones the model lists"
                                  : "no internal ones (the model carries no internal-buffer table)");
    if (v->rep.n_buffers > 0) /* the runtime's own view: its type names, its dimensions in memory order (the
                               * summary's shapes are the model's logical ones) */
        fprintf(f, "  %-8s %-28s %-8s %-18s %s\n", "kind", "name", "type", "memory layout", "first epoch");
    for (size_t i = 0; i < v->rep.n_buffers; i++) {
        const struct mota_epoch_buffer *b = &v->bufs[i];
        char shp[96], where[48];
        shape_text(shp, sizeof(shp), b->shape, b->ndims);
        if (b->block >= 0)
            snprintf(where, sizeof(where), "block %d", b->block);
        else
            snprintf(where, sizeof(where), "%s", v->rep.dbg ? "no block" : "block unknown");
        fprintf(f, "  %-8s %-28.*s %-8s %-18s epoch %u (%s)\n", io[b->io], (int)b->name_len, b->name,
                mota_epochs_type_name(b->type, v->rep.rt_version), shp, b->epoch, where);
    }
}

void epochs_summary_line(FILE *f, const struct mota_epoch_summary *s)
{
    fprintf(f, "%u blocks (%u blob, %u hw, %u hybrid, %u sw); ", s->blocks, s->blob, s->hw, s->hybrid, s->sw);
    if (s->epochs_known)
        fprintf(f, "%u epochs: %u NPU only, %u hybrid, %u CPU only", s->epochs, s->npu_epochs, s->hybrid_epochs,
                s->sw_epochs);
    else
        fprintf(f, "epochs: %u hybrid, %u CPU only, NPU count unknown (no debug info)", s->hybrid_epochs, s->sw_epochs);
}

static void summary_text(FILE *f, const struct epochs_view *v)
{
    const struct mota_epoch_summary *s = &v->rep.sum;
    fprintf(f, "summary:       %u blocks: %u epoch-controller blobs, %u hardware, %u hybrid, %u software\n", s->blocks,
            s->blob, s->hw, s->hybrid, s->sw);
    if (s->epochs_known)
        fprintf(f, "               %u epochs: %u on the NPU alone, %u hybrid (NPU and CPU), %u on the CPU alone\n",
                s->epochs, s->npu_epochs, s->hybrid_epochs, s->sw_epochs);
    else
        fprintf(f,
                "               epochs: %u hybrid (NPU and CPU), %u on the CPU alone; the epochs inside the\n"
                "               blobs are not counted: the model was built without LL_ATON_EB_DBG_INFO\n",
                s->hybrid_epochs, s->sw_epochs);
    fprintf(f,
            "               %u epochs use the CPU. Blocks and epochs are counted apart: one blob block\n"
            "               runs many epochs, and one epoch may take several blocks.\n",
            s->hybrid_epochs + s->sw_epochs);
}

static void ops_text(FILE *f, const struct epochs_view *v)
{
    struct opcount ops[MAX_OP_NAMES];
    size_t n = count_ops(v, ops);
    fprintf(f, "CPU work:      ");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%s x%u (%s)", i ? ", " : "", ops[i].name, ops[i].n, ops[i].kernel ? "kernel" : "library");
    fprintf(f, "%s\n", n == 0 ? "none: every epoch runs on the NPU" : "");
}

static void cycles_text(FILE *f, const struct epochs_view *v)
{
    uint64_t npu = 0, tot = 0;
    for (size_t i = 0; i < v->rep.n_blocks; i++) {
        npu += v->blocks[i].est_npu_cycles;
        tot += v->blocks[i].est_total_cycles;
    }
    if (!v->rep.dbg)
        fprintf(f, "cycles:        no estimates (they are debug info, absent from this build)\n");
    else if (npu == 0 && tot == 0)
        fprintf(f, "cycles:        no estimates (every record holds 0: the compiler did not fill them)\n");
    else
        fprintf(f, "cycles:        estimated %llu NPU cycles, %llu with memory penalties (compiler estimates)\n",
                (unsigned long long)npu, (unsigned long long)tot);
}

/* What ST documents about the CPU operations, per class (docs/model-abi.md cites each). */
static const struct {
    const char *op;
    const char *note;
} st_notes[] = {
#include "epochs_st_notes.inc"
};

static void st_note(FILE *f, const char *key, const char *label)
{
    for (size_t k = 0; k < sizeof(st_notes) / sizeof(st_notes[0]); k++)
        if (strcmp(st_notes[k].op, key) == 0)
            fprintf(f, "ST, %s:\n               %s\n", label, st_notes[k].note);
}

static void limits_text(FILE *f, const struct epochs_view *v)
{
    struct opcount ops[MAX_OP_NAMES];
    size_t n = count_ops(v, ops);
    bool library = false, kernel = false;
    fprintf(f, "not in the file: why the compiler kept an operator off the NPU (ST Edge AI Core decides it at\n"
               "               compile time; its report and the generated network.c name the nodes), which\n"
               "               model node each block came from (names exist only for the buffers above), and\n"
               "               how long the CPU work takes (estimates cover the NPU; measure it on the device).\n");
    for (size_t i = 0; i < n; i++) {
        library |= !ops[i].kernel;
        kernel |= ops[i].kernel;
    }
    st_note(f, "*", "in general");
    if (library)
        st_note(f, "@library", "on runtime-library operations (hybrid blocks)");
    if (kernel)
        st_note(f, "@kernel", "on software kernels (SW blocks)");
    for (size_t i = 0; i < n; i++)
        st_note(f, ops[i].name, ops[i].name);
}

void epochs_text(FILE *f, const struct epochs_view *v)
{
    const struct mota_epoch_report *r = &v->rep;
    if (!r->present && v->in.family != MOTA_NBIN_FAMILY_NPU) {
        fprintf(f, "epochs:        none: a legacy X-CUBE-AI model has no NPU epochs, it runs entirely on the CPU\n");
        return;
    }
    if (!r->present) {
        fprintf(f,
                "epochs:        none: get_epoch_items returns NULL, the model has no epoch table and runs\n"
                "               entirely on the CPU (%.*s)\n",
                (int)v->in.rt_desc_len, v->in.rt_desc);
        return;
    }
    fprintf(f, "epochs:        LL_ATON %u.%u.%u, table at file offset %u, %zu blocks in %u-byte records (%s)\n",
            r->rt_version >> 24, (r->rt_version >> 16) & 0xFF, (r->rt_version >> 8) & 0xFF, r->table_off, r->n_blocks,
            r->record_size, r->dbg ? "with debug info" : "no debug info: no epoch numbers");
    fprintf(f, "  block  epochs     kind    runs on  CPU work\n");
    for (size_t i = 0; i < r->n_blocks; i++) {
        const struct mota_epoch_block *b = &v->blocks[i];
        char range[24];
        epochs_range(range, sizeof(range), v, b);
        fprintf(f, "  %5zu  %-9s  %-6s  %-7s  ", i, range, mota_epochs_kind_name(b->kind),
                mota_epochs_runs_on(b->kind));
        cpu_work_text(f, v, b);
        fprintf(f, "\n");
    }
    buffers_text(f, v);
    summary_text(f, v);
    ops_text(f, v);
    cycles_text(f, v);
    limits_text(f, v);
}

/* ---- JSON ---- */

static void flags_json(struct json *j, uint16_t flags)
{
    json_arr(j, "flag_names");
    for (unsigned bit = 0; bit < 16; bit++)
        if (flags & (1u << bit))
            json_str(j, NULL, mota_epochs_flag_name(bit) ? mota_epochs_flag_name(bit) : "unknown");
    json_arr_end(j);
}

static void opt_uint(struct json *j, const char *key, bool have, uint64_t v)
{
    if (have)
        json_uint(j, key, v);
    else
        json_null(j, key);
}

static void blob_json(struct json *j, uint32_t blob)
{
    static const char *const seg[16] = {[2] = "code", [4] = "ram", [8] = "params"};
    if (blob == 0) {
        json_null(j, "blob");
        return;
    }
    json_obj(j, "blob");
    json_str(j, "segment", seg[blob >> 28]); /* the decoder admits these three tags only */
    json_uint(j, "offset", blob & 0x0FFFFFFFu);
    json_obj_end(j);
}

static void cpu_json(struct json *j, const struct epochs_view *v, const struct mota_epoch_block *b)
{
    json_arr(j, "cpu");
    for (unsigned k = 0; b->kind == MOTA_EPOCH_HYBRID && k < b->n_ops; k++) {
        json_obj(j, NULL);
        json_str(j, "via", "callback");
        json_uint(j, "slot", b->ops[k]);
        json_str(j, "name", mota_epochs_callback_name(b->ops[k], v->rep.rt_version));
        json_obj_end(j);
    }
    if (b->kind == MOTA_EPOCH_SW && b->sw_node >= 0) {
        json_obj(j, NULL);
        json_str(j, "via", "sw_kernel");
        json_uint(j, "node_type", (uint64_t)b->sw_node);
        json_str(j, "name", mota_epochs_sw_name(b->sw_node, v->rep.rt_version));
        json_obj_end(j);
    }
    json_arr_end(j);
    json_bool(j, "cpu_known", cpu_known(b));
}

static void block_json(struct json *j, const struct epochs_view *v, const struct mota_epoch_block *b)
{
    bool dbg = v->rep.dbg;
    json_obj(j, NULL);
    json_uint(j, "index", b->index);
    json_uint(j, "flags", b->flags);
    flags_json(j, b->flags);
    json_str(j, "kind", mota_epochs_kind_name(b->kind));
    json_str(j, "runs_on", mota_epochs_runs_on(b->kind));
    opt_uint(j, "first_epoch", dbg, (uint64_t)b->first);
    opt_uint(j, "last_epoch", dbg, (uint64_t)b->last);
    opt_uint(j, "epochs", dbg || b->kind != MOTA_EPOCH_BLOB, dbg ? (uint64_t)(b->last - b->first + 1) : 1);
    opt_uint(j, "start", b->start_fn != 0, b->start_fn);
    opt_uint(j, "end", b->end_fn != 0, b->end_fn);
    blob_json(j, b->blob);
    json_uint(j, "wait_mask", b->wait_mask);
    opt_uint(j, "in_stream_mask", dbg, b->in_mask);
    opt_uint(j, "out_stream_mask", dbg, b->out_mask);
    opt_uint(j, "estimated_npu_cycles", dbg, b->est_npu_cycles);
    opt_uint(j, "estimated_total_cycles", dbg, b->est_total_cycles);
    cpu_json(j, v, b);
    json_obj_end(j);
}

static void dims_json(struct json *j, const char *key, const uint32_t *d, unsigned n)
{
    json_arr(j, key);
    for (unsigned i = 0; i < n; i++)
        json_uint(j, NULL, d[i]);
    json_arr_end(j);
}

static void buffers_json(struct json *j, const struct epochs_view *v)
{
    static const char *const io[] = {"input", "output", "internal"};
    json_bool(j, "buffers_known", v->rep.buffers_known);
    json_arr(j, "buffers");
    for (size_t i = 0; i < v->rep.n_buffers; i++) {
        const struct mota_epoch_buffer *b = &v->bufs[i];
        json_obj(j, NULL);
        json_str(j, "io", io[b->io]);
        json_strn(j, "name", b->name, b->name_len);
        json_uint(j, "epoch", b->epoch);
        json_str(j, "type", mota_epochs_type_name(b->type, v->rep.rt_version));
        json_uint(j, "type_id", b->type);
        dims_json(j, "shape", b->shape, b->ndims);
        dims_json(j, "mem_shape", b->mem_shape, b->mem_ndims);
        opt_uint(j, "block", b->block >= 0, (uint64_t)b->block);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void ops_json(struct json *j, const struct epochs_view *v)
{
    struct opcount ops[MAX_OP_NAMES];
    size_t n = count_ops(v, ops);
    json_arr(j, "operations"); /* a library operation and a kernel may share a name: an array, not a map */
    for (size_t i = 0; i < n; i++) {
        json_obj(j, NULL);
        json_str(j, "name", ops[i].name);
        json_str(j, "via", ops[i].kernel ? "sw_kernel" : "callback");
        json_uint(j, "count", ops[i].n);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void summary_fields(struct json *j, const struct mota_epoch_summary *s)
{
    json_uint(j, "blocks", s->blocks);
    opt_uint(j, "epochs", s->epochs_known, s->epochs);
    json_uint(j, "blob_blocks", s->blob);
    json_uint(j, "hw_blocks", s->hw);
    json_uint(j, "hybrid_blocks", s->hybrid);
    json_uint(j, "sw_blocks", s->sw);
    opt_uint(j, "npu_epochs", s->epochs_known, s->npu_epochs);
    json_uint(j, "hybrid_epochs", s->hybrid_epochs);
    json_uint(j, "sw_epochs", s->sw_epochs);
    json_uint(j, "cpu_epochs", s->hybrid_epochs + s->sw_epochs);
}

void epochs_summary_json(struct json *j, const char *key, const struct mota_epoch_summary *s)
{
    if (s == NULL) {
        json_null(j, key);
        return;
    }
    json_obj(j, key);
    summary_fields(j, s);
    json_obj_end(j);
}

void epochs_json(struct json *j, const struct epochs_view *v)
{
    const struct mota_epoch_report *r = &v->rep;
    char ver[16];
    if (!r->present) {
        json_null(j, "epochs");
        return;
    }
    snprintf(ver, sizeof(ver), "%u.%u.%u", r->rt_version >> 24, (r->rt_version >> 16) & 0xFF,
             (r->rt_version >> 8) & 0xFF);
    json_obj(j, "epochs");
    json_str(j, "ll_aton", ver);
    json_uint(j, "record_size", r->record_size);
    json_bool(j, "debug_info", r->dbg);
    json_uint(j, "table_offset", r->table_off);
    json_arr(j, "blocks");
    for (size_t i = 0; i < r->n_blocks; i++)
        block_json(j, v, &v->blocks[i]);
    json_arr_end(j);
    buffers_json(j, v);
    json_obj(j, "summary");
    summary_fields(j, &r->sum);
    ops_json(j, v); /* counts of each named CPU operation */
    json_obj_end(j);
    json_obj_end(j);
}

/* ---- baseline ---- */

bool epochs_moved_to_cpu(const struct mota_epoch_summary *old, const struct mota_epoch_summary *cur)
{
    return cur->hybrid_epochs + cur->sw_epochs > old->hybrid_epochs + old->sw_epochs || cur->sw_epochs > old->sw_epochs;
}

/* CPU epochs fell, or software epochs became hybrid ones (the NPU took part of them) */
static bool moved_to_npu(const struct mota_epoch_summary *old, const struct mota_epoch_summary *cur)
{
    return epochs_moved_to_cpu(cur, old);
}

static unsigned op_n(const struct opcount *ops, size_t n, const struct opcount *want)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ops[i].name, want->name) == 0 && ops[i].kernel == want->kernel)
            return ops[i].n;
    return 0;
}

static void count_changes(void *ctx, const struct opcount *op, unsigned before, unsigned after)
{
    (void)op;
    *(unsigned *)ctx += before != after;
}

static void each_op(const struct epochs_view *old, const struct epochs_view *cur,
                    void (*f)(void *ctx, const struct opcount *op, unsigned before, unsigned after), void *ctx);

static bool same_ops(const struct epochs_view *old, const struct epochs_view *cur)
{
    unsigned changes = 0;
    each_op(old, cur, count_changes, &changes);
    return changes == 0;
}

/* Calls f for each operation of either side: before and after counts. */
static void each_op(const struct epochs_view *old, const struct epochs_view *cur,
                    void (*f)(void *ctx, const struct opcount *op, unsigned before, unsigned after), void *ctx)
{
    struct opcount a[MAX_OP_NAMES], b[MAX_OP_NAMES];
    size_t na = count_ops(old, a), nb = count_ops(cur, b);
    for (size_t i = 0; i < nb; i++)
        f(ctx, &b[i], op_n(a, na, &b[i]), b[i].n);
    for (size_t i = 0; i < na; i++)
        if (op_n(b, nb, &a[i]) == 0)
            f(ctx, &a[i], a[i].n, 0);
}

static void op_line(void *ctx, const struct opcount *op, unsigned before, unsigned after)
{
    if (before != after)
        fprintf((FILE *)ctx, "               %s (%s): %u -> %u (%+d)\n", op->name, op->kernel ? "kernel" : "library",
                before, after, (int)after - (int)before);
}

static void delta_line(FILE *f, const char *what, uint32_t before, uint32_t after)
{
    fprintf(f, "  %-26s %6u -> %-6u %+d\n", what, before, after, (int)after - (int)before);
}

/* Two versions of one model compare; two models of another family or CPU do not (an NPU model against an
 * unrelated CPU one would read as "better") */
static bool comparable(const struct epochs_view *old, const struct epochs_view *cur)
{
    return old->in.family == cur->in.family && old->in.cpu_part == cur->in.cpu_part;
}

void epochs_compare_text(FILE *f, const struct epochs_view *old, const struct epochs_view *cur)
{
    const struct mota_epoch_summary *a = &old->rep.sum, *b = &cur->rep.sum;
    fprintf(f, "baseline:      %s\n", old->path);
    if (!comparable(old, cur)) {
        fprintf(f,
                "verdict:       not comparable: the baseline is %s model for CPU part 0x%03x, this one %s model for "
                "0x%03x: compare two versions of one model\n",
                old->in.family == MOTA_NBIN_FAMILY_NPU ? "an NBIN" : "a legacy", old->in.cpu_part,
                cur->in.family == MOTA_NBIN_FAMILY_NPU ? "an NBIN" : "a legacy", cur->in.cpu_part);
        return;
    }
    if (!old->rep.present || !cur->rep.present) {
        fprintf(f, "verdict:       %s\n",
                old->rep.present   ? "WORSE: the update runs entirely on the CPU (no epoch table)"
                : cur->rep.present ? "better: the baseline ran entirely on the CPU (no epoch table)"
                                   : "neither model has an epoch table: both run on the CPU");
        return;
    }
    delta_line(f, "blocks", a->blocks, b->blocks);
    if (a->epochs_known && b->epochs_known) {
        delta_line(f, "epochs", a->epochs, b->epochs);
        delta_line(f, "epochs on the NPU alone", a->npu_epochs, b->npu_epochs);
    }
    delta_line(f, "hybrid epochs (NPU+CPU)", a->hybrid_epochs, b->hybrid_epochs);
    delta_line(f, "epochs on the CPU alone", a->sw_epochs, b->sw_epochs);
    delta_line(f, "epochs using the CPU", a->hybrid_epochs + a->sw_epochs, b->hybrid_epochs + b->sw_epochs);
    fprintf(f, "CPU work moved:%s\n", same_ops(old, cur) ? " none" : "");
    each_op(old, cur, op_line, f);
    if (epochs_moved_to_cpu(a, b))
        fprintf(f, "verdict:       WORSE: the update moves work from the NPU to the CPU%s\n",
                moved_to_npu(a, b) ? " (and some back)" : "");
    else if (moved_to_npu(a, b))
        fprintf(f, "verdict:       better: the update moves work from the CPU to the NPU\n");
    else if (!same_ops(old, cur))
        fprintf(f, "verdict:       CHANGED: as many epochs use the CPU, but it runs other operations (above)\n");
    else
        fprintf(f, "verdict:       no work moved to the CPU\n");
}

static void op_json(void *ctx, const struct opcount *op, unsigned before, unsigned after)
{
    struct json *j = ctx;
    json_obj(j, NULL);
    json_str(j, "name", op->name);
    json_str(j, "via", op->kernel ? "sw_kernel" : "callback");
    json_uint(j, "before", before);
    json_uint(j, "after", after);
    json_obj_end(j);
}

void epochs_compare_json(struct json *j, const struct epochs_view *old, const struct epochs_view *cur)
{
    const struct mota_epoch_summary *a = &old->rep.sum, *b = &cur->rep.sum;
    bool both = old->rep.present && cur->rep.present;
    json_obj(j, "baseline");
    json_str(j, "file", old->path);
    json_bool(j, "comparable", comparable(old, cur)); /* false: the fields below compare unrelated models */
    epochs_summary_json(j, "summary", old->rep.present ? a : NULL); /* null: no epoch table, all on the CPU */
    json_arr(j, "operations");
    if (both)
        each_op(old, cur, op_json, j);
    json_arr_end(j);
    json_bool(j, "moved_to_cpu", both ? epochs_moved_to_cpu(a, b) : old->rep.present && !cur->rep.present);
    json_bool(j, "moved_to_npu", both ? moved_to_npu(a, b) : !old->rep.present && cur->rep.present);
    json_bool(j, "cpu_work_changed", both ? !same_ops(old, cur) : old->rep.present != cur->rep.present);
    json_obj_end(j);
}

int epochs_policy(const struct mota_epoch_summary *s, long max_sw, long max_cpu)
{
    if (max_sw >= 0 && s->sw_epochs > (unsigned long)max_sw)
        return tool_fail(MOTA_ERR_NBIN_EPOCH_POLICY,
                         "%u epochs run on the CPU alone (software kernels); "
                         "--max-sw-epochs allows %ld",
                         s->sw_epochs, max_sw);
    if (max_cpu >= 0 && s->hybrid_epochs + s->sw_epochs > (unsigned long)max_cpu)
        return tool_fail(MOTA_ERR_NBIN_EPOCH_POLICY,
                         "%u epochs use the CPU (%u hybrid, %u software); "
                         "--max-cpu-epochs allows %ld",
                         s->hybrid_epochs + s->sw_epochs, s->hybrid_epochs, s->sw_epochs, max_cpu);
    return MOTA_OK;
}
