/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the unit tests: load a file from ../shared/fixtures. */
#ifndef MOTA_TEST_FIXTURE_H
#define MOTA_TEST_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The whole file in a malloc'd buffer, or NULL if it is absent. */
static inline uint8_t *fixture_load(const char *rel, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", MOTA_FIXTURES_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
    if (b != NULL && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = b ? (size_t)n : 0;
    return b;
}

/* Skip (and say so) when a fixture is missing: never pass silently. */
#define FIXTURE_NEEDED(ptr, what)                                                                                      \
    do {                                                                                                               \
        if ((ptr) == NULL) {                                                                                           \
            print_message("SKIPPED: ../shared/fixtures/%s is absent\n", (what));                                       \
            skip();                                                                                                    \
        }                                                                                                              \
    } while (0)

#endif
