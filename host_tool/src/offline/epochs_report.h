/* SPDX-License-Identifier: Apache-2.0 */
/* The epoch report of a Neural-ART model (mota info/inspect --epochs), the
 * comparison with a baseline and the pack policy: docs/host-tool.md. */
#ifndef MOTA_TOOL_EPOCHS_REPORT_H
#define MOTA_TOOL_EPOCHS_REPORT_H

#include "mota/epochs.h"
#include "mota/nbin.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json;

struct epochs_view {
    const char *path; /* the file it came from (model or container) */
    bool container;   /* the model is the code payload of a container */
    struct mota_nbin_info in;
    struct mota_epoch_report rep;
    struct mota_epoch_block *blocks; /* MOTA_EPOCH_MAX_BLOCKS */
    struct mota_epoch_buffer *bufs;  /* MOTA_EPOCH_MAX_BUFFERS */
    uint8_t *image;                  /* a compressed code payload, decoded (the report points into it) */
};

/* Validate and decode the model img (len bytes); MOTA_OK or the reason. */
int epochs_view_decode(struct epochs_view *v, const uint8_t *img, size_t len);
void epochs_view_free(struct epochs_view *v);

/* A model file or a container (its code payload), mapped into m and decoded: MOTA_OK or the reason
 * (EXIT_IO-worthy failures to read come back as MOTA_ERR_IO, their message printed). */
struct mapped;
int epochs_view_load(struct epochs_view *v, const char *path, struct mapped *m);

/* The code of a container in memory (its structure checked, not its signature): its payload, or that
 * payload rebuilt into a malloc'd *owned (decrypted with keys, NULL: none, MOTA_ERR_ENC_NO_KEY for an
 * encrypted one; decompressed; checked against the image's signed digest). */
struct mota_enc_keys;
int epochs_container_code(const uint8_t *buf, size_t len, const struct mota_enc_keys *keys, const uint8_t **code,
                          size_t *code_len, uint8_t **owned);

void epochs_text(FILE *f, const struct epochs_view *v);
void epochs_json(struct json *j, const struct epochs_view *v); /* the "epochs" member */

/* What moved between NPU and CPU from old to new. */
void epochs_compare_text(FILE *f, const struct epochs_view *old, const struct epochs_view *cur);
void epochs_compare_json(struct json *j, const struct epochs_view *old, const struct epochs_view *cur);
/* CPU epochs rose (hybrid or SW): the update moves work from the NPU to the CPU. */
bool epochs_moved_to_cpu(const struct mota_epoch_summary *old, const struct mota_epoch_summary *cur);

/* The one-line summary (inspect, status) and its JSON object (null for s NULL: no summary). */
void epochs_summary_line(FILE *f, const struct mota_epoch_summary *s);
void epochs_summary_json(struct json *j, const char *key, const struct mota_epoch_summary *s);

/* The pack policy: limits < 0 are unset. MOTA_OK, or MOTA_ERR_NBIN_EPOCH_POLICY with its message printed. */
int epochs_policy(const struct mota_epoch_summary *s, long max_sw, long max_cpu);

#endif
