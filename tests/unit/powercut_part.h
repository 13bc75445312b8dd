/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A part's flash driver over the part's register model, as the agent's power-cut sweep
 * (test_agent_powercut_on_driver.c) drives it. Each model is the access layer (stm32_io.h) its driver is
 * built against, so each part's sweep is its own executable: test_agent_powercut_on_driver.c with that
 * part's powercut_part_<part>.c, which defines powercut_part and powercut_stride.
 */
#ifndef MOTA_TEST_POWERCUT_PART_H
#define MOTA_TEST_POWERCUT_PART_H

#include "mota/port.h"

#include <stdbool.h>
#include <stdint.h>

struct powercut_part {
    const char *name;
    uint32_t journal_offset, slot_offset[2], slot_size; /* the board's layout on it */
    /* the part, erased; on_cut(ctx) is called at the write that cuts the power, and does not return */
    void (*open)(void (*on_cut)(void *ctx), void *ctx);
    void (*close)(void);
    int (*driver)(struct mota_flash *f); /* its driver, set up as the firmware does at boot */
    void (*power_on)(void);              /* registers at reset, the array as the cut left it */
    void (*cut_at)(uint64_t n);          /* the power goes at the n-th write from now (0: never) */
    uint64_t (*writes)(void);            /* register and array writes so far */
    bool (*dead)(void);
    unsigned (*violations)(void);  /* what the part saw that a correct driver never does, counted at rest */
    const uint8_t *(*array)(void); /* the array from the agent's offset 0 */
    uint8_t *(*save)(void);        /* the part's state as it survives a power cut (malloc'd) */
    void (*restore)(const uint8_t *img);
};

/* the part of this executable */
extern const struct powercut_part powercut_part;
/* the sweep cuts at every powercut_stride-th write between an operation's head and tail (prime: the cut moves
 * through the words of the payload's programs), chosen so that each part's sweep takes about the same time */
extern const uint64_t powercut_stride;

#endif
