/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HELLO's and STATUS's answers in parts (docs/protocol.md, "Models over several answers"): what one part
 * holds, and the parts put together into one document. Bounded by the answers' own lengths: a device's
 * bytes are outside input (fuzz_answers).
 */
#ifndef MOTA_HOST_PAGES_H
#define MOTA_HOST_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One answer's models: its array's items (raw, inside the answer), how many, and "models-from" [first,
 * total] when it has one (partial). */
struct answer_page {
    const uint8_t *items;
    size_t items_len, n;
    uint64_t first, total;
    bool partial;
};

/* MOTA_OK, or MOTA_ERR_PROTO_FRAME for an answer that is not a map, or whose models or models-from are
 * malformed (models first + n beyond total). */
int answer_page(const uint8_t *b, size_t len, int64_t models_key, int64_t from_key, struct answer_page *p);

/* The first answer's map with models_key holding n_items items (every part's, raw) and without from_key,
 * into out[cap]: MOTA_OK and *out_len, or MOTA_ERR_PROTO_FRAME (malformed, or it does not fit). */
int answer_merge(const uint8_t *base, size_t blen, int64_t models_key, int64_t from_key, const uint8_t *items,
                 size_t items_len, size_t n_items, uint8_t *out, size_t cap, size_t *out_len);

#endif /* MOTA_HOST_PAGES_H */
