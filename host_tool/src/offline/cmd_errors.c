/* SPDX-License-Identifier: Apache-2.0 */
/* errors: every reason code with its name and message (text or a Markdown table). */
#include "cmds.h"

#include "common/util.h"

#include "mota/err.h"

#include <stdbool.h>
#include <string.h>

int cmd_errors(int argc, char **argv)
{
    static const char usage[] = "usage: mota errors [--markdown]\n\nLists every reason code: value, name, message.\n";
    bool md = argc == 2 && strcmp(argv[1], "--markdown") == 0;
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    if (argc > 1 && !md) {
        return tool_usage_err("errors", "unexpected argument '%s'",
                              strcmp(argv[1], "--markdown") == 0 ? argv[2] : argv[1]);
    }
    if (md)
        printf("| code | name | message |\n|---:|---|---|\n");
    for (int i = 0; i < mota_err_count(); i++) {
        int code = mota_err_at(i);
        if (md)
            printf("| %d | `%s` | %s |\n", code, mota_err_name(code), mota_err_str(code));
        else
            printf("%5d  %-30s %s\n", code, mota_err_name(code), mota_err_str(code));
    }
    return EXIT_OK;
}
