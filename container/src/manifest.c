/* SPDX-License-Identifier: Apache-2.0 */
/* The SUIT manifest: its members, the command sequences run over the components, the texts and the
 * compatibility map (with its epoch summary), and the profile a mota container keeps to. */
#include "mota/container.h"

#include "decode.h"
#include "mota/cbor.h"
#include "mota/err.h"
#include "mota/features.h"
#include "mota/decompress.h"
#include "mota/delta.h"
#include "mota/encinfo.h"
#include "mota/suit_keys.h"

#include <string.h>

/* Encoded component identifiers of the three roles: [h'...'] */
static const uint8_t id_code[] = {0x81, 0x44, 'c', 'o', 'd', 'e'};
static const uint8_t id_params[] = {0x81, 0x46, 'p', 'a', 'r', 'a', 'm', 's'};
static const uint8_t id_selftest[] = {0x81, 0x48, 's', 'e', 'l', 'f', 't', 'e', 's', 't'};

enum mota_component_role mota_component_role_of(const uint8_t *id, size_t id_len)
{
    if (id_len == sizeof(id_code) && memcmp(id, id_code, id_len) == 0)
        return MOTA_COMPONENT_CODE;
    if (id_len == sizeof(id_params) && memcmp(id, id_params, id_len) == 0)
        return MOTA_COMPONENT_PARAMS;
    if (id_len == sizeof(id_selftest) && memcmp(id, id_selftest, id_len) == 0)
        return MOTA_COMPONENT_SELFTEST;
    return MOTA_COMPONENT_OTHER;
}

const char *mota_component_payload_name(enum mota_component_role role)
{
    switch (role) {
    case MOTA_COMPONENT_CODE: return "#code";
    case MOTA_COMPONENT_PARAMS: return "#params";
    case MOTA_COMPONENT_SELFTEST: return "#selftest";
    default: return NULL;
    }
}

const char *mota_component_name(enum mota_component_role role)
{
    switch (role) {
    case MOTA_COMPONENT_CODE: return "code";
    case MOTA_COMPONENT_PARAMS: return "params";
    case MOTA_COMPONENT_SELFTEST: return "selftest";
    default: return "other";
    }
}

/* The next item is a bstr wrapping CBOR ("bstr .cbor X"): inner decodes its content. */
static int open_wrapped(struct mota_cbor_dec *d, struct mota_cbor_dec *inner)
{
    const uint8_t *p;
    size_t len;
    mota_cbor_get_bstr(d, &p, &len);
    mota_cbor_dec_init(inner, p, len);
    return d->err;
}

/* suit-components as the decoder sees them: each identifier is a role's image, or [role, 'transport'],
 * the component its payload is fetched into; both fold into one m->comp[] entry. */
struct comp_map {
    size_t n_ids;
    uint8_t entry[MOTA_CONTAINER_MAX_IDS];         /* identifier index -> m->comp[] */
    bool wire[MOTA_CONTAINER_MAX_IDS];             /* the index names a transport component */
    uint8_t source[MOTA_CONTAINER_MAX_COMPONENTS]; /* suit-parameter-source-component, 0xFF: none */
};

struct seq_state {
    struct mota_manifest *m;
    struct comp_map *map;
    uint8_t selected; /* bitmask of selected identifier indices */
    int which;        /* manifest key of the sequence being run */
};

/* One parameter's value, checked; it is stored by set_param. */
struct param {
    const uint8_t *p;
    size_t len;
    uint64_t size; /* image-size, or source-component's index */
    uint8_t digest[MOTA_SHA256_LEN];
};

static void decode_param(struct mota_cbor_dec *d, int64_t key, struct param *v)
{
    struct mota_cbor_dec dd;
    switch (key) {
    case MOTA_PAR_VENDOR:
    case MOTA_PAR_CLASS:
        mota_cbor_get_bstr(d, &v->p, &v->len);
        if (v->len != 16)
            mota_cbor_fail(d, MOTA_ERR_CBOR_TYPE);
        break;
    case MOTA_PAR_DIGEST:
        mota_cbor_get_bstr(d, &v->p, &v->len);
        if (d->err == 0) {
            mota_cbor_dec_init(&dd, v->p, v->len);
            mota_dec_digest(&dd, v->digest);
            mota_cbor_fail(d, mota_cbor_finish(&dd));
        }
        break;
    case MOTA_PAR_SIZE:
    case MOTA_PAR_SOURCE: mota_cbor_get_uint(d, &v->size); break;
    case MOTA_PAR_URI:
        mota_cbor_get_tstr(d, (const char **)&v->p, &v->len);
        if (d->err == 0 && (v->len < 2 || v->len > MOTA_CONTAINER_MAX_PAYLOAD_NAME || v->p[0] != '#'))
            mota_cbor_fail(d, MOTA_ERR_URI);
        break;
    case MOTA_PAR_ENCRYPTION_INFO: /* decoded by the profile (mota/encinfo.h) */
        MOTA_DEC_FIELD(d, mota_cbor_get_bstr(d, &v->p, &v->len), MOTA_ERR_ENC_INFO);
        if (v->len == 0 || v->len > MOTA_ENC_MAX_INFO)
            mota_cbor_fail(d, MOTA_ERR_ENC_INFO);
        break;
    default: mota_cbor_fail(d, MOTA_ERR_PARAM_UNSUPPORTED); break;
    }
}

/* The parameters a transport component takes: where its payload comes from, and what it is */
static int set_wire_param(struct mota_component *comp, int64_t key, const struct param *v, bool override)
{
    switch (key) {
    case MOTA_PAR_DIGEST:
        if (override || !comp->has_wire_digest) {
            memcpy(comp->wire_digest, v->digest, MOTA_SHA256_LEN);
            comp->has_wire_digest = true;
        }
        return 0;
    case MOTA_PAR_SIZE:
        if (override || !comp->has_wire_size) {
            comp->wire_size = v->size;
            comp->has_wire_size = true;
        }
        return 0;
    case MOTA_PAR_ENCRYPTION_INFO: return MOTA_ERR_ENC_INFO; /* it belongs to the image it makes */
    default: return MOTA_ERR_SOURCE_COMPONENT;               /* MOTA_PAR_SOURCE */
    }
}

/* set-parameters keeps what a component has; override-parameters replaces it */
static int set_param(struct seq_state *st, size_t idx, int64_t key, const struct param *v, bool override)
{
    struct mota_component *comp = &st->m->comp[st->map->entry[idx]];
    bool wire = st->map->wire[idx];
    switch (key) {
    case MOTA_PAR_VENDOR:
        if (override || !comp->has_vendor) {
            memcpy(comp->vendor_id, v->p, 16);
            comp->has_vendor = true;
        }
        return 0;
    case MOTA_PAR_CLASS:
        if (override || !comp->has_class) {
            memcpy(comp->class_id, v->p, 16);
            comp->has_class = true;
        }
        return 0;
    case MOTA_PAR_URI:
        if (override || !comp->has_uri) {
            comp->uri = (const char *)v->p;
            comp->uri_len = v->len;
            comp->has_uri = true;
            comp->pattern |= wire ? MOTA_PAT_URI_WIRE : MOTA_PAT_URI_IMAGE;
        }
        return 0;
    default: break;
    }
    if (wire)
        return set_wire_param(comp, key, v, override);
    if (key == MOTA_PAR_DIGEST && (override || !comp->has_digest)) {
        memcpy(comp->digest, v->digest, MOTA_SHA256_LEN);
        comp->has_digest = true;
    } else if (key == MOTA_PAR_SIZE && (override || !comp->has_size)) {
        comp->size = v->size;
        comp->has_size = true;
    } else if (key == MOTA_PAR_ENCRYPTION_INFO && (override || comp->enc_info == NULL)) {
        comp->enc_info = v->p;
        comp->enc_len = v->len;
    } else if (key == MOTA_PAR_SOURCE && (override || st->map->source[st->map->entry[idx]] == 0xFF)) {
        st->map->source[st->map->entry[idx]] = v->size < st->map->n_ids ? (uint8_t)v->size : 0xFE;
    }
    return 0;
}

static int decode_params(struct mota_cbor_dec *d, struct seq_state *st, bool override)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    mota_cbor_get_map(d, &n);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        struct param v = {NULL, 0, 0, {0}};
        mota_cbor_get_int_key(d, &key, &prev);
        decode_param(d, key, &v);
        for (size_t c = 0; c < st->map->n_ids && d->err == 0; c++) {
            if (st->selected & (1u << c))
                mota_cbor_fail(d, set_param(st, c, key, &v, override));
        }
    }
    return d->err;
}

/* directive-set-component-index: an index, true (all) or an array of indices */
static void decode_set_index(struct mota_cbor_dec *d, struct seq_state *st)
{
    struct mota_cbor_item it;
    size_t n = st->map->n_ids, k;
    uint64_t idx;
    mota_cbor_peek(d, &it);
    if (d->err != 0)
        return;
    if (it.type == MOTA_CBOR_TRUE || it.type == MOTA_CBOR_UINT) {
        d->pos += it.size;
        if (it.type == MOTA_CBOR_UINT && it.val >= n)
            mota_cbor_fail(d, MOTA_ERR_COMPONENT_INDEX);
        st->selected = (uint8_t)(it.type == MOTA_CBOR_TRUE ? (1u << n) - 1 : 1u << (it.val & 7));
    } else if (it.type == MOTA_CBOR_ARRAY) {
        mota_cbor_get_array(d, &k);
        if (k == 0 || k > MOTA_CONTAINER_MAX_IDS)
            mota_cbor_fail(d, MOTA_ERR_COMPONENT_INDEX);
        st->selected = 0;
        for (size_t j = 0; j < k && d->err == 0; j++) {
            mota_cbor_get_uint(d, &idx);
            if (idx >= n)
                mota_cbor_fail(d, MOTA_ERR_COMPONENT_INDEX);
            st->selected |= (uint8_t)(1u << (idx & 7));
        }
    } else {
        mota_cbor_fail(d, MOTA_ERR_CBOR_TYPE);
    }
}

/* What mota-directive-decompress or -patch makes an image with (the profile checks the values) */
struct made {
    uint64_t alg, block;
#if MOTA_FEATURE_DELTA
    uint64_t src_size;
    const uint8_t *regions;
    size_t regions_len;
    uint8_t src_digest[MOTA_SHA256_LEN];
#endif
};

/* One field of a patch's argument past algorithm and block */
static void decode_patch_field(struct mota_cbor_dec *d, int64_t key, struct made *z)
{
#if !MOTA_FEATURE_DELTA
    (void)key, (void)z;
    mota_cbor_fail(d, MOTA_ERR_DELTA_OFF); /* said before any erase, as a missing decoder is */
#else
    struct mota_cbor_dec dd;
    const uint8_t *p;
    size_t len;
    if (key == MOTA_P_SOURCE_SIZE) {
        mota_cbor_get_uint(d, &z->src_size);
    } else if (key == MOTA_P_REGIONS) {
        mota_cbor_get_bstr(d, &z->regions, &z->regions_len);
    } else {
        mota_cbor_get_bstr(d, &p, &len); /* source-digest: bstr .cbor suit_digest */
        mota_cbor_dec_init(&dd, p, len);
        if (d->err == 0)
            mota_dec_digest(&dd, z->src_digest);
        mota_cbor_fail(d, d->err == 0 ? mota_cbor_finish(&dd) : 0);
    }
#endif
}

/* mota-directive-decompress's argument: bstr .cbor {1: algorithm, 2: block}; -patch's: also 3: source
 * digest, 4: source size, 5: regions; every key, in order */
static void decode_made_arg(struct mota_cbor_dec *d, bool patch, struct made *z)
{
    struct mota_cbor_dec dd;
    const uint8_t *p;
    size_t n = 0, len;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    MOTA_DEC_FIELD(d, mota_cbor_get_bstr(d, &p, &len), MOTA_ERR_COMPRESSION_INFO);
    if (d->err != 0)
        return;
    mota_cbor_dec_init(&dd, p, len);
    mota_cbor_get_map(&dd, &n);
    if (dd.err == 0 && n != (patch ? 5u : 2u))
        mota_cbor_fail(&dd, MOTA_ERR_COMPRESSION_INFO);
    for (size_t i = 0; i < n && dd.err == 0; i++) {
        mota_cbor_get_int_key(&dd, &key, &prev);
        if (dd.err == 0 && (key < MOTA_Z_ALG || key > (patch ? MOTA_P_REGIONS : MOTA_Z_BLOCK)))
            mota_cbor_fail(&dd, MOTA_ERR_COMPRESSION_INFO);
        else if (key <= MOTA_Z_BLOCK)
            mota_cbor_get_uint(&dd, key == MOTA_Z_BLOCK ? &z->block : &z->alg);
        else
            MOTA_DEC_FIELD(&dd, decode_patch_field(&dd, key, z), MOTA_ERR_COMPRESSION_INFO);
    }
    mota_cbor_fail(d, mota_cbor_finish(&dd));
}

/* copy (with encryption info) or mota-directive-decompress: the image made from its role's transport,
 * once that was fetched */
static int make_image(struct seq_state *st, size_t idx, int64_t cmd, const struct made *z)
{
    uint8_t e = st->map->entry[idx], src = st->map->source[e];
    struct mota_component *comp = &st->m->comp[e];
    if (st->which != MOTA_MAN_INSTALL || st->map->wire[idx])
        return MOTA_ERR_COMMAND_UNSUPPORTED;
    if (src >= st->map->n_ids || st->map->entry[src] != e || !st->map->wire[src] ||
        !(comp->pattern & MOTA_PAT_FETCH_WIRE))
        return MOTA_ERR_SOURCE_COMPONENT;
    if (cmd == MOTA_SUIT_CMD_COPY && comp->enc_info == NULL)
        return MOTA_ERR_COMMAND_UNSUPPORTED; /* a plain copy: mota fetches an image where it is stored */
    comp->pattern |= (comp->pattern & MOTA_PAT_MADE) ? MOTA_PAT_MADE_TWICE : MOTA_PAT_MADE;
    comp->encrypted = comp->enc_info != NULL;
    comp->compressed = cmd != MOTA_SUIT_CMD_COPY;
    comp->delta = cmd == MOTA_SUIT_CMD_PATCH;
    comp->z_alg = comp->compressed ? (z->alg > 0xFFFFu ? 0xFFFFu : (uint32_t)z->alg) : 0; /* the profile refuses */
    comp->z_block = comp->compressed ? (z->block > 0xFFFFFFFFu ? 0 : (uint32_t)z->block) : 0;
#if MOTA_FEATURE_DELTA
    if (comp->delta) {
        memcpy(comp->src_digest, z->src_digest, MOTA_SHA256_LEN);
        comp->src_size = z->src_size > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)z->src_size; /* the profile refuses */
        comp->regions = z->regions;
        comp->regions_len = z->regions_len;
    }
#endif
    return 0;
}

/* A condition or directive on one selected identifier, in the sequence st->which. */
static int apply_command(struct seq_state *st, size_t idx, int64_t cmd, const struct made *z)
{
    struct mota_component *comp = &st->m->comp[st->map->entry[idx]];
    bool wire = st->map->wire[idx];
    int which = st->which;
    switch (cmd) {
    case MOTA_SUIT_CMD_VENDOR:
        if (!comp->has_vendor)
            return MOTA_ERR_NO_VENDOR_CHECK;
        st->m->checks_vendor |= which == MOTA_MAN_COMMON;
        return 0;
    case MOTA_SUIT_CMD_CLASS:
        if (!comp->has_class)
            return MOTA_ERR_NO_CLASS_CHECK;
        st->m->checks_class |= which == MOTA_MAN_COMMON;
        return 0;
    case MOTA_SUIT_CMD_IMAGE_MATCH:
        if (wire && (which != MOTA_MAN_INSTALL || !(comp->pattern & MOTA_PAT_FETCH_WIRE)))
            return MOTA_ERR_COMMAND_UNSUPPORTED; /* a transport is checked as it arrives, never stored */
        if (wire ? !comp->has_wire_digest || !comp->has_wire_size : !comp->has_digest || !comp->has_size)
            return MOTA_ERR_IMAGE_PARAMS;
        comp->pattern |= wire ? MOTA_PAT_WIRE_MATCH : 0;
        comp->image_match |= !wire && which == MOTA_MAN_VALIDATE;
        return 0;
    case MOTA_SUIT_CMD_FETCH:
        if (which != MOTA_MAN_INSTALL)
            return MOTA_ERR_COMMAND_UNSUPPORTED;
        if (!(comp->pattern & (wire ? MOTA_PAT_URI_WIRE : MOTA_PAT_URI_IMAGE)))
            return MOTA_ERR_URI;
        comp->fetched = true;
        comp->pattern |= wire ? MOTA_PAT_FETCH_WIRE : MOTA_PAT_FETCH_IMAGE;
        return 0;
    case MOTA_SUIT_CMD_COPY:
    case MOTA_SUIT_CMD_DECOMPRESS:
    case MOTA_SUIT_CMD_PATCH: return make_image(st, idx, cmd, z);
    default: /* MOTA_SUIT_CMD_INVOKE */ return which == MOTA_MAN_INVOKE && !wire ? 0 : MOTA_ERR_COMMAND_UNSUPPORTED;
    }
}

static int run_sequence(const uint8_t *buf, size_t len, struct mota_manifest *m, struct comp_map *map, int which)
{
    struct mota_cbor_dec d;
    size_t n;
    struct seq_state st = {m, map, 1u, which};

    mota_cbor_dec_init(&d, buf, len);
    mota_cbor_get_array(&d, &n);
    if (n == 0 || n % 2 != 0)
        mota_cbor_fail(&d, MOTA_ERR_SEQUENCE_MALFORMED);
    for (size_t i = 0; i < n && d.err == 0; i += 2) {
        int64_t cmd;
        uint64_t arg;
        struct made z = {0};
        mota_cbor_get_int(&d, &cmd);
        if (d.err != 0)
            break;
        switch (cmd) {
        case MOTA_SUIT_CMD_SET_INDEX: decode_set_index(&d, &st); continue;
        case MOTA_SUIT_CMD_OVERRIDE_PARAMS:
        case MOTA_SUIT_CMD_SET_PARAMS: decode_params(&d, &st, cmd == MOTA_SUIT_CMD_OVERRIDE_PARAMS); continue;
        case MOTA_SUIT_CMD_DECOMPRESS:
        case MOTA_SUIT_CMD_PATCH: decode_made_arg(&d, cmd == MOTA_SUIT_CMD_PATCH, &z); break;
        case MOTA_SUIT_CMD_VENDOR:
        case MOTA_SUIT_CMD_CLASS:
        case MOTA_SUIT_CMD_IMAGE_MATCH:
        case MOTA_SUIT_CMD_FETCH:
        case MOTA_SUIT_CMD_COPY:
        case MOTA_SUIT_CMD_INVOKE: mota_cbor_get_uint(&d, &arg); break; /* a reporting policy */
        default: mota_cbor_fail(&d, MOTA_ERR_COMMAND_UNSUPPORTED); continue;
        }
        for (size_t c = 0; c < map->n_ids && d.err == 0; c++) {
            if (st.selected & (1u << c))
                mota_cbor_fail(&d, apply_command(&st, c, cmd, &z));
        }
    }
    return mota_cbor_finish(&d);
}

/* The role of [h'<role>', h'transport'] (encoded: id, id_len), or OTHER */
static enum mota_component_role transport_role(const uint8_t *id, size_t id_len)
{
    static const uint8_t tail[] = {0x49, 't', 'r', 'a', 'n', 's', 'p', 'o', 'r', 't'};
    uint8_t base[MOTA_CONTAINER_MAX_COMPONENT_ID + 2];
    size_t n = id_len - sizeof(tail);
    if (id_len <= sizeof(tail) + 1 || id[0] != 0x82 || n > sizeof(base) || memcmp(id + n, tail, sizeof(tail)) != 0)
        return MOTA_COMPONENT_OTHER;
    base[0] = 0x81; /* the image's identifier: the same first element, alone */
    memcpy(base + 1, id + 1, n - 1);
    return mota_component_role_of(base, n);
}

/* One identifier: a new image entry, or the transport of an image listed before it */
static void map_component(struct mota_cbor_dec *d, struct mota_manifest *m, struct comp_map *map, size_t idx,
                          const uint8_t *id, size_t id_len)
{
    enum mota_component_role tr = transport_role(id, id_len);
    size_t e = m->n_components;
    for (size_t o = 0; o < m->n_components; o++) {
        if (m->comp[o].id_len == id_len && memcmp(m->comp[o].id, id, id_len) == 0)
            mota_cbor_fail(d, MOTA_ERR_COMPONENT_ID);
        if (tr != MOTA_COMPONENT_OTHER && m->comp[o].role == tr)
            e = o;
    }
    if (tr != MOTA_COMPONENT_OTHER && e < m->n_components) {
        if (m->comp[e].transport)
            mota_cbor_fail(d, MOTA_ERR_COMPONENT_ID);
        m->comp[e].transport = true;
    } else if (tr != MOTA_COMPONENT_OTHER || e >= MOTA_CONTAINER_MAX_COMPONENTS) {
        mota_cbor_fail(d, MOTA_ERR_COMPONENTS); /* a transport before its image, or a fourth image */
    } else {
        m->comp[e].id = id;
        m->comp[e].id_len = id_len;
        m->comp[e].role = mota_component_role_of(id, id_len);
        m->n_components++;
    }
    map->entry[idx] = (uint8_t)(e < MOTA_CONTAINER_MAX_COMPONENTS ? e : 0);
    map->wire[idx] = tr != MOTA_COMPONENT_OTHER;
}

/* suit-components: [1*6 [* bstr]], each identifier once: up to three images, each with its transport */
static void decode_components(struct mota_cbor_dec *d, struct mota_manifest *m, struct comp_map *map)
{
    size_t nc, ne, pl;
    const uint8_t *p;
    mota_cbor_get_array(d, &nc);
    if (nc == 0 || nc > MOTA_CONTAINER_MAX_IDS)
        mota_cbor_fail(d, MOTA_ERR_COMPONENTS);
    if (d->err != 0)
        return;
    map->n_ids = nc;
    for (size_t c = 0; c < nc && d->err == 0; c++) {
        size_t start = d->pos;
        mota_cbor_get_array(d, &ne);
        if (ne > 4)
            mota_cbor_fail(d, MOTA_ERR_COMPONENT_ID);
        for (size_t k = 0; k < ne && d->err == 0; k++) {
            mota_cbor_get_bstr(d, &p, &pl);
            if (pl > MOTA_CONTAINER_MAX_COMPONENT_ID)
                mota_cbor_fail(d, MOTA_ERR_COMPONENT_ID);
        }
        if (d->err == 0)
            map_component(d, m, map, c, d->buf + start, d->pos - start);
    }
}

static int decode_common(struct mota_cbor_dec *d, struct mota_manifest *m, struct comp_map *map, const uint8_t **shared,
                         size_t *shared_len)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;

    mota_cbor_get_map(d, &n);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        mota_cbor_get_int_key(d, &key, &prev);
        if (d->err != 0)
            break;
        if (key == MOTA_COMMON_COMPONENTS)
            decode_components(d, m, map);
        else if (key == MOTA_COMMON_SHARED)
            mota_cbor_get_bstr(d, shared, shared_len);
        else
            mota_cbor_fail(d, MOTA_ERR_MANIFEST_UNKNOWN_KEY);
    }
    if (mota_cbor_finish(d) == 0 && m->n_components == 0)
        mota_cbor_fail(d, MOTA_ERR_COMPONENTS);
    return d->err;
}

/* A text of at most MOTA_CONTAINER_MAX_TEXT bytes; anything else is MOTA_ERR_TEXT. */
static void get_text(struct mota_cbor_dec *d, const char **s, size_t *n)
{
    MOTA_DEC_FIELD(d, mota_cbor_get_tstr(d, s, n), MOTA_ERR_TEXT);
    if (*n > MOTA_CONTAINER_MAX_TEXT)
        mota_cbor_fail(d, MOTA_ERR_TEXT);
}

/* A text-map key in canonical order after the previous one (*prev, *prev_len: its encoding). */
static void text_key_order(struct mota_cbor_dec *d, size_t start, const uint8_t **prev, size_t *prev_len)
{
    if (d->err == 0 && *prev != NULL)
        mota_cbor_fail(d, mota_cbor_key_order(*prev, *prev_len, d->buf + start, d->pos - start));
    *prev = d->buf + start;
    *prev_len = d->pos - start;
}

/* A component's texts: { int => tstr }; those of the code component, in the first language, are kept. */
static void decode_component_text(struct mota_cbor_dec *d, struct mota_manifest *m, size_t id_start, bool use)
{
    const struct mota_component *comp = NULL;
    size_t nf, sl, id_len = d->pos - id_start;
    int64_t fk, fprev = MOTA_CBOR_KEY_NONE;
    const char *s;
    for (size_t c = 0; c < m->n_components; c++) { /* the identifier must name a component */
        if (m->comp[c].id_len == id_len && memcmp(m->comp[c].id, d->buf + id_start, id_len) == 0)
            comp = &m->comp[c];
    }
    if (comp == NULL)
        mota_cbor_fail(d, MOTA_ERR_COMPONENT_ID);
    MOTA_DEC_FIELD(d, mota_cbor_get_map(d, &nf), MOTA_ERR_TEXT);
    for (size_t f = 0; f < nf && d->err == 0; f++) {
        mota_cbor_get_int_key(d, &fk, &fprev);
        get_text(d, &s, &sl);
        if (d->err != 0 || !use || comp->role != MOTA_COMPONENT_CODE)
            continue;
        if (fk == MOTA_CTEXT_VENDOR_NAME) {
            m->text.vendor_name = s;
            m->text.vendor_name_len = sl;
        } else if (fk == MOTA_CTEXT_MODEL_NAME) {
            m->text.model_name = s;
            m->text.model_name_len = sl;
        } else if (fk == MOTA_CTEXT_MODEL_INFO) {
            m->text.class_name = s;
            m->text.class_name_len = sl;
        } else if (fk == MOTA_CTEXT_VERSION) {
            m->text.version = s;
            m->text.version_len = sl;
        }
    }
}

/* One language's texts: { int => tstr, * component-id => { int => tstr } } */
static void decode_language(struct mota_cbor_dec *d, struct mota_manifest *m, bool use)
{
    size_t ne, sl;
    const uint8_t *prev = NULL;
    size_t prev_len = 0;
    const char *s;
    MOTA_DEC_FIELD(d, mota_cbor_get_map(d, &ne), MOTA_ERR_TEXT);
    for (size_t e = 0; e < ne && d->err == 0; e++) {
        struct mota_cbor_item it;
        size_t ks = d->pos;
        mota_cbor_peek(d, &it);
        if (d->err != 0)
            break;
        if (it.type == MOTA_CBOR_ARRAY)
            mota_cbor_skip(d);
        else if (it.type == MOTA_CBOR_UINT || it.type == MOTA_CBOR_NINT)
            d->pos += it.size;
        else
            mota_cbor_fail(d, MOTA_ERR_TEXT);
        text_key_order(d, ks, &prev, &prev_len);
        if (it.type == MOTA_CBOR_ARRAY) {
            decode_component_text(d, m, ks, use);
            continue;
        }
        get_text(d, &s, &sl);
        int64_t k = it.val > 0xFFFF ? 0 : it.type == MOTA_CBOR_UINT ? (int64_t)it.val : -1 - (int64_t)it.val;
        if (d->err == 0 && use && k == MOTA_TEXT_DESCRIPTION) {
            m->text.description = s;
            m->text.description_len = sl;
        } else if (d->err == 0 && use && k == MOTA_TEXT_CREATED) {
            m->text.created = s;
            m->text.created_len = sl;
        }
    }
}

/* SUIT_Text_Map = { + tag38-ltag => { int => tstr, * component-id => { int => tstr } } } */
static int decode_text(struct mota_cbor_dec *d, struct mota_manifest *m)
{
    size_t nl, lang_len;
    const uint8_t *prev_lang = NULL;
    size_t prev_lang_len = 0;
    const char *lang;

    MOTA_DEC_FIELD(d, mota_cbor_get_map(d, &nl), MOTA_ERR_TEXT);
    if (nl == 0 || nl > 4)
        mota_cbor_fail(d, MOTA_ERR_TEXT);
    for (size_t l = 0; l < nl && d->err == 0; l++) {
        size_t kstart = d->pos;
        get_text(d, &lang, &lang_len);
        if (lang_len == 0 || lang_len > 35)
            mota_cbor_fail(d, MOTA_ERR_TEXT);
        text_key_order(d, kstart, &prev_lang, &prev_lang_len);
        decode_language(d, m, l == 0); /* report the first language */
    }
    if (mota_cbor_finish(d) == 0)
        m->has_text = true;
    return d->err;
}

/* Compatibility fields: a wrong type or a value out of range is MOTA_ERR_COMPAT_FIELD. */
static void get_u32(struct mota_cbor_dec *d, uint32_t *v, uint32_t max)
{
    uint64_t x;
    MOTA_DEC_FIELD(d, mota_cbor_get_uint(d, &x), MOTA_ERR_COMPAT_FIELD);
    if (x > max)
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
    *v = d->err == 0 ? (uint32_t)x : 0;
}

static void get_flag(struct mota_cbor_dec *d, bool *v)
{
    MOTA_DEC_FIELD(d, mota_cbor_get_bool(d, v), MOTA_ERR_COMPAT_FIELD);
}

static void get_size(struct mota_cbor_dec *d, uint64_t *v)
{
    MOTA_DEC_FIELD(d, mota_cbor_get_uint(d, v), MOTA_ERR_COMPAT_FIELD);
    if (*v > 0xFFFFFFFFu) /* 32-bit address spaces */
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
}

static void get_name(struct mota_cbor_dec *d, const char **s, size_t *len, size_t min, size_t max)
{
    MOTA_DEC_FIELD(d, mota_cbor_get_tstr(d, s, len), MOTA_ERR_COMPAT_FIELD);
    if (*len < min || *len > max)
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
}

/* an array of exactly n items, else MOTA_ERR_COMPAT_FIELD */
static void get_tuple(struct mota_cbor_dec *d, size_t n)
{
    size_t na;
    mota_cbor_get_array(d, &na);
    if (na != n)
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
}

static void decode_selftest(struct mota_cbor_dec *d, struct mota_selftest *t)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    unsigned seen = 0;
    MOTA_DEC_FIELD(d, mota_cbor_get_map(d, &n), MOTA_ERR_SELFTEST_FIELD);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        mota_cbor_get_int_key(d, &key, &prev);
        if (d->err != 0)
            break;
        if (key == MOTA_SELFTEST_DIGEST) {
            MOTA_DEC_FIELD(d, mota_dec_digest(d, t->output_digest), MOTA_ERR_SELFTEST_FIELD);
        } else if (key == MOTA_SELFTEST_SIZE || key == MOTA_SELFTEST_LATENCY) {
            int was = d->err; /* any failure of these two reads is the field's */
            mota_cbor_get_uint(d, key == MOTA_SELFTEST_SIZE ? &t->output_size : &t->max_latency_us);
            if (was == 0 && d->err != 0)
                d->err = MOTA_ERR_SELFTEST_FIELD;
        } else if (key < 0) {
            mota_cbor_skip(d);
            continue;
        } else {
            mota_cbor_fail(d, MOTA_ERR_COMPAT_CRITICAL);
        }
        seen |= 1u << (key & 7);
    }
    if (seen != 0xEu || t->output_size == 0)
        mota_cbor_fail(d, MOTA_ERR_SELFTEST_FIELD);
    t->present = d->err == 0;
}

/* npu-epochs: [blocks, blob, hw, hybrid, sw, epochs / null, npu-epochs / null, hybrid-epochs, sw-epochs],
 * the counts agreeing with each other (informational, but signed: a wrong one is a wrong container) */
void mota_epoch_summary_get(struct mota_cbor_dec *d, struct mota_epoch_summary *s)
{
    struct mota_cbor_item it;
    uint32_t *counts[] = {&s->blocks, &s->blob, &s->hw, &s->hybrid, &s->sw};
    get_tuple(d, 9);
    for (size_t i = 0; i < 5; i++)
        get_u32(d, counts[i], MOTA_EPOCH_MAX_BLOCKS);
    mota_cbor_peek(d, &it);
    s->epochs_known = d->err == 0 && it.type != MOTA_CBOR_NULL;
    if (s->epochs_known) {
        get_u32(d, &s->epochs, 0xFFFFFFu);
        get_u32(d, &s->npu_epochs, 0xFFFFFFu);
    } else {
        MOTA_DEC_FIELD(d, mota_cbor_get_null(d), MOTA_ERR_COMPAT_FIELD);
        MOTA_DEC_FIELD(d, mota_cbor_get_null(d), MOTA_ERR_COMPAT_FIELD);
    }
    get_u32(d, &s->hybrid_epochs, MOTA_EPOCH_MAX_BLOCKS);
    get_u32(d, &s->sw_epochs, MOTA_EPOCH_MAX_BLOCKS);
    if (s->blob + s->hw + s->hybrid + s->sw != s->blocks || s->hybrid_epochs + s->sw_epochs > s->blocks ||
        (s->epochs_known && s->npu_epochs + s->hybrid_epochs + s->sw_epochs != s->epochs))
        mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
}

void mota_epoch_summary_put(struct mota_cbor_enc *e, const struct mota_epoch_summary *s)
{
    mota_cbor_put_array(e, 9);
    mota_cbor_put_uint(e, s->blocks);
    mota_cbor_put_uint(e, s->blob);
    mota_cbor_put_uint(e, s->hw);
    mota_cbor_put_uint(e, s->hybrid);
    mota_cbor_put_uint(e, s->sw);
    if (s->epochs_known) {
        mota_cbor_put_uint(e, s->epochs);
        mota_cbor_put_uint(e, s->npu_epochs);
    } else {
        mota_cbor_put_null(e);
        mota_cbor_put_null(e);
    }
    mota_cbor_put_uint(e, s->hybrid_epochs);
    mota_cbor_put_uint(e, s->sw_epochs);
}

/* One compatibility field by its key; unknown non-negative keys are requirements we cannot meet. */
static void decode_compat_field(struct mota_cbor_dec *d, int64_t key, struct mota_compat *c)
{
    switch (key) {
    case MOTA_COMPAT_RELOC:
        get_tuple(d, 2);
        get_u32(d, &c->reloc_major, 15);
        get_u32(d, &c->reloc_minor, 15);
        break;
    case MOTA_COMPAT_CPU: get_u32(d, &c->cpu_part, 0xFFF); break;
    case MOTA_COMPAT_FPU: get_flag(d, &c->fpu); break;
    case MOTA_COMPAT_ABI: get_u32(d, &c->float_abi, 2); break;
    case MOTA_COMPAT_SECURE: get_flag(d, &c->secure); break;
    case MOTA_COMPAT_DBG: get_flag(d, &c->dbg_info); break;
    case MOTA_COMPAT_ASYNC: get_flag(d, &c->async); break;
    case MOTA_COMPAT_TOOLCHAIN: get_u32(d, &c->toolchain, 15); break;
    case MOTA_COMPAT_RTVER:
        get_tuple(d, 3);
        get_u32(d, &c->rt_major, 255);
        get_u32(d, &c->rt_minor, 255);
        get_u32(d, &c->rt_micro, 255);
        c->has_runtime_version = true;
        break;
    case MOTA_COMPAT_CNAME: get_name(d, &c->c_name, &c->c_name_len, 1, 64); break;
    case MOTA_COMPAT_ACTS: get_size(d, &c->acts_size); break;
    case MOTA_COMPAT_PARAMS: get_size(d, &c->params_size); break;
    case MOTA_COMPAT_EXTRAM: get_size(d, &c->ext_ram_size); break;
    case MOTA_COMPAT_XIP: get_size(d, &c->exec_ram_xip); break;
    case MOTA_COMPAT_COPY: get_size(d, &c->exec_ram_copy); break;
    case MOTA_COMPAT_MODE:
        get_u32(d, &c->install_mode, 2);
        if (c->install_mode == 0)
            mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
        break;
    case MOTA_COMPAT_STRUCTS:
        get_u32(d, &c->struct_sizes, 0xFFFFFFFFu);
        c->has_struct_sizes = true;
        break;
    case MOTA_COMPAT_SELFTEST: decode_selftest(d, &c->selftest); break;
    case MOTA_COMPAT_RTDESC: get_name(d, &c->rt_desc, &c->rt_desc_len, 0, 128); break;
    case MOTA_COMPAT_EPOCHS:
        mota_epoch_summary_get(d, &c->epochs);
        c->has_epochs = d->err == 0;
        break;
    default:
        if (key >= 0)
            mota_cbor_fail(d, MOTA_ERR_COMPAT_CRITICAL); /* an unknown requirement: fail closed */
        else
            mota_cbor_skip(d); /* negative keys: optional hints */
        break;
    }
}

#define BIT(k) (1u << (k))
static int decode_compat(struct mota_cbor_dec *d, struct mota_compat *c)
{
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    uint32_t seen = 0;
    const uint32_t required = BIT(MOTA_COMPAT_RELOC) | BIT(MOTA_COMPAT_CPU) | BIT(MOTA_COMPAT_FPU) |
                              BIT(MOTA_COMPAT_ABI) | BIT(MOTA_COMPAT_SECURE) | BIT(MOTA_COMPAT_DBG) |
                              BIT(MOTA_COMPAT_ASYNC) | BIT(MOTA_COMPAT_TOOLCHAIN) | BIT(MOTA_COMPAT_CNAME) |
                              BIT(MOTA_COMPAT_ACTS) | BIT(MOTA_COMPAT_PARAMS) | BIT(MOTA_COMPAT_EXTRAM) |
                              BIT(MOTA_COMPAT_XIP) | BIT(MOTA_COMPAT_COPY) | BIT(MOTA_COMPAT_MODE);

    MOTA_DEC_FIELD(d, mota_cbor_get_map(d, &n), MOTA_ERR_COMPAT_FIELD);
    for (size_t i = 0; i < n && d->err == 0; i++) {
        mota_cbor_get_int_key(d, &key, &prev);
        if (d->err != 0)
            break;
        decode_compat_field(d, key, c);
        if (key >= 0 && key < 32)
            seen |= BIT(key);
    }
    if (mota_cbor_finish(d) != 0)
        return d->err;
    if ((seen & required) != required || (c->reloc_major == 8 && !c->has_runtime_version))
        return mota_cbor_fail(d, MOTA_ERR_COMPAT_FIELD);
    return 0;
}

struct manifest_parts {
    const uint8_t *shared, *seqs[3]; /* the shared sequence; validate, install, invoke */
    size_t shared_len, seq_len[3];
    bool have_version, have_seq, have_common;
    struct comp_map map;
};

/* One manifest member; the sequences are kept to run once the whole manifest is read. */
static void decode_member(struct mota_cbor_dec *d, int64_t key, struct mota_manifest *m, struct manifest_parts *pt)
{
    struct mota_cbor_dec w;
    int slot = key == MOTA_MAN_VALIDATE ? 0 : key == MOTA_MAN_INSTALL ? 1 : 2;
    switch (key) {
    case MOTA_MAN_VERSION:
        MOTA_DEC_FIELD(d, mota_cbor_get_uint(d, &m->version), MOTA_ERR_MANIFEST_VERSION);
        if (m->version != 1)
            mota_cbor_fail(d, MOTA_ERR_MANIFEST_VERSION);
        pt->have_version = true;
        break;
    case MOTA_MAN_SEQ:
        MOTA_DEC_FIELD(d, mota_cbor_get_uint(d, &m->seq), MOTA_ERR_MANIFEST_SEQ);
        pt->have_seq = true;
        break;
    case MOTA_MAN_COMMON:
        if (open_wrapped(d, &w) == 0)
            mota_cbor_fail(d, decode_common(&w, m, &pt->map, &pt->shared, &pt->shared_len));
        pt->have_common = true;
        break;
    case MOTA_MAN_LOAD: /* run where it stands: nothing after it depends on it */
        if (open_wrapped(d, &w) == 0)
            mota_cbor_fail(d, pt->have_common ? run_sequence(w.buf, w.len, m, &pt->map, MOTA_MAN_LOAD)
                                              : MOTA_ERR_MANIFEST_NO_COMMON);
        m->has_load = true;
        break;
    case MOTA_MAN_VALIDATE:
    case MOTA_MAN_INSTALL:
    case MOTA_MAN_INVOKE: mota_cbor_get_bstr(d, &pt->seqs[slot], &pt->seq_len[slot]); break;
    case MOTA_MAN_TEXT:
        open_wrapped(d, &w);
        if (!pt->have_common)
            mota_cbor_fail(d, MOTA_ERR_MANIFEST_NO_COMMON);
        if (d->err == 0)
            mota_cbor_fail(d, decode_text(&w, m));
        break;
    case MOTA_MAN_COMPAT:
        if (open_wrapped(d, &w) == 0)
            mota_cbor_fail(d, decode_compat(&w, &m->compat));
        m->has_compat = d->err == 0;
        break;
    default: mota_cbor_fail(d, MOTA_ERR_MANIFEST_UNKNOWN_KEY); break;
    }
}

int mota_manifest_decode(const struct mota_envelope *env, struct mota_manifest *m)
{
    struct mota_cbor_dec d;
    size_t n;
    int64_t key, prev = MOTA_CBOR_KEY_NONE;
    struct manifest_parts pt;
    int ret;

    if (env == NULL || m == NULL)
        return MOTA_ERR_ARG;
    memset(m, 0, sizeof(*m));
    memset(&pt, 0, sizeof(pt));
    memset(pt.map.source, 0xFF, sizeof(pt.map.source));
    mota_cbor_dec_init(&d, env->manifest, env->manifest_len);
    mota_cbor_get_map(&d, &n);
    for (size_t i = 0; i < n && d.err == 0; i++) {
        mota_cbor_get_int_key(&d, &key, &prev);
        if (d.err == 0)
            decode_member(&d, key, m, &pt);
    }
    if (mota_cbor_finish(&d) != 0)
        return d.err;
    if (!pt.have_version)
        return MOTA_ERR_MANIFEST_VERSION;
    if (!pt.have_seq)
        return MOTA_ERR_MANIFEST_SEQ;
    if (!pt.have_common)
        return MOTA_ERR_MANIFEST_NO_COMMON;
    /* Shared sequence first, then the others in processing order. */
    if (pt.shared != NULL && (ret = run_sequence(pt.shared, pt.shared_len, m, &pt.map, MOTA_MAN_COMMON)) != 0)
        return ret;
    if (!m->checks_vendor)
        return MOTA_ERR_NO_VENDOR_CHECK;
    if (!m->checks_class)
        return MOTA_ERR_NO_CLASS_CHECK;
    static const int which[3] = {MOTA_MAN_VALIDATE, MOTA_MAN_INSTALL, MOTA_MAN_INVOKE};
    for (int s = 0; s < 3; s++) {
        if (pt.seqs[s] != NULL && (ret = run_sequence(pt.seqs[s], pt.seq_len[s], m, &pt.map, which[s])) != 0)
            return ret;
    }
    m->has_validate = pt.seqs[0] != NULL;
    m->has_install = pt.seqs[1] != NULL;
    m->has_invoke = pt.seqs[2] != NULL;
    return 0;
}

/* p moved from `from` to `to` if it points into the len bytes at `from` (integer compares: the two are
 * different objects) */
static const void *moved(const void *p, const uint8_t *from, size_t len, const uint8_t *to)
{
    uintptr_t a = (uintptr_t)p, f = (uintptr_t)from;
    return p != NULL && a >= f && a - f < len ? to + (a - f) : p;
}

void mota_manifest_rebase(struct mota_manifest *m, const uint8_t *from, size_t len, const uint8_t *to)
{
    for (size_t c = 0; c < m->n_components; c++) {
        m->comp[c].id = moved(m->comp[c].id, from, len, to);
        m->comp[c].uri = moved(m->comp[c].uri, from, len, to);
        m->comp[c].enc_info = moved(m->comp[c].enc_info, from, len, to);
#if MOTA_FEATURE_DELTA
        m->comp[c].regions = moved(m->comp[c].regions, from, len, to);
#endif
    }
    m->text.description = moved(m->text.description, from, len, to);
    m->text.created = moved(m->text.created, from, len, to);
    m->text.vendor_name = moved(m->text.vendor_name, from, len, to);
    m->text.model_name = moved(m->text.model_name, from, len, to);
    m->text.class_name = moved(m->text.class_name, from, len, to);
    m->text.version = moved(m->text.version, from, len, to);
    m->compat.c_name = moved(m->compat.c_name, from, len, to);
    m->compat.rt_desc = moved(m->compat.rt_desc, from, len, to);
}

const struct mota_component *mota_manifest_find_payload(const struct mota_manifest *m, const char *name,
                                                        size_t name_len)
{
    for (size_t c = 0; c < m->n_components; c++) {
        const struct mota_component *comp = &m->comp[c];
        if (comp->has_uri && comp->fetched && comp->uri_len == name_len && memcmp(comp->uri, name, name_len) == 0)
            return comp;
    }
    return NULL;
}

/* What a device can decode: an algorithm it knows, blocks of a power of two bytes in range, a stream
 * (body bytes) no larger than the image stored block by block (and not empty). */
static bool compression_ok(const struct mota_component *c, uint64_t body)
{
    uint32_t b = c->z_block, bound = mota_decompress_bound(c->z_alg, (uint32_t)c->size, b);
    uint32_t max = c->z_alg == MOTA_DECOMP_LZMA ? MOTA_DECOMP_MAX_BLOCK_LZMA : MOTA_DECOMP_MAX_BLOCK;
    return mota_decompress_known(c->z_alg) && b >= MOTA_DECOMP_MIN_BLOCK && b <= max && (b & (b - 1)) == 0 &&
           body >= 2u && bound != 0 && body <= bound;
}

static bool uri_is(const struct mota_component *c, const char *want)
{
    return c->has_uri && c->uri_len == strlen(want) && memcmp(c->uri, want, c->uri_len) == 0;
}

/* A transformed component: fetched into its transport, made from it once, its sizes consistent */
static int check_transformed(const struct mota_component *c, const char *want)
{
    struct mota_enc_info ei;
    uint64_t tag = 0;
    int ret;
    if ((c->pattern & (MOTA_PAT_URI_IMAGE | MOTA_PAT_FETCH_IMAGE)) != 0 || !(c->pattern & MOTA_PAT_FETCH_WIRE) ||
        !uri_is(c, want))
        return MOTA_ERR_URI;
    if ((c->pattern & (MOTA_PAT_MADE | MOTA_PAT_MADE_TWICE)) != MOTA_PAT_MADE)
        return MOTA_ERR_SOURCE_COMPONENT;
    if (!c->has_wire_digest || !c->has_wire_size)
        return MOTA_ERR_IMAGE_PARAMS;
    if (c->wire_size == 0 || c->wire_size > 0xFFFFFFFFu)
        return MOTA_ERR_PAYLOAD_SIZE;
    if (c->encrypted) {
#if !MOTA_FEATURE_DECRYPT
        return MOTA_ERR_DECRYPT_OFF; /* a device built without decryption: said before any erase */
#endif
        if ((ret = mota_enc_info_decode(c->enc_info, c->enc_len, &ei)) != 0)
            return ret;
        tag = ei.alg == MOTA_ENC_A128GCM ? MOTA_GCM_TAG_LEN : 0;
        if (c->wire_size <= tag)
            return MOTA_ERR_PAYLOAD_SIZE;
    }
    if (c->compressed && !compression_ok(c, c->wire_size - tag))
        return MOTA_ERR_COMPRESSION_INFO;
#if MOTA_FEATURE_DELTA
    if (c->delta && (c->src_size == 0 || c->src_size == 0xFFFFFFFFu)) /* no source, or one past 4 GiB */
        return MOTA_ERR_DELTA_REGIONS;
    if (c->delta) /* the regions inside both images: the patcher trusts them */
        return mota_delta_check(c->regions, c->regions_len, (uint32_t)c->size, c->src_size);
#endif
    if (c->compressed)
        return 0;
    return c->wire_size - tag == c->size ? 0 : MOTA_ERR_PAYLOAD_SIZE; /* encryption keeps lengths */
}

static int check_component(const struct mota_component *comp)
{
    const char *want = mota_component_payload_name(comp->role);
    if (comp->role == MOTA_COMPONENT_OTHER)
        return MOTA_ERR_COMPONENT_ID;
    if (!comp->has_digest || !comp->has_size || !comp->image_match)
        return MOTA_ERR_IMAGE_PARAMS;
    if (comp->size == 0 || comp->size > 0xFFFFFFFFu)
        return MOTA_ERR_PAYLOAD_SIZE;
    if (comp->transport)
        return check_transformed(comp, want);
    if (comp->enc_info != NULL)
        return MOTA_ERR_SOURCE_COMPONENT; /* encryption info, but nothing made from a transport */
    if (!(comp->pattern & MOTA_PAT_FETCH_IMAGE) || !uri_is(comp, want))
        return MOTA_ERR_URI;
    return 0;
}

int mota_manifest_check_profile(const struct mota_manifest *m)
{
    bool have_code = false, have_selftest = false;
    int ret;
    if (!m->has_compat)
        return MOTA_ERR_COMPAT_MISSING;
    for (size_t c = 0; c < m->n_components; c++) {
        if ((ret = check_component(&m->comp[c])) != 0)
            return ret;
        have_code |= m->comp[c].role == MOTA_COMPONENT_CODE;
        have_selftest |= m->comp[c].role == MOTA_COMPONENT_SELFTEST;
    }
    if (!have_code)
        return MOTA_ERR_COMPONENTS;
    if (m->compat.selftest.present != have_selftest)
        return MOTA_ERR_SELFTEST_FIELD;
    return 0;
}
