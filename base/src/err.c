/* SPDX-License-Identifier: Apache-2.0 */
/* The reason codes' names and messages (mota/err.h): the table the host prints and the docs check. */
#include "mota/err.h"

#include <stddef.h>

#if MOTA_ERR_STRINGS
struct err_row {
    int code;
    const char *name;
    const char *msg;
};
#define MOTA_ERR_ROW_(name, value, msg) {(value), #name, (msg)},
#else
struct err_row {
    int code;
};
#define MOTA_ERR_ROW_(name, value, msg) {(value)},
#endif

static const struct err_row rows[] = {MOTA_ERR_TABLE(MOTA_ERR_ROW_)};
#undef MOTA_ERR_ROW_

#if MOTA_ERR_STRINGS
static const struct err_row *find(int err)
{
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        if (rows[i].code == err)
            return &rows[i];
    }
    return NULL;
}
#endif

const char *mota_err_name(int err)
{
    if (err == MOTA_OK)
        return "MOTA_OK";
#if MOTA_ERR_STRINGS
    const struct err_row *r = find(err);
    return r ? r->name : NULL;
#else
    return NULL;
#endif
}

const char *mota_err_str(int err)
{
    if (err == MOTA_OK)
        return "success";
#if MOTA_ERR_STRINGS
    const struct err_row *r = find(err);
    return r ? r->msg : "unknown reason code";
#else
    return "";
#endif
}

int mota_err_count(void)
{
    return (int)(sizeof(rows) / sizeof(rows[0]));
}

int mota_err_at(int index)
{
    if (index < 0 || index >= mota_err_count())
        return MOTA_ERR_ARG;
    return rows[index].code;
}
