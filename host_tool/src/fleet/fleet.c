/* SPDX-License-Identifier: Apache-2.0 */
/* The gateway's side of each MCU: the deployment's containers, HELLO with retries, link commands run in
 * this process, and one process per MCU. */
#include "fleet.h"

#include "cmds.h"
#include "common/files.h"
#include "common/util.h"

#include "mota/err.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void fleet_log(const struct gw_mcu *m, const char *fmt, ...)
{
    char line[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    fprintf(stderr, "mota: %s (%s): %s\n", m->name, m->port, line); /* one write: lines of MCUs do not mix */
    fflush(stderr);
}

static void container_facts(struct fleet_container *c)
{
    const struct mota_manifest *man = &c->vr.manifest;
    for (size_t i = 0; i < man->n_components; i++) {
        const struct mota_component *k = &man->comp[i];
        if (k->has_vendor && !c->has_vendor) {
            memcpy(c->vendor, k->vendor_id, 16);
            c->has_vendor = true;
        }
        if (k->has_class && !c->has_class) {
            memcpy(c->klass, k->class_id, 16);
            c->has_class = true;
        }
    }
    devinfo_copy_str(c->model, sizeof(c->model), man->compat.c_name, man->has_compat ? man->compat.c_name_len : 0);
    devinfo_copy_str(c->version, sizeof(c->version), man->text.version, man->text.version ? man->text.version_len : 0);
    c->seq = man->seq;
    tool_hex_str(c->vr.env.digest, MOTA_SHA256_LEN, c->digest, sizeof(c->digest));
}

int fleet_load_container(struct fleet_container *c, const char *path, char *why, size_t cap)
{
    /* mapped for the process's life: the result points into it */
    static struct mapped maps[FLEET_MAX_CONTAINERS];
    static unsigned n_maps;
    const char *slash = strrchr(path, '/');
    snprintf(c->path, sizeof(c->path), "%s", path);
    c->file = c->path + (slash ? slash + 1 - path : 0);
    if (n_maps == FLEET_MAX_CONTAINERS || tool_map(c->path, &maps[n_maps]) != MOTA_OK) {
        snprintf(why, cap, "%s: unreadable", c->path);
        return MOTA_ERR_IO;
    }
    const struct mapped *m = &maps[n_maps++];
    int ret = mota_container_check_digests(m->data, m->len, &c->vr);
    if (ret == MOTA_OK && !c->vr.manifest.has_compat)
        ret = MOTA_ERR_COMPAT_MISSING; /* a SUIT envelope, but not a model container */
    if (ret != MOTA_OK) {
        snprintf(why, cap, "%s: not a sound mota container (%s)", c->file, mota_err_name(ret));
        return ret;
    }
    container_facts(c);
    return MOTA_OK;
}

bool fleet_is_delta(const struct fleet_container *c)
{
    for (size_t i = 0; i < c->vr.manifest.n_components; i++)
        if (c->vr.manifest.comp[i].delta)
            return true;
    return false;
}

/* d and f make the same model: the same model pair and identity, sequence number and images. */
static bool same_result(const struct fleet_container *d, const struct fleet_container *f)
{
    const struct mota_manifest *x = &d->vr.manifest, *y = &f->vr.manifest;
    if (strcmp(d->model, f->model) != 0 || d->seq != f->seq || memcmp(d->vendor, f->vendor, 16) != 0 ||
        memcmp(d->klass, f->klass, 16) != 0 || x->n_components != y->n_components)
        return false;
    for (size_t i = 0; i < x->n_components; i++)
        if (x->comp[i].role != y->comp[i].role || x->comp[i].size != y->comp[i].size ||
            memcmp(x->comp[i].digest, y->comp[i].digest, MOTA_SHA256_LEN) != 0)
            return false;
    return true;
}

int fleet_pair_deltas(const struct fleet_container *c, unsigned n, int *partner, char *why, size_t cap)
{
    for (unsigned j = 0; j < n; j++)
        partner[j] = -1;
    for (unsigned j = 0; j < n; j++) {
        if (!fleet_is_delta(&c[j]))
            continue;
        for (unsigned k = 0; k < n && partner[j] < 0; k++)
            if (!fleet_is_delta(&c[k]) && same_result(&c[j], &c[k]))
                partner[j] = (int)k;
        if (partner[j] < 0) {
            snprintf(why, cap, "%s is a delta, and no full container of the same model and images is with it",
                     c[j].file);
            return MOTA_ERR_ARG;
        }
    }
    return MOTA_OK;
}

int fleet_load_containers(const char *dir, struct fleet_container *c, unsigned *n, char *why, size_t cap)
{
    struct dirent **list;
    int k = scandir(dir, &list, NULL, alphasort), ret = MOTA_OK;
    *n = 0;
    if (k < 0) {
        snprintf(why, cap, "%s: cannot list it", dir);
        return MOTA_ERR_IO;
    }
    for (int i = 0; i < k; i++) {
        char path[1200];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
        if (ret == MOTA_OK && list[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (*n == FLEET_MAX_CONTAINERS) {
                snprintf(why, cap, "%s: more than %d files", dir, FLEET_MAX_CONTAINERS);
                ret = MOTA_ERR_ARG;
            } else if ((ret = fleet_load_container(&c[*n], path, why, cap)) == MOTA_OK) {
                (*n)++;
            }
        }
        free(list[i]);
    }
    free(list);
    if (ret == MOTA_OK && *n == 0) {
        snprintf(why, cap, "%s: no container in the artifact", dir);
        ret = MOTA_ERR_ARG;
    }
    return ret;
}

/* 1, 2, 4, 8, 8 ... seconds */
static void back_off(unsigned attempt)
{
    sleep(attempt < 3 ? 1u << attempt : 8u);
}

static bool transient_link(int ret)
{
    return ret == MOTA_ERR_BUSY || ret == MOTA_ERR_TIMEOUT || ret == MOTA_ERR_TRANSPORT || ret == MOTA_ERR_DEVICE_LOST;
}

static void parse_hello(const uint8_t *info, size_t len, struct fleet_probe *p)
{
    memset(p, 0, sizeof(*p));
    p->has_identity = devinfo_identity(info, len, 0, p->vendor) && devinfo_identity(info, len, 1, p->klass);
    p->has_id = devinfo_device_id(info, len, p->id, &p->id_len);
    devinfo_text(info, len, MOTA_INFO_NAME, p->name, sizeof(p->name));
    p->has_cause = devinfo_uint(info, len, MOTA_INFO_RESET_CAUSE, &p->cause);
    if (devinfo_models(info, len, MOTA_INFO_MODELS, p->models, &p->n_models) != 0)
        p->n_models = 0;
}

int fleet_probe(const struct gw_mcu *m, struct fleet_probe *p, char *why, size_t cap)
{
    static struct client c;
    struct link_opts o = {.port = m->port, .baud = m->baud, .timeout_s = m->timeout_s < 10 ? m->timeout_s : 10};
    int ret = MOTA_ERR_TIMEOUT;
    for (unsigned attempt = 0;; attempt++) {
        const uint8_t *info;
        size_t len;
        memset(&c, 0, sizeof(c));
        c.fd = -1;
        ret = link_connect(&c, &o, tool_now() + o.timeout_s, true, &info, &len);
        if (ret == MOTA_OK) {
            parse_hello(info, len, p);
            client_close(&c);
            return MOTA_OK;
        }
        client_close(&c);
        snprintf(why, cap, "%s%s%s", mota_err_name(ret), c.why[0] ? ": " : "", c.why);
        if (!transient_link(ret) || attempt >= m->retries)
            return ret;
        back_off(attempt);
    }
}

bool fleet_matches(const struct fleet_container *c, const struct fleet_probe *p)
{
    return p->has_identity && c->has_vendor && c->has_class && memcmp(c->vendor, p->vendor, 16) == 0 &&
           memcmp(c->klass, p->klass, 16) == 0 && fleet_model(p, c->model) != NULL;
}

const struct dev_model *fleet_model(const struct fleet_probe *p, const char *name)
{
    int i = devinfo_model_index(p->models, p->n_models, name, strlen(name));
    return i < 0 ? NULL : &p->models[i];
}

static int run_once(const struct gw_mcu *m, const char *cmd, const char *const *extra, const char *container)
{
    char baud[16], timeout[32];
    const char *argv[24];
    int argc = 0;
    snprintf(baud, sizeof(baud), "%u", m->baud);
    snprintf(timeout, sizeof(timeout), "%g", m->timeout_s);
    argv[argc++] = cmd;
    argv[argc++] = "-q";
    argv[argc++] = "--baud";
    argv[argc++] = baud;
    argv[argc++] = "--timeout";
    argv[argc++] = timeout;
    for (size_t i = 0; extra != NULL && extra[i] != NULL && argc < 20; i++)
        argv[argc++] = extra[i];
    argv[argc++] = m->port;
    if (container != NULL)
        argv[argc++] = container;
    argv[argc] = NULL;
    int (*fn)(int, char **) = strcmp(cmd, "push") == 0       ? cmd_push
                              : strcmp(cmd, "confirm") == 0  ? cmd_confirm
                              : strcmp(cmd, "rollback") == 0 ? cmd_rollback
                                                             : cmd_reboot;
    return fn(argc, (char **)argv);
}

int fleet_run(const struct gw_mcu *m, const char *cmd, const char *const *extra, const char *container, int *reason)
{
    for (unsigned attempt = 0;; attempt++) {
        tool_failed_clear();
        int rc = run_once(m, cmd, extra, container);
        *reason = rc == EXIT_OK ? 0 : tool_failed() != 0 ? tool_failed() : MOTA_ERR_INTERNAL;
        /* busy, silent, or the port gone for a moment (a USB device enumerating again): a push resumes */
        bool transient = rc == EXIT_BUSY || rc == EXIT_TIMEOUT || (rc == EXIT_IO && transient_link(*reason));
        if (!transient || attempt >= m->retries)
            return rc;
        fleet_log(m, "%s: %s, trying again", cmd, mota_err_name(*reason));
        back_off(attempt);
    }
}

bool fleet_each(unsigned n, int (*fn)(unsigned i, void *ctx), void *ctx)
{
    pid_t pids[GW_MAX_MCUS];
    bool ok = true;
    fflush(NULL);
    for (unsigned i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] == 0)
            _exit(fn(i, ctx) == 0 ? 0 : 1);
        if (pids[i] < 0) {
            tool_err("cannot start a process per MCU");
            ok = false;
        }
    }
    for (unsigned i = 0; i < n; i++) {
        int st;
        if (pids[i] > 0 && (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) || WEXITSTATUS(st) != 0))
            ok = false;
    }
    return ok;
}
