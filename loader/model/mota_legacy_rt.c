/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime linked into every legacy-family CPU model (`mota build-model
 * --family legacy`): ST's ai_network entry points (X-CUBE-AI 7.x layouts:
 * ai_buffer 28 bytes, ai_network_report 124 bytes, ai_error {type:8,
 * code:24}) over the model's own init and run. Position independent like
 * the model; r9 is its RW base.
 *
 * Like ST's legacy runtime it runs a licence check in create: it clears
 * FP_CTRL.ENABLE and computes one CRC on the STM32 CRC unit, and loops for
 * ever if the answer is wrong. A port calls such a model with the unit's
 * clock on, or (the QEMU boards, which have none) emulates it.
 */
#include "mota_model.h"

#ifndef MOTA_LEGACY_TOOL_VERSION
#define MOTA_LEGACY_TOOL_VERSION 0x00010000u /* major << 24 | minor << 16 | micro << 8 */
#endif
#define MAX_BINDS 128u

/* Where each use of a weight lives: {count, then (RW offset, weights offset) pairs}. The builder
 * fills it; the initial count (all ones) makes an unpatched model refuse init. */
/* volatile: read at run time, never folded from this initialiser */
const volatile uint32_t _mota_weight_binds[1 + 2 * MAX_BINDS]
    __attribute__((used, section(".mota_weight_binds"))) /* placed in flash by mota_legacy.ld */
    = {0xFFFFFFFFu};

enum {
    ERR_INVALID_HANDLE = 0x10,
    ERR_INVALID_STATE = 0x11,
    ERR_INVALID_INPUT = 0x12,
    ERR_INVALID_OUTPUT = 0x13,
    ERR_INVALID_PARAM = 0x14,
    ERR_INIT_FAILED = 0x30
};
enum {
    CODE_NETWORK = 0x10,
    CODE_WEIGHTS = 0x12,
    CODE_ACTIVATIONS = 0x13,
    CODE_INVALID_PTR = 0x17,
    CODE_INVALID_SIZE = 0x18,
    CODE_INVALID_FORMAT = 0x19
};

#define FMT_S8 0x00840440u /* AI_BUFFER_FORMAT_S8 */
#define FMT_U8 0x00040440u /* AI_BUFFER_FORMAT_U8 */
#define FMT_IS_IO (1u << 27)
#define SHAPE_BCWH_4 0x401u /* shape type BCWH, 4 dimensions */

struct ai_buffer {
    uint32_t format;
    void *data;
    void *meta_info;
    uint32_t flags;
    uint32_t size;
    uint32_t shape_hdr;
    const uint32_t *shape;
};
_Static_assert(sizeof(struct ai_buffer) == 28, "ai_buffer is 28 bytes in X-CUBE-AI 7.x");

struct ai_buffer_array {
    uint16_t flags, size;
    struct ai_buffer *buffer;
};

struct ai_network_report {
    const char *model_name, *model_signature, *model_datetime, *compile_datetime, *runtime_revision;
    uint32_t runtime_version;
    const char *tool_revision;
    uint32_t tool_version, tool_api_version, api_version, interface_api_version;
    uint32_t n_macc;
    uint16_t n_inputs, n_outputs;
    struct ai_buffer *inputs, *outputs;
    uint32_t map_signature;
    struct ai_buffer_array map_weights, map_activations;
    uint8_t unused_[36]; /* the rest of the 56-byte params union */
    uint32_t n_nodes;
    uint32_t signature;
};
_Static_assert(sizeof(struct ai_network_report) == 124, "ai_network_report is 124 bytes in X-CUBE-AI 7.2");

/* ai_observer_exec_ctx and ai_observer_node, as the application's observer sees them */
typedef uint32_t (*observer_cb)(const void *cookie, uint32_t flags, const void *node);
struct observer_ctx {
    observer_cb on_node;
    const void *cookie;
    uint32_t flags;
};
struct observer_node {
    uint16_t c_idx, type, id, unused;
    const void *inner_tensors, *tensors;
};
enum { OBS_PRE = 2, OBS_POST = 4, OBS_FIRST = 0x100, OBS_LAST = 0x200 };

struct network {
    uint32_t created, ready;
    uint32_t error; /* ai_error, packed */
    const uint8_t *weights;
    uint8_t *acts;
    const struct observer_ctx *observer;
    uint32_t in_shape[4], out_shape[4], w_shape[4], a_shape[4];
    struct ai_buffer in, out, w, a;
};
static struct network net;

static uint32_t ai_error(uint32_t type, uint32_t code)
{
    net.error = type | code << 8;
    return net.error;
}

/* ST's CRC lock: FP_CTRL.ENABLE off, then the unit must answer the challenge. */
static void licence_check(void)
{
#if defined(__ARM_FEATURE_CMSE) && (__ARM_FEATURE_CMSE & 2)
    volatile uint32_t *crc = (volatile uint32_t *)0x50023000u; /* the secure alias */
#else
    volatile uint32_t *crc = (volatile uint32_t *)0x40023000u;
#endif
    volatile uint32_t *fp_ctrl = (volatile uint32_t *)0xE0002000u;
    *fp_ctrl &= ~1u;
    crc[2] = 1u; /* CR: RESET */
    while (crc[2] & 1u) {
    }
    crc[0] = 0xF407A5C2u;
    while (crc[0] != 0xB5E8B5CDu) { /* no licence: never returns, as ST's runtime */
    }
}

static int bind_weights(const uint8_t *weights)
{
    uint32_t base, n = _mota_weight_binds[0];
    __asm__ volatile("mov %0, r9" : "=r"(base));
    if (n > MAX_BINDS || (n > 0 && weights == 0))
        return -1;
    for (uint32_t i = 0; i < n; i++)
        *(const uint8_t **)(base + _mota_weight_binds[1 + 2 * i]) = weights + _mota_weight_binds[2 + 2 * i];
    return 0;
}

static void shape(uint32_t *s, uint32_t channels)
{
    s[0] = 1;
    s[1] = channels;
    s[2] = 1;
    s[3] = 1;
}

static void buffer(struct ai_buffer *b, uint32_t format, void *data, uint32_t size, uint32_t *s)
{
    shape(s, size);
    *b = (struct ai_buffer){.format = format, .data = data, .size = size, .shape_hdr = SHAPE_BCWH_4, .shape = s};
}

uint32_t mota_legacy_create_(void **network, const void *config)
{
    (void)config;
    if (network == 0)
        return ai_error(ERR_INVALID_PARAM, CODE_INVALID_PTR);
    licence_check();
    net = (struct network){.created = 1};
    buffer(&net.in, FMT_S8 | FMT_IS_IO, 0, mota_legacy_model_.input_size, net.in_shape);
    buffer(&net.out, FMT_S8 | FMT_IS_IO, 0, mota_legacy_model_.output_size, net.out_shape);
    buffer(&net.w, FMT_U8, 0, _network_rt_ctx.weights_size, net.w_shape);
    buffer(&net.a, FMT_U8, 0, mota_legacy_model_.activations_size, net.a_shape);
    *network = &net;
    return 0;
}

uint32_t mota_legacy_init_v2_(void *network, void *const *weights, void *const *acts)
{
    if (network != &net || !net.created)
        return ai_error(ERR_INVALID_HANDLE, CODE_NETWORK), 0;
    if (weights == 0 || acts == 0)
        return ai_error(ERR_INVALID_PARAM, CODE_INVALID_PTR), 0;
    if (bind_weights(weights[0]) != 0)
        return ai_error(ERR_INIT_FAILED, CODE_WEIGHTS), 0;
    if (acts[0] == 0 && mota_legacy_model_.activations_size > 0)
        return ai_error(ERR_INIT_FAILED, CODE_ACTIVATIONS), 0;
    net.weights = weights[0];
    net.acts = acts[0];
    net.w.data = (void *)net.weights;
    net.a.data = net.acts;
    for (uint32_t i = 0; i < mota_legacy_model_.activations_size; i++)
        net.acts[i] = 0;
    if (mota_legacy_model_.init() != 0)
        return ai_error(ERR_INIT_FAILED, CODE_NETWORK), 0;
    net.ready = 1;
    return 1;
}

/* init with an ai_network_params in its legacy view: params buffer, activations buffer */
uint32_t mota_legacy_init_(void *network, const void *params)
{
    const struct ai_buffer *p = params;
    if (p == 0)
        return ai_error(ERR_INVALID_PARAM, CODE_INVALID_PTR), 0;
    void *w = p[0].data, *a = p[1].data;
    return mota_legacy_init_v2_(network, &w, &a);
}

static void observe(uint32_t when)
{
    static const struct observer_node node = {0, 0, 0, 0, 0, 0};
    const struct observer_ctx *o = net.observer;
    if (o != 0 && o->on_node != 0 && (o->flags & when))
        o->on_node(o->cookie, when | (when == OBS_PRE ? OBS_FIRST : OBS_LAST), &node);
}

static int32_t process(const struct ai_buffer *in, int8_t *out)
{
    if (in == 0 || in->data == 0 || in->size != mota_legacy_model_.input_size || (in->format & 0x01FFFFFFu) != FMT_S8)
        return ai_error(ERR_INVALID_INPUT, in == 0 || in->data == 0 ? CODE_INVALID_PTR : CODE_INVALID_SIZE), 0;
    observe(OBS_PRE);
    int32_t r = mota_legacy_model_.run(in->data, out);
    observe(OBS_POST);
    if (r != 0)
        return ai_error(ERR_INVALID_STATE, CODE_NETWORK), 0;
    return 1;
}

int32_t mota_legacy_run_(void *network, const void *input, void *output)
{
    const struct ai_buffer *in = input;
    struct ai_buffer *out = output;
    if (network != &net || !net.ready)
        return ai_error(ERR_INVALID_STATE, CODE_NETWORK), 0;
    if (out == 0 || out->data == 0 || out->size != mota_legacy_model_.output_size ||
        (out->format & 0x01FFFFFFu) != FMT_S8)
        return ai_error(ERR_INVALID_OUTPUT, out == 0 || out->data == 0 ? CODE_INVALID_PTR : CODE_INVALID_SIZE), 0;
    return process(in, out->data);
}

/* without an output buffer: the output goes to the activations (ST's --allocate-outputs) */
int32_t mota_legacy_forward_(void *network, const void *input)
{
    if (network != &net || !net.ready)
        return ai_error(ERR_INVALID_STATE, CODE_NETWORK), 0;
    if (mota_legacy_model_.activations_size < mota_legacy_model_.output_size)
        return ai_error(ERR_INVALID_OUTPUT, CODE_INVALID_SIZE), 0;
    return process(input, (int8_t *)net.acts);
}

uint32_t mota_legacy_report_(void *network, void *report)
{
    struct ai_network_report *r = report;
    if (network != &net || !net.created || r == 0)
        return ai_error(ERR_INVALID_HANDLE, CODE_NETWORK), 0;
    *r = (struct ai_network_report){
        .model_name = mota_legacy_model_.name,
        .model_signature = "mota-cpu-abi-1",
        .model_datetime = __DATE__ " " __TIME__,
        .compile_datetime = __DATE__ " " __TIME__,
        .runtime_revision = "mota-legacy-rt",
        .runtime_version = 0x00000001u, /* 1.0.0 */
        .tool_revision = "mota build-model",
        .tool_version = __builtin_bswap32(MOTA_LEGACY_TOOL_VERSION), /* bytes: major, minor, micro */
        .tool_api_version = 0x00000501u,                             /* 1.5.0 */
        .api_version = 0x00000201u,                                  /* 1.2.0 */
        .interface_api_version = 0x00000501u,
        .n_inputs = 1,
        .n_outputs = 1,
        .inputs = &net.in,
        .outputs = &net.out,
        .map_signature = 0xA1FACADEu,
        .map_weights = {0, 1, &net.w},
        .map_activations = {0, 1, &net.a},
        .n_nodes = 1,
        .signature =
            mota_legacy_model_.input_size << 16 ^ mota_legacy_model_.output_size << 8 ^ _network_rt_ctx.weights_size,
    };
    return 1;
}

uint32_t mota_legacy_error_(void *network)
{
    if (network != &net)
        return 0x10u | 0x10u << 8; /* INVALID_HANDLE, NETWORK */
    return net.error;
}

void *mota_legacy_destroy_(void *network)
{
    if (network != &net)
        return network;
    net.ready = net.created = 0;
    return 0;
}

uint32_t mota_legacy_obs_register_(void *network, void *exec_ctx)
{
    if (network != &net || exec_ctx == 0)
        return 0;
    net.observer = exec_ctx;
    return 1;
}

uint32_t mota_legacy_obs_unregister_(void *network, void *exec_ctx)
{
    if (network != &net || exec_ctx != net.observer)
        return 0;
    net.observer = 0;
    return 1;
}

/* one node: the whole C model */
uint32_t mota_legacy_obs_node_info_(void *network, void *node)
{
    struct observer_node *n = node;
    if (network != &net || n == 0 || n->c_idx != 0)
        return 0;
    *n = (struct observer_node){0, 0, 0, 0, 0, 0};
    return 1;
}
