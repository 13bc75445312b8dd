/* SPDX-License-Identifier: Apache-2.0 */
/* The real ST N6 model (yolov8n, 3,292,096 bytes) as a cmocka group
 * fixture, for the tests that read or install it. */
#ifndef MOTA_TEST_FIXTURE_YOLO_H
#define MOTA_TEST_FIXTURE_YOLO_H

#include "fixture.h"

#define YOLO_FILE "st-n6/yolov8n_network_rel.bin"

static uint8_t *yolo;
static size_t yolo_len;

static int yolo_setup(void **state)
{
    (void)state;
    yolo = fixture_load(YOLO_FILE, &yolo_len);
    return 0;
}

static int yolo_teardown(void **state)
{
    (void)state;
    free(yolo);
    yolo = NULL;
    return 0;
}

#define NEED_YOLO() FIXTURE_NEEDED(yolo, YOLO_FILE)

#endif
