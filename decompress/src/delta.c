/* SPDX-License-Identifier: Apache-2.0 */
/* The patcher of delta payloads (mota/delta.h): the regions checked and loaded, and the source's
 * prediction added to (or taken from) image bytes as the decoder's sink writes (or reads) them. */
#include "mota/delta.h"

#include "mota/err.h"

#include <string.h>

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int mota_delta_check(const uint8_t *packed, size_t len, uint32_t size, uint32_t src_size)
{
    uint32_t end = 0;
    if (len % MOTA_DELTA_REGION_LEN != 0 || len / MOTA_DELTA_REGION_LEN > MOTA_DELTA_MAX_REGIONS ||
        (packed == NULL && len > 0))
        return MOTA_ERR_DELTA_REGIONS;
    for (size_t i = 0; i < len; i += MOTA_DELTA_REGION_LEN) {
        uint32_t start = le32(packed + i), n = le32(packed + i + 4), src = le32(packed + i + 8);
        /* 64-bit sums: no wrap-around lets a region reach outside either image */
        if (n == 0 || start < end || (uint64_t)start + n > size || (uint64_t)src + n > src_size)
            return MOTA_ERR_DELTA_REGIONS;
        end = start + n;
    }
    return MOTA_OK;
}

int mota_delta_load(struct mota_delta *d, const uint8_t *packed, size_t len, uint32_t size, uint32_t src_size)
{
    int ret = mota_delta_check(packed, len, size, src_size);
    if (ret != MOTA_OK)
        return ret;
    d->n = (uint32_t)(len / MOTA_DELTA_REGION_LEN);
    d->at = 0;
    for (uint32_t i = 0; i < d->n; i++) {
        const uint8_t *p = packed + i * MOTA_DELTA_REGION_LEN;
        d->r[i] = (struct mota_delta_region){le32(p), le32(p + 4), le32(p + 8)};
    }
    return MOTA_OK;
}

/* The first region that ends after position at (d->n: none), starting from the last one used. */
static uint32_t region_after(struct mota_delta *d, uint32_t at)
{
    uint32_t i = d->at < d->n ? d->at : 0;
    if (i > 0 && d->r[i - 1].start + d->r[i - 1].len > at)
        i = 0; /* a read back before the last region used: look from the start */
    while (i < d->n && d->r[i].start + d->r[i].len <= at)
        i++;
    d->at = i;
    return i;
}

/* n bytes of the source from off, added to or taken from buf */
static int mix(uint8_t *buf, uint32_t off, size_t n, bool add, const struct mota_delta_source *src)
{
    uint8_t tmp[32];
    const uint8_t *s = src->map != NULL ? src->map + off : tmp;
    for (size_t k = 0; k < n;) {
        size_t m = src->map != NULL ? n - k : (n - k < sizeof(tmp) ? n - k : sizeof(tmp));
        int ret = src->map != NULL ? MOTA_OK : src->read(src->ctx, off + (uint32_t)k, tmp, m);
        if (ret != MOTA_OK)
            return ret;
        if (add)
            for (size_t j = 0; j < m; j++)
                buf[k + j] = (uint8_t)(buf[k + j] + s[j]);
        else
            for (size_t j = 0; j < m; j++)
                buf[k + j] = (uint8_t)(buf[k + j] - s[j]);
        k += m;
        s += src->map != NULL ? m : 0;
    }
    return MOTA_OK;
}

int mota_delta_apply(struct mota_delta *d, uint32_t at, uint8_t *buf, size_t n, bool to_image,
                     const struct mota_delta_source *src)
{
    uint32_t end = at + (uint32_t)n; /* n is a sink's piece of an image of at most 4 GiB */
    for (uint32_t i = region_after(d, at); i < d->n && d->r[i].start < end; i++) {
        const struct mota_delta_region *r = &d->r[i];
        uint32_t from = r->start > at ? r->start : at, to = r->start + r->len < end ? r->start + r->len : end;
        int ret = mix(buf + (from - at), r->src + (from - r->start), to - from, to_image, src);
        if (ret != MOTA_OK)
            return ret;
        d->at = i;
    }
    return MOTA_OK;
}
