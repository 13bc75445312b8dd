/* SPDX-License-Identifier: Apache-2.0 */
/* What a device reports about its models, as JSON (docs/json.md). */
#include "devinfo.h"

#include "common/json.h"
#include "common/util.h"
#include "offline/epochs_report.h"

#include <stdio.h>

/* The model the device runs: "active", or null. */
static void json_active(struct json *j, const struct dev_model *x, unsigned max_boots)
{
    if (!x->has) {
        json_null(j, "active");
        return;
    }
    json_obj(j, "active");
    json_uint(j, "seq", x->seq);
    json_str(j, "version", x->version);
    json_hex(j, "digest", x->digest, sizeof(x->digest));
    json_uint(j, "slot", x->slot);
    json_str(j, "install_mode", tool_install_mode(x->mode));
    json_str(j, "state", x->testing ? "trial" : "confirmed");
    json_uint(j, "trial_boots", x->boots);
    if (x->testing && max_boots > 0)
        json_uint(j, "trial_boots_left", max_boots > x->boots ? max_boots - x->boots : 0);
    else
        json_null(j, "trial_boots_left");
    json_uint(j, "exec_ram_used", x->exec_used);
    epochs_summary_json(j, "npu_epochs", x->has_epochs ? &x->epochs : NULL);
    json_obj_end(j);
}

/* What a rollback brings back, and an upload in progress: objects, or null. */
static void json_previous_and_upload(struct json *j, const struct dev_model *x)
{
    static const char *const up_states[] = {"none", "receiving", "erased", "verified"};
    if (x->has_previous) {
        json_obj(j, "previous");
        json_uint(j, "seq", x->previous_seq);
        json_str(j, "version", x->previous_version);
        json_hex(j, "digest", x->previous_digest, sizeof(x->previous_digest));
        json_uint(j, "slot", x->previous_slot);
        json_obj_end(j);
    } else {
        json_null(j, "previous");
    }
    if (x->up_state) {
        json_obj(j, "upload");
        json_str(j, "state", x->up_state < 4 ? up_states[x->up_state] : "unknown");
        json_uint(j, "offset", x->up_off);
        json_uint(j, "length", x->up_len);
        json_obj_end(j);
    } else {
        json_null(j, "upload");
    }
}

static void json_last_error(struct json *j, const struct dev_model *x)
{
    if (!x->last_error) {
        json_null(j, "last_error");
        return;
    }
    json_obj(j, "last_error");
    json_reason(j, x->last_error);
    if (x->has_last_error_time) /* unknown when the device left the time out (a full answer) */
        json_bool(j, "this_boot", x->last_error_this_boot);
    else
        json_null(j, "this_boot");
    if (x->has_last_error_time && x->last_error_this_boot)
        json_uint(j, "at_ms", x->last_error_ms);
    else
        json_null(j, "at_ms");
    json_obj_end(j);
}

/* The model's own description, when the port gives one: "report", or null. */
static void json_about(struct json *j, const struct dev_model *x)
{
    char v[16];
    if (!x->has_about) {
        json_null(j, "report");
        return;
    }
    json_obj(j, "report");
    json_str(j, "name", x->about_name);
    json_str(j, "compiled", x->about_compiled);
    json_str(j, "tool", x->about_tool);
    snprintf(v, sizeof(v), "%u.%u.%u", (unsigned)(x->about_tool_version >> 16) & 0xFF,
             (unsigned)(x->about_tool_version >> 8) & 0xFF, (unsigned)x->about_tool_version & 0xFF);
    json_str(j, "tool_version", v);
    json_uint(j, "activations", x->about_acts);
    json_uint(j, "weights", x->about_weights);
    json_obj_end(j);
}

void devjson_models(struct json *j, const struct dev_model *m, unsigned n, unsigned max_boots)
{
    json_arr(j, "models");
    for (unsigned i = 0; i < n; i++) {
        const struct dev_model *x = &m[i];
        json_obj(j, NULL);
        json_str(j, "name", x->name);
        json_uint(j, "max_container", x->slot_size);
        json_uint(j, "committed_seq", x->committed);
        json_active(j, x, max_boots);
        json_previous_and_upload(j, x);
        json_last_error(j, x);
        json_uint(j, "faults", x->faults);
        /* what mota rollback would do now: the agent's rule (on trial, or faulted since boot) */
        json_bool(j, "rollback_possible", x->has && (x->testing || (x->faults != 0 && x->has_previous)));
        json_obj(j, "memory");
        json_uint(j, "exec_ram", x->exec_size);
        json_uint(j, "ext_ram", x->ext_size);
        json_obj_end(j);
        json_about(j, x);
        dev_io_json(j, &x->io);
        json_obj_end(j);
    }
    json_arr_end(j);
}
