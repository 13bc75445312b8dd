/* SPDX-License-Identifier: Apache-2.0 */
/* The L1 data cache's model (dcache_model.h). */
#include "dcache_model.h"

#include <stdlib.h>
#include <string.h>

#define LINE DCACHE_MODEL_LINE

void dcache_model_init(struct dcache_model *c, uint32_t base, uint32_t size, const uint8_t *mem)
{
    memset(c, 0, sizeof(*c));
    c->base = base;
    c->size = size;
    c->mem = mem;
    c->view = malloc(size);
    c->held = calloc(size / LINE, 1);
    c->enabled = true;
    dcache_model_reset(c);
}

void dcache_model_free(struct dcache_model *c)
{
    free(c->view);
    free(c->held);
    c->view = c->held = NULL;
}

void dcache_model_reset(struct dcache_model *c)
{
    memset(c->held, 0, c->size / LINE);
    memcpy(c->view, c->mem, c->size);
}

static void drop(struct dcache_model *c, uint32_t line)
{
    c->held[line] = 0;
    memcpy(c->view + line * LINE, c->mem + line * LINE, LINE);
}

void dcache_model_load(struct dcache_model *c, uint32_t addr, void *dst, size_t len)
{
    uint32_t off = addr - c->base;
    if (len == 0)
        return;
    if (!c->enabled) { /* bypassed: the memory itself */
        if (dst != NULL)
            memcpy(dst, c->mem + off, len);
        return;
    }
    for (uint32_t l = off / LINE; l <= (off + (uint32_t)len - 1u) / LINE; l++) {
        if (!c->held[l]) { /* a miss: the line filled from the memory as it is now */
            memcpy(c->view + l * LINE, c->mem + l * LINE, LINE);
            c->held[l] = 1;
        }
    }
    if (dst != NULL)
        memcpy(dst, c->view + off, len);
}

void dcache_model_changed(struct dcache_model *c, uint32_t addr, size_t len)
{
    uint32_t off = addr - c->base;
    if (len == 0)
        return;
    for (uint32_t l = off / LINE; l <= (off + (uint32_t)len - 1u) / LINE; l++)
        if (!c->held[l])
            memcpy(c->view + l * LINE, c->mem + l * LINE, LINE);
}

bool dcache_model_scb_write(struct dcache_model *c, uint32_t reg, uint32_t v)
{
    switch (reg) {
    case DCACHE_MODEL_DCIMVAC:
    case DCACHE_MODEL_DCCIMVAC:
        if (v - c->base < c->size) { /* the line holding v: the low bits are ignored, as the core does */
            drop(c, (v - c->base) / LINE);
            c->invalidations++;
        }
        return true;
    case DCACHE_MODEL_DCISW:
    case DCACHE_MODEL_DCCSW:
    case DCACHE_MODEL_DCCISW:
    case DCACHE_MODEL_DCCMVAU:
    case DCACHE_MODEL_DCCMVAC:
    case DCACHE_MODEL_ICIALLU:
    case DCACHE_MODEL_ICIMVAU: return true; /* no dirty line to clean; set/way drops nothing here (dcache_model.h) */
    default: return false;
    }
}

const uint8_t *dcache_model_view(const struct dcache_model *c, uint32_t addr)
{
    return c->view + (addr - c->base);
}

unsigned dcache_model_stale(const struct dcache_model *c)
{
    unsigned n = 0;
    for (uint32_t l = 0; l < c->size / LINE; l++)
        n += c->held[l] && memcmp(c->view + l * LINE, c->mem + l * LINE, LINE) != 0;
    return n;
}
