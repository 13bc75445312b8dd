/* SPDX-License-Identifier: Apache-2.0 */
/* mota mender-artifact: a Mender module-image of type `mota` around checked containers, written by
 * Debian's mender-artifact, with the software name per model (and per MCU with --mcu), so that each
 * model's provides are tracked apart. */
#include "cmds.h"
#include "fleet.h"

#include "common/util.h"

#include "mota/err.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ART_MAX_TYPES 8
#define ART_FIXED 15 /* art_write's fixed arguments */

struct art_opts {
    const char *out, *name, *sw_name, *sw_version;
    const char *key;        /* -k PRIVATE.pem: mender-artifact signs the artifact with it */
    const char *delta_from; /* --delta-from OLD.mota: the container the deltas are from */
    struct fleet_container old;
    int partner[FLEET_MAX_CONTAINERS];
    const char *types[ART_MAX_TYPES];
    unsigned n_types;
    const char *mcus[GW_MAX_MCUS];
    unsigned n_mcus;
    struct fleet_container c[FLEET_MAX_CONTAINERS];
    unsigned n;
    char name_buf[160], sw_buf[160], ver_buf[80], meta[4096];
};

static const char artifact_usage[] =
    "usage: mota mender-artifact -o OUT.mender -t DEVICE_TYPE [-t ...] [-n ARTIFACT_NAME] [-k PRIVATE.pem]\n"
    "                            [--software-name NAME] [--software-version V] [--mcu NAME ...]\n"
    "                            [--delta-from OLD.mota] CONTAINER...\n\n"
    "Checks each container (structure and digests) and writes a Mender module-image of\n"
    "type `mota` with mender-artifact. Its provides are mota.NAME.version = V, with NAME\n"
    "the containers' model (c_name), or MCU.MODEL with one --mcu, and V the container's\n"
    "version text (else its sequence number). --mcu NAME (repeatable): only these MCUs of\n"
    "the gateway receive it, even when others match. Default artifact name: NAME-V.\n"
    "-k, --key PRIVATE.pem: the artifact signed with it, as mender-artifact -k does (an ECDSA P-256\n"
    "or RSA key; the Mender client verifies it with its ArtifactVerifyKey).\n"
    "--delta-from OLD.mota: the containers include a delta from OLD (mota pack --delta-from) and\n"
    "the full container of the same model; the gateway's module pushes the delta to each MCU\n"
    "that runs OLD and the full container to the others.\n"
    "Exit codes: 0 written; 1 a container refused; 2 usage; 3 mender-artifact missing or failed.\n";

static int art_args(int argc, char **argv, struct art_opts *o)
{
    static const struct option longs[] = {{"output-path", required_argument, NULL, 'o'},
                                          {"device-type", required_argument, NULL, 't'},
                                          {"artifact-name", required_argument, NULL, 'n'},
                                          {"software-name", required_argument, NULL, 'S'},
                                          {"software-version", required_argument, NULL, 'V'},
                                          {"mcu", required_argument, NULL, 'M'},
                                          {"key", required_argument, NULL, 'k'},
                                          {"delta-from", required_argument, NULL, 'D'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int ch;
    optind = 1;
    while ((ch = tool_getopt(argc, argv, "o:t:n:k:h", longs, "mender-artifact")) != -1) {
        if (ch == 'h') {
            fputs(artifact_usage, stdout);
            return -1;
        }
        if (ch == '?')
            return EXIT_USAGE;
        if (ch == 't' && o->n_types == ART_MAX_TYPES)
            return tool_usage_err("mender-artifact", "at most %d device types", ART_MAX_TYPES);
        if (ch == 'M' && o->n_mcus == GW_MAX_MCUS)
            return tool_usage_err("mender-artifact", "at most %d MCUs", GW_MAX_MCUS);
        if (ch == 'M' && !gateway_name_ok(optarg))
            return tool_usage_err("mender-artifact",
                                  "--mcu '%s': an MCU name of gateway.conf (1..%d letters, digits, '-', '_')", optarg,
                                  GW_NAME_MAX);
        *(ch == 'k'   ? &o->key
          : ch == 'D' ? &o->delta_from
          : ch == 'o' ? &o->out
          : ch == 'n' ? &o->name
          : ch == 'S' ? &o->sw_name
          : ch == 'V' ? &o->sw_version
          : ch == 't' ? &o->types[o->n_types++]
                      : &o->mcus[o->n_mcus++]) = optarg;
    }
    if (o->out == NULL || o->n_types == 0 || optind == argc)
        return tool_usage_err("mender-artifact", "needs -o OUT, -t DEVICE_TYPE and a container");
    if (o->key != NULL && access(o->key, R_OK) != 0) { /* said here, not as mender-artifact's failure */
        tool_fail(MOTA_ERR_IO, "-k %s: %s", o->key, strerror(errno));
        return EXIT_IO;
    }
    if (argc - optind > FLEET_MAX_CONTAINERS)
        return tool_usage_err("mender-artifact", "at most %d containers", FLEET_MAX_CONTAINERS);
    return EXIT_OK;
}

/* The names the provides carry, from the containers unless given. Two containers for one model pair of one
 * class would meet on the same MCU: the second finds the first on trial and is refused, every time. */
static int art_names(struct art_opts *o)
{
    const struct fleet_container *c = &o->c[0];
    for (unsigned k = 0; k < o->n; k++)
        for (unsigned j = 0; j < k; j++)
            if (o->partner[j] != (int)k && o->partner[k] != (int)j && strcmp(o->c[j].model, o->c[k].model) == 0 &&
                memcmp(o->c[j].klass, o->c[k].klass, 16) == 0 && memcmp(o->c[j].vendor, o->c[k].vendor, 16) == 0) {
                tool_fail(MOTA_ERR_ARG, "%s and %s are both for model %s of one class: one per artifact", o->c[j].file,
                          o->c[k].file, o->c[k].model);
                return EXIT_INVALID;
            }
    for (unsigned k = 1; k < o->n && o->sw_name == NULL; k++)
        if (strcmp(o->c[k].model, c->model) != 0)
            return tool_usage_err("mender-artifact", "containers of models %s and %s: give --software-name", c->model,
                                  o->c[k].model);
    if (o->sw_name == NULL) {
        snprintf(o->sw_buf, sizeof(o->sw_buf), "%s%s%s", o->n_mcus == 1 ? o->mcus[0] : "", o->n_mcus == 1 ? "." : "",
                 c->model);
        o->sw_name = o->sw_buf;
    }
    if (o->sw_version == NULL) {
        if (c->version[0])
            snprintf(o->ver_buf, sizeof(o->ver_buf), "%s", c->version);
        else
            snprintf(o->ver_buf, sizeof(o->ver_buf), "%llu", (unsigned long long)c->seq);
        o->sw_version = o->ver_buf;
    }
    if (o->name == NULL) {
        snprintf(o->name_buf, sizeof(o->name_buf), "%s-%s", o->sw_name, o->sw_version);
        o->name = o->name_buf;
    }
    return EXIT_OK;
}

/* --delta-from: each delta of the containers is from OLD (its sources are OLD's images) and has its full
 * container beside it; a delta without --delta-from is refused (the module must know whom to send it). */
static int art_deltas(struct art_opts *o)
{
    char why[600];
    int ret = fleet_pair_deltas(o->c, o->n, o->partner, why, sizeof(why));
    for (unsigned j = 0; j < o->n && ret == MOTA_OK; j++) {
        const struct mota_manifest *man = &o->c[j].vr.manifest;
        if (fleet_is_delta(&o->c[j]) && o->delta_from == NULL) {
            ret = MOTA_ERR_DELTA_SOURCE;
            snprintf(why, sizeof(why), "%s is a delta: give --delta-from, the container it is from", o->c[j].file);
        }
        for (size_t i = 0; i < man->n_components && ret == MOTA_OK && o->delta_from != NULL; i++) {
            const struct mota_component *d = &man->comp[i], *s = NULL;
            for (size_t k = 0; k < o->old.vr.manifest.n_components; k++)
                s = o->old.vr.manifest.comp[k].role == d->role ? &o->old.vr.manifest.comp[k] : s;
            if (d->delta && (s == NULL || s->size != d->src_size || memcmp(s->digest, d->src_digest, 32) != 0)) {
                ret = MOTA_ERR_DELTA_SOURCE;
                snprintf(why, sizeof(why), "%s is not a delta from %s (its %s image is another)", o->c[j].file,
                         o->old.file, mota_component_name(d->role));
            }
        }
    }
    if (ret != MOTA_OK)
        tool_fail(ret, "%s", why);
    return ret == MOTA_OK ? EXIT_OK : EXIT_INVALID;
}

/* --mcu: {"mota_mcus": ["a", "b"]}, --delta-from: "mota_delta_from": OLD's manifest digest, as the payload's
 * meta-data (DIR/header/meta-data on the gateway). */
static int art_meta(struct art_opts *o)
{
    if (o->n_mcus == 0 && o->delta_from == NULL)
        return EXIT_OK;
    const char *tmp = getenv("TMPDIR") != NULL && getenv("TMPDIR")[0] != '\0' ? getenv("TMPDIR") : "/tmp";
    int fd = strlen(tmp) + 20 < sizeof(o->meta) ? 0 : -1;
    snprintf(o->meta, sizeof(o->meta), "%s/mota-meta-XXXXXX", tmp);
    if (fd == 0)
        fd = mkstemp(o->meta);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        tool_fail(MOTA_ERR_IO, "%s: cannot write the meta-data", o->meta);
        return EXIT_IO;
    }
    fputs("{", f);
    if (o->n_mcus > 0) {
        fputs("\"mota_mcus\": [", f);
        for (unsigned i = 0; i < o->n_mcus; i++)
            fprintf(f, "%s\"%s\"", i ? ", " : "", o->mcus[i]);
        fputs("]", f);
    }
    if (o->delta_from != NULL)
        fprintf(f, "%s\"mota_delta_from\": \"%s\", \"mota_delta_from_seq\": %llu", o->n_mcus > 0 ? ", " : "",
                o->old.digest, (unsigned long long)o->old.seq);
    fputs("}\n", f);
    return fclose(f) == 0 ? EXIT_OK : EXIT_IO;
}

static int art_write(struct art_opts *o)
{
    const char *argv[ART_FIXED + 2 * ART_MAX_TYPES + 2 * FLEET_MAX_CONTAINERS + 2 + 2 + 1]; /* + -m, -k, NULL */
    int n = 0, st = 0;
    char sw_name[200];
    const char *fixed[] = {"mender-artifact",
                           "write",
                           "module-image",
                           "-T",
                           "mota",
                           "-n",
                           o->name,
                           "-o",
                           o->out,
                           "--software-filesystem",
                           "mota",
                           "--software-name",
                           sw_name,
                           "--software-version",
                           o->sw_version};
    snprintf(sw_name, sizeof(sw_name), "%s", o->sw_name);
    _Static_assert(sizeof(fixed) / sizeof(fixed[0]) == ART_FIXED, "ART_FIXED counts them");
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        argv[n++] = fixed[i];
    for (unsigned i = 0; i < o->n_types; i++) {
        argv[n++] = "-t";
        argv[n++] = o->types[i];
    }
    for (unsigned k = 0; k < o->n; k++) {
        argv[n++] = "-f";
        argv[n++] = o->c[k].path;
    }
    if (o->meta[0]) {
        argv[n++] = "-m";
        argv[n++] = o->meta;
    }
    if (o->key != NULL) {
        argv[n++] = "-k";
        argv[n++] = o->key;
    }
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], (char **)argv);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        tool_fail(MOTA_ERR_IO, pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 127
                                   ? "mender-artifact not found (Debian: apt-get install mender-artifact)"
                                   : "mender-artifact failed");
        return EXIT_IO;
    }
    return EXIT_OK;
}

int cmd_mender_artifact(int argc, char **argv)
{
    static struct art_opts o;
    char why[600];
    int rc = art_args(argc, argv, &o);
    if (rc != EXIT_OK)
        return rc < 0 ? EXIT_OK : rc;
    for (int i = optind; i < argc; i++) {
        int ret = fleet_load_container(&o.c[o.n], argv[i], why, sizeof(why));
        if (ret != MOTA_OK) {
            tool_fail(ret, "%s", why);
            return ret == MOTA_ERR_IO ? EXIT_IO : EXIT_INVALID;
        }
        o.n++;
    }
    if (o.delta_from != NULL) {
        int ret = fleet_load_container(&o.old, o.delta_from, why, sizeof(why));
        if (ret != MOTA_OK) {
            tool_fail(ret, "--delta-from %s", why);
            return ret == MOTA_ERR_IO ? EXIT_IO : EXIT_INVALID;
        }
    }
    if ((rc = art_deltas(&o)) != EXIT_OK || (rc = art_names(&o)) != EXIT_OK || (rc = art_meta(&o)) != EXIT_OK)
        return rc;
    rc = art_write(&o);
    if (o.meta[0])
        unlink(o.meta);
    if (rc == EXIT_OK)
        printf("%s: artifact %s, provides mota.%s.version=%s, %u container(s)\n", o.out, o.name, o.sw_name,
               o.sw_version, o.n);
    return rc;
}
