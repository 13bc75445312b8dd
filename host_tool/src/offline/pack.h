/* SPDX-License-Identifier: Apache-2.0 */
/* mota pack's command line: its options (pack_options.c) as the container's writer (cmd_pack.c) takes them. */
#ifndef MOTA_TOOL_PACK_H
#define MOTA_TOOL_PACK_H

#include "mota/crypto.h"

#include <stdbool.h>
#include <stdint.h>

struct pack_opts {
    const char *key, *out, *params, *vendor, *klass, *version, *name, *description;
    const char *st_in, *st_out, *model, *pub;
    uint64_t seq, st_latency;
    bool have_seq, seq_from_version, have_version, have_latency, unsigned_, have_kid, sync;
    uint32_t compress; /* 0, or the algorithm (MOTA_DECOMP_*) */
    uint8_t kid[MOTA_KEY_ID_LEN];
    uint32_t mode;
    long max_sw, max_cpu; /* the CPU-share policy; -1: unset */
};

/*
 * The command line into o, checked: what goes together, the texts (bounded, UTF-8), the version (semver;
 * --seq from-version derived from it), and an output that is none of the inputs. EXIT_OK, or the exit
 * code with the reason said; --help prints the help and exits.
 */
int pack_options(int argc, char **argv, struct pack_opts *o);

#endif
