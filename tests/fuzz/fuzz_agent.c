/* libFuzzer target: the agent at boot and on upload, with hostile inputs:
 * the first half of the input becomes the flash journal (a corrupted or
 * forged state), the second half is sent as a container. Nothing may crash,
 * read or write out of bounds, or return a code outside the reason table. */
#include "fuzz_device.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct mota_posix_device d;
    fuzz_device_setup(&d);
    struct mota_agent *agent = &d.device.agent;
    size_t jlen = size / 2 < FUZZ_JOURNAL ? size / 2 : FUZZ_JOURNAL;
    memset(d.pf.mem, 0xFF, d.pf.size);
    memcpy(d.pf.mem, data, jlen);
    int ret = mota_agent_init(agent, &d.cfg);
    if (mota_err_name(ret) == NULL)
        abort();
    if (ret == MOTA_OK) {
        const uint8_t *c = data + jlen;
        size_t n = size - jlen;
        uint32_t off = 0;
        for (int i = 0; i < 64 && off < n; i++) {
            size_t chunk = n - off < 512 ? n - off : 512;
            int r = mota_agent_write(agent, off, c + off, chunk);
            if (r < 0) {
                if (mota_err_name(r) == NULL)
                    abort();
                break;
            }
            if ((uint32_t)r <= off)
                break;
            off = (uint32_t)r;
        }
        (void)mota_agent_upload_offset(agent);
        (void)mota_agent_confirm(agent, 0);
        (void)mota_agent_abort(agent);
    }
    return 0;
}
