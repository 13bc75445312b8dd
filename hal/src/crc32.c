#include "mota/crc32.h"

#ifdef MOTA_CRC32_SMALL
/* Device builds: a 64-byte nibble table in flash. Frames are small, so speed matters less than size. */
uint32_t mota_crc32(uint32_t crc, const void *p, size_t n)
{
    static const uint32_t t[16] = {
        0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
        0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
        0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
    };
    const uint8_t *b = p;
    crc = ~crc;
    while (n--) {
        crc ^= *b++;
        crc = t[crc & 0xf] ^ (crc >> 4);
        crc = t[crc & 0xf] ^ (crc >> 4);
    }
    return ~crc;
}
#else
/* Host builds: slicing-by-8, so checking a large params file costs little
 * next to hashing it. */
static uint32_t crc_tab[8][256];
static int crc_ready;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_tab[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int s = 1; s < 8; s++)
            crc_tab[s][i] = crc_tab[0][crc_tab[s - 1][i] & 0xff] ^ (crc_tab[s - 1][i] >> 8);
    crc_ready = 1;
}

uint32_t mota_crc32(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    if (!crc_ready)
        crc_init();
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo = crc ^ ((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
        uint32_t hi = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 | (uint32_t)b[7] << 24;
        crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^ crc_tab[5][(lo >> 16) & 0xff] ^
              crc_tab[4][lo >> 24] ^ crc_tab[3][hi & 0xff] ^ crc_tab[2][(hi >> 8) & 0xff] ^
              crc_tab[1][(hi >> 16) & 0xff] ^ crc_tab[0][hi >> 24];
        b += 8;
        n -= 8;
    }
    while (n--)
        crc = crc_tab[0][(crc ^ *b++) & 0xff] ^ (crc >> 8);
    return ~crc;
}
#endif
