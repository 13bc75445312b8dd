/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota pack --delta-from OLD.mota: OLD's images (what the device runs: the sources), and each payload of
 * the new container sent as its difference from the source of its role where that is smaller than the
 * payload would be otherwise (docs/container-format.md, "Delta payloads"). The regions come from the
 * diff (delta_diff.c), the stream is the image minus their prediction, coded by pack's compressor.
 */
#include "pack_delta.h"

#include "compress.h"
#include "delta_diff.h"

#include "common/util.h"

#include "mota/crypto.h"
#include "mota/delta.h"
#include "mota/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OLD's image of one component into d (a copy: d owns it). */
static int keep_image(struct pack_delta *d, const struct mota_verify_result *r, const struct mota_component *c)
{
    const struct mota_component *comp = NULL;
    const uint8_t *wire = NULL, *img = NULL;
    size_t wire_len = 0, img_len = 0;
    uint8_t *owned = NULL;
    if (c->delta || c->encrypted)
        return tool_fail(MOTA_ERR_DELTA_SOURCE,
                         "--delta-from %s: its %s payload is %s: give the plain container of that model", d->path,
                         mota_component_name(c->role), c->delta ? "a delta itself" : "encrypted");
    int ret = tool_payload_find(d->old.data, d->old.len, r, c->role, &comp, &wire, &wire_len);
    if (ret == MOTA_OK)
        ret = tool_payload_image(comp, wire, wire_len, NULL, &img, &img_len, &owned);
    if (ret != MOTA_OK)
        return tool_fail(ret, "--delta-from %s: its %s image", d->path, mota_component_name(c->role));
    uint8_t *copy = owned != NULL ? owned : malloc(img_len > 0 ? img_len : 1);
    if (copy == NULL)
        return tool_fail(MOTA_ERR_IO, "out of memory");
    if (owned == NULL)
        memcpy(copy, img, img_len);
    d->role[d->n] = c->role;
    d->img[d->n] = copy;
    d->img_len[d->n++] = img_len;
    return MOTA_OK;
}

int pack_delta_load(const char *path, const char *c_name, size_t c_name_len, struct pack_delta *d)
{
    static struct mota_verify_result r;
    memset(d, 0, sizeof(*d));
    d->path = path;
    if (tool_map(path, &d->old) != MOTA_OK)
        return MOTA_ERR_IO;
    /* its structure and every payload's digest (not its signature: the device checked that when it took it) */
    int ret = mota_container_check_digests(d->old.data, d->old.len, &r);
    if (ret != MOTA_OK)
        return tool_fail(ret, "--delta-from %s: not a container mota reads", path);
    if (r.manifest.compat.c_name_len != c_name_len || memcmp(r.manifest.compat.c_name, c_name, c_name_len) != 0)
        return tool_fail(MOTA_ERR_DELTA_SOURCE,
                         "--delta-from %s is model '%.*s', the new one '%.*s': a delta predicts a model from its own "
                         "earlier version",
                         path, (int)r.manifest.compat.c_name_len, r.manifest.compat.c_name, (int)c_name_len, c_name);
    for (size_t c = 0; c < r.manifest.n_components && ret == MOTA_OK; c++)
        ret = keep_image(d, &r, &r.manifest.comp[c]);
    return ret;
}

const uint8_t *pack_delta_source(const struct pack_delta *d, enum mota_component_role role, size_t *len)
{
    for (size_t i = 0; d != NULL && i < d->n; i++) {
        if (d->role[i] == role) {
            *len = d->img_len[i];
            return d->img[i];
        }
    }
    return NULL;
}

/* The regions as a manifest carries them (mota/delta.h): little-endian start, len, src. */
static uint8_t *pack_regions(const struct tool_delta_region *r, size_t n)
{
    uint8_t *p = malloc(n * MOTA_DELTA_REGION_LEN + 1);
    for (size_t i = 0; p != NULL && i < n; i++) {
        const uint32_t v[3] = {r[i].start, r[i].len, r[i].src};
        for (size_t k = 0; k < 12; k++)
            p[i * 12 + k] = (uint8_t)(v[k / 4] >> (8 * (k % 4)));
    }
    return p;
}

/* Component i's delta stream: regions, the image minus their prediction, compressed. */
static int encode_delta(const struct pack_opts *o, struct pack_delta *d, size_t i, const uint8_t *old, size_t old_len,
                        const struct mapped *img, size_t *zlen)
{
    struct tool_delta_region *r = NULL;
    size_t n = 0;
    uint8_t *t = malloc(img->len > 0 ? img->len : 1);
    int ret =
        t == NULL ? MOTA_ERR_IO : tool_delta_diff(old, old_len, img->data, img->len, MOTA_DELTA_MAX_REGIONS, &r, &n);
    if (ret == MOTA_OK) {
        tool_delta_transform(old, img->data, img->len, r, n, t);
        ret = tool_compress(o->compress, t, img->len, tool_compress_block(o->compress), &d->zbuf[i], zlen);
    }
    if (ret == MOTA_OK && (d->regions[i] = pack_regions(r, n)) == NULL)
        ret = MOTA_ERR_IO;
    d->n_regions[i] = n;
    free(r);
    free(t);
    return ret;
}

int pack_delta_components(const struct pack_opts *o, struct pack_delta *d, struct mota_pack_spec *spec,
                          const struct mapped **src, struct mapped *wire)
{
    for (size_t i = 0; i < spec->n_components; i++) {
        struct mota_pack_component *c = &spec->comp[i];
        size_t old_len = 0, zlen = 0;
        const uint8_t *old = pack_delta_source(d, c->role, &old_len);
        d->full[i] = wire[i].len;
        if (old == NULL)
            continue; /* OLD has no such component: sent whole */
        int ret = encode_delta(o, d, i, old, old_len, src[i], &zlen);
        if (ret != MOTA_OK)
            return tool_fail(ret, "the %s payload's delta", mota_component_name(c->role));
        d->delta[i] = zlen;
        if (zlen >= wire[i].len || old_len > 0xFFFFFFFFu)
            continue; /* no smaller: the full payload goes */
        c->compressed = c->delta = true;
        c->z_alg = o->compress;
        c->z_block = tool_compress_block(o->compress);
        mota_sha256(old, old_len, c->src_digest);
        c->src_size = (uint32_t)old_len;
        c->regions = d->regions[i];
        c->regions_len = d->n_regions[i] * MOTA_DELTA_REGION_LEN;
        c->wire_size = zlen;
        wire[i] = (struct mapped){.data = d->zbuf[i], .len = zlen};
        d->used++;
    }
    return MOTA_OK;
}

void pack_delta_print(const struct pack_delta *d, const struct mota_pack_spec *spec)
{
    size_t whole = 0, sent = 0;
    for (size_t i = 0; i < spec->n_components; i++) {
        const struct mota_pack_component *c = &spec->comp[i];
        whole += d->full[i];
        sent += c->delta ? (size_t)c->wire_size : d->full[i];
        if (c->delta)
            printf("delta %s: %llu -> %llu bytes (%.2f%% of the full payload's %zu; %zu region%s of OLD's "
                   "%u-byte image; %s)\n",
                   mota_component_name(c->role), (unsigned long long)c->size, (unsigned long long)c->wire_size,
                   100.0 * (double)c->wire_size / (double)d->full[i], d->full[i], d->n_regions[i],
                   d->n_regions[i] == 1 ? "" : "s", (unsigned)c->src_size, tool_compress_name(c->z_alg));
        else if (pack_delta_source(d, c->role, &(size_t){0}) != NULL)
            printf("delta %s: not smaller (%zu bytes against %zu): sent whole\n", mota_component_name(c->role),
                   d->delta[i], d->full[i]);
    }
    if (d->used == 0)
        printf("delta: no smaller than the full container: wrote the full one (pushed to any device)\n");
    else
        printf("delta from %s: %zu payload bytes instead of %zu (%.2f%%); a device refuses it unless it runs that "
               "model\n",
               d->path, sent, whole, 100.0 * (double)sent / (double)whole);
}

void pack_delta_free(struct pack_delta *d)
{
    for (size_t i = 0; i < MOTA_CONTAINER_MAX_COMPONENTS; i++) {
        free(d->img[i]);
        free(d->regions[i]);
        free(d->zbuf[i]);
    }
    tool_unmap(&d->old);
    memset(d, 0, sizeof(*d));
}
