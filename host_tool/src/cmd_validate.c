/* validate: run the device's model on many inputs, compare with reference outputs (as stm32ai validate does). */
#include "client.h"
#include "cmds.h"
#include "devlink.h"
#include "util.h"

#include "mota/err.h"

#include <dirent.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define VALIDATE_MAX_SAMPLES 4096
#define VALIDATE_MAX_OUTPUT (16u << 20)

static const char validate_usage[] =
    "usage: mota validate --inputs DIR --outputs DIR [--dtype T] [--tolerance X] [--model NAME] [--json]\n"
    "                     [--baud N] [--timeout S] PORT\n\n"
    "Runs the device's active model on every file of --inputs (in name order) and compares each\n"
    "output with the file of the same name in --outputs (its size is the output's size), as\n"
    "`stm32ai validate` does on a target. Prints the error metrics over all outputs (max absolute\n"
    "error, mean absolute error, RMSE, relative L2 error, cosine similarity, exact matches, top-1\n"
    "agreement) and the device's latency (min, median, mean, max).\n"
    "  --dtype T       how output bytes are read: int8 (default), uint8, int16, uint16, float32 (little-endian)\n"
    "  --tolerance X   the largest absolute error allowed per element, in those units (default 0: exact)\n"
    "Exit codes: 0 every output within the tolerance; 1 one is not (MOTA_ERR_VALIDATE_MISMATCH) or the device\n"
    "refused a run; 2 usage; 3 a file or the port unusable; 5 device busy; 6 timed out.\n";

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
    case DT_INT16: return (double)(int16_t)(uint16_t)(p[0] | p[1] << 8);
    case DT_UINT16: return (double)(uint16_t)(p[0] | p[1] << 8);
    default: {
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
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

/* The regular files of a directory, sorted by name; NULL-terminated, malloc'd. */
static char **list_dir(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    *n = 0;
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

int cmd_validate(int argc, char **argv)
{
    enum { O_INPUTS = 256, O_OUTPUTS, O_DTYPE, O_TOL, O_MODEL, O_JSON, O_BAUD, O_TIMEOUT };
    static const struct option opts[] = {
        {"help", no_argument, 0, 'h'}, {"inputs", required_argument, 0, O_INPUTS},
        {"outputs", required_argument, 0, O_OUTPUTS}, {"dtype", required_argument, 0, O_DTYPE},
        {"tolerance", required_argument, 0, O_TOL}, {"model", required_argument, 0, O_MODEL},
        {"json", no_argument, 0, O_JSON}, {"baud", required_argument, 0, O_BAUD},
        {"timeout", required_argument, 0, O_TIMEOUT}, {0, 0, 0, 0}};
    struct link_opts o = {.baud = 115200, .timeout_s = 10};
    const char *in_dir = NULL, *ref_dir = NULL;
    enum dtype t = DT_INT8;
    double tol = 0;
    int c;
    uint64_t v;
    optind = 1;
    while ((c = tool_getopt(argc, argv, "h", opts, "validate")) != -1) {
        char *end;
        switch (c) {
        case 'h': fputs(validate_usage, stdout); return EXIT_OK;
        case O_INPUTS: in_dir = optarg; break;
        case O_OUTPUTS: ref_dir = optarg; break;
        case O_MODEL: o.model = optarg; break;
        case O_JSON: o.json = true; break;
        case O_DTYPE: {
            size_t k = 0;
            while (k < sizeof(dtypes) / sizeof(dtypes[0]) && strcmp(optarg, dtypes[k].name) != 0)
                k++;
            if (k == sizeof(dtypes) / sizeof(dtypes[0]))
                return tool_usage_err("validate", "--dtype %s: int8, uint8, int16, uint16 or float32", optarg);
            t = (enum dtype)k;
            break;
        }
        case O_TOL:
            tol = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(tol >= 0) || isinf(tol))
                return tool_usage_err("validate", "--tolerance %s: a number, 0 or more", optarg);
            break;
        case O_BAUD:
        case O_TIMEOUT:
            if (!tool_parse_u64(optarg, &v) || v == 0 || (c == O_TIMEOUT && v > 86400))
                return tool_usage_err("validate", "%s %s: a positive number%s", c == O_BAUD ? "--baud" : "--timeout",
                                      optarg, c == O_TIMEOUT ? " of seconds, at most 86400" : "");
            if (c == O_BAUD)
                o.baud = (unsigned)v;
            else
                o.timeout_s = (double)v;
            break;
        default: return EXIT_USAGE;
        }
    }
    if (argc - optind != 1)
        return tool_usage_err("validate", argc - optind < 1 ? "needs PORT" : "unexpected argument '%s'",
                              argv[argc - 1]);
    if (in_dir == NULL || ref_dir == NULL)
        return tool_usage_err("validate", "needs --inputs DIR and --outputs DIR");
    o.port = argv[optind];

    size_t n = 0;
    char **names = list_dir(in_dir, &n);
    if (names == NULL || n == 0) {
        free_list(names, n);
        tool_fail(MOTA_ERR_IO, "--inputs %s: no input files", in_dir);
        return EXIT_IO;
    }
    uint32_t *lat = calloc(n, sizeof(*lat));
    uint8_t *out = malloc(VALIDATE_MAX_OUTPUT);
    if (lat == NULL || out == NULL) {
        free(lat);
        free(out);
        free_list(names, n);
        tool_fail(MOTA_ERR_NOSPC, "memory for %zu samples", n);
        return EXIT_IO;
    }

    static struct client cl;
    const uint8_t *info;
    size_t info_len;
    struct dev_model models[DEV_MAX_MODELS];
    unsigned n_models = 0;
    uint64_t io = 0;
    int idx = 0, status = MOTA_OK, rc = EXIT_OK;
    int ret = connect_device(&cl, &o, tool_now() + o.timeout_s, true, &info, &info_len);
    struct errs total = {0};
    size_t exact = 0, top1 = 0, done = 0, worst = 0, over = 0;
    double worst_err = -1;
    char detail[320] = "";
    if (ret == MOTA_OK) {
        parse_models(info, info_len, 7, models, &n_models);
        info_uint(info, info_len, 12, &io);
        if (o.model && (idx = model_index(models, n_models, o.model, strlen(o.model))) < 0) {
            rc = tool_usage_err("validate", "--model %s: the device has no such model", o.model);
            goto out;
        }
        if (n_models == 0 || !models[idx].has) {
            status = MOTA_ERR_NO_MODEL;
            snprintf(detail, sizeof(detail), "the device has no active model to run");
        }
    }
    for (size_t i = 0; ret == MOTA_OK && status == MOTA_OK && i < n; i++) {
        char ip[4096], rp[4096];
        struct mapped in, ref;
        snprintf(ip, sizeof(ip), "%s/%s", in_dir, names[i]);
        snprintf(rp, sizeof(rp), "%s/%s", ref_dir, names[i]);
        if (tool_map(ip, &in) != MOTA_OK) {
            rc = EXIT_IO;
            goto out;
        }
        if (tool_map(rp, &ref) != MOTA_OK) {
            tool_unmap(&in);
            rc = EXIT_IO;
            goto out;
        }
        if (ref.len == 0 || ref.len > VALIDATE_MAX_OUTPUT || ref.len % dtypes[t].size != 0) {
            tool_unmap(&in);
            tool_unmap(&ref);
            rc = tool_usage_err("validate", "%s: %zu bytes is no output of %s elements", rp, ref.len, dtypes[t].name);
            goto out;
        }
        ret = dev_invoke(&cl, io, (unsigned)idx, in.data, in.len, out, ref.len, o.timeout_s, &lat[i], &status,
                         detail, sizeof(detail));
        if (ret == MOTA_OK && status == MOTA_OK) {
            struct errs e = {0};
            size_t am_o = 0, am_r = 0;
            compare(out, ref.data, ref.len, t, &e, &am_o, &am_r);
            exact += e.max_abs == 0;
            top1 += am_o == am_r;
            over += e.max_abs > tol;
            if (e.max_abs > worst_err) {
                worst_err = e.max_abs;
                worst = i;
            }
            total.max_abs = e.max_abs > total.max_abs ? e.max_abs : total.max_abs;
            total.sum_abs += e.sum_abs;
            total.sum_sq += e.sum_sq;
            total.ref_sq += e.ref_sq;
            total.out_sq += e.out_sq;
            total.dot += e.dot;
            total.n += e.n;
            done++;
        } else if (ret == MOTA_OK && detail[0] == 0) {
            snprintf(detail, sizeof(detail), "on input %s", names[i]);
        }
        tool_unmap(&in);
        tool_unmap(&ref);
        if (!o.json && done % 50 == 0 && done > 0 && n > 50)
            fprintf(stderr, "validate: %zu of %zu\n", done, n);
    }
    client_close(&cl);

    /* the numbers: errors over every element of every output, the device's latency over the runs */
    double mae = total.n ? total.sum_abs / (double)total.n : 0, rmse = total.n ? sqrt(total.sum_sq / (double)total.n) : 0;
    double l2r = total.ref_sq > 0 ? sqrt(total.sum_sq / total.ref_sq) : (total.sum_sq > 0 ? INFINITY : 0);
    double cos = total.ref_sq > 0 && total.out_sq > 0 ? total.dot / sqrt(total.ref_sq * total.out_sq)
                                                       : (total.ref_sq == total.out_sq ? 1 : 0);
    uint32_t lmin = 0, lmed = 0, lmax = 0;
    double lmean = 0;
    if (done > 0) {
        for (size_t i = 0; i < done; i++)
            lmean += lat[i];
        lmean /= (double)done;
        qsort(lat, done, sizeof(*lat), cmp_u32);
        lmin = lat[0];
        lmax = lat[done - 1];
        lmed = done % 2 ? lat[done / 2] : (uint32_t)(((uint64_t)lat[done / 2 - 1] + lat[done / 2]) / 2);
    }
    int verdict = ret != MOTA_OK ? ret : status != MOTA_OK ? status : over ? MOTA_ERR_VALIDATE_MISMATCH : MOTA_OK;
    if (verdict == MOTA_ERR_VALIDATE_MISMATCH)
        snprintf(detail, sizeof(detail), "%zu of %zu output(s) beyond --tolerance %g; the worst, %s, off by %g", over,
                 done, tol, names[worst], worst_err);
    if (o.json) {
        struct json j;
        json_doc(&j, stdout, "validate", false);
        json_reason(&j, verdict);
        json_str(&j, "detail", detail);
        json_str(&j, "model", idx < (int)n_models ? models[idx].name : "");
        json_uint(&j, "samples", done);
        json_str(&j, "dtype", dtypes[t].name);
        json_real(&j, "tolerance", tol, 6);
        /* nothing measured (the device was not reached, or refused at once): null, never a perfect score */
        double unmeasured = done > 0 ? 0 : NAN;
        json_obj(&j, "errors");
        json_real(&j, "max_abs", total.max_abs + unmeasured, 6);
        json_real(&j, "mae", mae + unmeasured, 6);
        json_real(&j, "rmse", rmse + unmeasured, 6);
        json_real(&j, "l2r", l2r + unmeasured, 6); /* infinite (a zero reference) is null too */
        json_real(&j, "cosine", cos + unmeasured, 6);
        json_uint(&j, "exact", exact);
        json_uint(&j, "top1_agree", top1);
        json_uint(&j, "beyond_tolerance", over);
        if (done > 0 && total.max_abs != 0)
            json_str(&j, "worst", names[worst]);
        else
            json_null(&j, "worst"); /* nothing is off */
        json_obj_end(&j);
        json_obj(&j, "latency_us");
        if (done > 0) {
            json_uint(&j, "min", lmin);
            json_uint(&j, "median", lmed);
            json_real(&j, "mean", lmean, 1);
            json_uint(&j, "max", lmax);
        } else {
            json_null(&j, "min");
            json_null(&j, "median");
            json_null(&j, "mean");
            json_null(&j, "max");
        }
        json_obj_end(&j);
        json_end(&j);
    } else if (done > 0) {
        printf("validated %zu output(s) of model %s against %s (%s, tolerance %g)\n", done,
               idx < (int)n_models ? models[idx].name : "?", ref_dir, dtypes[t].name, tol);
        printf("errors:  max |e| %g, MAE %.6g, RMSE %.6g, L2r %.6g, cosine %.6f\n", total.max_abs, mae, rmse, l2r, cos);
        if (worst_err != 0)
            printf("         %zu exact, top-1 agrees on %zu of %zu, %zu beyond tolerance (worst: %s, %g)\n", exact,
                   top1, done, over, names[worst], worst_err);
        else
            printf("         %zu exact, top-1 agrees on %zu of %zu\n", exact, top1, done);
        printf("latency: min %u us, median %u us, mean %.1f us, max %u us (the device's clock)\n", lmin, lmed, lmean,
               lmax);
    }
    if (ret != MOTA_OK) {
        link_fail(ret, &cl, &o);
        rc = link_exit(ret);
    } else if (verdict != MOTA_OK) {
        tool_fail(verdict, "%s", detail);
        rc = EXIT_INVALID;
    }
out:
    client_close(&cl);
    free(lat);
    free(out);
    free_list(names, n);
    return rc;
}
