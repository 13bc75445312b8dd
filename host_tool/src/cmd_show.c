/* inspect, verify, info, errors: reports on containers and model files. */
#include "cmds.h"
#include "payloads.h"
#include "util.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"
#include "mota/decompress.h"
#include "mota/nbin.h"

#include "epochs_report.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 8

static void uuid_print(FILE *f, const uint8_t u[16])
{
    char s[37];
    fputs(tool_uuid_str(u, s), f);
}

static void uuid_json(struct json *j, const char *key, const uint8_t u[16])
{
    char s[37];
    json_str(j, key, tool_uuid_str(u, s));
}

/* The envelope, its signatures, the manifest and its texts. */
static void manifest_text(const char *path, const struct mota_verify_result *r)
{
    const struct mota_manifest *m = &r->manifest;
    printf("container:   %s\n", path);
    printf("envelope:    SUIT (tag 107), %zu authentication block(s), %zu integrated payload(s)\n",
           r->env.n_blocks, r->env.n_payloads);
    for (size_t b = 0; b < r->env.n_blocks; b++) {
        const struct mota_auth_block *blk = &r->env.blocks[b];
        printf("signature:   COSE_Sign1 %s, key id ", blk->alg == MOTA_COSE_ALG_ES256 ? "ES256" : "ESP256");
        if (blk->kid)
            tool_hex(stdout, blk->kid, blk->kid_len);
        else
            printf("(none)");
        printf("%s\n", blk->no_sig ? "; UNSIGNED: `mota sign` signs it, nothing accepts it before" : "");
    }
    printf("manifest:    version %llu, sequence number %llu, digest ", (unsigned long long)m->version,
           (unsigned long long)m->seq);
    tool_hex(stdout, r->env.digest, sizeof(r->env.digest));
    printf("\n");
    if (m->text.model_name)
        printf("model:       %.*s\n", (int)m->text.model_name_len, m->text.model_name);
    if (m->text.version)
        printf("version:     %.*s\n", (int)m->text.version_len, m->text.version);
    if (m->text.vendor_name)
        printf("vendor:      %.*s\n", (int)m->text.vendor_name_len, m->text.vendor_name);
    if (m->text.description)
        printf("description: %.*s\n", (int)m->text.description_len, m->text.description);
    if (m->text.created)
        printf("created:     %.*s\n", (int)m->text.created_len, m->text.created);
}

static void components_text(const struct mota_manifest *m)
{
    for (size_t i = 0; i < m->n_components; i++) {
        const struct mota_component *comp = &m->comp[i];
        printf("component %zu: %s", i, mota_component_name(comp->role));
        if (comp->has_size)
            printf(", %llu bytes", (unsigned long long)comp->size);
        if (comp->has_uri)
            printf(", payload %.*s", (int)comp->uri_len, comp->uri);
        printf("\n");
        if (comp->has_digest) {
            printf("  sha256:    ");
            tool_hex(stdout, comp->digest, sizeof(comp->digest));
            printf("\n");
        }
        if (comp->compressed) {
            printf("  sent as:   %s, %llu bytes (%.3fx), %u-byte blocks, sha256 ",
                   comp->z_alg == MOTA_DECOMP_LZ4 ? "LZ4 frame" : "deflate stream", (unsigned long long)comp->z_size, comp->z_size ? (double)comp->size / (double)comp->z_size : 0.0,
                   (unsigned)comp->z_block);
            tool_hex(stdout, comp->z_digest, sizeof(comp->z_digest));
            printf("\n");
        }
        if (comp->has_vendor) {
            printf("  vendor id: ");
            uuid_print(stdout, comp->vendor_id);
            printf("\n");
        }
        if (comp->has_class) {
            printf("  class id:  ");
            uuid_print(stdout, comp->class_id);
            printf("\n");
        }
    }
}

static void compat_text(const struct mota_manifest *m)
{
    const struct mota_compat *c = &m->compat;
    if (!m->has_compat) {
        printf("compatibility: none (generic SUIT manifest, not a mota model container)\n");
        return;
    }
    printf("compatibility:\n");
    printf("  c_name:          %.*s\n", (int)c->c_name_len, c->c_name);
    printf("  reloc runtime:   %u.%u (%s)\n", c->reloc_major, c->reloc_minor,
           c->reloc_major == 8 ? "Neural-ART NPU" : c->reloc_major == 2 ? "X-CUBE-AI legacy" : "unknown");
    printf("  cpu:             0x%03X %s\n", c->cpu_part, mota_nbin_cpu_name((uint16_t)c->cpu_part));
    printf("  fpu:             %s, float ABI %s\n", c->fpu ? "yes" : "no", mota_nbin_float_abi_name(c->float_abi));
    printf("  secure:          %s\n", c->secure ? "yes" : "no");
    printf("  dbg-info, async: %s, %s\n", c->dbg_info ? "yes" : "no", c->async ? "yes" : "no");
    printf("  toolchain:       %u %s\n", c->toolchain, mota_nbin_toolchain_name(c->toolchain));
    if (c->has_runtime_version)
        printf("  LL_ATON:         %u.%u.%u\n", c->rt_major, c->rt_minor, c->rt_micro);
    if (c->rt_desc)
        printf("  runtime:         %.*s\n", (int)c->rt_desc_len, c->rt_desc);
    if (c->has_struct_sizes)
        printf("  struct sizes:    0x%04X\n", c->struct_sizes);
    printf("  activations:     %llu bytes\n", (unsigned long long)c->acts_size);
    printf("  params:          %llu bytes\n", (unsigned long long)c->params_size);
    printf("  external RAM:    %llu bytes\n", (unsigned long long)c->ext_ram_size);
    printf("  exec RAM:        XIP %llu, COPY %llu bytes\n", (unsigned long long)c->exec_ram_xip,
           (unsigned long long)c->exec_ram_copy);
    printf("  install mode:    %s\n", tool_install_mode(c->install_mode));
    if (c->has_epochs) {
        printf("  npu epochs:      ");
        epochs_summary_line(stdout, &c->epochs);
        printf(" (informational)\n");
    }
    if (c->selftest.present) {
        printf("  self-test:       output %llu bytes, max latency %llu us, output sha256 ",
               (unsigned long long)c->selftest.output_size, (unsigned long long)c->selftest.max_latency_us);
        tool_hex(stdout, c->selftest.output_digest, MOTA_SHA256_LEN);
        printf("\n");
    }
}

struct epoch_views {
    const struct epochs_view *cur, *old; /* NULL: not asked */
};

static void report_text(const char *path, const struct mota_verify_result *r, bool verified, int status,
                        const struct epoch_views *ev)
{
    manifest_text(path, r);
    components_text(&r->manifest);
    compat_text(&r->manifest);
    if (verified)
        printf("verification: %s\n", status == 0 ? "OK" : mota_err_name(status));
    else
        printf("verification: not done (mota verify --key checks signature and digests)\n");
    if (ev->cur != NULL)
        epochs_text(stdout, ev->cur);
    if (ev->old != NULL)
        epochs_compare_text(stdout, ev->old, ev->cur);
}

static void signatures_json(struct json *j, const struct mota_envelope *env)
{
    json_arr(j, "signatures");
    for (size_t b = 0; b < env->n_blocks; b++) {
        json_obj(j, NULL);
        json_str(j, "alg", env->blocks[b].alg == MOTA_COSE_ALG_ES256 ? "ES256" : "ESP256");
        if (env->blocks[b].kid)
            json_hex(j, "kid", env->blocks[b].kid, env->blocks[b].kid_len);
        else
            json_null(j, "kid");
        json_bool(j, "signed", !env->blocks[b].no_sig); /* false: pack --unsigned, waiting for mota sign */
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void texts_json(struct json *j, const struct mota_manifest *m)
{
    json_obj(j, "text");
#define TXT(k, f) if (m->text.f) json_strn(j, k, m->text.f, m->text.f##_len); else json_null(j, k)
    TXT("model_name", model_name);
    TXT("version", version);
    TXT("vendor_name", vendor_name);
    TXT("description", description);
    TXT("created", created);
#undef TXT
    json_obj_end(j);
}

static void components_json(struct json *j, const struct mota_manifest *m)
{
    json_arr(j, "components");
    for (size_t i = 0; i < m->n_components; i++) {
        const struct mota_component *comp = &m->comp[i];
        json_obj(j, NULL);
        json_str(j, "role", mota_component_name(comp->role));
        json_hex(j, "id_cbor", comp->id, comp->id_len);
        if (comp->has_size) json_uint(j, "size", comp->size); else json_null(j, "size");
        if (comp->has_digest) json_hex(j, "sha256", comp->digest, MOTA_SHA256_LEN); else json_null(j, "sha256");
        if (comp->has_uri) json_strn(j, "payload", comp->uri, comp->uri_len); else json_null(j, "payload");
        if (comp->compressed) {
            json_obj(j, "compression");
            json_str(j, "algorithm", comp->z_alg == MOTA_DECOMP_LZ4 ? "lz4-frame" : "deflate");
            json_uint(j, "block", comp->z_block);
            json_uint(j, "size", comp->z_size);
            json_hex(j, "sha256", comp->z_digest, MOTA_SHA256_LEN);
            json_obj_end(j);
        } else {
            json_null(j, "compression");
        }
        if (comp->has_vendor) uuid_json(j, "vendor_id", comp->vendor_id); else json_null(j, "vendor_id");
        if (comp->has_class) uuid_json(j, "class_id", comp->class_id); else json_null(j, "class_id");
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void compat_json(struct json *j, const struct mota_manifest *m)
{
    const struct mota_compat *c = &m->compat;
    if (!m->has_compat) {
        json_null(j, "compat");
        return;
    }
    json_obj(j, "compat");
    json_uint(j, "reloc_major", c->reloc_major);
    json_uint(j, "reloc_minor", c->reloc_minor);
    json_uint(j, "cpu_part", c->cpu_part);
    json_str(j, "cpu", mota_nbin_cpu_name((uint16_t)c->cpu_part));
    json_bool(j, "fpu", c->fpu);
    json_str(j, "float_abi", mota_nbin_float_abi_name(c->float_abi));
    json_bool(j, "secure", c->secure);
    json_bool(j, "dbg_info", c->dbg_info);
    json_bool(j, "async", c->async);
    json_str(j, "toolchain", mota_nbin_toolchain_name(c->toolchain));
    if (c->has_runtime_version) {
        char v[32];
        snprintf(v, sizeof(v), "%u.%u.%u", c->rt_major, c->rt_minor, c->rt_micro);
        json_str(j, "ll_aton_version", v);
    } else {
        json_null(j, "ll_aton_version");
    }
    if (c->rt_desc) json_strn(j, "runtime_desc", c->rt_desc, c->rt_desc_len); else json_null(j, "runtime_desc");
    if (c->has_struct_sizes) json_uint(j, "struct_sizes", c->struct_sizes); else json_null(j, "struct_sizes");
    json_strn(j, "c_name", c->c_name, c->c_name_len);
    json_uint(j, "activations_size", c->acts_size);
    json_uint(j, "params_size", c->params_size);
    json_uint(j, "ext_ram_size", c->ext_ram_size);
    json_uint(j, "exec_ram_xip", c->exec_ram_xip);
    json_uint(j, "exec_ram_copy", c->exec_ram_copy);
    json_str(j, "install_mode", tool_install_mode(c->install_mode));
    if (c->selftest.present) {
        json_obj(j, "selftest");
        json_hex(j, "output_sha256", c->selftest.output_digest, MOTA_SHA256_LEN);
        json_uint(j, "output_size", c->selftest.output_size);
        json_uint(j, "max_latency_us", c->selftest.max_latency_us);
        json_obj_end(j);
    } else {
        json_null(j, "selftest");
    }
    epochs_summary_json(j, "npu_epochs", c->has_epochs ? &c->epochs : NULL);
    json_obj_end(j);
}

static void report_json(const char *cmd, const char *path, const struct mota_verify_result *r, bool verified,
                        int status, const struct epoch_views *ev)
{
    const struct mota_manifest *m = &r->manifest;
    struct json j;
    json_doc(&j, stdout, cmd, false);
    json_reason(&j, status);
    json_str(&j, "container", path);
    json_bool(&j, "verified", verified); /* signature and every payload digest checked (a key was given) */
    json_bool(&j, "valid", status == 0);
    json_uint(&j, "manifest_version", m->version);
    json_uint(&j, "seq", m->seq);
    json_hex(&j, "digest", r->env.digest, MOTA_SHA256_LEN);
    signatures_json(&j, &r->env);
    texts_json(&j, m);
    components_json(&j, m);
    compat_json(&j, m);
    if (ev->cur != NULL)
        epochs_json(&j, ev->cur);
    if (ev->old != NULL)
        epochs_compare_json(&j, ev->old, ev->cur);
    json_end(&j);
}

static int load_keys(char **paths, size_t n, struct mota_trusted_key *keys)
{
    for (size_t i = 0; i < n; i++) {
        struct mota_p256_key k;
        if (tool_load_key(paths[i], &k) != MOTA_OK)
            return MOTA_ERR_IO;
        mota_trusted_key_set(&keys[i], k.pub);
        memset(&k, 0, sizeof(k));
    }
    return MOTA_OK;
}

static void show_help(bool verify)
{
    if (verify)
        printf("usage: mota verify --key PUBLIC.pem [--key ...] [--json] [--quiet] CONTAINER\n\n"
               "Full check: envelope structure, manifest digest, signature by one of the\n"
               "given keys (public or private PEM/DER), manifest semantics, and the size\n"
               "and SHA-256 of every integrated payload.\n"
               "Exit codes: 0 valid; 1 rejected (the reason name is printed on stderr);\n"
               "2 usage error; 3 unreadable container or key file.\n");
    else
        printf("usage: mota inspect [--json] [--key PUBLIC.pem] [--epochs [--baseline OLD]] CONTAINER\n\n"
               "Prints the manifest, components, compatibility data and self-test of a\n"
               "container. Without --key it checks the structure (envelope, manifest, the\n"
               "mota profile, the framing and size of every payload) but not the signature\n"
               "or the payload digests; with --key it runs the full verification too.\n"
               "--epochs adds the epoch report of the model it carries (mota info --epochs);\n"
               "--baseline OLD (a container or a model) what moved between NPU and CPU since.\n"
               "Exit codes: 0 ok; 1 malformed or (with --key) invalid; 2 usage; 3 I/O.\n");
}

struct show_opts {
    bool answered; /* --help: printed, nothing to show */
    char *key_paths[MAX_KEYS];
    size_t n_keys;
    bool json, quiet, epochs;
    const char *path, *baseline;
};

static int parse_args(int argc, char **argv, bool verify, struct show_opts *o)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {"key", required_argument, 0, 'k'},
                                         {"json", no_argument, 0, 'j'}, {"quiet", no_argument, 0, 'q'},
                                         {"epochs", no_argument, 0, 'e'}, {"baseline", required_argument, 0, 'b'},
                                         {0, 0, 0, 0}};
    int c;
    memset(o, 0, sizeof(*o));
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hk:jqeb:", opts, verify ? "verify" : "inspect")) != -1) {
        if (c == 'h') {
            show_help(verify);
            o->answered = true;
            return EXIT_OK;
        } else if (c == 'k') {
            if (o->n_keys == MAX_KEYS) {
                tool_err("at most %d keys", MAX_KEYS);
                return EXIT_USAGE;
            }
            o->key_paths[o->n_keys++] = optarg;
        } else if (c == 'j') {
            o->json = true;
        } else if (c == 'q') {
            o->quiet = true;
        } else if (c == 'e') {
            o->epochs = true;
        } else if (c == 'b') {
            o->baseline = optarg;
        } else {
            return EXIT_USAGE;
        }
    }
    if (argc - optind != 1)
        return tool_usage_err(verify ? "verify" : "inspect", "takes exactly one container file");
    if (verify && o->n_keys == 0)
        return tool_usage_err("verify", "needs at least one --key");
    if (o->baseline != NULL && !o->epochs)
        return tool_usage_err(verify ? "verify" : "inspect", "--baseline compares epoch reports: it needs --epochs");
    o->path = argv[optind];
    return EXIT_OK;
}

/* With keys, the full verification; without, the structure: envelope, manifest, the payloads' framing. */
static int check_container(const struct mapped *f, const struct mota_trusted_key *keys, size_t n_keys,
                           struct mota_verify_result *r)
{
    const struct mota_component *failed = NULL;
    if (n_keys > 0) {
        int ret = mota_container_verify(f->data, f->len, keys, n_keys, r);
        return ret == MOTA_OK ? tool_verify_images(f->data, f->len, r, &failed) : ret;
    }
    memset(r, 0, sizeof(*r));
    int ret = mota_envelope_decode(f->data, f->len, &r->env);
    if (ret == MOTA_OK)
        ret = mota_manifest_decode(&r->env, &r->manifest);
    if (ret == MOTA_OK)
        ret = mota_container_check_payloads(f->data, f->len, r);
    return ret;
}

static void show_fail_json(const char *cmd, const char *path, int ret, bool checked)
{
    struct json j;
    json_doc(&j, stdout, cmd, false);
    json_reason(&j, ret);
    json_str(&j, "container", path);
    json_bool(&j, "verified", checked);
    json_bool(&j, "valid", false);
    json_end(&j);
}

/* --epochs: the container's model, and the baseline's; MOTA_OK or the reason, *bad the file it concerns */
static int load_epochs(const struct show_opts *o, const struct mapped *f, struct epochs_view *cur,
                       struct epochs_view *old, struct mapped *fb, const char **bad)
{
    const uint8_t *code = NULL;
    size_t code_len = 0;
    int ret = epochs_container_code(f->data, f->len, &code, &code_len, &cur->image);
    *bad = o->path;
    cur->path = o->path;
    cur->container = true;
    if (ret == MOTA_OK)
        ret = epochs_view_decode(cur, code, code_len);
    if (ret == MOTA_OK && o->baseline != NULL) {
        *bad = o->baseline;
        ret = epochs_view_load(old, o->baseline, fb);
    }
    return ret;
}

static int show(int argc, char **argv, bool verify)
{
    const char *cmd = verify ? "verify" : "inspect", *bad = NULL;
    struct show_opts o;
    struct mota_trusted_key keys[MAX_KEYS];
    struct mapped f, fb = {0};
    struct epochs_view cur = {0}, old = {0};
    static struct mota_verify_result r;
    int rc = parse_args(argc, argv, verify, &o);
    if (rc != EXIT_OK || o.answered)
        return rc;
    if (load_keys(o.key_paths, o.n_keys, keys) != MOTA_OK)
        return EXIT_IO;
    if (tool_map(o.path, &f) != MOTA_OK)
        return EXIT_IO;
    bool checked = o.n_keys > 0;
    int ret = check_container(&f, keys, o.n_keys, &r);
    bad = o.path;
    if (ret == MOTA_OK && o.epochs)
        ret = load_epochs(&o, &f, &cur, &old, &fb, &bad);
    if (ret != MOTA_OK) {
        if (ret != MOTA_ERR_IO) /* a file that cannot be read has said so */
            tool_fail(ret, "%s", bad);
        if (o.json)
            show_fail_json(cmd, bad, ret, checked);
        rc = ret == MOTA_ERR_IO ? EXIT_IO : EXIT_INVALID;
    } else {
        struct epoch_views ev = {o.epochs ? &cur : NULL, o.baseline != NULL ? &old : NULL};
        if (o.json)
            report_json(cmd, o.path, &r, checked, ret, &ev);
        else if (!(verify && o.quiet))
            report_text(o.path, &r, checked, ret, &ev);
    }
    epochs_view_free(&cur);
    epochs_view_free(&old);
    if (fb.map != NULL)
        tool_unmap(&fb);
    tool_unmap(&f); /* the report's strings point into the mapping */
    return rc;
}

int cmd_inspect(int argc, char **argv)
{
    return show(argc, argv, false);
}

int cmd_verify(int argc, char **argv)
{
    return show(argc, argv, true);
}

static void info_text(const char *path, size_t len, const struct mota_nbin_info *in)
{
    printf("file:          %s (%zu bytes)\n", path, len);
    printf("family:        %s, reloc runtime %u.%u, %u-word header\n",
           in->family == MOTA_NBIN_FAMILY_NPU ? "Neural-ART NPU (ll_aton)" : "legacy X-CUBE-AI (ai_reloc)",
           in->reloc_major, in->reloc_minor, in->header_words);
    printf("flags:         0x%08X: cpu 0x%03X %s, fpu %s, float ABI %s, toolchain %s",
           in->flags, in->cpu_part, mota_nbin_cpu_name(in->cpu_part), in->fpu ? "yes" : "no",
           mota_nbin_float_abi_name(in->float_abi), mota_nbin_toolchain_name(in->toolchain));
    if (in->family == MOTA_NBIN_FAMILY_NPU)
        printf(", secure %s, dbg-info %s, async %s", in->secure ? "yes" : "no", in->dbg_info ? "yes" : "no",
               in->async ? "yes" : "no");
    printf("\n");
    printf("c_name:        %.*s\n", (int)in->c_name_len, in->c_name);
    if (in->family == MOTA_NBIN_FAMILY_NPU) {
        printf("runtime:       %.*s, LL_ATON %u.%u.%u (extra %u), rt_ctx %u words\n", (int)in->rt_desc_len,
               in->rt_desc, in->rt_version >> 24, (in->rt_version >> 16) & 0xff, (in->rt_version >> 8) & 0xff,
               in->rt_version_extra, in->rtctx_words);
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
    printf("sections:      RO %u, data copy %u, RW %u, GOT %u entries, REL %u entries\n", in->ro_size,
           in->data_copy, in->rw_size, (in->got_end - in->got_off) / 4, in->rel_count);
    const char *pw = in->family == MOTA_NBIN_FAMILY_NPU ? "params" : "weights";
    printf("sizes:         activations %u, %s %u, external RAM %u\n", in->acts_size, pw, in->params_size,
           in->ext_ram_size);
    printf("exec RAM:      XIP %u, COPY %u bytes%s\n", in->exec_ram_xip, in->exec_ram_copy,
           in->family == MOTA_NBIN_FAMILY_NPU ? "" : " (with the activations, each part rounded to 8)");
    printf("%s:%*s%s\n", pw, (int)(14 - strlen(pw)), "", !in->has_params ? "none" : in->split ? "split (separate file)" : "appended");
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

static void info_json(struct json *jp, const char *path, size_t len, const struct mota_nbin_info *in)
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
    if (in->rt_desc) json_strn(&j, "runtime_desc", in->rt_desc, in->rt_desc_len); else json_null(&j, "runtime_desc");
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
    static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {"json", no_argument, 0, 'j'},
                                         {"epochs", no_argument, 0, 'e'}, {"baseline", required_argument, 0, 'b'},
                                         {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hjeb:", opts, "info")) != -1) {
        if (c == 'h') {
            printf("usage: mota info [--json] [--epochs [--baseline OLD]] network_rel.bin\n\n"
                   "Decodes the header, runtime context and memory-pool descriptors of an ST\n"
                   "runtime-loadable model (both NBIN families) and checks every offset.\n"
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

/* The failure of a model or its baseline: the reason, in JSON too. */
static int info_fail(const struct info_opts *o, int ret, const char *path)
{
    if (o->json) {
        struct json j;
        json_doc(&j, stdout, "info", false);
        json_reason(&j, ret);
        json_str(&j, "file", path);
        json_bool(&j, "valid", false);
        json_end(&j);
    }
    tool_fail(ret, "%s", path);
    return ret == MOTA_ERR_IO ? EXIT_IO : EXIT_INVALID;
}

static int info_report(const struct info_opts *o, const struct mapped *f, struct epochs_view *v,
                       const struct epochs_view *old)
{
    if (!o->json) {
        info_text(o->path, f->len, &v->in);
        if (o->epochs)
            epochs_text(stdout, v);
        if (old != NULL)
            epochs_compare_text(stdout, old, v);
        return EXIT_OK;
    }
    struct json j;
    json_doc(&j, stdout, "info", false);
    json_reason(&j, MOTA_OK);
    info_json(&j, o->path, f->len, &v->in);
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
    if (tool_map(o.path, &f) != MOTA_OK)
        return EXIT_IO;
    v.path = o.path;
    /* epochs_view_decode validates the model first */
    ret = o.epochs ? epochs_view_decode(&v, f.data, f.len) : mota_nbin_validate(f.data, f.len, &v.in);
    if (ret != MOTA_OK) {
        rc = info_fail(&o, ret, o.path);
    } else if (o.baseline != NULL && (ret = epochs_view_load(&old, o.baseline, &fb)) != MOTA_OK) {
        rc = ret == MOTA_ERR_IO ? EXIT_IO : info_fail(&o, ret, o.baseline);
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

int cmd_errors(int argc, char **argv)
{
    static const char usage[] = "usage: mota errors [--markdown]\n\nLists every reason code: value, name, message.\n";
    bool md = argc == 2 && strcmp(argv[1], "--markdown") == 0;
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    if (argc > 1 && !md) {
        return tool_usage_err("errors", "unexpected argument '%s'", strcmp(argv[1], "--markdown") == 0 ? argv[2] : argv[1]);
    }
    if (md)
        printf("| code | name | message |\n|---:|---|---|\n");
    for (int i = 0; i < mota_err_count(); i++) {
        int code = mota_err_at(i);
        if (md)
            printf("| %d | `%s` | %s |\n", code, mota_err_name(code), mota_err_str(code));
        else
            printf("%5d  %-30s %s\n", code, mota_err_name(code), mota_err_str(code));
    }
    return EXIT_OK;
}
