/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota sign: signs a container `mota pack --unsigned` wrote, with a private
 * key file or through an external signer command (an HSM, a cloud KMS), so
 * the private key never has to be where the model is packed.
 * The container's signed bytes (the COSE Sig_structure) are fixed by pack:
 * signing only fills in the empty signature. docs/host-tool.md#sign.
 */
#include "cmds.h"
#include "payloads.h"

#include "common/files.h"
#include "common/util.h"

#include "mota/container.h"
#include "mota/crypto_sign.h"
#include "mota/err.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a signer may print: a DER ECDSA-Sig-Value is at most 72 bytes; more is not a signature. */
#define SIGNER_OUT_MAX 1024u
/* A signer that writes this much is stopped: it would never end on its own (`yes`), or not soon. */
#define SIGNER_FLOOD (64u * 1024u)
#define SIGNER_TIMEOUT_S 60u /* --signer-timeout's default: an HSM or a KMS answers in seconds */

static void help(FILE *f)
{
    fprintf(f,
            "usage: mota sign --key PRIVATE.pem -o OUT.mota UNSIGNED.mota\n"
            "       mota sign --signer 'CMD' --pub PUBLIC.pem [--signer-format der|raw] -o OUT.mota UNSIGNED.mota\n\n"
            "Signs a container written by `mota pack --unsigned`: the result is the container\n"
            "`mota pack --key` would have written, byte for byte. The key must be the one the\n"
            "container names (its key id, from pack's --pub or --key-id). The output is\n"
            "verified in full before it is written.\n\n"
            "  -k, --key FILE          the P-256 private key (PEM or DER)\n"
            "  -o, --out FILE          signed container to write (atomically; not the input; a FILE\n"
            "                          that holds a key or a provisioning record only with --force)\n"
            "      --sync              also sync it and its directory to the disk before exiting\n"
            "      --signer CMD        sign through a command, run by /bin/sh -c, instead:\n"
            "                          stdin   the COSE Sig_structure bytes to sign (ES256: SHA-256\n"
            "                                  then ECDSA P-256)\n"
            "                          env     MOTA_SIGN_DIGEST: their SHA-256 in hex, for signers that\n"
            "                                  take a digest (KMS, PKCS#11); MOTA_SIGN_KEY_ID: the key id\n"
            "                          stdout  the signature, binary: DER ECDSA-Sig-Value (as openssl\n"
            "                                  and cloud KMSs return it), or with --signer-format raw\n"
            "                                  64 bytes r||s\n"
            "                          exit    0; anything else is a failure (its stderr is shown)\n"
            "      --pub FILE          the signer's public key: the signature must verify with it\n"
            "      --signer-format F   der (default) or raw\n"
            "      --signer-timeout S  stop the signer (and what it started) after S seconds, 1 to 3600\n"
            "                          (default 60): MOTA_ERR_SIGNER\n\n"
            "Example: --signer 'openssl dgst -sha256 -sign signing.pem' --pub signing.pub.pem\n");
}

struct sign_opts {
    const char *key, *signer, *pub, *out, *in;
    bool raw, sync;
    unsigned timeout_s; /* --signer-timeout */
};

static int parse_args(int argc, char **argv, struct sign_opts *o)
{
    enum { O_SIGNER = 256, O_PUB, O_FORMAT, O_SYNC, O_FORCE, O_TIMEOUT };
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"key", required_argument, 0, 'k'}, {"out", required_argument, 0, 'o'},
        {"output", required_argument, 0, 'o'},
        {"signer", required_argument, 0, O_SIGNER}, {"pub", required_argument, 0, O_PUB},
        {"signer-format", required_argument, 0, O_FORMAT}, {"sync", no_argument, 0, O_SYNC},
        {"force", no_argument, 0, O_FORCE}, {"signer-timeout", required_argument, 0, O_TIMEOUT}, {0, 0, 0, 0}};
    /* clang-format on */
    bool have_format = false;
    int c;
    uint64_t t;
    memset(o, 0, sizeof(*o));
    o->timeout_s = SIGNER_TIMEOUT_S;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "hk:o:", opts, "sign")) != -1) {
        switch (c) {
        case 'h': help(stdout); exit(EXIT_OK);
        case 'k': o->key = optarg; break;
        case 'o': o->out = optarg; break;
        case O_FORCE: tool_out_force = true; break;
        case O_TIMEOUT:
            if (!tool_parse_u64(optarg, &t) || t == 0 || t > 3600)
                return tool_usage_err("sign", "--signer-timeout '%s': 1 to 3600 seconds", optarg);
            o->timeout_s = (unsigned)t;
            break;
        case O_SIGNER: o->signer = optarg; break;
        case O_PUB: o->pub = optarg; break;
        case O_SYNC: o->sync = true; break;
        case O_FORMAT:
            if (strcmp(optarg, "der") != 0 && strcmp(optarg, "raw") != 0)
                return tool_usage_err("sign", "--signer-format '%s' is neither der nor raw", optarg);
            o->raw = strcmp(optarg, "raw") == 0;
            have_format = true;
            break;
        default: return EXIT_USAGE;
        }
    }
    if (argc - optind != 1)
        return tool_usage_err(
            "sign", argc - optind < 1 ? "needs the unsigned container" : "takes exactly one container, not also '%s'",
            argv[argc - 1]);
    o->in = argv[optind];
    if (!o->key == !o->signer)
        return tool_usage_err("sign", "signs with --key or through --signer, one of them");
    if (o->signer && !o->pub)
        return tool_usage_err("sign", "--signer needs --pub, the public key its signature must verify with");
    if (o->key && (o->pub || have_format))
        return tool_usage_err("sign", "--pub and --signer-format go with --signer");
    if (!o->out)
        return tool_usage_err("sign", "--out is required");
    return EXIT_OK;
}

static void hex_str(const uint8_t *p, size_t n, char *out)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[p[i] >> 4];
        out[2 * i + 1] = d[p[i] & 15];
    }
    out[2 * n] = '\0';
}

/* The signer's child side: the pipes on its stdin and stdout, the digest and key id in its environment. */
static _Noreturn void exec_signer(const char *cmd, const char *digest_hex, const char *kid_hex, const int in_pipe[2],
                                  const int out_pipe[2])
{
    setpgid(0, 0); /* its own process group: a time limit stops what the shell started too */
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    close(in_pipe[0]);
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(out_pipe[1]);
    setenv("MOTA_SIGN_DIGEST", digest_hex, 1);
    setenv("MOTA_SIGN_KEY_ID", kid_hex, 1);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
}

/* tbs on the signer's stdin, as much as it takes. */
static void feed_signer(int fd, const uint8_t *tbs, size_t tbs_len)
{
    /* a signer that does not read its input (it signs MOTA_SIGN_DIGEST) may exit first: no SIGPIPE */
    void (*old)(int) = signal(SIGPIPE, SIG_IGN);
    for (size_t off = 0; off < tbs_len;) {
        ssize_t w = write(fd, tbs + off, tbs_len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    signal(SIGPIPE, old);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The signer's stdout, its length: at most SIGNER_OUT_MAX + 1 bytes of it kept in out. A signer (process
 * group pid) still writing or running at the time limit is stopped (*late). */
static size_t read_signer(int fd, pid_t pid, uint8_t *out, bool *flood, unsigned timeout_s, bool *late)
{
    size_t n = 0;
    uint8_t sink[256];
    uint64_t end = now_ms() + (uint64_t)timeout_s * 1000u;
    for (;;) {
        uint64_t t = now_ms();
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int p = t >= end ? 0 : poll(&pfd, 1, (int)(end - t < 1000u ? end - t : 1000u));
        if (p < 0 && errno == EINTR)
            continue;
        if (p == 0 && now_ms() >= end) {
            *late = true;
            kill(-pid, SIGKILL);
            break;
        }
        if (p == 0)
            continue;
        /* read to the end, so a signer that writes a little too much never blocks on a full pipe; keep
         * what fits. One that goes on and on (`yes`) is stopped: no signature is that long */
        uint8_t *dst = n <= SIGNER_OUT_MAX ? out + n : sink;
        size_t room = n <= SIGNER_OUT_MAX ? SIGNER_OUT_MAX + 1 - n : sizeof(sink);
        ssize_t r = read(fd, dst, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
        if (n > SIGNER_FLOOD) {
            *flood = true;
            kill(-pid, SIGKILL);
            break;
        }
    }
    return n;
}

/* How the signer ended: MOTA_OK once it exited 0 (and was not stopped), else why not (reported). */
static int signer_ended(const char *cmd, int status, bool flood, bool late, unsigned timeout_s)
{
    if (late)
        return tool_fail(MOTA_ERR_SIGNER, "'%s' did not finish within %u s and was stopped (--signer-timeout)", cmd,
                         timeout_s);
    if (flood)
        return tool_fail(MOTA_ERR_SIGNER_OUTPUT,
                         "'%s' wrote more than %u bytes on its stdout and was stopped "
                         "(a DER ECDSA signature is at most 72)",
                         cmd, SIGNER_FLOOD);
    if (WIFSIGNALED(status))
        return tool_fail(MOTA_ERR_SIGNER, "'%s' was killed by signal %d", cmd, WTERMSIG(status));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return tool_fail(MOTA_ERR_SIGNER, "'%s' exited with status %d%s", cmd, WEXITSTATUS(status),
                         WEXITSTATUS(status) == 127 ? " (command not found?)" : "");
    return MOTA_OK;
}

/*
 * Run the signer: tbs on its stdin, the digest and key id in its
 * environment, its stdout collected (at most SIGNER_OUT_MAX + 1 bytes are
 * kept: more is refused as not a signature; past SIGNER_FLOOD it is
 * stopped). MOTA_OK once it exited 0.
 */
static int run_signer(const char *cmd, unsigned timeout_s, const uint8_t *tbs, size_t tbs_len,
                      const uint8_t hash[MOTA_SHA256_LEN], const uint8_t kid[MOTA_KEY_ID_LEN], uint8_t *out,
                      size_t *out_len)
{
    int ret = MOTA_ERR_SIGNER;
    int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, status;
    char digest_hex[2 * MOTA_SHA256_LEN + 1], kid_hex[2 * MOTA_KEY_ID_LEN + 1];
    pid_t pid = -1;

    hex_str(hash, MOTA_SHA256_LEN, digest_hex);
    hex_str(kid, MOTA_KEY_ID_LEN, kid_hex);
    if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0) {
        tool_fail(ret, "pipe: %s", strerror(errno));
        goto out;
    }
    fflush(NULL);
    if ((pid = fork()) < 0) {
        tool_fail(ret, "fork: %s", strerror(errno));
        goto out;
    }
    if (pid == 0)
        exec_signer(cmd, digest_hex, kid_hex, in_pipe, out_pipe);
    close(in_pipe[0]);
    close(out_pipe[1]);
    in_pipe[0] = out_pipe[1] = -1;
    feed_signer(in_pipe[1], tbs, tbs_len);
    close(in_pipe[1]);
    in_pipe[1] = -1;
    bool flood = false, late = false;
    size_t n = read_signer(out_pipe[0], pid, out, &flood, timeout_s, &late);
    close(out_pipe[0]);
    out_pipe[0] = -1;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if ((ret = signer_ended(cmd, status, flood, late, timeout_s)) == MOTA_OK)
        *out_len = n;
out:
    for (int i = 0; i < 2; i++) {
        if (in_pipe[i] >= 0)
            close(in_pipe[i]);
        if (out_pipe[i] >= 0)
            close(out_pipe[i]);
    }
    return ret;
}

/* The signer's stdout as r||s; MOTA_ERR_SIGNER_OUTPUT (reported) if it is not one. */
static int signer_signature(const uint8_t *p, size_t n, bool raw, uint8_t sig[MOTA_P256_SIG_LEN])
{
    if (n > SIGNER_OUT_MAX)
        return tool_fail(MOTA_ERR_SIGNER_OUTPUT, "more than %u bytes on its stdout", SIGNER_OUT_MAX);
    if (raw) {
        if (n != MOTA_P256_SIG_LEN)
            return tool_fail(MOTA_ERR_SIGNER_OUTPUT, "%zu bytes on its stdout; --signer-format raw is 64 bytes r||s",
                             n);
        memcpy(sig, p, MOTA_P256_SIG_LEN);
        return MOTA_OK;
    }
    if (mota_ecdsa_sig_from_der(p, n, sig) != MOTA_OK)
        return tool_fail(MOTA_ERR_SIGNER_OUTPUT,
                         "%zu bytes on its stdout are no DER ECDSA-Sig-Value (raw r||s needs --signer-format raw)", n);
    return MOTA_OK;
}

/* The key file: the private key (--key) or the signer's public one (--pub). */
static const char *key_path(const struct sign_opts *o)
{
    return o->key ? o->key : o->pub;
}

/* Neither the input nor the key file is overwritten. */
static int check_output(const struct sign_opts *o)
{
    if (tool_same_file(o->out, o->in) || tool_same_file(o->out, key_path(o))) {
        tool_fail(MOTA_ERR_SAME_FILE, "-o %s is the same file as %s", o->out,
                  tool_same_file(o->out, o->in) ? o->in : key_path(o));
        return EXIT_IO;
    }
    if (tool_out_check(o->out) != MOTA_OK)
        return EXIT_IO;
    return EXIT_OK;
}

static int load_signing_key(const struct sign_opts *o, struct mota_p256_key *key, uint8_t kid[MOTA_KEY_ID_LEN])
{
    if (tool_load_key(key_path(o), key) != MOTA_OK)
        return EXIT_IO;
    if (o->key && !key->has_private) {
        tool_fail(MOTA_ERR_KEY_INVALID, "%s holds no private key", o->key);
        return EXIT_IO;
    }
    mota_key_id(key->pub, kid);
    return EXIT_OK;
}

/* The bytes to sign (the COSE Sig_structure) of a container pack --unsigned wrote for this key. */
static int bytes_to_sign(const struct sign_opts *o, const struct mapped *in, const uint8_t kid[MOTA_KEY_ID_LEN],
                         struct mota_envelope *env, uint8_t *tbs, size_t cap, size_t *tbs_len)
{
    int ret;
    if ((ret = mota_envelope_decode(in->data, in->len, env)) != MOTA_OK) {
        tool_fail(ret, "%s", o->in);
        return EXIT_INVALID;
    }
    if (env->n_blocks != 1 || !env->blocks[0].no_sig) {
        tool_fail(MOTA_ERR_ALREADY_SIGNED, "%s: sign takes what `mota pack --unsigned` writes", o->in);
        return EXIT_INVALID;
    }
    const struct mota_auth_block *blk = &env->blocks[0];
    if (blk->kid != NULL && (blk->kid_len != MOTA_KEY_ID_LEN || memcmp(blk->kid, kid, MOTA_KEY_ID_LEN) != 0)) {
        char want[2 * 32 + 1], have[2 * MOTA_KEY_ID_LEN + 1];
        hex_str(blk->kid, blk->kid_len, want);
        hex_str(kid, MOTA_KEY_ID_LEN, have);
        tool_fail(MOTA_ERR_KEY_MISMATCH, "%s names key id %s, %s is %s", o->in, want, key_path(o), have);
        return EXIT_INVALID;
    }
    if ((ret = mota_sig_structure(env, blk, tbs, cap, tbs_len)) != MOTA_OK) {
        tool_fail(ret, "%s: the bytes to sign", o->in);
        return EXIT_INVALID;
    }
    return EXIT_OK;
}

/* The signature over tbs: by the key file, or by the signer, checked against its --pub. */
static int sign_bytes(const struct sign_opts *o, const struct mota_p256_key *key, const uint8_t *tbs, size_t tbs_len,
                      const uint8_t kid[MOTA_KEY_ID_LEN], uint8_t sig[MOTA_P256_SIG_LEN])
{
    static uint8_t signer_out[SIGNER_OUT_MAX + 1];
    uint8_t hash[MOTA_SHA256_LEN];
    size_t n = 0;
    int ret;
    mota_sha256(tbs, tbs_len, hash);
    if (o->key) {
        if ((ret = mota_ecdsa_p256_sign(key, hash, sig)) != MOTA_OK) {
            tool_fail(ret, "signing with %s", o->key);
            return EXIT_IO;
        }
        return EXIT_OK;
    }
    /* the signer's faults make the key unusable (exit 3), as an unreadable key file does */
    if (run_signer(o->signer, o->timeout_s, tbs, tbs_len, hash, kid, signer_out, &n) != MOTA_OK ||
        signer_signature(signer_out, n, o->raw, sig) != MOTA_OK)
        return EXIT_IO;
    if (mota_ecdsa_p256_verify(key->pub, hash, sig) != MOTA_OK) {
        char have[2 * MOTA_KEY_ID_LEN + 1];
        hex_str(kid, MOTA_KEY_ID_LEN, have);
        tool_fail(MOTA_ERR_SIGNER_KEY, "its signature does not verify with %s (key id %s)", o->pub, have);
        return EXIT_IO;
    }
    return EXIT_OK;
}

/* The signed container: the head with the signature, then the payloads as they were; its sequence
 * number into *seq. */
static int write_signed(const struct sign_opts *o, const struct mapped *in, const struct mota_envelope *env,
                        const uint8_t sig[MOTA_P256_SIG_LEN], const uint8_t pub[MOTA_P256_PUB_LEN], uint64_t *seq)
{
    static uint8_t head[MOTA_CONTAINER_MAX_MANIFEST + 1024];
    struct mota_trusted_key trusted;
    struct mota_verify_result res;
    struct outfile out = {0};
    size_t head_len;
    int ret, rc = EXIT_INVALID;
    if ((ret = mota_container_sign_head(in->data, in->len, sig, head, sizeof(head), &head_len)) != MOTA_OK) {
        tool_fail(ret, "%s", o->in);
        return EXIT_INVALID;
    }
    /* the whole result is verified before it is written: sign never leaves a container verify refuses */
    size_t rest = in->len - env->head_len;
    uint8_t *signed_buf = malloc(head_len + rest);
    if (signed_buf == NULL) {
        tool_fail(MOTA_ERR_IO, "%s: %zu bytes of memory", o->in, head_len + rest);
        return EXIT_IO;
    }
    memcpy(signed_buf, head, head_len);
    memcpy(signed_buf + head_len, in->data + env->head_len, rest);
    mota_trusted_key_set(&trusted, pub);
    const struct mota_component *bad = NULL;
    size_t sealed = 0; /* encrypted images: sign holds no key (pack rebuilt them; verify --kek checks them) */
    if ((ret = mota_container_verify(signed_buf, head_len + rest, &trusted, 1, &res)) != MOTA_OK ||
        (ret = tool_verify_images(signed_buf, head_len + rest, &res, NULL, &bad, &sealed)) != MOTA_OK) {
        tool_fail(ret, "%s, once signed", o->in);
        goto out;
    }
    rc = EXIT_IO;
    if (tool_out_open(&out, o->out, 0644) != MOTA_OK)
        goto out;
    out.no_sync = !o->sync;
    if (tool_out_write(&out, signed_buf, head_len + rest) != MOTA_OK || tool_out_commit(&out) != MOTA_OK) {
        tool_out_abort(&out);
        goto out;
    }
    *seq = res.manifest.seq;
    rc = EXIT_OK;
out:
    free(signed_buf);
    return rc;
}

int cmd_sign(int argc, char **argv)
{
    struct sign_opts o;
    struct mapped in = {0};
    struct mota_p256_key key;
    struct mota_envelope env;
    uint8_t tbs[MOTA_SIG_STRUCTURE_MAX], sig[MOTA_P256_SIG_LEN], kid[MOTA_KEY_ID_LEN];
    size_t tbs_len;
    uint64_t seq = 0;
    int rc = parse_args(argc, argv, &o);
    if (rc != EXIT_OK || (rc = check_output(&o)) != EXIT_OK)
        return rc;
    memset(&key, 0, sizeof(key));
    if ((rc = load_signing_key(&o, &key, kid)) != EXIT_OK)
        goto done;
    rc = EXIT_IO;
    if (tool_map(o.in, &in) != MOTA_OK)
        goto done;
    if ((rc = bytes_to_sign(&o, &in, kid, &env, tbs, sizeof(tbs), &tbs_len)) != EXIT_OK ||
        (rc = sign_bytes(&o, &key, tbs, tbs_len, kid, sig)) != EXIT_OK ||
        (rc = write_signed(&o, &in, &env, sig, key.pub, &seq)) != EXIT_OK)
        goto done;
    printf("wrote %s: signed, seq %llu, key id ", o.out, (unsigned long long)seq);
    tool_hex(stdout, kid, sizeof(kid));
    printf("\n");
done:
    memset(&key, 0, sizeof(key));
    tool_unmap(&in);
    return rc;
}
