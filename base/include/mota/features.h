/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device library's build-time features (cmake/features.cmake; docs/porting.md, "Features chosen at
 * build time"): each MOTA_FEATURE_* is 1 unless the build turned it off, and the host tool, which must read
 * every container, has them all. HELLO key 17 carries the bits of those that are on, so that a host refuses
 * a container the device's build cannot take before it sends it.
 */
#ifndef MOTA_FEATURES_H
#define MOTA_FEATURES_H

#include <stdint.h>

#ifndef MOTA_FEATURE_LZ4
#define MOTA_FEATURE_LZ4 1
#endif
#ifndef MOTA_FEATURE_DEFLATE
#define MOTA_FEATURE_DEFLATE 1
#endif
#ifndef MOTA_FEATURE_LZMA
#define MOTA_FEATURE_LZMA 1
#endif
#ifndef MOTA_FEATURE_DELTA
#define MOTA_FEATURE_DELTA 1
#endif
#ifndef MOTA_FEATURE_CBOR_CROSSCHECK /* libcbor checks each item the container decoder reads again */
#define MOTA_FEATURE_CBOR_CROSSCHECK 1
#endif
#ifndef MOTA_FEATURE_LEGACY
#define MOTA_FEATURE_LEGACY 1
#endif
#ifndef MOTA_FEATURE_TRAP
#define MOTA_FEATURE_TRAP 1
#endif
#ifndef MOTA_FEATURE_EPOCHS
#define MOTA_FEATURE_EPOCHS 1
#endif
#ifndef MOTA_FEATURE_INVOKE
#define MOTA_FEATURE_INVOKE 1
#endif
#ifndef MOTA_FEATURE_DECRYPT
#define MOTA_FEATURE_DECRYPT 1
#endif
#ifndef MOTA_FEATURE_DETAIL /* the facts behind a refusal, as text */
#define MOTA_FEATURE_DETAIL 1
#endif
#ifndef MOTA_FEATURE_ERRLOG /* the recent-errors ring */
#define MOTA_FEATURE_ERRLOG 1
#endif
#ifndef MOTA_FEATURE_RESUME /* uploads resume across resets and reconnections */
#define MOTA_FEATURE_RESUME 1
#endif
#ifndef MOTA_FEATURE_PAGES /* HELLO and STATUS in parts */
#define MOTA_FEATURE_PAGES 1
#endif
#ifndef MOTA_FEATURE_HISTORY /* errors journaled for diagnostics */
#define MOTA_FEATURE_HISTORY 1
#endif
#ifndef MOTA_FEATURE_RETIRE /* ROLLBACK retires a confirmed model that faulted */
#define MOTA_FEATURE_RETIRE 1
#endif

/* HELLO key 17's bits (docs/protocol.md) */
#define MOTA_FEAT_LZ4 0x01u       /* LZ4-compressed payloads */
#define MOTA_FEAT_DEFLATE 0x02u   /* deflate-compressed payloads */
#define MOTA_FEAT_LEGACY 0x04u    /* X-CUBE-AI legacy models (also in the profile's families) */
#define MOTA_FEAT_EPOCHS 0x08u    /* the epoch summary in answers */
#define MOTA_FEAT_INVOKE 0x10u    /* INVOKE, INPUT, RUN, OUTPUT */
#define MOTA_FEAT_TRAP 0x20u      /* a legacy model's licence check emulated (without: a part with its CRC unit) */
#define MOTA_FEAT_DECRYPT 0x40u   /* encrypted payloads (A128GCM, A128CTR) */
#define MOTA_FEAT_LZMA 0x80u      /* LZMA-compressed payloads */
#define MOTA_FEAT_DELTA 0x100u    /* delta payloads (mota-directive-patch) */
#define MOTA_FEAT_DETAIL 0x200u   /* refusal details in refused uploads' answers */
#define MOTA_FEAT_ERRLOG 0x400u   /* ERRORS: the recent-errors ring */
#define MOTA_FEAT_RESUME 0x800u   /* BEGIN may resume an upload */
#define MOTA_FEAT_PAGES 0x1000u   /* HELLO and STATUS from a model on */
#define MOTA_FEAT_HISTORY 0x2000u /* errors journaled: a model's last error survives a reboot */
#define MOTA_FEAT_RETIRE 0x4000u  /* ROLLBACK retires a confirmed model that faulted since boot */

static inline uint32_t mota_features_built(void)
{
    return (MOTA_FEATURE_LZ4 ? MOTA_FEAT_LZ4 : 0u) | (MOTA_FEATURE_DEFLATE ? MOTA_FEAT_DEFLATE : 0u) |
           (MOTA_FEATURE_LEGACY ? MOTA_FEAT_LEGACY : 0u) | (MOTA_FEATURE_EPOCHS ? MOTA_FEAT_EPOCHS : 0u) |
           (MOTA_FEATURE_INVOKE ? MOTA_FEAT_INVOKE : 0u) |
           (MOTA_FEATURE_LEGACY && MOTA_FEATURE_TRAP ? MOTA_FEAT_TRAP : 0u) |
           (MOTA_FEATURE_DECRYPT ? MOTA_FEAT_DECRYPT : 0u) | (MOTA_FEATURE_LZMA ? MOTA_FEAT_LZMA : 0u) |
           (MOTA_FEATURE_DELTA ? MOTA_FEAT_DELTA : 0u) | (MOTA_FEATURE_DETAIL ? MOTA_FEAT_DETAIL : 0u) |
           (MOTA_FEATURE_ERRLOG ? MOTA_FEAT_ERRLOG : 0u) | (MOTA_FEATURE_RESUME ? MOTA_FEAT_RESUME : 0u) |
           (MOTA_FEATURE_PAGES ? MOTA_FEAT_PAGES : 0u) | (MOTA_FEATURE_HISTORY ? MOTA_FEAT_HISTORY : 0u) |
           (MOTA_FEATURE_RETIRE ? MOTA_FEAT_RETIRE : 0u);
}

#endif /* MOTA_FEATURES_H */
