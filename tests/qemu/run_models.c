/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test firmware: install the models described by the job table the harness
 * placed at 0x60000000, run them, compare with the host reference outputs.
 * Prints one line per job and exits (semihosting) with the failure count.
 */
#include "board.h"

#include "mota/err.h"
#include "mota/loader.h"
#include "mota/nbin.h"

#include <stdbool.h>
#include <string.h>

#define JOB_TABLE 0x60000000u
#define JOB_MAGIC 0x424F4A4Du /* "MJOB" */

struct job {
    char name[24];
    uint32_t model_addr, model_len;
    uint32_t params_addr, params_len; /* split params, 0 if appended */
    uint32_t mode;                    /* MOTA_INSTALL_XIP / COPY */
    uint32_t exec_addr, exec_size;
    uint32_t n_vectors;
    uint32_t input_addr, input_len;   /* n_vectors inputs, back to back */
    uint32_t expect_addr, expect_len; /* n_vectors outputs */
};

struct job_table {
    uint32_t magic, n_jobs;
    struct job jobs[];
};

struct range {
    uint32_t addr, size;
};

/* The memory the installer may write: SRAM, internal SRAM, DDR above the job area. */
static const struct range writable[] = {
    {0x01000000u, 0x00200000u},
    {0x21000000u, 0x00200000u},
    {0x60800000u, 0x07800000u},
};

static void *map(void *ctx, uint32_t addr, uint32_t len, bool write)
{
    (void)ctx;
    (void)write;
    for (unsigned i = 0; i < sizeof(writable) / sizeof(writable[0]); i++) {
        if (addr >= writable[i].addr && (uint64_t)addr + len <= (uint64_t)writable[i].addr + writable[i].size)
            return (void *)(uintptr_t)addr;
    }
    return NULL;
}

static void barriers(void *ctx, uint32_t addr, uint32_t len)
{
    (void)ctx;
    (void)addr;
    (void)len;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
}

static const struct mota_install_mem mem = {.map = map, .clean_dcache = barriers, .invalidate_icache = barriers};

static int run_job(const struct job *j)
{
    struct mota_installed m;
    static int8_t out[256];
    struct mota_install_config c = {
        .image = (const uint8_t *)(uintptr_t)j->model_addr,
        .image_len = j->model_len,
        .image_addr = j->model_addr,
        .params = j->params_len ? (const uint8_t *)(uintptr_t)j->params_addr : NULL,
        .params_len = j->params_len,
        .params_addr = j->params_addr,
        .exec_ram_addr = j->exec_addr,
        .exec_ram_size = j->exec_size,
        .mode = j->mode,
        .clear = true,
        .mem = &mem,
    };
    uart_puts("job ");
    uart_puts(j->name);
    uart_puts(j->mode == MOTA_INSTALL_XIP ? " xip image " : " copy image ");
    uart_hex(j->model_addr);
    uart_puts(" exec ");
    uart_hex(j->exec_addr);
    ticks_start();
    /* validation, as the agent runs it once per verification, then the install passes */
    struct mota_nbin_info info;
    uint64_t v0 = ticks_now();
    int ret = mota_nbin_validate(c.image, c.image_len, &info);
    uint64_t v1 = ticks_now(), t0 = v1, t1 = v1;
    if (ret == MOTA_OK) {
        t0 = ticks_now();
        ret = mota_loader_install_validated(&c, &info, &m);
        t1 = ticks_now();
    }
    if (ret != MOTA_OK) {
        uart_puts(": install FAILED ");
        uart_puts(mota_err_name(ret));
        uart_puts("\r\n");
        return 1;
    }
    uart_puts(" r9 ");
    uart_hex(m.ram_addr);
    /* install cost, in SysTick ticks (x31.25 = instructions under -icount shift=0) */
    uart_puts(" ticks ");
    uart_dec((uint32_t)(t1 - t0));
    uart_puts(" got ");
    uart_dec(m.got_patched);
    uart_puts(" rel ");
    uart_dec(m.rel_patched);
    uart_puts(" copied ");
    uart_dec(m.bytes_copied);
    uart_puts(" zeroed ");
    uart_dec(m.bytes_zeroed);
    uart_puts(" validate ticks ");
    uart_dec((uint32_t)(v1 - v0));
    /* the calls a self-test makes (sizes, init, one run), unguarded: the reference for the board's guard */
    uint64_t c0 = ticks_now();
    uint32_t in_size = mota_model_call(&m, 2, 0, 0, 0), out_size = mota_model_call(&m, 3, 0, 0, 0);
    if (in_size * j->n_vectors != j->input_len || out_size * j->n_vectors != j->expect_len || out_size > sizeof(out)) {
        uart_puts(": FAILED sizes in ");
        uart_dec(in_size);
        uart_puts(" out ");
        uart_dec(out_size);
        uart_puts("\r\n");
        return 1;
    }
    if ((int32_t)mota_model_call(&m, 0, 0, 0, 0) != 0) {
        uart_puts(": FAILED init\r\n");
        return 1;
    }
    uint64_t calls = ticks_now() - c0;
    int bad = 0;
    for (uint32_t v = 0; v < j->n_vectors; v++) {
        const int8_t *in = (const int8_t *)(uintptr_t)(j->input_addr + v * in_size);
        const int8_t *want = (const int8_t *)(uintptr_t)(j->expect_addr + v * out_size);
        memset(out, 0x5a, sizeof(out));
        uint64_t r0 = ticks_now();
        uint32_t rr = mota_model_call(&m, 1, (uint32_t)(uintptr_t)in, (uint32_t)(uintptr_t)out, 0);
        if (v == 0)
            calls += ticks_now() - r0;
        if ((int32_t)rr != 0 || memcmp(out, want, out_size) != 0) {
            uart_puts("\r\n  vector ");
            uart_dec(v);
            uart_puts(" got");
            for (uint32_t k = 0; k < out_size; k++) {
                uart_putc(' ');
                uart_int(out[k]);
            }
            bad++;
        }
    }
    uart_puts(bad ? ": FAILED\r\n" : ": PASS ");
    if (!bad) {
        uart_dec(j->n_vectors);
        uart_puts(" vectors match the host reference; calls ticks ");
        uart_dec((uint32_t)calls);
        uart_puts("\r\n");
    }
    return bad != 0;
}

int main(void)
{
    const struct job_table *t = (const struct job_table *)(uintptr_t)JOB_TABLE;
    uart_puts("mota model runner on mps3-an547\r\n");
    if (t->magic != JOB_MAGIC || t->n_jobs == 0 || t->n_jobs > 64) {
        uart_puts("no job table\r\n");
        return 98;
    }
    int failures = 0;
    for (uint32_t i = 0; i < t->n_jobs; i++)
        failures += run_job(&t->jobs[i]);
    uart_puts("summary: ");
    uart_dec(t->n_jobs - (uint32_t)failures);
    uart_puts(" passed, ");
    uart_dec((uint32_t)failures);
    uart_puts(" failed\r\n");
    return failures;
}
