/* SPDX-License-Identifier: Apache-2.0 */
/* What a device reports, as text for a person: its models (`mota status`), its identity, its key ids. */
#include "devinfo.h"

#include "common/util.h"
#include "offline/epochs_report.h"

#include "mota/err.h"

#include <stdio.h>
#include <string.h>

void devprint_named_id(const char *name, const uint8_t *vendor_id, const uint8_t id[16], char *out, size_t cap)
{
    char u[37];
    tool_uuid_str(id, u);
    if (devinfo_name_makes_id(name, vendor_id, id))
        snprintf(out, cap, "%s (id %s)", name, u);
    else
        snprintf(out, cap, "id %s", u);
}

void devprint_kid(const uint8_t *kid, size_t n, char *out, size_t cap)
{
    bool text = n > 0;
    for (size_t i = 0; i < n; i++)
        text = text && kid[i] >= 0x20 && kid[i] < 0x7F;
    if (text) {
        snprintf(out, cap, "%.*s", (int)n, (const char *)kid);
        return;
    }
    size_t at = (size_t)snprintf(out, cap, "0x");
    for (size_t i = 0; i < n && at + 2 < cap; i++)
        at += (size_t)snprintf(out + at, cap - at, "%02x", kid[i]);
}

/* When the last error happened, from the device's own clock: "12.3 s ago", or "before the last boot". */
static void when(char *out, size_t cap, const struct dev_model *x, int64_t uptime_ms)
{
    out[0] = 0;
    if (!x->has_last_error_time)
        return;
    if (!x->last_error_this_boot)
        snprintf(out, cap, ", before the device's last boot");
    else if (uptime_ms >= 0 && (uint64_t)uptime_ms >= x->last_error_ms)
        snprintf(out, cap, ", %.1f s ago", (double)((uint64_t)uptime_ms - x->last_error_ms) / 1000);
    else
        snprintf(out, cap, ", %.1f s after the device booted", (double)x->last_error_ms / 1000);
}

/* "1st", "2nd", "3rd", "4th", "11th", ... */
static const char *ordinal(unsigned n)
{
    unsigned t = n % 100;
    return t >= 11 && t <= 13 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* The active model's state. The device reverts a model on trial at the boot that would be its max_boots + 1st
 * (agent.c): with B boots on trial so far, max_boots - B more reboots keep it on trial and the one after reverts. */
static void print_trial(const struct dev_model *x, unsigned max_boots)
{
    if (!x->testing) {
        printf("confirmed\n");
        return;
    }
    if (max_boots == 0) { /* a device that does not say how many it allows */
        printf("ON TRIAL (rebooted %u time(s) on trial): confirm or roll back\n", x->boots);
        return;
    }
    unsigned left = max_boots > x->boots ? max_boots - x->boots : 0;
    char next[32] = "the next one";
    if (left > 0)
        snprintf(next, sizeof(next), "the %u%s from now", left + 1, ordinal(left + 1));
    printf("ON TRIAL (%u reboot(s) left on trial, %s reverts it; rebooted %u of %u): confirm or roll back\n", left,
           next, x->boots, max_boots);
}

/* what the model takes and gives, where the device says it (what invoke and a self-test must match) */
static void print_io(const struct dev_model *x)
{
    if (!x->io.known)
        return;
    printf("  inputs:    ");
    dev_io_line(stdout, x->io.in, x->io.n_in, x->io.in_bytes);
    printf("\n  outputs:   ");
    dev_io_line(stdout, x->io.out, x->io.n_out, x->io.out_bytes);
    printf("\n");
}

/* Per model, both slots at a glance (as `mcumgr image list` shows them). */
void devprint_models(const struct dev_model *m, unsigned n, int64_t uptime_ms, unsigned max_boots)
{
    for (unsigned i = 0; i < n; i++) {
        const struct dev_model *x = &m[i];
        printf("model %s: largest container %llu bytes", x->name, (unsigned long long)x->slot_size);
        if (x->exec_size)
            printf("; may use exec RAM %llu, external RAM %llu bytes", (unsigned long long)x->exec_size,
                   (unsigned long long)x->ext_size);
        printf("\n");
        if (x->has) {
            printf("  active:    seq %llu%s%s, slot %u, %s, exec RAM %llu bytes, ", (unsigned long long)x->seq,
                   x->version[0] ? " v" : "", x->version, x->slot, tool_install_mode(x->mode),
                   (unsigned long long)x->exec_used);
            print_trial(x, max_boots);
            /* the manifest digest confirm and rollback --expect-digest take (mota inspect prints it) */
            printf("  digest:    ");
            tool_hex(stdout, x->digest, sizeof(x->digest));
            printf("\n");
            if (x->has_epochs) {
                printf("  npu epochs: ");
                epochs_summary_line(stdout, &x->epochs);
                printf("\n");
            }
        } else {
            printf("  active:    none installed\n");
        }
        /* the agent rolls back a model on trial, or a confirmed one that faulted since boot: else it refuses
         * (MOTA_ERR_NOT_TESTING), and the previous model only waits in its slot */
        if (x->has_previous)
            printf("  previous:  seq %llu%s%s, slot %u (%s)\n", (unsigned long long)x->previous_seq,
                   x->previous_version[0] ? " v" : "", x->previous_version, x->previous_slot,
                   x->testing || x->faults ? "what `mota rollback` returns to"
                                           : "kept; `mota rollback` returns to it while the active model is on "
                                             "trial, or once it faulted: confirmed and sound, it stays");
        else if (x->has && x->testing)
            printf("  previous:  none (a rollback removes this model: the device will have none)\n");
        else if (x->has)
            printf("  previous:  none\n");
        printf("  committed: seq %llu (the anti-rollback floor: an update needs a higher one)\n",
               (unsigned long long)x->committed);
        if (x->up_state)
            printf("  upload:    %llu of %llu bytes kept; pushing the same container resumes\n",
                   (unsigned long long)x->up_off, (unsigned long long)x->up_len);
        if (x->last_error) {
            const char *name = mota_err_name(x->last_error), *msg = mota_err_str(x->last_error);
            char w[64];
            when(w, sizeof(w), x, uptime_ms);
            printf("  last error: %s (%s)%s\n", name ? name : "?", msg ? msg : "a code this host does not know", w);
        }
        if (x->faults)
            printf("  faults:    %llu fault(s) or overrun(s) since boot\n", (unsigned long long)x->faults);
        if (x->has_about) /* what the model's own runtime says of it */
            printf("  model's report: %s, compiled %s, by %s%s%u.%u.%u; activations %llu, weights %llu bytes\n",
                   x->about_name, x->about_compiled, x->about_tool, x->about_tool[0] ? " " : "",
                   (unsigned)(x->about_tool_version >> 16) & 0xFF, (unsigned)(x->about_tool_version >> 8) & 0xFF,
                   (unsigned)x->about_tool_version & 0xFF, (unsigned long long)x->about_acts,
                   (unsigned long long)x->about_weights);
        print_io(x);
    }
}
