/* libFuzzer target: the NBIN header reader (parser part of the loader). */
#include "mota/err.h"
#include "mota/nbin.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mota_nbin_info in;
    uint8_t *buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    int ret = mota_nbin_parse(buf, size, &in);
    if (mota_err_name(ret) == NULL)
        abort();
    if (ret == MOTA_OK) {
        /* every slice the parser hands out lies inside the input */
        if (in.c_name < (const char *)buf || in.c_name + in.c_name_len > (const char *)buf + size)
            abort();
        for (unsigned i = 0; i < in.n_pools; i++) {
            if (in.pools[i].name + in.pools[i].name_len > (const char *)buf + size)
                abort();
        }
        if (in.split)
            (void)mota_nbin_check_params(&in, buf, size);
    }
    free(buf);
    return 0;
}
