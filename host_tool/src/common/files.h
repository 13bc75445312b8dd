/* SPDX-License-Identifier: Apache-2.0 */
/* Files: inputs read whole, outputs written atomically, none of them twice; key files. */
#ifndef MOTA_TOOL_FILES_H
#define MOTA_TOOL_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct mapped {
    const uint8_t *data;
    size_t len;
    void *map; /* for munmap */
    size_t map_len;
};

/*
 * A whole file, read into memory of its own (huge pages where the kernel
 * gives them): what is hashed is what is written, whatever happens to the
 * file meanwhile, and reading it costs less than faulting a mapping of it in
 * (a 64 MiB model: 8 ms to read, against 4 ms more of faults and 8 ms of
 * unmapping, and every pass over it slower on 4 KiB pages). Returns MOTA_OK
 * or MOTA_ERR_IO (message printed).
 */
int tool_map(const char *path, struct mapped *m);
void tool_unmap(struct mapped *m);

/*
 * Atomic output: data goes to a temporary file beside path, which is synced
 * and renamed over path on commit (then the directory is synced), and
 * removed on abort, so no partial output file is ever left behind. With
 * no_sync set after open (pack and sign without --sync: containers are
 * artefacts a build makes again) nothing is synced: the rename is as atomic,
 * but a power loss right after may leave the previous file.
 * tool_out_open refuses (with its reason printed) a path that exists and is
 * not a regular file (MOTA_ERR_NOT_REGULAR: a rename would replace a device
 * node or FIFO), or that is a file this run read through tool_map or
 * tool_note_input or wrote through tool_out_commit (MOTA_ERR_SAME_FILE).
 * Errors carry the path and strerror(errno).
 */
struct outfile {
    FILE *f;
    char tmp[4096];
    char path[4096];
    int mode;
    bool no_replace;
    bool no_sync;
};
int tool_out_open(struct outfile *o, const char *path, int mode);
/* The same, but path must not exist, then or at commit (MOTA_ERR_FILE_EXISTS). */
int tool_out_open_new(struct outfile *o, const char *path, int mode);
int tool_out_write(struct outfile *o, const void *p, size_t n);
int tool_out_commit(struct outfile *o); /* on failure the output is aborted */
void tool_out_abort(struct outfile *o);
/* One line of text (a newline is added) as a whole file, atomically: a file another process polls for
 * (mota sim --port-file) is either absent or complete. */
int tool_out_line(const char *path, const char *text);
/* tool_out_open's checks of path alone, to refuse before any work is done: a node that is not a regular
 * file, a file this run read or wrote, and (unless tool_out_force) a file that holds a private key (PEM,
 * a private JWK), a secret one (a KEK's JWK) or a provisioning record (raw or Intel HEX):
 * MOTA_ERR_FILE_EXISTS, "give --force". */
int tool_out_check(const char *path);
/* set by a command's --force: it may replace a key or a record */
extern bool tool_out_force;
/* Record an input read other than through tool_map (a compiler's source). */
void tool_note_input(const char *path);
/* Same file: same path, same device and inode, or (a path that does not
 * exist yet) the same resolved directory and name. */
bool tool_same_file(const char *a, const char *b);

/* Load a key file (PEM/DER) into a trusted key / a signing key; an empty or
 * unparsable file is MOTA_ERR_KEY_INVALID with the path and what a key file holds. */
struct mota_p256_key;
int tool_load_key(const char *path, struct mota_p256_key *key);

#endif
