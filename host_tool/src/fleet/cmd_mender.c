/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mota mender-module STATE DIR: a Mender Update Module (v3) for artifact type `mota` on a gateway whose
 * MCUs gateway.conf lists. Each state may run again (a gateway reboot, a killed module) and does the
 * right thing from markers in DIR/tmp/, one per MCU, container and step:
 *   .pushing    a push began: the MCU may run the container, so a rollback is about it
 *   .installed  the MCU runs it, on trial (or it did when the install ended)
 *   .had        the MCU ran it confirmed before this deployment: neither committed nor rolled back by it
 *   .skip       not meant for the MCU (vendor, class or model name): never touched
 *   .committed, .rolledback
 * docs/fleet.md maps the states and what Mender shows for each outcome.
 */
#include "cmds.h"
#include "fleet.h"
#include "metadata.h"

#include "common/files.h"
#include "common/util.h"

#include "mota/err.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct deployment {
    const char *dir;
    struct gateway gw;
    struct fleet_container c[FLEET_MAX_CONTAINERS];
    unsigned n;
    struct fleet_targets targets;      /* mota mender-artifact --mcu: only the MCUs named; --delta-from */
    int partner[FLEET_MAX_CONTAINERS]; /* a delta's full container (-1: a full one) */
};

/* The delta that goes with full container k (its index), or -1. */
static int delta_of(const struct deployment *d, unsigned k)
{
    for (unsigned j = 0; j < d->n; j++)
        if (d->partner[j] == (int)k)
            return (int)j;
    return -1;
}

/* The model runs container k, or the delta that makes the same model: which one (NULL: neither). */
static const struct fleet_container *runs_which(const struct deployment *d, unsigned k, const struct dev_model *dm)
{
    int j = delta_of(d, k);
    if (dm == NULL || !dm->has)
        return NULL;
    if (memcmp(dm->digest, d->c[k].vr.env.digest, MOTA_SHA256_LEN) == 0)
        return &d->c[k];
    return j >= 0 && memcmp(dm->digest, d->c[j].vr.env.digest, MOTA_SHA256_LEN) == 0 ? &d->c[j] : NULL;
}

/* What to send for container k: its delta when the model runs the container the delta is from, or another of
 * its sequence number (that model by another container: a delta of it, say; the artifact's meta-data names
 * both), else k itself. A delta the device cannot apply is refused before any erase, and k follows it. */
static const struct fleet_container *to_send(const struct deployment *d, unsigned k, const struct dev_model *dm)
{
    char hex[65];
    int j = delta_of(d, k);
    if (j < 0 || dm == NULL || !dm->has || d->targets.delta_from[0] == '\0')
        return &d->c[k];
    bool from = strcmp(tool_hex_str(dm->digest, MOTA_SHA256_LEN, hex, sizeof(hex)), d->targets.delta_from) == 0;
    return from || (d->targets.has_from_seq && dm->seq == d->targets.from_seq) ? &d->c[j] : &d->c[k];
}

static void marker_path(const struct deployment *d, unsigned mcu, unsigned k, const char *kind, char *out, size_t cap)
{
    /* 16 hex digits of the manifest digest: a container of the deployment, and no other */
    snprintf(out, cap, "%s/tmp/%s.%.16s.%s", d->dir, d->gw.mcu[mcu].name, d->c[k].digest, kind);
}

static bool marked(const struct deployment *d, unsigned mcu, unsigned k, const char *kind)
{
    char p[1400];
    marker_path(d, mcu, k, kind, p, sizeof(p));
    return access(p, F_OK) == 0;
}

/* Durable before the step it records goes on: the file, then the directory entry. */
static int mark(const struct deployment *d, unsigned mcu, unsigned k, const char *kind)
{
    char p[1400], dir[1100];
    marker_path(d, mcu, k, kind, p, sizeof(p));
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || fsync(fd) != 0) {
        fleet_log(&d->gw.mcu[mcu], "cannot write %s: %s", p, strerror(errno));
        if (fd >= 0)
            close(fd);
        return MOTA_ERR_IO;
    }
    close(fd);
    snprintf(dir, sizeof(dir), "%s/tmp", d->dir);
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
        fsync(fd);
        close(fd);
    }
    return MOTA_OK;
}

static const char *seq_text(const struct fleet_container *c, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s seq %llu%s%s", c->model, (unsigned long long)c->seq, c->version[0] ? " v" : "", c->version);
    return buf;
}

/* DIR/header/meta-data: {"mota_mcus": ["a", "b"]} (mota mender-artifact --mcu) names the only MCUs that
 * may receive the containers. No file, or no such member: every MCU may. A document that is not one JSON
 * object, or a list that is not one of names, refuses the deployment: never read as "every MCU". */
static int load_targets(struct deployment *d, char *why, size_t cap)
{
    static char buf[1 << 20];
    char path[1100], what[200];
    snprintf(path, sizeof(path), "%s/header/meta-data", d->dir);
    memset(&d->targets, 0, sizeof(d->targets));
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return MOTA_OK;
    size_t len = fread(buf, 1, sizeof(buf), f);
    bool whole = len < sizeof(buf) && !ferror(f);
    fclose(f);
    int ret = whole ? fleet_meta_targets(buf, len, &d->targets, what, sizeof(what)) : MOTA_ERR_ARG;
    if (ret != MOTA_OK)
        snprintf(why, cap, "%s: %s", path, whole ? what : "unreadable, or larger than 1 MiB");
    return ret;
}

static bool is_target(const struct deployment *d, unsigned i)
{
    for (unsigned t = 0; t < d->targets.n; t++)
        if (strcmp(d->targets.name[t], d->gw.mcu[i].name) == 0)
            return true;
    return !d->targets.present;
}

/* Reach the MCU and check it is the one configured: false when it is not (logged). */
static bool reach(const struct deployment *d, unsigned i, struct fleet_probe *p)
{
    const struct gw_mcu *m = &d->gw.mcu[i];
    char why[400];
    if (fleet_probe(m, p, why, sizeof(why)) != MOTA_OK) {
        fleet_log(m, "unreachable: %s", why);
        return false;
    }
    if (m->id_len > 0 && (!p->has_id || p->id_len != m->id_len || memcmp(p->id, m->id, m->id_len) != 0)) {
        char want[33], got[33];
        fleet_log(m, "another device answers on this port: device id %s, --id %s",
                  p->has_id ? tool_hex_str(p->id, p->id_len, got, sizeof(got)) : "none",
                  tool_hex_str(m->id, m->id_len, want, sizeof(want)));
        return false;
    }
    return true;
}

/* The push has put every byte on the wire: from here on the MCU may run the container, so a rollback that
 * cannot reach it must fail rather than assume it does not. */
struct sent {
    const struct deployment *d;
    unsigned i, k;
};

static void all_sent(void *ctx)
{
    const struct sent *s = ctx;
    mark(s->d, s->i, s->k, "sent");
}

/* ArtifactInstall on one MCU: each container meant for it, pushed unless it runs it already. */
static int install_one(unsigned i, void *ctx)
{
    const struct deployment *d = ctx;
    const struct gw_mcu *m = &d->gw.mcu[i];
    struct fleet_probe p;
    char t[160];
    for (unsigned k = 0; k < d->n; k++) {
        const struct fleet_container *c = &d->c[k];
        if (d->partner[k] >= 0)
            continue; /* a delta: sent in place of its full container, where it applies */
        if (marked(d, i, k, "installed") || marked(d, i, k, "had") || marked(d, i, k, "skip"))
            continue; /* this state ran before */
        if (!is_target(d, i)) {
            fleet_log(m, "not named by the artifact (mota mender-artifact --mcu): untouched");
            if (mark(d, i, k, "skip") != MOTA_OK)
                return 1;
            continue;
        }
        if (!reach(d, i, &p))
            return 1;
        if (!fleet_matches(c, &p)) {
            fleet_log(m, "%s is not meant for it (vendor, class or model): untouched", c->file);
            if (mark(d, i, k, "skip") != MOTA_OK)
                return 1;
            continue;
        }
        const struct dev_model *dm = fleet_model(&p, c->model);
        bool runs = runs_which(d, k, dm) != NULL;
        const struct fleet_container *send = to_send(d, k, dm);
        if (runs && !dm->testing && !marked(d, i, k, "pushing")) {
            fleet_log(m, "runs %s already, confirmed before this deployment", seq_text(c, t, sizeof(t)));
            if (mark(d, i, k, "had") != MOTA_OK)
                return 1;
            continue;
        }
        int reason = 0;
        if (mark(d, i, k, "pushing") != MOTA_OK)
            return 1;
        /* a push the device took already answers "already active": nothing installed twice */
        struct sent sent = {d, i, k};
        push_on_all_sent(all_sent, &sent);
        int rc = runs ? EXIT_OK : fleet_run(m, "push", NULL, send->path, &reason);
        if (rc != EXIT_OK && send != c && (reason == MOTA_ERR_DELTA_SOURCE || reason == MOTA_ERR_DELTA_OFF)) {
            fleet_log(m, "the delta %s does not apply (%s): the full container", send->file, mota_err_name(reason));
            rc = fleet_run(m, "push", NULL, c->path, &reason); /* nothing was erased: the device said before */
            send = c;
        }
        push_on_all_sent(NULL, NULL);
        if (rc != EXIT_OK) {
            fleet_log(m, "%s not installed: %s", seq_text(c, t, sizeof(t)), mota_err_name(reason));
            return 1;
        }
        if (mark(d, i, k, "installed") != MOTA_OK)
            return 1;
        fleet_log(m, "%s installed, on trial%s", seq_text(c, t, sizeof(t)),
                  send != c && !runs ? " (as a delta from the model it ran)" : "");
    }
    return 0;
}

/* 1: the MCU runs container k, or its delta (on trial or confirmed; *which: the one); 0: it does not; -1: it
 * cannot be reached (logged). */
static int running(const struct deployment *d, unsigned i, unsigned k, const struct fleet_container **which)
{
    struct fleet_probe p;
    if (!reach(d, i, &p))
        return -1;
    *which = runs_which(d, k, fleet_model(&p, d->c[k].model));
    return *which != NULL;
}

/* ArtifactCommit, first pass on every MCU before any is confirmed: each still runs what it received (an
 * MCU that reverted itself fails the commit while the others can still be rolled back). */
static int still_runs(unsigned i, void *ctx)
{
    const struct deployment *d = ctx;
    char t[160];
    for (unsigned k = 0; k < d->n; k++) {
        const struct fleet_container *which = NULL;
        if (!marked(d, i, k, "installed") || marked(d, i, k, "committed"))
            continue;
        int runs = running(d, i, k, &which);
        if (runs == 0)
            fleet_log(&d->gw.mcu[i], "does not run %s any more (it reverted itself): not committed",
                      seq_text(&d->c[k], t, sizeof(t)));
        if (runs != 1)
            return 1;
    }
    return 0;
}

/* confirm or rollback --model M --expect-digest D on each container the MCU received (marker `need`),
 * unless done (marker `done`): idempotent on the device as well. */
static int decide(const struct deployment *d, unsigned i, const char *cmd, const char *need, const char *done)
{
    const struct gw_mcu *m = &d->gw.mcu[i];
    bool rollback = strcmp(cmd, "rollback") == 0;
    char t[160];
    for (unsigned k = 0; k < d->n; k++) {
        const struct fleet_container *c = &d->c[k], *which = c;
        if (!marked(d, i, k, need) || marked(d, i, k, done))
            continue;
        /* what it runs: the container or its delta (the same model; each has its own digest) */
        int reason = 0, runs = rollback || delta_of(d, k) >= 0 ? running(d, i, k, &which) : 1;
        const char *extra[] = {"--model", c->model, "--expect-digest", which != NULL ? which->digest : c->digest, NULL};
        if (runs < 0 && (marked(d, i, k, "sent") || marked(d, i, k, "installed")))
            return 1;   /* it may run the container: Mender must not think it rolled back */
        if (runs < 0) { /* the container never reached it whole: it cannot run it */
            if (mark(d, i, k, done) != MOTA_OK)
                return 1;
            fleet_log(m, "never received %s whole: nothing to roll back", seq_text(c, t, sizeof(t)));
            continue;
        }
        if (runs == 0) { /* refused, reverted itself, or a push cut early: the model before runs */
            if (mark(d, i, k, done) != MOTA_OK)
                return 1;
            fleet_log(m, "does not run %s: nothing to roll back", seq_text(c, t, sizeof(t)));
            continue;
        }
        if (fleet_run(m, cmd, extra, NULL, &reason) != EXIT_OK) {
            fleet_log(m, "%s of %s failed: %s", cmd, seq_text(c, t, sizeof(t)), mota_err_name(reason));
            return 1;
        }
        if (mark(d, i, k, done) != MOTA_OK)
            return 1;
        fleet_log(m, "%s: %s", rollback ? "rolled back" : "committed", seq_text(c, t, sizeof(t)));
    }
    return 0;
}

/* Reboot mode (MOTA_MENDER_REBOOT=1, a Mender daemon): ArtifactReboot restarts each MCU that runs a
 * container of the deployment on trial, once (each boot on trial counts towards its revert). */
static int reboot_one(unsigned i, void *ctx)
{
    const struct deployment *d = ctx;
    char t[160];
    for (unsigned k = 0; k < d->n; k++) {
        int reason = 0;
        if (!marked(d, i, k, "installed") || marked(d, i, k, "committed") || marked(d, i, k, "rebooted"))
            continue;
        if (fleet_run(&d->gw.mcu[i], "reboot", NULL, NULL, &reason) != EXIT_OK) {
            fleet_log(&d->gw.mcu[i], "reboot failed: %s", mota_err_name(reason));
            return 1;
        }
        fleet_log(&d->gw.mcu[i], "rebooted to run %s", seq_text(&d->c[k], t, sizeof(t)));
        for (unsigned j = k; j < d->n; j++) /* one reboot runs every container it received */
            if (marked(d, i, j, "installed") && mark(d, i, j, "rebooted") != MOTA_OK)
                return 1;
        return 0;
    }
    return 0;
}

/* ArtifactVerifyReboot: each MCU came back from its reboot by itself (not a watchdog or a fault) and still
 * runs what it received, on trial. */
static int verify_one(unsigned i, void *ctx)
{
    const struct deployment *d = ctx;
    const struct gw_mcu *m = &d->gw.mcu[i];
    struct fleet_probe p;
    char t[160];
    static const char *const causes[] = {"power-on", "software reset", "watchdog reset", "fault reset"};
    for (unsigned k = 0; k < d->n; k++) {
        if (!marked(d, i, k, "installed") || marked(d, i, k, "committed"))
            continue;
        if (!reach(d, i, &p))
            return 1;
        if (runs_which(d, k, fleet_model(&p, d->c[k].model)) == NULL) {
            fleet_log(m, "does not run %s after its reboot: it reverted", seq_text(&d->c[k], t, sizeof(t)));
            return 1;
        }
        if (p.has_cause && p.cause >= 2) {
            fleet_log(m, "booted after a %s with %s on trial", p.cause < 4 ? causes[p.cause] : "reset",
                      seq_text(&d->c[k], t, sizeof(t)));
            return 1;
        }
    }
    return 0;
}

static bool reboot_mode(void)
{
    const char *v = getenv("MOTA_MENDER_REBOOT");
    return v != NULL && strcmp(v, "1") == 0;
}

static int commit_one(unsigned i, void *ctx)
{
    return decide(ctx, i, "confirm", "installed", "committed");
}

static int rollback_one(unsigned i, void *ctx)
{
    return decide(ctx, i, "rollback", "pushing", "rolledback");
}

/* The configuration as the first ArtifactInstall of DIR read it, kept in DIR/tmp: Commit and Rollback act on
 * the MCUs that Install pushed to, whatever gateway.conf says by then. */
static int keep_conf(const struct deployment *d, const char *saved, char *why, size_t cap)
{
    struct mapped m;
    struct outfile o;
    if (tool_map(d->gw.path, &m) != MOTA_OK) {
        snprintf(why, cap, "%s: unreadable", d->gw.path);
        return MOTA_ERR_IO;
    }
    int ret = tool_out_open(&o, saved, 0644);
    if (ret == MOTA_OK && (ret = tool_out_write(&o, m.data, m.len)) == MOTA_OK)
        ret = tool_out_commit(&o);
    else if (ret == MOTA_OK)
        tool_out_abort(&o);
    tool_unmap(&m);
    if (ret != MOTA_OK)
        snprintf(why, cap, "%s: cannot keep a copy", saved);
    return ret;
}

static int load(struct deployment *d, const char *dir)
{
    char why[1400], path[1100];
    d->dir = dir;
    snprintf(path, sizeof(path), "%s/tmp", dir);
    int ret = mkdir(path, 0755) != 0 && errno != EEXIST ? MOTA_ERR_IO : MOTA_OK;
    if (ret != MOTA_OK)
        snprintf(why, sizeof(why), "%s: %s", path, strerror(errno));
    snprintf(path, sizeof(path), "%s/tmp/gateway.conf", dir);
    bool kept = access(path, F_OK) == 0;
    if (ret == MOTA_OK)
        ret = gateway_load(kept ? path : gateway_path(), &d->gw, why, sizeof(why));
    if (ret == MOTA_OK) {
        snprintf(path, sizeof(path), "%s/files", dir);
        ret = fleet_load_containers(path, d->c, &d->n, why, sizeof(why));
    }
    if (ret == MOTA_OK)
        ret = load_targets(d, why, sizeof(why));
    if (ret == MOTA_OK) /* a delta goes where its source runs, its full container everywhere else */
        ret = fleet_pair_deltas(d->c, d->n, d->partner, why, sizeof(why));
    snprintf(path, sizeof(path), "%s/tmp/gateway.conf", dir);
    if (ret == MOTA_OK && !kept)
        ret = keep_conf(d, path, why, sizeof(why));
    if (ret != MOTA_OK)
        tool_fail(ret, "%s", why);
    return ret;
}

static const char mender_usage[] =
    "usage: mota mender-module STATE DIR\n\n"
    "A Mender Update Module (v3) for artifact type `mota`: the wrapper\n"
    "/usr/share/mender/modules/v3/mota execs it. The MCUs are those of $MOTA_GATEWAY_CONF,\n"
    "else " GW_DEFAULT_PATH " (NAME PORT [--baud N] [--timeout S] [--retries N] [--id HEX] per\n"
    "line). ArtifactInstall checks each container of DIR/files and pushes it, one process\n"
    "per MCU, to every MCU whose vendor, class and model name match; ArtifactCommit\n"
    "confirms, ArtifactRollback rolls back each MCU that received it. Every state may run\n"
    "again (markers in DIR/tmp). SupportsRollback: Yes; NeedsArtifactReboot: No, or with\n"
    "MOTA_MENDER_REBOOT=1 (a Mender daemon) Yes: ArtifactReboot restarts each MCU that received\n"
    "a container, ArtifactVerifyReboot checks it booted cleanly and runs it on trial.\n"
    "Exit codes: 0 done (or a state it has nothing to do in); 1 failed (the log names the\n"
    "MCU and the reason); 2 usage. docs/fleet.md.\n";

/* A marker of this kind in DIR/tmp, for any MCU and container. */
static bool any_marker(const char *dir, const char *suffix)
{
    char tmp[1000];
    snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
    DIR *dp = opendir(tmp);
    bool found = false;
    for (struct dirent *e; dp != NULL && !found && (e = readdir(dp)) != NULL;) {
        size_t n = strlen(e->d_name), k = strlen(suffix);
        found = n > k && strcmp(e->d_name + n - k, suffix) == 0;
    }
    if (dp != NULL)
        closedir(dp);
    return found;
}

/* After ArtifactInstall: a container no MCU took (none is meant for it) fails the deployment, rather than
 * Mender recording an artifact that updated nothing. */
static bool each_received(const struct deployment *d)
{
    for (unsigned k = 0; k < d->n; k++) {
        bool any = d->partner[k] >= 0; /* a delta: its full container's markers say */
        for (unsigned i = 0; i < d->gw.n && !any; i++)
            any = marked(d, i, k, "installed") || marked(d, i, k, "had");
        if (!any) {
            tool_fail(MOTA_ERR_CLASS_MISMATCH, "%s: no MCU of %s is meant for it (vendor, class, model %s%s)",
                      d->c[k].file, d->gw.path, d->c[k].model, d->targets.present ? ", --mcu" : "");
            return false;
        }
    }
    return true;
}

static int run_state(const char *state, const char *dir)
{
    static struct deployment d;
    bool install = strcmp(state, "ArtifactInstall") == 0, commit = strcmp(state, "ArtifactCommit") == 0;
    bool rollback = strcmp(state, "ArtifactRollback") == 0;
    bool reboot = reboot_mode() && strcmp(state, "ArtifactReboot") == 0;
    bool verify = reboot_mode() && strcmp(state, "ArtifactVerifyReboot") == 0;
    /* Download stores the files for Install; Failure and Cleanup leave nothing behind; a rollback takes
     * effect on the MCU at once, so ArtifactRollbackReboot has nothing to do */
    if (!install && !commit && !rollback && !reboot && !verify)
        return EXIT_OK;
    if (strlen(dir) > 900 || strchr(dir, '\n') != NULL) {
        tool_fail(MOTA_ERR_ARG, "%.40s...: a DIR path this long or odd is not Mender's", dir);
        return EXIT_INVALID;
    }
    /* a rollback after an install that pushed nothing (a refused configuration or container, a failed
     * Download) has nothing to undo, whatever the files say now */
    if (rollback && !any_marker(dir, ".pushing"))
        return EXIT_OK;
    if (load(&d, dir) != MOTA_OK)
        return EXIT_INVALID;
    bool ok = install    ? fleet_each(d.gw.n, install_one, &d) && each_received(&d)
              : commit   ? fleet_each(d.gw.n, still_runs, &d) && fleet_each(d.gw.n, commit_one, &d)
              : rollback ? fleet_each(d.gw.n, rollback_one, &d)
              : reboot   ? fleet_each(d.gw.n, reboot_one, &d)
                         : fleet_each(d.gw.n, verify_one, &d);
    return ok ? EXIT_OK : EXIT_INVALID;
}

int cmd_mender_module(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(mender_usage, stdout);
        return EXIT_OK;
    }
    if (argc != 3)
        return tool_usage_err("mender-module", "needs STATE DIR");
    if (strcmp(argv[1], "SupportsRollback") == 0) {
        puts("Yes");
        return EXIT_OK;
    }
    if (strcmp(argv[1], "NeedsArtifactReboot") == 0) {
        puts(reboot_mode() ? "Yes" : "No");
        return EXIT_OK;
    }
    return run_state(argv[1], argv[2]);
}
