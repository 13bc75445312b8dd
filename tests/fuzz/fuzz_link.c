/* libFuzzer target: the device's link server (frame decoder, request
 * parsing, the agent behind it) fed arbitrary bytes, in arbitrary chunks,
 * as a UART would deliver them. */
#include "fuzz_device.h"
#include "mota/link.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct feed {
    const uint8_t *p;
    size_t len, off;
};

static int feed_read(void *ctx, uint8_t *buf, size_t len, uint32_t timeout_ms)
{
    struct feed *f = ctx;
    (void)timeout_ms;
    if (f->off >= f->len)
        return MOTA_ERR_TRANSPORT;
    /* chunk sizes from the data itself, 1..64 bytes */
    size_t n = (size_t)(f->p[f->off] % 64) + 1;
    if (n > len)
        n = len;
    if (n > f->len - f->off)
        n = f->len - f->off;
    memcpy(buf, f->p + f->off, n);
    f->off += n;
    return (int)n;
}

static int sink_write(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    (void)len;
    return MOTA_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct mota_posix_device d;
    static struct mota_link link;
    fuzz_device_setup(&d);
    memset(d.pf.mem, 0xFF, d.pf.size);
    if (mota_agent_init(&d.device.agent, &d.cfg) != MOTA_OK)
        abort(); /* a blank flash always boots */
    struct feed f = {data, size, 0};
    struct mota_transport tr = {.read = feed_read, .write = sink_write, .ctx = &f};
    mota_link_init(&link, &d.device.agent, &tr, NULL, "fuzz");
    for (int i = 0; i < 100000; i++) {
        int ret = mota_link_poll(&link, 0);
        if (ret == MOTA_ERR_TRANSPORT)
            break;
        if (ret != MOTA_OK && mota_err_name(ret) == NULL)
            abort();
    }
    return 0;
}
