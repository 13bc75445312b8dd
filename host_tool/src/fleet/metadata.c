/* SPDX-License-Identifier: Apache-2.0 */
/* A strict reader of the payload meta-data, enough to find one top-level member: every other value is
 * skipped as JSON (strings with escapes, numbers, literals, nesting up to a bound), so that the member is
 * never mistaken for a value or a nested key, and a document cut short is refused, never read as "no
 * targets". */
#include "metadata.h"

#include "mota/err.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define META_DEPTH 32

struct js {
    const char *p, *end;
};

static void ws(struct js *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static bool eat(struct js *j, char c)
{
    ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return true;
    }
    return false;
}

/* A string; its raw bytes (escapes left as written) into out (cap > 0), cut to fit; *len its full length. */
static bool string(struct js *j, char *out, size_t cap, size_t *len)
{
    size_t n = 0;
    if (!eat(j, '"'))
        return false;
    while (j->p < j->end && *j->p != '"') {
        if ((unsigned char)*j->p < 0x20)
            return false;
        if (*j->p == '\\' && ++j->p == j->end)
            return false;
        if (n + 1 < cap)
            out[n] = *j->p;
        n++;
        j->p++;
    }
    out[n < cap ? n : cap - 1] = '\0';
    *len = n;
    return eat(j, '"');
}

static bool skip_string(struct js *j)
{
    char c;
    size_t n;
    return string(j, &c, 1, &n);
}

static bool value(struct js *j, int depth);

/* The members (or items) of an object or array whose opening bracket is read. */
static bool members(struct js *j, char close, int depth)
{
    if (eat(j, close))
        return true;
    do {
        if (close == '}' && (!skip_string(j) || !eat(j, ':')))
            return false;
        if (!value(j, depth))
            return false;
    } while (eat(j, ','));
    return eat(j, close);
}

static bool value(struct js *j, int depth)
{
    ws(j);
    if (j->p == j->end || depth > META_DEPTH)
        return false;
    if (*j->p == '"')
        return skip_string(j);
    if (*j->p == '{' || *j->p == '[') {
        char close = *j->p++ == '{' ? '}' : ']';
        return members(j, close, depth + 1);
    }
    const char *s = j->p; /* a number or a literal */
    while (j->p < j->end && strchr("+-.0123456789eEtruefalsn", *j->p) != NULL)
        j->p++;
    return j->p > s;
}

static bool names(struct js *j, struct fleet_targets *t)
{
    if (!eat(j, '['))
        return false;
    if (eat(j, ']'))
        return true;
    do {
        size_t n;
        if (t->n == GW_MAX_MCUS || !string(j, t->name[t->n], sizeof(t->name[0]), &n) || n > GW_NAME_MAX ||
            !gateway_name_ok(t->name[t->n]))
            return false;
        t->n++;
    } while (eat(j, ','));
    return eat(j, ']');
}

/* A non-negative integer below 2^64, digits only */
static bool number(struct js *j, uint64_t *v)
{
    const char *s;
    ws(j);
    s = j->p;
    *v = 0;
    for (; j->p < j->end && *j->p >= '0' && *j->p <= '9'; j->p++) {
        if (*v > (UINT64_MAX - (uint64_t)(*j->p - '0')) / 10u)
            return false;
        *v = *v * 10u + (uint64_t)(*j->p - '0');
    }
    return j->p > s && j->p - s <= 20;
}

/* 64 hex digits, kept in lower case */
static bool digest(struct js *j, char out[65])
{
    size_t n = 0;
    if (!string(j, out, 65, &n) || n != 64)
        return false;
    for (size_t i = 0; i < 64; i++) {
        if (!strchr("0123456789abcdefABCDEF", out[i]))
            return false;
        out[i] = (char)(out[i] >= 'A' && out[i] <= 'F' ? out[i] - 'A' + 'a' : out[i]);
    }
    return true;
}

int fleet_meta_targets(const char *json, size_t len, struct fleet_targets *t, char *why, size_t cap)
{
    struct js j = {json, json + len};
    char key[32];
    size_t n;
    memset(t, 0, sizeof(*t));
    why[0] = '\0';
    ws(&j);
    if (j.p == j.end || (j.end - j.p == 4 && memcmp(j.p, "null", 4) == 0))
        return MOTA_OK; /* a payload without meta-data: Mender writes an empty file, or null */
    bool ok = eat(&j, '{');
    if (ok && !eat(&j, '}')) {
        do {
            ok = string(&j, key, sizeof(key), &n) && eat(&j, ':');
            if (ok && n == 9 && strcmp(key, "mota_mcus") == 0 && !t->present) {
                t->present = true;
                if (!(ok = names(&j, t)))
                    snprintf(why, cap, "mota_mcus is not a list of MCU names");
            } else if (ok && n == 15 && strcmp(key, "mota_delta_from") == 0 && t->delta_from[0] == '\0') {
                if (!(ok = digest(&j, t->delta_from)))
                    snprintf(why, cap, "mota_delta_from is not a SHA-256 in hex");
            } else if (ok && n == 19 && strcmp(key, "mota_delta_from_seq") == 0 && !t->has_from_seq) {
                if (!(ok = number(&j, &t->from_seq)))
                    snprintf(why, cap, "mota_delta_from_seq is not a sequence number");
                t->has_from_seq = ok;
            } else {
                ok = ok && value(&j, 1);
            }
        } while (ok && eat(&j, ','));
        ok = ok && eat(&j, '}');
    }
    ws(&j);
    if (ok && j.p == j.end)
        return MOTA_OK;
    if (why[0] == '\0')
        snprintf(why, cap, "not one JSON object (at byte %zu)", (size_t)(j.p - json));
    return MOTA_ERR_ARG;
}
