/* SPDX-License-Identifier: Apache-2.0 */
/* X-CUBE-AI legacy models through their own API (mota/legacy.h). */
#include "mota/legacy.h"

#include "mota/err.h"

#include "tags.h"

#include <string.h>

#define SIGNATURE_MAP 0xA1FACADEu /* ai_network_params in its v2 view: buffer maps */
#define REPORT_AT 8u              /* io: weights[1], activations[1], then the report */

/* report field offsets (7.x, 124 bytes) */
enum {
    R_NAME = 0,
    R_COMPILED = 12,
    R_TOOL_REV = 24,
    R_TOOL_VER = 28,
    R_MACC = 44,
    R_N_IN = 48,
    R_N_OUT = 50,
    R_INPUTS = 52,
    R_OUTPUTS = 56,
    R_MAP_SIG = 60,
    R_MAP_W = 64,
    R_MAP_A = 72,
    R_PARAMS = 60,
    R_ACTS = 88,
};
/* ai_buffer field offsets (28 bytes) */
enum { B_FORMAT = 0, B_DATA = 4, B_SIZE = 16 };

static uint32_t round8(uint32_t v)
{
    return (v + 7u) & ~7u;
}

uint32_t mota_legacy_tensor_bytes(uint32_t format, uint32_t elements)
{
    uint32_t bits = (format >> 7) & 0x7Fu;
    uint64_t n;
    if (bits == 0 || bits > 32)
        return 0;
    if (bits < 8 && 8 % bits == 0)
        n = ((uint64_t)elements * bits + 7u) / 8u; /* packed sub-byte elements */
    else
        n = (uint64_t)elements * ((bits + 7u) / 8u);
    return n > 0xFFFFFFFFu ? 0 : (uint32_t)n;
}

/* A string of the model's, copied out (truncated to cap-1); NULL is empty. */
static int copy_string(const struct mota_legacy_env *env, uint32_t addr, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = 0;
    if (addr == 0)
        return MOTA_OK;
    while (n + 1 < cap) {
        const char *c = env->peek(env->ctx, addr + (uint32_t)n, 1);
        if (c == NULL)
            return MOTA_ERR_SELFTEST_REPORT;
        if (*c == 0)
            break;
        out[n++] = (*c >= 0x20 && *c < 0x7F) ? *c : '?'; /* shown on a host terminal */
    }
    out[n] = 0;
    return MOTA_OK;
}

/* Sizes of n ai_buffers at addr; their total in *total. */
static int tensors(const struct mota_legacy_env *env, uint32_t addr, unsigned n, struct mota_legacy_tensor *t,
                   uint32_t *total)
{
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        const uint8_t *b = env->peek(env->ctx, addr + i * MOTA_LEGACY_BUFFER_SIZE, MOTA_LEGACY_BUFFER_SIZE);
        if (b == NULL)
            return MOTA_ERR_SELFTEST_REPORT;
        uint32_t fmt = mota_get32(b + B_FORMAT), bytes = mota_legacy_tensor_bytes(fmt, mota_get32(b + B_SIZE));
        if (bytes == 0)
            return MOTA_ERR_SELFTEST_REPORT;
        if (t != NULL)
            t[i] = (struct mota_legacy_tensor){.format = fmt, .bytes = bytes};
        sum += bytes;
    }
    if (sum > 0xFFFFFFFFu)
        return MOTA_ERR_SELFTEST_REPORT;
    *total = (uint32_t)sum;
    return MOTA_OK;
}

/* A buffer map {u16 flags, u16 size, ai_buffer *buffer}: the bytes of its buffers. */
static int map_bytes(const struct mota_legacy_env *env, const uint8_t *map, uint32_t *total)
{
    unsigned n = mota_get16(map + 2);
    if (n > MOTA_LEGACY_MAX_IO)
        return MOTA_ERR_SELFTEST_REPORT;
    return n == 0 ? (*total = 0, MOTA_OK) : tensors(env, mota_get32(map + 4), n, NULL, total);
}

/* create(&rt_ctx.network, NULL): ai_error, type 0 is success; the network's handle is left in rt_ctx */
static int create_network(const struct mota_legacy_env *env, const struct mota_installed *m, uint32_t *handle,
                          uint32_t *r)
{
    int ret = env->call(env->ctx, MOTA_LEGACY_CREATE, m->ctx_addr + 4u, 0, 0, r);
    if (ret != MOTA_OK)
        return ret;
    const uint8_t *net = env->peek(env->ctx, m->ctx_addr + 4u, 4);
    if ((*r & 0xFFu) != 0 || net == NULL || mota_get32(net) == 0)
        return MOTA_ERR_SELFTEST_API;
    *handle = mota_get32(net);
    return MOTA_OK;
}

/* init_v2(network, {weights}, {activations}) */
static int init_network(const struct mota_legacy_env *env, const struct mota_installed *m, uint32_t handle, uint32_t *r)
{
    mota_put32(env->io, m->param0_addr);
    mota_put32(env->io + 4, m->acts_addr);
    int ret = env->call(env->ctx, MOTA_LEGACY_INIT_V2, handle, env->io_addr, env->io_addr + 4u, r);
    if (ret != MOTA_OK)
        return ret;
    return *r == 0 ? MOTA_ERR_SELFTEST_API : MOTA_OK;
}

/* the report, into the I/O buffer, then copied out before anything reads it */
static int fetch_report(const struct mota_legacy_env *env, uint32_t handle, uint8_t rep[MOTA_LEGACY_REPORT_SIZE],
                        uint32_t *r)
{
    memset(env->io + REPORT_AT, 0, MOTA_LEGACY_REPORT_SIZE);
    int ret = env->call(env->ctx, MOTA_LEGACY_REPORT, handle, env->io_addr + REPORT_AT, 0, r);
    if (ret != MOTA_OK)
        return ret;
    if (*r == 0)
        return MOTA_ERR_SELFTEST_API;
    memcpy(rep, env->io + REPORT_AT, MOTA_LEGACY_REPORT_SIZE);
    return MOTA_OK;
}

/* The report's names, version, MACC count and tensors. */
static int read_report(const struct mota_legacy_env *env, const uint8_t *rep, struct mota_legacy_about *about)
{
    int ret = MOTA_ERR_SELFTEST_REPORT;
    if ((ret = copy_string(env, mota_get32(rep + R_NAME), about->name, sizeof(about->name))) != MOTA_OK ||
        (ret = copy_string(env, mota_get32(rep + R_COMPILED), about->compiled, sizeof(about->compiled))) != MOTA_OK ||
        (ret = copy_string(env, mota_get32(rep + R_TOOL_REV), about->tool_revision, sizeof(about->tool_revision))) !=
            MOTA_OK)
        return ret;
    about->tool_version = (uint32_t)rep[R_TOOL_VER] << 16 | (uint32_t)rep[R_TOOL_VER + 1] << 8 | rep[R_TOOL_VER + 2];
    about->n_macc = mota_get32(rep + R_MACC);
    about->n_inputs = mota_get16(rep + R_N_IN);
    about->n_outputs = mota_get16(rep + R_N_OUT);
    if (about->n_inputs == 0 || about->n_inputs > MOTA_LEGACY_MAX_IO || about->n_outputs == 0 ||
        about->n_outputs > MOTA_LEGACY_MAX_IO)
        return MOTA_ERR_SELFTEST_REPORT;
    about->in_desc = mota_get32(rep + R_INPUTS);
    about->out_desc = mota_get32(rep + R_OUTPUTS);
    if ((ret = tensors(env, about->in_desc, about->n_inputs, about->in, &about->in_bytes)) != MOTA_OK ||
        (ret = tensors(env, about->out_desc, about->n_outputs, about->out, &about->out_bytes)) != MOTA_OK)
        return ret;
    return MOTA_OK;
}

/* The weights and activations the report declares: buffer maps (v2), or one buffer each. */
static int read_memory_sizes(const struct mota_legacy_env *env, const uint8_t *rep, struct mota_legacy_about *about)
{
    int ret = MOTA_ERR_SELFTEST_REPORT;
    if (mota_get32(rep + R_MAP_SIG) == SIGNATURE_MAP) {
        if ((ret = map_bytes(env, rep + R_MAP_W, &about->weights_size)) != MOTA_OK ||
            (ret = map_bytes(env, rep + R_MAP_A, &about->acts_size)) != MOTA_OK)
            return ret;
    } else {
        about->weights_size =
            mota_legacy_tensor_bytes(mota_get32(rep + R_PARAMS + B_FORMAT), mota_get32(rep + R_PARAMS + B_SIZE));
        about->acts_size =
            mota_legacy_tensor_bytes(mota_get32(rep + R_ACTS + B_FORMAT), mota_get32(rep + R_ACTS + B_SIZE));
    }
    return MOTA_OK;
}

int mota_legacy_open(const struct mota_legacy_env *env, const struct mota_installed *m, uint32_t *handle,
                     struct mota_legacy_about *about)
{
    int ret = MOTA_ERR_SELFTEST_RUN;
    uint32_t r = 0; /* the calls' result word: one for all three, so a port's call that leaves it unwritten
                     * is judged on the previous call's */
    uint8_t rep[MOTA_LEGACY_REPORT_SIZE];
    if (env == NULL || env->call == NULL || env->peek == NULL || m == NULL || handle == NULL || about == NULL)
        return MOTA_ERR_ARG;
    memset(about, 0, sizeof(*about));
    if (m->family != MOTA_NBIN_FAMILY_LEGACY || m->n_entries < 8 || env->io == NULL || env->io_addr % 8 != 0 ||
        env->io_size < REPORT_AT + MOTA_LEGACY_REPORT_SIZE)
        return MOTA_ERR_SELFTEST_RUN;

    if ((ret = create_network(env, m, handle, &r)) != MOTA_OK)
        return ret;
    if ((ret = init_network(env, m, *handle, &r)) != MOTA_OK)
        return ret;
    if ((ret = fetch_report(env, *handle, rep, &r)) != MOTA_OK)
        return ret;
    if ((ret = read_report(env, rep, about)) != MOTA_OK)
        return ret;
    if ((ret = read_memory_sizes(env, rep, about)) != MOTA_OK)
        return ret;
    /* it may not claim more activations than it asked the installer for */
    if (about->acts_size > m->acts_size)
        return MOTA_ERR_SELFTEST_REPORT;
    return MOTA_OK;
}

int mota_legacy_run(const struct mota_legacy_env *env, uint32_t handle, const struct mota_legacy_about *about,
                    const uint8_t *in, size_t in_len, uint8_t *out, size_t out_len)
{
    int ret = MOTA_ERR_SELFTEST_RUN;
    uint32_t r = 0;
    if (env == NULL || about == NULL || (in == NULL && in_len > 0) || (out == NULL && out_len > 0))
        return MOTA_ERR_ARG;
    if (about->n_inputs == 0 || about->n_inputs > MOTA_LEGACY_MAX_IO || about->n_outputs == 0 ||
        about->n_outputs > MOTA_LEGACY_MAX_IO)
        return MOTA_ERR_SELFTEST_RUN;
    if (in_len != about->in_bytes || out_len != about->out_bytes)
        return MOTA_ERR_SELFTEST_RUN; /* the container's self-test does not fit this model */

    /* io: input descriptors, output descriptors, then each tensor's data, 8-aligned */
    unsigned n = about->n_inputs + about->n_outputs;
    uint64_t at = round8(n * MOTA_LEGACY_BUFFER_SIZE);
    uint32_t data_at[2 * MOTA_LEGACY_MAX_IO];
    for (unsigned i = 0; i < n; i++) {
        const struct mota_legacy_tensor *t = i < about->n_inputs ? &about->in[i] : &about->out[i - about->n_inputs];
        data_at[i] = (uint32_t)at;
        at += round8(t->bytes);
        if (at > env->io_size)
            return MOTA_ERR_SELFTEST_RUN; /* larger than the port's I/O buffer */
    }
    for (unsigned i = 0; i < n; i++) {
        bool is_in = i < about->n_inputs;
        unsigned k = is_in ? i : i - about->n_inputs;
        const struct mota_legacy_tensor *t = is_in ? &about->in[k] : &about->out[k];
        /* the model's own descriptor (format, shape, quantisation), our data pointer */
        const uint8_t *d = env->peek(env->ctx, (is_in ? about->in_desc : about->out_desc) + k * MOTA_LEGACY_BUFFER_SIZE,
                                     MOTA_LEGACY_BUFFER_SIZE);
        if (d == NULL || mota_legacy_tensor_bytes(mota_get32(d + B_FORMAT), mota_get32(d + B_SIZE)) != t->bytes)
            return MOTA_ERR_SELFTEST_REPORT; /* changed since the report */
        uint8_t *desc = env->io + i * MOTA_LEGACY_BUFFER_SIZE;
        memcpy(desc, d, MOTA_LEGACY_BUFFER_SIZE);
        mota_put32(desc + B_DATA, env->io_addr + data_at[i]);
        if (is_in) {
            memcpy(env->io + data_at[i], in, t->bytes);
            in += t->bytes;
        } else {
            memset(env->io + data_at[i], 0, t->bytes);
        }
    }
    ret = env->call(env->ctx, MOTA_LEGACY_RUN, handle, env->io_addr,
                    env->io_addr + about->n_inputs * MOTA_LEGACY_BUFFER_SIZE, &r);
    if (ret != MOTA_OK)
        return ret;
    if (r != 1) /* batches run: 0 is the model's error */
        return MOTA_ERR_SELFTEST_API;
    for (unsigned k = 0; k < about->n_outputs; k++) {
        memcpy(out, env->io + data_at[about->n_inputs + k], about->out[k].bytes);
        out += about->out[k].bytes;
    }
    return MOTA_OK;
}
