/* SPDX-License-Identifier: Apache-2.0 */
/* The device main loop shared by every port (see mota/device.h). */
#include "mota/device.h"

#include "mota/err.h"

#include <string.h>

int mota_device_start(struct mota_device *d, const struct mota_agent_config *cfg, const char *name)
{
    const struct mota_transport *tr = cfg != NULL && cfg->port != NULL ? cfg->port->transport : NULL;
    if (d == NULL || tr == NULL || tr->read == NULL || tr->write == NULL)
        return MOTA_ERR_ARG;
    uint32_t boots = d->cfg == cfg ? d->boots : 0;
    uint16_t limit = d->cfg == cfg ? d->link.payload_limit : 0; /* the port's, kept across a reboot */
    d->cfg = cfg;
    d->name = name;
    d->boots = boots + 1;
    int ret = mota_agent_init(&d->agent, cfg);
    if (ret != MOTA_OK)
        return ret;
    mota_link_init(&d->link, &d->agent, tr, cfg->port->sys, name);
    d->link.payload_limit = limit;
    return MOTA_OK;
}

int mota_device_step(struct mota_device *d, uint32_t timeout_ms)
{
    const struct mota_system *sys = d->cfg->port->sys;
    if (sys->watchdog_kick != NULL)
        sys->watchdog_kick(sys->ctx);
    int ret = mota_link_poll(&d->link, timeout_ms);
    if (ret != MOTA_OK)
        return ret;
    if (mota_link_quiet(&d->link, MOTA_DEVICE_IDLE_MS)) /* flash work that must not happen in an update */
        (void)mota_agent_idle(&d->agent);
    if (d->link.reboot_requested) {
        /* the answer to REBOOT is already on the wire */
        sys->reset(sys->ctx);
        /* a host port returns: boot again from the flash, like a board */
        return mota_device_start(d, d->cfg, d->name);
    }
    return MOTA_OK;
}
