/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device main loop: the agent and its update link, as every port runs
 * them (the posix simulator and each board alike). A firmware's main() is
 *
 *     mota_device_start(&dev, &agent_cfg, "my-board");
 *     for (;;)
 *         mota_device_step(&dev, 10);
 *
 * One step kicks the watchdog, serves the link for up to timeout_ms, and
 * carries out a reboot the host asked for through the port's reset
 * callback. On a board that callback does not return; on a host port it
 * does, and the device boots again from its flash, as a board would.
 */
#ifndef MOTA_DEVICE_H
#define MOTA_DEVICE_H

#include "mota/agent.h"
#include "mota/port.h"
#include "mota/link.h"

#include <stdint.h>

/* How long the link is quiet (no session, no byte) before the agent does flash work at idle (mota_agent_idle) */
#ifndef MOTA_DEVICE_IDLE_MS
#define MOTA_DEVICE_IDLE_MS 1000u
#endif

struct mota_device {
    struct mota_agent agent;
    struct mota_link link;
    const struct mota_agent_config *cfg;
    const char *name;
    uint32_t boots; /* boots of this instance (host ports reboot in place) */
};

/*
 * Boot: start the agent (the port's transport carries the link) (journal, trial accounting, re-validation and
 * install of the active models) and the link server. MOTA_OK, or the
 * agent's reason (MOTA_ERR_PORT for a port that lacks a required callback,
 * MOTA_ERR_CONFIG for an invalid layout, a flash error).
 */
int mota_device_start(struct mota_device *d, const struct mota_agent_config *cfg, const char *name);

/*
 * One turn of the main loop. MOTA_OK; MOTA_ERR_TRANSPORT when the peer is
 * gone (a host port then waits for the next one and calls
 * mota_link_reconnect); or the reason a reboot failed to start the agent
 * again.
 */
int mota_device_step(struct mota_device *d, uint32_t timeout_ms);

#endif /* MOTA_DEVICE_H */
