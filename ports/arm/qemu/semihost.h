/* SPDX-License-Identifier: Apache-2.0 */
/* Arm semihosting (BKPT 0xAB): the QEMU board's window to its host, for the
 * flash file, the launcher's arguments and the log. A real board has none
 * of this; its flash driver talks to the flash controller instead. */
#ifndef MOTA_ARM_QEMU_SEMIHOST_H
#define MOTA_ARM_QEMU_SEMIHOST_H

#include <stddef.h>
#include <stdint.h>

enum {
    SH_OPEN = 0x01,
    SH_WRITE0 = 0x04,
    SH_WRITE = 0x05,
    SH_READ = 0x06,
    SH_SEEK = 0x0A,
    SH_FLEN = 0x0C,
    SH_GET_CMDLINE = 0x15,
    SH_EXIT_EXTENDED = 0x20,
};
enum { SH_MODE_RPLUSB = 3 };

static inline int32_t semihost(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return (int32_t)r0;
}

static inline int32_t sh_open(const char *path, size_t len, uint32_t mode)
{
    uint32_t a[3] = {(uint32_t)(uintptr_t)path, mode, (uint32_t)len};
    return semihost(SH_OPEN, a);
}

/* 0 when all len bytes were written/read */
static inline int32_t sh_write(int32_t fd, const void *buf, size_t len)
{
    uint32_t a[3] = {(uint32_t)fd, (uint32_t)(uintptr_t)buf, (uint32_t)len};
    return semihost(SH_WRITE, a);
}

static inline int32_t sh_read(int32_t fd, void *buf, size_t len)
{
    uint32_t a[3] = {(uint32_t)fd, (uint32_t)(uintptr_t)buf, (uint32_t)len};
    return semihost(SH_READ, a);
}

static inline int32_t sh_seek(int32_t fd, uint32_t pos)
{
    uint32_t a[2] = {(uint32_t)fd, pos};
    return semihost(SH_SEEK, a);
}

static inline int32_t sh_flen(int32_t fd)
{
    uint32_t a[1] = {(uint32_t)fd};
    return semihost(SH_FLEN, a);
}

static inline int32_t sh_cmdline(char *buf, size_t cap)
{
    uint32_t a[2] = {(uint32_t)(uintptr_t)buf, (uint32_t)cap};
    int32_t r = semihost(SH_GET_CMDLINE, a);
    return r == 0 ? (int32_t)a[1] : -1;
}

static inline void sh_exit(uint32_t code)
{
    uint32_t a[2] = {0x20026u /* ADP_Stopped_ApplicationExit */, code};
    semihost(SH_EXIT_EXTENDED, a);
}

#endif
