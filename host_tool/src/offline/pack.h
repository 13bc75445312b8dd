/* SPDX-License-Identifier: Apache-2.0 */
/* mota pack's command line: its options (pack_options.c) as the container's writer (cmd_pack.c) takes them. */
#ifndef MOTA_TOOL_PACK_H
#define MOTA_TOOL_PACK_H

#include "payloads.h"

#include "mota/crypto.h"

#include <stdbool.h>
#include <stdint.h>

struct pack_opts {
    const char *key, *out, *params, *vendor, *klass, *version, *name, *description;
    const char *st_in, *st_out, *model, *pub;
    const char *delta_from; /* --delta-from: the container the device runs */
    uint64_t seq, st_latency;
    bool have_seq, seq_from_version, force_seq, have_version, have_latency, unsigned_, have_kid, sync;
    uint32_t compress;   /* 0, or the algorithm (MOTA_DECOMP_*) */
    int cipher;          /* 0 (no --cipher), MOTA_ENC_A128GCM or MOTA_ENC_A128CTR */
    size_t n_recipients; /* --encrypt-kek and --encrypt-to, in the order given */
    struct tool_recipient recipients[MOTA_ENC_MAX_RECIPIENTS];
    uint8_t kid[MOTA_KEY_ID_LEN];
    uint32_t mode;
    long max_sw, max_cpu; /* the CPU-share policy; -1: unset */
};

/*
 * The largest --seq pack takes without --force-seq: 2^63-1. A device refuses every container whose number
 * is not above the one it confirmed, so a number near 2^64-1 locks it for good; this one leaves 2^63
 * numbers above it. --seq from-version never exceeds it (4194303.1048575.1048575 gives exactly 2^63-1).
 */
#define PACK_SEQ_CEILING 0x7FFFFFFFFFFFFFFFull

/*
 * --selftest-max-latency-us none, the default. The manifest's latency field is required and a device
 * compares the measured time with it (0 would fail every self-test): "no limit" is written as 2^32-1 us
 * (71 minutes), beyond any watchdog period, so what stops a model is the device's watchdog and its own
 * guard. A larger number gains nothing, and a guarding port computes now + limit as a deadline (the QEMU
 * boards' guard: 2^64-1 would wrap and stop every model at once).
 */
#define PACK_LATENCY_NONE 0xFFFFFFFFull
#define PACK_SELFTEST_BIG (192u * 1024u) /* mota sim's self-test buffer (posix_device.h): the largest mota knows */

/*
 * mota id and mota pack derive the same ids from the same names, and refuse the same names: a vendor
 * that is empty, not UTF-8 or over MOTA_CONTAINER_MAX_TEXT bytes, an empty class (klass NULL: no class).
 * EXIT_OK, or EXIT_USAGE with the reason said (a usage error names cmd). pack_identity_ids: the UUID v5 ids.
 */
int pack_check_identity(const char *cmd, const char *vendor, const char *klass);
void pack_identity_ids(const char *vendor, const char *klass, uint8_t vendor_id[16], uint8_t class_id[16]);

/*
 * The command line into o, checked: what goes together, the texts (bounded, UTF-8), the version (semver;
 * --seq from-version derived from it), and an output that is none of the inputs. EXIT_OK, or the exit
 * code with the reason said; --help prints the help and exits.
 */
int pack_options(int argc, char **argv, struct pack_opts *o);

#endif
