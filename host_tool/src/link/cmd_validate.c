/* SPDX-License-Identifier: Apache-2.0 */
/* validate: run the device's model on many inputs, compare with reference outputs (as stm32ai validate does). */
#include "client.h"
#include "cmds.h"
#include "devlink.h"

#include "common/files.h"
#include "common/json.h"
#include "common/util.h"

#include "mota/err.h"
#include "mota/le.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define VALIDATE_MAX_SAMPLES 4096
#define VALIDATE_MAX_OUTPUT (16u << 20)

static const char validate_usage[] =
    "usage: mota validate --inputs DIR --outputs DIR [--dtype T] [--tolerance X] [--model NAME] [--json]\n"
    "                     [--baud N] [--timeout S] [PORT]\n\n"
    "Runs the device's active model on every file of --inputs (in name order) and compares each\n"
    "output with the file of the same name in --outputs (its size is the output's size), as\n"
    "`stm32ai validate` does on a target. Prints the error metrics over all outputs (max absolute\n"
    "error, mean absolute error, RMSE, relative L2 error, cosine similarity, exact matches, top-1\n"
    "agreement) and the device's latency (min, median, mean, max).\n"
    "  --dtype T       how output bytes are read: int8 (default), uint8, int16, uint16, float32 (little-endian)\n"
    "  --tolerance X   the largest absolute error allowed per element, in those units (default 0: exact)\n"
    "Exit codes: 0 every output within the tolerance; 1 one is not (MOTA_ERR_VALIDATE_MISMATCH) or the device\n"
    "refused a run; 2 usage; 3 a file or the port unusable; 5 device busy; 6 timed out.\n" LINK_PORT_HELP;

enum dtype { DT_INT8, DT_UINT8, DT_INT16, DT_UINT16, DT_FLOAT32 };
static const struct {
    const char *name;
    unsigned size;
} dtypes[] = {{"int8", 1}, {"uint8", 1}, {"int16", 2}, {"uint16", 2}, {"float32", 4}};

static double element(const uint8_t *p, enum dtype t)
{
    switch (t) {
    case DT_INT8: return (double)(int8_t)p[0];
    case DT_UINT8: return (double)p[0];
    case DT_INT16: return (double)(int16_t)mota_get16(p);
    case DT_UINT16: return (double)mota_get16(p);
    default: {
        uint32_t u = mota_get32(p);
        float f;
        memcpy(&f, &u, sizeof(f));
        return (double)f;
    }
    }
}

/* Error sums over outputs: per sample and in total. */
struct errs {
    double max_abs, sum_abs, sum_sq, ref_sq, dot, out_sq;
    size_t n;
};

static void compare(const uint8_t *out, const uint8_t *ref, size_t bytes, enum dtype t, struct errs *e,
                    size_t *argmax_out, size_t *argmax_ref)
{
    unsigned w = dtypes[t].size;
    double best_o = -INFINITY, best_r = -INFINITY;
    for (size_t i = 0; i + w <= bytes; i += w) {
        double o = element(out + i, t), r = element(ref + i, t), d = fabs(o - r);
        if (d > e->max_abs || isnan(d))
            e->max_abs = isnan(d) ? INFINITY : d;
        e->sum_abs += d;
        e->sum_sq += d * d;
        e->ref_sq += r * r;
        e->out_sq += o * o;
        e->dot += o * r;
        e->n++;
        if (o > best_o) {
            best_o = o;
            *argmax_out = i / w;
        }
        if (r > best_r) {
            best_r = r;
            *argmax_ref = i / w;
        }
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of a directory, sorted by name; NULL-terminated, malloc'd. NULL with *err the errno when the
 * directory cannot be read. */
static char **list_dir(const char *dir, size_t *n, int *err)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    *n = 0;
    *err = d == NULL ? errno : 0;
    if (d == NULL)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && *n < VALIDATE_MAX_SAMPLES) {
        if (e->d_name[0] == '.')
            continue;
        char **nv = realloc(v, (*n + 2) * sizeof(*v));
        if (nv == NULL)
            break;
        v = nv;
        v[(*n)++] = strdup(e->d_name);
        v[*n] = NULL;
    }
    closedir(d);
    if (v != NULL)
        qsort(v, *n, sizeof(*v), cmp_str);
    return v;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

struct validate_opts {
    bool answered; /* --help: printed, nothing to run */
    struct link_opts link;
    const char *in_dir, *ref_dir;
    enum dtype dtype;
    double tol;
};

/* --dtype NAME */
static bool dtype_named(const char *name, enum dtype *t)
{
    size_t k = 0;
    while (k < sizeof(dtypes) / sizeof(dtypes[0]) && strcmp(name, dtypes[k].name) != 0)
        k++;
    if (k == sizeof(dtypes) / sizeof(dtypes[0]))
        return false;
    *t = (enum dtype)k;
    return true;
}

static int parse_options(int argc, char **argv, struct validate_opts *o)
{
    enum { O_INPUTS = 256, O_OUTPUTS, O_DTYPE, O_TOL, O_MODEL, O_JSON, O_BAUD, O_TIMEOUT };
    /* clang-format off */ /* a table packed by hand */
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"inputs", required_argument, 0, O_INPUTS},
        {"outputs", required_argument, 0, O_OUTPUTS}, {"dtype", required_argument, 0, O_DTYPE},
        {"tolerance", required_argument, 0, O_TOL}, {"model", required_argument, 0, O_MODEL},
        {"json", no_argument, 0, O_JSON}, {"baud", required_argument, 0, O_BAUD},
        {"timeout", required_argument, 0, O_TIMEOUT}, {0, 0, 0, 0}};
    /* clang-format on */
    *o = (struct validate_opts){.link = {.baud = 115200, .timeout_s = 10}, .dtype = DT_INT8};
    int c;
    uint64_t v;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "h", opts, "validate")) != -1) {
        char *end;
        switch (c) {
        case 'h':
            fputs(validate_usage, stdout);
            o->answered = true;
            return EXIT_OK;
        case O_INPUTS: o->in_dir = optarg; break;
        case O_OUTPUTS: o->ref_dir = optarg; break;
        case O_MODEL: o->link.model = optarg; break;
        case O_JSON: o->link.json = true; break;
        case O_DTYPE:
            if (!dtype_named(optarg, &o->dtype))
                return tool_usage_err("validate", "--dtype %s: int8, uint8, int16, uint16 or float32", optarg);
            break;
        case O_TOL:
            o->tol = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(o->tol >= 0) || isinf(o->tol))
                return tool_usage_err("validate", "--tolerance %s: a number, 0 or more", optarg);
            break;
        case O_BAUD:
        case O_TIMEOUT:
            if (!tool_parse_u64(optarg, &v) || v == 0 || (c == O_TIMEOUT && v > 86400))
                return tool_usage_err("validate", "%s %s: a positive number%s", c == O_BAUD ? "--baud" : "--timeout",
                                      optarg, c == O_TIMEOUT ? " of seconds, at most 86400" : "");
            if (c == O_BAUD)
                o->link.baud = (unsigned)v;
            else
                o->link.timeout_s = (double)v;
            break;
        default: return EXIT_USAGE;
        }
    }
    if (argc - optind > 1)
        return tool_usage_err("validate", "unexpected argument '%s'", argv[argc - 1]);
    if (o->in_dir == NULL || o->ref_dir == NULL)
        return tool_usage_err("validate", "needs --inputs DIR and --outputs DIR");
    if (argc - optind == 0) /* MOTA_PORT, or the one device mota ports finds, as the other device commands */
        return link_default_port("validate", &o->link.port);
    o->link.port = argv[optind];
    return EXIT_OK;
}

/* The device's side of a validation: the model it runs, and how it answered. */
struct device_side {
    struct dev_model models[DEV_MAX_MODELS];
    unsigned n_models;
    int idx;          /* the model run */
    uint64_t io;      /* the device's I/O buffer (HELLO key 12) */
    int ret;          /* the link's result */
    int status;       /* the device's verdict on the last run */
    int local;        /* the host's own refusal: MOTA_ERR_IO (a file), MOTA_ERR_NO_SLOT (--model), or MOTA_OK */
    int local_exit;   /* its exit code */
    char detail[640]; /* its words, or why nothing was run */
};

/* The host refuses before or between runs: why, for the report (said on stderr already when said). */
__attribute__((format(printf, 4, 5))) static void refuse(struct device_side *d, int reason, int exit_code,
                                                         const char *fmt, ...)
{
    va_list ap;
    d->local = reason;
    d->local_exit = exit_code;
    va_start(ap, fmt);
    vsnprintf(d->detail, sizeof(d->detail), fmt, ap);
    va_end(ap);
}

/* What the runs measured: errors over every element of every output, the device's latency per run. */
struct tally {
    struct errs total;
    size_t done, exact, top1, over;
    size_t worst;     /* the sample furthest off */
    double worst_err; /* by this much; -1 before the first */
    uint32_t *lat;    /* us, by sample */
};

/* The numbers reported, from a tally. */
struct summary {
    double mae, rmse, l2r, cos, lmean;
    uint32_t lmin, lmed, lmax;
};

/* Reach the device and name the model to run: --model, or the first. EXIT_OK, also when the device
 * cannot be reached (d->ret) or has no model (d->status). */
static int connect_model(struct client *cl, const struct validate_opts *o, struct device_side *d)
{
    const uint8_t *info;
    size_t info_len;
    d->ret = link_connect(cl, &o->link, tool_now() + o->link.timeout_s, true, &info, &info_len);
    if (d->ret != MOTA_OK)
        return EXIT_OK;
    devinfo_models(info, info_len, MOTA_INFO_MODELS, d->models, &d->n_models);
    devinfo_uint(info, info_len, MOTA_INFO_IO_BUFFER, &d->io);
    if (o->link.model &&
        (d->idx = devinfo_model_index(d->models, d->n_models, o->link.model, strlen(o->link.model))) < 0) {
        char names[4 * 68] = "";
        for (unsigned i = 0; i < d->n_models; i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", d->models[i].name);
        refuse(d, MOTA_ERR_NO_SLOT, EXIT_INVALID, "--model %s: the device has %s", o->link.model,
               d->n_models ? names : "no model");
        d->idx = -1;
        return EXIT_OK;
    }
    if (d->n_models == 0 || !d->models[d->idx].has) {
        d->status = MOTA_ERR_NO_MODEL;
        snprintf(d->detail, sizeof(d->detail), "the device has no active model to run");
    }
    return EXIT_OK;
}

/* One output against its reference (sample i), into the tally. */
static void tally_add(struct tally *t, const uint8_t *out, const uint8_t *ref, size_t len, enum dtype dt, double tol,
                      size_t i)
{
    struct errs e = {0};
    size_t am_o = 0, am_r = 0;
    compare(out, ref, len, dt, &e, &am_o, &am_r);
    t->exact += e.max_abs == 0;
    t->top1 += am_o == am_r;
    t->over += e.max_abs > tol;
    if (e.max_abs > t->worst_err) {
        t->worst_err = e.max_abs;
        t->worst = i;
    }
    t->total.max_abs = e.max_abs > t->total.max_abs ? e.max_abs : t->total.max_abs;
    t->total.sum_abs += e.sum_abs;
    t->total.sum_sq += e.sum_sq;
    t->total.ref_sq += e.ref_sq;
    t->total.out_sq += e.out_sq;
    t->total.dot += e.dot;
    t->total.n += e.n;
    t->done++;
}

/* Sample i run on the device and its output compared. EXIT_OK to go on (a refusal is in d), or the exit
 * code of a file that cannot be used. */
static int run_sample(struct client *cl, const struct validate_opts *o, const char *name, size_t i, uint8_t *out,
                      struct device_side *d, struct tally *t)
{
    char ip[4096], rp[4096];
    struct mapped in, ref;
    snprintf(ip, sizeof(ip), "%s/%s", o->in_dir, name);
    snprintf(rp, sizeof(rp), "%s/%s", o->ref_dir, name);
    char why[560];
    if (tool_map(ip, &in) != MOTA_OK) {
        json_file_why(ip, why, sizeof(why));
        refuse(d, MOTA_ERR_IO, EXIT_IO, "--inputs: %s", why);
        return EXIT_OK;
    }
    if (tool_map(rp, &ref) != MOTA_OK) {
        tool_unmap(&in);
        json_file_why(rp, why, sizeof(why));
        refuse(d, MOTA_ERR_IO, EXIT_IO, "--outputs: %s", why);
        return EXIT_OK;
    }
    if (ref.len == 0 || ref.len > VALIDATE_MAX_OUTPUT || ref.len % dtypes[o->dtype].size != 0) {
        tool_unmap(&in);
        tool_unmap(&ref);
        tool_usage_err("validate", "%s: %zu bytes is no output of %s elements", rp, ref.len, dtypes[o->dtype].name);
        refuse(d, MOTA_ERR_ARG, EXIT_USAGE, "--outputs: %s: no output of %s elements", rp, dtypes[o->dtype].name);
        return EXIT_OK;
    }
    const struct dev_io *io = &d->models[d->idx].io;
    if (io->known && (in.len != io->in_bytes || ref.len != io->out_bytes)) { /* the model's sizes: nothing sent */
        refuse(d, MOTA_ERR_SELFTEST_RUN, EXIT_INVALID,
               "on input %s: model %s takes %llu input bytes and gives %llu output bytes (mota status); the input "
               "has %zu bytes, its reference output %zu",
               name, d->models[d->idx].name, (unsigned long long)io->in_bytes, (unsigned long long)io->out_bytes,
               in.len, ref.len);
        tool_unmap(&in);
        tool_unmap(&ref);
        return EXIT_OK;
    }
    d->ret = dev_invoke(cl, d->io, (unsigned)d->idx, in.data, in.len, out, ref.len, o->link.timeout_s, &t->lat[i],
                        &d->status, d->detail, sizeof(d->detail));
    if (d->ret == MOTA_OK && d->status == MOTA_OK)
        tally_add(t, out, ref.data, ref.len, o->dtype, o->tol, i);
    else if (d->ret == MOTA_OK && d->detail[0] == 0)
        snprintf(d->detail, sizeof(d->detail), "on input %s", name);
    tool_unmap(&in);
    tool_unmap(&ref);
    return EXIT_OK;
}

/* The numbers: errors over every element of every output, the device's latency over the runs. */
static void summarise(struct tally *t, struct summary *s)
{
    const struct errs *e = &t->total;
    memset(s, 0, sizeof(*s));
    s->mae = e->n ? e->sum_abs / (double)e->n : 0;
    s->rmse = e->n ? sqrt(e->sum_sq / (double)e->n) : 0;
    s->l2r = e->ref_sq > 0 ? sqrt(e->sum_sq / e->ref_sq) : (e->sum_sq > 0 ? INFINITY : 0);
    s->cos = e->ref_sq > 0 && e->out_sq > 0 ? e->dot / sqrt(e->ref_sq * e->out_sq) : (e->ref_sq == e->out_sq ? 1 : 0);
    size_t done = t->done;
    if (done > 0) {
        for (size_t i = 0; i < done; i++)
            s->lmean += t->lat[i];
        s->lmean /= (double)done;
        qsort(t->lat, done, sizeof(*t->lat), cmp_u32);
        s->lmin = t->lat[0];
        s->lmax = t->lat[done - 1];
        s->lmed = done % 2 ? t->lat[done / 2] : (uint32_t)(((uint64_t)t->lat[done / 2 - 1] + t->lat[done / 2]) / 2);
    }
}

static const char *model_name(const struct device_side *d, const char *none)
{
    return d->idx >= 0 && d->idx < (int)d->n_models ? d->models[d->idx].name : none;
}

static void report_json(const struct validate_opts *o, const struct device_side *d, const struct tally *t,
                        const struct summary *s, char **names, int verdict)
{
    struct json j;
    json_doc(&j, stdout, "validate", false);
    json_reason(&j, verdict);
    json_str(&j, "detail", d->detail);
    json_str(&j, "model", model_name(d, NULL));
    json_uint(&j, "samples", t->done);
    json_str(&j, "dtype", dtypes[o->dtype].name);
    json_real(&j, "tolerance", o->tol, 6);
    /* nothing measured (the device was not reached, or refused at once): null, never a perfect score */
    double unmeasured = t->done > 0 ? 0 : NAN;
    json_obj(&j, "errors");
    json_real(&j, "max_abs", t->total.max_abs + unmeasured, 6);
    json_real(&j, "mae", s->mae + unmeasured, 6);
    json_real(&j, "rmse", s->rmse + unmeasured, 6);
    json_real(&j, "l2r", s->l2r + unmeasured, 6); /* infinite (a zero reference) is null too */
    json_real(&j, "cosine", s->cos + unmeasured, 6);
    json_uint(&j, "exact", t->exact);
    json_uint(&j, "top1_agree", t->top1);
    json_uint(&j, "beyond_tolerance", t->over);
    if (t->done > 0 && t->total.max_abs != 0)
        json_str(&j, "worst", names[t->worst]);
    else
        json_null(&j, "worst"); /* nothing is off */
    json_obj_end(&j);
    json_obj(&j, "latency_us");
    if (t->done > 0) {
        json_uint(&j, "min", s->lmin);
        json_uint(&j, "median", s->lmed);
        json_real(&j, "mean", s->lmean, 1);
        json_uint(&j, "max", s->lmax);
    } else {
        json_null(&j, "min");
        json_null(&j, "median");
        json_null(&j, "mean");
        json_null(&j, "max");
    }
    json_obj_end(&j);
    json_end(&j);
}

static void report_text(const struct validate_opts *o, const struct device_side *d, const struct tally *t,
                        const struct summary *s, char **names)
{
    printf("validated %zu output(s) of model %s against %s (%s, tolerance %g)\n", t->done, model_name(d, "?"),
           o->ref_dir, dtypes[o->dtype].name, o->tol);
    printf("errors:  max |e| %g, MAE %.6g, RMSE %.6g, L2r %.6g, cosine %.6f\n", t->total.max_abs, s->mae, s->rmse,
           s->l2r, s->cos);
    if (t->worst_err != 0)
        printf("         %zu exact, top-1 agrees on %zu of %zu, %zu beyond tolerance (worst: %s, %g)\n", t->exact,
               t->top1, t->done, t->over, names[t->worst], t->worst_err);
    else
        printf("         %zu exact, top-1 agrees on %zu of %zu\n", t->exact, t->top1, t->done);
    printf("latency: min %u us, median %u us, mean %.1f us, max %u us (the device's clock)\n", s->lmin, s->lmed,
           s->lmean, s->lmax);
}

/* The verdict, reported (JSON, or text once something was measured) and, unless a pass, said on
 * stderr: the exit code. */
static int conclude(const struct client *cl, const struct validate_opts *o, struct device_side *d, struct tally *t,
                    char **names)
{
    struct summary s;
    summarise(t, &s);
    int verdict = d->local != MOTA_OK    ? d->local
                  : d->ret != MOTA_OK    ? d->ret
                  : d->status != MOTA_OK ? d->status
                  : t->over              ? MOTA_ERR_VALIDATE_MISMATCH
                                         : MOTA_OK;
    if (verdict == MOTA_ERR_VALIDATE_MISMATCH)
        snprintf(d->detail, sizeof(d->detail), "%zu of %zu output(s) beyond --tolerance %g; the worst, %s, off by %g",
                 t->over, t->done, o->tol, names[t->worst], t->worst_err);
    if (o->link.json)
        report_json(o, d, t, &s, names, verdict);
    else if (t->done > 0)
        report_text(o, d, t, &s, names);
    if (d->local == MOTA_ERR_NO_SLOT)
        tool_fail(d->local, "%s", d->detail);
    if (d->local != MOTA_OK) /* a file: tool_map or the usage line has said why */
        return d->local_exit;
    if (d->ret != MOTA_OK) {
        link_fail(d->ret, cl, &o->link);
        return link_exit(d->ret);
    }
    if (verdict != MOTA_OK) {
        tool_fail(verdict, "%s", d->detail);
        return EXIT_INVALID;
    }
    return EXIT_OK;
}

/* --inputs DIR unusable: why, on stderr and in the report. */
static int no_inputs(const struct validate_opts *o, char **names, size_t n, int err)
{
    static struct device_side d = {.idx = -1};
    struct tally t = {.worst_err = -1};
    struct stat st;
    free_list(names, n);
    if (err == 0 && stat(o->in_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        err = ENOTDIR;
    if (err != 0)
        refuse(&d, MOTA_ERR_IO, EXIT_IO, "--inputs %s: %s", o->in_dir, strerror(err));
    else
        refuse(&d, MOTA_ERR_IO, EXIT_IO, "--inputs %s: the directory holds no input files", o->in_dir);
    tool_fail(MOTA_ERR_IO, "%s", d.detail);
    return conclude(NULL, o, &d, &t, NULL);
}

int cmd_validate(int argc, char **argv)
{
    struct validate_opts o;
    int rc = parse_options(argc, argv, &o);
    if (rc != EXIT_OK || o.answered)
        return rc;
    size_t n = 0;
    int err;
    char **names = list_dir(o.in_dir, &n, &err);
    if (names == NULL || n == 0)
        return no_inputs(&o, names, n, err);
    struct tally t = {.worst_err = -1, .lat = calloc(n, sizeof(*t.lat))};
    uint8_t *out = malloc(VALIDATE_MAX_OUTPUT);
    if (t.lat == NULL || out == NULL) {
        free(t.lat);
        free(out);
        free_list(names, n);
        tool_fail(MOTA_ERR_NOSPC, "memory for %zu samples", n);
        return EXIT_IO;
    }
    static struct client cl;
    static struct device_side d;
    d = (struct device_side){.idx = 0, .status = MOTA_OK};
    rc = connect_model(&cl, &o, &d);
    for (size_t i = 0; rc == EXIT_OK && d.ret == MOTA_OK && d.status == MOTA_OK && d.local == MOTA_OK && i < n; i++) {
        rc = run_sample(&cl, &o, names[i], i, out, &d, &t);
        if (rc == EXIT_OK && !o.link.json && t.done % 50 == 0 && t.done > 0 && n > 50)
            fprintf(stderr, "validate: %zu of %zu\n", t.done, n);
    }
    if (rc == EXIT_OK) {
        client_close(&cl);
        rc = conclude(&cl, &o, &d, &t, names);
    }
    client_close(&cl);
    free(t.lat);
    free(out);
    free_list(names, n);
    return rc;
}
