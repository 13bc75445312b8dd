/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Every number the mota container uses as a map key or command, defined once:
 * the encoder (container_enc.c), the decoder (manifest.c, cose.c) and the tests read
 * these tables. docs/container-format.md gives each in its CDDL, named as in
 * the third column; the test cli_container_keys_match_the_cddl checks that
 * both agree.
 *
 * X(name, value, CDDL name). The SUIT and COSE values are IANA's
 * (draft-ietf-suit-manifest section 11, RFC 9052); mota's own members sit in
 * the range below -256: SUIT puts private use at -256 and below (section 11) but
 * custom commands below -256 (sections 8.4.9, 8.4.11), so -257 and lower hold
 * under every reading (a format break from -256: docs/container-format.md).
 */
#ifndef MOTA_SUIT_KEYS_H
#define MOTA_SUIT_KEYS_H

#define MOTA_SUIT_ENVELOPE_KEYS(X) /* cddl: mota_envelope */                                                           \
    X(MOTA_ENV_AUTH, 2, "suit-authentication-wrapper")                                                                 \
    X(MOTA_ENV_MANIFEST, 3, "suit-manifest")

#define MOTA_SUIT_MANIFEST_KEYS(X) /* cddl: mota_manifest */                                                           \
    X(MOTA_MAN_VERSION, 1, "suit-manifest-version")                                                                    \
    X(MOTA_MAN_SEQ, 2, "suit-manifest-sequence-number")                                                                \
    X(MOTA_MAN_COMMON, 3, "suit-common")                                                                               \
    X(MOTA_MAN_VALIDATE, 7, "suit-validate")                                                                           \
    X(MOTA_MAN_LOAD, 8, "suit-load")                                                                                   \
    X(MOTA_MAN_INVOKE, 9, "suit-invoke")                                                                               \
    X(MOTA_MAN_INSTALL, 20, "suit-install")                                                                            \
    X(MOTA_MAN_TEXT, 23, "suit-text")                                                                                  \
    X(MOTA_MAN_COMPAT, -257, "mota-compat")

#define MOTA_SUIT_COMMON_KEYS(X) /* cddl: suit_common */                                                               \
    X(MOTA_COMMON_COMPONENTS, 2, "suit-components")                                                                    \
    X(MOTA_COMMON_SHARED, 4, "suit-shared-sequence")

#define MOTA_SUIT_COMMANDS(X) /* cddl: command */                                                                      \
    X(MOTA_SUIT_CMD_VENDOR, 1, "suit-condition-vendor-identifier")                                                     \
    X(MOTA_SUIT_CMD_CLASS, 2, "suit-condition-class-identifier")                                                       \
    X(MOTA_SUIT_CMD_IMAGE_MATCH, 3, "suit-condition-image-match")                                                      \
    X(MOTA_SUIT_CMD_SET_INDEX, 12, "suit-directive-set-component-index")                                               \
    X(MOTA_SUIT_CMD_SET_PARAMS, 19, "suit-directive-set-parameters")                                                   \
    X(MOTA_SUIT_CMD_OVERRIDE_PARAMS, 20, "suit-directive-override-parameters")                                         \
    X(MOTA_SUIT_CMD_FETCH, 21, "suit-directive-fetch")                                                                 \
    X(MOTA_SUIT_CMD_COPY, 22, "suit-directive-copy")                                                                   \
    X(MOTA_SUIT_CMD_INVOKE, 23, "suit-directive-invoke")                                                               \
    X(MOTA_SUIT_CMD_DECOMPRESS, -257, "mota-directive-decompress")                                                     \
    X(MOTA_SUIT_CMD_PATCH, -258, "mota-directive-patch")

#define MOTA_SUIT_PARAMETERS(X) /* cddl: suit_params */                                                                \
    X(MOTA_PAR_VENDOR, 1, "suit-parameter-vendor-identifier")                                                          \
    X(MOTA_PAR_CLASS, 2, "suit-parameter-class-identifier")                                                            \
    X(MOTA_PAR_DIGEST, 3, "suit-parameter-image-digest")                                                               \
    X(MOTA_PAR_SIZE, 14, "suit-parameter-image-size")                                                                  \
    X(MOTA_PAR_ENCRYPTION_INFO, 19, "suit-parameter-encryption-info")                                                  \
    X(MOTA_PAR_URI, 21, "suit-parameter-uri")                                                                          \
    X(MOTA_PAR_SOURCE, 22, "suit-parameter-source-component")

#define MOTA_SUIT_TEXT_KEYS(X) /* cddl: text_lmap */                                                                   \
    X(MOTA_TEXT_DESCRIPTION, 1, "suit-text-manifest-description")                                                      \
    X(MOTA_TEXT_CREATED, -257, "mota-text-creation-time")

#define MOTA_SUIT_COMPONENT_TEXT_KEYS(X) /* cddl: text_lmap */                                                         \
    X(MOTA_CTEXT_VENDOR_NAME, 1, "suit-text-vendor-name")                                                              \
    X(MOTA_CTEXT_MODEL_NAME, 2, "suit-text-model-name")                                                                \
    X(MOTA_CTEXT_MODEL_INFO, 4, "suit-text-model-info")                                                                \
    X(MOTA_CTEXT_VERSION, 6, "suit-text-component-version")

#define MOTA_COSE_HEADER_LABELS(X) /* cddl: cose_protected */                                                          \
    X(MOTA_COSE_LABEL_ALG, 1, "alg")                                                                                   \
    X(MOTA_COSE_LABEL_CRIT, 2, "crit")                                                                                 \
    X(MOTA_COSE_LABEL_KID, 4, "kid")

/* mota-compat: what a device checks before it erases anything */
#define MOTA_COMPAT_KEYS(X) /* cddl: mota_compat */                                                                    \
    X(MOTA_COMPAT_RELOC, 1, "reloc-runtime-version")                                                                   \
    X(MOTA_COMPAT_CPU, 2, "cpu-part")                                                                                  \
    X(MOTA_COMPAT_FPU, 3, "fpu")                                                                                       \
    X(MOTA_COMPAT_ABI, 4, "float-abi")                                                                                 \
    X(MOTA_COMPAT_SECURE, 5, "secure")                                                                                 \
    X(MOTA_COMPAT_DBG, 6, "dbg-info")                                                                                  \
    X(MOTA_COMPAT_ASYNC, 7, "async")                                                                                   \
    X(MOTA_COMPAT_TOOLCHAIN, 8, "toolchain")                                                                           \
    X(MOTA_COMPAT_RTVER, 9, "ll-aton-version")                                                                         \
    X(MOTA_COMPAT_CNAME, 10, "c-name")                                                                                 \
    X(MOTA_COMPAT_ACTS, 11, "activations-size")                                                                        \
    X(MOTA_COMPAT_PARAMS, 12, "params-size")                                                                           \
    X(MOTA_COMPAT_EXTRAM, 13, "ext-ram-size")                                                                          \
    X(MOTA_COMPAT_XIP, 14, "exec-ram-xip")                                                                             \
    X(MOTA_COMPAT_COPY, 15, "exec-ram-copy")                                                                           \
    X(MOTA_COMPAT_MODE, 16, "install-mode")                                                                            \
    X(MOTA_COMPAT_STRUCTS, 17, "struct-sizes")                                                                         \
    X(MOTA_COMPAT_SELFTEST, 19, "selftest")                                                                            \
    X(MOTA_COMPAT_RTDESC, 20, "runtime-description")                                                                   \
    X(MOTA_COMPAT_EPOCHS, -1, "npu-epochs")

#define MOTA_SELFTEST_KEYS(X) /* cddl: selftest */                                                                     \
    X(MOTA_SELFTEST_DIGEST, 1, "output-digest")                                                                        \
    X(MOTA_SELFTEST_SIZE, 2, "output-size")                                                                            \
    X(MOTA_SELFTEST_LATENCY, 3, "max-latency-us")

/* mota-directive-decompress's argument: how the transported bytes encode the image */
#define MOTA_COMPRESSION_KEYS(X) /* cddl: mota_compression */                                                          \
    X(MOTA_Z_ALG, 1, "algorithm")                                                                                      \
    X(MOTA_Z_BLOCK, 2, "block")

/* mota-directive-patch's argument: the transported bytes encode the difference from the source image */
#define MOTA_PATCH_KEYS(X) /* cddl: mota_patch */                                                                      \
    X(MOTA_P_ALG, 1, "algorithm")                                                                                      \
    X(MOTA_P_BLOCK, 2, "block")                                                                                        \
    X(MOTA_P_SOURCE, 3, "source-digest")                                                                               \
    X(MOTA_P_SOURCE_SIZE, 4, "source-size")                                                                            \
    X(MOTA_P_REGIONS, 5, "regions")

#define MOTA_KEY_ENUM_(name, value, cddl) name = (value),
enum mota_suit_envelope_key { MOTA_SUIT_ENVELOPE_KEYS(MOTA_KEY_ENUM_) };
enum mota_suit_manifest_key { MOTA_SUIT_MANIFEST_KEYS(MOTA_KEY_ENUM_) };
enum mota_suit_common_key { MOTA_SUIT_COMMON_KEYS(MOTA_KEY_ENUM_) };
enum mota_suit_command { MOTA_SUIT_COMMANDS(MOTA_KEY_ENUM_) };
enum mota_suit_parameter { MOTA_SUIT_PARAMETERS(MOTA_KEY_ENUM_) };
enum mota_suit_text_key { MOTA_SUIT_TEXT_KEYS(MOTA_KEY_ENUM_) };
enum mota_suit_component_text_key { MOTA_SUIT_COMPONENT_TEXT_KEYS(MOTA_KEY_ENUM_) };
enum mota_cose_label { MOTA_COSE_HEADER_LABELS(MOTA_KEY_ENUM_) };
enum mota_compat_key { MOTA_COMPAT_KEYS(MOTA_KEY_ENUM_) };
enum mota_selftest_key { MOTA_SELFTEST_KEYS(MOTA_KEY_ENUM_) };
enum mota_compression_key { MOTA_COMPRESSION_KEYS(MOTA_KEY_ENUM_) };
enum mota_patch_key { MOTA_PATCH_KEYS(MOTA_KEY_ENUM_) };
#undef MOTA_KEY_ENUM_

/* the second element of a transport component's identifier: [h'code', h'transport'] */
#define MOTA_SUIT_TRANSPORT "transport"

/* the SUIT reporting policy mota writes on every condition: all four bits, as in the draft's examples */
#define MOTA_SUIT_REPORT_ALL 15u
/* suit-directive-fetch's policy: report on failure */
#define MOTA_SUIT_REPORT_FAILURE 2u

#endif /* MOTA_SUIT_KEYS_H */
