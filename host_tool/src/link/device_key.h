/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device's P-256 public key read over the link (STATUS key 7), for `mota getpub --device`: the one
 * offline command that reaches a device, through this seam only.
 */
#ifndef MOTA_TOOL_DEVICE_KEY_H
#define MOTA_TOOL_DEVICE_KEY_H

#include <stdint.h>

/* The public point (0x04 x y) of the key the device at port decrypts with: EXIT_OK, else the exit code,
 * the reason said (the link's, or MOTA_ERR_ENC_NO_KEY: the device has no key of its own). */
int link_device_key(const char *port, double timeout_s, uint8_t pub[65]);

#endif
