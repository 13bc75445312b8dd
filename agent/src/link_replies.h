/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The bodies of the link's answers, encoded from the agent's and the link's state (private to agent/):
 * link_replies.c writes them, link.c frames and sends them. Keys: mota/proto_keys.h, docs/protocol.md.
 */
#ifndef MOTA_LINK_REPLIES_H
#define MOTA_LINK_REPLIES_H

#include "mota/agent.h"
#include "mota/features.h"
#include "mota/link.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Which models an answer describes, and how: models [first, first + count) of the device's; paged (a host
 * that asks from a model on) adds "models-from" [first, total] when that is not all of them; vcap cuts the
 * models' version texts; without extras, the previous models, the errors' times and the epochs are left
 * out (link.c tries fewer models, then smaller answers, until one fits).
 */
struct mota_link_page {
    unsigned first, count;
    bool paged;
    size_t vcap;
    bool extras;
};

/* HELLO's and STATUS's CBOR maps into out[cap]: the length, 0 when they do not fit. */
size_t mota_link_device_info(struct mota_link *l, uint8_t *out, size_t cap, const struct mota_link_page *pg);
size_t mota_link_status_info(struct mota_link *l, uint8_t *out, size_t cap, const struct mota_link_page *pg);

/* The facts behind the agent's last refusal if it is reason's, as text (docs/protocol.md, "Refusal
 * details"): the length, 0 for none. */
size_t mota_link_refusal_detail(const struct mota_agent *a, int reason, uint8_t *out, size_t cap);

#if MOTA_FEATURE_ERRLOG
/* ERRORS' body into out[cap], its length in *len: MOTA_OK, or MOTA_ERR_INTERNAL when it does not fit. */
int mota_link_errors_body(const struct mota_link *l, uint8_t *out, size_t cap, size_t *len);
#endif

/* Milliseconds since boot by the link's clock (0 without one): STATUS's uptime, and when link.c notes an error. */
uint32_t mota_link_now_ms(const struct mota_link *l);

#endif /* MOTA_LINK_REPLIES_H */
