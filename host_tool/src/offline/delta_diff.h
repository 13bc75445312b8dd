/* SPDX-License-Identifier: Apache-2.0 */
/* The host's delta diff (delta updates): the regions of an old model image that predict a new one, and
 * the transformed stream T the device inverts. */
#ifndef MOTA_TOOL_DELTA_DIFF_H
#define MOTA_TOOL_DELTA_DIFF_H

#include <stddef.h>
#include <stdint.h>

/*
 * One region of the prediction P of NEW: for NEW positions i in [start, start + len),
 * P[i] = OLD[i - start + src]; P[i] = 0 outside every region. A list is sorted by start, its regions
 * do not overlap, len >= 1, src + len <= |OLD|, start + len <= |NEW|.
 */
struct tool_delta_region {
    uint32_t start, len, src;
};

/*
 * The regions predicting new_[0..new_n) from old[0..old_n), at most max_regions of them, chosen so that
 * T (tool_delta_transform) compresses well: bsdiff's search (a suffix array of OLD, exact matches
 * extended approximately), then regions that do not pay dropped, same-offset neighbours merged across
 * cheap gaps, and, above max_regions, the regions that save the fewest bytes dropped. *out is malloc'd
 * (free() it; NULL when *count is 0). Deterministic.
 * MOTA_OK, MOTA_ERR_ARG (a size above 2 GiB - 1, max_regions 0, a NULL pointer), MOTA_ERR_IO (out of
 * memory).
 */
int tool_delta_diff(const uint8_t *old, size_t old_n, const uint8_t *new_, size_t new_n, uint32_t max_regions,
                    struct tool_delta_region **out, size_t *count);

/*
 * T[i] = (NEW[i] - P[i]) mod 256 for i in [0, new_n), into the caller's t[new_n]: the transform the
 * device inverts (NEW[i] = T[i] + P[i]). The regions must be a valid list for these images (see above).
 */
void tool_delta_transform(const uint8_t *old, const uint8_t *new_, size_t new_n, const struct tool_delta_region *r,
                          size_t count, uint8_t *t);

#endif
