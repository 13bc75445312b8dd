/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Delta payloads (docs/container-format.md, "Delta payloads"): an image
 * predicted from the image the device already runs in the same role (the
 * source), and sent as the difference. Regions map stretches of the image
 * onto the source: for i in [start, start + len), P[i] = source[i - start +
 * src]; elsewhere P[i] = 0. The payload's decoded stream is T[i] = image[i] -
 * P[i] (mod 256): zeros where the source predicts a byte exactly, small
 * numbers where weights moved a little, the image's own bytes elsewhere. The
 * stream goes through a compressed payload's decoder (mota/decompress.h), whose
 * history is in T's space: the sink turns T into image bytes as it writes and
 * back as it reads them (mota_delta_apply), so no window of T is kept either.
 * No state beyond the regions: a resume is the decoder's.
 */
#ifndef MOTA_DELTA_H
#define MOTA_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MOTA_DELTA_MAX_REGIONS 64u /* the patcher's table: 768 bytes */
#define MOTA_DELTA_REGION_LEN 12u  /* a region in a manifest: start, len, src, little-endian 32 bits each */

struct mota_delta_region {
    uint32_t start, len, src;
};

/* The source image: memory-mapped (map), or read through read(ctx, offset, buf, n). */
struct mota_delta_source {
    const uint8_t *map;
    int (*read)(void *ctx, uint32_t off, uint8_t *buf, size_t n);
    void *ctx;
};

struct mota_delta {
    uint32_t n, at; /* regions; the one the last access ended in (accesses are mostly sequential) */
    struct mota_delta_region r[MOTA_DELTA_MAX_REGIONS];
};

/* Regions as a manifest carries them: whole records, at most MOTA_DELTA_MAX_REGIONS, each non-empty, in
 * order of start and apart, inside the image (size bytes) and the source (src_size bytes). MOTA_OK or
 * MOTA_ERR_DELTA_REGIONS. */
int mota_delta_check(const uint8_t *packed, size_t len, uint32_t size, uint32_t src_size);

/* The regions of a checked record string into d (MOTA_ERR_DELTA_REGIONS if it is not one). */
int mota_delta_load(struct mota_delta *d, const uint8_t *packed, size_t len, uint32_t size, uint32_t src_size);

/* buf[0..n) holds image positions [at, at + n): add the source's prediction (to_image: stream bytes become
 * image bytes) or subtract it (image bytes become stream bytes). MOTA_OK or the source read's error. */
int mota_delta_apply(struct mota_delta *d, uint32_t at, uint8_t *buf, size_t n, bool to_image,
                     const struct mota_delta_source *src);

#endif /* MOTA_DELTA_H */
