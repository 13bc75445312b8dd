/* SPDX-License-Identifier: Apache-2.0 */
/* info: what an ST model file (NBIN) holds and whether it is valid; with --epochs its epoch report. */
#include "cmds.h"
#include "epochs_report.h"

#include "common/files.h"
#include "common/json.h"
#include "common/util.h"

#include "mota/err.h"
#include "mota/nbin.h"

#include <getopt.h>
#include <string.h>

/* ---- inputs and outputs (mota_nbin_io); `mota status` mirrors these lines for a running model ---- */

/* What the model file says of its inputs and outputs: io, or the reason it cannot be read. */
struct info_io {
    int ret;
    struct mota_nbin_io io;
};

static bool io_known(const struct info_io *x)
{
    return x->ret == MOTA_OK && (x->io.source == MOTA_NBIN_IO_TABLES || x->io.source == MOTA_NBIN_IO_CPU_ABI);
}

/* A name from the file, its bytes outside printable ASCII shown as '?' (the JSON has them escaped). */
static void text_name(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        putchar(s[i] >= 0x20 && s[i] < 0x7F ? s[i] : '?');
}

/* "name: uint8 1x256x256x3 (196608 B)", leaving out what the file does not say. */
static void tensor_text(const struct mota_nbin_tensor *t)
{
    if (t->name != NULL) {
        text_name(t->name, t->name_len);
        printf(": ");
    }
    if (t->format != NULL)
        printf("%s ", t->format);
    for (unsigned i = 0; i < t->ndims; i++)
        printf("%s%u%s", i ? "x" : "", t->dims[i], i + 1 == t->ndims ? " " : "");
    printf("(%u B)", t->bytes);
}

/* "inputs:        1 tensor, 196608 bytes: ...": the count and bytes, then each tensor the file describes. */
static void tensors_text(const char *label, unsigned n, uint64_t bytes, const struct mota_nbin_tensor *ts)
{
    bool detail = false;
    printf("%s:%*s%u tensor%s, %llu bytes", label, (int)(14 - strlen(label)), "", n, n == 1 ? "" : "s",
           (unsigned long long)bytes);
    for (unsigned i = 0; i < n; i++)
        detail |= ts[i].name != NULL || ts[i].format != NULL || ts[i].ndims > 0;
    for (unsigned i = 0; detail && i < n; i++) {
        printf("%s", i ? "; " : ": ");
        tensor_text(&ts[i]);
    }
    printf("\n");
}

static void io_text(const struct info_io *x)
{
    const char *name = mota_err_name(x->ret);
    if (io_known(x)) {
        tensors_text("inputs", x->io.n_in, x->io.in_bytes, x->io.in);
        tensors_text("outputs", x->io.n_out, x->io.out_bytes, x->io.out);
    } else if (x->ret != MOTA_OK) {
        printf("inputs:        not read: %s in %s: %s\n", name != NULL ? name : "UNKNOWN",
               x->io.source == MOTA_NBIN_IO_CPU_ABI ? "the CPU-ABI interface (rt_ctx itf_network)"
                                                    : "the buffer-info tables (entries 20, 21)",
               mota_err_str(x->ret));
        printf("outputs:       not read: as the inputs\n");
    } else if (x->io.source == MOTA_NBIN_IO_RUN_TIME) {
        printf(
            "inputs:        reported by the model when it runs: `mota status` on a device that runs it shows them\n"
            "outputs:       reported by the model when it runs: `mota status` on a device that runs it shows them\n");
    } else {
        printf("inputs:        not in the file: no buffer-info tables, and not a mota CPU-ABI model\n"
               "outputs:       not in the file: no buffer-info tables, and not a mota CPU-ABI model\n");
    }
}

static void tensors_json(struct json *j, const char *key, unsigned n, const struct mota_nbin_tensor *ts)
{
    json_arr(j, key);
    for (unsigned i = 0; i < n; i++) {
        const struct mota_nbin_tensor *t = &ts[i];
        json_obj(j, NULL);
        if (t->name != NULL)
            json_strn(j, "name", t->name, t->name_len);
        else
            json_null(j, "name");
        json_uint(j, "bytes", t->bytes);
        if (t->format != NULL)
            json_str(j, "format", t->format);
        else
            json_null(j, "format");
        if (t->ndims > 0) {
            json_arr(j, "shape");
            for (unsigned k = 0; k < t->ndims; k++)
                json_uint(j, NULL, t->dims[k]);
            json_arr_end(j);
        } else {
            json_null(j, "shape");
        }
        json_obj_end(j);
    }
    json_arr_end(j);
}

/* "io": null (not in the file, or unreadable: io_reason says why), or the tensors and their bytes */
static void io_json(struct json *j, const struct info_io *x)
{
    if (io_known(x)) {
        json_obj(j, "io");
        tensors_json(j, "inputs", x->io.n_in, x->io.in);
        tensors_json(j, "outputs", x->io.n_out, x->io.out);
        json_uint(j, "input_bytes", x->io.in_bytes);
        json_uint(j, "output_bytes", x->io.out_bytes);
        json_obj_end(j);
    } else {
        json_null(j, "io");
    }
    if (x->ret != MOTA_OK && mota_err_name(x->ret) != NULL)
        json_str(j, "io_reason", mota_err_name(x->ret));
    else
        json_null(j, "io_reason");
}

/* ---- the report ---- */

static void info_text(const char *path, size_t len, const struct mota_nbin_info *in, const struct info_io *io)
{
    printf("file:          %s (%zu bytes)\n", path, len);
    printf("family:        %s, reloc runtime %u.%u, %u-word header\n",
           in->family == MOTA_NBIN_FAMILY_NPU ? "Neural-ART NPU (ll_aton)" : "legacy X-CUBE-AI (ai_reloc)",
           in->reloc_major, in->reloc_minor, in->header_words);
    printf("flags:         0x%08X: cpu 0x%03X %s, fpu %s, float ABI %s, toolchain %s", in->flags, in->cpu_part,
           mota_nbin_cpu_name(in->cpu_part), in->fpu ? "yes" : "no", mota_nbin_float_abi_name(in->float_abi),
           mota_nbin_toolchain_name(in->toolchain));
    if (in->family == MOTA_NBIN_FAMILY_NPU)
        printf(", secure %s, dbg-info %s, async %s", in->secure ? "yes" : "no", in->dbg_info ? "yes" : "no",
               in->async ? "yes" : "no");
    printf("\n");
    printf("c_name:        "); /* the file's text: escaped (tool_put_text) */
    tool_put_text(stdout, in->c_name, in->c_name_len);
    printf("\n");
    if (in->family == MOTA_NBIN_FAMILY_NPU) {
        printf("runtime:       ");
        tool_put_text(stdout, in->rt_desc, in->rt_desc_len);
        printf(", LL_ATON %u.%u.%u (extra %u), rt_ctx %u words\n", in->rt_version >> 24, (in->rt_version >> 16) & 0xff,
               (in->rt_version >> 8) & 0xff, in->rt_version_extra, in->rtctx_words);
        printf("params blob:   %u bytes, CRC-32 0x%08X\n", in->params_bin_size, in->params_bin_crc32);
    } else {
        /* what ai_rel_network_rt_get_info gives; the rest is in the model's report, made by its code */
        printf("runtime:       its own (X-CUBE-AI ai_rel_network API: create, init, run, report); entry points\n"
               "               create 0x%X init 0x%X init_v2 0x%X run 0x%X report 0x%X (file offsets)\n",
               in->entries[0] & 0x0FFFFFFFu, in->entries[1] & 0x0FFFFFFFu, in->entries[2] & 0x0FFFFFFFu,
               in->entries[3] & 0x0FFFFFFFu, in->entries[4] & 0x0FFFFFFFu);
        printf("model report:  name, tool version and compile date come from the model's own report\n"
               "               (ai_rel_network_get_report) when it runs: `mota status` shows them\n");
    }
    io_text(io);
    printf("sections:      RO %u, data copy %u, RW %u, GOT %u entries, REL %u entries\n", in->ro_size, in->data_copy,
           in->rw_size, (in->got_end - in->got_off) / 4, in->rel_count);
    const char *pw = in->family == MOTA_NBIN_FAMILY_NPU ? "params" : "weights";
    printf("sizes:         activations %u, %s %u, external RAM %u\n", in->acts_size, pw, in->params_size,
           in->ext_ram_size);
    printf("exec RAM:      XIP %u, COPY %u bytes%s\n", in->exec_ram_xip, in->exec_ram_copy,
           in->family == MOTA_NBIN_FAMILY_NPU ? "" : " (with the activations, each part rounded to 8)");
    printf("%s:%*s%s\n", pw, (int)(14 - strlen(pw)), "",
           !in->has_params ? "none"
           : in->split     ? "split (separate file)"
                           : "appended");
    for (unsigned i = 0; i < in->n_pools; i++) {
        const struct mota_nbin_pool *p = &in->pools[i];
        printf("pool %u:        %-10.*s flags 0x%08X foff %u dst 0x%08X size %u\n", i, (int)p->name_len, p->name,
               p->flags, p->foff, p->dst, p->size);
    }
    printf("verdict:       valid (header, GOT, REL table, descriptors and strings all in bounds)\n");
}

static void pools_json(struct json *j, const struct mota_nbin_info *in)
{
    json_arr(j, "pools");
    for (unsigned i = 0; i < in->n_pools; i++) {
        json_obj(j, NULL);
        json_strn(j, "name", in->pools[i].name, in->pools[i].name_len);
        json_uint(j, "flags", in->pools[i].flags);
        json_uint(j, "foff", in->pools[i].foff);
        json_uint(j, "dst", in->pools[i].dst);
        json_uint(j, "size", in->pools[i].size);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void info_json(struct json *jp, const char *path, size_t len, const struct mota_nbin_info *in,
                      const struct info_io *io)
{
    struct json j = *jp;
    json_str(&j, "file", path);
    json_bool(&j, "valid", true);
    json_uint(&j, "size", len);
    json_str(&j, "family", in->family == MOTA_NBIN_FAMILY_NPU ? "npu" : "legacy");
    json_uint(&j, "header_words", in->header_words);
    json_uint(&j, "flags", in->flags);
    json_uint(&j, "reloc_major", in->reloc_major);
    json_uint(&j, "reloc_minor", in->reloc_minor);
    json_uint(&j, "cpu_part", in->cpu_part);
    json_str(&j, "cpu", mota_nbin_cpu_name(in->cpu_part));
    json_bool(&j, "fpu", in->fpu);
    json_str(&j, "float_abi", mota_nbin_float_abi_name(in->float_abi));
    json_bool(&j, "secure", in->secure);
    json_bool(&j, "dbg_info", in->dbg_info);
    json_bool(&j, "async", in->async);
    json_str(&j, "toolchain", mota_nbin_toolchain_name(in->toolchain));
    json_strn(&j, "c_name", in->c_name, in->c_name_len);
    if (in->rt_desc)
        json_strn(&j, "runtime_desc", in->rt_desc, in->rt_desc_len);
    else
        json_null(&j, "runtime_desc");
    json_uint(&j, "rt_version", in->rt_version);
    if (in->family == MOTA_NBIN_FAMILY_NPU) {
        char v[16];
        snprintf(v, sizeof(v), "%u.%u.%u", in->rt_version >> 24, (in->rt_version >> 16) & 0xff,
                 (in->rt_version >> 8) & 0xff);
        json_str(&j, "ll_aton_version", v);
    } else {
        json_null(&j, "ll_aton_version");
    }
    json_uint(&j, "rtctx_words", in->rtctx_words);
    json_uint(&j, "ro_size", in->ro_size);
    json_uint(&j, "rw_size", in->rw_size);
    json_uint(&j, "got_entries", (in->got_end - in->got_off) / 4);
    json_uint(&j, "rel_entries", in->rel_count);
    json_uint(&j, "activations_size", in->acts_size);
    json_uint(&j, "params_size", in->params_size);
    json_uint(&j, "ext_ram_size", in->ext_ram_size);
    json_uint(&j, "params_bin_size", in->params_bin_size);
    json_uint(&j, "params_bin_crc32", in->params_bin_crc32);
    json_uint(&j, "exec_ram_xip", in->exec_ram_xip);
    json_uint(&j, "exec_ram_copy", in->exec_ram_copy);
    json_bool(&j, "split", in->split);
    io_json(&j, io);
    pools_json(&j, in);
    *jp = j;
}

struct info_opts {
    bool answered; /* --help: printed, nothing to show */
    bool json, epochs;
    const char *baseline, *path;
};

static int info_args(int argc, char **argv, struct info_opts *o)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"json", no_argument, 0, 'j'},
                                         {"epochs", no_argument, 0, 'e'},
                                         {"baseline", required_argument, 0, 'b'},
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hjeb:", opts, "info")) != -1) {
        if (c == 'h') {
            printf("usage: mota info [--json] [--epochs [--baseline OLD]] network_rel.bin\n\n"
                   "Decodes the header, runtime context and memory-pool descriptors of an ST\n"
                   "runtime-loadable model (both NBIN families) and checks every offset; names its\n"
                   "input and output tensors where the file holds them.\n"
                   "  --epochs          also the epoch report of a Neural-ART model: every epoch block,\n"
                   "                    where it runs (NPU, NPU+CPU, CPU), the CPU operation of hybrid and\n"
                   "                    software blocks, the input/output buffers, a summary\n"
                   "  --baseline OLD    with --epochs: what moved between NPU and CPU since OLD (a model\n"
                   "                    or a container)\n");
            o->answered = true;
            return EXIT_OK;
        } else if (c == 'j') {
            o->json = true;
        } else if (c == 'e') {
            o->epochs = true;
        } else if (c == 'b') {
            o->baseline = optarg;
        } else {
            return EXIT_USAGE;
        }
    }
    if (argc - optind != 1)
        return tool_usage_err("info", "takes exactly one model file");
    if (o->baseline != NULL && !o->epochs)
        return tool_usage_err("info", "--baseline compares epoch reports: it needs --epochs");
    o->path = argv[optind];
    return EXIT_OK;
}

/* The failure of a model or its baseline: the reason, in JSON too (with why a file cannot be read). */
static int info_fail(const struct info_opts *o, int ret, const char *path)
{
    char detail[640] = "", why[560];
    if (ret == MOTA_ERR_IO) { /* tool_map has said why on stderr */
        json_file_why(path, why, sizeof(why));
        snprintf(detail, sizeof(detail), "%s%s", path == o->baseline ? "--baseline " : "", why);
    } else if (ret == MOTA_ERR_ENC_NO_KEY) { /* a container as the baseline: the host holds no key */
        tool_fail(ret,
                  "%s: its model is encrypted: compare with the model file, or with mota inspect --epochs "
                  "--key and a --kek or --device-key of one of its recipients",
                  path);
    } else {
        tool_fail(ret, "%s", path);
    }
    if (o->json) {
        struct json j;
        json_doc(&j, stdout, "info", false);
        json_reason(&j, ret);
        json_str(&j, "file", path);
        json_str(&j, "detail", detail);
        json_bool(&j, "valid", false);
        json_end(&j);
    }
    return ret == MOTA_ERR_IO ? EXIT_IO : EXIT_INVALID;
}

static int info_report(const struct info_opts *o, const struct mapped *f, struct epochs_view *v,
                       const struct epochs_view *old)
{
    static struct info_io io; /* static: the tensors take a few KiB */
    io.ret = mota_nbin_io(f->data, f->len, &v->in, &io.io);
    if (!o->json) {
        info_text(o->path, f->len, &v->in, &io);
        if (o->epochs)
            epochs_text(stdout, v);
        if (old != NULL)
            epochs_compare_text(stdout, old, v);
        return EXIT_OK;
    }
    struct json j;
    json_doc(&j, stdout, "info", false);
    json_reason(&j, MOTA_OK);
    json_str(&j, "detail", "");
    info_json(&j, o->path, f->len, &v->in, &io);
    if (o->epochs)
        epochs_json(&j, v);
    if (old != NULL)
        epochs_compare_json(&j, old, v);
    json_end(&j);
    return EXIT_OK;
}

int cmd_info(int argc, char **argv)
{
    struct info_opts o = {0};
    struct mapped f = {0}, fb = {0};
    struct epochs_view v = {0}, old = {0};
    int rc = info_args(argc, argv, &o), ret = MOTA_ERR_ARG;
    if (rc != EXIT_OK || o.answered)
        return rc;
    if ((ret = tool_map(o.path, &f)) != MOTA_OK)
        return info_fail(&o, ret, o.path);
    v.path = o.path;
    /* epochs_view_decode validates the model first */
    ret = o.epochs ? epochs_view_decode(&v, f.data, f.len) : mota_nbin_validate(f.data, f.len, &v.in);
    if (ret != MOTA_OK) {
        rc = info_fail(&o, ret, o.path);
    } else if (o.baseline != NULL && (ret = epochs_view_load(&old, o.baseline, &fb)) != MOTA_OK) {
        rc = info_fail(&o, ret, o.baseline);
    } else {
        rc = info_report(&o, &f, &v, o.baseline != NULL ? &old : NULL);
    }
    epochs_view_free(&v);
    epochs_view_free(&old);
    if (fb.map != NULL)
        tool_unmap(&fb);
    tool_unmap(&f);
    return rc;
}
