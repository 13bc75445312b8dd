/* SPDX-License-Identifier: Apache-2.0 */
/* A model's inputs and outputs as a device reports them (see model_io.h). */
#include "model_io.h"

#include <inttypes.h>
#include <string.h>

static void parse_side(struct mota_cbor_dec *d, struct dev_tensor *t, unsigned *n, uint64_t *total, bool *ok)
{
    size_t count, pair;
    *n = 0;
    *total = 0;
    if (mota_cbor_get_array(d, &count) != 0 || count > DEV_IO_MAX) {
        *ok = false;
        for (size_t i = 0; d->err == 0 && i < count; i++)
            mota_cbor_skip(d);
        return;
    }
    for (size_t i = 0; i < count; i++) {
        uint64_t fmt = 0;
        if (mota_cbor_get_array(d, &pair) != 0 || pair != 2 || mota_cbor_get_uint(d, &fmt) != 0 ||
            mota_cbor_get_uint(d, &t[i].bytes) != 0 || fmt > UINT32_MAX) {
            *ok = false;
            return;
        }
        t[i].format = (uint32_t)fmt;
        *total += t[i].bytes;
    }
    *n = (unsigned)count;
}

void dev_io_parse(struct mota_cbor_dec *d, struct dev_io *io)
{
    size_t n;
    bool ok = true;
    memset(io, 0, sizeof(*io));
    if (mota_cbor_get_array(d, &n) != 0 || n != 2) {
        for (size_t i = 0; d->err == 0 && i < n; i++)
            mota_cbor_skip(d);
        return;
    }
    parse_side(d, io->in, &io->n_in, &io->in_bytes, &ok);
    if (ok)
        parse_side(d, io->out, &io->n_out, &io->out_bytes, &ok);
    io->known = ok && d->err == 0;
}

/* ai_buffer_format: bits 0..6 fractional bits + 64, 7..13 bits, 17..20 type (1 float, 2 Q, 3 bool), 23 sign,
 * 24 complex (ST's ai_platform.h) */
void dev_tensor_format(uint32_t format, char *out, size_t cap)
{
    unsigned bits = (format >> 7) & 0x7Fu, type = (format >> 17) & 0xFu, sign = (format >> 23) & 1u;
    int fbits = (int)(format & 0x7Fu) - 64;
    const char *cx = (format >> 24) & 1u ? "complex " : "";
    if (format == 0 || bits == 0)
        snprintf(out, cap, "%s", "");
    else if (type == 1)
        snprintf(out, cap, "%sfloat%u", cx, bits);
    else if (type == 3)
        snprintf(out, cap, "bool");
    else if (type == 2 && fbits > 0)
        snprintf(out, cap, "%sq%d.%d", sign ? "" : "u", (int)bits - fbits - (int)sign, fbits);
    else if (type == 2)
        snprintf(out, cap, "%s%sint%u", cx, sign ? "" : "u", bits);
    else
        snprintf(out, cap, "format 0x%08" PRIx32, format);
}

void dev_io_line(FILE *f, const struct dev_tensor *t, unsigned n, uint64_t total)
{
    fprintf(f, "%u tensor%s, %" PRIu64 " bytes", n, n == 1 ? "" : "s", total);
    bool any = false;
    for (unsigned i = 0; i < n; i++)
        any = any || t[i].format != 0;
    for (unsigned i = 0; any && i < n; i++) { /* each one's type, where the model says it */
        char fmt[32];
        dev_tensor_format(t[i].format, fmt, sizeof(fmt));
        fprintf(f, "%s%s%s(%" PRIu64 " B)", i ? "; " : ": ", fmt, fmt[0] ? " " : "", t[i].bytes);
    }
}

static void json_side(struct json *j, const char *key, const struct dev_tensor *t, unsigned n)
{
    json_arr(j, key);
    for (unsigned i = 0; i < n; i++) {
        char fmt[32];
        dev_tensor_format(t[i].format, fmt, sizeof(fmt));
        json_obj(j, NULL);
        json_null(j, "name");
        json_uint(j, "bytes", t[i].bytes);
        if (fmt[0])
            json_str(j, "format", fmt);
        else
            json_null(j, "format");
        json_null(j, "shape");
        json_obj_end(j);
    }
    json_arr_end(j);
}

void dev_io_json(struct json *j, const struct dev_io *io)
{
    if (!io->known) {
        json_null(j, "io");
        return;
    }
    json_obj(j, "io");
    json_side(j, "inputs", io->in, io->n_in);
    json_side(j, "outputs", io->out, io->n_out);
    json_uint(j, "input_bytes", io->in_bytes);
    json_uint(j, "output_bytes", io->out_bytes);
    json_obj_end(j);
}
