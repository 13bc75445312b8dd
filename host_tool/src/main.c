/* SPDX-License-Identifier: Apache-2.0 */
/* mota: signed model containers for STM32 devices (host tool). */
#include "cmds.h"
#include "mota_boards.h"

#include "common/json.h"
#include "common/util.h"

#include "mota/err.h"
#include "mota/proto.h"

#include <stdio.h>
#include <string.h>

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#error "mota is never built with the fuzz build's stand-in signatures"
#endif

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} commands[] = {
    {"keygen", cmd_keygen, "write a new P-256 signing key pair (PEM), or a key-encryption key (--kek)"},
    {"getpub", cmd_getpub, "a key's public half: C source for firmware, PEM, or the key id"},
    {"pack", cmd_pack, "wrap network_rel.bin (+ params) into a signed container"},
    {"sign", cmd_sign, "sign a container packed --unsigned (key file or external signer)"},
    {"inspect", cmd_inspect, "print what a container holds (--json for machines)"},
    {"verify", cmd_verify, "check structure, signature and every digest of a container"},
    {"info", cmd_info, "print and validate an ST NBIN model file"},
    {"build-model", cmd_build_model, "compile C sources into a CPU-executable NBIN model"},
    {"push", cmd_push, "send a container to a device over serial, pty or TCP"},
    {"status", cmd_status, "what a device runs, its trial state and last errors"},
    {"confirm", cmd_confirm, "commit the model on trial"},
    {"rollback", cmd_rollback, "revert the model on trial"},
    {"invoke", cmd_invoke, "run the device's active model on an input"},
    {"validate", cmd_validate, "run the device's model on many inputs; error metrics and latency against references"},
    {"reboot", cmd_reboot, "restart a device"},
    {"ports", cmd_ports, "list serial ports and which one looks like a device"},
    {"sim", cmd_sim, "a device to test with: simulated, or firmware on QEMU (--target " BOARD_QEMU_NAMES ")"},
    {"provision", cmd_provision, "write a board's identity and trusted keys into its flash"},
    {"sim-output", cmd_sim_output, "the simulated device's inference output for an input"},
    {"reference", cmd_reference, "a board self-test's expected output: the model run on a fresh QEMU board"},
    {"mender-module", cmd_mender_module, "Mender Update Module: a gateway's MCUs updated by Mender (docs/fleet.md)"},
    {"mender-artifact", cmd_mender_artifact, "a Mender artifact (module-image, type mota) around containers"},
    {"mender-inventory", cmd_mender_inventory, "Mender inventory attributes: what each MCU of the gateway runs"},
    {"id", cmd_id, "the vendor and class ids (UUIDs) pack and sim derive from --vendor/--class"},
    {"errors", cmd_errors, "list every reason code with its name and message"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: mota <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n`mota <command> --help` describes each command.\n"
               "Exit codes: 0 ok, 1 input refused or malformed, 2 usage error, 3 file, key or link\n"
               "error; 4 mota sim's simulated power cut; 5 device busy, 6 device timed out (5 and 6 are\n"
               "transient: the same command may succeed later; the others are final).\n"
               "Errors: `mota: error: MOTA_ERR_NAME: message: detail` on stderr (docs/host-tool.md).\n");
}

/* Edit distance (insertions, deletions, substitutions, adjacent swaps), for "did you mean"; names are short */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31)
        return 99;
    size_t d[32][32];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

static int find_command(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(name, commands[i].name) == 0)
            return (int)i;
    return -1;
}

/* An unknown command: the nearest one, if one is near (at most 2 edits, and not most of the name) */
static int unknown(const char *name)
{
    size_t best = 99, at = 0;
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        size_t d = distance(name, commands[i].name);
        if (d < best) {
            best = d;
            at = i;
        }
    }
    if (best <= 2 && best < strlen(name))
        tool_err("unknown command '%s': did you mean '%s'? (see mota --help)", name, commands[at].name);
    else
        tool_err("unknown command '%s' (see mota --help)", name);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 && argc == 3) { /* mota help CMD: that command's help */
        int i = find_command(argv[2]);
        if (i < 0)
            return unknown(argv[2]);
        char *help_argv[] = {argv[2], "--help", NULL};
        return commands[i].fn(2, help_argv);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "version") == 0) {
        printf("mota %s (link protocol %u, JSON schema %u)\n", MOTA_TOOL_VERSION, MOTA_PROTO_VERSION, TOOL_JSON_SCHEMA);
        return EXIT_OK;
    }
    int i = find_command(argv[1]);
    if (i < 0)
        return unknown(argv[1]);
    for (int k = 2; k < argc; k++) /* a --json run: its usage errors are documents too */
        if (strcmp(argv[k], "--json") == 0)
            tool_json_cmd = commands[i].name;
    int rc = commands[i].fn(argc - 1, argv + 1);
    if (rc == EXIT_USAGE) /* one said with tool_fail (a text that is not UTF-8, ...): its document now */
        tool_usage_json_doc(commands[i].name, tool_failed() ? tool_failed() : MOTA_ERR_ARG, tool_failed_detail());
    return rc;
}
