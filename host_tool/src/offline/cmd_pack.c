/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota pack: an ST model (and its params, its self-test) into a signed
 * container. The inputs, the manifest's account of the model, compression and
 * then encryption of the payloads (payloads.c), and the writing: the
 * container's layout is the encoder's (mota_container_layout); the payloads
 * are written while they are hashed. The command line and its checks:
 * pack_options.c.
 */
#include "cmds.h"
#include "compress.h"
#include "epochs_report.h"
#include "pack.h"
#include "pack_delta.h"

#include "common/files.h"
#include "common/util.h"

#include "mota/cbor.h"
#include "mota/container.h"
#include "mota/crc32.h"
#include "mota/decompress.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"
#include "mota/compat.h"
#include "mota/cipher.h"
#include "mota/encinfo.h"
#include "mota/nbin.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What pack reads: the model, its params file, the self-test's input and expected output. */
struct inputs {
    struct mapped model, params, st_in, st_out;
    struct mota_nbin_info info;
};

static int sign_cb(void *ctx, const uint8_t hash[MOTA_SHA256_LEN], uint8_t sig[MOTA_P256_SIG_LEN])
{
    return mota_ecdsa_p256_sign(ctx, hash, sig);
}

/* 0, or the errno of the failed write: the caller reports it with the path */
static int pwrite_all(int fd, const uint8_t *p, size_t n, off_t off)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        if (w == 0)
            return ENOSPC; /* no progress and no error: the device takes no more */
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/*
 * Payloads are written (and, with --sync, synced) by a second thread, which
 * checks the params' CRC-32 first, while the main thread hashes them: the
 * container's layout (mota_container_layout) does not depend on the digests,
 * so the payloads' offsets are known before their digests are. Two threads:
 * the two jobs take about as long (SHA-256 at the CPU's speed; CRC-32 and the
 * copy into the page cache).
 */
struct payload_writer {
    const struct mota_nbin_info *info;
    const struct mapped *params; /* params file, or the model itself: checked before writing */
    int params_ret;
    int fd;
    const struct mota_container_layout *layout;              /* where each payload's head and bytes go */
    const struct mapped *src[MOTA_CONTAINER_MAX_COMPONENTS]; /* each payload's bytes */
    bool sync;
    size_t crc_off, crc_n; /* the span of the params the header's CRC-32 covers */
    uint32_t crc;
    bool crc_done;
    int err;            /* errno of a failed write or sync */
    const char *failed; /* what failed: "writing" or "syncing" */
};

/* Written in slices that stay in the cache for the CRC-32 and the copy into the page cache (one pass over
 * the whole file for each was 1.3x slower, here). */
#define WRITE_SLICE (1u << 20)

/* Bytes [o, o + k) of the params source are at p: the CRC-32 takes in the part of its span they hold. */
static void crc_take(struct payload_writer *w, size_t o, const uint8_t *p, size_t k)
{
    size_t a = o > w->crc_off ? o : w->crc_off, e = o + k < w->crc_off + w->crc_n ? o + k : w->crc_off + w->crc_n;
    if (a < e)
        w->crc = mota_crc32(w->crc, p + (a - o), e - a);
}

/* One payload's bytes at off; the params' CRC-32 as they go, when they are the params sent as they are. */
static void write_payload(struct payload_writer *w, const struct mapped *s, off_t off)
{
    bool params = s->data == w->params->data && s->len == w->params->len;
    for (size_t o = 0; o < s->len && w->err == 0; o += WRITE_SLICE) {
        size_t k = s->len - o < WRITE_SLICE ? s->len - o : WRITE_SLICE;
        if (params)
            crc_take(w, o, s->data + o, k);
        w->err = pwrite_all(w->fd, s->data + o, k, off + (off_t)o);
    }
    w->crc_done |= params;
}

static void *write_payloads(void *arg)
{
    struct payload_writer *w = arg;
    int span = mota_nbin_params_crc_span(w->info, w->params->len, &w->crc_off, &w->crc_n);
    for (size_t i = 0; i < w->layout->n_payloads && w->err == 0; i++) {
        const struct mota_container_part *p = &w->layout->payload[i];
        w->err = pwrite_all(w->fd, p->head, p->head_len, (off_t)p->head_off);
        write_payload(w, w->src[i], (off_t)p->off);
    }
    if (span == MOTA_OK && !w->crc_done) /* the params went compressed: their CRC-32 from the file */
        crc_take(w, 0, w->params->data, w->params->len);
    w->params_ret = span != MOTA_OK                                        ? span
                    : w->crc_n == 0 || w->crc == w->info->params_bin_crc32 ? MOTA_OK
                                                                           : MOTA_ERR_NBIN_PARAMS_CRC;
    w->failed = "writing";
    if (w->err == 0 && w->sync && fsync(w->fd) != 0) {
        w->err = errno;
        w->failed = "syncing";
    }
    return NULL;
}

/* The signing key (--key), or the public half of the one that will sign (--pub), and its id; or the id
 * alone (--key-id). */
static int signing_key(const struct pack_opts *o, struct mota_p256_key *key, uint8_t kid[MOTA_KEY_ID_LEN])
{
    if (o->key == NULL && o->pub == NULL) {
        memcpy(kid, o->kid, MOTA_KEY_ID_LEN); /* --unsigned --key-id */
        return EXIT_OK;
    }
    if (tool_load_key(o->key != NULL ? o->key : o->pub, key) != MOTA_OK)
        return EXIT_IO;
    if (o->key != NULL && !key->has_private) {
        tool_fail(MOTA_ERR_KEY_INVALID, "%s holds no private key", o->key);
        return EXIT_IO;
    }
    mota_key_id(key->pub, kid);
    return EXIT_OK;
}

/* The model, valid, and the params file of a split one. */
static int load_model(const struct pack_opts *o, struct inputs *in)
{
    int ret;
    if (tool_map(o->model, &in->model) != MOTA_OK)
        return EXIT_IO;
    if ((ret = mota_nbin_validate(in->model.data, in->model.len, &in->info)) != MOTA_OK) {
        tool_fail(ret, "%s", o->model);
        return EXIT_INVALID;
    }
    if (in->info.split && o->params == NULL) {
        tool_fail(MOTA_ERR_NBIN_SPLIT, "%s is a split model: give its params file with --params", o->model);
        return EXIT_INVALID;
    }
    if (!in->info.split && o->params != NULL) {
        tool_fail(MOTA_ERR_NBIN_SPLIT, "%s carries its params; --params %s does not belong to it", o->model, o->params);
        return EXIT_INVALID;
    }
    /* its size and CRC-32 are checked by the payload writer, in parallel */
    if (o->params != NULL && tool_map(o->params, &in->params) != MOTA_OK)
        return EXIT_IO;
    return EXIT_OK;
}

/* A C identifier: the form of a model's c_name (the network's name in ST's generated code). */
static bool c_identifier(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
        return false;
    for (s++; *s != '\0'; s++) {
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    }
    return true;
}

/*
 * --name only labels the container (its model-name text); a device installs it into the model slot named
 * by the header's c_name (its compatibility data), which --name does not change. A --name that has the
 * form of a c_name and is not the model's says the container is for a model it is not (pack --name network
 * on a model called dense): refused, unless the model has no c_name. A label no c_name can be ("YOLOv8n
 * 640", "modèle ✓") stays a label.
 */
static int check_name(const struct pack_opts *o, const struct mota_nbin_info *info)
{
    if (o->name == NULL || info->c_name_len == 0 || !c_identifier(o->name))
        return EXIT_OK;
    if (strlen(o->name) == info->c_name_len && memcmp(o->name, info->c_name, info->c_name_len) == 0)
        return EXIT_OK;
    tool_fail(MOTA_ERR_ARG,
              "--name %s: %s is the model %.*s (its c_name, as mota info shows it), and a device installs it "
              "only into its model of that name, whatever --name says: leave --name out, or rebuild the model "
              "with the c_name the device expects (--name only labels the container: a label that is not a C "
              "identifier, such as \"%.*s v2\", is taken as one)",
              o->name, o->model, (int)info->c_name_len, info->c_name, (int)info->c_name_len, info->c_name);
    return EXIT_USAGE;
}

/* The manifest's account of the model: sequence number, vendor and class, texts, creation time (that of
 * SOURCE_DATE_EPOCH when set), compatibility data. created and name are the caller's, for spec. */
static int describe(const struct pack_opts *o, const struct mota_nbin_info *info, char *created, size_t created_cap,
                    char name[MOTA_NBIN_MAX_NAME + 1], struct mota_pack_spec *spec)
{
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    uint64_t now = (uint64_t)time(NULL);
    if (epoch != NULL && !tool_parse_u64(epoch, &now)) {
        tool_usage_err("pack", "SOURCE_DATE_EPOCH is not a number");
        return EXIT_USAGE;
    }
    time_t t = (time_t)now;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(created, created_cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
    spec->seq = o->seq;
    pack_identity_ids(o->vendor, o->klass, spec->vendor_id, spec->class_id); /* as mota id prints them */
    memcpy(name, info->c_name, info->c_name_len);
    name[info->c_name_len] = '\0';
    spec->description = o->description;
    spec->created = created;
    spec->vendor_name = o->vendor;
    spec->class_name = o->klass; /* shown beside the class id (status, refusals) */
    spec->model_name = o->name ? o->name : name;
    spec->version = o->version;
    mota_nbin_compat(info, o->mode, &spec->compat);
    return EXIT_OK;
}

/* The summary as a device will decode it: pack never signs one its own decoder refuses. */
static int summary_round_trips(const struct mota_epoch_summary *s)
{
    uint8_t buf[64];
    struct mota_cbor_enc e;
    struct mota_cbor_dec d;
    struct mota_epoch_summary back = {0};
    mota_cbor_enc_init(&e, buf, sizeof(buf));
    mota_epoch_summary_put(&e, s);
    mota_cbor_dec_init(&d, buf, e.len);
    mota_epoch_summary_get(&d, &back);
    bool same = back.blocks == s->blocks && back.blob == s->blob && back.hw == s->hw && back.hybrid == s->hybrid &&
                back.sw == s->sw && back.epochs_known == s->epochs_known && back.epochs == s->epochs &&
                back.npu_epochs == s->npu_epochs && back.hybrid_epochs == s->hybrid_epochs &&
                back.sw_epochs == s->sw_epochs;
    return e.err == 0 && d.err == 0 && same ? MOTA_OK : MOTA_ERR_INTERNAL;
}

/* The epoch summary of a Neural-ART model goes into the manifest; the policy (--max-sw-epochs,
 * --max-cpu-epochs) refuses a model whose CPU share is above it, or that cannot be measured. */
static int epoch_summary(const struct pack_opts *o, const struct inputs *in, struct mota_pack_spec *spec)
{
    struct mota_epoch_report rep;
    bool gate = o->max_sw >= 0 || o->max_cpu >= 0;
    int ret = mota_epochs_decode(in->model.data, in->model.len, &in->info, NULL, 0, NULL, 0, &rep);
    if (ret == MOTA_OK && !rep.present)
        ret = MOTA_ERR_NBIN_EPOCH_NONE;
    if (ret == MOTA_OK && summary_round_trips(&rep.sum) != MOTA_OK) {
        tool_fail(MOTA_ERR_INTERNAL, "%s: the epoch summary does not survive its own decoder", o->model);
        return EXIT_INVALID;
    }
    if (ret == MOTA_OK) {
        spec->compat.has_epochs = true;
        spec->compat.epochs = rep.sum;
        return epochs_policy(&rep.sum, o->max_sw, o->max_cpu) == MOTA_OK ? EXIT_OK : EXIT_INVALID;
    }
    /* no table (a CPU or legacy model), or one mota cannot read or refuses: the model is packed without
     * a summary (the table is the NPU runtime's, not the loader's), but a policy cannot be applied */
    if (gate) {
        tool_fail(ret, "%s: the CPU-share policy (--max-sw-epochs, --max-cpu-epochs) cannot be applied", o->model);
        return EXIT_INVALID;
    }
    if (ret != MOTA_ERR_NBIN_EPOCH_NONE && ret != MOTA_ERR_NBIN_EPOCH_FAMILY)
        fprintf(stderr, "mota: warning: %s: no epoch summary in the manifest: %s: %s (mota info --epochs)\n", o->model,
                mota_err_name(ret), mota_err_str(ret));
    return EXIT_OK;
}

/* The payloads (src[i]: component i's bytes): the model's code, its params, the self-test input, whose
 * expected output goes into the compatibility data by its size and digest. */
static int add_components(const struct pack_opts *o, struct inputs *in, struct mota_pack_spec *spec,
                          const struct mapped **src)
{
    src[0] = &in->model;
    spec->comp[0].role = MOTA_COMPONENT_CODE;
    spec->comp[0].size = in->model.len;
    spec->n_components = 1;
    if (o->params != NULL) {
        spec->comp[spec->n_components].role = MOTA_COMPONENT_PARAMS;
        spec->comp[spec->n_components].size = in->params.len;
        src[spec->n_components++] = &in->params;
    }
    if (o->st_in == NULL)
        return EXIT_OK;
    if (tool_map(o->st_in, &in->st_in) != MOTA_OK || tool_map(o->st_out, &in->st_out) != MOTA_OK)
        return EXIT_IO;
    if (in->st_in.len == 0 || in->st_out.len == 0) {
        tool_fail(MOTA_ERR_SELFTEST_FIELD, "self-test input and output must not be empty");
        return EXIT_INVALID;
    }
    /* the largest self-test buffer of a device mota knows (mota sim's; the boards' is 4 KiB): a larger input or
     * output is refused by every one of them at install (MOTA_ERR_SELFTEST_RUN), so it is said here */
    if (in->st_in.len > PACK_SELFTEST_BIG || in->st_out.len > PACK_SELFTEST_BIG)
        fprintf(stderr,
                "mota: warning: the self-test input (%zu bytes) or output (%zu bytes) is larger than any device's "
                "self-test buffer mota knows (%u bytes on mota sim, 4096 on the boards): the device will refuse "
                "the container (MOTA_ERR_SELFTEST_RUN)\n",
                in->st_in.len, in->st_out.len, PACK_SELFTEST_BIG);
    spec->comp[spec->n_components].role = MOTA_COMPONENT_SELFTEST;
    spec->comp[spec->n_components].size = in->st_in.len;
    src[spec->n_components++] = &in->st_in;
    spec->compat.selftest.present = true;
    spec->compat.selftest.output_size = in->st_out.len;
    spec->compat.selftest.max_latency_us = o->st_latency;
    mota_sha256(in->st_out.data, in->st_out.len, spec->compat.selftest.output_digest);
    return EXIT_OK;
}

/* What goes on the wire for each payload (wire[i]): its bytes, or with --compress their compressed
 * stream where that is smaller (zbuf[i] holds it). */
static int compress_components(const struct pack_opts *o, struct mota_pack_spec *spec, const struct mapped **src,
                               struct mapped *wire, uint8_t **zbuf)
{
    for (size_t i = 0; i < spec->n_components; i++) {
        size_t zlen = 0;
        wire[i] = *src[i];
        if (!o->compress)
            continue;
        uint32_t block = tool_compress_block(o->compress);
        int ret = tool_compress(o->compress, src[i]->data, src[i]->len, block, &zbuf[i], &zlen);
        if (ret != MOTA_OK) {
            tool_fail(ret, "compressing the %s payload", mota_component_name(spec->comp[i].role));
            return ret == MOTA_ERR_IO ? EXIT_IO : EXIT_INVALID;
        }
        if (zlen >= src[i]->len)
            continue; /* nothing to gain: sent as it is */
        wire[i] = (struct mapped){.data = zbuf[i], .len = zlen};
        spec->comp[i].compressed = true;
        spec->comp[i].z_alg = o->compress;
        spec->comp[i].z_block = block;
        spec->comp[i].wire_size = zlen;
    }
    return EXIT_OK;
}

/* --delta-from: the payloads that are smaller as deltas from the old container's images (pack_delta.c). */
static int delta_components(const struct pack_opts *o, struct mota_pack_spec *spec, const struct mapped **src,
                            struct mapped *wire, struct pack_delta *delta)
{
    if (o->delta_from == NULL)
        return EXIT_OK;
    int ret = pack_delta_load(o->delta_from, spec->compat.c_name, spec->compat.c_name_len, delta);
    if (ret == MOTA_OK)
        ret = pack_delta_components(o, delta, spec, src, wire);
    return ret == MOTA_OK ? EXIT_OK : ret == MOTA_ERR_IO ? EXIT_IO : EXIT_INVALID;
}

/* With encryption options, every payload encrypted (after compression) under the container's one content
 * key, each with its own IV: wire[i] becomes ebuf[i], described by info[i]. */
static int encrypt_components(const struct tool_enc *enc, struct mota_pack_spec *spec, struct mapped *wire,
                              uint8_t **ebuf, uint8_t info[][MOTA_ENC_MAX_INFO])
{
    for (size_t i = 0; enc != NULL && i < spec->n_components; i++) {
        struct mota_pack_component *c = &spec->comp[i];
        size_t len = 0;
        int ret = tool_enc_payload(enc, wire[i].data, wire[i].len, &ebuf[i], &len, info[i], &c->enc_len);
        if (ret != MOTA_OK) {
            tool_fail(ret, "encrypting the %s payload", mota_component_name(c->role));
            return ret == MOTA_ERR_IO || ret == MOTA_ERR_RANDOM ? EXIT_IO : EXIT_INVALID;
        }
        wire[i] = (struct mapped){.data = ebuf[i], .len = len};
        c->encrypted = true;
        c->enc_info = info[i];
        c->wire_size = len;
    }
    return EXIT_OK;
}

/* Before it is signed, an encrypted or delta payload's image is rebuilt from it as a device will (the
 * manifest decoded, mota_payload_reconstruct_from: decrypted, decompressed, the source's prediction added,
 * the image digest) and compared with its file. */
static int rebuild_images(const struct pack_opts *o, const struct mota_pack_spec *spec, const struct mapped **src,
                          const struct mapped *wire, const uint8_t kid[MOTA_KEY_ID_LEN], const uint8_t *cek,
                          const struct pack_delta *delta)
{
    static uint8_t head[MOTA_CONTAINER_MAX_MANIFEST + 1024];
    static struct mota_verify_result r;
    size_t head_len = 0;
    int ret = mota_container_encode_head(spec, kid, NULL, NULL, head, sizeof(head), &head_len);
    if (ret == MOTA_OK && (ret = mota_envelope_decode(head, head_len, &r.env)) == MOTA_OK)
        ret = mota_manifest_decode(&r.env, &r.manifest);
    for (size_t i = 0; ret == MOTA_OK && i < spec->n_components; i++) {
        const struct mota_component *c = NULL;
        uint8_t *img = NULL;
        size_t old_len = 0;
        const uint8_t *old = pack_delta_source(delta, spec->comp[i].role, &old_len);
        if (!spec->comp[i].encrypted && !spec->comp[i].delta)
            continue; /* its digest is of what was compressed, by the decoder the device has (tool_compress) */
        for (size_t j = 0; j < r.manifest.n_components; j++)
            c = r.manifest.comp[j].role == spec->comp[i].role ? &r.manifest.comp[j] : c;
        ret = c == NULL ? MOTA_ERR_INTERNAL
                        : tool_payload_rebuild_from(c, wire[i].data, wire[i].len, c->encrypted ? cek : NULL, old,
                                                    old_len, &img);
        if (ret == MOTA_OK && memcmp(img, src[i]->data, src[i]->len) != 0)
            ret = MOTA_ERR_INTERNAL;
        if (img != NULL)
            mota_cipher_wipe(img, src[i]->len);
        free(img);
        if (ret != MOTA_OK)
            tool_fail(ret, "%s: the %s payload does not give back its file", o->out,
                      mota_component_name(spec->comp[i].role));
    }
    return ret == MOTA_OK ? EXIT_OK : EXIT_INVALID;
}

static int write_and_hash(const struct pack_opts *o, const struct inputs *in, struct mota_pack_spec *spec,
                          const struct mapped **src, const struct mapped *wire, int fd,
                          const struct mota_container_layout *layout)
{
    struct payload_writer pw = {
        .info = &in->info, .params = o->params ? &in->params : &in->model, .fd = fd, .layout = layout, .sync = o->sync};
    for (size_t i = 0; i < spec->n_components; i++)
        pw.src[i] = &wire[i];
    pthread_t th;
    bool threaded = pthread_create(&th, NULL, write_payloads, &pw) == 0;
    if (!threaded)
        write_payloads(&pw);
    for (size_t i = 0; i < spec->n_components; i++) {
        mota_sha256(src[i]->data, src[i]->len, spec->comp[i].digest); /* the image's */
        if (spec->comp[i].compressed || spec->comp[i].encrypted)
            mota_sha256(wire[i].data, wire[i].len, spec->comp[i].wire_digest);
    }
    if (threaded)
        pthread_join(th, NULL);
    if (pw.err != 0) { /* first: the params' CRC-32 stopped with the writing */
        tool_fail(MOTA_ERR_IO, "%s: %s: %s", o->out, pw.failed, strerror(pw.err));
        return EXIT_IO;
    }
    if (pw.params_ret != MOTA_OK) {
        tool_fail(pw.params_ret, "%s does not match the header of %s",
                  o->params ? o->params : "the appended params blob", o->model);
        return EXIT_INVALID;
    }
    return EXIT_OK;
}

/* The container, written atomically where the encoder's layout puts each part: the payloads first, then
 * the head, signed (or not, --unsigned) once their digests are in. */
static int write_container(const struct pack_opts *o, const struct inputs *in, struct mota_pack_spec *spec,
                           const struct mapped **src, const struct mapped *wire, struct mota_p256_key *key,
                           const uint8_t kid[MOTA_KEY_ID_LEN], const struct tool_enc *enc,
                           const struct pack_delta *delta)
{
    static uint8_t head[MOTA_CONTAINER_MAX_MANIFEST + 1024];
    struct mota_container_layout layout;
    size_t head_len = 0;
    struct outfile out = {0};
    int ret, rc;
    if ((ret = mota_container_layout(spec, kid, !o->unsigned_, &layout)) != MOTA_OK) {
        tool_fail(ret, "encoding the manifest");
        return o->params != NULL && o->st_in == NULL ? EXIT_IO : EXIT_INVALID; /* as it always exited */
    }
    if (tool_out_open(&out, o->out, 0644) != MOTA_OK)
        return EXIT_IO;
    out.no_sync = !o->sync;
    if ((rc = write_and_hash(o, in, spec, src, wire, fileno(out.f), &layout)) != EXIT_OK ||
        ((enc != NULL || delta->used > 0) &&
         (rc = rebuild_images(o, spec, src, wire, kid, enc != NULL ? enc->cek : NULL, delta)) != EXIT_OK))
        goto fail;
    rc = EXIT_INVALID;
    if ((ret = mota_container_encode_head(spec, kid, o->unsigned_ ? NULL : sign_cb, key, head, sizeof(head),
                                          &head_len)) != MOTA_OK) {
        tool_fail(ret, "encoding the manifest");
        goto fail;
    }
    rc = EXIT_IO;
    if (head_len != layout.head_len) {
        tool_fail(MOTA_ERR_INTERNAL, "head length changed from %zu to %zu", layout.head_len, head_len);
        goto fail;
    }
    if ((ret = pwrite_all(fileno(out.f), head, head_len, 0)) != 0) {
        tool_fail(MOTA_ERR_IO, "%s: writing: %s", o->out, strerror(ret));
        goto fail;
    }
    return tool_out_commit(&out) == MOTA_OK ? EXIT_OK : EXIT_IO;
fail:
    tool_out_abort(&out);
    return rc;
}

static void print_compression(const struct pack_opts *o, const struct mota_pack_spec *spec)
{
    for (size_t i = 0; o->compress && i < spec->n_components; i++) {
        const struct mota_pack_component *c = &spec->comp[i];
        if (c->delta)
            continue; /* said by pack_delta_print */
        if (c->compressed)
            printf("compressed %s: %llu -> %llu bytes (%.3fx; %s, %u-byte blocks)\n", mota_component_name(c->role),
                   (unsigned long long)c->size, (unsigned long long)c->wire_size,
                   (double)c->size / (double)c->wire_size, tool_compress_name(c->z_alg), (unsigned)c->z_block);
        else
            printf("%s: not compressed (no smaller so)\n", mota_component_name(c->role));
    }
}

static void print_encryption(const struct tool_enc *enc, const struct mota_pack_spec *spec)
{
    for (size_t i = 0; enc != NULL && i < spec->n_components; i++)
        printf("encrypted %s: %s, %zu recipient%s (%s)\n", mota_component_name(spec->comp[i].role),
               tool_enc_alg_name(enc->spec.alg), enc->spec.n_recipients, enc->spec.n_recipients > 1 ? "s" : "",
               enc->who);
}

/* The container's content key and its recipients, when it is to be encrypted. */
static int start_encryption(const struct pack_opts *o, struct tool_enc *enc, const struct tool_enc **use)
{
    *use = NULL;
    if (o->n_recipients == 0)
        return EXIT_OK;
    int ret = tool_enc_start(enc, o->cipher != 0 ? o->cipher : MOTA_ENC_A128GCM, o->recipients, o->n_recipients);
    if (ret != MOTA_OK) /* a key file that cannot be used, or no random bytes: said with the file */
        return EXIT_IO;
    *use = enc;
    return EXIT_OK;
}

int cmd_pack(int argc, char **argv)
{
    struct pack_opts o;
    struct inputs in = {0};
    struct mota_p256_key key;
    struct mota_pack_spec spec;
    const struct mapped *src[MOTA_CONTAINER_MAX_COMPONENTS] = {0};
    struct mapped wire[MOTA_CONTAINER_MAX_COMPONENTS];
    uint8_t *zbuf[MOTA_CONTAINER_MAX_COMPONENTS] = {0}, *ebuf[MOTA_CONTAINER_MAX_COMPONENTS] = {0};
    static uint8_t info[MOTA_CONTAINER_MAX_COMPONENTS][MOTA_ENC_MAX_INFO];
    static struct tool_enc enc_keys; /* the content key: wiped at the end */
    static struct pack_delta delta;  /* --delta-from: the old images, the deltas */
    const struct tool_enc *enc = NULL;
    char created[32], name_buf[MOTA_NBIN_MAX_NAME + 1];
    uint8_t kid[MOTA_KEY_ID_LEN];
    int rc = pack_options(argc, argv, &o);
    if (rc != EXIT_OK)
        return rc;
    memset(&key, 0, sizeof(key));
    memset(&spec, 0, sizeof(spec));
    if ((rc = signing_key(&o, &key, kid)) != EXIT_OK || (rc = start_encryption(&o, &enc_keys, &enc)) != EXIT_OK ||
        (rc = load_model(&o, &in)) != EXIT_OK || (rc = check_name(&o, &in.info)) != EXIT_OK ||
        (rc = describe(&o, &in.info, created, sizeof(created), name_buf, &spec)) != EXIT_OK ||
        (rc = epoch_summary(&o, &in, &spec)) != EXIT_OK || (rc = add_components(&o, &in, &spec, src)) != EXIT_OK ||
        (rc = compress_components(&o, &spec, src, wire, zbuf)) != EXIT_OK ||
        (rc = delta_components(&o, &spec, src, wire, &delta)) != EXIT_OK ||
        (rc = encrypt_components(enc, &spec, wire, ebuf, info)) != EXIT_OK ||
        (rc = write_container(&o, &in, &spec, src, wire, &key, kid, enc, &delta)) != EXIT_OK)
        goto done;
    printf("wrote %s: %s %.*s v%s, seq %llu, %zu payload(s), %skey id ", o.out,
           in.info.family == MOTA_NBIN_FAMILY_NPU ? "NBIN v8.0" : "NBIN v2.0", (int)in.info.c_name_len, in.info.c_name,
           o.version, (unsigned long long)spec.seq, spec.n_components,
           o.unsigned_ ? "UNSIGNED (mota sign signs it), " : "");
    tool_hex(stdout, kid, sizeof(kid));
    printf("\n");
    print_compression(&o, &spec);
    if (o.delta_from != NULL)
        pack_delta_print(&delta, &spec);
    print_encryption(enc, &spec);
    if (spec.compat.has_epochs) {
        printf("npu epochs: ");
        epochs_summary_line(stdout, &spec.compat.epochs);
        printf("\n");
    }
done:
    memset(&key, 0, sizeof(key));
    tool_unmap(&in.model);
    tool_unmap(&in.params);
    tool_unmap(&in.st_in);
    tool_unmap(&in.st_out);
    for (size_t i = 0; i < MOTA_CONTAINER_MAX_COMPONENTS; i++) {
        free(zbuf[i]);
        free(ebuf[i]);
    }
    tool_enc_wipe(&enc_keys);
    pack_delta_free(&delta);
    return rc;
}
