/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A device's word on a model's inputs and outputs (STATUS and HELLO model key 18, docs/protocol.md):
 * read from the answer, printed as `mota status` and `mota info` print tensors, and put in JSON.
 */
#ifndef MOTA_HOST_MODEL_IO_H
#define MOTA_HOST_MODEL_IO_H

#include "common/json.h"
#include "mota/cbor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DEV_IO_MAX 4u /* tensors each way: a port's MOTA_MODEL_IO_MAX */

struct dev_tensor {
    uint32_t format; /* X-CUBE-AI ai_buffer_format; 0: not said */
    uint64_t bytes;
};

struct dev_io {
    bool known;
    unsigned n_in, n_out;
    struct dev_tensor in[DEV_IO_MAX], out[DEV_IO_MAX];
    uint64_t in_bytes, out_bytes; /* all inputs, all outputs */
};

/* [inputs, outputs], each [* [format, bytes]]: io->known when whole and within DEV_IO_MAX. */
void dev_io_parse(struct mota_cbor_dec *d, struct dev_io *io);

/* "float32", "int8", "uint8", "q7" ...: the element type an ai_buffer_format says; "" when it says none. */
void dev_tensor_format(uint32_t format, char *out, size_t cap);

/* "1 tensor, 3072 bytes: float32 (3072 B)", with "; " between tensors: the text after "inputs:" */
void dev_io_line(FILE *f, const struct dev_tensor *t, unsigned n, uint64_t total);

/* "io": {"inputs": [...], "outputs": [...], "input_bytes": N, "output_bytes": N} or null, as info --json */
void dev_io_json(struct json *j, const struct dev_io *io);

#endif /* MOTA_HOST_MODEL_IO_H */
