/* SPDX-License-Identifier: Apache-2.0 */
/* The commands main.c dispatches to: mota <command> [options]; each returns its exit code (common/util.h). */
#ifndef MOTA_TOOL_CMDS_H
#define MOTA_TOOL_CMDS_H

int cmd_keygen(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_getpub(int argc, char **argv);
int cmd_ports(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_errors(int argc, char **argv);
int cmd_id(int argc, char **argv);
int cmd_build_model(int argc, char **argv);
int cmd_push(int argc, char **argv);
/* For a caller that runs cmd_push in its process (mota mender-module): fn(ctx) once every byte of the
 * container is on the wire, i.e. once the device may install it (NULL: none). */
void push_on_all_sent(void (*fn)(void *ctx), void *ctx);
int cmd_status(int argc, char **argv);
int cmd_confirm(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_reboot(int argc, char **argv);
int cmd_invoke(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_sim_output(int argc, char **argv);
int cmd_sim_board(int argc, char **argv);
int cmd_provision(int argc, char **argv);
int cmd_reference(int argc, char **argv);
int cmd_mender_module(int argc, char **argv);
int cmd_mender_inventory(int argc, char **argv);
int cmd_mender_artifact(int argc, char **argv);

#endif
