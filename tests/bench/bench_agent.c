/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Benchmark: what one update of a 1 MiB model costs the device, through the
 * posix flash simulator (4 KiB sectors, 16-byte program units): flash
 * operations, bytes programmed, sectors erased (wear), and the agent's RAM
 * and stack. The stack is measured by running the update on a thread whose
 * stack was painted beforehand (host build: x86-64 frames).
 */
#define _GNU_SOURCE
#include "../unit/agent_fixture.h"

#include <pthread.h>
#include <stdio.h>

#define MIB (1024u * 1024u)

static struct mota_posix_device *dev;
static uint8_t *c1, *c2;
static size_t l1, l2;
static int result;

static void *update(void *arg)
{
    (void)arg;
    result = send_container(&dev->device.agent, c2, l2, 4096);
    if (result == MOTA_OK)
        result = mota_agent_confirm(&dev->device.agent, 0);
    return NULL;
}

int main(void)
{
    /* a bigger device than the unit tests: two 1.25 MiB slots */
    dev = dev_new_sized(1, 3 * MIB, 1280u * 1024u);
    struct container_opts o1 = {.seq = 1, .selftest = true, .model = {.code_bytes = MIB - 4096, .fill = 1}};
    struct container_opts o2 = {.seq = 2, .selftest = true, .model = {.code_bytes = MIB - 4096, .fill = 2}};
    c1 = make_container(&o1, &l1);
    c2 = make_container(&o2, &l2);
    if (dev_boot(dev) != MOTA_OK || send_container(&dev->device.agent, c1, l1, 4096) != MOTA_OK ||
        mota_agent_confirm(&dev->device.agent, 0) != MOTA_OK) {
        fprintf(stderr, "setup failed\n");
        return 1;
    }
    mota_posix_flash_reset_counters(&dev->pf);
    uint64_t ops0 = dev->pf.ops;

    /* the update, on a painted stack */
    static uint8_t stack[512 * 1024] __attribute__((aligned(64)));
    memset(stack, 0xA5, sizeof(stack));
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, sizeof(stack));
    if (pthread_create(&th, &attr, update, NULL) != 0 || pthread_join(th, NULL) != 0 || result != MOTA_OK) {
        fprintf(stderr, "update failed: %s\n", mota_err_name(result));
        return 1;
    }
    size_t untouched = 0;
    while (untouched < sizeof(stack) && stack[untouched] == 0xA5)
        untouched++;

    struct mota_posix_flash *f = &dev->pf;
    uint64_t progs = f->progs, erases = f->erases;
    printf("update of a %zu-byte container (a %u KiB model, %u-byte self-test input) on a NOR flash with "
           "%u-byte sectors and %u-byte program units:\n",
           l2, (unsigned)(MIB / 1024), 64u, DEV_SECTOR, DEV_PROG);
    printf("  flash operations   %llu (%llu programs, %llu erases, %llu reads)\n",
           (unsigned long long)(dev->pf.ops - ops0), (unsigned long long)progs, (unsigned long long)erases,
           (unsigned long long)f->reads);
    printf("  bytes programmed   %llu (%.3f x the container)\n", (unsigned long long)f->bytes_programmed,
           (double)f->bytes_programmed / (double)l2);
    printf("  sectors erased     %llu (slot %llu, journal %llu)\n", (unsigned long long)erases,
           (unsigned long long)((l2 + DEV_SECTOR - 1) / DEV_SECTOR),
           (unsigned long long)(erases - (l2 + DEV_SECTOR - 1) / DEV_SECTOR));
    printf("  bytes read back    %llu (verification from flash, journal)\n", (unsigned long long)f->bytes_read);
    printf("RAM (no heap):\n");
    printf("  struct mota_agent  %zu bytes (for %u models)\n", sizeof(struct mota_agent), MOTA_AGENT_MAX_MODELS);
    printf("  scratch (head)     %u bytes for any head the format allows\n", (unsigned)MOTA_AGENT_SCRATCH_ANY);
    printf("  self-test buffer   the largest self-test output (here %u bytes)\n", 10u);
    printf("  stack peak         %zu bytes during the update (x86-64 host build; see docs/agent.md for Cortex-M)\n",
           sizeof(stack) - untouched);
    free(c1);
    free(c2);
    dev_free(dev);
    return 0;
}
