#ifndef MOTA_TOOL_CMDS_H
#define MOTA_TOOL_CMDS_H

int cmd_keygen(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_errors(int argc, char **argv);
int cmd_build_model(int argc, char **argv);

#endif
