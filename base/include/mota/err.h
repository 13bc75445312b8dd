/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota: the one project-wide reason-code enum.
 *
 * Every fallible function in every module returns an int: 0 (MOTA_OK) or a
 * size on success, one of the negative codes below on failure. Codes are
 * grouped in ranges by the layer that detects them. A code's number and name
 * are stable: never renumber, never reuse (a retired number stays retired);
 * add new codes at the end of their range. docs/reason-codes.md is checked
 * against this table by the tests.
 *
 * This header is part of the base layer (target mota_base): every module may
 * include it, it includes nothing but libc.
 */
#ifndef MOTA_ERR_H
#define MOTA_ERR_H

/* X(name, value, one-line message) */
#define MOTA_ERR_TABLE(X)                                                                                              \
    /* general: -1 .. -99 */                                                                                           \
    X(MOTA_ERR_ARG, -1, "invalid argument")                                                                            \
    X(MOTA_ERR_NOSPC, -2, "caller buffer too small")                                                                   \
    X(MOTA_ERR_IO, -3, "input/output error")                                                                           \
    X(MOTA_ERR_INTERNAL, -4, "internal error (a bug): please report")                                                  \
    X(MOTA_ERR_UNSUPPORTED, -5, "feature not supported by this build")                                                 \
    X(MOTA_ERR_CRYPTO, -6, "cryptographic library failure")                                                            \
    X(MOTA_ERR_KEY_INVALID, -7, "key file is not a valid P-256 key")                                                   \
    X(MOTA_ERR_RANDOM, -8, "random number generator failure")                                                          \
    X(MOTA_ERR_ARG_UTF8, -9, "option text is not valid UTF-8")                                                         \
    X(MOTA_ERR_ARG_SEMVER, -10, "version is not a semantic version (semver.org 2.0.0)")                                \
    X(MOTA_ERR_SAME_FILE, -11, "output would overwrite an input or another output")                                    \
    X(MOTA_ERR_FILE_EXISTS, -12, "file exists: it is not overwritten without --force")                                 \
    X(MOTA_ERR_NOT_REGULAR, -13, "output is not a regular file")                                                       \
    X(MOTA_ERR_BUILD, -14, "the compiler or linker rejected the model sources")                                        \
    X(MOTA_ERR_SIGNER, -15, "the external signer command failed")                                                      \
    X(MOTA_ERR_SIGNER_OUTPUT, -16, "the external signer's output is not an ES256 signature")                           \
    X(MOTA_ERR_SIGNER_KEY, -17, "the external signer signed with another key")                                         \
    X(MOTA_ERR_KEY_MISMATCH, -18, "key is not the one the container names (key id differs)")                           \
    X(MOTA_ERR_VALIDATE_MISMATCH, -19, "an output differs from its reference beyond the tolerance")                    \
    X(MOTA_ERR_KEK_INVALID, -20,                                                                                       \
      "key-encryption key file malformed (JWK: kty oct, alg A128KW, 16-byte k, kid 1-32 bytes)")                       \
    /* CBOR well-formedness and profile: -100 .. -199 */                                                               \
    X(MOTA_ERR_CBOR_TRUNCATED, -100, "CBOR item runs past the end of its buffer")                                      \
    X(MOTA_ERR_CBOR_MALFORMED, -101, "CBOR is not well-formed")                                                        \
    X(MOTA_ERR_CBOR_INDEFINITE, -102, "indefinite-length CBOR item is not allowed")                                    \
    X(MOTA_ERR_CBOR_NONMINIMAL, -103, "CBOR head is not in its shortest form")                                         \
    X(MOTA_ERR_CBOR_DEPTH, -104, "CBOR nesting deeper than the limit")                                                 \
    X(MOTA_ERR_CBOR_TYPE, -105, "CBOR item has an unexpected type")                                                    \
    X(MOTA_ERR_CBOR_TOO_LARGE, -106, "CBOR length or count exceeds its limit")                                         \
    X(MOTA_ERR_CBOR_DUP_KEY, -107, "duplicate key in a CBOR map")                                                      \
    X(MOTA_ERR_CBOR_KEY_ORDER, -108, "CBOR map keys are not in canonical order")                                       \
    X(MOTA_ERR_CBOR_TRAILING, -109, "unexpected bytes after the last CBOR item")                                       \
    X(MOTA_ERR_CBOR_SIMPLE, -110, "float or simple value not allowed here")                                            \
    X(MOTA_ERR_CBOR_UTF8, -111, "text string is not valid UTF-8")                                                      \
    /* SUIT envelope, authentication and COSE: -200 .. -299 */                                                         \
    X(MOTA_ERR_ENV_TAG, -200, "not a SUIT envelope (CBOR tag 107 missing)")                                            \
    X(MOTA_ERR_ENV_NO_AUTH, -201, "envelope has no authentication wrapper")                                            \
    X(MOTA_ERR_ENV_NO_MANIFEST, -202, "envelope has no manifest")                                                      \
    X(MOTA_ERR_ENV_UNKNOWN_KEY, -203, "envelope has an unknown member")                                                \
    X(MOTA_ERR_ENV_TOO_LARGE, -204, "authentication wrapper or manifest exceeds its limit")                            \
    X(MOTA_ERR_AUTH_NO_BLOCK, -205, "authentication wrapper holds no signature")                                       \
    X(MOTA_ERR_AUTH_TOO_MANY, -206, "too many authentication blocks")                                                  \
    X(MOTA_ERR_DIGEST_ALG, -207, "unsupported digest algorithm")                                                       \
    X(MOTA_ERR_DIGEST_LEN, -208, "digest has the wrong length")                                                        \
    X(MOTA_ERR_MANIFEST_DIGEST, -209, "manifest does not match its signed digest")                                     \
    X(MOTA_ERR_COSE_TAG, -210, "authentication block is not a COSE_Sign1")                                             \
    X(MOTA_ERR_COSE_ALG, -211, "unsupported or missing signature algorithm")                                           \
    X(MOTA_ERR_COSE_PAYLOAD, -212, "COSE_Sign1 payload must be detached (nil)")                                        \
    X(MOTA_ERR_COSE_CRIT, -213, "COSE header marks an unknown parameter critical")                                     \
    X(MOTA_ERR_COSE_SIG_LEN, -214, "ES256 signature is not 64 bytes")                                                  \
    X(MOTA_ERR_COSE_KID, -215, "COSE key id is malformed")                                                             \
    X(MOTA_ERR_SIGNATURE, -216, "signature verification failed")                                                       \
    X(MOTA_ERR_KEY_UNKNOWN, -217, "signed by a key that is not trusted here")                                          \
    X(MOTA_ERR_KEY_REVOKED, -218, "signing key has been revoked")                                                      \
    X(MOTA_ERR_COSE_DUP_LABEL, -219, "COSE label in protected and unprotected headers")                                \
    X(MOTA_ERR_UNSIGNED, -220, "container is not signed yet (pack --unsigned): never executable")                      \
    X(MOTA_ERR_ALREADY_SIGNED, -221, "container is already signed")                                                    \
    X(MOTA_ERR_ENC_INFO, -222, "encryption info (COSE_Encrypt) malformed or outside the profile")                      \
    X(MOTA_ERR_ENC_ALG, -223, "encrypted payload: unsupported content or key-distribution algorithm")                  \
    X(MOTA_ERR_ENC_NO_KEY, -224, "encrypted payload: no key here for any of its recipients")                           \
    X(MOTA_ERR_ENC_UNWRAP, -225, "the payload's content key does not unwrap: the wrong key-encryption key")            \
    X(MOTA_ERR_ENC_EPK, -226, "encrypted payload: the sender's ephemeral key is not a P-256 point")                    \
    /* SUIT manifest: -300 .. -399 */                                                                                  \
    X(MOTA_ERR_MANIFEST_VERSION, -300, "unsupported manifest version")                                                 \
    X(MOTA_ERR_MANIFEST_SEQ, -301, "manifest sequence number missing or invalid")                                      \
    X(MOTA_ERR_MANIFEST_NO_COMMON, -302, "manifest has no common section")                                             \
    X(MOTA_ERR_MANIFEST_UNKNOWN_KEY, -303, "manifest has an unknown critical member")                                  \
    X(MOTA_ERR_COMPONENTS, -304, "component list missing, empty or too long")                                          \
    X(MOTA_ERR_COMPONENT_ID, -305, "component identifier malformed or unknown")                                        \
    X(MOTA_ERR_COMMAND_UNSUPPORTED, -306, "unsupported SUIT command")                                                  \
    X(MOTA_ERR_PARAM_UNSUPPORTED, -307, "unsupported SUIT parameter")                                                  \
    X(MOTA_ERR_COMPONENT_INDEX, -308, "component index out of range")                                                  \
    X(MOTA_ERR_NO_VENDOR_CHECK, -309, "manifest does not check the vendor id")                                         \
    X(MOTA_ERR_NO_CLASS_CHECK, -310, "manifest does not check the class id")                                           \
    X(MOTA_ERR_VENDOR_MISMATCH, -311, "vendor id does not match this device")                                          \
    X(MOTA_ERR_CLASS_MISMATCH, -312, "class id does not match this device")                                            \
    X(MOTA_ERR_IMAGE_PARAMS, -313, "image digest or size missing for a component")                                     \
    X(MOTA_ERR_PAYLOAD_MISSING, -314, "a referenced integrated payload is missing")                                    \
    X(MOTA_ERR_PAYLOAD_UNKNOWN, -315, "integrated payload not referenced by the manifest")                             \
    X(MOTA_ERR_PAYLOAD_SIZE, -316, "payload size differs from the manifest")                                           \
    X(MOTA_ERR_PAYLOAD_DIGEST, -317, "payload digest differs from the manifest")                                       \
    X(MOTA_ERR_PAYLOAD_ORDER, -318, "integrated payloads out of order or duplicated")                                  \
    X(MOTA_ERR_TEXT, -319, "manifest text section is malformed")                                                       \
    X(MOTA_ERR_COMPAT_MISSING, -320, "model compatibility data missing")                                               \
    X(MOTA_ERR_COMPAT_FIELD, -321, "model compatibility field missing or out of range")                                \
    X(MOTA_ERR_COMPAT_CRITICAL, -322, "unknown critical field in compatibility data")                                  \
    X(MOTA_ERR_SELFTEST_FIELD, -323, "self-test description malformed")                                                \
    X(MOTA_ERR_SEQUENCE_MALFORMED, -324, "SUIT command sequence is malformed")                                         \
    X(MOTA_ERR_URI, -325, "payload URI is not an integrated payload reference")                                        \
    X(MOTA_ERR_COMPRESSION_INFO, -326, "compression parameters malformed or unsupported (algorithm, block, sizes)")    \
    X(MOTA_ERR_DECOMP_FRAME, -327, "compressed payload: not an LZ4 frame with mota's header (linked, no checksums)")   \
    X(MOTA_ERR_DECOMP_BLOCK, -328, "compressed payload: a block's size is out of range or its data does not fill it")  \
    X(MOTA_ERR_DECOMP_OFFSET, -329, "compressed payload: a back-reference points before the start of the image")       \
    X(MOTA_ERR_DECOMP_OVERRUN, -330, "compressed payload decodes past its block or its declared image size")           \
    X(MOTA_ERR_DECOMP_SHORT, -331, "compressed payload ends (end mark) before its declared image size")                \
    X(MOTA_ERR_DECOMP_TRUNCATED, -332, "compressed payload stops inside a block or before its end mark")               \
    X(MOTA_ERR_DECOMP_TRAILING, -333, "bytes after the compressed payload's end mark")                                 \
    /* -334 is retired (was DECOMP_DIGEST): a transformed payload's transport digest is PAYLOAD_DIGEST's */            \
    X(MOTA_ERR_DECOMP_IMAGE_DIGEST, -335, "decompressed image differs from its signed digest")                         \
    X(MOTA_ERR_DECOMP_OFF, -336, "compressed payload: this device's build has no decoder for its algorithm")           \
    X(MOTA_ERR_DECRYPT_TAG, -337, "encrypted payload: its AES-GCM tag does not match (altered, or the wrong key)")     \
    X(MOTA_ERR_DECRYPT_OFF, -338, "encrypted payload: this device's build has no decryption")                          \
    X(MOTA_ERR_DECRYPT_IMAGE_DIGEST, -339, "decrypted image differs from its signed digest")                           \
    X(MOTA_ERR_SOURCE_COMPONENT, -340, "copy or decompress names no fetched transport component of its own role")      \
    X(MOTA_ERR_DELTA_SOURCE, -341, "delta container: the device does not run its source model (push the full one)")    \
    X(MOTA_ERR_DELTA_REGIONS, -342, "delta container: its regions are malformed (order, overlap, outside the images)") \
    X(MOTA_ERR_DELTA_OFF, -343, "delta container: this device's build has no patcher")                                 \
    /* NBIN model files: -400 .. -499 */                                                                               \
    X(MOTA_ERR_NBIN_MAGIC, -400, "not an ST relocatable model (NBIN magic missing)")                                   \
    X(MOTA_ERR_NBIN_TRUNCATED, -401, "NBIN file shorter than its header requires")                                     \
    X(MOTA_ERR_NBIN_VERSION, -402, "unsupported NBIN reloc format version")                                            \
    X(MOTA_ERR_NBIN_HEADER, -403, "NBIN header field out of range")                                                    \
    X(MOTA_ERR_NBIN_ALIGN, -404, "NBIN offset or address misaligned")                                                  \
    X(MOTA_ERR_NBIN_TAG, -405, "NBIN address carries a forbidden segment tag")                                         \
    X(MOTA_ERR_NBIN_OVERLAP, -406, "NBIN sections overlap or are out of order")                                        \
    X(MOTA_ERR_NBIN_RTCTX, -407, "NBIN runtime context out of bounds or invalid")                                      \
    X(MOTA_ERR_NBIN_STRING, -408, "NBIN string pointer outside the file or unterminated")                              \
    X(MOTA_ERR_NBIN_DESC, -409, "NBIN memory-pool descriptor table invalid")                                           \
    X(MOTA_ERR_NBIN_PARAMS_SIZE, -410, "params blob size differs from the header")                                     \
    X(MOTA_ERR_NBIN_PARAMS_CRC, -411, "params blob CRC-32 differs from the header")                                    \
    X(MOTA_ERR_NBIN_SPLIT, -412, "params file given for a non-split model, or missing")                                \
    X(MOTA_ERR_NBIN_VARIANT, -413, "NBIN header variant cannot be determined")                                         \
    X(MOTA_ERR_NBIN_ENTRY, -414, "NBIN entry point outside the code or not Thumb")                                     \
    X(MOTA_ERR_NBIN_GOT, -415, "NBIN GOT word carries a forbidden segment tag")                                        \
    X(MOTA_ERR_NBIN_GOT_RANGE, -416, "NBIN GOT word points outside its segment")                                       \
    X(MOTA_ERR_NBIN_REL_ENTRY, -417, "NBIN REL entry outside the RW data or misaligned")                               \
    X(MOTA_ERR_NBIN_REL_TARGET, -418, "NBIN REL target word has a forbidden tag or range")                             \
    X(MOTA_ERR_NBIN_REL_XIP, -419, "NBIN REL entry patches code: COPY mode only")                                      \
    X(MOTA_ERR_NBIN_DESC_UNTERMINATED, -420, "NBIN descriptor table runs out of the data")                             \
    X(MOTA_ERR_NBIN_DESC_TOO_MANY, -421, "NBIN descriptor table has more than 9 entries")                              \
    X(MOTA_ERR_NBIN_DESC_RANGE, -422, "NBIN pool initializer outside the params blob")                                 \
    X(MOTA_ERR_NBIN_DATA_START, -423, "NBIN data_start is not the RAM segment base")                                   \
    X(MOTA_ERR_NBIN_GOT_PLT, -424, "NBIN reserved GOT words are not zero")                                             \
    X(MOTA_ERR_NBIN_FLAGS, -425, "NBIN flags word has reserved bits or an invalid ABI")                                \
    X(MOTA_ERR_NBIN_TRAILING, -426, "bytes after the end of the NBIN image")                                           \
    X(MOTA_ERR_NBIN_REL_POSITION, -427, "NBIN REL table is not where the other sections put it")                       \
    X(MOTA_ERR_NBIN_DESC_POSITION, -428, "NBIN descriptor table is not right after the runtime context")               \
    X(MOTA_ERR_NBIN_DESC_PARAMS, -429, "NBIN model declares params but no pool carries them")                          \
    X(MOTA_ERR_NBIN_SIZE_LIMIT, -430, "NBIN section or runtime size above its documented limit")                       \
    X(MOTA_ERR_NBIN_WEIGHTS, -431, "NBIN legacy weights_end set without weights_start")                                \
    X(MOTA_ERR_NBIN_CPU, -432, "NBIN CPU part number is not a known Cortex-M core")                                    \
    X(MOTA_ERR_NBIN_TOOLCHAIN, -433, "NBIN toolchain id is not a known toolchain")                                     \
    X(MOTA_ERR_NBIN_EPOCH_FAMILY, -434, "model has no epoch table: not a Neural-ART (NBIN v8) model")                  \
    X(MOTA_ERR_NBIN_EPOCH_GETTER, -435, "NBIN table getter has a shape mota cannot decode statically")                 \
    X(MOTA_ERR_NBIN_EPOCH_POINTER, -436, "NBIN epoch or buffer table pointer outside its segment or not relocated")    \
    X(MOTA_ERR_NBIN_EPOCH_UNTERMINATED, -437, "NBIN epoch or buffer table has no terminator inside the data")          \
    X(MOTA_ERR_NBIN_EPOCH_RECORD_SIZE, -438, "NBIN epoch record size differs from the debug-info flag")                \
    X(MOTA_ERR_NBIN_EPOCH_FLAGS, -439, "NBIN epoch block flags unknown, contradictory or out of order")                \
    X(MOTA_ERR_NBIN_EPOCH_NUMBERS, -440, "NBIN epoch numbers out of range or order")                                   \
    X(MOTA_ERR_NBIN_EPOCH_TOO_MANY, -441, "NBIN epoch or buffer table longer than mota's limit")                       \
    X(MOTA_ERR_NBIN_EPOCH_BUFFER, -442, "NBIN buffer-info record invalid")                                             \
    X(MOTA_ERR_NBIN_EPOCH_NONE, -443, "model has no epoch table: it runs entirely on the CPU")                         \
    X(MOTA_ERR_NBIN_EPOCH_POLICY, -444, "model runs more epochs on the CPU than the policy allows")                    \
    /* compatibility with the device: -500 .. -599 */                                                                  \
    X(MOTA_ERR_COMPAT_FAMILY, -500, "model needs another runtime family")                                              \
    X(MOTA_ERR_COMPAT_RELOC_VERSION, -501, "model needs a newer reloc runtime")                                        \
    X(MOTA_ERR_COMPAT_CPU, -502, "model built for another CPU")                                                        \
    X(MOTA_ERR_COMPAT_FPU, -503, "model needs an FPU the device has not enabled")                                      \
    X(MOTA_ERR_COMPAT_FLOAT_ABI, -504, "model built for another float ABI")                                            \
    X(MOTA_ERR_COMPAT_SECURE, -505, "secure model cannot run in a non-secure context")                                 \
    X(MOTA_ERR_COMPAT_DBG_INFO, -506, "model debug-info setting differs from the runtime")                             \
    X(MOTA_ERR_COMPAT_ASYNC, -507, "model async mode differs from the runtime")                                        \
    X(MOTA_ERR_COMPAT_LL_ATON, -508, "model built for another LL_ATON version")                                        \
    X(MOTA_ERR_COMPAT_STRUCT_SIZES, -509, "model runtime structures differ in size")                                   \
    X(MOTA_ERR_COMPAT_SPLIT, -510, "params placement not allowed on this device")                                      \
    X(MOTA_ERR_COMPAT_INSTALL_MODE, -511, "no install mode the device supports")                                       \
    X(MOTA_ERR_COMPAT_EXEC_RAM, -512, "model needs more exec RAM than the device has")                                 \
    X(MOTA_ERR_COMPAT_EXT_RAM, -513, "model needs more external RAM than the device has")                              \
    X(MOTA_ERR_COMPAT_NPU, -514, "model needs a Neural-ART NPU this device does not have")                             \
    /* installer: -600 .. -699 */                                                                                      \
    X(MOTA_ERR_INSTALL_ARG, -600, "install configuration invalid")                                                     \
    X(MOTA_ERR_INSTALL_ALIGN, -601, "install address not aligned")                                                     \
    X(MOTA_ERR_INSTALL_EXEC_RAM, -602, "exec RAM too small for this install mode")                                     \
    X(MOTA_ERR_INSTALL_EXT_RAM, -603, "external RAM region missing or too small")                                      \
    X(MOTA_ERR_INSTALL_PARAMS, -604, "params address missing or params too short")                                     \
    X(MOTA_ERR_INSTALL_REGION, -605, "pool destination outside the allowed memory")                                    \
    X(MOTA_ERR_INSTALL_POOL, -606, "pool descriptor not supported by the installer")                                   \
    X(MOTA_ERR_INSTALL_CACHEABLE, -607, "cacheable pool below the external address space")                             \
    /* flash and platform: -700 .. -799 */                                                                             \
    X(MOTA_ERR_FLASH_BOUNDS, -700, "flash access outside the device")                                                  \
    X(MOTA_ERR_FLASH_ALIGN, -701, "flash program or erase not aligned")                                                \
    X(MOTA_ERR_FLASH_NOT_ERASED, -702, "flash program over bytes that are not erased")                                 \
    X(MOTA_ERR_FLASH_IO, -703, "flash device error")                                                                   \
    /* -704 is retired (was a simulator-only "power lost"): a simulated power cut unwinds, it is no reason */          \
    X(MOTA_ERR_TRANSPORT, -705, "transport error")                                                                     \
    X(MOTA_ERR_TIMEOUT, -706, "timed out")                                                                             \
    X(MOTA_ERR_DEVICE_FAULT, -707, "CPU fault: the device reset")                                                      \
    X(MOTA_ERR_PORT, -708, "platform port incomplete: a required callback is missing")                                 \
    X(MOTA_ERR_FLASH_ECC, -709, "flash unit unreadable (ECC error: a program or erase torn by a power cut)")           \
    X(MOTA_ERR_FLASH_PROGRAMMED, -710, "flash unit already programmed since its erase (program-once ECC flash)")       \
    /* agent: -800 .. -899 */                                                                                          \
    X(MOTA_ERR_ROLLBACK, -800, "sequence number lower than the committed one")                                         \
    X(MOTA_ERR_ROLLBACK_SAME_SEQ, -801, "same sequence number as committed, other content")                            \
    X(MOTA_ERR_NO_SLOT, -802, "no model slot for this model name on the device")                                       \
    X(MOTA_ERR_SLOT_TOO_SMALL, -803, "container does not fit the model slot")                                          \
    X(MOTA_ERR_UPLOAD_STATE, -804, "no upload in progress, or another one is")                                         \
    X(MOTA_ERR_UPLOAD_OFFSET, -805, "upload data at an unexpected offset")                                             \
    X(MOTA_ERR_UPLOAD_TOO_LONG, -806, "more data than the container declares")                                         \
    X(MOTA_ERR_SELFTEST_OUTPUT, -807, "self-test output differs from the expected one")                                \
    X(MOTA_ERR_SELFTEST_SLOW, -808, "self-test inference slower than its limit")                                       \
    X(MOTA_ERR_SELFTEST_RUN, -809, "self-test inference failed to run")                                                \
    X(MOTA_ERR_NO_MODEL, -810, "no valid model installed")                                                             \
    X(MOTA_ERR_NOT_TESTING, -811, "no model on trial: nothing to confirm or roll back")                                \
    X(MOTA_ERR_NO_PREVIOUS, -812, "no previous model to roll back to")                                                 \
    X(MOTA_ERR_SLOT_INVALID, -813, "stored model failed re-validation")                                                \
    X(MOTA_ERR_JOURNAL, -814, "state journal unreadable")                                                              \
    X(MOTA_ERR_TRIAL_EXPIRED, -815, "model not confirmed in time: rolled back")                                        \
    X(MOTA_ERR_WATCHDOG, -816, "watchdog reset during trial: rolled back")                                             \
    X(MOTA_ERR_CONFIG, -817, "agent configuration invalid")                                                            \
    X(MOTA_ERR_NOT_PROVISIONED, -818, "device not provisioned: no identity or trusted key")                            \
    X(MOTA_ERR_PROVISION, -819, "provisioning record malformed or unreadable")                                         \
    X(MOTA_ERR_UPLOAD_TRUNCATED, -820, "the container ended before its declared length")                               \
    X(MOTA_ERR_SELFTEST_FAULT, -821,                                                                                   \
      "the model faulted (access outside its memory, bad instruction, division by zero): stopped")                     \
    X(MOTA_ERR_SELFTEST_TIMEOUT, -822, "the model did not return within its time budget: stopped")                     \
    X(MOTA_ERR_SELFTEST_API, -823, "the model's own runtime refused (create, init, report or run failed)")             \
    X(MOTA_ERR_SELFTEST_REPORT, -824,                                                                                  \
      "the model's report is malformed (a pointer outside its memory, an unknown size)")                               \
    X(MOTA_ERR_TRIAL_PENDING, -825, "a model is on trial: confirm or roll it back before the next update")             \
    X(MOTA_ERR_ALREADY_ACTIVE, -826, "this container is the model the device runs already: nothing installed")         \
    X(MOTA_ERR_NOT_ACTIVE, -827, "the container named is not the model the device runs (rolled back or replaced)")     \
    X(MOTA_ERR_SELFTEST_NO_NPU, -828,                                                                                  \
      "an NPU model's inference needs ST's Neural-ART runtime, which this firmware does not link")                     \
    /* update link protocol: -900 .. -999 */                                                                           \
    X(MOTA_ERR_PROTO_FRAME, -900, "malformed protocol frame")                                                          \
    X(MOTA_ERR_PROTO_VERSION, -901, "unsupported protocol version")                                                    \
    X(MOTA_ERR_PROTO_COMMAND, -902, "unknown protocol command")                                                        \
    X(MOTA_ERR_PROTO_TOO_LARGE, -903, "protocol frame larger than negotiated")                                         \
    X(MOTA_ERR_PROTO_NO_SESSION, -904, "no upload session: send BEGIN first")                                          \
    X(MOTA_ERR_DEVICE_LOST, -905, "device did not answer (link down or device reset)")                                 \
    X(MOTA_ERR_BUSY, -906, "device busy: another client holds it")                                                     \
    X(MOTA_ERR_PROTO_IO_SIZE, -907, "invoke input or output larger than the device's I/O buffer")                      \
    X(MOTA_ERR_PROTO_NO_OUTPUT, -908, "no inference output held: send the input and run the model first")              \
    X(MOTA_ERR_PROTO_FLAGS, -909, "the request asks for something this device does not do (an unknown flag)")

enum mota_err {
    MOTA_OK = 0,
#define MOTA_ERR_ENUM_(name, value, msg) name = (value),
    MOTA_ERR_TABLE(MOTA_ERR_ENUM_)
#undef MOTA_ERR_ENUM_
};

/*
 * Names and messages are about 11 KiB of text. A device build may leave them
 * out (MOTA_ERR_STRINGS=0, as the MPS boards' sizes.cmake does): the device then
 * reports bare codes, and the host, which has the table, names them.
 */
#ifndef MOTA_ERR_STRINGS
#define MOTA_ERR_STRINGS 1
#endif

/* Stable name of a code ("MOTA_ERR_SIGNATURE"), "MOTA_OK" for 0, NULL if
 * unknown (or, without MOTA_ERR_STRINGS, for every code but 0). */
const char *mota_err_name(int err);

/* One-line message for a code; a fixed text for unknown codes. Never NULL;
 * "" for every code without MOTA_ERR_STRINGS. */
const char *mota_err_str(int err);

/* Iteration over the table (for docs and tests): index 0..count-1. */
int mota_err_count(void);
int mota_err_at(int index);

#endif /* MOTA_ERR_H */
