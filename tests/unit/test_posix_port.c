/* SPDX-License-Identifier: Apache-2.0 */
/* The posix port: the flash simulator's NOR rules and faults, the transports. */
#define _GNU_SOURCE
#include "mota/err.h"
#include "mota/posix_flash.h"
#include "mota/posix_transport.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* A NOR part of one sector size, in memory or in a file. */
static int flash_uniform(struct mota_posix_flash *f, uint32_t size, uint32_t sector, uint32_t prog)
{
    struct mota_posix_flash_part p = mota_posix_flash_uniform(size, sector, prog);
    return mota_posix_flash_init(f, &p);
}

static int flash_open_uniform(struct mota_posix_flash *f, const char *path, uint32_t size, uint32_t sector,
                              uint32_t prog)
{
    struct mota_posix_flash_part p = mota_posix_flash_uniform(size, sector, prog);
    return mota_posix_flash_open(f, path, &p);
}

static void test_flash_enforces_nor_rules(void **state)
{
    (void)state;
    struct mota_posix_flash f;
    struct mota_flash h;
    uint8_t b[32], r[32];
    assert_int_equal(flash_uniform(&f, 64 * 1024, 4096, 16), MOTA_OK);
    mota_posix_flash_hal(&f, &h, 0x08000000u);
    memset(b, 0x5A, sizeof(b));
    assert_int_equal(h.prog(h.ctx, 8, b, 16), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(h.prog(h.ctx, 16, b, 12), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(h.prog(h.ctx, 16, b, 32), MOTA_OK);
    assert_int_equal(h.prog(h.ctx, 32, b, 16), MOTA_ERR_FLASH_NOT_ERASED); /* program twice */
    assert_int_equal(h.read(h.ctx, 16, r, 32), MOTA_OK);
    assert_memory_equal(r, b, 32);
    assert_int_equal(h.erase(h.ctx, 100), MOTA_ERR_FLASH_ALIGN);
    assert_int_equal(h.erase(h.ctx, 0), MOTA_OK);
    assert_int_equal(h.prog(h.ctx, 32, b, 16), MOTA_OK);
    assert_int_equal(h.read(h.ctx, 64 * 1024 - 8, r, 16), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(f.progs, 2);
    assert_int_equal(f.erases, 1);
    mota_posix_flash_close(&f);
}

/* ECC flash (an STM32U5's 16-byte units): one program per unit and erase, even of all-0xFF bytes. */
static void test_ecc_flash_programs_a_unit_once_per_erase(void **state)
{
    (void)state;
    struct mota_posix_flash_part p = mota_posix_flash_uniform(64 * 1024, 8192, 16);
    p.flags = MOTA_FLASH_PROGRAM_ONCE;
    struct mota_posix_flash f;
    struct mota_flash h;
    uint8_t ones[16], b[16];
    memset(ones, 0xFF, sizeof(ones));
    memset(b, 0x5A, sizeof(b));
    assert_int_equal(mota_posix_flash_init(&f, &p), MOTA_OK);
    mota_posix_flash_hal(&f, &h, 0);
    assert_true(h.flags & MOTA_FLASH_PROGRAM_ONCE);
    assert_int_equal(h.prog(h.ctx, 0, ones, 16), MOTA_OK);
    assert_int_equal(h.prog(h.ctx, 0, b, 16), MOTA_ERR_FLASH_PROGRAMMED); /* it reads erased, yet it is not */
    assert_int_equal(h.prog(h.ctx, 16, b, 16), MOTA_OK);
    assert_int_equal(h.prog(h.ctx, 16, b, 16), MOTA_ERR_FLASH_PROGRAMMED);
    assert_int_equal(h.erase(h.ctx, 0), MOTA_OK);
    assert_int_equal(h.prog(h.ctx, 0, b, 16), MOTA_OK); /* erased again: once more */
    mota_posix_flash_close(&f);
}

/* The sectors of a part as it has them: an F401's 16, 64 and 128 KiB; erases of whole sectors only. */
static void test_flash_of_mixed_sectors_erases_each_whole(void **state)
{
    (void)state;
    struct mota_posix_flash_part p = {.prog_size = 4,
                                      .n_regions = 3,
                                      .regions = {{4, 16384, 0, 0}, {1, 65536, 0, 0}, {3, 131072, 0, 0}},
                                      .prog_block = 4};
    struct mota_posix_flash f;
    struct mota_flash h;
    uint32_t start = 0, size = 0;
    assert_int_equal(mota_posix_flash_init(&f, &p), MOTA_OK);
    mota_posix_flash_hal(&f, &h, 0);
    assert_int_equal(h.size, 512 * 1024);
    assert_int_equal(mota_flash_sector(&h, 0x10000 + 5, &start, &size), MOTA_OK);
    assert_int_equal(start, 0x10000);
    assert_int_equal(size, 65536);
    assert_int_equal(mota_flash_sector(&h, 0x7FFFF, &start, &size), MOTA_OK);
    assert_int_equal(start, 0x60000);
    assert_int_equal(size, 131072);
    assert_int_equal(mota_flash_sector(&h, 0x80000, &start, &size), MOTA_ERR_FLASH_BOUNDS);
    assert_int_equal(h.erase(h.ctx, 0x14000), MOTA_ERR_FLASH_ALIGN); /* inside the 64 KiB sector */
    assert_int_equal(h.erase(h.ctx, 0x20000), MOTA_OK);
    assert_int_equal(f.erases, 1);
    mota_posix_flash_close(&f);
}

/* The harness's side of a power cut: the flash never returns to the code that was running. */
static jmp_buf powered_off;
static int cuts;

static void power_cut(void *ctx)
{
    (void)ctx;
    cuts++;
    longjmp(powered_off, 1);
}

/* prog (or erase when buf is NULL) at off; true when the power went instead of returning */
static bool op_cuts_power(struct mota_flash *h, uint32_t off, const uint8_t *buf, size_t len)
{
    if (setjmp(powered_off) == 0) {
        if (buf != NULL)
            (void)h->prog(h->ctx, off, buf, len);
        else
            (void)h->erase(h->ctx, off);
        return false;
    }
    return true;
}

/* On ECC flash a torn program leaves its last unit unreadable, a torn erase its whole sector, until erased. */
static void test_ecc_flash_torn_units_read_as_ecc_errors_until_erased(void **state)
{
    (void)state;
    struct mota_posix_flash_part p = mota_posix_flash_uniform(32 * 1024, 4096, 16);
    p.flags = MOTA_FLASH_PROGRAM_ONCE;
    struct mota_posix_flash f;
    struct mota_flash h;
    uint8_t b[64], r[64];
    memset(b, 0x11, sizeof(b));
    assert_int_equal(mota_posix_flash_init(&f, &p), MOTA_OK);
    mota_posix_flash_hal(&f, &h, 0);
    mota_posix_flash_on_cut(&f, power_cut, NULL);
    mota_posix_flash_cut(&f, 1, true);
    assert_true(op_cuts_power(&h, 0, b, 64)); /* 4 units: 2 written, the second torn */
    mota_posix_flash_power_on(&f);
    assert_int_equal(h.read(h.ctx, 0, r, 16), MOTA_OK);
    assert_memory_equal(r, b, 16);
    assert_int_equal(h.read(h.ctx, 16, r, 16), MOTA_ERR_FLASH_ECC);
    assert_int_equal(h.read(h.ctx, 0, r, 64), MOTA_ERR_FLASH_ECC); /* any read that covers it */
    assert_null(h.map(h.ctx, 0, 4096));                            /* a mapped read would fault: refused */
    assert_int_equal(h.prog(h.ctx, 16, b, 16), MOTA_ERR_FLASH_PROGRAMMED);
    mota_posix_flash_cut(&f, 1, true);
    assert_true(op_cuts_power(&h, 4096, NULL, 0)); /* an erase torn */
    mota_posix_flash_power_on(&f);
    assert_int_equal(h.read(h.ctx, 8192 - 16, r, 16), MOTA_ERR_FLASH_ECC);
    assert_int_equal(h.erase(h.ctx, 0), MOTA_OK);
    assert_int_equal(h.erase(h.ctx, 4096), MOTA_OK);
    assert_int_equal(h.read(h.ctx, 0, r, 64), MOTA_OK);
    assert_int_equal(h.read(h.ctx, 4096, r, 64), MOTA_OK);
    assert_non_null(h.map(h.ctx, 0, 8192));
    mota_posix_flash_close(&f);
}

static void test_flash_power_cut_unwinds_and_tears_operations(void **state)
{
    (void)state;
    struct mota_posix_flash f;
    struct mota_flash h;
    uint8_t b[64], r[64];
    memset(b, 0x00, sizeof(b));
    assert_int_equal(flash_uniform(&f, 16 * 1024, 4096, 16), MOTA_OK);
    mota_posix_flash_hal(&f, &h, 0);
    mota_posix_flash_on_cut(&f, power_cut, NULL);
    cuts = 0;
    mota_posix_flash_cut(&f, 2, false);
    assert_false(op_cuts_power(&h, 0, b, 16));
    assert_true(op_cuts_power(&h, 16, b, 16)); /* cut before op 2: it never returns */
    assert_true(f.dead);
    assert_int_equal(cuts, 1);
    if (setjmp(powered_off) == 0) { /* no power until power on: a read cuts again */
        (void)h.read(h.ctx, 16, r, 16);
        fail_msg("a read without power returned");
    }
    assert_int_equal(cuts, 2);
    mota_posix_flash_power_on(&f);
    assert_int_equal(h.read(h.ctx, 16, r, 16), MOTA_OK);
    assert_int_equal(r[0], 0xFF); /* the cut program never happened */
    /* torn program: half of its units */
    mota_posix_flash_cut(&f, 1, true);
    assert_true(op_cuts_power(&h, 64, b, 64));
    assert_int_equal(f.cut_kind, 'p');
    mota_posix_flash_power_on(&f);
    assert_int_equal(h.read(h.ctx, 64, r, 64), MOTA_OK);
    assert_int_equal(r[0], 0x00);
    assert_int_equal(r[31], 0x00);
    assert_int_equal(r[32], 0xFF);
    /* torn erase: half the sector */
    mota_posix_flash_cut(&f, 1, true);
    assert_true(op_cuts_power(&h, 0, NULL, 0));
    assert_int_equal(f.cut_kind, 'e');
    mota_posix_flash_power_on(&f);
    assert_int_equal(h.read(h.ctx, 64, r, 64), MOTA_OK);
    assert_int_equal(r[0], 0xFF);
    assert_int_equal(h.read(h.ctx, 2048 + 64, r, 1), MOTA_OK);
    mota_posix_flash_close(&f);
}

/* Without a harness to catch it, a power cut ends the process, as it ends the firmware. */
static void test_flash_power_cut_without_a_harness_ends_the_process(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct mota_posix_flash f;
        struct mota_flash h;
        uint8_t b[16] = {0};
        if (flash_uniform(&f, 16 * 1024, 4096, 16) != MOTA_OK)
            _exit(99);
        mota_posix_flash_hal(&f, &h, 0);
        mota_posix_flash_cut(&f, 1, false);
        (void)h.prog(h.ctx, 0, b, 16);
        _exit(98); /* the program returned: wrong */
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), MOTA_POSIX_POWER_CUT_EXIT);
}

static void test_file_backed_flash_persists(void **state)
{
    (void)state;
    char path[] = "/tmp/mota-flash-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    unlink(path);
    struct mota_posix_flash f;
    struct mota_flash h;
    uint8_t b[16], r[16];
    memset(b, 0x42, sizeof(b));
    assert_int_equal(flash_open_uniform(&f, path, 32 * 1024, 4096, 16), MOTA_OK);
    mota_posix_flash_hal(&f, &h, 0);
    assert_int_equal(h.prog(h.ctx, 4096, b, 16), MOTA_OK);
    mota_posix_flash_close(&f);
    assert_int_equal(flash_open_uniform(&f, path, 32 * 1024, 4096, 16), MOTA_OK);
    mota_posix_flash_hal(&f, &h, 0);
    assert_int_equal(h.read(h.ctx, 4096, r, 16), MOTA_OK);
    assert_memory_equal(r, b, 16);
    mota_posix_flash_close(&f);
    assert_int_equal(flash_open_uniform(&f, path, 64 * 1024, 4096, 16), MOTA_ERR_ARG); /* other geometry */
    unlink(path);
}

static void roundtrip(struct mota_transport *a, struct mota_transport *b)
{
    uint8_t out[300], in[300];
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (uint8_t)i;                                  /* every byte value, including ^C, ^D, XON/XOFF */
    assert_int_equal(b->read(b->ctx, in, sizeof(in), 20), 0); /* nothing yet: timeout */
    assert_int_equal(a->write(a->ctx, out, sizeof(out)), MOTA_OK);
    size_t got = 0;
    while (got < sizeof(out)) {
        int n = b->read(b->ctx, in + got, sizeof(in) - got, 1000);
        assert_true(n > 0);
        got += (size_t)n;
    }
    assert_memory_equal(in, out, sizeof(out));
}

static void test_tcp_and_pty_transports_carry_binary(void **state)
{
    (void)state;
    struct mota_posix_transport srv, cli, pty, slave;
    struct mota_transport hs, hc, hp, hsl;
    uint16_t port = 0;
    assert_int_equal(mota_posix_transport_tcp_listen(&srv, "127.0.0.1", &port), MOTA_OK);
    assert_true(port != 0);
    assert_int_equal(mota_posix_transport_tcp_connect(&cli, "127.0.0.1", port, 2000), MOTA_OK);
    assert_int_equal(mota_posix_transport_tcp_accept(&srv, 1000), MOTA_OK);
    mota_posix_transport_hal(&srv, &hs);
    mota_posix_transport_hal(&cli, &hc);
    roundtrip(&hc, &hs);
    roundtrip(&hs, &hc);
    mota_posix_transport_close(&cli);
    uint8_t x;
    assert_int_equal(hs.read(hs.ctx, &x, 1, 1000), MOTA_ERR_TRANSPORT); /* peer closed */
    mota_posix_transport_close(&srv);

    assert_int_equal(mota_posix_transport_pty(&pty), MOTA_OK);
    int sfd = open(pty.pty_path, O_RDWR | O_NOCTTY);
    assert_true(sfd >= 0);
    mota_posix_transport_fds(&slave, sfd, sfd);
    mota_posix_transport_hal(&pty, &hp);
    mota_posix_transport_hal(&slave, &hsl);
    roundtrip(&hp, &hsl);
    roundtrip(&hsl, &hp);
    mota_posix_transport_close(&slave);
    mota_posix_transport_close(&pty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flash_enforces_nor_rules),
        cmocka_unit_test(test_ecc_flash_programs_a_unit_once_per_erase),
        cmocka_unit_test(test_flash_of_mixed_sectors_erases_each_whole),
        cmocka_unit_test(test_ecc_flash_torn_units_read_as_ecc_errors_until_erased),
        cmocka_unit_test(test_flash_power_cut_unwinds_and_tears_operations),
        cmocka_unit_test(test_flash_power_cut_without_a_harness_ends_the_process),
        cmocka_unit_test(test_file_backed_flash_persists),
        cmocka_unit_test(test_tcp_and_pty_transports_carry_binary),
    };
    return cmocka_run_group_tests_name("posix port", tests, NULL, NULL);
}
