/* Link check of the device path: the agent and everything it pulls in
 * (container, loader, crypto with the static mbed TLS arena, libcbor) must
 * link into a Cortex-M55 image with no host-only code and no heap. Built by
 * the cross build; the test device_libraries_use_no_heap_and_no_stdio and
 * this link keep the device path honest. Not run. */
#include "board.h"

#include "mota/agent.h"
#include "mota/crypto.h"

static struct mota_agent agent;
static struct mota_agent_config cfg;
static uint8_t arena[8192];

int main(void)
{
    struct mota_agent_model_info info;
    if (mota_crypto_setup(arena, sizeof(arena)) != 0)
        return 1;
    int ret = mota_agent_init(&agent, &cfg);
    ret |= mota_agent_write(&agent, 0, arena, 16);
    ret |= mota_agent_confirm(&agent, 0) | mota_agent_rollback(&agent, 0) | mota_agent_abort(&agent);
    ret |= mota_agent_model_info(&agent, 0, &info) | mota_agent_selftest(&agent, 0);
    ret |= mota_agent_revoke_keys(&agent, 1) | mota_agent_last_error(&agent, 0);
    ret |= (int)mota_agent_upload_offset(&agent);
    return ret;
}
