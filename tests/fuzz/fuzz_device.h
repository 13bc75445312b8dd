/* The small simulated device both agent-level fuzz targets run against: the
 * posix port's device with 4 KiB sectors, a two-sector journal, two 32 KiB
 * slots, 64 KiB of exec RAM and a key no signature can match (so nothing is
 * ever activated and the fuzzer explores the refusal paths, where the bugs
 * would be). */
#ifndef MOTA_FUZZ_DEVICE_H
#define MOTA_FUZZ_DEVICE_H

#include "mota/agent.h"
#include "mota/err.h"
#include "mota/posix_device.h"

#include <stdlib.h>
#include <string.h>

#define FUZZ_SECTOR 4096u
#define FUZZ_JOURNAL (2 * FUZZ_SECTOR)
#define FUZZ_SLOT (32u * 1024u)

/* Once per process: the device and the agent's configuration. */
static void fuzz_device_setup(struct mota_posix_device *d)
{
    if (d->pf.mem != NULL)
        return;
    struct mota_posix_device_options o = {.flash_size = FUZZ_JOURNAL + 2 * FUZZ_SLOT, .sector_size = FUZZ_SECTOR,
                                          .prog_size = 16, .slot_size = FUZZ_SLOT, .exec_ram_size = 64 * 1024,
                                          .clock_at_zero = true};
    if (mota_posix_device_open(d, &o) != MOTA_OK)
        abort();
    d->cfg.n_keys = 1;
    memset(d->cfg.keys[0].pub, 0x04, 65);
}

#endif
